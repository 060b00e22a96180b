"""Config validation, overrides, grid expansion and the registries' error messages."""

import re

import pytest
import yaml

from kernlearn_cli.config import expand, load
from kernlearn_cli.errors import ConfigError

BASE = {
    "name": "t", "seed": 0,
    "dataset": {"name": "iris"}, "kernel": {"name": "linear"},
    "constraints": {"name": "idealized_pairs", "count": 10},
    "solver": {"name": "burg"}, "evaluate": [{"name": "knn_accuracy"}],
}


def write(tmp_path, cfg, name="c.yaml"):
    p = tmp_path / name
    p.write_text(yaml.safe_dump(cfg))
    return p


def test_grid_order_last_key_fastest(tmp_path):
    cfg = dict(BASE, grid={"constraints.count": [5, 10], "seed": "range(3)"})
    cells = expand(load(write(tmp_path, cfg)))
    assert [(c.config["constraints"]["count"], c.seed) for c in cells] == \
        [(5, 0), (5, 1), (5, 2), (10, 0), (10, 1), (10, 2)]
    assert [c.index for c in cells] == list(range(6))


def test_cell_ids_depend_on_values_not_position(tmp_path):
    a = expand(load(write(tmp_path, dict(BASE, grid={"constraints.count": [5, 10]}), "a.yaml")))
    b = expand(load(write(tmp_path, dict(BASE, grid={"constraints.count": [10, 5]}), "b.yaml")))
    assert a[0].id == b[1].id and a[1].id == b[0].id and a[0].id != a[1].id
    assert len({c.id for c in expand(load(write(tmp_path, dict(BASE, grid={"seed": "range(20)"}))))}) == 20


def test_set_overrides_and_seed(tmp_path):
    cfg = load(write(tmp_path, dict(BASE, grid={"seed": [1, 2]})), ["solver.tol=1e-6", "constraints.count=7"], seed=3)
    (cell,) = expand(cfg)
    assert cell.config["solver"]["tol"] == 1e-6 and cell.config["constraints"]["count"] == 7 and cell.seed == 3
    # a string that spells a number (quoted in YAML) is still accepted where a float is expected
    from kernlearn_cli.config import bind_cell
    quoted = expand(load(write(tmp_path, dict(BASE, grid={"seed": [1, 2]})), ["solver.tol='1e-6'"], seed=3))[0]
    assert bind_cell(quoted, "x")["solver"][1]["tol"] == 1e-6


def test_one_value_one_cell_however_it_is_written(tmp_path):
    """`--set solver.tol=1e-6`, `tol: 1e-6` and `tol: 1.0e-6` are one number, so one cell id
    (PyYAML's YAML 1.1 read 1e-6 as a string, and the same cell could run twice)."""
    ids = {expand(load(write(tmp_path, BASE, "a.yaml"), ["solver.tol=1e-6"]))[0].id}
    for text in ("tol: 1e-6", "tol: 1.0e-6", "tol: 0.000001"):
        path = tmp_path / "b.yaml"
        path.write_text(yaml.safe_dump(BASE).replace("name: burg", "name: burg\n  " + text))
        ids.add(expand(load(path))[0].id)
    assert len(ids) == 1


def test_one_cell_one_id_however_a_float_is_written(tmp_path):
    """Ids hash the validated settings: slack 1, 1.0, "1e0" and --set solver.slack=1 are one cell, in a
    grid too (its readable part shows the validated value)."""
    ids = {expand(load(write(tmp_path, BASE, "a.yaml"), ["solver.slack=1"]))[0].id}
    for value in (1, 1.0, "1e0"):
        ids.add(expand(load(write(tmp_path, dict(BASE, solver={"name": "burg", "slack": value}))))[0].id)
    assert len(ids) == 1
    grid = {expand(load(write(tmp_path, dict(BASE, grid={"solver.slack": [value]}))))[0].id for value in (1, 1.0, "1e0")}
    assert len(grid) == 1 and grid.pop().startswith("slack-1.0_")
    other = expand(load(write(tmp_path, dict(BASE, solver={"name": "burg", "slack": 2}))))[0].id
    assert other not in ids


