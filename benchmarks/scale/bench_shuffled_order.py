"""The papers' fixed cyclic order against a seeded permutation per sweep (``order: fixed`` / ``shuffled``,
issue 57), side by side in one process: sweeps, CPU seconds of the solver call and the certificate's
relative duality gap, on ITML's problem (two_gaussians in r dimensions, linear K0 of rank r,
``itml_pairs`` count = n, slack 1, ``stop: dual_change``, tol 1e-3) or idealized pairs.

Usage: ``python benchmarks/scale/bench_shuffled_order.py N [N ...] [--r 16] [--solver burg]
[--sweeps cyclic] [--constraints itml_pairs] [--max-sweeps 20000] [--orders fixed shuffled]``.
"""

import argparse
import os


def problem(n, r, generator):
    from kernlearn_cli.kernels import linear
    from kernlearn_cli.registry import constraints as generators
    from kernlearn_cli.registry import datasets
    from kernlearn_cli.rng import component_rng

    ds = datasets.get("two_gaussians").func(n=n, dim=r)
    G0 = linear(ds)
    return G0, generators.get(generator).func(ds, G0, rng=component_rng(0, 1), count=n)


def main(args):
    import time

    from kernlearn_cli.registry import solvers
    from kernlearn_cli.rng import STREAM_SOLVER, component_rng

    solve = solvers.get(args.solver).func
    print(f"{args.solver}, sweeps {args.sweeps}, r = {args.r}, {args.constraints}, slack 1, stop dual_change, "
          f"tol 1e-3, max_sweeps {args.max_sweeps}")
    print(f"{'n = c':>8} {'order':>9} {'sweeps':>7} {'CPU s':>8} {'converged':>9} {'relative gap':>14} "
          f"{'objective':>14}")
    for n in args.sizes:
        G0, C = problem(n, args.r, args.constraints)
        for order in args.orders:
            t = time.process_time()
            res = solve(G0, C, slack=1.0, stop="dual_change", sweeps=args.sweeps, tol=1e-3,
                        max_sweeps=args.max_sweeps, order=order, rng=component_rng(0, STREAM_SOLVER))
            cpu = time.process_time() - t
            gap = res.certificate["figures"]["relative_duality_gap"]
            print(f"{n:>8} {order:>9} {res.iterations:>7} {cpu:>8.2f} {str(res.converged):>9} {gap:>14.2e} "
                  f"{res.objective:>14.8g}", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", type=int, nargs="+", metavar="N", help="n = c")
    parser.add_argument("--r", type=int, default=16, help="rank of the linear K0 (default 16)")
    parser.add_argument("--solver", default="burg", choices=["burg", "von_neumann"])
    parser.add_argument("--sweeps", default="cyclic", choices=["cyclic", "active"])
    parser.add_argument("--constraints", default="itml_pairs", choices=["itml_pairs", "idealized_pairs"])
    parser.add_argument("--max-sweeps", type=int, default=20000)
    parser.add_argument("--orders", nargs="+", default=["fixed", "shuffled"], choices=["fixed", "shuffled"])
    args = parser.parse_args()
    for var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    main(args)
