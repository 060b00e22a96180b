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

from helpers import REPO, TINY_CONFIG, TINY_STUDY, quick_run


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """``kernlearn run configs/quick.yaml`` (3 constraint counts x 3 seeds) in this process, then one cell
    made failed (its record replaced by a ``failed.json``), one made not run (its folder removed) and one
    made unconverged (its worst check 0.5 against 0.001, and its peak memory recorded); returns the
    results folder."""
    out = quick_run(tmp_path_factory) / "results" / "quick_iris_burg"
    cells = sorted(p for p in out.iterdir() if (p / "record.json").is_file())
    shutil.rmtree(cells[0])
    (cells[1] / "record.json").unlink()
    (cells[1] / "failed.json").write_text(json.dumps({"error": "SolverError: a stand-in failure"}))
    record = json.loads((cells[2] / "record.json").read_text())
    record["converged"] = record["certificate"]["converged"] = False
    record["certificate"]["worst"]["value"] = 0.5
    record["peak_rss_bytes"] = 123_000_000_000                  # above any real cell: the largest
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
    peaks = {c: json.loads((quick / c / "record.json").read_text())["peak_rss_bytes"] for c in table["cell"].unique()}
    assert 123_000_000_000 in peaks.values() and table["peak_rss_bytes"].notna().all()     # every record carries it
    assert (table["peak_rss_bytes"] == table["cell"].map(peaks)).all()                  # one row per metric: the cell's


def edited_copy(quick, where, edit, drop=()):
    """A copy of the ``quick`` results folder at ``where``, each record passed through ``edit(k, record)``
    (k counts the records in folder order), the cells of ``drop`` (indices in that order) removed."""
    shutil.copytree(quick, where)
    for k, path in enumerate(sorted(where.glob("*/record.json"))):
        if k in drop:
            shutil.rmtree(path.parent)
            continue
        record = json.loads(path.read_text())
        edit(k, record)
        path.write_text(json.dumps(record))
    return where


def test_tidy_over_two_roots_with_overlapping_cells_keeps_each_rows_own_record(quick, tmp_path):
    """Two roots holding the same cells (the second a copy run elsewhere: other start times, wall
    seconds and host, and one cell fewer): every row of the tidy table carries the settings, metric
    value and environment of its own record, read here directly from the record files in the order
    the table promises (roots, then cells in folder order, then metrics).  A join of the settings by
    position (the audit's mutant: 18 of 36 rows lost their settings), or by cell id alone (the rows of
    the second root then showed the first root's provenance), fails this."""
    def elsewhere(k, record):
        record["provenance"].update(started=f"2030-01-0{k + 1}T00:00:00Z", wall_seconds=100.0 + k, host="elsewhere")

    other = edited_copy(quick, tmp_path / "other", elsewhere, drop={2})
    roots = [quick, other]
    table = tidy_records(roots)
    metrics = ["nmi", "knn_accuracy"]
    expected = [(json.loads(path.read_text()), metric) for root in roots
                for path in sorted(root.glob("*/record.json")) for metric in metrics]
    assert len(table) == len(expected) == (7 + 6) * 2
    for (_, row), (record, metric) in zip(table.iterrows(), expected):
        config, prov = record["config"], record["provenance"]
        assert (row["cell"], row["metric"], row["value"]) == (record["cell"], metric, record["metrics"][metric])
        assert row["constraints.count"] == config["constraints"]["count"] and row["seed"] == config["seed"]
        assert row["solver.tol"] == config["solver"]["tol"] and row["solver.slack"] == config["solver"]["slack"]
        assert row["constraints.epsilon"] == config["constraints"]["epsilon"]
        assert row["evaluate"] == json.dumps(config["evaluate"])
        assert (row["provenance.started"], row["provenance.wall_seconds"], row["provenance.host"]) == \
            (prov["started"], prov["wall_seconds"], prov["host"]), (record["cell"], metric)


