"""The on-line MEG solver (Tsuda et al. 2005, Sec. 3) and the distance-stream generator."""

import math

import numpy as np
import pytest
import scipy.linalg as sl

from kernlearn_cli.constraints.streams import distance_stream
from kernlearn_cli.errors import ConfigError, DataError
from kernlearn_cli.registry import RUNNER_KEYWORDS
from kernlearn_cli.solvers.meg import loss_bound, meg, meg_loss
from kernlearn_cli.types import KIND_CODE, Constraints, Dataset, SolverResult

from helpers import meg_stream, random_factor


def instance_matrix(n, i, j, kind):
    X = np.zeros((n, n))
    if kind == KIND_CODE["dist_eq"]:
        X[i, i] += 0.5
        X[j, j] += 0.5
        X[i, j] -= 0.5
        X[j, i] -= 0.5
    else:
        X[i, j] += 0.5
        X[j, i] += 0.5
    return X


def naive_meg(G0, C, eta, scale):
    """Eq. (4) literally: W_{t+1} = exp(log W_t - 2η(ŷ_t - y_t) X_t) / Z_t, with scipy's logm / expm."""
    K0 = G0 @ G0.T
    W = K0 / np.trace(K0)
    losses = []
    for i, j, kind, b in zip(C.i, C.j, C.kind, C.bound):
        X = instance_matrix(W.shape[0], i, j, kind)
        y = b / (2 * scale) if kind == KIND_CODE["dist_eq"] else b / scale
        yhat = np.trace(W @ X)
        losses.append((yhat - y) ** 2)
        E = sl.expm(np.real(sl.logm(W)) - 2 * eta * (yhat - y) * X)
        W = (E + E.T) / 2 / np.trace(E)
    return W, np.array(losses)


@pytest.mark.parametrize("seed", range(3))
def test_stable_update_equals_naive_exp_log_form(seed):
    rng = np.random.default_rng(seed)
    n = 7
    G0 = random_factor(rng, n, cond=5.0)
    G_ref = random_factor(rng, n, r=4)
    C = meg_stream(rng, G_ref, 25, noise=0.2, sim_share=0.4)
    scale = float(np.sum(G_ref ** 2))
    res = meg(G0, C, eta=0.7, reference=G_ref)
    W_naive, losses = naive_meg(G0, C, 0.7, scale)
    np.testing.assert_allclose(res.history["loss"], losses, rtol=1e-7, atol=1e-14)
    np.testing.assert_allclose(res.G @ res.G.T / scale, W_naive, atol=1e-9)
    assert res.objective == pytest.approx(losses.sum(), rel=1e-7)


@pytest.mark.parametrize("seed", range(4))
def test_trace_one_and_positive_definite(seed):
    rng = np.random.default_rng(10 + seed)
    n = 12
    G_ref = random_factor(rng, n, r=5)
    C = meg_stream(rng, G_ref, 300, noise=0.3, sim_share=0.3)
    res = meg(np.eye(n), C, eta=2.0, reference=G_ref)
    scale = res.info["scale"]
    W = res.G @ res.G.T / scale
    assert scale == pytest.approx(np.sum(G_ref ** 2))
    assert res.G.shape == (n, n)
    assert np.trace(W) == pytest.approx(1.0, abs=1e-12)
    ev = np.linalg.eigvalsh(W)
    assert ev.min() > 0 and np.allclose(W, W.T)
    assert np.all(np.isfinite(res.history["loss"]))


def test_initial_parameter_is_trace_normalised_k0():
    """No update (zero learning signal): the result is W_1 = K0 / tr(K0) scaled by s = tr(K_ref)."""
    rng = np.random.default_rng(3)
    n = 6
    G0 = random_factor(rng, n) * 3.0
    K0 = G0 @ G0.T
    C = Constraints.from_lists([0], [1], ["dist_eq"], [K0[0, 0] + K0[1, 1] - 2 * K0[0, 1]])
    res = meg(G0, C, comparison="none")                     # s = tr(K0): y_1 = ŷ_1 exactly
    np.testing.assert_allclose(res.G @ res.G.T, K0, atol=1e-12 * np.abs(K0).max())
    assert res.objective == pytest.approx(0.0, abs=1e-25)
    assert np.isnan(res.info["loss_bound"])
    ident = meg(np.eye(n) * 5.0, C, comparison="none", iterations=1)
    assert ident.info["scale"] == pytest.approx(5.0 ** 2 * n)


