"""Running a study's experiments: here, one after the other, archiving each finished cell
(:func:`run_local`), or as one SLURM job array per experiment and a collect job (:func:`submit_slurm`)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
import warnings

from ..errors import KernlearnError
from ..study import Study
from ..threads import environment
from .layout import Layout, archived_record, history_sources, open_archive, overrides
from .plan import plan_rows, plan_text


def run_local(study: Study, layout: Layout, *, quick: bool, jobs: int, echo, deadline: float | None = None,
              rerun: tuple = ()) -> list[str]:
    """Run (or resume) the experiments here, one after the other, archiving each finished cell;
    returns the failed cells.  Archived cells are not run; ``rerun`` experiments start from an empty
    archive and recompute every cell; past ``deadline`` (``time.monotonic()``) no cell starts."""
    from ..runner import run_config
    from ..solvers.protocol import ConvergenceWarning

    failed = []
    experiments = study.selected(quick)
    histories = history_sources(study)
    for k, e in enumerate(experiments, 1):
        out = layout.out(study, e.name)
        archive = open_archive(study, layout, e, quick, fresh=e.name in rerun)
        archive.write()
        if deadline is not None and time.monotonic() >= deadline:
            break
        start = time.perf_counter()
        echo(f"[{study.paper}] {e.name} (experiment {k} of {len(experiments)}, {len(archive.records)} cell(s) "
             f"archived) ...")
        written = [time.monotonic()]

        def on_result(cell, record, archive=archive, e=e, out=out, written=written):
            archive.add(archived_record(record, out / cell.id, e.name in histories), source=str(out))
            if time.monotonic() - written[0] >= 5.0:          # a kill loses at most a few seconds of cells
                archive.write()
                written[0] = time.monotonic()

        with environment(e.env), warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)      # counted below, and marked † in every table
            _, bad = run_config(e.config, out, overrides(e, quick), jobs=min(jobs, e.jobs or jobs), per_cell=False,
                                force=e.name in rerun, skip=set(archive.records), deadline=deadline,
                                on_result=on_result)
        archive.write()
        failed += [f"{e.name} {cell}" for cell in bad]
        unconverged = sum(r["converged"] is False for r in archive.records.values())
        echo(f"[{study.paper}] {e.name}: {len(archive.records)} cell(s) archived"
             + (f", {unconverged} not converged (marked †)" if unconverged else "")
             + f", {time.perf_counter() - start:.1f}s")
    if deadline is not None and time.monotonic() >= deadline:
        echo(f"[{study.paper}] time budget spent; what is left:\n" + plan_text(study, plan_rows(study, layout, quick, jobs), jobs))
    return failed


def _sbatch(args: list[str], env: dict | None = None) -> str:
    """Submit with ``sbatch --parsable``; the job id."""
    try:
        proc = subprocess.run(["sbatch", "--parsable", *args], capture_output=True, text=True,
                              env={**os.environ, **(env or {})})
    except FileNotFoundError:
        raise KernlearnError("reproduce --launcher slurm: 'sbatch' is not on PATH; run on a SLURM login node, "
                             "or use --launcher local.") from None
    if proc.returncode != 0:
        raise KernlearnError(f"sbatch {' '.join(map(shlex.quote, args))} failed: {proc.stderr.strip() or proc.stdout}")
    return proc.stdout.strip().split(";")[0]


def submit_slurm(study: Study, layout: Layout, *, quick: bool, sbatch: dict, max_array_size: int,
                 collect_args: list[str], echo) -> list[str]:
    """One job array per experiment (cells packed so each fits ``max_array_size``) and one collect job
    that runs after all of them succeeded (``--dependency=afterok``).  With ``sbatch["cpus"]`` > 1 a
    task holds that many cells, at most the experiment's ``jobs``, and uses the CPUs as
    :func:`~kernlearn_cli.slurm.sbatch_script` rules (several cells: at once, one BLAS thread each,
    the bits of a local run).  Returns the job ids, the collect job last."""
    from ..slurm import array_job

    jobs = [(e, array_job(e.config, layout.out(study, e.name), overrides(e, quick), None,     # check every experiment
                          cells_per_task=min(sbatch["cpus"], e.jobs or sbatch["cpus"]),    # before submitting any
                          max_array_size=max_array_size, name=f"{study.paper}-{e.name}", python=sys.executable,
                          **sbatch))
            for e in study.selected(quick)]
    ids = []
    for e, job in jobs:
        script = job.write(job.out / "slurm" / f"{e.name}.sbatch")
        ids.append(_sbatch([str(script)], e.env))
        echo(f"[{study.paper}] {e.name}: job {ids[-1]}, {job.cells} cell(s) in {job.tasks} array task(s)")
    log = (layout.root / study.paper / "slurm").resolve()
    log.mkdir(parents=True, exist_ok=True)
    command = " ".join(shlex.quote(c) for c in [sys.executable, "-m", "kernlearn_cli", "reproduce",
                                                   str(study.path.resolve()), "--no-run", *collect_args])
    options = [f"--job-name={study.paper}-collect", f"--output={log}/collect_%j.out", "--chdir", os.getcwd()]
    options += [f"--{k}={v}" for k, v in sbatch.items() if k in ("partition", "account", "qos") and v]
    if ids:
        options.append("--dependency=afterok:" + ":".join(ids))
    ids.append(_sbatch([*options, "--wrap", command]))
    echo(f"[{study.paper}] collect: job {ids[-1]}" + (f", after {len(ids) - 1} job(s) succeed" if len(ids) > 1 else ""))
    return ids
