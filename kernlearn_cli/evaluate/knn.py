"""k-nearest-neighbour classification with feature-space distances of the learned kernel."""

from __future__ import annotations

import numpy as np

from ..params import PositiveInt
from ..registry import Checks, evaluators
from ._common import require_labels, seed_from


@evaluators.register("knn_accuracy", metrics=("knn_accuracy",), checks=Checks(alternatives={"k": 1, "repeats": 3}))
def knn_accuracy(G: np.ndarray, ds, *, rng, k: PositiveInt = 5, repeats: PositiveInt = 10) -> dict:
    """k-NN accuracy (Kulis et al. 2006, Sec. 6): 50/50 split, 2-fold cross-validation, repeated.

    Distances are d(i, j) = K_ii + K_jj - 2 K_ij, i.e. Euclidean between rows of G.
    Each repeat splits the points into two stratified halves, trains on one and
    tests on the other, then swaps; the metric is the mean over 2 x ``repeats`` folds
    (``knn_accuracy_std`` their spread).

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
    accs = []
    for _ in range(repeats):
        folds = StratifiedKFold(n_splits=2, shuffle=True, random_state=seed_from(rng))
        for train, test in folds.split(G, y):
            clf = KNeighborsClassifier(n_neighbors=min(k, len(train))).fit(G[train], y[train])
            accs.append(clf.score(G[test], y[test]))
    return {"knn_accuracy": float(np.mean(accs)), "knn_accuracy_std": float(np.std(accs))}


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
