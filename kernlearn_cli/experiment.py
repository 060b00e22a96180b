"""One cell end to end: dataset -> K0 -> constraints -> solver -> evaluators -> files.

:func:`check_cells` checks a run's cells before anything is written (one cell per distinct
setting prepared, :func:`~kernlearn_cli.prepare.prepare`); :func:`run_cell` runs a cell unless it is
current (:func:`is_current`): prepares it, solves, maps the held-out points (:func:`heldout_factor`),
evaluates, and writes its files (:func:`~kernlearn_cli.records.write_cell`).
"""

from __future__ import annotations

import inspect
import json
import time
from pathlib import Path
from typing import Callable

import numpy as np

from . import __version__
from .codehash import changed_code, code_of
from .config import Cell, bind_cell, check_cell
from .errors import ConfigError, located
from .factors import PATH_FILE, factors_image, share_initial_factor
from .inputs import changed_inputs
from .prepare import Prepared, prepare
from .progress import announce, phase
from .provenance import code_provenance, environment_provenance
from .records import PENDING, RECORD, cell_state, read_record, write_cell, write_pending
from .types import SolverResult
from .refusals import warn_if_already_met
from .resources import PeakMemory
from .rng import STREAM_EVALUATE, component_rng
from .threads import blas_threads, cell_threads
from .types import SpilledPath


def check_cells(cells: list[Cell], where: str = "config") -> None:
    """Validate a run before anything is written: every cell's settings
    (:func:`~kernlearn_cli.config.check_cell`), and the data, kernel and constraints of one cell per
    distinct (dataset, kernel, constraints) setting and whether its solver enforces constraints
    exactly (:func:`~kernlearn_cli.refusals.refuse_conflicts`).

    Datasets and initial factors are memoised, so the cells reuse this work.  Warns (once per
    setting) when the initial kernel already meets every constraint: the solver would have
    nothing to learn.
    """
    seen = set()
    for cell in cells:
        label = cell.label(where)
        solver, params = check_cell(cell, where)["solver"]
        key = json.dumps([cell.config.get(k) for k in ("dataset", "kernel", "constraints")]
                         + [solver.enforces_exactly(params)], sort_keys=True, default=str)
        if key in seen:
            continue
        seen.add(key)
        prep = prepare(cell, label)
        warn_if_already_met(prep, label)


def run_cell(cell: Cell, out_dir: Path, *, where: str = "config", force: bool = False,
             progress: Callable | None = None, workers: int = 1) -> dict | None:
    """Run one cell under a fixed thread count for every native pool
    (:func:`~kernlearn_cli.threads.cell_threads`; see :func:`_run_cell`)."""
    with cell_threads():
        return _run_cell(cell, out_dir, where=where, force=force, progress=progress, workers=workers)


def _run_cell(cell: Cell, out_dir: Path, *, where: str, force: bool, progress: Callable | None,
              workers: int = 1) -> dict | None:
    """Run one cell and write ``out_dir/<cell id>/{factors.h5, record.json}``
    (:func:`~kernlearn_cli.records.write_cell`).

    Returns the record, or None when the cell was already finished (and ``force`` is off).
    With ``force`` a finished cell keeps its files until the new ones are complete.  ``workers``:
    how many cells the run computes at once, kept in the provenance (cells that share the cores
    cost more CPU time each, which ``reproduce --plan`` takes into account).  The
    components are pure functions; datasets and initial factors are memoised per process,
    which changes no number.
    """
    cell_dir = Path(out_dir) / cell.id
    if not force and is_current(cell_dir, cell):
        return None
    started, wall0, cpu0 = time.time(), time.perf_counter(), time.process_time()
    with PeakMemory() as mem:                      # this cell's peak, not the process's past
        prep = prepare(cell, where)
        (ds_entry, _), (gen, _), (solver, solver_params) = (prep.bound[k] for k in ("dataset", "constraints", "solver"))
        extra = dict(prep.solver_extra)
        if progress is not None and "callback" in inspect.signature(solver.func).parameters:
            extra["callback"] = progress
        ds, constraints = prep.dataset, prep.constraints
        kept = None if force else pending_result(cell_dir, cell, prep)
        if kept is not None:
            result, seconds, cpu_seconds = kept
            announce(f"    [{cell.id}] the learned factor of an interrupted run is current ({cell_dir / 'factors.h5'}): "
                     f"evaluating only")
        else:
            t0, c0 = time.perf_counter(), time.process_time()
            with located(where, "solver", solver.name), phase(cell.id, f"solving '{solver.name}' (n = {ds.n}, "
                                                                    f"{len(constraints)} constraints)"):
                result = solver.func(prep.G0, constraints, **extra, **solver_params)
            seconds, cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
            factors = None
            if not (cell_dir / RECORD).exists() and not isinstance(result.path, SpilledPath):
                # nothing learned is lost: the factor (and its certificate) now, the record after the evaluators
                factors = factors_image(result, constraints, ds.y, solver=solver.name, config=cell.config,
                                        seed=cell.seed, seconds=seconds,
                                        links=share_initial_factor(result, prep.G0, Path(out_dir)),
                                        kernel_info=prep.kernel_info)
                write_pending(cell_dir, factors, {
                    "cell": cell.id, "config": cell.config, "objective": float(result.objective),
                    "iterations": int(result.iterations), "converged": result.converged,
                    "certificate": result.certificate, "info": result.info,
                    "seconds": seconds, "cpu_seconds": cpu_seconds, "inputs": _inputs(ds, constraints),
                    "provenance": {"code": code_of(prep.bound)}})
                kept = True

        metrics = {}
        heldout = None
        if any("heldout" in inspect.signature(ev.func).parameters for ev, _ in prep.bound["evaluate"]):
            with located(where, "dataset", ds_entry.name), phase(cell.id, "mapping the held-out points"):
                heldout = heldout_factor(result, prep)
        for k, (ev, ev_params) in enumerate(prep.bound["evaluate"]):
            wants = inspect.signature(ev.func).parameters
            extra = {key: value for key, value in (("result", result), ("constraints", constraints),
                                                   ("heldout", heldout)) if key in wants}
            with located(where, "evaluator", ev.name), phase(cell.id, f"evaluating '{ev.name}'"):
                found = ev.func(result.G, ds, rng=component_rng(cell.seed, STREAM_EVALUATE, k), **extra, **ev_params)
            if clash := sorted(set(found) & set(metrics)):
                raise ConfigError(f"evaluate[{k}] '{ev.name}' returns metric(s) {', '.join(clash)}, which an "
                                  f"earlier evaluator of the cell returned too; the second value would overwrite the "
                                  f"first. Keep one of the two evaluators in this config.")
            metrics.update(found)

        if kept is None:
            links = share_initial_factor(result, prep.G0, Path(out_dir))
            if isinstance(result.path, SpilledPath) and len(result.path):     # keep_path: streamed, disk to disk
                result.path.save(cell_dir / PATH_FILE)
                links["path"] = PATH_FILE
            factors = factors_image(result, constraints, ds.y, solver=solver.name, config=cell.config, seed=cell.seed,
                                    seconds=seconds, links=links, kernel_info=prep.kernel_info)
        else:
            factors = None                                  # written when the solver ended (write_pending)
    record = {
        "cell": cell.id, "index": cell.index, "experiment": cell.config["name"],
        "grid": cell.grid_values, "seed": cell.seed,
        "dataset": ds_entry.name, "kernel": prep.bound["kernel"][0].name if prep.G0 is not None else None, "constraints_generator": gen.name,
        "solver": solver.name, "n": ds.n, "rank0": int(prep.G0.shape[1]) if prep.G0 is not None else None, "constraints": len(constraints),
        "objective": float(result.objective), "iterations": int(result.iterations),
        "converged": result.converged, "seconds": seconds, "cpu_seconds": cpu_seconds,
        "peak_rss_bytes": mem.peak_bytes if mem.reset else None, "metrics": metrics,
        "certificate": result.certificate, "info": result.info, "config": cell.config,
        **({"kernel_info": prep.kernel_info} if prep.kernel_info else {}),
        **({"inputs": inputs} if (inputs := _inputs(ds, constraints)) else {}),
        "kernlearn_version": __version__,
        "provenance": {**code_provenance(), "code": code_of(prep.bound), "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
                       "wall_seconds": time.perf_counter() - wall0, "cpu_seconds": time.process_time() - cpu0,
                       "workers": workers, "blas_threads": blas_threads(), **environment_provenance()},
    }
    write_cell(cell_dir, factors, record)
    return record


