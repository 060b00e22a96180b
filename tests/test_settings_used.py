"""Every declared setting is used: changing it changes the result, or it is listed here as unused.

Every component kind is covered: solvers and kernels, constraint generators, evaluators and
datasets (the user-file loaders ``files`` and ``gyrb`` are exercised with real files in
tests/test_data.py).  For each registered solver (and kernel, on one small dataset) ``ALTERNATIVES``
gives, per declared setting, another valid value; the component is run with the default and with that value
on a tiny instance and the results must differ (the factor G, the iteration count, or the
certificate's measured values and stop reason).  A setting that does not change the result on
its instance is listed in ``UNUSED`` with the reason.  The solvers' tables are in tests/solver_specs.py.  A new setting without an entry in either
fails :func:`test_every_setting_has_an_alternative`, so nobody forgets to check it.

The solver-level question -- does it use the initial kernel K0 (the config's ``kernel:``)? -- is
:func:`test_kernel_is_used_or_refused`: a solver registered with ``instead_of_kernel`` must refuse a
config's ``kernel:``, the others must change their result when K0 changes.
"""

import inspect
import json
import warnings

import numpy as np
import pytest

from kernlearn_cli.config import Cell, bind_cell
from kernlearn_cli.constraints.labeled import labeled_subset
from kernlearn_cli.data.synthetic import two_gaussians
from kernlearn_cli.errors import ConfigError
from kernlearn_cli.registry import kernels, solvers
from kernlearn_cli.solvers.protocol import ConvergenceWarning

from solver_specs import ALTERNATIVES, SOLVER_INSTANCES, SOLVER_WITH, UNUSED


def fingerprint(result) -> tuple:
    """What a setting may change: G (its bits), the iteration count, the certificate's measured values."""
    cert = result.certificate or {}
    checks = {k: v["value"] for k, v in cert.get("checks", {}).items()}
    return (np.asarray(result.G).tobytes(), np.asarray(result.G).shape, int(result.iterations),
            json.dumps(checks, sort_keys=True), cert.get("stopped_by"), result.converged)


def run_solver(name, **settings):
    G0, C, kw = SOLVER_INSTANCES[name](0)
    if solvers.get(name).instead_of_kernel:
        G0 = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return solvers.get(name).func(G0, C, **{**kw, **settings})


def _defaults(name) -> dict:
    """The instance's own settings override the declared defaults (e.g. ``landmarks: 8``)."""
    return SOLVER_INSTANCES[name](0)[2]


SOLVER_CASES = [(name, key) for name in sorted(ALTERNATIVES) for key in sorted(ALTERNATIVES[name])]


def test_every_setting_has_an_alternative():
    """Each registered solver is in the table, with an alternative for each declared setting and no stale one."""
    for entry in solvers.entries():
        assert entry.name in ALTERNATIVES, f"solver '{entry.name}' has no entry in ALTERNATIVES"
        declared = set(entry.parameters())
        assert set(ALTERNATIVES[entry.name]) == declared, (
            f"solver '{entry.name}': settings without an alternative value {sorted(declared - set(ALTERNATIVES[entry.name]))}, "
            f"stale entries {sorted(set(ALTERNATIVES[entry.name]) - declared)}")
    for entry in kernels.entries():
        assert set(KERNEL_ALTERNATIVES.get(entry.name, {})) == set(entry.parameters()), entry.name


@pytest.mark.parametrize("name,key", SOLVER_CASES, ids=[f"{n}.{k}" for n, k in SOLVER_CASES])
def test_solver_setting_changes_the_result(name, key):
    value = ALTERNATIVES[name][key]
    current = _defaults(name).get(key, solvers.get(name).parameters()[key].default)
    assert value != current, f"{name}.{key}: the alternative equals the instance's value {current!r}"
    both = SOLVER_WITH.get((name, key), {})
    base, changed = fingerprint(run_solver(name, **both)), fingerprint(run_solver(name, **both, **{key: value}))
    if (name, key) in UNUSED:
        assert base == changed, f"{name}.{key} is listed as unused ({UNUSED[(name, key)]}) but changes the result"
    else:
        assert base != changed, f"{name}.{key} = {value!r} (instead of {current!r}) does not change the result"


