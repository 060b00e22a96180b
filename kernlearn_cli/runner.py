"""Running the cells of an experiment: selection (array tasks), local worker processes,
and the guard against mixing two experiments in one results folder."""

from __future__ import annotations

import json
import os
import re
import sys
import time
import warnings
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from multiprocessing import active_children, get_all_start_methods, get_context
from pathlib import Path
from typing import Callable, Collection, Iterable, Iterator, Sequence

import yaml

from .config import Cell
from .errors import ConfigError, InfeasibleError, KernlearnError, SolverError
from .supervise import die_with_parent
from .io import RECORD, atomic_path, cell_state, changed_inputs, describe_changes, read_record, write_failure

#: Environment variables holding the task index of a scheduler's array job, and where
#: each scheduler starts counting (SGE and LSF number tasks from 1).
ARRAY_VARS = {"SLURM_ARRAY_TASK_ID": 0, "SGE_TASK_ID": 1, "PBS_ARRAY_INDEX": 0, "LSB_JOBINDEX": 1}
EXPERIMENT_FILE = "experiment.yaml"


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
    """
    if jobs < 1:
        raise ConfigError(f"--jobs must be >= 1, got {jobs}.")
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


def stale_cells(cell_ids: Iterable[str], out: Path) -> dict[str, list]:
    """Finished cells among ``cell_ids`` whose input files differ now from those their records name
    (:func:`~kernlearn_cli.io.changed_inputs`): cell id -> the changed files."""
    stale = {}
    for cell_id in cell_ids:
        if cell_state(Path(out) / cell_id)[0] == "finished":
            changed = changed_inputs(read_record(Path(out) / cell_id / RECORD))
            if changed:
                stale[cell_id] = changed
    return stale


def warn_stale(cells: Sequence[Cell], out: Path, force: bool) -> None:
    """Say, before any work, which finished cells run again because a file they read has changed."""
    stale = {} if force else stale_cells((c.id for c in cells), out)
    if stale:
        warnings.warn(f"{describe_changes(stale)} Those {len(stale)} cell(s) are computed again from the files as "
                      f"they are now (their earlier results are replaced when the new ones are complete).",
                      stacklevel=2)


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
    from .report import convergence

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


def directive_value(value: str) -> str:
    """A value for an ``#SBATCH --opt=value`` line: double-quoted when it holds a space or a quote
    (sbatch reads directives with shell-like quoting)."""
    if re.fullmatch(r"[A-Za-z0-9_.,:/%@+=-]+", value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def task_cpus(cpus: int, cells_per_task: int) -> tuple[int, int, list[str]]:
    """How an array task of ``cells_per_task`` cells uses its ``cpus``: (``--jobs``, BLAS threads, the
    script's comment saying so).  Several cells: min(cpus, cells) at once, one BLAS thread each (the
    bits of a local run); one cell: ``cpus`` BLAS threads, which may change the last bits."""
    if cpus < 1:
        raise ConfigError(f"--cpus-per-task must be >= 1, got {cpus}.")
    if cells_per_task == 1 and cpus > 1:
        return 1, cpus, [
            f"# One cell per task: its {cpus} CPUs run BLAS threads (KERNLEARN_BLAS_THREADS). More than one BLAS",
            "# thread may change the results' last bits (records say blas_threads), against the one-thread",
            f"# determinism of local runs; for bitwise-reproducible cells use --cells-per-task {cpus} instead."]
    jobs = min(cpus, cells_per_task)
    idle = f"; {cpus - jobs} of the {cpus} CPUs idle" if cpus > jobs else ""
    return jobs, 1, [f"# {jobs} cell(s) at once (--jobs {jobs}), one BLAS thread each: the bits of a local run{idle}."]


def sbatch_script(config: Path, out: Path, n_tasks: int, cells_per_task: int, *, name: str,
                  overrides: list[str], seed: int | None, partition: str | None, time: str | None,
                  mem: str | None, cpus: int, python: str, account: str | None = None, qos: str | None = None,
                  extra: list[str] = ()) -> str:
    """An sbatch script running task K = cells K*P .. K*P+P-1 with the same ``kernlearn run``.

    Before its cells, a task runs ``kernlearn warmup`` on the config once per job: the first task
    takes a lock (``flock`` on ``OUT/slurm/.warmup.lock``) and compiles the solvers' numba kernels
    into numba's cache, the others wait for it and find a marker (``OUT/slurm/.warmup-<job id>``)
    saying it is done, so no task compiles what another is compiling.  A warmup that fails only
    costs time: the task then compiles what it needs itself.
    ``extra`` are further ``#SBATCH`` options (e.g. ``--constraint=avx2``), their values quoted like the others.
    With ``time``, a task starts no cell after 90% of it (``kernlearn run --budget``), so it stops cleanly
    and the next submission resumes.

    A task uses the ``cpus`` it asks for, as :func:`task_cpus` rules: several cells run at once, a
    single cell gets them as BLAS threads (``KERNLEARN_BLAS_THREADS``, unless set where the job is
    submitted); the script says which, and what it means for the bits.
    """
    import shlex

    jobs, threads, use = task_cpus(cpus, cells_per_task)
    opts = [f"--job-name={directive_value(name)}", f"--array=0-{n_tasks - 1}", f"--cpus-per-task={cpus}",
            f"--output={directive_value(f'{out}/slurm/%A_%a.out')}"]
    for key, value in (("partition", partition), ("time", time), ("mem", mem), ("account", account),
                       ("qos", qos)):
        if value:
            opts.append(f"--{key}={directive_value(value)}")
    for item in extra:
        if not item.startswith("-"):
            raise ConfigError(f"--sbatch-arg '{item}': expected an sbatch option such as --constraint=avx2.")
        key, eq, value = item.partition("=")
        opts.append(f"{key}={directive_value(value)}" if eq else item)
    sets = [arg for item in overrides for arg in ("--set", item)]
    warm = [python, "-m", "kernlearn_cli", "warmup", str(config), *sets]
    cmd = [python, "-m", "kernlearn_cli", "run", str(config), "--out", str(out),
           "--cells-per-task", str(cells_per_task), "--jobs", str(jobs), *sets]
    if time:                                   # start no cell in the last tenth of the task's --time
        limit = 60.0 * int(time) if time.strip().isdigit() else parse_budget(time, "--time")
        cmd += ["--budget", f"{int(0.9 * limit)}s"]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    quote = lambda args: " ".join(shlex.quote(c) for c in args)  # noqa: E731
    lines = ["#!/bin/bash"] + [f"#SBATCH {o}" for o in opts] + [
        "# Generated by `kernlearn slurm`; each array task runs its cells, skipping finished ones.",
        "# Afterwards: kernlearn collect " + shlex.quote(str(out)),
        "set -euo pipefail",
        f"cd {shlex.quote(os.getcwd())}",
        "# Compile the solvers' numba kernels once per job: the first task, under the lock; the others wait,",
        "# then load them from numba's cache.",
        f"warmed={shlex.quote(f'{out}/slurm/.warmup-')}\"${{SLURM_ARRAY_JOB_ID:-0}}\"",
        f'(flock 9 && {{ [ -e "$warmed" ] || {{ {quote(warm)} && touch "$warmed"; }}; }}) '
        f"9>{shlex.quote(f'{out}/slurm/.warmup.lock')} \\",
        '  || echo "kernlearn warmup did not finish; this task compiles the kernels it needs" >&2',
        *use,
        "# (a KERNLEARN_BLAS_THREADS set where the job is submitted, e.g. a study's env, is kept)",
        f'export KERNLEARN_BLAS_THREADS="${{KERNLEARN_BLAS_THREADS:-{threads}}}"',
        quote(cmd) + "   # task index from $SLURM_ARRAY_TASK_ID",
    ]
    return "\n".join(lines) + "\n"
