"""Issue 17's figures: sklearn's estimator checks per estimator, and `kernlearn embed` against refits.

Run from the repository root (``python benchmarks/checks/estimator_report.py``, about a minute). It uses the
settings of ``tests/test_estimators.py`` (which checks may fail, and why) and the harness of
``tests/test_embed.py`` (iris standardized, 40 training points with 12 pair constraints, a refit on
the union of training and new points with the same constraints), and prints, per estimator, the
checks passed, expected to fail and skipped, and per solver and initial kernel the relative
max-abs difference of each block of the embedded kernel from the refit's. The tests assert the
blocks the math fixes (burg); this prints every block, von Neumann's too, where no refit is
equivalent (docs/solvers.md, "Inductive use").
"""

import argparse
import sys
import tempfile
import warnings
from pathlib import Path

if __name__ == "__main__":                 # the usage before the heavy imports (scikit-learn, the tests' harness)
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()

import numpy as np  # noqa: E402
from sklearn.datasets import load_iris  # noqa: E402
from sklearn.utils.estimator_checks import check_estimator  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
import test_embed as E  # noqa: E402
import test_estimators as T  # noqa: E402

from kernlearn_cli.estimators import ESTIMATORS  # noqa: E402
from kernlearn_cli.factors import read_factors  # noqa: E402


def estimator_checks():
    for solver in sorted(ESTIMATORS):
        est = ESTIMATORS[solver](**T.CHECK_SETTINGS.get(solver, {}))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = check_estimator(est, expected_failed_checks=T.EXPECTED_FAILED.get(solver, {}), on_fail=None)
        by = {}
        for r in results:
            by.setdefault(r["status"], []).append(r["check_name"])
        passed = by.get("passed", [])
        print(f"{solver:14s} passed {len(passed)} ({len(set(passed))} distinct; check_estimators_pickle and "
              f"check_transformer_general run twice), failed {len(by.get('failed', ()))}, "
              f"xfail {sorted(by.get('xfail', []))}, skipped {sorted(by.get('skipped', []))}", flush=True)


def embedding():
    X, y = load_iris(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))
    X, y = X[order], y[order]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    n = E.N_TRAIN
    tmp = Path(tempfile.mkdtemp())
    for solver in ["burg", "von_neumann"]:
        for kernel, n_union in [({"name": "linear"}, 60), ({"name": "rbf", "sigma": 0.6}, 45)]:
            folder = tmp / f"{solver}_{kernel['name']}"
            folder.mkdir()
            cell, pairs = E.fit(folder, "train", X[:n], y[:n], kernel, solver)
            union, _ = E.fit(folder, "union", X[:n_union], y[:n_union], kernel, solver, constraints=pairs)
            f, fu = read_factors(cell / "factors.h5"), read_factors(union / "factors.h5")
            back = E.rel(E.embedded(folder, cell, X[:n]), f["G"])
            Ge = np.vstack([f["G"], E.embedded(folder, cell, X[n:n_union])])
            Ke, Ku = Ge @ Ge.T, fu["G"] @ fu["G"].T
            print(f"{solver:12s} {kernel['name']:6s} training rows back {back:.1e}; vs the refit on {n_union} "
                  f"points: train {E.rel(Ke[:n, :n], Ku[:n, :n]):.1e}, new x train {E.rel(Ke[n:, :n], Ku[n:, :n]):.1e}, "
                  f"new x new {E.rel(Ke[n:, n:], Ku[n:, n:]):.1e}", flush=True)


if __name__ == "__main__":
    estimator_checks()
    embedding()
