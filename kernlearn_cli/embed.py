"""Inductive use of a learned kernel: factor rows of new points (``kernlearn embed``).

Two kinds of factors file map new points:

- *Nyström type* (``nystrom``, ``nystrom_prior``): the file holds the landmarks Z, the dictionary
  kernel S and the Gaussian width b; the learned kernel of any two points x, y is E_x S E_yᵀ with
  E_x = exp(−‖x − Z‖² / b), so a new point's row is E_x S^{1/2}, the map that produced the rows of G.
- *Through the initial factor* (``burg``, ``von_neumann``, ``trin``, ... : every solver whose
  learned kernel stays in the range of K0, K = G0 M G0ᵀ, and stores G0): with G = G0 L
  (L = G0⁺ G, r × r) a new point's row is g(x) = g0(x) L, where g0(x) is its row of G0 by the
  initial kernel's out-of-sample map (:data:`kernlearn_cli.inductive.OUT_OF_SAMPLE`): the feature
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

from .atomic import atomic_path
from .data.user import existing_file, read_matrix
from .errors import DataError
from .factors import FACTORS, read_factors
from .inductive import OUT_OF_SAMPLE, inductive_text, transform_through_initial
from .inputs import changed_inputs, describe_changes
from .records import RECORD, read_record
from .results import EXPERIMENT_FILE
from .solvers.nystrom import factor_rows, psd_sqrt


def _new_points(new_data: Path) -> np.ndarray:
    X = read_matrix(existing_file(str(new_data), "embed: new data", (".npy", ".csv", ".txt")))
    if X.ndim != 2:
        raise DataError(f"embed: {new_data} has shape {X.shape}; expected a matrix (n_new, features).")
    if not np.all(np.isfinite(X)):
        raise DataError(f"embed: {new_data} holds NaN or infinite values.")
    return np.ascontiguousarray(X, dtype=np.float64)


def initial_rows(config: dict, X_new: np.ndarray, G0: np.ndarray, where: str) -> np.ndarray:
    """New points' rows of G0 for the cell ``config`` (its dataset reloaded, its kernel's out-of-sample map)."""
    from .config import Cell, bind_cell
    from .memo import dataset_key, load_dataset

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


def check_inputs(run_dir: Path) -> None:
    """Refuse a cell whose input files (its record's ``inputs``: path -> sha256) differ now from the
    files it was computed from, as ``run``, ``collect`` and ``report`` see it
    (:func:`~kernlearn_cli.inputs.changed_inputs`): its learned kernel belongs to the training points
    as they were, so rows mapped through the points as they are now would be meaningless (shuffled rows,
    same shape) or fail on a count of points (appended rows).  A cell without a readable record (or
    without ``inputs``: catalogue data, pinned by its MANIFEST sha256) is not checked."""
    run_dir = Path(run_dir)
    try:
        record = read_record(run_dir / RECORD)
    except ValueError:
        return
    if not (changed := changed_inputs(record)):
        return
    out = run_dir.parent
    config = (f"the config that made it, recorded in {out / EXPERIMENT_FILE}" if (out / EXPERIMENT_FILE).is_file()
              else "the config that made it")
    files, was, now = ("files", "they were", "they are") if len(changed) > 1 else ("file", "it was", "it is")
    raise DataError(f"embed: {run_dir}: {describe_changes({run_dir.name: changed})} The cell was computed from "
                    f"the {files} as {was}, so its learned kernel does not belong to the data now. Compute the "
                    f"cell again from the {files} as {now} now, `kernlearn run CONFIG --out {out}` (CONFIG: "
                    f"{config}), then embed; or put the recorded {files} back. Nothing was written.")


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
    kernel of ``run_dir`` (a cell folder holding factors.h5); returns the .npy written.  A cell whose
    input files changed since it was computed is refused first (:func:`check_inputs`)."""
    factors = Path(run_dir) / FACTORS
    if not factors.is_file():
        raise DataError(f"embed: {factors} not found; give a cell folder of a finished run (it holds {FACTORS}).")
    check_inputs(run_dir)
    X = _new_points(new_data)
    G = embed_rows(factors, X)
    out = Path(out) if out is not None else Path(run_dir) / f"embed_{Path(new_data).stem}.npy"
    with atomic_path(out) as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, G)
    return out
