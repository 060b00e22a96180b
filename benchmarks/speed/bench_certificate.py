"""What the certificate costs: solve time with it, and without it, for every certified solver, in one run.

    python benchmarks/speed/bench_certificate.py [--quick]

Every solver times the work its certificate adds (``info["certificate_seconds"]``): the final
violation / duality-gap / KKT / f - f* computations, the infeasibility checks during the sweeps
(Bregman solvers) and the gap checks of the stopping rule (``nystrom_prior``). "Without" is the
solve time minus that work; the last column is their ratio (target: <= 5%). Sizes are those of
``make bench``: the Burg / von Neumann instances of bench_burg.py and bench_von_neumann.py (n =
2000, random distance constraints at 0.9x / 1.1x the current distances, r = 16, 64, 256, as many
as stay feasible, and 20,000 of them with slack), the
TRIN path of bench_trin.py on wine, nystrom_prior as in bench_nystrom.py, KL_ADMM on two
Gaussians. One core; each case after a warm-up, best of 3.
"""

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, parsed before the heavy imports below (``--help`` answers at once)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    return ap.parse_args(argv)


if __name__ == "__main__":                 # --help and a bad option answered before the heavy imports
    arguments()

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from kernlearn_cli.constraints.labeled import labeled_subset  # noqa: E402
from kernlearn_cli.constraints.must_cannot import must_cannot  # noqa: E402
from kernlearn_cli.data.synthetic import two_gaussians  # noqa: E402
from kernlearn_cli.registry import constraints as generators, datasets, kernels, solvers  # noqa: E402
from kernlearn_cli.types import KIND_CODE, Constraints  # noqa: E402

from bench_von_neumann import instance as pairs  # noqa: E402  (run from the repository root)


def trace_matched(n, c, seed=0):
    """Identity K0 and distance bounds 0.9x / 1.1x those of a random target with tr T = n (feasible for
    DefiniteBoost, which keeps tr K = tr K0)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 5))
    T = X @ X.T + np.eye(n)
    T *= n / np.trace(T)
    i = rng.integers(0, n, c)
    j = (i + 1 + rng.integers(0, n - 1, c)) % n
    d = T[i, i] + T[j, j] - 2 * T[i, j]
    same = rng.random(c) < 0.5
    kind = np.where(same, KIND_CODE["dist_le"], KIND_CODE["dist_ge"])
    return np.eye(n), Constraints(i, j, kind, np.where(same, 1.1 * d, 0.9 * d))


def cases(quick):
    sizes = {16: 128, 64: 1024, 256: 2048}                  # hard constraints: feasible, 50-110 sweeps
    for r in ((16, 64) if quick else (16, 64, 256)):
        G0, C = pairs(2000, r, sizes[r], seed=r)
        yield f"burg r={r} c={sizes[r]}", "burg", (G0, C), {}
    for r in ((16,) if quick else (16, 64)):
        G0, C = pairs(2000, r, 20000, seed=r)
        yield f"burg r={r} c=20000 slack 1", "burg", (G0, C), {"slack": 1.0, "max_sweeps": 1000}
    for r in ((16,) if quick else (16, 64)):
        G0, C = pairs(2000, r, sizes[r], seed=r)
        yield f"von_neumann r={r} c={sizes[r]}", "von_neumann", (G0, C), {}
    G0, C = trace_matched(200, 400)
    yield "definiteboost n=r=200 c=400", "definiteboost", (G0, C), {"dual_correction": True}
    ds = datasets.get("wine").func()
    G0 = kernels.get("laplacian_pinv").func(ds, neighbors=10, scale_features="standard")
    C = generators.get("neighbor_triplets").func(ds, G0, rng=np.random.default_rng(0), fraction=0.5)
    for name in (("trin",) if quick else ("trin", "pr_cg")):
        yield f"{name} wine path a=16", name, (G0, C), {"gamma": 2.0 ** 16, "gamma_min": 2.0 ** -12, "path": 16.0}
    n = 5000 if quick else 20000
    ds = two_gaussians(n=n, dim=10, seed=0)
    C = labeled_subset(ds, None, rng=np.random.default_rng(0), count=100)
    yield f"nystrom_prior n={n} m=100", "nystrom_prior", (None, C), {"dataset": ds, "rng": None, "landmarks": 100,
                                                                      "lam": 1.0}
    n = 2000 if quick else 10000
    ds = two_gaussians(n=n, dim=10, seed=0)
    C = must_cannot(ds, None, rng=np.random.default_rng(0))
    yield f"admm n={n}", "admm", (None, C), {"dataset": ds, "rng": None, "max_iter": 100}


def timed(name, args, kw, repeats):
    best = None
    for _ in range(repeats):
        kw = {k: (np.random.default_rng(0) if k == "rng" else v) for k, v in kw.items()}
        t0 = time.perf_counter()
        res = solvers.get(name).func(*args, **kw)
        total = time.perf_counter() - t0
        if best is None or total < best[0]:
            best = (total, res.info.get("certificate_seconds", 0.0), res)
    return best


def main():
    args = arguments()
    warnings.simplefilter("ignore")
    repeats = 1 if args.quick else 3
    print("certificate cost per solve (one core, best of %d)" % repeats)
    head = f"{'case':<30} {'with s':>9} {'without s':>10} {'cert s':>9} {'cost':>7}  converged  iterations"
    print(head)
    print("-" * len(head))
    worst = 0.0
    with threadpool_limits(limits=1):
        for label, name, a, kw in cases(args.quick):
            timed(name, a, kw, 1) if not args.quick else None               # warm-up
            total, cert, res = timed(name, a, kw, repeats)
            cost = cert / max(total - cert, 1e-12)
            worst = max(worst, cost)
            print(f"{label:<30} {total:>9.3f} {total - cert:>10.3f} {cert:>9.4f} {cost:>6.1%}  "
                  f"{str(res.converged):>9}  {res.iterations:>10}", flush=True)
    print(f"\nlargest cost: {worst:.1%} (target <= 5%)")


if __name__ == "__main__":
    main()
