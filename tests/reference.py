"""Slow, independent reference solutions used by the tests (dense, general-purpose solvers)."""

import numpy as np

from kernlearn_cli.solvers import _trin_problem as trin_problem
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
    K, _, objective = von_neumann_slack_dual_reference(G0, constraints, np.inf)
    return K, objective


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


def burg_slack_convex_reference(G0, constraints, gamma):
    """Return (K, bhat, objective) of the slack (ITML) form of Burg's problem from cvxpy + Clarabel:
    min D_Burg(K, K0) + gamma D_Burg(diag(bhat), diag(b)) s.t. tr(K A_i) <= bhat_i (``*_le``), >= (``*_ge``),
    = (``*_eq``) (Davis et al. 2007, eq. 3; Kulis, Sustik & Dhillon, JMLR 2009, Sec. 5), with
    D_Burg(diag(bhat), diag(b)) = sum bhat/b - log(bhat/b) - 1 (every b > 0).  In the range of K0, as
    :func:`burg_convex_reference`."""
    import cvxpy as cp

    r, b = G0.shape[1], constraints.bound
    A = constraint_matrices(G0, constraints)
    M = cp.Variable((r, r), symmetric=True)
    bhat = cp.Variable(len(b), pos=True)
    cons = []
    for k, (Ak, kind) in enumerate(zip(A, constraints.kind)):
        val, name = cp.trace(Ak @ M), KINDS[kind]
        cons.append(val <= bhat[k] if name.endswith("le") else val >= bhat[k] if name.endswith("ge") else val == bhat[k])
    penalty = cp.sum(cp.multiply(1 / b, bhat) - cp.log(bhat))
    prob = cp.Problem(cp.Minimize(cp.trace(M) - cp.log_det(M) + gamma * penalty), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12, max_iter=500)
    assert prob.status == cp.OPTIMAL, prob.status
    Mv, bh = (M.value + M.value.T) / 2, bhat.value
    objective = np.trace(Mv) - np.linalg.slogdet(Mv)[1] - r + gamma * np.sum(bh / b - np.log(bh / b) - 1)
    return G0 @ Mv @ G0.T, bh, objective


def von_neumann_slack_dual_reference(G0, constraints, gamma):
    """Return (K, bhat, objective) of the slack form of the von Neumann problem from its Lagrange dual:
    min D_vN(K, K0) + gamma sum (bhat log(bhat/b) - bhat + b) s.t. tr(K A_i) <= bhat_i (``*_le``), >= (``*_ge``),
    = (``*_eq``).  As :func:`von_neumann_dual_reference`, with the slack minimised in closed form:
    bhat_i = b_i exp(nu_i / gamma), so the dual is g(nu) = tr Lambda0 - tr M(nu) + gamma sum b_i (1 - exp(nu_i / gamma)),
    maximised by L-BFGS-B (nu_i >= 0 for <=, <= 0 for >=, free for =); ``gamma = inf``: the hard problem,
    g(nu) = tr Lambda0 - tr M(nu) - nu . b (:func:`von_neumann_dual_reference`)."""
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

    hard = np.isinf(gamma)

    def neg_dual(nu):
        M = expm_sym(np.diag(np.log(lam0)) - np.tensordot(nu, A, axes=1))
        e = np.ones_like(nu) if hard else np.exp(nu / gamma)
        slack_term = -nu @ b if hard else gamma * np.sum(b * (1 - e))
        grad = np.einsum("kij,ij->k", A, M) - b * e
        return -(lam0.sum() - np.trace(M) + slack_term), -grad

    res = minimize(neg_dual, np.zeros(len(b)), jac=True, bounds=bounds, method="L-BFGS-B",
                   options=dict(ftol=1e-16, gtol=1e-12 if hard else 1e-13, maxiter=100000, maxfun=200000))
    M = expm_sym(np.diag(np.log(lam0)) - np.tensordot(res.x, A, axes=1))
    bhat = b.copy() if hard else b * np.exp(res.x / gamma)
    ev = np.linalg.eigvalsh(M)
    objective = float(np.sum(ev * np.log(ev)) - np.sum(np.diag(M) * np.log(lam0)) - ev.sum() + lam0.sum()
                      + (0.0 if hard else gamma * np.sum(bhat * np.log(bhat / b) - bhat + b)))
    return U @ M @ U.T, bhat, objective


def definiteboost_dense(G0, constraints, weights):
    """DefiniteBoost's trace-one matrix for dual weights gamma, densely on the range of K0 = G0 G0^T:
    W = exp(log W1 - sum_j gamma_j C_j) / Z with W1 = K0 / tr K0 and C_j = A_j - b_j / tr K0 I for
    ``le``/``eq`` rows, b_j / tr K0 I - A_j for ``ge`` rows (Tsuda et al. 2005, eq. 9).

    Returns (U, log W1, W, log Z): U an orthonormal basis of the range (K = tr K0 U W U^T) and log W1,
    W in that basis.
    """
    U, s, _ = np.linalg.svd(G0, full_matrices=False)
    U, s = U[:, s > s[0] * 1e-12], s[s > s[0] * 1e-12]
    trace = float(np.sum(s ** 2))
    eye = np.eye(len(s))
    Cm = np.array([a - b / trace * eye if KINDS[k].endswith(("le", "eq")) else b / trace * eye - a
                   for a, k, b in zip(constraint_matrices(U, constraints), constraints.kind, constraints.bound)])
    log_w1 = np.diag(np.log(s ** 2 / trace))
    ev, V = np.linalg.eigh(log_w1 - np.tensordot(weights, Cm, axes=1))
    log_z = ev.max() + np.log(np.exp(ev - ev.max()).sum())
    W = (V * np.exp(ev - log_z)) @ V.T
    return U, log_w1, W, log_z


def trin_constraint_matrices(constraints, n, loss):
    """The constraint matrices of Table 2, built explicitly."""
    out = []
    if loss in trin_problem.TRIPLET_LOSSES:
        for i, j, k in zip(constraints.i, constraints.j, constraints.k):
            A = np.zeros((n, n))
            for (a, b), v in {(i, j): -1, (j, i): -1, (i, k): 1, (k, i): 1, (j, j): 1, (k, k): -1}.items():
                A[a, b] += v
            out.append(A)
        return out
    i, j, similar, _ = trin_problem._pairs_from(constraints)
    for a, b, s in zip(i, j, similar):
        A = np.zeros((n, n))
        if loss == "itml":
            A[a, a] = A[b, b] = 1
            A[a, b] = A[b, a] = -1
        else:
            A[a, b] = A[b, a] = 1.0 if s else -1.0
        out.append(A)
    return out
