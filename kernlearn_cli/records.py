"""A cell's record (``record.json``) and its files on disk: finished, failed, corrupt or missing.

A cell is *finished* when its ``record.json`` and ``factors.h5`` exist and verify
(:func:`cell_state`).  :func:`write_cell` builds both files completely under temporary
names first and renames them into place only then, the record last: a killed run never
leaves a cell that looks finished, a rerun (``--force``) replaces a finished cell only
with a complete new one, and two processes running the same cell each write private
temporary files (the last rename wins; both are complete).  Why the last attempt at a cell
failed is kept in ``failed.json`` (:func:`write_failure`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import h5py
import numpy as np

from .atomic import atomic_path
from .factors import FACTORS


RECORD = "record.json"


#: Why the last attempt at a cell failed (the cell stays unfinished).
FAILED = "failed.json"


#: Keys every record has (``collect`` needs them; a record without them is unreadable).
RECORD_KEYS = ("experiment", "cell", "grid", "seed", "solver", "dataset", "constraints", "n", "rank0",
               "converged", "iterations", "objective", "seconds", "metrics")


#: Beside a factors file written before the evaluators ran (:func:`write_pending`): the solver's
#: result without its factor, so a rerun evaluates only; gone once the record is written.
PENDING = "evaluation_pending.json"


def write_pending(cell_dir: Path, factors: bytes, pending: dict) -> None:
    """Keep what the solver learned as soon as it ends: the factors file (with its certificate), then
    :data:`PENDING`, each atomically; the record comes after the evaluators (:func:`write_cell`)."""
    cell_dir = Path(cell_dir)
    cell_dir.mkdir(parents=True, exist_ok=True)
    (cell_dir / PENDING).unlink(missing_ok=True)
    with atomic_path(cell_dir / FACTORS) as tmp:
        tmp.write_bytes(factors)
    with atomic_path(cell_dir / PENDING) as tmp:
        tmp.write_text(record_text(pending))


def write_cell(cell_dir: Path, factors: bytes | None, record: dict) -> None:
    """Write a finished cell: both files complete under temporary names, then renamed, the record last.

    A finished cell being rerun (``--force``) keeps its files until the new ones are complete;
    an earlier ``failed.json`` goes once the cell has finished.  ``factors`` None: the factors file
    is there already (:func:`write_pending`) and only the record is written.
    """
    cell_dir = Path(cell_dir)
    if factors is None:
        with atomic_path(cell_dir / RECORD) as tmp_r:
            tmp_r.write_text(record_text(record))
        (cell_dir / PENDING).unlink(missing_ok=True)
        (cell_dir / FAILED).unlink(missing_ok=True)
        return
    with atomic_path(cell_dir / FACTORS, commit=False) as tmp_f, \
            atomic_path(cell_dir / RECORD, commit=False) as tmp_r:
        tmp_f.write_bytes(factors)
        tmp_r.write_text(record_text(record))
        os.replace(tmp_f, cell_dir / FACTORS)
        os.replace(tmp_r, cell_dir / RECORD)
    (cell_dir / FAILED).unlink(missing_ok=True)
    (cell_dir / PENDING).unlink(missing_ok=True)


def write_failure(cell_dir: Path, failure: dict) -> None:
    """Record why a cell failed (``failed.json``; the cell stays unfinished and is retried)."""
    with atomic_path(Path(cell_dir) / FAILED) as tmp:
        tmp.write_text(record_text(failure))


def record_text(record: dict) -> str:
    """A record (or a failure) as ``record.json`` holds it."""
    return json.dumps(record, indent=2, sort_keys=False, default=json_default) + "\n"


def json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serializable: {type(obj)}")


def read_record(path: Path) -> dict:
    """A record, or ``ValueError`` saying why it cannot be used (not JSON, not an object, keys missing)."""
    try:
        rec = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"unreadable ({exc.__class__.__name__}: {exc})") from None
    if not isinstance(rec, dict):
        raise ValueError("not a JSON object")
    missing = [k for k in RECORD_KEYS if k not in rec]
    if missing:
        raise ValueError(f"missing key(s) {', '.join(missing)}")
    return rec


def cell_state(cell_dir: Path) -> tuple[str, str]:
    """``("finished", "")`` when the cell's record and factors verify, ``("failed", why)`` after a
    recorded failure, ``("corrupt", why)`` when files are there but do not verify, else
    ``("missing", "")``.

    A record verifies when it reads (:func:`read_record`) and names its own folder; the factors
    file when HDF5 opens it and it holds a float64 ``G``.
    """
    cell_dir = Path(cell_dir)
    rec_path, fac_path = cell_dir / RECORD, cell_dir / FACTORS
    if not rec_path.exists():
        if (cell_dir / FAILED).exists():
            try:
                why = json.loads((cell_dir / FAILED).read_text()).get("error", "")
            except (OSError, ValueError, AttributeError):
                why = ""
            return "failed", why
        if fac_path.exists() and (cell_dir / PENDING).exists():
            return "corrupt", f"evaluation pending: {FACTORS} kept, no {RECORD} (interrupted; a rerun evaluates only)"
        return ("corrupt", f"{FACTORS} without {RECORD} (interrupted)") if fac_path.exists() else ("missing", "")
    try:
        rec = read_record(rec_path)
    except ValueError as exc:
        return "corrupt", f"{RECORD}: {exc}"
    if rec["cell"] != cell_dir.name:
        return "corrupt", f"{RECORD} names cell '{rec['cell']}', not its folder"
    try:
        with h5py.File(fac_path, "r") as f:
            if "G" not in f or f["G"].dtype != np.float64:
                return "corrupt", f"{FACTORS}: no float64 dataset G"
    except (OSError, ValueError) as exc:
        return "corrupt", f"{FACTORS}: {exc}"
    return "finished", ""
