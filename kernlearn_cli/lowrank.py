"""Low-rank factors of PSD matrices, K ~= G G^T: the rank-revealing eigendecomposition
(:func:`factorize`), pivoted incomplete Cholesky (:func:`pivoted_cholesky`, no n x n array) and a
full-column-rank reduction of a factor (:func:`full_column_rank`).

The initial kernels (:mod:`kernlearn_cli.kernels`) build their factors G0 with them; the Bregman
solvers reduce G0 to full column rank, since they work in the range of K0.
"""

from __future__ import annotations

import math

import numpy as np

from .errors import DataError
from .linalg import eigh
from .resources import eigh_cost, heavy_step

#: Default relative tolerance of the rank-revealing factorizations: eigen- or
#: singular values below ``RANK_TOL * largest`` are treated as zero.
RANK_TOL = 1e-10


def factorize(K: np.ndarray, rank_tol: float = RANK_TOL, rank: int = 0, instead: str = "") -> np.ndarray:
    """Rank-revealing factor of a symmetric PSD matrix: K ~= G G^T, G = U_r sqrt(L_r).

    Eigenvalues below ``rank_tol * max eigenvalue`` are dropped; ``rank > 0``
    keeps at most the ``rank`` largest (the best rank-r approximation).
    Columns are ordered by decreasing eigenvalue.  A full eigendecomposition (O(n³) time, about
    3 n² doubles): announced when large (:func:`~kernlearn_cli.resources.heavy_step`), with ``instead``
    (default :data:`DENSE_K0`), what avoids it.
    """
    n = K.shape[0]
    with heavy_step(f"eigendecomposition of the {n} x {n} kernel matrix", *eigh_cost(n), instead=instead or DENSE_K0):
        lam, U = eigh(K)
    lam, U = lam[::-1], U[:, ::-1]
    keep = lam > rank_tol * max(lam[0], 0.0)
    if rank > 0:
        keep[rank:] = False
    if not keep.any():
        raise DataError("the kernel matrix is zero (no eigenvalue above the rank tolerance).")
    return np.ascontiguousarray(U[:, keep] * np.sqrt(lam[keep]))


#: What to do instead of a dense n x n initial kernel, said before a large one is built.
DENSE_K0 = ("A 'rank:' setting does not avoid this step (the rank is cut after it). Cheaper: solver nystrom or "
            "nystrom_prior (they never form K0), kernel linear (its factor is the n x d features), or a subsample.")


def pivoted_cholesky(column, diagonal: np.ndarray, rank: int = 0,
                     trace_tol: float = 0.0) -> tuple[np.ndarray, np.ndarray, float]:
    """Pivoted incomplete Cholesky factor of a PSD matrix given by its columns: K ≈ G Gᵀ in O(n r²)
    time and O(n r) memory, no n x n array (Fine & Scheinberg 2001, Sec. 4; Bach & Jordan 2005).

    Step k takes the pivot p with the largest residual diagonal d_p = (K - G Gᵀ)_pp and appends the
    column g = (K[:, p] - G G[p]ᵀ) / sqrt(d_p); then d <- d - g². It stops after ``rank`` columns
    (0: no limit), or once the residual trace sum(d) = tr(K - G Gᵀ) is at most ``trace_tol`` tr K, or
    when no residual diagonal is above rounding (1e-14 max diag(K)). G is lower triangular in the
    pivot order, and G = K[:, P] L⁻ᵀ with L = G[P] (the Nyström factor of the pivots).

    Parameters
    ----------
    column : callable
        ``column(p)``: K[:, p], an (n,) array.
    diagonal : (n,) array
        diag(K).
    rank : int
        Most columns (0: up to n).
    trace_tol : float
        Relative residual trace to stop at.

    Returns
    -------
    G : (n, r) array, P : (r,) int64 pivots, residual : float
        The factor, the pivots in order, and tr(K - G Gᵀ) (as the updates computed it).
    """
    d = np.array(diagonal, dtype=np.float64)
    n = d.shape[0]
    r = min(rank or n, n)
    G = np.zeros((n, r), order="F")              # columns contiguous: one pass per step
    pivots: list[int] = []
    total, floor = float(d.sum()), 1e-14 * float(d.max(initial=0.0))
    for k in range(r):
        p = int(np.argmax(d))
        if d[p] <= floor or d.sum() <= trace_tol * total:
            break
        g = np.asarray(column(p), dtype=np.float64) - G[:, :k] @ G[p, :k]
        g /= math.sqrt(d[p])
        G[:, k] = g
        d -= g * g
        d[p] = 0.0
        np.maximum(d, 0.0, out=d)
        pivots.append(p)
    return np.ascontiguousarray(G[:, :len(pivots)]), np.array(pivots, dtype=np.int64), float(d.sum())


def full_column_rank(G: np.ndarray, rank_tol: float = RANK_TOL) -> np.ndarray:
    """Return G itself if it has full column rank, else a factor with the same G G^T that has.

    Uses the thin SVD G = U S V^T (O(n r^2)); the replacement is U_k S_k.
    """
    if G.shape[1] == 0:
        raise DataError("the initial kernel has rank 0.")
    U, s, _ = np.linalg.svd(G, full_matrices=False)
    k = int(np.sum(s > rank_tol * s[0]))
    if k == G.shape[1]:
        return G
    return np.ascontiguousarray(U[:, :k] * s[:k])
