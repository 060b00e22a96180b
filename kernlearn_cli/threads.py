"""The thread environment a cell computes in: one thread count for every native thread pool.

:func:`blas_threads` is the count (``KERNLEARN_BLAS_THREADS``); :func:`cell_threads` holds every
pool at it while a cell computes (a cell's last bits depend on it); :func:`environment` sets
``os.environ`` variables for a block (the cell's thread variables, a reproduced job's settings).
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from threadpoolctl import threadpool_limits


def blas_threads() -> int:
    """BLAS threads per cell: ``KERNLEARN_BLAS_THREADS`` (default 1, the same in every process)."""
    value = os.environ.get("KERNLEARN_BLAS_THREADS", "1")
    return int(value) if value.isdigit() and int(value) > 0 else 1


#: The variables a native thread pool reads once, when its library is loaded: OpenMP runtimes
#: (scikit-learn's libgomp), OpenBLAS, MKL, BLIS.
THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")


@contextmanager
def cell_threads():
    """Every native thread pool at :func:`blas_threads` threads while a cell computes, including
    the pools of libraries first loaded inside (the variables :data:`THREAD_ENV` set meanwhile).

    ``threadpool_limits`` limits only the libraries loaded when it is entered.  scikit-learn (and
    its OpenMP runtime) is imported lazily, by the first cell that uses it, so that cell's k-means
    (``nystrom`` landmarks, ``kernel_kmeans_nmi``, ``pairwise_accuracy``) ran with as many OpenMP
    threads as the machine has cores and the later cells of the process with one: the centroids'
    per-thread partial sums moved their last bits, and a cell's record depended on whether it came
    first in its process (zhang2012 spambase: another C chosen by cross-validation).  A library
    loaded here reads the variables and starts at the cell's thread count; the variables are
    restored afterwards.
    """
    n = blas_threads()
    with environment({key: str(n) for key in THREAD_ENV}), threadpool_limits(limits=n):
        yield


@contextmanager
def environment(values: dict):
    """``os.environ`` with ``values`` set, restored afterwards."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
