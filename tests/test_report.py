"""The tidy results table (``collect --tidy``, issue 48 item 2) and the HTML report (``kernlearn report``,
issue 48 item 1), on the README's quick run with one cell failed, one not run and one not converged."""

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kernlearn_cli.errors import ConfigError
from kernlearn_cli.report.html import HISTORY_POINTS, history_svg, thin
from kernlearn_cli.report.tidy import check_tidy_path, tidy_records, write_tidy

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """``kernlearn run configs/quick.yaml`` (3 constraint counts x 3 seeds) in this process, then one cell
    made failed (its record replaced by a ``failed.json``), one made not run (its folder removed) and one
    made unconverged (its worst check 0.5 against 0.001); returns the results folder."""
    from kernlearn_cli.cli import main

    here = tmp_path_factory.mktemp("quick")
    (here / "configs").mkdir()
    shutil.copy(REPO / "configs" / "quick.yaml", here / "configs" / "quick.yaml")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(here)
        mp.setattr(sys, "argv", ["kernlearn", "run", "configs/quick.yaml"])
        with pytest.raises(SystemExit) as done:
            main()
    assert not done.value.code
    out = here / "results" / "quick_iris_burg"
    cells = sorted(p for p in out.iterdir() if (p / "record.json").is_file())
    shutil.rmtree(cells[0])
    (cells[1] / "record.json").unlink()
    (cells[1] / "failed.json").write_text(json.dumps({"error": "SolverError: a stand-in failure"}))
    record = json.loads((cells[2] / "record.json").read_text())
    record["converged"] = record["certificate"]["converged"] = False
    record["certificate"]["worst"]["value"] = 0.5
    (cells[2] / "record.json").write_text(json.dumps(record))
    return out


def test_tidy_has_one_row_per_cell_and_metric_with_settings_and_environment(quick):
    table = tidy_records([quick])
    assert len(table) == 7 * 2 and table["cell"].nunique() == 7          # 9 cells, 1 failed, 1 not run
    assert list(table["metric"].unique()) == ["nmi", "knn_accuracy"]
    for column in ("constraints.count", "seed", "solver", "solver.tol", "solver.slack", "constraints.epsilon",
                   "converged", "cert_check", "cert_value", "cert_tol", "seconds", "cpu_seconds",
                   "provenance.git_commit", "provenance.versions.numpy", "provenance.blas", "value", "value_std"):
        assert column in table.columns, column
    assert set(table["solver.tol"]) == {0.001} and set(table["constraints.count"]) == {10, 30, 100}
    record = json.loads((quick / table["cell"].iloc[0] / "record.json").read_text())
    first = table[table["cell"] == record["cell"]].set_index("metric")
    assert first.loc["nmi", "value"] == record["metrics"]["nmi"]
    assert first.loc["knn_accuracy", "value_std"] == record["metrics"]["knn_accuracy_std"]
    assert first.loc["nmi", "provenance.versions.numpy"] == record["provenance"]["versions"]["numpy"]


def test_tidy_csv_and_parquet_read_back_equal(quick, tmp_path, inproc):
    code, out, err = inproc("collect", quick, "--tidy", tmp_path / "tidy.csv")
    assert code == 0, err
    assert out.strip() == f"{tmp_path / 'tidy.csv'}: 14 row(s) (7 cell(s) x 2 metric(s)), " \
                          f"{len(tidy_records([quick]).columns)} column(s)"
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "tidy.csv"), tidy_records([quick]), check_dtype=False)
    if not any(importlib.util.find_spec(e) for e in ("pyarrow", "fastparquet")):
        with pytest.raises(ConfigError, match="writing Parquet needs pyarrow or fastparquet, and neither is "
                                              "installed.*--tidy .*tidy.csv"):
            check_tidy_path(tmp_path / "tidy.parquet")
        pytest.skip("no Parquet library installed: CSV read back equal; Parquet refused with its message")
    write_tidy(tidy_records([quick]), tmp_path / "tidy.parquet")
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "tidy.parquet"), tidy_records([quick]))


def test_tidy_refuses_unknown_format_and_table_options(quick, tmp_path, inproc):
    code, _, err = inproc("collect", quick, "--tidy", tmp_path / "tidy.xlsx")
    assert code == 2 and "unknown format '.xlsx'; use one of .csv, .parquet" in err
    code, _, err = inproc("collect", quick, "--tidy", tmp_path / "tidy.csv", "-m", "nmi")
    assert code == 2 and "--metric" in err and "tidy table alone" in err
    assert not (tmp_path / "tidy.csv").exists() and not (tmp_path / "tidy.xlsx").exists()


