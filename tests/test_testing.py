"""kernlearn_cli.testing: the generic checks a solver (built-in or a plugin's) runs on its declaration."""

import numpy as np
import pytest

from kernlearn_cli.registry import Checks, Registry, solvers
from kernlearn_cli.solvers.protocol import Certificate, finish
from kernlearn_cli.testing import check_solver
from kernlearn_cli.testing.checks import (check_certificate_earned, check_cost, check_declaration, check_evaluator,
                                          declaration_problems)
from kernlearn_cli.types import SolverResult


@pytest.mark.parametrize("name", solvers.names())
def test_every_solver_declares_what_the_checks_need_and_its_cost(name):
    check_declaration(name)
    assert getattr(solvers.get(name).func, "cost", None) is not None, (
        f"solver '{name}': declare its cost beside it (@estimated(cost) under its register(...), "
        f"kernlearn_cli.resources.estimated: what kernlearn plan prints)")
    check_cost(name)


def _registry(**declared):
    """A throw-away registry with one solver, ``scale``: G = alpha G0 (a plugin's, in miniature)."""
    reg = Registry("solver", {})

    @reg.register("scale", **declared)
    def scale(G0, constraints, *, alpha: float = 0.5) -> SolverResult:
        """K = alpha^2 K0.

        Parameters
        ----------
        alpha : float
            The factor's scale.
        """
        cert = Certificate(rule="none", checks={"scaled": (0.0, 1.0)})
        return finish(SolverResult(G=alpha * G0, objective=0.0, iterations=1, converged=True), cert, "scale")

    return reg


def test_check_solver_passes_a_complete_declaration():
    reg = _registry(checks=Checks(instance="kernlearn_cli.testing.instances:pairs", alternatives={"alpha": 2.0}))
    check_solver("scale", registry=reg)


def test_a_missing_declaration_names_what_to_add_and_where():
    reg = _registry()
    (problem,) = declaration_problems("scale", reg)
    assert "solver 'scale' (" in problem and "test_testing.py" in problem
    assert "add checks=Checks(instance=..., alternatives={...}) to its register(...)" in problem
    reg = _registry(checks=Checks(instance="kernlearn_cli.testing.instances:pairs", alternatives={"beta": 1}))
    problems = " ".join(declaration_problems("scale", reg))
    assert "setting(s) alpha have no alternative value: add them to Checks(alternatives={...})" in problems
    assert "Checks names setting(s) beta that it does not take" in problems


def test_a_setting_that_changes_nothing_must_be_declared_unused():
    reg = _registry(checks=Checks(instance="kernlearn_cli.testing.instances:pairs", alternatives={"alpha": 0.5 + 0}))
    with pytest.raises(AssertionError, match="the alternative equals the instance's value 0.5"):
        check_solver("scale", registry=reg)
    wrong = _registry(checks=Checks(instance="kernlearn_cli.testing.instances:pairs", alternatives={"alpha": 2.0},
                                    unused={"alpha": "not read"}))
    with pytest.raises(AssertionError, match="declared unused .* but 2.0 changes the result"):
        check_solver("scale", registry=wrong)


def test_an_unearned_converged_is_caught():
    reg = Registry("solver", {})

    @reg.register("liar", checks=Checks(instance="kernlearn_cli.testing.instances:pairs"))
    def liar(G0, constraints) -> SolverResult:
        """Says converged while its one check is not met."""
        res = SolverResult(G=np.array(G0), objective=0.0, iterations=1, converged=True)
        res.certificate = {"converged": True, "checks": {"violation": {"value": 2.0, "tol": 1.0, "met": False}}}
        return res

    with pytest.raises(AssertionError, match="converged=True but its certificate's checks are not all met"):
        check_certificate_earned("liar", registry=reg)


def _evaluators(**declared):
    reg = Registry("evaluator", {})

    @reg.register("double", **declared)
    def double(G, ds, *, rng) -> dict:
        """Twice the trace of K, and a stray key."""
        return {"double": 2.0 * float((G * G).sum()), "stray": 1.0}

    return reg


def test_an_evaluator_declares_its_metrics_and_returns_only_those():
    assert "declares no metric names: add metrics=(" in " ".join(declaration_problems("double", _evaluators()))
    reg = _evaluators(metrics=("double",))
    assert declaration_problems("double", reg) == []
    with pytest.raises(AssertionError, match=r"returns stray .* not among its declared metrics \('double',\)"):
        check_evaluator("double", reg)
    check_evaluator("double", _evaluators(metrics=("double", "stray")))


def test_metrics_belong_to_evaluators_and_a_setting_must_list_them():
    with pytest.raises(ValueError, match="kernel 'k': metrics describe an evaluator"):
        Registry("kernel", {}).register("k", metrics=("x",))
    with pytest.raises(ValueError, match="metrics must name the setting that lists them"):
        _evaluators(metrics="names")
