"""A study's tables, figures and verdicts, built from its record archives alone."""

from __future__ import annotations

import pandas as pd

from ..archive import Archive
from ..atomic import atomic_path
from ..study import Study
from ..verdicts import verdict_table, verdicts
from .layout import Layout


def build(study: Study, layout: Layout, echo) -> pd.DataFrame:
    """The study's tables and figures from the finished cells, and the verdict per paper statement
    (written to ``<tables>/<paper>_verdicts``)."""
    from ..report.figures import plot_curves, plot_history, plot_paths
    from ..report.formats import write_tables
    from ..report.records import load_records
    from ..report.tables import display, entry_stats, pivot, pivot_keys, summarize

    entries, shown, notes = {}, {}, {}
    for t in study.tables.values():
        roots = [layout.archive(study, name) for name in t.sources]
        roots = [r for r in roots if r.is_file()]
        df, done = load_records(roots) if roots else (pd.DataFrame(), None)
        if df.empty:
            echo(f"[{study.paper}] table {t.name}: no finished cells (skipped)")
            continue
        if t.metric is None:
            numeric = summarize(df, pending=done.pending)
            table = display(numeric)
        else:
            rows, cols = pivot_keys(df, t.metric, t.rows, t.cols, t.agg)
            numeric = table = pivot(df, t.metric, rows, cols, agg=t.agg, pending=done.pending)
            entries[t.name] = entry_stats(df, t.metric, rows, cols, t.agg)
        write_tables(table, layout.tables / t.name, numeric)
        shown[t.name] = table
        if not done.complete:
            notes[t.name] = done.message()
            echo(f"[{study.paper}] table {t.name}: warning: {done.message()}")
    for f in study.figures.values():
        roots = [r for r in (layout.archive(study, name) for name in f.sources) if r.is_file()]
        if not any(Archive.read(r).records for r in roots):
            echo(f"[{study.paper}] figure {f.name}: no finished cells (skipped)")
            continue
        output = layout.figures / f.name
        opts = dict(f.options)
        if f.kind == "plot":
            df, _ = load_records(roots, "plot")
            plot_curves(df, opts.pop("metric"), opts.pop("x", "constraints.count"), opts.pop("by", None),
                        title=f.title or None, output=output, **opts)
        elif f.kind == "history":
            plot_history(roots, opts.pop("key", None), title=f.title or None, output=output, **opts)
        else:
            plot_paths(roots, opts.pop("y"), opts.pop("x"), title=f.title or None, output=output, **opts)
    v = verdicts(study.paper, study.statements, entries, {t.name: t.metric for t in study.tables.values()})
    with atomic_path(layout.tables / f"{study.paper}_verdicts.csv") as tmp:
        tmp.write_text(v.to_csv(index=False))
    with atomic_path(layout.tables / f"{study.paper}_verdicts.md") as tmp:
        tmp.write_text(verdict_table(v) + "\n")
    v.attrs.update(tables=shown, notes=notes)
    return v
