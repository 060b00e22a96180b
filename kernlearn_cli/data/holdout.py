"""Points held out of a cell's data and scored afterwards: the ``holdout`` setting every dataset takes.

    dataset: {name: sonar, holdout: {fraction: 0.2, seen: false}}
    dataset: {name: sonar, holdout: {size: 40, seed: 3, seen: true}}

The held-out rows are a stratified draw of ``size`` points (or ``round(fraction n)``), drawn as a
``subset`` is (:func:`kernlearn_cli.data.subset.subset_rows`, ``numpy.random.default_rng(seed)``;
``seed`` defaults to the cell's seed, so each repetition holds out other points).  The other rows,
in file order, are the *training part*.

- ``seen: false`` (default, inductive): the cell's dataset is the training part alone; K0, the
  constraints, the solver (its landmarks) and the evaluators' training points never see the held-out
  rows.  They are kept on the dataset (``Dataset.heldout``) and mapped after the solve through the
  learned kernel's inductive map (:func:`kernlearn_cli.inductive.result_rows`: E_x S^{1/2} for the
  Nyström solvers, Zhang et al. 2012, Bilateral Extrapolation; g0(x) L through K0 otherwise).
- ``seen: true`` (transductive twin): the cell's dataset is the training part followed by the
  held-out rows, so the solver computes their rows with everyone else's (landmarks drawn among
  them too); but the constraints are drawn from the training part only (the same labeled points
  as ``seen: false`` at the same seed) and the held-out rows are scored the same way.

Evaluators that score held-out points (``svm_accuracy``: ``svm_accuracy_heldout``,
``svm_accuracy_cv_heldout``) train on the labeled points of the training part and score the
held-out rows; their usual scores are on the training part's other points in both modes.
A cell whose held-out rows must be mapped (``seen: false``) needs an inductive solver.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import ConfigError, DataError
from ..params import Fraction, NonNegativeInt, compile_check
from ..types import Dataset
from .subset import subset_rows

#: The keys of ``holdout`` and what each accepts: exactly one of ``size`` and ``fraction``;
#: ``seed`` defaults to the cell's seed, ``seen`` to false.
KEYS = {"size": NonNegativeInt, "fraction": Fraction, "seed": NonNegativeInt, "seen": bool}


def check_holdout(spec, seed: int, where: str) -> dict:
    """``spec`` validated as ``{size | fraction, seed, seen}`` (``seed`` = the cell's ``seed`` when
    absent, ``seen`` false); a :class:`~kernlearn_cli.errors.ConfigError` naming ``where`` and the key
    otherwise.  The size is checked against the dataset when it is loaded (:func:`split_holdout`)."""
    example = "e.g. {fraction: 0.2, seen: false} or {size: 40, seed: 0, seen: true}"
    if not isinstance(spec, dict):
        raise ConfigError(f"{where}: expected a mapping with the held-out points' size or fraction, {example}; "
                          f"got {spec!r}.")
    unknown = sorted(set(spec) - set(KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key '{unknown[0]}'. Valid keys: {', '.join(KEYS)}.")
    out = {key: compile_check(tp)(spec[key], f"{where}.{key}") for key, tp in KEYS.items() if key in spec}
    if bool(out.get("size")) == bool(out.get("fraction")):
        raise ConfigError(f"{where}: give exactly one of size (a count, >= 1) and fraction (0 < fraction < 1) "
                          f"of held-out points, {example}; got {spec!r}.")
    return {"size": out.get("size", 0), "fraction": out.get("fraction", 0.0),
            "seed": out.get("seed", int(seed)), "seen": out.get("seen", False)}


def holdout_size(n: int, y: np.ndarray | None, size: int, fraction: float, where: str) -> int:
    """The number of held-out points of a dataset of ``n`` points: ``size``, or ``round(fraction n)``.

    Raises
    ------
    ConfigError
        Not below ``n`` (no training point would be left), or below the number of classes (a
        stratified draw holds out a point of every class).
    """
    m = size if size else int(round(fraction * n))
    what = f"size {size}" if size else f"fraction {fraction} (round({fraction} × {n}) = {m} points)"
    classes = 0 if y is None else int(np.unique(y).size)
    if m >= n:
        raise ConfigError(f"{where}: {what} holds out {m} of the dataset's {n} points, leaving none to learn "
                          f"from; give fewer than {n}.")
    if m < max(classes, 1):
        raise ConfigError(f"{where}: {what} holds out {m} point(s), fewer than the dataset's {classes} classes; "
                          f"the draw is stratified (each class in proportion), so give at least {classes}.")
    return m


def split_holdout(ds: Dataset, size: int, fraction: float, seed: int, seen: bool, where: str) -> Dataset:
    """``ds`` with held-out rows (module docstring): the training part (``seen`` false) or the
    training part followed by the held-out rows (``seen`` true), with ``heldout`` the held-out
    points' own dataset and ``meta["holdout"]`` the size, seed, mode and the dataset's own size."""
    m = holdout_size(ds.n, ds.y, size, fraction, where)
    if not seen and ds.X is None:
        raise ConfigError(f"{where}: dataset '{ds.name}' is a kernel matrix without features, so held-out "
                          f"points (seen: false) have no rows of a learned kernel; use seen: true or features.")
    try:
        held = subset_rows(ds.y, ds.n, m, seed, where)
    except DataError as exc:
        raise ConfigError(f"{exc} (holdout: a stratified draw)") from None
    train = np.setdiff1d(np.arange(ds.n), held)
    rows = train if not seen else np.concatenate([train, held])

    def take(r):
        return dict(X=None if ds.X is None else ds.X[r], y=None if ds.y is None else ds.y[r],
                    K=None if ds.K is None else ds.K[np.ix_(r, r)])

    info = {"size": int(m), "seed": int(seed), "seen": bool(seen), "of": ds.n}
    heldout = replace(ds, **take(held), meta={**ds.meta, "heldout_of": ds.n})
    return replace(ds, **take(rows), heldout=heldout, meta={**ds.meta, "holdout": info})


def training_part(ds: Dataset) -> Dataset:
    """The rows of ``ds`` the constraints are drawn from: all of them, but with ``seen: true`` the
    training part only (the first n − size rows), so both modes label the same points."""
    info = ds.meta.get("holdout")
    if not info or not info["seen"]:
        return ds
    k = ds.n - info["size"]
    return replace(ds, X=None if ds.X is None else ds.X[:k], y=None if ds.y is None else ds.y[:k],
                   K=None if ds.K is None else ds.K[:k, :k], heldout=None)


def training_count(ds: Dataset) -> int:
    """How many of the solver's points are the training part (n, or n − size with ``seen: true``)."""
    info = ds.meta.get("holdout")
    return ds.n - info["size"] if info and info["seen"] else ds.n
