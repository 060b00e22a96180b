"""SLURM job arrays: the sbatch script of an experiment's cells, one array task per cell (or pack of
cells), and :func:`array_job`, which both ``kernlearn slurm`` and ``kernlearn reproduce --launcher
slurm`` use to check an experiment and write its script."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import ConfigError
from .runner import parse_budget


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
                  extra: list[str] = (), max_running: int | None = None) -> str:
    """An sbatch script running task K = cells K*P .. K*P+P-1 with the same ``kernlearn run``.

    Before its cells, a task runs ``kernlearn warmup`` on the config once per job: the first task
    takes a lock (``flock`` on ``OUT/slurm/.warmup.lock``) and compiles the solvers' numba kernels
    into numba's cache, the others wait for it and find a marker (``OUT/slurm/.warmup-<job id>``)
    saying it is done, so no task compiles what another is compiling.  A warmup that fails only
    costs time: the task then compiles what it needs itself.
    ``extra`` are further ``#SBATCH`` options (e.g. ``--constraint=avx2``), their values quoted like the others.
    ``max_running`` throttles the array: at most that many of its tasks run at once (``--array=0-K%N``).
    With ``time``, a task starts no cell after 90% of it (``kernlearn run --budget``), so it stops cleanly
    and the next submission resumes.

    A preempted task is requeued (``--requeue``) and its log appended to (``--open-mode=append``): SLURM
    ends it with SIGTERM, which ``kernlearn run`` takes like Ctrl-C (finished cells kept, exit 143), and
    the requeued task skips the cells finished before.

    A task uses the ``cpus`` it asks for, as :func:`task_cpus` rules: several cells run at once, a
    single cell gets them as BLAS threads (``KERNLEARN_BLAS_THREADS``, unless set where the job is
    submitted); the script says which, and what it means for the bits.
    """
    import shlex

    jobs, threads, use = task_cpus(cpus, cells_per_task)
    if max_running is not None and max_running < 1:
        raise ConfigError(f"--max-running must be >= 1 (array tasks running at once), got {max_running}.")
    throttle = f"%{max_running}" if max_running is not None else ""
    opts = [f"--job-name={directive_value(name)}", f"--array=0-{n_tasks - 1}{throttle}", f"--cpus-per-task={cpus}",
            f"--output={directive_value(f'{out}/slurm/%A_%a.out')}", "--open-mode=append", "--requeue"]
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
        "# Generated by `kernlearn slurm`; each array task runs its cells, skipping finished ones (so a task",
        "# requeued after preemption resumes where it stopped; its log is appended to).",
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


@dataclass(frozen=True)
class ArrayJob:
    """An experiment's job array, checked and ready to write (:func:`array_job`).

    Attributes
    ----------
    name : str
        The job's name.
    out : Path
        The results folder (absolute).
    cells, tasks, per_task : int
        The experiment's cells, the array's tasks and the cells per task.
    text : str
        The sbatch script (:func:`sbatch_script`).
    """

    name: str
    out: Path
    cells: int
    tasks: int
    per_task: int
    text: str

    def write(self, script: Path) -> Path:
        """Write the script to ``script`` atomically, creating ``OUT/slurm`` (the tasks' logs and warmup
        lock go there); returns ``script``."""
        from .atomic import atomic_path

        (self.out / "slurm").mkdir(parents=True, exist_ok=True)
        with atomic_path(script) as tmp:
            tmp.write_text(self.text)
        return script


def array_job(config: Path, out: Path | None, overrides: list[str], seed: int | None, *, cells_per_task: int,
              max_array_size: int, cpus: int, name: str | None = None, python: str, **options) -> ArrayJob:
    """Check an experiment for a job array and make its script; nothing is written.

    The one launch path of ``kernlearn slurm`` and ``kernlearn reproduce --launcher slurm``: the config
    and its cells are checked (:func:`~kernlearn_cli.config.load_cells`), then ``--cpus-per-task`` and
    ``--cells-per-task``, the cells are packed so that the array has at most ``max_array_size`` tasks
    (:func:`~kernlearn_cli.runner.pack_cells`), the results folder must take the config
    (:func:`~kernlearn_cli.results.check_folder`), and the script is made (:func:`sbatch_script`,
    which checks the other sbatch options).

    Parameters
    ----------
    config : Path
        The experiment's YAML config.
    out : Path or None
        Its results folder (default ``results/<name>``).
    overrides : list of str
        Its ``--set`` values.
    seed : int or None
        The seed of every cell (``--seed``), or None.
    cells_per_task, max_array_size, cpus : int
        Cells per array task at least, the most tasks the cluster accepts, and CPUs per task.
    name : str or None
        The job's name (default the config's name).
    python : str
        The Python interpreter the tasks run.
    **options
        The other keyword arguments of :func:`sbatch_script` (``partition``, ``time``, ``mem``,
        ``account``, ``qos``, ``extra``, ``max_running``).

    Returns
    -------
    ArrayJob
        The checked job; :meth:`ArrayJob.write` writes its script.
    """
    from .config import load_cells
    from .results import check_folder, migrate_folder
    from .runner import pack_cells, select_cells, task_count

    cfg, cells = load_cells(config, overrides, seed)
    task_cpus(cpus, cells_per_task)                               # validates --cpus-per-task
    select_cells(cells, 0, cells_per_task, str(config))           # validates --cells-per-task
    per_task = pack_cells(len(cells), cells_per_task, max_array_size)
    out = Path(out or Path("results") / cfg["name"]).resolve()
    check_folder(out, cfg)
    migrate_folder(out)                   # once, here, not by the tasks at once
    tasks = task_count(len(cells), per_task)
    name = name or cfg["name"]
    text = sbatch_script(Path(config).resolve(), out, tasks, per_task, name=name, overrides=list(overrides),
                         seed=seed, cpus=cpus, python=python, **options)
    return ArrayJob(name, out, len(cells), tasks, per_task, text)
