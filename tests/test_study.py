"""Study files and ``kernlearn reproduce``: the loader's checks, the rules against closed forms,
verdicts, and a tiny study run end to end (tables, figure, verdicts, page, status table, resume)."""

import math
import re
from dataclasses import replace

import numpy as np
from pathlib import Path

import pandas as pd
import pytest
import yaml

from kernlearn_cli.errors import ConfigError
from kernlearn_cli.study.budget import labelings_by_budget
from kernlearn_cli.study.find import find_studies, study_names
from kernlearn_cli.study.reader import load_study
from kernlearn_cli.verdicts import Entry, Rule, Statement, paper_item, verdict_table, verdicts

REPO = Path(__file__).resolve().parents[1]
CONFIG = {"name": "tiny", "seed": 0, "grid": {"constraints.count": [10, 30], "seed": "range(2)"},
          "dataset": {"name": "iris"}, "kernel": {"name": "linear"},
          "constraints": {"name": "idealized_pairs", "count": 10}, "solver": {"name": "burg", "slack": 1.0},
          "evaluate": [{"name": "knn_accuracy", "k": 5, "repeats": 2}]}
STUDY = {
    "paper": "tinypaper", "title": "A tiny paper",
    "experiments": {"burg": {"config": "tiny.yaml", "quick": {"set": ["grid.seed=range(1)"]}},
                    "initial": {"config": "tiny.yaml", "set": ["solver={name: initial}", "grid.constraints.count=[10]"],
                                "quick": False}},
    "tables": {"tiny_acc": {"title": "5-NN accuracy", "from": ["burg"], "metric": "knn_accuracy",
                            "rows": "constraints.count", "cols": "solver"},
               "tiny_long": {"from": ["burg", "initial"]}},
    "figures": {"tiny_acc.png": {"title": "accuracy", "from": ["burg"],
                                 "plot": {"metric": "knn_accuracy", "x": "constraints.count"}}},
    "statements": [
        {"table": "tiny_acc", "row": 30, "col": "burg", "paper": 0.0, "rule": "at_least", "quote": "never below 0",
         "where": "Fig. 1, a bound"},
        {"table": "tiny_acc", "row": 10, "col": "burg", "paper": 2.0, "std": 0.1, "runs": 10,
         "where": "Table 9, row 10", "explanation": "bound"},
        {"table": "tiny_acc", "row": 99, "col": "burg", "paper": 0.5, "rule": "abs 0.1", "quote": "about 0.5",
         "where": "Table 9, row 99"},
    ],
    "untested": [{"where": "Table 9, row 100", "why": "not run"}],
}


#: The tiny study's prose (study.md beside its study.yaml).
PROSE = ("# tinypaper\n\n## summary\n\nBurg on iris.\n\n## protocol\n\nTwo counts.\n\n## table tiny_acc\n\nIt rises.\n\n"
         "## explanation bound\n\nAccuracy cannot exceed 1.\n")


def write_study(folder: Path, study=None, config=None, prose=PROSE) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tiny.yaml").write_text(yaml.safe_dump(config or CONFIG))
    (folder / "study.md").write_text(prose)
    path = folder / "study.yaml"
    path.write_text(yaml.safe_dump(study or STUDY, sort_keys=False))
    return path


# ---- the rules, against their definitions; each kind with a value that must fail -------------

@pytest.mark.parametrize("rule, ours, paper, se, holds", [
    (Rule("sigma", 2), 1.19, 1.0, 0.1, True), (Rule("sigma", 2), 1.21, 1.0, 0.1, False),
    (Rule("sigma", 2), 0.81, 1.0, 0.1, True), (Rule("factor", 3), 30, 10, None, True),
    (Rule("factor", 3), 31, 10, None, False), (Rule("factor", 3), 3.4, 10, None, True),
    (Rule("factor", 3), 3.3, 10, None, False), (Rule("factor", 2), -0.01, 0.03, None, False),
    (Rule("rel", 0.1), 0.89, 1.0, None, False),
    (Rule("rel", 0.1), -1.05, -1.0, None, True), (Rule("abs", 0.02), 0.93, 0.95, None, True),
    (Rule("abs", 0.02), 0.92, 0.95, None, False), (Rule("at_most"), 600, 600, None, True),
    (Rule("at_most"), 601, 600, None, False), (Rule("at_least"), 0.95, 0.948, None, True),
    (Rule("at_least"), 0.947, 0.948, None, False),
])
def test_rules(rule, ours, paper, se, holds):
    assert rule.holds(ours, paper, se) is holds


def test_sigma_rule_uses_both_spreads_and_both_run_counts():
    """SE of the difference = sqrt(s_p²/n_p + s_o²/n_o): the paper's 0.94 ± 0.04 over 10 runs and
    ours 0.90 ± 0.03 over 20 seeds differ by 0.04 = 2.9 SE (deviates), although the paper's
    per-run std alone (the old rule) would call them 1σ apart."""
    se = Rule.standard_error(0.04, 10, 0.03, 20)
    assert math.isclose(se, math.sqrt(0.04 ** 2 / 10 + 0.03 ** 2 / 20))
    assert not Rule("sigma", 2).holds(0.90, 0.94, se) and Rule("sigma", 2).holds(0.92, 0.94, se)
    # one seed measures no spread, but one draw varies by a per-run std: the paper's stands in for ours
    assert math.isclose(Rule.standard_error(0.04, 10, float("nan"), 1), math.sqrt(0.04 ** 2 / 10 + 0.04 ** 2))
    assert Rule.standard_error(0.04, 10, 0.0, 1) == Rule.standard_error(0.04, 10, float("nan"), 1)