@pytest.mark.parametrize("mutate, message", [
    (lambda c: c.update(solvr={"name": "burg"}), "unknown top-level key 'solvr'. Did you mean 'solver'?"),
    (lambda c: c["solver"].update(name="burgg"), "unknown solver 'burgg'. Did you mean 'burg'?"),
    (lambda c: c["solver"].update(tolerance=1e-3), "unknown key 'tolerance' for solver 'burg'"),
    (lambda c: c["solver"].update(max_sweeps="many"), "solver.max_sweeps: expected an int"),
    (lambda c: c["constraints"].update(count=2.5), "constraints.count: expected an int"),
    (lambda c: c.pop("dataset"), "missing required key 'dataset'"),
    (lambda c: c.update(grid={"constraints.count": "lots"}), "expected a list or 'range(...)'"),
    (lambda c: c.update(seed=-1), "'seed' must be an integer from 0 to 2**63 - 1"),
    (lambda c: c.update(evaluate=[{"name": "knn_accuracy", "k": 1}, {"name": "knn_accuracy", "k": 15}]),
     "evaluate[0] and evaluate[1] are both 'knn_accuracy' ({'k': 1} and {'k': 15}): one evaluator's metrics "
     "have one set of names, so the second would overwrite the first. Keep one entry and make the setting a grid "
     "axis (e.g. grid: {evaluate.0.k: [...]})"),
    (lambda c: c.update(evaluate=[{"name": "kernel_kmeans_nmi"}, {"name": "solver_info", "keys": ["rank", "nmi"]}]),
     "evaluate[0] ('kernel_kmeans_nmi') and evaluate[1] ('solver_info') both return the metric 'nmi', so the "
     "second would overwrite the first"),
    (lambda c: c.update(grid={"evaluate": [[{"name": "knn_accuracy"}], [{"name": "alignment"}]]}),
     "grid key 'evaluate': the list of evaluators is not a grid axis"),
])
def test_invalid_configs_name_the_problem(tmp_path, mutate, message):
    cfg = yaml.safe_load(yaml.safe_dump(BASE))
    mutate(cfg)
    with pytest.raises(ConfigError, match=re.escape(message)) as err:
        load(write(tmp_path, cfg))
    assert "c.yaml" in str(err.value)


def test_unknown_name_lists_valid_ones(tmp_path):
    cfg = yaml.safe_load(yaml.safe_dump(BASE))
    cfg["dataset"]["name"] = "irsi"
    with pytest.raises(ConfigError, match=r"Did you mean 'iris'\?.*Valid datasets: .*pendigits"):
        load(write(tmp_path, cfg))


