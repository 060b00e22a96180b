"""The protocol every solver follows: progress callbacks, certificates, the finishing step.

A solver is a pure function ``solver(G0, constraints, **settings) -> SolverResult``. Three
things are common to all of them and live here:

* **Progress.** An optional ``callback(step, **metrics)`` is called with the iteration (sweep,
  trial ...) number and named floats, e.g. ``callback(12, dual_change=Checked(3e-4, 1e-3), objective=2.5)``.
  A quantity that the stopping rule tests is passed as a :class:`Checked` float, under the name of
  the certificate's check and with the tolerance it is judged against, so that ``kernlearn run -v``
  prints what decides convergence ("dual change 3.000e-04 (tol 1.0e-03)"); other metrics are plain.
* **The certificate.** What a result claims is checked, not assumed. A :class:`Certificate`
  holds the *checks* that decide convergence -- each a measured value and the tolerance it is
  judged against (met when ``value <= tol``) -- and further *figures* that prove or qualify the
  result (duality gaps, complementarity, an upper bound on f - f*, per-γ arrays of a path).
  ``converged`` is True exactly when every check is met; it is None when convergence does not
  apply (an on-line algorithm that runs a fixed number of trials, a closed form, the
  no-learning baseline), and the certificate says why.
* **The finishing step.** :func:`finish` attaches the certificate to the result, sets
  ``converged`` from it, and warns with :class:`ConvergenceWarning` when a check failed.

The factors file stores the certificate as the attributes (and, for arrays, datasets) of its
``certificate`` group; ``record.json`` under ``certificate``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..types import CAPPED, STOP_REASONS, SolverResult

__all__ = ["CAPPED", "STOP_REASONS", "Certificate", "Checked", "CompilationWarning", "ConvergenceWarning",
           "finish", "not_applicable", "warn_if_compiling"]


class Checked(float):
    """A progress metric that a convergence check tests: a float carrying the tolerance ``tol`` it
    is judged against (met when ``value <= tol``, as in :class:`Certificate`).

    >>> Checked(3e-4, 1e-3).tol
    0.001
    """

    tol: float

    def __new__(cls, value: float, tol: float):
        self = super().__new__(cls, value)
        self.tol = float(tol)
        return self

    def __getnewargs__(self):
        return float(self), self.tol


class ConvergenceWarning(UserWarning):
    """A solver stopped before its certificate met its tolerances (the result says converged=false)."""


class CompilationWarning(UserWarning):
    """A solver is about to compile its numba kernels: their first use in this environment."""


def warn_if_compiling(solver: str, *kernels) -> None:
    """Warn before a solver's first call of its numba ``kernels`` (``@njit(cache=True)`` dispatchers) when
    one will compile: none of them is compiled in this process and numba's on-disk cache holds no
    entry for its current source (a fresh install or edited code); otherwise they load in a second."""
    def cold(kernel) -> bool:
        if kernel.signatures:
            return False
        try:        # numba's own test: the index is empty when absent or stale
            return not kernel._cache._cache_file._load_index()
        except (AttributeError, OSError):
            return False

    if any(cold(kernel) for kernel in kernels):
        warnings.warn(f"solver '{solver}': compiling its numba kernels: up to a minute, once per installation "
                      "(later runs load them from numba's cache). `kernlearn warmup` compiles every solver's "
                      "kernels ahead of a run.", CompilationWarning, stacklevel=2)


@dataclass
class Certificate:
    """The evidence behind a result's ``converged``.

    Parameters
    ----------
    rule : str
        In words, what convergence is judged by (e.g. "relative violation <= feas_tol and dual
        change <= tol").
    checks : dict name -> (value, tol)
        The tests that decide convergence; a check is met when ``value <= tol`` (NaN never is).
    figures : dict
        Further evidence (scalars or 1-d arrays), e.g. ``duality_gap``, ``complementarity``.
    applies : bool
        False when convergence is not a property of this method (``converged`` is then None).
    stopped_by : str
        Why the iteration ended, one of :data:`STOP_REASONS`: ``"tolerance"``, ``"optimality"``,
        ``"stall"``, ``"fixed"``, or a word of :data:`CAPPED` (``"max_iter"``, ``"max_path_iter"``)
        when the iteration budget ran out, which makes the result's counts lower bounds (the tables'
        ``capped`` cells).  A budget stopped by another setting (``max_sweeps``, ``max_steps``) says
        ``"max_iter"``.

    Raises
    ------
    ValueError
        ``stopped_by`` not in :data:`STOP_REASONS` (a new word is declared there, and in
        :data:`CAPPED` when it means the budget ran out, so that no capped cell is judged as a value).
    """

    rule: str
    checks: dict[str, tuple[float, float]] = field(default_factory=dict)
    figures: dict[str, Any] = field(default_factory=dict)
    applies: bool = True
    stopped_by: str = "tolerance"

    def __post_init__(self):
        if self.stopped_by not in STOP_REASONS:
            raise ValueError(f"Certificate: stopped_by {self.stopped_by!r} is not a declared stop reason "
                             f"({', '.join(sorted(STOP_REASONS))}; kernlearn_cli.types.STOP_REASONS). Declare a "
                             "new one there, and in CAPPED when it means the iteration budget ran out.")

    @staticmethod
    def met(value: float, tol: float) -> bool:
        return bool(value <= tol)           # False for NaN

    @property
    def converged(self) -> bool | None:
        if not self.applies:
            return None
        return all(self.met(v, t) for v, t in self.checks.values())

    def failing(self) -> dict[str, tuple[float, float]]:
        return {k: vt for k, vt in self.checks.items() if not self.met(*vt)}

    def worst(self) -> tuple[str, float, float] | None:
        """The check furthest from its tolerance (largest value / tol), or None without checks."""
        if not self.checks:
            return None

        def ratio(item):
            value, tol = item[1]
            if math.isnan(value):
                return math.inf
            return value / tol if tol > 0 else (math.inf if value > 0 else 0.0)

        name, (value, tol) = max(self.checks.items(), key=ratio)
        return name, value, tol

    def to_dict(self) -> dict:
        """JSON-ready form: converged, rule, stopped_by, checks {name: {value, tol, met}}, figures."""
        def plain(v):
            if isinstance(v, np.ndarray):
                return v.tolist()
            if isinstance(v, np.generic):
                return v.item()
            return v

        worst = self.worst()
        return {"converged": self.converged, "rule": self.rule, "stopped_by": self.stopped_by,
                "checks": {k: {"value": float(v), "tol": float(t), "met": self.met(v, t)}
                           for k, (v, t) in self.checks.items()},
                "worst": None if worst is None else {"check": worst[0], "value": float(worst[1]),
                                                     "tol": float(worst[2])},
                "figures": {k: plain(v) for k, v in self.figures.items()}}


def not_applicable(reason: str, **figures) -> Certificate:
    """The certificate of a method to which convergence does not apply (``converged`` None)."""
    return Certificate(rule=f"does not apply: {reason}", figures=figures, applies=False, stopped_by="fixed")


def finish(result: SolverResult, certificate: Certificate, solver: str) -> SolverResult:
    """Attach ``certificate``, set ``result.converged`` from it, warn when a check failed."""
    result.certificate = certificate.to_dict()
    result.converged = certificate.converged
    if result.converged is False:
        failed = "; ".join(f"{k} {v:.3g} > tol {t:.3g}" for k, (v, t) in certificate.failing().items())
        warnings.warn(f"{solver}: not converged ({failed}; stopped by {certificate.stopped_by}); the result is "
                      "written with converged=false and its certificate.", ConvergenceWarning,
                      stacklevel=4)                # finish, the solver, its registry wrapper: the caller
    return result
