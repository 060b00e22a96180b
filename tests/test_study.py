"""Study files and ``kernlearn reproduce``: the loader's checks, the rules against closed forms,
verdicts, and a tiny study run end to end (tables, figure, verdicts, page, status table, resume)."""

import math
from pathlib import Path

import pandas as pd
import pytest
import yaml

from kernlearn_cli.errors import ConfigError
from kernlearn_cli.study import (Rule, find_studies, judge, load_study, paper_item, study_names, verdict_table,
                                 verdicts)

REPO = Path(__file__).resolve().parents[1]
CONFIG = {"name": "tiny", "seed": 0, "grid": {"constraints.count": [10, 30], "seed": "range(2)"},
          "dataset": {"name": "iris"}, "kernel": {"name": "linear"},
          "constraints": {"name": "idealized_pairs", "count": 10}, "solver": {"name": "burg", "slack": 1.0},
          "evaluate": [{"name": "knn_accuracy", "k": 5, "repeats": 2}]}
STUDY = {
    "paper": "tinypaper", "title": "A tiny paper", "summary": "Burg on iris.", "protocol": "Two counts.",
    "experiments": {"burg": {"config": "tiny.yaml", "quick": {"set": ["grid.seed=range(1)"]}},
                    "initial": {"config": "tiny.yaml", "set": ["solver={name: initial}", "grid.constraints.count=[10]"],
                                "quick": False}},
    "tables": {"tiny_acc": {"title": "5-NN accuracy", "from": ["burg"], "metric": "knn_accuracy",
                            "rows": "constraints.count", "cols": "solver", "text": "It rises."},
               "tiny_long": {"from": ["burg", "initial"]}},
    "figures": {"tiny_acc.png": {"title": "accuracy", "from": ["burg"],
                                 "plot": {"metric": "knn_accuracy", "x": "constraints.count"}}},
    "numbers": [
        {"table": "tiny_acc", "row": 30, "col": "burg", "paper": 0.0, "rule": "at_least", "where": "Fig. 1, a bound"},
        {"table": "tiny_acc", "row": 10, "col": "burg", "paper": 2.0, "std": 0.1, "where": "Table 9, row 10",
         "explanation": "Accuracy cannot exceed 1."},
        {"table": "tiny_acc", "row": 99, "col": "burg", "paper": 0.5, "rule": "abs 0.1", "where": "Table 9, row 99"},
    ],
}


