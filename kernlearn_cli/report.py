"""Per-cell records -> pandas tables (CSV, Markdown, LaTeX) and figures.

``summarize`` gives one row per setting (every varying value but the seed) with the
mean and std of each metric over seeds; ``pivot`` lays one metric out like a paper's
table (rows e.g. constraint counts or datasets, columns e.g. methods).

Every table says how far its numbers are certified: the long table has, per row, the
converged cells out of those where convergence applies and the worst certificate check
(the one furthest from its tolerance); a paper table marks with † every entry that
includes a cell that did not converge and names them in a note below it; a figure rings
such points.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import numpy as np
import pandas as pd

from .errors import ConfigError, DataError, KernlearnError
from .io import FACTORS, RECORD, atomic_path, cell_state, changed_inputs, describe_changes, read_record
from .types import CAPPED

#: Deterministic per-cell results besides the metrics; the solver's times are kept apart
#: (``timing.*``) so that tables of the same config are identical, bit for bit.
SUMMARY = ("iterations", "objective")
#: The solver's wall-clock seconds, and its CPU seconds (records made before CPU time was
#: recorded have none; for a single-threaded cell CPU time does not grow on a busy machine).
TIMING = ("seconds", "cpu_seconds")
_NOT_SETTINGS = {"cell", "seed", "converged", "constraints", "n", "rank0", *TIMING, *SUMMARY,
                 "cert_check", "cert_value", "cert_tol", "cert_ratio", "cert_stopped_by"}
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


def _expected_cells(root: Path) -> list:
    """The cells the grid recorded in ``root/experiment.yaml`` (or an archive's header) expands into
    ([] when there is none)."""
    from .archive import Archive
    from .config import expand
    from .runner import read_experiment

    cfg = Archive.read(root).config if is_archive(root) else read_experiment(root)
    if cfg is None:
        return []
    try:
        return expand(cfg)
    except (KernlearnError, TypeError, ValueError, AttributeError):
        return []


def _flat_settings(config: dict, grid_keys, prefix: str = "") -> Iterator[tuple[str, object]]:
    """A cell config's settings as (dotted key, value), without its name, seed, grid and grid keys
    (those are columns already); lists as JSON text."""
    for key, value in config.items():
        dotted = prefix + key
        if (not prefix and key in ("name", "seed", "grid")) or any(dotted == g or dotted.startswith(g + ".")
                                                                   for g in grid_keys):
            continue
        if isinstance(value, dict):
            yield from _flat_settings(value, grid_keys, dotted + ".")
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


def show_cell(where: Path, cell: str | None = None) -> str:
    """``kernlearn show``: one cell for a person, or the numbered cells of a results folder or archive.

    ``where`` is a cell folder (its ``record.json``, else its ``failed.json``), a record file, or a
    results folder or record archive; ``cell`` names one of the latter's cells by id or by the number
    ``kernlearn plan`` and ``run --array-index`` give it.  Without ``cell`` a results folder or archive
    lists its cells: number, id, state (finished, failed, missing) and grid values.

    Raises
    ------
    KernlearnError
        Nothing readable at ``where``, or no such cell in it (naming what was looked for).
    """
    from .io import FAILED

    where = Path(where)
    if not where.exists():
        raise KernlearnError(f"show: '{where}' not found. Give a cell folder (it holds record.json or "
                             f"failed.json), or a results folder or record archive and the cell's id or number.")
    if cell is None and where.is_dir() and not (where / RECORD).exists() and (where / FAILED).exists():
        return describe_failure(where / FAILED)
    if cell is None and where.name == FAILED:
        return describe_failure(where)
    if cell is None and not is_archive(where):
        if where.is_dir() and not (where / RECORD).exists():
            return list_cells(where)
        path = where / RECORD if where.is_dir() else where
        try:
            return describe_record(read_record(path))
        except ValueError as exc:
            raise KernlearnError(f"show: '{path}' is not a readable cell record ({exc}). Give a cell folder "
                                 f"(it holds record.json or failed.json), or a results folder or record archive "
                                 f"and the cell's id or number.") from None
    if cell is None:
        return list_cells(where)
    cell_id = _cell_id(where, cell)
    found = [rec for c, _, rec in records_of(where, "show") if c == cell_id and isinstance(rec, dict)]
    if found:
        return describe_record(found[0])
    if not is_archive(where) and (where / cell_id / FAILED).is_file():
        return describe_failure(where / cell_id / FAILED)
    state = "" if cell_id == cell else f" (cell {cell} is '{cell_id}', not finished)"
    raise KernlearnError(f"show: no cell '{cell}' in '{where}'{state}. `kernlearn show {where}` lists its cells.")


def _cell_id(where: Path, cell: str) -> str:
    """The id of cell ``cell`` of a results folder or archive: ``cell`` itself, or the id of the cell
    numbered ``cell`` in the recorded grid."""
    if not cell.isdigit():
        return cell
    cells = _expected_cells(where)
    if int(cell) >= len(cells):
        raise KernlearnError(f"show: '{where}' has {len(cells)} cell(s) in its recorded grid, numbered 0 to "
                             f"{len(cells) - 1}; there is no cell {cell}. `kernlearn show {where}` lists them.")
    return cells[int(cell)].id


def list_cells(where: Path) -> str:
    """The cells of a results folder or archive, one line each: number, id, state, grid values."""
    where = Path(where)
    records = {c: rec for c, _, rec in records_of(where, "show")}
    expected = _expected_cells(where)
    if not expected and not records:
        raise KernlearnError(f"show: '{where}' holds no cell: give a cell folder (it holds record.json or "
                             f"failed.json), a results folder or a record archive.")
    lines, states = [], {}
    for c in expected:
        if is_archive(where):
            state = "finished" if c.id in records else "missing"
        else:
            state = cell_state(where / c.id)[0]
        states[state] = states.get(state, 0) + 1
        values = ", ".join(f"{k}={v}" for k, v in c.grid_values.items())
        lines.append(f"{c.index:4d}  {c.id}  {state:<8}  {values}")
    known = {c.id for c in expected}
    lines += [f"   -  {c}  {'finished' if isinstance(r, dict) else 'unreadable'}  (not in the recorded grid)"
              for c, r in records.items() if c not in known]
    tally = ", ".join(f"{k} {state}" for state, k in states.items())
    return "\n".join(lines + [f"{len(lines)} cell(s){': ' + tally if tally else ''}; `kernlearn show {where} N` "
                                f"shows cell N"])


def _number(x) -> str:
    return f"{x:.4g}" if isinstance(x, (int, float)) and not isinstance(x, bool) else str(x)


def _certificate_lines(certificate: dict | None) -> list[str]:
    """A certificate's rule, each check (value, tolerance, met or not) and its figures."""
    if not certificate:
        return ["certificate (none recorded)"]
    lines = [f"rule: {certificate.get('rule', '?')}"]
    for name, c in (certificate.get("checks") or {}).items():
        lines.append(f"{name} {_number(c['value'])} {'<=' if c['met'] else '>'} tol {_number(c['tol'])}: "
                     f"{'met' if c['met'] else 'NOT met'}")
    figures = certificate.get("figures") or {}
    if figures:
        lines.append("figures: " + ", ".join(f"{k} {_number(v)}" for k, v in figures.items()))
    return [f"{'certificate' if k == 0 else '':<12}{line}" for k, line in enumerate(lines)]


def _solver_line(config: dict | None) -> list[str]:
    """The cell's solver settings as its config gives them (the others are at their defaults)."""
    spec = (config or {}).get("solver")
    if not isinstance(spec, dict):
        return []
    given = ", ".join(f"{k}={json.dumps(v, default=str)}" for k, v in spec.items() if k != "name")
    return [f"solver      {spec.get('name')}: {given or 'no setting given'}; the others at their defaults "
            f"(`kernlearn list solvers {spec.get('name')}`)"]


def describe_failure(path: Path) -> str:
    """A failed cell's ``failed.json`` for a person: what failed and why, and its solver settings."""
    try:
        failure = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise KernlearnError(f"show: '{path}' is not readable ({exc}).") from None
    folder = Path(path).parent
    cells = [c for c in _expected_cells(folder.parent) if c.id == failure.get("cell", folder.name)]
    lines = [f"cell        {failure.get('cell', folder.name)} (number {failure.get('index', '?')}, seed "
             f"{failure.get('seed', '?')})",
             f"state       FAILED ({failure.get('kind', '?')}): not finished; a rerun of the experiment tries it "
             f"again",
             f"error       {failure.get('error', '?')}"]
    if cells:
        lines.insert(1, f"grid        {json.dumps(cells[0].grid_values, default=str)}")
        lines += _solver_line(cells[0].config)
    if failure.get("certificate"):
        lines += _certificate_lines(failure["certificate"])
    return "\n".join(lines + [f"file        {path}"])


def describe_record(rec: dict) -> str:
    """A cell's record for a person: what ran, its solver settings, result and certificate (each
    check), and its provenance."""
    lines = [f"cell        {rec['cell']} (experiment {rec['experiment']}, seed {rec['seed']})",
             f"grid        {json.dumps(rec.get('grid') or {}, default=str)}",
             f"components  dataset {rec['dataset']} (n = {rec['n']}), kernel {rec.get('kernel')} (rank "
             f"{rec['rank0']}), constraints {rec.get('constraints_generator')} ({rec['constraints']}), "
             f"solver {rec['solver']}",
             *_solver_line(rec.get("config")),
             f"result      objective {rec['objective']:.10g}, {rec['iterations']} iteration(s), {convergence(rec)}"
             + (f", stopped by {(rec.get('certificate') or {}).get('stopped_by')}" if rec.get("certificate") else ""),
             *_certificate_lines(rec.get("certificate")),
             f"time        {rec['seconds']:.3f} s solver wall" + (f", {rec['cpu_seconds']:.3f} s solver CPU"
                                                              if "cpu_seconds" in rec else "")]
    scalars = {k: v for k, v in (rec.get("metrics") or {}).items() if isinstance(v, (int, float))}
    if scalars:
        lines.append("metrics     " + ", ".join(f"{k} {v:.6g}" for k, v in scalars.items()))
    prov = rec.get("provenance") or {}
    if not prov:
        lines.append("provenance  (none: a record made before kernlearn kept it)")
    for key, value in prov.items():
        if key == "versions":
            value = ", ".join(f"{k} {v}" for k, v in value.items())
        elif key == "blas":
            value = "; ".join(f"{b.get('internal_api')} {b.get('version')} ({b.get('architecture')}, "
                              f"{b.get('threading_layer')}, {b.get('library')})" for b in value)
        lines.append(f"{'provenance' if key == next(iter(prov)) else '':<12}{key}: {value}")
    return "\n".join(lines)


def is_archive(root: Path) -> bool:
    """Whether ``root`` names a record archive (:mod:`kernlearn_cli.archive`) rather than a results folder."""
    from .archive import SUFFIX

    return str(root).endswith(SUFFIX)


def records_of(root: Path, command: str = "collect") -> Iterator[tuple[str, Path, dict | ValueError]]:
    """(cell, where, record) for every record of a results folder (``where``: its ``record.json``) or of
    an archive (``where``: the archive); an unreadable ``record.json`` gives the ``ValueError`` instead.
    A record is yielded under the id its cell has now (:func:`~kernlearn_cli.archive.rekeyed`), which is
    its folder's name unless the folder was written under an older id."""
    from .archive import Archive, rekeyed

    root = Path(root)
    if is_archive(root):
        if not root.is_file():
            raise KernlearnError(f"{command}: record archive '{root}' not found.")
        for cell, rec in sorted(Archive.read(root).records.items()):
            yield cell, root, rec
        return
    if not root.is_dir():
        raise KernlearnError(f"{command}: '{root}' is not a folder of results.")
    for rec_path in sorted(root.rglob(RECORD)):
        try:
            rec = read_record(rec_path)
            if rec["cell"] != rec_path.parent.name:
                raise ValueError(f"names cell '{rec['cell']}', not its folder")
        except ValueError as exc:
            yield rec_path.parent.name, rec_path, exc
            continue
        rec = rekeyed(rec)
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
        seen = set()
        for cell_id, _, rec in records_of(root, command):
            if cell_id in seen:       # one cell in two folders, written when `1` and `1.0` were two ids
                continue
            seen.add(cell_id)
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
            settings.append(dict(_flat_settings(rec.get("config") or {}, rec["grid"])))
        expected = _expected_cells(root)
        done.expected += len(expected) + len(seen - {c.id for c in expected})
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


def _expected(df: pd.DataFrame, keys: list[str], pending: pd.DataFrame) -> pd.Series | None:
    """Finished + pending cells per setting ``keys`` (None when nothing is pending)."""
    if pending is None or pending.empty:
        return None
    pend = pending.reindex(columns=keys)
    both = pd.concat([df[keys], pend], ignore_index=True)
    return both.groupby(keys, sort=True, dropna=False).size()


def metric_columns(df: pd.DataFrame) -> list[str]:
    """Numeric results; grid settings (e.g. ``solver.gamma: [1.0, 10.0]``) are never metrics."""
    grid = set(df.attrs.get("grid_keys", ()))
    return [c for c in df.columns if c not in _NOT_SETTINGS and c not in grid and pd.api.types.is_float_dtype(df[c])
            and not c.endswith("_std")]


def setting_columns(df: pd.DataFrame) -> list[str]:
    """Columns that distinguish settings: everything that varies, except seeds and results."""
    metrics = set(metric_columns(df))
    keys = [c for c in df.columns if c not in _NOT_SETTINGS and c not in metrics and not c.endswith("_std")]
    return [k for k in keys if df[k].nunique(dropna=False) > 1] or ["experiment"]


def summarize(df: pd.DataFrame, timing: bool = False, pending: pd.DataFrame | None = None) -> pd.DataFrame:
    """Group by every varying setting except the seed; mean and std of the numeric results
    (of the solver's ``seconds`` and ``cpu_seconds`` alone with ``timing``).  With ``pending`` (the settings of
    expected cells that are not finished, :class:`Completeness`) a column ``expected`` counts the
    cells each row should have, and rows with no finished cell appear too."""
    keys = setting_columns(df if pending is None or pending.empty else pd.concat([df, pending], ignore_index=True))
    keys = [k for k in keys if k in df.columns] or ["experiment"]
    values = [t for t in TIMING if df[t].notna().any()] if timing else metric_columns(df) + list(SUMMARY)
    g = df.groupby(keys, sort=True, dropna=False)
    out = g[values].agg(["mean", "std"])
    out.columns = [f"{a}_{b}" for a, b in out.columns]
    if not timing:
        out["iterations_min"] = g["iterations"].min()
        out["iterations_max"] = g["iterations"].max()
        applicable = df["converged"].notna()
        out["converged"] = (df["converged"] == True).groupby([df[k] for k in keys], dropna=False).sum()  # noqa: E712
        out["applicable"] = applicable.groupby([df[k] for k in keys], dropna=False).sum()
        worst = df.loc[df["cert_ratio"].notna()].sort_values("cert_ratio", kind="stable") \
            .groupby(keys, dropna=False).tail(1).set_index(keys)
        for col in ("cert_check", "cert_value", "cert_tol"):
            out[f"worst_{col[5:]}"] = worst[col].reindex(out.index)
    out["seeds"] = g.size()
    expected = _expected(df, keys, pending)
    if expected is not None:
        out = out.reindex(expected.index)
        for col in ("seeds", "converged", "applicable"):
            if col in out:
                out[col] = out[col].fillna(0).astype(int)
        out["expected"] = expected
    return out.reset_index()


def _pm(mean: float, std: float, digits: int) -> str:
    if not np.isfinite(mean):
        return "–"
    return f"{mean:.{digits}f} ± {0.0 if not np.isfinite(std) else std:.{digits}f}"


def display(summary: pd.DataFrame) -> pd.DataFrame:
    """'mean ± std' strings, one column per metric, plus the sweep range, seeds, the converged
    cells (of those where convergence applies) and the worst certificate check."""
    shown = pd.DataFrame()
    extra = ("seeds", "expected", "converged", "applicable", "worst_check", "worst_value", "worst_tol")
    for c in summary.columns:
        if not c.endswith(("_mean", "_std", "_min", "_max")) and c not in extra:
            shown[c] = summary[c]
    for m in (c[:-5] for c in summary.columns if c.endswith("_mean")):
        digits = 1 if m == "iterations" else 4
        shown[m] = [_pm(a, b, digits) for a, b in zip(summary[f"{m}_mean"], summary[f"{m}_std"])]
    if "iterations_min" in summary:
        shown["iterations range"] = [f"{a:.0f}–{b:.0f}" if np.isfinite(a) else "–"
                                     for a, b in zip(summary["iterations_min"], summary["iterations_max"])]
        shown["converged"] = [(f"{int(k)}/{int(m)}" + (f" {MARK}" if k < m else "")) if m else "n/a"
                              for k, m in zip(summary["converged"], summary["applicable"])]
        shown["certificate (worst)"] = [
            "–" if not isinstance(c, str) else f"{c} {v:.3g} {'≤' if v <= t else '>'} {t:.2g}"
            for c, v, t in zip(summary["worst_check"], summary["worst_value"], summary["worst_tol"])]
    shown["seeds"] = summary["seeds"] if "expected" not in summary else \
        [f"{k}/{m}" for k, m in zip(summary["seeds"], summary["expected"])]
    return shown


def pivot_keys(df: pd.DataFrame, metric: str, rows: str | None = None, cols: str | None = None,
               agg: str = "mean") -> tuple[str, str]:
    """The row and column keys of a paper table of ``metric`` (defaults as in :func:`pivot`), checked:
    each entry must hold one setting (:func:`pooled_settings`), as each row of :func:`summarize` does."""
    if metric not in df.columns:
        valid = metric_columns(df) + list(SUMMARY) + list(TIMING)
        raise ConfigError(f"collect: no metric '{metric}'; the records have {', '.join(valid)}.")
    settings = setting_columns(df)
    cols = cols or ("solver" if df["solver"].nunique() > 1 else "experiment")
    rows = rows or next((k for k in settings if k != cols and k not in ("experiment", "dataset", "solver")),
                        next((k for k in settings if k != cols), "dataset"))
    for key in (rows, cols):
        if key not in df.columns:
            raise ConfigError(f"collect: no column '{key}'; valid: {', '.join(c for c in df.columns if c != 'cell')}.")
    if agg not in ("mean", "min", "max"):
        raise ConfigError(f"collect: --agg must be mean, min or max, got '{agg}'.")
    pooled = pooled_settings(df, [rows, cols])
    if pooled:
        entry, differ = next(iter(pooled.items()))
        where = ", ".join(f"{k} = {v}" for k, v in zip((rows, cols), entry))
        values = "; ".join(f"{key}: " + " or ".join(f"'{v}' ({k} cell{'s' * (k > 1)})" for v, k in counts.items())
                           for key, counts in differ.items())
        split = " or ".join(f"--rows {k} or --cols {k}" for k in differ)
        raise ConfigError(f"collect -m {metric} --rows {rows} --cols {cols}: {len(pooled)} entr"
                          f"{'ies' if len(pooled) > 1 else 'y'} would average cells whose settings differ apart "
                          f"from the seed (the long table, collect without -m, keeps them apart); the first, "
                          f"{where}, mixes {values}. Lay the table out by that setting ({split}), or collect "
                          f"the folders of each setting on their own.")
    return rows, cols


def pooled_settings(df: pd.DataFrame, keys: list[str]) -> dict[tuple, dict[str, dict]]:
    """The groups of ``keys`` whose cells differ in a setting besides the seed.

    A group is one setting only when its cells agree on every column that tells settings apart
    (:func:`setting_columns`, the rule by which :func:`summarize` groups); a table entry over such
    a group would average different experiments.

    Parameters
    ----------
    df : DataFrame
        The cells (:func:`load_records`).
    keys : list of str
        Columns that define a group (e.g. a paper table's row and column keys).

    Returns
    -------
    dict
        Each mixed group (its values of ``keys``, in sorted order) to the settings that differ in it,
        each to its values (as text) and their cell counts; empty when no group mixes settings.
    """
    others = [k for k in setting_columns(df) if k not in keys]
    mixed = {}
    for entry, part in df.groupby(keys, dropna=False, sort=True):
        differ = {k: part[k].astype(str).value_counts(sort=False).sort_index().to_dict()
                  for k in others if part[k].nunique(dropna=False) > 1}
        if differ:
            mixed[entry if isinstance(entry, tuple) else (entry,)] = differ
    return mixed


def entry_stats(df: pd.DataFrame, metric: str, rows: str, cols: str, agg: str = "mean") -> pd.DataFrame:
    """Per entry (``row``, ``col``) of a paper table: ``value`` (the mean over seeds, or ``agg``),
    ``std``, ``min``, ``max``, ``seeds`` (finished cells), ``unconverged`` (cells whose certificate was not met) and
    ``capped`` (cells that stopped on an iteration budget, :data:`~kernlearn_cli.types.CAPPED`)."""
    keys = [df[rows], df[cols]]
    g = df.groupby(keys, dropna=False)[metric]
    stats = g.agg(["mean", "std", "min", "max", "size"])
    stats["unconverged"] = (df["converged"] == False).groupby(keys, dropna=False).sum()  # noqa: E712
    capped = df["cert_stopped_by"].isin(CAPPED) if "cert_stopped_by" in df else pd.Series(False, index=df.index)
    stats["capped"] = capped.groupby(keys, dropna=False).sum()
    stats.index.names = ["row", "col"]
    stats = stats.reset_index()
    return pd.DataFrame({"row": stats["row"], "col": stats["col"], "value": stats[agg], "std": stats["std"],
                         "min": stats["min"], "max": stats["max"], "seeds": stats["size"], "unconverged": stats["unconverged"].astype(int),
                         "capped": stats["capped"].astype(int)})


def pivot(df: pd.DataFrame, metric: str, rows: str | None = None, cols: str | None = None,
          digits: int = 3, agg: str = "mean", pending: pd.DataFrame | None = None) -> pd.DataFrame:
    """One metric as a paper's table: ``rows`` x ``cols`` of 'mean ± std' over seeds
    (``agg`` = ``min`` or ``max``: that statistic instead, e.g. the most sweeps any run took).

    Defaults: rows = the first varying setting that is not the column key, cols = ``solver``
    (or ``experiment`` when all cells share a solver).  With ``pending`` (expected cells that are
    not finished) an entry with fewer finished cells than expected shows ``(k/N)``.  An entry holds
    the cells of one setting only (:func:`pooled_settings`; :func:`pivot_keys` refuses keys that
    would average different settings).
    """
    rows, cols = pivot_keys(df, metric, rows, cols, agg)
    stats = entry_stats(df, metric, rows, cols, agg).rename(columns={"row": rows, "col": cols})
    stats["text"] = ([_pm(a, b, digits) for a, b in zip(stats["value"], stats["std"])] if agg == "mean"
                     else [f"{v:.{digits}g}" for v in stats["value"]])
    stats["text"] += [f" {MARK}" if k else "" for k in stats["unconverged"]]
    expected = _expected(df, [rows, cols], pending)
    if expected is not None:
        found = stats.set_index([rows, cols])["seeds"]
        partial = [(key, int(found.get(key, 0)), int(n)) for key, n in expected.items() if found.get(key, 0) < n]
        stats = stats.set_index([rows, cols]).reindex(expected.index)
        stats["text"] = stats["text"].fillna("–")
        for key, k, n in partial:
            stats.loc[key, "text"] += f" ({k}/{n})"
        stats = stats.reset_index()
    table = stats.pivot(index=rows, columns=cols, values="text").fillna("–")
    table.columns.name = None
    table = table.reset_index()
    notes = [unconverged_note(df)]
    if expected is not None and partial:
        missing = sum(n - k for _, k, n in partial)
        notes.append(f"(k/N): only k of the N expected cells of that entry are finished; {missing} of "
                     f"{int(expected.sum())} cell(s) in all are missing or failed.")
    table.attrs["note"] = " ".join(n for n in notes if n)
    return table


def unconverged_note(df: pd.DataFrame) -> str:
    """The note below a paper table: how many cells did not converge and their worst check ('' if none)."""
    bad = df[df["converged"] == False]  # noqa: E712
    if bad.empty:
        applicable = int(df["converged"].notna().sum())
        return f"All {applicable} cell(s) where convergence applies converged (certificate met)." if applicable else ""
    worst = bad.sort_values("cert_ratio", kind="stable").iloc[-1]
    where = f"; worst: {worst['cert_check']} {worst['cert_value']:.3g} (tol {worst['cert_tol']:.3g})" \
        if isinstance(worst["cert_check"], str) else ""
    return (f"{MARK} includes cells that did not converge (certificate not met): {len(bad)} of "
            f"{int(df['converged'].notna().sum())} cell(s){where}.")


def markdown(table: pd.DataFrame) -> str:
    """The table as Markdown, with its note (``table.attrs["note"]``) below it."""
    note = table.attrs.get("note")
    return table.to_markdown(index=False) + (f"\n\n{note}" if note else "")


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  "±": r"$\pm$", MARK: r"$^\dagger$", "≤": r"$\leq$", "–": "--"}


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped (and ±, †, ≤ as math)."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def _latex(table: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``table`` whose text cells and column names are LaTeX-escaped."""
    out = table.map(lambda v: latex_escape(v) if isinstance(v, str) else v)
    out.columns = [latex_escape(c) for c in table.columns]
    return out


