"""Datasets bundled with scikit-learn (no download)."""

from __future__ import annotations

import numpy as np

from ..registry import datasets
from ..types import Dataset
from ._validate import check_finite


def _sklearn(name: str) -> Dataset:
    import sklearn
    from sklearn import datasets as skd

    bunch = getattr(skd, f"load_{name}")()
    return Dataset(name, X=check_finite(bunch.data, f"dataset '{name}'"),
                   y=np.asarray(bunch.target, dtype=np.int64), classes=np.asarray(bunch.target_names).tolist(),
                   meta={"source": f"sklearn.datasets.load_{name}", "sklearn_version": sklearn.__version__})


@datasets.register("iris")
def iris() -> Dataset:
    """Fisher's iris: 150 x 4, 3 classes of 50 (scikit-learn's copy).

    The values are those of UCI ``bezdekIris.data`` (rows 35 and 38 as in Fisher's
    paper), not UCI ``iris.data``.
    """
    return _sklearn("iris")


@datasets.register("wine")
def wine() -> Dataset:
    """UCI Wine: 178 x 13, 3 cultivars (59, 71, 48) (scikit-learn's copy).

    Same values as UCI ``wine.data``; classes are named class_0..class_2 for UCI's 1..3.
    """
    return _sklearn("wine")


@datasets.register("breast_cancer")
def breast_cancer() -> Dataset:
    """Breast Cancer Wisconsin (Diagnostic, WDBC): 569 x 30, 2 classes (scikit-learn's copy).

    Malignant 212, benign 357. Not the 699 x 9 original: see ``breast_cancer_wisconsin``.
    """
    return _sklearn("breast_cancer")


@datasets.register("digits")
def digits() -> Dataset:
    """Optical handwritten digits (optdigits 8 x 8): 1797 x 64, 10 classes (scikit-learn's copy).

    Not pendigits: see ``pendigits``.
    """
    return _sklearn("digits")
