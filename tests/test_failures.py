"""Every failure path: bad input, broken files, interrupted and full-disk runs, cluster mistakes.

Each bad input must end with exit status 2 and one ``kernlearn: error:`` paragraph naming the
file, key or value, no traceback, no results folder claimed, and earlier results untouched.
Most cases run the command line in-process (``inproc``) to keep the module fast; the faults
(signals, a full or read-only file system) run it in a subprocess.
"""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest
import yaml

from helpers import REPO, kernlearn
from kernlearn_cli.records import cell_state

BASE = {"name": "t", "seed": 0, "dataset": {"name": "iris"}, "kernel": {"name": "linear"},
        "constraints": {"name": "idealized_pairs", "count": 30}, "solver": {"name": "burg", "slack": 1.0},
        "evaluate": [{"name": "kernel_kmeans_nmi"}]}
X_OK = np.random.default_rng(0).standard_normal((20, 3))
Y_OK = np.arange(20) % 2


def write_config(path: Path, **parts) -> Path:
    path.write_text(yaml.safe_dump({**BASE, **parts}))
    return path


def snapshot(folder: Path) -> dict:
    """sha256 of every file under ``folder``."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished 2-cell folder of BASE (reused read-only; tests copy it before changing it)."""
    root = tmp_path_factory.mktemp("finished")
    cfg = write_config(root / "cfg.yaml", grid={"seed": "range(2)"})
    res = kernlearn("run", cfg, "--out", root / "out")
    assert res.returncode == 0, res.stderr
    return root / "out", cfg


def npy(tmp_path, name, arr):
    path = tmp_path / f"{name}.npy"
    np.save(path, arr)
    return str(path)


def csv_constraints(tmp_path, rows, name="cons.csv"):
    path = tmp_path / name
    path.write_text("i,j,kind,bound\n" + "".join(f"{r}\n" for r in rows))
    return {"name": "from_file", "path": str(path)}


def files(tmp_path, X, y=Y_OK):
    return {"name": "files", "features": npy(tmp_path, "X", X), "labels": npy(tmp_path, "y", y)}


