"""Slow, independent reference solutions used by the tests (dense, general-purpose solvers)."""

import numpy as np

from kernlearn_cli.types import KINDS


def constraint_matrices(G0, constraints):
    mats = []
    for i, j, k in zip(constraints.i, constraints.j, constraints.kind):
        u, v = G0[i], G0[j]
        if KINDS[k].startswith("dist"):
            z = u - v
            mats.append(np.outer(z, z))
        else:
            mats.append((np.outer(u, v) + np.outer(v, u)) / 2)
    return np.array(mats)


def burg_convex_reference(G0, constraints):
    """Return (K, objective) from a general-purpose convex solver (cvxpy + Clarabel).

    In the range of K0 = G0 G0^T (G0 of full column rank r), with K = G0 M G0^T,
    D_Burg(K, K0) = tr(M) - log det M - r and tr(K A_i) = tr(M G0^T A_i G0), so the
    problem is min tr(M) - log det M s.t. linear constraints on M, M PSD.
    """
    import cvxpy as cp

    r = G0.shape[1]
    A = constraint_matrices(G0, constraints)
    M = cp.Variable((r, r), symmetric=True)
    cons = []
    for Ak, kind, b in zip(A, constraints.kind, constraints.bound):
        val = cp.trace(Ak @ M)
        name = KINDS[kind]
        cons.append(val <= b if name.endswith("le") else val >= b if name.endswith("ge") else val == b)
    prob = cp.Problem(cp.Minimize(cp.trace(M) - cp.log_det(M)), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11, max_iter=500)
    assert prob.status == cp.OPTIMAL, prob.status
    Mv = (M.value + M.value.T) / 2
    objective = np.trace(Mv) - np.linalg.slogdet(Mv)[1] - r
    return G0 @ Mv @ G0.T, objective


def burg_divergence_dense(K, K0, rank_tol=1e-10):
    """D_Burg(K, K0) restricted to the range of K0 (both must share it), from eigendecompositions."""
    lam0, U0 = np.linalg.eigh(K0)
    keep = lam0 > rank_tol * lam0.max()
    P = U0[:, keep] / np.sqrt(lam0[keep])           # K0^{+1/2} on the range
    C = P.T @ K @ P                                   # K0^{-1/2} K K0^{-1/2}
    ev = np.linalg.eigvalsh(C)
    return float(np.sum(ev - np.log(ev) - 1))
