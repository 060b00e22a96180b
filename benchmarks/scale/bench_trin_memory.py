"""TRIN's peak memory in units of n² doubles (issue 45 item 3), an older trin.py beside today's in one run.

Problem (as in benchmarks/speed/bench_trin.py, on synthetic data): n points in four Gaussian blobs (d = 10,
seed 0), K0 = laplacian_pinv of the standardized features (10 neighbours), neighbour triplets over
half the points (seed 0), log-loss, tol 1e-3, the path γ = 2⁻¹², 2⁻⁸, ... 2¹⁶ (α = 16) capped at
``--max-path-iter`` Newton iterations in all.  For each solver the call runs under
:class:`kernlearn_cli.resources.PeakMemory` with G0 allocated before it; the table gives its
``added_bytes`` / (8 n²), the Newton iterations, the largest relative difference of the per-γ
objectives from the first solver's, and the CPU seconds per Newton iteration (time.process_time
between consecutive iterations of one γ, median; the call's first interval, which holds its setup,
is printed but not counted), on ``--threads`` BLAS threads (one by default).  Before it is measured each
solver runs once at n = 200 (numba's compilation or cache load, about 0.2 GB, is not the solver's),
and blocks of 1 MB or more are given back to the system when freed (glibc's ``M_MMAP_THRESHOLD``;
its default adapts up to 32 MB, so an n = 2000 array freed by one solver would stay resident and
hide the next solver's peak).

The older solver is loaded at run time from git (``git show REV:kernlearn_cli/solvers/trin.py``,
as benchmarks/speed/bench_trin_regression.py does); nothing old is kept in the package.

    python benchmarks/scale/bench_trin_memory.py [--n 2000,5000] [--max-path-iter 6] [--rev main] [--solvers old,new]
                                          [--trust-norm frobenius] [--threads 1] [--verbose]
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import sys
import time
from pathlib import Path


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, parsed before the heavy imports below (``--help`` answers at once)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", default="2000,5000")
    ap.add_argument("--max-path-iter", type=int, default=6, help="Newton iterations over the path at most")
    ap.add_argument("--rev", default="main", help="the git revision of the older trin.py")
    ap.add_argument("--trust-norm", default="frobenius", choices=("frobenius", "natural"))
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads (CPU seconds are summed over them)")
    ap.add_argument("--verbose", action="store_true", help="print each Newton iteration's seconds as it ends")
    ap.add_argument("--solvers", default="old,new", help="old (--rev's trin.py), new (this tree's trin), pr_cg (this tree's), comma-separated")
    return ap.parse_args(argv)


if __name__ == "__main__":                 # --help and a bad option answered before the heavy imports
    arguments()

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "speed"))   # bench_trin_regression's old_trin
from bench_trin_regression import old_trin  # noqa: E402
from kernlearn_cli.registry import constraints, kernels  # noqa: E402
from kernlearn_cli.resources import PeakMemory  # noqa: E402
from kernlearn_cli.solvers.trin import pr_cg, trin  # noqa: E402
from kernlearn_cli.types import Dataset  # noqa: E402


def setting(n: int):
    """Four Gaussian blobs in 10 dimensions (seed 0), K0 = L⁺, neighbour triplets on half the points."""
    rng = np.random.default_rng(0)
    y = np.arange(n) % 4
    X = rng.normal(size=(n, 10)) + 3.0 * rng.normal(size=(4, 10))[y]
    ds = Dataset(name=f"blobs{n}", X=X, y=y)
    G0 = kernels.get("laplacian_pinv").func(ds, neighbors=10, scale_features="standard")
    C = constraints.get("neighbor_triplets").func(ds, G0, rng=np.random.default_rng(0), fraction=0.5)
    return G0, C


def return_freed_memory() -> None:
    """Blocks of 1 MB or more mapped on their own and unmapped when freed (glibc mallopt M_MMAP_THRESHOLD)."""
    try:
        ctypes.CDLL("libc.so.6").mallopt(-3, 1 << 20)
    except OSError:
        pass


def measure(solver, G0, C, max_path_iter: int, trust_norm: str = "frobenius", verbose: bool = False):
    """(peak added bytes, result, CPU seconds per Newton iteration) of one solver call."""
    ticks = [(-1, time.process_time(), time.perf_counter())]      # (no iteration follows step -1)

    def callback(step, **_):
        ticks.append((step, time.process_time(), time.perf_counter()))
        if verbose:
            (s0, c0, w0), (s1, c1, w1) = ticks[-2:]
            print(f"  Newton iteration {s1} ({'' if s1 == s0 + 1 else 'first of its γ, '}{len(ticks) - 1} in all): "
                  f"{c1 - c0:.1f} CPU s, {w1 - w0:.1f} wall s", flush=True)

    extra = {} if trust_norm == "frobenius" else {"trust_norm": trust_norm}      # (trin's setting; its default)
    gc.collect()
    with PeakMemory() as mem:
        res = solver(G0, C, loss="log", gamma=2.0 ** 16, gamma_min=2.0 ** -12, path=16.0, tol=1e-3,
                     max_path_iter=max_path_iter, callback=callback, **extra)
    steps = [(s1 == s0 + 1, t1 - t0, w1 - w0) for (s0, t0, w0), (s1, t1, w1) in zip(ticks, ticks[1:])]
    print("  each Newton iteration (CPU s, wall s; * = the first of a γ, with the γ's setup, or of the call): "
          + ", ".join(f"{'' if same else '*'}{c:.1f}, {w:.1f}" for same, c, w in steps), flush=True)
    per_iter = [c for same, c, _ in steps[1:] if same]
    return mem.added_bytes, res, float(np.median(per_iter)) if per_iter else float("nan")


def main() -> None:
    args = arguments()
    table = {"old": old_trin(args.rev) if "old" in args.solvers else None, "new": trin, "pr_cg": pr_cg}
    return_freed_memory()
    print("| n | solver | peak / (8 n²) bytes | peak GB | Newton iterations | per-γ objectives: max rel. diff "
          "| CPU s per iteration |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    with threadpool_limits(limits=args.threads):
        small = setting(200)
        for key in args.solvers.split(","):
            measure(table[key], *small, 1)
        for n in (int(v) for v in args.n.split(",")):
            G0, C = setting(n)
            first = None
            for key in args.solvers.split(","):
                added, res, cpu = measure(table[key], G0, C, args.max_path_iter, args.trust_norm, args.verbose)
                f = res.history["path_objective"]
                first = f if first is None else first
                diff = float(np.max(np.abs(f - first) / np.abs(first))) if len(f) == len(first) else float("nan")
                print(f"| {n} | {key} ({res.info['mode']}) | {added / (8.0 * n * n):.2f} | {added / 1e9:.2f} | {res.iterations} "
                      f"| {diff:.1e} | {cpu:.2f} |", flush=True)
                del res
    print(f"\n--max-path-iter {args.max_path_iter}, --trust-norm {args.trust_norm}, --threads {args.threads}, "
          f"old = trin.py at {args.rev}.")


if __name__ == "__main__":
    main()
