"""The no-learning baseline: return the initial kernel unchanged."""

from __future__ import annotations

import numpy as np

from ..registry import Checks, solvers
from ..resources import DOUBLE, estimated
from ..types import Constraints, SolverResult
from .protocol import finish, not_applicable


#: What the generic checks need (:mod:`kernlearn_cli.testing`): an instance, another value per setting.
INITIAL_CHECKS = Checks(instance="kernlearn_cli.testing.instances:pairs")


@solvers.register("initial", checks=INITIAL_CHECKS, triplets=True)
@estimated(lambda G0, constraints: ("solver 'initial': a copy of G0", DOUBLE * float(np.prod(np.shape(G0))), 0.0, ""))
def initial(G0: np.ndarray, constraints: Constraints) -> SolverResult:
    """Baseline: K = K0 (ignores the constraints); the row every table compares against.

    Accepts any constraint set, triplets included: with ``laplacian_pinv`` and ``kpca_1nn_error``
    it is the Laplacian-eigenmap baseline of Li et al. (2009, Table 5), whose labels are used only
    by the 1-NN classifier.
    """
    return finish(SolverResult(G=np.array(G0, dtype=np.float64), objective=0.0, iterations=0, converged=None),
                  not_applicable("the baseline returns K0; no problem is solved"), "initial")
