"""TRIN and PR-CG (Li et al. 2009): losses, gradient and Hessian operator, optimum, path, bad input."""

import numpy as np
import pytest

from kernlearn_cli.errors import ConfigError
from kernlearn_cli.solvers import _trin_problem as TP, trin as T
from kernlearn_cli.types import Constraints, SpilledPath

from helpers import slow_for
from helpers import trin_instance as instance
from reference import trin_constraint_matrices


def laplacian_factor(n, seed=1):
    """G0 of the pseudo-inverse of a connected Laplacian-like matrix (null space = constants)."""
    rng = np.random.default_rng(seed)
    A = rng.random((n, n))
    W = (A + A.T) / 2
    np.fill_diagonal(W, 0.0)
    L = np.diag(W.sum(1)) - W
    ev, U = np.linalg.eigh(L)
    keep = ev > 1e-9 * ev[-1]
    return U[:, keep] / np.sqrt(ev[keep])


LOSS_POINTS = {"log": np.linspace(-2, 2, 9), "lmnn": np.array([-1.0, 0.3, 0.75, 0.9, 1.4]),
               "hoi": np.array([-1.0, 0.3, 0.75, 0.9, 1.4]), "linear": np.linspace(-1, 1, 5)}


@pytest.mark.parametrize("name", ["log", "lmnn", "hoi", "linear", "itml"])
def test_loss_derivatives_match_finite_differences(name):
    if name == "itml":
        x = np.array([0.5, 1.5, 2.5, 0.2, 0.8, 3.0])
        loss = TP.itml_loss(np.array([1.0, 1.0, 1.0, 2.0, 2.0, 2.0]), np.array([1, 1, 1, 0, 0, 0], bool))
    else:
        x = LOSS_POINTS[name]
        loss = {"log": TP.log_loss(), "linear": TP.linear_loss()}.get(name) or TP.smooth_hinge(0.7, name)
    h = 1e-6
    assert np.allclose((loss.psi(x + h) - loss.psi(x - h)) / (2 * h), loss.d1(x), atol=1e-7)
    assert np.allclose((loss.d1(x + h) - loss.d1(x - h)) / (2 * h), loss.d2(x), atol=1e-6)


def test_smooth_hinge_is_c1_and_close_to_the_hinge():
    loss = TP.smooth_hinge(0.7)
    t = 0.7
    for knot in (t, 1.0):
        assert loss.psi(np.array([knot - 1e-9]))[0] == pytest.approx(loss.psi(np.array([knot + 1e-9]))[0], abs=1e-8)
        assert loss.d1(np.array([knot - 1e-9]))[0] == pytest.approx(loss.d1(np.array([knot + 1e-9]))[0], abs=1e-7)
    x = np.linspace(-3, 3, 61)                       # (8) tends to max(1 - x, 0) as t -> 1
    gaps = [np.max(np.abs(TP.smooth_hinge(t).psi(x) - np.maximum(1 - x, 0))) for t in (0.0, 0.7, 0.95, 0.999)]
    assert np.all(np.diff(gaps) < 0) and gaps[-1] < 1e-3


@pytest.mark.parametrize("mode", ["full", "range", "full_shifted"])
@pytest.mark.parametrize("loss", ["log", "lmnn", "itml", "hoi"])
def test_gradient_and_hessian_operator_match_finite_differences(mode, loss):
    X, y, G0, C = instance(3)
    n = G0.shape[0]
    if mode == "range":
        G0 = X[:, :3] + 0.1
    elif mode == "full_shifted":
        G0 = laplacian_factor(n)
    prob, X0, _, meta = TP.build_problem(G0, C, loss, 3.0, True, 0.7, (5.0, 95.0), "trin")
    if loss == "hoi" and mode == "full_shifted":
        assert meta["mode"] == "range"               # A_i 1 != 0: no shift possible
    elif mode != "full_shifted" or loss != "hoi":
        assert meta["mode"] == mode
    rng = np.random.default_rng(0)
    d = prob.dim
    B = rng.normal(size=(d, d))
    Xk = X0 + 0.1 * (B @ B.T) / d * np.trace(X0) / d        # a generic PD point
    s = T._state(prob, Xk)
    V = rng.normal(size=(d, d))
    V = (V + V.T) / 2
    h = 1e-6

    def f(Y):
        return T._state(prob, Y).f

    fd = (f(Xk + h * V) - f(Xk - h * V)) / (2 * h)
    assert fd == pytest.approx(np.vdot(s.G, V), rel=1e-5, abs=1e-8)
    Kinv = TP.inverse_from_chol(s.L)
    Hv = TP.dense(prob.hessian_loss(V, prob.loss.d2(s.x))) + Kinv @ V @ Kinv
    fd2 = (T._state(prob, Xk + h * V).G - T._state(prob, Xk - h * V).G) / (2 * h)
    assert np.linalg.norm(fd2 - Hv) <= 1e-4 * np.linalg.norm(Hv)


