"""Infeasible only when certified: the Bregman solvers refuse a constraint set only with a verified
certificate, never a feasible one, and a converged result always meets its constraints.

Feasibility is decided independently by a convex solver (reference.feasibility_margin); every
certificate an InfeasibleError carries is re-verified here from dense matrices.
"""

import math
import warnings

import numpy as np
import pytest

from kernlearn_cli.errors import ConfigError, InfeasibleError
from kernlearn_cli.solvers.burg import burg
from kernlearn_cli.solvers.definiteboost import definiteboost
from kernlearn_cli.solvers.protocol import ConvergenceWarning
from kernlearn_cli.solvers.von_neumann import von_neumann
from kernlearn_cli.types import KINDS, Constraints

from helpers import has_mirror
from reference import constraint_matrices, definiteboost_dense, feasibility_margin

SOLVERS = {"burg": burg, "von_neumann": von_neumann}


def verify_farkas(G0, C, cert):
    """y >= 0 (free on =), sum y_i s_i G0^T A_i G0 PSD and sum y_i s_i b_i < 0, recomputed densely."""
    y = cert["weights"]
    names = [KINDS[k] for k in C.kind]
    assert all(yi >= 0 for yi, n in zip(y, names) if not n.endswith("eq"))
    s = np.array([-1.0 if n.endswith("ge") else 1.0 for n in names])
    S = np.tensordot(y * s, constraint_matrices(G0, C), axes=1)
    scale = np.abs(y) @ np.abs(C.bound)
    assert np.linalg.eigvalsh(S)[0] >= -1e-12 * np.abs(y) @ np.linalg.norm(constraint_matrices(G0, C), axis=(1, 2))
    assert (y * s) @ C.bound < -1e-9 * scale


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_contradictory_pair_carries_a_verified_certificate(name):
    rng = np.random.default_rng(5)
    G0 = rng.standard_normal((10, 3))
    C = Constraints.from_lists([0, 0, 2], [1, 1, 3], ["dist_le", "dist_ge", "dist_le"], [1.0, 2.0, 5.0])
    with pytest.raises(InfeasibleError, match="certified") as err:
        SOLVERS[name](G0, C)
    verify_farkas(G0, C, err.value.certificate)
    assert np.count_nonzero(err.value.certificate["weights"][:2]) == 2


@pytest.mark.slow
def test_triangle_inequality_violation_is_certified():
    """d(a,c) >= l with d(a,b), d(b,c) <= u and l > 4u: infeasible in any Euclidean embedding."""
    rng = np.random.default_rng(3)
    G0 = rng.standard_normal((6, 4))
    C = Constraints.from_lists([0, 1, 0], [1, 2, 2], ["dist_le", "dist_le", "dist_ge"], [1.0, 1.0, 4.5])
    assert feasibility_margin(G0, C) < 0
    for solver in SOLVERS.values():
        with pytest.raises(InfeasibleError, match="certified") as err:
            solver(G0, C)
        verify_farkas(G0, C, err.value.certificate)


@pytest.fixture(scope="module")
def digits():
    if not has_mirror():
        pytest.skip("needs the dataset mirror (pendigits)")
    pytest.importorskip("cvxpy")
    from kernlearn_cli.registry import constraints, datasets, kernels
    from kernlearn_cli.rng import STREAM_CONSTRAINTS, component_rng

    ds = datasets.get("pendigits").func(digits=[3, 8, 9], n=317, subset_seed=0)
    G0 = kernels.get("linear").func(ds)

    def make(count, seed):
        return constraints.get("idealized_pairs").func(ds, G0, rng=component_rng(seed, STREAM_CONSTRAINTS),
                                                       count=count, epsilon=0.25)
    sets = [(count, seed, make(count, seed)) for count in (100, 150, 200, 250, 320) for seed in range(3)]
    return G0, [(count, seed, C, feasibility_margin(G0, C)) for count, seed, C in sets]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_digits_sets_straddling_the_feasibility_boundary(digits, name):
    """Kulis et al.'s Digits setting (rank-16 linear kernel, idealized constraints, 100-320 of them):
    no feasible set is refused, every converged result is within feas_tol, every refusal is proved."""
    G0, sets = digits
    kinds = {"feasible": 0, "infeasible": 0, "refused": 0, "converged": 0}
    for count, seed, C, margin in sets:
        kinds["feasible" if margin > 0 else "infeasible"] += 1
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                res = SOLVERS[name](G0, C, max_sweeps=3000)
        except InfeasibleError as err:
            kinds["refused"] += 1
            assert margin < 0, f"{count} constraints, seed {seed}: a strictly feasible set (margin {margin:.3g}) refused"
            verify_farkas(G0, C, err.certificate)
            continue
        viol = (C.violations(res.G) / np.abs(C.bound)).max()
        assert res.certificate["checks"]["max_violation"]["value"] == pytest.approx(viol, rel=1e-6, abs=1e-12)
        if res.converged:
            kinds["converged"] += 1
            assert viol <= 1e-3, f"{count} constraints, seed {seed}: converged at {viol:.3g} violation"
        else:
            assert res.certificate["stopped_by"] == "max_iter"
    assert kinds["feasible"] >= 5 and kinds["infeasible"] >= 5 and kinds["refused"] >= 3 and kinds["converged"] >= 5


