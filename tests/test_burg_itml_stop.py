"""``burg``'s ``stop: dual_change``, the stopping rule of the authors' ITML code (Davis et al. 2007)."""

from __future__ import annotations

import numpy as np
import pytest

from kernlearn_cli.errors import ConfigError
from kernlearn_cli.registry import constraints, datasets, kernels, solvers

burg = solvers.get("burg").func
pytestmark = pytest.mark.filterwarnings("ignore:burg. not converged")


@pytest.fixture(scope="module")
def problem():
    ds = datasets.get("iris").func()
    G0 = kernels.get("linear").func(ds, standardize=True)
    C = constraints.get("itml_pairs").func(ds, G0, rng=np.random.default_rng([0, 1, 0]), count=120)
    return G0, C


@pytest.mark.parametrize("gamma", [0.1, 10.0, 1000.0])
def test_dual_change_stops_at_the_first_sweep_below_tol_on_the_same_iterates(problem, gamma):
    G0, C = problem
    tol = 1e-3
    certified = burg(G0, C, slack=gamma, tol=tol, max_sweeps=20000)
    itml = burg(G0, C, slack=gamma, tol=tol, max_sweeps=20000, stop="dual_change")
    changes = certified.history["dual_change"]
    first = int(np.flatnonzero(changes <= tol)[0]) + 1            # ITML's rule, read off the certified run
    assert itml.iterations == first <= certified.iterations
    np.testing.assert_array_equal(itml.history["dual_change"], changes[:first])   # the same sweeps until then
    assert itml.converged is True and itml.certificate["stopped_by"] == "tolerance"
    assert set(itml.certificate["checks"]) == {"dual_change"}
    assert "max_violation" in itml.certificate["figures"]
    assert set(certified.certificate["checks"]) == {"dual_change", "max_violation"}   # the default: unchanged


def test_a_run_capped_before_the_dual_change_falls_is_not_converged(problem):
    G0, C = problem
    res = burg(G0, C, slack=1000.0, tol=1e-3, max_sweeps=3, stop="dual_change")
    assert res.iterations == 3 and res.converged is False and res.certificate["stopped_by"] == "max_iter"


@pytest.mark.parametrize("settings", [{}, {"slack_if_infeasible": 1.0}])
def test_dual_change_needs_a_finite_slack(problem, settings):
    G0, C = problem
    with pytest.raises(ConfigError, match="solver.stop 'dual_change'.*needs a finite solver.slack"):
        burg(G0, C, stop="dual_change", **settings)
    with pytest.raises(ConfigError, match=r"stop: expected one of 'certified', 'dual_change', 'gap', got 'itml'"):
        burg(G0, C, slack=1.0, stop="itml")