def test_default_rules_and_delta(tmp_path):
    study = load_study(write_study(tmp_path / "tinypaper"))
    assert [str(n.rule) for n in study.statements] == ["at_least", "2sigma", "abs 0.1"]
    entries = {"tiny_acc": pd.DataFrame({"row": [10], "col": ["burg"], "value": [0.9], "std": [0.2], "min": [0.7],
                                         "max": [1.0], "seeds": [4], "unconverged": [0], "capped": [0]})}
    v = verdicts("tinypaper", study.statements, entries)
    se = math.sqrt(0.1 ** 2 / 10 + 0.2 ** 2 / 4)
    assert list(v["verdict"]) == ["missing", "deviates", "missing"]
    assert math.isclose(v.loc[1, "delta"], (0.9 - 2.0) / se)


def _stats(rows):
    """entry_stats rows (row, col, value, std, min, max, seeds, capped)."""
    return pd.DataFrame([dict(zip(("row", "col", "value", "std", "min", "max", "seeds", "capped"), r),
                              unconverged=0) for r in rows])


def _statement(read, entries, paper, rule, starts=(), **kw):
    return Statement("§1 text", tuple(Entry("t", r, c) for r, c in entries), tuple(paper), rule, read,
                     tuple(Entry("t", r, c) for r, c in starts), **kw)


STATS = {"t": _stats([(10, "a", 3.0, 1.0, 2, 4, 5, 0), (1000, "a", 430.0, 46, 300, 563, 5, 0),
                      (1000, "b", 900.0, 50, 700, 20000, 5, 1), ("init", "a", 0.969, 0.006, 0.96, 0.98, 5, 0),
                      ("end", "a", 0.982, 0.003, 0.98, 0.99, 5, 0), ("end", "b", 0.978, 0.003, 0.97, 0.98, 5, 0)])}


