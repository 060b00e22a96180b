"""Per-cell outputs: the HDF5 factors file and the JSON record, both written atomically.

A cell is *finished* when its ``record.json`` exists: it is renamed into place
only after ``factors.h5`` has been, so a killed run never leaves a cell that
looks finished, and two processes running the same cell each write a private
temporary file and rename it (the last rename wins; both are complete).
"""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

import h5py
import numpy as np
import yaml

from . import __version__
from .types import KINDS, Constraints, SolverResult

FACTORS = "factors.h5"
RECORD = "record.json"
#: The ``converged`` attribute of a result to which convergence does not apply (record.json: null).
CONVERGED_NA = "n/a"


@contextmanager
def atomic_path(path: Path):
    """Yield a temporary path beside ``path``; rename it onto ``path`` if the block succeeds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_factors(path: Path, result: SolverResult, constraints: Constraints, labels, *,
                  solver: str, config: dict, seed: int, seconds: float) -> None:
    """Write the factors file (contract): G, constraints, labels, attributes, solver extras.

    The ``constraints`` group holds ``i``, ``j``, ``kind`` (names), ``bound`` and, for a set of
    triplet constraints only, ``k``.
    """
    with atomic_path(path) as tmp, h5py.File(tmp, "w") as f:
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
            if isinstance(arr, dict):                     # e.g. a sparse matrix as a CSR group
                grp = f.create_group(name)
                for key, part in arr.items():
                    grp.create_dataset(key, data=part)
            else:
                f.create_dataset(name, data=arr)
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
    """Read a factors file back: arrays, constraints and attributes (for tests and tools)."""
    with h5py.File(path, "r") as f:
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


def write_record(path: Path, record: dict) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(record, indent=2, sort_keys=False, default=_json_default) + "\n")


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serializable: {type(obj)}")


def is_finished(cell_dir: Path) -> bool:
    return (cell_dir / RECORD).is_file() and (cell_dir / FACTORS).is_file()
