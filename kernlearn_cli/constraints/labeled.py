"""A labeled subset and its ideal kernel K*_l (Zhang et al. 2012, generalized Nystrom method)."""

from __future__ import annotations

from typing import Literal

import numpy as np

from ..errors import ConfigError, DataError
from ..params import Fraction, NonNegativeInt
from ..registry import Checks, constraints
from ..kinds import DIST_GE, DIST_LE, SIM_EQ
from ..types import Constraints


def labeled_indices(constraints: Constraints) -> np.ndarray:
    """The labeled set of a constraint set: the sorted unique indices appearing in
    ``constraints.i`` or ``constraints.j`` (and ``constraints.k`` for triplets, e.g. from
    ``neighbor_triplets``), as int64 -- for :func:`labeled_subset` exactly its labeled points."""
    cols = [constraints.i, constraints.j] + ([constraints.k] if constraints.has_triplets else [])
    return np.unique(np.concatenate([np.asarray(c, dtype=np.int64) for c in cols]))


def label_name(ds, c) -> str:
    if ds.classes is not None and 0 <= int(c) < len(ds.classes):
        return repr(ds.classes[int(c)])
    return repr(int(c))


@constraints.register("labeled_subset", checks=Checks(
    alternatives={"fraction": 0.5, "count": 12, "form": "distances", "epsilon": 0.5,
                  "every_class": True},
    unused={"epsilon": "only read with form: distances (the instance's base form is 'ideal')"},
    together={"fraction": {"count": 0, "fraction": 0.25}}, base={"count": 8}))
def labeled_subset(ds, G_ref, *, rng, fraction: Fraction = 0.0, count: NonNegativeInt = 0,
                   form: Literal["ideal", "distances"] = "ideal", epsilon: Fraction = 0.25,
                   every_class: bool = False) -> Constraints:
    """Zhang et al. (2012): a random labeled subset and the ideal kernel K*_l on it.

    Exactly one of ``fraction`` (0 < fraction < 1; round(fraction n) points) or ``count``
    (1 <= count < n points) sets the size of the labeled set, drawn uniformly without
    replacement with the cell's generator; every class must have a labeled point.

    Returned as equalities on the kernel entries of the labeled block, kind ``sim_eq``:
    K_ij = 1 when points i and j share a class (and on the diagonal), 0 otherwise, for
    every unordered pair i <= j of labeled points, in row-major order of the sorted
    labeled indices (i ascending, then j >= i ascending).  The labeled set is the set of
    indices appearing in the constraints (see :func:`labeled_indices`).

    ``every_class: true`` draws one random point of each class first and the rest uniformly
    among the remaining points, so small labeled sets of many-class data stay valid.

    ``form: distances`` turns the same labeled set into distance constraints for the
    Bregman solvers (the ``burg`` baseline on the same labels): every pair i < j, same class
    d(i, j) <= (1 - epsilon) b, different classes d(i, j) >= (1 + epsilon) b, b the squared
    distance under the reference kernel (as ``idealized_pairs``).

    Parameters
    ----------
    fraction : float
        The labeled fraction, 0 < fraction < 1; 0 (default) when ``count`` is given.
    count : int
        The number of labeled points, 1 <= count < n; 0 (default) when ``fraction`` is given.
    form : {"ideal", "distances"}
        Equalities on the kernel entries, or distance bounds pushed by ``epsilon``.
    epsilon : float
        The push of ``form: distances``, 0 <= epsilon < 1.
    every_class : bool
        One labeled point of each class first.
    """
    y = ds.labels("constraint generator 'labeled_subset'")
    n = ds.n
    if fraction and count:
        raise ConfigError(f"constraint generator 'labeled_subset': set exactly one of constraints.fraction "
                          f"(0 < fraction < 1) and constraints.count (1 <= count < {n}), not both; got "
                          f"fraction = {fraction}, count = {count}.")
    if not fraction and not count:
        raise ConfigError(f"constraint generator 'labeled_subset': set exactly one of constraints.fraction "
                          f"(0 < fraction < 1) or constraints.count (1 <= count < {n}); both are 0.")
    if fraction:
        m = int(round(fraction * n))
        if not 1 <= m < n:
            raise ConfigError(f"constraint generator 'labeled_subset': constraints.fraction = {fraction} gives "
                              f"{m} labeled points of {n}; valid sizes are 1 .. {n - 1}. Change fraction or "
                              "use constraints.count.")
    else:
        if count >= n:
            raise ConfigError(f"constraint generator 'labeled_subset': constraints.count must satisfy "
                              f"1 <= count < {n} (the number of points of dataset '{ds.name}'), got {count}.")
        m = int(count)
    if every_class:
        classes = np.unique(y)
        if m < len(classes):
            raise ConfigError(f"constraint generator 'labeled_subset': every_class needs at least {len(classes)} "
                              f"labeled points (one per class), got {m}.")
        first = np.array([rng.choice(np.flatnonzero(y == c)) for c in classes], dtype=np.int64)
        rest = np.setdiff1d(np.arange(n), first)
        idx = np.sort(np.concatenate([first, rng.choice(rest, size=m - len(first), replace=False)])).astype(np.int64)
    else:
        idx = np.sort(rng.choice(n, size=m, replace=False)).astype(np.int64)
    missing = np.setdiff1d(np.unique(y), np.unique(y[idx]))
    if missing.size:
        names = ", ".join(label_name(ds, c) for c in missing)
        raise DataError(f"constraint generator 'labeled_subset': no labeled point of class {names} among the "
                        f"{m} labeled points of dataset '{ds.name}'; raise count/fraction.")
    a, b = np.triu_indices(m, k=0 if form == "ideal" else 1)
    i, j = idx[a], idx[b]
    same = y[i] == y[j]
    if form == "distances":
        diff = G_ref[i] - G_ref[j]
        d = np.einsum("ij,ij->i", diff, diff)
        kind = np.where(same, DIST_LE, DIST_GE).astype(np.int8)
        return Constraints(i, j, kind, np.where(same, (1 - epsilon) * d, (1 + epsilon) * d))
    return Constraints(i, j, np.full(len(i), SIM_EQ, dtype=np.int8), same.astype(np.float64))
