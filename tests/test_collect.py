"""``collect``: a paper table (``-m``, ``--rows``, ``--cols``) groups cells by the rule of the long
table, so cells of different settings are never averaged into one entry (issue 44, item 6)."""

import json
from pathlib import Path

import pytest

from kernlearn_cli.errors import ConfigError
from kernlearn_cli.report.records import load_records
from kernlearn_cli.report.tables import pivot, pooled_settings, summarize

K1 = [{"name": "knn_accuracy", "k": 1, "repeats": 2}]
K5 = [{"name": "knn_accuracy", "k": 5, "repeats": 2}]


def write_cell(root: Path, count: int, seed: int, evaluate: list, experiment: str = "tiny") -> None:
    """A finished cell of a ``constraints.count`` x ``seed`` grid, evaluated by ``evaluate``."""
    cell = f"count-{count}_seed-{seed}_k{evaluate[0]['k']}"
    folder = root / cell
    folder.mkdir(parents=True)
    config = {"name": experiment, "seed": seed, "dataset": {"name": "iris"}, "solver": {"name": "burg"},
              "constraints": {"name": "idealized_pairs", "count": count}, "evaluate": evaluate}
    record = {"experiment": experiment, "cell": cell, "grid": {"constraints.count": count, "seed": seed},
              "seed": seed, "solver": "burg", "dataset": "iris", "constraints": count, "n": 150, "rank0": 4,
              "converged": True, "iterations": 10, "objective": 0.1, "seconds": 0.01, "config": config,
              "metrics": {"knn_accuracy": 0.9 + evaluate[0]["k"] / 100 + seed / 1000}}
    (folder / "record.json").write_text(json.dumps(record))


@pytest.fixture
def two_runs(tmp_path):
    """The issue's case: two folders of one config, ``evaluate`` k = 1 and k = 5, overlapping seeds."""
    for root, evaluate, seeds in ((tmp_path / "A", K5, range(3)), (tmp_path / "B", K1, range(1, 4))):
        for count in (10, 30):
            for seed in seeds:
                write_cell(root, count, seed, evaluate)
    return tmp_path / "A", tmp_path / "B"


def test_paper_table_refuses_to_pool_what_the_long_table_keeps_apart(two_runs):
    df, _ = load_records(list(two_runs))
    assert len(summarize(df)) == 4 and set(summarize(df)["seeds"]) == {3}       # long table: 2 counts x 2 k
    mixed = pooled_settings(df, ["constraints.count", "solver"])
    assert list(mixed) == [(10, "burg"), (30, "burg")]
    assert mixed[(10, "burg")] == {"evaluate": {json.dumps(K1): 3, json.dumps(K5): 3}}
    with pytest.raises(ConfigError, match="2 entries would average cells whose settings differ") as refused:
        pivot(df, "knn_accuracy", "constraints.count", "solver")
    text = str(refused.value)
    assert "2 entries would average cells whose settings differ apart from the seed" in text
    assert "constraints.count = 10, solver = burg, mixes evaluate:" in text and "(3 cells)" in text
    assert "--rows evaluate or --cols evaluate" in text
    table = pivot(df, "knn_accuracy", "constraints.count", "evaluate")       # split by the setting: 3 cells each
    assert list(table.columns) == ["constraints.count", json.dumps(K1), json.dumps(K5)]
    assert table[json.dumps(K5)].tolist() == ["0.951 ± 0.001", "0.951 ± 0.001"]
    assert pooled_settings(load_records([two_runs[0]])[0], ["constraints.count", "solver"]) == {}


def test_collect_pivot_over_two_experiments_names_the_experiment(tmp_path):
    """Two experiments of one solver: a table by solver would average them; by experiment it does not."""
    for name, evaluate in (("exp_a", K5), ("exp_b", K5)):
        for seed in range(2):
            write_cell(tmp_path / name, 10, seed, evaluate, experiment=name)
    df, _ = load_records([tmp_path / "exp_a", tmp_path / "exp_b"])
    with pytest.raises(ConfigError, match="mixes experiment: 'exp_a' .2 cells. or 'exp_b' .2 cells."):
        pivot(df, "knn_accuracy", "constraints.count", "solver")
    assert pivot(df, "knn_accuracy", "constraints.count").columns.tolist() == ["constraints.count", "exp_a", "exp_b"]


def test_collect_command_refuses_in_one_paragraph_and_writes_nothing(two_runs, inproc, tmp_path):
    a, b = two_runs
    code, out, err = inproc("collect", a, b, "-m", "knn_accuracy", "--rows", "constraints.count", "--cols", "solver",
                            "--prefix", tmp_path / "both")
    assert code == 2 and out == "" and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and "--rows evaluate or --cols evaluate" in err
    assert not list(tmp_path.glob("both*"))
    code, out, err = inproc("collect", a, b, "-m", "knn_accuracy", "--cols", "evaluate", "--prefix", tmp_path / "both")
    assert code == 0, err
    assert "0.951 ± 0.001" in out and (tmp_path / "both.md").is_file()