def test_report_is_self_contained_complete_and_the_same_bytes_twice(quick, tmp_path, inproc):
    pages = []
    for name in ("a.html", "b.html"):
        code, out, err = inproc("report", quick, "-o", tmp_path / name)
        assert code == 0 and out.startswith(f"{tmp_path / name}: "), err
        pages.append((tmp_path / name).read_bytes())
    assert pages[0] == pages[1]
    page = pages[0].decode()
    assert "<link" not in page and " src=" not in page and "@import" not in page      # nothing fetched
    for section in ("tables", "figures", "histories", "problems", "provenance"):
        assert f'<section id="{section}">' in page
    assert page.count('<table class="sortable">') == 3                  # long, timing, cells not in the tables
    assert 'th scope="col">certificate (worst)</th>' in page
    assert "0/1 †" in page and page.count('<tr class="unconverged">') == 1    # count 100: 1 failed, 1 missing, 1 † 
    assert page.count("<figure id=") == 2                                   # nmi, knn_accuracy vs constraints.count
    assert page.count("<details><summary>") == 3 and page.count("<polyline") == 7
    assert f"thinned to at most {HISTORY_POINTS} points per line" in page
    assert "SolverError: a stand-in failure" in page and ">missing<" in page and ">failed<" in page
    assert f"kernlearn run {quick / 'experiment.yaml'} --out {quick}" in page
    assert "Date" not in page and len(set(_ids(page))) == len(_ids(page))   # no date, no id twice


def _ids(page: str) -> list[str]:
    import re

    return re.findall(r'\bid="([^"]+)"', page)


def test_history_is_thinned_and_log_scaled():
    values = np.geomspace(1.0, 1e-6, 1000)
    index, kept = thin(values)
    assert len(index) == HISTORY_POINTS and index[0] == 0 and index[-1] == 999 and np.all(kept == values[index])
    svg = history_svg([("seed 0", values)], "dual_change", 1e-3, "h")
    points = svg.split('points="')[1].split('"')[0].split()
    assert len(points) == HISTORY_POINTS
    ys = [float(p.split(",")[1]) for p in points]
    assert np.abs(np.array(ys) - (10 + 156 * index / 999)).max() <= 0.051     # log scale: 1 at the top, 1e-6 at the foot
    assert ">1e-6<" in svg and ">1e0<" in svg and "tolerance 0.001" in svg


def test_report_needs_an_html_file_for_several_sources(quick, tmp_path, inproc):
    code, _, err = inproc("report", quick, quick)
    assert code == 2 and "say where the page goes with -o FILE.html" in err
    code, _, err = inproc("report", quick, "-o", tmp_path / "page.pdf")
    assert code == 2 and "name a file ending in .html" in err and not (tmp_path / "page.pdf").exists()


#: A tiny study (12 Burg cells on iris, seconds) whose statement has an explanation.
CONFIG = {"name": "tiny", "seed": 0, "grid": {"constraints.count": [30, 100, 300], "seed": "range(4)"},
          "dataset": {"name": "iris"}, "kernel": {"name": "linear"},
          "constraints": {"name": "idealized_pairs", "count": 10}, "solver": {"name": "burg", "slack": 1.0},
          "evaluate": [{"name": "knn_accuracy", "k": 5, "repeats": 2}]}
STUDY = {"paper": "tinypaper", "title": "A tiny paper",
         "experiments": {"burg": {"config": "tiny.yaml", "seconds_per_cell": 0.5}},
         "tables": {"tiny_acc": {"title": "accuracy", "from": ["burg"], "metric": "knn_accuracy",
                                 "rows": "constraints.count", "cols": "solver"}},
         "statements": [{"table": "tiny_acc", "row": 30, "col": "burg", "paper": 0.9, "rule": "abs 0.1",
                         "where": "Table 1", "explanation": "A stand-in explanation of the verdict."},
                        {"table": "tiny_acc", "row": 300, "col": "burg", "paper": 0.2, "rule": "abs 0.01",
                         "where": "Table 1, last row"}]}


@pytest.fixture(scope="module")
def paper(tmp_path_factory):
    """``kernlearn reproduce`` of the tiny study; returns (study file, results root)."""
    import subprocess

    import yaml

    here = tmp_path_factory.mktemp("paper")
    (here / "tinypaper").mkdir()
    (here / "tinypaper" / "tiny.yaml").write_text(yaml.safe_dump(CONFIG))
    (here / "tinypaper" / "study.yaml").write_text(yaml.safe_dump(STUDY, sort_keys=False))
    for args in ((), ("--no-run",)):
        res = subprocess.run([sys.executable, "-m", "kernlearn_cli", "reproduce", str(here / "tinypaper" / "study.yaml"),
                              "--results", str(here / "results"), "--docs", str(here / "docs"), "--no-readme",
                              "--jobs", "1", *args], capture_output=True, text=True)
        assert res.returncode == 0, res.stderr[-2000:]
        assert f"[tinypaper] report: {here / 'results' / 'tinypaper_report.html'}" in res.stderr
        if not args:
            first = (here / "results" / "tinypaper_report.html").read_bytes()
    assert (here / "results" / "tinypaper_report.html").read_bytes() == first      # --no-run: the same bytes
    return here / "tinypaper" / "study.yaml", here / "results"


def test_paper_report_filters_verdicts_by_kind_and_explains_them(paper):
    from kernlearn_cli.verdicts import KINDS

    study, results = paper
    page = (results / "tinypaper_report.html").read_text()
    for kind in KINDS:
        assert f'<input type="checkbox" data-kind="{kind}" checked>' in page
    assert page.count("<tr data-kind=") == 2 and '<tr data-kind="deviates">' in page
    assert "<summary>reproduced</summary>A stand-in explanation of the verdict.</details>" in page
    assert "<h3>accuracy</h3>" in page and '<section id="provenance">' in page and page.count("<figure id=") == 1
    assert "Made by <code>kernlearn reproduce tinypaper</code>" in page and study.is_file()
