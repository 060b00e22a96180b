"""Kernel PCA + 1-NN on the learned kernel (Li et al. 2009, Sec. 6.3, following Li et al. 2007)."""

from __future__ import annotations

import numpy as np

from ..params import PositiveInt
from ..registry import Checks, evaluators
from ._common import labeled_split, require_labels


def kpca_coordinates(G: np.ndarray, components: int) -> np.ndarray:
    """Kernel PCA coordinates of the n points of K = G G^T: the top ``components`` principal directions.

    Centring K (H K H, H = I - 11^T / n) is centring the columns of G; with the thin SVD
    Gc = U S V^T the centred kernel is U S^2 U^T and the coordinates are U_c S_c (the projections
    of the centred feature vectors on the leading eigenvectors).  O(n r min(n, r)); no n x n matrix.
    Fewer columns come back when the centred kernel has rank < ``components``.
    """
    G = np.asarray(G, dtype=np.float64)
    Gc = G - G.mean(axis=0)
    U, s, _ = np.linalg.svd(Gc, full_matrices=False)      # works for r > n too (G may be wide)
    c = min(components, len(s))
    return U[:, :c] * s[:c]


@evaluators.register("kpca_1nn_error", metrics=("error", "gamma"), checks=Checks(alternatives={"components": 1}))
def kpca_1nn_error(G: np.ndarray, ds, *, rng, constraints, result=None, components: PositiveInt = 10) -> dict:
    """1-NN error after kernel PCA of K = G G^T to ``components`` dimensions (Li et al. 2009, Sec. 6.3).

    The coordinates are those of :func:`kpca_coordinates` (centred K, top singular directions of
    the column-centred G).  A 1-nearest-neighbour classifier (Euclidean in those coordinates) is
    trained on the labeled points -- the indices appearing in the cell's constraints, see
    :func:`~kernlearn_cli.constraints.labeled.labeled_indices` (e.g. from ``neighbor_triplets``
    or ``labeled_subset``) -- and scored on all the other points.  Returns ``{"error": rate}``.
    Equal distances go to the labeled point listed first (scikit-learn's KNeighborsClassifier).

    When the solver kept a regularization path (``result.path``, e.g. ``trin`` with
    ``keep_path: true``), every path point is scored too: ``error_path`` and ``gamma_path``
    (lists), ``error_best``/``gamma_best`` (the lowest test error: an oracle), and
    ``error_loo``/``gamma_loo``, the test error at the γ whose leave-one-out 1-NN error on the
    labeled points is lowest (the first such γ) -- a choice that uses no test label.

    Parameters
    ----------
    components : int
        Kernel PCA dimensions (>= 1; fewer when the centred kernel has a lower rank).
    """
    from sklearn.neighbors import KNeighborsClassifier

    y = require_labels(ds, "kpca_1nn_error")
    G = np.asarray(G, dtype=np.float64)
    n = G.shape[0]
    lab, test = labeled_split(constraints, n, ds, "kpca_1nn_error")

    def errors(F):
        Z = kpca_coordinates(F, components)
        clf = KNeighborsClassifier(n_neighbors=1, algorithm="brute").fit(Z[lab], y[lab])
        test_error = float(np.mean(clf.predict(Z[test]) != y[test]))
        Zl, nearest = Z[lab], np.empty(lab.size, dtype=np.int64)
        for b in range(0, lab.size, 256):              # leave-one-out 1-NN, 256 rows at a time
            D = np.sum((Zl[b:b + 256, None, :] - Zl[None, :, :]) ** 2, axis=-1)
            D[np.arange(D.shape[0]), np.arange(b, b + D.shape[0])] = np.inf
            nearest[b:b + 256] = np.argmin(D, axis=1)
        return test_error, float(np.mean(y[lab][nearest] != y[lab]))

    out = {"error": errors(G)[0]}
    path = getattr(result, "path", None) or []
    if path:                                           # one factor at a time (a SpilledPath reads it back)
        gam, test_err, loo = [], [], []
        for g, F in path:
            e, l = errors(F)
            gam.append(float(g))
            test_err.append(e)
            loo.append(l)
            del F
        best, sel = int(np.argmin(test_err)), int(np.argmin(loo))
        out.update(error_best=test_err[best], gamma_best=gam[best], error_loo=test_err[sel], gamma_loo=gam[sel],
                   error_path=list(test_err), gamma_path=gam)
    return out
