"""The small records that flow between the stages of a run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Constraint kinds and their integer codes (the order is part of the file format).
#: ``dist_*`` constrain the squared feature-space distance K_ii + K_jj - 2 K_ij,
#: ``sim_*`` the similarity K_ij; ``le`` is <=, ``ge`` is >=, ``eq`` is =.
KINDS = ("dist_le", "dist_ge", "sim_le", "sim_ge", "dist_eq", "sim_eq")
KIND_CODE = {k: c for c, k in enumerate(KINDS)}


@dataclass
class Dataset:
    """A loaded dataset: features ``X`` and/or a precomputed kernel ``K``, labels ``y``.

    Exactly the arrays a loader could obtain are set; ``y`` holds integer class
    codes 0..C-1 (``classes`` maps them back to the original names).
    """

    name: str
    X: np.ndarray | None = None
    y: np.ndarray | None = None
    K: np.ndarray | None = None
    classes: list | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(self.X.shape[0] if self.X is not None else self.K.shape[0])


@dataclass
class Constraints:
    """A set of c pairwise linear constraints tr(K A) (<=|>=|=) bound.

    Attributes
    ----------
    i, j : int64 arrays (c,)
        0-based point indices.
    kind : int8 array (c,)
        Codes into :data:`KINDS`.
    bound : float64 array (c,)
        Right-hand sides b.
    """

    i: np.ndarray
    j: np.ndarray
    kind: np.ndarray
    bound: np.ndarray

    def __post_init__(self):
        self.i = np.ascontiguousarray(self.i, dtype=np.int64)
        self.j = np.ascontiguousarray(self.j, dtype=np.int64)
        self.kind = np.ascontiguousarray(self.kind, dtype=np.int8)
        self.bound = np.ascontiguousarray(self.bound, dtype=np.float64)

    def __len__(self) -> int:
        return int(self.i.shape[0])

    @classmethod
    def from_lists(cls, i, j, kinds, bound) -> "Constraints":
        """Build from kind names (``"dist_le"`` ...) rather than codes."""
        return cls(i, j, np.array([KIND_CODE[k] for k in kinds], dtype=np.int8), bound)

    def kind_names(self) -> list[str]:
        return [KINDS[c] for c in self.kind]

    def values(self, G: np.ndarray) -> np.ndarray:
        """tr(K A) for every constraint, with K = G G^T (O(c r))."""
        gi, gj = G[self.i], G[self.j]
        dist = np.einsum("ij,ij->i", gi - gj, gi - gj)
        sim = np.einsum("ij,ij->i", gi, gj)
        is_dist = np.isin(self.kind, [KIND_CODE["dist_le"], KIND_CODE["dist_ge"], KIND_CODE["dist_eq"]])
        return np.where(is_dist, dist, sim)

    def violations(self, G: np.ndarray) -> np.ndarray:
        """Amount by which each constraint is violated (0 when met), same units as bound."""
        v = self.values(G)
        le = np.isin(self.kind, [KIND_CODE["dist_le"], KIND_CODE["sim_le"]])
        ge = np.isin(self.kind, [KIND_CODE["dist_ge"], KIND_CODE["sim_ge"]])
        return np.where(le, np.maximum(v - self.bound, 0.0),
                        np.where(ge, np.maximum(self.bound - v, 0.0), np.abs(v - self.bound)))


@dataclass
class SolverResult:
    """What every solver returns.

    ``G`` (n x r) is the learned factor, K = G G^T.  ``history`` maps names to
    per-iteration sequences (e.g. ``dual_change``); ``info`` holds scalars that
    are written as attributes of the factors file and into the cell's record.
    ``arrays`` holds extra datasets the factors file must store so the objective
    can be recomputed from the file alone (solver-specific, may be empty).
    """

    G: np.ndarray
    objective: float
    iterations: int
    converged: bool
    history: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
