"""Helpers shared by the test modules: the repository's paths, the dataset mirror, the command line in a
subprocess, synthetic data files and the random problem instances several test modules solve.

Test modules import from here (``from helpers import kernlearn``), never from each other or from
``conftest`` (which holds the fixtures only).
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kernlearn_cli.testing.instances import (definiteboost_instance, feasible_instance, meg_stream,  # noqa: F401
                                             random_factor, trin_instance)

REPO = Path(__file__).resolve().parents[1]
#: The dataset mirror beside the clone (CI and this workplace), used when KERNLEARN_DATA_MIRROR is unset.
MIRROR = REPO.parent / "shared" / "datasets"


def mirror_dir() -> Path | None:
    """The dataset mirror as a local folder: ``KERNLEARN_DATA_MIRROR`` when it names one, else
    ``../shared/datasets`` beside the clone when it exists, else None (usable at collection time)."""
    configured = os.environ.get("KERNLEARN_DATA_MIRROR", "").removeprefix("file://")
    if configured and Path(configured).is_dir():
        return Path(configured)
    return MIRROR if MIRROR.is_dir() else None


def slow_for(cases, solvers, name=lambda case: case) -> list:
    """``cases`` for ``pytest.mark.parametrize``, those of the named ``solvers`` (``name(case)``) marked
    ``slow``: their instances take seconds to solve (pr_cg's PR+ steps, meg's Lanczos updates, ...)."""
    return [pytest.param(*(case if isinstance(case, tuple) else (case,)), marks=pytest.mark.slow)
            if name(case) in solvers else case for case in cases]


def has_mirror() -> bool:
    """True when a data mirror is configured or sits beside the clone (usable at collection time)."""
    return bool(os.environ.get("KERNLEARN_DATA_MIRROR")) or MIRROR.is_dir()


def kernlearn(*args, cwd=None, env=None) -> subprocess.CompletedProcess:
    """Run the command line in a subprocess (real exit codes, real stderr)."""
    return subprocess.run([sys.executable, "-m", "kernlearn_cli", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, **(env or {})})


def gyrb_standin(home: Path) -> Path:
    """Write a synthetic 52 x 52 stand-in for the GyrB kernel (3 classes) into ``home``/gyrb."""
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], [17, 17, 18])
    X = rng.standard_normal((52, 5)) + 3.0 * np.eye(5)[y]
    (home / "gyrb").mkdir(parents=True)
    np.save(home / "gyrb" / "kernel.npy", np.exp(-0.1 * ((X[:, None] - X[None]) ** 2).sum(-1)))
    np.save(home / "gyrb" / "labels.npy", y)
    return home


# ---- problem instances ---------------------------------------------------------------------------

def relative_violation(G, C):
    return C.violations(G) / np.maximum(np.abs(C.bound), 1e-12)


#: A tiny study (12 Burg cells on iris, a few seconds): its experiment's config and its study file, one
#: table and one statement; tests add what they need (a second table, explanations).
TINY_CONFIG = {"name": "tiny", "seed": 0, "grid": {"constraints.count": [30, 100, 300], "seed": "range(4)"},
               "dataset": {"name": "iris"}, "kernel": {"name": "linear"},
               "constraints": {"name": "idealized_pairs", "count": 10}, "solver": {"name": "burg", "slack": 1.0},
               "evaluate": [{"name": "knn_accuracy", "k": 5, "repeats": 2}]}
TINY_STUDY = {"paper": "tinypaper", "title": "A tiny paper",
              "experiments": {"burg": {"config": "tiny.yaml", "seconds_per_cell": 0.5}},
              "tables": {"tiny_acc": {"title": "accuracy", "from": ["burg"], "metric": "knn_accuracy",
                                      "rows": "constraints.count", "cols": "solver"}},
              "statements": [{"table": "tiny_acc", "row": 30, "col": "burg", "paper": 0.9, "rule": "abs 0.1", "quote": "about 0.9",
                              "where": "Table 1"}]}


def quick_run(tmp_path_factory) -> Path:
    """The README's first run, ``kernlearn run configs/quick.yaml`` (Burg with slack on iris, 3
    constraint counts x 3 seeds), in this process in a fresh folder; returns that folder."""
    import shutil
    import sys

    import pytest

    from kernlearn_cli.cli import main

    here = tmp_path_factory.mktemp("quick")
    (here / "configs").mkdir()
    shutil.copy(REPO / "configs" / "quick.yaml", here / "configs" / "quick.yaml")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(here)
        mp.setattr(sys, "argv", ["kernlearn", "run", "configs/quick.yaml"])
        with pytest.raises(SystemExit) as done:
            main()
    assert not done.value.code
    return here
