"""The Bregman solvers' duality gap is a bound (issue 57, item 2), and their shuffled sweep order
(item 1): the certificate's primal is the reduced primal (the slacks minimised out for the kernel's own
constraint values), so F(K) >= p* >= g(lambda) whatever the iterate; checked against a convex solver's
optimum, and never negative on ITML's problem in any slack mode, order or stopping rule."""

import types

import numpy as np
import pytest

from kernlearn_cli.kernels import linear
from kernlearn_cli.registry import constraints as generators
from kernlearn_cli.registry import datasets, solvers
from kernlearn_cli.rng import component_rng
from kernlearn_cli.solvers._cyclic import reduced_slacks, relative_violations
from kernlearn_cli.solvers.burg import burg_dual
from kernlearn_cli.testing.instances import distance_pairs
from kernlearn_cli.types import Constraints


def itml(n=300, r=8, generator="itml_pairs"):
    ds = datasets.get("two_gaussians").func(n=n, dim=r)
    G0 = linear(ds)
    return G0, generators.get(generator).func(ds, G0, rng=component_rng(0, 1), count=n)


@pytest.mark.parametrize("slack", [0.1, 1.0, 10.0])
def test_burg_gap_brackets_the_optimum_of_a_convex_solver(slack):
    """min tr M - log det M - r + γ Σ (b̂/b - log(b̂/b) - 1) s.t. vᵢᵀ M vᵢ against b̂ᵢ, solved by Clarabel;
    the certificate's primal is above the optimum and its dual below, each within the solver's accuracy."""
    cp = pytest.importorskip("cvxpy")
    G0, C, _ = distance_pairs(0)
    G0 = np.linalg.qr(G0)[0] * 1.5                # full column rank: D(K, K0) is the r x r divergence of M
    res = solvers.get("burg").func(G0, C, slack=slack, stop="dual_change", tol=1e-4, max_sweeps=100000)
    r = G0.shape[1]
    M, bh = cp.Variable((r, r), PSD=True), cp.Variable(len(C))
    V = G0[C.i] - G0[C.j]
    vals = cp.hstack([cp.quad_form(v, M) for v in V])
    kinds = np.asarray(C.kind)
    from kernlearn_cli.kinds import EQUAL, LOWER, UPPER

    cons = [vals[k] <= bh[k] for k in np.flatnonzero(np.isin(kinds, UPPER))]
    cons += [vals[k] >= bh[k] for k in np.flatnonzero(np.isin(kinds, LOWER))]
    cons += [vals[k] == bh[k] for k in np.flatnonzero(np.isin(kinds, EQUAL))]
    ratio = cp.multiply(bh, 1.0 / C.bound)
    obj = cp.trace(M) - cp.log_det(M) - r + slack * cp.sum(ratio - cp.log(ratio) - 1)
    p_star = cp.Problem(cp.Minimize(obj), cons).solve(solver="CLARABEL")
    fig = res.certificate["figures"]
    scale = max(1.0, abs(p_star))
    assert fig["primal_objective"] >= p_star - 1e-6 * scale
    assert fig["dual_objective"] <= p_star + 1e-6 * scale
    assert fig["duality_gap"] >= -1e-9 * scale


@pytest.mark.parametrize("name", ["burg", "von_neumann"])
@pytest.mark.parametrize("generator", ["itml_pairs", "idealized_pairs"])
def test_the_gap_is_never_negative(name, generator):
    """On the old certificate (the slack targets b̂ of the last projection in the primal) a fixed-order
    run here had a gap of -4.9e-5 relative; the reduced primal is feasible, so the gap is a bound."""
    G0, C = itml(generator=generator)
    solve = solvers.get(name).func
    for order in ("fixed", "shuffled"):
        for stop, slack in (("dual_change", 1.0), ("certified", 1.0), ("dual_change", 100.0)):
            res = solve(G0, C, slack=slack, stop=stop, tol=1e-3, max_sweeps=5000, order=order)
            assert res.certificate["figures"]["relative_duality_gap"] >= -1e-10, (order, stop, slack)


