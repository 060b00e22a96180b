"""A real SLURM job array: generate the script with ``kernlearn slurm``, submit it to a
one-node cluster on localhost, ``collect``, and compare with the same config run locally.

The cluster comes from ``../shared/slurm/start-local-cluster.sh`` (beside the clone; it
needs root and installs slurm-wlm and munge from the distribution's packages when they
are missing). When the script is absent, we are not root, or SLURM's daemons cannot be
started here, the tests are skipped and the reason says exactly what failed.

Run only these: ``pytest -m slurm``; leave them out: ``pytest -m "not slurm"``.
"""

import csv
import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest
import yaml

SLURM_DIR = Path(__file__).resolve().parents[2] / "shared" / "slurm"
START, STOP = SLURM_DIR / "start-local-cluster.sh", SLURM_DIR / "stop-local-cluster.sh"
PORT = "16917"                 # not the script's default 16817, so a cluster someone else runs is left alone
START_TIMEOUT = 150            # s; includes apt-get install on a fresh machine (~1 min)
JOB_TIMEOUT = 300              # s for one array job to leave the queue
#: Scheduler variables that would make a local ``kernlearn run`` pick a single array task.
ARRAY_VARS = ("SLURM_ARRAY_TASK_ID", "SGE_TASK_ID", "PBS_ARRAY_INDEX", "LSB_JOBINDEX")


pytestmark = pytest.mark.slurm

CONFIG = {
    "name": "iris_slurm", "seed": 0,
    "grid": {"constraints.count": [10, 30], "seed": "range(3)"},          # 6 cells
    "dataset": {"name": "iris"}, "kernel": {"name": "linear"},
    "constraints": {"name": "idealized_pairs", "count": 10},
    "solver": {"name": "burg", "slack": 1.0},
    "evaluate": [{"name": "kernel_kmeans_nmi"}, {"name": "knn_accuracy"}],
}
N_CELLS = 6


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ARRAY_VARS}
    env.update(extra)
    return env


