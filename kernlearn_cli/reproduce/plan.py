"""Checking a study (``reproduce --check``) and pricing what is left of it (``reproduce --plan``)."""

from __future__ import annotations

import json

from ..archive import SUFFIX, Archive
from ..errors import ConfigError, KernlearnError
from ..study import Study
from .layout import Layout, expected_config, overrides


def check(study: Study, quick: bool) -> int:
    """Expand every experiment's config with its overrides (no data is read); returns the cell count."""
    from ..config import expand, load

    cells = 0
    for e in study.selected(quick):
        try:
            cells += len(expand(load(e.config, overrides(e, quick))))
        except KernlearnError as exc:
            raise ConfigError(f"study '{study.path}', experiment '{e.name}': {exc}") from None
    return cells


def statements_text(study: Study) -> str:
    """The paper's statements counted as its page and the status table (docs/status.md) count them: those
    the study judges by a rule, those it shows as not comparable, those it cannot test, and their
    total (statements shown as context, with no verdict, apart)."""
    kinds = [s.kind for s in study.statements]
    total = len(kinds) - kinds.count("context") + len(study.untested)
    return (f"{kinds.count('judged')} judged + {kinds.count('not comparable')} not comparable + "
            f"{len(study.untested)} untested = {total} statement(s) of the paper"
            + (f", and {kinds.count('context')} shown as context" if "context" in kinds else ""))


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
    from ..config import expand

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
                     "per_cell": seconds / len(left) if known and left else mean, "basis": basis,
                     **other_code(archive.records, cells)})
    return rows


def other_code(records: dict, cells: dict) -> dict:
    """Of the archived ``records`` of ``cells`` (id -> Cell): how many name no code (archived before
    kernlearn recorded it, ``no_code``) and how many other code computed (``other_code``: a
    component's digest differs from the code's now, :func:`~kernlearn_cli.codehash.changed_code`)."""
    from ..codehash import changed_code
    from ..config import bind_cell

    named = [(r, cells[c]) for c, r in records.items() if c in cells and (r.get("provenance") or {}).get("code")]
    unnamed = sum(1 for c in records if c in cells) - len(named)
    return {"no_code": unnamed, "other_code": sum(bool(changed_code(r, bind_cell(cell, "study"))) for r, cell in named)}


def other_code_text(study: Study, rows: list[dict]) -> str:
    """One line: how many archived cells were computed by other code than runs now, or name none."""
    archived, other, unnamed = (sum(r[k] for r in rows) for k in ("archived", "other_code", "no_code"))
    if not other and not unnamed:
        return f"  code: every one of the {archived} archived cell(s) was computed by the code that runs now"
    return (f"  code: {other + unnamed} of the {archived} archived cell(s) are not known to be the current code's: "
            f"{other} computed by other code, {unnamed} archived before kernlearn recorded its code "
            f"(`kernlearn reproduce {study.paper} --verify N` reruns N of them and compares their bits)")


def plan_text(study: Study, rows: list[dict], jobs: int) -> str:
    """``--plan``'s table: one line per experiment and the total."""
    from ..progress import clock

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
    lines.append(other_code_text(study, rows))
    return "\n".join(lines)
