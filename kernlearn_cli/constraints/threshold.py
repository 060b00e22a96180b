r"""Threshold constraints on all close pairs (Tsuda, Rätsch & Warmuth 2005, Sec. 5, Fig. 3).

Tsuda et al. learn a trace-one d x d kernel W (d = number of objects, W1 = I/d) under

.. math::

    \operatorname{tr}(W C_j) \le 0,\qquad C_j = X_j - \gamma I,\qquad
    X_j = \tfrac12 (e_a - e_b)(e_a - e_b)^T,

i.e. (with tr W = 1) the half squared feature-space distance ½‖x_a − x_b‖² = tr(W X_j) is at
most γ, for every pair (a, b) "whose distance in the feature space is less than γ" under the
target kernel, with γ = 0.2/d (980 pairs on the 52 GyrB proteins). The paper's prose writes the
constraint as ‖x_a − x_b‖ ≤ γ; the matrices C_j, whose eigenvalues it gives as 1 − γ and −γ,
fix the measured quantity as tr(W X_j) = ½ d(a, b), and we select pairs by that same quantity, so
the target kernel meets every constraint it generated (the set is feasible).

In kernlearn's terms: the reference kernel K_ref (the target) is normalised to trace one,
T = K_ref / tr K_ref, pairs i < j with ½ (T_ii + T_jj − 2 T_ij) < γ are kept, and each gives a
``dist_le`` constraint on the learned kernel K with bound 2 γ n — the same constraint for
W = K / n, i.e. for kernels of trace n (mean diagonal one): the scaled identity K0 = I, a
unit-diagonal RBF or a normalised GyrB kernel. DefiniteBoost keeps tr K = tr K0, so start it from
such a K0 (``kernel: {name: identity, scale: 1.0}``) for the constraints to be Tsuda's exactly.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError, DataError
from ..params import Positive
from ..registry import Checks, constraints
from ..kinds import DIST_LE
from ..types import Constraints


def close_pairs(G: np.ndarray, gamma: float, trace: float) -> tuple[np.ndarray, np.ndarray]:
    """All pairs i < j with ½ d(i, j) / ``trace`` < ``gamma`` under K = G Gᵀ, sorted by (i, j).

    A k-d tree on the rows of G finds the candidates (``scipy.spatial.cKDTree.query_pairs``, time
    about n log n plus the pairs it returns, memory O(n r) plus the pairs: no n x n array). Each
    candidate's ½ d(i, j) = ½ (‖g_i‖² + ‖g_j‖² − 2 g_iᵀ g_j) is then computed once more, by the
    formula that defines the constraints, and compared strictly; the tree's radius
    carries a margin of 1e-10 ‖g‖²_max so no pair at the bound is lost to its rounding.
    """
    from scipy.spatial import cKDTree

    sq = np.einsum("ij,ij->i", G, G)
    radius = np.sqrt(2.0 * gamma * trace + 1e-10 * float(sq.max(initial=0.0)))
    pairs = cKDTree(G).query_pairs(radius, output_type="ndarray")
    i, j = np.minimum(pairs[:, 0], pairs[:, 1]), np.maximum(pairs[:, 0], pairs[:, 1])
    half = 0.5 * np.maximum(sq[i] + sq[j] - 2.0 * np.einsum("ij,ij->i", G[i], G[j]), 0.0)
    keep = half / trace < gamma
    i, j = i[keep], j[keep]
    order = np.lexsort((j, i))
    return i[order].astype(np.int64), j[order].astype(np.int64)


@constraints.register("threshold_pairs", checks=Checks(alternatives={"gamma": 5.0, "gamma_scale": 0.5}))
def threshold_pairs(ds, G_ref, *, rng, gamma: Positive | None = None, gamma_scale: Positive = 0.2) -> Constraints:
    """All close pairs of the reference kernel as distance bounds (Tsuda et al. 2005, Sec. 5).

    Every pair i < j with ½ d_T(i, j) < γ under the trace-one reference T = K_ref / tr K_ref gives
    the constraint d_K(i, j) <= 2 γ n (½ d_W <= γ for W = K / n, i.e. for kernels of trace n).
    Deterministic: all pairs, no sampling, found by a k-d tree (:func:`close_pairs`) in time about
    n log n plus the pairs found, with no n x n array.

    Parameters
    ----------
    gamma : float, optional
        The threshold γ (> 0) on half squared distances of trace-one kernels. When given it
        overrides ``gamma_scale``.
    gamma_scale : float
        γ = gamma_scale / d (> 0), d = the number of objects (Tsuda et al.: 0.2 / d).
    """
    n = ds.n
    G = np.asarray(G_ref, dtype=np.float64)
    if G.shape[0] != n:
        raise DataError(f"constraint generator 'threshold_pairs': the reference kernel has {G.shape[0]} rows, "
                        f"but dataset '{ds.name}' has {n} points.")
    if gamma is None:
        gamma = gamma_scale / n
    trace = float(np.einsum("ij,ij->", G, G))
    if not (np.isfinite(trace) and trace > 0):
        raise DataError(f"constraint generator 'threshold_pairs': the reference kernel has trace {trace}; "
                        "it must be finite and > 0 to be normalised to trace one.")
    i, j = close_pairs(G, gamma, trace)
    if i.size == 0:
        raise ConfigError(f"constraint generator 'threshold_pairs': no pair of the {n} points is closer than "
                          f"gamma = {gamma:.6g} (half squared distance of the trace-one reference kernel); "
                          "raise constraints.gamma_scale (or constraints.gamma).")
    return Constraints(i, j, np.full(i.size, DIST_LE), np.full(i.size, 2.0 * gamma * n))
