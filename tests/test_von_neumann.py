"""The low-rank von Neumann solver against a dense dual reference, closed forms and invariants."""

import math

import numpy as np
import pytest

from kernlearn_cli.errors import ConfigError, InfeasibleError
from kernlearn_cli.solvers import _von_neumann_kernels as _k
from kernlearn_cli.solvers.von_neumann import von_neumann
from kernlearn_cli.types import KINDS, Constraints

from reference import von_neumann_dual_reference
from test_burg import feasible_instance, relative_violation

DIST = ["dist_le", "dist_ge", "dist_eq"]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("full_rank", [False, True])
@pytest.mark.parametrize("kinds", ["distance", "all"])
def test_matches_dense_dual_reference(seed, full_rank, kinds):
    # "all": distance and similarity constraints (off-diagonal K_ij are the rank-two updates)
    G0, C = feasible_instance(seed, n=30 if full_rank else 40, c=12, kinds=DIST if kinds == "distance" else KINDS,
                              full_rank=full_rank)
    res = von_neumann(G0, C, tol=1e-9)
    K, K0 = res.G @ res.G.T, G0 @ G0.T
    Kref, obj_ref = von_neumann_dual_reference(G0, C)
    assert res.converged
    assert abs(res.objective - obj_ref) <= 1e-4 * abs(obj_ref)
    assert relative_violation(res.G, C).max() <= 1e-6
    assert np.linalg.matrix_rank(K, tol=1e-8 * np.abs(K).max()) <= np.linalg.matrix_rank(K0)
    assert np.linalg.eigvalsh(K).min() >= -1e-9 * np.abs(K).max()
    assert np.abs(K - Kref).max() <= 1e-3 * np.abs(Kref).max()
    assert 1 <= res.info["evaluations_per_projection"] <= 10


def secular_decomposition(d, w, alpha):
    """U, theta of diag(d) + alpha w w^T through the compiled secular-equation path."""
    r = len(d)
    perm = np.argsort(d)
    pole, weight, owner = np.empty(r), np.empty(r), np.empty(r, dtype=np.int64)
    k = _k._poles(d, w, perm, pole, weight, owner)
    org, tau = np.empty(r, dtype=np.int64), np.empty(r)
    wk, iw = np.empty((_k._N_WK, r)), np.zeros((_k._N_IW, r), dtype=np.int64)
    _k._eigvals(pole, weight, k, alpha, org, tau, wk, iw, False)
    U, dd = np.empty((r, r)), d.copy()
    _k._eigvecs(dd, w, perm, owner, pole, k, org, tau, U, wk, iw)
    return U, dd, pole, weight, k, org, tau, wk, iw


@pytest.mark.parametrize("case", ["distinct", "repeated", "zero_weights", "negative_alpha", "tiny_alpha"])
def test_secular_eigendecomposition_matches_eigh(case):
    rng = np.random.default_rng(3)
    r = 12
    d = rng.standard_normal(r)
    w = rng.standard_normal(r)
    alpha = {"negative_alpha": -0.7, "tiny_alpha": 3e-13}.get(case, 0.9)
    if case == "repeated":
        d[[2, 5, 7]] = d[1]
        d[[9, 10]] = 0.25
    if case == "zero_weights":
        w[[0, 4]] = 0.0
    U, theta, pole, weight, k, org, tau, wk, iw = secular_decomposition(d, w, alpha)
    M = np.diag(d) + alpha * np.outer(w, w)
    np.testing.assert_allclose(np.sort(theta), np.linalg.eigvalsh(M), rtol=0, atol=1e-12)
    np.testing.assert_allclose(U.T @ U, np.eye(r), atol=1e-10)
    np.testing.assert_allclose((U * theta) @ U.T, M, atol=1e-10)
    # the trace evaluation from the roots alone equals w^T expm(M) w
    ev, Q = np.linalg.eigh(M)
    exact = w @ (Q * np.exp(ev)) @ Q.T @ w
    for warm in (False, True):        # a warm start from the roots just found changes nothing
        value = _k._value(pole, weight, k, alpha, org, tau, wk, iw, warm)
        assert value == pytest.approx(exact, rel=1e-10)