# case -> (config parts or a callable giving (config path, extra args, env)), text the error must contain
def bad_cases(tmp_path):
    X_nan = X_OK.copy()
    X_nan[4, 1] = np.nan
    cfg = lambda **parts: (write_config(tmp_path / "cfg.yaml", **parts), [], {})  # noqa: E731
    with_args = lambda *args, **env: (write_config(tmp_path / "cfg.yaml"), list(args), env)  # noqa: E731
    with_grid = lambda *args: (write_config(tmp_path / "cfg.yaml", grid={"constraints.count": [10, 30],  # noqa: E731
                                                                         "seed": "range(2)"}), list(args), {})

    def csv_text(text: str):
        (tmp_path / "cons.csv").write_text(text)
        return {"name": "from_file", "path": str(tmp_path / "cons.csv")}

    def raw(text: bytes, name="raw.yaml"):
        (tmp_path / name).write_bytes(text)
        return tmp_path / name, [], {}

    return {
        "unknown component": (lambda: cfg(solver={"name": "burgg"}), "unknown solver 'burgg'. Did you mean 'burg'?"),
        "unknown key": (lambda: cfg(solver={"name": "burg", "tolerance": 1}), "unknown key 'tolerance'"),
        "wrong type": (lambda: cfg(solver={"name": "burg", "max_sweeps": "lots"}), "expected an int"),
        "negative count": (lambda: cfg(constraints={"name": "idealized_pairs", "count": -5}),
                           "constraints.count: expected an int in [1, inf), got -5."),
        "missing data file": (lambda: cfg(dataset={"name": "files", "features": str(tmp_path / "typo.npy")}),
                              "typo.npy"),
        "index out of range": (lambda: cfg(dataset=files(tmp_path, X_OK),
                                           constraints=csv_constraints(tmp_path, ["0,25,dist_le,1.0"])),
                               "index 25 is out of range"),
        "i equals j": (lambda: cfg(dataset=files(tmp_path, X_OK),
                                   constraints=csv_constraints(tmp_path, ["3,3,dist_le,1.0"])),
                       "i = j = 3 in a distance constraint"),
        "nan features": (lambda: cfg(dataset=files(tmp_path, X_nan)), "row 4"),
        "subset too large": (lambda: cfg(dataset={**files(tmp_path, X_OK), "subset": {"size": 50}}),
                             "subset size 50 is larger than the dataset (20 points)"),
        "subset key": (lambda: cfg(dataset={**files(tmp_path, X_OK), "subset": {"size": 10, "sed": 1}}),
                       "dataset.subset: unknown key 'sed'. Valid keys: size, seed."),
        "huge features": (lambda: cfg(dataset=files(tmp_path, X_OK * 1e300)), "e+300 (largest |value|)"),
        "tiny features": (lambda: cfg(dataset=files(tmp_path, X_OK * 1e-300)), "e-300 (largest |value|)"),
        "non-psd kernel": (lambda: cfg(dataset={"name": "files", "kernel": npy(tmp_path, "K", np.diag([1.0] * 19 + [-1.0])),
                                                "labels": npy(tmp_path, "y", Y_OK)},
                                       kernel={"name": "precomputed"}), "eigenvalue is -1"),
        "header-only constraints": (lambda: cfg(dataset=files(tmp_path, X_OK), constraints=csv_constraints(tmp_path, [])),
                                    f"constraints file '{tmp_path / 'cons.csv'}' has the header 'i,j,kind,bound' but no rows"),
        "empty constraints file": (lambda: cfg(dataset=files(tmp_path, X_OK), constraints=csv_text("")),
                                   "cons.csv' is empty; it must start with the header line 'i,j,kind,bound'"),
        "repeated constraint": (lambda: cfg(dataset=files(tmp_path, X_OK), constraints=csv_constraints(
                                    tmp_path, ["0,1,dist_le,1.0", "2,3,dist_ge,2", "1,0,dist_le,1"])),
                                "cons.csv': line 4 repeats line 2 (the same pair (in either order), kind and bound)"),
        "repeated triplet": (lambda: cfg(dataset=files(tmp_path, X_OK), solver={"name": "trin"},
                                         constraints=csv_text("i,j,k\n0,5,9\n1,2,3\n0,5,9\n")),
                             "cons.csv': line 4 repeats line 2 (the same triplet i,j,k)"),
        "negative distance bound": (lambda: cfg(dataset=files(tmp_path, X_OK),
                                                constraints=csv_constraints(tmp_path, ["0,1,dist_le,-1"])),
                                    "row 2: bound -1 on a squared distance ('dist_le'); a squared distance is never"),
        "one-based constraints": (lambda: cfg(dataset=files(tmp_path, X_OK), constraints=csv_constraints(
                                      tmp_path, ["1,2,dist_le,1.0", "3,20,dist_ge,2.0"])),
                                  "this file looks 1-based (min index 1, max 20 = n): subtract 1 from every index"),
        "max_sweeps 0": (lambda: with_args("--set", "solver.max_sweeps=0"), "solver.max_sweeps: expected an int in [1, inf), got 0."),
        "set not yaml": (lambda: with_args("--set", "solver.tol=[1,"), "--set 'solver.tol=[1,': not valid YAML"),
        "set without =": (lambda: with_args("--set", "solver.tol"), "expected KEY=VALUE"),
        "set of a grid axis": (lambda: with_grid("--set", "constraints.count=50"),
                               "'constraints.count' is a grid axis in"),
        "set of a grid axis, array task": (lambda: with_grid("--array-index", "0", "--set", "constraints.count=ten"),
                                           "--set constraints.count=ten: constraints.count: expected an int"),
        "set seed with a seed axis": (lambda: with_grid("--set", "seed=5"), "instead: --seed 5"),
        "seed too big": (lambda: with_args("--seed", str(2**64)), "'seed' must be an integer from 0 to 2**63 - 1"),
        "grid seed negative": (lambda: cfg(grid={"seed": [0, -1]}), "grid.seed value must be an integer"),
        "name dotdot": (lambda: cfg(name=".."), "that does not start with '.'"),
        "name dot": (lambda: cfg(name="."), "that does not start with '.'"),
        "name slash": (lambda: cfg(name="a/b"), "'name' must be a string of letters"),
        "duplicate key": (lambda: raw(b"name: t\nname: u\n"), "duplicate key 'name'"),
        "not utf-8": (lambda: raw(b"name: \xff\n"), "not UTF-8 text"),
        "not yaml": (lambda: raw(b"name: [t\n"), "not valid YAML"),
        "config is a directory": (lambda: (tmp_path, [], {}), "is a directory; give a YAML config file"),
        "config missing": (lambda: (tmp_path / "nope.yaml", [], {}), "config file"),
        "jobs 0": (lambda: with_args("--jobs", "0"), "--jobs must be >= 1"),
        "array index out of range": (lambda: with_args("--array-index", "3"), "array index 3 is out of range"),
        "cells per task 0": (lambda: with_args("--array-index", "0", "--cells-per-task", "0"),
                             "--cells-per-task must be >= 1"),
        "slurm task id abc": (lambda: with_args(SLURM_ARRAY_TASK_ID="abc"), "$SLURM_ARRAY_TASK_ID='abc'"),
        "sge task id 0": (lambda: with_args(SGE_TASK_ID="0"), "$SGE_TASK_ID='0'"),
        "pbs index -1": (lambda: with_args(PBS_ARRAY_INDEX="-1"), "$PBS_ARRAY_INDEX='-1'"),
    }