@pytest.mark.parametrize("loss", ["log", "itml", "hoi"])
def test_trace_map_matches_dense_constraint_matrices(loss):
    X, y, G0, C = instance(4)
    n = G0.shape[0]
    prob, X0, _, _ = TP.build_problem(G0, C, loss, 1.0, True, 0.7, (5.0, 95.0), "trin")
    K = G0 @ G0.T
    As = trin_constraint_matrices(C, n, loss)
    assert np.allclose(prob.op.values(K), [np.vdot(K, A) for A in As])
    alpha = np.random.default_rng(0).normal(size=len(As))
    assert np.allclose(TP.dense(prob.op.adjoint(alpha)), sum(a * A for a, A in zip(alpha, As)))


def test_linear_loss_has_the_closed_form_optimum():
    X, y, G0, C = instance(5)
    prob, X0, _, _ = TP.build_problem(G0, C, "linear", 1.0, True, 0.7, (5.0, 95.0), "trin")
    S = TP.dense(prob.op.adjoint(np.ones(len(C))))
    K_star = np.linalg.inv(np.linalg.inv(G0 @ G0.T) - prob.w * S)
    res = T.trin(G0, C, loss="linear", gamma=1.0, tol=1e-10)
    assert np.linalg.norm(res.G @ res.G.T - K_star) <= 1e-8 * np.linalg.norm(K_star)


def cvxpy_log_loss_optimum(G0, C, gamma):
    cp = pytest.importorskip("cvxpy")
    n = G0.shape[0]
    w = gamma / len(np.unique(np.concatenate([C.i, C.j, C.k])))
    K = cp.Variable((n, n), PSD=True)
    x = cp.hstack([K[j, j] - K[k, k] - 2 * K[i, j] + 2 * K[i, k] for i, j, k in zip(C.i, C.j, C.k)])
    K0inv = np.linalg.inv(G0 @ G0.T)
    obj = w * cp.sum(cp.logistic(-2 * x)) + cp.trace(K0inv @ K) - cp.log_det(K)
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return prob.value + np.linalg.slogdet(G0 @ G0.T)[1] - n


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_trin_reaches_the_optimum_of_an_independent_convex_solver(seed):
    X, y, G0, C = instance(seed, n=20, rate=0.05)
    ref = cvxpy_log_loss_optimum(G0, C, 4.0)
    res = T.trin(G0, C, loss="log", gamma=4.0, tol=1e-8)
    assert res.converged
    assert abs(res.objective - ref) <= 1e-6 * abs(ref)
    for precondition in (False, True):
        cg = T.pr_cg(G0, C, loss="log", gamma=4.0, tol=1e-6, max_iter=20000, precondition=precondition)
        assert abs(cg.objective - ref) <= 1e-6 * abs(ref)    # plain PR+ stalls at ‖∇‖ ≈ 6e-6 on seed 0


