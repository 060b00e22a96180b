r"""Relative-distance triplets between labeled neighbours (Li et al. 2009, Sec. 6.2).

A triplet (i, j, k) asks the learned kernel to put point i closer to k than to j,

.. math::  \operatorname{tr}(K A_{ijk}) = d(i, j) - d(i, k) \ge 0,\qquad
           d(a, b) = K_{aa} + K_{bb} - 2 K_{ab},

with j an out-of-class and k an in-class neighbour of i (kind ``triplet``, see
:class:`~kernlearn_cli.types.Constraints`).  Li et al. label a random half of the items and, for
every labeled item, pair each of its 10 nearest in-class with each of its 10 nearest
out-of-class labeled neighbours: 100 triplets per labeled item, 50 n in all.
"""

from __future__ import annotations

from typing import Annotated

import numpy as np
from scipy.spatial.distance import cdist

from ..errors import ConfigError, DataError
from ..graph import Scaling, scale_features as _scale
from ..params import Interval, PositiveInt
from ..registry import Checks, constraints
from ..types import Constraints
from .labeled import label_name

#: Anchors per distance block: the block's distances take BLOCK x (labeled points) floats.
BLOCK = 512


def nearest(anchors: np.ndarray, candidates: np.ndarray, Z: np.ndarray, count: int) -> np.ndarray:
    """For each anchor, its ``count`` nearest candidates (Euclidean between rows of Z), never itself.

    Parameters
    ----------
    anchors : int64 array (a,)
        Row indices of Z.
    candidates : int64 array (m,), sorted ascending
        Row indices of Z to choose from (may contain the anchors, which are skipped).
    Z : ndarray (n, d)
    count : int
        How many to return per anchor; must be <= the number of candidates other than the anchor.

    Returns
    -------
    int64 array (a, count)
        Point indices, nearest first; equal distances are ordered by point index (stable sort
        over the ascending candidates).  Memory O(BLOCK m).
    """
    out = np.empty((len(anchors), count), dtype=np.int64)
    for start in range(0, len(anchors), BLOCK):
        a = anchors[start:start + BLOCK]
        D = cdist(Z[a], Z[candidates], "sqeuclidean")        # exact pairwise differences, no BLAS rounding
        D[a[:, None] == candidates[None, :]] = np.inf       # an anchor is not its own neighbour
        order = np.argsort(D, axis=1, kind="stable")[:, :count]
        out[start:start + BLOCK] = candidates[order]
    return out


@constraints.register("neighbor_triplets", checks=Checks(
    alternatives={"fraction": 0.8, "in_class": 3, "out_class": 3, "scale_features": "minmax"}))
def neighbor_triplets(ds, G_ref, *, rng, fraction: Annotated[float, Interval(0, 1, closed="right")] = 0.5,
                      in_class: PositiveInt = 10, out_class: PositiveInt = 10,
                      scale_features: Scaling = "none") -> Constraints:
    """Triplets (i, j, k) over a random labeled subset: j an out-of-class, k an in-class neighbour of i
    (Li et al. 2009, Sec. 6.2), asking d(i, j) - d(i, k) >= 0.

    round(``fraction`` n) points are labeled, drawn uniformly without replacement with the cell's
    generator; every class needs at least 2 labeled points.  For every labeled item i (the anchor),
    its ``in_class`` nearest labeled points of its own class (k) and its ``out_class`` nearest labeled
    points of the other classes (j) are found by Euclidean distance in input space -- the rows of
    the dataset's features after ``scale_features``, or, for a dataset given as a kernel matrix, the
    rows of the reference factor G_ref (feature-space distances of the reference kernel).  Every
    (j, k) pair gives one triplet: in_class x out_class = 100 per anchor with the defaults, i.e.
    50 n constraints at fraction 0.5.  A class with fewer labeled neighbours than asked gives
    what there is (min(in_class, labeled in class - 1) x min(out_class, labeled in other classes)).

    Order (deterministic for a seed): anchors ascending, then j nearest first, then k nearest
    first; equal distances are ordered by point index.  The labeled set is the set of indices in
    the triplets (:func:`~kernlearn_cli.constraints.labeled.labeled_indices`), which the
    ``kpca_1nn_error`` and ``svm_accuracy`` evaluators train on.

    Parameters
    ----------
    fraction : float
        Labeled fraction, 0 < fraction <= 1 (Li et al.: 0.5).
    in_class, out_class : int
        Nearest in-class (k) and out-of-class (j) labeled neighbours per anchor (>= 1; Li et al.: 10).
    scale_features : {"none", "minmax", "standard"}
        Per-feature scaling of all n points before the distances (see
        :func:`kernlearn_cli.graph.scale_features`); only for datasets with features.
    """
    name = "neighbor_triplets"
    y = ds.labels(f"constraint generator '{name}'")
    if ds.X is not None:
        Z = _scale(np.asarray(ds.X, dtype=np.float64), scale_features)
    else:
        if scale_features != "none":
            raise ConfigError(f"constraint generator '{name}': constraints.scale_features = '{scale_features}' "
                              f"scales feature vectors, but dataset '{ds.name}' is a kernel matrix without "
                              "features (its distances come from the reference kernel); use 'none'.")
        Z = np.asarray(G_ref, dtype=np.float64)
    n = ds.n
    if Z.shape[0] != n:
        raise DataError(f"constraint generator '{name}': the reference kernel has {Z.shape[0]} rows, but dataset "
                        f"'{ds.name}' has {n} points.")
    classes = np.unique(y)
    m = int(round(fraction * n))
    lab = np.sort(rng.choice(n, size=m, replace=False)).astype(np.int64)
    counts = {c: int(np.count_nonzero(y[lab] == c)) for c in classes}
    few = [c for c in classes if counts[c] < 2]
    if few:
        names = ", ".join(f"{label_name(ds, c)} ({counts[c]})" for c in few)
        raise DataError(f"constraint generator '{name}': every class needs at least 2 labeled points (an anchor "
                        f"and an in-class neighbour), but among the {m} labeled points of dataset '{ds.name}' "
                        f"(fraction {fraction}) {'class' if len(few) == 1 else 'classes'} {names} "
                        f"{'has' if len(few) == 1 else 'have'} fewer; raise constraints.fraction.")

    parts = []                                            # (i, j, k) blocks, one per class
    for c in classes:
        anchors = lab[y[lab] == c]
        others = lab[y[lab] != c]
        a, b = min(in_class, len(anchors) - 1), min(out_class, len(others))
        K = nearest(anchors, anchors, Z, a)               # in-class neighbours, nearest first
        J = nearest(anchors, others, Z, b)                # out-of-class neighbours, nearest first
        # per anchor: j varies slowest, k fastest (j by distance, then k by distance)
        parts.append((np.repeat(anchors, a * b), np.repeat(J, a, axis=1).ravel(), np.tile(K, (1, b)).ravel()))
    i = np.concatenate([p[0] for p in parts])
    j = np.concatenate([p[1] for p in parts])
    k = np.concatenate([p[2] for p in parts])
    order = np.argsort(i, kind="stable")                  # anchors ascending, each anchor's block kept
    return Constraints.triplets(i[order], j[order], k[order])
