"""Running the cells of an experiment: selection (array tasks), local worker processes,
and the guard against mixing two experiments in one results folder."""

from __future__ import annotations

import json
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_all_start_methods, get_context
from pathlib import Path
from typing import Iterator

import yaml

from .config import Cell
from .errors import ConfigError, InfeasibleError, SolverError
from .io import atomic_path

#: Environment variables holding the task index of a scheduler's array job, and where
#: each scheduler starts counting (SGE and LSF number tasks from 1).
ARRAY_VARS = {"SLURM_ARRAY_TASK_ID": 0, "SGE_TASK_ID": 1, "PBS_ARRAY_INDEX": 0, "LSB_JOBINDEX": 1}
EXPERIMENT_FILE = "experiment.yaml"


def array_index_from_env() -> int | None:
    """The 0-based array task index set by SLURM, SGE, PBS or LSF, if any."""
    for var, first in ARRAY_VARS.items():
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var]) - first
    return None


def task_count(n_cells: int, cells_per_task: int) -> int:
    return -(-n_cells // cells_per_task)


def select_cells(cells: list[Cell], array_index: int, cells_per_task: int, where: str) -> list[Cell]:
    """Cells of array task K: cells K*P .. K*P + P - 1 (P = cells per task)."""
    if cells_per_task < 1:
        raise ConfigError(f"--cells-per-task must be >= 1, got {cells_per_task}.")
    tasks = task_count(len(cells), cells_per_task)
    if not 0 <= array_index < tasks:
        raise ConfigError(f"array index {array_index} is out of range: {where} has {len(cells)} cell(s), "
                          f"{cells_per_task} per task, so valid indices are 0..{tasks - 1}.")
    return cells[array_index * cells_per_task:(array_index + 1) * cells_per_task]


def claim_folder(out: Path, cfg: dict, where: str) -> None:
    """Record which experiment owns ``out``; refuse a folder written by a different config.

    The identity is the config without its grid (a grid may grow, e.g. more seeds, and
    its values are part of every cell id anyway).
    """
    identity = {k: v for k, v in cfg.items() if k != "grid"}
    path = Path(out) / EXPERIMENT_FILE
    if path.is_file():
        theirs = yaml.safe_load(path.read_text()) or {}
        theirs_id = {k: v for k, v in theirs.items() if k != "grid"}
        if json.dumps(theirs_id, sort_keys=True, default=str) != json.dumps(identity, sort_keys=True, default=str):
            diff = sorted(k for k in set(theirs_id) | set(identity) if theirs_id.get(k) != identity.get(k))
            raise ConfigError(f"results folder '{out}' was written by a different config (name "
                              f"'{theirs.get('name')}'; differs in: {', '.join(diff)}). Use another --out, "
                              f"or delete the folder to start over.")
        if theirs.get("grid") == cfg.get("grid"):
            return
    with atomic_path(path) as tmp:
        tmp.write_text(yaml.safe_dump(cfg, sort_keys=False))


def _run_one(cell: Cell, out: Path, where: str, force: bool, verbose: bool):
    """Worker entry point: (cell, record | None, error message | None)."""
    from .experiment import run_cell

    def progress(step, /, **metrics):
        """Solver callback (solver protocol): ``callback(step, name=value, ...)``."""
        print(f"    [{cell.index}] iter {step:5d}  " + "  ".join(f"{k.replace('_', ' ')} {v:.3e}"
                                                             for k, v in metrics.items()), flush=True)

    try:
        return cell, run_cell(cell, out, where=where, force=force, progress=progress if verbose else None), None
    except InfeasibleError as exc:
        return cell, None, f"infeasible (certified): {exc}"
    except SolverError as exc:
        return cell, None, f"solver breakdown: {exc}"


def run_cells(cells: list[Cell], out: Path, *, where: str, jobs: int = 1, force: bool = False,
              verbose: bool = False) -> Iterator[tuple[Cell, dict | None, str | None]]:
    """Run cells (skipping finished ones), in ``jobs`` worker processes; yield results as they finish.

    Finished cells are rerun (and replaced atomically) when ``force`` is set.
    Each yielded triple is (cell, record or None if it was already finished, error
    message if its constraints were certified infeasible or the solver broke down numerically).  Other errors (bad config, data)
    propagate at once.  Every cell limits BLAS to ``KERNLEARN_BLAS_THREADS`` threads
    (default 1), so N workers do not oversubscribe the cores and a cell gives the
    same bits whichever process runs it.
    """
    if jobs < 1:
        raise ConfigError(f"--jobs must be >= 1, got {jobs}.")
    if jobs == 1 or len(cells) <= 1:
        for cell in cells:
            yield _run_one(cell, out, where, force, verbose)
        return
    # fork (where available) starts workers with everything already imported and compiled
    ctx = get_context("fork" if "fork" in get_all_start_methods() else "spawn")
    with ProcessPoolExecutor(max_workers=min(jobs, len(cells)), mp_context=ctx) as pool:
        futures = [pool.submit(_run_one, cell, out, where, force, verbose) for cell in cells]
        try:
            for fut in as_completed(futures):
                yield fut.result()
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise


def sbatch_script(config: Path, out: Path, n_tasks: int, cells_per_task: int, *, name: str,
                  overrides: list[str], seed: int | None, partition: str | None, time: str | None,
                  mem: str | None, cpus: int, python: str) -> str:
    """An sbatch script running task K = cells K*P .. K*P+P-1 with the same ``kernlearn run``."""
    import shlex

    opts = [f"--job-name={name}", f"--array=0-{n_tasks - 1}", f"--cpus-per-task={cpus}",
            f"--output={out}/slurm/%A_%a.out"]
    opts += [f"--partition={partition}"] * bool(partition) + [f"--time={time}"] * bool(time) \
        + [f"--mem={mem}"] * bool(mem)
    cmd = [python, "-m", "kernlearn_cli", "run", str(config), "--out", str(out),
           "--cells-per-task", str(cells_per_task)]
    for item in overrides:
        cmd += ["--set", item]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    lines = ["#!/bin/bash"] + [f"#SBATCH {o}" for o in opts] + [
        "# Generated by `kernlearn slurm`; each array task runs its cells, skipping finished ones.",
        "# Afterwards: kernlearn collect " + shlex.quote(str(out)),
        "set -euo pipefail",
        f"cd {shlex.quote(os.getcwd())}",
        " ".join(shlex.quote(c) for c in cmd) + "   # task index from $SLURM_ARRAY_TASK_ID",
    ]
    return "\n".join(lines) + "\n"