def write_tables(table: pd.DataFrame, prefix: Path, numeric: pd.DataFrame | None = None) -> list[Path]:
    """``prefix``.md and .tex of ``table`` (with its note), and .csv of ``numeric`` (default ``table``),
    atomically."""
    paths = []
    numeric = table if numeric is None else numeric
    note = table.attrs.get("note")
    latex = _latex(table).to_latex(index=False)
    if note:
        latex += "\n" + latex_escape(note) + "\n"
    for suffix, text in ((".csv", numeric.to_csv(index=False)), (".md", markdown(table) + "\n"),
                         (".tex", latex)):
        path = prefix.with_suffix(suffix)
        with atomic_path(path) as tmp:
            tmp.write_text(text)
        paths.append(path)
    return paths


FIGURE_FORMATS = (".png", ".pdf", ".svg")


def check_figure_path(output: Path, command: str) -> None:
    """Refuse a figure file name whose extension matplotlib would not write."""
    if Path(output).suffix.lower() not in FIGURE_FORMATS:
        raise ConfigError(f"{command} -o '{output}': unknown figure format '{Path(output).suffix or '(none)'}'; "
                          f"use one of {', '.join(FIGURE_FORMATS)}.")


def _marker_pattern(marker: str) -> re.Pattern:
    return re.compile(rf"(<!-- kernlearn:{re.escape(marker)} -->\n).*?(<!-- /kernlearn:{re.escape(marker)} -->)", re.S)


