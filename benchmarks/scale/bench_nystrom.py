"""Generalized Nyström with priors: time and peak memory against n at fixed m (linear cost).

    python benchmarks/scale/bench_nystrom.py [--quick]

Two-Gaussian data (10 dimensions), m = 100 k-means landmarks, 100 labeled points, one lambda;
for n from 10,000 to 200,000: wall time of ``nystrom_prior`` (landmarks + E in blocks +
gradient mapping + the factor G = E S^{1/2}) and of the standard ``nystrom`` beside it, and
the peak of the memory allocated during the call (tracemalloc; the input X is allocated
before) as a multiple of the size of E (n x m float64).  Prints the log-log slopes in n.
Targets (issue): slope <= 1.1, peak memory <= 1.5 x the size of E.  One core.
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
import warnings  # noqa: E402


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, parsed before the heavy imports below (``--help`` answers at once)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    return ap.parse_args(argv)


if __name__ == "__main__":                 # --help and a bad option answered before the heavy imports
    arguments()

import numpy as np  # noqa: E402

from kernlearn_cli.constraints.labeled import labeled_subset  # noqa: E402
from kernlearn_cli.data.synthetic import two_gaussians  # noqa: E402
from kernlearn_cli.solvers.nystrom import nystrom, nystrom_prior  # noqa: E402

M = 100


def measure(solver, ds, C, **kw):
    tracemalloc.start()
    t = time.perf_counter()
    res = solver(None, C, dataset=ds, rng=np.random.default_rng(0), landmarks=M, **kw)
    seconds = time.perf_counter() - t
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del res
    return seconds, peak


def slope(x, y):
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def main():
    args = arguments()
    warnings.simplefilter("ignore")
    ns = [5000, 10000, 20000] if args.quick else [10000, 20000, 50000, 100000, 200000]
    print(f"nystrom_prior vs nystrom, m = {M} landmarks, 100 labeled, two Gaussians in 10-D (one core)")
    print(f"{'n':>7} {'prior s':>8} {'peak / |E|':>11} {'nystrom s':>10} {'peak / |E|':>11}")
    rows = []
    warm = two_gaussians(n=2000, dim=10, seed=0)          # warm-up: imports and first calls
    measure(nystrom_prior, warm, labeled_subset(warm, None, rng=np.random.default_rng(0), count=100), lam=1.0)
    for n in ns:
        ds = two_gaussians(n=n, dim=10, seed=0)
        C = labeled_subset(ds, None, rng=np.random.default_rng(0), count=100)
        size_E = n * M * 8
        tp, mp = measure(nystrom_prior, ds, C, lam=1.0, max_iter=200)
        tn, mn = measure(nystrom, ds, C)
        rows.append((n, tp, mp / size_E, tn, mn / size_E))
        print(f"{n:>7} {tp:>8.2f} {mp / size_E:>10.2f}x {tn:>10.2f} {mn / size_E:>10.2f}x", flush=True)
    n, tp, rp, tn, rn = map(np.array, zip(*rows))
    print(f"\nlog-log slope in n: nystrom_prior {slope(n, tp):.3f}, nystrom {slope(n, tn):.3f} (target <= 1.1); "
          f"largest peak / |E|: {rp.max():.2f} (target <= 1.5)")


if __name__ == "__main__":
    main()