@pytest.mark.parametrize("statement, verdict", [
    # "never exceeded 600": one verdict over every entry; fails when any entry exceeds it
    (_statement("max", [(10, "a"), (1000, "a")], [600], Rule("at_most")), "reproduced"),
    (_statement("max", [(10, "a"), (1000, "a")], [400], Rule("at_most")), "deviates"),
    # a capped entry: its max only bounds the count from below
    (_statement("max", [(10, "a"), (1000, "b")], [1000], Rule("at_most")), "lower bound"),
    # "between 17 and 354 sweeps": the smallest and the largest cell against both ends
    (_statement("range", [(10, "a"), (1000, "a")], [2, 354], Rule("factor", 3)), "reproduced"),
    (_statement("range", [(10, "a"), (1000, "a")], [17, 354], Rule("factor", 3)), "deviates"),   # 2 < 17 / 3
    # "from 94 to 97 percent for both": the gain, for each end; ours +0.013 / +0.009 against +0.03
    (_statement("gain", [("end", "a"), ("end", "b")], [0.94, 0.97], Rule("factor", 2), [("init", "a")]), "deviates"),
    (_statement("gain", [("end", "a")], [0.01], Rule("factor", 2), [("init", "a")]), "reproduced"),
    # "scales unfavorably" / "roughly unaffected": a time's ratio, free of the hardware's speed
    (_statement("ratio", [(1000, "a")], [16], Rule("at_least"), [(10, "a")]), "reproduced"),          # 430 / 3
    (_statement("ratio", [(1000, "a")], [200], Rule("at_least"), [(10, "a")]), "deviates"),
    (_statement("ratio", [(1000, "a")], [10, 1000], Rule("factor", 2), [(10, "a")]), "reproduced"),   # ×100
    (_statement("ratio", [(1000, "a")], [1], Rule("factor", 2), [(10, "a")]), "deviates"),
    (_statement("ratio", [("end", "a"), ("end", "b")], [1], Rule("factor", 2), [("init", "a")]), "reproduced"),
    # a capped entry bounds its ratio from below: enough for at_least, never for a two-sided rule
    (_statement("ratio", [(1000, "b")], [16], Rule("at_least"), [(10, "a")]), "reproduced"),
    (_statement("ratio", [(1000, "b")], [1000], Rule("factor", 3), [(10, "a")]), "lower bound"),
    (_statement("ratio", [(1000, "b")], [1], Rule("factor", 3), [(10, "a")]), "deviates"),
    # a capped start bounds the ratio from above, each pair on its own: below the band deviates
    (_statement("ratio", [(10, "a")], [1], Rule("factor", 2), [(1000, "b")]), "deviates"),
    (_statement("ratio", [(10, "a")], [0.001], Rule("factor", 2), [(1000, "b")]), "lower bound"),
    (_statement("ratio", [(10, "a")], [1], Rule("at_most"), [(1000, "b")]), "reproduced"),
    (_statement("ratio", [(1000, "b")], [1], Rule("factor", 2), [(1000, "b")]), "lower bound"),
    # a capped start: the ratio is only bounded from above, so no rule can tell
    (_statement("ratio", [(10, "a")], [0.001], Rule("at_most"), [(1000, "b")]), "lower bound"),
    (_statement("ratio", [(10, "a"), (1000, "a"), ("end", "a")], [1], Rule("factor", 2), [("init", "a")],
                most=True), "deviates"),                                       # 3.1, 444, 1.01: one of three
    # each entry must hold; "on most data sets": more than half
    (_statement("each", [(10, "a"), (1000, "a")], [3], Rule("factor", 3)), "deviates"),
    (_statement("each", [(10, "a"), (1000, "a"), ("init", "a")], [2], Rule("factor", 3), most=True), "reproduced"),
    (_statement("each", [(10, "a"), (1000, "a"), ("init", "a")], [300], Rule("factor", 3), most=True), "deviates"),
    (_statement("each", [(10, "a"), ("end", "a"), ("init", "a")], [1], Rule("factor", 3), most=True), "reproduced"),
    # two-sided rule on a capped entry: never reproduced
    (_statement("value", [(1000, "b")], [900], Rule("factor", 3)), "lower bound"),
    (_statement("value", [(1000, "b")], [100], Rule("factor", 3)), "deviates"),
    # calibrated on the paper: consistent when the rule holds, deviates when it fails (issue 54)
    (_statement("value", [(10, "a")], [3], Rule("factor", 3), calibrated="γ chosen on Table 2"), "consistent"),
    (_statement("value", [(10, "a")], [300], Rule("factor", 3), calibrated="γ chosen on Table 2"), "deviates"),
    (_statement("value", [(10, "a")], [3], Rule("factor", 3), kind="not comparable"), "not comparable"),
    (_statement("each", [(10, "a")], [3], Rule("factor", 3), kind="context"), "context"),
    (_statement("value", [(11, "a")], [3], Rule("factor", 3)), "missing"),
])
def test_one_verdict_per_statement(statement, verdict):
    v = verdicts("p", [statement], STATS, {"t": "iterations"})
    assert list(v["verdict"]) == [verdict]
    if statement.calibrated:
        assert v.loc[0, "holds"] == (statement.paper[0] == 3) and v.loc[0, "qualifier"] == "calibrated"
        assert f"| γ chosen on Table 2 | {verdict} (calibrated) |" in verdict_table(v)


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
    (lambda s: s["tables"]["tiny_acc"].update(capped="value"), "unknown key(s) capped"),
    (lambda s: s["tables"]["tiny_long"].update(rows="seed"), "give metric too"),
    (lambda s: s["figures"].update({"x.gif": {"from": ["burg"], "plot": {"metric": "nmi"}}}), "figures.x.gif"),
    (lambda s: s["figures"]["tiny_acc.png"].update(history={}), "exactly one of plot"),
    (lambda s: s["statements"][0].update(table="tiny_long"), "long table"),
    (lambda s: s["statements"][0].update(table="nope"), "no table 'nope'"),
    (lambda s: s["statements"][0].update(rule="3sigma"), "needs the paper's std"),
    (lambda s: s["statements"][1].pop("runs"), "statements[1].runs"),
    (lambda s: s["statements"][0].update(rule="within 5"), "is not one of"),
    (lambda s: s["statements"][0].update(rule="factor 0.5"), "must be >= 1"),
    (lambda s: s["statements"][0].update(rule="rel 1e"), "is not a number"),
    (lambda s: s["statements"][0].update(paper="high"), "statements[0].paper"),
    (lambda s: s["statements"][0].pop("where"), "missing where"),
    (lambda s: s["statements"][0].update(read="mean"), "statements[0].read"),
    (lambda s: s["statements"][0].update(kind="aside"), "statements[0].kind"),
    (lambda s: s["statements"][0].update(read="range"), "takes 2 number(s)"),
    (lambda s: s["statements"][0].update(read="gain"), "a gain needs start"),
    (lambda s: s["statements"][0].update(read="ratio"), "a ratio needs start"),
    (lambda s: s["statements"][0].update(start={"row": 1, "col": "burg"}), "only a gain, a ratio, a paired difference"),
    (lambda s: s["statements"][0].update(entries=[{"table": "tiny_acc", "row": 1, "col": "burg"}]), "give the entry"),
    (lambda s: s.update(statements=[{"where": "x", "paper": 1, "entries": [{"table": "tiny_acc", "row": [1, 2],
                                                                            "col": "burg"}]}]), "'value' reads one"),
    (lambda s: s["untested"][0].pop("why"), "untested[0]"),
    (lambda s: s["statements"][0].update(holds="most"), "statements[0].holds"),
    # a rule other than the default needs the paper's words (issue 54): no band looser than the evidence
    (lambda s: s["statements"][0].pop("quote"), "statements[0].rule: rule 'at_least' is not this statement's default "
                                                "('abs 0.02', for value of knn_accuracy): a rule other than the "
                                                "default needs quote"),
])
def test_loader_errors(tmp_path, change, words):
    path = _bad(tmp_path, change)
    with pytest.raises(ConfigError, match=re.escape(words)) as err:
        load_study(path)
    assert str(path) in str(err.value)


