"""Checks shared by every dataset loader (one place, one wording of the errors).

Each function takes a ``where`` string naming the dataset or file being checked,
so the :class:`~kernlearn_cli.errors.DataError` it raises tells the user which
input to fix.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import DataError
from ..resources import eigh_cost, heavy_step

#: Relative tolerance of the kernel symmetry and PSD checks.
KERNEL_TOL = 1e-8


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
    n = K.shape[0]
    with heavy_step(f"the eigenvalues of the {n} x {n} kernel (the positive semidefiniteness check)", *eigh_cost(n)):
        eig = np.linalg.eigvalsh(K)
    if eig[0] < -KERNEL_TOL * np.abs(eig).max():
        raise DataError(f"{where}: the kernel is not positive semidefinite: its smallest eigenvalue is "
                        f"{eig[0]:.6g} (largest |eigenvalue| {np.abs(eig).max():.6g}); a kernel matrix "
                        f"must have min eigenvalue >= -{KERNEL_TOL:g} x max |eigenvalue|.")
    return K


def is_number(cell) -> bool:
    """True when the string ``cell`` reads as a number (as :func:`float` reads it; numpy's
    conversion of strings to float64 reads the same strings)."""
    try:
        float(cell)
        return True
    except ValueError:
        return False


def label_lines(text: str, where: str) -> np.ndarray:
    """The labels of a label file's text: one per line, stripped of surrounding whitespace.

    Every line up to the last non-blank one must hold a label, so that label ``i``
    (0-based) is on line ``i + 1``; blank lines at the end of the file (and a final
    newline) are ignored.

    Parameters
    ----------
    text : str
        The file's text.
    where : str
        The file, named in errors.

    Returns
    -------
    numpy.ndarray
        The labels, a 1-D array of strings.

    Raises
    ------
    DataError
        At the first blank line before the last label, naming its 1-based line; or when every
        line holds a comma: a table (e.g. pandas' ``Series.to_csv()``, index and label on each
        line), not one label per line.
    """
    lines = [line.strip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    if "" in lines:
        raise DataError(f"{where}: line {lines.index('') + 1} is blank; a label file holds one label per "
                        f"line, in row order, with no blank lines (only blank lines after the last label "
                        f"are ignored). Remove the line, or put the missing label on it.")
    if lines and all("," in line for line in lines):
        raise DataError(f"{where}: every line holds a comma (line 1: {lines[0]!r}, line {len(lines)}: "
                        f"{lines[-1]!r}): a table, not one label per line (pandas' Series.to_csv() writes the "
                        f"index and a header too). Write the labels alone, one per line: "
                        f"to_csv(path, index=False, header=False), or numpy.savetxt(path, y, fmt='%s').")
    return np.array(lines, dtype=str)


def _position(i: int, lines: bool) -> str:
    """Where label ``i`` (0-based) is: its 1-based line in a label file, else its index."""
    return f"line {i + 1}" if lines else f"label {i} (0-based)"


def _check_one_kind(a: np.ndarray, where: str, lines: bool) -> None:
    """Raise :class:`DataError` unless the string labels ``a`` are all numbers or all non-numbers.

    The minority kind is reported: a first label that is the only non-number is taken
    for a header, any other for a typo.
    """
    numeric = np.array([is_number(v) for v in a.tolist()], dtype=bool)
    if numeric.all() or not numeric.any():
        return
    numbers = numeric.sum() >= (~numeric).sum()  # the kind of the majority; numbers on a tie
    odd = np.flatnonzero(~numeric if numbers else numeric)
    i = int(odd[0])
    value = a[i].decode(errors="replace") if isinstance(a[i], bytes) else str(a[i])
    kind, others = ("is not a number", "are numbers") if numbers else ("is a number", "are not")
    if odd.size == 1:
        said = f"{_position(i, lines)}: {value!r} {kind}, while the other {a.size - 1} labels {others}"
    else:
        at = ", ".join(_position(j, lines) for j in odd[:5]) + (", ..." if odd.size > 5 else "")
        said = (f"{_position(i, lines)}: {value!r} {kind}, while {a.size - odd.size} of the {a.size} "
                f"labels {others} (the {odd.size} odd ones: {at})")
    if odd.size == 1 and i == 0 and numbers:
        raise DataError(f"{where}: {said}: it looks like a header; remove it (label files have no header "
                        f"line: every line is a label).")
    raise DataError(f"{where}: {said}. Labels must be all numbers or all names; fix or remove the odd label.")


def _check_count(m: int, n: int, where: str, lines: bool) -> None:
    """Raise :class:`DataError` unless there are as many labels, ``m``, as points, ``n``."""
    if m > n:
        raise DataError(f"{where}: {m} labels for {n} points; {_position(n, lines)} holds the first extra "
                        f"label. Give exactly one label per point, in row order.")
    if m < n:
        raise DataError(f"{where}: {m} labels for {n} points; the labels stop at {_position(m - 1, lines)}, "
                        f"so the last {n - m} point(s) have none. Give exactly one label per point, in row order.")


def encode_labels(labels, where: str, n: int | None = None, *, lines: bool = False) -> tuple[np.ndarray, list]:
    """Check labels and map them to codes 0..C-1 in sorted order of the unique labels.

    String labels must be all numbers or all non-numbers: a lone non-number among
    numbers is a typo, or a header when it comes first, and is an error naming its
    position and value. Strings that all read as integers (``"2"``, ``"+1"``) or
    floats with integral values become ints, so numeric class names sort numerically.

    Parameters
    ----------
    labels : array_like
        n labels (integers, floats with integral values, or strings); an (n, 1) or
        (1, n) array is flattened.
    where : str
        The dataset or file, named in errors.
    n : int, optional
        The number of points; when given, there must be exactly one label per point.
    lines : bool
        True when label ``i`` was read from line ``i + 1`` of a text file
        (:func:`label_lines`): errors then name 1-based lines, else 0-based indexes.

    Returns
    -------
    codes : int64 array (n,)
    classes : list
        The original label of each code, as plain Python values.

    Raises
    ------
    DataError
        Labels of both kinds, a count other than ``n``, a NaN or infinite label, or
        labels that are not a non-empty 1-D list of integers or strings.
    """
    a = np.asarray(labels)
    if a.ndim == 2 and 1 in a.shape:
        a = a.ravel()
    if a.ndim != 1 or a.size == 0:
        raise DataError(f"{where}: labels must be a non-empty list of n values, got shape {a.shape}.")
    if a.dtype.kind in "US":
        a = np.char.strip(a)
        _check_one_kind(a, where, lines)
    if n is not None:
        _check_count(a.size, n, where, lines)
    if a.dtype.kind in "US":
        for kind in (np.int64, np.float64):
            try:
                a = a.astype(kind)
                break
            except ValueError:
                pass
    if a.dtype.kind == "f":
        if not np.isfinite(a).all():
            raise DataError(f"{where}: {_position(int(np.argmin(np.isfinite(a))), lines)} is NaN or infinite.")
        if np.array_equal(a, np.round(a)):
            a = a.astype(np.int64)
    elif a.dtype.kind not in "iubUS":
        raise DataError(f"{where}: labels must be integers or strings, got dtype {a.dtype}.")
    classes, codes = np.unique(a, return_inverse=True)
    return codes.astype(np.int64).ravel(), classes.tolist()
