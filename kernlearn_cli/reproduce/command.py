"""``kernlearn reproduce``: check every study, run or submit its experiments, then build its tables,
figures, verdicts and page, and fill the status page's table and the README's summary line."""

from __future__ import annotations

import time
from pathlib import Path

from ..archive import Archive
from ..atomic import atomic_path
from ..errors import ConfigError
from ..study import Study
from ..verdicts import tally, verdict_table
from .build import build
from .launch import run_local, submit_slurm
from .layout import Layout, merge, open_archive
from .pages import (RULES_MARKER, RULES_PAGE, STATUS_MARKER, STATUS_PAGE, check_summary, page, report_page, rules_table,
                    status_summary, status_table)
from .plan import check, other_code_text, plan_rows


def reproduce(studies: list[Study], *, results: Path, quick: bool, jobs: int, launcher: str, run: bool,
              docs: Path | None, readme: Path | None, sbatch: dict, max_array_size: int, echo, show,
              deadline: float | None = None, rerun: tuple = (), merge_from: tuple = ()) -> list[str]:
    """Check every study, then run (local) or submit (slurm) its experiments; with the local launcher
    (or ``run=False``) build tables, figures, verdicts, pages and the HTML report
    (:meth:`Layout.report`) from the archives.  ``deadline``: no
    cell starts after it.  A study whose archive is incomplete after a budgeted run or with ``run``
    off is not built (a piece of a long study never replaces its tables with partial ones; a
    study's first full run builds them, with its failed cells missing); ``rerun``: experiments recomputed from
    scratch; ``merge_from``: archives or results roots whose cells are merged first (:func:`merge`).
    A study without any archived cell is not built (its committed tables and page stay).  Returns
    the failed cells."""
    from ..report.html import write_page
    from ..report.markers import check_marker, fill_marker

    if launcher not in ("local", "slurm"):
        raise ConfigError(f"reproduce --launcher '{launcher}': expected local or slurm.")
    if jobs < 1:
        raise ConfigError(f"reproduce --jobs must be >= 1, got {jobs}.")
    layout = Layout.of(results, quick, docs)
    for study in studies:
        check(study, quick)
    fill = readme is not None and not quick and Path(readme).is_file()
    status_page = Path(readme).parent / STATUS_PAGE if fill else None
    if fill:
        check_marker(readme, STATUS_MARKER, "reproduce --readme")
        check_marker(status_page, STATUS_MARKER, "reproduce --readme's status page")
        everyone = _every_study(studies)
        status_table(everyone, layout.tables, layout.docs, status_page.parent)   # an old verdict file: refused now
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
            if any(r["other_code"] or r["no_code"] for r in rows):
                echo(f"[{study.paper}] {other_code_text(study, rows).strip()}")
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
        for problem in ([] if quick else check_summary(study, v)):      # a quick run's verdicts say little
            echo(f"warning: {problem}")
        command = f"kernlearn reproduce {study.paper}" + (" --quick" if quick else "")
        with atomic_path(layout.docs / f"{study.paper}.md") as tmp:
            tmp.write_text(page(study, v, layout, command))
        echo(f"[{study.paper}] report: {write_page(report_page(study, v, layout, command), layout.report(study))}")
        show(f"\n## {study.paper}: {tally(v, len(study.untested))}\n\n{verdict_table(v)}\n")
    if fill:
        fill_marker(status_page, STATUS_MARKER, status_table(everyone, layout.tables, layout.docs, status_page.parent))
        fill_marker(readme, STATUS_MARKER, status_summary(everyone, layout.tables, STATUS_PAGE.as_posix()))
        rules_page = Path(readme).parent / RULES_PAGE
        if rules_page.is_file():
            fill_marker(rules_page, RULES_MARKER, rules_table(everyone), "reproduce --readme's studies page")
        echo(f"filled the status table in {status_page} and its summary in {readme}")
    return failed


def _every_study(studies: list[Study]) -> list[Study]:
    """``studies`` and every other study found from the working directory, by paper: the status table's rows."""
    from ..study.find import find_studies, study_names
    from ..study.reader import load_study

    known = {s.paper for s in studies}
    everyone = studies + [s for s in map(load_study, find_studies("all") if study_names() else [])
                          if s.paper not in known]
    return sorted(everyone, key=lambda s: s.paper)
