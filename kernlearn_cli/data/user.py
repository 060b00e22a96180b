"""Loaders of data the user supplies: the GyrB kernel and arbitrary feature/kernel files."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import ConfigError, DataError
from ..registry import datasets
from ..types import Dataset
from ._validate import check_features, check_kernel, encode_labels, is_number, label_lines, rectangular, to_float
from ..io import input_files
from .catalogue import data_home

GYRB_MISSING = (
    "GyrB kernel not found in {folder} (missing: {missing}). GyrB is the 52 x 52 kernel of "
    "amino-acid sequence similarities between gyrB proteins of 52 bacteria from 3 species, "
    "distributed by Koji Tsuda (Tsuda, Raetsch & Warmuth, JMLR 2005). It is not downloadable "
    "by kernlearn and has no published checksum: obtain it from K. Tsuda or the authors, then "
    "place in {folder} the kernel as kernel.npy, or kernel.csv / kernel.txt (n x n, comma- or "
    "whitespace-delimited), and the species as labels.npy, or labels.txt / labels.csv (one "
    "label per line, in kernel row order). Or point the dataset's 'path' key (or "
    "KERNLEARN_DATA) at another folder holding those files.")


def _resolve(value: str) -> Path:
    """A user path, relative ones resolved against the current working directory."""
    return Path.cwd() / Path(value).expanduser()


def _existing(value: str, key: str, suffixes: tuple[str, ...]) -> Path:
    path = _resolve(value)
    if path.suffix.lower() not in suffixes:
        raise DataError(f"{key} file {path}: unsupported extension '{path.suffix}'; "
                        f"valid: {', '.join(suffixes)}.")
    if not path.is_file():
        raise DataError(f"{key} file {path} not found (relative paths are resolved against the "
                        f"current directory, {Path.cwd()}).")
    return path


def _load_npy(path: Path) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except (ValueError, OSError) as e:
        raise DataError(f"{path}: not a readable .npy array of numbers or strings ({e}).") from None


def _split(line: str) -> list[str]:
    return [c.strip() for c in (line.split(",") if "," in line else line.split())]


def read_matrix(path: Path) -> np.ndarray:
    """Read a 2-D numeric array from ``.npy`` or from text (comma- or whitespace-delimited).

    In text files blank lines are ignored and a first line holding no number at
    all is taken as a header and skipped.
    """
    if path.suffix.lower() == ".npy":
        A = _load_npy(path)
        if A.dtype.kind not in "biuf":
            raise DataError(f"{path}: expected an array of numbers, got dtype {A.dtype}.")
    else:
        rows = [_split(line) for line in path.read_text().splitlines() if line.strip()]
        if rows and not any(map(is_number, rows[0])):
            rows = rows[1:]
        A = to_float(rectangular(rows, str(path)), str(path))
    if A.ndim != 2:
        raise DataError(f"{path}: expected a 2-D array (n rows), got shape {A.shape}.")
    return A.astype(np.float64)


def read_labels(path: Path, n: int) -> tuple[np.ndarray, list]:
    """Read and encode the labels of ``n`` points (:func:`~._validate.encode_labels`).

    A ``.npy`` file holds an array of n integers or strings. A text file holds one
    label per line, in row order, and no header: every line up to the last label
    must hold one (blank lines after it are ignored), and the labels must be all
    numbers or all names, so a stray name among numbers (a typo, or a header such
    as ``label`` on the first line) is an error naming its line.

    Parameters
    ----------
    path : Path
        The label file (``.npy``, or text: ``.txt`` / ``.csv``).
    n : int
        The number of points (rows of the features or kernel).

    Returns
    -------
    codes : int64 array (n,)
    classes : list

    Raises
    ------
    DataError
        Naming the file, and the 1-based line in a text file, of the first problem.
    """
    if path.suffix.lower() == ".npy":
        return encode_labels(_load_npy(path), str(path), n)
    return encode_labels(label_lines(path.read_text(), str(path)), str(path), n, lines=True)


@datasets.register("gyrb")
def gyrb(*, path: str = "") -> Dataset:
    """GyrB protein kernel of Tsuda et al.: 52 x 52 precomputed kernel, 3 species (user-supplied).

    Not downloadable: the files must be placed in ``path`` (default
    ``<data home>/gyrb``): ``kernel.npy`` or ``kernel.csv`` / ``kernel.txt`` (n x n,
    comma- or whitespace-delimited) and ``labels.npy`` or ``labels.txt`` /
    ``labels.csv`` (one label per line, no header, all numbers or all names:
    see :func:`read_labels`). The kernel must be square, finite, symmetric
    (relative tolerance 1e-8, then symmetrized exactly) and PSD.

    Parameters
    ----------
    path : str
        Folder holding the files; relative paths are resolved against the
        current working directory.
    """
    folder = _resolve(path) if path else data_home() / "gyrb"
    found = {}
    for stem, suffixes in (("kernel", (".npy", ".csv", ".txt")), ("labels", (".npy", ".txt", ".csv"))):
        found[stem] = next((folder / (stem + s) for s in suffixes if (folder / (stem + s)).is_file()), None)
    missing = [f"{stem}.*" for stem, p in found.items() if p is None]
    if missing:
        raise DataError(GYRB_MISSING.format(folder=folder, missing=", ".join(missing)))
    K = check_kernel(read_matrix(found["kernel"]), f"dataset 'gyrb' ({found['kernel']})")
    y, classes = read_labels(found["labels"], K.shape[0])
    return Dataset("gyrb", K=K, y=y, classes=classes,
                   meta={"source": "Tsuda, Raetsch & Warmuth (2005) GyrB kernel, user-supplied",
                         "files": input_files(*found.values())})


@datasets.register("files")
def files(*, features: str = "", labels: str = "", kernel: str = "") -> Dataset:
    """Your own data: a feature matrix or a precomputed kernel, with optional labels.

    Give exactly one of ``features`` (``.npy``, or ``.csv`` comma-delimited without
    header; a first line of non-numbers is skipped as a header) or ``kernel``
    (``.npy``, n x n; square, symmetric, PSD). ``labels`` (``.npy``, or ``.csv`` /
    ``.txt`` with one label per line in row order, no header and no blank line
    before the last label) may be integers or strings, but all numbers or all
    names: a stray name among numbers is an error (:func:`read_labels`). Relative paths are
    resolved against the current working directory. Features are used as given
    (no centering or scaling).

    Parameters
    ----------
    features : str
        Path of an n x d feature matrix.
    labels : str
        Path of the n labels (optional), one per line in a text file.
    kernel : str
        Path of an n x n kernel matrix.
    """
    if bool(features) == bool(kernel):
        raise ConfigError("dataset 'files': give exactly one of 'features' (a .npy or .csv n x d "
                          "matrix) or 'kernel' (a .npy n x n matrix).")
    meta = {}
    X = K = None
    if features:
        path = _existing(features, "features", (".npy", ".csv"))
        X = check_features(read_matrix(path), f"dataset 'files' ({path})")
        meta["features"] = str(path)
    else:
        path = _existing(kernel, "kernel", (".npy",))
        K = check_kernel(read_matrix(path), f"dataset 'files' ({path})")
        meta["kernel"] = str(path)
    y = classes = None
    if labels:
        lpath = _existing(labels, "labels", (".npy", ".csv", ".txt"))
        y, classes = read_labels(lpath, len(X if X is not None else K))
        meta["labels"] = str(lpath)
    meta["files"] = input_files(*meta.values())      # their content, in every cell's record
    return Dataset("files", X=X, K=K, y=y, classes=classes, meta=meta)
