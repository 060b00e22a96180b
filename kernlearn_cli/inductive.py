"""The inductive map of a learned kernel: factor rows of points the solver never saw.

- *Nyström type* (``nystrom``, ``nystrom_prior``): the learned kernel of any two points x, y is
  E_x S E_yᵀ with E_x = exp(−‖x − Z‖² / b) over the landmarks Z (Zhang et al. 2012, Bilateral
  Extrapolation), so a new point's row is E_x S^{1/2};
- *through the initial factor* (every solver whose learned kernel stays in the range of K0,
  K = G0 M G0ᵀ): with G = G0 L, a new point's row is g0(x) L, g0(x) its row of G0 by the initial
  kernel's out-of-sample map (:data:`kernlearn_cli.kernels.OUT_OF_SAMPLE`).

``kernlearn embed`` applies them to a cell's factors file (:mod:`kernlearn_cli.embed`), a ``holdout``
to a solver's result in memory (:func:`result_rows`), the estimators to their fitted factors.
"""

from __future__ import annotations

import numpy as np

from .errors import DataError
from .registry import inductive_text
from .solvers.nystrom import factor_rows, psd_sqrt

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
    from .kernels import OUT_OF_SAMPLE

    X_new = np.ascontiguousarray(X_new, dtype=np.float64)
    arrays = result.arrays
    if all(key in arrays for key in ("landmarks", "S", "kernel_width")):
        return factor_rows(X_new, arrays["landmarks"], float(arrays["kernel_width"]), psd_sqrt(arrays["S"]))
    if G0 is None or kernel is None or kernel[0].name not in OUT_OF_SAMPLE:
        raise DataError(f"the learned kernel has no map to new points: its result holds neither landmarks nor "
                        f"an initial factor with an out-of-sample map. Inductive solvers: {inductive_text()}.")
    return transform_through_initial(G0, np.asarray(result.G), OUT_OF_SAMPLE[kernel[0].name](
        dataset, X_new, G0, **kernel[1]))