def test_missing_file_and_bad_yaml(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load(tmp_path / "nope.yaml")
    p = tmp_path / "bad.yaml"
    p.write_text("name: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load(p)


def test_empty_grid_and_unknown_grid_key(tmp_path):
    with pytest.raises(ConfigError, match="'grid' must map dotted keys to non-empty lists"):
        load(write(tmp_path, dict(BASE, grid={})))
    with pytest.raises(ConfigError, match="grid key 'solver.tolerance' does not exist: solver 'burg' has no "
                                          "setting 'tolerance'. Did you mean 'tol'"):
        load(write(tmp_path, dict(BASE, grid={"solver.tolerance": [1, 2]})))
    with pytest.raises(ConfigError, match="grid key 'solvr.tol' does not start with a config key"):
        load(write(tmp_path, dict(BASE, grid={"solvr.tol": [1, 2]})))


def test_set_grid_axis(tmp_path):
    cfg = load(write(tmp_path, dict(BASE, grid={"seed": "range(20)"})), ["grid.seed=range(2)",
                                                                          "grid.constraints.count=[3, 4]"])
    assert [(c.seed, c.config["constraints"]["count"]) for c in expand(cfg)] == [(0, 3), (0, 4), (1, 3), (1, 4)]


AXES = {"constraints.count": [10, 30, 100], "seed": "range(3)"}


def refused(path, overrides, seed=None, every_cell=True) -> str:
    with pytest.raises(ConfigError) as err:
        load(path, overrides, seed, every_cell)
    return str(err.value)


def suggested(message: str) -> list[str]:
    """The ``--set grid.<axis>=<values>`` a message proposes, as the shell would pass it."""
    import shlex
    args = shlex.split(message.rsplit("instead: ", 1)[1].rstrip("."))
    return [args[args.index("--set", len(args) - 2) + 1]]


@pytest.mark.parametrize("every_cell", [True, False])
def test_set_of_a_grid_axis_is_refused_naming_the_axis(tmp_path, every_cell):
    """`--set constraints.count=50` under a count axis did nothing (the axis set every cell); it names the axis,
    and the override it proposes runs the value meant.  An array task (every_cell=False) refuses it too."""
    path = write(tmp_path, dict(BASE, grid=AXES))
    message = refused(path, ["constraints.count=50"], every_cell=every_cell)
    assert message == ("--set constraints.count=50: 'constraints.count' is a grid axis in " + str(path) + " (values 10, "
                       "30, 100), which sets it in every cell, so this override would do nothing; override the axis "
                       "instead: --set grid.constraints.count='[50]'.")
    cells = expand(load(path, suggested(message)))
    assert [(c.config["constraints"]["count"], c.seed) for c in cells] == [(50, 0), (50, 1), (50, 2)]
    # a new value of the mapping holding the axis: refused when it sets the axis's key, kept otherwise
    message = refused(path, ["constraints={name: idealized_pairs, count: 50}"], every_cell=every_cell)
    assert "'constraints' holds 'constraints.count', a grid axis" in message and suggested(message) == \
        ["grid.constraints.count=[50]"]
    cells = expand(load(path, ["constraints={name: idealized_pairs, epsilon: 0.1}"]))
    assert {(c.config["constraints"]["count"], c.config["constraints"]["epsilon"]) for c in cells} == \
        {(10, 0.1), (30, 0.1), (100, 0.1)}
    # an axis set by --set is named as such
    message = refused(path, ["grid.solver.tol=[1e-3, 1e-4]", "solver.tol=1e-6"], every_cell=every_cell)
    assert "'solver.tol' is a grid axis (from --set grid.solver.tol=[1e-3, 1e-4]) (values 0.001, 0.0001)" in message


def test_set_inside_a_grid_axis_is_refused_with_the_axis_it_means(tmp_path):
    path = write(tmp_path, dict(BASE, grid={"solver": [{"name": "burg"}, {"name": "burg", "slack": 2.0}]}))
    message = refused(path, ["solver.tol=1e-6"])
    assert "--set solver.tol=1e-6: 'solver.tol' lies in grid axis 'solver' in" in message
    cells = expand(load(path, suggested(message)))
    assert [c.config["solver"] for c in cells] == [{"name": "burg", "tol": 1e-6},
                                                   {"name": "burg", "slack": 2.0, "tol": 1e-6}]


@pytest.mark.parametrize("every_cell", [True, False])
def test_every_override_is_validated_like_the_config(tmp_path, every_cell):
    """`--set constraints.count=ten` under a count axis was accepted (no cell read it): it is checked as the
    config's own value would be, naming the key and what is valid, also in an array task."""
    path = write(tmp_path, dict(BASE, grid=AXES))
    assert refused(path, ["constraints.count=ten"], every_cell=every_cell) == \
        "--set constraints.count=ten: constraints.count: expected an int in [1, inf), got 'ten'."
    assert "constraints.count: expected an int in [1, inf), got 0." in \
        refused(path, ["constraints={name: idealized_pairs, count: 0}"], every_cell=every_cell)
    assert "'seed' must be an integer from 0 to 2**63 - 1" in refused(path, ["seed=ten"], every_cell=every_cell)


def test_set_seed_follows_the_rule_of_seed(tmp_path):
    """`--seed N` drops a seed axis; `--set seed=N` under a seed axis did nothing: it points at `--seed`. Without
    an axis both set the seed; given together, or with --set grid.seed, they are refused (one would do nothing)."""
    path = write(tmp_path, dict(BASE, grid=AXES))
    message = refused(path, ["seed=5"])
    assert "'seed' is a grid axis in" in message and "(values 0, 1, 2)" in message
    assert message.endswith("override the axis instead: --seed 5 (it sets every cell's seed and drops the seed "
                            "axis), or --set grid.seed='[5]'.")
    assert [c.seed for c in expand(load(path, seed=5))] == [5, 5, 5]
    plain = write(tmp_path, BASE, "plain.yaml")
    assert expand(load(plain, ["seed=5"]))[0].config == expand(load(plain, seed=5))[0].config
    assert "--seed 3 and --set seed=5 both set the seed" in refused(plain, ["seed=5"], seed=3)
    assert "--seed 3 and --set grid.seed=range(2) both set the seed" in refused(path, ["grid.seed=range(2)"], seed=3)


def test_two_evaluators_returning_one_metric_name_never_overwrite_each_other(tmp_path, monkeypatch):
    """Issue 55 item 4: an evaluator whose metric names an earlier one of the cell returned is refused
    (the run-time guard behind the check of duplicate evaluators), naming both."""
    import warnings

    from kernlearn_cli.evaluate import supervised
    from kernlearn_cli.registry import evaluators
    from kernlearn_cli.runner import run_config

    cfg = dict(BASE, dataset={"name": "two_gaussians", "n": 30, "dim": 3},
               constraints={"name": "random_pairs", "count": 10, "reference": {"name": "rbf"}},
               evaluate=[{"name": "alignment"}, {"name": "knn_accuracy"}])
    entry = evaluators.get("knn_accuracy")
    monkeypatch.setattr(entry, "func", lambda G, ds, *, rng, **kw: supervised.alignment(G, ds, rng=rng))
    with warnings.catch_warnings(), pytest.raises(ConfigError, match=re.escape(
            "c.yaml, seed 0: evaluate[1] 'knn_accuracy' returns metric(s) alignment, which an earlier evaluator")):
        warnings.simplefilter("ignore")
        run_config(write(tmp_path, cfg), tmp_path / "out", [], per_cell=False)
    assert not list((tmp_path / "out").glob("*/record.json"))          # nothing half-written