CASES = list(bad_cases(Path("/nonexistent")))


def test_testing_md_counts_the_cases():
    assert f"{len(CASES)} kinds of bad input" in " ".join((REPO / "docs" / "testing.md").read_text().split())


@pytest.mark.parametrize("case", CASES)
def test_bad_input_is_one_paragraph_and_claims_nothing(tmp_path, inproc, case):
    make, message = bad_cases(tmp_path)[case]
    config, args, env = make()
    out = tmp_path / "out"
    code, stdout, stderr = inproc("run", config, "--out", out, *args, env=env)
    assert code == 2, stderr
    assert stderr.count("kernlearn: error:") == 1 and message in stderr, stderr
    assert "Traceback" not in stdout + stderr
    assert not out.exists(), sorted(p.name for p in out.rglob("*"))


@pytest.mark.slow
@pytest.mark.parametrize("args,message", [
    (["--force", "--set", "solver.max_sweeps=5"], "was written by a different config"),
    (["--force", "--set", "solver.max_sweeps=0"], "solver.max_sweeps: expected an int in [1, inf), got 0."),
    (["--force", "--set", "constraints.count=7"], "was written by a different config"),
    (["--force", "--set", "constraints.count=-5"], "constraints.count: expected an int in [1, inf), got -5."),
    (["--force", "--jobs", "0"], "--jobs must be >= 1"),
])
def test_bad_rerun_leaves_finished_results_untouched(tmp_path, inproc, finished, args, message):
    out, cfg = finished
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    before = snapshot(copy)
    code, _, stderr = inproc("run", cfg, "--out", copy, *args)
    assert code == 2 and message in stderr and "Traceback" not in stderr
    assert snapshot(copy) == before


@pytest.mark.parametrize("solver", ["burg", "von_neumann"])
def test_zero_distance_bound_is_a_data_error_said_once(tmp_path, inproc, solver):
    """dist_le 0 between points apart under K0 asks them to coincide, which no kernel of K0's rank and range
    (LogDet, von Neumann) does: a data error naming it before any sweep (was: a "solver breakdown"), and the
    failed cell's reason is printed once (was: in its FAILED line and again in the final error)."""
    cfg = write_config(tmp_path / "c.yaml", dataset=files(tmp_path, X_OK), solver={"name": solver},
                       constraints=csv_constraints(tmp_path, ["0,1,dist_le,0", "2,3,dist_ge,1.0"]))
    code, stdout, stderr = inproc("run", cfg, "--out", tmp_path / "out")
    reason = f"solver '{solver}': constraint #0 (dist_le between points 0 and 1, bound 0) asks a squared distance of 0"
    assert code == 2 and (stdout + stderr).count(reason) == 1, stdout + stderr
    assert "breakdown" not in stdout + stderr
    assert stderr.count("kernlearn: error:") == 1 and "the first: [0] cell_" in stderr and ": data error" in stderr
    failed = json.loads(next((tmp_path / "out").glob("*/failed.json")).read_text())
    assert failed["kind"] == "data error" and reason in failed["error"]


def test_failed_cell_reason_is_printed_once(tmp_path, inproc):
    """A failed cell's long reason is in its FAILED line only; the final error names the cell and the kind."""
    cfg = write_config(tmp_path / "c.yaml", dataset=files(tmp_path, X_OK),
                       constraints=csv_constraints(tmp_path, ["0,1,sim_le,1.0", "2,3,dist_ge,1.0"]))
    code, stdout, stderr = inproc("run", cfg, "--out", tmp_path / "out")
    reason = "solver.slack < inf supports distance constraints and diagonal similarity constraints"
    assert code == 2 and (stdout + stderr).count(reason) == 1, stdout + stderr
    assert stderr.count("kernlearn: error:") == 1 and "printed above" in stderr
    assert stderr.rstrip().endswith("(seed 0): data error"), stderr


