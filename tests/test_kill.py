"""Resume and concurrency: SIGKILL ``kernlearn run`` at random moments, then finish it;
run two processes on the same results folder at once.

The contract (README, records.py): a cell is finished exactly when ``record.json`` exists next
to a complete ``factors.h5``; a killed run leaves nothing that looks finished, and a
rerun redoes only the unfinished cells; two processes running the same cell each write a
private temporary file and rename it.
"""

import csv
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest
import yaml

# 12 cells of 0.1-0.6 s each here (wine, n = 178, full-rank identity start).
CONFIG = {
    "name": "wine_kill", "seed": 0,
    "grid": {"constraints.count": [500, 600, 700], "seed": "range(4)"},
    "dataset": {"name": "wine"}, "kernel": {"name": "identity"},
    "constraints": {"name": "random_pairs", "count": 500, "reference": {"name": "rbf", "standardize": True}},
    "solver": {"name": "burg"},
    "evaluate": [{"name": "knn_accuracy"}],
}
N_CELLS = 12
TRIALS = 20
SEED = 20240607
ARRAY_VARS = ("SLURM_ARRAY_TASK_ID", "SGE_TASK_ID", "PBS_ARRAY_INDEX", "LSB_JOBINDEX")


def env() -> dict:
    """The environment (incl. conftest's data home) without scheduler array variables."""
    return {k: v for k, v in os.environ.items() if k not in ARRAY_VARS}


def command(cfg: Path, out: Path, *extra) -> list[str]:
    return [sys.executable, "-m", "kernlearn_cli", "run", str(cfg), "--out", str(out), *map(str, extra)]


def kernlearn(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "kernlearn_cli", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, env=env(), timeout=120)


def same_table(a: Path, b: Path) -> bool:
    """Collected tables of the same cells are identical to the last byte."""
    return a.read_bytes() == b.read_bytes()


def read_G(path: Path) -> np.ndarray:
    with h5py.File(path, "r") as f:
        return f["G"][()]


@pytest.fixture(scope="module")
def cfg(tmp_path_factory):
    path = tmp_path_factory.mktemp("cfg") / "wine_kill.yaml"
    path.write_text(yaml.safe_dump(CONFIG, sort_keys=False))
    return path


