"""Loaders of the catalogue datasets (UCI, ESL's USPS, LIBSVM's adult) and their parsers.

Each loader calls :func:`~kernlearn_cli.data.catalogue.fetch` (so the files are
downloaded and verified on first use) and parses the original distribution format.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Annotated, Literal

import numpy as np

from ..errors import DataError
from ..params import Interval, Length, NonNegativeInt
from ..registry import Checks, datasets
from ..types import Dataset
from ._validate import check_finite, encode_labels, rectangular, to_float
from .catalogue import fetch, provenance

#: Number of features of the LIBSVM adult files (Platt's binarization of UCI Adult).
ADULT_FEATURES = 123


def _read_rows(path: Path, sep: str | None) -> list[list[str]]:
    """Split the non-blank lines of a (possibly gzipped) text file on ``sep`` (None: whitespace)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as fh:
        return [[c.strip() for c in line.split(sep)] for line in fh if line.strip()]


def _dataset(name: str, X: np.ndarray, labels, where: str, **meta) -> Dataset:
    y, classes = encode_labels(labels, where)
    return Dataset(name, X=check_finite(X, where), y=y, classes=classes, meta=meta)


def _table(name: str, filename: str, *, sep: str | None = ",", label: int = -1,
           drop: tuple[int, ...] = ()) -> Dataset:
    """Load a one-file catalogue dataset: one row per line, label in column ``label``,
    every other column a feature except the ``drop`` columns (ids)."""
    path = fetch(name)[filename]
    where = f"dataset '{name}' ({path})"
    cells = rectangular(_read_rows(path, sep), where)
    keep = [j for j in range(cells.shape[1]) if j not in drop and j != label % cells.shape[1]]
    return _dataset(name, to_float(cells[:, keep], where), cells[:, label], where, **provenance(name))


@datasets.register("sonar")
def sonar() -> Dataset:
    """UCI Sonar, mines vs rocks: 208 x 60, 2 classes (M 111, R 97).

    Gorman & Sejnowski (1988). ``sonar/sonar.all-data``: comma-separated, class last.
    """
    return _table("sonar", "sonar.all-data")


@datasets.register("ionosphere")
def ionosphere() -> Dataset:
    """UCI Ionosphere radar returns: 351 x 34, 2 classes (b 126, g 225).

    Sigillito et al. (1989). ``ionosphere/ionosphere.data``: comma-separated, class
    last. The second feature is constant 0, as in the original.
    """
    return _table("ionosphere", "ionosphere.data")


@datasets.register("heart")
def heart() -> Dataset:
    """UCI Statlog Heart: 270 x 13, 2 classes (1 absence 150, 2 presence 120).

    ``statlog_heart/heart.dat``: space-separated, class last.
    """
    return _table("heart", "heart.dat", sep=None)


@datasets.register("glass")
def glass() -> Dataset:
    """UCI Glass identification: 214 x 9, 6 classes (types 1, 2, 3, 5, 6, 7).

    German (1987). ``glass/glass.data``: comma-separated; the Id in column 0 is
    dropped, the type is last. There is no type 4.
    """
    return _table("glass", "glass.data", drop=(0,))


@datasets.register("soybean_small")
def soybean_small() -> Dataset:
    """UCI Soybean (small): 47 x 35 categorical codes, 4 classes (D1-D3 10 each, D4 17).

    Michalski & Chilausky (1980). ``soybean_small/soybean-small.data``:
    comma-separated, class last; the codes are used as numbers.
    """
    return _table("soybean_small", "soybean-small.data")


@datasets.register("spambase")
def spambase() -> Dataset:
    """UCI Spambase: 4601 x 57, 2 classes (0 non-spam 2788, 1 spam 1813).

    Hopkins et al. (1999). ``spambase/spambase.data``: comma-separated, class last.
    """
    return _table("spambase", "spambase.data")


