"""Per-cell records -> pandas tables (CSV + Markdown), mean +- std over seeds."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import KernlearnError
from .io import FACTORS, RECORD

SUMMARY = ("iterations", "seconds", "objective")


def load_records(root: Path) -> tuple[pd.DataFrame, int]:
    """All finished cells under ``root`` as one row each, and the number of incomplete cells.

    An incomplete cell is a folder with a factors file or temporary file but no record.
    """
    root = Path(root)
    if not root.is_dir():
        raise KernlearnError(f"collect: '{root}' is not a folder of results.")
    rows = []
    for rec_path in sorted(root.rglob(RECORD)):
        rec = json.loads(rec_path.read_text())
        row = {"experiment": rec["experiment"], "cell": rec["cell"]}
        for key, value in rec["grid"].items():
            row[key] = value.get("name", json.dumps(value)) if isinstance(value, dict) else value
        row.setdefault("seed", rec["seed"])
        row.update(solver=rec["solver"], dataset=rec["dataset"], constraints=rec["constraints"],
                   converged=rec["converged"], **{k: rec[k] for k in SUMMARY}, **rec["metrics"])
        rows.append(row)
    finished = {p.parent for p in root.rglob(RECORD)}
    started = {p.parent for p in root.rglob(FACTORS)} | {p.parent for p in root.rglob(".*.tmp")}
    return pd.DataFrame(rows), len(started - finished)


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Group by every varying setting except the seed; mean and std of the numeric results."""
    fixed = {"cell", "seed", "converged", "constraints", *SUMMARY}
    metrics = [c for c in df.columns if c not in fixed and pd.api.types.is_float_dtype(df[c])
               and not c.endswith("_std")]
    keys = [c for c in df.columns if c not in fixed and c not in metrics and not c.endswith("_std")]
    keys = [k for k in keys if df[k].nunique() > 1] or ["experiment"]
    values = metrics + list(SUMMARY)
    g = df.groupby(keys, sort=True, dropna=False)
    out = g[values].agg(["mean", "std"])
    out.columns = [f"{a}_{b}" for a, b in out.columns]
    out["iterations_min"] = g["iterations"].min()
    out["iterations_max"] = g["iterations"].max()
    out["seeds"] = g.size()
    out["converged"] = g["converged"].mean()
    return out.reset_index()


def markdown(summary: pd.DataFrame) -> str:
    """'mean ± std' cells, one column per metric, in Markdown."""
    shown = pd.DataFrame()
    means = [c[:-5] for c in summary.columns if c.endswith("_mean")]
    for c in summary.columns:
        if not c.endswith(("_mean", "_std", "_min", "_max")) and c not in ("seeds", "converged"):
            shown[c] = summary[c]
    for m in means:
        digits = 1 if m in ("iterations",) else 4
        mean, std = summary[f"{m}_mean"], summary[f"{m}_std"].fillna(0.0)
        shown[m] = [f"{a:.{digits}f} ± {b:.{digits}f}" if np.isfinite(a) else "" for a, b in zip(mean, std)]
    shown["iterations range"] = [f"{a}–{b}" for a, b in zip(summary["iterations_min"], summary["iterations_max"])]
    shown["seeds"] = summary["seeds"]
    shown["converged"] = summary["converged"].map(lambda x: f"{x:.0%}")
    return shown.to_markdown(index=False)


def collect(root: Path) -> tuple[pd.DataFrame, str, int]:
    """Write ``table.csv`` and ``table.md`` into ``root``; return (summary, markdown, incomplete)."""
    df, incomplete = load_records(root)
    if df.empty:
        raise KernlearnError(f"collect: no finished cells under '{root}' (no {RECORD} files).")
    summary = summarize(df)
    md = markdown(summary)
    summary.to_csv(Path(root) / "table.csv", index=False)
    (Path(root) / "table.md").write_text(md + "\n")
    return summary, md, incomplete