def test_failed_run_does_not_lock_the_folder(tmp_path, inproc):
    out = tmp_path / "out"
    # fails when the solver starts (two settings that exclude each other, checked there): the claim is released
    code, _, stderr = inproc("run", write_config(tmp_path / "a.yaml"), "--out", out, "--set", "solver.slack_if_infeasible=2")
    assert code == 2 and not out.exists()
    # a stale experiment.yaml of another config, with no finished cell, is not a conflict
    out.mkdir()
    (out / "experiment.yaml").write_text(yaml.safe_dump({**BASE, "solver": {"name": "burg", "slack": 9.0}}))
    code, _, stderr = inproc("run", write_config(tmp_path / "a.yaml"), "--out", out)
    assert code == 0, stderr
    assert yaml.safe_load((out / "experiment.yaml").read_text())["solver"]["slack"] == 1.0


@pytest.mark.slow
def test_other_commands_name_themselves(tmp_path, inproc, finished):
    out, _ = finished
    cases = [
        (["plot", out, "-m", "nmi", "-o", tmp_path / "f.jpgx"], "plot -o"),
        (["plot", tmp_path / "none", "-m", "nmi", "-o", tmp_path / "f.png"], "plot: '"),
        (["plot-history", out, "-o", tmp_path / "f.bmpx"], "plot-history -o"),
        (["collect", out, "--into", tmp_path / "missing.md", "--marker", "x"], "collect --into"),
        (["collect", tmp_path / "none"], "collect: '"),
        (["collect", out, "-m", "nope"], "no metric 'nope'"),
        (["slurm", write_config(tmp_path / "c.yaml"), "--max-array-size", "0"], "--max-array-size must be >= 1"),
        (["slurm", write_config(tmp_path / "c.yaml"), "--sbatch-arg", "constraint=avx2"], "--sbatch-arg"),
        (["slurm", write_config(tmp_path / "grid.yaml", grid={"seed": [0, 1]}), "--out", tmp_path / "s", "--set",
          "seed=5"], "'seed' is a grid axis in"),
        (["plan", write_config(tmp_path / "c.yaml"), "--set", "constraints.count=ten"],
         "c.yaml: constraints.count: expected an int in [1, inf), got 'ten'."),
        (["list", "solverz"], "unknown kind 'solverz'"),
    ]
    for args, message in cases:
        code, _, stderr = inproc(*args)
        assert code == 2 and stderr.startswith("kernlearn: error:") and message in stderr, (args, stderr)
        assert "Traceback" not in stderr
    assert not (tmp_path / "f.png").exists() and not (tmp_path / "missing.md").exists() and not (tmp_path / "s").exists()


def test_out_naming_a_file_or_an_unwritable_place(tmp_path, inproc):
    cfg = write_config(tmp_path / "c.yaml")
    (tmp_path / "file").write_text("x")
    code, _, stderr = inproc("run", cfg, "--out", tmp_path / "file")
    assert code == 2 and "is a file" in stderr and (tmp_path / "file").read_text() == "x"
    code, _, stderr = inproc("run", cfg, "--out", tmp_path / "file" / "sub")
    assert code == 2 and "kernlearn: error: cannot write or read" in stderr and "Traceback" not in stderr


# ---- collect: missing, failed and unreadable cells -------------------------------------------


