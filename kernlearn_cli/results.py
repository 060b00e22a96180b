"""A results folder: the config recorded in its ``experiment.yaml``, which makes it one experiment's,
and its finished cells.

``kernlearn run`` claims a folder (:func:`claim_folder`) before it runs a cell and releases it when
a run fails before any cell finished; ``kernlearn slurm`` and ``reproduce`` check it first
(:func:`check_folder`); the records layer (:mod:`kernlearn_cli.report.records`) reads the recorded
grid to know which cells are expected.

A folder whose cells were named before cell ids hashed the validated settings (no
:data:`FORMAT_FILE`) is migrated once, when it is first read or run into (:func:`migrate_folder`).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import yaml

from .archive import FORMAT, current_id, differing
from .atomic import atomic_path
from .errors import ConfigError, DataError
from .records import RECORD, read_record, record_text

EXPERIMENT_FILE = "experiment.yaml"
#: Written into a results folder whose cells are named by their current ids (:func:`migrate_folder`):
#: its text is the record archives' :data:`~kernlearn_cli.archive.FORMAT`.
FORMAT_FILE = ".kernlearn-format"


def finished_cells(out: Path) -> list[Path]:
    """Cell folders under ``out`` that hold a record (whether or not it verifies)."""
    return sorted(p.parent for p in Path(out).glob(f"*/{RECORD}"))


def read_experiment(out: Path) -> dict | None:
    """The config recorded in ``out/experiment.yaml`` (None when absent or unreadable)."""
    path = Path(out) / EXPERIMENT_FILE
    try:
        cfg = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        return None
    return cfg if isinstance(cfg, dict) else None


def check_folder(out: Path, cfg: dict) -> bool:
    """Whether ``out`` may take this config; True when ``experiment.yaml`` must be (re)written.

    The identity is the config without its grid (a grid may grow, e.g. more seeds, and its
    values are part of every cell id anyway).  A folder recorded by a different config is
    refused, unless none of its cells finished (an earlier run failed before any did).
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out '{out}' is a file; the results folder must be a directory (or a new path).")
    theirs = read_experiment(out)
    if theirs is None:
        return True
    strip = lambda c: json.dumps({k: v for k, v in c.items() if k != "grid"}, sort_keys=True, default=str)  # noqa: E731
    if strip(theirs) != strip(cfg):
        if finished_cells(out):
            diff = sorted(k for k in set(theirs) | set(cfg) if k != "grid" and theirs.get(k) != cfg.get(k))
            raise ConfigError(f"results folder '{out}' was written by a different config (name "
                              f"'{theirs.get('name')}'; differs in: {', '.join(diff)}). Use another --out, "
                              f"or delete the folder to start over.")
        return True
    return theirs.get("grid") != cfg.get("grid")


def claim_folder(out: Path, cfg: dict) -> bool:
    """Write ``out/experiment.yaml`` when :func:`check_folder` asks for it; True if this call wrote it."""
    if not check_folder(out, cfg):
        return False
    with atomic_path(Path(out) / EXPERIMENT_FILE) as tmp:
        tmp.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return True


def release_folder(out: Path) -> None:
    """Undo a claim after a run that failed before any cell finished: remove ``experiment.yaml``,
    and the folder itself when nothing else is in it."""
    out = Path(out)
    if finished_cells(out):
        return
    (out / EXPERIMENT_FILE).unlink(missing_ok=True)
    try:
        out.rmdir()
    except OSError:
        pass


def migrate_folder(out: Path) -> bool:
    """Name the finished cells of a results folder written before cell ids hashed the validated
    settings (``1`` and ``1.0`` one cell) by the ids they have now (:func:`~kernlearn_cli.archive.current_id`),
    once: each record rewritten atomically, then its folder renamed; a cell found under both ids
    keeps the folder of its current id when both hold the same result (the other is removed),
    and is refused otherwise.  Then :data:`FORMAT_FILE` marks the folder done; one line on stderr
    names it and the counts.  A folder with the mark, or none at all, costs one ``stat``.  True when
    a cell folder was renamed or removed.

    Raises
    ------
    DataError
        A cell whose two folders hold different results (naming both), or a folder that cannot be
        changed; the cells migrated before it stay migrated, and the next read continues.
    """
    out = Path(out)
    mark = out / FORMAT_FILE
    if mark.is_file() or not out.is_dir():
        return False
    moved = removed = 0
    try:
        for cell_dir in finished_cells(out):
            try:
                rec = read_record(cell_dir / RECORD)
            except ValueError:
                continue                                  # the reader reports it
            new = current_id(rec)
            if new == cell_dir.name or rec["cell"] not in (cell_dir.name, new):
                continue                                  # current, or not this folder's record: reported
            target = out / new
            if (target / RECORD).is_file():
                keys = differing(read_record(target / RECORD), {**rec, "cell": new})
                if keys:
                    raise DataError(f"results folder '{out}': cell folders '{cell_dir.name}' and '{new}' are one "
                                    f"cell (its id before and since ids hash the validated settings) with different "
                                    f"results (in: {', '.join(keys[:5])}). Delete the one to drop, then read or run "
                                    f"the folder again.")
                shutil.rmtree(cell_dir)
                removed += 1
                continue
            with atomic_path(cell_dir / RECORD) as tmp:
                tmp.write_text(record_text({**rec, "cell": new}))
            shutil.rmtree(target, ignore_errors=True)    # an unfinished attempt under the current id
            os.replace(cell_dir, target)
            moved += 1
        with atomic_path(mark) as tmp:
            tmp.write_text(f"{FORMAT}\n")
    except (OSError, ValueError) as exc:
        raise DataError(f"results folder '{out}': its cells, named before cell ids hashed the validated settings, "
                        f"cannot be renamed ({exc}). Make the folder writable, then read or run it again.") from None
    if moved or removed:
        print(f"results folder '{out}': {moved} cell folder(s) renamed to their current ids and {removed} duplicate(s) "
              f"of a current cell removed (once: cell ids hash the validated settings, so 1 and 1.0 are one cell).",
              file=sys.stderr, flush=True)
    return bool(moved or removed)
