"""The scikit-learn estimators (kernlearn_cli.estimators): sklearn's own checks, pipelines and grid
search, the same bits as the command line, and the README's notebook example."""

import copy
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
import yaml
from sklearn.datasets import load_iris
from threadpoolctl import threadpool_limits

from helpers import REPO, kernlearn, slow_for
from kernlearn_cli.estimators import ESTIMATORS, BurgKernel, MEGKernel, cell_seed
from kernlearn_cli.factors import read_factors
from kernlearn_cli.registry import solvers
from kernlearn_cli.solvers.protocol import ConvergenceWarning


@pytest.mark.parametrize("solver", slow_for(sorted(ESTIMATORS), {"definiteboost", "meg", "pr_cg"}))
def test_sklearn_estimator_checks(solver):
    """Every check passes except those listed (with the reason) in its EstimatorSpec(expected_failed=...), which must fail."""
    from sklearn.utils.estimator_checks import check_estimator

    est = ESTIMATORS[solver](**solvers.get(solver).estimator.check_settings)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(est, expected_failed_checks=solvers.get(solver).estimator.expected_failed,
                                  on_fail=None)
    status = {r["check_name"]: r["status"] for r in results}
    failed = {name: str(r["exception"])[:300] for r in results if r["status"] == "failed" for name in [r["check_name"]]}
    assert not failed, failed
    assert sum(s == "passed" for s in status.values()) >= 35
    assert all(status.get(name) == "xfail" for name in solvers.get(solver).estimator.expected_failed), status


def test_pipeline_with_a_classifier_and_grid_search():
    from sklearn.model_selection import GridSearchCV, train_test_split
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import Pipeline

    X, y = load_iris(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    pipe = Pipeline([("kernel", BurgKernel(constraint_params={"count": 40})), ("knn", KNeighborsClassifier(1))])
    search = GridSearchCV(pipe, {"kernel__slack": [0.1, 1.0, 10.0]}, cv=3).fit(X_train, y_train)
    assert search.best_params_["kernel__slack"] in (0.1, 1.0, 10.0)
    assert search.score(X_test, y_test) >= 0.85
    rows = search.best_estimator_.named_steps["kernel"].transform(X_test)
    assert rows.shape == (len(X_test), 4) and np.all(np.isfinite(rows))


@pytest.mark.slow
def test_the_estimator_is_the_command_lines_solver(tmp_path):
    """The same settings and seed give the same bits as a `kernlearn run` cell: one implementation."""
    cfg = {"name": "same", "seed": 3, "dataset": {"name": "iris"}, "kernel": {"name": "linear"},
           "constraints": {"name": "idealized_pairs", "count": 30}, "solver": {"name": "burg", "slack": 2.0},
           "evaluate": []}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    assert kernlearn("run", tmp_path / "c.yaml", "--out", tmp_path / "out").returncode == 0
    (cell,) = (tmp_path / "out").glob("*/factors.h5")
    X, y = load_iris(return_X_y=True)
    est = BurgKernel(slack=2.0, constraint_params={"count": 30}, random_state=3).fit(X, y)
    assert est.G_.tobytes() == read_factors(cell)["G"].tobytes()
    assert est.n_iter_ == read_factors(cell)["attrs"]["iterations"] and est.converged_ is True
    assert est.certificate_["converged"] is True and len(est.constraints_) == 30


def test_settings_are_validated_as_a_configs_are_and_nonconvergence_warns():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match=r"BurgKernel: solver.max_sweeps: expected an int"):
        BurgKernel(max_sweeps="many").fit(X, y)
    with pytest.raises(ValueError, match="unknown kernel 'rbff'. Did you mean 'rbf'"):
        BurgKernel(kernel="rbff").fit(X, y)
    with pytest.warns(ConvergenceWarning):
        est = BurgKernel(slack=1.0, max_sweeps=1).fit(X, y)
    assert est.converged_ is False and est.n_iter_ == 1
    assert BurgKernel(slack=3.0).get_params()["slack"] == 3.0 and BurgKernel().set_params(tol=1e-6).tol == 1e-6


@pytest.mark.slow
def test_readme_notebook_example_runs():
    """The README's notebook example (at most 15 lines) runs as written and prints an accuracy."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    (code,) = re.findall(r"<!-- notebook example -->\n```python\n(.*?)```", text, re.DOTALL)
    assert len(code.strip().splitlines()) <= 15
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert float(re.search(r"accuracy on held-out points: ([0-9.]+)", proc.stdout).group(1)) >= 0.85


@pytest.mark.parametrize("random_state", [None, np.random.RandomState(0), np.random.default_rng(0), 7])
def test_random_state_follows_scikit_learns_convention(random_state):
    """None, a RandomState, a Generator or an int seed a fit (as check_random_state); the same state, the
    same bits; an int is the cell's seed itself (test_the_estimator_is_the_command_lines_solver)."""
    X, y = load_iris(return_X_y=True)
    same_state = copy.deepcopy(random_state)
    est = BurgKernel(slack=1.0, constraint_params={"count": 10}, random_state=random_state).fit(X, y)
    assert est.G_.shape == (150, 4) and len(est.constraints_) == 10
    if random_state is not None:
        again = BurgKernel(slack=1.0, constraint_params={"count": 10}, random_state=same_state).fit(X, y)
        assert again.G_.tobytes() == est.G_.tobytes()
    assert cell_seed(7) == 7
    with pytest.raises(ValueError, match=r"random_state = -1: expected None, an int >= 0, a numpy.random.RandomState"):
        BurgKernel(random_state=-1).fit(X, y)


