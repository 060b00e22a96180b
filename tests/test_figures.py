"""Figures a reader can read: human legend labels in numeric order, legends clear of the data,
and ``plot-history`` as the README runs it on the quick Burg-with-slack run."""

import json
import re
import struct
from pathlib import Path

import h5py
import numpy as np
import pytest

from kernlearn_cli.report import figures, records
from kernlearn_cli.report import labels as figure_labels

from helpers import quick_run


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """The README's first run in a fresh folder (``helpers.quick_run``); returns that folder."""
    return quick_run(tmp_path_factory)


@pytest.fixture
def drawn(monkeypatch):
    """The figures the plotting functions finish, kept to be inspected after they are saved."""
    kept = []
    finish = figures.finish_figure

    def keep(fig, ax, *args, **kwargs):
        kept.append(fig)
        finish(fig, ax, *args, **kwargs)

    monkeypatch.setattr(figures, "finish_figure", keep)
    return kept


def labels(fig) -> list[str]:
    return [t.get_text() for t in fig.axes[0].get_legend().get_texts()]


def assert_human(texts: list[str]) -> None:
    """No ``key=value`` config strings, no dotted config keys, no experiment names."""
    for text in texts:
        assert not re.search(r"\S=|=\S|[a-z]\.[a-z]", text), text
        assert "quick_iris_burg" not in text and "exp_" not in text, text


def write_cell(root: Path, cell: str, *, experiment: str = "exp_a", grid: dict, seed: int = 0,
               dataset: str = "iris", metrics: dict | None = None, history: dict | None = None) -> None:
    """A finished cell written directly: its record and, with ``history``, a factors file."""
    folder = root / cell
    folder.mkdir(parents=True)
    record = {"experiment": experiment, "cell": cell, "grid": {**grid, "seed": seed}, "seed": seed,
              "solver": "burg", "dataset": dataset, "constraints": 10, "n": 5, "rank0": 2, "converged": True,
              "iterations": 3, "objective": 0.0, "seconds": 0.01, "metrics": metrics or {"nmi": 0.5 + seed / 10}}
    (folder / "record.json").write_text(json.dumps(record))
    with h5py.File(folder / "factors.h5", "w") as f:
        f.create_dataset("G", data=np.eye(5))
        for key, values in (history or {}).items():
            f.create_dataset(f"history/{key}", data=np.asarray(values, dtype=float))


def test_readme_plot_history_on_the_quick_burg_with_slack_run(quick, inproc, monkeypatch):
    """The README's command draws the history the solver records; a key it does not record is one
    paragraph naming the keys the files hold."""
    monkeypatch.chdir(quick)
    code, out, err = inproc("plot-history", "results/quick_iris_burg", "--mean", "--logx", "-o", "d.png")
    assert code == 0, err
    assert "3 line(s) of history 'dual_change'" in err
    assert (quick / "d.png").read_bytes()[:4] == b"\x89PNG"
    code, _, err = inproc("plot-history", "results/quick_iris_burg", "-k", "dual_objective", "-o", "e.png")
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "no history 'dual_objective'" in err and "dual_change, lambda_norm, max_violation" in err


def test_history_legend_is_human_and_in_numeric_order(quick, drawn, tmp_path):
    root = quick / "results" / "quick_iris_burg"
    figures.plot_history([root], "dual_change", mean=True, output=tmp_path / "m.png")
    figures.plot_history([root], "dual_change", output=tmp_path / "c.png")
    mean, cells = map(labels, drawn)
    assert mean == ["constraints = 10 (3 seeds)", "constraints = 30 (3 seeds)", "constraints = 100 (3 seeds)"]
    assert cells == [f"constraints = {count}, seed {seed}" for count in (10, 30, 100) for seed in range(3)]
    assert_human(mean + cells)


def test_plot_names_the_solver_not_the_experiment(quick, drawn, tmp_path):
    df, _ = records.load_records([quick / "results" / "quick_iris_burg"], "plot")
    figures.plot_curves(df, "nmi", "constraints.count", None, output=tmp_path / "nmi.png")
    assert labels(drawn[0]) == ["burg"]


