"""The factors file (``factors.h5``, HDF5): a cell's learned factor G, its constraints, labels,
attributes, certificate, history and solver arrays.

Built in memory (:func:`factors_image`) and written atomically (:func:`write_factors`, or with the
record by :func:`~kernlearn_cli.records.write_cell`); read back by :func:`read_factors`.  An array
that many cells share (the initial factor G0) is kept once per results folder, in ``shared/`` under a
name of its content, and linked (:func:`share_initial_factor`); a regularization path is kept beside
the factors file (:data:`PATH_FILE`).
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import h5py
import numpy as np
import yaml

from . import __version__
from .atomic import atomic_path
from .kinds import KINDS
from .types import Constraints, SolverResult


FACTORS = "factors.h5"


#: A regularization path's factors (solver option ``keep_path``), beside the factors file, which
#: links to it as ``path`` (datasets ``0``, ``1``, … and ``gamma``).
PATH_FILE = "path.h5"


#: The ``converged`` attribute of a result to which convergence does not apply (record.json: null).
CONVERGED_NA = "n/a"


#: Where a results folder keeps the arrays its cells share (one file per distinct array).
SHARED = "shared"


def factors_image(result: SolverResult, constraints: Constraints, labels, *, solver: str, config: dict,
                  seed: int, seconds: float, links: dict | None = None, kernel_info: dict | None = None) -> bytes:
    """The factors file (contract), built in memory: see :func:`write_factors`.  ``links`` maps a
    solver array's name to the file (relative to the factors file's folder) that holds it under
    the same name (:func:`write_shared`): the factors file links to it instead of a copy.
    ``kernel_info``: an approximate K0's factorization, rank and residual trace (attributes ``k0_*``)."""
    buffer = io.BytesIO()
    with h5py.File(buffer, "w") as f:
        _fill_factors(f, result, constraints, labels, solver=solver, config=config, seed=seed, seconds=seconds,
                      links=links or {})
        for key, value in (kernel_info or {}).items():
            f.attrs[f"k0_{key}"] = value
    return buffer.getvalue()


def shared_name(name: str, arr: np.ndarray) -> str:
    """The shared file of an array: named by its content (sha256 of its shape, type and bytes), so
    cells whose arrays are equal to the last bit share one file and no others do."""
    arr = np.ascontiguousarray(arr)
    digest = hashlib.sha256(f"{arr.dtype.str}{arr.shape}".encode())
    digest.update(memoryview(arr).cast("B"))
    return f"{name}_{digest.hexdigest()[:20]}.h5"


def write_shared(path: Path, name: str, arr: np.ndarray) -> None:
    """Write one shared array (dataset ``name``) unless its file is there; atomic, so two cells
    writing it at once each rename a complete file (the same bytes)."""
    path = Path(path)
    if path.is_file():
        return
    buffer = io.BytesIO()
    with h5py.File(buffer, "w") as f:
        f.create_dataset(name, data=arr)
    with atomic_path(path) as tmp:
        tmp.write_bytes(buffer.getvalue())


def write_factors(path: Path, result: SolverResult, constraints: Constraints, labels, **attrs) -> None:
    """Write the factors file (contract) atomically: G, constraints, labels, attributes, solver extras."""
    image = factors_image(result, constraints, labels, **attrs)
    with atomic_path(path) as tmp:
        tmp.write_bytes(image)


