"""The crossovers behind the ``auto`` defaults (issue 56): time against size for both paths of each
setting, side by side in one process, one BLAS thread, CPU seconds of the whole call.

- ``kernel rbf, factorization``: ``eigh`` (the dense kernel and its eigendecomposition, exact) against
  ``pivoted_cholesky`` at the default rank (:data:`kernlearn_cli.kernels.PIVOTED_RANK`), on the
  first n rows of make_classification(200,000 × 30, 10 informative, 5 classes), with the pivoted
  factor's relative residual trace;
- ``solver burg`` (or ``von_neumann``), ``sweeps``: ``cyclic`` against ``active`` on ITML's problem (two_gaussians, linear K0
  of rank r, ``itml_pairs`` count = n, slack 1, ``stop: dual_change``, tol 1e-3);
- ``solver meg, update``: ``eigh`` against ``lanczos`` (Gaussian blobs, rbf reference, a distance
  stream, η = 2, K0 = I and a dense K0).

Usage: ``python benchmarks/sizing/auto_crossovers.py {rbf,sweeps,meg} [--sizes N ...]``.
"""

import argparse
import os

DEFAULT_SIZES = {"rbf": [1000, 2000, 4000, 6000], "sweeps": [100, 250, 500, 1000, 2000, 4000],
                 "meg": [20, 50, 100, 178, 250]}


def rbf_rows(sizes):
    import numpy as np
    from sklearn.datasets import make_classification

    from kernlearn_cli.kernels import PIVOTED_RANK, rbf_bandwidth, rbf_cholesky, rbf_kernel_matrix
    from kernlearn_cli.lowrank import factorize

    X, _ = make_classification(n_samples=max(sizes), n_features=30, n_informative=10, n_classes=5, random_state=0)
    print(f"{'n':>6} {'eigh CPU s':>10} {'pivoted CPU s':>13} {'pivoted rank':>12} {'residual trace / n':>18} "
          f"{'K0 max diff':>11}")
    for n in sizes:
        Xn = X[:n]
        sigma = rbf_bandwidth(Xn, "median")
        t = time.process_time()
        G = factorize(rbf_kernel_matrix(Xn, sigma))
        te = time.process_time() - t
        t = time.process_time()
        Gp, _, res = rbf_cholesky(Xn, sigma, PIVOTED_RANK, 1e-8)
        tp = time.process_time() - t
        probe = slice(0, min(n, 1000))
        diff = np.abs(G[probe] @ G[probe].T - Gp[probe] @ Gp[probe].T).max()
        print(f"{n:>6} {te:>10.2f} {tp:>13.2f} {Gp.shape[1]:>12} {res / n:>18.4f} {diff:>11.2e}", flush=True)


def sweeps_rows(sizes, r, name):
    from kernlearn_cli.kernels import linear
    from kernlearn_cli.registry import constraints as generators
    from kernlearn_cli.registry import datasets, solvers
    from kernlearn_cli.rng import component_rng

    solve = solvers.get(name).func
    print(f"{name}, r = {r}\n{'n = c':>6} {'cyclic CPU s':>12} {'sweeps':>7} {'active CPU s':>12} {'sweeps':>7} "
          f"{'objectives apart':>16}")
    for n in sizes:
        ds = datasets.get("two_gaussians").func(n=n, dim=r)
        G0 = linear(ds)
        C = generators.get("itml_pairs").func(ds, G0, rng=component_rng(0, 1), count=n)
        out = {}
        for mode in ("cyclic", "active"):
            best = None
            for _ in range(3):                 # the least of three: small calls are noisy
                t = time.process_time()
                res = solve(G0, C, slack=1.0, stop="dual_change", sweeps=mode, tol=1e-3, max_sweeps=200000)
                took = time.process_time() - t
                best = took if best is None else min(best, took)
            out[mode] = (best, res)
        (tc, rc), (ta, ra) = out["cyclic"], out["active"]
        apart = abs(rc.objective - ra.objective) / abs(rc.objective)
        print(f"{n:>6} {tc:>12.3f} {rc.iterations:>7} {ta:>12.3f} {ra.iterations:>7} {apart:>16.1e}", flush=True)


def meg_rows(sizes, trials):
    import numpy as np
    from sklearn.datasets import make_blobs

    from kernlearn_cli.constraints.streams import distance_stream
    from kernlearn_cli.kernels import rbf_bandwidth, rbf_kernel_matrix
    from kernlearn_cli.lowrank import factorize
    from kernlearn_cli.registry import solvers
    from kernlearn_cli.types import Dataset

    meg = solvers.get("meg").func
    print(f"{trials} trials\n{'n':>5} {'K0':>8} {'eigh CPU s':>10} {'lanczos CPU s':>13} {'ratio':>6} "
          f"{'loss apart':>10}")
    for n in sizes:
        X, _ = make_blobs(n, 10, centers=3, random_state=0)
        K = rbf_kernel_matrix(X, rbf_bandwidth(X, "median"))
        G_ref = factorize(K)
        C = distance_stream(Dataset("blobs", X), G_ref, rng=np.random.default_rng(0), count=trials)
        for k0, G0 in (("identity", np.eye(n)), ("dense", factorize(K + 0.1 * np.eye(n), rank_tol=0))):
            out = {}
            for update in ("eigh", "lanczos"):
                best = None
                for _ in range(3):
                    t = time.process_time()
                    res = meg(G0, C, eta=2.0, iterations=trials, reference=G_ref, update=update)
                    took = time.process_time() - t
                    best = took if best is None else min(best, took)
                out[update] = (best, res)
            (te, re), (tl, rl) = out["eigh"], out["lanczos"]
            apart = abs(re.objective - rl.objective) / abs(re.objective)
            print(f"{n:>5} {k0:>8} {te:>10.3f} {tl:>13.3f} {te / tl:>6.1f} {apart:>10.1e}", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("setting", choices=sorted(DEFAULT_SIZES))
    parser.add_argument("--sizes", type=int, nargs="+", help="the sizes n (default: the setting's own list)")
    parser.add_argument("--r", type=int, default=64, help="sweeps: the rank of the linear K0 (default 64)")
    parser.add_argument("--solver", default="burg", choices=["burg", "von_neumann"], help="sweeps: the solver")
    parser.add_argument("--trials", type=int, default=200, help="meg: trials (default 200)")
    args = parser.parse_args()
    for var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    import time

    sizes = args.sizes or DEFAULT_SIZES[args.setting]
    if args.setting == "rbf":
        rbf_rows(sizes)
    elif args.setting == "sweeps":
        sweeps_rows(sizes, args.r, args.solver)
    else:
        meg_rows(sizes, args.trials)
