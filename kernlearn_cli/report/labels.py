"""What a figure says, without drawing it: axis labels, the settings that tell its curves apart and
their legend labels, the curves' order and styles, and whether a value axis is logarithmic.

:mod:`.figures` draws with these; nothing here imports matplotlib.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .tables import setting_columns


#: Greek letters a setting name may spell out; a legend shows the letter (``solver.gamma`` -> ``γ = 1``).
GREEK = {"alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "eta": "η", "lambda": "λ",
         "lam": "λ", "mu": "μ", "rho": "ρ", "sigma": "σ", "tau": "τ"}
#: Settings whose values are names (of an experiment, a solver, a dataset, a kernel): a legend shows the
#: value alone, as it does for any ``*.name`` grid key.
NAMED = {"experiment", "solver", "dataset", "kernel"}
#: Axis labels (with units) of the settings, metrics and histories figures draw; any other key is shown as it is.
LABELS = {
    # settings (x axes)
    "constraints.count": "number of constraints", "n": "number of points n", "rank0": "rank of K0",
    "solver.lam": "λ (regularization)", "solver.gamma": "γ (regularization)", "gamma_path": "γ (regularization)",
    "solver.iterations": "MEG iterations", "solver.max_steps": "DefiniteBoost step budget",
    "solver.max_sweeps": "sweep budget", "solver.tol": "tolerance", "solver.slack": "slack weight",
    # results
    "seconds": "solver wall time (s)", "cpu_seconds": "solver CPU time (s)", "iterations": "solver iterations",
    "peak_rss_bytes": "peak resident memory of the cell (bytes)",
    "objective": "objective", "nmi": "kernel k-means NMI (0–1)", "pairwise_accuracy": "pairwise accuracy (Rand index)",
    "knn_accuracy": "k-NN accuracy (fraction)", "knn_error": "k-NN test error (fraction)",
    "kpca_1nn_error": "1-NN error after kernel PCA (fraction)", "error_path": "1-NN error after kernel PCA (fraction)",
    "svm_accuracy": "SVM accuracy (fraction)", "alignment": "kernel alignment (0–1)",
    "nka_score": "NKA selection score", "violation": "largest constraint violation",
    "condition": "condition number of K", "bound_ratio": "Lemma 3.2 bound / MEG loss",
    # per-iteration histories
    "dual_change": "relative dual change per sweep", "max_violation": "largest constraint violation",
    "lambda_norm": "‖λ‖₂ (dual variables)", "dual_objective": "dual objective", "loss": "loss",
    "cumulative_loss": "cumulative loss", "primal": "primal residual ‖V − U‖", "dual": "dual residual",
    "rho": "penalty ρ",
}
#: Scores bounded to [0, 1] (fractions, NMI, alignment): their error bars are clipped to the interval
#: (:func:`error_bars`), as no cell can score outside it.
BOUNDED = {"nmi", "pairwise_accuracy", "knn_accuracy", "knn_error", "kpca_1nn_error", "error_path", "svm_accuracy",
           "alignment"}
#: Markers and line styles of a figure's series, cycled (with the colours) so that no two of the first
#: 28 series look alike, and open markers so that coinciding points of two series both show.
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
LINESTYLES = ("-", "--", "-.", ":")


#: A value axis is logarithmic by default when its (positive) values span more than this many decades.
LOG_DECADES = 2


def axis_label(key: str) -> str:
    """The label of an axis drawing ``key``: :data:`LABELS`, else the key itself."""
    return LABELS.get(key, key)


def series_style(k: int) -> dict:
    """Colour, open marker and line style of a figure's ``k``-th series (keyword arguments of ``plot``)."""
    return {"color": f"C{k % 10}", "marker": MARKERS[k % len(MARKERS)], "ls": LINESTYLES[k % len(LINESTYLES)],
            "mfc": "none"}


def marks_every(k: int) -> tuple[float, float]:
    """Where the markers of the ``k``-th line of many points go (``markevery``): one per tenth of the axes'
    diagonal, each line's starting a little further on, so that coinciding lines show each marker."""
    return (0.025 * (k % 4), 0.1)


def spread_caption(counts, bounded: bool = False) -> str:
    """What a figure's error bars or bands are, for its legend: ``mean ± std over 3 seeds``.

    Parameters
    ----------
    counts : iterable of int
        The number of cells (seeds) of each point or curve.
    bounded : bool
        The value is a score in [0, 1] (:data:`BOUNDED`) whose bars are clipped to it (:func:`error_bars`).

    Returns
    -------
    str
        ``mean ± std over N seeds`` (``over 2–3 seeds`` when they differ; ``, clipped to [0, 1]`` for a
        bounded score), or, when every point has one cell, that no spread is shown.
    """
    counts = sorted({int(c) for c in counts})
    if counts[-1] <= 1:
        return "one seed each (no spread shown)"
    return (f"mean ± std over {counts[0] if len(counts) == 1 else f'{counts[0]}–{counts[-1]}'} seeds"
            + (", clipped to [0, 1]" if bounded else ""))


def error_bars(mean, std, metric: str) -> np.ndarray:
    """The lower and upper lengths (``yerr`` of ``errorbar``, shape 2 x points) of mean ± std bars: a score
    bounded to [0, 1] (:data:`BOUNDED`) has them clipped to that interval (mean − std below 0 drawn at 0,
    mean + std above 1 at 1); a missing std (one cell) is no bar.

    Parameters
    ----------
    mean, std : array_like
        Mean and standard deviation over seeds of each point.
    metric : str
        The value drawn.

    Returns
    -------
    ndarray
        ``[[below, ...], [above, ...]]``, non-negative.
    """
    mean = np.asarray(mean, dtype=float)
    std = np.nan_to_num(np.asarray(std, dtype=float), nan=0.0)
    if metric not in BOUNDED:
        return np.array([std, std])
    low = np.clip(mean - std, 0.0, 1.0)
    high = np.clip(mean + std, 0.0, 1.0)
    return np.array([np.maximum(mean - low, 0.0), np.maximum(high - mean, 0.0)])


