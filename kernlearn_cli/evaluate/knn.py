"""k-nearest-neighbour classification with feature-space distances of the learned kernel."""

from __future__ import annotations

import numpy as np

from ..params import PositiveInt
from ..progress import phase_step
from ..registry import Checks, evaluators
from ..resources import DOUBLE, estimated
from ._common import require_labels, seed_from


#: At most this many test points are scored per fold; a larger test half is scored on a uniform sample of
#: this size drawn (without replacement) from the evaluator's own generator, and ``knn_test_points`` says how
#: many were scored.  Above every archived study's n (a few thousand points; a fold tests n / 2), so their
#: results are unchanged; at n = 200,000 it makes a fold's brute-force search 10x cheaper.
TEST_POINTS = 10_000
#: (training points x test points x rank) per second of scikit-learn's brute-force 5-NN search, one BLAS
#: thread (measured on the reference machine, docs/scale.md "Evaluators against n": 8.6e-11 s at n = 50,000
#: scoring whole halves, 8.3e-11 s at n = 200,000 scoring 10,000 points a fold).
KNN_RATE = 1.2e10


def knn_cost(G, ds=None, *, rng=None, k: int = 5, repeats: int = 10) -> tuple[str, float, float, str]:
    """(what, bytes, seconds, instead) of :func:`knn_accuracy` (:func:`~kernlearn_cli.resources.estimated`):
    2 x ``repeats`` folds, each n/2 training points against min(n/2, :data:`TEST_POINTS`) test points in
    r dimensions at :data:`KNN_RATE`; memory: scikit-learn's distance chunks (its working memory, 1 GB at
    most) and the copies of the two halves."""
    n, r = np.shape(G)[0], (np.shape(G)[1] if len(np.shape(G)) > 1 else 1)
    train, test = n - n // 2, min(n // 2, TEST_POINTS)
    seconds = 2 * repeats * train * test * r / KNN_RATE
    return (f"evaluating 'knn_accuracy': {2 * repeats} folds of {test} test points against {train} training points",
            float(min(1e9, DOUBLE * test * train) + DOUBLE * n * r), seconds,
            "Fewer repeats (evaluate: [{name: knn_accuracy, repeats: 3}]) cost proportionally less.")


@evaluators.register("knn_accuracy", metrics=("knn_accuracy",), checks=Checks(alternatives={"k": 1, "repeats": 3}))
@estimated(knn_cost)
def knn_accuracy(G: np.ndarray, ds, *, rng, k: PositiveInt = 5, repeats: PositiveInt = 10) -> dict:
    """k-NN accuracy (Kulis et al. 2006, Sec. 6): 50/50 split, 2-fold cross-validation, repeated.

    Distances are d(i, j) = K_ii + K_jj - 2 K_ij, i.e. Euclidean between rows of G.
    Each repeat splits the points into two stratified halves, trains on one and
    tests on the other, then swaps; the metric is the mean over 2 x ``repeats`` folds
    (``knn_accuracy_std`` their spread).

    A test half larger than :data:`TEST_POINTS` is scored on a uniform sample of that many of its
    points (``knn_test_points``: the points scored per fold, present only then), so the cost is
    O(n x min(n/2, TEST_POINTS) x r) per fold rather than O(n^2 r); the training half is always whole.
    The neighbour search is scikit-learn's ``algorithm='auto'`` (a tree for few dimensions, brute force
    otherwise).  Each finished fold updates the phase's line with the time left.

    Parameters
    ----------
    k : int
        Neighbours (>= 1; fewer when a training half is smaller).
    repeats : int
        Random halvings (>= 1).
    """
    from sklearn.model_selection import StratifiedKFold
    from sklearn.neighbors import KNeighborsClassifier

    y = require_labels(ds, "knn_accuracy")
    accs, scored = [], []
    for rep in range(repeats):
        folds = StratifiedKFold(n_splits=2, shuffle=True, random_state=seed_from(rng))
        for f, (train, test) in enumerate(folds.split(G, y)):
            if len(test) > TEST_POINTS:
                test = np.sort(rng.choice(test, size=TEST_POINTS, replace=False))
            clf = KNeighborsClassifier(n_neighbors=min(k, len(train))).fit(G[train], y[train])
            accs.append(clf.score(G[test], y[test]))
            scored.append(len(test))
            phase_step(2 * rep + f + 1, 2 * repeats, "fold")
    out = {"knn_accuracy": float(np.mean(accs)), "knn_accuracy_std": float(np.std(accs))}
    if max(scored) < len(y) // 2:                  # a sample was scored: say its size (whole halves: no key)
        out["knn_test_points"] = float(np.mean(scored))
    return out


@evaluators.register("knn_error", metrics=("knn_error",), checks=Checks(alternatives={"k": 3, "repeats": 2}))
def knn_error(G: np.ndarray, ds, *, rng, k: PositiveInt = 1, repeats: PositiveInt = 5) -> dict:
    """k-NN test error (Tsuda et al. 2005, Sec. 5: 1-NN, 50/50 splits): 1 - :func:`knn_accuracy`.

    ``repeats`` random halvings, each used both ways, give 2 x ``repeats`` divisions.

    Parameters
    ----------
    k : int
        Neighbours (>= 1).
    repeats : int
        Random halvings (>= 1).
    """
    acc = knn_accuracy(G, ds, rng=rng, k=k, repeats=repeats)
    return {"knn_error": 1.0 - acc["knn_accuracy"], "knn_error_std": acc["knn_accuracy_std"]}
