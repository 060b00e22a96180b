"""``kernlearn reproduce``: run a study's experiments (here, or as SLURM job arrays), then build its
tables, figures, verdicts and page.

Layout under the results root R (``--results``, default ``results``; ``--quick`` uses ``R/quick``):
experiments in ``R/<paper>/<out>``, tables in ``R/tables``, figures in ``R/figures``, the verdicts
in ``R/tables/<paper>_verdicts.{csv,md}``.  The paper's page goes to ``docs/papers/<paper>.md``
(quick runs: ``R/quick/docs``).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .errors import ConfigError, KernlearnError
from .io import atomic_path
from .study import Study, tally, verdict_table, verdicts

STATUS_MARKER = "status"


@dataclass(frozen=True)
class Layout:
    """Where a (quick) reproduction writes."""

    root: Path
    docs: Path

    @classmethod
    def of(cls, results: Path, quick: bool, docs: Path | None = None) -> "Layout":
        root = Path(results) / "quick" if quick else Path(results)
        return cls(root, Path(docs) if docs is not None else (root / "docs" if quick else Path("docs") / "papers"))

    @property
    def tables(self) -> Path:
        return self.root / "tables"

    @property
    def figures(self) -> Path:
        return self.root / "figures"

    def out(self, study: Study, name: str) -> Path:
        return self.root / study.paper / study.experiments[name].out


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


def run_local(study: Study, layout: Layout, *, quick: bool, jobs: int, echo) -> list[str]:
    """Run (or resume) the experiments here, one after the other; returns the failed cells."""
    from .report import load_records
    from .runner import run_config
    from .solvers.protocol import ConvergenceWarning

    failed = []
    experiments = study.selected(quick)
    for k, e in enumerate(experiments, 1):
        out = layout.out(study, e.name)
        start = time.perf_counter()
        echo(f"[{study.paper}] {e.name} (experiment {k} of {len(experiments)}) ...")
        with environment(e.env), warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)      # counted below, and marked † in every table
            _, bad = run_config(e.config, out, overrides(e, quick), jobs=min(jobs, e.jobs or jobs), per_cell=False)
        failed += [f"{e.name} {cell}" for cell in bad]
        df, _ = load_records([out])
        unconverged = int((df["converged"] == False).sum()) if len(df) else 0  # noqa: E712
        echo(f"[{study.paper}] {e.name}: {len(df)} cell(s) finished"
             + (f", {unconverged} not converged (marked †)" if unconverged else "")
             + f", {time.perf_counter() - start:.1f}s")
    return failed


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
    that runs after all of them succeeded (``--dependency=afterok``).  Returns the job ids, the
    collect job last."""
    from .config import load_cells
    from .runner import check_folder, pack_cells, sbatch_script, task_count

    plans = []
    for e in study.selected(quick):          # check every experiment before submitting any
        cfg, cells = load_cells(e.config, overrides(e, quick))
        out = layout.out(study, e.name).resolve()
        check_folder(out, cfg)
        per_task = pack_cells(len(cells), 1, max_array_size)
        plans.append((e, cfg, len(cells), per_task, out))
    ids = []
    for e, cfg, n, per_task, out in plans:
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
    """The study's tables and figures from the finished cells, and the verdict per paper number
    (written to ``<tables>/<paper>_verdicts``)."""
    from .report import (display, entry_stats, load_records, pivot, pivot_keys, plot_curves, plot_history,
                         plot_paths, summarize, write_tables)

    entries, shown, notes = {}, {}, {}
    for t in study.tables.values():
        roots = [layout.out(study, name) for name in t.sources]
        roots = [r for r in roots if r.is_dir()]
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
        roots = [r for r in (layout.out(study, name) for name in f.sources) if r.is_dir()]
        if not roots or not any(r.rglob("record.json") for r in roots):
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
    v = verdicts(study, entries)
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
    if study.summary:
        out += [study.summary, ""]
    verdict = (f"**Verdict:** {tally(v)} of the paper's numbers (rules in [studies](../studies.md))." if len(v) else
               "**Verdict:** none — the paper's text we work from prints no number to compare with; the tables "
               "below are ours.")
    out += [f"{verdict} "
            f"**Run it:** `kernlearn reproduce {study.paper}` (add `--quick` for a smoke run, "
            f"`--launcher slurm` for a cluster)." + (f" **Paper:** `{study.source}`." if study.source else ""), ""]
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
        mine = v[v["table"] == t.name]
        if len(mine):
            out += [f"The paper's numbers beside ours ({tally(mine)}):", "", verdict_table(mine), ""]
    figures = [f for f in study.figures.values() if (layout.figures / f.name).exists()]
    if figures:
        out += ["## Figures", ""]
        for f in figures:
            out += [f"![{f.title or f.name}]({_rel(layout.figures / f.name, here)})", ""]
    return "\n".join(out).rstrip() + "\n"


def status_table(studies: list[Study], tables: Path, docs: Path, readme_dir: Path) -> str:
    """paper | table/figure | command | numbers reproduced (k of n) | link, from the verdict files."""
    from .study import paper_item

    lines = ["| paper | table / figure | command | reproduced | details |", "| --- | --- | --- | --- | --- |"]
    for study in studies:
        path = Path(tables) / f"{study.paper}_verdicts.csv"
        link = f"[{study.paper}]({_rel(Path(docs) / f'{study.paper}.md', readme_dir)})"
        command = f"`kernlearn reproduce {study.paper}`"
        if not path.is_file():                 # no page yet: link the study itself
            study_link = f"[study]({_rel(study.path, readme_dir)})"
            lines.append(f"| {study.title} | – | {command} | not run yet | {study_link} |")
            continue
        v = pd.read_csv(path)
        if v.empty:
            lines.append(f"| {study.title} | – | {command} | no numbers in the paper's text | {link} |")
            continue
        items = list(dict.fromkeys(paper_item(w) for w in v["where"]))
        for k, item in enumerate(items):
            part = v[[paper_item(w) == item for w in v["where"]]]
            n, ok = len(part), int((part["verdict"] == "reproduced").sum())
            lines.append(f"| {study.title if k == 0 else ''} | {item} | {command if k == 0 else ''} | "
                         f"{ok} of {n} | {link if k == 0 else ''} |")
    return "\n".join(lines)


def reproduce(studies: list[Study], *, results: Path, quick: bool, jobs: int, launcher: str, run: bool,
              docs: Path | None, readme: Path | None, sbatch: dict, max_array_size: int, echo, show) -> list[str]:
    """Check every study, then run (local) or submit (slurm) its experiments; with the local launcher
    (or ``run=False``) build tables, figures, verdicts and pages.  Returns the failed cells."""
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
    failed = []
    for study in studies:
        if run:
            failed += run_local(study, layout, quick=quick, jobs=jobs, echo=echo)
        v = build(study, layout, echo)
        command = f"kernlearn reproduce {study.paper}" + (" --quick" if quick else "")
        with atomic_path(layout.docs / f"{study.paper}.md") as tmp:
            tmp.write_text(page(study, v, layout, command))
        show(f"\n## {study.paper}: {tally(v)}\n\n{verdict_table(v)}\n")
    if fill:
        from .study import find_studies, load_study, study_names

        known = {s.paper for s in studies}
        everyone = studies + [s for s in map(load_study, find_studies("all") if study_names() else [])
                              if s.paper not in known]
        everyone.sort(key=lambda s: s.paper)
        fill_marker(readme, STATUS_MARKER, status_table(everyone, layout.tables, layout.docs, Path(readme).parent))
        echo(f"filled the status table in {readme}")
    return failed
