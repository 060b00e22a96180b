"""Issue 56 item 7: ``kernlearn report`` says what ran (a Settings section, as ``kernlearn show`` prints
a cell), keeps peak memory out of the solver-time table, and its figures (and ``kernlearn plot``'s)
are read in plain figures: no offset or scientific notation on a near-constant metric, a bounded
score's error bars within [0, 1], and the red ring in the caption only when a cell did not converge."""

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

from kernlearn_cli.report import figures, records

from helpers import quick_run


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """``configs/quick.yaml``'s results (3 constraint counts x 3 seeds on iris), each record given the
    data files it read (``inputs``) and a peak memory of 250 MB."""
    out = quick_run(tmp_path_factory) / "results" / "quick_iris_burg"
    data = out.parent / "features.csv"
    data.write_text("1,2\n3,4\n")
    for path in out.glob("*/record.json"):
        record = json.loads(path.read_text())
        record["inputs"] = {str(data): hashlib.sha256(data.read_bytes()).hexdigest()}
        record["peak_rss_bytes"] = 250_000_000
        path.write_text(json.dumps(record))
    return out


def section(page: str, ident: str) -> str:
    return re.search(f'<section id="{ident}">(.*?)</section>', page, re.S).group(1)


def test_report_has_a_settings_section_with_n_kernel_constraints_and_data_files(quick):
    from kernlearn_cli.report.html import report_html
    from kernlearn_cli.report.show import describe_record

    page = report_html([quick])
    settings = section(page, "settings")
    assert "<td>dataset</td><td>iris (n = 150) (all 9)</td>" in settings
    assert "<td>kernel</td><td>linear (rank 4) (all 9)</td>" in settings
    for count in (10, 30, 100):
        assert f"idealized_pairs ({count} constraints): epsilon=0.25 (3)" in settings
    assert "burg: tol=0.001, slack=1.0;" in settings
    data = quick.parent / "features.csv"
    digest = hashlib.sha256(data.read_bytes()).hexdigest()[:12]
    assert f"{data} (sha256 {digest}) (all 9)" in settings
    assert "constraints.count: 10, 30, 100; seed: 0, 1, 2" in settings
    shown = describe_record(json.loads(next(quick.glob("*/record.json")).read_text()))   # the same words as show
    assert "dataset     iris (n = 150)" in shown and "kernel      linear (rank 4)" in shown
    assert f"data files  {data} (sha256 {digest})" in shown


def test_peak_memory_is_not_in_the_time_table(quick):
    from kernlearn_cli.report.html import report_html

    tables = section(report_html([quick]), "tables")
    times = tables[tables.index("<h3>Solver time (s)</h3>"):tables.index("<h3>Peak memory (MB)</h3>")]
    assert "<th scope=\"col\">seconds</th>" in times and "peak" not in times and "rss" not in times
    memory = tables[tables.index("<h3>Peak memory (MB)</h3>"):]
    assert "<th scope=\"col\">peak memory (MB)</th>" in memory and "<td>250.0 ± 0.0</td>" in memory
    assert "<th scope=\"col\">seconds</th>" not in memory


def write_cell(root: Path, count: int, seed: int, nmi: float, accuracy: float, converged: bool = True) -> None:
    """A finished cell written directly (no factors: the curves need none)."""
    cell = f"count-{count}_seed-{seed}"
    (root / cell).mkdir(parents=True)
    record = {"experiment": "near", "cell": cell, "grid": {"constraints.count": count, "seed": seed}, "seed": seed,
              "solver": "burg", "dataset": "blobs", "constraints": count, "n": 120, "rank0": 2,
              "converged": converged, "iterations": 3, "objective": 0.0, "seconds": 0.01,
              "metrics": {"nmi": nmi, "knn_accuracy": accuracy}}
    (root / cell / "record.json").write_text(json.dumps(record))


@pytest.fixture
def near_constant(tmp_path):
    """Cells whose NMI is 1 to within 3e-4 and whose accuracy's mean + std exceeds 1 (0.95, 1, 1)."""
    nmi = iter(1.0 - np.array([0, 2e-5, 5e-5, 0, 1e-4, 3e-4, 0, 0, 1.5e-4]))
    accuracy = iter([1.0, 1.0, 0.95, 1.0, 0.97, 1.0, 1.0, 1.0, 1.0])
    for count in (10, 30, 60):
        for seed in range(3):
            write_cell(tmp_path / "near", count, seed, next(nmi), next(accuracy))
    return tmp_path / "near"


def drawn_axes(df, metric, output):
    """The axes ``plot_curves`` draws (as ``kernlearn plot`` and the report call it), drawn."""
    import matplotlib.pyplot as plt

    kept = []
    finish = figures.finish_figure
    figures.finish_figure = lambda fig, ax, *a, **k: (kept.append(fig), finish(fig, ax, *a, **k))
    try:
        figures.plot_curves(df, metric, "constraints.count", None, output=output)
    finally:
        figures.finish_figure = finish
    fig = kept[0]
    fig.canvas.draw()
    plt.close(fig)
    return fig.axes[0]


def test_no_offset_text_on_a_near_constant_metric(near_constant, tmp_path):
    df, _ = records.load_records([near_constant], "plot")
    ax = drawn_axes(df, "nmi", tmp_path / "nmi.png")
    assert ax.yaxis.get_offset_text().get_text() == ""
    ticks = [t.get_text().replace("−", "-") for t in ax.get_yticklabels() if t.get_text()]
    assert ticks and all(0.999 < float(t) <= 1.0001 for t in ticks), ticks       # the values, not deviations


def test_bounded_scores_error_bars_stay_within_0_and_1(near_constant, tmp_path):
    df, _ = records.load_records([near_constant], "plot")
    for metric in ("knn_accuracy", "nmi"):
        ax = drawn_axes(df, metric, tmp_path / f"{metric}.png")
        (container,) = ax.containers
        ends = np.concatenate([np.asarray(seg)[:, 1] for col in container.lines[2] for seg in col.get_segments()])
        assert ends.size and ends.min() >= 0.0 and ends.max() <= 1.0, (metric, ends.max())
        assert ax.get_legend().get_title().get_text() == "mean ± std over 3 seeds, clipped to [0, 1]"


def test_caption_mentions_the_red_ring_only_when_a_cell_did_not_converge(near_constant):
    from kernlearn_cli.report.html import report_html

    captions = re.findall(r"<figcaption>(.*?)</figcaption>", report_html([near_constant]))
    assert captions and not any("red" in c for c in captions), captions
    assert all("clipped to [0, 1]" in c for c in captions), captions
    path = next(near_constant.glob("count-30_seed-1/record.json"))
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, "converged": False}))
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", report_html([near_constant]))
    assert captions and all("a red ring: a point with a cell that did not converge" in c for c in captions)
