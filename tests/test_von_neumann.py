"""The low-rank von Neumann solver against a dense dual reference, closed forms and invariants."""

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from kernlearn_cli.errors import ConfigError, InfeasibleError
from kernlearn_cli.solvers import _contour, _lanczos, _secular
from kernlearn_cli.solvers import _von_neumann_kernels as _k
from kernlearn_cli.solvers.von_neumann import von_neumann
from kernlearn_cli.types import KIND_CODE, PAIR_KINDS, Constraints

from reference import von_neumann_dual_reference
from helpers import feasible_instance, relative_violation

DIST = ["dist_le", "dist_ge", "dist_eq"]


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("full_rank", [False, True])
@pytest.mark.parametrize("kinds", ["distance", "all"])
def test_matches_dense_dual_reference(seed, full_rank, kinds):
    # "all": distance and similarity constraints (off-diagonal K_ij are the rank-two updates)
    G0, C = feasible_instance(seed, n=30 if full_rank else 40, c=12, kinds=DIST if kinds == "distance" else PAIR_KINDS,
                              full_rank=full_rank)
    res = von_neumann(G0, C, tol=1e-9)
    K, K0 = res.G @ res.G.T, G0 @ G0.T
    Kref, obj_ref = von_neumann_dual_reference(G0, C)
    assert res.converged
    # measured over the 16 cases: objective within 1.5e-7 of the reference, K within 3.3e-8 (relative)
    assert abs(res.objective - obj_ref) <= 3e-6 * abs(obj_ref)
    assert relative_violation(res.G, C).max() <= 1e-6
    assert np.linalg.matrix_rank(K, tol=1e-8 * np.abs(K).max()) <= np.linalg.matrix_rank(K0)
    assert np.linalg.eigvalsh(K).min() >= -1e-9 * np.abs(K).max()
    assert np.abs(K - Kref).max() <= 1e-6 * np.abs(Kref).max()
    assert 1 <= res.info["evaluations_per_projection"] <= 10


def secular_decomposition(d, w, alpha):
    """U, theta of diag(d) + alpha w w^T through the compiled secular-equation path."""
    r = len(d)
    perm = np.argsort(d)
    pole, weight, owner = np.empty(r), np.empty(r), np.empty(r, dtype=np.int64)
    k = _secular.poles(d, w, perm, pole, weight, owner)
    org, tau = np.empty(r, dtype=np.int64), np.empty(r)
    wk, iw = np.empty((_secular.N_WK, r)), np.zeros((_secular.N_IW, r), dtype=np.int64)
    _secular.eigvals(pole, weight, k, alpha, org, tau, wk, iw, False)
    U, dd = np.empty((r, r)), d.copy()
    _secular.eigvecs(dd, w, perm, owner, pole, k, org, tau, U, wk, iw)
    return U.T, dd, pole, weight, k, org, tau, wk, iw


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
        value = _secular.exp_form(pole, weight, k, alpha, org, tau, wk, iw, warm)
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


@pytest.mark.parametrize("sweep", ["krylov", "eigen"])
@pytest.mark.parametrize("kind, diagonal", [("dist_eq", False), ("sim_eq", False), ("sim_eq", True)])
def test_one_projection_is_exact(kind, diagonal, sweep):
    """A single projection (equality, from a non-constant exponent) lands on its bound to
    rounding -- the root finder is exact, not merely convergent over sweeps; it needs few
    trace evaluations.  Off-diagonal similarity takes the rank-two path (eigen sweep only)."""
    rng = np.random.default_rng(8)
    n, r = 30, 7
    U0, _ = np.linalg.qr(rng.standard_normal((n, r)))
    W, _ = np.linalg.qr(rng.standard_normal((r, r)))
    W, D = np.ascontiguousarray(W), rng.uniform(-2.0, 2.0, r)
    i, j = 3, (3 if diagonal else 11)
    K = U0 @ (W * np.exp(D)) @ W.T @ U0.T
    now = K[i, i] + K[j, j] - 2 * K[i, j] if kind == "dist_eq" else K[i, j]
    C = Constraints.from_lists([i], [j], [kind], [1.7 * now])
    lam, bhat, V0 = np.zeros(1), C.bound.copy(), np.ascontiguousarray(U0)
    if sweep == "eigen":
        status, *_, evals, solves, max_evals = _k.eigen_sweep(V0, C.i, C.j, C.kind, bhat, lam, W, D, math.inf)
        np.testing.assert_allclose(W.T @ W, np.eye(r), atol=1e-12)
    elif kind == "sim_eq" and not diagonal:
        with pytest.raises(ValueError, match="rank-one"):
            _k.krylov_sweep(V0, C.i, C.j, C.kind, bhat, lam, (W * D) @ W.T, math.inf)
        return
    else:
        L = (W * D) @ W.T
        L = (L + L.T) / 2
        status, *_, evals, solves, max_evals, steps = _k.krylov_sweep(V0, C.i, C.j, C.kind, bhat, lam, L, math.inf)
        assert steps <= r and np.array_equal(L, L.T)    # the update keeps the exponent exactly symmetric
        D, W = np.linalg.eigh(L)
    assert status == _k.OK and solves == 1 and max_evals <= 8
    assert C.values(U0 @ W * np.exp(D / 2))[0] == pytest.approx(1.7 * now, rel=1e-9)