def check_marker(path: Path, marker: str) -> None:
    """Refuse ``--into PATH --marker NAME`` unless PATH exists and holds the block NAME."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"collect --into '{path}': file not found; --into names an existing Markdown file "
                          f"holding '<!-- kernlearn:{marker} -->' ... '<!-- /kernlearn:{marker} -->'.")
    if not _marker_pattern(marker).search(path.read_text()):
        raise ConfigError(f"--into {path}: no block '<!-- kernlearn:{marker} -->' ... "
                          f"'<!-- /kernlearn:{marker} -->' to fill.")


def fill_marker(path: Path, marker: str, text: str) -> None:
    """Replace what stands between ``<!-- kernlearn:MARKER -->`` and ``<!-- /kernlearn:MARKER -->``."""
    check_marker(path, marker)
    path = Path(path)
    source = path.read_text()
    pattern = _marker_pattern(marker)
    with atomic_path(path) as tmp:
        tmp.write_text(pattern.sub(lambda m: m.group(1) + text.rstrip() + "\n" + m.group(2), source))


def collect(roots: list[Path], *, metric: str | None = None, rows: str | None = None, cols: str | None = None,
            agg: str = "mean", prefix: Path | None = None) -> tuple[pd.DataFrame, str, Completeness]:
    """Aggregate the records under ``roots``; write CSV/Markdown/LaTeX at ``prefix``.

    Without ``metric``: the long table (every metric, mean ± std), prefix ``<root>/table``,
    and the wall-clock times beside it (``<prefix>_timing`` or ``<root>/timing``).
    With ``metric``: :func:`pivot`, prefix ``<root>/table_<metric>``.  Several roots are written
    only where ``prefix`` says (never into the first root's folder); without it nothing is written.
    Cells the recorded grids expect but that are not finished show as finished / expected counts.
    Returns (table, its Markdown, :class:`Completeness`).
    """
    write = prefix is not None or len(roots) == 1
    df, done = load_records(roots)
    if df.empty:
        raise KernlearnError(f"collect: no finished cells under {', '.join(map(str, roots))} (no readable "
                             f"{RECORD} files). {done.message()}".rstrip())
    if metric is None:
        numeric = summarize(df, pending=done.pending)
        table = display(numeric)
        timing = summarize(df, timing=True, pending=done.pending)
        time_prefix = Path(f"{prefix}_timing") if prefix else Path(roots[0]) / "timing"
        if write:
            write_tables(display(timing), time_prefix, timing)
    else:
        numeric = table = pivot(df, metric, rows, cols, agg=agg, pending=done.pending)
    name = "table" if metric is None else f"table_{metric}" + ("" if agg == "mean" else f"_{agg}")
    if write:
        write_tables(table, prefix or Path(roots[0]) / name, numeric)
    return table, markdown(table), done


def finish_figure(fig, ax, xlabel: str, ylabel: str, title: str | None, output: Path) -> None:
    """Label, grid and title the axes, then save the figure atomically and close it.

    The axes keep their size; the saved figure is cropped or widened to what is drawn, a legend
    outside the axes (:func:`outside_legend`) included. The file holds no date (nor SVG's random
    ids), so the same figure gives the same bytes.

    Parameters
    ----------
    fig, ax : matplotlib Figure and Axes
        The figure drawn and its one axes.
    xlabel, ylabel : str
        Keys of the axes (``constraints.count``, ``knn_error``), shown by :func:`axis_label`, or text.
    title : str or None
        Title above the axes (none when empty).
    output : Path
        Figure file; its extension (``.png``, ``.pdf``, ``.svg``) is the format.
    """
    import matplotlib
    import matplotlib.pyplot as plt

    ax.set_xlabel(axis_label(xlabel))
    ax.set_ylabel(axis_label(ylabel))
    ax.grid(alpha=0.3)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    output = Path(output)
    fmt = output.suffix.lstrip(".").lower() or "png"
    metadata = {"pdf": {"CreationDate": None}, "svg": {"Date": None}}.get(fmt)
    legend = ax.get_legend()
    output.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(output) as tmp, matplotlib.rc_context({"svg.hashsalt": "kernlearn"}):
        fig.savefig(tmp, format=fmt, dpi=120, metadata=metadata, bbox_inches="tight",
                    bbox_extra_artists=[legend] if legend else None)
    plt.close(fig)


#: Greek letters a setting name may spell out; a legend shows the letter (``solver.gamma`` -> ``γ = 1``).
GREEK = {"alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "eta": "η", "lambda": "λ",
         "lam": "λ", "mu": "μ", "rho": "ρ", "sigma": "σ", "tau": "τ"}
#: Settings whose values are names (of an experiment, a solver, a dataset, a kernel): a legend shows the
#: value alone, as it does for any ``*.name`` grid key.
NAMED = {"experiment", "solver", "dataset", "kernel"}
#: History datasets ``plot-history`` draws when no key is given, in this order: the first every cell
#: records (DefiniteBoost's dual objective, ADMM's and TRIN's objective, Burg's and von Neumann's dual
#: change, MEG's loss).
HISTORY_KEYS = ("dual_objective", "objective", "dual_change", "loss")
#: Axis labels (with units) of the settings, metrics and histories figures draw; any other key is shown as it is.
LABELS = {
    # settings (x axes)
    "constraints.count": "number of constraints", "n": "number of points n", "rank0": "rank of K0",
    "solver.lam": "λ (regularization)", "solver.gamma": "γ (regularization)", "gamma_path": "γ (regularization)",
    "solver.iterations": "MEG iterations", "solver.max_steps": "DefiniteBoost step budget",
    "solver.max_sweeps": "sweep budget", "solver.tol": "tolerance", "solver.slack": "slack weight",
    # results
    "seconds": "solver wall time (s)", "cpu_seconds": "solver CPU time (s)", "iterations": "solver iterations",
    "objective": "objective", "nmi": "kernel k-means NMI (0–1)", "pairwise_accuracy": "pairwise accuracy (Rand index)",
    "knn_accuracy": "k-NN accuracy (fraction)", "knn_error": "k-NN test error (fraction)",
    "kpca_1nn_error": "1-NN error after kernel PCA (fraction)", "error_path": "1-NN error after kernel PCA (fraction)",
    "svm_accuracy": "SVM accuracy (fraction)", "alignment": "kernel alignment (0–1)",
    "nka_score": "NKA selection score", "violation": "largest constraint violation",
    "condition": "condition number of K", "bound_ratio": "Lemma 3.2 bound / MEG loss",
    # per-iteration histories
    "dual_change": "relative dual change per sweep", "max_violation": "largest constraint violation",
    "lambda_norm": "‖λ‖₂ (dual variables)", "dual_objective": "dual objective", "loss": "loss",
    "cumulative_loss": "cumulative loss", "primal": "primal residual ‖V − U‖", "dual": "dual residual",
    "rho": "penalty ρ",
}
#: Markers and line styles of a figure's series, cycled (with the colours) so that no two of the first
#: 28 series look alike, and open markers so that coinciding points of two series both show.
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
LINESTYLES = ("-", "--", "-.", ":")
#: A value axis is logarithmic by default when its (positive) values span more than this many decades.
LOG_DECADES = 2


def axis_label(key: str) -> str:
    """The label of an axis drawing ``key``: :data:`LABELS`, else the key itself."""
    return LABELS.get(key, key)


def series_style(k: int) -> dict:
    """Colour, open marker and line style of a figure's ``k``-th series (keyword arguments of ``plot``)."""
    return {"color": f"C{k % 10}", "marker": MARKERS[k % len(MARKERS)], "ls": LINESTYLES[k % len(LINESTYLES)],
            "mfc": "none"}


def marks_every(k: int) -> tuple[float, float]:
    """Where the markers of the ``k``-th line of many points go (``markevery``): one per tenth of the axes'
    diagonal, each line's starting a little further on, so that coinciding lines show each marker."""
    return (0.025 * (k % 4), 0.1)


def spread_caption(counts) -> str:
    """What a figure's error bars or bands are, for its legend: ``mean ± std over 3 seeds``.

    Parameters
    ----------
    counts : iterable of int
        The number of cells (seeds) of each point or curve.

    Returns
    -------
    str
        ``mean ± std over N seeds`` (``over 2–3 seeds`` when they differ), or, when every point has
        one cell, that no spread is shown.
    """
    counts = sorted({int(c) for c in counts})
    if counts[-1] <= 1:
        return "one seed each (no spread shown)"
    return f"mean ± std over {counts[0] if len(counts) == 1 else f'{counts[0]}–{counts[-1]}'} seeds"


def log_values(values, logy: bool | None) -> bool:
    """Whether a value axis is logarithmic: ``logy`` when given, else whether the finite values are all
    positive and span more than :data:`LOG_DECADES` decades (a quantity that converges over decades)."""
    if logy is not None:
        return logy
    v = np.concatenate([np.ravel(np.asarray(a, dtype=float)) for a in values]) if len(values) else np.empty(0)
    v = v[np.isfinite(v)]
    return bool(v.size) and v.min() > 0 and v.max() > 10 ** LOG_DECADES * v.min()


def _missing(value) -> bool:
    """True for None or NaN (a setting a cell does not have)."""
    return not isinstance(value, (tuple, list, dict)) and bool(pd.isna(value))


def natural_key(value) -> tuple:
    """Sort key of a setting value: numbers first, in numeric order, then text, then missing values.

    Parameters
    ----------
    value : object
        A setting value; numeric text (YAML reads ``1e-3`` as text) counts as a number.

    Returns
    -------
    tuple
        Keys that order 10, 30, 100 (never 10, 100, 30) and ``1e-3`` before ``0.1``.
    """
    if _missing(value):
        return (2, 0.0, "")
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(value))