def test_collect_counts_missing_and_failed_cells_and_strict_fails(tmp_path, inproc):
    ok = csv_constraints(tmp_path, ["0,1,dist_le,1.0"], "ok.csv")
    # infeasible by the triangle inequality, sqrt d(0, 2) <= sqrt d(0, 1) + sqrt d(1, 2): certified by the solve
    # (a contradicting pair of rows would be refused before any cell runs, tests/test_conflicts.py)
    bad = csv_constraints(tmp_path, ["0,1,dist_le,1.0", "1,2,dist_le,1.0", "0,2,dist_ge,4.5"], "bad.csv")
    cfg = write_config(tmp_path / "c.yaml", dataset=files(tmp_path, X_OK), solver={"name": "burg"},
                       grid={"constraints.path": [ok["path"], bad["path"]], "seed": "range(3)"},
                       constraints=ok)
    out = tmp_path / "out"
    code, _, stderr = inproc("run", cfg, "--out", out, "--array-index", "0", "--cells-per-task", "4")
    assert code == 2 and "1 cell(s) failed" in stderr and "infeasible" in stderr
    failed = list(out.glob("*/failed.json"))
    assert len(failed) == 1 and "infeasible" in json.loads(failed[0].read_text())["kind"]
    code, stdout, stderr = inproc("collect", out, "-m", "nmi", "--rows", "constraints.path", "--cols", "solver")
    assert code == 0, stderr
    assert "warning: 3 of 6 expected cell(s) are not in the tables (2 missing, 1 failed)" in stderr
    assert "(3/3)" not in stdout and "– (0/3)" in stdout
    code, _, stderr = inproc("collect", out, "--strict")
    assert code == 2 and "collect --strict: 3 of 6 expected cell(s)" in stderr
    long_table = (out / "table.md").read_text()
    assert "0/3" in long_table and "3/3" in long_table


@pytest.mark.slow
def test_collect_on_a_finished_folder_is_unchanged_and_strict_passes(tmp_path, inproc, finished):
    out, _ = finished
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    table = (copy / "table.md").read_text()
    code, stdout, stderr = inproc("collect", copy, "--strict")
    assert code == 0 and stderr == "" and (copy / "table.md").read_text() == table


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["empty", "{}", "truncated", "other cell", "factors corrupt", "factors empty"])
def test_unreadable_cell_is_reported_skipped_and_rerun(tmp_path, inproc, finished, damage):
    out, cfg = finished
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    cell = sorted(p for p in copy.iterdir() if p.is_dir() and p.name != "shared")[0]
    record = (cell / "record.json").read_text()
    if damage == "empty":
        (cell / "record.json").write_text("")
    elif damage == "{}":
        (cell / "record.json").write_text("{}")
    elif damage == "truncated":
        (cell / "record.json").write_text(record[: len(record) // 2])
    elif damage == "other cell":
        (cell / "record.json").write_text(record.replace(cell.name, "someone-else"))
    elif damage == "factors corrupt":
        with open(cell / "factors.h5", "r+b") as fh:
            fh.write(b"garbage!" * 64)
    else:
        (cell / "factors.h5").write_bytes(b"")
    assert cell_state(cell)[0] == "corrupt"
    code, stdout, stderr = inproc("collect", copy)
    assert code == 0 and "Traceback" not in stderr
    if damage.startswith("factors"):   # collect reads records only
        assert "warning" not in stderr
    else:
        assert f"1 of 2 expected cell(s) are not in the tables (1 unreadable); first unreadable: {cell.name}" in stderr
    code, _, stderr = inproc("run", cfg, "--out", copy)
    assert code == 0 and "1 cell(s) run, 1 already finished" in stderr, stderr
    assert cell_state(cell)[0] == "finished"
    assert json.loads((cell / "record.json").read_text())["metrics"] == json.loads(record)["metrics"]


# ---- --force: a finished result is replaced only by a complete new one ------------------------


def _G(path: Path) -> bytes:
    with h5py.File(path, "r") as f:
        return f["G"][()].tobytes()


@pytest.mark.slow
def test_interrupted_force_reruns_never_lose_a_result(tmp_path):
    """SIGINT, then SIGKILLs at random moments of ``run --force`` until KERNLEARN_FORCE_KILLS (default 4)
    signals have landed: after each, every cell is still finished and its G bit-identical to the first run's."""
    kills = int(os.environ.get("KERNLEARN_FORCE_KILLS", "4"))
    cfg = write_config(tmp_path / "c.yaml", dataset={"name": "digits"}, grid={"seed": "range(4)"},
                       constraints={"name": "idealized_pairs", "count": 200})
    out = tmp_path / "out"
    t0 = time.perf_counter()
    assert kernlearn("run", cfg, "--out", out).returncode == 0
    runtime = time.perf_counter() - t0
    cells = sorted(p for p in out.iterdir() if p.is_dir() and p.name != "shared")
    reference = {c.name: _G(c / "factors.h5") for c in cells}
    rng = np.random.default_rng(0)
    landed = 0
    cmd = [sys.executable, "-m", "kernlearn_cli", "run", str(cfg), "--out", str(out), "--force"]
    trials = 0
    while landed < kills and trials < 4 * kills:
        trials += 1
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        time.sleep(rng.uniform(0.2, 0.9 * runtime))
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT if landed == 0 else signal.SIGKILL)
            landed += 1
        proc.communicate(timeout=120)
        for c in cells:
            assert cell_state(c) == ("finished", ""), (trials, c.name, cell_state(c))
            assert _G(c / "factors.h5") == reference[c.name]
    print(f"{landed} signals (1 SIGINT, {landed - 1} SIGKILL) landed in {trials} runs of run --force; "
          f"all {len(cells)} finished cells intact and bit-identical after each")
    assert landed == kills


# ---- faults of the file system ------------------------------------------------------------------


def _mount_tmpfs(where: Path, size: str, options: str = "") -> bool:
    where.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    opts = f"size={size}" + (f",{options}" if options else "")
    return subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(where)],
                          capture_output=True).returncode == 0


