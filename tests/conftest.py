"""Test setup: a private data home per session, and the shared mirror when it is beside the clone."""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MIRROR = REPO.parent / "shared" / "datasets"


@pytest.fixture(scope="session", autouse=True)
def data_env(tmp_path_factory):
    """Downloads go to a temporary data home; ``KERNLEARN_DATA_MIRROR`` defaults to ../shared/datasets."""
    old = {k: os.environ.get(k) for k in ("KERNLEARN_DATA", "KERNLEARN_DATA_MIRROR")}
    os.environ["KERNLEARN_DATA"] = str(tmp_path_factory.mktemp("data_home"))
    if not os.environ.get("KERNLEARN_DATA_MIRROR") and MIRROR.is_dir():
        os.environ["KERNLEARN_DATA_MIRROR"] = str(MIRROR)
    yield
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def has_mirror() -> bool:
    """True when a data mirror is configured or sits beside the clone (usable at collection time)."""
    return bool(os.environ.get("KERNLEARN_DATA_MIRROR")) or MIRROR.is_dir()


@pytest.fixture
def empty_home(tmp_path, monkeypatch):
    """An empty data home, no mirror."""
    monkeypatch.setenv("KERNLEARN_DATA", str(tmp_path / "home"))
    monkeypatch.delenv("KERNLEARN_DATA_MIRROR", raising=False)
    return tmp_path / "home"


@pytest.fixture
def home(empty_home, monkeypatch):
    """An empty data home fed from the shared mirror."""
    if not MIRROR.is_dir():
        pytest.skip(f"no dataset mirror at {MIRROR}")
    monkeypatch.setenv("KERNLEARN_DATA_MIRROR", str(MIRROR))
    return empty_home


@pytest.fixture
def inproc(capfd, monkeypatch):
    """Run ``kernlearn ARGS`` in this process: (exit status, stdout, stderr)."""
    import sys

    from kernlearn_cli.cli import main

    def run(*args, env=None):
        for key, value in (env or {}).items():
            monkeypatch.setenv(key, value)
        monkeypatch.setattr(sys, "argv", ["kernlearn", *map(str, args)])
        capfd.readouterr()
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code or 0
        out, err = capfd.readouterr()
        for key in env or {}:
            monkeypatch.delenv(key)
        return code, out, err

    return run


def kernlearn(*args, cwd=None, env=None):
    """Run the command line in a subprocess (real exit codes, real stderr)."""
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "kernlearn_cli", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, **(env or {})})


def gyrb_standin(home: Path) -> Path:
    """Write a synthetic 52 x 52 stand-in for the GyrB kernel (3 classes) into ``home``/gyrb."""
    import numpy as np

    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], [17, 17, 18])
    X = rng.standard_normal((52, 5)) + 3.0 * np.eye(5)[y]
    (home / "gyrb").mkdir(parents=True)
    np.save(home / "gyrb" / "kernel.npy", np.exp(-0.1 * ((X[:, None] - X[None]) ** 2).sum(-1)))
    np.save(home / "gyrb" / "labels.npy", y)
    return home
