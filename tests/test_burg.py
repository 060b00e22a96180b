"""The low-rank Burg solver against a dense dual reference, closed forms and invariants."""

import math
import warnings

import numpy as np
import pytest

from kernlearn_cli.errors import ConfigError, DataError, InfeasibleError
from kernlearn_cli.solvers.burg import burg
from kernlearn_cli.types import Constraints

from helpers import feasible_instance, relative_violation
from reference import burg_divergence_dense, burg_convex_reference


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("full_rank", [False, True])
def test_matches_convex_solver_reference(seed, full_rank):
    # few enough constraints that the rank-r (or n x n) problem has a strictly feasible point
    G0, C = feasible_instance(seed, n=30 if full_rank else 50, c=12, full_rank=full_rank)
    res = burg(G0, C, tol=1e-7)
    K = res.G @ res.G.T
    K0 = G0 @ G0.T
    Kref, obj_ref = burg_convex_reference(G0, C)
    assert res.converged
    # measured over the 12 cases: objective within 7.1e-8 of the reference, K within 1.2e-6 (relative)
    assert abs(res.objective - obj_ref) <= 1e-6 * abs(obj_ref)
    assert abs(burg_divergence_dense(K, K0) - res.objective) <= 1e-6 * abs(obj_ref)
    assert relative_violation(res.G, C).max() <= 1e-6
    assert np.linalg.matrix_rank(K, tol=1e-8 * np.abs(K).max()) == np.linalg.matrix_rank(K0)
    assert np.linalg.eigvalsh(K).min() >= -1e-9 * np.abs(K).max()
    assert np.abs(K - Kref).max() <= 3e-5 * np.abs(Kref).max()


def test_single_projection_closed_form():
    """One equality distance constraint: K = K0 + beta K0 z z^T K0 with alpha = 1/p - 1/b (Sec. 5.1.1)."""
    rng = np.random.default_rng(1)
    G0 = rng.standard_normal((20, 5))
    K0 = G0 @ G0.T
    z = np.zeros(20)
    z[3], z[7] = 1, -1
    p = z @ K0 @ z
    b = 0.5 * p
    res = burg(G0, Constraints.from_lists([3], [7], ["dist_eq"], [b]), tol=1e-12)
    alpha = 1 / p - 1 / b
    beta = alpha / (1 - alpha * p)
    expected = K0 + beta * np.outer(K0 @ z, K0 @ z)
    np.testing.assert_allclose(res.G @ res.G.T, expected, atol=1e-10 * np.abs(K0).max())


def test_similarity_projection_hits_bound():
    rng = np.random.default_rng(2)
    G0 = rng.standard_normal((15, 4))
    K0 = G0 @ G0.T
    for kind, target in (("sim_eq", K0[2, 9] + 1.0), ("sim_eq", K0[2, 9] - 1.0), ("sim_eq", 2.0 * K0[4, 4])):
        i, j = (4, 4) if target == 2.0 * K0[4, 4] else (2, 9)
        res = burg(G0, Constraints.from_lists([i], [j], [kind], [target]), tol=1e-12)
        K = res.G @ res.G.T
        assert K[i, j] == pytest.approx(target, rel=1e-10)


def test_inequalities_already_met_leave_kernel_unchanged():
    G0, C = feasible_instance(3, n=30, c=10, kinds=["dist_le"])
    K0 = G0 @ G0.T
    loose = Constraints(C.i, C.j, C.kind, C.values(G0) * 2.0)     # every bound twice the current value
    res = burg(G0, loose)
    np.testing.assert_allclose(res.G @ res.G.T, K0, atol=1e-12 * np.abs(K0).max())
    assert res.objective == pytest.approx(0.0, abs=1e-12)


def test_deterministic_bit_for_bit():
    G0, C = feasible_instance(4, c=20)
    a, b = burg(G0, C, tol=1e-6), burg(G0.copy(), C)
    b = burg(G0.copy(), C, tol=1e-6)
    assert np.array_equal(a.G, b.G) and a.iterations == b.iterations


def test_contradictory_pair_is_reported_infeasible():
    rng = np.random.default_rng(5)
    G0 = rng.standard_normal((10, 3))
    C = Constraints.from_lists([0, 0], [1, 1], ["dist_le", "dist_ge"], [1.0, 2.0])
    with pytest.raises(InfeasibleError, match="infeasible"):
        burg(G0, C)


def test_zero_distance_in_range_is_stuck():
    G0 = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])        # points 0 and 1 coincide
    C = Constraints.from_lists([0], [1], ["dist_ge"], [1.0])
    with pytest.raises(InfeasibleError, match="constraint #0"):
        burg(G0, C)


def test_slack_solves_infeasible_set_and_tends_to_hard_solution():
    rng = np.random.default_rng(6)
    G0 = rng.standard_normal((10, 3))
    bad = Constraints.from_lists([0, 0], [1, 1], ["dist_le", "dist_ge"], [1.0, 2.0])
    res = burg(G0, bad, slack=1.0, tol=1e-9)
    d = bad.values(res.G)[0]
    assert res.converged and np.all(np.isfinite(res.G)) and 1.0 < d < 2.0
    G0, C = feasible_instance(7, c=10, kinds=["dist_le", "dist_ge"])
    hard = burg(G0, C, tol=1e-9)
    soft = burg(G0, C, slack=1e7, tol=1e-9)
    assert soft.objective == pytest.approx(hard.objective, rel=1e-4)


def test_not_converged_warns_and_returns():
    G0, C = feasible_instance(8, c=25)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = burg(G0, C, tol=1e-12, max_sweeps=3)
    assert not res.converged and res.iterations == 3
    assert any("not converged" in str(w.message) for w in caught)
    assert np.all(np.isfinite(res.G))


def test_rank_deficient_factor_is_reduced():
    rng = np.random.default_rng(9)
    G0 = rng.standard_normal((30, 4)) @ np.array([[1, 0, 0, 1, 1], [0, 1, 0, 1, 0], [0, 0, 1, 0, 1], [0, 0, 0, 0, 0.0]])
    assert np.linalg.matrix_rank(G0) == 3
    C = Constraints.from_lists([0], [1], ["dist_le"], [0.5 * Constraints.from_lists([0], [1], ["dist_le"], [1.0]).values(G0)[0]])
    res = burg(G0, C, tol=1e-10)
    assert res.G.shape[1] == 3 and res.info["rank"] == 3


def test_bad_settings():
    G0, C = feasible_instance(0, c=3)
    empty = Constraints(np.array([], int), np.array([], int), np.array([], np.int8), np.array([]))
    with pytest.raises(ConfigError, match="empty"):
        burg(G0, empty)
    with pytest.raises(DataError, match="slack"):       # the constraint set, not a setting: the cell fails
        burg(G0, Constraints.from_lists([0], [1], ["sim_le"], [1.0]), slack=1.0)
    assert math.isinf(burg(G0, C).info["slack"])
