"""Pairwise distance constraints from labels (Kulis et al. 2006, Sec. 6) and from CSV files."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated

import numpy as np

from ..errors import ConfigError, DataError
from ..inputs import input_files
from ..kinds import DIST_GE, DIST_LE, PAIR_KINDS
from ..params import Fraction, Interval, Length, PositiveInt
from ..registry import Checks, constraints
from ..types import Constraints


def sample_pairs(n: int, count: int, rng: np.random.Generator, keep=None) -> tuple[np.ndarray, np.ndarray]:
    """``count`` distinct unordered pairs i < j drawn uniformly without replacement.

    ``keep(i, j)`` (optional) returns a boolean mask of the pairs that may be used; a drawn pair
    it refuses is replaced by further draws among the pairs not drawn yet, so the result is
    uniform over the admissible pairs, and a draw with no refused pair is the draw without
    ``keep`` (same pairs, same order).

    Raises
    ------
    ConfigError
        ``count`` exceeds the number of (admissible) pairs.
    """
    total = n * (n - 1) // 2
    if count > total:
        raise ConfigError(f"constraints.count = {count} exceeds the {total} distinct pairs of {n} points.")
    if total <= 5_000_000:
        iu, ju = np.triu_indices(n, k=1)
        drawn = np.zeros(total, dtype=bool)
        pick = rng.choice(total, size=count, replace=False)
        chosen = []
        while True:
            drawn[pick] = True
            chosen.append(pick if keep is None else pick[keep(iu[pick], ju[pick])])
            short = count - sum(map(len, chosen))
            if short == 0:
                break
            rest = np.flatnonzero(~drawn)
            if rest.size == 0:
                raise ConfigError(f"constraints.count = {count} exceeds the {count - short} usable pairs "
                                  f"of {n} points (pairs of coincident points carry no bound).")
            pick = rng.choice(rest, size=min(short, rest.size), replace=False)
        pick = np.concatenate(chosen)
        return iu[pick], ju[pick]
    seen: dict[tuple[int, int], None] = {}
    refused: set[tuple[int, int]] = set()
    while len(seen) < count:
        if len(seen) + len(refused) >= total:
            raise ConfigError(f"constraints.count = {count} exceeds the {len(seen)} usable pairs of {n} points "
                              f"(pairs of coincident points carry no bound).")
        a, b = rng.integers(0, n, size=2)
        if a == b:
            continue
        pair = (min(a, b), max(a, b))
        if pair in seen or pair in refused:
            continue
        if keep is None or keep(np.array([pair[0]]), np.array([pair[1]]))[0]:
            seen[pair] = None
        else:
            refused.add(pair)
    ij = np.array(list(seen), dtype=np.int64)
    return ij[:, 0], ij[:, 1]


def _squared_distances(G: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    diff = G[i] - G[j]
    return np.einsum("ij,ij->i", diff, diff)


def _labelled_pairs(ds, G_ref, rng, count: int, epsilon: float, name: str) -> Constraints:
    y = ds.labels(f"constraint generator '{name}'")
    # coincident points (distance 0 under the reference, e.g. iris rows 101 and 142) give a bound of 0:
    # met by every kernel that keeps them coincident, refused by the slack solvers; draw others instead
    i, j = sample_pairs(ds.n, count, rng, keep=lambda i, j: _squared_distances(G_ref, i, j) > 0)
    b = _squared_distances(G_ref, i, j)
    same = y[i] == y[j]
    kind = np.where(same, DIST_LE, DIST_GE)
    bound = np.where(same, (1.0 - epsilon) * b, (1.0 + epsilon) * b)
    return Constraints(i, j, kind, bound)


@constraints.register("random_pairs", checks=Checks(alternatives={"count": 20}))
def random_pairs(ds, G_ref, *, rng, count: PositiveInt = 100) -> Constraints:
    """Random labelled pairs, Kulis et al. Sec. 6 (GyrB): same class d(i,j) <= b, else d(i,j) >= b.

    b is the squared feature-space distance under the reference kernel.  Pairs
    are ``count`` distinct unordered pairs drawn uniformly, seeded by the cell's seed, among the
    pairs of points that do not coincide under the reference (a pair at distance 0 has bound 0,
    which every kernel keeping the two points together meets and no slack solver accepts).

    The reference must differ from the initial kernel: with the default (the reference *is*
    the initial kernel) every bound equals the current distance, K0 already meets every
    constraint and the solver returns K0 (``kernlearn run`` warns).  The working recipe on
    one's own data, as in the paper (GyrB: bounds from one kernel, learning from another)::

        kernel:      {name: linear}
        constraints: {name: random_pairs, count: 200, reference: {name: rbf}}

    or ``idealized_pairs``, whose bounds are pushed by ``epsilon`` from any reference.

    Parameters
    ----------
    count : int
        Number of pairs (>= 1).
    """
    return _labelled_pairs(ds, G_ref, rng, count, 0.0, "random_pairs")


@constraints.register("idealized_pairs", checks=Checks(alternatives={"count": 20, "epsilon": 0.5}))
def idealized_pairs(ds, G_ref, *, rng, count: PositiveInt = 100, epsilon: Fraction = 0.25) -> Constraints:
    """Random labelled pairs pushed toward an ideal kernel (Kulis et al. Sec. 6, Digits).

    Same class d(i,j) <= (1 - epsilon) b, different class d(i,j) >= (1 + epsilon) b,
    b the reference squared distance; pairs of coincident points are not drawn (as in
    :func:`random_pairs`).

    Parameters
    ----------
    count : int
        Number of pairs (>= 1).
    epsilon : float
        The push, 0 <= epsilon < 1 (0 gives the bounds of ``random_pairs``).
    """
    return _labelled_pairs(ds, G_ref, rng, count, epsilon, "idealized_pairs")


#: ``itml_pairs``' (u, l) percentiles: two numbers in [0, 100].
Percentiles = Annotated[list[Annotated[float, Interval(0, 100)]], Length(2, 2)]


@constraints.register("itml_pairs", checks=Checks(alternatives={"count": 20, "percentiles": [10.0, 90.0]}))
def itml_pairs(ds, G_ref, *, rng, count: PositiveInt = 100, percentiles: Percentiles = (5.0, 95.0)) -> Constraints:
    r"""Random labelled pairs with ITML's thresholds (Davis et al. 2007; Li et al. 2009, Sec. 6.1).

    ``count`` distinct unordered pairs (i, j) are drawn uniformly by :func:`sample_pairs` with the
    cell's generator, among the pairs that do not coincide under the reference kernel
    K_ref = G_ref G_refᵀ (the initial kernel K0 unless the config gives ``reference``):

    .. math::  d_0(i, j) = (e_i - e_j)^T K_{ref} (e_i - e_j) = \lVert g_i - g_j \rVert^2 > \tau,
               \qquad \tau = 10^{-12}\, \tfrac{1}{n} \textstyle\sum_k \lVert g_k \rVert^2,

    (g_k the rows of G_ref; τ only absorbs rounding, duplicate feature vectors give d_0 = 0). Such
    a pair can never be moved apart by a kernel in the range of K0, so a dissimilar one would be
    unsatisfiable (``burg`` raises, the ITML loss ψ of ``trin`` is infinite at 0). With (p_u, p_l)
    = ``percentiles``, the thresholds are percentiles of the drawn pairs' reference distances,

    .. math::  u = P_{p_u}\{d_0(i_q, j_q)\}_{q=1}^{c}, \qquad l = P_{p_l}\{d_0(i_q, j_q)\}_{q=1}^{c}

    (``numpy.percentile``, linear interpolation), and each pair gives one constraint on the learned
    kernel K: same class d_K(i, j) <= u (``dist_le``), different classes d_K(i, j) >= l
    (``dist_ge``). These are ITML's constraints (its defaults p_u = 5, p_l = 95) and the ITML row
    of Li et al.'s Table 2, where ψ penalises d > u for a similar pair and d < l for a
    dissimilar one; with ``kernel: {name: linear}`` they constrain the Mahalanobis distance
    (x_i - x_j)ᵀ M (x_i - x_j), K = X M Xᵀ (Li et al. Sec. 6.1, Spambase).

    Parameters
    ----------
    count : int
        Number of pairs c (>= 1); at most the number of pairs of non-coincident points.
    percentiles : [float, float]
        (p_u, p_l), 0 <= p_u < p_l <= 100: the percentiles of u and l.

    Returns
    -------
    Constraints
        c pair constraints in the order drawn, i < j in each.

    Raises
    ------
    DataError
        The dataset has no class labels, or G_ref does not have one row per point.
    ConfigError
        ``percentiles`` not increasing, or ``count`` above the number of usable pairs.

    Examples
    --------
    >>> from kernlearn_cli.types import Dataset
    >>> ds = Dataset("toy", X=np.array([[0.0], [1.0], [3.0], [3.0]]), y=np.array([0, 0, 1, 1]))
    >>> C = itml_pairs(ds, ds.X, rng=np.random.default_rng(0), count=5)   # (2, 3) coincide
    >>> sorted(zip(C.i.tolist(), C.j.tolist()))
    [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3)]
    """
    y = ds.labels("constraint generator 'itml_pairs'")
    p_u, p_l = (float(p) for p in percentiles)
    if not p_u < p_l:
        raise ConfigError(f"constraints.percentiles must be [u, l] with 0 <= u < l <= 100 (u the percentile of the "
                          f"similar pairs' bound, l of the dissimilar ones'); got [{p_u:g}, {p_l:g}].")
    G = np.asarray(G_ref, dtype=np.float64)
    if G.shape[0] != ds.n:
        raise DataError(f"constraint generator 'itml_pairs': the reference kernel has {G.shape[0]} rows, but "
                        f"dataset '{ds.name}' has {ds.n} points.")
    tiny = 1e-12 * float(np.einsum("ij,ij->", G, G)) / max(ds.n, 1)
    i, j = sample_pairs(ds.n, count, rng, keep=lambda i, j: _squared_distances(G, i, j) > tiny)
    d = _squared_distances(G, i, j)
    u, l = (float(v) for v in np.percentile(d, [p_u, p_l]))
    same = y[i] == y[j]
    return Constraints(i, j, np.where(same, DIST_LE, DIST_GE), np.where(same, u, l))


@constraints.register("from_file", checks=Checks(alternatives={"path": "b.csv"}, base={"path": "a.csv"}))
def from_file(ds, G_ref, *, rng, path: str) -> Constraints:
    """Constraints from a CSV file: pairs (header ``i,j,kind,bound``) or triplets (header ``i,j,k``).

    Pairs: kind is one of dist_le, dist_ge, sim_le, sim_ge (and dist_eq, sim_eq for
    equalities): dist constrains K_ii + K_jj - 2 K_ij, sim constrains K_ij.

    Triplets (Li et al. 2009, Table 2): each row i,j,k asks d(i, j) - d(i, k) >= 0 (kind
    ``triplet``), i.e. point i is to end up closer to k (its in-class neighbour) than to j (its
    out-of-class neighbour); the three indices of a row must differ.  Only solvers that accept
    triplets can use them.

    Indices are 0-based rows of the dataset.  Error messages name the file and the 1-based data
    row (the first row after the header is data row 1, line 2 of the file).  Refused, naming the
    file: an empty file, a header without rows, a row repeating another (the same pair, either
    order, kind and bound; or the same triplet), a negative ``dist_le`` / ``dist_eq`` bound (a
    squared distance is never negative), an index out of range (with a hint when the file looks
    1-based: no index 0 and a largest index of n).

    Parameters
    ----------
    path : str
        The CSV file (pairs or triplets, as above).
    """
    import pandas as pd

    p = Path(path)
    if not p.is_file():
        raise DataError(f"constraints.path: file '{path}' not found.")
    if not p.read_bytes().strip():
        raise DataError(f"constraints file '{path}' is empty; it must start with the header line 'i,j,kind,bound' "
                        f"(pairs) or 'i,j,k' (triplets), then hold one constraint per line.")
    try:
        df = pd.read_csv(p, dtype=str, keep_default_na=False)
    except Exception as exc:  # noqa: BLE001 - any parse failure is the user's file
        raise DataError(f"constraints file '{path}': cannot be read as CSV ({exc}).") from None
    header = [str(c) for c in df.columns]
    if header not in (["i", "j", "kind", "bound"], ["i", "j", "k"]):
        raise DataError(f"constraints file '{path}': header must be 'i,j,kind,bound' (pairs) or 'i,j,k' "
                        f"(triplets), got '{','.join(header)}'.")
    if len(df) == 0:
        example = "0,1,dist_le,1.5" if len(header) == 4 else "0,5,9"
        raise DataError(f"constraints file '{path}' has the header '{','.join(header)}' but no rows; add one "
                        f"constraint per line after it (e.g. '{example}').")
    if header == ["i", "j", "k"]:
        return _triplets_from_frame(df, path, ds)
    ij = _integer_columns(df, ["i", "j"], path)
    bad_kind = ~df["kind"].isin(PAIR_KINDS)
    if bad_kind.any():
        row = int(np.flatnonzero(bad_kind)[0])
        hint = (" Triplets go in a file of their own with header 'i,j,k'." if df["kind"].iloc[row] == "triplet"
                else "")
        raise DataError(f"constraints file '{path}', row {row + 2}: kind '{df['kind'].iloc[row]}' is not one of "
                        f"{', '.join(PAIR_KINDS)}.{hint}")
    bound = pd.to_numeric(df["bound"], errors="coerce").to_numpy(dtype=np.float64)
    if not np.all(np.isfinite(bound)):
        row = int(np.flatnonzero(~np.isfinite(bound))[0])
        raise DataError(f"constraints file '{path}', row {row + 2}: bound '{df['bound'].iloc[row]}' is not a finite number.")
    negative = df["kind"].isin(["dist_le", "dist_eq"]).to_numpy() & (bound < 0)
    if negative.any():
        row = int(np.flatnonzero(negative)[0])
        raise DataError(f"constraints file '{path}', row {row + 2}: bound {df['bound'].iloc[row]} on a squared distance "
                        f"('{df['kind'].iloc[row]}'); a squared distance is never negative, so no kernel meets it. "
                        f"Give a bound >= 0.")
    _check_range(ij, path, ds)
    self_dist = (ij[:, 0] == ij[:, 1]) & df["kind"].str.startswith("dist").to_numpy()
    if self_dist.any():
        row = int(np.flatnonzero(self_dist)[0])
        raise DataError(f"constraints file '{path}', row {row + 2}: i = j = {ij[row, 0]} in a distance constraint "
                        f"('{df['kind'].iloc[row]}'); the distance of a point to itself is always 0. A distance "
                        f"constraint needs two different points (sim_* rows may use i = j: K_ii).")
    pairs = zip(ij.min(axis=1).tolist(), ij.max(axis=1).tolist(), df["kind"].tolist(), bound.tolist())
    _refuse_repeats(pairs, path, "the same pair (in either order), kind and bound")
    return replace(Constraints.from_lists(ij[:, 0], ij[:, 1], df["kind"].tolist(), bound), files=input_files(p))


def _one_based_hint(idx: np.ndarray, n: int) -> str:
    """A sentence for an out-of-range message when the indices ``idx`` of a file look 1-based
    (none is 0 or below, the largest is ``n``), else ''."""
    lo, hi = int(idx.min()), int(idx.max())
    return (f" Indices are 0-based; this file looks 1-based (min index {lo}, max {hi} = n): subtract 1 from "
            f"every index." if lo >= 1 and hi == n else "")


def _check_range(idx: np.ndarray, path: str, ds) -> None:
    """Refuse an index outside 0..n-1, naming its row (file line) (and :func:`_one_based_hint`)."""
    out = (idx < 0) | (idx >= ds.n)
    if out.any():
        row = int(np.flatnonzero(out.any(axis=1))[0])
        raise DataError(f"constraints file '{path}', row {row + 2}: index {idx[row][out[row]][0]} is out of range; "
                        f"dataset '{ds.name}' has {ds.n} points (valid indices 0..{ds.n - 1})."
                        f"{_one_based_hint(idx, ds.n)}")


def _refuse_repeats(keys, path: str, same: str) -> None:
    """Refuse the first row whose key (one per data row, in file order) an earlier row has,
    naming both file lines (data row r is line r + 2)."""
    seen: dict = {}
    for r, key in enumerate(keys):
        first = seen.setdefault(key, r)
        if first != r:
            raise DataError(f"constraints file '{path}': line {r + 2} repeats line {first + 2} ({same}). Each "
                            f"constraint must appear once: a repeated one counts twice (in a slack penalty or "
                            f"a loss, and in the constraint count). Remove line {r + 2}.")


def _integer_columns(df, cols: list[str], path: str, rows: str = "row") -> np.ndarray:
    """The columns ``cols`` of a string frame as an int64 (len, len(cols)) array; the first cell
    that is not a plain integer raises :class:`DataError` naming its row (``rows``: "row" counts
    file lines, "data row" counts from 1 after the header) and column."""
    out = np.zeros((len(df), len(cols)), dtype=np.int64)
    for c, col in enumerate(cols):
        text = df[col].astype(str).str.strip()
        ok = text.str.fullmatch(r"[+-]?\d+")
        if not ok.all():
            r = int(np.flatnonzero(~ok.to_numpy())[0])
            where = f"data row {r + 1} (line {r + 2})" if rows == "data row" else f"row {r + 2}"
            raise DataError(f"constraints file '{path}', {where}: column '{col}' must hold integers "
                            f"(0-based point indices), got '{df[col].iloc[r]}'.")
        out[:, c] = text.astype(np.int64).to_numpy() if len(df) else []
    return out


def _triplets_from_frame(df, path: str, ds) -> Constraints:
    """Triplet constraints (kind ``triplet``, bound 0) from an ``i,j,k`` frame, validated row by row."""
    ijk = _integer_columns(df, ["i", "j", "k"], path, rows="data row")
    # first offending row over all checks, so the message is about the earliest mistake in the file
    out = (ijk < 0) | (ijk >= ds.n)
    repeated = (ijk[:, 0] == ijk[:, 1]) | (ijk[:, 0] == ijk[:, 2]) | (ijk[:, 1] == ijk[:, 2])
    bad = out.any(axis=1) | repeated
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        where = f"constraints file '{path}', data row {r + 1} (line {r + 2})"
        i, j, k = (int(v) for v in ijk[r])
        if out[r].any():
            col = "ijk"[int(np.flatnonzero(out[r])[0])]
            raise DataError(f"{where}: {col} = {int(ijk[r][out[r]][0])} is out of range; dataset '{ds.name}' has "
                            f"{ds.n} points (valid indices 0..{ds.n - 1}).{_one_based_hint(ijk, ds.n)}")
        raise DataError(f"{where}: triplet (i, j, k) = ({i}, {j}, {k}) repeats an index; the anchor i, the "
                        "out-of-class point j and the in-class point k must be three different points.")
    _refuse_repeats(map(tuple, ijk.tolist()), path, "the same triplet i,j,k")
    return replace(Constraints.triplets(ijk[:, 0], ijk[:, 1], ijk[:, 2]), files=input_files(path))