@pytest.mark.parametrize("seed", range(6))
def test_lemma_3_2_bound_holds_for_the_target(seed):
    """Noise-free stream from U: L_U = 0, η = 2 = 2/r², bound Δ(U, W_1)/2 (the paper's Fig. 2 setting)."""
    rng = np.random.default_rng(20 + seed)
    n = int(rng.integers(5, 15))
    G_ref = random_factor(rng, n, r=int(rng.integers(2, n + 1)))
    G0 = np.eye(n) if seed % 2 == 0 else random_factor(rng, n, cond=10.0)
    C = meg_stream(rng, G_ref, 400, sim_share=0.3 * (seed % 3 == 2))
    res = meg(G0, C, eta=2.0, reference=G_ref)
    h = res.history
    assert res.info["comparison_loss"] == 0.0
    assert res.info["loss_bound"] == pytest.approx(res.info["initial_divergence"] / 2)
    assert np.all(h["cumulative_loss"] <= h["bound"] * (1 + 1e-12))     # every prefix of the stream
    assert res.info["bound_ratio"] >= 1.0
    # Lemma 3.1 with L_U = 0: η (y_t - ŷ_t)² <= Δ(U, W_t) - Δ(U, W_{t+1}) in every trial
    delta = np.r_[res.info["initial_divergence"], h["divergence"]]
    assert np.all(2.0 * h["loss"] <= -np.diff(delta) + 1e-12)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("eta", [0.3, 1.0, 1.8])
def test_lemma_3_2_bound_holds_with_noisy_labels(seed, eta):
    rng = np.random.default_rng(40 + seed)
    n = 8
    G_ref = random_factor(rng, n, r=6)
    C = meg_stream(rng, G_ref, 200, noise=0.5, sim_share=0.3)
    res = meg(random_factor(rng, n, cond=4.0), C, eta=eta, reference=G_ref)
    h = res.history
    assert h["comparison_loss"][-1] > 0
    c = 2 * eta / (2 - eta)                                    # η = 2c / (r²(2 + c)), r = 1
    expected = (1 + c / 2) * h["comparison_loss"] + (0.5 + 1 / c) * res.info["initial_divergence"]
    np.testing.assert_allclose(h["bound"], expected, rtol=1e-12)
    assert np.all(h["cumulative_loss"] <= h["bound"])


def test_divergence_tracking_matches_direct_computation():
    rng = np.random.default_rng(7)
    n = 9
    G_ref = random_factor(rng, n)
    C = meg_stream(rng, G_ref, 60, noise=0.1)
    res = meg(random_factor(rng, n, cond=3.0), C, eta=1.0, reference=G_ref)
    s = res.info["scale"]
    U, W = G_ref @ G_ref.T / s, res.G @ res.G.T / s
    direct = np.trace(U @ np.real(sl.logm(U))) - np.trace(U @ np.real(sl.logm(W)))
    assert res.history["divergence"][-1] == pytest.approx(direct, rel=1e-8)


def test_loss_bound_edge_cases():
    assert loss_bound(0.0, 3.0, 2.0) == pytest.approx(1.5)
    assert loss_bound(1e-3, 3.0, 2.0) == math.inf            # η r² = 2 needs L_U = 0
    assert loss_bound(0.0, 3.0, 2.5) == math.inf             # η r² > 2: no bound
    assert loss_bound(1.0, 3.0, 1.0) == pytest.approx(2.0 + 3.0)


def test_iterations_cycle_through_the_stream_and_take_prefixes():
    rng = np.random.default_rng(8)
    n = 6
    G_ref = random_factor(rng, n)
    C = meg_stream(rng, G_ref, 15, noise=0.1)
    twice = Constraints(np.r_[C.i, C.i], np.r_[C.j, C.j], np.r_[C.kind, C.kind], np.r_[C.bound, C.bound])
    a = meg(np.eye(n), C, iterations=30, reference=G_ref)
    b = meg(np.eye(n), twice, reference=G_ref)
    assert a.iterations == 30 and np.array_equal(a.G, b.G) and np.array_equal(a.history["loss"], b.history["loss"])
    first = meg(np.eye(n), C, iterations=5, reference=G_ref)
    head = Constraints(C.i[:5], C.j[:5], C.kind[:5], C.bound[:5])
    assert np.array_equal(first.G, meg(np.eye(n), head, reference=G_ref).G)
    assert meg(np.eye(n), C, reference=G_ref).iterations == 15