@pytest.mark.parametrize("loss", ["log", "lmnn", "itml", "hoi"])
def test_trin_matches_a_long_pr_cg_run_and_meets_the_invariants(loss):
    X, y, G0, C = instance(2)
    n = G0.shape[0]
    G0 = laplacian_factor(n)                          # rank n - 1, null space the constants
    a = T.trin(G0, C, loss=loss, gamma=4.0, tol=1e-7)
    b = T.pr_cg(G0, C, loss=loss, gamma=4.0, tol=1e-6, max_iter=50000)
    assert abs(a.objective - b.objective) <= 1e-6 * abs(b.objective)
    c = T.pr_cg(G0, C, loss=loss, gamma=4.0, tol=1e-6, max_iter=50000, precondition=True)
    assert c.converged and c.iterations < b.iterations
    assert abs(c.objective - b.objective) <= 1e-6 * abs(b.objective)
    K = a.G @ a.G.T
    ev = np.linalg.eigvalsh(K)
    assert ev[0] > -1e-10 * ev[-1] and np.sum(ev > 1e-10 * ev[-1]) == n - 1     # PD on the range
    assert np.abs(K @ np.ones(n)).max() <= 1e-8 * np.abs(K).max()               # stays in range(K0)


def test_path_points_and_warm_start():
    assert [len(T.path_gammas(2.0 ** -12, 2.0 ** 16, a)) for a in (2, 4, 8, 16, 32, 64, 128)] == \
        [29, 15, 11, 8, 7, 6, 5]                                               # Table 3, "No. of parms"
    X, y, G0, C = instance(6)
    cold = T.trin(G0, C, loss="log", gamma=64.0, tol=1e-8)
    warm = T.trin(G0, C, loss="log", gamma=64.0, tol=1e-8, path=4.0, gamma_min=2.0 ** -4, keep_path=True)
    assert list(warm.history["path_gamma"]) == [2.0 ** -4, 2.0 ** -2, 1.0, 4.0, 16.0, 64.0]
    assert len(warm.path) == 6 and warm.path[-1][0] == 64.0
    assert warm.objective == pytest.approx(cold.objective, rel=1e-9)


@pytest.mark.parametrize("solver", slow_for([T.trin, T.pr_cg], {"pr_cg"}, lambda f: f.__name__))
def test_relative_stop_ends_at_the_first_iterate_below_tol_times_the_start(solver):
    """stop: relative ends each γ's solve at the first iterate whose natural gradient norm is
    <= tol x its norm at K0 for that γ, warm-started or not (the rule behind the paper's Table 3)."""
    X, y, G0, C = instance(6)
    tol = 1e-3
    r = solver(G0, C, loss="log", gamma=64.0, tol=tol, stop="relative")
    g0 = solver(G0, C, loss="log", gamma=64.0, tol=1e300).info["grad_norm"]    # no iteration: the norm at K0
    g = r.history["grad_norm"]
    assert r.converged and g[-1] <= tol * g0 < g[-2]
    assert r.iterations < solver(G0, C, loss="log", gamma=64.0, tol=tol).iterations
    warm = solver(G0, C, loss="log", gamma=64.0, tol=tol, stop="relative", path=8.0, gamma_min=1.0)
    assert warm.converged and warm.info["grad_norm"] <= tol * g0 < g[-2]
    with pytest.raises(ConfigError, match="stop: expected one of 'absolute', 'relative', got 'relativ'. Did you mean 'relative'"):
        solver(G0, C, stop="relativ")


def test_deterministic():
    X, y, G0, C = instance(7)
    a = T.trin(G0, C, loss="log", gamma=2.0)
    b = T.trin(G0, C, loss="log", gamma=2.0)
    assert np.array_equal(a.G, b.G)


def test_bad_input():
    X, y, G0, C = instance(8)
    with pytest.raises(ConfigError, match=r"gamma: expected a float in \(0, inf\), got 0.0"):
        T.trin(G0, C, gamma=0.0)
    with pytest.raises(ConfigError, match="loss: expected one of 'log', 'lmnn'.*Did you mean 'log'"):
        T.trin(G0, C, loss="logg")
    bad = Constraints.triplets([0, 1], [2, 1], [3, 4])
    with pytest.raises(ConfigError, match=r"triplet #1 .*repeats an index"):
        T.trin(G0, bad)
    with pytest.raises(ConfigError, match="unbounded below"):
        T.trin(G0, C, loss="linear", gamma=1e6)
    pairs = Constraints.from_lists([0, 1], [2, 3], ["dist_le", "dist_ge"], [1.0, 2.0])
    with pytest.raises(ConfigError, match="works on triplets"):
        T.trin(G0, pairs, loss="log")