@pytest.mark.slow
def test_a_feasible_slow_set_is_solved_not_refused(digits):
    """200 constraints, seed 2: strictly feasible (margin ~0.06) but slow; the old stall heuristic refused it."""
    G0, sets = digits
    (C, margin), = [(C, m) for count, seed, C, m in sets if (count, seed) == (200, 2)]
    assert margin > 0.01
    res = burg(G0, C)
    assert res.converged and res.iterations > 1000
    assert (C.violations(res.G) / np.abs(C.bound)).max() <= 1e-3


@pytest.fixture(scope="module")
def trace_margins(digits):
    """Five of the Digits sets (every third) with their feasibility margins for the trace-preserving problem."""
    G0, sets = digits
    trace = float(np.sum(G0 * G0))
    return [(count, seed, C, feasibility_margin(G0, C, trace=trace)) for count, seed, C, _ in sets[::3]]


def verify_weak_duality(G0, C, cert):
    """log Z(gamma) below log lambda_min(W1): log Z recomputed densely from the weights in the range of K0."""
    _, log_w1, _, log_z = definiteboost_dense(G0, C, cert["weights"])
    assert log_z < np.diag(log_w1).min()


#: The trace-preserving problem converges within max_steps on every set at least this far inside the
#: feasible region (measured margins of the five sets: 0.42, 0.090, 0.0022, -0.084, -6e-5).
CONVERGES_ABOVE = {"approximate": 0.1, "exact": 0.05}


@pytest.mark.slow
@pytest.mark.parametrize("projection", ["approximate", "exact"])
def test_definiteboost_on_digits_sets(digits, trace_margins, projection):
    """The trace-preserving problem on five sets: no feasible set is refused and a refusal carries its
    weak-duality certificate, checked densely; every result's certificate reports the violation recomputed
    here; converged means within 1e-3, and every set far enough inside the feasible region converges;
    a result that did not converge says it stopped at max_steps."""
    G0, _ = digits
    assert min(m for *_, m in trace_margins) < 0 < max(m for *_, m in trace_margins)
    for count, seed, C, margin in trace_margins:
        where = f"{count} constraints, seed {seed} (margin {margin:.3g})"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                res = definiteboost(G0, C, projection=projection, dual_correction=True, max_steps=30000)
        except InfeasibleError as err:
            assert margin < 0, f"{where}: a strictly feasible set refused"
            verify_weak_duality(G0, C, err.certificate)
            continue
        viol = (C.violations(res.G) / np.abs(C.bound)).max()
        check = res.certificate["checks"]["max_violation"]
        assert check["value"] == pytest.approx(viol, rel=1e-6, abs=1e-12) and check["tol"] == 1e-3, where
        assert check["met"] == (viol <= 1e-3), where
        if res.converged:
            assert viol <= 1e-3, where
        else:
            assert res.certificate["stopped_by"] == "max_iter", where
        if margin > CONVERGES_ABOVE[projection]:
            assert res.converged, f"{where}: not converged in 30000 steps"