# ---- a paper's table as a matrix, the prose beside the study --------------------------------------

MATRIX = {"matrix": "tiny_acc", "where": "Table 9, {row}, {col}: {paper:.1f} (±{std:.1f}) %", "percent": True,
          "rows": {10: "ten", 30: {"label": "thirty", "explanation": "bound"}},
          "cols": {"burg": "Burg", "initial": {"label": "K0", "table": "tiny_acc", "rule": "abs 0.1", "quote": "about"}},
          "paper": {10: [35.0, None], 30: [{"paper": 50, "rule": "at_least", "quote": "> 50",
                                            "where": "Table 9, {row}, > {paper} %"},
                                          45.5]},
          "std": {10: [2.5, None], 30: [1.0, 3.0]}, "runs": 10}


def test_a_matrix_expands_to_statements_row_by_row(tmp_path):
    """One statement per number of the matrix, in row order then column order (a None or a short row
    makes none); ``where`` formatted from the labels and the printed numbers; a percentage divided by
    100 exactly; a cell's keys before its column's, its row's and the matrix's."""
    study = {**STUDY, "statements": [STUDY["statements"][0], MATRIX]}
    got = load_study(write_study(tmp_path / "tinypaper", study)).statements
    assert [s.where for s in got] == ["Fig. 1, a bound", "Table 9, ten, Burg: 35.0 (±2.5) %", "Table 9, thirty, > 50 %",
                                      "Table 9, thirty, K0: 45.5 (±3.0) %"]
    assert [(e.row, e.col) for s in got[1:] for e in s.entries] == [(10, "burg"), (30, "burg"), (30, "initial")]
    assert [s.paper for s in got[1:]] == [(0.35,), (0.5,), (0.455,)] and [s.std for s in got[1:]] == [0.025, 0.01, 0.03]
    assert [str(s.rule) for s in got[1:]] == ["2sigma", "at_least", "abs 0.1"]
    assert [s.explanation for s in got[1:]] == ["", "Accuracy cannot exceed 1.", "Accuracy cannot exceed 1."]
    assert all(s.runs == 10 for s in got[1:])


@pytest.mark.parametrize("change, key", [
    (lambda m: m.update(colour="red"), "statements[1]: unknown key(s) colour"),
    (lambda m: m["rows"].update({30: {"label": "thirty", "shade": 1}}), "statements[1].rows.30: unknown key(s) shade"),
    (lambda m: m["paper"].update({30: [{"paper": 50, "note": "x"}]}), "statements[1].paper.30[0]: unknown key(s) note"),
    (lambda m: m["paper"].update({99: [1.0]}), "statements[1].paper.99: no row '99'"),
    (lambda m: m["paper"].update({10: [1.0, 2.0, 3.0]}), "statements[1].paper.10: 3 values for 2 columns"),
    (lambda m: m.update(where="Table 9, {line}"), "statements[1].paper.10[0].where"),
    (lambda m: m.update(explanation="nowhere"), "no section '## explanation nowhere'"),
])
def test_a_matrix_with_an_unknown_key_names_the_file_and_key(tmp_path, change, key):
    matrix = yaml.safe_load(yaml.safe_dump(MATRIX))
    change(matrix)
    path = write_study(tmp_path / "tinypaper", {**STUDY, "statements": [STUDY["statements"][0], matrix]})
    with pytest.raises(ConfigError) as err:
        load_study(path)
    assert str(path) in str(err.value) and key in str(err.value)


@pytest.mark.parametrize("prose, words", [
    (PROSE + "\n## explanation spare\n\nNever used.\n", "## explanation spare used by nothing"),
    (PROSE + "\n## summary\n\nAgain.\n", "'## summary' given twice"),
    (PROSE + "\n## footnote x\n\nx\n", "'## footnote x' is not one of"),
    ("Stray text.\n" + PROSE, "line 1: text before the first '## ' section"),
    (PROSE.replace("## explanation bound", "## explanation other"), "no section '## explanation bound'"),
])
def test_the_prose_file_is_checked(tmp_path, prose, words):
    path = write_study(tmp_path / "tinypaper", prose=prose)
    with pytest.raises(ConfigError) as err:
        load_study(path)
    assert "study.md" in str(err.value) and words in str(err.value)