def short_experiments(names) -> dict:
    """Experiment names without the ``_``-separated words they all begin with.

    Parameters
    ----------
    names : iterable of str
        The experiment names of a figure's curves.

    Returns
    -------
    dict
        Each name to its short form (``kulis2006_fig1_digits_burg`` -> ``burg``); a name keeps at
        least its last word.
    """
    words = {name: str(name).split("_") for name in names}
    common = 0
    if len(words) > 1:
        shortest = min(len(w) for w in words.values())
        while common < shortest - 1 and len({tuple(w[:common + 1]) for w in words.values()}) == 1:
            common += 1
    return {name: "_".join(w[common:]) for name, w in words.items()}


def setting_text(key: str, value, experiments: dict | None = None) -> str | None:
    """One setting as a legend shows it.

    Parameters
    ----------
    key : str
        Column of the setting (``solver.gamma``, ``dataset.name``, ``seed``, ...).
    value : object
        Its value.
    experiments : dict, optional
        Short experiment names (:func:`short_experiments`).

    Returns
    -------
    str or None
        A name alone (``chessboard``, ``burg``), a seed as ``seed 0``, anything else as
        ``name = value`` with the last word of the key (``γ = 1``; ``constraints.count`` ->
        ``constraints = 10``); None for a missing value.
    """
    if _missing(value):
        return None
    if key == "experiment":
        return (experiments or {}).get(value, str(value))
    if key == "seed":
        return f"seed {value}"
    text = f"{value:g}" if isinstance(value, (float, np.floating)) else str(value)
    parts = key.split(".")
    if key in NAMED or parts[-1] == "name":
        return text
    name = parts[-2] if parts[-1] == "count" and len(parts) > 1 else parts[-1]
    return f"{GREEK.get(name, name)} = {text}"