def is_current(cell_dir: Path, cell: Cell) -> bool:
    """Whether ``cell`` is finished (:func:`~kernlearn_cli.records.cell_state`) from the input files on disk
    and by the code that runs now: a record whose ``inputs`` (path -> sha256) no longer match, or whose
    components' code differs (:func:`~kernlearn_cli.codehash.changed_code`), is not, and its cell runs again."""
    if cell_state(cell_dir)[0] != "finished":
        return False
    record = read_record(Path(cell_dir) / RECORD)
    return not changed_inputs(record) and not changed_code(record, bind_cell(cell, "config"))


def _inputs(ds, constraints) -> dict:
    """The input files of a cell (path -> sha256): the dataset's and the constraints'."""
    return {**ds.meta.get("inputs", {}), **constraints.files}


def pending_result(cell_dir: Path, cell: Cell, prep: "Prepared") -> tuple[SolverResult, float, float] | None:
    """The solver's result kept by an interrupted run (:func:`~kernlearn_cli.records.write_pending`) with its
    seconds and CPU seconds, when it is current: the same config, the same input files and the same code
    (:func:`~kernlearn_cli.codehash.changed_code`); else None and the cell is computed again."""
    from .factors import read_factors

    cell_dir = Path(cell_dir)
    if (cell_dir / RECORD).exists() or not (cell_dir / PENDING).exists():
        return None
    try:
        kept = json.loads((cell_dir / PENDING).read_text())
        if (kept.get("cell") != cell.id or kept.get("config") != json.loads(json.dumps(cell.config, default=str))
                or changed_inputs(kept) or changed_code(kept, bind_cell(cell, "config"))):
            return None
        image = read_factors(cell_dir / "factors.h5")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    arrays = {k: v for k, v in image.items() if k not in ("G", "labels", "constraints", "attrs", "certificate")}
    result = SolverResult(G=image["G"], objective=kept["objective"], iterations=kept["iterations"],
                          converged=kept["converged"], info=kept["info"], arrays=arrays)
    result.certificate = kept["certificate"]
    return result, kept["seconds"], kept["cpu_seconds"]


def heldout_factor(result, prep: "Prepared") -> np.ndarray | None:
    """The learned factor's rows of the held-out points, or None without any: rows of the solver's
    own factor with ``seen: true`` (the last ones), the inductive map of the result otherwise
    (:func:`~kernlearn_cli.inductive.result_rows`)."""
    ds = prep.dataset
    if ds.heldout is None:
        return None
    if ds.meta["holdout"]["seen"]:
        return np.asarray(result.G)[ds.n - ds.heldout.n:]
    from .inductive import result_rows

    return result_rows(result, ds.heldout.X, G0=prep.G0, dataset=ds, kernel=prep.bound.get("kernel"))
