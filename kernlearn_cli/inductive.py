"""Rows of points the solver never saw: of the initial factor G0, and of a learned kernel's factor.

- *the initial kernel's out-of-sample map* (:data:`OUT_OF_SAMPLE`: ``linear``, ``rbf``): a new
  point's row g0(x) of G0, by the same feature scaling, bandwidth and factorization that built G0
  (:mod:`kernlearn_cli.kernels`), so the training points give G0 back;
- *Nyström type* (``nystrom``, ``nystrom_prior``): the learned kernel of any two points x, y is
  E_x S E_yᵀ with E_x = exp(−‖x − Z‖² / b) over the landmarks Z (Zhang et al. 2012, Bilateral
  Extrapolation), so a new point's row is E_x S^{1/2};
- *through the initial factor* (every solver whose learned kernel stays in the range of K0,
  K = G0 M G0ᵀ): with G = G0 L, a new point's row is g0(x) L, g0(x) its row of G0 by the initial
  kernel's out-of-sample map.

``kernlearn embed`` applies them to a cell's factors file (:mod:`kernlearn_cli.embed`), a ``holdout``
to a solver's result in memory (:func:`result_rows`), the estimators to their fitted factors.
"""

from __future__ import annotations

import numpy as np

from .errors import DataError
from .kernels import Bandwidth, feature_scaling, feature_vectors, rbf_cholesky, rbf_factorization, rbf_points
from .lowrank import RANK_TOL
from .registry import INDUCTIVE, solvers
from .solvers.nystrom import factor_rows, psd_sqrt


def inductive_solvers() -> dict[str, str]:
    """Solver name -> how it maps new points (:data:`INDUCTIVE`), for every inductive solver
    (imports every solver module and plugin)."""
    return {e.name: INDUCTIVE[e.inductive] for e in solvers.entries() if e.inductive}


def inductive_text() -> str:
    """The inductive solvers in words, those mapping new points alike together:
    ``burg, trin: through the initial factor G0, ...; nystrom: through their landmarks``."""
    ways: dict[str, list[str]] = {}
    for name, way in inductive_solvers().items():
        ways.setdefault(way, []).append(name)
    return "; ".join(f"{', '.join(names)}: {way}" for way, names in ways.items())


def linear_rows(ds, X_new: np.ndarray, G0: np.ndarray, *, center: bool = False, standardize: bool = False,
                rank: int = 0) -> np.ndarray:
    """Rows of the initial factor for new points, linear kernel: the feature map x ↦ ((x − μ) / σ) P
    with P = Z⁺ G0, Z = (X − μ) / σ the training features as :func:`~kernlearn_cli.kernels.linear`
    scaled them (μ the training means if ``center`` or ``standardize``, σ the training standard
    deviations if ``standardize``), so the training rows give G0 back whatever basis G0 is in (X
    itself, its truncated SVD, or a full-column-rank reduction of it)."""
    X = np.array(feature_vectors(ds, "linear"), dtype=np.float64)
    mu, sd = feature_scaling(X, center, standardize)
    P = np.linalg.lstsq((X - mu) / sd, G0, rcond=None)[0]
    return ((np.asarray(X_new, dtype=np.float64) - mu) / sd) @ P


