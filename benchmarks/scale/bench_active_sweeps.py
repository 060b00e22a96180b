"""Cyclic against active-set sweeps (``sweeps: cyclic`` / ``active``) on ITML's problem, side by side.

    python benchmarks/scale/bench_active_sweeps.py N [--r 64] [--tol 1e-3] [--solver burg|von_neumann|both]
                                             [--slack 1] [--max-sweeps 20000] [--progress K]
                                             [--schedules cyclic,active]

The problem of issue 45, item 2: ``two_gaussians`` with n = N points in r dimensions, a linear K0
(rank r), ``itml_pairs`` with count = N (5th/95th percentile bounds, seed 0), slack 1 (``--slack``) and
``stop: dual_change``.  For each solver both schedules run in this one process on the same data and
constraints, one BLAS thread; after a warm-up call (numba compilation) each solve is timed in CPU
seconds (``time.process_time``, so other jobs on the machine shift it little).  Printed per run:
sweeps (full sweeps for ``active``), projections, CPU, converged, the objective, the positive
duals at the end; per solver, the CPU ratio and the objectives' relative difference.
"""

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, parsed before the heavy imports below (``--help`` answers at once)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int, help="points = constraints")
    parser.add_argument("--r", type=int, default=64, help="dimension = rank of the linear K0 (64)")
    parser.add_argument("--tol", type=float, default=1e-3, help="dual-change tolerance (1e-3)")
    parser.add_argument("--solver", choices=["burg", "von_neumann", "both"], default="both")
    parser.add_argument("--slack", type=float, default=1.0, help="slack gamma (1)")
    parser.add_argument("--max-sweeps", type=int, default=20000)
    parser.add_argument("--progress", type=int, default=0, metavar="K",
                        help="print the dual change and CPU seconds every K sweeps (0: never)")
    parser.add_argument("--schedules", default="cyclic,active",
                        help="comma-separated schedules to run (cyclic,active); 'active' alone where cyclic is out of budget")
    return parser.parse_args(argv)


if __name__ == "__main__":                 # --help and a bad option answered before the heavy imports
    arguments()

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from kernlearn_cli.kernels import linear  # noqa: E402
from kernlearn_cli.registry import constraints as generators  # noqa: E402
from kernlearn_cli.registry import datasets, solvers  # noqa: E402
from kernlearn_cli.rng import component_rng  # noqa: E402


def problem(n: int, r: int):
    """K0's factor and the ITML constraints of the issue's problem."""
    ds = datasets.get("two_gaussians").func(n=n, dim=r)
    G0 = linear(ds)
    return G0, generators.get("itml_pairs").func(ds, G0, rng=component_rng(0, 1), count=n)


def solve(name: str, G0, C, mode: str, tol: float, max_sweeps: int, slack: float, every: int = 0):
    """(result, CPU seconds) of one solve; every ``every`` sweeps (0: never) a progress line."""
    func = solvers.get(name).func
    t = time.process_time()

    def progress(sweep, dual_change, **_):
        if sweep % every == 0:
            print(f"  {name} {mode} sweep {sweep}: dual change {float(dual_change):.3g}, "
                  f"{time.process_time() - t:.1f} s CPU", flush=True)

    res = func(G0, C, slack=slack, stop="dual_change", sweeps=mode, tol=tol, max_sweeps=max_sweeps,
               callback=progress if every else None)
    return res, time.process_time() - t


def last_change(res) -> str:
    """The dual change of the last sweep (``history['dual_change']``), what an unconverged run stopped at."""
    changes = res.history.get("dual_change", [])
    return f"{changes[-1]:.3g}" if len(changes) else "n/a"


def main() -> None:
    args = arguments()
    names = ["burg", "von_neumann"] if args.solver == "both" else [args.solver]
    G0, C = problem(args.n, args.r)
    warm_G0, warm_C = problem(200, args.r)
    warnings.simplefilter("ignore")            # an unconverged run is reported in its line
    with threadpool_limits(1):
        for name in names:
            for mode in ("cyclic", "active"):
                solve(name, warm_G0, warm_C, mode, args.tol, 3, args.slack)
            out = {}
            for mode in args.schedules.split(","):
                res, cpu = solve(name, G0, C, mode, args.tol, args.max_sweeps, args.slack, args.progress)
                out[mode] = res, cpu
                full = f" ({res.info['full_sweeps']} full)" if mode == "active" else ""
                print(f"{name} n=c={args.n} r={G0.shape[1]} tol={args.tol:g} slack={args.slack:g} {mode:6s}: {res.iterations} sweeps{full}, "
                      f"{res.info['projections']} projections, {cpu:.2f} s CPU "
                      f"({cpu / res.info['projections'] * 1e6:.2f} us/projection), converged {res.converged}, "
                      f"objective {res.objective:.12g}, positive duals {int(np.sum(res.arrays['dual'] > 0))}, "
                      f"last dual change {last_change(res)}",
                      flush=True)
            if len(out) < 2:
                continue
            (a, ta), (b, tb) = out["cyclic"], out["active"]
            print(f"{name}: CPU cyclic/active {ta / tb:.1f}x, objectives' relative difference "
                  f"{abs(a.objective - b.objective) / abs(a.objective):.2e}", flush=True)


if __name__ == "__main__":
    main()
