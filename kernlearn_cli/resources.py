"""Steps whose cost grows faster than the data: say what they will cost before they start.

A dense n x n kernel, an eigendecomposition or a solver's n x n workspace can take gigabytes and
hours at the sizes researchers now have.  Each such step runs under :func:`heavy_step`, which prints,
before the step starts, what it is, its estimate and the cheaper alternative where one exists, when
the estimate is above :data:`LIMIT_BYTES` or :data:`LIMIT_SECONDS`; and turns a ``MemoryError`` in it
into a :class:`~kernlearn_cli.errors.ResourceError` naming the step and the estimate (one paragraph,
exit 2) instead of a traceback.

The time estimates are rates measured on the 2-core reference machine with one BLAS thread (the
default, ``KERNLEARN_BLAS_THREADS=1``): ``np.linalg.eigh`` of an n x n matrix took 0.16 s at
n = 1000 and 1.12 s at n = 2000 (n³ / 7.1e9 s), a matrix product 2n³ / 5.5e10 s.  They are meant to
tell seconds from hours, not to time a run.

``kernlearn plan`` reads the same estimates before a cell runs: a solver's, declared beside it
(:func:`estimated`, called with :class:`Sized` stand-ins); K0's factor's is beside the kernels
(:func:`kernlearn_cli.kernels.factor_cost`).
"""

from __future__ import annotations

import functools
import warnings
from contextlib import contextmanager
from typing import Callable

from .errors import ResourceError

#: Steps estimated above either limit are announced before they start.
LIMIT_BYTES = 1e9
LIMIT_SECONDS = 60.0
#: n³ per second of a symmetric eigendecomposition with eigenvectors (measured: module docstring).
EIGH_RATE = 7e9
#: Floating-point operations per second of a dense matrix product (measured: module docstring).
GEMM_RATE = 5e10
#: Floating-point operations per second of :func:`~kernlearn_cli.lowrank.pivoted_cholesky`'s column
#: updates (matrix-vector products): n = 10⁶, d = 20, rank 64 took 4.3 CPU seconds for 2 n r (r + d)
#: operations (docs/scale.md).
CHOLESKY_RATE = 2.5e9
DOUBLE = 8
#: Resident memory of a run's process before its first cell: Python, NumPy, SciPy, numba and the
#: package's components imported (200 MB measured on the reference machine); ``plan`` adds it, since a
#: cell's recorded peak (``peak_rss_bytes``) is the process's.
PROCESS_BYTES = 2e8
#: r² per second of one compiled rank-one projection of the cyclic solvers (issue 45: 0.84-1.12 µs at
#: r = 64, 0.11 µs at r = 16).
PROJECTION_RATE = 3e9


def eigh_cost(n: int) -> tuple[float, float]:
    """(bytes, seconds) of an n x n eigendecomposition: the matrix, its eigenvectors and LAPACK's
    divide-and-conquer workspace (about n² doubles more), and n³ / :data:`EIGH_RATE`."""
    return 3.0 * DOUBLE * n * n, n ** 3 / EIGH_RATE


def size(nbytes: float) -> str:
    """``nbytes`` as ``512 MB`` or ``3.2 GB``."""
    return f"{nbytes / 1e9:.1f} GB" if nbytes >= 1e9 else f"{nbytes / 1e6:.0f} MB"


def describe(what: str, nbytes: float, seconds: float) -> str:
    """``what`` and its estimate, for the line before it and the error after it."""
    from .progress import clock

    took = f", about {clock(seconds)} here with one BLAS thread" if seconds >= 1 else ""
    return f"{what}: about {size(nbytes)} of memory{took}"


@contextmanager
def heavy_step(what: str, nbytes: float, seconds: float = 0.0, instead: str = ""):
    """Run a step that may be large (a context manager).

    Parameters
    ----------
    what : str
        The step, for a person: ``"building K0 'rbf': eigendecomposition of the 20000 x 20000 kernel"``.
    nbytes, seconds : float
        Its estimated peak memory and time (:func:`eigh_cost`, or the caller's count).
    instead : str
        The cheaper alternative, when there is one (a sentence).

    Raises
    ------
    ResourceError
        On ``MemoryError`` inside the step, naming it and its estimate.
    """
    from .progress import announce

    if nbytes > LIMIT_BYTES or seconds > LIMIT_SECONDS:
        announce(f"large step: {describe(what, nbytes, seconds)}. {instead}".rstrip())
    try:
        yield
    except MemoryError:
        raise ResourceError(f"out of memory in {describe(what, nbytes, seconds)} (estimated before it started); "
                            f"this machine could not allocate it. {instead}".rstrip()) from None


