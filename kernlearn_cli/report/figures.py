"""Figures of the records: curves of a metric over a setting, per-iteration histories, and paths of
list metrics; the only module that imports matplotlib (when it draws).

What the figures say (labels, legends, styles, curve order) is :mod:`.labels`.  A point or curve
that includes a cell that did not converge is ringed in red.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..atomic import atomic_path
from ..errors import ConfigError, KernlearnError
from .labels import (BOUNDED, axis_label, distinguishing, error_bars, log_values, marks_every, natural_key,
                     seeds_text, series_style, split_curves, spread_caption)
from .records import MARK, histories_of, load_records, records_of


FIGURE_FORMATS = (".png", ".pdf", ".svg")


def check_figure_path(output: Path, command: str) -> None:
    """Refuse a figure file name whose extension matplotlib would not write."""
    if Path(output).suffix.lower() not in FIGURE_FORMATS:
        raise ConfigError(f"{command} -o '{output}': unknown figure format '{Path(output).suffix or '(none)'}'; "
                          f"use one of {', '.join(FIGURE_FORMATS)}.")


def finish_figure(fig, ax, xlabel: str, ylabel: str, title: str | None, output: Path) -> None:
    """Label, grid and title the axes, then save the figure atomically and close it.

    The axes keep their size; the saved figure is cropped or widened to what is drawn, a legend
    outside the axes (:func:`outside_legend`) included. The file holds no date (nor SVG's random
    ids), so the same figure gives the same bytes.

    Parameters
    ----------
    fig, ax : matplotlib Figure and Axes
        The figure drawn and its one axes.
    xlabel, ylabel : str
        Keys of the axes (``constraints.count``, ``knn_error``), shown by :func:`axis_label`, or text.
    title : str or None
        Title above the axes (none when empty).
    output : Path
        Figure file; its extension (``.png``, ``.pdf``, ``.svg``) is the format.
    """
    import matplotlib
    import matplotlib.pyplot as plt

    ax.set_xlabel(axis_label(xlabel))
    ax.set_ylabel(axis_label(ylabel))
    plain_ticks(ax)
    ax.grid(alpha=0.3)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    output = Path(output)
    fmt = output.suffix.lstrip(".").lower() or "png"
    metadata = {"pdf": {"CreationDate": None}, "svg": {"Date": None}}.get(fmt)
    legend = ax.get_legend()
    output.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(output) as tmp, matplotlib.rc_context({"svg.hashsalt": "kernlearn"}):
        fig.savefig(tmp, format=fmt, dpi=120, metadata=metadata, bbox_inches="tight",
                    bbox_extra_artists=[legend] if legend else None)
    plt.close(fig)


def plain_ticks(ax) -> None:
    """Tick labels of the linear axes of ``ax`` as the values themselves: no offset (a near-constant NMI
    would read 0.000025 … −0.000150 under a "+1") and no scientific notation; logarithmic axes keep
    their decades, and an axis of names its names."""
    from matplotlib.ticker import ScalarFormatter

    for axis, which in (("x", ax.xaxis), ("y", ax.yaxis)):
        if isinstance(which.get_major_formatter(), ScalarFormatter):
            ax.ticklabel_format(axis=axis, useOffset=False, style="plain")


#: History datasets ``plot-history`` draws when no key is given, in this order: the first every cell
#: records (DefiniteBoost's dual objective, ADMM's and TRIN's objective, Burg's and von Neumann's dual
#: change, MEG's loss).
HISTORY_KEYS = ("dual_objective", "objective", "dual_change", "loss")


def outside_legend(ax, fontsize: float = 8, title: str | None = None) -> None:
    """Put the legend to the right of the axes, clear of the data, under ``title`` (e.g. what the error
    bars are, :func:`spread_caption`).

    It stays out of ``tight_layout`` (the axes keep their size); :func:`finish_figure` widens the
    saved figure to hold it.

    Parameters
    ----------
    ax : matplotlib Axes
        Axes whose labelled artists the legend lists.
    fontsize : float
        Font size of the entries.
    title : str or None
        Legend title.
    """
    legend = ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0, fontsize=fontsize,
                       title=title, title_fontsize=fontsize)
    legend.set_in_layout(False)


def plot_curves(df: pd.DataFrame, metric: str, x: str, by: str | None, *, loglog: bool = False,
                logx: bool = False, logy: bool | None = None, title: str | None = None, output: Path) -> int:
    """Draw the mean of ``metric`` against ``x`` with ± std error bars over seeds, one curve per setting;
    a score bounded to [0, 1] has its bars clipped to it (:func:`~.labels.error_bars`, the legend says so).

    Cells without an ``x`` value (e.g. K0 or a target kernel) are dashed horizontal baselines.
    Points that include a cell that did not converge are ringed in red. Curves differ in colour,
    marker and line style (:func:`series_style`); the legend's title says what the error bars are
    (:func:`spread_caption`), the axes are labelled by :func:`axis_label`.

    Parameters
    ----------
    df : DataFrame
        The cells (:func:`load_records`).
    metric, x : str
        Columns of the y and x axes.
    by : str or None
        One curve per value of this column; None: one per combination of the settings that differ
        between the cells (:func:`distinguishing`). Curves are labelled by those settings
        (:func:`split_curves`) and drawn in numeric order.
    loglog, logx : bool
        Logarithmic axes.
    logy : bool or None
        Logarithmic value axis; None: when the means are positive and span more than
        :data:`~.labels.LOG_DECADES` decades (:func:`log_values`); ``loglog`` sets it.
    title : str or None
        Figure title.
    output : Path
        Figure file.

    Returns
    -------
    int
        The number of ringed points.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if df.empty:
        raise KernlearnError("plot: no finished cells.")
    for key in (metric, x, by):
        if key is not None and key not in df.columns:
            raise ConfigError(f"plot: no column '{key}'; valid: {', '.join(c for c in df.columns if c != 'cell')}.")
    fig, ax = plt.subplots(figsize=(5.5, 4))
    baselines = df[df[x].isna()]
    if not baselines.empty:
        for k, (label, part) in enumerate(split_curves(baselines, distinguishing(baselines, {x}))):
            ax.axhline(part[metric].mean(), ls="--", lw=1, color=f"C{7 + k % 3}", label=label)
    ringed, counts = 0, []
    means = [baselines[metric].mean()] if not baselines.empty else []
    points = df[df[x].notna()]
    for k, (label, part) in enumerate(split_curves(points, [by] if by else distinguishing(points, {x}))):
        stats = part.groupby(x)[metric].agg(["mean", "std", "count"]).sort_index()
        ax.errorbar(stats.index, stats["mean"], yerr=error_bars(stats["mean"], stats["std"], metric), ms=5,
                    capsize=3, label=label, **series_style(k))
        means.append(stats["mean"])
        counts += list(stats["count"])
        bad = (part["converged"] == False).groupby(part[x]).sum().reindex(stats.index).fillna(0) > 0  # noqa: E712
        if bad.any():
            ax.plot(stats.index[bad], stats["mean"][bad], ls="none", marker="o", ms=11, mfc="none", mec="red",
                    mew=1.2, label=None if ringed else f"{MARK} not converged (certificate not met)")
            ringed += int(bad.sum())
    if loglog or logx:
        ax.set_xscale("log")
    if log_values(means, True if loglog else logy):
        ax.set_yscale("log")
    outside_legend(ax, title=spread_caption(counts, metric in BOUNDED) if counts else None)
    finish_figure(fig, ax, x, metric, title, output)
    return ringed


