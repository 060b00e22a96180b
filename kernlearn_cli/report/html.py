"""``kernlearn report``: one self-contained HTML page of results folders or record archives.

The page needs no server and no network (styles, script and figures inline): the tables as
``collect`` computes them (sortable, † where a cell did not converge, the certificate column), each
metric against each numeric grid axis per solver (:func:`~.figures.svg_figure`), the per-cell
convergence histories (thinned to :data:`HISTORY_POINTS` points per line, log-y, one collapsible
group per setting), the cells not in the tables (failed with their reason, or not run) with the
command that resumes them, and the provenance of the records in one place.  The same records and
library versions give the same bytes: nothing depends on the clock, and figure ids are fixed.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

import numpy as np
import pandas as pd

from ..atomic import atomic_path
from ..errors import ConfigError
from ..resources import size
from .figures import plot_curves, svg_figure
from .labels import BOUNDED, distinguishing, natural_key, split_curves
from .records import MARK, Completeness, histories_of, is_archive, load_records, records_of, expected_cells
from .show import provenance_text, settings_rows
from .tables import UNITS, display, metric_columns, summarize, unconverged_note

#: Most points a convergence history keeps per line (evenly spaced iterations, the first and last kept).
HISTORY_POINTS = 60
#: History datasets a cell's convergence is drawn from when its certificate names none it records.
CONVERGENCE_KEYS = ("dual_change", "max_violation", "primal", "dual", "loss", "dual_objective", "objective")
#: Colours of the lines of one history figure (matplotlib's default cycle).
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:1200px;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0;font-size:13px}
th,td{border:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f3f3f3}table.sortable th{cursor:pointer;user-select:none}
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
tr.unconverged td{background:#fff4f0}p.note{color:#555;font-size:13px}
figure{display:inline-block;margin:.4em;vertical-align:top}figure svg{width:520px;height:auto}
figcaption{font-size:12px;color:#444;max-width:420px}
details{margin:.3em 0}summary{cursor:pointer}pre{background:#f6f6f6;padding:.5em;overflow-x:auto}
nav a{margin-right:1em}.filters label{margin-right:1em}svg text{font-family:sans-serif}
"""

SCRIPT = """
function sortKey(cell){const m=cell.textContent.trim().match(/^[-+]?(\\d+\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?/);
return m?parseFloat(m[0]):null;}
function sortBy(th){const table=th.closest("table"),body=table.tBodies[0],col=th.cellIndex;
const asc=th.getAttribute("aria-sort")!=="ascending";
table.querySelectorAll("th").forEach(h=>h.removeAttribute("aria-sort"));
th.setAttribute("aria-sort",asc?"ascending":"descending");
const rows=Array.from(body.rows);rows.sort((a,b)=>{const x=a.cells[col],y=b.cells[col],p=sortKey(x),q=sortKey(y);
const c=(p!==null&&q!==null)?p-q:x.textContent.localeCompare(y.textContent,undefined,{numeric:true});
return asc?c:-c;});rows.forEach(r=>body.appendChild(r));}
document.querySelectorAll("table.sortable th").forEach(th=>th.addEventListener("click",()=>sortBy(th)));
function filterKinds(){const on=new Set(Array.from(document.querySelectorAll("input[data-kind]:checked"),
b=>b.dataset.kind));let shown=0;document.querySelectorAll("tr[data-kind]").forEach(r=>{r.hidden=!on.has(r.dataset.kind);
if(!r.hidden)shown++;});const c=document.getElementById("verdicts-shown");if(c)c.textContent=shown;}
document.querySelectorAll("input[data-kind]").forEach(b=>b.addEventListener("change",filterKinds));
"""


@dataclass
class Section:
    """One part of the page: its anchor, heading and HTML body."""

    id: str
    title: str
    body: str


@dataclass
class Cells:
    """The records under the report's roots: the table rows (:func:`~.records.load_records`), what is
    missing, and each finished cell's (where, record)."""

    df: pd.DataFrame
    done: Completeness
    records: dict = field(default_factory=dict)

    @classmethod
    def load(cls, roots: list[Path], command: str = "report") -> "Cells":
        df, done = load_records(roots, command)
        records = {}
        for root in map(Path, roots):
            for cell, where, rec in records_of(root, command):
                if isinstance(rec, dict):
                    records.setdefault(cell, (where, rec))
        return cls(df, done, {cell: records[cell] for cell in df["cell"]} if len(df) else {})


