"""``kernlearn reproduce``: run a study's experiments (here, or as SLURM job arrays), then build its
tables, figures, verdicts and page.

Layout under the results root R (``--results``, default ``results``; ``--quick`` uses ``R/quick``):
experiments in ``R/<paper>/<out>`` (git-ignored: factors and records of this machine), their record
archives in ``R/records/<paper>/<experiment>.jsonl.gz`` (committed, :mod:`kernlearn_cli.archive`),
tables in ``R/tables``, figures in ``R/figures``, the verdicts in ``R/tables/<paper>_verdicts.{csv,md}``.
The paper's page goes to ``docs/papers/<paper>.md`` (quick runs: ``R/quick/docs``).

Tables, figures, verdicts and pages are built from the archives alone, so a fresh clone rebuilds them
(``--no-run``) and finished cells travel with the repository: a run skips every archived cell, adds each
cell it finishes to the archive (every few seconds, and at the end), and a time budget (``--budget``)
starts no cell once spent.  Before running or building, the finished cells of a results folder that
the archive lacks are added to it (so a run killed before it archived loses nothing on this machine,
and a SLURM collect job archives its arrays' cells).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .archive import SUFFIX, Archive
from .errors import ConfigError, KernlearnError
from .io import RECORD, atomic_path, cell_state
from .study import Study
from .verdicts import KINDS, TESTED, counts, paper_item, tally, verdict_table, verdicts

STATUS_MARKER = "status"


@dataclass(frozen=True)
class Layout:
    """Where a (quick) reproduction writes; ``full_records``: for a quick one, the full run's record
    archives (``--plan`` prices the quick cells not run yet by the full run's cells)."""

    root: Path
    docs: Path
    full_records: Path | None = None

    @classmethod
    def of(cls, results: Path, quick: bool, docs: Path | None = None) -> "Layout":
        root = Path(results) / "quick" if quick else Path(results)
        return cls(root, Path(docs) if docs is not None else (root / "docs" if quick else Path("docs") / "papers"),
                   Path(results) / "records" if quick else None)

    @property
    def tables(self) -> Path:
        return self.root / "tables"

    @property
    def figures(self) -> Path:
        return self.root / "figures"

    def out(self, study: Study, name: str) -> Path:
        return self.root / study.paper / study.experiments[name].out

    @property
    def records(self) -> Path:
        return self.root / "records"

    def archive(self, study: Study, name: str) -> Path:
        return self.records / study.paper / f"{name}{SUFFIX}"


def overrides(experiment, quick: bool) -> list[str]:
    """The ``--set`` values of an experiment's (quick) run."""
    return list(experiment.set) + (list(experiment.quick) if quick else [])


@contextmanager
def environment(values: dict):
    """``os.environ`` with ``values`` set, restored afterwards."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def check(study: Study, quick: bool) -> int:
    """Expand every experiment's config with its overrides (no data is read); returns the cell count."""
    from .config import expand, load

    cells = 0
    for e in study.selected(quick):
        try:
            cells += len(expand(load(e.config, overrides(e, quick))))
        except KernlearnError as exc:
            raise ConfigError(f"study '{study.path}', experiment '{e.name}': {exc}") from None
    return cells


def statements_text(study: Study) -> str:
    """The paper's statements counted as its page and the README's status table count them: those
    the study judges by a rule, those it shows as not comparable, those it cannot test, and their
    total (statements shown as context, with no verdict, apart)."""
    kinds = [s.kind for s in study.statements]
    total = len(kinds) - kinds.count("context") + len(study.untested)
    return (f"{kinds.count('judged')} judged + {kinds.count('not comparable')} not comparable + "
            f"{len(study.untested)} untested = {total} statement(s) of the paper"
            + (f", and {kinds.count('context')} shown as context" if "context" in kinds else ""))


def history_sources(study: Study) -> set[str]:
    """The experiments whose per-iteration histories a figure of the study draws (archived with them)."""
    return {name for f in study.figures.values() if f.kind == "history" for name in f.sources}


def expected_config(e, quick: bool) -> dict:
    """An experiment's config as run (overrides applied): the archive's header."""
    from .config import load

    return load(e.config, overrides(e, quick), every_cell=False)


#: Significant digits of an archived per-iteration history: a figure's resolution, a few times
#: smaller than the full doubles (a 5300-iteration dual objective per cell otherwise).
HISTORY_DIGITS = 6


def archived_history(history: dict) -> dict:
    """Histories as archived: lists of numbers rounded to :data:`HISTORY_DIGITS` significant digits."""
    return {k: [float(f"{x:.{HISTORY_DIGITS}g}") for x in np.asarray(v, dtype=np.float64).ravel()]
            for k, v in history.items()}


def archived_record(record: dict, cell_dir: Path, history: bool) -> dict:
    """A cell's record as archived: with its histories (from ``factors.h5``, rounded by
    :func:`archived_history`) when a figure needs them."""
    from .report import histories_of

    if not history:
        return record
    return {**record, "history": archived_history(histories_of(cell_dir / RECORD, record))}


def add_folder(archive: Archive, folder: Path, expected: set, history: bool) -> int:
    """Add the finished cells of a results folder that the archive lacks (and check the others
    agree); returns how many were added."""
    from .report import records_of

    added = 0
    if not Path(folder).is_dir():
        return 0
    for cell, where, rec in records_of(folder, "reproduce"):
        if isinstance(rec, ValueError) or cell not in expected or cell_state(Path(where).parent)[0] != "finished":
            continue
        if cell in archive.records:
            archive.add(rec, source=str(folder))            # the same result, or an error naming the cell
            continue
        added += archive.add(archived_record(rec, Path(where).parent, history), source=str(folder))
    return added


def open_archive(study: Study, layout: Layout, e, quick: bool, *, fresh: bool = False) -> Archive:
    """The experiment's archive with the finished cells of its results folder added (``fresh``: an
    empty one, for ``--rerun``), its header set to the experiment's config."""
    from .config import expand

    cfg = expected_config(e, quick)
    ids = {c.id for c in expand(cfg)}
    path = layout.archive(study, e.name)
    archive = Archive(path, e.name) if fresh else Archive.read(path, e.name)
    archive.config = cfg
    archive.records = {c: r for c, r in archive.records.items() if c in ids}   # cells the study no longer has
    if not fresh:
        add_folder(archive, layout.out(study, e.name), ids, e.name in history_sources(study))
    return archive


def _grid_point(grid: dict) -> str:
    """A cell's grid values but the seed: the cells that differ only in their seed cost alike."""
    return json.dumps({k: v for k, v in (grid or {}).items() if k != "seed"}, sort_keys=True, default=str)


def plan_rows(study: Study, layout: Layout, quick: bool, jobs: int = 1) -> list[dict]:
    """Per experiment: cells, archived, left, and the estimated compute left (seconds).  A cell left
    costs the mean CPU time of the archived cells at its grid point (its other seeds), else of all
    the experiment's archived cells (their wall time for records made before CPU time was
    recorded), else the study's ``seconds_per_cell``.  A quick run with no archived cell of an
    experiment is priced likewise by the full run's archived cells (its cells are the full run's at
    fewer seeds or grid points).  CPU time, not wall time: a busy machine
    stretches the wall time of the cells, not their compute.  Cells that share the cores cost more
    CPU time each (caches, memory bandwidth), so when the archive has cells run as many at a time
    as ``jobs`` workers would run this experiment's, only those price it."""
    from .config import expand

    rows = []
    for e in study.selected(quick):
        cells = {c.id: c for c in expand(expected_config(e, quick))}
        archive = Archive.read(layout.archive(study, e.name), e.name)
        done = [r for c, r in archive.records.items() if c in cells]
        priced, source = done, "archive"
        if not done and layout.full_records is not None:
            priced = list(Archive.read(layout.full_records / study.paper / f"{e.name}{SUFFIX}", e.name).records.values())
            source = "full run's archive"
        workers = min(jobs, e.jobs or jobs)
        alike = [r for r in priced if (r.get("provenance") or {}).get("workers") == workers]
        costs: dict[str, list] = {}
        for r in alike or priced:
            p = r.get("provenance") or {}
            costs.setdefault(_grid_point(r.get("grid")), []).append(p.get("cpu_seconds", p.get("wall_seconds",
                                                                                             r["seconds"])))
        every = [x for v in costs.values() for x in v]
        mean = sum(every) / len(every) if every else e.seconds_per_cell
        left = [c for i, c in cells.items() if i not in archive.records]
        seconds, by_point = 0.0, 0
        for c in left:
            same = costs.get(_grid_point(c.grid_values))
            by_point += bool(same)
            seconds += sum(same) / len(same) if same else (mean or 0.0)
        known = mean is not None or by_point == len(left)
        basis = (source + (f" cells run {workers} at a time" if 0 < len(alike) < len(priced) else "")
                 + (f", {by_point} of {len(left)} left at an archived grid point" if left else "")
                 if every else "study" if e.seconds_per_cell else "unknown")
        rows.append({"experiment": e.name, "cells": len(cells), "archived": len(done), "left": len(left),
                     "seconds_left": seconds if known else None,
                     "per_cell": seconds / len(left) if known and left else mean, "basis": basis})
    return rows


def plan_text(study: Study, rows: list[dict], jobs: int) -> str:
    """``--plan``'s table: one line per experiment and the total."""
    from .progress import clock

    lines = [f"{study.paper}: experiment | cells | archived | left | compute left (estimate: per cell, from)"]
    total, unknown = 0.0, 0
    for r in rows:
        if r["left"] == 0:
            est = "-"
        elif r["seconds_left"] is None:
            est = "unknown (no archived cell, no seconds_per_cell in the study)"
            unknown += 1
        else:
            est = f"{clock(r['seconds_left'])} ({r['per_cell']:.1f} s per cell, from the {r['basis']})"
            total += r["seconds_left"]
        lines.append(f"  {r['experiment']} | {r['cells']} | {r['archived']} | {r['left']} | {est}")
    left = sum(r["left"] for r in rows)
    if unknown and not total:
        lines.append(f"  total: {left} cell(s) left, compute unknown ({unknown} experiment(s) without an estimate)")
    else:
        lines.append(f"  total: {left} cell(s) left, about {clock(total)} of compute "
                     f"(about {clock(total / max(jobs, 1))} with --jobs {jobs})"
                     + (f"; {unknown} more experiment(s) without an estimate" if unknown else ""))
    return "\n".join(lines)


def run_local(study: Study, layout: Layout, *, quick: bool, jobs: int, echo, deadline: float | None = None,
              rerun: tuple = ()) -> list[str]:
    """Run (or resume) the experiments here, one after the other, archiving each finished cell;
    returns the failed cells.  Archived cells are not run; ``rerun`` experiments start from an empty
    archive and recompute every cell; past ``deadline`` (``time.monotonic()``) no cell starts."""
    from .runner import run_config
    from .solvers.protocol import ConvergenceWarning

    failed = []
    experiments = study.selected(quick)
    histories = history_sources(study)
    for k, e in enumerate(experiments, 1):
        out = layout.out(study, e.name)
        archive = open_archive(study, layout, e, quick, fresh=e.name in rerun)
        archive.write()
        if deadline is not None and time.monotonic() >= deadline:
            break
        start = time.perf_counter()
        echo(f"[{study.paper}] {e.name} (experiment {k} of {len(experiments)}, {len(archive.records)} cell(s) "
             f"archived) ...")
        written = [time.monotonic()]

        def on_result(cell, record, archive=archive, e=e, out=out, written=written):
            archive.add(archived_record(record, out / cell.id, e.name in histories), source=str(out))
            if time.monotonic() - written[0] >= 5.0:          # a kill loses at most a few seconds of cells
                archive.write()
                written[0] = time.monotonic()

        with environment(e.env), warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)      # counted below, and marked † in every table
            _, bad = run_config(e.config, out, overrides(e, quick), jobs=min(jobs, e.jobs or jobs), per_cell=False,
                                force=e.name in rerun, skip=set(archive.records), deadline=deadline,
                                on_result=on_result)
        archive.write()
        failed += [f"{e.name} {cell}" for cell in bad]
        unconverged = sum(r["converged"] is False for r in archive.records.values())
        echo(f"[{study.paper}] {e.name}: {len(archive.records)} cell(s) archived"
             + (f", {unconverged} not converged (marked †)" if unconverged else "")
             + f", {time.perf_counter() - start:.1f}s")
    if deadline is not None and time.monotonic() >= deadline:
        echo(f"[{study.paper}] time budget spent; what is left:\n" + plan_text(study, plan_rows(study, layout, quick, jobs), jobs))
    return failed


