"""Inductive use of a learned kernel: factor rows of new points (``kernlearn embed``).

A Nyström-type factors file holds the landmarks Z, the dictionary kernel S and the Gaussian
width b; the learned kernel of any two points x, y is E_x S E_y^T with E_x = exp(-||x - Z||^2 / b),
so a new point's factor row is E_x S^{1/2} -- the same map that produced the rows of G.
"""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np

from .data.user import _existing, read_matrix
from .errors import DataError
from .io import FACTORS, atomic_path
from .solvers.nystrom import factor_rows, psd_sqrt


def embed(run_dir: Path, new_data: Path, out: Path | None = None) -> Path:
    """Write the factor rows of the points in ``new_data`` (.npy, .csv, .txt) for the learned
    kernel of ``run_dir`` (a cell folder holding factors.h5); returns the .npy written."""
    factors = Path(run_dir) / FACTORS
    if not factors.is_file():
        raise DataError(f"embed: {factors} not found; give a cell folder of a finished run (it holds {FACTORS}).")
    with h5py.File(factors, "r") as f:
        solver = f.attrs.get("solver", "?")
        if "landmarks" not in f or "S" not in f:
            raise DataError(f"embed: solver '{solver}' is transductive: it learns the kernel of the training points "
                            "only, and its factors file has no landmarks to map new points. Solvers 'nystrom' and "
                            "'nystrom_prior' are inductive.")
        Z, S, b = f["landmarks"][()], f["S"][()], float(f["kernel_width"][()])
    X = read_matrix(_existing(str(new_data), "embed: new data", (".npy", ".csv", ".txt")))
    if X.ndim != 2 or X.shape[1] != Z.shape[1]:
        raise DataError(f"embed: {new_data} has shape {X.shape}; the run's points have {Z.shape[1]} features, so "
                        f"expected (n_new, {Z.shape[1]}).")
    if not np.all(np.isfinite(X)):
        raise DataError(f"embed: {new_data} holds NaN or infinite values.")
    G = factor_rows(np.ascontiguousarray(X, dtype=np.float64), Z, b, psd_sqrt(S))
    out = Path(out) if out is not None else Path(run_dir) / f"embed_{Path(new_data).stem}.npy"
    with atomic_path(out) as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, G)
    return out
