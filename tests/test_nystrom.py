"""Generalized Nyström with priors (Zhang et al. 2012): the closed form, the gradient mapping
against a convex solver, the inductive map, and bad input."""

import numpy as np
import pytest

from kernlearn_cli.data.synthetic import two_gaussians
from kernlearn_cli.errors import ConfigError, DataError
from kernlearn_cli.solvers.nystrom import (closed_form, congruence, gaussian_block, gaussian_width, gradient_mapping,
                                           ideal_block, nystrom, nystrom_prior, prior_objective,
                                           prior_value_and_gradient, project_psd, strong_convexity)
from kernlearn_cli.types import Constraints, Dataset

from kernlearn_cli.constraints.labeled import labeled_subset


def small_problem(seed=0, m=8, l=12, masked=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((40, 3))
    Z = X[rng.choice(40, m, replace=False)]
    b = gaussian_width(X)
    W = gaussian_block(Z, Z, b)
    S0 = np.linalg.pinv(W)
    El = gaussian_block(X[:l], Z, b)
    y = rng.integers(0, 2, l)
    Kl = (y[:, None] == y[None, :]).astype(float)
    T = np.ones((l, l))
    if masked:
        T = (rng.random((l, l)) < 0.4).astype(float)
        T = np.maximum(T, T.T)
        Kl = Kl * T
    return S0, El, Kl, T


def test_gaussian_width_is_the_mean_pairwise_squared_distance():
    X = np.random.default_rng(1).standard_normal((25, 4))
    D = ((X[:, None] - X[None]) ** 2).sum(-1)
    assert gaussian_width(X) == pytest.approx(D[~np.eye(25, dtype=bool)].mean(), rel=1e-12)


@pytest.mark.parametrize("lam", [0.01, 1.0, 100.0])
def test_closed_form_solves_the_stationarity_equation(lam):
    S0, El, Kl, _ = small_problem()
    S = closed_form(S0, El, Kl, lam)
    M = El.T @ El
    lhs, rhs = lam * S + M @ S @ M, El.T @ Kl @ El + lam * S0
    assert np.linalg.norm(lhs - rhs) <= 1e-10 * np.linalg.norm(rhs)


def directional_derivative(f, S, E):
    """(f(S + hE) - f(S - hE)) / 2h: exact for a quadratic f but for rounding, whatever h."""
    h = 1e-3 * np.linalg.norm(S) / np.linalg.norm(E)
    return (f(S + h * E) - f(S - h * E)) / (2 * h)


def random_symmetric(rng, m):
    A = rng.standard_normal((m, m))
    return (A + A.T) / 2


@pytest.mark.parametrize("masked", [False, True])
def test_prior_gradient_is_the_derivative_of_the_objective(masked):
    """grad J of :func:`prior_value_and_gradient` against central differences of :func:`prior_objective`
    (J is quadratic, so the difference quotient is exact up to rounding) at random symmetric S and
    directions, at random λ from 1e-3 to 1e2: both terms, the λ one included (halving it moves the
    derivative by λ <S - S0, E>, relatively 1e-3 and more here)."""
    rng = np.random.default_rng(4 + masked)
    S0, El, Kl, T = small_problem(seed=5, masked=masked)
    m = S0.shape[0]
    for lam in 10.0 ** rng.uniform(-3, 2, size=6):
        S = S0 + np.linalg.norm(S0) / m * random_symmetric(rng, m)
        J, g = prior_value_and_gradient(S, S0, El, Kl, T, lam)
        assert J == pytest.approx(prior_objective(S, S0, El, Kl, T, lam), rel=1e-12)
        for _ in range(3):
            E = random_symmetric(rng, m)
            fd = directional_derivative(lambda X, lam=lam: prior_objective(X, S0, El, Kl, T, lam), S, E)
            assert np.sum(g * E) == pytest.approx(fd, rel=1e-7, abs=1e-9 * abs(J)), lam


@pytest.mark.parametrize("masked", [False, True])
def test_strong_convexity_is_the_smallest_curvature_of_the_objective(masked):
    """μ, which turns the certificate's subgradient norm into the bound ‖ξ‖² / 2μ on J - J*, against
    the Hessian of J from second differences of :func:`prior_objective` (exact: J is quadratic):
    equal to its smallest eigenvalue when every labeled pair is given (T = 1), at most it otherwise.
    A μ too small only loosens the bound (λ halved in it leaves runs unconverged at small λ); too
    large, it certifies what is not."""
    rng = np.random.default_rng(8 + masked)
    S0, El, Kl, T = small_problem(seed=7, masked=masked)
    m = S0.shape[0]
    S = random_symmetric(rng, m)
    for lam in 10.0 ** rng.uniform(-3, 2, size=4):
        J = lambda X, lam=lam: prior_objective(X, S0, El, Kl, T, lam)          # noqa: E731
        unit = np.eye(m * m).reshape(m * m, m, m)
        one = np.array([J(S + u) for u in unit])
        H = np.empty((m * m, m * m))
        for k in range(m * m):
            for q in range(k, m * m):
                H[k, q] = H[q, k] = J(S + unit[k] + unit[q]) - one[k] - one[q] + J(S)
        smallest = np.linalg.eigvalsh((H + H.T) / 2)[0]
        mu = strong_convexity(El, T, lam)
        if masked:
            assert mu <= smallest * (1 + 1e-9), lam
        else:
            assert mu == pytest.approx(smallest, rel=1e-8), lam


@pytest.mark.parametrize("lam", [1e-3, 0.3, 20.0])
def test_gradient_mapping_steps_along_the_derivative_of_its_objective(monkeypatch, lam):
    """The gradient :func:`gradient_mapping` steps along (in the variable R of S = M R M) against central
    differences of J~(R) = J(M R M) computed by :func:`prior_objective`.  The step is read off the first
    projection it asks for: B = Proj(Y - g / A) with Y the start and A = 1 / growth at the first trial."""
    from kernlearn_cli.solvers import nystrom as module

    rng = np.random.default_rng(int(lam * 1000))
    S0, El, Kl, T = small_problem(seed=6, masked=lam == 0.3)
    m = S0.shape[0]
    S = project_psd(S0 + np.linalg.norm(S0) / m * random_symmetric(rng, m))
    seen, exact = [], module.project_psd
    monkeypatch.setattr(module, "project_psd", lambda X: seen.append(X.copy()) or exact(X))
    gradient_mapping(S, S0, El, Kl, T, lam, tol=0.0, gap_tol=0.0, max_iter=1, A=1.0, growth=2.0)
    Y = exact(seen[0])                                  # the start R = Proj(M⁻¹ S M⁻¹), where g is taken
    g = (Y - seen[1]) * 0.5                             # the first trial projects Y - g / A, A = 1 / 2
    M, _ = congruence(El, lam)
    J = prior_objective(M @ Y @ M, S0, El, Kl, T, lam)
    for _ in range(3):
        E = random_symmetric(rng, m)
        fd = directional_derivative(lambda R: prior_objective(M @ R @ M, S0, El, Kl, T, lam), Y, E)
        assert np.sum(g * E) == pytest.approx(fd, rel=1e-6, abs=1e-9 * abs(J))


@pytest.mark.slow
@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("lam", [1e-4, 0.5])
def test_gradient_mapping_matches_a_convex_solver(masked, lam):
    """At lambda = 1e-4 (Fig. 1's small end) the Hessian's condition number is ~1e9; the
    congruence preconditioner still reaches the certified optimum well within the cap."""
    cp = pytest.importorskip("cvxpy")
    S0, El, Kl, T = small_problem(seed=2, masked=masked)
    m = S0.shape[0]
    S = cp.Variable((m, m), PSD=True)
    ref = cp.Problem(cp.Minimize(lam * cp.sum_squares(S - S0) + cp.sum_squares(cp.multiply(T, El @ S @ El.T) - Kl)))
    ref.solve(solver=cp.CLARABEL)
    start = project_psd(closed_form(S0, El, Kl, lam)) if not masked else S0.copy()
    Sg, iters, trials, stopped_by, fig, hist = gradient_mapping(start, S0, El, Kl, T, lam, tol=1e-13, gap_tol=1e-9,
                                                                max_iter=5000)
    J = lam * np.linalg.norm(Sg - S0, "fro") ** 2 + np.linalg.norm(T * (El @ Sg @ El.T) - Kl, "fro") ** 2
    assert stopped_by == "tolerance" and np.linalg.eigvalsh(Sg).min() >= -1e-10
    assert abs(J - ref.value) <= 1e-5 * abs(ref.value)
    # the certified bound holds against the independent optimum (up to the reference's own accuracy)
    assert J - ref.value <= fig["gap_bound"] + 1e-7 * abs(ref.value) and fig["gap_bound"] <= 1e-9 * max(1.0, J)
    assert trials >= iters and np.all(np.diff(hist["objective"]) <= 1e-12 * hist["objective"][0])


def test_gradient_mapping_started_at_the_optimum_stops_certified(monkeypatch):
    """From the exact optimum every step can be rejected by rounding alone (J(B) > J(S) by an ulp);
    such a step is a change of 0 and the certificate ends the run, not the iteration cap (it used
    to run to max_iter and report converged false with a gap bound of 1e-19)."""
    from kernlearn_cli.solvers import nystrom as module

    S0, El, Kl, T = small_problem(seed=3)
    S = closed_form(S0, El, Kl, 100.0)
    assert np.linalg.eigvalsh(S).min() > 0                 # the PSD constraint is inactive: S is J's minimizer
    exact = module.project_psd
    monkeypatch.setattr(module, "project_psd", lambda M: exact(M) + 1e-6 * np.eye(len(M)))   # "rounding"
    Sg, iters, _, stopped_by, fig, _ = gradient_mapping(S, S0, El, Kl, T, 100.0, tol=1e-8, gap_tol=1e-5,
                                                         max_iter=5000)
    assert stopped_by == "tolerance" and iters < 20 and fig["gap_bound"] <= 1e-10


def _ds(n=120, seed=0):
    return two_gaussians(n=n, dim=4, seed=seed)


def test_inductive_rows_and_factors():
    ds = _ds()
    C = labeled_subset(ds, None, rng=np.random.default_rng(0), count=20)
    res = nystrom_prior(None, C, dataset=ds, rng=np.random.default_rng(1), landmarks=15, lam=[0.1, 1.0])
    Z, S, b = res.arrays["landmarks"], res.arrays["S"], float(res.arrays["kernel_width"])
    E = gaussian_block(ds.X, Z, b)
    np.testing.assert_allclose(res.G @ res.G.T, E @ S @ E.T, atol=1e-8)   # K = E S E^T for seen points
    labeled, Kl, T = ideal_block(C, "nystrom_prior")
    assert np.array_equal(res.arrays["labeled"], labeled) and np.array_equal(res.arrays["K_ideal"], Kl)
    El, S0, lam = res.arrays["E_labeled"], res.arrays["S0"], res.info["lam"]
    J = lam * np.linalg.norm(S - S0, "fro") ** 2 + np.linalg.norm(T * (El @ S @ El.T) - Kl, "fro") ** 2
    assert res.objective == pytest.approx(J, rel=1e-12)
    assert list(res.history["nka_lambda"]) == [0.1, 1.0] and res.info["lam"] in (0.1, 1.0)
    assert res.info["init_residual"] <= 1e-10
    base = nystrom(None, C, dataset=ds, rng=np.random.default_rng(1), landmarks=15)
    np.testing.assert_allclose(base.arrays["landmarks"], Z)                  # same landmarks, same seed


@pytest.mark.slow
def test_embed_maps_training_points_to_their_rows(tmp_path):
    import yaml

    from helpers import kernlearn

    ds = _ds(n=80)
    np.save(tmp_path / "X.npy", ds.X[:10])
    cfg = {"name": "ny", "seed": 0, "dataset": {"name": "two_gaussians", "n": 80, "dim": 4},
           "constraints": {"name": "labeled_subset", "count": 16},
           "solver": {"name": "nystrom_prior", "landmarks": 10, "lam": [0.1, 1.0]},
           "evaluate": [{"name": "svm_accuracy"}, {"name": "alignment"}]}
    (tmp_path / "ny.yaml").write_text(yaml.safe_dump(cfg))
    proc = kernlearn("run", tmp_path / "ny.yaml", "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    (cell,) = (tmp_path / "out").glob("*/factors.h5")
    proc = kernlearn("embed", cell.parent, tmp_path / "X.npy", "-o", tmp_path / "rows.npy")
    assert proc.returncode == 0, proc.stderr
    import h5py

    with h5py.File(cell) as f:
        G = f["G"][()]
    np.testing.assert_allclose(np.load(tmp_path / "rows.npy"), G[:10], rtol=1e-10, atol=1e-12)


def test_bad_input():
    ds = _ds(n=30)
    rng = np.random.default_rng(0)
    C = labeled_subset(ds, None, rng=np.random.default_rng(0), count=10)
    with pytest.raises(ConfigError, match="landmarks = 31 must be between 1 and n = 30"):
        nystrom_prior(None, C, dataset=ds, rng=rng, landmarks=31)
    with pytest.raises(ConfigError, match=r"lam: expected .* got \[1.0, 0.0\]"):
        nystrom_prior(None, C, dataset=ds, rng=rng, landmarks=5, lam=[1.0, 0.0])
    one_class = Constraints.from_lists([0, 0, 1], [0, 1, 1], ["sim_eq"] * 3, [1.0, 1.0, 1.0])
    y = ds.y.copy()
    y[[0, 1]] = 0
    with pytest.raises(DataError, match="class"):
        nystrom_prior(None, one_class, dataset=Dataset("d", X=ds.X, y=y, classes=[0, 1]), rng=rng, landmarks=5)
    X = np.repeat(ds.X[:3], 10, axis=0)                    # 3 distinct points, 5 landmarks: W singular
    dup = Dataset("dup", X=X, y=np.repeat([0, 1, 0], 10), classes=[0, 1])
    Cd = labeled_subset(dup, None, rng=np.random.default_rng(3), count=8)
    with pytest.raises(DataError, match="singular W"):
        nystrom_prior(None, Cd, dataset=dup, rng=rng, landmarks=5, landmark_method="uniform")
    with pytest.raises(ConfigError, match=r"rcond: expected a float in \[0, 1\), got 1.5"):
        nystrom(None, C, dataset=ds, rng=rng, landmarks=5, rcond=1.5)


def test_rcond_cuts_the_small_eigenvalues_of_W_from_S0():
    ds = _ds(n=80)
    C = labeled_subset(ds, None, rng=np.random.default_rng(0), count=12)
    ranks = []
    for rcond in (1e-10, 1e-2):
        res = nystrom_prior(None, C, dataset=ds, rng=np.random.default_rng(1), landmarks=12, lam=1.0, rcond=rcond)
        Z, b = res.arrays["landmarks"], float(res.arrays["kernel_width"])
        W = np.exp(-((Z[:, None] - Z[None]) ** 2).sum(-1) / b)
        ev, Q = np.linalg.eigh(W)
        keep = ev > rcond * ev[-1]
        assert np.allclose(res.arrays["S0"], (Q[:, keep] / ev[keep]) @ Q[:, keep].T)
        ranks.append(np.linalg.matrix_rank(res.arrays["S0"], tol=1e-12 * np.abs(res.arrays["S0"]).max()))
    assert ranks[1] < ranks[0] == 12


def test_nka_criterion_reports_the_selection_score():
    from kernlearn_cli.evaluate.supervised import nka, nka_criterion

    ds = _ds(n=60)
    C = labeled_subset(ds, None, rng=np.random.default_rng(0), count=12)
    res = nystrom_prior(None, C, dataset=ds, rng=np.random.default_rng(1), landmarks=8, lam=0.5)
    S, S0, El, Kl = (res.arrays[k] for k in ("S", "S0", "E_labeled", "K_ideal"))
    score = nka_criterion(res.G, ds, rng=np.random.default_rng(0), result=res)["nka_score"]
    assert score == pytest.approx(nka(S, S0) * nka(El @ S @ El.T, Kl), rel=1e-12)
    base = nystrom(None, C, dataset=ds, rng=np.random.default_rng(1), landmarks=8)
    with pytest.raises(ConfigError, match="nka_criterion"):
        nka_criterion(base.G, ds, rng=np.random.default_rng(0), result=base)


@pytest.mark.slow
def test_a_huge_prior_does_not_stall_the_steps():
    """spambase, 100 labels, seed 7, lambda = 1e-3: S0 = W+ reaches ~1e7, so E_l S E_l^T sums terms of
    1e10. Evaluated that way, J was good to ~1e-6 only, Armijo's test failed on rounding, A ran to 3e10
    and the run stopped at the 5000 cap with a certified bound of 7e-4 (> 1e-5). Through E_l M it
    is certified in a few hundred iterations."""
    from helpers import has_mirror

    if not has_mirror():
        pytest.skip("needs the dataset mirror (spambase)")
    from kernlearn_cli.registry import constraints, datasets
    from kernlearn_cli.rng import STREAM_CONSTRAINTS, STREAM_SOLVER, component_rng

    ds = datasets.get("spambase").func()
    C = constraints.get("labeled_subset").func(ds, None, rng=component_rng(7, STREAM_CONSTRAINTS), count=100)
    res = nystrom_prior(None, C, dataset=ds, rng=component_rng(7, STREAM_SOLVER), landmarks=50, lam=1e-3,
                        tol=1e-8, max_iter=5000)
    assert np.abs(res.arrays["S0"]).max() > 1e6
    assert res.converged and res.iterations < 2000 and res.history["A"].max() < 1e6


def test_both_starts_reach_the_same_optimum_and_the_closed_form_is_the_shorter_way():
    """``start``: from the closed form (Zhang et al., Initialization) or from the prior S0, gradient
    mapping reaches the same S (the problem is strongly convex); with every labeled pair given the
    projected closed form is the optimum when it is PSD, so that start needs no more iterations."""
    ds = _ds(n=60)
    C = labeled_subset(ds, None, rng=np.random.default_rng(0), count=12)
    runs = {start: nystrom_prior(None, C, dataset=ds, rng=np.random.default_rng(1), landmarks=8, lam=0.5,
                                 tol=1e-12, gap_tol=1e-10, start=start) for start in ("closed_form", "prior")}
    S_closed, S_prior = (runs[s].arrays["S"] for s in ("closed_form", "prior"))
    assert np.allclose(S_closed, S_prior, rtol=1e-6, atol=1e-8 * np.abs(S_closed).max())
    assert runs["closed_form"].iterations <= runs["prior"].iterations
    assert np.isnan(runs["prior"].info["init_residual"]) and np.isfinite(runs["closed_form"].info["init_residual"])