@pytest.mark.slow
def test_cli_run_writes_what_the_objective_depends_on(tmp_path):
    """iris: Laplacian pseudo-inverse, neighbour triplets, a short path; the objective recomputes
    from the factors file alone (triplets, K0, loss_weight)."""
    import json

    import yaml

    from helpers import kernlearn
    from kernlearn_cli.factors import read_factors

    cfg = {"name": "trin_cli", "seed": 0, "dataset": {"name": "iris"},
           "kernel": {"name": "laplacian_pinv", "neighbors": 10, "scale_features": "standard"},
           "constraints": {"name": "neighbor_triplets", "fraction": 0.5, "in_class": 3, "out_class": 3},
           "solver": {"name": "trin", "loss": "log", "gamma": 16.0, "gamma_min": 0.25, "path": 4,
                      "keep_path": True},
           "evaluate": [{"name": "kpca_1nn_error"}]}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    out = tmp_path / "out"
    run = kernlearn("run", path, "--out", out)
    assert run.returncode == 0, run.stderr
    cell = next(p for p in out.iterdir() if p.is_dir() and p.name != "shared")
    f = read_factors(cell / "factors.h5")
    a = f["attrs"]
    assert a["loss"] == "log" and a["gamma"] == 16.0 and a["loss_weight"] == pytest.approx(16.0 / 75)
    i, j, k = f["triplets"].T
    K, K0 = f["G"] @ f["G"].T, f["G0"] @ f["G0"].T
    x = (K[i, i] + K[j, j] - 2 * K[i, j]) - (K[i, i] + K[k, k] - 2 * K[i, k])
    P = np.linalg.pinv(K0, rcond=1e-10, hermitian=True)
    ev = np.linalg.eigvals(P @ K).real                       # K0^+ K on the range of K0
    ev = ev[ev > 1e-9]
    D = np.trace(P @ K) - np.sum(np.log(ev)) - len(ev)
    assert a["loss_weight"] * np.sum(np.logaddexp(0, -2 * x)) + D == pytest.approx(a["objective"], rel=1e-6)
    m = json.loads((cell / "record.json").read_text())["metrics"]
    assert m["gamma_path"] == [0.25, 1.0, 4.0, 16.0] and len(m["error_path"]) == 4
    assert m["error"] == m["error_path"][-1] and m["error_best"] == min(m["error_path"])


@pytest.mark.slow
def test_cli_rejects_a_kernel_that_is_not_positive_definite(tmp_path):
    """K0 indefinite (a user's kernel file): one clear error paragraph, nothing written."""
    import yaml

    from helpers import kernlearn

    rng = np.random.default_rng(0)
    A = rng.normal(size=(12, 12))
    np.save(tmp_path / "K.npy", (A + A.T) / 2)
    np.save(tmp_path / "y.npy", np.arange(12) % 2)
    cfg = {"name": "bad_k0", "seed": 0,
           "dataset": {"name": "files", "kernel": str(tmp_path / "K.npy"), "labels": str(tmp_path / "y.npy")},
           "kernel": {"name": "precomputed"},
           "constraints": {"name": "neighbor_triplets", "fraction": 0.5, "in_class": 2, "out_class": 2},
           "solver": {"name": "trin"}, "evaluate": [{"name": "kpca_1nn_error"}]}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    run = kernlearn("run", tmp_path / "c.yaml", "--out", tmp_path / "out")
    assert run.returncode != 0 and "not positive semidefinite" in run.stderr and "Traceback" not in run.stderr
    assert not any((tmp_path / "out").rglob("factors.h5"))


