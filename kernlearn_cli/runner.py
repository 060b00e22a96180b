"""Running the cells of an experiment: selection (array tasks) and local worker processes.

The results folder they write into (its ``experiment.yaml``, the guard against mixing two
experiments in one folder) is :mod:`kernlearn_cli.results`; the SLURM script of an array job,
:mod:`kernlearn_cli.slurm`."""

from __future__ import annotations

import os
import re
import sys
import time
import warnings
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from multiprocessing import active_children, get_all_start_methods, get_context
from pathlib import Path
from typing import Callable, Collection, Iterable, Iterator, Sequence

from .codehash import changed_code
from .config import Cell, bind_cell
from .errors import ConfigError, InfeasibleError, KernlearnError, SolverError
from .inputs import changed_inputs, describe_changes
from .records import RECORD, cell_state, read_record, write_failure
from .resources import warn_if_peak_unknown
from .results import check_folder, claim_folder, migrate_folder, release_folder
from .supervise import die_with_parent

#: Environment variables holding the task index of a scheduler's array job, and where
#: each scheduler starts counting (SGE and LSF number tasks from 1).
ARRAY_VARS = {"SLURM_ARRAY_TASK_ID": 0, "SGE_TASK_ID": 1, "PBS_ARRAY_INDEX": 0, "LSB_JOBINDEX": 1}


#: Values a scheduler sets in a job that is not an array job (SGE: "undefined"; LSF: 0).
NOT_AN_ARRAY = {"SGE_TASK_ID": ("undefined",), "LSB_JOBINDEX": ("0",)}


def array_index_from_env() -> int | None:
    """The 0-based array task index set by SLURM, SGE, PBS or LSF, if any.

    A set but malformed value (``SLURM_ARRAY_TASK_ID=abc``, ``SGE_TASK_ID=0``) is an error naming the
    variable: running every cell in each task of an array would be silently wrong.
    """
    for var, first in ARRAY_VARS.items():
        text = os.environ.get(var)
        if text is None or text.strip() in NOT_AN_ARRAY.get(var, ()) or not text.strip():
            continue
        if not text.strip().isdigit() or int(text) < first:
            raise ConfigError(f"${var}={text!r} is not a valid array task index: expected an integer >= {first} "
                              f"({'numbered from 1' if first else 'numbered from 0'}). Unset it, or pass "
                              f"--array-index K to choose the task yourself.")
        return int(text) - first
    return None


