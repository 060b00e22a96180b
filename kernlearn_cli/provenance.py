"""Where a record comes from: the kernlearn version and, when run from a git checkout, its commit
and whether the checkout was modified.  Records keep it under ``provenance``; tables ignore it, and
two records of one cell that differ only in it (and in timings) are the same result
(:mod:`kernlearn_cli.archive`)."""

from __future__ import annotations

import subprocess
from functools import lru_cache
from pathlib import Path

from . import __version__

#: The checkout the package runs from (if it is one).
SOURCE = Path(__file__).resolve().parent.parent


def _git(*args: str) -> str | None:
    try:
        proc = subprocess.run(["git", "-C", str(SOURCE), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


@lru_cache(maxsize=1)
def code_provenance() -> dict:
    """``{"kernlearn_version", "git_commit", "git_dirty"}`` of this process's code (commit None
    outside a checkout; dirty when tracked files under ``kernlearn_cli/`` differ from the commit)."""
    commit = _git("rev-parse", "HEAD") if (SOURCE / ".git").exists() else None
    dirty = bool(_git("status", "--porcelain", "--untracked-files=no", "--", "kernlearn_cli")) if commit else None
    return {"kernlearn_version": __version__, "git_commit": commit, "git_dirty": dirty}


#: The distributions whose versions a record keeps (kernlearn's own dependencies).
DEPENDENCIES = ("numpy", "scipy", "numba", "h5py", "scikit-learn", "pandas", "threadpoolctl")


@lru_cache(maxsize=1)
def environment_provenance() -> dict:
    """What ran a record beyond the code: ``python``, ``platform``, ``host``, ``cpu`` (its model
    name), ``numpy_simd`` (:func:`numpy_simd`), ``versions`` of :data:`DEPENDENCIES`, and ``blas``,
    the BLAS libraries loaded (implementation, version, CPU kernel, threading layer).  The threads
    a cell uses are the record's ``blas_threads``."""
    import platform
    import socket
    from importlib.metadata import PackageNotFoundError, version

    import numpy  # noqa: F401  (loads the BLAS threadpoolctl reports)
    import scipy.linalg  # noqa: F401
    from threadpoolctl import threadpool_info

    versions = {}
    for name in DEPENDENCIES:
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            versions[name] = None
    blas = [{k: lib.get(k) for k in ("internal_api", "version", "architecture", "threading_layer")}
            | {"library": Path(lib.get("filepath", "")).name}
            for lib in sorted(threadpool_info(), key=lambda lib: lib.get("filepath", "")) if lib.get("user_api") == "blas"]
    return {"python": platform.python_version(), "platform": platform.platform(), "host": socket.gethostname(),
            "cpu": cpu_model(), "numpy_simd": numpy_simd(), "versions": versions, "blas": blas}


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; :func:`platform.processor` elsewhere)."""
    import platform

    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def numpy_simd() -> list[str] | None:
    """numpy's dispatch targets this process uses (e.g. ``["X86_V3", "X86_V4"]``): the CPU's
    features less those switched off by ``NPY_DISABLE_CPU_FEATURES``.

    They change the last bits of numpy's vectorized loops (``exp``, ``log``, sums), so two hosts
    with different targets can take different iterates in an ill-conditioned solve: li2009's cold
    heart TRIN cell takes 129 Newton iterations with X86_V4 (AVX-512) and 140 without, objectives
    equal to 5e-12 (docs/cluster.md).  None when numpy does not say."""
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
    except ImportError:
        return None
    return [t for t in __cpu_dispatch__ if __cpu_features__.get(t)]