def test_deterministic_bit_for_bit():
    rng = np.random.default_rng(9)
    n = 10
    G_ref = random_factor(rng, n, r=4)
    ds = Dataset("toy", X=np.zeros((n, 1)))
    C1 = distance_stream(ds, G_ref, rng=np.random.default_rng([5, 1, 0]), count=200)
    C2 = distance_stream(ds, G_ref.copy(), rng=np.random.default_rng([5, 1, 0]), count=200)
    assert all(np.array_equal(getattr(C1, k), getattr(C2, k)) for k in ("i", "j", "kind", "bound"))
    a, b = meg(np.eye(n), C1, reference=G_ref), meg(np.eye(n), C2, reference=G_ref.copy())
    assert np.array_equal(a.G, b.G) and np.array_equal(a.history["cumulative_loss"], b.history["cumulative_loss"])
    assert a.info == {**b.info, "solver_seconds": a.info["solver_seconds"]}


def test_distance_stream_targets_are_reference_distances():
    rng = np.random.default_rng(11)
    n = 13
    G_ref = random_factor(rng, n, r=5)
    K = G_ref @ G_ref.T
    ds = Dataset("unlabelled", X=np.zeros((n, 2)))              # no labels needed
    C = distance_stream(ds, G_ref, rng=np.random.default_rng(0), count=500)
    assert len(C) == 500 and np.all(C.kind == KIND_CODE["dist_eq"])
    assert np.all(C.i != C.j) and C.i.min() >= 0 and max(C.i.max(), C.j.max()) < n
    np.testing.assert_allclose(C.bound, K[C.i, C.i] + K[C.j, C.j] - 2 * K[C.i, C.j], rtol=1e-12, atol=1e-14)
    assert len({(a, b) for a, b in zip(C.i, C.j)}) < 500      # drawn with replacement over time
    assert len(set(zip(C.i, C.j))) > 0.8 * n * (n - 1)          # and covering most ordered pairs
    short = distance_stream(ds, G_ref, rng=np.random.default_rng(0), count=37)   # prefix-stable
    assert np.array_equal(short.i, C.i[:37]) and np.array_equal(short.j, C.j[:37])


def test_distance_stream_bad_input():
    G = np.eye(4)
    ds = Dataset("toy", X=np.zeros((4, 1)))
    for count in (0, -3):
        with pytest.raises(ConfigError, match=r"'distance_stream': count: expected an int in \[1, inf\)"):
            distance_stream(ds, G, rng=np.random.default_rng(0), count=count)
    with pytest.raises(DataError, match="at least 2 points"):
        distance_stream(Dataset("one", X=np.zeros((1, 1))), np.ones((1, 1)), rng=np.random.default_rng(0), count=3)


def test_bad_input_gives_clear_errors():
    rng = np.random.default_rng(12)
    n = 5
    G_ref = random_factor(rng, n)
    C = meg_stream(rng, G_ref, 10)
    for eta in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(ConfigError, match=r"solver 'meg': eta: expected a float in \(0, inf\)"):
            meg(np.eye(n), C, eta=eta, reference=G_ref)
    with pytest.raises(ConfigError, match=r"solver 'meg': iterations: expected an int in \[0, inf\)"):
        meg(np.eye(n), C, iterations=-1, reference=G_ref)
    with pytest.raises(ConfigError, match="solver 'meg': comparison: expected one of 'target', 'none'"):
        meg(np.eye(n), C, comparison="best", reference=G_ref)
    with pytest.raises(ConfigError, match="needs the kernel that generated the stream"):
        meg(np.eye(n), C)                                          # comparison target without reference
    with pytest.raises(DataError, match="zero trace"):
        meg(np.zeros((n, n)), C, reference=G_ref)
    with pytest.raises(ConfigError, match="positive definite"):    # PSD but singular: rank n - 2
        meg(random_factor(rng, n, r=n - 2), C, reference=G_ref)
    singular = np.eye(n)
    singular[:, 0] = 0.0                                          # n x n factor of a singular K0
    with pytest.raises(ConfigError, match="positive definite"):
        meg(singular, C, reference=G_ref)
    with pytest.raises(DataError, match="non-finite"):
        meg(np.full((n, n), np.nan), C, reference=G_ref)
    with pytest.raises(DataError, match="zero trace"):
        meg(np.eye(n), C, reference=np.zeros((n, 2)))
    ineq = Constraints.from_lists([0], [1], ["dist_le"], [1.0])
    with pytest.raises(ConfigError, match="dist_le"):
        meg(np.eye(n), ineq, reference=G_ref)
    empty = Constraints(np.array([], int), np.array([], int), np.array([], np.int8), np.array([]))
    with pytest.raises(ConfigError, match="empty"):
        meg(np.eye(n), empty, reference=G_ref)
    with pytest.raises(DataError, match="out of range|valid indices"):
        meg(np.eye(n), Constraints.from_lists([0], [n], ["dist_eq"], [1.0]), reference=G_ref)
    with pytest.raises(ConfigError, match="meg_loss"):
        meg_loss(np.eye(n), None, rng=None, result=SolverResult(np.eye(n), 0.0, 0, True))


