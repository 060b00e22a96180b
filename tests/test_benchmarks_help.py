"""Every script under benchmarks/ answers ``--help`` with its usage and writes nothing (issue 56, item 8).

``same_bits_kinds_split.py --help`` once saved its arrays to a file named ``--help.npz`` (committed at the
root), ``admm_vs_sdp.py --help`` was a traceback, and several scripts computed on ``--help``. Here each
script runs with ``--help`` in its own empty working directory (two at a time): it must exit 0, print an
argparse usage and a description, leave that directory empty and change nothing in the repository (its
``git status``, ignored files included, the same before and after; a tracked file rewritten with the
same bytes is not seen).
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from helpers import REPO

SCRIPTS = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "benchmarks").rglob("*.py")
                 if "__pycache__" not in p.parts)
#: Seconds one ``--help`` may take before it counts as computing (a usage takes well under 5 s).
TIMEOUT = 60


def repo_files() -> set[str]:
    """The repository's changed, untracked and ignored paths (``git status``), caches and the venv left out."""
    out = subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all"], cwd=REPO,
                         capture_output=True, text=True, check=True).stdout
    return {line for line in out.splitlines()
            if not any(part in line for part in ("__pycache__", ".pytest_cache", ".ruff_cache", ".venv"))}


def run_help(script: str, cwd) -> dict:
    """Exit code, output and what is left in ``cwd`` after ``python <script> --help`` run from ``cwd``."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1", "OPENBLAS_NUM_THREADS": "1",
           "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
    try:
        proc = subprocess.run([sys.executable, str(REPO / script), "--help"], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=TIMEOUT)
        code, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        code, out, err = None, exc.stdout or "", f"still running after {TIMEOUT} s (it computes on --help)"
    left = sorted(p.relative_to(cwd).as_posix() for p in cwd.rglob("*"))
    return {"code": code, "out": out if isinstance(out, str) else out.decode(), "err": err, "left": left}


@pytest.fixture(scope="module")
def helped(tmp_path_factory):
    """``{script: run_help(...)}`` for every script, two at a time, and the ``git status`` lines that came or went."""
    before = repo_files()
    dirs = {script: tmp_path_factory.mktemp(script.replace("/", "_").removesuffix(".py")) for script in SCRIPTS}
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = dict(zip(SCRIPTS, pool.map(lambda s: run_help(s, dirs[s]), SCRIPTS)))
    return runs, sorted(repo_files() ^ before)


def test_scripts_are_found():
    assert "benchmarks/checks/same_bits_kinds_split.py" in SCRIPTS and len(SCRIPTS) > 30, SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_prints_a_usage_and_what_the_script_measures_and_writes_nothing(helped, script):
    run = helped[0][script]
    assert not run["left"], f"{script} --help wrote {run['left']} in its working directory"
    assert run["code"] == 0, f"{script} --help: exit {run['code']}\n{run['err'][-2000:]}"
    assert run["out"].startswith("usage: "), f"{script} --help printed no usage:\n{run['out'][:1000]}"
    paragraphs = [p.strip() for p in run["out"].split("\n\n")]
    assert len(paragraphs) > 1 and paragraphs[1] and not paragraphs[1].startswith(("options:", "positional")), \
        f"{script} --help says nothing of what it measures (argparse description):\n{run['out'][:1000]}"


def test_help_writes_nothing_in_the_repository(helped):
    assert not helped[1], f"--help runs of benchmarks/ changed the repository: {helped[1]}"