def merge(study: Study, layout: Layout, sources: list[Path], quick: bool, echo) -> None:
    """Add the cells of other machines to the study's archives, by cell id: ``sources`` are archive
    files (``<experiment>.jsonl.gz``), results roots holding ``records/<paper>/`` archives, or results
    roots holding ``<paper>/<out>/`` folders.  A cell whose records differ (but for provenance and
    timings) is an error naming it."""
    from .config import expand

    for e in study.selected(quick):
        archive = open_archive(study, layout, e, quick)
        ids = {c.id for c in expand(archive.config)}
        history = e.name in history_sources(study)
        before = len(archive.records)
        for src in map(Path, sources):
            files = [src] if src.name == f"{e.name}{SUFFIX}" else [src / "records" / study.paper / f"{e.name}{SUFFIX}"]
            for f in files:
                if f.is_file():
                    for cell, rec in Archive.read(f, e.name).records.items():
                        if cell in ids:
                            archive.add(rec, source=str(f))
            if src.is_dir():
                add_folder(archive, src / study.paper / e.out, ids, history)
        archive.write()
        if len(archive.records) > before:
            echo(f"[{study.paper}] {e.name}: merged {len(archive.records) - before} cell(s)")


def _sbatch(args: list[str], env: dict | None = None) -> str:
    """Submit with ``sbatch --parsable``; the job id."""
    try:
        proc = subprocess.run(["sbatch", "--parsable", *args], capture_output=True, text=True,
                              env={**os.environ, **(env or {})})
    except FileNotFoundError:
        raise KernlearnError("reproduce --launcher slurm: 'sbatch' is not on PATH; run on a SLURM login node, "
                             "or use --launcher local.") from None
    if proc.returncode != 0:
        raise KernlearnError(f"sbatch {' '.join(map(shlex.quote, args))} failed: {proc.stderr.strip() or proc.stdout}")
    return proc.stdout.strip().split(";")[0]


