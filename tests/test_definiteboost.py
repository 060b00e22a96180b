"""DefiniteBoost (Tsuda et al. 2005, Sec. 4) and the threshold constraints of their Sec. 5.

Optimality is checked three independent ways: a convex solver (cvxpy + Clarabel, von Neumann
entropy, identity start), the KKT conditions (the solver's W is exp(log W1 - sum gamma C) / Z by
construction, so gamma >= 0, feasibility and complementary slackness certify the optimum), and a
closed form; exact and approximate projections must meet at the same matrix (Kulis et al. Sec. 5.3).
"""

import math
import tracemalloc
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import yaml

from kernlearn_cli.constraints.threshold import close_pairs, threshold_pairs
from kernlearn_cli.errors import ConfigError, DataError, InfeasibleError
from kernlearn_cli.solvers._secular import rank_one_update
from kernlearn_cli.solvers.definiteboost import definiteboost, kernel_from_dual
from kernlearn_cli.types import KINDS, Constraints, Dataset

from helpers import definiteboost_instance as instance
from helpers import gyrb_standin, kernlearn
from reference import definiteboost_dense

ALL = ("approximate", "exact")


def solve(G0, C, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # a non-converged run would warn
        return definiteboost(G0, C, **kw)


def kkt_residuals(res, C):
    """(max relative violation, min dual of an inequality, |sum_j gamma_j r_j| / s)."""
    G, gamma = res.G, res.arrays["dual"]
    K = G @ G.T
    s = np.trace(K)
    vals = C.values(G)
    sig = np.where(np.isin(C.kind, [1, 3]), -1.0, 1.0)
    r = sig * (vals - C.bound) / s
    ineq = ~np.isin(C.kind, [4, 5])
    viol = C.violations(G) / np.maximum(np.abs(C.bound), 1e-12)
    return viol.max(), (gamma[ineq].min() if ineq.any() else 0.0), abs(np.sum(gamma * r))


def test_rank_one_eigen_update_with_ties_and_deflation():
    rng = np.random.default_rng(0)
    for trial in range(150):
        r = int(rng.integers(1, 25))
        theta = rng.standard_normal(r)
        if trial % 3 == 0:
            theta[:] = -math.log(r)                 # scaled identity: all poles equal
        elif trial % 3 == 1:
            theta[: r // 2] = 0.3
        w = rng.standard_normal(r)
        if trial % 4 == 0:
            w[: r // 3] = 0.0
        rho = rng.standard_normal() * 3
        A = np.diag(theta) + rho * np.outer(w, w)
        X = np.eye(r)
        assert rank_one_update(theta, rho, w.copy(), X) == 0
        assert np.abs(X * theta @ X.T - A).max() <= 1e-12 * max(1.0, np.abs(A).max())
        assert np.abs(X.T @ X - np.eye(r)).max() <= 1e-12


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_matches_convex_solver_reference(seed):
    """Identity start: min Delta(W, I/n) = max entropy(W) + const, solved by cvxpy + Clarabel."""
    import cvxpy as cp

    n = 8
    G0, C = instance(seed, n=n, c=10)
    res = solve(G0, C, projection="exact", dual_correction=True, tol=1e-10)
    W = cp.Variable((n, n), symmetric=True)
    cons = [cp.trace(W) == 1, W >> 0]
    for i, j, k, b in zip(C.i, C.j, C.kind, C.bound / n):
        name = KINDS[k]
        val = W[i, i] + W[j, j] - 2 * W[i, j] if name.startswith("dist") else W[i, j]
        cons.append(val <= b if name.endswith("le") else val >= b if name.endswith("ge") else val == b)
    prob = cp.Problem(cp.Maximize(cp.von_neumann_entr(W)), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11, max_iter=500)
    assert prob.status == cp.OPTIMAL
    Kref = n * W.value
    K = res.G @ res.G.T
    assert res.objective == pytest.approx(n * (math.log(n) - prob.value), rel=1e-6)
    assert np.abs(K - Kref).max() <= 1e-5 * np.abs(Kref).max()
    assert np.trace(K) == pytest.approx(n, rel=1e-12)


@pytest.mark.parametrize("seed,rank", [(0, None), (1, None), (2, None), (3, 5), (4, 4)])
def test_exact_and_approximate_projections_meet_at_the_optimum(seed, rank):
    """Kulis et al. Sec. 5.3: both projections converge to the same matrix; KKT holds for both."""
    G0, C = instance(seed, n=12, c=14, rank=rank)
    out = {}
    for projection in ALL:
        res = solve(G0, C, projection=projection, dual_correction=True, tol=1e-10)
        assert res.converged
        viol, min_dual, compl = kkt_residuals(res, C)
        assert viol <= 1e-6 and min_dual >= 0 and compl <= 1e-8
        assert abs(res.info["duality_gap"]) <= 1e-8
        out[projection] = res
    Ka, Ke = (out[p].G @ out[p].G.T for p in ALL)
    assert np.abs(Ka - Ke).max() <= 1e-4 * np.abs(Ke).max()
    assert out["approximate"].objective == pytest.approx(out["exact"].objective, rel=1e-6)
    assert out["approximate"].info["steps"] >= out["exact"].info["steps"]
    if rank is not None:     # the learned kernel stays in the range of K0
        P = G0 @ np.linalg.pinv(G0)
        assert np.abs(P @ Ka @ P - Ka).max() <= 1e-10 * np.abs(Ka).max()


@pytest.mark.parametrize("projection", ALL)
@pytest.mark.parametrize("correction", [False, True])
@pytest.mark.parametrize("order", ["greedy", "cyclic"])
def test_dual_objective_decreases_monotonically(projection, correction, order):
    G0, C = instance(7, n=12, c=16, kinds=("dist_le", "dist_ge", "sim_le", "sim_ge"))
    res = solve(G0, C, projection=projection, dual_correction=correction, order=order, tol=1e-8)
    h = res.history["dual_objective"]
    assert h[0] == 0.0 and len(h) == res.info["steps"] + 1
    assert np.diff(h).max() <= 1e-12
    assert h[-1] < -1e-3
    # the tracked eigendecomposition agrees with the kernel rebuilt from the duals
    assert h[-1] == pytest.approx(res.info["dual_objective"], abs=1e-10)
    if correction:          # Theorem 4.1 / weak duality: the dual objective bounds -Delta(W*, W1) from above
        assert res.objective / np.trace(G0 @ G0.T) >= -h[-1] - 1e-8
    assert res.iterations == math.ceil(res.info["steps"] / len(C))


@pytest.mark.parametrize("projection", ALL)
def test_original_algorithm_meets_constraints_but_may_stop_short_of_the_optimum(projection):
    """Without Kulis et al.'s correction (Tsuda et al. as published) gamma never shrinks: the
    constraints are met, the objective is >= the optimum, and here strictly above it."""
    G0, C = instance(11, n=14, c=20, kinds=("dist_le", "dist_ge"))
    orig = solve(G0, C, projection=projection, dual_correction=False, tol=1e-10)
    best = solve(G0, C, projection="exact", dual_correction=True, tol=1e-10)
    viol, min_dual, _ = kkt_residuals(orig, C)
    assert viol <= 1e-6 and min_dual >= 0
    assert orig.info["duality_gap"] >= -1e-10
    assert orig.objective >= best.objective - 1e-9
    assert orig.objective > best.objective * (1 + 1e-4)


def test_single_distance_constraint_closed_form():
    """W1 = I/n, one d(0, 1) <= b: K = n/(n - 1 + x) (I + (x - 1) z z^T / 2), x = b(n - 1)/(2n - b)."""
    n, b = 9, 0.3
    C = Constraints.from_lists([0], [1], ["dist_le"], [b])
    x = b * (n - 1) / (2 * n - b)
    z = np.zeros(n)
    z[0], z[1] = 1, -1
    expected = n / (n - 1 + x) * (np.eye(n) + (x - 1) * np.outer(z, z) / 2)
    exact = solve(np.eye(n), C, projection="exact", tol=1e-12)
    assert exact.info["steps"] <= 2          # one projection, then at most a round-off touch-up
    np.testing.assert_allclose(exact.G @ exact.G.T, expected, atol=1e-12)
    approx = solve(np.eye(n), C, projection="approximate", tol=1e-12)
    np.testing.assert_allclose(approx.G @ approx.G.T, expected, atol=1e-9)


def test_deterministic_and_reproducible_from_the_duals():
    G0, C = instance(5, n=12, c=16)
    a = solve(G0, C, tol=1e-6, dual_correction=True)
    b = solve(G0, C, tol=1e-6, dual_correction=True)
    assert np.array_equal(a.G, b.G) and np.array_equal(a.arrays["dual"], b.arrays["dual"])
    assert np.array_equal(a.history["dual_objective"], b.history["dual_objective"])
    G, log_z, div = kernel_from_dual(a.arrays["G0"], C, a.arrays["dual"])
    assert np.array_equal(G, a.G) and div == a.objective and log_z == a.info["dual_objective"]
    # the same three from the duals by the formula, densely: K = tr K0 U W U^T, log Z, tr K0 Delta(W, W1)
    U, log_w1, W, log_z = definiteboost_dense(G0, C, a.arrays["dual"])
    trace = np.trace(G0 @ G0.T)
    np.testing.assert_allclose(a.G @ a.G.T, trace * U @ W @ U.T, rtol=0, atol=1e-13 * trace)
    ev, V = np.linalg.eigh(W)
    w_log_w = (V * (ev * np.log(np.clip(ev, 1e-300, None)))) @ V.T
    assert a.info["dual_objective"] == pytest.approx(log_z, rel=1e-12, abs=1e-12)
    assert a.objective == pytest.approx(trace * np.trace(w_log_w - W @ log_w1), rel=1e-12)


def test_max_steps_reports_not_converged():
    G0, C = instance(5, n=12, c=16)
    with pytest.warns(UserWarning, match="not converged"):
        res = definiteboost(G0, C, max_steps=5, tol=1e-12)
    assert not res.converged and res.info["steps"] == 5 and res.iterations == 1


def test_already_satisfied_set_takes_no_step():
    C = Constraints.from_lists([0, 1], [1, 2], ["dist_le", "dist_ge"], [3.0, 1.0])   # I: every d = 2
    res = solve(np.eye(5), C)
    assert res.converged and res.info["steps"] == 0 and res.iterations == 0
    np.testing.assert_allclose(res.G @ res.G.T, np.eye(5), atol=1e-12)


@pytest.mark.parametrize("G0,match", [(np.zeros((4, 4)), "trace 0"), (np.full((4, 4), np.nan), "non-finite")])
def test_bad_initial_kernel(G0, match):
    C = Constraints.from_lists([0], [1], ["dist_le"], [0.5])
    with pytest.raises(DataError, match=match):
        definiteboost(G0, C)


@pytest.mark.parametrize("kw,match", [({"projection": "newton"}, "'definiteboost': projection: expected one of"),
                                      ({"order": "random"}, "'definiteboost': order: expected one of"),
                                      ({"tol": 0.0}, "'definiteboost': tol: expected a float"),
                                      ({"max_steps": 0}, "'definiteboost': max_steps: expected an int")])
def test_bad_settings(kw, match):
    C = Constraints.from_lists([0], [1], ["dist_le"], [0.5])
    with pytest.raises(ConfigError, match=match):
        definiteboost(np.eye(4), C, **kw)
    with pytest.raises(ConfigError, match="at least one constraint"):
        definiteboost(np.eye(4), Constraints.from_lists([], [], [], []))


@pytest.mark.parametrize("kind,bound", [("dist_le", 0.0), ("dist_ge", 9.0), ("sim_eq", 5.0)])
def test_constraint_no_trace_preserving_kernel_meets(kind, bound):
    """tr K = tr K0 = 4: d(0, 1) <= 0, d(0, 1) >= 9 > 2 tr K, K_01 = 5 > tr K / 2 are impossible."""
    C = Constraints.from_lists([0, 0], [2, 1], ["dist_le", kind], [1.0, bound])
    with pytest.raises(InfeasibleError, match=r"constraint #1 .*cannot hold"):
        definiteboost(np.eye(4), C)


def test_infeasible_set_is_certified_by_the_dual_floor():
    """sqrt d(0,2) <= sqrt d(0,1) + sqrt d(1,2) rules out d(0,2) >= 1.5 with d(0,1), d(1,2) <= 0.01."""
    C = Constraints.from_lists([0, 1, 0], [1, 2, 2], ["dist_le", "dist_le", "dist_ge"], [0.01, 0.01, 1.5])
    with pytest.raises(InfeasibleError, match="weak duality"):
        definiteboost(np.eye(4), C, dual_correction=True)


# --- threshold_pairs (Tsuda et al. Sec. 5) ---------------------------------------------------

def target(seed=0, n=30):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 2)
    lam, U = np.linalg.eigh(K)
    keep = lam > 1e-10 * lam.max()
    return Dataset("t", X=X, y=(X[:, 0] > 0).astype(int)), U[:, keep] * np.sqrt(lam[keep]), K


def test_threshold_pairs_are_all_close_pairs_of_the_trace_one_target():
    ds, G, K = target()
    n = ds.n
    C = threshold_pairs(ds, G, rng=None)
    T = K / np.trace(K)
    half = 0.5 * (np.diag(T)[:, None] + np.diag(T)[None] - 2 * T)
    ii, jj = np.nonzero(np.triu(half < 0.2 / n, 1))
    assert len(C) == len(ii) > 0
    assert set(zip(C.i, C.j)) == set(zip(ii, jj))
    assert set(C.kind_names()) == {"dist_le"} and np.all(C.bound == 2 * 0.2 / n * n)
    # the target rescaled to trace n meets every constraint it generated (the set is feasible)
    assert np.all(C.violations(G * math.sqrt(n / np.trace(K))) == 0)
    # the threshold is on the trace-one kernel: scaling the reference changes nothing
    C2 = threshold_pairs(ds, 3.0 * G, rng=None)
    assert np.array_equal(C2.i, C.i) and np.array_equal(C2.j, C.j)
    # an explicit gamma overrides gamma_scale
    C3 = threshold_pairs(ds, G, rng=None, gamma=0.1 / n, gamma_scale=5.0)
    assert 0 < len(C3) < len(C) and np.allclose(C3.bound, 0.2)


def test_close_pairs_match_all_pairs_with_ties_and_sort_by_i_then_j():
    """The k-d tree's pairs are the brute-force pairs (strict bound, ties, duplicates)."""
    rng = np.random.default_rng(3)
    for n, r in ((2, 1), (40, 1), (200, 3), (300, 12)):
        G = np.round(rng.standard_normal((n, r)), 1)             # rounding makes ties and duplicates
        trace = float((G ** 2).sum())
        sq = (G ** 2).sum(1)
        half = 0.5 * np.maximum(sq[:, None] + sq[None] - 2 * G @ G.T, 0)
        for gamma in (1e-6, 0.01 / n, 0.2 / n, 3.0 / n):
            ii, jj = np.nonzero(np.triu(half / trace < gamma, 1))
            i, j = close_pairs(G, gamma, trace)
            assert np.array_equal(i, ii) and np.array_equal(j, jj), (n, r, gamma)


def test_threshold_pairs_need_no_n_by_n_array():
    """n = 50,000 points: the search stays within O(n r + pairs) memory (the blocked all-pairs scan
    it replaced held 2048 x n distances, 0.8 GB here, and took O(n²) time)."""
    n = 50_000
    G = np.random.default_rng(1).standard_normal((n, 3))
    tracemalloc.start()
    i, j = close_pairs(G, 2 * n ** (-2 / 3) / n, float((G ** 2).sum()))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert 0 < i.size < 10 * n and np.all(i < j)
    assert peak < 100 * 8 * n, peak


def test_threshold_pairs_errors():
    ds, G, _ = target()
    with pytest.raises(ConfigError, match="gamma_scale"):
        threshold_pairs(ds, G, rng=None, gamma_scale=-1.0)
    with pytest.raises(ConfigError, match="no pair"):
        threshold_pairs(ds, G, rng=None, gamma=1e-12)
    with pytest.raises(DataError, match="trace"):
        threshold_pairs(ds, 0 * G, rng=None)


def test_fig3_protocol_on_a_small_target():
    """Identity start, threshold constraints: the original algorithm meets them all; the dual
    objective decreases; the learned kernel classifies better than the identity."""
    ds, G, _ = target(1, n=40)
    C = threshold_pairs(ds, G, rng=None)
    res = solve(np.eye(ds.n), C, tol=1e-6)
    assert res.info["max_violation"] <= 1e-6
    assert np.diff(res.history["dual_objective"]).max() <= 1e-12


@pytest.mark.slow
def test_cli_run_and_plot_history(tmp_path):
    ds, _, _ = target(2, n=30)
    np.save(tmp_path / "x.npy", ds.X)
    np.save(tmp_path / "y.npy", ds.y)
    cfg = {"name": "db", "seed": 0, "grid": {"solver.dual_correction": [False, True]},
           "dataset": {"name": "files", "features": str(tmp_path / "x.npy"), "labels": str(tmp_path / "y.npy")},
           "kernel": {"name": "identity", "scale": 1.0},
           "constraints": {"name": "threshold_pairs", "reference": {"name": "rbf"}},
           "solver": {"name": "definiteboost", "tol": 1e-3},
           "evaluate": [{"name": "knn_error", "k": 1}]}
    path = tmp_path / "db.yaml"
    path.write_text(yaml.safe_dump(cfg))
    env = {**os.environ, "NUMBA_NUM_THREADS": "1"}
    run = subprocess.run([sys.executable, "-m", "kernlearn_cli", "run", path, "--out", tmp_path / "out"],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    assert "knn_error" in run.stdout
    fig = tmp_path / "h.png"
    plot = subprocess.run([sys.executable, "-m", "kernlearn_cli", "plot-history", tmp_path / "out", "--mean", "--logx",
                           "-o", fig],
                          capture_output=True, text=True, env=env)
    assert plot.returncode == 0, plot.stderr
    assert fig.stat().st_size > 1000 and "2 line(s)" in plot.stderr
    bad = subprocess.run([sys.executable, "-m", "kernlearn_cli", "plot-history", tmp_path / "out", "-k", "nope",
                          "-o", fig], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and "no history 'nope'" in bad.stderr and "dual_objective" in bad.stderr


REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow
def test_cli_non_psd_initial_kernel(tmp_path):
    """A non-PSD initial kernel stops the run with one clear error (exit 2), nothing written
    (the zero / non-finite factor the solver itself rejects: test_bad_initial_kernel)."""
    np.save(tmp_path / "k.npy", np.diag([1.0] * 19 + [-1.0]))
    np.save(tmp_path / "y.npy", np.arange(20) % 2)
    cfg = {"name": "bad", "seed": 0,
           "dataset": {"name": "files", "kernel": str(tmp_path / "k.npy"), "labels": str(tmp_path / "y.npy")},
           "kernel": {"name": "precomputed"}, "constraints": {"name": "random_pairs", "count": 5},
           "solver": {"name": "definiteboost"}, "evaluate": [{"name": "knn_error"}]}
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(cfg))
    res = kernlearn("run", tmp_path / "bad.yaml", "--out", tmp_path / "out")
    assert res.returncode == 2 and res.stderr.startswith("kernlearn: error:") and "eigenvalue is -1" in res.stderr
    assert not list((tmp_path / "out").rglob("record.json"))


@pytest.mark.slow
def test_gyrb_fig3_config_on_synthetic_standin(tmp_path):
    """configs/papers/tsuda2005/fig3_gyrb.yaml runs once a kernel is in <data home>/gyrb."""
    home = gyrb_standin(tmp_path / "home")
    res = kernlearn("run", os.path.join(REPO, "configs", "papers", "tsuda2005", "fig3_gyrb.yaml"),
                    "--out", tmp_path / "out", "--set", "grid.seed=[0]", env={"KERNLEARN_DATA": str(home)})
    assert res.returncode == 0, res.stderr
    assert "2 cell(s) run" in res.stderr and "knn_error" in res.stdout
