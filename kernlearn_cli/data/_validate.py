"""Checks shared by every dataset loader (one place, one wording of the errors).

Each function takes a ``where`` string naming the dataset or file being checked,
so the :class:`~kernlearn_cli.errors.DataError` it raises tells the user which
input to fix.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ..errors import ConfigError, DataError

#: Relative tolerance of the kernel symmetry and PSD checks.
KERNEL_TOL = 1e-8


def check_choice(dataset: str, key: str, value, valid: Iterable) -> None:
    """Raise :class:`ConfigError` unless ``value`` is one of ``valid``."""
    valid = list(valid)
    if value not in valid:
        raise ConfigError(f"dataset '{dataset}': invalid {key} {value!r}; "
                          f"valid values: {', '.join(map(str, valid))}.")


def to_float(cells: np.ndarray, where: str) -> np.ndarray:
    """Convert a 2-D array of strings to float64, naming the first non-numeric cell."""
    try:
        return cells.astype(np.float64)
    except ValueError:
        for (i, j), cell in np.ndenumerate(cells):
            try:
                float(cell)
            except ValueError:
                raise DataError(f"{where}: non-numeric value {str(cell)!r} at row {i}, column {j} "
                                f"(0-based); every value must be a number.") from None
        raise


def rectangular(rows: Sequence[Sequence[str]], where: str) -> np.ndarray:
    """Stack split text lines into a 2-D string array; all rows must have the same length."""
    if not rows:
        raise DataError(f"{where}: the file holds no data rows.")
    for i, row in enumerate(rows):
        if len(row) != len(rows[0]):
            raise DataError(f"{where}: row {i} (0-based) has {len(row)} fields, "
                            f"row 0 has {len(rows[0])}; every row must have the same number.")
    return np.array(rows, dtype=str)


def check_finite(A: np.ndarray, where: str) -> np.ndarray:
    """Return ``A`` as float64; raise :class:`DataError` at the first NaN or inf."""
    A = np.asarray(A, dtype=np.float64)
    bad = ~np.isfinite(A)
    if bad.any():
        first = np.argwhere(bad)[0]
        at = f"row {first[0]}, column {first[1]}" if A.ndim == 2 else f"position {first.tolist()}"
        raise DataError(f"{where}: {int(bad.sum())} NaN or infinite value(s), the first at {at} "
                        f"(0-based, value {A[tuple(first)]}); remove or impute them.")
    return A


#: Features larger than this (or, when nonzero, smaller) overflow or underflow in a kernel's
#: squared distances and inner products (products of two features, sums over d of them).
FEATURE_RANGE = (1e-150, 1e150)


def check_features(X: np.ndarray, where: str) -> np.ndarray:
    """Return features ``X`` as float64: finite (:func:`check_finite`) and of a magnitude whose
    products fit in float64 (largest |x| between 1e-150 and 1e150 unless all are 0)."""
    X = check_finite(X, where)
    top = float(np.abs(X).max()) if X.size else 0.0
    if top > FEATURE_RANGE[1] or 0.0 < top < FEATURE_RANGE[0]:
        raise DataError(f"{where}: the features are of magnitude {top:.3g} (largest |value|); kernels square "
                        f"and multiply them, which over- or underflows in float64. Rescale the features to a "
                        f"magnitude between {FEATURE_RANGE[0]:g} and {FEATURE_RANGE[1]:g}, e.g. divide them by "
                        f"their largest |value| before saving the file.")
    return X


def check_kernel(K: np.ndarray, where: str) -> np.ndarray:
    """Validate a precomputed kernel matrix and return it exactly symmetric (float64).

    It must be square, finite, symmetric to a relative tolerance of 1e-8 (max |K - K^T|
    <= 1e-8 max |K|; then K is replaced by (K + K^T) / 2) and positive semidefinite
    (min eigenvalue >= -1e-8 max |eigenvalue|).
    """
    K = np.asarray(K)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] == 0:
        raise DataError(f"{where}: a kernel must be a non-empty square n x n matrix, got shape {K.shape}.")
    K = check_finite(K, where)
    scale = np.abs(K).max()
    asym = np.abs(K - K.T).max()
    if asym > KERNEL_TOL * scale:
        i, j = np.unravel_index(np.argmax(np.abs(K - K.T)), K.shape)
        raise DataError(f"{where}: the kernel is not symmetric: max |K - K^T| = {asym:.3g} "
                        f"(at row {i}, column {j}) exceeds {KERNEL_TOL:g} x max |K| = {KERNEL_TOL * scale:.3g}.")
    K = (K + K.T) / 2
    eig = np.linalg.eigvalsh(K)
    if eig[0] < -KERNEL_TOL * np.abs(eig).max():
        raise DataError(f"{where}: the kernel is not positive semidefinite: its smallest eigenvalue is "
                        f"{eig[0]:.6g} (largest |eigenvalue| {np.abs(eig).max():.6g}); a kernel matrix "
                        f"must have min eigenvalue >= -{KERNEL_TOL:g} x max |eigenvalue|.")
    return K


def encode_labels(labels, where: str) -> tuple[np.ndarray, list]:
    """Map labels to codes 0..C-1 in sorted order of the unique labels.

    Strings that all read as integers (``"2"``, ``"+1"``) or floats with integral
    values become ints, so numeric class names sort numerically.

    Returns
    -------
    codes : int64 array (n,)
    classes : list
        The original label of each code, as plain Python values.
    """
    a = np.asarray(labels)
    if a.ndim == 2 and 1 in a.shape:
        a = a.ravel()
    if a.ndim != 1 or a.size == 0:
        raise DataError(f"{where}: labels must be a non-empty list of n values, got shape {a.shape}.")
    if a.dtype.kind in "US":
        a = np.char.strip(a)
        for kind in (np.int64, np.float64):
            try:
                a = a.astype(kind)
                break
            except ValueError:
                pass
    if a.dtype.kind == "f":
        if not np.isfinite(a).all():
            raise DataError(f"{where}: label {int(np.argmin(np.isfinite(a)))} (0-based) is NaN or infinite.")
        if np.array_equal(a, np.round(a)):
            a = a.astype(np.int64)
    elif a.dtype.kind not in "iubUS":
        raise DataError(f"{where}: labels must be integers or strings, got dtype {a.dtype}.")
    classes, codes = np.unique(a, return_inverse=True)
    return codes.astype(np.int64).ravel(), classes.tolist()