@pytest.mark.slow
@pytest.mark.parametrize("solver", ["trin", "pr_cg"])
def test_cli_verbose_prints_the_iterations(tmp_path, solver):
    """-v: one line per iteration with the solver's own quantities (pr_cg reports its step t)."""
    import yaml

    from helpers import kernlearn

    cfg = {"name": "trin_v", "seed": 0, "dataset": {"name": "iris"},
           "kernel": {"name": "laplacian_pinv", "neighbors": 10, "scale_features": "standard"},
           "constraints": {"name": "neighbor_triplets", "fraction": 0.5, "in_class": 3, "out_class": 3},
           "solver": {"name": solver, "loss": "log", "gamma": 1.0, "tol": 1e-2},
           "evaluate": [{"name": "kpca_1nn_error"}]}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    run = kernlearn("run", tmp_path / "c.yaml", "--out", tmp_path / "out", "-v")
    assert run.returncode == 0, run.stderr
    lines = [ln for ln in run.stdout.splitlines() if "] iter " in ln]
    assert lines and all("objective" in ln and "grad" in ln for ln in lines)
    assert ("  t " in lines[0]) == (solver == "pr_cg") and ("radius" in lines[0]) == (solver == "trin")


def table1_pcg_reference(prob, s, radius, nu, max_cg, natural):
    """Table 1 as printed, in K's own coordinates: PCG with the preconditioner Δ ↦ KΔK, H applied
    densely (K⁻¹ΔK⁻¹ formed from the inverse), trust region in ‖·‖_F or the natural ‖·‖_K."""
    K, Kinv, G = s.X, TP.inverse_from_chol(s.L), s.G
    d2 = prob.loss.d2(s.x)
    H = lambda D: TP.dense(prob.hessian_loss(D, d2)) + Kinv @ D @ Kinv      # noqa: E731  (5)
    inner = (lambda A, B: np.vdot(A, Kinv @ B @ Kinv)) if natural else np.vdot  # noqa: E731
    Z, R = np.zeros_like(G), G.copy()
    Y = K @ R @ K
    P, ry = -Y, np.vdot(R, Y)
    target = nu * (np.sqrt(ry) if natural else np.linalg.norm(G))
    pred = lambda Z: -(np.vdot(G, Z) + 0.5 * np.vdot(Z, H(Z)))               # noqa: E731  m(0) - m(Z)
    for step in range(1, max_cg + 1):
        HP = H(P)
        alpha = ry / np.vdot(P, HP)
        zz, zp, pp = inner(Z, Z), inner(Z, P), inner(P, P)
        if zz + 2 * alpha * zp + alpha ** 2 * pp >= radius ** 2:
            tau = (-zp + np.sqrt(zp ** 2 + pp * (radius ** 2 - zz))) / pp
            return Z + tau * P, pred(Z + tau * P), step, True
        Z, R = Z + alpha * P, R + alpha * HP
        Y = K @ R @ K
        ry_next = np.vdot(R, Y)
        if (np.sqrt(ry_next) if natural else np.linalg.norm(R)) < target:
            break
        P, ry = -Y + (ry_next / ry) * P, ry_next
    return Z, pred(Z), step, False


@pytest.mark.parametrize("natural", [False, True])
@pytest.mark.parametrize("loss", ["log", "lmnn"])
def test_steihaug_in_whitened_coordinates_gives_the_iterates_of_table1(natural, loss):
    """steihaug_pcg runs Table 1 in the preconditioner's coordinates Z = L Ẑ Lᵀ: the same step,
    predicted decrease, CG count and boundary flag as the printed recurrence, inside the trust
    region and on its boundary, in the full (K) and the reduced (K = G0 X G0ᵀ) coordinates."""
    X, y, G0, C = instance(3)
    for G in (G0, G0[:, :6]):
        prob, X0, _, _ = TP.build_problem(G, C, loss, 8.0, True, 0.7, (5.0, 95.0), "trin")
        s = T._state(prob, X0)
        for radius in (1e6, 0.3):
            ref = table1_pcg_reference(prob, s, radius, 0.1, 50, natural)
            Zh, pred, steps, hit, znorm = T.steihaug_pcg(prob, s, radius, 0.1, 50, natural)
            Z = s.L @ Zh @ s.L.T
            assert (steps, hit) == ref[2:] and (hit == (radius == 0.3))
            assert np.abs(Z - ref[0]).max() <= 1e-9 * np.abs(ref[0]).max()
            assert pred == pytest.approx(ref[1], rel=1e-9) and pred > 0
            if hit:
                assert znorm == radius


