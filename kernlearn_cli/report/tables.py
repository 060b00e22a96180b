"""Aggregation: the cells of :func:`~.records.load_records` -> pandas tables.

``summarize`` gives one row per setting (every varying value but the seed) with the
mean and std of each metric over seeds; ``pivot`` lays one metric out like a paper's
table (rows e.g. constraint counts or datasets, columns e.g. methods).

Every table says how far its numbers are certified: the long table has, per row, the
converged cells out of those where convergence applies and the worst certificate check
(the one furthest from its tolerance); a paper table marks with † every entry that
includes a cell that did not converge and names them in a note below it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import ConfigError
from ..types import CAPPED
from .records import MARK, SUMMARY, TIMING


#: Results the tables show in another unit: record key -> (column shown, divisor, digits).
UNITS = {"peak_rss_bytes": ("peak_rss_mb", 1e6, 1)}

_NOT_SETTINGS = {"cell", "seed", "converged", "constraints", "n", "rank0", *TIMING, *SUMMARY,
                 "cert_check", "cert_value", "cert_tol", "cert_ratio", "cert_stopped_by"}


def _expected(df: pd.DataFrame, keys: list[str], pending: pd.DataFrame) -> pd.Series | None:
    """Finished + pending cells per setting ``keys`` (None when nothing is pending)."""
    if pending is None or pending.empty:
        return None
    pend = pending.reindex(columns=keys)
    both = pd.concat([df[keys], pend], ignore_index=True)
    return both.groupby(keys, sort=True, dropna=False).size()


def metric_columns(df: pd.DataFrame) -> list[str]:
    """Numeric results; grid settings (e.g. ``solver.gamma: [1.0, 10.0]``) are never metrics."""
    grid = set(df.attrs.get("grid_keys", ()))
    return [c for c in df.columns if c not in _NOT_SETTINGS and c not in grid and pd.api.types.is_float_dtype(df[c])
            and not c.endswith("_std")]


def setting_columns(df: pd.DataFrame) -> list[str]:
    """Columns that distinguish settings: everything that varies, except seeds and results."""
    metrics = set(metric_columns(df))
    keys = [c for c in df.columns if c not in _NOT_SETTINGS and c not in metrics and not c.endswith("_std")]
    return [k for k in keys if df[k].nunique(dropna=False) > 1] or ["experiment"]


def summarize(df: pd.DataFrame, timing: bool = False, pending: pd.DataFrame | None = None) -> pd.DataFrame:
    """Group by every varying setting except the seed; mean and std of the numeric results
    (of the solver's ``seconds``, ``cpu_seconds`` and the cell's ``peak_rss_bytes`` alone with ``timing``, each
    where some record has it).  With ``pending`` (the settings of
    expected cells that are not finished, :class:`Completeness`) a column ``expected`` counts the
    cells each row should have, and rows with no finished cell appear too."""
    keys = setting_columns(df if pending is None or pending.empty else pd.concat([df, pending], ignore_index=True))
    keys = [k for k in keys if k in df.columns] or ["experiment"]
    values = [t for t in TIMING if df[t].notna().any()] if timing else metric_columns(df) + list(SUMMARY)
    g = df.groupby(keys, sort=True, dropna=False)
    out = g[values].agg(["mean", "std"])
    out.columns = [f"{a}_{b}" for a, b in out.columns]
    if not timing:
        out["iterations_min"] = g["iterations"].min()
        out["iterations_max"] = g["iterations"].max()
        applicable = df["converged"].notna()
        out["converged"] = (df["converged"] == True).groupby([df[k] for k in keys], dropna=False).sum()  # noqa: E712
        out["applicable"] = applicable.groupby([df[k] for k in keys], dropna=False).sum()
        worst = df.loc[df["cert_ratio"].notna()].sort_values("cert_ratio", kind="stable") \
            .groupby(keys, dropna=False).tail(1).set_index(keys)
        for col in ("cert_check", "cert_value", "cert_tol"):
            out[f"worst_{col[5:]}"] = worst[col].reindex(out.index)
    out["seeds"] = g.size()
    expected = _expected(df, keys, pending)
    if expected is not None:
        out = out.reindex(expected.index)
        for col in ("seeds", "converged", "applicable"):
            if col in out:
                out[col] = out[col].fillna(0).astype(int)
        out["expected"] = expected
    return out.reset_index()


def _pm(mean: float, std: float, digits: int) -> str:
    if not np.isfinite(mean):
        return "–"
    return f"{mean:.{digits}f} ± {0.0 if not np.isfinite(std) else std:.{digits}f}"


def display(summary: pd.DataFrame) -> pd.DataFrame:
    """'mean ± std' strings, one column per metric, plus the sweep range, seeds, the converged
    cells (of those where convergence applies) and the worst certificate check."""
    shown = pd.DataFrame()
    extra = ("seeds", "expected", "converged", "applicable", "worst_check", "worst_value", "worst_tol")
    for c in summary.columns:
        if not c.endswith(("_mean", "_std", "_min", "_max")) and c not in extra:
            shown[c] = summary[c]
    for m in (c[:-5] for c in summary.columns if c.endswith("_mean")):
        name, scale, digits = UNITS.get(m, (m, 1.0, 1 if m == "iterations" else 4))
        shown[name] = [_pm(a / scale, b / scale, digits) for a, b in zip(summary[f"{m}_mean"], summary[f"{m}_std"])]
    if "iterations_min" in summary:
        shown["iterations range"] = [f"{a:.0f}–{b:.0f}" if np.isfinite(a) else "–"
                                     for a, b in zip(summary["iterations_min"], summary["iterations_max"])]
        shown["converged"] = [(f"{int(k)}/{int(m)}" + (f" {MARK}" if k < m else "")) if m else "n/a"
                              for k, m in zip(summary["converged"], summary["applicable"])]
        shown["certificate (worst)"] = [
            "–" if not isinstance(c, str) else f"{c} {v:.3g} {'≤' if v <= t else '>'} {t:.2g}"
            for c, v, t in zip(summary["worst_check"], summary["worst_value"], summary["worst_tol"])]
    shown["seeds"] = summary["seeds"] if "expected" not in summary else \
        [f"{k}/{m}" for k, m in zip(summary["seeds"], summary["expected"])]
    return shown


def pivot_keys(df: pd.DataFrame, metric: str, rows: str | None = None, cols: str | None = None,
               agg: str = "mean") -> tuple[str, str]:
    """The row and column keys of a paper table of ``metric`` (defaults as in :func:`pivot`), checked:
    each entry must hold one setting (:func:`pooled_settings`), as each row of :func:`summarize` does."""
    if metric not in df.columns:
        valid = metric_columns(df) + list(SUMMARY) + list(TIMING)
        raise ConfigError(f"collect: no metric '{metric}'; the records have {', '.join(valid)}.")
    settings = setting_columns(df)
    cols = cols or ("solver" if df["solver"].nunique() > 1 else "experiment")
    rows = rows or next((k for k in settings if k != cols and k not in ("experiment", "dataset", "solver")),
                        next((k for k in settings if k != cols), "dataset"))
    for key in (rows, cols):
        if key not in df.columns:
            raise ConfigError(f"collect: no column '{key}'; valid: {', '.join(c for c in df.columns if c != 'cell')}.")
    if agg not in ("mean", "min", "max"):
        raise ConfigError(f"collect: --agg must be mean, min or max, got '{agg}'.")
    pooled = pooled_settings(df, [rows, cols])
    if pooled:
        entry, differ = next(iter(pooled.items()))
        where = ", ".join(f"{k} = {v}" for k, v in zip((rows, cols), entry))
        values = "; ".join(f"{key}: " + " or ".join(f"'{v}' ({k} cell{'s' * (k > 1)})" for v, k in counts.items())
                           for key, counts in differ.items())
        split = " or ".join(f"--rows {k} or --cols {k}" for k in differ)
        raise ConfigError(f"collect -m {metric} --rows {rows} --cols {cols}: {len(pooled)} entr"
                          f"{'ies' if len(pooled) > 1 else 'y'} would average cells whose settings differ apart "
                          f"from the seed (the long table, collect without -m, keeps them apart); the first, "
                          f"{where}, mixes {values}. Lay the table out by that setting ({split}), or collect "
                          f"the folders of each setting on their own.")
    return rows, cols


def pooled_settings(df: pd.DataFrame, keys: list[str]) -> dict[tuple, dict[str, dict]]:
    """The groups of ``keys`` whose cells differ in a setting besides the seed.

    A group is one setting only when its cells agree on every column that tells settings apart
    (:func:`setting_columns`, the rule by which :func:`summarize` groups); a table entry over such
    a group would average different experiments.

    Parameters
    ----------
    df : DataFrame
        The cells (:func:`load_records`).
    keys : list of str
        Columns that define a group (e.g. a paper table's row and column keys).

    Returns
    -------
    dict
        Each mixed group (its values of ``keys``, in sorted order) to the settings that differ in it,
        each to its values (as text) and their cell counts; empty when no group mixes settings.
    """
    others = [k for k in setting_columns(df) if k not in keys]
    mixed = {}
    for entry, part in df.groupby(keys, dropna=False, sort=True):
        differ = {k: part[k].astype(str).value_counts(sort=False).sort_index().to_dict()
                  for k in others if part[k].nunique(dropna=False) > 1}
        if differ:
            mixed[entry if isinstance(entry, tuple) else (entry,)] = differ
    return mixed


def entry_stats(df: pd.DataFrame, metric: str, rows: str, cols: str, agg: str = "mean") -> pd.DataFrame:
    """Per entry (``row``, ``col``) of a paper table: ``value`` (the mean over seeds, or ``agg``),
    ``std``, ``min``, ``max``, ``seeds`` (finished cells), ``unconverged`` (cells whose certificate was not met) and
    ``capped`` (cells that stopped on an iteration budget, :data:`~kernlearn_cli.types.CAPPED`) and
    ``by_seed`` (seed -> value, for differences paired by seed; None without a seed column)."""
    keys = [df[rows], df[cols]]
    g = df.groupby(keys, dropna=False)[metric]
    stats = g.agg(["mean", "std", "min", "max", "size"])
    stats["unconverged"] = (df["converged"] == False).groupby(keys, dropna=False).sum()  # noqa: E712
    capped = df["cert_stopped_by"].isin(CAPPED) if "cert_stopped_by" in df else pd.Series(False, index=df.index)
    stats["capped"] = capped.groupby(keys, dropna=False).sum()
    if "seed" in df:                       # the values by seed, for differences paired by seed (verdicts)
        stats["by_seed"] = df.groupby(keys, dropna=False)[["seed", metric]].apply(
            lambda x: dict(zip(x["seed"].tolist(), x[metric].tolist())))
    stats.index.names = ["row", "col"]
    stats = stats.reset_index()
    return pd.DataFrame({"row": stats["row"], "col": stats["col"], "value": stats[agg], "std": stats["std"],
                         "min": stats["min"], "max": stats["max"], "seeds": stats["size"], "unconverged": stats["unconverged"].astype(int),
                         "capped": stats["capped"].astype(int),
                         "by_seed": stats["by_seed"] if "by_seed" in stats else None})


def pivot(df: pd.DataFrame, metric: str, rows: str | None = None, cols: str | None = None,
          digits: int = 3, agg: str = "mean", pending: pd.DataFrame | None = None) -> pd.DataFrame:
    """One metric as a paper's table: ``rows`` x ``cols`` of 'mean ± std' over seeds
    (``agg`` = ``min`` or ``max``: that statistic instead, e.g. the most sweeps any run took).

    Defaults: rows = the first varying setting that is not the column key, cols = ``solver``
    (or ``experiment`` when all cells share a solver).  With ``pending`` (expected cells that are
    not finished) an entry with fewer finished cells than expected shows ``(k/N)``.  An entry holds
    the cells of one setting only (:func:`pooled_settings`; :func:`pivot_keys` refuses keys that
    would average different settings).
    """
    rows, cols = pivot_keys(df, metric, rows, cols, agg)
    stats = entry_stats(df, metric, rows, cols, agg).rename(columns={"row": rows, "col": cols})
    stats["text"] = ([_pm(a, b, digits) for a, b in zip(stats["value"], stats["std"])] if agg == "mean"
                     else [f"{v:.{digits}g}" for v in stats["value"]])
    stats["text"] += [f" {MARK}" if k else "" for k in stats["unconverged"]]
    expected = _expected(df, [rows, cols], pending)
    if expected is not None:
        found = stats.set_index([rows, cols])["seeds"]
        partial = [(key, int(found.get(key, 0)), int(n)) for key, n in expected.items() if found.get(key, 0) < n]
        stats = stats.set_index([rows, cols]).reindex(expected.index)
        stats["text"] = stats["text"].fillna("–")
        for key, k, n in partial:
            stats.loc[key, "text"] += f" ({k}/{n})"
        stats = stats.reset_index()
    table = stats.pivot(index=rows, columns=cols, values="text").fillna("–")
    table.columns.name = None
    table = table.reset_index()
    notes = [unconverged_note(df)]
    if expected is not None and partial:
        missing = sum(n - k for _, k, n in partial)
        notes.append(f"(k/N): only k of the N expected cells of that entry are finished; {missing} of "
                     f"{int(expected.sum())} cell(s) in all are missing or failed.")
    table.attrs["note"] = " ".join(n for n in notes if n)
    return table


def unconverged_note(df: pd.DataFrame) -> str:
    """The note below a paper table: how many cells did not converge and their worst check ('' if none)."""
    bad = df[df["converged"] == False]  # noqa: E712
    if bad.empty:
        applicable = int(df["converged"].notna().sum())
        return f"All {applicable} cell(s) where convergence applies converged (certificate met)." if applicable else ""
    worst = bad.sort_values("cert_ratio", kind="stable").iloc[-1]
    where = f"; worst: {worst['cert_check']} {worst['cert_value']:.3g} (tol {worst['cert_tol']:.3g})" \
        if isinstance(worst["cert_check"], str) else ""
    return (f"{MARK} includes cells that did not converge (certificate not met): {len(bad)} of "
            f"{int(df['converged'].notna().sum())} cell(s){where}.")
