"""Clustering quality of the learned kernel."""

from __future__ import annotations

from typing import Literal

import numpy as np

from ..params import PositiveInt
from ..registry import Checks, evaluators
from ._common import require_labels, seed_from


@evaluators.register("kernel_kmeans_nmi", metrics=("nmi",), checks=Checks(
    alternatives={"n_init": 1, "average": "geometric"}, instance="kernlearn_cli.testing.instances:clustered_factor"))
def kernel_kmeans_nmi(G: np.ndarray, ds, *, rng, n_init: PositiveInt = 10,
                      average: Literal["arithmetic", "geometric", "min", "max"] = "arithmetic") -> dict:
    """Kernel k-means on K = G G^T with the true number of classes; NMI against the labels.

    With K = G G^T kernel k-means is k-means on the rows of G (Lloyd, k-means++
    starts, best of ``n_init``).  ``average`` is the NMI normalisation of
    scikit-learn (arithmetic, geometric, min, max).

    Parameters
    ----------
    n_init : int
        k-means starts (>= 1).
    average : {"arithmetic", "geometric", "min", "max"}
        The NMI normalisation.
    """
    from sklearn.cluster import KMeans
    from sklearn.metrics import normalized_mutual_info_score

    y = require_labels(ds, "kernel_kmeans_nmi")
    k = len(np.unique(y))
    pred = KMeans(n_clusters=k, n_init=n_init, random_state=seed_from(rng)).fit_predict(G)
    return {"nmi": float(normalized_mutual_info_score(y, pred, average_method=average))}


@evaluators.register("pairwise_accuracy", metrics=("pairwise_accuracy",), checks=Checks(
    alternatives={"n_init": 1}, instance="kernlearn_cli.testing.instances:clustered_factor"))
def pairwise_accuracy(G: np.ndarray, ds, *, rng, n_init: PositiveInt = 10) -> dict:
    """Kernel k-means on K = G G^T with the true number of classes, scored as Hu & Kwok (2013, Sec. 4):
    the fraction of the n(n-1)/2 pattern pairs whose same/different-cluster relation matches the
    labels' (the Rand index), computed from the contingency table in O(n + classes x clusters).

    Parameters
    ----------
    n_init : int
        k-means starts (>= 1).
    """
    from sklearn.cluster import KMeans
    from sklearn.metrics import rand_score

    y = require_labels(ds, "pairwise_accuracy")
    k = len(np.unique(y))
    pred = KMeans(n_clusters=k, n_init=n_init, random_state=seed_from(rng)).fit_predict(G)
    return {"pairwise_accuracy": float(rand_score(y, pred))}
