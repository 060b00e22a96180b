"""The records layer: every finished cell of results folders and record archives, one row each, and
what the recorded grids expect but is not finished (:class:`Completeness`).

Nothing here aggregates, writes or draws: tables (:mod:`.tables`), files (:mod:`.formats`) and
figures (:mod:`.figures`) start from :func:`load_records` and :func:`records_of`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import numpy as np
import pandas as pd

from ..errors import DataError, KernlearnError
from ..factors import FACTORS
from ..inputs import changed_inputs, describe_changes
from ..records import RECORD, cell_state, read_record
from ..results import migrate_folder, read_experiment


#: Deterministic per-cell results besides the metrics; the solver's times are kept apart
#: (``timing.*``) so that tables of the same config are identical, bit for bit.
SUMMARY = ("iterations", "objective")
#: The solver's wall-clock seconds, its CPU seconds, and the cell's peak resident memory in bytes
#: (records made before CPU time or peak memory was recorded have none, and tables of them no such
#: column; for a single-threaded cell CPU time does not grow on a busy machine).
TIMING = ("seconds", "cpu_seconds", "peak_rss_bytes")
#: Marks a paper-table entry (or a figure point) that includes cells whose certificate was not met.
MARK = "†"


def convergence(record: dict) -> str:
    """'converged', 'NOT converged (worst check)' or 'converged n/a', for one record."""
    if record["converged"] is None:
        return "converged n/a"
    if record["converged"]:
        return "converged"
    worst = (record.get("certificate") or {}).get("worst")
    return "NOT converged" + (f" ({worst['check']} {worst['value']:.2g} > {worst['tol']:.2g})" if worst else "")


def _worst(certificate: dict | None) -> dict:
    """The record's worst check as table columns (NaN / None without a certificate)."""
    worst = (certificate or {}).get("worst")
    stopped_by = (certificate or {}).get("stopped_by")
    if not worst:
        return {"cert_check": None, "cert_value": np.nan, "cert_tol": np.nan, "cert_ratio": np.nan,
                "cert_stopped_by": stopped_by}
    ratio = worst["value"] / worst["tol"] if worst["tol"] > 0 else np.inf
    return {"cert_check": worst["check"], "cert_value": worst["value"], "cert_tol": worst["tol"],
            "cert_ratio": ratio if np.isfinite(worst["value"]) else np.inf, "cert_stopped_by": stopped_by}


@dataclass
class Completeness:
    """What ``collect`` found against what the grids of ``experiment.yaml`` expect.

    ``expected`` counts the cells of the recorded grids (cells found outside them are counted as
    found); ``problems`` lists one (cell, state, why) per expected cell that is not in the
    tables: ``missing`` (never run, or interrupted), ``failed`` (``failed.json``), ``unreadable``
    (a record or factors file that does not verify).  ``pending`` holds one row of settings per
    such cell, so tables can show finished / expected per row.
    """

    expected: int = 0
    finished: int = 0
    problems: list = field(default_factory=list)
    pending: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def complete(self) -> bool:
        return not self.problems

    def counts(self) -> dict:
        """Cells per state, in the order missing, failed, unreadable (states with none left out)."""
        states = [state for _, state, _ in self.problems]
        return {state: states.count(state) for state in ("missing", "failed", "unreadable") if state in states}

    def message(self) -> str:
        """One line: how many expected cells the tables lack, by state, and the first of each ('' if none)."""
        if self.complete:
            return ""
        parts = ", ".join(f"{k} {state}" for state, k in self.counts().items())
        first = "; ".join(f"first {state}: {cell}{f' ({why})' if why else ''}"
                          for state in self.counts()
                          for cell, st, why in [next(p for p in self.problems if p[1] == state)])
        return (f"{len(self.problems)} of {self.expected} expected cell(s) are not in the tables ({parts}); "
                f"{first}. Rerun the experiment to finish them (finished cells are skipped).")


def _grid_columns(grid: dict) -> dict:
    """A cell's grid values as table columns (a component spec by its name)."""
    return {key: value.get("name", json.dumps(value)) if isinstance(value, dict) else value
            for key, value in grid.items()}


def expected_cells(root: Path) -> list:
    """The cells the grid recorded in ``root/experiment.yaml`` (or an archive's header) expands into
    ([] when there is none)."""
    from ..archive import Archive
    from ..config import expand

    cfg = Archive.read(root).config if is_archive(root) else read_experiment(root)
    if cfg is None:
        return []
    try:
        return expand(cfg)
    except (KernlearnError, TypeError, ValueError, AttributeError):
        return []


def flat_settings(config: dict, grid_keys, prefix: str = "") -> Iterator[tuple[str, object]]:
    """A cell config's settings as (dotted key, value), without its name, seed, grid and grid keys
    (those are columns already); lists as JSON text."""
    for key, value in config.items():
        dotted = prefix + key
        if (not prefix and key in ("name", "seed", "grid")) or any(dotted == g or dotted.startswith(g + ".")
                                                                   for g in grid_keys):
            continue
        if isinstance(value, dict):
            yield from flat_settings(value, grid_keys, dotted + ".")
        else:
            yield dotted, json.dumps(value) if isinstance(value, list) else value


def _differing_settings(rows: list[dict], settings: list[dict]) -> dict[str, list]:
    """The settings that differ between cells of one experiment name (e.g. two folders of one config
    run with different ``--set``), as columns: without them their rows would be averaged together.
    A column whose values are not all numbers holds their text; an absent setting is ``–``."""
    keys = sorted({k for s in settings for k in s})
    out = {}
    for key in keys:
        values = [s.get(key, "–") for s in settings]
        per_experiment: dict[str, set] = {}
        for row, value in zip(rows, values):
            per_experiment.setdefault(row["experiment"], set()).add(json.dumps(value, sort_keys=True, default=str))
        if any(len(v) > 1 for v in per_experiment.values()):
            numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
            out[key] = values if numeric else [v if isinstance(v, str) else json.dumps(v, default=str) for v in values]
    return out


