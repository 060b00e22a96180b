"""Compiled kernels are never stale (issue 45, item 0): numba caches per file, so a compiled function
calling a helper of another file used to be loaded from the cache after the helper was edited."""

import shutil
import subprocess
import sys

import pytest

from helpers import REPO

HELPER = "from numba import njit\n\n\n@njit(cache=True)\ndef helper(x):\n    return x + {add}\n"
CALLER = ("from numba import njit\n\nfrom ._probe_helper import helper\n\n\n@njit(cache=True)\n"
          "def caller(x):\n    return 10.0 * helper(x)\n")
RUN = "from kernlearn_cli.solvers._probe_caller import caller; print(caller(1.0))"


@pytest.mark.slow
def test_an_edited_helper_recompiles_its_callers(tmp_path):
    """A copy of the package with two compiled probes, the caller in one file, its helper in another:
    run (compiles, caches), edit only the helper, run again: the new helper's answer."""
    shutil.copytree(REPO / "kernlearn_cli", tmp_path / "kernlearn_cli",
                    ignore=shutil.ignore_patterns("__pycache__"))
    solvers = tmp_path / "kernlearn_cli" / "solvers"
    (solvers / "_probe_caller.py").write_text(CALLER)
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}

    def run():
        res = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True, cwd=tmp_path, env=env)
        assert res.returncode == 0, res.stderr
        return float(res.stdout)

    (solvers / "_probe_helper.py").write_text(HELPER.format(add=1.0))
    assert run() == 20.0
    assert run() == 20.0                                          # loaded from the cache
    assert list((solvers / "__pycache__").glob("kernlearn-*/**/*.nbi"))
    (solvers / "_probe_helper.py").write_text(HELPER.format(add=2.0))
    assert run() == 30.0                                          # was 20.0: the caller's stale cache
