"""Initial kernels K0, each returned as a factor G0 (n x r) with K0 = G0 G0^T: the registered
components ``linear``, ``rbf``, ``identity``, ``precomputed`` and ``laplacian_pinv``, their feature
scaling and RBF bandwidth rules, and what a cell records about an approximate factor
(:func:`factor_info`).

Each component takes the loaded :class:`~kernlearn_cli.types.Dataset` and
returns G0 with full column rank r = rank(K0): the Bregman solvers work in the
range of K0, where D(K, K0) reduces to a divergence between r x r matrices.

Elsewhere: the factorizations (:mod:`kernlearn_cli.lowrank`), a new point's row of G0
(:data:`kernlearn_cli.inductive.OUT_OF_SAMPLE`) and G0's cost estimated before it is built
(:func:`factor_cost`).
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

import numpy as np

from .errors import ConfigError, DataError
from .graph import EdgeWeight, Scaling
from .linalg import eigh
from .lowrank import DENSE_K0, RANK_TOL, factorize, pivoted_cholesky
from .params import Fraction, Interval, NonNegativeInt, Positive, PositiveInt, checked_arguments
from .registry import Checks, kernels
from .resources import CHOLESKY_RATE, DOUBLE, GEMM_RATE, eigh_cost, heavy_step


def feature_vectors(ds, kernel_name: str) -> np.ndarray:
    """The dataset's feature vectors X, for kernel ``kernel_name``; a dataset given by its kernel
    matrix alone is refused, naming the kernels that take one."""
    if ds.X is None:
        raise ConfigError(f"kernel '{kernel_name}' needs feature vectors, but dataset '{ds.name}' "
                          "provides only a kernel matrix; use kernel 'precomputed' or 'identity'.")
    return ds.X


@kernels.register("linear", checks=Checks(alternatives={"center": True, "standardize": True, "rank": 2}))
def linear(ds, *, center: bool = False, standardize: bool = False, rank: NonNegativeInt = 0) -> np.ndarray:
    r"""Linear kernel K0 = X X^T with G0 = X exactly (by default no centering, no scaling).

    With ``standardize`` each feature is scaled to zero mean and unit variance first,
    x_f ↦ (x_f − μ_f) / σ_f (σ_f the population standard deviation; a constant feature keeps σ_f = 1,
    i.e. becomes 0), so K0 = Z Zᵀ weighs every feature alike: with M0 = I this is the Euclidean
    metric of the standardized features (Li et al. 2009, Sec. 6.1, on Spambase, whose raw features
    span five orders of magnitude).

    Parameters
    ----------
    center : bool
        Subtract the feature means first (implied by ``standardize``).
    standardize : bool
        Scale each feature to zero mean and unit variance first.
    rank : int
        If > 0, keep the best rank-``rank`` approximation (truncated SVD of X); 0 keeps X.
    """
    X = np.array(feature_vectors(ds, "linear"), dtype=np.float64)
    mu, sd = feature_scaling(X, center, standardize)
    X = (X - mu) / sd
    if rank > 0 and rank < min(X.shape):
        U, s, _ = np.linalg.svd(X, full_matrices=False)
        X = U[:, :rank] * s[:rank]
    return np.ascontiguousarray(X)


def feature_scaling(X: np.ndarray, center: bool, standardize: bool) -> tuple[np.ndarray, np.ndarray]:
    """(μ, σ) of the feature map x ↦ (x − μ) / σ of ``linear`` and ``rbf`` on the training features X:
    μ the means if ``center`` or ``standardize`` (else 0), σ the standard deviations if
    ``standardize`` (1 for a constant feature; else 1)."""
    d = X.shape[1]
    mu = X.mean(axis=0) if center or standardize else np.zeros(d)
    sd = np.ones(d)
    if standardize:
        sd = X.std(axis=0)
        sd = np.where(sd > 0, sd, 1.0)
    return mu, sd


#: The rules for the RBF bandwidth: name -> sigma^2 from the pairwise squared distances.
BANDWIDTHS = {"median": np.median, "mean_sq": np.mean, "zhang2012": lambda d2: np.mean(d2) / 2}
Bandwidth = Literal["median", "mean_sq", "zhang2012"]


@checked_arguments("rule")
def rbf_bandwidth(X: np.ndarray, rule: Bandwidth, instead: str = "Cheaper: give the bandwidth as 'sigma:'.") -> float:
    """sigma for k(x, y) = exp(-||x - y||^2 / (2 sigma^2)) by a named rule.

    ``median``: the median pairwise Euclidean distance (the usual heuristic);
    ``mean_sq``: sqrt of the mean pairwise squared distance;
    ``zhang2012``: sqrt(mean squared distance / 2), i.e. exp(-||x - y||^2 / b) with b the mean
    pairwise squared distance, the kernel of Zhang et al. (2012) and of solver ``nystrom_prior``.
    ``instead``: what avoids the O(n²) distances, said when they are large.
    """
    from scipy.spatial.distance import pdist       # scipy.spatial only where a bandwidth is chosen

    n = X.shape[0]
    with heavy_step(f"the {n * (n - 1) // 2} pairwise distances of the '{rule}' bandwidth rule",
                    DOUBLE * n * (n - 1), instead=instead):
        return float(np.sqrt(BANDWIDTHS[rule](pdist(X, "sqeuclidean"))))


def rbf_kernel_matrix(X: np.ndarray, sigma: float, instead: str = DENSE_K0) -> np.ndarray:
    """The dense n x n Gaussian kernel matrix (about 3 n² doubles at its peak)."""
    n, d = X.shape
    with heavy_step(f"the dense {n} x {n} RBF kernel matrix", 3.0 * DOUBLE * n * n, 2.0 * n * n * d / GEMM_RATE,
                    instead=instead):
        sq = np.einsum("ij,ij->i", X, X)
        d2 = np.maximum(sq[:, None] + sq[None, :] - 2 * X @ X.T, 0.0)
        return np.exp(-d2 / (2 * sigma ** 2))


#: The most columns of a pivoted-Cholesky K0 when ``rank`` is 0 (``factorization: pivoted_cholesky``, or
#: ``auto`` above :data:`EIGH_MAX_N`): fixed in advance by its cost, O(n r) memory = 2 KB a point,
#: O(n r²) to build, O(r²) a Burg projection; the residual trace it leaves is recorded (docs/scale.md).
PIVOTED_RANK = 256

#: ``factorization: auto`` takes the exact eigendecomposition up to this many points and pivoted
#: incomplete Cholesky above: the largest n (in thousands) whose dense path, 3 n² doubles, stays under
#: the large-step bar of 1 GB (:data:`~kernlearn_cli.resources.LIMIT_BYTES`); measured 12 s at 4000 and
#: 40 s at 6000 against 0.03 s for the pivoted path (``benchmarks/sizing/auto_crossovers.py rbf``).
EIGH_MAX_N = 6000

#: What avoids the rbf kernel's dense n x n steps, said before a large one.
RBF_INSTEAD = (f"Cheaper: kernel rbf with factorization: pivoted_cholesky (what 'auto', the default, takes above "
               f"n = {EIGH_MAX_N}) never forms an n x n array: O(n rank) memory, rank {PIVOTED_RANK} unless 'rank:' "
               "says otherwise, and the bandwidth rule reads a 2000-point sample.")

#: Points of the seeded sample the bandwidth rule reads under ``factorization: pivoted_cholesky``.
BANDWIDTH_SAMPLE = 2000


@kernels.register("rbf", checks=Checks(
    alternatives={"sigma": 0.7, "bandwidth": "mean_sq", "standardize": True, "rank": 3, "rank_tol": 1e-2,
                  "factorization": "pivoted_cholesky", "trace_tol": 0.1},
    unused={"trace_tol": "only read by factorization 'pivoted_cholesky'",
            "factorization": "both factorizations are exact at full rank (G differs by a rotation); below it "
                             "they differ: tests/test_low_rank_k0.py"}),
    defaults_before={"factorization": "eigh"})
def rbf(ds, *, sigma: Annotated[float, Interval(0, None, closed="left")] = 0.0, bandwidth: Bandwidth = "median",
        standardize: bool = False, rank: NonNegativeInt = 0, rank_tol: Fraction = RANK_TOL,
        factorization: Literal["auto", "eigh", "pivoted_cholesky"] = "auto", trace_tol: Fraction = 1e-8) -> np.ndarray:
    """Gaussian kernel exp(-||x - y||^2 / (2 sigma^2)), factored by eigendecomposition or, for large n,
    by pivoted incomplete Cholesky (no n x n array).

    Parameters
    ----------
    sigma : float
        Bandwidth (>= 0); 0 (default) picks it by ``bandwidth``.
    bandwidth : {"median", "mean_sq", "zhang2012"}
        Rule for sigma (see :func:`rbf_bandwidth`).
    standardize : bool
        Scale each feature to zero mean and unit variance first.
    rank, rank_tol :
        At most ``rank`` columns (0: no limit for ``eigh``, :data:`PIVOTED_RANK` for
        ``pivoted_cholesky``); ``eigh`` keeps eigenvalues > rank_tol * max (0 <= rank_tol < 1,
        :func:`factorize`).
    factorization : {"auto", "eigh", "pivoted_cholesky"}
        ``auto`` (default): ``eigh`` up to :data:`EIGH_MAX_N` points, ``pivoted_cholesky`` above
        (:func:`rbf_factorization`; the run says which in one line and records it).
        ``eigh``: the dense n x n kernel and its eigendecomposition, O(n³) time and
        O(n²) memory, the best rank-``rank`` approximation.  ``pivoted_cholesky``: pivoted
        incomplete Cholesky (:func:`pivoted_cholesky`, the low-rank K0 of Kulis et al. 2006, Sec. 6,
        after Fine & Scheinberg 2001), O(n rank²) time and O(n rank) memory; with ``sigma`` 0 the
        bandwidth rule reads a seeded sample of :data:`BANDWIDTH_SAMPLE` points (all of them when
        n is at most that).  The run records the residual trace tr(K0 - G0 G0ᵀ).
    trace_tol : float
        ``pivoted_cholesky`` stops once the residual trace is at most trace_tol * tr K0 = trace_tol * n.
    """
    factorization, rank, why = rbf_factorization(ds.n, factorization, rank)
    if why and factorization == "pivoted_cholesky":
        from .progress import announce

        announce(f"kernel rbf: factorization 'auto' takes pivoted_cholesky at rank {rank} ({why}; the exact "
                 f"eigendecomposition would need {3 * DOUBLE * ds.n ** 2 / 1e9:.1f} GB); its residual trace is "
                 "recorded. 'factorization: eigh' forces the exact path.")
    X, sigma, _ = rbf_points(ds, sigma, bandwidth, standardize, factorization)
    if factorization == "eigh":
        return factorize(rbf_kernel_matrix(X, sigma, RBF_INSTEAD), rank_tol, rank, instead=RBF_INSTEAD)
    return rbf_cholesky(X, sigma, rank, trace_tol)[0]


def rbf_factorization(n: int, factorization: str, rank: int) -> tuple[str, int, str]:
    """(factorization, rank, why) of :func:`rbf` on n points: ``auto`` resolved (``eigh`` for n <=
    :data:`EIGH_MAX_N`, else ``pivoted_cholesky``; ``why`` says so, and is empty for an explicit setting),
    and ``rank`` 0 under ``pivoted_cholesky`` made :data:`PIVOTED_RANK` (at most n)."""
    why = ""
    if factorization == "auto":
        factorization = "eigh" if n <= EIGH_MAX_N else "pivoted_cholesky"
        why = f"n = {n:,} {'<=' if factorization == 'eigh' else '>'} {EIGH_MAX_N:,}"
    if factorization == "pivoted_cholesky" and rank == 0:
        rank = min(PIVOTED_RANK, n)
    return factorization, rank, why


def rbf_points(ds, sigma: float, bandwidth: str, standardize: bool, factorization: str):
    """The training points as :func:`rbf` uses them (standardized if asked), sigma (by the rule when
    0: on a seeded sample under ``pivoted_cholesky``) and the map applying the same scaling to new points."""
    X = np.array(feature_vectors(ds, "rbf"), dtype=np.float64)
    mu, sd = feature_scaling(X, False, standardize)
    X = (X - mu) / sd
    if sigma <= 0:
        sample = X
        if factorization == "pivoted_cholesky" and len(X) > BANDWIDTH_SAMPLE:
            sample = X[np.sort(np.random.default_rng(0).choice(len(X), BANDWIDTH_SAMPLE, replace=False))]
        sigma = rbf_bandwidth(sample, bandwidth, RBF_INSTEAD)
        if sigma <= 0:
            raise DataError(f"dataset '{ds.name}': all points coincide, the RBF bandwidth is 0.")
    return X, sigma, lambda Y: (np.asarray(Y, dtype=np.float64) - mu) / sd


def rbf_cholesky(X: np.ndarray, sigma: float, rank: int, trace_tol: float):
    """:func:`pivoted_cholesky` of the Gaussian kernel of the rows of X, one column k(X, x_p) at a time
    (at most ``rank`` columns, 0: n)."""
    n, d = X.shape
    r = min(rank or n, n)
    sq = np.einsum("ij,ij->i", X, X)
    scale = -1.0 / (2.0 * sigma ** 2)
    with heavy_step(f"the pivoted Cholesky factor of K0 'rbf' ({n} x at most {r})", DOUBLE * n * (r + d),
                    n * r * (r + 2 * d) / CHOLESKY_RATE,
                    instead="Cheaper: a smaller 'rank:' (memory and time grow as n rank and n rank²)."):
        return pivoted_cholesky(lambda p: np.exp(np.maximum(sq + sq[p] - 2.0 * (X @ X[p]), 0.0) * scale),
                                np.ones(n), r, trace_tol)


def factor_cost(name: str, n: int, d: int, params: dict) -> tuple[int, float, float] | None:
    """(rank, bytes, seconds) of K0's factor, estimated before it is built (``kernlearn plan``); None
    for a kernel without an estimate.

    The dense paths (``rbf`` with ``factorization: eigh``, or ``auto`` up to its size, ``precomputed``, ``laplacian_pinv``) cost
    the n x n matrix and its eigendecomposition (:func:`eigh_cost`); ``pivoted_cholesky`` O(n r)
    memory and O(n r (r + d)) time; ``identity`` its n x n factor; ``linear`` its n x d features.  The rank is the most the factor can have (``rank`` when set).
    """
    rank = int(params.get("rank") or 0)
    if name == "rbf":
        factorization, rank, _ = rbf_factorization(n, params.get("factorization", "auto"), rank)
        params = {**params, "factorization": factorization}
    if name == "linear":
        r = min(rank or d, d)
        return r, 2.0 * DOUBLE * n * d, 0.0
    if name == "identity":
        return n, DOUBLE * n * n, 0.0
    if name == "rbf" and params.get("factorization") == "pivoted_cholesky":
        r = min(rank or n, n)
        return r, DOUBLE * n * (2 * r + d), 2.0 * n * r * (r + d) / CHOLESKY_RATE
    if name not in ("rbf", "precomputed", "laplacian_pinv"):
        return None
    nbytes, seconds = eigh_cost(n)
    if name == "rbf":
        nbytes, seconds = nbytes + DOUBLE * n * n, seconds + 2.0 * n * n * d / GEMM_RATE
    return min(rank or n, n), nbytes, seconds


def factor_info(name: str, ds, G0: np.ndarray, params: dict) -> dict | None:
    """What a cell records about its initial factor's path: for ``rbf`` under ``factorization:
    pivoted_cholesky``, its rank and residual trace tr(K0 - G0 G0ᵀ) = n - ||G0||_F² (absolute and
    relative to tr K0 = n); under ``auto``, also what it took and why (``auto``); None for an explicit
    ``eigh`` and the other kernels (their records stay as they were)."""
    if name != "rbf":
        return None
    factorization, _, why = rbf_factorization(ds.n, params.get("factorization", "auto"), int(params.get("rank", 0)))
    info = {"factorization": factorization, "auto": why} if why else {}
    if factorization == "pivoted_cholesky":
        residual = max(float(ds.n - np.einsum("ij,ij->", G0, G0)), 0.0)
        info.update({"factorization": "pivoted_cholesky", "rank": int(G0.shape[1]), "trace_residual": residual,
                     "relative_trace_residual": residual / ds.n})
    return info or None


@kernels.register("identity", checks=Checks(alternatives={"scale": 2.0}))
def identity(ds, *, scale: Positive = 1.0) -> np.ndarray:
    """Scaled identity K0 = scale * I_n (full rank, carries no information about the data).

    Parameters
    ----------
    scale : float
        The diagonal (> 0).
    """
    with heavy_step(f"the {ds.n} x {ds.n} identity factor of K0 'identity'", DOUBLE * ds.n * ds.n,
                    instead="Its factor is n x n by nature; a full-rank K0 at this n is better given as "
                            "kernel rbf with factorization: pivoted_cholesky and a rank."):
        return np.sqrt(scale) * np.eye(ds.n)


@kernels.register("precomputed", checks=Checks(alternatives={"rank": 3, "rank_tol": 1e-2}))
def precomputed(ds, *, rank: NonNegativeInt = 0, rank_tol: Fraction = RANK_TOL) -> np.ndarray:
    """The dataset's own kernel matrix (e.g. GyrB), factored by :func:`factorize`.

    Parameters
    ----------
    rank, rank_tol :
        Passed to :func:`factorize` (keep eigenvalues > rank_tol * max, 0 <= rank_tol < 1; at most
        ``rank``, 0 for no limit).
    """
    if ds.K is None:
        raise ConfigError(f"kernel 'precomputed' needs a dataset with a kernel matrix; "
                          f"'{ds.name}' has features only (use 'linear' or 'rbf').")
    return factorize(ds.K, rank_tol, rank)


@kernels.register("laplacian_pinv", checks=Checks(
    alternatives={"neighbors": 4, "bandwidth": "half_mean", "sigma_neighbors": 3,
                  "scale_features": "standard", "normalize": False, "rank_tol": 0.3},
    unused={"sigma_neighbors": "only read by bandwidth 'half_mean'"}))
def laplacian_pinv(ds, *, neighbors: PositiveInt = 10, bandwidth: EdgeWeight = "edge_mean",
                   sigma_neighbors: PositiveInt = 10, scale_features: Scaling = "none", normalize: bool = True,
                   rank_tol: Fraction = RANK_TOL) -> np.ndarray:
    r"""Pseudo-inverse of a graph Laplacian, K0 = L^+ (Li et al. 2009, Sec. 6.2), as G0 = U_+ diag(lambda_+^-1/2).

    L = D - W is the unnormalized Laplacian of the symmetrized k-nearest-neighbour graph of the
    (scaled) feature vectors built by :func:`kernlearn_cli.graph.knn_laplacian`: an edge (i, j)
    when either point is among the other's ``neighbors`` nearest, with Li et al.'s weight

    .. math::  W_{ij} = \exp\!\left(-\frac{\|x_i - x_j\|^2}{\sigma^2}\right),\qquad
               \sigma^2 = \text{mean squared length of the k-NN edges}

    (``bandwidth: edge_mean``; the paper does not give its σ).  ``bandwidth: half_mean`` uses
    Hoi et al.'s rule instead, exp(-d²/(2s²)) with s half the mean distance to the
    ``sigma_neighbors`` nearest; it gives weights down to e^-100 on datasets with outliers
    (breast_cancer_wisconsin), and the near-null directions of L then dominate L^+.

    L is eigendecomposed densely (O(n^3) time, O(n^2) memory); eigenvalues <= ``rank_tol`` times
    the largest -- the null space, one constant vector per connected component of the graph -- are
    dropped, so rank K0 = n - (number of components) and K0 1 = 0 on a connected graph.  With
    ``normalize`` K0 is scaled to mean diagonal 1 (tr K0 = n), which puts the distances of K0 on
    the scale of the losses' unit margin.  Columns of G0 are ordered by decreasing eigenvalue of K0.

    Parameters
    ----------
    neighbors : int
        k of the k-NN graph (1 <= k < n).
    bandwidth : {"edge_mean", "half_mean"}
        The weight rule (above).
    sigma_neighbors : int
        Neighbours averaged for ``half_mean`` (1 <= sigma_neighbors < n).
    scale_features : {"none", "minmax", "standard"}
        Per-feature scaling before the graph (:func:`kernlearn_cli.graph.scale_features`).
    normalize : bool
        Scale K0 to tr K0 = n.
    rank_tol : float
        Relative eigenvalue threshold of the null space of L (0 <= rank_tol < 1).
    """
    import warnings

    from .graph import knn_laplacian, scale_features as _scale

    X = np.array(feature_vectors(ds, "laplacian_pinv"), dtype=np.float64)
    n = X.shape[0]
    L, info = knn_laplacian(_scale(X, scale_features), neighbors=neighbors, sigma_neighbors=sigma_neighbors,
                            kind="unnormalized", bandwidth=bandwidth)
    with heavy_step(f"eigendecomposition of the {n} x {n} graph Laplacian", *eigh_cost(n), instead=DENSE_K0):
        lam, U = eigh(L.toarray())              # ascending: the null space comes first
    keep = lam > rank_tol * lam[-1]
    if not keep.any():
        raise DataError(f"kernel 'laplacian_pinv': the graph Laplacian of dataset '{ds.name}' is zero (no edge "
                        "has a weight above the rank tolerance).")
    if int(np.count_nonzero(~keep)) != info["components"]:
        warnings.warn(f"kernel 'laplacian_pinv': the k-NN graph of dataset '{ds.name}' has {info['components']} "
                      f"connected component(s), but {int(np.count_nonzero(~keep))} eigenvalue(s) of L are below "
                      f"{rank_tol:g} x the largest; some edges are numerically negligible, and K0 = L^+ drops "
                      "those directions too.", stacklevel=3)       # past the registry's wrapper: the caller
    G0 = U[:, keep] / np.sqrt(lam[keep])
    if normalize:
        G0 *= math.sqrt(n / float(np.sum(1.0 / lam[keep])))        # tr K0 = sum 1 / lambda_+
    return np.ascontiguousarray(G0)