def submit_slurm(study: Study, layout: Layout, *, quick: bool, sbatch: dict, max_array_size: int,
                 collect_args: list[str], echo) -> list[str]:
    """One job array per experiment (cells packed so each fits ``max_array_size``) and one collect job
    that runs after all of them succeeded (``--dependency=afterok``).  With ``sbatch["cpus"]`` > 1 a
    task holds that many cells, at most the experiment's ``jobs``, and uses the CPUs as
    :func:`~kernlearn_cli.runner.sbatch_script` rules (several cells: at once, one BLAS thread each,
    the bits of a local run).  Returns the job ids, the collect job last."""
    from .config import load_cells
    from .runner import check_folder, pack_cells, sbatch_script, task_count

    plans = []
    for e in study.selected(quick):          # check every experiment before submitting any
        cfg, cells = load_cells(e.config, overrides(e, quick))
        out = layout.out(study, e.name).resolve()
        check_folder(out, cfg)
        per_task = pack_cells(len(cells), min(sbatch["cpus"], e.jobs or sbatch["cpus"]), max_array_size)
        plans.append((e, cfg, len(cells), per_task, out))
    ids = []
    for e, _, n, per_task, out in plans:
        tasks = task_count(n, per_task)
        text = sbatch_script(e.config.resolve(), out, tasks, per_task, name=f"{study.paper}-{e.name}",
                             overrides=overrides(e, quick), seed=None, python=sys.executable, **sbatch)
        script = out / "slurm" / f"{e.name}.sbatch"
        script.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(script) as tmp:
            tmp.write_text(text)
        ids.append(_sbatch([str(script)], e.env))
        echo(f"[{study.paper}] {e.name}: job {ids[-1]}, {n} cell(s) in {tasks} array task(s)")
    log = (layout.root / study.paper / "slurm").resolve()
    log.mkdir(parents=True, exist_ok=True)
    command = " ".join(shlex.quote(c) for c in [sys.executable, "-m", "kernlearn_cli", "reproduce",
                                                   str(study.path.resolve()), "--no-run", *collect_args])
    options = [f"--job-name={study.paper}-collect", f"--output={log}/collect_%j.out", "--chdir", os.getcwd()]
    options += [f"--{k}={v}" for k, v in sbatch.items() if k in ("partition", "account", "qos") and v]
    if ids:
        options.append("--dependency=afterok:" + ":".join(ids))
    ids.append(_sbatch([*options, "--wrap", command]))
    echo(f"[{study.paper}] collect: job {ids[-1]}" + (f", after {len(ids) - 1} job(s) succeed" if len(ids) > 1 else ""))
    return ids


