"""Per-cell outputs: the HDF5 factors file and the JSON record, both written atomically.

A cell is *finished* when its ``record.json`` and ``factors.h5`` exist and verify
(:func:`cell_state`).  :func:`write_cell` builds both files completely under temporary
names first and renames them into place only then, the record last: a killed run never
leaves a cell that looks finished, a rerun (``--force``) replaces a finished cell only
with a complete new one, and two processes running the same cell each write private
temporary files (the last rename wins; both are complete).  Every file is created with
the permissions the umask gives (0644 under the usual 022), not the 0600 of a
temporary file.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import h5py
import numpy as np
import yaml

from . import __version__
from .kinds import KINDS
from .types import Constraints, SolverResult

FACTORS = "factors.h5"
#: A regularization path's factors (solver option ``keep_path``), beside the factors file, which
#: links to it as ``path`` (datasets ``0``, ``1``, … and ``gamma``).
PATH_FILE = "path.h5"
RECORD = "record.json"
#: Why the last attempt at a cell failed (the cell stays unfinished).
FAILED = "failed.json"
#: The ``converged`` attribute of a result to which convergence does not apply (record.json: null).
CONVERGED_NA = "n/a"


def new_file_mode() -> int:
    """Permissions of a new regular file under the process umask (0o644 under umask 022)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


#: sha256 of the input files read in this process, by path: ((size, mtime_ns, ctime_ns, inode), digest).
_DIGESTS: dict[str, tuple[tuple[int, int, int, int], str]] = {}
#: A file modified less than this many seconds before it was hashed is hashed again at each use: the
#: file system's clock is coarse, so a second edit within one tick keeps size and times (git's "racily
#: clean" entries).
_RACY_SECONDS = 2.0


def input_digest(path: str | Path) -> str:
    """sha256 of an input file, computed once per version of the file in this process: memoised on its
    size, times and inode, except while it is recent enough that an edit could leave those unchanged."""
    st = os.stat(path)
    stamp = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    key = str(path)
    if key in _DIGESTS and _DIGESTS[key][0] == stamp:
        return _DIGESTS[key][1]
    digest = sha256_file(Path(path))
    if time.time() - max(st.st_mtime, st.st_ctime) > _RACY_SECONDS:
        _DIGESTS[key] = (stamp, digest)
    return digest


def input_files(*paths: str | Path) -> dict[str, str]:
    """``{absolute path: sha256}`` of the files a component read: what a dataset loader puts in
    ``Dataset.meta["inputs"]`` and a constraint generator in ``Constraints.files``, so that every cell
    records the content of its inputs (``record.json``: ``inputs``) and a finished cell whose input
    was edited since is computed again (:func:`changed_inputs`)."""
    return {str(Path(p).absolute()): input_digest(p) for p in paths}


def changed_inputs(record: dict) -> list[tuple[str, str, str | None]]:
    """The input files of a record (``inputs``: path -> sha256) whose content on disk differs now:
    ``(path, recorded sha256, current sha256 or None when the file is gone)``.  A record without
    ``inputs`` (an archived or older record, or one whose data came from the catalogue, pinned by
    its MANIFEST sha256) has none."""
    out = []
    for path, digest in (record.get("inputs") or {}).items():
        try:
            now = input_digest(path)
        except OSError:
            now = None
        if now != digest:
            out.append((path, digest, now))
    return out


def describe_changes(changes: dict[str, list[tuple[str, str, str | None]]]) -> str:
    """``cell -> changed_inputs(...)`` as one sentence per file: which file, its content then and now,
    and how many cells read the earlier version."""
    files: dict[tuple[str, str, str | None], list[str]] = {}
    for cell, changed in changes.items():
        for change in changed:
            files.setdefault(change, []).append(cell)
    return " ".join(f"'{path}' {'is gone' if now is None else f'has changed (sha256 now {now[:12]}…)'} since "
                    f"{len(cells)} finished cell(s) read it (sha256 {then[:12]}…; e.g. {cells[0]})."
                    for (path, then, now), cells in files.items())


