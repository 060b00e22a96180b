"""The no-learning baseline: return the initial kernel unchanged."""

from __future__ import annotations

import numpy as np

from ..registry import solvers
from ..types import Constraints, SolverResult


@solvers.register("initial")
def initial(G0: np.ndarray, constraints: Constraints) -> SolverResult:
    """Baseline: K = K0 (ignores the constraints); the row every table compares against."""
    return SolverResult(G=np.array(G0, dtype=np.float64), objective=0.0, iterations=0, converged=True)