def test_warm_started_roots_across_a_near_crossing():
    """Warm starts (roots of the previous trial alpha) stay exact when an eigenvalue sweeps past a
    pole of negligible weight -- the case where a root jumps from ~1e-30 above its pole to the
    far end of the interval, and where a model step once landed exactly on a pole."""
    rng = np.random.default_rng(9)
    r = 14
    d = np.sort(rng.uniform(-4.0, 0.5, r))
    w = rng.standard_normal(r)
    w[[3, 7, 11]] = [3e-14, 1e-15, 2e-14]                 # poles the moving eigenvalues pass
    perm = np.argsort(d)
    pole, weight, owner = np.empty(r), np.empty(r), np.empty(r, dtype=np.int64)
    k = _secular.poles(d, w, perm, pole, weight, owner)
    org, tau = np.empty(r, dtype=np.int64), np.empty(r)
    wk, iw = np.empty((_secular.N_WK, r)), np.zeros((_secular.N_IW, r), dtype=np.int64)
    for sign in (1.0, -1.0):
        warm = False
        for alpha in sign * np.geomspace(1e-4, 3.0, 40):
            value = _secular.exp_form(pole, weight, k, alpha, org, tau, wk, iw, warm)
            warm = True
            theta = pole[org[:k]] + tau[:k]
            M = np.diag(pole[:k]) + alpha * np.outer(np.sqrt(weight[:k]), np.sqrt(weight[:k]))
            ev, Q = np.linalg.eigh(M)
            np.testing.assert_allclose(theta, ev, rtol=0, atol=1e-12)
            assert value == pytest.approx((Q.T @ np.sqrt(weight[:k])) ** 2 @ np.exp(ev), rel=1e-10)


# Poles and weights met in a wine run (r = 178, 26 poles after deflation) where a warm-started
# root sat 5.5e-30 above a pole of weight 1e-27 and the next model step landed on the far pole.
WINE_POLES = [-4.013453178812754, -3.723921016736996, -3.4444916396467344, -3.416200713393254, -3.145452489969282, -2.9811353174869346, -2.969728944987448, -2.9676947483953007, -2.781940334314151, -2.35607977751657, -1.6409773767984084, -1.2887366189655705, -1.2103438686105792, -1.0609468090475045, -0.9122037183974676, -0.8731640848421485, -0.7597234780618629, -0.7591287887024836, -0.6956077868737374, -0.561532769230219, -0.5058695675930426, -0.29115131723499527, -0.26410370916480563, -0.0929021625269784, -1.657001682566461e-15, 0.01743484201623743]
WINE_WEIGHTS = [5.85518919117556e-31, 6.830143685231168e-31, 1.8332997699569746e-30, 5.509539405042833e-31, 5.8711220620044964e-30, 4.529259644880421e-28, 0.9570763837302954, 1.4647431127268837e-28, 2.6581538333224863e-31, 3.3910817369799313e-31, 4.406297200470866e-31, 2.522072970649692e-31, 2.4773151401559386e-30, 7.528220317209441e-31, 4.6132183704699394e-30, 2.0159994329401276e-31, 1.0429236162697022, 1.0611046463558195e-27, 1.0171567112900337e-29, 1.1376219689301251e-30, 2.3613718295132457e-31, 1.69157440761128e-31, 2.5912891255897885e-31, 2.3672540014465845e-31, 2.519471460592001e-30, 1.0869383916577563e-31]