def test_support_first_numbers_the_constrained_points_first():
    """build_problem(support_first=True) permutes K so that the m points the constraints touch come
    first: every Σ α_i A_i lives in the leading m × m block, steihaug_pcg's step (Lᵀ H_F L formed
    on that block only) is the plain problem's step permuted, and decode returns G in the given order."""
    X, y, G0, C = instance(3)
    keep = (C.i % 3 > 0) & (C.j % 3 > 0) & (C.k % 3 > 0)             # points 0, 3, 6, ... untouched
    C = Constraints.triplets(C.i[keep], C.j[keep], C.k[keep])
    args = (G0, C, "log", 8.0, True, 0.7, (5.0, 95.0), "trin")
    plain, X0, _, _ = TP.build_problem(*args)
    perm, X1, decode, meta = TP.build_problem(*args, support_first=True)
    touched = np.unique(np.concatenate([C.i, C.j, C.k]))
    order = np.concatenate([touched, np.setdiff1d(np.arange(len(G0)), touched)])
    assert perm.op.extent == meta["labeled"] == touched.size < plain.op.extent
    assert np.allclose(X1, X0[np.ix_(order, order)], rtol=0, atol=1e-12)
    s0, s1 = T._state(plain, X0), T._state(perm, X1)
    for natural in (False, True):
        for radius in (1e6, 0.3):
            Zh0, pred0, *rest0 = T.steihaug_pcg(plain, s0, radius, 0.1, 50, natural)
            Zh1, pred1, *rest1 = T.steihaug_pcg(perm, s1, radius, 0.1, 50, natural)
            Z0, Z1 = s0.L @ Zh0 @ s0.L.T, s1.L @ Zh1 @ s1.L.T
            assert rest0[:2] == rest1[:2] and pred1 == pytest.approx(pred0, rel=1e-9)
            assert np.abs(Z1 - Z0[np.ix_(order, order)]).max() <= 1e-9 * np.abs(Z0).max()
    G = decode(X1)
    assert np.allclose(G @ G.T, G0 @ G0.T, rtol=0, atol=1e-10)


def test_trial_step_matches_a_fresh_factorization():
    """_trial factors K + Z as L chol(I + Ẑ) and sums the decrease from its parts: the same state
    and f(K) − f(K + Z) as a Cholesky of K + Z; a step that leaves the PD cone gives None."""
    X, y, G0, C = instance(4)
    prob, X0, _, _ = TP.build_problem(G0, C, "log", 8.0, True, 0.7, (5.0, 95.0), "trin")
    s = T._state(prob, X0)
    Zh = T.steihaug_pcg(prob, s, 0.5, 0.1, 50, True)[0]             # ‖Ẑ‖_F <= 0.5: inside the cone
    Z = s.L @ (0.5 * (Zh + Zh.T)) @ s.L.T
    trial, ared, err = T._trial(prob, s, Zh)                       # (Zh is overwritten)
    fresh = T._state(prob, X0 + Z)
    assert np.allclose(trial.X, fresh.X, rtol=0, atol=1e-12 * np.abs(X0).max())
    assert trial.f == pytest.approx(fresh.f, rel=1e-12) and ared == pytest.approx(s.f - fresh.f, rel=1e-9)
    assert 0 < err <= 1e-10 * abs(ared)
    assert trial.G is None
    T._with_gradient(prob, trial)
    assert np.allclose(trial.G, fresh.G, rtol=0, atol=1e-9 * np.abs(fresh.G).max())
    assert T._trial(prob, s, -2.0 * np.eye(len(Zh)))[0] is None