def test_grid_of_datasets_shows_each_dataset_once(tmp_path, drawn):
    """A grid over ``dataset.name`` (also the record's ``dataset``) labels a line ``chessboard, seed 0``."""
    for name in ("soybean_small", "chessboard"):
        for seed in range(2):
            write_cell(tmp_path / "out", f"{name}_{seed}", grid={"dataset.name": name}, seed=seed, dataset=name,
                       history={"objective": [3.0, 2.0, 1.0 + seed]})
    figures.plot_history([tmp_path / "out"], "objective", output=tmp_path / "h.png")
    assert labels(drawn[0]) == ["chessboard, seed 0", "chessboard, seed 1", "soybean_small, seed 0",
                                "soybean_small, seed 1"]
    assert figures.plot_history([tmp_path / "out"], output=tmp_path / "d.png") == (4, "objective")   # ADMM's key


def test_numbers_given_as_text_and_greek_names_sort_numerically(tmp_path, drawn):
    """YAML reads ``1e-3`` as text; curves still go 1e-3, 0.1, 10; ``solver.gamma`` shows as γ."""
    for k, tol in enumerate(("10", "1e-3", "0.1")):
        for count in (10, 30):
            write_cell(tmp_path / "curves", f"t{k}_{count}", grid={"solver.tol": tol, "constraints.count": count})
    df, _ = records.load_records([tmp_path / "curves"], "plot")
    figures.plot_curves(df, "nmi", "constraints.count", None, output=tmp_path / "c.png")
    assert labels(drawn[0]) == ["tol = 1e-3", "tol = 0.1", "tol = 10"]
    for gamma in (10, 100, 30):
        write_cell(tmp_path / "paths", f"g{gamma}", grid={"solver.gamma": gamma},
                   metrics={"error_path": [0.3, 0.2], "gamma_path": [1.0, 2.0]})
    figures.plot_paths([tmp_path / "paths"], "error_path", "gamma_path", by="solver.gamma", output=tmp_path / "p.png")
    assert labels(drawn[1]) == ["γ = 10 (1 seed)", "γ = 30 (1 seed)", "γ = 100 (1 seed)"]


def test_legend_is_outside_the_axes_and_saved_whole(quick, drawn, tmp_path):
    root = quick / "results" / "quick_iris_burg"
    df, _ = records.load_records([root], "plot")
    figures.plot_curves(df, "nmi", "constraints.count", "seed", output=tmp_path / "a.png")
    figures.plot_history([root], "dual_change", output=tmp_path / "b.png")
    for fig, name in zip(drawn, ("a.png", "b.png")):
        fig.canvas.draw()
        ax = fig.axes[0]
        box, data = ax.get_legend().get_window_extent(), ax.get_window_extent()
        assert box.x0 > data.x1 or box.y1 < data.y0 or box.x1 < data.x0 or box.y0 > data.y1
        width = struct.unpack(">I", (tmp_path / name).read_bytes()[16:20])[0]    # PNG IHDR width, 120 dpi
        assert width / 120 >= (box.x1 - data.x0) / fig.dpi


# ---- issue 44, item 10: labels in words, error bars said, series told apart, log-y over decades ----

def series(ax) -> list[tuple]:
    """(colour, marker, line style) of each curve: an error-bar plot's data lines, else the plain lines."""
    lines = [c.lines[0] for c in ax.containers] or ax.get_lines()
    return [(line.get_color(), line.get_marker(), line.get_linestyle()) for line in lines]