def _fill_factors(f: h5py.File, result: SolverResult, constraints: Constraints, labels, *,
                  solver: str, config: dict, seed: int, seconds: float, links: dict) -> None:
    """The factors file's contents (contract): G, constraints, labels, attributes, solver extras
    (those named in ``links`` as HDF5 external links to their shared file).

    The ``constraints`` group holds ``i``, ``j``, ``kind`` (names), ``bound`` and, for a set of
    triplet constraints only, ``k``.
    """
    f.create_dataset("G", data=np.asarray(result.G, dtype=np.float64))
    g = f.create_group("constraints")
    g.create_dataset("i", data=constraints.i)
    g.create_dataset("j", data=constraints.j)
    g.create_dataset("kind", data=np.array(constraints.kind_names(), dtype="S7"))
    g.create_dataset("bound", data=constraints.bound)
    if constraints.has_triplets:                      # triplet sets (Li et al. 2009): the third index
        g.create_dataset("k", data=constraints.k)
    g.attrs["kinds"] = ",".join(KINDS)
    if labels is not None:
        f.create_dataset("labels", data=np.asarray(labels))
    for name, arr in result.arrays.items():
        if name in links:
            f[name] = h5py.ExternalLink(links[name], f"/{name}")
        elif isinstance(arr, dict):                     # e.g. a sparse matrix as a CSR group
            grp = f.create_group(name)
            for key, part in arr.items():
                grp.create_dataset(key, data=part)
        else:
            f.create_dataset(name, data=arr)
    for name, target in links.items():            # linked files that are not solver arrays (the path)
        if name not in result.arrays:
            f[name] = h5py.ExternalLink(target, "/")
    hist = f.create_group("history")
    for name, arr in result.history.items():
        hist.create_dataset(name, data=np.asarray(arr))
    write_certificate(f.create_group("certificate"), result.certificate)
    f.attrs.update({
        "solver": solver, "config": yaml.safe_dump(config, sort_keys=False), "seed": seed,
        "converged": CONVERGED_NA if result.converged is None else bool(result.converged),
        "iterations": int(result.iterations),
        "seconds": float(seconds), "objective": float(result.objective),
        "kernlearn_version": __version__,
    })
    for key, value in result.info.items():
        f.attrs[key] = value


def write_certificate(group: h5py.Group, certificate: dict) -> None:
    """The certificate as attributes of ``group`` (arrays as datasets): ``converged``, ``rule``,
    ``stopped_by``, per check ``<name>`` (value), ``<name>_tol`` and ``<name>_met``, per figure its value."""
    if not certificate:
        return
    converged = certificate["converged"]
    group.attrs.update({"converged": CONVERGED_NA if converged is None else bool(converged),
                        "rule": certificate["rule"], "stopped_by": certificate["stopped_by"]})
    for name, check in certificate["checks"].items():
        group.attrs.update({name: check["value"], f"{name}_tol": check["tol"], f"{name}_met": check["met"]})
    for name, value in certificate["figures"].items():
        if isinstance(value, (list, np.ndarray)):
            group.create_dataset(name, data=np.asarray(value))
        elif value is not None:
            group.attrs[name] = value


def read_factors(path: Path) -> dict:
    """Read a factors file back: arrays (shared ones through their links), constraints and attributes.

    Raises
    ------
    FileNotFoundError
        A linked array whose shared file is missing (the cell's folder was moved without its
        results folder's ``shared/``), naming both files.
    """
    with h5py.File(path, "r") as f:
        for k in f:
            link = f.get(k, getlink=True)
            if isinstance(link, h5py.ExternalLink) and not (Path(path).parent / link.filename).is_file():
                raise FileNotFoundError(f"factors file '{path}': array '{k}' is kept once for all cells in "
                                        f"'{Path(path).parent / link.filename}', which is missing. Keep a cell's "
                                        f"folder inside its results folder (or copy {SHARED}/ beside it), or rerun "
                                        f"the cell with --force.")
        out = {k: f[k][()] for k in f if isinstance(f[k], h5py.Dataset)}
        g = f["constraints"]
        out["constraints"] = Constraints.from_lists(g["i"][()], g["j"][()],
                                                    [k.decode() for k in g["kind"][()]], g["bound"][()],
                                                    g["k"][()] if "k" in g else None)
        out["attrs"] = dict(f.attrs)
        if "certificate" in f:
            cg = f["certificate"]
            out["certificate"] = {**dict(cg.attrs), **{k: cg[k][()] for k in cg}}
    return out


def share_initial_factor(result, G0: np.ndarray | None, out_dir: Path) -> dict:
    """Keep the initial factor G0 (K0 = G0 G0ᵀ) once per results folder, not once per cell: a
    solver that returns it (``result.arrays["G0"]``, to make its objective recomputable) gets it
    written to ``OUT/shared/`` under a name of its content (:func:`shared_name`)
    and linked from the cell's factors file.  Returns the links for :func:`factors_image`."""
    arr = result.arrays.get("G0")
    if G0 is None or not isinstance(arr, np.ndarray) or arr.shape != G0.shape or not (arr is G0 or
                                                                                        np.array_equal(arr, G0)):
        return {}
    name = shared_name("G0", arr)
    write_shared(out_dir / SHARED / name, "G0", arr)
    return {"G0": f"../{SHARED}/{name}"}
