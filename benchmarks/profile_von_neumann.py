"""Where a von Neumann projection's time goes: its compiled kernels timed one by one, one core.

    python benchmarks/profile_von_neumann.py

The spectrum is the benchmark's (bench_von_neumann.py: D = log of the squared singular values
of a random 2000 x r Gaussian G0, sorted as the sweep keeps it) with a random w and alpha = 5.
Each kernel runs in a compiled loop, so no interpreter time is counted:

* ``w = W^T v`` (``_tmatvec``), the Talbot setup of g at the 12 node pairs and four trial values
  of the step search (``_quad_setup``, ``_quad_value``);
* the one secular solve per projection, cold (``_eigvals``), and its division passes alone:
  five passes of 1/(d_j - theta_i) over every (root, pole) pair, the arithmetic the solve cannot
  avoid (about six per root: the midpoint test, the first guess, the Gragg steps);
* the eigenvectors (``_eigvecs``) and the O(r^3) product W <- W U (``_apply``).
"""

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import time  # noqa: E402

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from kernlearn_cli.solvers import _von_neumann_kernels as k  # noqa: E402

PARTS = ("w = W^T v", "Talbot setup + 4 trials", "secular roots (cold)", "5 division passes", "eigenvectors",
         "W <- W U")


@njit(cache=True)
def _loop(part, D, w, W, alpha, reps):
    r = D.shape[0]
    out = np.empty(r)
    pole, weight, tau, row = np.empty(r), np.empty(r), np.empty(r), np.empty(r)
    perm, owner, org = np.empty(r, np.int64), np.empty(r, np.int64), np.empty(r, np.int64)
    wk, iw = np.empty((k._N_WK, r)), np.zeros((k._N_IW, r), np.int64)
    Ut, Wn, d = np.empty((r, r)), np.empty((r, r)), D.copy()
    gre, gim = np.empty(k.QUAD_Z.shape[0]), np.empty(k.QUAD_Z.shape[0])
    k._sort_perm(d, perm)
    kk = k._poles(d, w, perm, pole, weight, owner)
    k._eigvals(pole, weight, kk, alpha, org, tau, wk, iw, False)
    acc = 0.0
    for _ in range(reps):
        if part == 0:
            k._tmatvec(W, w, out)
            acc += out[0]
        elif part == 1:
            k._quad_setup(pole, weight, kk, pole[kk - 1] + alpha * np.sum(w * w), gre, gim, row)
            for m in range(4):
                acc += k._quad_value(gre, gim, alpha * (1.0 - 0.1 * m))
        elif part == 2:
            k._eigvals(pole, weight, kk, alpha, org, tau, wk, iw, False)
            acc += tau[0]
        elif part == 3:
            for _p in range(5):
                for i in range(kk):
                    k._offsets(pole, kk, pole[org[i]], row)
                    a, b = k._sums(row, weight, 0, i + 1, tau[i])
                    c, e = k._sums(row, weight, i + 1, kk, tau[i])
                    acc += a + b + c + e
        elif part == 4:
            d[:] = D
            k._eigvecs(d, w, perm, owner, pole, kk, org, tau, Ut, wk, iw)
            acc += Ut[0, 0]
        else:
            k._gemm_into(W, Ut.T, Wn)
            acc += Wn[0, 0]
    return acc


def main():
    rng = np.random.default_rng(0)
    print("von Neumann projection, its kernels one by one (µs per call, best of 3), one core")
    print(f"{'r':>5} " + " ".join(f"{p:>24}" for p in PARTS))
    with threadpool_limits(limits=1):
        for r in (16, 64, 256):
            D = np.sort(np.log(np.linalg.svd(rng.standard_normal((2000, r)), compute_uv=False) ** 2))
            w = 0.05 * rng.standard_normal(r)
            W = np.linalg.qr(rng.standard_normal((r, r)))[0]
            reps = {16: 100000, 64: 10000, 256: 500}[r]
            row = []
            for part in range(len(PARTS)):
                _loop(part, D, w, W, 5.0, 2)
                best = np.inf
                for _ in range(3):
                    t = time.perf_counter()
                    _loop(part, D, w, W, 5.0, reps)
                    best = min(best, (time.perf_counter() - t) / reps)
                row.append(best * 1e6)
            print(f"{r:>5} " + " ".join(f"{x:>24.2f}" for x in row))


if __name__ == "__main__":
    main()
