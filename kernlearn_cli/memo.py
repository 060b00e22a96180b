"""The per-process memo of datasets and initial factors, keyed by their settings.

A cell's dataset (its loader and settings, ``subset`` and ``holdout``: :func:`dataset_key`) and its
initial factor (K0's kernel and settings, :func:`component_key`) are computed once per process and
working directory and shared by the cells that name them (:func:`load_dataset`,
:func:`initial_factor`); a changed input file clears both.  The components are pure functions, so
the memo changes no number.
"""

from __future__ import annotations

import json
import os
from functools import lru_cache

import numpy as np

from .inputs import changed_inputs


def component_key(entry, params) -> str:
    return json.dumps([entry.name, params], sort_keys=True, default=str)


def dataset_key(bound: dict) -> str:
    """The key of a cell's dataset (:func:`load_dataset`): its loader and settings, and the ``subset``
    setting when the config gives one (:mod:`kernlearn_cli.data.subset`); then the ``holdout``
    setting when it gives one (:mod:`kernlearn_cli.data.holdout`, applied after the subset)."""
    entry, params = bound["dataset"]
    if "holdout" in bound:
        return json.dumps([entry.name, params, bound.get("subset"), bound["holdout"]], sort_keys=True, default=str)
    if "subset" not in bound:
        return component_key(*bound["dataset"])
    return json.dumps([entry.name, params, bound["subset"]], sort_keys=True, default=str)


def load_dataset(key: str):
    """The dataset of ``key``, memoised per process and working directory (relative paths are read
    from it); loaded again (with the initial factors built from it) when a file it was read from has
    changed since (``meta["inputs"]``)."""
    ds = _load_dataset_cached(key, os.getcwd())
    if changed_inputs({"inputs": ds.meta.get("inputs")}):
        _load_dataset_cached.cache_clear()
        _initial_factor_cached.cache_clear()
        ds = _load_dataset_cached(key, os.getcwd())
    return ds


@lru_cache(maxsize=8)
def _load_dataset_cached(key: str, cwd: str):
    from .registry import datasets

    name, params, *subset = json.loads(key)
    if len(subset) == 2:                 # a holdout: split the dataset (memoised without it) afterwards
        from .data.holdout import split_holdout

        base = json.dumps([name, params, subset[0]] if subset[0] else [name, params], sort_keys=True, default=str)
        return split_holdout(_load_dataset_cached(base, cwd), **subset[1], where=f"dataset '{name}': holdout")
    ds = datasets.get(name).func(**params)
    if subset:
        from .data.subset import stratified_subset

        ds = stratified_subset(ds, **subset[0], where=f"dataset '{name}': subset")
    return ds


def initial_factor(dataset_key: str, kernel_key: str) -> np.ndarray:
    """K0's factor, memoised like :func:`load_dataset` (which it calls first, so a changed data file
    also clears the factors built from it)."""
    load_dataset(dataset_key)
    return _initial_factor_cached(dataset_key, kernel_key, os.getcwd())


@lru_cache(maxsize=8)
def _initial_factor_cached(dataset_key: str, kernel_key: str, cwd: str) -> np.ndarray:
    from .registry import kernels

    name, params = json.loads(kernel_key)
    G = kernels.get(name).func(load_dataset(dataset_key), **params)
    G.setflags(write=False)
    return G