def build(study: Study, layout: Layout, echo) -> pd.DataFrame:
    """The study's tables and figures from the finished cells, and the verdict per paper statement
    (written to ``<tables>/<paper>_verdicts``)."""
    from .report import (display, entry_stats, load_records, pivot, pivot_keys, plot_curves, plot_history,
                         plot_paths, summarize, write_tables)

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


def _rel(path: Path, start: Path) -> str:
    return Path(os.path.relpath(Path(path).resolve(), Path(start).resolve())).as_posix()


def page(study: Study, v: pd.DataFrame, layout: Layout, command: str) -> str:
    """``docs/papers/<paper>.md``: the protocol, each table with our reading and the paper's numbers
    beside ours (verdicts, explanations), the figures."""
    from .report import markdown

    here = layout.docs
    out = [f"# {study.title}", "",
           f"<!-- Generated by `{command}` from {_rel(study.path, Path.cwd())}: edit the study file, "
           f"not this page. -->", ""]
    if study.citation:
        out += [f"**Paper:** {citation_text(study.citation)}", ""]
    if len(v) or study.untested:
        verdict = (f"**Verdict:** {tally(v, len(study.untested))} (one verdict per statement of the paper; "
                   f"kinds and rules in [studies](../studies.md)).")
    else:
        verdict = ("**Verdict:** none — the paper's text we work from prints no number to compare with; the "
                   "tables below are ours.")
    out += [verdict, ""] + ([study.summary, ""] if study.summary else [])
    out += [f"**Run it:** `kernlearn reproduce {study.paper}` (add `--quick` for a smoke run, `--launcher slurm` "
            f"for a cluster).", ""]
    if study.protocol:
        out += ["## Protocol", "", study.protocol, ""]
    tables = v.attrs.get("tables", {})
    for t in study.tables.values():
        out += [f"## {t.title}", "", f"`{t.name}` — " + (f"{t.metric}, rows {t.rows or 'default'}, "
                                                           f"columns {t.cols or 'default'}, {t.agg}"
                                                           if t.metric else "every metric, mean ± std over seeds"), ""]
        out += [markdown(tables[t.name]) if t.name in tables else "*(no finished cells)*", ""]
        if t.name in v.attrs.get("notes", {}):
            out += [f"Warning: {v.attrs['notes'][t.name]}", ""]
        if t.text:
            out += [t.text, ""]
        mine = v[[s.entries[0].table == t.name for s in study.statements]] if len(v) else v
        if len(mine):
            out += [f"The paper's statements beside ours ({tally(mine)}):", "", verdict_table(mine), ""]
    out += untested_section(study.untested)
    figures = [f for f in study.figures.values() if (layout.figures / f.name).exists()]
    if figures:
        out += ["## Figures", ""]
        for f in figures:
            out += [f"![{f.title or f.name}]({_rel(layout.figures / f.name, here)})", ""]
    out += provenance_section(study, layout)
    return "\n".join(out).rstrip() + "\n"