def estimated(cost: Callable[..., tuple[str, float, float, str]], per: str = ""):
    """Decorator: run a solver under :func:`heavy_step` with ``cost(*args, **kwargs)`` = (what, bytes,
    seconds, instead); the signature (and so the solver's declared settings) is the solver's own.

    ``per`` names the unit of the time estimate when it is not the whole call (``"sweep"``).  The
    solver keeps both as ``solver.cost`` and ``solver.cost_per``: ``kernlearn plan`` calls ``cost``
    with :class:`Sized` stand-ins for G0 and the constraints (:func:`~kernlearn_cli.estimates.estimate`),
    so a cost reads only ``np.shape(G0)`` and ``len(constraints)``."""
    def deco(func):
        @functools.wraps(func)
        def run(*args, **kwargs):
            with heavy_step(*cost(*args, **kwargs)):
                return func(*args, **kwargs)
        run.cost, run.cost_per = cost, per
        return run
    return deco


class UnknownSize(Exception):
    """The length of a :class:`Sized` stand-in whose length is not known before the cell runs."""


class Sized:
    """A stand-in for an array or a constraint set in a cost estimate: its shape, nothing else.

    ``np.shape(Sized((n, r)))`` is ``(n, r)``; ``len(Sized((c,)))`` is c, and ``len(Sized((None,)))``
    raises :class:`UnknownSize` (a constraint count known only once generated).
    """

    def __init__(self, shape: tuple):
        self.shape = tuple(shape)

    def __len__(self) -> int:
        if self.shape[0] is None:
            raise UnknownSize
        return int(self.shape[0])


class PeakMemory:
    """The peak resident memory of the process during a block (a context manager).

    On Linux the kernel's high-water mark (``VmHWM``) is reset on entry by writing ``5`` to
    ``/proc/self/clear_refs``, so the peak is that of the block, not of everything the process
    did before: one helper for the records' ``peak_rss_bytes``, the scale benchmark and the TRIN
    memory measurements.  Elsewhere ``resource.getrusage`` gives the process's lifetime maximum,
    which only bounds the block's peak from above (``reset`` is then False).

    Attributes (after the block)
    ----------------------------
    start_bytes : int or None
        Resident memory on entry.
    peak_bytes : int or None
        The largest resident memory during the block.
    reset : bool
        Whether the high-water mark was reset on entry (so ``peak_bytes`` is the block's own).

    Examples
    --------
    >>> with PeakMemory() as mem:
    ...     pass
    >>> mem.peak_bytes >= 0
    True
    """

    def __enter__(self):
        self.reset = _reset_high_water_mark()
        self.start_bytes = _status_bytes("VmRSS")
        self.peak_bytes = None
        return self

    def __exit__(self, *exc):
        hwm = _status_bytes("VmHWM") if self.reset else None
        if hwm is None:
            import resource
            hwm = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024   # kB on Linux
        self.peak_bytes = int(hwm)
        return False

    @property
    def added_bytes(self) -> int | None:
        """``peak_bytes - start_bytes``: what the block added at its peak (None when unknown)."""
        if self.peak_bytes is None or self.start_bytes is None:
            return None
        return self.peak_bytes - self.start_bytes


def warn_if_peak_unknown() -> None:
    """Warn (once, before a run's cells) when the high-water mark cannot be reset here: the records'
    ``peak_rss_bytes`` are then null, since the process's lifetime peak is not a cell's own."""
    if not _reset_high_water_mark():
        warnings.warn("the cells' peak memory (peak_rss_bytes) is recorded as null: /proc/self/clear_refs cannot be "
                      "written here (not Linux, or a kernel or container that forbids it), so the peak of one cell "
                      "cannot be told from that of the process before it.", stacklevel=3)


def _reset_high_water_mark() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _status_bytes(key: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None
