"""Where a (quick) reproduction writes (:class:`Layout`), and its record archives: opened with the
finished cells of the results folders added, or merged from other machines."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..archive import SUFFIX, Archive
from ..records import RECORD, cell_state
from ..study import Study


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

    def report(self, study: Study) -> Path:
        """The study's HTML report, built from its archives (not committed: ``results/`` is ignored)."""
        return self.root / f"{study.paper}_report.html"

    def archive(self, study: Study, name: str) -> Path:
        return self.records / study.paper / f"{name}{SUFFIX}"


def overrides(experiment, quick: bool) -> list[str]:
    """The ``--set`` values of an experiment's (quick) run."""
    return list(experiment.set) + (list(experiment.quick) if quick else [])


def history_sources(study: Study) -> set[str]:
    """The experiments whose per-iteration histories a figure of the study draws (archived with them)."""
    return {name for f in study.figures.values() if f.kind == "history" for name in f.sources}


def expected_config(e, quick: bool) -> dict:
    """An experiment's config as run (overrides applied): the archive's header."""
    from ..config import load

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
    from ..report.records import histories_of

    if not history:
        return record
    return {**record, "history": archived_history(histories_of(cell_dir / RECORD, record))}


def add_folder(archive: Archive, folder: Path, expected: set, history: bool) -> int:
    """Add the finished cells of a results folder that the archive lacks (and check the others
    agree); returns how many were added."""
    from ..report.records import records_of

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
    from ..config import expand

    cfg = expected_config(e, quick)
    ids = {c.id for c in expand(cfg)}
    path = layout.archive(study, e.name)
    archive = Archive(path, e.name) if fresh else Archive.read(path, e.name)
    archive.config = cfg
    archive.records = {c: r for c, r in archive.records.items() if c in ids}   # cells the study no longer has
    if not fresh:
        add_folder(archive, layout.out(study, e.name), ids, e.name in history_sources(study))
    return archive


def merge(study: Study, layout: Layout, sources: list[Path], quick: bool, echo) -> None:
    """Add the cells of other machines to the study's archives, by cell id: ``sources`` are archive
    files (``<experiment>.jsonl.gz``), results roots holding ``records/<paper>/`` archives, or results
    roots holding ``<paper>/<out>/`` folders.  A cell whose records differ (but for provenance and
    timings) is an error naming it."""
    from ..config import expand

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