@pytest.mark.parametrize("solver", sorted(ESTIMATORS))
def test_one_class_labels_are_refused_where_constraints_are_drawn_from_them(solver):
    """Every estimator that draws its constraints from y refuses a y of one class (no dissimilar pair)."""
    X, y = load_iris(return_X_y=True)
    est = ESTIMATORS[solver](**solvers.get(solver).estimator.check_settings)
    if est.constraints == "distance_stream":        # MEG's stream needs no labels
        assert est.fit(X[:20], y[:20]).G_.shape == (20, 20)
        return
    name = type(est).__name__
    with pytest.raises(ValueError, match=rf"^{name}: constraint generator '{est.constraints}' needs at least two "
                                         r"classes, but dataset 'array' has a single class \(0 for all 50 points\)"):
        est.fit(X[:50], y[:50])
    with pytest.raises(ValueError, match=rf"{name}: .* needs class labels.*Pass labels y .* or constraints= to fit"):
        est.fit(X[:50])


@pytest.mark.slow
def test_one_class_labels_file_is_refused_by_the_command_line(tmp_path):
    """A `files` dataset of one class: refused before solving by a label-based generator, and by a
    label-based evaluator (no trivial k-NN accuracy 1.0) when the constraints come from a file."""
    X, y = load_iris(return_X_y=True)
    np.save(tmp_path / "x.npy", X[:50])
    (tmp_path / "y.txt").write_text("".join(f"{v}\n" for v in y[:50]))
    (tmp_path / "c.csv").write_text("i,j,kind,bound\n0,1,dist_le,1.0\n2,3,dist_ge,4.0\n")
    base = {"name": "one", "seed": 0, "dataset": {"name": "files", "features": "x.npy", "labels": "y.txt"},
            "kernel": {"name": "linear"}, "solver": {"name": "burg", "slack": 1.0}}
    for generator, evaluator in [({"name": "idealized_pairs", "count": 20}, "kernel_kmeans_nmi"),
                                 ({"name": "from_file", "path": "c.csv"}, "knn_accuracy")]:
        (tmp_path / "c.yaml").write_text(yaml.safe_dump({**base, "constraints": generator,
                                                         "evaluate": [{"name": evaluator}]}))
        proc = kernlearn("run", "c.yaml", "--out", "out", cwd=tmp_path)
        user = f"constraint generator '{generator['name']}'" if "count" in generator else f"evaluator '{evaluator}'"
        assert proc.returncode == 2, proc.stderr
        assert (f"{user} needs at least two classes, but dataset 'files' (labels file {tmp_path / 'y.txt'}) has a "
                "single class (0 for all 50 points)") in " ".join((proc.stdout + proc.stderr).split())
        assert "Traceback" not in proc.stderr and "1.0000" not in proc.stdout


def test_feature_names_and_pandas_output():
    """Outputs named <class name lower case>0..r-1 (get_feature_names_out), a DataFrame under set_output."""
    pd = pytest.importorskip("pandas")
    X, y = load_iris(return_X_y=True)
    est = BurgKernel(slack=1.0, constraint_params={"count": 20}).fit(X, y)
    assert est.get_feature_names_out().tolist() == ["burgkernel0", "burgkernel1", "burgkernel2", "burgkernel3"]
    out = est.set_output(transform="pandas").transform(X[:3])
    assert isinstance(out, pd.DataFrame) and out.columns.tolist() == est.get_feature_names_out().tolist()
    np.testing.assert_array_equal(out.to_numpy(), est.set_output(transform="default").transform(X[:3]))
    assert est.set_output(transform="pandas").fit_transform(X, y).shape == (150, 4)


@pytest.mark.slow
def test_meg_estimator_is_the_command_lines_solver(tmp_path):
    """MEGKernel with a reference kernel in constraint_params gives a `kernlearn run` cell's bits."""
    cfg = {"name": "meg", "seed": 2, "dataset": {"name": "iris"}, "kernel": {"name": "identity"},
           "constraints": {"name": "distance_stream", "count": 60, "reference": {"name": "rbf"}},
           "solver": {"name": "meg", "eta": 2.0}, "evaluate": []}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    assert kernlearn("run", tmp_path / "c.yaml", "--out", tmp_path / "out").returncode == 0
    (cell,) = (tmp_path / "out").glob("*/factors.h5")
    X, _ = load_iris(return_X_y=True)
    with threadpool_limits(1):          # the command line's BLAS threads: eigh's last bits depend on them
        est = MEGKernel(constraint_params={"count": 60, "reference": {"name": "rbf"}}, random_state=2).fit(X)
    assert est.G_.tobytes() == read_factors(cell)["G"].tobytes() and est.n_iter_ == 60
    assert est.converged_ is None and est.certificate_["figures"]["bound_holds"] is True
    with pytest.raises(ValueError, match="MEGKernel: solver 'meg' with kernel 'identity' is transductive"):
        est.transform(X[:5])


def test_a_cold_numba_cache_is_announced_before_compiling(tmp_path):
    """warn_if_compiling warns when a kernel will compile (not in memory, not in numba's cache), and not after."""
    import importlib.util

    from kernlearn_cli.solvers.protocol import CompilationWarning, warn_if_compiling

    (tmp_path / "toy_kernels.py").write_text("from numba import njit\n\n\n@njit(cache=True)\ndef plus(x):\n"
                                             "    return x + 1\n")

    def load(name):
        spec = importlib.util.spec_from_file_location(name, tmp_path / "toy_kernels.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.plus

    plus = load("toy_a")
    with pytest.warns(CompilationWarning, match=r"solver 'toy': compiling its numba kernels.*kernlearn warmup"):
        warn_if_compiling("toy", plus)
    assert plus(1) == 2
    fresh = load("toy_b")                              # a new process would find the kernel in the cache
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_if_compiling("toy", plus)
        warn_if_compiling("toy", fresh)