def citation_text(citation: dict) -> str:
    """A study's ``citation`` as one line: authors (year). Title. *Venue*. DOI, URL, note."""
    doi = f" DOI [{citation['doi']}](https://doi.org/{citation['doi']})." if citation.get("doi") else ""
    note = f" {citation['note']}" if citation.get("note") else ""
    return (f"{citation['authors']} ({citation['year']}). {citation['title']}. *{citation['venue']}*.{doi} "
            f"<{citation['url']}>{note}")


def _grouped_places(wheres: list[str]) -> list[str]:
    """Statements' places, a run of places that differ only after their last comma given once:
    ``Table 3, Breast, Iter., α = 2`` and ``..., α = 4`` give ``Table 3, Breast, Iter.: α = 2; α = 4``."""
    runs: list[list[str]] = []
    for where in wheres:
        if runs and where.rpartition(", ")[0] and where.rpartition(", ")[0] == runs[-1][0].rpartition(", ")[0]:
            runs[-1].append(where)
        else:
            runs.append([where])
    return [run[0] if len(run) == 1 else f"{run[0].rpartition(', ')[0]}: "
            + "; ".join(w.rpartition(", ")[2] for w in run) for run in runs]


def untested_section(untested: list) -> list[str]:
    """The statements we cannot test, grouped by their reason, most statements first: a reason that
    several share is given once, with their count and places; the others in one table."""
    if not untested:
        return []
    groups: dict[str, list[str]] = {}
    for where, why in untested:
        groups.setdefault(" ".join(why.split()), []).append(" ".join(where.split()))
    out = ["## Statements we cannot test", "",
           f"{len(untested)} statement(s), for {len(groups)} reason(s).", ""]
    shared = sorted(((why, wheres) for why, wheres in groups.items() if len(wheres) > 1), key=lambda g: -len(g[1]))
    for why, wheres in shared:
        out += [f"**{len(wheres)} statements.** {why}", "", *(f"- {line}" for line in _grouped_places(wheres)), ""]
    single = [(wheres[0], why) for why, wheres in groups.items() if len(wheres) == 1]
    if single:
        out += ["| paper's statement | why |", "| --- | --- |", *(f"| {w} | {y} |" for w, y in single), ""]
    return out


