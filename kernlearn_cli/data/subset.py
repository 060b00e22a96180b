"""A stratified random subset of any dataset: the ``subset`` setting every dataset takes.

    dataset: {name: wine, subset: {size: 52, seed: 0}}

Class c (in the order of its code) keeps m_c = size n_c / n of its n_c points, rounded by largest
remainder (equal remainders: the smaller code first), drawn without replacement by
``numpy.random.default_rng(seed).choice`` over the class's rows and kept in file order; the subset
lists class 0's rows, then class 1's, and so on.  A dataset without labels gets ``size`` rows drawn
the same way, in file order.  The subset's rows are the dataset's points for everything after the
loader (K0, constraints, evaluators), and a data file the loader read is still watched for edits.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import ConfigError, DataError
from ..params import NonNegativeInt, PositiveInt, compile_check
from ..types import Dataset

#: The keys of ``subset`` and what each accepts (``seed`` defaults to 0); ``kernlearn list datasets``
#: describes the setting from :data:`kernlearn_cli.registry.datasets`' ``shared``.
KEYS = {"size": PositiveInt, "seed": NonNegativeInt}


def check_subset(spec, where: str) -> dict:
    """``spec`` validated as ``{"size": N, "seed": S}`` (seed 0 when absent); a
    :class:`~kernlearn_cli.errors.ConfigError` naming ``where`` and the key otherwise."""
    if not isinstance(spec, dict) or "size" not in spec:
        raise ConfigError(f"{where}: expected a mapping with the subset's size, e.g. {{size: 52, seed: 0}}, "
                          f"got {spec!r}.")
    unknown = sorted(set(spec) - set(KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key '{unknown[0]}'. Valid keys: {', '.join(KEYS)}.")
    return {key: compile_check(tp)(spec.get(key, 0), f"{where}.{key}") for key, tp in KEYS.items()}


def subset_rows(y: np.ndarray | None, n: int, size: int, seed: int, where: str) -> np.ndarray:
    """The rows of the stratified subset (module docstring) of ``n`` points with labels ``y``."""
    if size > n:
        raise DataError(f"{where}: subset size {size} is larger than the dataset ({n} points); give at most {n}.")
    rng = np.random.default_rng(seed)
    if y is None:
        return np.sort(rng.choice(n, size, replace=False))
    counts = np.bincount(y)
    exact = size * counts / n
    m = np.floor(exact).astype(int)
    m[np.argsort(-(exact - m), kind="stable")[:size - m.sum()]] += 1
    if np.any(m[counts > 0] == 0):
        raise DataError(f"{where}: a subset of {size} points leaves out class(es) "
                        f"{', '.join(str(c) for c in np.flatnonzero((m == 0) & (counts > 0)))} (class sizes "
                        f"{', '.join(map(str, counts))}); give a larger size.")
    return np.concatenate([np.sort(rng.choice(np.flatnonzero(y == c), m[c], replace=False))
                           for c in range(counts.size)])


def stratified_subset(ds: Dataset, size: int, seed: int, where: str) -> Dataset:
    """``ds`` restricted to :func:`subset_rows`; ``meta["subset"]`` records the size, seed and the
    dataset's own size."""
    rows = subset_rows(ds.y, ds.n, size, seed, where)
    return replace(ds, X=None if ds.X is None else ds.X[rows], y=None if ds.y is None else ds.y[rows],
                   K=None if ds.K is None else ds.K[np.ix_(rows, rows)],
                   meta={**ds.meta, "subset": {"size": size, "seed": seed, "of": ds.n}})