def test_the_ITML_rules_certificate_reads_the_returned_kernel():
    """Under ``stop: dual_change`` the certificate's violations were those of K0 (the values of the
    first check, never refreshed); they are the learned kernel's."""
    G0, C = itml()
    res = solvers.get("burg").func(G0, C, slack=1.0, stop="dual_change", tol=1e-3, order="fixed")
    K = res.G @ res.G.T
    x = K[C.i, C.i] + K[C.j, C.j] - 2 * K[C.i, C.j]
    largest = float(relative_violations(x, C, res.arrays["bhat"]).max())       # against the slack targets
    assert res.certificate["figures"]["max_violation"] == pytest.approx(largest, rel=1e-6, abs=1e-12)
    K0 = G0 @ G0.T
    at_k0 = float(relative_violations(K0[C.i, C.i] + K0[C.j, C.j] - 2 * K0[C.i, C.j], C, res.arrays["bhat"]).max())
    assert at_k0 > 10 * largest


def test_the_dual_is_minus_infinity_off_its_domain_even_with_a_positive_determinant():
    """I + Σ s λ B with two negative eigenvalues has a positive determinant; its log det is not the dual."""
    C = Constraints(np.array([0]), np.array([1]), np.array([0], dtype=np.int8), np.array([1.0]))
    rc = types.SimpleNamespace(r=3, constraints=C, gram=lambda coef: np.diag([-3.0, -3.0, 1.0]))
    assert burg_dual(rc, np.array([1.0]), np.inf) == -np.inf


def test_reduced_slacks_are_the_closest_admissible_targets():
    C = Constraints(np.zeros(3, int), np.ones(3, int), np.array([0, 1, 4], dtype=np.int8), np.array([2.0, 2.0, 2.0]))
    from kernlearn_cli.kinds import KINDS

    assert [KINDS[k] for k in C.kind] == ["dist_le", "dist_ge", "dist_eq"]
    np.testing.assert_array_equal(reduced_slacks(np.array([3.0, 3.0, 3.0]), C), [3.0, 2.0, 3.0])
    np.testing.assert_array_equal(reduced_slacks(np.array([1.0, 1.0, 1.0]), C), [2.0, 1.0, 1.0])


@pytest.mark.parametrize("name", ["burg", "von_neumann"])
def test_the_shuffled_order_is_the_streams_and_reaches_the_fixed_orders_solution(name):
    G0, C = itml(400, 16)
    solve = solvers.get(name).func
    kw = dict(slack=1.0, stop="dual_change", tol=1e-6, max_sweeps=200000)
    a, b = (solve(G0, C, rng=np.random.default_rng(7), **kw) for _ in range(2))
    assert np.array_equal(a.G, b.G) and a.iterations == b.iterations            # same stream, same bits
    other = solve(G0, C, rng=np.random.default_rng(8), **kw)
    assert not np.array_equal(a.G, other.G)
    fixed = solve(G0, C, order="fixed", **kw)
    assert a.info["projections"] == a.iterations * len(C)                      # every constraint, every sweep
    assert abs(a.objective - fixed.objective) <= 1e-4 * abs(fixed.objective)
    assert a.iterations < fixed.iterations if name == "burg" else a.iterations <= 1.5 * fixed.iterations


@pytest.mark.parametrize("name", ["burg", "von_neumann"])
def test_stop_gap_ends_within_the_certified_gap(name):
    G0, C = itml(400, 16)
    solve = solvers.get(name).func
    res = solve(G0, C, slack=1.0, stop="gap", tol=1e-8, max_sweeps=100000)
    cert = res.certificate
    assert res.converged and set(cert["checks"]) == {"relative_duality_gap"}
    assert -1e-12 <= cert["figures"]["relative_duality_gap"] <= 1e-8       # non-negative up to rounding
    loose = solve(G0, C, slack=1.0, stop="dual_change", tol=1e-3, max_sweeps=100000)
    assert res.iterations >= loose.iterations
    with pytest.raises(Exception, match="stop 'gap'.*finite solver.slack"):
        solve(G0, C, stop="gap")