def text(value) -> str:
    """A table value as text: numbers to 6 significant digits, missing as ``–``."""
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return "–"
    if isinstance(value, (float, np.floating)):
        return f"{value:.6g}"
    return str(value)


def table_html(table: pd.DataFrame, *, sortable: bool = True, row_classes=None) -> str:
    """``table`` as an HTML table (escaped), sortable by a click on a column's heading; its note
    (``table.attrs["note"]``) below it."""
    head = "".join(f'<th scope="col">{escape(str(c))}</th>' for c in table.columns)
    rows = []
    for k, values in enumerate(table.itertuples(index=False)):
        cls = f' class="{row_classes[k]}"' if row_classes is not None and row_classes[k] else ""
        rows.append(f"<tr{cls}>" + "".join(f"<td>{escape(text(v))}</td>" for v in values) + "</tr>")
    note = table.attrs.get("note")
    sort = ' class="sortable"' if sortable else ""
    return (f'<table{sort}><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
            + (f'<p class="note">{escape(note)}</p>' if note else ""))


def tables_section(cells: Cells) -> Section:
    """The long table and the timing table, as ``collect`` computes them."""
    if cells.df.empty:
        return Section("tables", "Tables", "<p>No finished cells.</p>")
    numeric = summarize(cells.df, pending=cells.done.pending)
    table = display(numeric)
    table.attrs["note"] = unconverged_note(cells.df)
    bad = ["unconverged" if a and c < a else "" for c, a in zip(numeric["converged"], numeric["applicable"])]
    times, memory = timing_tables(summarize(cells.df, timing=True, pending=cells.done.pending))
    return Section("tables", "Tables",
                   f"<p>Mean ± std over seeds per setting (<code>kernlearn collect</code>); {MARK}: a cell of the "
                   f"row did not converge (its certificate not met); <em>certificate (worst)</em>: the check "
                   f"furthest from its tolerance. Click a column's heading to sort.</p>"
                   + table_html(table, row_classes=bad)
                   + "<h3>Solver time (s)</h3>" + table_html(times)
                   + ("<h3>Peak memory (MB)</h3><p class=note>The largest resident set of the process running each "
                      "cell while it ran (10<sup>6</sup> bytes), mean ± std over seeds.</p>" + table_html(memory)
                      if memory is not None else ""))


#: The timing summary's columns of memory (the rest are times in seconds), and their heading in the report.
MEMORY = {"peak_rss_bytes": "peak memory (MB)"}


def timing_tables(summary: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The timing summary (:func:`~.tables.summarize` with ``timing``) as two displayed tables: the
    solver's times in seconds, and the cells' peak memory in MB (None when no record carries it)."""
    memory = [c for c in summary.columns if c.startswith(tuple(f"{m}_" for m in MEMORY))]
    times = display(summary.drop(columns=memory))
    if not memory:
        return times, None
    seconds = [c for c in summary.columns if c.endswith(("_mean", "_std")) and c not in memory]
    shown = display(summary.drop(columns=seconds))
    return times, shown.rename(columns={UNITS[m][0]: name for m, name in MEMORY.items() if m in UNITS})


def numeric_axes(df: pd.DataFrame) -> list[str]:
    """The grid's numeric axes (the seed aside) that take several values."""
    return [k for k in df.attrs.get("grid_keys", ()) if k != "seed" and k in df
            and pd.api.types.is_numeric_dtype(df[k]) and df[k].nunique() > 1]


def inline_svg(svg: str, prefix: str) -> str:
    """An SVG element's ids (and the references to them) prefixed, so that several figures share a page;
    its metadata (matplotlib's name and address) left out."""
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}-{m.group(1)}"', svg)
    return re.sub(r'(url\(#|href="#)([^")]+)', lambda m: f"{m.group(1)}{prefix}-{m.group(2)}", svg)