def temp_beside(path: Path) -> Path:
    """A new empty file beside ``path`` (same file system) with the umask's permissions."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    os.chmod(tmp, new_file_mode())
    return Path(tmp)


@contextmanager
def atomic_path(path: Path, commit: bool = True):
    """Yield a temporary path beside ``path``; rename it onto ``path`` if the block succeeds.

    With ``commit=False`` the caller renames it (:func:`commit_files`); the temporary file is
    removed if it is still there when the block exits.  An ``OSError`` (disk full, read-only
    place) names ``path``, not the temporary name.
    """
    path = Path(path)
    tmp = None
    try:
        tmp = temp_beside(path)
        yield tmp
        if commit:
            os.replace(tmp, path)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
    finally:
        if tmp is not None and tmp.exists():
            tmp.unlink()


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


#: Where a results folder keeps the arrays its cells share (one file per distinct array).
SHARED = "shared"


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


def write_cell(cell_dir: Path, factors: bytes, record: dict) -> None:
    """Write a finished cell: both files complete under temporary names, then renamed, the record last.

    A finished cell being rerun (``--force``) keeps its files until the new ones are complete;
    an earlier ``failed.json`` goes once the cell has finished.
    """
    cell_dir = Path(cell_dir)
    with atomic_path(cell_dir / FACTORS, commit=False) as tmp_f, \
            atomic_path(cell_dir / RECORD, commit=False) as tmp_r:
        tmp_f.write_bytes(factors)
        tmp_r.write_text(record_text(record))
        os.replace(tmp_f, cell_dir / FACTORS)
        os.replace(tmp_r, cell_dir / RECORD)
    (cell_dir / FAILED).unlink(missing_ok=True)


def write_failure(cell_dir: Path, failure: dict) -> None:
    """Record why a cell failed (``failed.json``; the cell stays unfinished and is retried)."""
    with atomic_path(Path(cell_dir) / FAILED) as tmp:
        tmp.write_text(record_text(failure))


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


def record_text(record: dict) -> str:
    """A record (or a failure) as ``record.json`` holds it."""
    return json.dumps(record, indent=2, sort_keys=False, default=json_default) + "\n"


def json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serializable: {type(obj)}")


#: Keys every record has (``collect`` needs them; a record without them is unreadable).
RECORD_KEYS = ("experiment", "cell", "grid", "seed", "solver", "dataset", "constraints", "n", "rank0",
               "converged", "iterations", "objective", "seconds", "metrics")


def read_record(path: Path) -> dict:
    """A record, or ``ValueError`` saying why it cannot be used (not JSON, not an object, keys missing)."""
    try:
        rec = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"unreadable ({exc.__class__.__name__}: {exc})") from None
    if not isinstance(rec, dict):
        raise ValueError("not a JSON object")
    missing = [k for k in RECORD_KEYS if k not in rec]
    if missing:
        raise ValueError(f"missing key(s) {', '.join(missing)}")
    return rec


def cell_state(cell_dir: Path) -> tuple[str, str]:
    """``("finished", "")`` when the cell's record and factors verify, ``("failed", why)`` after a
    recorded failure, ``("corrupt", why)`` when files are there but do not verify, else
    ``("missing", "")``.

    A record verifies when it reads (:func:`read_record`) and names its own folder; the factors
    file when HDF5 opens it and it holds a float64 ``G``.
    """
    cell_dir = Path(cell_dir)
    rec_path, fac_path = cell_dir / RECORD, cell_dir / FACTORS
    if not rec_path.exists():
        if (cell_dir / FAILED).exists():
            try:
                why = json.loads((cell_dir / FAILED).read_text()).get("error", "")
            except (OSError, ValueError, AttributeError):
                why = ""
            return "failed", why
        return ("corrupt", f"{FACTORS} without {RECORD} (interrupted)") if fac_path.exists() else ("missing", "")
    try:
        rec = read_record(rec_path)
    except ValueError as exc:
        return "corrupt", f"{RECORD}: {exc}"
    if rec["cell"] != cell_dir.name:
        return "corrupt", f"{RECORD} names cell '{rec['cell']}', not its folder"
    try:
        with h5py.File(fac_path, "r") as f:
            if "G" not in f or f["G"].dtype != np.float64:
                return "corrupt", f"{FACTORS}: no float64 dataset G"
    except (OSError, ValueError) as exc:
        return "corrupt", f"{FACTORS}: {exc}"
    return "finished", ""

