"""Pairwise distance constraints from labels (Kulis et al. 2006, Sec. 6) and from CSV files."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import ConfigError, DataError
from ..registry import constraints
from ..types import KIND_CODE, KINDS, Constraints


def sample_pairs(n: int, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``count`` distinct unordered pairs i < j drawn uniformly without replacement."""
    total = n * (n - 1) // 2
    if count > total:
        raise ConfigError(f"constraints.count = {count} exceeds the {total} distinct pairs of {n} points.")
    if total <= 5_000_000:
        iu, ju = np.triu_indices(n, k=1)
        pick = rng.choice(total, size=count, replace=False)
        return iu[pick], ju[pick]
    seen: dict[tuple[int, int], None] = {}
    while len(seen) < count:
        a, b = rng.integers(0, n, size=2)
        if a != b:
            seen.setdefault((min(a, b), max(a, b)))
    ij = np.array(list(seen), dtype=np.int64)
    return ij[:, 0], ij[:, 1]


def _squared_distances(G: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    diff = G[i] - G[j]
    return np.einsum("ij,ij->i", diff, diff)


def _labelled_pairs(ds, G_ref, rng, count: int, epsilon: float, name: str) -> Constraints:
    if ds.y is None:
        raise DataError(f"constraint generator '{name}' needs class labels, but dataset '{ds.name}' has none.")
    if count < 1:
        raise ConfigError(f"constraints.count must be >= 1, got {count}.")
    i, j = sample_pairs(ds.n, count, rng)
    b = _squared_distances(G_ref, i, j)
    same = ds.y[i] == ds.y[j]
    kind = np.where(same, KIND_CODE["dist_le"], KIND_CODE["dist_ge"])
    bound = np.where(same, (1.0 - epsilon) * b, (1.0 + epsilon) * b)
    return Constraints(i, j, kind, bound)


@constraints.register("random_pairs")
def random_pairs(ds, G_ref, *, rng, count: int = 100) -> Constraints:
    """Random labelled pairs, Kulis et al. Sec. 6 (GyrB): same class d(i,j) <= b, else d(i,j) >= b.

    b is the squared feature-space distance under the reference kernel.  Pairs
    are ``count`` distinct unordered pairs drawn uniformly, seeded by the cell's seed.
    """
    return _labelled_pairs(ds, G_ref, rng, count, 0.0, "random_pairs")


@constraints.register("idealized_pairs")
def idealized_pairs(ds, G_ref, *, rng, count: int = 100, epsilon: float = 0.25) -> Constraints:
    """Random labelled pairs pushed toward an ideal kernel (Kulis et al. Sec. 6, Digits).

    Same class d(i,j) <= (1 - epsilon) b, different class d(i,j) >= (1 + epsilon) b,
    b the reference squared distance.
    """
    if not 0 <= epsilon < 1:
        raise ConfigError(f"constraints.epsilon must be in [0, 1), got {epsilon}.")
    return _labelled_pairs(ds, G_ref, rng, count, epsilon, "idealized_pairs")


@constraints.register("from_file")
def from_file(ds, G_ref, *, rng, path: str) -> Constraints:
    """Constraints from a CSV file with header ``i,j,kind,bound`` (0-based indices).

    kind is one of dist_le, dist_ge, sim_le, sim_ge (and dist_eq, sim_eq for equalities):
    dist constrains K_ii + K_jj - 2 K_ij, sim constrains K_ij.
    """
    import pandas as pd

    p = Path(path)
    if not p.is_file():
        raise DataError(f"constraints.path: file '{path}' not found.")
    try:
        df = pd.read_csv(p, dtype={"kind": str})
    except Exception as exc:  # noqa: BLE001 - any parse failure is the user's file
        raise DataError(f"constraints file '{path}': cannot be read as CSV ({exc}).") from None
    if list(df.columns) != ["i", "j", "kind", "bound"]:
        raise DataError(f"constraints file '{path}': header must be 'i,j,kind,bound', got '{','.join(map(str, df.columns))}'.")
    for col in ("i", "j"):
        if len(df) and not pd.api.types.is_integer_dtype(df[col]):
            raise DataError(f"constraints file '{path}': column '{col}' must hold integers.")
    bad_kind = ~df["kind"].isin(KINDS)
    if bad_kind.any():
        row = int(np.flatnonzero(bad_kind)[0])
        raise DataError(f"constraints file '{path}', row {row + 2}: kind '{df['kind'].iloc[row]}' is not one of "
                        f"{', '.join(KINDS)}.")
    bound = pd.to_numeric(df["bound"], errors="coerce").to_numpy(dtype=np.float64)
    if not np.all(np.isfinite(bound)):
        row = int(np.flatnonzero(~np.isfinite(bound))[0])
        raise DataError(f"constraints file '{path}', row {row + 2}: bound '{df['bound'].iloc[row]}' is not a finite number.")
    ij = df[["i", "j"]].to_numpy(dtype=np.int64)
    out = (ij < 0) | (ij >= ds.n)
    if out.any():
        row = int(np.flatnonzero(out.any(axis=1))[0])
        raise DataError(f"constraints file '{path}', row {row + 2}: index {ij[row][out[row]][0]} is out of range; "
                        f"dataset '{ds.name}' has {ds.n} points (valid indices 0..{ds.n - 1}).")
    return Constraints.from_lists(ij[:, 0], ij[:, 1], df["kind"].tolist(), bound)