def figures_section(cells: Cells) -> Section:
    """Each metric against each numeric grid axis, one figure per solver (:func:`~.figures.plot_curves`)."""
    df = cells.df
    axes = numeric_axes(df) if len(df) else []
    if not axes:
        return Section("figures", "Figures", "<p>No numeric grid axis with several values: no curves.</p>")
    out = []
    for solver, part in df.groupby("solver", sort=True):
        figures = []
        for x in axes:
            for metric in metric_columns(df):
                if part[x].nunique() < 2 or part[metric].isna().all():
                    continue
                k = len(out) + len(figures)
                svg = svg_figure(plot_curves, part, metric, x, None, title=f"{solver}: {metric}")
                figures.append(f'<figure id="figure-{k}">{inline_svg(svg, f"f{k}")}<figcaption>'
                               f"{escape(figure_caption(part, metric, x, str(solver)))}</figcaption></figure>")
        if figures:
            out.append(f"<h3>{escape(str(solver))}</h3>" + "".join(figures))
    return Section("figures", "Figures", "".join(out) or "<p>No metric varies along a numeric grid axis.</p>")


def figure_caption(part: pd.DataFrame, metric: str, x: str, solver: str) -> str:
    """The caption of a report figure (:func:`~.figures.plot_curves`): what is drawn, what the error
    bars are (clipped to [0, 1] for a bounded score, :func:`~.labels.error_bars`), and the red ring
    only when a drawn point has a cell that did not converge."""
    bars = "mean ± std over seeds" + (", the bars clipped to [0, 1] (a score outside it is impossible)"
                                      if metric in BOUNDED else "")
    drawn = part[part[x].notna()]
    ringed = (drawn["converged"] == False).any()  # noqa: E712
    return (f"{metric} against {x} ({solver}), {bars}"
            + ("; a red ring: a point with a cell that did not converge." if ringed else "."))


def convergence_key(rec: dict, names) -> str | None:
    """The history a cell's convergence is drawn from: the certificate's worst check, else one of its
    checks, else the first of :data:`CONVERGENCE_KEYS`, that the cell records (None: none)."""
    certificate = rec.get("certificate") or {}
    first = [(certificate.get("worst") or {}).get("check"), *(certificate.get("checks") or {})]
    return next((k for k in (*first, *CONVERGENCE_KEYS) if k and k in names), None)


def thin(values: np.ndarray, points: int = HISTORY_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """At most ``points`` (iteration, value) pairs of a history, evenly spaced, its first and last kept."""
    index = np.unique(np.linspace(0, len(values) - 1, min(len(values), points)).round().astype(int))
    return index, values[index]


def history_svg(lines: list[tuple[str, np.ndarray]], key: str, tol: float | None, ident: str) -> str:
    """A log-y plot of the histories ``lines`` ((label, values) each) against the iteration, drawn as
    SVG by hand (no matplotlib: hundreds stay small and fast); ``tol`` a dashed line."""
    width, height, left, right, top, bottom = 380, 200, 56, 10, 10, 34
    shown = [(label, *thin(np.asarray(v, dtype=float))) for label, v in lines if len(v)]
    positive = np.concatenate([y[np.isfinite(y) & (y > 0)] for _, _, y in shown] + [np.array([tol or np.nan])])
    positive = positive[np.isfinite(positive) & (positive > 0)]
    if not len(positive):
        return f'<p id="{ident}">({escape(key)}: no positive values to draw on a log scale)</p>'
    lo, hi = np.floor(np.log10(positive.min())), np.ceil(np.log10(positive.max()))
    hi = hi if hi > lo else lo + 1
    last = max(max(int(i[-1]) for _, i, _ in shown), 1)

    def px(i):
        return left + (width - left - right) * i / last

    def py(v):
        return top + (height - top - bottom) * (hi - np.log10(v)) / (hi - lo)

    parts = [f'<svg id="{ident}" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img"><title>{escape(key)} per iteration (log scale)</title>',
             f'<rect x="{left}" y="{top}" width="{width - left - right}" height="{height - top - bottom}" '
             f'fill="none" stroke="#999"/>']
    decades = np.arange(lo, hi + 1)
    for d in decades[:: max(1, int(np.ceil(len(decades) / 6)))]:
        y = py(10.0 ** d)
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>'
                     f'<text x="{left - 4}" y="{y + 4:.1f}" font-size="10" text-anchor="end">1e{int(d)}</text>')
    for i in (0, last // 2, last):
        parts.append(f'<text x="{px(i):.1f}" y="{height - bottom + 13}" font-size="10" text-anchor="middle">{i}'
                     f'</text>')
    parts.append(f'<text x="{(left + width - right) / 2:.0f}" y="{height - 4}" font-size="11" '
                 f'text-anchor="middle">iteration</text><text x="12" y="{(top + height - bottom) / 2:.0f}" '
                 f'font-size="11" text-anchor="middle" transform="rotate(-90 12 {(top + height - bottom) / 2:.0f})">'
                 f'{escape(key)}</text>')
    if tol and tol > 0:
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{py(tol):.1f}" y2="{py(tol):.1f}" '
                     f'stroke="#d62728" stroke-dasharray="4 3"><title>tolerance {tol:.3g}</title></line>')
    for k, (label, index, values) in enumerate(shown):
        ok = np.isfinite(values) & (values > 0)
        points = " ".join(f"{px(i):.1f},{py(v):.1f}" for i, v in zip(index[ok], values[ok]))
        parts.append(f'<polyline fill="none" stroke="{COLOURS[k % len(COLOURS)]}" stroke-width="1.2" '
                     f'points="{points}"><title>{escape(label)}</title></polyline>')
    return "".join(parts) + "</svg>"


