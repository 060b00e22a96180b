"""Large steps and Ctrl-C (issue 44, item 2): a step estimated above 1 GB or 60 s says so before it
starts, a MemoryError is one paragraph (exit 2), Ctrl-C ends a command within seconds whatever the
work is doing (the supervisor, :mod:`kernlearn_cli.supervise`), and a cell says its phase when it lasts."""

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from helpers import REPO
from kernlearn_cli import progress, resources
from kernlearn_cli.errors import ResourceError
from kernlearn_cli.lowrank import factorize

#: A dataset loader registered in a child interpreter that then runs the ``kernlearn`` entry point:
#: ``stuck`` blocks SIGINT and sleeps (a cell inside LAPACK or a compiled kernel never sees Ctrl-C);
#: ``slow`` sleeps, interruptibly, and takes ``linger`` seconds to stop.  Both print READY and their pid just before they sleep (``stuck``: with
#: SIGINT blocked).
SCRIPT = textwrap.dedent("""
    import os, signal, sys, time
    import numpy as np
    from kernlearn_cli.registry import datasets
    from kernlearn_cli.types import Dataset

    @datasets.register("stuck_or_slow")
    def stuck_or_slow(*, stuck: bool = True, seconds: float = 600.0, linger: float = 0.0):
        if stuck:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        print("READY", os.getpid(), flush=True)
        try:
            time.sleep(seconds)
        except KeyboardInterrupt:
            time.sleep(linger)
            raise
        return Dataset("stuck_or_slow", X=np.eye(6), y=np.array([0, 0, 0, 1, 1, 1]))

    from kernlearn_cli.cli import entry
    sys.argv = ["kernlearn", *sys.argv[1:]]
    entry()
""")