def test_the_prose_fills_the_study():
    """The summary, protocol, a table's text and an explanation come from study.md beside study.yaml;
    li2009's Table 3 and 5 matrices expand to the statements (ids, where, rule) they replaced."""
    study = load_study(REPO / "configs" / "papers" / "li2009" / "study.yaml")
    assert study.protocol.startswith("**Setting (§6.2).**") and study.summary.startswith("**What we ran.**")
    assert study.tables["li2009_table5"].text.startswith("Kernel PCA (10 dimensions) + 1-NN")
    assert len(study.statements) == 198
    baseline, table5 = study.statements[15], study.statements[160:165]
    assert (baseline.where, str(baseline.rule), baseline.paper) == (
        "Table 3, Sonar, Iter., baseline (printed as > 10000)", "at_least", (10000.0,))
    assert baseline.explanation.startswith("The hard sets are hard here")
    assert [s.where for s in table5] == ["Table 5, Breast, Log-Loss: 3.54 (±0.73) %", "Table 5, Breast, LMNN Loss: 3.54 (±0.74) %",
                                         "Table 5, Breast, ITML Loss: 3.62 (±1.26) %", "Table 5, Breast, Linear Loss: 4.78 (±0.84) %",
                                         "Table 5, Breast, Laplacian: 4.78 (±0.87) %"]
    assert [e.table for s in table5 for e in s.entries] == ["li2009_table5"] * 4 + ["li2009_table5_laplacian"]
    assert [s.paper for s in table5] == [(0.0354,), (0.0354,), (0.0362,), (0.0478,), (0.0478,)]
    assert {str(s.rule) for s in table5} == {"2sigma"} and [bool(s.calibrated) for s in table5] == [True] * 5


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
    """The status table (docs/status.md) has one row per paper item, whatever the quote after it holds."""
    assert paper_item(where) == item


@pytest.mark.parametrize("paper", study_names(REPO / "configs" / "papers"))
def test_every_paper_study_checks(paper, monkeypatch):
    """Each committed study loads (so each number names a table of the study with a metric) and its
    configs expand, full and quick."""
    from kernlearn_cli.reproduce.plan import check

    monkeypatch.chdir(REPO)
    study = load_study(REPO / "configs" / "papers" / paper / "study.yaml")
    assert check(study, quick=False) >= check(study, quick=True) > 0


def test_verdict_labels_match_as_numbers():
    """A YAML row label 1e-3 (a string to YAML 1.1) finds the entry 0.001."""
    entries = {"t": _stats([(0.001, "burg", 0.55, 0.0, 0.55, 0.55, 2, 0)]).assign(unconverged=[1])}
    v = verdicts("p", [_statement("value", [("1e-3", "burg")], [0.5], Rule("abs", 0.1))], entries)
    assert v.loc[0, "verdict"] == "consistent" and v.loc[0, "holds"] and v.loc[0, "unconverged"] == 1
    assert "†" in verdict_table(v) and "consistent (unconverged)" in verdict_table(v)


@pytest.mark.parametrize("metric, qualified", [("svm_accuracy", True), (None, True), ("iterations", False),
                                               ("converged", False)])
def test_a_value_of_an_unconverged_cell_is_qualified_and_a_failed_rule_still_deviates(metric, qualified):
    """Issue 54: an accuracy of an unfinished solve is ``consistent (unconverged)`` when the rule
    holds and ``deviates (unconverged)`` when it fails — a failed rule deviates whatever else holds;
    a count or a time keeps its own reading (a lower bound when capped), and a statement about
    convergence reads the unconverged cell as its answer."""
    for ours, holds in ((0.55, True), (0.9, False)):
        entries = {"t": _stats([("a", "burg", ours, 0.0, ours, ours, 2, 0)]).assign(unconverged=[1])}
        v = verdicts("p", [_statement("value", [("a", "burg")], [0.5], Rule("abs", 0.1))], entries, {"t": metric})
        expected = ("consistent" if qualified else "reproduced") if holds else "deviates"
        assert v.loc[0, "verdict"] == expected and bool(v.loc[0, "holds"]) == holds
        assert v.loc[0, "qualifier"] == ("unconverged" if qualified else "")


@pytest.mark.parametrize("capped, verdict, qualifier", [(1, "reproduced", ""), (0, "consistent", "unconverged")])
def test_a_cell_stopped_on_the_papers_own_cap_is_judged_as_a_value(capped, verdict, qualifier):
    """``paper_cap``: a cell stopped on the iteration cap the paper states (hu2013's IterMax) is the
    paper's protocol, no ``unconverged`` qualifier; a cell unconverged for another reason (a stall)
    keeps it."""
    entries = {"t": _stats([("a", "admm", 0.55, 0.0, 0.55, 0.55, 2, capped)]).assign(unconverged=[1])}
    s = _statement("value", [("a", "admm")], [0.5], Rule("abs", 0.1), paper_cap="IterMax = 500")
    v = verdicts("p", [s], entries, {"t": "accuracy"})
    assert (v.loc[0, "verdict"], v.loc[0, "qualifier"]) == (verdict, qualifier)
    v = verdicts("p", [replace(s, paper=(0.9,))], entries, {"t": "accuracy"})
    assert v.loc[0, "verdict"] == "deviates"


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
    se = 0.05 if rule.kind == "sigma" else None
    assert rule.judge(ours, paper, se, side=1) == verdict
    assert rule.judge(ours, paper, se) == ("reproduced" if rule.holds(ours, paper, se) else "deviates")