@datasets.register("uspst")
def uspst() -> Dataset:
    """USPS handwritten digits, test set: 2007 x 256 grey values in [-1, 1], 10 classes.

    Hull (1994), as distributed with ESL (Hastie et al.). ``uspst/zip.test.gz``:
    gzip, one image a line, the digit first, then 16 x 16 values, space-separated.
    """
    return _table("uspst", "zip.test.gz", sep=None, label=0)


@datasets.register("breast_cancer_wisconsin", checks=Checks(alternatives={"missing": "impute"}))
def breast_cancer_wisconsin(*, missing: Literal["drop", "impute"] = "drop") -> Dataset:
    """UCI Breast Cancer Wisconsin (Original): 699 x 9, 2 classes (2 benign 458, 4 malignant 241).

    Wolberg & Mangasarian (1990); not scikit-learn's ``breast_cancer`` (WDBC).
    ``breast_cancer_wisconsin/breast-cancer-wisconsin.data``: comma-separated, the
    sample id (column 0) dropped, class last. 16 rows have ``?`` for bare nuclei.

    Parameters
    ----------
    missing : {"drop", "impute"}
        ``drop`` (the default) removes the 16 rows with ``?`` (683 remain: 444 benign,
        239 malignant); ``impute`` keeps all 699 rows and replaces each ``?`` with the
        median of its column's known values. Li et al. (2009) use all 699 rows
        (``missing: impute`` gives that size; the paper does not say how it filled the gaps).
    """
    path = fetch("breast_cancer_wisconsin")["breast-cancer-wisconsin.data"]
    where = f"dataset 'breast_cancer_wisconsin' ({path})"
    cells = rectangular(_read_rows(path, ","), where)[:, 1:]
    unknown = cells == "?"
    rows = unknown.any(axis=1)
    if missing == "drop":
        cells = cells[~rows]
        X = to_float(cells[:, :-1], where)
    else:
        X = to_float(np.where(unknown, "nan", cells)[:, :-1], where)
        X = np.where(np.isnan(X), np.nanmedian(X, axis=0), X)
    return _dataset("breast_cancer_wisconsin", X, cells[:, -1], where, missing=missing,
                    rows_with_missing=int(rows.sum()), **provenance("breast_cancer_wisconsin"))


@datasets.register("pendigits", checks=Checks(alternatives={"digits": [1, 2], "n": 100, "subset_seed": 1}))
def pendigits(*, digits: Annotated[list[Annotated[int, Interval(0, 9)]], Length(1)] = [3, 8, 9],  # noqa: B006
              n: NonNegativeInt = 317, subset_seed: NonNegativeInt = 0) -> Dataset:
    """UCI Pen-based handwritten digits, by default the 317-point subset of digits 3, 8, 9.

    Alimoglu & Alpaydin (1996); the subset is the one Kulis et al. (2006) use.
    ``pendigits/pendigits.tra`` and ``pendigits.tes``: comma-separated, 16 features
    (0-100), digit last.

    Subset rule: the pool is the rows of ``pendigits.tra`` followed by those of
    ``pendigits.tes`` whose digit is in ``digits`` (3165 rows for 3, 8, 9); ``n``
    rows are drawn uniformly without replacement with
    ``np.random.default_rng(subset_seed).choice(len(pool), n, replace=False)`` and
    kept in pool order. The rule and seed are recorded in ``meta``.

    Parameters
    ----------
    digits : list of int
        Digits (0-9) to keep, at least one.
    n : int
        Number of points; 0, or at least the pool size, keeps the whole pool.
    subset_seed : int
        Seed of the draw (>= 0; independent of the experiment seed).
    """
    files = fetch("pendigits")
    parts = []
    for fname in ("pendigits.tra", "pendigits.tes"):
        where = f"dataset 'pendigits' ({files[fname]})"
        parts.append(to_float(rectangular(_read_rows(files[fname], ","), where), where))
    table = np.vstack(parts)
    pool = table[np.isin(table[:, -1], digits)]
    rows = np.arange(len(pool))
    if 0 < n < len(pool):
        rows = np.sort(np.random.default_rng(subset_seed).choice(len(pool), n, replace=False))
    rule = ("pool = rows of pendigits.tra then pendigits.tes with digit in `digits`; keep "
            "pool[np.sort(np.random.default_rng(subset_seed).choice(len(pool), n, replace=False))]")
    return _dataset("pendigits", pool[rows, :-1], pool[rows, -1].astype(np.int64), "dataset 'pendigits'",
                    digits=sorted(set(digits)), n=n, pool_size=len(pool), subset_seed=subset_seed,
                    subset_rule=rule, **provenance("pendigits"))


