"""A results folder: the config recorded in its ``experiment.yaml``, which makes it one experiment's,
and its finished cells.

``kernlearn run`` claims a folder (:func:`claim_folder`) before it runs a cell and releases it when
a run fails before any cell finished; ``kernlearn slurm`` and ``reproduce`` check it first
(:func:`check_folder`); the records layer (:mod:`kernlearn_cli.report.records`) reads the recorded
grid to know which cells are expected.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from .errors import ConfigError
from .io import RECORD, atomic_path

EXPERIMENT_FILE = "experiment.yaml"


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