@pytest.fixture
def small_disk(tmp_path):
    where = tmp_path / "disk"
    if not _mount_tmpfs(where, "300k"):
        pytest.skip("cannot mount a tmpfs here (needs root and mount): disk-full test skipped")
    yield where
    subprocess.run(["umount", "-l", str(where)], capture_output=True)


@pytest.mark.slow
def test_disk_full_is_an_error_and_keeps_finished_results(tmp_path, small_disk, finished):
    out, cfg = finished
    copy = small_disk / "out"
    shutil.copytree(out, copy)
    before = snapshot(copy)
    filler = small_disk / "filler"
    with open(filler, "wb", buffering=0) as fh:       # fill the disk to the last block
        try:
            while True:
                fh.write(b"\0" * 4096)
        except OSError:
            pass
    for args in (["run", cfg, "--out", copy, "--force"], ["collect", copy], ["run", cfg, "--out", small_disk / "new"]):
        res = kernlearn(*args)
        assert res.returncode == 2 and "kernlearn: error: cannot write or read" in res.stderr, (args, res.stderr)
        assert "No space left on device" in res.stderr and "Traceback" not in res.stderr
        assert snapshot(copy) == before
    assert not list(small_disk.rglob("*.tmp"))


@pytest.mark.slow
def test_read_only_results_are_an_error(tmp_path, finished):
    out, cfg = finished
    where = tmp_path / "ro"
    if not _mount_tmpfs(where, "10m"):
        pytest.skip("cannot mount a tmpfs here (needs root and mount): read-only test skipped")
    try:
        shutil.copytree(out, where / "out")
        before = snapshot(where / "out")
        subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)
        res = kernlearn("run", cfg, "--out", where / "out", "--force")
        assert res.returncode == 2 and "read-only" in res.stderr.lower() and "Traceback" not in res.stderr
        assert snapshot(where / "out") == before
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


