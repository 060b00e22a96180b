"""A solver's facts live in its registry entry and the solver protocol, and everything is derived from them.

A throw-away solver registered with only its module (the function and ``solvers.register(...)``) and its
test data is picked up by ``kernlearn warmup``, the estimators, progress (``k of max``) and the tables'
``capped`` count, with no list elsewhere to edit (docs/extending.md, section 7).  The built-in solvers'
declarations are checked against what they do: the ones with compiled kernels are warmed up, a run
that exhausts a budget says so with a word of ``CAPPED``, and no undeclared stop word gets through.
"""

import sys
import warnings
from types import ModuleType, SimpleNamespace

import numpy as np
import pytest
import yaml
from numba.core.registry import CPUDispatcher

from kernlearn_cli.estimators import ESTIMATORS, estimator_class
from kernlearn_cli.params import PositiveInt
from kernlearn_cli.builtins import BUILTINS
from kernlearn_cli.registry import EstimatorSpec, solvers
from kernlearn_cli.report.records import load_records
from kernlearn_cli.report.tables import entry_stats
from kernlearn_cli.runner import iteration_limit, run_config
from kernlearn_cli.solvers.protocol import CAPPED, STOP_REASONS, Certificate, Checked, ConvergenceWarning, finish
from kernlearn_cli.types import SolverResult
from kernlearn_cli.warmup import warmup


TOY = "toy_rounds"


def toy_rounds(G0, constraints, *, rounds: PositiveInt = 3, callback=None) -> SolverResult:
    """A throw-away solver: K = K0, after ``rounds`` rounds that never meet their check."""
    for k in range(1, rounds + 1):
        if callback is not None:
            callback(k, change=Checked(1.0, 0.5))
    toy_rounds.calls.append(len(constraints))
    return finish(SolverResult(G=np.array(G0), objective=0.0, iterations=rounds, converged=None),
                  Certificate(rule="change <= 0.5", checks={"change": (1.0, 0.5)}, stopped_by="max_iter"), TOY)


@pytest.fixture
def toy():
    """The throw-away solver, registered for one test (a registry cannot remove an entry: popped after)."""
    toy_rounds.calls = []
    entry = solvers.register(TOY, budget="rounds", warmup={"constraints": {"name": "idealized_pairs", "count": 6}},
                             estimator=EstimatorSpec("ToyRoundsKernel", "A throw-away solver.",
                                                     constraint_defaults={"count": 6}))(toy_rounds)
    try:
        yield entry
    finally:
        solvers._entries.pop(TOY)


def test_a_throwaway_solver_is_picked_up_by_warmup_estimator_progress_and_capped(toy, tmp_path, capsys,
                                                                                  monkeypatch):
    # warm-up: runs it once on the tiny problem, with the constraints its entry declares
    (line,) = [w for w in warmup([TOY]) if w[0] == TOY]
    assert line[1].startswith("ran on 40 points") and toy_rounds.calls == [6]

    # the estimator: its class from the entry, its parameters from the solver's settings
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    cls = estimator_class(TOY)
    assert cls.__name__ == "ToyRoundsKernel" and cls.__doc__.startswith("A throw-away solver.")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = cls(rounds=5).fit(X, y)
    assert est.get_params()["rounds"] == 5 and est.n_iter_ == 5 and toy_rounds.calls[-1] == 6
    assert est.get_params()["kernel"] == "linear" and est.transform(X).shape == est.G_.shape

    # progress: `k of max` from the entry's budget setting, its default or the config's value
    assert iteration_limit(SimpleNamespace(config={"solver": {"name": TOY}})) == ("rounds", 3)
    assert iteration_limit(SimpleNamespace(config={"solver": {"name": TOY, "rounds": 4}})) == ("rounds", 4)
    config = tmp_path / "toy.yaml"
    config.write_text(yaml.safe_dump({"name": "toy", "seed": 0, "grid": {"seed": [0, 1]}, "dataset": {"name": "iris"},
                                      "kernel": {"name": "linear"}, "evaluate": [], "solver": {"name": TOY},
                                      "constraints": {"name": "idealized_pairs", "count": 6}}))
    monkeypatch.setattr(sys, "__stdout__", sys.stdout)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        out, failed = run_config(config, tmp_path / "out", [], verbose=1)
    assert not failed
    lines = [x for x in capsys.readouterr().out.splitlines() if " iter " in x]
    assert len(lines) == 6 and " iter     3 of 3  change 1.000e+00 (tol 5.0e-01)" in lines[2]

    # the tables: a run that stopped on its budget (max_iter) is counted as capped
    df, _ = load_records([out])
    stats = entry_stats(df, "iterations", "seed", "solver")
    assert stats["capped"].tolist() == [1, 1] and stats["value"].tolist() == [3.0, 3.0]