def test_warm_start_regression_from_a_wine_run():
    pole, weight = np.array(WINE_POLES), np.array(WINE_WEIGHTS)
    k = r = len(pole)
    org, tau = np.empty(r, dtype=np.int64), np.empty(r)
    wk, iw = np.empty((_secular.N_WK, r)), np.zeros((_secular.N_IW, r), dtype=np.int64)
    _secular.exp_form(pole, weight, k, 0.0005138301222517956, org, tau, wk, iw, False)
    alpha = 0.0005920695553192605
    value = _secular.exp_form(pole, weight, k, alpha, org, tau, wk, iw, True)
    ev, Q = np.linalg.eigh(np.diag(pole) + alpha * np.outer(np.sqrt(weight), np.sqrt(weight)))
    np.testing.assert_allclose(pole[org] + tau, ev, rtol=0, atol=1e-12)
    assert value == pytest.approx((Q.T @ np.sqrt(weight)) ** 2 @ np.exp(ev), rel=1e-10)


def test_talbot_rule_error_bound():
    """2 Re sum_m c_m / (z_m - x) approximates e^x on all of x <= 0 to within half of QUAD_ERR,
    the bound the trial values' acceptance test relies on."""
    x = -np.concatenate([[0.0], np.geomspace(1e-12, 1e4, 20000)])
    approx = 2.0 * (_contour.QUAD_C / (_contour.QUAD_Z - x[:, None])).sum(axis=1).real
    assert np.abs(approx - np.exp(x)).max() <= 0.5 * _contour.QUAD_ERR


def quad_trial(d, w, alpha, amax, via="krylov"):
    """(log value, exact?) of w^T expm(diag(d) + alpha w w^T) w as a sweep's search computes it:
    ``krylov``, from a Lanczos run on diag(d) from w (the Talbot value of its Gauss rule, or the
    rule's secular roots); ``poles``, from the poles d and weights w^2 themselves (the eigen sweep)."""
    r = len(d)
    nz = len(_contour.QUAD_Z)
    gre, gim, fr, fi = np.empty(nz), np.empty(nz), np.empty(nz), np.empty(nz)
    pole, weight, perm, owner = np.empty(r), np.empty(r), np.empty(r, dtype=np.int64), np.empty(r, dtype=np.int64)
    org, tau = np.empty(r, dtype=np.int64), np.empty(r)
    wk, iw = np.empty((_secular.N_WK, r)), np.zeros((_secular.N_IW, r), dtype=np.int64)
    mu0 = w @ w
    if via == "poles":
        perm = np.argsort(d)
        k = _secular.poles(d, w, perm, pole, weight, owner)
        sigma = pole[k - 1] + amax * mu0
        _contour.quad_setup(pole, weight, k, sigma, gre, gim, np.empty(r))
        logv, exact, _ = _k._trial(alpha, (sigma, amax, mu0, gre, gim), _k._NO_RULE, _k._NO_RULE, 0, k, pole, weight,
                                   perm, owner, org, tau, wk, iw, False)
        return logv, exact
    L, Q, a, b, u = np.diag(d), np.empty((r, r)), np.empty(r), np.zeros(r + 1), np.empty(r)
    Q[0] = w / math.sqrt(mu0)
    m, _, top, _ = _lanczos.krylov(L, Q, a, b, u, 0, 0.0, -min(alpha, 0.0) * mu0)
    sigma = top + amax * mu0
    _lanczos.cf_setup(a, b, m, mu0, sigma, gre, gim, fr, fi)
    logv, exact, _ = _k._trial(alpha, (sigma, amax, mu0, gre, gim), a, b, m, -1, pole, weight, perm, owner,
                               org, tau, wk, iw, False)
    return logv, exact


