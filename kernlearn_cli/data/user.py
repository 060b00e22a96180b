"""Loaders of data the user supplies: the GyrB kernel and arbitrary feature/kernel files."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import numpy as np

from ..errors import ConfigError, DataError
from ..inputs import input_files
from ..registry import Checks, datasets
from ..types import Dataset
from ._validate import check_features, check_kernel, encode_labels, is_number, label_lines, rectangular, to_float
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


def existing_file(value: str, key: str, suffixes: tuple[str, ...]) -> Path:
    path = _resolve(value)
    if path.suffix.lower() not in suffixes:
        raise DataError(f"{key} file {path}: unsupported extension '{path.suffix}'; "
                        f"valid: {', '.join(suffixes)}.")
    if not path.is_file():
        raise DataError(f"{key} file {path} not found (relative paths are resolved against the "
                        f"current directory, {Path.cwd()}).")
    return path


def _load_npy(path: Path) -> np.ndarray:
    if path.stat().st_size == 0:
        raise DataError(f"{path}: the file is empty (0 bytes), not a .npy array; write it again with "
                        f"numpy.save (or give a .csv/.txt file).")
    try:
        return np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as e:
        raise DataError(f"{path}: not a readable .npy array of numbers or strings ({type(e).__name__}: "
                        f"{e or 'the file ends early'}).") from None


def _split(line: str) -> list[str]:
    return [c.strip() for c in (line.split(",") if "," in line else line.split())]


#: How a text matrix's first line and first column are read: True, False, or "auto" (detected).
Layout = bool | Literal["auto"]


def _header(rows: list[list[str]], header: Layout, where: str) -> tuple[list[list[str]], list[str] | None]:
    """Split the header off the split lines ``rows`` of a text matrix: (data rows, header or None).

    ``header="auto"`` takes the first line for a header when it holds no number, or when its
    first field is empty (the unnamed row index of ``DataFrame.to_csv()``), and refuses a first
    line holding exactly the column numbers ``0,1,...,d-1`` (what ``to_csv()`` writes for
    unnamed columns): a header or a data row cannot be told apart there, and no row is dropped
    on a guess.
    """
    if not rows or header is False:
        return rows, None
    first = rows[0]
    if header is True or not any(map(is_number, first)) or (first[0] == "" and len(first) > 1):
        return rows[1:], first
    if len(first) > 1 and first == [str(k) for k in range(len(first))]:
        raise DataError(f"{where}: the first line '{','.join(first)}' holds the column numbers 0..{len(first) - 1}, "
                        f"the header pandas' DataFrame.to_csv() writes for unnamed columns, and could as well be a "
                        f"row of data. Say which: set the dataset's header: true to skip the line as a header, or "
                        f"header: false to read it as the first row of data.")
    return rows, None


def _index_column(rows: list[list[str]], names: list[str] | None, index_column: Layout,
                  where: str) -> list[list[str]]:
    """Drop the first column of ``rows`` when it is a row index (``index_column=True``); with
    ``"auto"``, refuse a header whose first field is empty (a ``DataFrame.to_csv()`` index)."""
    if index_column is True:
        if any(len(row) < 2 for row in rows):
            raise DataError(f"{where}: index_column: true drops the first column, but a row has a single field.")
        return [row[1:] for row in rows]
    if index_column == "auto" and names is not None and len(names) > 1 and names[0] == "":
        shown = ", ".join(row[0] for row in rows[:3]) + (", ..." if len(rows) > 3 else "")
        raise DataError(f"{where}: the header line starts with an empty field, and the first column holds "
                        f"{shown}: the layout of pandas' DataFrame.to_csv() with its default index=True, whose "
                        f"first column is the row index, not a feature (read as one, it changes every distance). "
                        f"Write the file with to_csv(path, index=False), or set the dataset's index_column: true to "
                        f"drop the first column (index_column: false reads it as a feature).")
    return rows


def read_matrix(path: Path, *, header: Layout = "auto", index_column: Layout = "auto") -> np.ndarray:
    """Read a 2-D numeric array from ``.npy`` or from text (comma- or whitespace-delimited).

    In text files blank lines are ignored; a line holding a comma is split at commas, any
    other at whitespace.

    Parameters
    ----------
    path : Path
        ``.npy``, or text (``.csv``, ``.txt``).
    header : bool or "auto"
        Text only. True: the first line is a header (skipped); False: every line is data;
        "auto": a first line holding no number, or starting with an empty field, is a header,
        and a first line ``0,1,...,d-1`` is refused (header or data: say which).
    index_column : bool or "auto"
        Text only. True: the first column is a row index (dropped); False: it is a feature;
        "auto": a feature, but a header starting with an empty field (pandas' ``to_csv()``
        with its default ``index=True``) is refused.

    Raises
    ------
    DataError
        An unreadable or non-numeric file, or a layout "auto" refuses, naming the file.
    ConfigError
        ``header`` or ``index_column`` given for a ``.npy`` file.
    """
    if path.suffix.lower() == ".npy":
        if (header, index_column) != ("auto", "auto"):
            raise ConfigError(f"{path}: header and index_column describe text files (.csv, .txt); a .npy array "
                              f"has neither. Remove them from the dataset settings.")
        A = _load_npy(path)
        if A.dtype.kind not in "biuf":
            raise DataError(f"{path}: expected an array of numbers, got dtype {A.dtype}.")
    else:
        rows = [_split(line) for line in path.read_text().splitlines() if line.strip()]
        rows, names = _header(rows, header, str(path))
        rows = _index_column(rows, names, index_column, str(path))
        A = to_float(rectangular(rows, str(path)), str(path))
    if A.ndim != 2:
        raise DataError(f"{path}: expected a 2-D array (n rows), got shape {A.shape}.")
    if A.shape[0] == 0 or A.shape[1] == 0:
        raise DataError(f"{path}: the array holds no {'rows (points)' if A.shape[0] == 0 else 'columns'} "
                        f"(shape {A.shape}); give at least one row per point and one column.")
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


@datasets.register("gyrb", checks=Checks(alternatives={"path": "other"}))
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
                         "inputs": input_files(*found.values())})


@datasets.register("files", checks=Checks(
    alternatives={"features": "b.csv", "labels": "b.txt", "kernel": "k.npy", "header": True,
                  "index_column": True}))
def files(*, features: str = "", labels: str = "", kernel: str = "", header: Layout = "auto",
          index_column: Layout = "auto") -> Dataset:
    """Your own data: a feature matrix or a precomputed kernel, with optional labels.

    Give exactly one of ``features`` (``.npy``, or text: ``.csv`` / ``.txt``, comma- or
    whitespace-delimited, read by :func:`read_matrix` as ``header`` and ``index_column`` say) or ``kernel``
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
    header : bool or "auto"
        Text features: true, the first line is a header; false, it is data; auto (default), a
        first line of non-numbers (or starting with an empty field) is a header, and a first line
        ``0,1,...,d-1`` is refused.
    index_column : bool or "auto"
        Text features: true, the first column is a row index and is dropped; false, it is a
        feature; auto (default), a feature, but pandas' ``to_csv()`` layout (a header starting
        with an empty field) is refused.
    """
    if bool(features) == bool(kernel):
        raise ConfigError("dataset 'files': give exactly one of 'features' (a .npy, .csv or .txt n x d "
                          "matrix) or 'kernel' (a .npy n x n matrix).")
    meta = {}
    X = K = None
    if features:
        path = existing_file(features, "features", (".npy", ".csv", ".txt"))
        X = check_features(read_matrix(path, header=header, index_column=index_column), f"dataset 'files' ({path})")
        meta["features"] = str(path)
    else:
        path = existing_file(kernel, "kernel", (".npy",))
        K = check_kernel(read_matrix(path, header=header, index_column=index_column), f"dataset 'files' ({path})")
        meta["kernel"] = str(path)
    y = classes = None
    if labels:
        lpath = existing_file(labels, "labels", (".npy", ".csv", ".txt"))
        y, classes = read_labels(lpath, len(X if X is not None else K))
        meta["labels"] = str(lpath)
    meta["inputs"] = input_files(*meta.values())     # their content, in every cell's record
    return Dataset("files", X=X, K=K, y=y, classes=classes, meta=meta)