def _history(where: Path, rec: dict) -> dict:
    """A cell's histories; none for an archived record that does not carry them."""
    if is_archive(where) and "history" not in rec:
        return {}
    try:
        return histories_of(where, rec)
    except OSError:
        return {}


def histories_section(cells: Cells) -> Section:
    """Per solver and setting, the cells' convergence histories in one collapsible figure each (the
    solver's first open)."""
    df = cells.df
    groups, longest, k = [], 0, 0
    for solver, part in (df.groupby("solver", sort=True) if len(df) else []):
        inner = []
        for label, group in split_curves(part, distinguishing(part)):
            lines, key, tol = [], None, None
            for seed, cell in sorted(zip(group["seed"], group["cell"]), key=lambda sc: natural_key(sc[0])):
                where, rec = cells.records[cell]
                histories = _history(where, rec)
                key = key or convergence_key(rec, histories)
                if key in histories:
                    lines.append((f"seed {seed}", histories[key]))
                    longest = max(longest, len(histories[key]))
                    check = ((rec.get("certificate") or {}).get("checks") or {}).get(key) or {}
                    tol = tol or check.get("tol")
            if not lines:
                continue
            legend = ", ".join(f'<span style="color:{COLOURS[j % len(COLOURS)]}">{escape(name)}</span>'
                               for j, (name, _) in enumerate(lines))
            inner.append(f"<details{'' if inner else ' open'}><summary>{escape(label)}: {escape(key)} "
                         f"({len(lines)} cell(s))</summary>"
                         f"{history_svg(lines, key, tol, f'history-{k}')}<p class=note>{legend}"
                         + (f"; dashed: the certificate's tolerance {tol:.3g}" if tol else "") + "</p></details>")
            k += 1
        if inner:
            groups.append(f"<details open><summary><strong>{escape(str(solver))}</strong> ({len(inner)} setting(s))"
                          f"</summary>{''.join(inner)}</details>")
    if not groups:
        return Section("histories", "Convergence histories", "<p>The records carry no per-iteration history.</p>")
    return Section("histories", "Convergence histories",
                   f"<p class=note>Each cell's convergence quantity (the certificate's worst check where the cell "
                   f"records its history) against the iteration, log scale. Histories are thinned to at most "
                   f"{HISTORY_POINTS} points per line (evenly spaced iterations, the first and last kept; the "
                   f"longest has {longest} iterations).</p>" + "".join(groups))