def test_capped_cells_make_lower_bounds_by_default():
    """entry_stats counts the cells stopped on a budget, and their entries are lower bounds:
    no table can declare them values (``capped:`` is gone)."""
    from kernlearn_cli.report.tables import entry_stats

    df = pd.DataFrame({"dataset": ["a", "a", "b"], "solver": ["s"] * 3, "iterations": [10000, 9000, 5000],
                       "converged": [False, True, True], "cert_stopped_by": ["max_path_iter", "tolerance", "tolerance"]})
    stats = entry_stats(df, "iterations", "dataset", "solver")
    assert list(stats["capped"]) == [1, 0] and list(stats["unconverged"]) == [1, 0]
    assert list(stats["min"]) == [9000, 5000] and list(stats["max"]) == [10000, 5000]
    statements = [Statement("Table 4", (Entry("t", r, "s"),), (6733.9,), Rule("factor", 3)) for r in "ab"]
    v = verdicts("p", statements, {"t": stats}, {"t": "iterations"})
    assert list(v["verdict"]) == ["lower bound", "reproduced"] and list(v["capped"]) == [1, 0]
    # a capped run's accuracy is the value of an unfinished solve (issue 47): never reproduced (issue 54)
    v = verdicts("p", [Statement("T", (Entry("t", "a", "s"),), (9500.0,), Rule("factor", 3))], {"t": stats},
                 {"t": "knn_accuracy"})
    assert list(v["verdict"]) == ["consistent"] and list(v["qualifier"]) == ["unconverged"]


@pytest.mark.parametrize("paper", ["kulis2006", "tsuda2005", "hu2013", "zhang2012", "li2009"])
def test_committed_verdicts_never_count_capped_or_calibrated_as_reproduced(paper):
    """Every committed verdict file: no `reproduced` row includes a cell stopped on its budget under
    a two-sided rule, none is calibrated or qualified, every row whose rule fails reads `deviates`
    (issue 54), and each row is one statement of the study."""
    path = REPO / "results" / "tables" / f"{paper}_verdicts.csv"
    assert path.is_file(), f"{path} is committed with the study: `kernlearn reproduce {paper} --no-run` writes it"
    v = pd.read_csv(path, dtype={"calibrated": str, "qualifier": str})
    study = load_study(REPO / "configs" / "papers" / paper / "study.yaml")
    assert {"statement", "capped", "calibrated", "qualifier", "holds"} <= set(v.columns)
    ok = v[v["verdict"] == "reproduced"]
    assert not ((ok["capped"] > 0) & ok["metric"].isin(["iterations", "seconds"]) & (ok["rule"] != "at_least")).any()
    assert not ok["calibrated"].fillna("").str.len().any() and ok["qualifier"].isna().all()
    failed = v[v["holds"].astype(str) == "False"]
    assert set(failed["verdict"]) <= {"deviates"}, failed[failed["verdict"] != "deviates"][["statement", "verdict"]]
    assert len(v) == len(study.statements)


# ---- end to end -------------------------------------------------------------------------------

def test_reproduce_end_to_end(tmp_path, inproc):
    path = write_study(tmp_path / "tinypaper")
    readme = tmp_path / "README.md"
    readme.write_text("# x\n\n<!-- kernlearn:status -->\n<!-- /kernlearn:status -->\n")
    results, docs = tmp_path / "results", tmp_path / "docs"
    status_page = docs / "status.md"                      # beside the README, as docs/status.md is
    docs.mkdir()
    status_page.write_text("# status\n\n<!-- kernlearn:status -->\n<!-- /kernlearn:status -->\n")
    args = ["reproduce", path, "--results", results, "--docs", docs, "--readme", readme, "--jobs", "1"]

    code, out, err = inproc(*args, "--quick")
    assert code == 0, err
    quick = results / "quick"
    assert (quick / "tinypaper" / "burg").is_dir() and not (quick / "tinypaper" / "initial").exists()
    assert "4 statement(s), 3 tested: 1 reproduced, 1 deviates, 1 missing" in out
    assert "[1] Accuracy cannot exceed 1." in out
    assert "kernlearn:status -->\n<!--" in readme.read_text()           # a quick run leaves the README alone
    assert "kernlearn:status -->\n<!--" in status_page.read_text()      # and the status page

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
    # the README: one line summing every paper's statements, linking the status page and its table
    # (the other papers' studies, found from the working directory, have no verdicts under this results root)
    others = len(study_names(REPO / "configs" / "papers"))
    assert (f"\nStatus of the {others + 1} reproductions ({others} not built yet): 4 statement(s), 3 tested: "
            "1 reproduced, 1 deviates, 1 missing; outside the tested count: 1 untested — per paper and table in "
                "[docs/status.md](docs/status.md).\n"
            ) in readme.read_text()
    status = status_page.read_text()
    assert "| [tinypaper](tinypaper.md) |" in status                 # links relative to the status page
    assert "| A tiny paper | Fig. 1 | `kernlearn reproduce tinypaper` | 1 (1) | 1 | 0 | 0 | 0 | 0 |" in status
    assert "|  | Table 9 |  | 3 (2) | 0 | 1 | 0 | 0 | 0 |  |" in status     # one of them untested
    assert "## Statements we cannot test" in page and "| Table 9, row 100 | not run |" in page

    before = {p: p.read_bytes() for p in (results / "tables").glob("tiny_acc.*")}
    code, out, err = inproc(*args)                       # resumes: nothing left to run, same tables
    assert code == 0 and "0 cell(s) run, 0 already finished, 0 failed, 4 archived" in err
    assert {p: p.read_bytes() for p in before} == before


