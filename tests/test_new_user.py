"""What a new user hit (issue 31): a grid killed by one cell, "not converged" at the optimum,
silent merges of different configs, no progress on long work."""

import json
import re
import signal
import subprocess
import sys

import numpy as np
import pytest
import yaml

from helpers import REPO, kernlearn
from kernlearn_cli.constraints.pairs import _squared_distances, idealized_pairs, random_pairs, sample_pairs
from kernlearn_cli.kernels import linear
from kernlearn_cli.progress import RunProgress, iteration_limit
from kernlearn_cli.records import cell_state
from kernlearn_cli.registry import datasets
from kernlearn_cli.rng import component_rng

QUICK = REPO / "configs" / "quick.yaml"


def write(path, cfg):
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


# ---- 1. one cell's data never stops the grid ---------------------------------------------------

@pytest.mark.parametrize("generator", [idealized_pairs, random_pairs])
def test_pair_generators_never_pair_coincident_points(generator):
    """iris rows 101 and 142 coincide: no seed draws them (or any pair at distance 0), and count holds."""
    ds = datasets.get("iris").func()
    G = linear(ds)
    assert _squared_distances(G, np.array([101]), np.array([142]))[0] == 0.0
    for seed in range(8):
        C = generator(ds, G, rng=component_rng(seed, 1), count=300)
        assert len(C) == 300 and len(set(zip(C.i, C.j))) == 300
        assert np.all(_squared_distances(G, C.i, C.j) > 0) and np.all(C.bound > 0)


def test_sample_pairs_unchanged_where_nothing_is_refused():
    """A draw with no refused pair is the plain draw (same pairs, same order): results made before the
    rule on data without coincident points keep their bits; a refused pair is replaced by a new one."""
    plain = sample_pairs(40, 100, np.random.default_rng(3))
    kept = sample_pairs(40, 100, np.random.default_rng(3), keep=lambda i, j: np.ones(len(i), bool))
    assert all(np.array_equal(a, b) for a, b in zip(plain, kept))
    banned = (plain[0][5], plain[1][5])
    i, j = sample_pairs(40, 100, np.random.default_rng(3), keep=lambda i, j: (i != banned[0]) | (j != banned[1]))
    assert len(i) == 100 and banned not in set(zip(i, j)) and len(set(zip(i, j))) == 100


@pytest.mark.slow
def test_the_issue_grid_runs_every_cell(tmp_path):
    """The issue's command: 300 idealized pairs on iris with slack; seed 2 used to draw the bound-0 pair
    (101, 142) and kill the grid with a config error."""
    res = kernlearn("run", QUICK, "--out", tmp_path / "out", "--set", "grid.seed=range(3)", "--set",
                    "grid.constraints.count=[300]")
    assert res.returncode == 0, res.stderr
    assert "3 cell(s) run, 0 already finished, 0 failed" in res.stderr


@pytest.fixture
def good_and_bad(tmp_path):
    """A grid of two cells: one constraint file the slack solver takes, one it refuses (a bound 0)."""
    (tmp_path / "good.csv").write_text("i,j,kind,bound\n0,50,dist_ge,5.0\n1,2,dist_le,0.01\n")
    (tmp_path / "bad.csv").write_text("i,j,kind,bound\n0,50,dist_ge,5.0\n1,2,dist_le,0\n")
    cfg = write(tmp_path / "c.yaml", {
        "name": "mixed", "seed": 0,
        "grid": {"constraints.path": [str(tmp_path / "good.csv"), str(tmp_path / "bad.csv")]},
        "dataset": {"name": "iris"}, "kernel": {"name": "linear"},
        "constraints": {"name": "from_file", "path": "x"},
        "solver": {"name": "burg", "slack": 1.0}, "evaluate": [{"name": "kernel_kmeans_nmi"}]})
    return cfg, tmp_path / "out"


@pytest.mark.slow
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_cell_refused_by_its_solver_fails_alone(good_and_bad, jobs):
    """The refused cell is a failed cell (failed.json naming seed and reason), the other finishes, the
    table of the finished cells is printed, the exit status is 2 and the message names the cell."""
    cfg, out = good_and_bad
    res = kernlearn("run", cfg, "--out", out, "--jobs", jobs)
    assert res.returncode == 2
    assert "1 cell(s) run, 0 already finished, 1 failed" in res.stderr
    assert "kernlearn: error: 1 cell(s) failed" in res.stderr and "(seed 0)" in res.stderr
    assert "Traceback" not in res.stderr
    table = [line for line in res.stdout.splitlines() if line.startswith("|")]   # the finished cell's values
    assert "| nmi " in table[0] and len(table) == 4, res.stdout
    assert re.match(r"\| \S+bad\.csv +\| – +\|.*\| 0/1 +\|$", table[2]), table[2]
    assert re.match(r"\| \S+good\.csv +\| 0\.\d{4} ± 0\.0000 \|.*\| 1/1 +\|$", table[3]), table[3]
    states = {p.name: cell_state(p)[0] for p in out.iterdir() if p.is_dir() and p.name != "shared"}
    assert sorted(states.values()) == ["failed", "finished"]
    bad = next(out / name for name, state in states.items() if state == "failed")
    failure = json.loads((bad / "failed.json").read_text())
    assert failure["seed"] == 0 and failure["kind"] == "data error" and "bound 0" in failure["error"]
    again = kernlearn("run", cfg, "--out", out)                  # a rerun retries only the failed cell
    assert again.returncode == 2 and "0 cell(s) run, 1 already finished, 1 failed" in again.stderr