def history_key(histories: dict, key: str | None) -> str:
    """The history dataset a ``plot-history`` figure draws.

    Parameters
    ----------
    histories : dict
        Each cell to (its factors file, the names of its history datasets).
    key : str or None
        The dataset asked for; None: the first of :data:`HISTORY_KEYS` that every cell records.

    Returns
    -------
    str
        The key.

    Raises
    ------
    ConfigError
        When a cell lacks ``key``, or no default is recorded by every cell; the message names the
        datasets the files do hold.
    """
    common = set.intersection(*(set(names) for _, names in histories.values()))
    if key is None:
        key = next((k for k in HISTORY_KEYS if k in common), None)
        if key is None:
            raise ConfigError(f"plot-history: the cells record none of {', '.join(HISTORY_KEYS)}; the history "
                              f"datasets every cell holds: {', '.join(sorted(common)) or '(none)'}; "
                              f"name one with -k KEY.")
        return key
    for cell, (path, names) in histories.items():
        if key not in names:
            raise ConfigError(f"plot-history: cell {cell} ({path}) has no history '{key}'; its history datasets: "
                              f"{', '.join(sorted(names)) or '(none)'}; every cell holds: "
                              f"{', '.join(sorted(common)) or '(none)'}.")
    return key


def plot_history(roots: list[Path], key: str | None = None, *, mean: bool = False, logx: bool = False,
                 logy: bool | None = None, xlabel: str = "step", title: str | None = None,
                 output: Path) -> tuple[int, str]:
    """Draw the per-iteration history ``history/<key>`` of every finished cell against its index.

    Reads ``<cell>/factors.h5`` of each cell with a ``record.json`` under ``roots``. One line per
    cell, labelled by the settings that differ between the cells and, unless all share one, its
    seed (``chessboard, seed 0``); with ``mean``, one line per setting (cells that differ only in
    the seed) with a ± std band, shorter runs held at their last value (the legend's title says so,
    :func:`spread_caption`). Lines are in the numeric order of the settings and differ in colour,
    marker and line style (:func:`series_style`).

    Parameters
    ----------
    roots : list of Path
        Results folders.
    key : str or None
        History dataset; None: the first of :data:`HISTORY_KEYS` every cell records
        (:func:`history_key`).
    mean : bool
        Mean ± std over seeds instead of one line per cell.
    logx : bool
        Symmetric-log step axis.
    logy : bool or None
        Log value axis; None: when the values drawn are positive and span more than
        :data:`~.labels.LOG_DECADES` decades (:func:`log_values`), as a convergence measure does.
    xlabel : str
        Label of the x axis.
    title : str or None
        Figure title.
    output : Path
        Figure file.

    Returns
    -------
    (int, str)
        The number of lines drawn and the key drawn.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df, _ = load_records(roots, "plot-history")
    if df.empty:
        raise KernlearnError(f"plot-history: no finished cells under {', '.join(map(str, roots))}.")
    arrays = {cell: (where, histories_of(where, rec)) for root in roots
              for cell, where, rec in records_of(root, "plot-history") if not isinstance(rec, ValueError)}
    key = history_key({cell: (where, list(h)) for cell, (where, h) in arrays.items() if cell in set(df["cell"])}, key)
    curves = {cell: arrays[cell][1][key] for cell in df["cell"]}
    seeds = df["seed"].nunique() > 1
    fig, ax = plt.subplots(figsize=(5.5, 4))
    drawn, counts = [], []
    for label, part in split_curves(df, distinguishing(df)):
        if mean:
            runs = [curves[c] for c in part["cell"]]
            length = max(len(r) for r in runs)
            stack = np.array([np.concatenate([r, np.full(length - len(r), r[-1] if len(r) else np.nan)])
                              for r in runs])
            m, s = stack.mean(axis=0), stack.std(axis=0)
            x = np.arange(length)
            style = series_style(len(drawn))
            ax.plot(x, m, lw=1.2, ms=5, markevery=marks_every(len(drawn)), label=f"{label} {seeds_text(len(runs))}",
                    **style)
            ax.fill_between(x, m - s, m + s, color=style["color"], alpha=0.2, lw=0)
            drawn.append(m)
            counts.append(len(runs))
            continue
        for seed, cell in sorted(zip(part["seed"], part["cell"]), key=lambda sc: natural_key(sc[0])):
            ax.plot(np.arange(len(curves[cell])), curves[cell], lw=1, ms=4, markevery=marks_every(len(drawn)),
                    label=f"{label}, seed {seed}" if seeds else label, **series_style(len(drawn)))
            drawn.append(curves[cell])
    lines = len(drawn)
    if logx:
        ax.set_xscale("symlog", linthresh=1)
    if log_values(drawn, logy):
        ax.set_yscale("log")
    if lines <= 12 or mean:
        outside_legend(ax, fontsize=7, title=spread_caption(counts) if mean else None)
    finish_figure(fig, ax, xlabel, key, title, output)
    return lines, key


def plot_paths(roots: list[Path], y: str, x: str, *, by: str | None = None, logx: bool = False,
               logy: bool | None = None, title: str | None = None, output: Path) -> int:
    """Draw a per-cell list metric ``y`` against the list metric ``x`` of the same record.

    E.g. the test error along a regularization path, ``error_path`` against ``gamma_path``: the
    mean over seeds with ± std error bars (the legend's title says so, :func:`spread_caption`); curves
    differ in colour, marker and line style (:func:`series_style`); a curve that includes a cell that
    did not converge is ringed in red.

    Parameters
    ----------
    roots : list of Path
        Results folders.
    y, x : str
        List metrics of the records.
    by : str or None
        One curve per value of this grid key or record field, in numeric order; None: one per
        experiment (named by its solver when there is one experiment).
    logx : bool
        Log x axis (base 2).
    logy : bool or None
        Log value axis; None: when the means are positive and span more than :data:`~.labels.LOG_DECADES`
        decades (:func:`log_values`).
    title : str or None
        Figure title.
    output : Path
        Figure file.

    Returns
    -------
    int
        The number of curves.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = []
    for root in map(Path, roots):
        for _, path, rec in records_of(root, "plot path"):
            if isinstance(rec, ValueError):
                continue
            metrics = rec["metrics"]
            if not isinstance(metrics.get(y), list) or not isinstance(metrics.get(x), list):
                have = ", ".join(k for k, v in metrics.items() if isinstance(v, list)) or "(none)"
                raise ConfigError(f"plot path: cell {rec['cell']} ({path}) has no list metrics '{y}' and '{x}'; "
                                  f"its list metrics: {have}.")
            rows.append({"experiment": rec["experiment"], "solver": rec["solver"],
                         **({by: rec["grid"].get(by, rec.get(by))} if by else {}),
                         "path": (metrics[x], metrics[y], rec["converged"] is False)})
    if not rows:
        raise KernlearnError(f"plot path: no finished cells under {', '.join(map(str, roots))}.")
    df = pd.DataFrame(rows)
    curves = split_curves(df, [by] if by else (["experiment"] if df["experiment"].nunique() > 1 else []))
    fig, ax = plt.subplots(figsize=(5.5, 4))
    means = []
    for k, (label, part) in enumerate(curves):
        runs = list(part["path"])
        xs = np.asarray(runs[0][0], dtype=float)
        if any(len(r[0]) != len(xs) or not np.allclose(r[0], xs) for r in runs):
            raise KernlearnError(f"plot path: the cells of '{label}' have different '{x}' paths; a mean needs one.")
        ys = np.array([r[1] for r in runs], dtype=float)
        ax.errorbar(xs, ys.mean(0), yerr=error_bars(ys.mean(0), ys.std(0), y), ms=5, capsize=3, label=f"{label} {seeds_text(len(runs))}",
                    **series_style(k))
        means.append(ys.mean(0))
        if any(r[2] for r in runs):
            ax.plot(xs, ys.mean(0), ls="none", marker="o", ms=11, mfc="none", mec="red", mew=1.2,
                    label=f"{MARK} not converged (certificate not met)")
    if logx:
        ax.set_xscale("log", base=2)
    if log_values(means, logy):
        ax.set_yscale("log")
    outside_legend(ax, title=spread_caption((len(part) for _, part in curves), y in BOUNDED))
    finish_figure(fig, ax, x, y, title, output)
    return len(curves)


def svg_figure(draw, *args, **kwargs) -> str:
    """A figure of ``draw`` (:func:`plot_curves`, :func:`plot_history`, :func:`plot_paths`) as SVG text to
    inline in a page: text as ``<text>`` (not glyph paths), no XML prolog, no date and matplotlib's
    hashed ids (:func:`finish_figure`), so the same figure gives the same text.

    Parameters
    ----------
    draw : callable
        A drawing function of this module; it is called with ``output`` set to a temporary ``.svg``.
    *args, **kwargs
        Its other arguments.

    Returns
    -------
    str
        The ``<svg>`` element.
    """
    import tempfile

    import matplotlib

    with tempfile.TemporaryDirectory() as tmp, matplotlib.rc_context({"svg.fonttype": "none"}):
        output = Path(tmp) / "figure.svg"
        draw(*args, output=output, **kwargs)
        text = output.read_text(encoding="utf-8")
    return text[text.index("<svg"):]