def test_old_verdict_file_is_refused_before_anything_is_written(tmp_path, inproc):
    """A verdict file of the rules before one verdict per statement (no ``statement`` column) is refused
    with its path and how to rebuild it, before any table, page or status block is written."""
    path = write_study(tmp_path / "tinypaper")
    readme, docs, results = tmp_path / "README.md", tmp_path / "docs", tmp_path / "results"
    readme.write_text("<!-- kernlearn:status -->\n<!-- /kernlearn:status -->\n")
    docs.mkdir()
    (docs / "status.md").write_text("<!-- kernlearn:status -->\n<!-- /kernlearn:status -->\n")
    (results / "tables").mkdir(parents=True)
    old = results / "tables" / "tinypaper_verdicts.csv"
    old.write_text("paper,where,ours,paper_value,rule,verdict\ntinypaper,\"Fig. 1\",0.9,0.9,abs 0.1,reproduced\n")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    code, _, err = inproc("reproduce", path, "--results", results, "--docs", docs, "--readme", readme, "--jobs", "1")
    assert code == 2 and f"verdict file '{old}' has no 'statement' column" in err
    assert "kernlearn reproduce tinypaper --no-run" in err and "Traceback" not in err
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_reproduce_check_and_bad_launcher(tmp_path, inproc):
    path = write_study(tmp_path / "tinypaper")
    code, out, _ = inproc("reproduce", path, "--check")
    # the statements counted as the page and the README count them: judged + not comparable + untested
    assert code == 0 and ("tinypaper: ok (2 experiment(s), 6 cell(s), 2 table(s), 1 figure(s); 3 judged + 0 not "
                          "comparable + 1 untested = 4 statement(s) of the paper)") in out, out
    code, _, err = inproc("reproduce", path, "--launcher", "pbs", "--results", tmp_path / "r")
    assert code == 2 and "expected local or slurm" in err and not (tmp_path / "r").exists()


def test_plot_paths_mean_over_seeds(tmp_path):
    """A path figure averages a list metric over the cells, point by point, and rings unconverged ones."""
    import json

    from kernlearn_cli.errors import KernlearnError
    from kernlearn_cli.report.figures import plot_paths

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


def test_every_committed_figure_comes_from_a_study():
    """results/figures holds only the studies' figures (benchmarks draw theirs in benchmarks/<folder>/figures)."""
    made = {name for paper in study_names(REPO / "configs" / "papers")
            for name in load_study(REPO / "configs" / "papers" / paper / "study.yaml").figures}
    committed = {p.name for p in (REPO / "results" / "figures").iterdir() if p.is_file()}
    assert committed and committed <= made, sorted(committed - made)


@pytest.mark.parametrize("seed", range(20))
def test_labelings_by_budget_is_the_largest_common_extra_time_that_fits(seed):
    """Against a brute-force scan of T: the returned L is that of the largest T whose extra
    labelings fit the budget, and one more step of T would not fit."""
    rng = np.random.default_rng(seed)
    groups = [f"g{i}" for i in range(int(rng.integers(1, 6)))]
    costs = {g: float(rng.choice([0.5, 3.0, 40.0, 400.0])) * float(rng.uniform(0.5, 2)) for g in groups}
    most = {g: int(rng.choice([1, 5, 50])) for g in groups}
    budget = float(rng.uniform(0, 3000))
    T, L = labelings_by_budget(costs, most, budget)

    def counts(t):
        return {g: min(most[g], 1 + math.floor(t / c)) for g, c in costs.items()}

    spent = sum((L[g] - 1) * costs[g] for g in groups)
    assert spent <= budget
    assert all(1 <= L[g] <= most[g] for g in groups)
    fits = [t for t in np.linspace(0, 1e5, 200001) if sum((n - 1) * costs[g] for g, n in counts(t).items()) <= budget]
    assert L == counts(fits[-1]) or (T == math.inf and L == most)
    if T != math.inf:
        assert L == counts(T * (1 + 1e-9))      # T is a step k·c_g: rounding of T / c_g aside


def test_labelings_by_budget_equal_time_not_equal_counts():
    T, L = labelings_by_budget({"cheap": 1.0, "mid": 10.0, "dear": 100.0}, {"cheap": 50, "mid": 50, "dear": 50}, 300)
    assert (T, L) == (150.0, {"cheap": 50, "mid": 16, "dear": 2})
    assert labelings_by_budget({"a": 1.0}, {"a": 50}, 1e9) == (math.inf, {"a": 50})
    assert labelings_by_budget({"a": 1000.0}, {"a": 50}, 10) == (0.0, {"a": 1})