def problems_section(cells: Cells, roots: list[Path], resume: str | None) -> Section:
    """The expected cells not in the tables (failed with their reason, not run, unreadable) and the
    command that resumes them."""
    problems = cells.done.problems
    if not problems:
        return Section("problems", "Cells not in the tables",
                       f"<p>None: all {cells.done.finished} expected cell(s) are finished.</p>")
    table = pd.DataFrame(problems, columns=["cell", "state", "reason"]).sort_values(["state", "cell"],
                                                                                   kind="stable")
    ids = {cell for cell, _, _ in problems}
    commands = [resume] if resume else [
        f"kernlearn run {root / 'experiment.yaml'} --out {root}" for root in map(Path, roots)
        if not is_archive(root) and ids & {c.id for c in expected_cells(root)}]
    counts = ", ".join(f"{k} {state}" for state, k in cells.done.counts().items())
    return Section("problems", "Cells not in the tables",
                   f"<p>{len(problems)} of {cells.done.expected} expected cell(s) ({counts}). Resume them (finished "
                   f"cells are skipped; failed ones run again):</p>"
                   + "".join(f"<pre>{escape(c)}</pre>" for c in commands) + table_html(table.reset_index(drop=True)))


def _counted(values: list) -> str:
    """Distinct values with their cell counts: ``a (7), b (2)`` (``a (all 9)`` when one)."""
    found = Counter(values)
    if len(found) == 1:
        return f"{next(iter(found))} (all {len(values)})"
    return ", ".join(f"{v} ({k})" for v, k in sorted(found.items(), key=lambda vk: natural_key(vk[0])))


def settings_section(cells: Cells) -> Section:
    """What ran, per experiment: the dataset and n, kernel and rank, constraints generator and count,
    solver settings and data files (sha256) as ``kernlearn show`` prints them (:func:`~.show.settings_rows`),
    each value with its count of cells, and the grid's axes with their values."""
    by_experiment: dict[str, list[dict]] = {}
    for _, rec in cells.records.values():
        by_experiment.setdefault(str(rec.get("experiment")), []).append(rec)
    if not by_experiment:
        return Section("settings", "Settings", "<p>No finished cells.</p>")
    parts = []
    for experiment in sorted(by_experiment, key=natural_key):
        recs = by_experiment[experiment]
        rows: dict[str, list[str]] = {}
        for rec in recs:
            for what, value in settings_rows(rec):
                rows.setdefault(what, []).append(value)
        table = [(what, _counted(values + ["–"] * (len(recs) - len(values)))) for what, values in rows.items()]
        axes: dict[str, set] = {}
        for rec in recs:
            for key, value in (rec.get("grid") or {}).items():
                axes.setdefault(key, set()).add(str(value))
        table.append(("grid axes", "; ".join(f"{key}: {', '.join(sorted(values, key=natural_key))}"
                                              for key, values in axes.items()) or "none (one cell per seed)"))
        parts.append((f"<h3>{escape(experiment)}</h3>" if len(by_experiment) > 1 else "")
                     + table_html(pd.DataFrame(table, columns=["what", f"values (cells, of {len(recs)})"]),
                                  sortable=False))
    return Section("settings", "Settings",
                   "<p class=note>What the finished cells ran, as <code>kernlearn show</code> prints it for one "
                   "cell; a value's count of cells in brackets.</p>" + "".join(parts))


