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


def von_neumann_dual_reference(G0, constraints):
    """Return (K, objective) of min D_vN(K, K0) s.t. constraints, from its Lagrange dual.

    In the range of K0 = V0 Lambda0 V0^T, stationarity gives
    M(nu) = exp(log Lambda0 - sum_i nu_i Ahat_i) (Ahat_i = V0^T A_i V0), and the dual
    g(nu) = tr Lambda0 - tr M(nu) - nu . b is smooth everywhere; it is maximised over
    nu_i >= 0 (<=), nu_i <= 0 (>=), nu_i free (=) by L-BFGS-B with dense matrix
    exponentials -- an algorithm independent of the cyclic projections under test.
    """
    from scipy.optimize import minimize

    U, s, _ = np.linalg.svd(G0, full_matrices=False)
    lam0 = s ** 2
    A = constraint_matrices(U, constraints)
    b = constraints.bound
    names = [KINDS[k] for k in constraints.kind]
    bounds = [(0, None) if n.endswith("le") else (None, 0) if n.endswith("ge") else (None, None) for n in names]

    def expm_sym(S):
        ev, Q = np.linalg.eigh(S)
        return (Q * np.exp(ev)) @ Q.T

    def neg_dual(nu):
        M = expm_sym(np.diag(np.log(lam0)) - np.tensordot(nu, A, axes=1))
        grad = np.einsum("kij,ij->k", A, M) - b
        return -(lam0.sum() - np.trace(M) - nu @ b), -grad

    res = minimize(neg_dual, np.zeros(len(b)), jac=True, bounds=bounds, method="L-BFGS-B",
                   options=dict(ftol=1e-16, gtol=1e-12, maxiter=100000, maxfun=200000))
    M = expm_sym(np.diag(np.log(lam0)) - np.tensordot(res.x, A, axes=1))
    ev, Q = np.linalg.eigh(M)
    objective = float(np.sum(ev * np.log(ev)) - np.sum(np.diag(M) * np.log(lam0)) - ev.sum() + lam0.sum())
    return U @ M @ U.T, objective


def feasibility_margin(G0, constraints, trace=None):
    """max t such that some M >= t I (r x r) meets the constraints on K = G0 M G0^T (cvxpy + Clarabel).

    Each constraint row is scaled by its |bound|; tr M is capped at 1e4 r (or, with ``trace``, tr K
    is fixed to it, the DefiniteBoost setting). t > 0: strictly feasible; t < 0: no PSD M within
    the cap meets them (infeasible).
    """
    import warnings

    import cvxpy as cp

    r = G0.shape[1]
    A = constraint_matrices(G0, constraints) / np.abs(constraints.bound)[:, None, None]
    M = cp.Variable((r, r), symmetric=True)
    t = cp.Variable()
    cons = [M >> t * np.eye(r)]
    cons.append(cp.trace(M @ (G0.T @ G0)) == trace if trace is not None else cp.trace(M) <= 1e4 * r)
    for Ak, kind, b in zip(A, constraints.kind, np.sign(constraints.bound)):
        val = cp.trace(Ak @ M)
        name = KINDS[kind]
        cons.append(val <= b if name.endswith("le") else val >= b if name.endswith("ge") else val == b)
    prob = cp.Problem(cp.Maximize(t), cons)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prob.solve(solver=cp.CLARABEL)
    assert prob.status in ("optimal", "optimal_inaccurate"), prob.status
    return float(t.value)
