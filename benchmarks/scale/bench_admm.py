"""KL_ADMM (Hu & Kwok 2013): Table 2 times beside the paper's, Fig. 3-4 scaling, peak memory.

    python benchmarks/scale/bench_admm.py [--quick] [--skip-table] [--skip-scaling] [--skip-memory]

* Table 2, time: CPU seconds of one learning run (k-NN graph + Laplacian + ADMM, seed 0, the
  settings of configs/papers/hu2013/table2_*.yaml) per dataset beside the paper's KL_ADMM
  column (MATLAB, i7-3370 3.4 GHz).  The *_approx rows are subsets of a1a + a1a.t of the
  sizes of a4a-a6a (those files are not obtainable).
* Fig. 3: time for 100 ADMM iterations vs n (1,000 to 160,000) on the two-Gaussian set of Sec. 4.2 at 1,000
  must/cannot pairs (plus the n (i, i) pairs), rank fixed at 44 (Table 1's rule on the 1,000
  pairs) so that the per-iteration cost (26) is what is measured; log-log slope printed.
* Fig. 4: the same at n = 1,000 against the number of pairs (rank by Table 1's rule).
* Peak memory of a learning run on adult_a6a_approx (n = 11,220), in a fresh process.

Figures go to benchmarks/scale/figures/hu2013_fig3.png and hu2013_fig4.png.  One core.
"""

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, parsed before the heavy imports below (``--help`` answers at once)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes only (smoke run)")
    ap.add_argument("--skip-table", action="store_true")
    ap.add_argument("--skip-scaling", action="store_true")
    ap.add_argument("--skip-memory", action="store_true")
    return ap.parse_args(argv)


if __name__ == "__main__":                 # --help and a bad option answered before the heavy imports
    arguments()

import numpy as np  # noqa: E402

from kernlearn_cli.builtins import load_builtins  # noqa: E402
from kernlearn_cli.registry import constraints, datasets  # noqa: E402
from kernlearn_cli.solvers.admm import admm  # noqa: E402

PAPER_SECONDS = {"chessboard": 3.08, "double_spiral": 0.74, "glass": 17.56, "heart": 37.14, "iris": 3.44,
                 "sonar": 16.28, "soybean_small": 0.77, "wine": 6.89, "adult_a1a": 54.99, "adult_a2a": 92.02,
                 "adult_a3a": 161.60, "adult_a4a_approx": 319.29, "adult_a5a_approx": 1724.9,
                 "adult_a6a_approx": 7661.7}
SMALL = dict(gamma=1.0, neighbors=5, scale="minmax", max_iter=500)
ADULT = dict(gamma=1.0, neighbors=50, scale="none", max_iter=100)
FIGURES = Path(__file__).resolve().parent / "figures"


def learn(name, seed=0, **solver):
    ds = datasets.get(name).func()
    C = constraints.get("must_cannot").func(ds, None, rng=np.random.default_rng(seed))
    t = time.process_time()
    res = admm(None, C, dataset=ds, rng=np.random.default_rng(seed), **solver)
    return time.process_time() - t, res


def table(quick):
    print("Table 2, CPU seconds per learning run (graph + ADMM), seed 0")
    print(f"{'dataset':>18} {'n':>6} {'r':>4} {'iters':>6} {'ours s':>8} {'paper s':>8} {'paper/ours':>11}")
    names = list(PAPER_SECONDS)[:9] if quick else list(PAPER_SECONDS)
    learn("soybean_small", **SMALL)                  # warm-up: load the compiled kernels once
    for name in names:
        seconds, res = learn(name, **(ADULT if name.startswith("adult") else SMALL))
        paper = PAPER_SECONDS[name]
        print(f"{name:>18} {res.G.shape[0]:>6} {res.info['rank']:>4} {res.iterations:>6} {seconds:>8.2f} "
              f"{paper:>8.2f} {paper / seconds:>10.0f}x", flush=True)


def timed(n, pairs, rank, iters=100):
    ds = datasets.get("two_gaussians").func(n=n)
    C = constraints.get("must_cannot").func(ds, None, rng=np.random.default_rng(0), count=pairs)
    res = admm(None, C, dataset=ds, rng=np.random.default_rng(0), rank=rank, max_iter=iters, tol=1e-300)
    return res.info["solver_seconds"], res


def slope(x, y):
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def scaling(quick):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    FIGURES.mkdir(parents=True, exist_ok=True)
    ns = [1000, 2000, 5000] if quick else [1000, 2000, 5000, 10000, 20000, 40000, 80000, 160000]
    print("\nFig. 3: 100 ADMM iterations vs n (two Gaussians, 1,000 pairs + n (i, i), rank 44)")
    times = []
    for n in ns:
        seconds, _ = timed(n, 1000, 44)
        times.append(seconds)
        print(f"  n = {n:>6}: {seconds:7.2f} s", flush=True)
    s = slope(ns, times)
    steps = ", ".join(f"{slope(ns[k:k + 2], times[k:k + 2]):.2f}" for k in range(len(ns) - 1))
    print(f"  log-log slope in n: {s:.3f} (least squares over all n; target <= 1.15); "
          f"between successive n: {steps}")
    fig, ax = plt.subplots(figsize=(4.5, 3.5))
    ax.loglog(ns, times, "o-", label=f"KL_ADMM (slope {s:.2f})")
    ax.loglog(ns, times[0] * np.asarray(ns) / ns[0], "k--", lw=0.8, label="linear in n")
    ax.set(xlabel="n", ylabel="seconds (100 iterations)", title="Hu & Kwok Fig. 3: time vs n")
    ax.legend()
    fig.tight_layout()
    fig.savefig(FIGURES / "hu2013_fig3.png", dpi=120)
    counts = [500, 1000, 2000, 5000] if quick else [500, 1000, 2000, 5000, 10000, 20000]
    print("\nFig. 4: 100 ADMM iterations vs pairs at n = 1,000 (rank by Table 1's rule)")
    times2, ranks = [], []
    for c in counts:
        seconds, res = timed(1000, c, 0)
        times2.append(seconds)
        ranks.append(res.info["rank"])
        print(f"  pairs = {c:>6} (r = {res.info['rank']:>3}): {seconds:7.2f} s", flush=True)
    fig, ax = plt.subplots(figsize=(4.5, 3.5))
    ax.loglog(counts, times2, "o-")
    ax.set(xlabel="must-link + cannot-link pairs", ylabel="seconds (100 iterations)",
           title="Hu & Kwok Fig. 4: time vs constraints")
    fig.tight_layout()
    fig.savefig(FIGURES / "hu2013_fig4.png", dpi=120)
    print(f"  figures: {FIGURES / 'hu2013_fig3.png'}, {FIGURES / 'hu2013_fig4.png'}")


def memory():
    code = ("import resource, warnings; warnings.simplefilter('ignore');"
            "import sys; sys.path.insert(0, %r); from bench_admm import learn, ADULT, load_builtins; load_builtins();"
            "s, res = learn('adult_a6a_approx', **ADULT);"
            "print(s, res.iterations, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)"
            % str(Path(__file__).parent))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    print(f"\nPeak memory, adult_a6a_approx (n = 11,220, 50-NN graph, rank 275): {float(out[2]):.0f} MB "
          f"(target < 2048 MB); {float(out[0]):.1f} CPU s, {out[1]} iterations")


def main():
    args = arguments()
    warnings.simplefilter("ignore")
    load_builtins()
    if not args.skip_table:
        table(args.quick)
    if not args.skip_scaling:
        scaling(args.quick)
    if not args.skip_memory and not args.quick:
        memory()


if __name__ == "__main__":
    main()
