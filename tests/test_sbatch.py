"""A SLURM array task uses the CPUs it asks for (issue 44, item 11): several cells per task run at
once (``--jobs``) with one BLAS thread each; a single cell gets them as BLAS threads, and the script
says that this may change the last bits.  The generated text is tested here; tests/test_slurm.py
submits scripts to a real cluster."""

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from kernlearn_cli.errors import ConfigError
from kernlearn_cli.slurm import sbatch_script

from helpers import REPO


def script(tmp_path, cpus, cells_per_task):
    return sbatch_script(tmp_path / "c.yaml", tmp_path / "out", 3, cells_per_task, name="t", overrides=[], seed=None,
                         partition=None, time=None, mem=None, cpus=cpus, python="/py")


def run_line(text):
    return next(line for line in text.splitlines() if "kernlearn_cli run" in line)


def threads_in_task(text, env=None):
    """KERNLEARN_BLAS_THREADS as the task's shell sets it (``env``: the submitting environment)."""
    export = next(line for line in text.splitlines() if line.startswith("export KERNLEARN_BLAS_THREADS="))
    env = {k: v for k, v in os.environ.items() if k != "KERNLEARN_BLAS_THREADS"} | (env or {})
    return subprocess.run(["bash", "-c", f"set -u; {export}; echo $KERNLEARN_BLAS_THREADS"], capture_output=True,
                          text=True, env=env).stdout.strip()


@pytest.mark.slow
@pytest.mark.parametrize(("cpus", "cells", "jobs", "threads"), [(1, 1, 1, 1), (1, 5, 1, 1), (4, 2, 2, 1), (4, 8, 4, 1),
                                                                 (4, 1, 1, 4)])
def test_a_task_uses_the_cpus_it_asks_for(tmp_path, cpus, cells, jobs, threads):
    text = script(tmp_path, cpus, cells)
    assert f"#SBATCH --cpus-per-task={cpus}" in text
    assert f"--cells-per-task {cells} --jobs {jobs}" in run_line(text)
    assert threads_in_task(text) == str(threads)
    assert subprocess.run(["bash", "-n"], input=text, text=True).returncode == 0


@pytest.mark.slow
def test_the_script_says_what_the_cpus_do_and_what_blas_threads_cost(tmp_path):
    single = script(tmp_path, 4, 1)
    assert "its 4 CPUs run BLAS threads" in single and "may change the results' last bits" in single
    assert "use --cells-per-task 4 instead" in single
    several = script(tmp_path, 4, 2)
    assert "# 2 cell(s) at once (--jobs 2), one BLAS thread each: the bits of a local run; 2 of the 4 CPUs idle." \
        in several and "last bits" not in several
    assert threads_in_task(single, {"KERNLEARN_BLAS_THREADS": "2"}) == "2"      # a study's env is kept
    with pytest.raises(ConfigError, match="--cpus-per-task must be >= 1, got 0"):
        script(tmp_path, 0, 2)


@pytest.mark.slow

def fake_sbatch(tmp_path, body: str):
    """An ``sbatch`` stand-in running the shell ``body`` (it answers a job id), first on PATH: (its path, env)."""
    fake = tmp_path / "bin" / "sbatch"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\n{body}\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    return fake, {**os.environ, "PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}"}


