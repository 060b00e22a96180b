"""Every declared setting is used: changing it changes the result, or it is listed here as unused.

Every component kind is covered: solvers and kernels, constraint generators, evaluators and
datasets (the user-file loaders ``files`` and ``gyrb`` are exercised with real files in
tests/test_data.py).  Each registered solver declares, per setting, another valid value beside itself
(``register(..., checks=Checks(alternatives=...))``, :mod:`kernlearn_cli.testing.checks`), and so do
kernels, generators, evaluators and datasets; the component is run with the default and with that value
on a tiny instance and the results must differ (the factor G, the iteration count, or the
certificate's measured values and stop reason).  A setting that does not change the result on
its instance is declared unused (``Checks(unused=...)``) with the reason.  A
new setting without an entry in either fails :func:`test_every_setting_has_an_alternative`, so nobody
forgets to check it.

The solver-level question -- does it use the initial kernel K0 (the config's ``kernel:``)? -- is
:func:`test_kernel_is_used_or_refused`: a solver registered with ``instead_of_kernel`` must refuse a
config's ``kernel:``, the others must change their result when K0 changes.
"""


import pytest

from kernlearn_cli.config import Cell, bind_cell
from kernlearn_cli.errors import ConfigError
from kernlearn_cli.registry import REGISTRIES, solvers
from kernlearn_cli.testing.checks import (check_declaration, check_kernel_is_used_or_refused,
                                          check_setting_changes_the_result, dataset_setting_changes_the_data,
                                          evaluator_returns_its_declared_metrics, evaluator_setting_changes_the_metrics,
                                          generator_setting_changes_the_constraints, kernel_setting_changes_k0)


SOLVER_CASES = [(entry.name, key) for entry in solvers.entries() if entry.checks
                for key in sorted(entry.checks.alternatives)]


def test_every_setting_has_an_alternative():
    """Each registered solver declares an alternative for each setting and no stale one (its Checks)."""
    for entry in solvers.entries():
        check_declaration(entry.name)


@pytest.mark.parametrize("name,key", SOLVER_CASES, ids=[f"{n}.{k}" for n, k in SOLVER_CASES])
def test_solver_setting_changes_the_result(name, key):
    check_setting_changes_the_result(name, key)


# ---- the initial kernel K0 -----------------------------------------------------------------------

@pytest.mark.parametrize("name", solvers.names())
def test_kernel_is_used_or_refused(name):
    """A solver that uses K0 changes its result with K0; one that does not refuses a config's ``kernel:``."""
    check_kernel_is_used_or_refused(name)


def test_refusal_names_the_file_key_and_reason():
    cfg = {"name": "x", "seed": 0, "dataset": {"name": "iris"}, "kernel": {"name": "rbf", "sigma": 0.1},
           "constraints": {"name": "labeled_subset", "count": 20}, "solver": {"name": "nystrom"}}
    with pytest.raises(ConfigError, match="^configs/ny.yaml: kernel: solver 'nystrom'") as err:
        bind_cell(Cell(0, cfg), "configs/ny.yaml")
    msg = str(err.value)
    assert msg.startswith("configs/ny.yaml: kernel: solver 'nystrom'") and "Gaussian" in msg and "remove it" in msg


# ---- the other kinds: each declares its alternatives beside itself (Checks) -------------------------

def _cases(key, skip=()):
    return [(e.name, k) for e in REGISTRIES[key].entries() if e.checks and e.name not in skip
            for k in sorted(e.checks.alternatives)]


@pytest.mark.parametrize("key", ["kernels", "constraints", "evaluators", "datasets"])
def test_every_component_setting_has_an_alternative(key):
    for entry in REGISTRIES[key].entries():
        check_declaration(entry.name, REGISTRIES[key])


KERNEL_CASES = _cases("kernels")


@pytest.mark.parametrize("name,key", KERNEL_CASES, ids=[f"{n}.{k}" for n, k in KERNEL_CASES])
def test_kernel_setting_changes_k0(name, key):
    kernel_setting_changes_k0(name, key)


GENERATOR_CASES = _cases("constraints")


@pytest.mark.parametrize("name, key", GENERATOR_CASES, ids=[f"{n}.{k}" for n, k in GENERATOR_CASES])
def test_generator_setting_changes_the_constraints(name, key):
    generator_setting_changes_the_constraints(name, key)


EVALUATOR_CASES = _cases("evaluators")


@pytest.mark.parametrize("name, key", EVALUATOR_CASES, ids=[f"{n}.{k}" for n, k in EVALUATOR_CASES])
def test_evaluator_setting_changes_the_metrics(name, key):
    evaluator_setting_changes_the_metrics(name, key)


#: Datasets whose settings name the user's files (checked by tests/test_data.py with real files).
USER_FILES = {"files", "gyrb"}
DATASET_CASES = _cases("datasets", skip=USER_FILES)


@pytest.mark.parametrize("name, key", DATASET_CASES, ids=[f"{n}.{k}" for n, k in DATASET_CASES])
def test_dataset_setting_changes_the_data(name, key):
    from helpers import has_mirror
    from kernlearn_cli.data.catalogue import CATALOGUE

    if name in CATALOGUE and not has_mirror():
        pytest.skip("needs the dataset mirror")
    dataset_setting_changes_the_data(name, key)


@pytest.mark.parametrize("name", REGISTRIES["evaluators"].names())
def test_every_evaluator_returns_only_its_declared_metrics(name):
    evaluator_returns_its_declared_metrics(name)