@pytest.mark.parametrize("via", ["krylov", "poles"])
@pytest.mark.parametrize("spread", [0.3, 2.0, 10.0, 30.0])
@pytest.mark.parametrize("alpha", [-5.0, -1.0, -0.1, 0.0, 1e-9, 0.2, 0.5])
@pytest.mark.parametrize("load", ["even", "top", "bottom"])
def test_contour_trial_value_matches_dense_expm(spread, alpha, load, via):
    """The search's trial value phi(alpha) = w^T expm(D + alpha w w^T) w (||w|| = 1): the Talbot
    value when its certificate accepts it (<= 1e-12 relative to the dense exponential), else the
    exact secular-root value (the fallback: w that sees the top of a wide spectrum only weakly)."""
    rng = np.random.default_rng(11)
    r = 12
    d = np.sort(rng.uniform(0.0, spread, r)) - 3.0
    d[-1], d[0] = spread - 3.0, -3.0
    w = rng.standard_normal(r) * {"even": 1.0, "top": np.exp(np.linspace(-3, 0, r)),
                                  "bottom": np.exp(np.linspace(0, -6, r))}[load]
    w /= np.linalg.norm(w)
    ev, Q = np.linalg.eigh(np.diag(d) + alpha * np.outer(w, w))
    ref = (Q.T @ w) ** 2 @ np.exp(ev)
    logv, exact = quad_trial(d, w, alpha, amax=0.5, via=via)
    assert math.exp(logv) == pytest.approx(ref, rel=1e-10 if exact else 1e-12)
    if spread <= 2.0 and alpha >= -1.0 and load != "bottom":
        assert not exact                        # narrow spectra, moderate steps: the contour integral
    if spread == 30.0 and load == "bottom":
        assert exact                            # e^sigma ||w||^2 / phi ~ e^30: the fallback
    logv, exact = quad_trial(d, w, 0.5, amax=0.25, via=via)
    assert exact                                # beyond the nodes' shift: the fallback


def test_one_secular_solve_per_projection_and_the_fallback_runs():
    """A sweep over a well-conditioned start evaluates its trial values by the contour integral
    (no exact evaluation); a spectrum spread over e^40 forces exact fallbacks, with the same
    result as the dense reference."""
    G0, C = feasible_instance(12, n=40, c=12, kinds=DIST)
    U0, s0, _ = np.linalg.svd(G0, full_matrices=False)
    r = U0.shape[1]
    for scale in (np.ones(r), np.exp(np.linspace(0.0, -20.0, r))):
        G = (U0 * s0 * scale)
        res = von_neumann(G, C, tol=1e-9)
        Kref, obj_ref = von_neumann_dual_reference(G, C)
        assert res.converged and relative_violation(res.G, C).max() <= 1e-6
        assert abs(res.objective - obj_ref) <= 1e-6 * abs(obj_ref)      # measured: 2.6e-10 and 1.8e-8
        if scale[-1] == 1.0:
            assert res.info["exact_trace_evaluations"] == 0
        else:
            assert res.info["exact_trace_evaluations"] > 0
            assert 1 <= res.info["krylov_sweeps"] < res.iterations  # runs of r steps: eigen-updates, probes


def test_next_mode_backs_off_while_the_krylov_space_is_exhausted():
    """After a Krylov sweep whose runs average more than KRYLOV_EXHAUSTED r steps, eigen sweeps
    follow, PROBE_FIRST of them, then twice as many after each further exhausted try (to PROBE_MAX);
    a short run resets the wait."""
    from kernlearn_cli.solvers.von_neumann import KRYLOV_EXHAUSTED, PROBE_FIRST, PROBE_MAX, next_mode
    r, c = 16, 10
    long_run = int(KRYLOV_EXHAUSTED * r * c) + 1
    probe, waits = PROBE_FIRST, []
    for _ in range(6):
        mode, wait, probe = next_mode(long_run, r, c, probe)
        assert mode == "eigen"
        waits.append(wait)
    assert waits == [min(PROBE_FIRST * 2 ** t, PROBE_MAX) for t in range(6)]
    assert next_mode(long_run - 1, r, c, probe) == ("krylov", 0, PROBE_FIRST)
    # a narrow spectrum (K0 = G0 G0^T, G0 Gaussian 300 x 16): short runs, every sweep a Krylov sweep
    rng = np.random.default_rng(3)
    G0 = rng.standard_normal((300, r))
    i = rng.integers(0, 300, 40)
    j = (i + 1 + rng.integers(0, 299, 40)) % 300
    d = np.einsum("ij,ij->i", G0[i] - G0[j], G0[i] - G0[j])
    C = Constraints.from_lists(i, j, ["dist_le"] * 20 + ["dist_ge"] * 20, np.r_[0.9 * d[:20], 1.1 * d[20:]])
    res = von_neumann(G0, C, tol=1e-6)
    assert res.converged and res.info["krylov_sweeps"] == res.iterations
    assert res.info["lanczos_steps_per_projection"] < KRYLOV_EXHAUSTED * r


