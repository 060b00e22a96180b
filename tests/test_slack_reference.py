"""The slack (ITML) mode of both Bregman solvers against an independent convex solution (issue 45,
item 0): Burg's against cvxpy + Clarabel, von Neumann's against its Lagrange dual maximised by
L-BFGS-B.  The sets are infeasible as hard constraints at rank 4 (bounds at 0.3x and 3x the K0
distances), so the slack is active.  Tolerances sit about ten times above the largest error measured
(burg: objective 1.5e-12, K 1.5e-9, bhat 4.8e-9; von Neumann: 1.7e-8, 2.3e-8, 4.0e-7; 6 cases each).
A mutant halving either slack update (bhat, and through it K) misses them by orders of magnitude."""

import numpy as np
import pytest

from reference import burg_slack_convex_reference, von_neumann_slack_dual_reference
from kernlearn_cli.solvers.burg import burg, slack_penalty as burg_penalty
from kernlearn_cli.solvers.von_neumann import slack_penalty as von_neumann_penalty, von_neumann
from kernlearn_cli.types import Constraints

SOLVERS = {
    "burg": (lambda G0, C, gamma: burg(G0, C, slack=gamma, tol=1e-12, max_sweeps=200000, stop="dual_change"),
             burg_slack_convex_reference, burg_penalty, {"objective": 2e-11, "K": 2e-8, "bhat": 5e-8}),
    "von_neumann": (lambda G0, C, gamma: von_neumann(G0, C, slack=gamma, tol=1e-12, max_sweeps=200000),
                    von_neumann_slack_dual_reference, von_neumann_penalty,
                    {"objective": 2e-7, "K": 3e-7, "bhat": 4e-6}),
}


def infeasible_instance(seed, n=30, r=4, c=24):
    """Rank-4 G0 and c distance constraints asking 0.3x (``dist_le``) or 3x (``dist_ge``) the K0 distance."""
    rng = np.random.default_rng(seed)
    G0 = rng.standard_normal((n, r))
    i = rng.integers(0, n, c)
    j = (i + 1 + rng.integers(0, n - 1, c)) % n
    d0 = np.sum((G0[i] - G0[j]) ** 2, axis=1)
    kind = np.where(rng.random(c) < 0.5, "dist_le", "dist_ge")
    return G0, Constraints.from_lists(i, j, kind.tolist(), np.where(kind == "dist_le", 0.3 * d0, 3.0 * d0))


@pytest.mark.parametrize("name", SOLVERS)
@pytest.mark.parametrize("gamma", [0.5, 5.0])
@pytest.mark.parametrize("seed", range(3))
def test_slack_mode_matches_an_independent_solution(name, gamma, seed):
    solve, reference, penalty, tol = SOLVERS[name]
    G0, C = infeasible_instance(seed)
    K_ref, bhat_ref, objective_ref = reference(G0, C, gamma)
    res = solve(G0, C, gamma)
    K, bhat = res.G @ res.G.T, res.arrays["bhat"]
    assert res.converged
    assert np.abs(bhat / C.bound - 1).max() > 0.1                   # the slack is used, not idle
    assert abs(res.objective + penalty(bhat, C.bound, gamma) - objective_ref) <= tol["objective"] * abs(objective_ref)
    assert np.abs(K - K_ref).max() <= tol["K"] * np.abs(K_ref).max()
    assert np.abs(bhat / bhat_ref - 1).max() <= tol["bhat"]
