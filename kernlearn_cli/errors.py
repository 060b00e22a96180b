"""User-facing errors.

Every mistake a user can make (a bad config, a missing file, an infeasible
constraint set) raises a subclass of :class:`KernlearnError`.  The CLI prints
its message as one paragraph and exits with status 2, without a traceback.
Anything else that escapes is a bug in kernlearn and keeps its traceback.
A component's :class:`ConfigError` is prefixed with the config location that set it
(:func:`located`).
"""

from contextlib import contextmanager


class KernlearnError(Exception):
    """Base class of every error caused by the user's input."""


class ConfigError(KernlearnError):
    """A config file, key or value is invalid."""


class DataError(KernlearnError):
    """A dataset is missing, corrupt or malformed (wrong shape, NaN, not PSD ...)."""


class InfeasibleError(KernlearnError):
    """The constraint set provably cannot be met.

    Raised only with a verified certificate of infeasibility (``certificate``, a dict: e.g. the
    weights y of a Farkas combination and the eigenvalue check that proves it), never on a
    heuristic.
    """

    def __init__(self, message: str, certificate: dict | None = None):
        super().__init__(message)
        self.certificate = certificate or {}


class SolverError(KernlearnError):
    """A solver could not continue numerically on this input (nearly degenerate constraints or
    kernel); unlike :class:`InfeasibleError` this proves nothing about the constraints."""


class ResourceError(KernlearnError):
    """A step ran out of memory: the message names the step and the estimate made before it started
    (:func:`~kernlearn_cli.resources.heavy_step`)."""


@contextmanager
def located(where: str, kind: str, name: str):
    """Name the config location in a component's :class:`ConfigError`: library code names only its
    own parameters ("neighbors = 12 must be ..."), the runner adds where they were set
    ("configs/x.yaml: kernel 'laplacian_pinv': neighbors = 12 must be ...")."""
    try:
        yield
    except ConfigError as exc:
        message = str(exc)
        if message.startswith(f"{where}:"):
            raise
        own = f"{kind} '{name}'"
        raise ConfigError(f"{where}: {message}" if message.startswith(own) else f"{where}: {own}: {message}") from None