def read_libsvm(path: Path, n_features: int) -> tuple[np.ndarray, np.ndarray]:
    """Parse a LIBSVM (svmlight) file into a dense float64 X (n x ``n_features``) and raw labels.

    Each line is ``label index:value ...`` with 1-based indices; absent entries are 0.
    """
    labels, rows, cols, vals = [], [], [], []
    with open(path) as fh:
        for i, line in enumerate(ln for ln in fh if ln.strip()):
            label, *pairs = line.split()
            labels.append(label)
            try:
                for pair in pairs:
                    k, v = pair.split(":")
                    rows.append(i)
                    cols.append(int(k) - 1)
                    vals.append(float(v))
            except ValueError:
                raise DataError(f"{path}: row {i} (0-based): {pair!r} is not an index:value pair; "
                                f"LIBSVM lines read 'label index:value ...'.") from None
    cols = np.asarray(cols, dtype=np.int64)
    if cols.size and (cols.min() < 0 or cols.max() >= n_features):
        raise DataError(f"{path}: feature index {int(cols.min() + 1 if cols.min() < 0 else cols.max() + 1)} "
                        f"is out of range; valid indices are 1..{n_features}.")
    X = np.zeros((len(labels), n_features))
    X[np.asarray(rows, dtype=np.int64), cols] = vals
    return X, np.asarray(labels)


Split = Literal["train", "test", "all"]


def _adult(k: int, split: Split) -> Dataset:
    name, base = f"adult_a{k}a", f"a{k}a"
    files = fetch(name)
    used = {"train": [base], "test": [base + ".t"], "all": [base, base + ".t"]}[split]
    parts = [read_libsvm(files[f], ADULT_FEATURES) for f in used]
    X = np.vstack([p[0] for p in parts])
    labels = np.concatenate([p[1] for p in parts])
    return _dataset(name, X, labels, f"dataset '{name}'", split=split, **provenance(name, used))


@datasets.register("adult_a1a", checks=Checks(alternatives={"split": "test"}))
def adult_a1a(*, split: Split = "train") -> Dataset:
    """LIBSVM adult a1a: UCI Adult, 123 binary features, 2 classes; 1605 train / 30956 test rows.

    Platt's (1998) binarization of UCI Adult (Kohavi 1996), from the LIBSVM site.
    ``adult_libsvm/a1a`` and ``a1a.t``: sparse LIBSVM format (1-based indices),
    returned dense; classes -1 (income <= 50K) and +1.

    Parameters
    ----------
    split : {"train", "test", "all"}
        ``a1a``, ``a1a.t``, or both concatenated (train first).
    """
    return _adult(1, split)


@datasets.register("adult_a2a", checks=Checks(alternatives={"split": "test"}))
def adult_a2a(*, split: Split = "train") -> Dataset:
    """LIBSVM adult a2a: UCI Adult, 123 binary features, 2 classes; 2265 train / 30296 test rows.

    As ``adult_a1a``, from ``adult_libsvm/a2a`` and ``a2a.t``.

    Parameters
    ----------
    split : {"train", "test", "all"}
        ``a2a``, ``a2a.t``, or both concatenated (train first).
    """
    return _adult(2, split)