@pytest.mark.parametrize("solver", slow_for([T.trin, T.pr_cg], {"pr_cg"}, lambda f: f.__name__))
def test_path_budget_stops_the_path_and_fails_the_certificate(solver):
    """max_path_iter caps the iterations summed over the path (the paper's "> 10000"): the path
    stops where the budget runs out, with the γ's left counted and converged = false; a budget
    the path does not reach changes nothing."""
    X, y, G0, C = instance(6)
    kw = dict(loss="log", gamma=64.0, tol=1e-4, path=4.0, gamma_min=2.0 ** -4)
    full = solver(G0, C, **kw)
    assert full.converged and full.info["unsolved_path_points"] == 0
    same = solver(G0, C, max_path_iter=full.iterations, **kw)
    assert np.array_equal(same.G, full.G) and same.converged
    budget = int(np.sum(full.history["path_iterations"][:2])) + 1      # two γ's and one iteration of the third
    cut = solver(G0, C, max_path_iter=budget, **kw)
    assert cut.iterations == budget and list(cut.history["path_iterations"][:2]) == \
        list(full.history["path_iterations"][:2])
    assert cut.info["unsolved_path_points"] == 3 and cut.info["gamma"] == 1.0
    assert not cut.converged and cut.certificate["stopped_by"] == "max_path_iter"
    with pytest.raises(ConfigError, match=r"max_path_iter: expected an int in \[1, inf\) or None, got 0"):
        solver(G0, C, max_path_iter=0, **kw)


# Computed by trin.py before issue 45's memory rework (main at 1454b0f): per-γ Newton iterations and
# objectives, and Σ|K| of the learned kernel, on instance(3) with gamma 8, gamma_min 0.5, path 4.
BEFORE_MEMORY_REWORK = {
    ("full", "absolute"): ([5, 6, 8], [1.4103549137503464, 4.893880785540979, 15.223743434137013], 234.60119604809114),
    ("full", "relative"): ([4, 5, 7], [1.4103549137764944, 4.893880785568278, 15.223743435534765], 234.60140231454787),
    ("full_shifted", "absolute"): ([2, 3, 5], [1.225204972731106, 4.886777666723489, 19.30540641373318],
                                   4.328750248303231),
    ("full_shifted", "relative"): ([2, 3, 4], [1.225204972731106, 4.886777666723489, 19.305406413742773],
                                   4.3287466801673045),
    ("range", "absolute"): ([13, 9, 10], [4.421681718074656, 10.013202599488135, 26.09393464516818], 71.56389934770519),
    ("range", "relative"): ([11, 7, 7], [4.421681738798961, 10.01320276109385, 26.09394276845392], 71.62107649627816),
}


