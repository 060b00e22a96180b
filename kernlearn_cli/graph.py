"""Data manifolds: sparse k-nearest-neighbour graphs and their Laplacians.

The construction of Hoi et al. (2007) used by Hu & Kwok (2013, Sec. 4): Gaussian
similarity exp(-||x_i - x_j||^2 / 2 sigma^2) with sigma half the average distance from
each pattern to its ``sigma_neighbors`` nearest neighbours, on the k-nearest-neighbour
graph (symmetrized: an edge when either point is among the other's k nearest).  Memory
is O(n k): no n x n matrix is ever formed.  scipy is imported where a graph is built, so the
components that declare their settings with :data:`Scaling` and the like do not pay for it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

import numpy as np

from .errors import ConfigError
from .params import checked_arguments

if TYPE_CHECKING:
    import scipy.sparse as sp

#: The choices of the graph settings of the components that build one (declared in their signatures,
#: so checked by the registry before they reach these functions, and by these functions for a direct call).
Laplacian = Literal["normalized", "unnormalized"]
Scaling = Literal["none", "minmax", "standard"]
EdgeWeight = Literal["half_mean", "edge_mean"]


@checked_arguments("how")
def scale_features(X: np.ndarray, how: Scaling) -> np.ndarray:
    """Per-feature scaling before the graph: ``minmax`` to [0, 1], ``standard`` to zero mean and
    unit variance, ``none``.  Constant features are left at 0."""
    if how == "none":
        return X
    shift, spread = (X.min(0), np.ptp(X, axis=0)) if how == "minmax" else (X.mean(0), X.std(0))
    return (X - shift) / np.where(spread > 0, spread, 1.0)


#: Rows of the distance matrix held at once by :func:`nearest_neighbors` (x n floats: 64 MB at n = 32,768).
CHUNK_ROWS = 256


def nearest_neighbors(X: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``m`` nearest other rows of each row of X: Euclidean distances and indices, (n, m) each.

    Ties are broken by the smaller index, so the neighbours are a function of X alone: the same
    whatever the number of threads (scikit-learn's ``kneighbors`` orders tied neighbours, and picks
    among those tied at the m-th distance, by its thread layout — binary features such as adult's
    tie often).  Squared distances ‖x‖² + ‖y‖² − 2 xᵀy in blocks of :data:`CHUNK_ROWS` rows, so
    memory is O(CHUNK_ROWS · n); time O(n² d).
    """
    n = X.shape[0]
    X = np.ascontiguousarray(X, dtype=np.float64)
    sq = np.einsum("ij,ij->i", X, X)
    dist = np.empty((n, m))
    idx = np.empty((n, m), dtype=np.int64)
    for start in range(0, n, CHUNK_ROWS):
        stop = min(start + CHUNK_ROWS, n)
        D = sq[start:stop, None] + sq[None, :] - 2.0 * (X[start:stop] @ X.T)
        np.maximum(D, 0.0, out=D)
        rows = np.arange(stop - start)
        D[rows, rows + start] = np.inf                          # the point itself is not its neighbour
        kth = np.partition(D, m - 1, axis=1)[:, m - 1]          # the m-th smallest value of each row
        for r in rows:
            cand = np.flatnonzero(D[r] <= kth[r])               # every point tied at the boundary too
            cand = cand[np.lexsort((cand, D[r, cand]))][:m]     # by distance, then by index
            idx[start + r], dist[start + r] = cand, np.sqrt(D[r, cand])
    return dist, idx


@checked_arguments("kind", "bandwidth")
def knn_laplacian(X: np.ndarray, *, neighbors: int = 5, sigma_neighbors: int = 10,
                  kind: Laplacian = "normalized", bandwidth: EdgeWeight = "half_mean") -> tuple[sp.csr_matrix, dict]:
    """Graph Laplacian of the Gaussian-weighted k-NN graph of the rows of X.

    Parameters
    ----------
    X : ndarray (n, d)
    neighbors : int
        k of the k-NN graph (Hu & Kwok: 5; 50 on the adult sets).
    sigma_neighbors : int
        sigma = half the mean distance from each point to its ``sigma_neighbors`` nearest.
    bandwidth : {"half_mean", "edge_mean"}
        ``half_mean``: weights exp(-d^2 / (2 sigma^2)) with sigma half the mean distance to the
        ``sigma_neighbors`` nearest (Hu & Kwok); ``edge_mean``: exp(-d^2 / s^2) with s^2 the mean
        squared length of the ``neighbors`` nearest-neighbour edges (so a typical edge weighs
        e^-1; used for Li et al.'s Laplacian pseudo-inverse).
    kind : {"normalized", "unnormalized"}
        ``normalized``: L = I - D^-1/2 W D^-1/2 (symmetric normalized Laplacian, eigenvalues
        in [0, 2]); ``unnormalized``: L = D - W.

    Returns
    -------
    L : scipy.sparse.csr_matrix (n, n), symmetric positive semidefinite
    info : dict
        ``sigma``, ``edges`` (undirected), ``components`` (connected components of the graph;
        a disconnected graph is allowed: each component contributes one null vector of L).
    """
    import scipy.sparse as sp
    import scipy.sparse.csgraph  # noqa: F401  (makes sp.csgraph available)

    n = X.shape[0]
    for key, k in (("neighbors", neighbors), ("sigma_neighbors", sigma_neighbors)):
        if not 1 <= k < n:
            raise ConfigError(f"{key} = {k} must be between 1 and n - 1 = {n - 1} (the dataset has "
                              f"{n} points).")
    m = max(neighbors, sigma_neighbors)
    dist, idx = nearest_neighbors(X, m)
    d, j = dist[:, :neighbors], idx[:, :neighbors]
    if bandwidth == "half_mean":
        sigma = 0.5 * float(dist[:, :sigma_neighbors].mean())
        denominator = 2.0 * sigma ** 2
    else:
        denominator = float(np.mean(d ** 2))
        sigma = math.sqrt(denominator / 2.0)
    if not sigma > 0:
        raise ConfigError("the k-NN graph is degenerate: every point's nearest neighbours are duplicates of it "
                          "(sigma = 0). Remove duplicate rows or raise sigma_neighbors.")
    w = np.exp(-d ** 2 / denominator)
    W = sp.csr_matrix((w.ravel(), j.ravel(), np.arange(0, n * neighbors + 1, neighbors)), shape=(n, n))
    W = W.maximum(W.T).tocsr()
    W.sort_indices()
    deg = np.asarray(W.sum(axis=1)).ravel()
    if kind == "unnormalized":
        L = sp.diags(deg) - W
    else:
        s = np.where(deg > 0, 1.0 / np.sqrt(np.where(deg > 0, deg, 1.0)), 0.0)
        L = sp.identity(n, format="csr") - sp.diags(s) @ W @ sp.diags(s)
    L = sp.csr_matrix(L)
    L.sort_indices()
    components = int(sp.csgraph.connected_components(W, directed=False)[0])
    return L, {"sigma": sigma, "edges": int(W.nnz // 2), "components": components}