def log_values(values, logy: bool | None) -> bool:
    """Whether a value axis is logarithmic: ``logy`` when given, else whether the finite values are all
    positive and span more than :data:`LOG_DECADES` decades (a quantity that converges over decades)."""
    if logy is not None:
        return logy
    v = np.concatenate([np.ravel(np.asarray(a, dtype=float)) for a in values]) if len(values) else np.empty(0)
    v = v[np.isfinite(v)]
    return bool(v.size) and v.min() > 0 and v.max() > 10 ** LOG_DECADES * v.min()


def _missing(value) -> bool:
    """True for None or NaN (a setting a cell does not have)."""
    return not isinstance(value, (tuple, list, dict)) and bool(pd.isna(value))


def natural_key(value) -> tuple:
    """Sort key of a setting value: numbers first, in numeric order, then text, then missing values.

    Parameters
    ----------
    value : object
        A setting value; numeric text (YAML reads ``1e-3`` as text) counts as a number.

    Returns
    -------
    tuple
        Keys that order 10, 30, 100 (never 10, 100, 30) and ``1e-3`` before ``0.1``.
    """
    if _missing(value):
        return (2, 0.0, "")
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(value))


def short_experiments(names) -> dict:
    """Experiment names without the ``_``-separated words they all begin with.

    Parameters
    ----------
    names : iterable of str
        The experiment names of a figure's curves.

    Returns
    -------
    dict
        Each name to its short form (``kulis2006_fig1_digits_burg`` -> ``burg``); a name keeps at
        least its last word.
    """
    words = {name: str(name).split("_") for name in names}
    common = 0
    if len(words) > 1:
        shortest = min(len(w) for w in words.values())
        while common < shortest - 1 and len({tuple(w[:common + 1]) for w in words.values()}) == 1:
            common += 1
    return {name: "_".join(w[common:]) for name, w in words.items()}


def setting_text(key: str, value, experiments: dict | None = None) -> str | None:
    """One setting as a legend shows it.

    Parameters
    ----------
    key : str
        Column of the setting (``solver.gamma``, ``dataset.name``, ``seed``, ...).
    value : object
        Its value.
    experiments : dict, optional
        Short experiment names (:func:`short_experiments`).

    Returns
    -------
    str or None
        A name alone (``chessboard``, ``burg``), a seed as ``seed 0``, anything else as
        ``name = value`` with the last word of the key (``γ = 1``; ``constraints.count`` ->
        ``constraints = 10``); None for a missing value.
    """
    if _missing(value):
        return None
    if key == "experiment":
        return (experiments or {}).get(value, str(value))
    if key == "seed":
        return f"seed {value}"
    text = f"{value:g}" if isinstance(value, (float, np.floating)) else str(value)
    parts = key.split(".")
    if key in NAMED or parts[-1] == "name":
        return text
    name = parts[-2] if parts[-1] == "count" and len(parts) > 1 else parts[-1]
    return f"{GREEK.get(name, name)} = {text}"


def distinguishing(df: pd.DataFrame, exclude=()) -> list[str]:
    """The settings that tell the curves of a figure apart.

    Each varying setting (:func:`setting_columns`; the seed and ``exclude`` aside, the experiment
    last) is kept when it splits the cells further than the ones kept before it, so that a setting
    equal for every curve, or one that only repeats another (``dataset.name`` and ``dataset``), or
    an experiment name the other settings already tell apart, is left out.

    Parameters
    ----------
    df : DataFrame
        The cells of the figure, one row each.
    exclude : collection of str
        Columns that are not curve settings (the x axis).

    Returns
    -------
    list of str
        The columns, possibly empty (every cell has the same settings).
    """
    candidates = [k for k in setting_columns(df) if k not in {"seed", "experiment", *exclude}] + ["experiment"]
    keys, groups = [], 1
    for key in candidates:
        n = df.groupby(keys + [key], dropna=False, sort=False).ngroups
        if n > groups:
            keys, groups = keys + [key], n
    return keys


def split_curves(df: pd.DataFrame, keys: list[str]) -> list[tuple[str, pd.DataFrame]]:
    """The cells of a figure grouped into curves, labelled and in the natural order of their settings.

    Parameters
    ----------
    df : DataFrame
        The cells, one row each, with columns ``experiment``, ``solver`` and ``keys``.
    keys : list of str
        The settings of a curve (e.g. :func:`distinguishing`).

    Returns
    -------
    list of (str, DataFrame)
        Legend label (:func:`setting_text` of each key, joined by commas; the solver when no key
        has a value) and rows of each curve, ordered by :func:`natural_key` of the values.
    """
    if not keys:
        return [(", ".join(map(str, df["solver"].unique())), df)]
    experiments = short_experiments(df["experiment"].unique())
    curves = []
    for values, part in df.groupby(keys, dropna=False, sort=False):
        values = values if isinstance(values, tuple) else (values,)
        texts = [t for t in (setting_text(k, v, experiments) for k, v in zip(keys, values)) if t is not None]
        label = ", ".join(texts) or ", ".join(map(str, part["solver"].unique()))
        curves.append((tuple(map(natural_key, values)), label, part))
    return [(label, part) for _, label, part in sorted(curves, key=lambda c: c[0])]


def seeds_text(n: int) -> str:
    """``(1 seed)``, ``(3 seeds)``: how many cells a mean is over."""
    return f"({n} seed{'' if n == 1 else 's'})"