def provenance_section(study: Study, layout: Layout) -> list[str]:
    """Which code made the archived cells: per experiment, the git commits and their cell counts."""
    rows = []
    for name in study.experiments:
        path = layout.archive(study, name)
        if path.is_file():
            commits = Archive.read(path, name).commits()
            rows.append(f"| `{name}` | {sum(commits.values())} | "
                        + ", ".join(f"`{c}` ({k})" for c, k in commits.items()) + " |")
    if not rows:
        return []
    mixed = sum(", " in r for r in rows)
    return ["## Provenance", "",
            f"Records: `{_rel(layout.records / study.paper, Path.cwd())}/` (one archive per experiment). "
            + (f"{mixed} experiment(s) hold cells made by different commits." if mixed else
               "Each experiment's cells were made by one commit."), "",
            "| experiment | cells | made by (commit: cells) |", "| --- | --- | --- |", *rows, ""]


def status_table(studies: list[Study], tables: Path, docs: Path, readme_dir: Path) -> str:
    """Per paper and per table / figure of it: the paper's statements (how many we test) and the
    count of each verdict kind, from the verdict files and the studies' untested statements."""
    kinds = tuple(k for k in KINDS if k not in ("context", "missing"))
    lines = ["| paper | table / figure | command | statements (tested) | " + " | ".join(kinds) + " | details |",
             "| --- | --- | --- | --- | " + " | ".join("---" for _ in kinds) + " | --- |"]
    for study in studies:
        path = Path(tables) / f"{study.paper}_verdicts.csv"
        link = f"[{study.paper}]({_rel(Path(docs) / f'{study.paper}.md', readme_dir)})"
        command = f"`kernlearn reproduce {study.paper}`"
        if not path.is_file():                 # no page yet: link the study itself
            study_link = f"[study]({_rel(study.path, readme_dir)})"
            lines.append(f"| {study.title} | – | {command} | not run yet |" + " |" * len(kinds) + f" {study_link} |")
            continue
        v = pd.read_csv(path, keep_default_na=False, na_values=[""])
        if "statement" not in v.columns:       # a verdict file of the rules before one verdict per statement
            lines.append(f"| {study.title} | – | {command} | judged by the old rules (one verdict per number): "
                         f"rejudged when its record archive is complete (`--plan` says what is left) |"
                         + " |" * len(kinds) + f" {link} |")
            continue
        v = v[v["verdict"] != "context"]
        untested = [paper_item(w) for w, _ in study.untested]
        if v.empty and not untested:
            lines.append(f"| {study.title} | – | {command} | no numbers in the paper's text |" + " |" * len(kinds)
                         + f" {link} |")
            continue
        items = list(dict.fromkeys(paper_item(w) for w in v["where"]))
        other = "other sections" if items else "–"     # untested statements of sections with no verdict
        untested = [u if u in items else other for u in untested]
        for k, item in enumerate(items + [other] * (other in untested)):
            c = counts(v[[paper_item(w) == item for w in v["where"]]])
            stated = sum(c.values()) + untested.count(item)
            tested = sum(c[x] for x in TESTED)
            lines.append(f"| {study.title if k == 0 else ''} | {item} | {command if k == 0 else ''} | "
                         f"{stated} ({tested}) | " + " | ".join(str(c[x]) for x in kinds)
                         + f" | {link if k == 0 else ''} |")
    return "\n".join(lines)