@datasets.register("adult_a3a", checks=Checks(alternatives={"split": "test"}))
def adult_a3a(*, split: Split = "train") -> Dataset:
    """LIBSVM adult a3a: UCI Adult, 123 binary features, 2 classes; 3185 train / 29376 test rows.

    As ``adult_a1a``, from ``adult_libsvm/a3a`` and ``a3a.t``.

    Parameters
    ----------
    split : {"train", "test", "all"}
        ``a3a``, ``a3a.t``, or both concatenated (train first).
    """
    return _adult(3, split)


#: Sizes of LIBSVM's a4a, a5a, a6a training files (not in the catalogue: approximated below).
ADULT_APPROX_SIZES = {4: 4781, 5: 6414, 6: 11220}


def _adult_approx(k: int, subset_seed: int) -> Dataset:
    name, n = f"adult_a{k}a_approx", ADULT_APPROX_SIZES[k]
    pool = _adult(1, "all")
    rows = np.sort(np.random.default_rng(subset_seed).choice(pool.n, n, replace=False))
    rule = ("pool = adult_a1a split 'all' (a1a then a1a.t); keep "
            "pool[np.sort(np.random.default_rng(subset_seed).choice(len(pool), n, replace=False))]")
    return _dataset(name, pool.X[rows], np.asarray(pool.classes)[pool.y[rows]], f"dataset '{name}'",
                    approximates=f"a{k}a", source="a1a + a1a.t", subset_seed=subset_seed, n=n,
                    pool_size=pool.n, subset_rule=rule, **provenance("adult_a1a", ["a1a", "a1a.t"]))


@datasets.register("adult_a4a_approx", checks=Checks(alternatives={"subset_seed": 1}))
def adult_a4a_approx(*, subset_seed: NonNegativeInt = 0) -> Dataset:
    """An APPROXIMATION of LIBSVM adult a4a: 4781 random UCI Adult rows, 123 binary features, 2 classes.

    Not the LIBSVM ``a4a`` file, which is not available here: only its size (4781
    rows) is matched. The rows are drawn from ``adult_a1a`` split ``all``
    (``a1a`` + ``a1a.t``, all 32561 rows of UCI Adult in Platt's binarization), so
    the features and labels are the same as LIBSVM's but the row selection and the
    class balance differ from a4a's. Results on it must not be reported as a4a results.

    Subset rule: ``np.sort(np.random.default_rng(subset_seed).choice(32561, 4781,
    replace=False))`` indexes the pool (rows of ``a1a`` then ``a1a.t``); rows stay in
    pool order. ``meta`` records ``approximates``, ``source``, ``subset_seed`` and the rule.

    Parameters
    ----------
    subset_seed : int
        Seed of the draw (>= 0; independent of the experiment seed).
    """
    return _adult_approx(4, subset_seed)


@datasets.register("adult_a5a_approx", checks=Checks(alternatives={"subset_seed": 1}))
def adult_a5a_approx(*, subset_seed: NonNegativeInt = 0) -> Dataset:
    """An APPROXIMATION of LIBSVM adult a5a: 6414 random UCI Adult rows, 123 binary features, 2 classes.

    Not the LIBSVM ``a5a`` file: as ``adult_a4a_approx``, with 6414 rows (a5a's
    size) drawn from ``adult_a1a`` split ``all``. Results on it must not be
    reported as a5a results.

    Parameters
    ----------
    subset_seed : int
        Seed of the draw (>= 0; independent of the experiment seed).
    """
    return _adult_approx(5, subset_seed)


@datasets.register("adult_a6a_approx", checks=Checks(alternatives={"subset_seed": 1}))
def adult_a6a_approx(*, subset_seed: NonNegativeInt = 0) -> Dataset:
    """An APPROXIMATION of LIBSVM adult a6a: 11220 random UCI Adult rows, 123 binary features, 2 classes.

    Not the LIBSVM ``a6a`` file: as ``adult_a4a_approx``, with 11220 rows (a6a's
    size) drawn from ``adult_a1a`` split ``all``. Results on it must not be
    reported as a6a results.

    Parameters
    ----------
    subset_seed : int
        Seed of the draw (>= 0; independent of the experiment seed).
    """
    return _adult_approx(6, subset_seed)