def distinguishing(df: pd.DataFrame, exclude=()) -> list[str]:
    """The settings that tell the curves of a figure apart.

    Each varying setting (:func:`setting_columns`; the seed and ``exclude`` aside, the experiment
    last) is kept when it splits the cells further than the ones kept before it, so that a setting
    equal for every curve, or one that only repeats another (``dataset.name`` and ``dataset``), or
    an experiment name the other settings already tell apart, is left out.

    Parameters
    ----------
    df : DataFrame
        The cells of the figure, one row each.
    exclude : collection of str
        Columns that are not curve settings (the x axis).

    Returns
    -------
    list of str
        The columns, possibly empty (every cell has the same settings).
    """
    candidates = [k for k in setting_columns(df) if k not in {"seed", "experiment", *exclude}] + ["experiment"]
    keys, groups = [], 1
    for key in candidates:
        n = df.groupby(keys + [key], dropna=False, sort=False).ngroups
        if n > groups:
            keys, groups = keys + [key], n
    return keys


def split_curves(df: pd.DataFrame, keys: list[str]) -> list[tuple[str, pd.DataFrame]]:
    """The cells of a figure grouped into curves, labelled and in the natural order of their settings.

    Parameters
    ----------
    df : DataFrame
        The cells, one row each, with columns ``experiment``, ``solver`` and ``keys``.
    keys : list of str
        The settings of a curve (e.g. :func:`distinguishing`).

    Returns
    -------
    list of (str, DataFrame)
        Legend label (:func:`setting_text` of each key, joined by commas; the solver when no key
        has a value) and rows of each curve, ordered by :func:`natural_key` of the values.
    """
    if not keys:
        return [(", ".join(map(str, df["solver"].unique())), df)]
    experiments = short_experiments(df["experiment"].unique())
    curves = []
    for values, part in df.groupby(keys, dropna=False, sort=False):
        values = values if isinstance(values, tuple) else (values,)
        texts = [t for t in (setting_text(k, v, experiments) for k, v in zip(keys, values)) if t is not None]
        label = ", ".join(texts) or ", ".join(map(str, part["solver"].unique()))
        curves.append((tuple(map(natural_key, values)), label, part))
    return [(label, part) for _, label, part in sorted(curves, key=lambda c: c[0])]


