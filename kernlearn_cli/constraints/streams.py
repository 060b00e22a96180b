r"""On-line example streams: constraint sets whose order is the order of time.

The generators here return :class:`~kernlearn_cli.types.Constraints` like every
other generator, but the rows are *examples shown one per trial* to an on-line
learner (e.g. the ``meg`` solver): row t is the example of trial t + 1, so the
order of the rows is part of the result.
"""

from __future__ import annotations

import numpy as np

from ..errors import DataError
from ..params import PositiveInt
from ..registry import Checks, constraints
from ..kinds import DIST_EQ
from ..types import Constraints


def random_ordered_pairs(n: int, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``count`` ordered pairs (i, j), i != j, uniform and independent (with replacement).

    One draw u ~ U{0, ..., n(n-1) - 1} per pair, i = u // (n-1), j = u mod (n-1) shifted
    past i.  One draw per pair makes the stream *prefix-stable*: the first k pairs of a
    stream of any length >= k are the same for the same generator state.
    """
    u = rng.integers(0, n * (n - 1), size=count)
    i, j = np.divmod(u, n - 1)
    j = j + (j >= i)
    return i.astype(np.int64), j.astype(np.int64)


@constraints.register("distance_stream", checks=Checks(alternatives={"count": 50}))
def distance_stream(ds, G_ref, *, rng, count: PositiveInt = 1000) -> Constraints:
    r"""Random entries of a target kernel as quantitative distance examples (Tsuda et al. 2005, Sec. 5).

    Example t is a pair (a_t, b_t), a_t != b_t, drawn uniformly and independently (with
    replacement across time, as an on-line stream) with the cell's random stream, and its
    label is the squared feature-space distance under the reference kernel K = G_ref G_refᵀ,

    .. math::  y_t = K_{a_t a_t} + K_{b_t b_t} - 2 K_{a_t b_t},

    returned as a ``dist_eq`` constraint with bound y_t -- unscaled: a learner that keeps a
    trace-one parameter (``meg``) rescales them itself.  **The rows are in time order**
    (row t is trial t + 1), and the stream is prefix-stable: for the same seed, the first k
    examples of a stream of ``count`` >= k are the stream of ``count`` = k, so running the
    first k examples of a long stream is running a stream of length k.  Labels are not needed.

    Parameters
    ----------
    count : int
        Number of examples T (>= 1).
    """
    n = int(G_ref.shape[0])
    if n < 2:
        raise DataError(f"constraint generator 'distance_stream' needs at least 2 points, but dataset "
                        f"'{ds.name}' has {n}.")
    G = np.asarray(G_ref, dtype=np.float64)
    if not np.all(np.isfinite(G)):
        raise DataError("constraint generator 'distance_stream': the reference kernel has non-finite entries.")
    i, j = random_ordered_pairs(n, int(count), rng)
    diff = G[i] - G[j]
    y = np.einsum("ij,ij->i", diff, diff)
    return Constraints(i, j, np.full(int(count), DIST_EQ, dtype=np.int8), y)