def kernlearn(*args, cwd=None, env=None):
    return subprocess.run([sys.executable, "-m", "kernlearn_cli", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, env=env or clean_env(), timeout=300)


def tail(text: str, lines: int = 25) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def cluster_logs(cluster: Path) -> str:
    parts = []
    for log in sorted((cluster / "log").glob("*.log")):
        parts.append(f"--- {log} (tail) ---\n{tail(log.read_text(errors='replace'), 40)}")
    return "\n".join(parts)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """SLURM_CONF of a one-node cluster started for this module; stopped at teardown."""
    if not START.is_file() or not STOP.is_file():
        pytest.skip(f"no local-cluster scripts at {SLURM_DIR}")
    if os.geteuid() != 0:
        pytest.skip(f"{START.name} starts munged, slurmctld and slurmd as root; running as uid {os.geteuid()}")
    if sys.platform != "linux":
        pytest.skip(f"{START.name} is for Linux (Debian), not {sys.platform}")
    base = tmp_path_factory.mktemp("slurm")
    directory = base / "cluster"
    env = {**os.environ, "SLURM_TEST_PORT": PORT, "DEBIAN_FRONTEND": "noninteractive"}
    # The daemons fork into the background; their inherited stdout/stderr must not be pipes we
    # wait on, so the script writes to files.
    out_log, err_log = base / "start.stdout", base / "start.stderr"
    t0 = time.monotonic()
    try:
        with open(out_log, "w") as so, open(err_log, "w") as se:
            try:
                res = subprocess.run(["bash", str(START), str(directory)], stdout=so, stderr=se, env=env,
                                     stdin=subprocess.DEVNULL, timeout=START_TIMEOUT)
                failure = None if res.returncode == 0 else f"exited with status {res.returncode}"
            except subprocess.TimeoutExpired:
                failure = f"did not finish within {START_TIMEOUT} s"
        stdout, stderr = out_log.read_text(errors="replace"), err_log.read_text(errors="replace")
        line = next((ln for ln in reversed(stdout.splitlines()) if ln.startswith("export SLURM_CONF=")), None)
        if failure is None and line is None:
            failure = "printed no 'export SLURM_CONF=...' line"
        if failure is not None:
            pytest.skip(f"SLURM cluster could not be started here: {START} {directory} {failure}.\n"
                        f"stderr (tail):\n{tail(stderr)}\nstdout (tail):\n{tail(stdout)}\n"
                        f"{cluster_logs(directory) if directory.is_dir() else ''}")
        conf = line.split("=", 1)[1].strip()
        print(f"SLURM cluster up in {time.monotonic() - t0:.1f} s (SLURM_CONF={conf})")
        yield {"conf": conf, "dir": directory}
    finally:
        if directory.is_dir():
            subprocess.run(["bash", str(STOP), str(directory)], capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def config_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("cfg") / "iris_slurm.yaml"
    path.write_text(yaml.safe_dump(CONFIG, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def local_run(config_path, tmp_path_factory):
    """The same config run locally, uninterrupted, in one process."""
    out = tmp_path_factory.mktemp("local") / "out"
    res = kernlearn("run", config_path, "--out", out, cwd=config_path.parent)
    assert res.returncode == 0, res.stderr
    assert f"{N_CELLS} cell(s) run" in res.stderr, res.stderr
    return out


def squeue_empty(job: str, env: dict) -> bool:
    res = subprocess.run(["squeue", "-h", "-j", job], capture_output=True, text=True, env=env, timeout=30)
    if res.returncode != 0:             # the job has left the controller's memory: done
        return "Invalid job id" in res.stderr or not res.stderr.strip()
    return not res.stdout.strip()


def job_report(job: str, out: Path, cluster: dict, env: dict) -> str:
    """Everything that helps when a job array fails: scontrol, the tasks' output files, daemon logs."""
    show = subprocess.run(["scontrol", "show", "job", job], capture_output=True, text=True, env=env)
    queue = subprocess.run(["squeue", "-a", "-j", job], capture_output=True, text=True, env=env)
    parts = [f"squeue -j {job}:\n{queue.stdout}{queue.stderr}", f"scontrol show job {job}:\n{show.stdout}{show.stderr}"]
    for f in sorted((out / "slurm").glob("*")):
        parts.append(f"--- {f} ---\n{tail(f.read_text(errors='replace'), 40)}")
    parts.append(cluster_logs(cluster["dir"]))
    return "\n".join(parts)


def submit_and_wait(config_path: Path, out: Path, cells_per_task: int, cluster: dict, *extra) -> Path:
    """``kernlearn slurm`` -> ``sbatch --parsable`` -> poll ``squeue`` -> ``kernlearn collect --strict``.

    ``extra`` options for ``kernlearn slurm`` (e.g. ``--max-array-size``) may pack more cells per task
    than ``cells_per_task``; the script's ``--cells-per-task`` says how many."""
    env = clean_env(SLURM_CONF=cluster["conf"])
    gen = kernlearn("slurm", config_path, "--out", out, "--cells-per-task", cells_per_task, *extra,
                    cwd=config_path.parent, env=env)
    assert gen.returncode == 0, gen.stderr
    script = Path(gen.stdout.strip().splitlines()[-1])
    cells_per_task = int(script.read_text().split("--cells-per-task ")[1].split()[0])
    n_tasks = -(-N_CELLS // cells_per_task)
    text = script.read_text()
    assert f"#SBATCH --array=0-{n_tasks - 1}" in text, text
    sub = subprocess.run(["sbatch", "--parsable", str(script)], capture_output=True, text=True, env=env,
                         cwd=config_path.parent, timeout=60)
    assert sub.returncode == 0, f"sbatch failed:\n{sub.stderr}\n{cluster_logs(cluster['dir'])}"
    job = sub.stdout.strip().split(";")[0]
    t0 = time.monotonic()
    while not squeue_empty(job, env):
        if time.monotonic() - t0 > JOB_TIMEOUT:
            report = job_report(job, out, cluster, env)
            subprocess.run(["scancel", job], env=env, capture_output=True)
            pytest.fail(f"array job {job} still queued/running after {JOB_TIMEOUT} s\n{report}")
        time.sleep(1)
    print(f"array job {job} ({n_tasks} tasks, {cells_per_task} cell(s) each) finished in "
          f"{time.monotonic() - t0:.1f} s")
    # every task ran and exited 0
    outputs = sorted((out / "slurm").glob(f"{job}_*.out"))
    records = sorted(out.glob("*/record.json"))
    show = subprocess.run(["scontrol", "show", "job", job], capture_output=True, text=True, env=env).stdout
    bad_exit = [ln for ln in show.split() if ln.startswith("ExitCode=") and ln != "ExitCode=0:0"]
    if len(outputs) != n_tasks or len(records) != N_CELLS or bad_exit:
        pytest.fail(f"array job {job}: {len(outputs)} of {n_tasks} task output files, {len(records)} of "
                    f"{N_CELLS} records, exit codes {bad_exit or 'all 0:0'}\n{job_report(job, out, cluster, env)}")
    coll = kernlearn("collect", out, "--strict", cwd=config_path.parent)
    assert coll.returncode == 0 and "warning" not in coll.stderr, coll.stderr
    return out


@pytest.fixture(scope="module", params=[(1, ()), (2, ()), (1, ("--max-array-size", "2", "--sbatch-arg=--comment=kl test"))],
                ids=["1-cell-per-task", "2-cells-per-task", "packed-into-2-tasks"])
def slurm_run(request, cluster, config_path, tmp_path_factory):
    """Runs of the array: 1 and 2 cells per task, and 6 cells packed into 2 tasks (a --max-array-size of 2)
    in a folder whose path holds a space, with an extra #SBATCH line."""
    cells_per_task, extra = request.param
    name = "packed out" if extra else "out"
    out = tmp_path_factory.mktemp(f"slurm{cells_per_task}") / name
    return cells_per_task, submit_and_wait(config_path, out, cells_per_task, cluster, *extra)


def cells_of(out: Path) -> dict[str, Path]:
    return {p.parent.name: p.parent for p in out.glob("*/record.json")}


@pytest.mark.slow
def test_slurm_array_matches_local_run(slurm_run, local_run):
    cells_per_task, out = slurm_run
    slurm_cells, local_cells = cells_of(out), cells_of(local_run)
    assert len(local_cells) == N_CELLS and slurm_cells.keys() == local_cells.keys()
    for name in sorted(local_cells):
        with h5py.File(slurm_cells[name] / "factors.h5", "r") as a, h5py.File(local_cells[name] / "factors.h5", "r") as b:
            Ga, Gb = a["G"][()], b["G"][()]
            assert Ga.dtype == Gb.dtype == np.float64 and Ga.shape == Gb.shape
            assert Ga.tobytes() == Gb.tobytes(), f"{name}: G differs between the SLURM and the local run"
        ra = json.loads((slurm_cells[name] / "record.json").read_text())
        rb = json.loads((local_cells[name] / "record.json").read_text())
        for key in ("metrics", "objective", "iterations", "converged", "constraints", "grid", "seed", "index"):
            assert ra[key] == rb[key], f"{name}: record '{key}' differs: {ra[key]} != {rb[key]}"
    # the collected tables: identical to the last byte
    assert (out / "table.csv").read_bytes() == (local_run / "table.csv").read_bytes()
    rows = list(csv.reader(io.StringIO((out / "table.csv").read_text())))
    assert len(rows) == 3 and [row[rows[0].index("seeds")] for row in rows[1:]] == ["3", "3"]


# ---- a whole paper: kernlearn reproduce --launcher slurm ---------------------------------------

REPO = Path(__file__).resolve().parents[1]
#: The paper whose quick study runs on the cluster (the smallest quick run of the five).
PAPER = "hu2013"


def timing_table(path: Path) -> bool:
    """Tables of wall-clock times (and the verdicts, which include them) differ between any two runs."""
    return "seconds" in path.name or "timing" in path.name


@pytest.fixture(scope="module")
def quick_local(tmp_path_factory):
    """``kernlearn reproduce PAPER --quick`` run here, in one process."""
    root = tmp_path_factory.mktemp("reproduce_local")
    res = kernlearn("reproduce", PAPER, "--quick", "--results", root / "results", "--docs", root / "docs",
                    "--no-readme", cwd=REPO)
    assert res.returncode == 0, res.stderr[-3000:]
    return root / "results" / "quick"


@pytest.mark.slow
def test_reproduce_on_slurm_matches_local(cluster, quick_local, tmp_path_factory):
    """One job array per experiment (packed into at most 2 tasks each) and a collect job after them
    (afterok): the tables it writes are the local quick run's, byte for byte."""
    root = tmp_path_factory.mktemp("reproduce slurm")           # a space in every path
    env = clean_env(SLURM_CONF=cluster["conf"])
    res = kernlearn("reproduce", PAPER, "--quick", "--launcher", "slurm", "--max-array-size", "2",
                    "--results", root / "results", "--docs", root / "docs", "--no-readme", cwd=REPO, env=env)
    assert res.returncode == 0, res.stderr
    jobs = [line.split("job ")[1].split(",")[0] for line in res.stderr.splitlines() if ": job " in line]
    experiments = yaml.safe_load((REPO / "configs" / "papers" / PAPER / "study.yaml").read_text())["experiments"]
    quick = [name for name, spec in experiments.items() if spec.get("quick", {}) is not False]
    assert len(jobs) == len(quick) + 1 and f"collect: job {jobs[-1]}, after {len(quick)} job(s)" in res.stderr
    out = root / "results" / "quick"
    t0 = time.monotonic()
    while not all(squeue_empty(job, env) for job in jobs):
        if time.monotonic() - t0 > 3 * JOB_TIMEOUT:
            report = job_report(jobs[-1], out / PAPER, cluster, env)
            subprocess.run(["scancel", *jobs], env=env, capture_output=True)
            pytest.fail(f"jobs {jobs} still queued/running after {3 * JOB_TIMEOUT} s\n{report}")
        time.sleep(2)
    print(f"reproduce {PAPER} --quick on SLURM: {len(jobs) - 1} array job(s) and the collect job in "
          f"{time.monotonic() - t0:.1f} s")
    logs = sorted((out / PAPER / "slurm").glob("collect_*.out"))
    assert logs, job_report(jobs[-1], out / PAPER, cluster, env)
    local = sorted(p for p in (quick_local / "tables").iterdir() if not timing_table(p))
    remote = sorted(p for p in (out / "tables").iterdir() if not timing_table(p))
    assert [p.name for p in remote] == [p.name for p in local], logs[-1].read_text()[-3000:]
    for a, b in zip(local, remote):
        if a.name.endswith("_verdicts.csv"):            # the verdict rows of deterministic metrics
            va, vb = (list(csv.DictReader(io.StringIO(p.read_text()))) for p in (a, b))
            assert [r for r in va if r["metric"] != "seconds"] == [r for r in vb if r["metric"] != "seconds"]
        elif not a.name.endswith("_verdicts.md"):
            assert a.read_bytes() == b.read_bytes(), \
                f"{a.name} differs between the local and the SLURM run:\n{a.read_text()}\n{b.read_text()}"
    assert (root / "docs" / f"{PAPER}.md").is_file()


# ---- cluster courtesy: a throttled array, a task requeued while it runs ---------------------------

#: Six cells of a few seconds each (k-NN accuracy over 800 random splits), three per task.
REQUEUE_CONFIG = {
    "name": "iris_requeue", "seed": 0, "grid": {"seed": "range(6)"},
    "dataset": {"name": "iris"}, "kernel": {"name": "linear"},
    "constraints": {"name": "idealized_pairs", "count": 10}, "solver": {"name": "burg", "slack": 1.0},
    "evaluate": [{"name": "knn_accuracy", "repeats": 800}],
}


def wait_for(condition, what: str, job: str, out: Path, cluster: dict, env: dict) -> None:
    t0 = time.monotonic()
    while not condition():
        if time.monotonic() - t0 > JOB_TIMEOUT:
            report = job_report(job, out, cluster, env)
            subprocess.run(["scancel", job], env=env, capture_output=True)
            pytest.fail(f"job {job}: {what} not seen after {JOB_TIMEOUT} s\n{report}")
        time.sleep(0.2)


def test_a_requeued_task_resumes_without_recomputing_its_finished_cells(cluster, tmp_path_factory):
    """``kernlearn slurm --max-running 1``: the array is throttled (``--array=0-1%1``), asks SLURM to
    requeue a preempted task and appends to its log.  ``scontrol requeue`` of task 0 after its first
    cell: SLURM's SIGTERM stops it like Ctrl-C (it says which cells finished, exit 143), the requeued
    task skips exactly those (their records untouched, byte and mtime), and all six cells finish."""
    folder = tmp_path_factory.mktemp("requeue")
    cfg, out = folder / "requeue.yaml", folder / "out"
    cfg.write_text(yaml.safe_dump(REQUEUE_CONFIG, sort_keys=False))
    env = clean_env(SLURM_CONF=cluster["conf"])
    gen = kernlearn("slurm", cfg, "--out", out, "--cells-per-task", 3, "--max-running", 1, cwd=folder, env=env)
    assert gen.returncode == 0, gen.stderr
    script = Path(gen.stdout.strip().splitlines()[-1])
    for line in ("#SBATCH --array=0-1%1", "#SBATCH --requeue", "#SBATCH --open-mode=append"):
        assert line in script.read_text().splitlines(), script.read_text()
    sub = subprocess.run(["sbatch", "--parsable", str(script)], capture_output=True, text=True, env=env, cwd=folder,
                         timeout=60)
    assert sub.returncode == 0, f"sbatch failed:\n{sub.stderr}\n{cluster_logs(cluster['dir'])}"
    job = sub.stdout.strip().split(";")[0]

    def task0() -> list[Path]:
        """The records of task 0's cells (seeds 0 to 2)."""
        return sorted(out.glob("seed-[012]_*/record.json"))

    wait_for(task0, "a finished cell of task 0", job, out, cluster, env)
    before = {p.parent.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in task0()}
    req = subprocess.run(["scontrol", "requeue", f"{job}_0"], capture_output=True, text=True, env=env, timeout=60)
    assert req.returncode == 0, req.stderr
    log = out / "slurm" / f"{job}_0.out"
    wait_for(lambda: log.is_file() and "kernlearn: stopped by SIGTERM" in log.read_text(), "task 0 stopping",
             job, out, cluster, env)
    # SLURM holds a requeued job for a while (Reason=BeginTime); let it start now
    subprocess.run(["scontrol", "update", f"JobId={job}_0", "StartTime=now"], capture_output=True, env=env, timeout=60)
    wait_for(lambda: squeue_empty(job, env), "the array leaving the queue", job, out, cluster, env)
    text = log.read_text()
    stopped = re.search(r"interrupted: iris_requeue: (\d) of 3 cells finished \(\d in this run\)", text)
    assert stopped and "DUE TO JOB REQUEUE" in text, text
    finished = int(stopped.group(1))
    assert finished >= len(before) >= 1
    assert f"{3 - finished} cell(s) run, {finished} already finished, 0 failed" in text.split(stopped.group(0))[1], text
    records = sorted(out.glob("*/record.json"))
    assert len(records) == 6, job_report(job, out, cluster, env)
    for name, (mtime, data) in before.items():
        record = out / name / "record.json"
        assert (record.stat().st_mtime_ns, record.read_bytes()) == (mtime, data), f"{name} was computed again"
    print(f"requeue: {finished} cell(s) of task 0 finished before `scontrol requeue`, {3 - finished} after it; "
          f"{len(records)} of 6 records, none of the finished recomputed")