def reproduce(studies: list[Study], *, results: Path, quick: bool, jobs: int, launcher: str, run: bool,
              docs: Path | None, readme: Path | None, sbatch: dict, max_array_size: int, echo, show,
              deadline: float | None = None, rerun: tuple = (), merge_from: tuple = ()) -> list[str]:
    """Check every study, then run (local) or submit (slurm) its experiments; with the local launcher
    (or ``run=False``) build tables, figures, verdicts and pages from the archives.  ``deadline``: no
    cell starts after it.  A study whose archive is incomplete after a budgeted run or with ``run``
    off is not built (a piece of a long study never replaces its tables with partial ones; a
    study's first full run builds them, with its failed cells missing); ``rerun``: experiments recomputed from
    scratch; ``merge_from``: archives or results roots whose cells are merged first (:func:`merge`).
    A study without any archived cell is not built (its committed tables and page stay).  Returns
    the failed cells."""
    from .report import check_marker, fill_marker

    if launcher not in ("local", "slurm"):
        raise ConfigError(f"reproduce --launcher '{launcher}': expected local or slurm.")
    if jobs < 1:
        raise ConfigError(f"reproduce --jobs must be >= 1, got {jobs}.")
    layout = Layout.of(results, quick, docs)
    for study in studies:
        check(study, quick)
    fill = readme is not None and not quick and Path(readme).is_file()
    if fill:
        check_marker(readme, STATUS_MARKER)
    if run and launcher == "slurm":
        flags = ["--results", str(Path(results).resolve())] + (["--quick"] if quick else []) + \
            (["--docs", str(Path(docs).resolve())] if docs is not None else []) + \
            (["--readme", str(Path(readme).resolve())] if fill else ["--no-readme"])
        for study in studies:
            submit_slurm(study, layout, quick=quick, sbatch=sbatch, max_array_size=max_array_size,
                         collect_args=flags, echo=echo)
        return []
    for name in rerun:
        if not any(name in st.experiments for st in studies):
            raise ConfigError(f"reproduce --rerun '{name}': no such experiment in "
                              f"{', '.join(st.paper for st in studies)}.")
    failed = []
    for study in studies:
        if merge_from:
            merge(study, layout, list(merge_from), quick, echo)
        if run:
            failed += run_local(study, layout, quick=quick, jobs=jobs, echo=echo, deadline=deadline,
                                rerun=tuple(n for n in rerun if n in study.experiments))
        else:
            for e in study.selected(quick):     # a collect job (or this machine's results folders) archives first
                if layout.out(study, e.name).is_dir():
                    open_archive(study, layout, e, quick).write()
        if not run or (deadline is not None and time.monotonic() >= deadline):
            rows = plan_rows(study, layout, quick, jobs)
            if any(r["left"] for r in rows) and any(r["archived"] for r in rows):   # a piece of the study
                echo(f"[{study.paper}] incomplete ({sum(r['archived'] for r in rows)} of {sum(r['cells'] for r in rows)} "
                     f"cells archived): tables, figures, verdicts and page are not rebuilt (the existing ones "
                     f"stay); run it to finish (kernlearn reproduce {study.paper} --plan says what is left)")
                continue
        if not any(Archive.read(layout.archive(study, e.name)).records for e in study.selected(quick)):
            echo(f"[{study.paper}] no archived cells: nothing to build (run it, or --merge the archives of the "
                 f"machines that did)")
            continue
        v = build(study, layout, echo)
        command = f"kernlearn reproduce {study.paper}" + (" --quick" if quick else "")
        with atomic_path(layout.docs / f"{study.paper}.md") as tmp:
            tmp.write_text(page(study, v, layout, command))
        show(f"\n## {study.paper}: {tally(v, len(study.untested))}\n\n{verdict_table(v)}\n")
    if fill:
        from .study import find_studies, load_study, study_names

        known = {s.paper for s in studies}
        everyone = studies + [s for s in map(load_study, find_studies("all") if study_names() else [])
                              if s.paper not in known]
        everyone.sort(key=lambda s: s.paper)
        fill_marker(readme, STATUS_MARKER, status_table(everyone, layout.tables, layout.docs, Path(readme).parent))
        echo(f"filled the status table in {readme}")
    return failed