def _write_config(tmp_path, comparison, iterations="[5, 40]"):
    cfg = tmp_path / "meg.yaml"
    cfg.write_text(f"""
name: meg_cli
seed: 0
grid:
  solver.iterations: {iterations}
dataset: {{name: iris}}
kernel: {{name: identity}}
constraints:
  name: distance_stream
  count: 40
  reference: {{name: rbf}}
solver: {{name: meg, eta: 2.0, comparison: {comparison}}}
evaluate:
  - {{name: knn_error, k: 1, repeats: 1}}
  - {{name: meg_loss}}
""")
    return cfg


def _run(cfg, out):
    from kernlearn_cli.config import expand, load
    from kernlearn_cli.experiment import run_cell

    return [run_cell(cell, out) for cell in expand(load(cfg))]


def test_runner_end_to_end_without_comparison(tmp_path):
    from kernlearn_cli.factors import read_factors

    recs = _run(_write_config(tmp_path, "none"), tmp_path / "out")
    assert [r["iterations"] for r in recs] == [5, 40]
    assert recs[1]["metrics"]["cumulative_loss"] == pytest.approx(recs[1]["objective"])
    f = read_factors(tmp_path / "out" / recs[1]["cell"] / "factors.h5")
    assert f["G"].shape == (150, 150) and f["G0"].shape == (150, 150)
    assert f["attrs"]["solver"] == "meg" and f["attrs"]["iterations"] == 40 and "G0" in f
    assert np.trace(f["G"] @ f["G"].T) == pytest.approx(150.0)      # s = tr(K0) = n for the identity


@pytest.mark.skipif("reference" not in RUNNER_KEYWORDS,
                    reason="the runner does not pass the constraint generator's reference kernel to solvers yet")
def test_runner_passes_reference_and_bound_is_recorded(tmp_path):
    recs = _run(_write_config(tmp_path, "target"), tmp_path / "out")
    for r in recs:
        m = r["metrics"]
        assert m["comparison_loss"] == 0.0 and m["cumulative_loss"] <= m["loss_bound"]
        assert r["info"]["scale"] == pytest.approx(150.0)                   # tr of the RBF target


@pytest.mark.slow
def test_cli_verbose_names_the_losses(tmp_path):
    """-v prints MEG's own quantities under their names (it once printed them as 'dual change')."""
    import yaml

    from helpers import kernlearn

    cfg = {"name": "meg_v", "seed": 0, "dataset": {"name": "iris"}, "kernel": {"name": "identity", "scale": 1.0},
           "constraints": {"name": "distance_stream", "count": 50, "reference": {"name": "rbf"}},
           "solver": {"name": "meg", "eta": 2.0}, "evaluate": [{"name": "meg_loss"}]}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    run = kernlearn("run", tmp_path / "c.yaml", "--out", tmp_path / "out", "-v")
    assert run.returncode == 0, run.stderr
    lines = [ln for ln in run.stdout.splitlines() if "] iter " in ln]
    assert lines and all("loss" in ln and "cumulative loss" in ln and "dual change" not in ln for ln in lines)
    assert "converged n/a" in run.stdout


def _predictions(monkeypatch, update, G0, C, **kw):
    """The result of ``meg`` and its prediction ŷ_t of every trial (recorded from the update's ``predict``)."""
    from kernlearn_cli.solvers import meg as meg_module

    cls = meg_module._Krylov if update == "lanczos" else meg_module._Eigen
    predict, yhat = cls.predict, []

    def record(self, a, b, dist):
        yhat.append(predict(self, a, b, dist))
        return yhat[-1]

    monkeypatch.setattr(cls, "predict", record)
    return meg(G0, C, update=update, **kw), np.array(yhat)