@pytest.mark.parametrize("projection", ["approximate", "exact"])
@pytest.mark.parametrize("solver", ["definiteboost", "von_neumann"])
def test_near_duplicate_pairs(projection, solver):
    """A target with near-duplicate points (smallest bound <= 1e-5 x the largest): converged means
    every bound is met to 1e-3 relative, the tiny ones included."""
    if solver == "von_neumann" and projection == "approximate":
        pytest.skip("von_neumann projects exactly")
    rng = np.random.default_rng(0)
    n = 30
    X = rng.standard_normal((n, 4))
    X[1] = X[0] + 1e-3 * rng.standard_normal(4)
    X[3] = X[2] + 3e-3 * rng.standard_normal(4)
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 4)
    K *= n / np.trace(K)
    i = rng.integers(0, n, 60)
    j = (i + 1 + rng.integers(0, n - 1, 60)) % n
    i[:2], j[:2] = [0, 2], [1, 3]
    d = K[i, i] + K[j, j] - 2 * K[i, j]
    C = Constraints.from_lists(i, j, np.where(rng.integers(0, 2, 60) == 1, "dist_le", "dist_ge"), d)
    assert d.min() <= 1e-5 * d.max()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = definiteboost(np.eye(n), C, projection=projection) if solver == "definiteboost" \
            else von_neumann(np.eye(n), C)
    viol = C.violations(res.G) / np.abs(C.bound)
    assert res.converged and viol.max() <= 1e-3 and viol[:2].max() <= 1e-3


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_slack_only_where_certified_infeasible(name):
    """``slack_if_infeasible``: a feasible set gets exactly the hard solution, a certified infeasible one
    exactly the slack solution, with the evidence of infeasibility in its certificate."""
    solve = SOLVERS[name]
    rng = np.random.default_rng(3)
    G0 = rng.standard_normal((12, 4))
    ok = Constraints.from_lists([0, 2], [1, 3], ["dist_le", "dist_ge"], [1.0, 2.0])
    hard, auto = solve(G0, ok, tol=1e-6), solve(G0, ok, tol=1e-6, slack_if_infeasible=1.0)
    assert hard.converged and np.array_equal(auto.G, hard.G) and math.isinf(auto.info["slack"])
    assert auto.info["hard_sweeps"] == hard.iterations and "infeasible_support" not in auto.certificate["figures"]

    # infeasible by the triangle inequality: certified by the hard sweeps (a contradicting pair of rows is a
    # certificate before any sweep, tests/test_conflicts.py)
    bad = Constraints.from_lists([0, 1, 0], [1, 2, 2], ["dist_le", "dist_le", "dist_ge"], [1.0, 1.0, 4.5])
    with pytest.raises(InfeasibleError, match="certified") as err:
        solve(G0, bad, tol=1e-6)
    soft, auto = solve(G0, bad, tol=1e-6, slack=1.0), solve(G0, bad, tol=1e-6, slack_if_infeasible=1.0)
    assert soft.converged and np.array_equal(auto.G, soft.G) and auto.info["slack"] == 1.0
    figures = auto.certificate["figures"]
    assert figures["infeasible_combined_bound"] < 0 and figures["infeasible_support"] >= 2
    assert auto.info["hard_sweeps"] == err.value.certificate["sweeps"] >= 1
    assert "certified infeasible" in auto.certificate["rule"]


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_slack_if_infeasible_needs_hard_constraints(name):
    G0 = np.random.default_rng(0).standard_normal((6, 3))
    C = Constraints.from_lists([0], [1], ["dist_le"], [1.0])
    with pytest.raises(ConfigError, match="slack_if_infeasible"):
        SOLVERS[name](G0, C, slack=2.0, slack_if_infeasible=1.0)
    with pytest.raises(ConfigError, match="slack_if_infeasible"):
        SOLVERS[name](G0, C, slack_if_infeasible=0.0)


def test_constraint_violation_evaluator_checks_the_constraints_as_given():
    """``violation`` is recomputed from G against the original bounds (not the slack-adjusted ones);
    ``relaxed`` says whether the solver fell back to slack."""
    from kernlearn_cli.evaluate.kernel import constraint_violation

    rng = np.random.default_rng(3)
    G0 = rng.standard_normal((12, 4))
    bad = Constraints.from_lists([0, 0, 2], [1, 1, 3], ["dist_le", "dist_ge", "dist_le"], [1.0, 2.0, 1.0])
    res = burg(G0, bad, tol=1e-6, slack_if_infeasible=1.0)
    m = constraint_violation(res.G, None, rng=None, constraints=bad, result=res)
    K = res.G @ res.G.T
    d01, d23 = K[0, 0] + K[1, 1] - 2 * K[0, 1], K[2, 2] + K[3, 3] - 2 * K[2, 3]
    expected = max(d01 - 1.0, (2.0 - d01) / 2.0, d23 - 1.0, 0.0)
    assert m["relaxed"] == 1.0 and m["violation"] == pytest.approx(expected, rel=1e-10) and expected > 0.1
    assert m["bound_spread"] == 0.5
    ok = Constraints.from_lists([0], [1], ["dist_le"], [1.0])
    res = burg(G0, ok, tol=1e-6, slack_if_infeasible=1.0)
    m = constraint_violation(res.G, None, rng=None, constraints=ok, result=res)
    assert m["relaxed"] == 0.0 and m["violation"] <= 1e-3



def test_kernel_condition_is_the_ratio_of_extreme_eigenvalues_on_the_range():
    from kernlearn_cli.evaluate.kernel import kernel_condition

    rng = np.random.default_rng(1)
    Q = np.linalg.qr(rng.standard_normal((9, 3)))[0]
    G = Q * np.sqrt([50.0, 2.0, 0.5])                     # K = Q diag(50, 2, 0.5) Q^T, rank 3 of 9
    out = kernel_condition(G, None, rng=None)
    assert out == {"condition": pytest.approx(100.0, rel=1e-12), "kernel_rank": 3.0}
