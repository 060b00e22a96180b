"""The rbf K0 by pivoted incomplete Cholesky at large n (issue 45 item 1): time and peak memory.

    python benchmarks/scale/bench_large_k0.py N [N ...] [--d 20] [--rank 64]

n points of ``two_gaussians`` in d dimensions (seed 0), ``rbf`` with ``factorization:
pivoted_cholesky`` and ``rank`` (bandwidth by its default rule), one BLAS thread.  Printed per n:
wall and CPU seconds of the kernel call, the factor's rank, the residual trace tr(K0 − G Gᵀ) / n
(rbf's diagonal is 1), and the call's peak memory above what the process held before
(:class:`kernlearn_cli.resources.PeakMemory`, the helper the records use).
"""

import argparse
import time


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, parsed before the heavy imports below (``--help`` answers at once)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("n", type=int, nargs="+")
    ap.add_argument("--d", type=int, default=20)
    ap.add_argument("--rank", type=int, default=64)
    return ap.parse_args(argv)


if __name__ == "__main__":                 # --help and a bad option answered before the heavy imports
    arguments()

from threadpoolctl import threadpool_limits  # noqa: E402

from kernlearn_cli.kernels import rbf  # noqa: E402
from kernlearn_cli.registry import datasets  # noqa: E402
from kernlearn_cli.resources import PeakMemory  # noqa: E402


def main() -> None:
    args = arguments()
    for n in args.n:
        ds = datasets.get("two_gaussians").func(n=n, dim=args.d)
        with threadpool_limits(1), PeakMemory() as mem:
            t0, c0 = time.perf_counter(), time.process_time()
            G = rbf(ds, factorization="pivoted_cholesky", rank=args.rank)
            t1, c1 = time.perf_counter(), time.process_time()
        print(f"n={n} d={args.d}: K0 {t1 - t0:.2f} s wall, {c1 - c0:.2f} s CPU, rank {G.shape[1]}, "
              f"residual trace / n {(n - float((G * G).sum())) / n:.3e}, peak added {mem.added_bytes / 1e9:.2f} GB",
              flush=True)
        del G, ds


if __name__ == "__main__":
    main()