# ---- permissions, LaTeX, warnings -------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("umask,file_mode,dir_mode", [(0o022, 0o644, 0o755), (0o077, 0o600, 0o700)])
def test_outputs_honour_the_umask(tmp_path, umask, file_mode, dir_mode):
    cfg = write_config(tmp_path / "c.yaml")
    res = subprocess.run([sys.executable, "-c", f"import os, sys; os.umask({umask}); "
                          "from kernlearn_cli.cli import main; sys.argv = ['kernlearn', *sys.argv[1:]]; main()",
                          "run", str(cfg), "--out", str(tmp_path / "out")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    for path in (tmp_path / "out").rglob("*"):
        mode = path.stat().st_mode & 0o777
        assert mode == (dir_mode if path.is_dir() else file_mode), (path, oct(mode))


@pytest.mark.slow
def test_downloads_honour_the_umask(tmp_path, home):
    res = subprocess.run([sys.executable, "-c", "import os, sys; os.umask(0o022); "
                          "from kernlearn_cli.cli import main; sys.argv = ['kernlearn', 'datasets', 'fetch', "
                          "'sonar']; main()"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    files_ = [p for p in home.rglob("*") if p.is_file()]
    assert files_ and all(p.stat().st_mode & 0o777 == 0o644 for p in files_)


def test_latex_tables_escape_special_characters(tmp_path, inproc):
    import pandas as pd

    from kernlearn_cli.report.formats import latex_escape, write_tables

    assert latex_escape("a_b 5% & #1 {x} ~ ^ $ \\") == \
        r"a\_b 5\% \& \#1 \{x\} \textasciitilde{} \textasciicircum{} \$ \textbackslash{}"
    table = pd.DataFrame({"data_set": ["top_10%"], "nmi": ["0.5 ± 0.1 †"]})
    table.attrs["note"] = "† 1 of 2 cell(s); worst: max_violation"
    write_tables(table, tmp_path / "t")
    tex = (tmp_path / "t.tex").read_text()
    assert r"data\_set" in tex and r"top\_10\%" in tex and r"0.5 $\pm$ 0.1 $^\dagger$" in tex
    assert r"worst: max\_violation" in tex
    cfg = write_config(tmp_path / "c.yaml", name="t_50", grid={"seed": "range(2)"})
    code, _, stderr = inproc("run", cfg, "--out", tmp_path / "out")
    assert code == 0, stderr
    code, _, _ = inproc("collect", tmp_path / "out", "-m", "nmi", "--rows", "seed", "--cols", "experiment")
    tex = (tmp_path / "out" / "table_nmi.tex").read_text()
    assert r"t\_50" in tex and "t_50" not in tex


def test_constraints_the_initial_kernel_already_meets_warn(tmp_path, inproc):
    cfg = write_config(tmp_path / "c.yaml", constraints={"name": "random_pairs", "count": 20})
    code, _, stderr = inproc("run", cfg, "--out", tmp_path / "out")
    assert code == 0 and "warning:" in stderr and "already satisfies all 20 constraints" in stderr
    assert "reference: {name: rbf}" in stderr
    cfg = write_config(tmp_path / "d.yaml", constraints={"name": "random_pairs", "count": 20,
                                                          "reference": {"name": "rbf"}})
    code, _, stderr = inproc("run", cfg, "--out", tmp_path / "out2")
    assert code == 0 and "already satisfies" not in stderr
    cfg = write_config(tmp_path / "e.yaml", constraints={"name": "random_pairs", "count": 20},
                       solver={"name": "initial"})                  # a baseline keeps K0 by design: no warning
    code, _, stderr = inproc("run", cfg, "--out", tmp_path / "out3")
    assert code == 0 and "already satisfies" not in stderr


# ---- cluster: array indexes and sbatch scripts --------------------------------------------------


def test_array_variables(monkeypatch):
    from kernlearn_cli.errors import ConfigError
    from kernlearn_cli.runner import ARRAY_VARS, array_index_from_env

    for var in ARRAY_VARS:
        monkeypatch.delenv(var, raising=False)
    assert array_index_from_env() is None
    for var, value, index in [("SLURM_ARRAY_TASK_ID", "0", 0), ("SGE_TASK_ID", "3", 2), ("PBS_ARRAY_INDEX", "7", 7),
                              ("LSB_JOBINDEX", "1", 0), ("SGE_TASK_ID", "undefined", None), ("LSB_JOBINDEX", "0", None)]:
        monkeypatch.setenv(var, value)
        assert array_index_from_env() == index, (var, value)
        monkeypatch.delenv(var)
    for var, value in [("SLURM_ARRAY_TASK_ID", "abc"), ("SLURM_ARRAY_TASK_ID", "1.5"), ("SGE_TASK_ID", "0")]:
        monkeypatch.setenv(var, value)
        with pytest.raises(ConfigError, match=var):
            array_index_from_env()
        monkeypatch.delenv(var)


def test_slurm_packs_cells_under_the_array_limit_and_quotes_paths(tmp_path, inproc):
    cfg = write_config(tmp_path / "c.yaml", grid={"constraints.count": list(range(10, 60)), "seed": "range(50)"})
    out = tmp_path / "with space" / "out"
    code, stdout, stderr = inproc("slurm", cfg, "--out", out, "--account", "proj 1", "--qos", "short",
                                  "--sbatch-arg=--constraint=avx2")
    assert code == 0, stderr
    script = Path(stdout.strip()).read_text()
    assert "#SBATCH --array=0-833" in script and "--cells-per-task 3" in script          # 2500 cells, <= 1000 tasks
    assert f'#SBATCH --output="{out.resolve()}/slurm/%A_%a.out"' in script
    assert '#SBATCH --account="proj 1"' in script and "#SBATCH --qos=short" in script
    assert "#SBATCH --constraint=avx2" in script
    assert "2500 cell(s) in 834 array task(s) (3 cells per task to stay within --max-array-size 1000)" in stderr
    code, stdout, _ = inproc("slurm", cfg, "--out", out, "--max-array-size", "2500")
    assert code == 0 and "#SBATCH --array=0-2499" in Path(stdout.strip()).read_text()
