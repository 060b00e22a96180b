"""Inductive use of a learned kernel: factor rows of new points (``kernlearn embed``).

Two kinds of factors file map new points:

- *Nyström type* (``nystrom``, ``nystrom_prior``): the file holds the landmarks Z, the dictionary
  kernel S and the Gaussian width b; the learned kernel of any two points x, y is E_x S E_yᵀ with
  E_x = exp(−‖x − Z‖² / b), so a new point's row is E_x S^{1/2}, the map that produced the rows of G.
- *Through the initial factor* (``burg``, ``von_neumann``, ``trin``, ... : every solver whose
  learned kernel stays in the range of K0, K = G0 M G0ᵀ, and stores G0): with G = G0 L
  (L = G0⁺ G, r × r) a new point's row is g(x) = g0(x) L, where g0(x) is its row of G0 by the
  initial kernel's out-of-sample map (:data:`kernlearn_cli.kernels.OUT_OF_SAMPLE`): the feature
  map of ``linear`` (then K = X A Xᵀ with A = P L Lᵀ Pᵀ, the learned Mahalanobis metric) or the
  Nyström / kernel-PCA extension k0(x, X) V Λ^{-1/2} of ``rbf``.  The training points give G back.

Kernels defined on the training points only (``laplacian_pinv``, ``precomputed``, ``identity``)
and solvers that learn a kernel outside the range of K0 (ADMM's propagation) are transductive:
``embed`` says so.
"""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np
import yaml

from .data.user import existing_file, read_matrix
from .errors import DataError
from .io import FACTORS, atomic_path, read_factors
from .registry import inductive_text
from .solvers.nystrom import factor_rows, psd_sqrt

#: G = G0 L must hold to this relative residual for a file to embed through G0.
RANGE_RTOL = 1e-8


def _new_points(new_data: Path) -> np.ndarray:
    X = read_matrix(existing_file(str(new_data), "embed: new data", (".npy", ".csv", ".txt")))
    if X.ndim != 2:
        raise DataError(f"embed: {new_data} has shape {X.shape}; expected a matrix (n_new, features).")
    if not np.all(np.isfinite(X)):
        raise DataError(f"embed: {new_data} holds NaN or infinite values.")
    return np.ascontiguousarray(X, dtype=np.float64)


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


def initial_rows(config: dict, X_new: np.ndarray, G0: np.ndarray, where: str) -> np.ndarray:
    """New points' rows of G0 for the cell ``config`` (its dataset reloaded, its kernel's out-of-sample map)."""
    from .config import Cell, bind_cell
    from .experiment import dataset_key, load_dataset
    from .kernels import OUT_OF_SAMPLE

    kernel = (config.get("kernel") or {}).get("name")
    if kernel not in OUT_OF_SAMPLE:
        raise DataError(f"embed: {where}: the initial kernel '{kernel}' is defined on the training points only "
                        f"(transductive), so a new point has no row of K0 and none of the learned kernel. Kernels "
                        f"with an out-of-sample map: {', '.join(OUT_OF_SAMPLE)}.")
    bound = bind_cell(Cell(0, config), where)
    ds = load_dataset(dataset_key(bound))
    if ds.X is None or ds.X.shape[1] != X_new.shape[1]:
        raise DataError(f"embed: {where}: the new points have {X_new.shape[1]} features, the run's dataset "
                        f"'{ds.name}' {None if ds.X is None else ds.X.shape[1]}.")
    if ds.X.shape[0] != G0.shape[0]:
        raise DataError(f"embed: {where}: dataset '{ds.name}' has {ds.X.shape[0]} points now, the run had "
                        f"{G0.shape[0]}: its data changed since.")
    return OUT_OF_SAMPLE[kernel](ds, X_new, G0, **bound["kernel"][1])


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


def embed_rows(factors: Path, X_new: np.ndarray) -> np.ndarray:
    """The learned factor's rows of new points ``X_new`` (n_new × d) for the cell of ``factors``."""
    with h5py.File(factors, "r") as f:
        solver = f.attrs.get("solver", "?")
        nystrom = "landmarks" in f and "S" in f
        if nystrom:
            Z, S, b = f["landmarks"][()], f["S"][()], float(f["kernel_width"][()])
    if nystrom:
        if X_new.shape[1] != Z.shape[1]:
            raise DataError(f"embed: the new points have {X_new.shape[1]} features; the run's points have "
                            f"{Z.shape[1]}, so expected (n_new, {Z.shape[1]}).")
        return factor_rows(X_new, Z, b, psd_sqrt(S))
    f = read_factors(factors)
    if "G0" not in f:
        raise DataError(f"embed: solver '{solver}' is transductive: its factors file holds neither landmarks "
                        f"nor the initial factor G0, so new points have no row of the learned kernel. Inductive "
                        f"solvers: {inductive_text()}.")
    config = yaml.safe_load(f["attrs"]["config"])
    return transform_through_initial(f["G0"], f["G"], initial_rows(config, X_new, f["G0"], str(factors)))


def embed(run_dir: Path, new_data: Path, out: Path | None = None) -> Path:
    """Write the factor rows of the points in ``new_data`` (.npy, .csv, .txt) for the learned
    kernel of ``run_dir`` (a cell folder holding factors.h5); returns the .npy written."""
    factors = Path(run_dir) / FACTORS
    if not factors.is_file():
        raise DataError(f"embed: {factors} not found; give a cell folder of a finished run (it holds {FACTORS}).")
    X = _new_points(new_data)
    G = embed_rows(factors, X)
    out = Path(out) if out is not None else Path(run_dir) / f"embed_{Path(new_data).stem}.npy"
    with atomic_path(out) as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, G)
    return out