def test_report_time_sums_are_the_sums_of_the_records(quick, tmp_path):
    """The provenance section's solver and cell time sums against the records' own fields, each given a
    distinct value (so that a sum read from the wrong field, e.g. the cell's CPU time summed from its
    wall seconds, cannot agree by chance)."""
    from kernlearn_cli.report.html import report_html

    def timed(k, record):
        record.update(seconds=0.5 + k, cpu_seconds=0.25 + 2 * k)
        record["provenance"].update(wall_seconds=10.0 + 3 * k, cpu_seconds=7.0 + 5 * k)

    root = edited_copy(quick, tmp_path / "timed", timed)
    records = [json.loads(p.read_text()) for p in sorted(root.glob("*/record.json"))]
    solver_wall, solver_cpu = (sum(r[key] for r in records) for key in ("seconds", "cpu_seconds"))
    cell_wall, cell_cpu = (sum(r["provenance"][key] for r in records) for key in ("wall_seconds", "cpu_seconds"))
    assert len({solver_wall, solver_cpu, cell_wall, cell_cpu}) == 4
    page = report_html([root])
    assert f"<td>solver time (sum)</td><td>{solver_wall:.3f} s wall, {solver_cpu:.3f} s CPU</td>" in page
    assert f"<td>cell time (sum)</td><td>{cell_wall:.3f} s wall, {cell_cpu:.3f} s CPU</td>" in page


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
    for section in ("settings", "tables", "figures", "histories", "problems", "provenance"):
        assert f'<section id="{section}">' in page
    assert page.count('<table class="sortable">') == 4                  # long, time, memory, cells not in the tables
    assert 'th scope="col">certificate (worst)</th>' in page
    assert "0/1 †" in page and page.count('<tr class="unconverged">') == 1    # count 100: 1 failed, 1 missing, 1 † 
    assert page.count("<figure id=") == 2                                   # nmi, knn_accuracy vs constraints.count
    assert page.count(" cell(s))</summary>") == 3 and page.count("<details open>") == 2   # solver, its first setting
    assert page.count("<polyline") == 7
    assert f"thinned to at most {HISTORY_POINTS} points per line" in page
    assert "SolverError: a stand-in failure" in page and ">missing<" in page and ">failed<" in page
    assert f"kernlearn run {quick / 'experiment.yaml'} --out {quick}" in page
    assert "<td>peak memory (largest cell)</td><td>123.0 GB (7 of 7 cells say)</td>" in page
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
STUDY = {**TINY_STUDY, "statements": [{**TINY_STUDY["statements"][0], "explanation": "stand-in"},
                                      {"table": "tiny_acc", "row": 300, "col": "burg", "paper": 0.2, "rule": "abs 0.01", "quote": "0.2",
                                       "where": "Table 1, last row"}]}


@pytest.fixture(scope="module")
def paper(tmp_path_factory):
    """``kernlearn reproduce`` of the tiny study; returns (study file, results root)."""
    import subprocess

    import yaml

    here = tmp_path_factory.mktemp("paper")
    (here / "tinypaper").mkdir()
    (here / "tinypaper" / "tiny.yaml").write_text(yaml.safe_dump(TINY_CONFIG))
    (here / "tinypaper" / "study.yaml").write_text(yaml.safe_dump(STUDY, sort_keys=False))
    (here / "tinypaper" / "study.md").write_text("## explanation stand-in\n\nA stand-in explanation.\n")  # prose file
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


def explanation(results) -> str:
    """The first statement's explanation, as the verdict file has it (the study's text, or its prose
    file's section where study files name one)."""
    return pd.read_csv(results / "tables" / "tinypaper_verdicts.csv")["explanation"][0]


def test_paper_report_filters_verdicts_by_kind_and_explains_them(paper):
    from kernlearn_cli.verdicts import KINDS

    study, results = paper
    page = (results / "tinypaper_report.html").read_text()
    for kind in KINDS:
        assert f'<input type="checkbox" data-kind="{kind}" checked>' in page
    assert page.count("<tr data-kind=") == 2 and '<tr data-kind="deviates">' in page
    assert f"<summary>reproduced</summary>{explanation(results)}</details>" in page
    assert "<h3>accuracy</h3>" in page and '<section id="provenance">' in page and page.count("<figure id=") == 1
    assert "Made by <code>kernlearn reproduce tinypaper</code>" in page and study.is_file()


# ---- in a real browser (issue 48 item 5): headless Chromium driven over the DevTools protocol -------------

CHROMIUM = next((shutil.which(name) for name in ("chromium", "chromium-headless-shell", "chromium-browser")
                 if shutil.which(name)), None)
#: Where the browser test's screenshots go (git-ignored).
SCREENSHOTS = REPO / "screenshots"