def config(tmp_path, **dataset):
    cfg = {"name": "stuck", "seed": 0, "dataset": {"name": "stuck_or_slow", **dataset}, "kernel": {"name": "linear"},
           "constraints": {"name": "random_pairs", "count": 3}, "solver": {"name": "burg"}, "evaluate": []}
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def start(tmp_path, cfg):
    # a background job starts with SIGINT ignored: give the child a terminal's default disposition
    return subprocess.Popen([sys.executable, "-c", SCRIPT, "run", str(cfg), "--out", str(tmp_path / "out")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def ctrl_c_when_ready(proc):
    """Send SIGINT once the work is in place (it printed READY and its main thread sleeps in the kernel:
    /proc/PID/wchan is ``hrtimer_nanosleep``) and the supervisor (``proc``) waits for it with its handlers
    installed (it sleeps in ``waitpid``: ``do_wait``).  Sent earlier, Ctrl-C would find the work still in
    Python code: between READY and the sleep, a handler run by another thread of the work (SIGINT is
    blocked only in the main one) raises at the next bytecode, and the work stops by itself (seen in CI)."""
    ready, pid = proc.stdout.readline().split()
    assert ready == "READY"
    deadline = time.monotonic() + 60
    for who, state in ((proc.pid, "do_wait"), (int(pid), "hrtimer_nanosleep")):
        wchan = Path(f"/proc/{who}/wchan")
        while wchan.read_text() != state:
            assert time.monotonic() < deadline, f"process {who} is not in {state}: {wchan.read_text()!r}"
            time.sleep(0.01)
    proc.send_signal(signal.SIGINT)


@pytest.mark.slow
def test_ctrl_c_ends_a_command_stuck_in_compiled_code(tmp_path):
    """The work blocks SIGINT (as LAPACK or a compiled kernel in effect does): before the supervisor,
    Ctrl-C did nothing until the step ended (here: 600 s)."""
    proc = start(tmp_path, config(tmp_path, stuck=True))
    ctrl_c_when_ready(proc)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "kernlearn: interrupted: the work was inside compiled code" in err and "resumes" in err
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").glob("*/record.json"))


@pytest.mark.slow
def test_ctrl_c_in_python_code_says_it_was_interrupted(tmp_path):
    """Ctrl-C while the cells are checked (before the run's progress exists) used to exit 130 silently."""
    proc = start(tmp_path, config(tmp_path, stuck=False))
    ctrl_c_when_ready(proc)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "kernlearn: interrupted; finished cells are kept" in err and "Traceback" not in err


@pytest.mark.slow
def test_a_command_that_takes_long_to_stop_is_waited_for(tmp_path):
    """A command in Python code says it is stopping: on a loaded machine its stop may take longer than
    the grace given to compiled code (here 1.5 s more), and it was killed and said to be "inside compiled
    code" (seen in CI)."""
    from kernlearn_cli.supervise import GRACE

    proc = start(tmp_path, config(tmp_path, stuck=False, linger=GRACE + 1.5))
    ctrl_c_when_ready(proc)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "kernlearn: interrupted; finished cells are kept" in err and "compiled code" not in err


@pytest.mark.slow
def test_a_lasting_phase_is_said_with_the_cell_and_what_it_does(tmp_path):
    proc = start(tmp_path, config(tmp_path, stuck=False, seconds=progress.PHASE_FIRST + 2))
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "] loading dataset 'stuck_or_slow', 3s" in err


def test_phase_lines_in_process(monkeypatch, capsys):
    monkeypatch.setattr(progress, "PHASE_FIRST", 0.1)
    with progress.phase("cell_x", "building K0 'rbf' (n = 5)"):
        time.sleep(0.8)
    with progress.phase("cell_x", "solving 'burg'"):
        pass                                               # too short to be said
    err = capsys.readouterr().err
    assert "[cell_x] building K0 'rbf' (n = 5), 0s" in err and "solving" not in err


def test_a_large_step_is_announced_before_it_starts(monkeypatch, capsys):
    monkeypatch.setattr(resources, "LIMIT_BYTES", 1000.0)
    factorize(np.eye(30))
    err = capsys.readouterr().err
    assert "large step: eigendecomposition of the 30 x 30 kernel matrix: about 0 MB of memory" in err
    assert "nystrom" in err                                # the cheaper alternative
    assert resources.eigh_cost(20000)[0] == pytest.approx(9.6e9)   # the 9.2 GB peak at n = 20000


PHASE_LINE = re.compile(r"^\s+\[[^\]]+\] .*, \d+(m\d+)?s$")


def test_memory_error_is_one_paragraph_naming_the_step(monkeypatch, inproc, tmp_path):
    def no_memory(a):
        raise MemoryError

    monkeypatch.setattr("kernlearn_cli.lowrank.eigh", no_memory)
    monkeypatch.chdir(tmp_path)        # K0's factor is memoised per working folder: an earlier run's would skip eigh
    cfg = {"name": "oom", "seed": 0, "dataset": {"name": "iris"}, "kernel": {"name": "rbf"},
           "constraints": {"name": "random_pairs", "count": 5}, "solver": {"name": "burg"}, "evaluate": []}
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(cfg))
    code, out, err = inproc("run", tmp_path / "cfg.yaml", "--out", tmp_path / "out")
    assert code == 2, err
    assert "out of memory in eigendecomposition of the 150 x 150 kernel matrix: about" in err
    said = [line for line in err.splitlines() if line.strip() and not PHASE_LINE.match(line)]   # a loaded machine may add phase lines
    assert "Traceback" not in err and len(said) == 1, err
    with pytest.raises(ResourceError, match="out of memory in the step: about 2.0 GB"):
        with resources.heavy_step("the step", 2e9):
            raise MemoryError


#: ``kernlearn`` with an evaluator ``nap`` that, with NAP=1, sleeps (interruptibly) in every cell but
#: the first, after printing NAPPING: SIGTERM then comes while one cell is finished and one runs.
NAP_SCRIPT = textwrap.dedent("""
    import os, sys, time
    from kernlearn_cli.registry import evaluators

    calls = []

    @evaluators.register("nap")
    def nap(G, ds, *, rng):
        calls.append(1)
        if len(calls) > 1 and os.environ.get("NAP") == "1":
            print("NAPPING", flush=True)
            time.sleep(600)
        return {"napped": float(len(calls))}

    from kernlearn_cli.cli import entry
    sys.argv = ["kernlearn", *sys.argv[1:]]
    entry()
""")


def test_sigterm_stops_a_run_like_ctrl_c_and_a_rerun_resumes(tmp_path):
    """SIGTERM (a scheduler preempting the task) while the second of three cells runs: the first is
    kept, the run says what finished and exits 143 (128 + SIGTERM); the same command then computes only
    the other two, the first's record untouched.  Before, the child died of SIGTERM without a word."""
    cfg = {"name": "term", "seed": 0, "grid": {"seed": "range(3)"}, "dataset": {"name": "iris"},
           "kernel": {"name": "linear"}, "constraints": {"name": "idealized_pairs", "count": 10},
           "solver": {"name": "burg", "slack": 1.0}, "evaluate": [{"name": "nap"}]}
    (tmp_path / "cfg.yaml").write_text(yaml.safe_dump(cfg))
    args = [sys.executable, "-c", NAP_SCRIPT, "run", str(tmp_path / "cfg.yaml"), "--out", str(tmp_path / "out")]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                            env={**os.environ, "NAP": "1"},
                            preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL))
    while "NAPPING" not in proc.stdout.readline():
        assert proc.poll() is None, proc.stderr.read()
    (first,) = (tmp_path / "out").glob("*/record.json")
    before = (first.stat().st_mtime_ns, first.read_bytes())
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "interrupted: term: 1 of 3 cells finished (1 in this run)" in err
    assert "kernlearn: stopped by SIGTERM" in err and "Traceback" not in err
    assert "inside compiled code" not in err                 # it stopped by itself, within the grace
    again = subprocess.run(args, capture_output=True, text=True, cwd=REPO, env={**os.environ, "NAP": "0"}, timeout=300)
    assert again.returncode == 0, again.stderr
    assert "2 cell(s) run, 1 already finished, 0 failed" in again.stderr
    assert (first.stat().st_mtime_ns, first.read_bytes()) == before
    assert len(list((tmp_path / "out").glob("*/record.json"))) == 3
