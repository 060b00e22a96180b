"""``kernlearn show``: one cell (its settings, result, certificate and provenance), a failed cell's
reason, or the numbered cells of a results folder or archive, for a person."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import KernlearnError
from ..records import FAILED, RECORD, cell_state, read_record
from ..resources import size
from .records import expected_cells, convergence, is_archive, records_of


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
    cells = expected_cells(where)
    if int(cell) >= len(cells):
        raise KernlearnError(f"show: '{where}' has {len(cells)} cell(s) in its recorded grid, numbered 0 to "
                             f"{len(cells) - 1}; there is no cell {cell}. `kernlearn show {where}` lists them.")
    return cells[int(cell)].id


def list_cells(where: Path) -> str:
    """The cells of a results folder or archive, one line each: number, id, state, grid values."""
    where = Path(where)
    records = {c: rec for c, _, rec in records_of(where, "show")}
    expected = expected_cells(where)
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


def _given(spec, skip=("name",)) -> str:
    """The settings a config gives a component (``tol=0.001, slack=1.0``), those in ``skip`` left out."""
    if not isinstance(spec, dict):
        return ""
    return ", ".join(f"{k}={json.dumps(v, default=str)}" for k, v in spec.items() if k not in skip)


def _solver_text(spec) -> str | None:
    """A solver's settings as its config gives them (the others at their defaults); None without one."""
    if not isinstance(spec, dict):
        return None
    return (f"{spec.get('name')}: {_given(spec) or 'no setting given'}; the others at their defaults "
            f"(`kernlearn list solvers {spec.get('name')}`)")


def _solver_line(config: dict | None) -> list[str]:
    """The cell's solver settings as its config gives them (the others are at their defaults)."""
    text = _solver_text((config or {}).get("solver"))
    return [] if text is None else [f"solver      {text}"]


def _with(text: str, given: str) -> str:
    return f"{text}: {given}" if given else text


def settings_rows(rec: dict) -> list[tuple[str, str]]:
    """What a cell ran, as (what, text) rows: the dataset and its n, the kernel and its rank, the
    constraints generator and its count, each with the settings the config gives it; the solver's
    settings; the data files it read with their sha256 (12 hex digits).  ``kernlearn show`` prints
    them for one cell, ``kernlearn report``'s Settings section counts them over the cells.

    Parameters
    ----------
    rec : dict
        A cell's record (``record.json``).

    Returns
    -------
    list of (str, str)
        ``dataset``, ``kernel``, ``constraints``, ``solver`` (when the record's config names one) and
        ``data files`` (when the cell read any).
    """
    config = rec.get("config") or {}
    count = rec.get("constraints")
    rows = [("dataset", _with(f"{rec.get('dataset')} (n = {rec.get('n')})", _given(config.get("dataset")))),
            ("kernel", _with(f"{rec.get('kernel')} (rank {rec.get('rank0')})", _given(config.get("kernel")))),
            ("constraints", _with(f"{rec.get('constraints_generator')} ({count} constraint{'s' * (count != 1)})",
                                  _given(config.get("constraints"), ("name", "count"))))]
    solver = _solver_text(config.get("solver"))
    rows.append(("solver", solver if solver is not None else str(rec.get("solver"))))
    inputs = rec.get("inputs") or {}
    if inputs:
        rows.append(("data files", ", ".join(f"{path} (sha256 {digest[:12]})" for path, digest in inputs.items())))
    return rows


def describe_failure(path: Path) -> str:
    """A failed cell's ``failed.json`` for a person: what failed and why, and its solver settings."""
    try:
        failure = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise KernlearnError(f"show: '{path}' is not readable ({exc}).") from None
    folder = Path(path).parent
    cells = [c for c in expected_cells(folder.parent) if c.id == failure.get("cell", folder.name)]
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


def _memory_line(rec: dict) -> list[str]:
    """The cell's peak memory ([] for a record made before it was kept)."""
    if "peak_rss_bytes" not in rec:
        return []
    peak = rec["peak_rss_bytes"]
    return [f"memory      {size(peak)} peak resident (the process running the cell, while it ran)" if peak is not None
            else "memory      not measured (the high-water mark could not be reset where the cell ran)"]


def describe_record(rec: dict) -> str:
    """A cell's record for a person: what ran (:func:`settings_rows`), its result and certificate (each
    check), time, memory, metrics and its provenance."""
    lines = [f"cell        {rec['cell']} (experiment {rec['experiment']}, seed {rec['seed']})",
             f"grid        {json.dumps(rec.get('grid') or {}, default=str)}",
             *(f"{what:<12}{text}" for what, text in settings_rows(rec)),
             f"result      objective {rec['objective']:.10g}, {rec['iterations']} iteration(s), {convergence(rec)}"
             + (f", stopped by {(rec.get('certificate') or {}).get('stopped_by')}" if rec.get("certificate") else ""),
             *_certificate_lines(rec.get("certificate")),
             f"time        {rec['seconds']:.3f} s solver wall" + (f", {rec['cpu_seconds']:.3f} s solver CPU"
                                                              if "cpu_seconds" in rec else ""),
             *_memory_line(rec)]
    scalars = {k: v for k, v in (rec.get("metrics") or {}).items() if isinstance(v, (int, float))}
    if scalars:
        lines.append("metrics     " + ", ".join(f"{k} {v:.6g}" for k, v in scalars.items()))
    prov = rec.get("provenance") or {}
    if not prov:
        lines.append("provenance  (none: a record made before kernlearn kept it)")
    for key, value in prov.items():
        lines.append(f"{'provenance' if key == next(iter(prov)) else '':<12}{key}: {provenance_text(key, value)}")
    return "\n".join(lines)


def provenance_text(key: str, value) -> str:
    """One provenance entry of a record as text: ``versions`` as ``numpy 2.4.6, scipy 1.17.1``, ``blas``
    as ``openblas 0.3.30 (Haswell, pthreads, libscipy_openblas.so)`` per library, others as ``str``."""
    if key == "versions":
        return ", ".join(f"{k} {v}" for k, v in value.items())
    if key == "blas":
        return "; ".join(f"{b.get('internal_api')} {b.get('version')} ({b.get('architecture')}, "
                         f"{b.get('threading_layer')}, {b.get('library')})" for b in value)
    return str(value)
