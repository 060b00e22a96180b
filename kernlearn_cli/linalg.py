"""Dense linear algebra shared by the solvers."""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla


def eigh(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix: ``np.linalg.eigh``, and
    LAPACK's MRRR driver (dsyevr) where that divide-and-conquer driver (dsyevd) fails to converge.

    The fallback is needed: OpenBLAS 0.3.31's dsyevd reports non-convergence on a well-scaled,
    finite 178 x 178 symmetric matrix from a MEG run (Tsuda Fig. 2, wine), where dsyevr, dsyev and
    eigvalsh all succeed. The same input always takes the same path, so results stay bit for bit.
    """
    try:
        return np.linalg.eigh(a)
    except np.linalg.LinAlgError:
        return sla.eigh(a, driver="evr")