def test_a_moving_first_sweep_matches_dense_projections():
    """The benchmark's first sweep (K0 = G0 G0^T, G0 2000 x 16 Gaussian, equality distance
    constraints at 0.7-0.9x or 1.1-1.3x the current distances, so every projection moves), its
    first 150 projections: each step agrees with the same projection done by a dense eigensolver
    per trial value, and the Lanczos runs stop well before r."""
    rng = np.random.default_rng(0)
    n, r, c = 2000, 16, 2000
    G0 = rng.standard_normal((n, r))
    i = rng.integers(0, n, c)
    j = (i + 1 + rng.integers(0, n - 1, c)) % n
    d = np.einsum("ij,ij->i", G0[i] - G0[j], G0[i] - G0[j])
    same = rng.random(c) < 0.5
    factor = np.where(same, rng.uniform(0.7, 0.9, c), rng.uniform(1.1, 1.3, c))
    c = 150
    C = Constraints(i[:c], j[:c], np.full(c, KIND_CODE["dist_eq"], dtype=np.int8), (factor * d)[:c])
    U, s, _ = np.linalg.svd(G0, full_matrices=False)
    V0 = np.ascontiguousarray(U)
    L, lam = np.diag(np.log(s ** 2)), np.zeros(c)
    status, *_, steps = _k.krylov_sweep(V0, C.i, C.j, C.kind, C.bound.copy(), lam, L, math.inf)
    assert status == _k.OK and np.count_nonzero(lam) == c and steps <= 10 * c
    Lref = np.diag(np.log(s ** 2))
    for q in range(c):
        v = V0[C.i[q]] - V0[C.j[q]]

        def g(alpha, v=v, b=C.bound[q], L0=Lref.copy()):
            ev, E = np.linalg.eigh(L0 + alpha * np.outer(v, v))
            return math.log((E.T @ v) ** 2 @ np.exp(ev)) - math.log(b)

        alpha = brentq(g, -5.0 / (v @ v), 5.0 / (v @ v), xtol=1e-15, rtol=1e-14)
        Lref += alpha * np.outer(v, v)
        assert -lam[q] == pytest.approx(alpha, rel=1e-8, abs=1e-9 / (v @ v))
    np.testing.assert_allclose(L, Lref, rtol=0, atol=1e-10)


def test_sweeps_report_named_counts_on_the_whole_set():
    """The compiled sweeps' counts come back named (issue 46), a subset's indices mapped back to the
    whole set; the counts keep their invariants (exact <= all evaluations, one call's <= all)."""
    from kernlearn_cli.solvers._burg_kernels import burg_sweep
    from kernlearn_cli.solvers._cyclic import Sweep, SubsetSweeps

    G0, C = feasible_instance(3, c=40)
    U, s, _ = np.linalg.svd(G0, full_matrices=False)
    V0, r = np.ascontiguousarray(U), U.shape[1]
    subset = np.flatnonzero(np.isin(C.kind, [KIND_CODE[k] for k in DIST]))[::2]
    runs = {"eigen": lambda i, j, kind, bh, lm: _k.eigen_sweep(V0, i, j, kind, bh, lm, np.eye(r), np.log(s ** 2),
                                                               math.inf),
            "krylov": lambda i, j, kind, bh, lm: _k.krylov_sweep(V0, i, j, kind, bh, lm, np.diag(np.log(s ** 2)),
                                                                 math.inf)}
    for name, run in runs.items():
        lam = np.zeros(len(C))
        out = SubsetSweeps(C, C.bound.copy(), lam).run(run, subset)
        assert out._fields[:4] == Sweep._fields and out.status == _k.OK and out.index == -1
        assert out.worst in subset and out.max_violation > 0
        assert out.exact_evaluations <= out.evaluations and out.max_evaluations <= out.evaluations
        assert 1 <= out.solves <= len(subset) and np.count_nonzero(lam) <= len(subset)
        assert name == "eigen" or 1 <= out.lanczos_steps <= r * len(subset)
    work = [np.empty(r) for _ in range(4)]
    out = burg_sweep(G0, C.i, C.j, C.kind, C.bound.copy(), np.zeros(len(C)), np.eye(r), math.inf, *work)
    assert isinstance(out, Sweep) and out.status == _k.OK and 0 <= out.worst < len(C)