def test_a_budget_must_be_a_setting():
    with pytest.raises(ValueError, match=r"solver 'toy_typo': budget must name one of its settings \(rounds\), "
                                         r"got 'round'"):
        solvers.register("toy_typo", budget="round")(toy_rounds)
    assert "toy_typo" not in solvers.names()


def test_an_undeclared_stop_reason_is_refused():
    """A new budget word (say ``max_seconds``) would make capped cells count as values: refused until declared."""
    assert CAPPED < STOP_REASONS
    with pytest.raises(ValueError, match=r"stopped_by 'max_seconds' is not a declared stop reason .*CAPPED"):
        Certificate(rule="r", stopped_by="max_seconds")


@pytest.mark.parametrize("name", [n for n in solvers.names() if solvers.get(n).budget])
def test_a_solver_out_of_budget_says_so_with_a_capped_word(name):
    """Each solver's instance with its budget at 1: the run stops capped, or has converged (or convergence
    does not apply: MEG's trials), never with a word the tables would read as a value."""
    entry = solvers.get(name)
    G0, C, kw = solvers.get(name).checks.make(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = entry.func(G0, C, **{**kw, entry.budget: 1})
    stop = res.certificate["stopped_by"]
    assert stop in CAPPED if res.converged is False else stop in STOP_REASONS - CAPPED, (stop, res.converged)


def _kernels(module: ModuleType) -> dict[str, CPUDispatcher]:
    """The numba kernels a solver module calls: its own, and those of the compiled modules it imports."""
    found = {}
    for name, value in vars(module).items():
        if isinstance(value, ModuleType) and value.__name__.startswith("kernlearn_cli.solvers._"):
            found |= {f"{value.__name__}.{k}": v for k, v in vars(value).items() if isinstance(v, CPUDispatcher)}
        elif isinstance(value, CPUDispatcher):
            found[name] = value
    return found


@pytest.mark.parametrize("module", sorted(m for m, kinds in BUILTINS.items() if "solvers" in kinds))
def test_a_solver_module_with_numba_kernels_is_warmed_up(module):
    """TRIN (compiled CG since its fusion) and MEG (lanczos: ``_lanczos.krylov``) were missing from warm-up."""
    import importlib

    mod = importlib.import_module(f"kernlearn_cli.{module}")
    entries = [solvers.get(name) for name in BUILTINS[module]["solvers"]]
    if _kernels(mod):
        assert any(e.warmup for e in entries), f"{module}: numba kernels, but no solver of it declares warmup"


def test_warmup_compiles_trin_and_megs_lazily_compiled_kernels():
    from kernlearn_cli.solvers import _lanczos, _trin_kernels

    done = {name: what for name, what, _ in warmup(["trin", "pr_cg", "meg", "nystrom"])}
    assert set(done) == {"numba", "trin", "meg"}
    assert all(k.signatures for k in (_trin_kernels.cg_step, _trin_kernels.cg_dots, _trin_kernels.cg_direction,
                                      _trin_kernels.cg_dots_packed, _trin_kernels.cg_step_raw, _lanczos.krylov))


def test_the_estimators_are_the_registered_solvers_with_one():
    assert set(ESTIMATORS) == {e.name for e in solvers.entries() if e.estimator is not None}
    import kernlearn_cli.estimators as module

    for name, cls in ESTIMATORS.items():
        assert getattr(module, cls.__name__) is cls and cls._solver == name and estimator_class(name) is cls
