"""``kernlearn collect``: the records under results folders -> tables -> their files."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..errors import KernlearnError
from ..records import RECORD
from .formats import markdown, write_tables
from .records import Completeness, load_records
from .tables import display, pivot, summarize


def collect(roots: list[Path], *, metric: str | None = None, rows: str | None = None, cols: str | None = None,
            agg: str = "mean", prefix: Path | None = None) -> tuple[pd.DataFrame, str, Completeness]:
    """Aggregate the records under ``roots``; write CSV/Markdown/LaTeX at ``prefix``.

    Without ``metric``: the long table (every metric, mean ± std), prefix ``<root>/table``,
    and the wall-clock times beside it (``<prefix>_timing`` or ``<root>/timing``).
    With ``metric``: :func:`pivot`, prefix ``<root>/table_<metric>``.  Several roots are written
    only where ``prefix`` says (never into the first root's folder); without it nothing is written.
    Cells the recorded grids expect but that are not finished show as finished / expected counts.
    Returns (table, its Markdown, :class:`Completeness`).
    """
    write = prefix is not None or len(roots) == 1
    df, done = load_records(roots)
    if df.empty:
        raise KernlearnError(f"collect: no finished cells under {', '.join(map(str, roots))} (no readable "
                             f"{RECORD} files). {done.message()}".rstrip())
    if metric is None:
        numeric = summarize(df, pending=done.pending)
        table = display(numeric)
        timing = summarize(df, timing=True, pending=done.pending)
        time_prefix = Path(f"{prefix}_timing") if prefix else Path(roots[0]) / "timing"
        if write:
            write_tables(display(timing), time_prefix, timing)
    else:
        numeric = table = pivot(df, metric, rows, cols, agg=agg, pending=done.pending)
    name = "table" if metric is None else f"table_{metric}" + ("" if agg == "mean" else f"_{agg}")
    if write:
        write_tables(table, prefix or Path(roots[0]) / name, numeric)
    return table, markdown(table), done