def test_scaled_identity_start_closed_form():
    """From K0 = c I a single equality gives exp(log c I + alpha z z^T): alpha = log(b/p)/||z||^2."""
    n, c = 8, 2.0
    G0 = math.sqrt(c) * np.eye(n)
    b = 1.5
    res = von_neumann(G0, Constraints.from_lists([1], [4], ["dist_eq"], [b]), tol=1e-12)
    z = np.zeros(n)
    z[1], z[4] = 1.0, -1.0
    alpha = math.log(b / (c * 2.0)) / 2.0
    ev, Q = np.linalg.eigh(math.log(c) * np.eye(n) + alpha * np.outer(z, z))
    np.testing.assert_allclose(res.G @ res.G.T, (Q * np.exp(ev)) @ Q.T, atol=1e-12)


def test_diagonal_similarity_and_rank():
    rng = np.random.default_rng(4)
    G0 = rng.standard_normal((20, 5))
    K0 = G0 @ G0.T
    C = Constraints.from_lists([3, 7], [3, 7], ["sim_eq", "sim_le"], [2.0 * K0[3, 3], 0.5 * K0[7, 7]])
    res = von_neumann(G0, C, tol=1e-12)
    K = res.G @ res.G.T
    assert K[3, 3] == pytest.approx(2.0 * K0[3, 3], rel=1e-9) and K[7, 7] <= 0.5 * K0[7, 7] * (1 + 1e-9)
    assert res.G.shape[1] == 5


def test_infeasible_and_unsupported():
    rng = np.random.default_rng(5)
    G0 = rng.standard_normal((10, 3))
    with pytest.raises(InfeasibleError, match="infeasible"):
        von_neumann(G0, Constraints.from_lists([0, 0], [1, 1], ["dist_le", "dist_ge"], [1.0, 2.0]))
    with pytest.raises(ConfigError, match="empty"):
        von_neumann(G0, Constraints(np.array([], int), np.array([], int), np.array([], np.int8), np.array([])))


def test_slack_gives_an_answer_for_infeasible_sets_and_determinism():
    rng = np.random.default_rng(6)
    G0 = rng.standard_normal((10, 3))
    bad = Constraints.from_lists([0, 0], [1, 1], ["dist_le", "dist_ge"], [1.0, 2.0])
    res = von_neumann(G0, bad, slack=1.0, tol=1e-9)
    d0, d = bad.values(G0)[0], bad.values(res.G)[0]
    assert res.converged and np.all(np.isfinite(res.G))
    assert min(d0, 2.0) * (1 - 1e-6) <= d < d0        # pulled toward d <= 1, traded against the slack
    G0, C = feasible_instance(7, c=15, kinds=DIST)
    a, b = von_neumann(G0, C, tol=1e-6), von_neumann(G0.copy(), C, tol=1e-6)
    assert np.array_equal(a.G, b.G) and a.iterations == b.iterations


@pytest.mark.parametrize("kind", ["dist_eq", "sim_eq"])
@pytest.mark.parametrize("diagonal", [False, True])
def test_one_projection_is_exact(kind, diagonal):
    """A single projection (equality, from a non-constant exponent) lands on its bound to
    rounding -- the root finder is exact, not merely convergent over sweeps; it needs few
    trace evaluations.  Off-diagonal similarity takes the rank-two path."""
    if kind == "dist_eq" and diagonal:
        pytest.skip("a distance needs two points")
    rng = np.random.default_rng(8)
    n, r = 30, 7
    U0, _ = np.linalg.qr(rng.standard_normal((n, r)))
    W, _ = np.linalg.qr(rng.standard_normal((r, r)))
    W, D = np.ascontiguousarray(W), rng.uniform(-2.0, 2.0, r)
    i, j = 3, (3 if diagonal else 11)
    K = U0 @ (W * np.exp(D)) @ W.T @ U0.T
    now = K[i, i] + K[j, j] - 2 * K[i, j] if kind == "dist_eq" else K[i, j]
    C = Constraints.from_lists([i], [j], [kind], [1.7 * now])
    lam, bhat = np.zeros(1), C.bound.copy()
    status, *_, evals, solves, max_evals = _k.von_neumann_sweep(
        np.ascontiguousarray(U0), C.i, C.j, C.kind, bhat, lam, W, D, math.inf)
    assert status == _k.OK and solves == 1 and max_evals <= 8
    np.testing.assert_allclose(W.T @ W, np.eye(r), atol=1e-12)
    assert C.values(U0 @ W * np.exp(D / 2))[0] == pytest.approx(1.7 * now, rel=1e-9)