@pytest.mark.parametrize("sim_share", [0.0, 0.5])
def test_lanczos_stream_from_a_dense_k0_equals_the_dense_reference(monkeypatch, sim_share):
    """The fast tier's check of ``update: lanczos`` over many trials from a non-identity K0: every loss
    and the final kernel against eq. (4) computed literally (:func:`naive_meg`, scipy's expm/logm), and
    every ŷ_t against the dense update.  ŷ_t after the first trial reads log tr exp(S) carried by the
    Krein trace shift of each step; a single trial, or W_1 = I/n (whose first Krylov space is
    invariant), does not exercise it."""
    rng = np.random.default_rng(21 + int(10 * sim_share))
    n = 12
    G0 = random_factor(rng, n, cond=30.0)
    G_ref = random_factor(rng, n, r=4)
    C = meg_stream(rng, G_ref, 60, noise=0.2, sim_share=sim_share)
    scale = float(np.sum(G_ref ** 2))
    krylov, y_krylov = _predictions(monkeypatch, "lanczos", G0, C, eta=1.0, reference=G_ref)
    dense, y_dense = _predictions(monkeypatch, "eigh", G0, C, eta=1.0, reference=G_ref)
    W_naive, losses = naive_meg(G0, C, 1.0, scale)
    np.testing.assert_allclose(krylov.history["loss"], losses, rtol=1e-7, atol=1e-14)
    np.testing.assert_allclose(krylov.G @ krylov.G.T / scale, W_naive, atol=1e-9)
    np.testing.assert_array_less(np.abs(y_krylov - y_dense), 1e-10 * np.maximum(np.abs(y_dense), 1.0 / n))
    assert krylov.objective == pytest.approx(dense.objective, rel=1e-10)


@pytest.mark.slow
@pytest.mark.parametrize("n, k0, sim_share, eta", [(30, "identity", 0.0, 2.0), (30, "dense", 0.5, 2.0),
                                                   (120, "identity", 0.5, 1.0), (200, "dense", 0.0, 2.0),
                                                   (60, "dense", 1.0, 0.5)])
def test_lanczos_update_equals_the_dense_update(monkeypatch, n, k0, sim_share, eta):
    """``update: lanczos`` (Lanczos runs and the Krein trace shift, no eigendecomposition per trial) gives
    every ŷ_t, the cumulative loss, the divergences and the final kernel of the dense update to 1e-10."""
    rng = np.random.default_rng(n + int(10 * sim_share))
    G0 = np.eye(n) * 2.0 if k0 == "identity" else random_factor(rng, n, cond=50.0)
    G_ref = random_factor(rng, n, r=6)
    C = meg_stream(rng, G_ref, 300, noise=0.2, sim_share=sim_share)
    dense, y_dense = _predictions(monkeypatch, "eigh", G0, C, eta=eta, reference=G_ref)
    krylov, y_krylov = _predictions(monkeypatch, "lanczos", G0, C, eta=eta, reference=G_ref)
    assert len(y_dense) == len(y_krylov) == 300
    # relative to |ŷ_t|, or to 1/n (a diagonal entry of W, tr W = 1) for an off-diagonal W_ab near 0
    np.testing.assert_array_less(np.abs(y_krylov - y_dense), 1e-10 * np.maximum(np.abs(y_dense), 1.0 / n))
    assert krylov.objective == pytest.approx(dense.objective, rel=1e-10)
    np.testing.assert_allclose(krylov.history["cumulative_loss"], dense.history["cumulative_loss"], rtol=1e-10)
    np.testing.assert_allclose(krylov.history["divergence"], dense.history["divergence"], rtol=0, atol=1e-10)
    K, K_dense = krylov.G @ krylov.G.T, dense.G @ dense.G.T
    assert np.abs(K - K_dense).max() <= 1e-10 * np.abs(K_dense).max()
    assert krylov.info["lanczos_steps"] >= 300 and "lanczos_steps" not in dense.info


def test_lanczos_update_from_the_identity_needs_one_step_at_first():
    """From W_1 = I/n the first trial's Krylov space is invariant at once (S = log(1/n) I): one step, exact."""
    n = 50
    C = Constraints.from_lists([3], [7], ["dist_eq"], [0.5])
    res = meg(np.eye(n), C, comparison="none", update="lanczos")
    dense = meg(np.eye(n), C, comparison="none")
    assert res.info["lanczos_steps"] == 1
    assert res.objective == pytest.approx(dense.objective, rel=1e-14)
    np.testing.assert_allclose(res.G @ res.G.T, dense.G @ dense.G.T, rtol=0, atol=1e-14)