def test_every_paper_page_cites_its_paper_and_groups_untested_statements_by_reason():
    """Each committed study gives a full citation (authors, title, venue, year, URL) and its page
    opens with it; a reason shared by several untested statements is given once, with their count."""
    from kernlearn_cli.reproduce.pages import citation_text

    for path in find_studies("all", REPO / "configs" / "papers"):
        study = load_study(path)
        assert {"authors", "title", "venue", "year", "url"} <= set(study.citation), study.paper
        assert study.citation["url"].startswith("https://"), study.paper
        page = (REPO / "docs" / "papers" / f"{study.paper}.md").read_text()
        assert f"**Paper:** {citation_text(study.citation)}" in page.split("## Protocol")[0], study.paper
        reasons = [" ".join(why.split()) for _, why in study.untested]
        for why in set(reasons):
            assert page.count(why) == 1, (study.paper, why[:60])
            if reasons.count(why) > 1:
                assert f"**{reasons.count(why)} statements.** {why}" in page, study.paper
    hu2013 = (REPO / "docs" / "papers" / "hu2013.md").read_text()
    assert "**28 statements.** MFPC (Li et al. 2009) is not implemented in kernlearn (issue 59)." in hu2013
    assert "- Table 2, row chessboard: MFPC accuracy (%): 71.09±4.87; MFPC CPU time (sec): 1.22±0.23" in hu2013


def test_zhang2012_judges_the_generative_structure_on_held_out_points():
    """The Introduction's "extends to new samples" is a judged statement (read: same, unseen minus
    seen held-out accuracy, paired by seed), no longer an untested one."""
    study = load_study(REPO / "configs" / "papers" / "zhang2012" / "study.yaml")
    assert len(study.statements) == 6 and len(study.untested) == 6
    s = study.statements[5]
    assert (s.read, str(s.rule), s.paper) == ("same", "2sigma", (0.0,)) and s.explanation.startswith("`heldout_unseen`")
    assert [e.table for e in s.entries] == ["zhang2012_heldout_svm_cv_unseen"] * 8
    assert [e.table for e in s.starts] == ["zhang2012_heldout_svm_cv_seen"] * 8
    assert not any("new samples" in where for where, _ in study.untested)


def test_untested_section_and_citation_text():
    from kernlearn_cli.reproduce.pages import citation_text, untested_section

    section = untested_section([("Table 1, a, x = 1", "budget"), ("Table 1, a, x = 2", "budget"),
                                ("Fig. 2: 'p, q'", "qualitative"), ("Table 1, b, x = 1", "budget")])
    assert section == ["## Statements we cannot test", "", "4 statement(s), for 2 reason(s).", "",
                       "**3 statements.** budget", "", "- Table 1, a: x = 1; x = 2", "- Table 1, b, x = 1", "",
                       "| paper's statement | why |", "| --- | --- |", "| Fig. 2: 'p, q' | qualitative |", ""]
    assert untested_section([]) == []
    cite = {"authors": "A. B, C. D", "title": "T", "venue": "V 2", "year": 2001, "url": "https://x.org/1",
            "doi": "10.1/2"}
    assert citation_text(cite) == "A. B, C. D (2001). T. *V 2*. DOI [10.1/2](https://doi.org/10.1/2). <https://x.org/1>"


def test_a_citation_without_its_year_or_url_is_refused(tmp_path):
    study = {**STUDY, "citation": {"authors": "A", "title": "T", "venue": "V", "year": "2001"}}
    with pytest.raises(ConfigError, match=r"citation: missing url"):
        load_study(write_study(tmp_path / "tinypaper", study))
    study["citation"]["url"] = "https://x.org"
    with pytest.raises(ConfigError, match=r"citation.year: expected the year of publication as an integer"):
        load_study(write_study(tmp_path / "tinypaper", study))


def test_a_correlation_relates_two_metrics_per_column():
    """read: correlation (issue 47): per column, Spearman's ρ between the entries and their start
    entries of another metric, across the rows: +1 where both rise together, −1 where one falls."""
    rows = [1, 2, 3, 4]
    score = _stats([(r, c, v, 0.0, v, v, 3, 0) for r in rows for c, v in (("up", r), ("down", -r))])
    accuracy = _stats([(r, c, 0.5 + 0.1 * r, 0.0, 0.0, 1.0, 3, 0) for r in rows for c in ("up", "down")])
    s = Statement("Fig. 1", tuple(Entry("score", r, c) for r in rows for c in ("up", "down")), (0.5,),
                  Rule("at_least"), "correlation", tuple(Entry("acc", r, c) for r in rows for c in ("up", "down")))
    v = verdicts("p", [s], {"score": score, "acc": accuracy}, {"score": "nka_score"})
    assert v.loc[0, "ours_text"] == "up: ρ = +1.00, down: ρ = -1.00" and v.loc[0, "verdict"] == "deviates"
    v = verdicts("p", [replace(s, most=False, paper=(-1.0,))], {"score": score, "acc": accuracy})
    assert v.loc[0, "verdict"] == "reproduced"
