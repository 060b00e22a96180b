"""Nothing learned is lost (issue 56 item 4): the factor is written when the solver ends, an interrupt
during evaluation keeps it, and the rerun evaluates only."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from kernlearn_cli import experiment
from kernlearn_cli.config import Cell
from kernlearn_cli.records import PENDING, cell_state


def _cell():
    return Cell(0, {"name": "pend", "seed": 0, "dataset": {"name": "iris"}, "kernel": {"name": "linear"},
                    "constraints": {"name": "idealized_pairs", "count": 10, "epsilon": 0.25},
                    "solver": {"name": "burg", "tol": 1e-3, "slack": 1.0},
                    "evaluate": [{"name": "knn_accuracy", "repeats": 2}]})


def _interrupt_evaluation(monkeypatch):
    def stop(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(experiment, "component_rng", stop)       # called for the evaluators only


def test_interrupt_during_evaluation_keeps_the_factor_and_rerun_evaluates_only(tmp_path, monkeypatch):
    cell = _cell()
    with monkeypatch.context() as m:
        _interrupt_evaluation(m)
        with pytest.raises(KeyboardInterrupt):
            experiment.run_cell(cell, tmp_path)
    cell_dir = tmp_path / cell.id
    assert (cell_dir / "factors.h5").is_file() and not (cell_dir / "record.json").exists()
    state, why = cell_state(cell_dir)
    assert state != "finished" and "evaluation pending" in why
    assert not experiment.is_current(cell_dir, cell)
    stamp = (cell_dir / "factors.h5").stat().st_mtime_ns

    solved = []
    real = experiment.prepare

    def counting_prepare(*args, **kwargs):
        prep = real(*args, **kwargs)
        solver, params = prep.bound["solver"]
        original = solver.func

        class Wrapped:
            name = solver.name
            func = staticmethod(lambda *a, **k: solved.append(1) or original(*a, **k))
        prep.bound["solver"] = (Wrapped, params)
        return prep

    monkeypatch.setattr(experiment, "prepare", counting_prepare)
    record = experiment.run_cell(cell, tmp_path)
    assert solved == []                                            # the solver did not run again
    assert (cell_dir / "factors.h5").stat().st_mtime_ns == stamp   # the kept factor, unchanged
    assert not (cell_dir / PENDING).exists() and cell_state(cell_dir)[0] == "finished"

    monkeypatch.setattr(experiment, "prepare", real)
    fresh = experiment.run_cell(cell, tmp_path / "fresh")
    assert record["metrics"] == fresh["metrics"]
    assert record["objective"] == fresh["objective"] and record["certificate"] == fresh["certificate"]


def test_changed_config_recomputes_the_kept_factor(tmp_path, monkeypatch):
    cell = _cell()
    with monkeypatch.context() as m:
        _interrupt_evaluation(m)
        with pytest.raises(KeyboardInterrupt):
            experiment.run_cell(cell, tmp_path)
    kept = json.loads((tmp_path / cell.id / PENDING).read_text())
    kept["config"]["solver"]["tol"] = 1e-2                         # computed under another setting
    (tmp_path / cell.id / PENDING).write_text(json.dumps(kept))
    prep = experiment.prepare(cell, "config")
    assert experiment.pending_result(tmp_path / cell.id, cell, prep) is None


def test_sigint_during_an_evaluator_keeps_the_factor(tmp_path):
    rng = np.random.default_rng(0)
    n = 20000
    y = rng.integers(0, 3, n)
    np.save(tmp_path / "X.npy", rng.standard_normal((n, 3)) + y[:, None])
    (tmp_path / "y.csv").write_text("\n".join(map(str, y)) + "\n")
    (tmp_path / "c.yaml").write_text(
        "name: sig\nseed: 0\n"
        f"dataset: {{name: files, features: {tmp_path / 'X.npy'}, labels: {tmp_path / 'y.csv'}}}\n"
        "kernel: {name: linear}\n"
        "constraints: {name: idealized_pairs, count: 20}\n"
        "solver: {name: burg, slack: 1.0}\n"
        "evaluate: [{name: knn_accuracy, repeats: 1000}]\n")
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-m", "kernlearn_cli", "run", str(tmp_path / "c.yaml"), "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            # a background job inherits SIGINT ignored (CI): Python then installs no handler
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 300
    while not list(out.glob("*/factors.h5")) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert list(out.glob("*/factors.h5")), proc.communicate()
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode != 0
    cell_dir = list(out.glob("*/factors.h5"))[0].parent
    assert not (cell_dir / "record.json").exists() and (cell_dir / PENDING).exists()
    assert "evaluating 'knn_accuracy'" in err and "factor is kept" in err, err
