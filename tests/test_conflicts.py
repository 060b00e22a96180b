"""Contradicting constraints (issue 44, item 3): two rows that bound one quantity incompatibly (d(i, j) or
K_ij, in either order of i and j) are refused before solving, naming both rows, whatever the order of the
rows and the mix of kinds, by every solver that enforces its constraints exactly; solvers with soft
constraints (slack, a loss) get the set as it is."""

import itertools
import math

import numpy as np
import pytest
import yaml

from kernlearn_cli.registry import constraints as generators
from kernlearn_cli.solvers._cyclic import conflict_certificate, signs
from kernlearn_cli.types import PAIR_KINDS, Constraints, Dataset

INTERVAL = {"le": lambda b: (-math.inf, b), "ge": lambda b: (b, math.inf), "eq": lambda b: (b, b)}


@pytest.mark.parametrize("first,second", list(itertools.product(PAIR_KINDS, repeat=2)))
@pytest.mark.parametrize("bounds", [(1.0, 5.0), (5.0, 1.0), (2.0, 2.0)])
@pytest.mark.parametrize("swap", [False, True])
def test_conflicts_are_empty_intersections_of_the_bounds_on_one_quantity(first, second, bounds, swap):
    """Two rows on pair (0, 1) conflict iff they bound the same quantity (dist or sim) and the intervals
    they allow do not meet; (1, 0) is the same pair."""
    C = Constraints.from_lists([0, 1 if swap else 0], [1, 0 if swap else 1], [first, second], list(bounds))
    (lo1, hi1), (lo2, hi2) = (INTERVAL[k[-2:]](b) for k, b in zip((first, second), bounds))
    disjoint = first[:4] == second[:4] and max(lo1, lo2) > min(hi1, hi2)
    assert C.conflicts().tolist() == ([[0, 1]] if disjoint else [])
    cert = conflict_certificate(C)
    assert (cert is not None) == disjoint
    if disjoint:         # a Farkas certificate: y >= 0 off equalities, S(y) = (sum_i y_i s_i) B = 0, sum y s b = -1
        y, s = cert["weights"], signs(C)
        assert all(w >= 0 for w, k in zip(y, (first, second)) if not k.endswith("eq"))
        assert y @ s == pytest.approx(0.0, abs=1e-15) and (y * s) @ C.bound == pytest.approx(-1.0)


def test_conflicts_name_the_tightest_rows_of_each_quantity_ordered_by_the_later_row():
    C = Constraints.from_lists(
        [4, 0, 0, 2, 1, 7, 3, 7],
        [5, 1, 1, 3, 0, 7, 2, 7],
        ["dist_le", "dist_ge", "dist_le", "sim_eq", "dist_le", "sim_le", "sim_eq", "sim_ge"],
        [9.0, 5.0, 1.0, 1.0, 0.5, 1.0, 0.0, 1.0])
    # d(0, 1): largest lower bound 5 (row 1), smallest upper 0.5 (row 4); K_23 = 1 and = 0; K_77 in [1, 1]
    assert C.conflicts().tolist() == [[1, 4], [3, 6]]
    assert Constraints.triplets([0, 0], [1, 2], [2, 1]).conflicts().shape == (0, 2)