def timed_run(cfg: Path, out: Path, *extra) -> float:
    t0 = time.monotonic()
    res = subprocess.run(command(cfg, out, *extra), capture_output=True, text=True, env=env(), cwd=cfg.parent,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    assert f"{N_CELLS} cell(s) run, 0 already finished" in res.stderr, res.stderr
    return time.monotonic() - t0


@pytest.fixture(scope="module")
def reference(cfg, tmp_path_factory):
    """An uninterrupted run (--jobs 1): its folder, its cells' G and records, and a runtime model.

    The model comes from the file times of that run: start-up until experiment.yaml is written,
    each cell's wall time (between successive record.json files), and the tail (collect, exit).
    An uninterrupted --jobs 2 run in another folder adds the cost of spawning the workers.
    """
    base = tmp_path_factory.mktemp("reference")
    out = base / "out"
    t_start = time.time()
    t_full = timed_run(cfg, out)
    t_end = time.time()
    cells = {p.parent.name: p.parent for p in out.glob("*/record.json")}
    assert len(cells) == N_CELLS
    G = {name: read_G(d / "factors.h5") for name, d in cells.items()}
    records = {name: json.loads((d / "record.json").read_text()) for name, d in cells.items()}
    t_claim = (out / "experiment.yaml").stat().st_mtime
    done = sorted(((d / "record.json").stat().st_mtime, name) for name, d in cells.items())
    cell_wall, previous = {}, t_claim
    for mtime, name in done:
        cell_wall[name], previous = mtime - previous, mtime
    fixed = (t_claim - t_start) + (t_end - previous)
    work = sum(cell_wall.values())
    t_full2 = timed_run(cfg, base / "jobs2", "--jobs", 2)
    for name in cells:                                   # --jobs 2 gives the same bits
        assert read_G(base / "jobs2" / name / "factors.h5").tobytes() == G[name].tobytes()
    spawn = max(t_full2 - fixed - work / 2, 0.0)
    print(f"uninterrupted: --jobs 1 {t_full:.2f} s (start-up + tail {fixed:.2f} s, cells {work:.2f} s), "
          f"--jobs 2 {t_full2:.2f} s")
    return {"out": out, "G": G, "records": records, "cell_wall": cell_wall, "fixed": fixed, "spawn": spawn,
            "t_full": t_full}


def expected_runtime(reference: dict, out: Path, jobs: int, force: bool = False) -> float:
    """Model of how long ``run --jobs`` (``--force``) takes on ``out``, given the cells finished there."""
    finished = set() if force else {p.parent.name for p in out.glob("*/record.json")}
    left = sum(t for name, t in reference["cell_wall"].items() if name not in finished)
    return reference["fixed"] + (left if jobs == 1 else reference["spawn"] + left / jobs)


def same_result(rec: dict, ref: dict) -> bool:
    return all(rec[k] == ref[k] for k in ("metrics", "objective", "iterations", "converged", "constraints"))


def check_state(out: Path, reference: dict) -> list[str]:
    """Problems with a results folder after a kill (empty list: consistent)."""
    problems = []
    if not out.is_dir():
        return problems
    finished = sorted(p.parent for p in out.glob("*/record.json"))
    for d in finished:
        name = d.name
        if name not in reference["G"]:
            problems.append(f"{name}: not a cell of the config")
            continue
        try:
            rec = json.loads((d / "record.json").read_text())
        except (OSError, ValueError) as exc:
            problems.append(f"{name}: record.json unreadable: {exc}")
            continue
        try:
            G = read_G(d / "factors.h5")
        except (OSError, KeyError) as exc:
            problems.append(f"{name}: has record.json but factors.h5 is missing or unreadable: {exc}")
            continue
        ref_G = reference["G"][name]
        if G.dtype != np.float64 or G.shape != ref_G.shape:
            problems.append(f"{name}: G is {G.dtype} {G.shape}, expected float64 {ref_G.shape}")
        elif G.tobytes() != ref_G.tobytes():
            problems.append(f"{name}: G differs from the uninterrupted run")
        if rec.get("cell") != name or not same_result(rec, reference["records"][name]):
            problems.append(f"{name}: record.json differs from the uninterrupted run")
    # collect counts finished cells only: .tmp files and factors without a record are not results
    coll = kernlearn("collect", out)
    if not finished:
        if coll.returncode != 2 or "no finished cells" not in coll.stderr:
            problems.append(f"collect with no finished cell: status {coll.returncode}, {coll.stderr.strip()}")
        return problems
    if coll.returncode != 0:
        return problems + [f"collect failed ({coll.returncode}): {coll.stderr.strip()}"]
    rows = list(csv.DictReader(io.StringIO((out / "table.csv").read_text())))
    seeds = sum(int(r["seeds"]) for r in rows)
    if seeds != len(finished):
        problems.append(f"collect's table counts {seeds} seeds, but {len(finished)} cells have record.json")
    # the grid is known (experiment.yaml): every cell without a record is named as not in the tables
    m = re.search(r"warning: (\d+) of (\d+) expected cell\(s\) are not in the tables", coll.stderr)
    missing, expected = (int(m.group(1)), int(m.group(2))) if m else (0, len(finished))
    if missing != N_CELLS - len(finished) or (m and expected != N_CELLS):
        problems.append(f"collect reports {missing} of {expected} cells not in the tables, but "
                        f"{N_CELLS - len(finished)} of {N_CELLS} have no record.json: {coll.stderr.strip()}")
    return problems


@pytest.fixture(scope="module")
def killed(cfg, reference, tmp_path_factory):
    """TRIALS runs killed with SIGKILL after a random delay in the same folder, then one run to completion.

    Every fourth trial runs with --jobs 2 (the whole process group is killed, as when a node
    dies), the others with --jobs 1. A trial that finds every cell finished runs with --force,
    so later trials also kill runs in the middle of (re)writing cells. The delay is uniform
    within the expected runtime of that run (see :func:`expected_runtime`), scaled down when a
    run finishes sooner than that model says (the machine's load changes while the tests run).
    """
    rng = np.random.default_rng(SEED)
    out = tmp_path_factory.mktemp("killed") / "out"
    log, problems = [], []
    scale = 1.0                             # the shortest observed / modelled runtime so far
    for trial in range(TRIALS):
        before = len(list(out.glob("*/record.json")))
        jobs = 2 if trial % 4 == 3 else 1
        force = before == N_CELLS           # nothing left to resume: rerun (and replace) finished cells
        model = expected_runtime(reference, out, jobs, force)
        expected = scale * model
        delay = float(rng.uniform(0.0, expected))
        extra = ["--jobs", jobs] + ["--force"] * force
        start = time.perf_counter()
        proc = subprocess.Popen(command(cfg, out, *extra), stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, env=env(), cwd=cfg.parent, start_new_session=True)
        try:
            proc.wait(timeout=delay)
            killed_it = False
            scale = min(scale, (time.perf_counter() - start) / model)
        except subprocess.TimeoutExpired:
            killed_it = True
            os.killpg(proc.pid, signal.SIGKILL)      # our own process group (start_new_session)
        stderr = proc.communicate(timeout=60)[1].decode(errors="replace")
        if not killed_it and proc.returncode != 0:
            problems.append(f"trial {trial}: run exited {proc.returncode} without being killed: {stderr[-2000:]}")
        after = len(list(out.glob("*/record.json")))
        tmps = len(list(out.rglob(".*.tmp")))
        log.append(f"trial {trial:2d}: jobs {jobs}{', force' if force else ''}, delay {delay:.2f}/{expected:.2f} s, "
                   f"{'killed' if killed_it else 'finished'}, records {before} -> {after}, .tmp files {tmps}")
        problems += [f"trial {trial}: {p}" for p in check_state(out, reference)]
    final = subprocess.run(command(cfg, out), capture_output=True, text=True, env=env(), cwd=cfg.parent, timeout=120)
    print("\n".join(log))
    return {"out": out, "log": log, "problems": problems, "final": final}


@pytest.mark.slow
def test_every_kill_leaves_a_consistent_folder(killed):
    assert not killed["problems"], "\n".join(killed["problems"] + ["", *killed["log"]])
    assert sum(", killed," in line for line in killed["log"]) >= TRIALS // 2, "\n".join(killed["log"])


@pytest.mark.slow
def test_resume_after_kills_gives_the_uninterrupted_result(killed, reference):
    final, out = killed["final"], killed["out"]
    assert final.returncode == 0, final.stderr
    m = re.search(r"(\d+) cell\(s\) run, (\d+) already finished, 0 failed", final.stderr)
    assert m and int(m.group(1)) + int(m.group(2)) == N_CELLS, final.stderr
    assert not check_state(out, reference)
    cells = sorted(p.parent.name for p in out.glob("*/record.json"))
    assert cells == sorted(reference["G"])
    assert same_table(out / "table.csv", reference["out"] / "table.csv")


@pytest.mark.slow
@pytest.mark.parametrize("stagger", [0.0, "mid"], ids=["simultaneous", "staggered"])
def test_two_processes_on_one_folder(cfg, reference, tmp_path, stagger):
    """Both exit 0 and every cell is complete and the same as in the uninterrupted run."""
    out = tmp_path / "out"
    first = subprocess.Popen(command(cfg, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env(), cwd=cfg.parent)
    # "mid": the second starts when the first is (about) half-way through its cells
    time.sleep(0.0 if stagger == 0.0 else reference["fixed"] + 0.5 * sum(reference["cell_wall"].values()))
    second = subprocess.Popen(command(cfg, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=env(), cwd=cfg.parent)
    results = [p.communicate(timeout=120) + (p.returncode,) for p in (first, second)]
    for stdout, stderr, rc in results:
        assert rc == 0, stderr
        m = re.search(r"(\d+) cell\(s\) run, (\d+) already finished, 0 failed", stderr)
        assert m and int(m.group(1)) + int(m.group(2)) == N_CELLS, stderr
        assert "knn_accuracy" in stdout
    assert sorted(p.parent.name for p in out.glob("*/record.json")) == sorted(reference["G"])
    assert check_state(out, reference) == []
    assert same_table(out / "table.csv", reference["out"] / "table.csv")


@pytest.mark.slow
def test_collect_note_ignores_stray_tmp_in_results_root(reference, tmp_path):
    import shutil

    out = tmp_path / "out"
    shutil.copytree(reference["out"], out)
    (out / ".table.csv.k1ll3d.tmp").write_text("constraints.count,nmi_mean\n")   # what a kill in write_tables leaves
    coll = kernlearn("collect", out)
    assert coll.returncode == 0, coll.stderr
    assert "incomplete" not in coll.stderr, coll.stderr