# ---- 2. a start point that is already optimal -------------------------------------------------

@pytest.mark.parametrize("solver", ["burg", "von_neumann"])
@pytest.mark.parametrize("slack", [1.0, float("inf")])
def test_start_point_certified_optimal_returns_at_once(solver, slack):
    """random_pairs with the initial kernel as reference: K0 meets every constraint, D(K0, K0) = 0 is the
    optimum.  The solver returns K0 after no sweep, converged (it used to sweep to max_sweeps, the
    relative dual change of duals at rounding level never falling below tol)."""
    from kernlearn_cli.kernels import rbf
    from kernlearn_cli.registry import solvers

    ds = datasets.get("iris").func()
    G0 = rbf(ds)
    C = random_pairs(ds, G0, rng=component_rng(0, 1), count=100)
    res = solvers.get(solver).func(G0, C, tol=1e-3, slack=slack, max_sweeps=300)
    assert res.converged and res.iterations == 0
    assert res.certificate["checks"]["max_violation"]["value"] <= 1e-12
    assert np.allclose(res.G @ res.G.T, G0 @ G0.T, rtol=0, atol=1e-10 * np.abs(G0 @ G0.T).max())
    assert res.objective == pytest.approx(0.0, abs=1e-10)


# ---- 3. collect over folders of different settings --------------------------------------------

@pytest.mark.slow
def test_collect_keeps_different_settings_apart_and_writes_only_where_asked(tmp_path):
    grid = ["--set", "grid.seed=range(2)", "--set", "grid.constraints.count=[10]"]
    a, b = tmp_path / "A", tmp_path / "B"
    assert kernlearn("run", QUICK, "--out", a, *grid).returncode == 0
    assert kernlearn("run", QUICK, "--out", b, *grid, "--set", "solver.tol=1e-6").returncode == 0
    before = {p.name: p.read_bytes() for p in a.glob("t*.*")}
    res = kernlearn("collect", a, b)
    assert res.returncode == 0, res.stderr
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("|")]
    assert "solver.tol" in lines[0] and len(lines) == 4          # header, rule, one row per tol
    assert [ln.strip("| ").split("|")[-1].strip() for ln in lines[2:]] == ["2", "2"]   # seeds: 2 per row, not 4
    assert {p.name: p.read_bytes() for p in a.glob("t*.*")} == before   # A's tables untouched
    assert "not written" in res.stderr
    res = kernlearn("collect", a, b, "--prefix", tmp_path / "both")
    assert res.returncode == 0 and (tmp_path / "both.md").read_text().count("\n") == 4
    assert {p.name: p.read_bytes() for p in a.glob("t*.*")} == before


# ---- 5. progress -------------------------------------------------------------------------------

@pytest.mark.slow
def test_run_in_a_log_says_k_of_n_and_iterations_of_max(tmp_path):
    res = kernlearn("run", QUICK, "--out", tmp_path / "out", "--set", "grid.seed=range(2)", "--set",
                    "grid.constraints.count=[10]", "-v")
    assert res.returncode == 0
    assert "[1/2] count-10_seed-0" in res.stdout and "[2/2] count-10_seed-1" in res.stdout
    assert "iter     1 of 10000" in res.stdout and "left)" in res.stdout


def test_progress_counts_and_interrupt_line():
    class Cell:
        def __init__(self, k):
            self.index, self.id, self.seed = k, f"cell{k}", k

    lines = []
    with RunProgress("exp", 4, tty=False) as p:
        p.say = lines.append
        p.cell(Cell(0), None, None, str)                       # already finished
        p.cell(Cell(1), {"x": 1}, None, lambda r: "ran")
        p.cell(Cell(2), None, "data error: bad", str)
    assert lines[0].startswith("[2/4] cell1: ran") and "left)" in lines[0]
    assert lines[1].startswith("[3/4] cell2: FAILED (cell #2, seed 2): data error")
    assert p.status().startswith("3/4 cells, 1 failed")
    assert "2 of 4 cells finished (1 in this run), 1 failed" in p.interrupted()
    assert "resumes with the other 2" in p.interrupted()
    assert iteration_limit({"max_sweeps": 50, "max_iter": 7}, "max_sweeps") == ("max_sweeps", 50)
    assert iteration_limit({"max_sweeps": 50, "max_iter": 7}, "max_iter") == ("max_iter", 7)   # the budget decides
    assert iteration_limit({"tol": 1}, "") is None and iteration_limit({"iterations": 0}, "iterations") is None


@pytest.mark.slow
def test_ctrl_c_says_what_finished_and_that_a_rerun_resumes(tmp_path):
    # 60 cells, so that the interrupt lands mid-grid however fast this machine runs a cell
    cmd = [sys.executable, "-m", "kernlearn_cli", "run", str(QUICK), "--out", str(tmp_path / "out"),
           "--set", "grid.seed=range(60)", "--set", "grid.constraints.count=[300]"]
    # a shell's background job (nohup ... &) starts with SIGINT ignored, and Python keeps an ignored
    # SIGINT ignored: give the child the default disposition, as a terminal's Ctrl-C has
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    first = proc.stdout.readline()                             # the first cell's line
    assert first.startswith("[1/60]"), first
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted: quick_iris_burg:" in err and "of 60 cells finished" in err
    assert "the same command resumes" in err and "Traceback" not in err