# ---- the initial kernel K0 -----------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(ALTERNATIVES))
def test_kernel_is_used_or_refused(name):
    """A solver that uses K0 changes its result with K0; one that does not refuses a config's ``kernel:``."""
    entry = solvers.get(name)
    G0, C, kw = SOLVER_INSTANCES[name](0)
    base = {"name": "x", "seed": 0, "dataset": {"name": "two_gaussians", "n": 30, "dim": 3},
            "constraints": {"name": "labeled_subset", "count": 10}, "solver": {"name": name}}
    if entry.instead_of_kernel:
        with pytest.raises(ConfigError, match=r"kernel: solver '.*' does not use an initial kernel K0 .*remove it"):
            bind_cell(Cell(0, {**base, "kernel": {"name": "linear"}}), "x.yaml")
        assert "kernel" not in bind_cell(Cell(0, base), "x.yaml")
        assert G0 is None or "dataset" in kw
        return
    with pytest.raises(ConfigError, match="missing required key 'kernel'"):
        bind_cell(Cell(0, base), "x.yaml")
    # another K0 of the same rank: G0 R for a random invertible R, then its columns rescaled
    R = np.linalg.qr(np.random.default_rng(1).standard_normal((G0.shape[1],) * 2))[0] * np.linspace(1.0, 2.0,
                                                                                                      G0.shape[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = solvers.get(name).func(G0, C, **kw)
        b = solvers.get(name).func(G0 @ R, C, **kw)
    Ka, Kb = a.G @ a.G.T, b.G @ b.G.T
    assert not np.allclose(Ka, Kb), f"solver '{name}' gives the same kernel from a different K0"


def test_refusal_names_the_file_key_and_reason():
    cfg = {"name": "x", "seed": 0, "dataset": {"name": "iris"}, "kernel": {"name": "rbf", "sigma": 0.1},
           "constraints": {"name": "labeled_subset", "count": 20}, "solver": {"name": "nystrom"}}
    with pytest.raises(ConfigError, match="^configs/ny.yaml: kernel: solver 'nystrom'") as err:
        bind_cell(Cell(0, cfg), "configs/ny.yaml")
    msg = str(err.value)
    assert msg.startswith("configs/ny.yaml: kernel: solver 'nystrom'") and "Gaussian" in msg and "remove it" in msg


# ---- kernels -------------------------------------------------------------------------------------

#: Per kernel, per declared setting: another valid value (on :func:`kernel_dataset`).
KERNEL_ALTERNATIVES = {
    "linear": {"center": True, "standardize": True, "rank": 2},
    "rbf": {"sigma": 0.7, "bandwidth": "mean_sq", "standardize": True, "rank": 3, "rank_tol": 1e-2,
            "factorization": "pivoted_cholesky", "trace_tol": 0.1},
    "identity": {"scale": 2.0},
    "precomputed": {"rank": 3, "rank_tol": 1e-2},
    "laplacian_pinv": {"neighbors": 4, "bandwidth": "half_mean", "sigma_neighbors": 3, "scale_features": "standard",
                       "normalize": False, "rank_tol": 0.3},
}
KERNEL_UNUSED = {
    ("laplacian_pinv", "sigma_neighbors"): "only read by bandwidth 'half_mean'",
    ("rbf", "trace_tol"): "only read by factorization 'pivoted_cholesky'",
    ("rbf", "factorization"): "both factorizations are exact at full rank (G differs by a rotation); below it they "
                              "differ: tests/test_low_rank_k0.py",
}


def kernel_dataset():
    ds = two_gaussians(n=30, dim=4, seed=0)
    ds.X = ds.X * np.array([1.0, 3.0, 0.5, 2.0])            # unequal feature scales: standardize matters
    X = ds.X
    ds.K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 8.0)
    return ds


KERNEL_CASES = [(name, key) for name in sorted(KERNEL_ALTERNATIVES) for key in sorted(KERNEL_ALTERNATIVES[name])]


@pytest.mark.parametrize("name,key", KERNEL_CASES, ids=[f"{n}.{k}" for n, k in KERNEL_CASES])
def test_kernel_setting_changes_k0(name, key):
    ds, func = kernel_dataset(), kernels.get(name).func
    G, H = func(ds), func(ds, **{key: KERNEL_ALTERNATIVES[name][key]})
    same = G.shape == H.shape and np.allclose(G @ G.T, H @ H.T, rtol=1e-12, atol=1e-12)
    assert same == ((name, key) in KERNEL_UNUSED), f"kernel {name}.{key}: same K0 = {same}"


# ---- constraint generators -----------------------------------------------------------------------

#: Per constraint generator, per declared setting: a valid value other than the default (the base
#: settings first, where the default does not apply to the tiny dataset).
GENERATOR_BASE = {"from_file": {"path": "a.csv"}, "labeled_subset": {"count": 8}}
GENERATOR_ALTERNATIVES = {
    "distance_stream": {"count": 50},
    "from_file": {"path": "b.csv"},
    "idealized_pairs": {"count": 20, "epsilon": 0.5},
    "itml_pairs": {"count": 20, "percentiles": [10.0, 90.0]},
    "labeled_subset": {"fraction": 0.5, "count": 12, "form": "distances", "epsilon": 0.5, "every_class": True},
    "must_cannot": {"fraction": 0.3, "count": 10},
    "neighbor_triplets": {"fraction": 0.8, "in_class": 3, "out_class": 3, "scale_features": "minmax"},
    "random_pairs": {"count": 20},
    "threshold_pairs": {"gamma": 5.0, "gamma_scale": 0.5},
}
#: Generator settings that do not change the constraints on the tiny instance, and why.
GENERATOR_UNUSED = {
    ("labeled_subset", "epsilon"): "only read with form: distances (the instance's base form is 'ideal')",
}
#: Settings an alternative needs beside it (``labeled_subset`` takes exactly one of fraction, count).
GENERATOR_WITH = {("labeled_subset", "fraction"): {"count": 0}}


def _generate(name, tmp_path, monkeypatch, **settings):
    from kernlearn_cli.rng import component_rng
    from kernlearn_cli.kernels import linear
    from kernlearn_cli.registry import constraints

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.csv").write_text("i,j,kind,bound\n0,1,dist_le,1.0\n2,3,dist_ge,4.0\n")
    (tmp_path / "b.csv").write_text("i,j,kind,bound\n0,1,dist_le,2.0\n2,3,dist_ge,4.0\n")
    ds = two_gaussians(n=40, dim=3)
    C = constraints.get(name).func(ds, linear(ds), rng=component_rng(0, 1),
                                   **{**GENERATOR_BASE.get(name, {}), **settings})
    k = getattr(C, "k", None)
    return (C.i.tobytes(), C.j.tobytes(), C.kind.tobytes(), C.bound.tobytes(),
            None if k is None else np.asarray(k).tobytes())


def test_every_generator_setting_has_an_alternative():
    from kernlearn_cli.registry import constraints

    for entry in constraints.entries():
        assert set(GENERATOR_ALTERNATIVES.get(entry.name, {})) == set(entry.parameters()), entry.name


@pytest.mark.parametrize("name, key", [(n, k) for n in sorted(GENERATOR_ALTERNATIVES)
                                       for k in sorted(GENERATOR_ALTERNATIVES[n])])
def test_generator_setting_changes_the_constraints(name, key, tmp_path, monkeypatch):
    base = _generate(name, tmp_path, monkeypatch)
    changed = _generate(name, tmp_path, monkeypatch, **{key: GENERATOR_ALTERNATIVES[name][key],
                                                         **GENERATOR_WITH.get((name, key), {})})
    if (name, key) in GENERATOR_UNUSED:
        assert base == changed, f"{name}.{key} is listed as unused but changes the constraints"
    else:
        assert base != changed, f"constraints.{key} of '{name}' changes nothing: use it, refuse it, or list it"


# ---- evaluators ----------------------------------------------------------------------------------

#: Per evaluator, per declared setting: a valid value other than the default.
EVALUATOR_BASE = {"solver_info": {"keys": ["rank"]}}
EVALUATOR_ALTERNATIVES = {
    "alignment": {}, "constraint_violation": {}, "meg_loss": {}, "nka_criterion": {}, "primal_residual": {},
    "kernel_kmeans_nmi": {"n_init": 1, "average": "geometric"},
    "pairwise_accuracy": {"n_init": 1},
    "kernel_condition": {"rank_tol": 0.5},
    "solver_info": {"keys": ["slack"]},
    "knn_accuracy": {"k": 1, "repeats": 3},
    "knn_error": {"k": 3, "repeats": 2},
    "kpca_1nn_error": {"components": 1},
    "svm_accuracy": {"C": 1e-6, "cv": True, "cv_folds": 3},
}
#: Evaluator settings that do not change the metrics on the tiny instance, and why.
EVALUATOR_UNUSED = {
    ("svm_accuracy", "cv_folds"): "only read with cv: true (the base is cv: false)",
}


def _evaluate(name, **settings):
    from kernlearn_cli.rng import component_rng
    from kernlearn_cli.registry import evaluators

    ds = two_gaussians(n=40, dim=3)
    rng = np.random.default_rng(1)
    if name in ("kernel_kmeans_nmi", "pairwise_accuracy"):    # clusters k-means can find in several ways
        G = ds.X @ rng.standard_normal((3, 3)) + 0.5 * rng.standard_normal((40, 3))
    else:                                                    # classes that overlap, so errors move
        G = 0.5 * ds.X @ rng.standard_normal((3, 6)) + rng.standard_normal((40, 6))
    C = labeled_subset(ds, G, rng=component_rng(0, 1), count=10)
    result = run_solver("burg", slack=0.5)
    func = evaluators.get(name).func
    wants = inspect.signature(func).parameters
    extra = {k: v for k, v in (("result", result), ("constraints", C)) if k in wants}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        metrics = func(G, ds, rng=component_rng(0, 2, 0), **extra, **{**EVALUATOR_BASE.get(name, {}), **settings})
    return json.dumps(metrics, sort_keys=True, default=str)


def test_every_evaluator_setting_has_an_alternative():
    from kernlearn_cli.registry import evaluators

    for entry in evaluators.entries():
        assert set(EVALUATOR_ALTERNATIVES.get(entry.name, {"?": 0})) == set(entry.parameters()), entry.name


@pytest.mark.parametrize("name, key", [(n, k) for n in sorted(EVALUATOR_ALTERNATIVES)
                                       for k in sorted(EVALUATOR_ALTERNATIVES[n])])
def test_evaluator_setting_changes_the_metrics(name, key):
    base = _evaluate(name)
    changed = _evaluate(name, **{key: EVALUATOR_ALTERNATIVES[name][key]})
    if (name, key) in EVALUATOR_UNUSED:
        assert base == changed, f"{name}.{key} is listed as unused but changes the metrics"
    else:
        assert base != changed, f"evaluate {name}.{key} changes nothing: use it, refuse it, or list it"


# ---- datasets --------------------------------------------------------------------------------------

#: Per dataset, per declared setting: a valid value other than the default.  The catalogue datasets
#: read from the mirror (skipped without it); ``files`` and ``gyrb`` read the user's files.
DATASET_ALTERNATIVES = {
    "adult_a1a": {"split": "test"}, "adult_a2a": {"split": "test"}, "adult_a3a": {"split": "test"},
    "adult_a4a_approx": {"subset_seed": 1}, "adult_a5a_approx": {"subset_seed": 1},
    "adult_a6a_approx": {"subset_seed": 1},
    "breast_cancer_wisconsin": {"missing": "impute"},
    "chessboard": {"n": 50, "seed": 1, "board": 3},
    "double_spiral": {"n": 50, "seed": 1, "noise": 0.1},
    "gyrb_like": {"n": 40, "classes": 2, "dim": 5, "near_duplicates": 4, "offset": 0.01, "seed": 1},
    "pendigits": {"digits": [1, 2], "n": 100, "subset_seed": 1},
    "two_gaussians": {"n": 50, "dim": 5, "seed": 1},
    "files": {"features": "b.csv", "labels": "b.txt", "kernel": "k.npy", "header": True,
              "index_column": True},
    "gyrb": {"path": "other"},
}
#: Datasets whose settings name the user's files (checked by tests/test_data.py with real files).
USER_FILES = {"files", "gyrb"}
SMALL = {"two_gaussians": {"n": 40, "dim": 3}}


def test_every_dataset_setting_has_an_alternative():
    from kernlearn_cli.registry import datasets

    for entry in datasets.entries():
        assert set(DATASET_ALTERNATIVES.get(entry.name, {})) == set(entry.parameters()), entry.name


@pytest.mark.parametrize("name, key", [(n, k) for n in sorted(DATASET_ALTERNATIVES) if n not in USER_FILES
                                       for k in sorted(DATASET_ALTERNATIVES[n])])
def test_dataset_setting_changes_the_data(name, key):
    from helpers import has_mirror
    from kernlearn_cli.data.catalogue import CATALOGUE
    from kernlearn_cli.registry import datasets

    if name in CATALOGUE and not has_mirror():
        pytest.skip("needs the dataset mirror")
    func = datasets.get(name).func
    base, changed = func(**SMALL.get(name, {})), func(**{**SMALL.get(name, {}), key: DATASET_ALTERNATIVES[name][key]})
    data = lambda ds: (np.asarray(ds.X if ds.X is not None else ds.K).tobytes(),  # noqa: E731
                       None if ds.y is None else np.asarray(ds.y).tobytes())
    assert data(base) != data(changed), f"dataset {name}.{key} changes nothing: use it, refuse it, or list it"
