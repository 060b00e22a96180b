"""Where a von Neumann projection's time goes (the Krylov sweep): its compiled kernels timed one by one, one core.

    python benchmarks/profiles/profile_von_neumann.py

The exponent L is the benchmark's after its first sweep (bench_von_neumann.py: K0 = G0 G0^T for a
random 2000 x r Gaussian G0, equality distance constraints), v = V0^T (e_i - e_j) of its first
constraint, and the trial step alpha = -0.2 / ||v||^2 (a 20 % decrease, as those constraints ask).
Each kernel runs in a compiled loop, so no interpreter time is counted:

* the Lanczos run on L from v to the Gauss rule's accuracy (``_krylov``: m steps, O(m r^2));
* the Talbot setup of g at the 12 node pairs by the continued fraction of T_m and four trial
  values of the step search (``_cf_setup``, ``_quad_value``);
* the exact fallback: the Gauss rule (``_rule_poles``) and one secular-root value (``_value``);
* the update L <- L + beta v v^T (``_sym_rank_one``, O(r^2)).
"""

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

if __name__ == "__main__":                 # the usage before the heavy imports (numba, the compiled kernels)
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "speed"))   # bench_von_neumann's instance
from bench_von_neumann import instance  # noqa: E402
from numba import njit  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from kernlearn_cli.solvers import _contour, _lanczos, _secular  # noqa: E402
from kernlearn_cli.solvers import _von_neumann_kernels as k  # noqa: E402

PARTS = ("Lanczos run", "Talbot setup + 4 trials", "exact fallback (1 value)", "L update")


@njit(cache=True)
def _loop(part, L, v, alpha, reps):
    r = L.shape[0]
    Q, a, b, u = np.empty((r, r)), np.empty(r), np.zeros(r + 1), np.empty(r)
    pole, weight, tau = np.empty(r), np.empty(r), np.empty(r)
    perm, owner, org = np.empty(r, np.int64), np.empty(r, np.int64), np.empty(r, np.int64)
    wk, iw = np.empty((_secular.N_WK, r)), np.zeros((_secular.N_IW, r), np.int64)
    nz = _contour.QUAD_Z.shape[0]
    gre, gim, fr, fi = np.empty(nz), np.empty(nz), np.empty(nz), np.empty(nz)
    mu0 = np.sum(v * v)
    Q[0] = v / np.sqrt(mu0)
    m, logp, top, full = _lanczos.krylov(L, Q, a, b, u, 0, 0.0, -alpha * mu0)
    Lw = L.copy()
    acc = 0.0
    for _ in range(reps):
        if part == 0:
            m, logp, top, full = _lanczos.krylov(L, Q, a, b, u, 0, 0.0, -alpha * mu0)
            acc += logp
        elif part == 1:
            _lanczos.cf_setup(a, b, m, mu0, top, gre, gim, fr, fi)
            for t in range(4):
                acc += _contour.quad_value(gre, gim, alpha * (1.0 - 0.1 * t))
        elif part == 2:
            kk = _lanczos.rule_poles(a, b, m, mu0, pole, weight, perm, owner, wk)
            acc += _secular.exp_form(pole, weight, kk, alpha, org, tau, wk, iw, False)
        else:
            k._sym_rank_one(Lw, 1e-9, v)
            acc += Lw[0, 0]
    return acc, m


def main():
    print("von Neumann projection, its kernels one by one (µs per call, best of 3), one core")
    print(f"{'r':>5} {'m':>4} " + " ".join(f"{p:>24}" for p in PARTS))
    with threadpool_limits(limits=1):
        for r in (16, 64, 256):
            G0, C = instance(2000, r, {16: 20000, 64: 4000, 256: 400}[r])
            U, s, _ = np.linalg.svd(G0, full_matrices=False)
            V0, L = np.ascontiguousarray(U), np.diag(np.log(s ** 2))
            k.krylov_sweep(V0, C.i, C.j, C.kind, C.bound.copy(), np.zeros(len(C)), L, math.inf)
            v = V0[C.i[0]] - V0[C.j[0]]
            alpha = -0.2 / (v @ v)
            reps = {16: 100000, 64: 20000, 256: 2000}[r]
            row = []
            for part in range(len(PARTS)):
                _, m = _loop(part, L, v, alpha, 2)
                best = np.inf
                for _ in range(3):
                    t = time.perf_counter()
                    _loop(part, L, v, alpha, reps)
                    best = min(best, (time.perf_counter() - t) / reps)
                row.append(best * 1e6)
            print(f"{r:>5} {m:>4} " + " ".join(f"{x:>24.2f}" for x in row))


if __name__ == "__main__":
    main()