def write_study(folder: Path, study=None, config=None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tiny.yaml").write_text(yaml.safe_dump(config or CONFIG))
    path = folder / "study.yaml"
    path.write_text(yaml.safe_dump(study or STUDY, sort_keys=False))
    return path


# ---- the rules, against their definitions ---------------------------------------------------

@pytest.mark.parametrize("rule, ours, paper, std, holds", [
    (Rule("sigma", 2), 1.19, 1.0, 0.1, True), (Rule("sigma", 2), 1.21, 1.0, 0.1, False),
    (Rule("sigma", 2), 0.81, 1.0, 0.1, True), (Rule("factor", 3), 30, 10, None, True),
    (Rule("factor", 3), 31, 10, None, False), (Rule("factor", 3), 3.4, 10, None, True),
    (Rule("factor", 3), 3.3, 10, None, False), (Rule("rel", 0.1), 0.89, 1.0, None, False),
    (Rule("rel", 0.1), -1.05, -1.0, None, True), (Rule("abs", 0.02), 0.93, 0.95, None, True),
    (Rule("abs", 0.02), 0.92, 0.95, None, False), (Rule("at_most"), 600, 600, None, True),
    (Rule("at_most"), 601, 600, None, False), (Rule("at_least"), 0.95, 0.948, None, True),
])
def test_rules(rule, ours, paper, std, holds):
    assert rule.holds(ours, paper, std) is holds


def test_default_rules_and_sigmas(tmp_path):
    study = load_study(write_study(tmp_path / "tinypaper"))
    assert [str(n.rule) for n in study.numbers] == ["at_least", "2sigma", "abs 0.1"]
    verdict, sigmas = judge(study.numbers[1], 0.9)
    assert verdict == "deviates" and math.isclose(sigmas, (0.9 - 2.0) / 0.1)
    assert judge(study.numbers[0], None) == ("missing", None)


# ---- the loader refuses what it cannot honour, naming the file and the key --------------------

def _bad(tmp_path, change):
    study = yaml.safe_load(yaml.safe_dump(STUDY))
    change(study)
    return write_study(tmp_path / "tinypaper", study)


@pytest.mark.parametrize("change, words", [
    (lambda s: s.update(extra=1), "unknown key(s) extra"),
    (lambda s: s.update(paper="other"), "must be the name of the study's folder"),
    (lambda s: s["experiments"]["burg"].update(config="nope.yaml"), "experiments.burg.config"),
    (lambda s: s["experiments"]["burg"].update(out="../x"), "experiments.burg.out"),
    (lambda s: s["experiments"]["burg"].update(jobs=0), "experiments.burg.jobs"),
    (lambda s: s["tables"]["tiny_acc"].update({"from": ["nope"]}), "no experiment 'nope'"),
    (lambda s: s["tables"]["tiny_acc"].update(agg="median"), "tables.tiny_acc.agg"),
    (lambda s: s["tables"]["tiny_acc"].update(capped="bound"), "tables.tiny_acc.capped"),
    (lambda s: s["tables"]["tiny_long"].update(rows="seed"), "give metric too"),
    (lambda s: s["figures"].update({"x.gif": {"from": ["burg"], "plot": {"metric": "nmi"}}}), "figures.x.gif"),
    (lambda s: s["figures"]["tiny_acc.png"].update(history={}), "exactly one of plot"),
    (lambda s: s["numbers"][0].update(table="tiny_long"), "long table"),
    (lambda s: s["numbers"][0].update(table="nope"), "no table 'nope'"),
    (lambda s: s["numbers"][0].update(rule="3sigma"), "needs the paper's std"),
    (lambda s: s["numbers"][0].update(rule="within 5"), "is not one of"),
    (lambda s: s["numbers"][0].update(rule="factor 0.5"), "must be >= 1"),
    (lambda s: s["numbers"][0].update(rule="rel 1e"), "is not a number"),
    (lambda s: s["numbers"][0].update(paper="high"), "numbers[0].paper"),
    (lambda s: s["numbers"][0].pop("where"), "missing where"),
])
def test_loader_errors(tmp_path, change, words):
    path = _bad(tmp_path, change)
    with pytest.raises(ConfigError) as err:
        load_study(path)
    assert str(path) in str(err.value) and words in str(err.value)


def test_unknown_paper_names_the_valid_ones():
    with pytest.raises(ConfigError, match="did you mean 'kulis2006'|Did you mean 'kulis2006'"):
        find_studies("kulis2060", REPO / "configs" / "papers")


@pytest.mark.parametrize("where, item", [
    ("Table 3, sonar", "Table 3"),
    ("§6.1 text: 'for the Burg divergence, between 17 and 354 sweeps'", "§6.1 text"),
    ("§6.1 text (GyrB, 100 constraints): 'it took 3220 sweeps'", "§6.1 text"),
    ("Sec. 5; the GyrB target", "Sec. 5"),
    ("Fig. 2 caption", "Fig. 2 caption"),
])
def test_paper_item_is_the_table_figure_or_section(where, item):
    """The README's status table has one row per paper item, whatever the quote after it holds."""
    assert paper_item(where) == item


@pytest.mark.parametrize("paper", study_names(REPO / "configs" / "papers"))
def test_every_paper_study_checks(paper, monkeypatch):
    """Each committed study loads (so each number names a table of the study with a metric) and its
    configs expand, full and quick."""
    from kernlearn_cli.reproduce import check

    monkeypatch.chdir(REPO)
    study = load_study(REPO / "configs" / "papers" / paper / "study.yaml")
    assert check(study, quick=False) >= check(study, quick=True) > 0


def test_verdict_labels_match_as_numbers(tmp_path):
    """A YAML row label 1e-3 (a string to YAML 1.1) finds the entry 0.001."""
    study = load_study(write_study(tmp_path / "tinypaper"))
    number = study.numbers[2]
    study.numbers = [type(number)("tiny_acc", "1e-3", "burg", 0.5, None, Rule("abs", 0.1), "x")]
    entries = {"tiny_acc": pd.DataFrame({"row": [0.001], "col": ["burg"], "value": [0.55], "std": [0.0],
                                         "seeds": [2], "unconverged": [1]})}
    v = verdicts(study, entries)
    assert v.loc[0, "verdict"] == "reproduced" and v.loc[0, "unconverged"] == 1
    assert "†" in verdict_table(v)


@pytest.mark.parametrize("rule, ours, paper, verdict", [
    (Rule("factor", 3), 10000, 6733.9, "lower bound"),      # the true count may be 10001 or 1e6
    (Rule("factor", 3), 10000, 1000, "deviates"),            # every count from 10000 up is > 3 x 1000
    (Rule("factor", 3), 100, 1000, "lower bound"),           # below the band, but the truth may be in it
    (Rule("at_least"), 10000, 10000, "reproduced"),          # the paper's "> 10000"
    (Rule("at_least"), 5000, 10000, "lower bound"),
    (Rule("at_most"), 700, 600, "deviates"),
    (Rule("sigma", 2), 1.05, 1.0, "lower bound"), (Rule("sigma", 2), 1.2, 1.0, "deviates"),
])
def test_a_capped_count_is_judged_as_a_lower_bound(rule, ours, paper, verdict):
    from kernlearn_cli.study import Number
    n = Number("t", 1, "x", paper, 0.05 if rule.kind == "sigma" else None, rule, "Table 1")
    assert judge(n, ours, lower_bound=True)[0] == verdict
    assert judge(n, ours)[0] == ("reproduced" if rule.holds(ours, paper, n.std) else "deviates")


def test_capped_cells_make_lower_bounds_only_where_the_table_says_so(tmp_path):
    """entry_stats counts the cells stopped on a budget; a `capped: lower_bound` table turns their
    entries into lower bounds, a `capped: value` table (the default) judges them as they are."""
    from kernlearn_cli.report import entry_stats

    df = pd.DataFrame({"dataset": ["a", "a", "b"], "solver": ["s"] * 3, "iterations": [10000, 9000, 5000],
                       "converged": [False, True, True], "cert_stopped_by": ["max_path_iter", "tolerance", "tolerance"]})
    stats = entry_stats(df, "iterations", "dataset", "solver")
    assert list(stats["capped"]) == [1, 0] and list(stats["unconverged"]) == [1, 0]
    for capped, verdict in (("value", "reproduced"), ("lower_bound", "lower bound")):
        spec = yaml.safe_load(yaml.safe_dump(STUDY))
        spec["tables"]["tiny_acc"]["capped"] = capped
        spec["numbers"] = [{"table": "tiny_acc", "row": "a", "col": "s", "paper": 6733.9, "rule": "factor 3",
                            "where": "Table 4"},
                           {"table": "tiny_acc", "row": "b", "col": "s", "paper": 6733.9, "rule": "factor 3",
                            "where": "Table 4"}]
        study = load_study(write_study(tmp_path / capped / "tinypaper", spec))
        v = verdicts(study, {"tiny_acc": stats})
        assert list(v["verdict"]) == [verdict, "reproduced"] and list(v["capped"]) == [1, 0]


# ---- end to end -------------------------------------------------------------------------------

def test_reproduce_end_to_end(tmp_path, inproc):
    path = write_study(tmp_path / "tinypaper")
    readme = tmp_path / "README.md"
    readme.write_text("# x\n\n<!-- kernlearn:status -->\n<!-- /kernlearn:status -->\n")
    results, docs = tmp_path / "results", tmp_path / "docs"
    args = ["reproduce", path, "--results", results, "--docs", docs, "--readme", readme, "--jobs", "1"]

    code, out, err = inproc(*args, "--quick")
    assert code == 0, err
    quick = results / "quick"
    assert (quick / "tinypaper" / "burg").is_dir() and not (quick / "tinypaper" / "initial").exists()
    assert "1 of 3 reproduced (1 deviates, 1 missing)" in out and "[1] Accuracy cannot exceed 1." in out
    assert "kernlearn:status -->\n<!--" in readme.read_text()           # a quick run leaves the README alone

    code, out, err = inproc(*args)
    assert code == 0, err
    acc = pd.read_csv(results / "tables" / "tiny_acc.csv")
    assert list(acc.columns) == ["constraints.count", "burg"] and len(acc) == 2
    assert (results / "tables" / "tiny_long.md").is_file() and (results / "figures" / "tiny_acc.png").is_file()
    v = pd.read_csv(results / "tables" / "tinypaper_verdicts.csv")
    assert list(v["verdict"]) == ["reproduced", "deviates", "missing"] and (v["seeds"][:2] == 2).all()
    page = (docs / "tinypaper.md").read_text()
    assert "## 5-NN accuracy" in page and "It rises." in page and "Accuracy cannot exceed 1." in page
    assert "![accuracy](../results/figures/tiny_acc.png)" in page
    status = readme.read_text()
    assert "| A tiny paper | Fig. 1 | `kernlearn reproduce tinypaper` | 1 of 1 |" in status
    assert "|  | Table 9 |  | 0 of 2 |  |" in status

    before = {p: p.read_bytes() for p in (results / "tables").glob("tiny_acc.*")}
    code, out, err = inproc(*args)                       # resumes: nothing left to run, same tables
    assert code == 0 and "0 cell(s) run, 0 already finished, 0 failed, 4 archived" in err
    assert {p: p.read_bytes() for p in before} == before


def test_reproduce_check_and_bad_launcher(tmp_path, inproc):
    path = write_study(tmp_path / "tinypaper")
    code, out, _ = inproc("reproduce", path, "--check")
    assert code == 0 and "tinypaper: ok (2 experiment(s), 6 cell(s), 2 table(s), 1 figure(s), 3 paper number(s))" in out
    code, _, err = inproc("reproduce", path, "--launcher", "pbs", "--results", tmp_path / "r")
    assert code == 2 and "expected local or slurm" in err and not (tmp_path / "r").exists()


def test_plot_paths_mean_over_seeds(tmp_path):
    """A path figure averages a list metric over the cells, point by point, and rings unconverged ones."""
    import json

    from kernlearn_cli.errors import KernlearnError
    from kernlearn_cli.report import plot_paths

    base = {"experiment": "e", "grid": {}, "solver": "trin", "dataset": "d", "constraints": 1, "n": 3,
            "rank0": 3, "iterations": 1, "objective": 0.0, "seconds": 0.1}
    for seed, errors, converged in ((0, [0.3, 0.2], True), (1, [0.5, 0.4], False)):
        cell = tmp_path / "out" / f"c{seed}"
        cell.mkdir(parents=True)
        (cell / "record.json").write_text(json.dumps({**base, "cell": f"c{seed}", "seed": seed, "converged": converged,
                                                      "metrics": {"error_path": errors, "gamma_path": [0.25, 4.0]}}))
    assert plot_paths([tmp_path / "out"], "error_path", "gamma_path", logx=True, output=tmp_path / "p.png") == 1
    assert (tmp_path / "p.png").stat().st_size > 0
    with pytest.raises(ConfigError, match="no list metrics 'error' and 'gamma_path'"):
        plot_paths([tmp_path / "out"], "error", "gamma_path", output=tmp_path / "q.png")
    rec = json.loads((tmp_path / "out" / "c1" / "record.json").read_text())
    rec["metrics"]["gamma_path"] = [0.5, 4.0]
    (tmp_path / "out" / "c1" / "record.json").write_text(json.dumps(rec))
    with pytest.raises(KernlearnError, match="different 'gamma_path' paths"):
        plot_paths([tmp_path / "out"], "error_path", "gamma_path", output=tmp_path / "r.png")
