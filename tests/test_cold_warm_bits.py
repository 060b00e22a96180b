"""Same bits whether a process compiles the kernels or loads them from numba's cache.

numba links a compiled function's callees by symbol, so when a helper is compiled into several kernels
the copy that runs depends on what the process compiled or loaded first; copies optimised under
fastmath in different callers reassociate their reductions differently.  Before the shared helpers of
the von Neumann and DefiniteBoost kernels kept IEEE semantics (``_secular.py``'s note), a process that
compiled them gave other bits than one that loaded them (40 of 129 arrays, up to 1e-13 relative).

The workload below runs every solver with compiled kernels (:func:`compiled`), with the settings that choose their
compiled paths (hard and slack sweeps, the eigen and Krylov von Neumann sweeps, DefiniteBoost's two
projections, MEG's two updates); the test runs it in a process with an empty cache (everything
compiles) and again in one that loads it all, and compares every array bit for bit.

    python tests/test_cold_warm_bits.py OUT.npz      # the workload alone
"""

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from helpers import REPO


def compiled() -> list[str]:
    """The solvers with numba kernels: those that declare a warm-up (``solvers.register(warmup=...)``;
    tests/test_solver_facts.py holds every module with kernels to declaring one)."""
    from kernlearn_cli.registry import solvers

    return sorted(e.name for e in solvers.entries() if e.warmup)


def workload() -> dict:
    from kernlearn_cli.registry import solvers
    from helpers import feasible_instance

    out = {}

    def keep(name, res):
        out[f"{name}/G"] = np.asarray(res.G)
        out[f"{name}/objective"] = np.float64(res.objective)
        for key, value in res.history.items():
            if "seconds" not in key:
                out[f"{name}/history/{key}"] = np.asarray(value, dtype=float)

    extra = {"burg": [{}, {"slack": 10.0}], "von_neumann": [{}, {"slack": 10.0}],    # slack: distances only
             "definiteboost": [{}, {"projection": "approximate", "dual_correction": False}],
             "meg": [{}, {"update": "lanczos"}]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in compiled():
            for seed in range(2):
                for k, more in enumerate(extra.get(name, [{}])):
                    G0, C, kw = solvers.get(name).checks.make(seed)
                    if "slack" in more:
                        G0, C = feasible_instance(seed, n=30, r=5, c=12, kinds=("dist_le", "dist_ge"))
                    keep(f"{name}/{seed}/{k}", solvers.get(name).func(G0, C, **{**kw, **more}))
        for seed in range(2):                      # wide spectra: the von Neumann eigen sweep
            G0, C = feasible_instance(seed, n=40, r=6, c=25)
            keep(f"von_neumann_wide/{seed}", solvers.get("von_neumann").func(G0, C, tol=1e-9))
    return out


def _run(path: Path, cache: Path) -> None:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    proc = subprocess.run([sys.executable, __file__, str(path)], env=env, cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.mark.slow
def test_a_process_that_compiles_gives_the_bits_of_one_that_loads_the_cache(tmp_path):
    _run(tmp_path / "cold.npz", tmp_path / "cache")        # empty cache: every kernel compiles here
    _run(tmp_path / "warm.npz", tmp_path / "cache")        # every kernel loads from the cache
    cold, warm = np.load(tmp_path / "cold.npz"), np.load(tmp_path / "warm.npz")
    assert sorted(cold.files) == sorted(warm.files)
    assert {k.split("/")[0] for k in cold.files} >= set(compiled()) >= {"burg", "von_neumann", "definiteboost", "meg"}
    differ = [k for k in cold.files if cold[k].tobytes() != warm[k].tobytes()]
    assert not differ, f"{len(differ)} of {len(cold.files)} arrays differ: {differ[:10]}"


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    np.savez(sys.argv[1], **workload())
