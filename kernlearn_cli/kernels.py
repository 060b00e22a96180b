"""Initial kernels K0, each returned as a factor G0 (n x r) with K0 = G0 G0^T.

Every function here takes the loaded :class:`~kernlearn_cli.types.Dataset` and
returns G0 with full column rank r = rank(K0): the Bregman solvers work in the
range of K0, where D(K, K0) reduces to a divergence between r x r matrices.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import pdist

from .errors import ConfigError, DataError
from .registry import kernels

#: Default relative tolerance of the rank-revealing factorizations: eigen- or
#: singular values below ``RANK_TOL * largest`` are treated as zero.
RANK_TOL = 1e-10


def factorize(K: np.ndarray, rank_tol: float = RANK_TOL, rank: int = 0) -> np.ndarray:
    """Rank-revealing factor of a symmetric PSD matrix: K ~= G G^T, G = U_r sqrt(L_r).

    Eigenvalues below ``rank_tol * max eigenvalue`` are dropped; ``rank > 0``
    keeps at most the ``rank`` largest (the best rank-r approximation).
    Columns are ordered by decreasing eigenvalue.
    """
    lam, U = np.linalg.eigh(K)
    lam, U = lam[::-1], U[:, ::-1]
    keep = lam > rank_tol * max(lam[0], 0.0)
    if rank > 0:
        keep[rank:] = False
    if not keep.any():
        raise DataError("the kernel matrix is zero (no eigenvalue above the rank tolerance).")
    return np.ascontiguousarray(U[:, keep] * np.sqrt(lam[keep]))


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


def _features(ds, kernel_name: str) -> np.ndarray:
    if ds.X is None:
        raise ConfigError(f"kernel '{kernel_name}' needs feature vectors, but dataset '{ds.name}' "
                          "provides only a kernel matrix; use kernel 'precomputed' or 'identity'.")
    return ds.X


@kernels.register("linear")
def linear(ds, *, center: bool = False, rank: int = 0) -> np.ndarray:
    """Linear kernel K0 = X X^T with G0 = X exactly (no centering, no scaling).

    Parameters
    ----------
    center : bool
        Subtract the feature means first.
    rank : int
        If > 0, keep the best rank-``rank`` approximation (truncated SVD of X).
    """
    X = np.array(_features(ds, "linear"), dtype=np.float64)
    if center:
        X -= X.mean(axis=0)
    if rank > 0 and rank < min(X.shape):
        U, s, _ = np.linalg.svd(X, full_matrices=False)
        X = U[:, :rank] * s[:rank]
    return np.ascontiguousarray(X)


def rbf_bandwidth(X: np.ndarray, rule: str) -> float:
    """sigma for k(x, y) = exp(-||x - y||^2 / (2 sigma^2)) by a named rule.

    ``median``: the median pairwise Euclidean distance (the usual heuristic);
    ``mean_sq``: sqrt of the mean pairwise squared distance;
    ``zhang2012``: sqrt(mean squared distance / 2), i.e. exp(-||x - y||^2 / b) with b the mean
    pairwise squared distance, the kernel of Zhang et al. (2012) and of solver ``nystrom_prior``.
    """
    d2 = pdist(X, "sqeuclidean")
    if rule == "median":
        return float(np.sqrt(np.median(d2)))
    if rule == "mean_sq":
        return float(np.sqrt(np.mean(d2)))
    if rule == "zhang2012":
        return float(np.sqrt(np.mean(d2) / 2))
    raise ConfigError(f"kernel.bandwidth: unknown rule '{rule}'; valid rules: median, mean_sq, zhang2012.")


def rbf_kernel_matrix(X: np.ndarray, sigma: float) -> np.ndarray:
    sq = np.einsum("ij,ij->i", X, X)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2 * X @ X.T, 0.0)
    return np.exp(-d2 / (2 * sigma ** 2))


@kernels.register("rbf")
def rbf(ds, *, sigma: float = 0.0, bandwidth: str = "median", standardize: bool = False,
        rank: int = 0, rank_tol: float = RANK_TOL) -> np.ndarray:
    """Gaussian kernel exp(-||x - y||^2 / (2 sigma^2)), factored by eigendecomposition.

    Parameters
    ----------
    sigma : float
        Bandwidth; 0 (default) picks it by ``bandwidth``.
    bandwidth : {"median", "mean_sq", "zhang2012"}
        Rule for sigma (see :func:`rbf_bandwidth`).
    standardize : bool
        Scale each feature to zero mean and unit variance first.
    rank, rank_tol :
        Passed to :func:`factorize` (keep eigenvalues > rank_tol * max; at most ``rank``).
    """
    X = np.array(_features(ds, "rbf"), dtype=np.float64)
    if standardize:
        sd = X.std(axis=0)
        X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    if sigma <= 0:
        sigma = rbf_bandwidth(X, bandwidth)
        if sigma <= 0:
            raise DataError(f"dataset '{ds.name}': all points coincide, the RBF bandwidth is 0.")
    return factorize(rbf_kernel_matrix(X, sigma), rank_tol, rank)


@kernels.register("identity")
def identity(ds, *, scale: float = 1.0) -> np.ndarray:
    """Scaled identity K0 = scale * I_n (full rank, carries no information about the data)."""
    if not scale > 0:
        raise ConfigError(f"kernel.scale must be > 0, got {scale}.")
    return np.sqrt(scale) * np.eye(ds.n)


@kernels.register("precomputed")
def precomputed(ds, *, rank: int = 0, rank_tol: float = RANK_TOL) -> np.ndarray:
    """The dataset's own kernel matrix (e.g. GyrB), factored by :func:`factorize`."""
    if ds.K is None:
        raise ConfigError(f"kernel 'precomputed' needs a dataset with a kernel matrix; "
                          f"'{ds.name}' has features only (use 'linear' or 'rbf').")
    return factorize(ds.K, rank_tol, rank)
