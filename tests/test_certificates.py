"""Certified results: every registered solver's ``converged`` is earned by its certificate, and the
certificate agrees with one computed here, independently, from the returned factor.

Each solver declares a small instance beside itself (``register(..., checks=Checks(instance=...))``,
:class:`kernlearn_cli.registry.Checks`); a solver registered without one fails
tests/test_testing.py's declaration check, so a new solver cannot skip this test.
"""

import math
import warnings

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp

from kernlearn_cli.factors import read_factors, write_factors
from kernlearn_cli.registry import solvers
from kernlearn_cli.solvers.protocol import Certificate, ConvergenceWarning, finish
from kernlearn_cli.types import KINDS, SolverResult

from helpers import slow_for
from reference import burg_divergence_dense, constraint_matrices, trin_constraint_matrices


def solve(name, seed, **extra):
    G0, C, kw = solvers.get(name).checks.make(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return solvers.get(name).func(G0, C, **kw, **extra), G0, C, kw


# ---- independent recomputations -------------------------------------------------------------

def _sign(C):
    return np.where(np.isin([KINDS[k] for k in C.kind], ["dist_ge", "sim_ge"]), -1.0, 1.0)


def _relative_violation(x, C, b):
    names = [KINDS[k] for k in C.kind]
    v = np.array([max(xi - bi, 0) if n.endswith("le") else max(bi - xi, 0) if n.endswith("ge") else abs(xi - bi)
                  for xi, bi, n in zip(x, b, names)])
    return v / np.abs(b)


def _expm_sym(S):
    ev, Q = np.linalg.eigh((S + S.T) / 2)
    return (Q * np.exp(ev)) @ Q.T


def bregman_reference(name, res, C):
    """Violation, complementarity and the dual value from dense matrices and the stored duals."""
    G0, lam, bhat = res.arrays["G0"], res.arrays["dual"], res.arrays["bhat"]
    K = res.G @ res.G.T
    A = constraint_matrices(np.eye(K.shape[0]), C)              # n x n constraint matrices
    x = np.einsum("kij,ij->k", A, K)
    viol = _relative_violation(x, C, bhat).max()
    compl = np.max(np.abs(lam * (x - bhat)))
    coef = _sign(C) * lam
    if name == "burg":
        Bm = constraint_matrices(G0, C)                             # G0^T A G0, r x r
        Minv = np.eye(G0.shape[1]) + np.tensordot(coef, Bm, axes=1)
        M = np.linalg.inv(Minv)                                     # the Lagrangian's minimiser
        dual = np.trace(M) - np.linalg.slogdet(M)[1] - M.shape[0] + coef @ (np.einsum("kij,ij->k", Bm, M) - C.bound)
        primal = burg_divergence_dense(K, G0 @ G0.T)
    else:
        U, s, _ = np.linalg.svd(G0, full_matrices=False)
        Bm = constraint_matrices(U, C)
        M = _expm_sym(np.diag(np.log(s ** 2)) - np.tensordot(coef, Bm, axes=1))
        ev = np.linalg.eigvalsh(M)
        lagr = np.sum(ev * np.log(ev)) - np.trace(M @ np.diag(np.log(s ** 2))) - np.trace(M) + np.sum(s ** 2)
        dual = lagr + coef @ (np.einsum("kij,ij->k", Bm, M) - C.bound)
        Kr = U.T @ K @ U
        evk = np.linalg.eigvalsh(Kr)
        primal = np.sum(evk * np.log(evk)) - np.trace(Kr @ np.diag(np.log(s ** 2))) - evk.sum() + np.sum(s ** 2)
    return {"max_violation": viol, "complementarity": compl, "dual_objective": dual, "primal_objective": primal}


@pytest.mark.parametrize("name", ["burg", "von_neumann"])
@pytest.mark.parametrize("seed", range(3))
def test_bregman_certificate_recomputes(name, seed):
    res, G0, C, _ = solve(name, seed, tol=1e-6)
    cert, ref = res.certificate, bregman_reference(name, res, C)
    assert res.converged is True
    assert cert["checks"]["max_violation"]["value"] == pytest.approx(ref["max_violation"], abs=1e-9)
    assert ref["max_violation"] <= cert["checks"]["max_violation"]["tol"]
    f = cert["figures"]
    assert f["complementarity"] == pytest.approx(ref["complementarity"], rel=1e-6, abs=1e-9)
    assert f["primal_objective"] == pytest.approx(ref["primal_objective"], rel=1e-7, abs=1e-9)
    assert f["dual_objective"] == pytest.approx(ref["dual_objective"], rel=1e-7, abs=1e-9)
    assert abs(f["duality_gap"]) <= 1e-4 * max(1.0, abs(ref["primal_objective"]))


def test_definiteboost_certificate_recomputes():
    res, G0, C, _ = solve("definiteboost", 0, tol=1e-8)
    K = res.G @ res.G.T
    x = np.einsum("kij,ij->k", constraint_matrices(np.eye(K.shape[0]), C), K)
    assert res.converged is True
    assert res.certificate["checks"]["max_violation"]["value"] == pytest.approx(
        _relative_violation(x, C, C.bound).max(), abs=1e-9)
    # the duality gap Delta(W, W1) + log Z, with log Z from the dual variables by a dense exponential
    s = np.trace(G0 @ G0.T)
    W, W1 = K / s, G0 @ G0.T / s
    gamma = res.arrays["dual"]
    Cm = [A - b / s * np.eye(len(K)) if KINDS[k].endswith(("le", "eq")) else b / s * np.eye(len(K)) - A
          for A, k, b in zip(constraint_matrices(np.eye(len(K)), C), C.kind, C.bound)]
    log_z = math.log(np.trace(_expm_sym(sla.logm(W1).real - np.tensordot(gamma, np.array(Cm), axes=1))))
    ew = np.linalg.eigvalsh(W)
    delta = np.sum(ew * np.log(ew)) - np.trace(W @ sla.logm(W1).real)
    assert res.certificate["figures"]["duality_gap"] == pytest.approx(delta + log_z, abs=1e-8)
    assert abs(delta + log_z) <= 1e-6


@pytest.mark.parametrize("name", slow_for(["trin", "pr_cg"], {"pr_cg"}))
def test_trin_certificate_bounds_the_gap(name):
    res, G0, C, kw = solve(name, 0)
    n = G0.shape[0]
    K, K0 = res.G @ res.G.T, G0 @ G0.T
    A = trin_constraint_matrices(C, n, "log")
    x = np.einsum("kij,ij->k", A, K)
    w = kw["gamma"] / res.info["labeled"]
    grad = w * np.tensordot(-2.0 / (1.0 + np.exp(2.0 * x)), A, axes=1) + np.linalg.inv(K0) - np.linalg.inv(K)
    R = np.linalg.cholesky(K)
    g = np.linalg.eigvalsh(R.T @ grad @ R)
    exact = np.sum(g - np.log1p(g))                      # the bound's exact form (gap_bound's docstring)
    cert = res.certificate
    bound = cert["figures"]["path_gap_bound"][-1]
    assert res.converged is True and cert["checks"]["grad_norm"]["value"] == pytest.approx(np.linalg.norm(g),
                                                                                            rel=1e-4)
    assert exact * (1 - 1e-6) <= bound <= 2.0 * exact + 1e-15
    # and it is a true bound: a far tighter solve cannot go lower than f - bound
    f = res.objective
    better = solvers.get("trin").func(G0, C, gamma=kw["gamma"], tol=1e-10)
    assert better.objective >= f - bound - 1e-12 * abs(f)


@pytest.mark.slow
def test_nystrom_prior_certificate_bounds_the_gap():
    cp = pytest.importorskip("cvxpy")
    res, _, C, kw = solve("nystrom_prior", 0, gap_tol=1e-8)
    S0, El, Kl, S = (res.arrays[k] for k in ("S0", "E_labeled", "K_ideal", "S"))
    lam = res.info["lam"]
    m = S0.shape[0]
    V = cp.Variable((m, m), PSD=True)
    ref = cp.Problem(cp.Minimize(lam * cp.sum_squares(V - S0) + cp.sum_squares(El @ V @ El.T - Kl)))
    ref.solve(solver=cp.CLARABEL)
    J = lam * np.sum((S - S0) ** 2) + np.sum((El @ S @ El.T - Kl) ** 2)
    assert J == pytest.approx(res.objective, rel=1e-12)
    assert res.converged is True
    assert J - ref.value <= res.certificate["checks"]["gap_bound"]["value"] * max(1.0, J) + 1e-7 * abs(ref.value)


def _pcp_gradient(res, gamma=1.0):
    lap = res.arrays["laplacian"]
    L = sp.csr_matrix((lap["data"], lap["indices"], lap["indptr"]), shape=tuple(lap["shape"])).toarray()
    pairs = res.arrays["pairs"]
    i, j, t = pairs[:, 0].astype(int), pairs[:, 1].astype(int), pairs[:, 2]
    K = res.G @ res.G.T
    Z = L.copy()
    for a, b, target in zip(i, j, t):
        Z[a, b] += gamma * (K[a, b] - target)
        if a != b:
            Z[b, a] += gamma * (K[b, a] - target)
    return Z, K


def test_admm_certificate_recomputes():
    res, _, C, kw = solve("admm", 0)
    Z, K = _pcp_gradient(res)
    assert res.converged is True
    assert res.certificate["figures"]["stationarity"] == pytest.approx(np.linalg.norm(Z @ res.G), rel=1e-8)
    size = np.linalg.norm(res.G)
    assert res.history["primal"][-1] <= res.certificate["checks"]["primal_residual"]["tol"] * size * (1 + 1e-12)


@pytest.mark.slow
def test_pcp_sdp_certificate_recomputes():
    pytest.importorskip("cvxpy")
    res, _, C, _ = solve("pcp_sdp", 0)
    Z, K = _pcp_gradient(res)
    ev = np.linalg.eigvalsh(Z)
    checks = res.certificate["checks"]
    assert checks["dual_infeasibility"]["value"] == pytest.approx(max(0.0, -ev[0]) / np.abs(ev).max(), abs=1e-12)
    assert checks["complementarity"]["value"] == pytest.approx(
        abs(np.sum(Z * K)) / (np.linalg.norm(Z) * np.linalg.norm(K)), rel=1e-6, abs=1e-12)
    assert res.converged == all(c["met"] for c in checks.values())


@pytest.mark.parametrize("name", ["meg", "initial", "nystrom"])
def test_convergence_does_not_apply(name):
    res, *_ = solve(name, 0)
    assert res.converged is None and res.certificate["converged"] is None
    assert res.certificate["rule"].startswith("does not apply")
    if name == "meg":
        f = res.certificate["figures"]
        assert f["cumulative_loss"] == pytest.approx(np.sum(res.history["loss"]), rel=1e-12)
        assert f["bound_holds"] == (f["cumulative_loss"] <= f["loss_bound"])


@pytest.mark.parametrize("name", slow_for(solvers.names(), {"pr_cg"}))
def test_converged_is_earned_and_the_certificate_is_stored(name, tmp_path):
    """converged == all checks met (None where it does not apply); the factors file keeps it all."""
    if name == "pcp_sdp":
        pytest.importorskip("cvxpy")
    res, G0, C, _ = solve(name, 1)
    cert = res.certificate
    assert cert and cert["converged"] is res.converged
    if res.converged is not None:
        assert res.converged == all(c["met"] for c in cert["checks"].values())
        assert all(c["met"] == (c["value"] <= c["tol"]) for c in cert["checks"].values())
    write_factors(tmp_path / "f.h5", res, C, None, solver=name, config={}, seed=1, seconds=0.0)
    back = read_factors(tmp_path / "f.h5")
    stored = back["certificate"]
    assert stored["converged"] == ("n/a" if res.converged is None else res.converged)
    assert back["attrs"]["converged"] == stored["converged"]
    for check, c in cert["checks"].items():
        assert stored[check] == c["value"] and stored[f"{check}_tol"] == c["tol"]


def test_a_failed_check_warns_and_says_so():
    cert = Certificate(rule="r", checks={"a": (2.0, 1.0), "b": (0.5, 1.0)}, stopped_by="max_iter")
    with pytest.warns(ConvergenceWarning, match="a 2 > tol 1; stopped by max_iter"):
        res = finish(SolverResult(G=np.eye(2), objective=0.0, iterations=3, converged=True), cert, "x")
    assert res.converged is False and res.certificate["worst"]["check"] == "a"
    assert Certificate(rule="r", checks={"a": (math.nan, 1.0)}).converged is False
