"""User-facing errors.

Every mistake a user can make (a bad config, a missing file, an infeasible
constraint set) raises a subclass of :class:`KernlearnError`.  The CLI prints
its message as one paragraph and exits with status 2, without a traceback.
Anything else that escapes is a bug in kernlearn and keeps its traceback.
"""


class KernlearnError(Exception):
    """Base class of every error caused by the user's input."""


class ConfigError(KernlearnError):
    """A config file, key or value is invalid."""


class DataError(KernlearnError):
    """A dataset is missing, corrupt or malformed (wrong shape, NaN, not PSD ...)."""


class InfeasibleError(KernlearnError):
    """The constraint set cannot be met (or the projections broke down numerically)."""