def rbf_rows(ds, X_new: np.ndarray, G0: np.ndarray, *, sigma: float = 0.0, bandwidth: Bandwidth = "median",
             standardize: bool = False, rank: int = 0, rank_tol: float = RANK_TOL, factorization: str = "auto",
             trace_tol: float = 1e-8) -> np.ndarray:
    """Rows of the initial factor for new points, Gaussian kernel, with σ and the standardization of
    the training points; both give the training rows back (g0(X) = G0).

    ``eigh``: the Nyström (kernel-PCA) extension g0(x) = k0(x, X) G0 (G0ᵀG0)⁻¹ (= k0(x, X) V Λ^{-1/2}
    for G0 = V Λ^{1/2}).  ``pivoted_cholesky``: g0(x) = k0(x, X_P) L⁻ᵀ with the pivots P and L = G0[P]
    (lower triangular), since G0 = K0[:, P] L⁻ᵀ; the pivots come from the same (deterministic)
    factorization run again, O(n rank²), and only the pivots' rows of X are read for new points.
    ``auto`` and the default rank resolve as for K0 (:func:`~kernlearn_cli.kernels.rbf_factorization`).
    """
    factorization, rank, _ = rbf_factorization(ds.n, factorization, rank)
    X, sigma, scaled = rbf_points(ds, sigma, bandwidth, standardize, factorization)
    Y = scaled(X_new)

    def k(A, B):
        d2 = np.einsum("ij,ij->i", A, A)[:, None] + np.einsum("ij,ij->i", B, B)[None, :] - 2 * A @ B.T
        return np.exp(-np.maximum(d2, 0.0) / (2 * sigma ** 2))

    if factorization == "eigh":
        return np.linalg.solve(G0.T @ G0, (k(Y, X) @ G0).T).T
    from scipy.linalg import solve_triangular

    _, P, _ = rbf_cholesky(X, sigma, rank, trace_tol)
    return solve_triangular(G0[P], k(X[P], Y), lower=True).T


#: Kernels whose K0 extends to new points, and the map giving a new point's row of G0 (the others,
#: e.g. ``laplacian_pinv`` or ``precomputed``, define K0 on the training points only).
OUT_OF_SAMPLE = {"linear": linear_rows, "rbf": rbf_rows}


#: G = G0 L must hold to this relative residual for a file to embed through G0.
RANGE_RTOL = 1e-8


def transform_through_initial(G0: np.ndarray, G: np.ndarray, g0_new: np.ndarray) -> np.ndarray:
    """Rows g0_new L of new points, with L = G0⁺ G the r × r map of the learned factor G = G0 L.

    Raises
    ------
    DataError
        G is not in the range of G0 (to :data:`RANGE_RTOL`): the solver left the range of K0.
    """
    L = np.linalg.lstsq(G0, G, rcond=None)[0]
    residual = np.linalg.norm(G0 @ L - G) / max(np.linalg.norm(G), np.finfo(float).tiny)
    if residual > RANGE_RTOL:
        raise DataError(f"embed: the learned factor is not G0 L (relative residual {residual:.2g}): the kernel "
                        f"left the range of K0, and new points have no row through G0.")
    return g0_new @ L



def result_rows(result, X_new: np.ndarray, *, G0: np.ndarray | None, dataset, kernel) -> np.ndarray:
    """A solver result's factor rows of new points ``X_new`` (n_new × d), in memory: what ``embed``
    computes from the cell's factors file, used for a ``holdout`` (:mod:`kernlearn_cli.data.holdout`).

    A Nyström-type result (arrays ``landmarks``, ``S``, ``kernel_width``) gives E_x S^{1/2}
    (Zhang et al. 2012, Bilateral Extrapolation: K_xy = E_x S E_yᵀ for any pair of samples); any
    other gives g0(x) L through the initial factor ``G0`` of ``dataset`` (the training points) and
    ``kernel`` ((entry, settings)) by :func:`transform_through_initial`.

    Raises
    ------
    DataError
        A result with neither (a transductive solver), or a kernel without an out-of-sample map.
    """
    X_new = np.ascontiguousarray(X_new, dtype=np.float64)
    arrays = result.arrays
    if all(key in arrays for key in ("landmarks", "S", "kernel_width")):
        return factor_rows(X_new, arrays["landmarks"], float(arrays["kernel_width"]), psd_sqrt(arrays["S"]))
    if G0 is None or kernel is None or kernel[0].name not in OUT_OF_SAMPLE:
        raise DataError(f"the learned kernel has no map to new points: its result holds neither landmarks nor "
                        f"an initial factor with an out-of-sample map. Inductive solvers: {inductive_text()}.")
    return transform_through_initial(G0, np.asarray(result.G), OUT_OF_SAMPLE[kernel[0].name](
        dataset, X_new, G0, **kernel[1]))
