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


def test_prune_keeps_only_the_folders_of_the_current_sources(tmp_path):
    """`kernlearn warmup` removes the cache folders no current source reads: a module's other digests,
    modules that are gone, and the single-folder caches of earlier versions; it keeps the current ones."""
    from kernlearn_cli import solvers

    current = solvers.cache_dir("kernlearn_cli.solvers._cyclic").name
    names = [current, "kernlearn-solvers._cyclic-0123456789abcdef", "kernlearn-solvers._gone-0123456789abcdef",
             "kernlearn-0123456789abcdef", "unrelated"]
    for name in names:
        (tmp_path / name / "sub").mkdir(parents=True)
    removed = solvers.prune(tmp_path)
    assert sorted(p.name for p in removed) == sorted(names[1:4])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([current, "unrelated"])


def test_each_kernel_module_is_cached_under_its_own_digest():
    """A kernel's cache folder is named after its module and the sources it imports: _burg_kernels
    imports _cyclic (its folder follows _cyclic's edits), the ADMM kernels do not."""
    from kernlearn_cli import codehash, solvers

    assert "kernlearn_cli.solvers._cyclic" in codehash.closure("kernlearn_cli.solvers._burg_kernels")
    assert "kernlearn_cli.solvers._cyclic" not in codehash.closure("kernlearn_cli.solvers._admm_kernels")
    assert "kernlearn_cli.solvers.trin" not in codehash.closure("kernlearn_cli.solvers._trin_kernels")
    burg = solvers.cache_dir("kernlearn_cli.solvers._burg_kernels")
    assert burg.name.startswith("kernlearn-solvers._burg_kernels-") and burg.parent == solvers.cache_base()
    from kernlearn_cli.solvers import _burg_kernels  # noqa: F401  (its dispatchers use the folder)

    locator = _burg_kernels._bt_times._cache._impl.locator
    assert type(locator).__name__ == "ClosureCacheLocator" and locator.get_cache_path().startswith(str(burg))


def test_pruning_one_module_keeps_its_current_folder_and_the_other_modules(tmp_path):
    """What a process compiling a new version of one module removes: that module's older folders only,
    never the current one (another process may be filling it)."""
    from kernlearn_cli import solvers

    current = solvers.cache_dir("kernlearn_cli.solvers._cyclic").name
    other = solvers.cache_dir("kernlearn_cli.solvers._admm_kernels").name
    for name in (current, other, "kernlearn-solvers._cyclic-0123456789abcdef", "kernlearn-0123456789abcdef"):
        (tmp_path / name).mkdir()
    removed = solvers.prune(tmp_path, "kernlearn_cli.solvers._cyclic")
    assert [p.name for p in removed] == ["kernlearn-solvers._cyclic-0123456789abcdef"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([current, other, "kernlearn-0123456789abcdef"])
