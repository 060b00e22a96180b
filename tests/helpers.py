"""Helpers shared by the test modules: the repository's paths, the dataset mirror, the command line in a
subprocess and synthetic data files.

Test modules import from here (``from helpers import kernlearn``), never from each other or from
``conftest`` (which holds the fixtures only).
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

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