def test_built_in_generators_produce_no_conflicts():
    """Streams repeat pairs (in both orders) with the same label; the others draw each pair once."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12, 3))
    ds = Dataset("toy", X=X, y=np.arange(12) % 3)
    for name, params in [("distance_stream", {"count": 3000}), ("random_pairs", {"count": 60}),
                         ("idealized_pairs", {"count": 60}), ("itml_pairs", {"count": 60}),
                         ("must_cannot", {}), ("labeled_subset", {"count": 8}),
                         ("labeled_subset", {"count": 8, "form": "distances"}), ("threshold_pairs", {"gamma_scale": 5.0})]:
        C = generators.get(name).func(ds, X, rng=np.random.default_rng(1), **params)
        assert C.conflicts().shape == (0, 2), name


ORDERS = {  # the pair in both orders, with i and j swapped, and a similarity pair
    "le_first": ["0,1,dist_le,1.0", "0,1,dist_ge,5.0"],
    "ge_first": ["0,1,dist_ge,5.0", "0,1,dist_le,1.0"],
    "swapped_ij": ["1,0,dist_le,1.0", "0,1,dist_ge,5.0"],
    "sim": ["0,1,sim_le,0.1", "1,0,sim_ge,0.9"],
}


def config(tmp_path, rows, solver, **extra):
    csv = tmp_path / "pairs.csv"
    csv.write_text("\n".join(["i,j,kind,bound", "3,4,dist_le,0.5", *rows]) + "\n")
    cfg = {"name": "conflict", "seed": 0, "dataset": {"name": "iris"}, "kernel": {"name": "rbf"},
           "constraints": {"name": "from_file", "path": str(csv)}, "solver": solver, "evaluate": [], **extra}
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.mark.parametrize("order", sorted(ORDERS))
@pytest.mark.parametrize("solver", [{"name": "burg", "max_sweeps": 5}, {"name": "von_neumann", "max_sweeps": 5},
                                    {"name": "definiteboost", "max_steps": 20}])
def test_a_contradicting_pair_in_a_file_is_refused_before_solving(tmp_path, inproc, order, solver):
    code, out, err = inproc("run", config(tmp_path, ORDERS[order], solver), "--out", tmp_path / "out")
    assert code == 2 and "Traceback" not in err
    assert err.count("kernlearn: error:") == 1
    message = " ".join(err.split())
    first, second = ORDERS[order]
    assert f"line 3 ({first})" in message and f"line 4 ({second})" in message
    assert "refused before solving" in message and f"Solver '{solver['name']}'" in message
    assert ("d(0, 1)" if "dist" in first else "K(0, 1)") in message
    assert not (tmp_path / "out").exists()


def test_every_conflicting_pair_is_counted(tmp_path, inproc):
    rows = ["0,1,dist_le,1.0", "5,6,sim_eq,1.0", "0,1,dist_ge,5.0", "6,5,sim_eq,0.0"]
    code, _, err = inproc("run", config(tmp_path, rows, {"name": "burg"}), "--out", tmp_path / "out")
    message = " ".join(err.split())
    assert code == 2 and "line 3 (0,1,dist_le,1.0)" in message and "line 5 (0,1,dist_ge,5.0)" in message
    assert "1 more pair(s) of lines contradict each other: 4 and 6." in message


def test_soft_constraints_take_the_contradicting_pair(tmp_path, inproc):
    """ITML slack trades the two violations against the divergence: the run converges."""
    path = config(tmp_path, ORDERS["le_first"], {"name": "burg", "slack": 1.0})
    code, out, err = inproc("run", path, "--out", tmp_path / "out")
    assert code == 0, err
    record = next((tmp_path / "out").glob("*/record.json")).read_text()
    assert '"converged": true' in record


def test_a_hard_cell_of_a_grid_is_refused_before_any_cell_runs(tmp_path, inproc):
    """The check of a run covers each constraint set under a soft and under an exact solver."""
    path = config(tmp_path, ORDERS["sim"], {"name": "von_neumann", "max_sweeps": 5},
                  grid={"solver.slack": [1.0, math.inf]})
    code, _, err = inproc("run", path, "--out", tmp_path / "out")
    assert code == 2 and "refused before solving" in err and "solver.slack = inf" in " ".join(err.split())
    assert not (tmp_path / "out").exists()


def test_the_estimators_refuse_a_contradicting_pair():
    from kernlearn_cli.estimators import BurgKernel

    X = np.random.default_rng(0).standard_normal((20, 3))
    C = Constraints.from_lists([0, 1], [1, 0], ["dist_le", "dist_ge"], [1.0, 5.0])
    with pytest.raises(ValueError, match=r"constraint #0 \(0,1,dist_le,1.0\) asks d\(0, 1\) <= 1.0 and "
                                         r"constraint #1 \(1,0,dist_ge,5.0\) asks d\(0, 1\) >= 5.0"):
        BurgKernel(max_sweeps=5).fit(X, constraints=C)
    assert BurgKernel(slack=1.0).fit(X, constraints=C).converged_


@pytest.mark.parametrize("name", ["burg", "von_neumann"])
def test_slack_if_infeasible_switches_on_a_contradicting_pair_without_a_hard_solve(name):
    """A similarity pair the hard sweeps never certify (they ran to max_sweeps) is a certificate by itself."""
    from kernlearn_cli.registry import solvers

    solve = solvers.get(name).func
    G0 = np.random.default_rng(3).standard_normal((12, 4))
    C = Constraints.from_lists([0, 3, 1], [1, 2, 0], ["dist_le", "dist_ge", "dist_ge"], [1.0, 2.0, 5.0])
    auto, soft = solve(G0, C, slack_if_infeasible=1.0), solve(G0, C, slack=1.0)
    assert np.array_equal(auto.G, soft.G) and auto.info["slack"] == 1.0 and auto.info["hard_sweeps"] == 0
    figures = auto.certificate["figures"]
    assert figures["infeasible_support"] == 2 and figures["infeasible_combined_bound"] == -1.0
    if name == "von_neumann":                      # burg's slack form takes no off-diagonal similarity
        C = Constraints.from_lists([0, 1], [1, 0], ["sim_le", "sim_ge"], [0.1, 0.9])
        auto, soft = solve(G0, C, slack_if_infeasible=1.0, max_sweeps=50), solve(G0, C, slack=1.0, max_sweeps=50)
        assert np.array_equal(auto.G, soft.G) and auto.info["hard_sweeps"] == 0
