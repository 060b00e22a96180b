"""Must-link / cannot-link pairs for pairwise constraint propagation (Hu & Kwok 2013, Sec. 4)."""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from ..params import NonNegativeInt, Positive
from ..registry import Checks, constraints
from ..kinds import SIM_EQ
from ..types import Constraints


def _distinct_pairs(y: np.ndarray, count: int, same: bool, rng: np.random.Generator) -> np.ndarray:
    """``count`` distinct unordered pairs i < j with equal (``same``) or different labels, uniformly
    among all such pairs: candidates are drawn in seeded batches and filtered (rejection sampling)."""
    n = len(y)
    counts = np.bincount(y)
    available = (int((counts * (counts - 1) // 2).sum()) if same
                 else int((n * (n - 1) - (counts * (counts - 1)).sum()) // 2))
    if count > available:
        what = "same-class" if same else "different-class"
        raise ConfigError(f"constraints: {count} {what} pairs requested, but the labels allow only {available}.")
    chosen: dict[tuple[int, int], None] = {}
    while len(chosen) < count:
        a = rng.integers(0, n, size=2 * count + 16)
        b = rng.integers(0, n, size=2 * count + 16)
        for i, j in zip(a.tolist(), b.tolist()):
            if i != j and (y[i] == y[j]) == same:
                chosen.setdefault((min(i, j), max(i, j)))
                if len(chosen) == count:
                    break
    return np.array(list(chosen), dtype=np.int64).reshape(-1, 2)


@constraints.register("must_cannot", checks=Checks(alternatives={"fraction": 0.3, "count": 10}))
def must_cannot(ds, G_ref, *, rng, fraction: Positive = 0.6, count: NonNegativeInt = 0) -> Constraints:
    """Hu & Kwok (2013) / Hoi et al. (2007): round(fraction n) must-link pairs from the same class,
    as many cannot-link pairs from different classes, and the n pairs (i, i).

    ``count`` > 0 fixes the number of must-link plus cannot-link pairs instead (count // 2
    must-link, the rest cannot-link), as in the scalability runs of Sec. 4.2.

    Returned as equalities on the kernel entries, the targets T of eq. (2): K_ij = 1 (must-link
    and (i, i)), K_ij = 0 (cannot-link), kind ``sim_eq``; each unordered pair once.

    Parameters
    ----------
    fraction : float
        Must-link pairs per point (> 0).
    count : int
        Must-link plus cannot-link pairs (>= 0); 0 (default) takes them from ``fraction``.
    """
    y = np.unique(ds.labels("constraint generator 'must_cannot'"), return_inverse=True)[1]
    n_must = count // 2 if count else int(round(fraction * ds.n))
    n_cannot = count - count // 2 if count else n_must
    must = _distinct_pairs(y, n_must, True, rng)
    cannot = _distinct_pairs(y, n_cannot, False, rng)
    diag = np.repeat(np.arange(ds.n, dtype=np.int64)[:, None], 2, axis=1)
    ij = np.vstack([must, cannot, diag])
    T = np.concatenate([np.ones(len(must)), np.zeros(len(cannot)), np.ones(ds.n)])
    return Constraints(ij[:, 0].copy(), ij[:, 1].copy(), np.full(len(T), SIM_EQ, dtype=np.int8), T)
