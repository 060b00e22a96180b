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