def test_reproduce_on_slurm_asks_for_cpus_and_fills_them(tmp_path):
    """reproduce --launcher slurm --cpus-per-task 4 (it hard-coded one CPU): N cells per task, run at once."""
    fake, env = fake_sbatch(tmp_path, 'echo "$@" >> "$(dirname "$0")/calls"\necho 4242')
    study = REPO / "configs" / "papers" / "kulis2006" / "study.yaml"
    res = subprocess.run([sys.executable, "-m", "kernlearn_cli", "reproduce", str(study), "--quick", "--launcher", "slurm", "--cpus-per-task", "4", "--results", str(tmp_path / "results")],
                         capture_output=True, text=True, env=env, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    scripts = sorted((tmp_path / "results").rglob("*.sbatch"))
    assert scripts and len((fake.parent / "calls").read_text().splitlines()) == len(scripts) + 1   # + collect
    for path in scripts:
        text = path.read_text()
        assert "#SBATCH --cpus-per-task=4" in text and "--cells-per-task 4 --jobs 4" in run_line(text)
        assert threads_in_task(text) == "1"


def test_cli_slurm_cpus_per_task(tmp_path, inproc):
    cfg = REPO / "configs" / "quick.yaml"
    code, stdout, stderr = inproc("slurm", cfg, "--out", tmp_path / "out", "--cpus-per-task", 4, "--cells-per-task", 3)
    assert code == 0, stderr
    text = Path(stdout.strip()).read_text()
    assert "#SBATCH --cpus-per-task=4" in text and "--cells-per-task 3 --jobs 3" in run_line(text)


def test_one_array_launcher_checks_everything_before_it_writes(tmp_path, inproc):
    """``kernlearn slurm`` and ``reproduce --launcher slurm`` share one launch path (issue 46, item 2):
    ``array_job`` checks the config, the CPUs, the cells per task and the folder, packs the cells, and
    writes nothing until ``write``; the CLI's script is its text."""
    from kernlearn_cli.config import load_cells
    from kernlearn_cli.slurm import array_job

    cfg = REPO / "configs" / "quick.yaml"
    n = len(load_cells(cfg)[1])
    options = dict(partition=None, time=None, mem=None)
    job = array_job(cfg, tmp_path / "out", [], None, cells_per_task=1, max_array_size=2, cpus=1, python=sys.executable,
                    **options)
    assert (job.name, job.cells, job.per_task, job.tasks) == ("quick_iris_burg", n, -(-n // 2), 2)
    assert "#SBATCH --array=0-1" in job.text and not (tmp_path / "out").exists()
    with pytest.raises(ConfigError, match="--cpus-per-task must be >= 1, got 0"):     # reproduce's cells per task is
        array_job(cfg, tmp_path / "out", [], None, cells_per_task=0, max_array_size=2, cpus=0, python="/py",
                  **options)                                                              # min(cpus, jobs)
    with pytest.raises(ConfigError, match="--cells-per-task must be >= 1, got 0"):
        array_job(cfg, tmp_path / "out", [], None, cells_per_task=0, max_array_size=2, cpus=1, python="/py", **options)
    assert not (tmp_path / "out").exists()
    code, stdout, stderr = inproc("slurm", cfg, "--out", tmp_path / "out", "--max-array-size", 2)
    assert code == 0, stderr
    assert Path(stdout.strip()) == (tmp_path / "out" / "slurm" / "quick_iris_burg.sbatch").resolve()
    assert Path(stdout.strip()).read_text() == job.text


def test_max_running_throttles_the_array_and_tasks_are_requeued(tmp_path, inproc):
    """``--max-running N`` (issue 48, item 4) on both launchers: ``--array=0-K%N``; every script asks SLURM
    to requeue a preempted task and appends to its log.  A throttle below 1 is refused, naming it."""
    cfg = REPO / "configs" / "quick.yaml"
    code, stdout, stderr = inproc("slurm", cfg, "--out", tmp_path / "out", "--cells-per-task", 3, "--max-running", 2)
    assert code == 0, stderr
    lines = Path(stdout.strip()).read_text().splitlines()
    assert "#SBATCH --array=0-2%2" in lines and "#SBATCH --requeue" in lines and "#SBATCH --open-mode=append" in lines
    assert "#SBATCH --array=0-2" in script(tmp_path, 1, 3).splitlines()             # no throttle unless asked
    code, _, stderr = inproc("slurm", cfg, "--out", tmp_path / "zero", "--max-running", 0)
    assert code == 2 and "--max-running must be >= 1 (array tasks running at once), got 0." in stderr
    assert not (tmp_path / "zero").exists()
    _, env = fake_sbatch(tmp_path, "echo 4242")
    study = REPO / "configs" / "papers" / "kulis2006" / "study.yaml"
    res = subprocess.run([sys.executable, "-m", "kernlearn_cli", "reproduce", str(study), "--quick", "--launcher",
                          "slurm", "--max-running", "3", "--results", str(tmp_path / "results")],
                         capture_output=True, text=True, env=env, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    scripts = sorted((tmp_path / "results").rglob("*.sbatch"))
    assert scripts and all(re.search(r"^#SBATCH --array=0-\d+%3$", p.read_text(), re.M) for p in scripts)
