"""MEG per trial: the dense eigendecomposition (``update: eigh``) against the Lanczos runs (``update: lanczos``).

    PYTHONPATH=. python benchmarks/speed/bench_meg.py [--quick | --agreement]

For n = 250, 500, 1000, 2000 (Gaussian blobs in 10 dimensions; the reference kernel is rbf with the
median bandwidth, as in tsuda2005's wine and soybean cells; ``distance_stream`` examples, η = 2), both
updates run the same stream in this one process, one after the other, from K0 = I (the studies'
``kernel: identity``) and from a dense full-rank K0 (the same rbf kernel + 0.1 I). It prints the
CPU milliseconds per trial of each (time.process_time from the first prediction: the machine is
shared; the set-up both share is left out), their ratio, the CPU
seconds of the Lanczos side's one final eigendecomposition (not in its per-trial time), the Lanczos
steps per trial, and the largest relative differences of ŷ_t (per trial), the cumulative loss and
the final kernel K = G Gᵀ (max-norm). One BLAS thread, as in a cell. The trials are capped so that
the dense side stays near 15 s per size (20 trials at n = 2000); a longer run of the Lanczos side
alone (``long`` rows: 2000 trials) shows how its time per trial grows as W leaves I/n.
``--quick``: n = 250, 500 only. ``--agreement``: both updates over 20,000 trials at n = 250, K0 = I
(about 2 min): the differences after a long run.
"""

import argparse
import os
import time


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line: ``--quick`` or ``--agreement`` (neither: every size)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--quick", action="store_true", help="n = 250, 500 only")
    which.add_argument("--agreement", action="store_true",
                       help="both updates over 20,000 trials at n = 250, K0 = I (about 2 min)")
    return ap.parse_args(argv)


if __name__ == "__main__":                 # the usage before the heavy imports (scikit-learn, numba)
    ARGS = arguments()

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from sklearn.datasets import make_blobs  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from kernlearn_cli.constraints.streams import distance_stream  # noqa: E402
from kernlearn_cli.kernels import rbf_bandwidth, rbf_kernel_matrix  # noqa: E402
from kernlearn_cli.lowrank import factorize  # noqa: E402
from kernlearn_cli.solvers import meg as meg_module  # noqa: E402
from kernlearn_cli.types import Dataset  # noqa: E402

SIZES = {250: 200, 500: 100, 1000: 40, 2000: 20}    # n: trials of the dense side
LONG = 2000
AGREEMENT = 20000


def recorded(update: str, G0, C, G_ref, trials: int):
    """(CPU seconds of the trials, CPU seconds of the final factor, result, ŷ_t of every trial) of one run.

    The trials' time runs from the first prediction to the final factor: the set-up both updates share
    (K0's eigendecomposition, log W_1, Δ(U, W_1)) is not in it."""
    cls = meg_module._Krylov if update == "lanczos" else meg_module._Eigen
    predict, factor, yhat, clock = cls.predict, cls.factor, [], []

    def record(self, a, b, dist):
        if not yhat:
            clock.append(time.process_time())
        yhat.append(predict(self, a, b, dist))
        return yhat[-1]

    def timed(self):
        clock.append(time.process_time())
        out = factor(self)
        clock.append(time.process_time())
        return out

    cls.predict, cls.factor = record, timed
    try:
        res = meg_module.meg(G0, C, eta=2.0, iterations=trials, reference=G_ref, update=update)
        return clock[1] - clock[0], clock[2] - clock[1], res, np.array(yhat)
    finally:
        cls.predict, cls.factor = predict, factor


def compare(n: int, k0: str, G0, C, G_ref, T: int) -> None:
    """One row: both updates on the first T examples of C, times and differences."""
    t_e, _, r_e, y_e = recorded("eigh", G0, C, G_ref, T)
    t_l, f_l, r_l, y_l = recorded("lanczos", G0, C, G_ref, T)
    K_e, K_l = r_e.G @ r_e.G.T, r_l.G @ r_l.G.T
    dy = np.max(np.abs(y_l - y_e) / np.abs(y_e))
    dloss = abs(r_l.objective - r_e.objective) / r_e.objective
    dK = np.abs(K_l - K_e).max() / np.abs(K_e).max()
    print(f"{n:>5} {k0:>8} {T:>6} {1e3 * t_e / T:>13.1f} {1e3 * t_l / T:>16.2f} {t_e / t_l:>6.0f} "
          f"{f_l:>12.2f} {r_l.info['lanczos_steps'] / T:>11.1f} {dy:>10.1e} {dloss:>10.1e} {dK:>8.1e}", flush=True)


def problem(n: int, count: int):
    """Blobs, their rbf reference factor, a distance stream of ``count`` examples, a dense full-rank K0."""
    X, _ = make_blobs(n, 10, centers=3, random_state=0)
    sigma = rbf_bandwidth(X, "median")
    G_ref = factorize(rbf_kernel_matrix(X, sigma))
    C = distance_stream(Dataset("blobs", X), G_ref, rng=np.random.default_rng(0), count=count)
    return G_ref, C, factorize(rbf_kernel_matrix(X, sigma) + 0.1 * np.eye(n), rank_tol=0)


def main(args: argparse.Namespace) -> None:
    print(f"{'n':>5} {'K0':>8} {'trials':>6} {'eigh ms/trial':>13} {'lanczos ms/trial':>16} {'ratio':>6} "
          f"{'final eigh s':>12} {'steps/trial':>11} {'max rel dy':>10} {'rel d loss':>10} {'rel d K':>8}")
    if args.agreement:                  # the long run of both, n = 250
        G_ref, C, _ = problem(250, AGREEMENT)
        compare(250, "identity", np.eye(250), C, G_ref, AGREEMENT)
        return
    for n in [250, 500] if args.quick else list(SIZES):
        G_ref, C, dense = problem(n, LONG)
        for k0, G0 in (("identity", np.eye(n)), ("dense", dense)):
            compare(n, k0, G0, C, G_ref, SIZES[n])
            t_long, f_long, r_long, _ = recorded("lanczos", G0, C, G_ref, LONG)
            print(f"{n:>5} {k0:>8} {LONG:>6} {'(long)':>13} {1e3 * t_long / LONG:>16.2f} {'':>6} {f_long:>12.2f} "
                  f"{r_long.info['lanczos_steps'] / LONG:>11.1f}", flush=True)


if __name__ == "__main__":
    with threadpool_limits(limits=1):              # as in a cell (KERNLEARN_BLAS_THREADS = 1)
        main(ARGS)