def test_axes_say_what_they_draw_and_the_legend_what_the_bars_are(quick, drawn, tmp_path):
    root = quick / "results" / "quick_iris_burg"
    df, _ = records.load_records([root], "plot")
    figures.plot_curves(df, "nmi", "constraints.count", None, output=tmp_path / "c.png")
    figures.plot_history([root], "dual_change", mean=True, output=tmp_path / "m.png")
    figures.plot_history([root], "dual_change", output=tmp_path / "h.png")
    curves, mean, cells = (fig.axes[0] for fig in drawn)
    assert (curves.get_xlabel(), curves.get_ylabel()) == ("number of constraints", "kernel k-means NMI (0–1)")
    assert mean.get_ylabel() == cells.get_ylabel() == "relative dual change per sweep"
    assert curves.get_legend().get_title().get_text() == "mean ± std over 3 seeds, clipped to [0, 1]"   # NMI
    assert mean.get_legend().get_title().get_text() == "mean ± std over 3 seeds"
    assert cells.get_legend().get_title().get_text() == ""                     # one line per cell: no spread
    assert figure_labels.axis_label("seconds") == "solver wall time (s)" and figure_labels.axis_label("my.key") == "my.key"
    assert figure_labels.spread_caption([3, 2, 3]) == "mean ± std over 2–3 seeds"
    assert figure_labels.spread_caption([1, 1]) == "one seed each (no spread shown)"
    assert_human([curves.get_xlabel(), curves.get_ylabel(), mean.get_ylabel()])


def test_series_differ_in_marker_and_line_style(quick, drawn, tmp_path):
    """Curves that coincide (tsuda2005 Fig. 3) stay apart: no two series share marker or line style
    among the first four, and no two of the first 28 share both."""
    root = quick / "results" / "quick_iris_burg"
    df, _ = records.load_records([root], "plot")
    figures.plot_curves(df, "nmi", "constraints.count", "seed", output=tmp_path / "c.png")
    figures.plot_history([root], "dual_change", output=tmp_path / "h.png")
    curves, cells = (series(fig.axes[0]) for fig in drawn)
    assert len(curves) == 3 and len(cells) == 9 and len(set(cells)) == 9
    for styles in (curves, cells[:4]):
        assert len({m for _, m, _ in styles}) == len(styles) and len({ls for _, _, ls in styles}) == len(styles)
    assert len({figure_labels.series_style(k)["marker"] + figure_labels.series_style(k)["ls"] for k in range(28)}) == 28
    assert {c.lines[0].get_markerfacecolor() for c in drawn[0].axes[0].containers} == {"none"}    # open markers


@pytest.mark.slow
def test_plot_history_uses_log_y_where_values_span_decades(quick, drawn, inproc, tmp_path, monkeypatch):
    """The README's ``plot-history --mean --logx``: dual_change falls over 4 decades, so the value axis is
    logarithmic unless asked otherwise; a history with negative values stays linear."""
    monkeypatch.chdir(quick)
    assert inproc("plot-history", "results/quick_iris_burg", "--mean", "--logx", "-o", tmp_path / "a.png")[0] == 0
    assert inproc("plot-history", "results/quick_iris_burg", "--mean", "--linear-y", "-o", tmp_path / "b.png")[0] == 0
    assert inproc("plot", "results/quick_iris_burg", "-m", "nmi", "--logy", "-o", tmp_path / "c.png")[0] == 0
    assert [fig.axes[0].get_yscale() for fig in drawn] == ["log", "linear", "log"]
    for seed in range(2):
        write_cell(tmp_path / "out", f"c{seed}", grid={}, seed=seed, history={"objective": [1e3, 1.0, -0.5 - seed]})
    figures.plot_history([tmp_path / "out"], "objective", output=tmp_path / "d.png")
    assert drawn[-1].axes[0].get_yscale() == "linear"
    assert figure_labels.log_values([[1e-4, 2.0]], None) and not figure_labels.log_values([[0.5, 20.0]], None)
    assert not figure_labels.log_values([[1e-4, 2.0]], False)


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_figures_are_the_same_bytes_for_the_same_inputs(quick, tmp_path, suffix):
    root = quick / "results" / "quick_iris_burg"
    for name in ("a", "b"):
        figures.plot_history([root], "dual_change", mean=True, logx=True, output=tmp_path / f"{name}{suffix}")
    assert (tmp_path / f"a{suffix}").read_bytes() == (tmp_path / f"b{suffix}").read_bytes()