class Browser:
    """Headless Chromium over ``--remote-debugging-pipe`` (the DevTools protocol on file descriptors 3
    and 4, NUL-separated JSON: no websocket library needed): open a page, evaluate JavaScript in it,
    keep its console errors and uncaught exceptions, take a screenshot."""

    def __init__(self, profile: Path):
        import fcntl
        import os
        import subprocess

        to_browser, self._write = os.pipe()
        self._read, from_browser = os.pipe()

        def pipes_on_3_and_4():
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_browser, from_browser)]
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        self.proc = subprocess.Popen([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                      "--remote-debugging-pipe", f"--user-data-dir={profile}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=False,
                                     preexec_fn=pipes_on_3_and_4)
        os.close(to_browser)
        os.close(from_browser)
        self._buffer, self._id, self.events, self.session = b"", 0, [], None
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")

    def _message(self, timeout: float = 30.0) -> dict:
        import os
        import select

        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._read], [], [], timeout)
            chunk = os.read(self._read, 1 << 20) if ready else b""
            assert chunk, "Chromium did not answer"
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(line)

    def send(self, method: str, **params) -> dict:
        import os

        self._id += 1
        message = {"id": self._id, "method": method, "params": params}
        if self.session:
            message["sessionId"] = self.session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._message()
            if answer.get("id") == self._id:
                assert "error" not in answer, answer["error"]
                return answer["result"]
            self.events.append(answer)

    def open(self, page: Path) -> None:
        self.send("Emulation.setDeviceMetricsOverride", width=1250, height=1600, deviceScaleFactor=1, mobile=False)
        self.send("Page.navigate", url=page.resolve().as_uri())
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            self.events.append(self._message())

    def js(self, expression: str):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        assert "exceptionDetails" not in result, result["exceptionDetails"]
        return result["result"].get("value")

    def errors(self) -> list:
        """Uncaught exceptions, console errors and logged errors so far."""
        return [e for e in self.events if e.get("method") == "Runtime.exceptionThrown"
                or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "assert"))
                or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")]

    def screenshot(self, path: Path) -> None:
        import base64

        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"]))

    def close(self) -> None:
        import os

        self.proc.kill()
        self.proc.wait()
        os.close(self._write)
        os.close(self._read)


@pytest.fixture
def browser(tmp_path):
    if CHROMIUM is None:
        pytest.skip("no Chromium on this machine (Debian: apt-get install chromium; .ci/run installs it): the "
                    "browser test needs it")
    b = Browser(tmp_path / "profile")
    yield b
    b.close()


#: Sorts a table by a click on its heading; returns the column's numbers (first number of each cell) after.
SORT = """(() => {{const t = document.querySelectorAll("table.sortable")[{table}];
const th = Array.from(t.tHead.rows[0].cells).find(h => h.textContent === "{column}"); th.click();
return [th.getAttribute("aria-sort"), Array.from(t.tBodies[0].rows, r => parseFloat(r.cells[th.cellIndex].textContent))];
}})()"""


def test_run_report_in_a_browser(quick, browser, tmp_path, inproc):
    assert inproc("report", quick, "-o", tmp_path / "report.html")[0] == 0
    browser.open(tmp_path / "report.html")
    assert browser.errors() == []
    assert browser.js("document.querySelectorAll('section').length") == 6
    assert browser.js("document.querySelectorAll('table').length") == 6             # 4 sortable, settings, provenance
    browser.js("document.querySelectorAll('details').forEach(d => d.open = true)")
    sizes = browser.js("Array.from(document.querySelectorAll('svg'), s => s.getBoundingClientRect().width > 100 "
                       "&& s.getBoundingClientRect().height > 100)")
    assert sizes == [True] * 5                                                       # 2 figures, 3 histories
    browser.js("document.querySelectorAll('details details').forEach(d => d.open = false)")
    order, values = browser.js(SORT.format(table=0, column="nmi"))
    assert order == "ascending" and values == sorted(values) and len(values) == 3
    order, values = browser.js(SORT.format(table=0, column="nmi"))
    assert order == "descending" and values == sorted(values, reverse=True)
    browser.js(SORT.format(table=0, column="constraints.count"))
    browser.screenshot(SCREENSHOTS / "run_report.png")
    assert browser.errors() == []


def test_paper_report_in_a_browser(paper, browser):
    _, results = paper
    browser.open(results / "tinypaper_report.html")
    assert browser.errors() == []
    assert browser.js("document.querySelectorAll('#verdict-table tbody tr').length") == 2
    visible = "Array.from(document.querySelectorAll('#verdict-table tbody tr'), r => !r.hidden && r.offsetHeight > 0)"
    toggle = ("(() => {{const b = document.querySelector('input[data-kind=\"{kind}\"]'); b.checked = {on}; "
              "b.dispatchEvent(new Event('change')); return document.getElementById('verdicts-shown').textContent;}})()")
    assert browser.js(toggle.format(kind="deviates", on="false")) == "1"
    assert browser.js(visible) == [True, False]
    assert browser.js(toggle.format(kind="deviates", on="true")) == "2" and browser.js(visible) == [True, True]
    explained = "document.querySelector('#verdict-table details')"
    assert browser.js(f"{explained}.open") is False
    browser.js(f"{explained}.querySelector('summary').click()")
    assert browser.js(f"{explained}.open") is True
    assert browser.js(f"{explained}.textContent") == "reproduced" + explanation(results)
    assert browser.js("document.querySelectorAll('figure svg').length") == 1
    browser.screenshot(SCREENSHOTS / "paper_report.png")
    assert browser.errors() == []
