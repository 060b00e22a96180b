"""Issue 47 items 5 and 6: the cause experiments are committed with their commands and archives, and
``benchmarks/causes/causes.py`` pairs their cells with the study's cells of the same setting and seed."""

from __future__ import annotations

import csv
import importlib.util
import re
from pathlib import Path

import pytest

from kernlearn_cli.archive import Archive
from kernlearn_cli.config import expand, load
from kernlearn_cli.study.find import study_names
from kernlearn_cli.study.reader import load_study, read_prose

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = sorted(ROOT.glob("configs/papers/*/causes/*.yaml"))


def _causes():
    spec = importlib.util.spec_from_file_location("causes", ROOT / "benchmarks" / "causes" / "causes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_paper_with_a_deviation_to_explain_has_cause_experiments():
    assert {p.parts[-3] for p in CONFIGS} >= {"hu2013", "li2009", "kulis2006"}
    assert (ROOT / "benchmarks/causes/zhang2012_feature_scaling.py").is_file()


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: f"{p.parts[-3]}/{p.stem}")
def test_a_cause_config_names_its_command_and_its_archive_holds_its_cells(config):
    paper, name = config.parts[-3], config.stem
    rel = config.relative_to(ROOT).as_posix()
    header = config.read_text().split("\nname:")[0]
    assert f"kernlearn run {rel}" in header and f"--out results/causes/{paper}/{name}" in header
    assert "Budget:" in header
    cells = {c.id for c in expand(load(config))}
    archive = Archive.read(ROOT / "results" / "causes" / paper / f"{name}.jsonl.gz", name)
    records = archive.records
    assert records, f"{config}: no archived cell"
    assert archive.config == load(config, every_cell=False)   # the header: the committed config, not one piece's
    assert set(records) <= cells                       # every archived cell is a cell of the committed config
    assert name in {c[0] for c in _causes().PAIRS[paper]}


def test_a_cause_cell_is_paired_with_the_study_cell_of_its_setting_and_seed():
    causes = _causes()
    mine = {"dataset": "heart", "seed": 2, "grid": {"dataset": {"name": "heart"}, "solver.path": 16, "seed": 2}}
    same = {"dataset": "heart", "seed": 2, "grid": {"solver.path": 16, "seed": 2}}
    other_seed = {**same, "seed": 1}
    other_alpha = {**same, "grid": {"solver.path": 32, "seed": 2}}
    assert causes.key(mine, ()) == causes.key(same, ())
    assert causes.key(mine, ()) != causes.key(other_seed, ()) and causes.key(mine, ()) != causes.key(other_alpha, ())
    # an axis left free (kulis2006: the constraint count against the target kernel's own accuracy)
    vn = {"dataset": "wine", "seed": 0, "grid": {"constraints.count": 2000, "seed": 0}}
    target = {"dataset": "wine", "seed": 0, "grid": {"kernel": {"name": "rbf"}, "seed": 0}}
    assert causes.key(vn, ("constraints.count", "kernel")) == causes.key(target, ("constraints.count", "kernel"))
    # the dataset left free (tsuda2005: a subset of wine against the full wine's cell of its setting and seed)
    subset = {**same, "dataset": "files"}
    assert causes.key(subset, ("dataset",)) == causes.key(same, ("dataset",)) != causes.key(other_seed, ("dataset",))
    assert causes.key(subset, ()) != causes.key(same, ())
    assert causes.paired([1.0, 1.0, 1.0]) == "+1 (all pairs equal)"
    assert re.fullmatch(r"\+2 ± 0\.58 \(\+3\.5 SE\)", causes.paired([1.0, 2.0, 3.0]))


def test_hu2013_adult_converged_reads_against_the_capped_study_cells(capsys):
    _causes().main(["hu2013", "--results", str(ROOT / "results")])
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| adult_a1a |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "3" and cells[3] == "3/3" and cells[4] == "3"       # 3 seeds, converged, paired
    assert float(cells[8]) == 100                                          # the study's cells: capped at IterMax
    assert float(cells[9]) > 100                                           # converged: more iterations


def test_zhang2012_feature_scaling_table_pairs_both_methods_on_every_set():
    with (ROOT / "results/causes/zhang2012/feature_scaling.csv").open() as f:
        rows = list(csv.DictReader(f))
    sets = {r["dataset"] for r in rows}
    assert len(sets) == 8 and len(rows) == 2 * 8 * 10
    for r in rows:
        assert 0.0 <= float(r["raw"]) <= 1.0 and 0.0 <= float(r["standardized"]) <= 1.0
        assert (r["lam_raw"] == "") == (r["method"] == "compare_nystrom")


def test_li2009_trin_time_split_is_the_archive_split_into_iterations_and_cost_per_iteration():
    spec = importlib.util.spec_from_file_location("split", ROOT / "benchmarks/causes/li2009_trin_time_split.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with (ROOT / "results/causes/li2009/trin_time_split.csv").open() as f:
        committed = list(csv.DictReader(f))
    assert [{k: str(v) for k, v in row.items()} for row in module.rows()] == committed
    assert len(committed) == 9
    for row in committed:
        product = float(row["iteration_ratio"]) * float(row["per_iteration_ratio"])
        assert float(row["time_ratio"]) == pytest.approx(product, rel=5e-3)   # each ratio rounded to 3 decimals


MEASUREMENT_FILE = re.compile(r"\b(?:configs|benchmarks|results)/[\w./-]*\w")


@pytest.mark.parametrize("paper", study_names())
def test_every_deviation_names_the_measurement_of_its_cause(paper):
    """Issue 47 item 5: a statement judged ``deviates`` (its row of results/tables/<paper>_verdicts.csv)
    has an explanation that names a measurement: a file under configs/, benchmarks/ or results/ (its
    command) that exists, or one of the study's tables."""
    path = ROOT / "configs" / "papers" / paper / "study.yaml"
    study = load_study(path)
    names = {text: key.split(" ", 1)[1] for key, text in read_prose(path.with_name("study.md")).items()
             if key.startswith("explanation ")}
    with (ROOT / "results" / "tables" / f"{paper}_verdicts.csv").open() as f:
        rows = list(csv.DictReader(f))
    unmeasured = set()
    for statement, row in zip(study.statements, rows, strict=True):
        assert statement.where == row["where"], row["statement"]
        if row["verdict"] != "deviates":
            continue
        files = MEASUREMENT_FILE.findall(statement.explanation)
        assert all((ROOT / name).exists() for name in files), (row["statement"], files)
        if not files and not any(re.search(rf"\b{table}\b", statement.explanation) for table in study.tables):
            unmeasured.add((paper, names[statement.explanation]))
    assert not unmeasured, unmeasured          # issue 47's closing number: 0