@pytest.mark.parametrize("mode,stop", sorted(BEFORE_MEMORY_REWORK))
def test_path_is_the_one_before_the_memory_rework(mode, stop):
    """Releasing arrays early, factoring in place and the QR null space change no iterate: the same
    iteration counts per γ, and objectives and kernel within 1e-10 of the code before (issue 45)."""
    X, y, G0, C = instance(3)
    G = {"full": G0, "full_shifted": laplacian_factor(len(G0)), "range": X[:, :3] + 0.1}[mode]
    res = T.trin(G, C, loss="log", gamma=8.0, gamma_min=0.5, path=4.0, tol=1e-6 if stop == "absolute" else 1e-4,
                 stop=stop, keep_path=True)
    iterations, objectives, k_sum = BEFORE_MEMORY_REWORK[mode, stop]
    assert res.info["mode"] == mode and res.history["path_iterations"].tolist() == iterations
    assert res.history["path_objective"] == pytest.approx(objectives, rel=1e-10, abs=0)
    assert np.abs(res.G @ res.G.T).sum() == pytest.approx(k_sum, rel=1e-10)
    assert len(res.path) == 3 and np.allclose(res.path[-1][1] @ res.path[-1][1].T, res.G @ res.G.T, atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("trust_norm,bound", [("frobenius", 9.5), ("natural", 8.0)])
@pytest.mark.parametrize("rank_gap", [1, 10])
def test_solver_call_peak_allocation_in_n2_doubles(rank_gap, trust_norm, bound):
    """The solver call's peak allocation (tracemalloc: numpy's arrays; G0 is the caller's) in the n x n
    modes, full_shifted (a connected Laplacian's pseudo-inverse, K0⁻¹ held) and range with r close to
    n, at n = 400: below 9.5 n² doubles with the Frobenius trust region (its CG carries Z, R and Q
    packed besides Ẑ, R̂, P̂), 8 n² with the natural one (before issue 45: 23.6 and 44 n²; its first
    round: 16.6 and 15.8; now 9.0 and 8.0, natural 7.5 and 6.5)."""
    import tracemalloc

    n = 400
    rng = np.random.default_rng(0)
    G = np.ascontiguousarray(laplacian_factor(n)[:, : n - rank_gap])
    i, j, k = (rng.integers(0, n, 6 * n) for _ in range(3))
    ok = (i != j) & (i != k) & (j != k)
    C = Constraints.triplets(i[ok], j[ok], k[ok])
    kw = dict(loss="log", gamma=8.0, gamma_min=0.5, path=4.0, tol=1e-6, trust_norm=trust_norm)
    T.trin(G, C, max_path_iter=1, **kw)                              # numba's compilation or cache load first
    tracemalloc.start()
    try:
        res = T.trin(G, C, max_path_iter=3, **kw)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert res.info["mode"] == ("full_shifted" if rank_gap == 1 else "range") and res.iterations == 3
    assert peak <= bound * 8 * n * n


@pytest.mark.slow
def test_keep_path_costs_one_factor_whatever_the_path_length():
    """keep_path writes each path point's factor to a temporary file (types.SpilledPath) instead of
    holding it: the solver call's peak with a 7-point path is within one n² of doubles of its peak
    with a 2-point path, where holding the factors grew it by about one n² per point (5.8 n² over
    the run without keep_path, issue 45 item 3); the factors read back are the learned kernels."""
    import tracemalloc

    n = 300
    rng = np.random.default_rng(1)
    G = np.ascontiguousarray(laplacian_factor(n)[:, : n - 10])
    i, j, k = (rng.integers(0, n, 6 * n) for _ in range(3))
    ok = (i != j) & (i != k) & (j != k)
    C = Constraints.triplets(i[ok], j[ok], k[ok])
    kw = dict(loss="log", gamma=8.0, path=2.0, tol=1e-3, keep_path=True)
    T.trin(G, C, max_path_iter=1, gamma_min=4.0, **kw)              # numba's compilation or cache load first
    peaks, results = {}, {}
    for gamma_min in (4.0, 2.0 ** -3):
        tracemalloc.start()
        try:
            results[gamma_min] = T.trin(G, C, gamma_min=gamma_min, **kw)
            peaks[gamma_min] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    res = results[2.0 ** -3]
    assert isinstance(res.path, SpilledPath) and len(res.path) == 7 and len(results[4.0].path) == 2
    assert peaks[2.0 ** -3] - peaks[4.0] < 8 * n * n
    gamma, last = res.path[-1]
    assert gamma == 8.0 and np.array_equal(last @ last.T, res.G @ res.G.T)
    assert [g for g, _ in res.path] == list(res.history["path_gamma"])


def test_a_run_with_keep_path_keeps_the_path_beside_the_factors_file(tmp_path):
    """kernlearn run with keep_path: the path's factors go to path.h5 beside factors.h5 (disk to
    disk), which links to it as ``path``: a factor per γ, the last one the learned G."""
    import h5py

    from kernlearn_cli.config import Cell
    from kernlearn_cli.experiment import run_cell

    config = {"name": "p", "seed": 0, "dataset": {"name": "two_gaussians", "n": 60, "dim": 3},
              "kernel": {"name": "rbf"}, "constraints": {"name": "neighbor_triplets", "fraction": 0.5},
              "solver": {"name": "trin", "loss": "log", "gamma": 4.0, "gamma_min": 0.25, "path": 4.0,
                         "keep_path": True, "tol": 1e-4},
              "evaluate": [{"name": "kpca_1nn_error"}]}
    record = run_cell(Cell(0, config), tmp_path)
    cell = tmp_path / record["cell"]
    assert (cell / "path.h5").is_file()
    with h5py.File(cell / "factors.h5", "r") as f:
        gammas = f["path/gamma"][()]
        assert list(gammas) == [0.25, 1.0, 4.0] == record["metrics"]["gamma_path"]
        last = f["path/2"][()]
        assert np.array_equal(last, f["G"][()])       # the factor itself (a product's last bit depends on memory alignment in BLAS)