def is_archive(root: Path) -> bool:
    """Whether ``root`` names a record archive (:mod:`kernlearn_cli.archive`) rather than a results folder."""
    from ..archive import SUFFIX

    return str(root).endswith(SUFFIX)


def records_of(root: Path, command: str = "collect") -> Iterator[tuple[str, Path, dict | ValueError]]:
    """(cell, where, record) for every record of a results folder (``where``: its ``record.json``) or of
    an archive (``where``: the archive); an unreadable ``record.json`` gives the ``ValueError`` instead.
    Results folders whose cells were named before cell ids hashed the validated settings are
    migrated first, once (:func:`~kernlearn_cli.results.migrate_folder`)."""
    from ..archive import Archive

    root = Path(root)
    if is_archive(root):
        if not root.is_file():
            raise KernlearnError(f"{command}: record archive '{root}' not found.")
        for cell, rec in sorted(Archive.read(root).records.items()):
            yield cell, root, rec
        return
    if not root.is_dir():
        raise KernlearnError(f"{command}: '{root}' is not a folder of results.")
    paths = sorted(root.rglob(RECORD))
    if any([migrate_folder(out) for out in sorted({p.parent.parent for p in paths})]):
        paths = sorted(root.rglob(RECORD))
    for rec_path in paths:
        try:
            rec = read_record(rec_path)
            if rec["cell"] != rec_path.parent.name:
                raise ValueError(f"names cell '{rec['cell']}', not its folder")
        except ValueError as exc:
            yield rec_path.parent.name, rec_path, exc
            continue
        yield rec["cell"], rec_path, rec


def histories_of(where: Path, rec: dict) -> dict[str, np.ndarray]:
    """A cell's per-iteration histories: from the archived record, or from the ``factors.h5`` beside
    its ``record.json``."""
    if "history" in rec:
        return {k: np.asarray(v, dtype=np.float64) for k, v in rec["history"].items()}
    import h5py

    with h5py.File(Path(where).parent / FACTORS, "r") as f:
        return {k: np.asarray(v[()], dtype=np.float64) for k, v in f.get("history", {}).items()}


def load_records(roots: list[Path], command: str = "collect") -> tuple[pd.DataFrame, Completeness]:
    """All finished cells under ``roots`` (results folders or record archives) as one row each, and
    what is missing (:class:`Completeness`).

    A cell is in the table when its record reads and has the record's keys; cells of the recorded
    grid (``experiment.yaml``, or the archive's header) without one are reported as missing, failed
    or unreadable, never a traceback.  Metrics that are lists (e.g. ``error_path``) stay in the records, out of the tables.
    Settings that differ between cells of one experiment name outside its grid (folders of one
    config run with different ``--set``) become columns (:func:`_differing_settings`), so their
    cells are never averaged together.
    """
    rows, grid_keys, done = [], set(), Completeness()
    settings = []
    pending = []
    stale: dict[str, list] = {}
    for root in map(Path, roots):
        seen: dict[str, Path] = {}
        for cell_id, where, rec in records_of(root, command):
            if cell_id in seen:       # two copies of one experiment's folder under one root
                raise DataError(f"{command}: cell {cell_id} is under '{root}' twice ('{seen[cell_id]}' and "
                                f"'{where}'); give one of the two folders, so that no cell counts twice.")
            seen[cell_id] = where
            if isinstance(rec, ValueError):
                done.problems.append((cell_id, "unreadable", f"{RECORD}: {rec}"))
                continue
            if changed := changed_inputs(rec):
                stale[cell_id] = changed
            row = {"experiment": rec["experiment"], "cell": rec["cell"], **_grid_columns(rec["grid"])}
            grid_keys.update(rec["grid"])
            row.setdefault("seed", rec["seed"])
            row.update(solver=rec["solver"], dataset=rec["dataset"], constraints=rec["constraints"],
                       n=rec["n"], rank0=rec["rank0"], converged=rec["converged"], **_worst(rec.get("certificate")),
                       **{k: rec.get(k, np.nan) for k in (*SUMMARY, *TIMING)},
                       **{k: v for k, v in rec["metrics"].items() if not isinstance(v, (list, dict))})
            rows.append(row)
            settings.append(dict(flat_settings(rec.get("config") or {}, rec["grid"])))
        expected = expected_cells(root)
        done.expected += len(expected) + len(set(seen) - {c.id for c in expected})
        for cell in expected:
            if cell.id in seen:
                continue
            state, why = ("missing", "") if is_archive(root) else cell_state(root / cell.id)
            state = {"corrupt": "unreadable" if (root / cell.id / RECORD).exists() else "missing"}.get(state, state)
            done.problems.append((cell.id, state, why))
            pending.append({"experiment": cell.config["name"], **_grid_columns(cell.grid_values),
                            "solver": cell.config["solver"].get("name"), "dataset": cell.config["dataset"].get("name")})
    if stale:
        raise DataError(f"{command}: {describe_changes(stale)} The results of those {len(stale)} cell(s) were "
                        f"computed from other data than the files hold now, so they are not tabulated. Run the "
                        f"same `kernlearn run` again to compute them from the files as they are now (it does so "
                        f"for exactly those cells), or restore the files.")
    differing = _differing_settings(rows, settings)
    for key, values in differing.items():
        for row, value in zip(rows, values):
            row[key] = value
    df = pd.DataFrame(rows)
    df.attrs["grid_keys"] = sorted(grid_keys | set(differing))
    done.finished = len(df)
    done.pending = pd.DataFrame(pending)
    return df, done
