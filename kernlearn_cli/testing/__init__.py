"""Checks a component can run on itself, and the small instances they solve.

:func:`check_solver` (and :func:`check_kernel`, :func:`check_constraint_generator`,
:func:`check_evaluator`, :func:`check_dataset`) runs every generic check of a component on what it declares in its
``register(..., checks=Checks(...))`` (:class:`kernlearn_cli.registry.Checks`): a plugin's tests call it
as scikit-learn's ``check_estimator`` is called (docs/extending.md).  :mod:`.instances` holds the
small instances the built-in solvers declare.  Nothing here runs in a cell.
"""

from .checks import check_constraint_generator, check_dataset, check_evaluator, check_kernel, check_solver

__all__ = ["check_constraint_generator", "check_dataset", "check_evaluator", "check_kernel", "check_solver"]