def seeds_text(n: int) -> str:
    """``(1 seed)``, ``(3 seeds)``: how many cells a mean is over."""
    return f"({n} seed{'' if n == 1 else 's'})"


def outside_legend(ax, fontsize: float = 8, title: str | None = None) -> None:
    """Put the legend to the right of the axes, clear of the data, under ``title`` (e.g. what the error
    bars are, :func:`spread_caption`).

    It stays out of ``tight_layout`` (the axes keep their size); :func:`finish_figure` widens the
    saved figure to hold it.

    Parameters
    ----------
    ax : matplotlib Axes
        Axes whose labelled artists the legend lists.
    fontsize : float
        Font size of the entries.
    title : str or None
        Legend title.
    """
    legend = ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0, fontsize=fontsize,
                       title=title, title_fontsize=fontsize)
    legend.set_in_layout(False)


def plot_curves(df: pd.DataFrame, metric: str, x: str, by: str | None, *, loglog: bool = False,
                logx: bool = False, logy: bool | None = None, title: str | None = None, output: Path) -> int:
    """Draw the mean of ``metric`` against ``x`` with ± std error bars over seeds, one curve per setting.

    Cells without an ``x`` value (e.g. K0 or a target kernel) are dashed horizontal baselines.
    Points that include a cell that did not converge are ringed in red. Curves differ in colour,
    marker and line style (:func:`series_style`); the legend's title says what the error bars are
    (:func:`spread_caption`), the axes are labelled by :func:`axis_label`.

    Parameters
    ----------
    df : DataFrame
        The cells (:func:`load_records`).
    metric, x : str
        Columns of the y and x axes.
    by : str or None
        One curve per value of this column; None: one per combination of the settings that differ
        between the cells (:func:`distinguishing`). Curves are labelled by those settings
        (:func:`split_curves`) and drawn in numeric order.
    loglog, logx : bool
        Logarithmic axes.
    logy : bool or None
        Logarithmic value axis; None: when the means are positive and span more than
        :data:`LOG_DECADES` decades (:func:`log_values`); ``loglog`` sets it.
    title : str or None
        Figure title.
    output : Path
        Figure file.

    Returns
    -------
    int
        The number of ringed points.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if df.empty:
        raise KernlearnError("plot: no finished cells.")
    for key in (metric, x, by):
        if key is not None and key not in df.columns:
            raise ConfigError(f"plot: no column '{key}'; valid: {', '.join(c for c in df.columns if c != 'cell')}.")
    fig, ax = plt.subplots(figsize=(5.5, 4))
    baselines = df[df[x].isna()]
    if not baselines.empty:
        for k, (label, part) in enumerate(split_curves(baselines, distinguishing(baselines, {x}))):
            ax.axhline(part[metric].mean(), ls="--", lw=1, color=f"C{7 + k % 3}", label=label)
    ringed, counts = 0, []
    means = [baselines[metric].mean()] if not baselines.empty else []
    points = df[df[x].notna()]
    for k, (label, part) in enumerate(split_curves(points, [by] if by else distinguishing(points, {x}))):
        stats = part.groupby(x)[metric].agg(["mean", "std", "count"]).sort_index()
        ax.errorbar(stats.index, stats["mean"], yerr=stats["std"].fillna(0), ms=5, capsize=3, label=label,
                    **series_style(k))
        means.append(stats["mean"])
        counts += list(stats["count"])
        bad = (part["converged"] == False).groupby(part[x]).sum().reindex(stats.index).fillna(0) > 0  # noqa: E712
        if bad.any():
            ax.plot(stats.index[bad], stats["mean"][bad], ls="none", marker="o", ms=11, mfc="none", mec="red",
                    mew=1.2, label=None if ringed else f"{MARK} not converged (certificate not met)")
            ringed += int(bad.sum())
    if loglog or logx:
        ax.set_xscale("log")
    if log_values(means, True if loglog else logy):
        ax.set_yscale("log")
    outside_legend(ax, title=spread_caption(counts) if counts else None)
    finish_figure(fig, ax, x, metric, title, output)
    return ringed


def history_key(histories: dict, key: str | None) -> str:
    """The history dataset a ``plot-history`` figure draws.

    Parameters
    ----------
    histories : dict
        Each cell to (its factors file, the names of its history datasets).
    key : str or None
        The dataset asked for; None: the first of :data:`HISTORY_KEYS` that every cell records.

    Returns
    -------
    str
        The key.

    Raises
    ------
    ConfigError
        When a cell lacks ``key``, or no default is recorded by every cell; the message names the
        datasets the files do hold.
    """
    common = set.intersection(*(set(names) for _, names in histories.values()))
    if key is None:
        key = next((k for k in HISTORY_KEYS if k in common), None)
        if key is None:
            raise ConfigError(f"plot-history: the cells record none of {', '.join(HISTORY_KEYS)}; the history "
                              f"datasets every cell holds: {', '.join(sorted(common)) or '(none)'}; "
                              f"name one with -k KEY.")
        return key
    for cell, (path, names) in histories.items():
        if key not in names:
            raise ConfigError(f"plot-history: cell {cell} ({path}) has no history '{key}'; its history datasets: "
                              f"{', '.join(sorted(names)) or '(none)'}; every cell holds: "
                              f"{', '.join(sorted(common)) or '(none)'}.")
    return key


def plot_history(roots: list[Path], key: str | None = None, *, mean: bool = False, logx: bool = False,
                 logy: bool | None = None, xlabel: str = "step", title: str | None = None,
                 output: Path) -> tuple[int, str]:
    """Draw the per-iteration history ``history/<key>`` of every finished cell against its index.

    Reads ``<cell>/factors.h5`` of each cell with a ``record.json`` under ``roots``. One line per
    cell, labelled by the settings that differ between the cells and, unless all share one, its
    seed (``chessboard, seed 0``); with ``mean``, one line per setting (cells that differ only in
    the seed) with a ± std band, shorter runs held at their last value (the legend's title says so,
    :func:`spread_caption`). Lines are in the numeric order of the settings and differ in colour,
    marker and line style (:func:`series_style`).

    Parameters
    ----------
    roots : list of Path
        Results folders.
    key : str or None
        History dataset; None: the first of :data:`HISTORY_KEYS` every cell records
        (:func:`history_key`).
    mean : bool
        Mean ± std over seeds instead of one line per cell.
    logx : bool
        Symmetric-log step axis.
    logy : bool or None
        Log value axis; None: when the values drawn are positive and span more than
        :data:`LOG_DECADES` decades (:func:`log_values`), as a convergence measure does.
    xlabel : str
        Label of the x axis.
    title : str or None
        Figure title.
    output : Path
        Figure file.

    Returns
    -------
    (int, str)
        The number of lines drawn and the key drawn.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df, _ = load_records(roots, "plot-history")
    if df.empty:
        raise KernlearnError(f"plot-history: no finished cells under {', '.join(map(str, roots))}.")
    arrays = {cell: (where, histories_of(where, rec)) for root in roots
              for cell, where, rec in records_of(root, "plot-history") if not isinstance(rec, ValueError)}
    key = history_key({cell: (where, list(h)) for cell, (where, h) in arrays.items() if cell in set(df["cell"])}, key)
    curves = {cell: arrays[cell][1][key] for cell in df["cell"]}
    seeds = df["seed"].nunique() > 1
    fig, ax = plt.subplots(figsize=(5.5, 4))
    drawn, counts = [], []
    for label, part in split_curves(df, distinguishing(df)):
        if mean:
            runs = [curves[c] for c in part["cell"]]
            length = max(len(r) for r in runs)
            stack = np.array([np.concatenate([r, np.full(length - len(r), r[-1] if len(r) else np.nan)])
                              for r in runs])
            m, s = stack.mean(axis=0), stack.std(axis=0)
            x = np.arange(length)
            style = series_style(len(drawn))
            ax.plot(x, m, lw=1.2, ms=5, markevery=marks_every(len(drawn)), label=f"{label} {seeds_text(len(runs))}",
                    **style)
            ax.fill_between(x, m - s, m + s, color=style["color"], alpha=0.2, lw=0)
            drawn.append(m)
            counts.append(len(runs))
            continue
        for seed, cell in sorted(zip(part["seed"], part["cell"]), key=lambda sc: natural_key(sc[0])):
            ax.plot(np.arange(len(curves[cell])), curves[cell], lw=1, ms=4, markevery=marks_every(len(drawn)),
                    label=f"{label}, seed {seed}" if seeds else label, **series_style(len(drawn)))
            drawn.append(curves[cell])
    lines = len(drawn)
    if logx:
        ax.set_xscale("symlog", linthresh=1)
    if log_values(drawn, logy):
        ax.set_yscale("log")
    if lines <= 12 or mean:
        outside_legend(ax, fontsize=7, title=spread_caption(counts) if mean else None)
    finish_figure(fig, ax, xlabel, key, title, output)
    return lines, key