def provenance_section(cells: Cells) -> Section:
    """What made the records, in one table: commits, versions, hosts, BLAS, time and peak memory."""
    recs = [rec for _, rec in cells.records.values()]
    if not recs:
        return Section("provenance", "Provenance", "<p>No finished cells.</p>")
    prov = [rec.get("provenance") or {} for rec in recs]
    rows = [("cells", str(len(recs)))]
    made = [f"{p.get('git_commit') or 'no git commit'}" + (" (dirty)" if p.get("git_dirty") else "") for p in prov]
    rows.append(("commit", _counted(made)))
    for key, what in (("kernlearn_version", "kernlearn"), ("host", "host"), ("cpu", "CPU"), ("platform", "platform"),
                      ("python", "Python"), ("blas", "BLAS"), ("numpy_simd", "numpy SIMD"), ("workers", "workers"),
                      ("blas_threads", "BLAS threads")):
        rows.append((what, _counted([provenance_text(key, p[key]) if key in p else "–" for p in prov])))
    libraries = sorted({name for p in prov for name in p.get("versions", {})})
    rows += [(name, _counted([str(p.get("versions", {}).get(name, "–")) for p in prov])) for name in libraries]
    started = sorted(p["started"] for p in prov if p.get("started"))
    if started:
        rows.append(("started", f"{started[0]} – {started[-1]}"))
    solver_wall = sum(float(rec.get("seconds") or 0) for rec in recs)
    solver_cpu = sum(float(rec.get("cpu_seconds") or 0) for rec in recs)
    rows.append(("solver time (sum)", f"{solver_wall:.3f} s wall, {solver_cpu:.3f} s CPU"))
    cell_wall = sum(float(p.get("wall_seconds") or 0) for p in prov)
    cell_cpu = sum(float(p.get("cpu_seconds") or 0) for p in prov)
    rows.append(("cell time (sum)", f"{cell_wall:.3f} s wall, {cell_cpu:.3f} s CPU"))
    peaks = [rec.get("peak_rss_bytes", p.get("peak_rss_bytes")) for rec, p in zip(recs, prov)]
    peaks = [x for x in peaks if x is not None]
    rows.append(("peak memory (largest cell)", f"{size(max(peaks))} ({len(peaks)} of {len(recs)} cells say)"
                 if peaks else "– (the records do not carry it)"))
    return Section("provenance", "Provenance", table_html(pd.DataFrame(rows, columns=["what", "values (cells)"]),
                                                          sortable=False))


def page(title: str, summary: str, sections: list[Section]) -> str:
    """The HTML page: title, summary line, a link per section, the sections, the inline script."""
    nav = "".join(f'<a href="#{s.id}">{escape(s.title)}</a>' for s in sections)
    body = "".join(f'<section id="{s.id}"><h2>{escape(s.title)}</h2>{s.body}</section>' for s in sections)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f'<meta name="viewport" content="width=device-width"><style>{STYLE}</style></head><body>'
            f"<h1>{escape(title)}</h1><p>{summary}</p><nav>{nav}</nav>{body}<script>{SCRIPT}</script>"
            f"</body></html>\n")


def run_sections(cells: Cells, roots: list[Path], resume: str | None = None) -> list[Section]:
    """The sections of the records' page: settings, tables, figures, histories, cells not in the tables,
    provenance."""
    return [settings_section(cells), tables_section(cells), figures_section(cells), histories_section(cells),
            problems_section(cells, roots, resume), provenance_section(cells)]


def summary_text(cells: Cells, roots: list[Path], command: str = "kernlearn report") -> str:
    """The page's first line: its sources, how many cells are finished of those expected, the command
    that made it (HTML)."""
    done = cells.done
    missing = f"; {len(done.problems)} not in the tables" if done.problems else ""
    sources = ", ".join(f"<code>{escape(str(r))}</code>" for r in roots) if len(roots) <= 3 else \
        f"{len(roots)} sources in <code>{escape(os.path.commonpath([str(r) for r in roots]))}</code>"
    return (f"From {sources}: {done.finished} finished cell(s) of "
            f"{done.expected} expected{missing}. Made by <code>{escape(command)}</code>; it needs no network.")


def report_html(roots: list[Path], title: str | None = None) -> str:
    """The page of results folders or record archives ``roots`` (``kernlearn report``)."""
    roots = [Path(r) for r in roots]
    cells = Cells.load(roots)
    title = title or "kernlearn report: " + ", ".join(sorted(set(cells.df["experiment"]))
                                                      if len(cells.df) else [r.name for r in roots])
    return page(title, summary_text(cells, roots), run_sections(cells, roots))


def report_path(roots: list[Path], output: Path | None) -> Path:
    """Where ``kernlearn report`` writes: ``output``, else ``<root>/report.html`` for one root."""
    if output is not None:
        if Path(output).suffix.lower() not in (".html", ".htm"):
            raise ConfigError(f"report -o '{output}': the page is HTML; name a file ending in .html.")
        return Path(output)
    if len(roots) > 1 or is_archive(roots[0]):
        raise ConfigError(f"report: {len(roots)} source(s) ({', '.join(map(str, roots))}); say where the page "
                          f"goes with -o FILE.html (one results folder alone gets FOLDER/report.html).")
    return Path(roots[0]) / "report.html"


def write_page(text: str, output: Path) -> Path:
    """Write a page atomically."""
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(Path(output)) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(output)