def parse_budget(text: str, option: str = "--budget") -> float:
    """Seconds of a time budget: ``90s``, ``40m``, ``2h``, ``1h30m``, a number of seconds, or SLURM's
    ``--time`` forms (``MM``, ``MM:SS``, ``HH:MM:SS``, ``D-HH``, ``D-HH:MM``, ``D-HH:MM:SS``)."""
    value = str(text).strip().lower()
    units = re.fullmatch(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s)?", value)
    if value and units and any(units.groups()):
        h, m, sec = (float(g) if g else 0.0 for g in units.groups())
        return 3600 * h + 60 * m + sec
    slurm = re.fullmatch(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?", value)
    if slurm:
        days, a, b, c = slurm.groups()
        if days is not None:                     # D-HH[:MM[:SS]]
            parts = [int(a), int(b or 0), int(c or 0)]
        elif c is not None:                      # HH:MM:SS
            parts = [int(a), int(b), int(c)]
        elif b is not None:                      # MM:SS
            parts = [0, int(a), int(b)]
        else:                                    # MM (SLURM) -- a bare number here means seconds
            return float(a)
        return 86400 * int(days or 0) + 3600 * parts[0] + 60 * parts[1] + parts[2]
    raise ConfigError(f"{option} '{text}': expected a duration such as 90s, 40m, 2h, 1h30m, or HH:MM:SS.")


def task_count(n_cells: int, cells_per_task: int) -> int:
    return -(-n_cells // cells_per_task)


def pack_cells(n_cells: int, cells_per_task: int, max_array_size: int) -> int:
    """Cells per array task: at least ``cells_per_task``, and enough that the array has at most
    ``max_array_size`` tasks (SLURM's MaxArraySize bounds the indices: 0 .. max - 1)."""
    if max_array_size < 1:
        raise ConfigError(f"--max-array-size must be >= 1, got {max_array_size}.")
    return max(cells_per_task, -(-n_cells // max_array_size))


def select_cells(cells: Sequence[Cell], array_index: int, cells_per_task: int, where: str) -> list[Cell]:
    """Cells of array task K: cells K*P .. K*P + P - 1 (P = cells per task).

    ``cells`` is a list or a :class:`~kernlearn_cli.config.Grid`, which makes only the task's cells.
    """
    if cells_per_task < 1:
        raise ConfigError(f"--cells-per-task must be >= 1, got {cells_per_task}.")
    tasks = task_count(len(cells), cells_per_task)
    if not 0 <= array_index < tasks:
        raise ConfigError(f"array index {array_index} is out of range: {where} has {len(cells)} cell(s), "
                          f"{cells_per_task} per task, so valid indices are 0..{tasks - 1}.")
    return cells[array_index * cells_per_task:(array_index + 1) * cells_per_task]


def _run_one(cell: Cell, out: Path, where: str, force: bool, progress, workers: int = 1):
    """Worker entry point: (cell, record | None, error message | None).

    An error of the cell's own data (:class:`~kernlearn_cli.errors.DataError`: its constraints, its
    seed's draw; :class:`~kernlearn_cli.errors.InfeasibleError`, :class:`~kernlearn_cli.errors.SolverError`:
    the solver's verdict on them) fails the cell with ``failed.json``, and the others run.  A
    :class:`~kernlearn_cli.errors.ConfigError` (a setting the solver refuses) stops the run, naming the
    cell.  ``progress``: the ``-v`` callback, or True in a worker process (lines,
    :class:`~kernlearn_cli.progress.IterationLines`), or None.  ``workers``: cells run at once.
    """
    from .experiment import run_cell
    from .progress import IterationLines

    if progress is True:
        progress = IterationLines(cell.id, iteration_limit(cell))
    try:
        return cell, run_cell(cell, out, where=where, force=force, progress=progress, workers=workers), None
    except ConfigError as exc:
        raise ConfigError(f"{cell.label(where)}, seed {cell.seed}: {exc}") from None
    except KernlearnError as exc:
        kind = ("infeasible (certified)" if isinstance(exc, InfeasibleError) else
                "solver breakdown" if isinstance(exc, SolverError) else "data error")
        error = f"{kind}: {exc}"
        if cell_state(Path(out) / cell.id)[0] != "finished":      # a finished cell rerun with --force keeps its result
            write_failure(Path(out) / cell.id, {"cell": cell.id, "index": cell.index, "seed": cell.seed, "kind": kind,
                                                "error": str(exc), "certificate": getattr(exc, "certificate", {})})
        return cell, None, error
    finally:
        if hasattr(progress, "done"):
            progress.done()


def iteration_limit(cell: Cell) -> tuple[str, int] | None:
    """The cell's solver iteration limit (its registry entry's ``budget`` setting: its name and value,
    else the solver's default), for ``k of max``."""
    from .progress import iteration_limit as limit
    from .registry import solvers

    settings = dict(cell.config["solver"])
    try:
        entry = solvers.get(settings["name"])
    except KernlearnError:
        return None
    return limit({**{k: p.default for k, p in entry.parameters().items()}, **settings}, entry.budget)


def run_cells(cells: list[Cell], out: Path, *, where: str, jobs: int = 1, force: bool = False,
              progress=None, deadline: float | None = None) -> Iterator[tuple[Cell, dict | None, str | None]]:
    """Run cells (skipping finished ones), in ``jobs`` worker processes; yield results as they finish.

    Finished cells are rerun (and replaced atomically) when ``force`` is set.
    Each yielded triple is (cell, record or None if it was already finished, error
    message if the cell failed: its constraints certified infeasible, a numerical breakdown, or
    its own data refused -- each written to the cell's ``failed.json``; the other cells still run).
    ``progress``: a :class:`~kernlearn_cli.progress.RunProgress` whose ``-v`` iteration callbacks
    the cells get (with workers: lines), or None.  Every cell limits BLAS to
    ``KERNLEARN_BLAS_THREADS`` threads (default 1), so N workers do not oversubscribe the cores
    and a cell gives the same bits whichever process runs it.  ``deadline`` (``time.monotonic()``):
    no cell starts after it (the cells running then finish); the cells not started are not yielded.
    Each record's ``peak_rss_bytes`` is the peak memory of the process that ran the cell, while it ran
    (null, said once here, where the high-water mark cannot be reset).
    """
    if jobs < 1:
        raise ConfigError(f"--jobs must be >= 1, got {jobs}.")
    warn_if_peak_unknown()
    verbose = progress is not None and progress.verbose
    spent = lambda: deadline is not None and time.monotonic() >= deadline  # noqa: E731
    if jobs == 1 or len(cells) <= 1:
        for cell in cells:
            if spent():
                return
            yield _run_one(cell, out, where, force, progress.iterations(cell, iteration_limit(cell)) if verbose
                           else None)
        return
    # fork (where available) starts workers with everything already imported and compiled
    ctx = get_context("fork" if "fork" in get_all_start_methods() else "spawn")
    waiting = list(reversed(cells))
    workers = min(jobs, len(cells))
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=die_with_parent) as pool:
        running: set = set()
        try:
            while waiting or running:      # at most `jobs` cells submitted, so a spent budget starts no more
                while waiting and len(running) < jobs and not spent():
                    running.add(pool.submit(_run_one, waiting.pop(), out, where, force, True if verbose else None,
                                            workers))
                if not running:
                    return
                done, running = wait(running, return_when=FIRST_COMPLETED)
                for fut in done:
                    yield fut.result()
        except BaseException:             # Ctrl-C: end the workers now, whatever they are doing
            for fut in running:
                fut.cancel()
            for worker in active_children():
                worker.terminate()
            raise


def run_config(config: Path, out: Path | None, overrides: Sequence[str], seed: int | None = None, *,
               jobs: int = 1, array_index: int | None = None, cells_per_task: int = 1, force: bool = False,
               verbose: int = 0, per_cell: bool = True, skip: Collection[str] = (), deadline: float | None = None,
               on_result: Callable | None = None) -> tuple[Path, list[str]]:
    """``kernlearn run`` without the table: check, claim the folder, run the (selected) cells; returns
    the results folder and the failed cells (the others are finished, or not started: ``deadline``).

    ``per_cell``: a line per cell.  ``skip``: ids of cells finished elsewhere (archived), not run.
    ``deadline`` (``time.monotonic()``): no cell starts after it.  ``on_result(cell, record)``: called
    in this process as each cell finishes.
    """
    from .config import Grid, expand, load
    from .experiment import check_cells

    cfg = load(config, overrides or [], seed, every_cell=array_index is None)   # a task checks its own cells
    out = out or Path("results") / cfg["name"]
    cells = expand(cfg) if array_index is None else select_cells(Grid(cfg), array_index, cells_per_task,
                                                                  str(config))
    check_folder(out, cfg)                 # refuse a folder of another experiment before any work
    check_cells(cells, str(config))        # every setting, and the data it names, before anything is written
    cells = [c for c in cells if c.id not in set(skip)]
    migrate_folder(out)                    # cells named by older ids are found, not run again
    warn_stale(cells, out, force)
    claimed = claim_folder(out, cfg)
    try:
        failed = run_with_progress(cfg, cells, out, str(config), jobs=jobs, force=force, verbose=verbose,
                                   per_cell=per_cell, deadline=deadline, on_result=on_result,
                                   archived=len(skip))
    except BaseException:
        if claimed:                        # unless a cell finished, leave the folder as it was
            release_folder(out)
        raise
    return out, failed


def stale_cells(cells: Iterable[Cell], out: Path) -> tuple[dict[str, list], dict[str, list[str]]]:
    """Finished cells among ``cells`` that run again: (cell id -> the input files that differ now from
    those its record names, :func:`~kernlearn_cli.inputs.changed_inputs`; cell id -> the components whose
    code differs from the code now, :func:`~kernlearn_cli.codehash.changed_code`)."""
    inputs, code = {}, {}
    for cell in cells:
        if cell_state(Path(out) / cell.id)[0] == "finished":
            record = read_record(Path(out) / cell.id / RECORD)
            if changed := changed_inputs(record):
                inputs[cell.id] = changed
            if changed := changed_code(record, bind_cell(cell, "config")):
                code[cell.id] = changed
    return inputs, code


def describe_code_changes(code: dict[str, list[str]]) -> str:
    """``cell -> changed_code(...)`` as one sentence per changed component, with how many cells it computed."""
    by_change: dict[str, list[str]] = {}
    for cell_id, changes in code.items():
        for change in changes:
            by_change.setdefault(change, []).append(cell_id)
    return " ".join(f"{len(cells)} finished cell(s) were computed by other code than runs now: {change} "
                    f"(e.g. {cells[0]})." for change, cells in by_change.items())


def warn_stale(cells: Sequence[Cell], out: Path, force: bool) -> None:
    """Say, before any work, which finished cells run again because a file they read, or the code of a
    component they ran, has changed."""
    inputs, code = ({}, {}) if force else stale_cells(cells, out)
    if inputs:
        warnings.warn(f"{describe_changes(inputs)} Those {len(inputs)} cell(s) are computed again from the files as "
                      f"they are now (their earlier results are replaced when the new ones are complete).",
                      stacklevel=2)
    if code:
        warnings.warn(f"{describe_code_changes(code)} Those {len(code)} cell(s) are computed again by the code as it "
                      f"is now (their earlier results are replaced when the new ones are complete).", stacklevel=2)


def failed_error(failed: list[str]) -> KernlearnError:
    """The error ``kernlearn run`` exits with when cells failed (``failed`` as ``run_config`` returns it)."""
    return KernlearnError(f"{len(failed)} cell(s) failed and wrote no result (each reason is printed above and "
                          f"kept in its failed.json; the other cells are finished and in the table); the first: "
                          f"{failed[0]}")


def run_with_progress(cfg: dict, cells, out: Path, where: str, *, jobs: int, force: bool, verbose: int,
                      per_cell: bool = True, deadline: float | None = None, on_result: Callable | None = None,
                      archived: int = 0) -> list[str]:
    """Run the cells with progress (:class:`~kernlearn_cli.progress.RunProgress`: a bar on a terminal,
    lines in a log, one line on Ctrl-C) and (``per_cell``) one line per cell; returns the failed cells.
    ``deadline``, ``on_result``: :func:`run_config`; ``archived``: cells left out as finished elsewhere."""
    from .progress import RunProgress
    from .report.records import convergence

    def describe(record: dict) -> str:
        metrics = "  ".join(f"{k}={v:.4f}" for k, v in record["metrics"].items()
                            if not k.endswith("_std") and isinstance(v, (int, float)))
        return (f"{record['solver']} {record['iterations']} it {record['seconds']:.2f}s {convergence(record)}"
                f"  {metrics}")

    with RunProgress(cfg["name"], len(cells), per_cell=per_cell, verbose=bool(verbose)) as progress:
        for cell, record, error in run_cells(cells, out, where=where, jobs=jobs, force=force, progress=progress,
                                             deadline=deadline):
            progress.cell(cell, record, error, describe)
            if record is not None and on_result is not None:
                on_result(cell, record)
    late = len(cells) - progress.finished
    print(f"{progress.run} cell(s) run, {progress.skipped} already finished, {len(progress.failed)} failed, "
          + (f"{archived} archived, " if archived else "") + (f"{late} not started (time budget spent), " if late else "")
          + f"results in {out}" + ("; each failure's reason is in its cell's failed.json" if progress.failed else ""),
          file=sys.stderr)
    return progress.failed