def plot_paths(roots: list[Path], y: str, x: str, *, by: str | None = None, logx: bool = False,
               logy: bool | None = None, title: str | None = None, output: Path) -> int:
    """Draw a per-cell list metric ``y`` against the list metric ``x`` of the same record.

    E.g. the test error along a regularization path, ``error_path`` against ``gamma_path``: the
    mean over seeds with ± std error bars (the legend's title says so, :func:`spread_caption`); curves
    differ in colour, marker and line style (:func:`series_style`); a curve that includes a cell that
    did not converge is ringed in red.

    Parameters
    ----------
    roots : list of Path
        Results folders.
    y, x : str
        List metrics of the records.
    by : str or None
        One curve per value of this grid key or record field, in numeric order; None: one per
        experiment (named by its solver when there is one experiment).
    logx : bool
        Log x axis (base 2).
    logy : bool or None
        Log value axis; None: when the means are positive and span more than :data:`LOG_DECADES`
        decades (:func:`log_values`).
    title : str or None
        Figure title.
    output : Path
        Figure file.

    Returns
    -------
    int
        The number of curves.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = []
    for root in map(Path, roots):
        for _, path, rec in records_of(root, "plot path"):
            if isinstance(rec, ValueError):
                continue
            metrics = rec["metrics"]
            if not isinstance(metrics.get(y), list) or not isinstance(metrics.get(x), list):
                have = ", ".join(k for k, v in metrics.items() if isinstance(v, list)) or "(none)"
                raise ConfigError(f"plot path: cell {rec['cell']} ({path}) has no list metrics '{y}' and '{x}'; "
                                  f"its list metrics: {have}.")
            rows.append({"experiment": rec["experiment"], "solver": rec["solver"],
                         **({by: rec["grid"].get(by, rec.get(by))} if by else {}),
                         "path": (metrics[x], metrics[y], rec["converged"] is False)})
    if not rows:
        raise KernlearnError(f"plot path: no finished cells under {', '.join(map(str, roots))}.")
    df = pd.DataFrame(rows)
    curves = split_curves(df, [by] if by else (["experiment"] if df["experiment"].nunique() > 1 else []))
    fig, ax = plt.subplots(figsize=(5.5, 4))
    means = []
    for k, (label, part) in enumerate(curves):
        runs = list(part["path"])
        xs = np.asarray(runs[0][0], dtype=float)
        if any(len(r[0]) != len(xs) or not np.allclose(r[0], xs) for r in runs):
            raise KernlearnError(f"plot path: the cells of '{label}' have different '{x}' paths; a mean needs one.")
        ys = np.array([r[1] for r in runs], dtype=float)
        ax.errorbar(xs, ys.mean(0), yerr=ys.std(0), ms=5, capsize=3, label=f"{label} {seeds_text(len(runs))}",
                    **series_style(k))
        means.append(ys.mean(0))
        if any(r[2] for r in runs):
            ax.plot(xs, ys.mean(0), ls="none", marker="o", ms=11, mfc="none", mec="red", mew=1.2,
                    label=f"{MARK} not converged (certificate not met)")
    if logx:
        ax.set_xscale("log", base=2)
    if log_values(means, logy):
        ax.set_yscale("log")
    outside_legend(ax, title=spread_caption(len(part) for _, part in curves))
    finish_figure(fig, ax, x, y, title, output)
    return len(curves)
