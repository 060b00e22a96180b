"""The small records that flow between the stages of a run."""

from __future__ import annotations

import os
import tempfile
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import DataError
from .kinds import DISTANCE, EQUAL, KIND_CODE, KINDS, LOWER, TRIPLET, UPPER
from .kinds import PAIR_KINDS  # noqa: F401  (re-exported with KINDS and KIND_CODE: docs/extending.md)


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
    #: The held-out points of a ``holdout`` setting (:mod:`kernlearn_cli.data.holdout`), their own
    #: dataset: never seen by the solver with ``seen: false``, scored afterwards; None without one.
    heldout: "Dataset | None" = field(default=None, repr=False)

    @property
    def n(self) -> int:
        return int(self.X.shape[0] if self.X is not None else self.K.shape[0])

    def labels(self, user: str) -> np.ndarray:
        """``y`` for a component that draws side information from the labels or scores against them.

        Parameters
        ----------
        user : str
            The component, as messages name it (``"constraint generator 'random_pairs'"``).

        Raises
        ------
        DataError
            Without labels, or with fewer than two classes: no dissimilar pair, out-of-class
            neighbour or cluster to separate, and every label-based score would be trivially perfect.
        """
        if self.y is None:
            raise DataError(f"{user} needs class labels, but dataset '{self.name}' has none.")
        present = np.unique(self.y)
        if len(present) < 2:
            label = self.classes[present[0]] if self.classes else present[0].item()
            source = f" (labels file {self.meta['labels']})" if "labels" in self.meta else ""
            raise DataError(f"{user} needs at least two classes, but dataset '{self.name}'{source} has a single "
                            f"class ({label!r} for all {len(self.y)} points): "
                            "with one class there is nothing to separate (no dissimilar pair, no out-of-class "
                            "neighbour), and a score against the labels (k-NN accuracy, NMI, ...) would be a "
                            "trivial 1.0. Give labels of two or more classes.")
        return self.y


@dataclass
class Constraints:
    """A set of c linear constraints tr(K A) (<=|>=|=) bound on pairs or triplets of points.

    A set holds either pairwise constraints only (``k`` is None) or triplets only (``k``
    set, every kind ``triplet``); mixed sets are rejected, so code reading ``k`` never has
    to look for placeholder rows.

    Attributes
    ----------
    i, j : int64 arrays (c,)
        0-based point indices.
    kind : int8 array (c,)
        Codes into :data:`KINDS`.
    bound : float64 array (c,)
        Right-hand sides b.
    k : int64 array (c,) or None
        Third point of triplet constraints (Li et al. 2009, Table 2), whose matrix A_ijk has
        the pattern [[0, -1, 1], [-1, 1, 0], [1, 0, -1]] on rows and columns (i, j, k), so
        tr(K A_ijk) = d(i, j) - d(i, k); None for a set of pairwise constraints.
    files : dict
        ``{path: sha256}`` of the files the set was read from (:func:`~kernlearn_cli.inputs.input_files`),
        kept in each cell's record so that an edited file makes its cells run again; empty for a
        generated set.
    """

    i: np.ndarray
    j: np.ndarray
    kind: np.ndarray
    bound: np.ndarray
    k: np.ndarray | None = None
    files: dict = field(default_factory=dict)

    def __post_init__(self):
        self.i = np.ascontiguousarray(self.i, dtype=np.int64)
        self.j = np.ascontiguousarray(self.j, dtype=np.int64)
        self.kind = np.ascontiguousarray(self.kind, dtype=np.int8)
        self.bound = np.ascontiguousarray(self.bound, dtype=np.float64)
        c = len(self.i)
        if not (len(self.j) == len(self.kind) == len(self.bound) == c):
            raise ValueError(f"Constraints: i, j, kind and bound must have the same length, got "
                             f"{len(self.i)}, {len(self.j)}, {len(self.kind)}, {len(self.bound)}.")
        is_triplet = self.kind == TRIPLET
        if self.k is None:
            if is_triplet.any():
                raise ValueError("Constraints: rows of kind 'triplet' need the third index k.")
        else:
            self.k = np.ascontiguousarray(self.k, dtype=np.int64)
            if len(self.k) != c:
                raise ValueError(f"Constraints: k has length {len(self.k)}, expected {c}.")
            if not is_triplet.all():
                raise ValueError("Constraints: a set with a third index k must hold triplets only "
                                 "(kind 'triplet' on every row); pairs and triplets do not mix.")

    def __len__(self) -> int:
        return int(self.i.shape[0])

    @classmethod
    def from_lists(cls, i, j, kinds, bound, k=None) -> "Constraints":
        """Build from kind names (``"dist_le"`` ...) rather than codes."""
        return cls(i, j, np.array([KIND_CODE[name] for name in kinds], dtype=np.int8), bound, k)

    @classmethod
    def triplets(cls, i, j, k, bound=0.0) -> "Constraints":
        """Triplet constraints d(i, j) - d(i, k) >= bound (default 0), kind ``triplet``.

        Parameters
        ----------
        i, j, k : array_like of int (c,)
            Anchor, out-of-class neighbour and in-class neighbour (0-based).
        bound : float or array_like (c,)
            Right-hand sides; Li et al. (2009) use 0 (the loss, not the bound, sets the margin).
        """
        i = np.asarray(i, dtype=np.int64)
        c = i.shape[0]
        return cls(i, j, np.full(c, TRIPLET, dtype=np.int8),
                   np.broadcast_to(np.asarray(bound, dtype=np.float64), (c,)), k)

    @property
    def has_triplets(self) -> bool:
        """True for a set of triplet constraints (``k`` is set)."""
        return self.k is not None

    def subset(self, rows) -> "Constraints":
        """The constraints at ``rows`` (indices or a boolean mask), in that order, k included."""
        return Constraints(self.i[rows], self.j[rows], self.kind[rows], self.bound[rows],
                           None if self.k is None else self.k[rows])

    def kind_names(self) -> list[str]:
        return [KINDS[c] for c in self.kind]

    def conflicts(self) -> np.ndarray:
        """Pairs of rows that bound the same quantity incompatibly, so that no kernel meets both.

        The quantity of a pairwise row is d(i, j) (``dist_*``) or K_ij (``sim_*``), the same for
        (i, j) and (j, i); a ``le`` row bounds it from above, a ``ge`` row from below, an ``eq``
        row from both sides.  A quantity whose largest lower bound exceeds its smallest upper
        bound is met by no kernel (the two rows alone are a certificate of infeasibility); its
        pair is the row of that lower bound and the row of that upper bound (the first of
        several equal ones).  Rows on different quantities never conflict here, nor do triplet
        rows (all ``>=``).  O(c log c).

        Returns
        -------
        int64 array (m, 2)
            One row (p, q), p < q, per conflicting quantity, ordered by q, then p.

        Examples
        --------
        >>> C = Constraints.from_lists([0, 5, 1], [1, 6, 0], ["dist_le", "sim_ge", "dist_ge"], [1.0, 0.5, 5.0])
        >>> C.conflicts().tolist()
        [[0, 2]]
        """
        if self.k is not None or len(self) < 2:
            return np.zeros((0, 2), dtype=np.int64)
        is_dist = np.isin(self.kind, DISTANCE)
        key = np.stack([np.minimum(self.i, self.j), np.maximum(self.i, self.j), is_dist], axis=1)
        group = np.unique(key, axis=0, return_inverse=True)[1].ravel()
        eq = np.isin(self.kind, EQUAL)
        lower = np.where(eq | np.isin(self.kind, LOWER), self.bound, -np.inf)
        upper = np.where(eq | np.isin(self.kind, UPPER), self.bound, np.inf)
        rows = np.arange(len(self))

        def first_per_group(order):                 # the first row of each group in ``order``
            g = group[order]
            return order[np.r_[True, g[1:] != g[:-1]]]

        low = first_per_group(np.lexsort((rows, -lower, group)))    # largest lower bound of each group
        up = first_per_group(np.lexsort((rows, upper, group)))      # smallest upper bound of each group
        bad = lower[low] > upper[up]
        pairs = np.sort(np.stack([low[bad], up[bad]], axis=1), axis=1)
        return pairs[np.lexsort((pairs[:, 0], pairs[:, 1]))].astype(np.int64)

    def values(self, G: np.ndarray) -> np.ndarray:
        """tr(K A) for every constraint, with K = G G^T (O(c r)).

        d(i, j) for ``dist_*``, K_ij for ``sim_*`` and d(i, j) - d(i, k) for ``triplet``.
        """
        gi, gj = G[self.i], G[self.j]
        dist = np.einsum("ij,ij->i", gi - gj, gi - gj)
        if self.k is not None:                    # triplets only (see the class docstring)
            gk = G[self.k]
            return dist - np.einsum("ij,ij->i", gi - gk, gi - gk)
        sim = np.einsum("ij,ij->i", gi, gj)
        is_dist = np.isin(self.kind, DISTANCE)
        return np.where(is_dist, dist, sim)

    def violations(self, G: np.ndarray) -> np.ndarray:
        """Amount by which each constraint is violated (0 when met), same units as bound.

        ``triplet`` rows count as >= (d(i, j) - d(i, k) below the bound is a violation).
        """
        v = self.values(G)
        le = np.isin(self.kind, UPPER)
        ge = np.isin(self.kind, LOWER + (TRIPLET,))
        return np.where(le, np.maximum(v - self.bound, 0.0),
                        np.where(ge, np.maximum(self.bound - v, 0.0), np.abs(v - self.bound)))


#: Why a solver's iteration ended (its certificate's ``stopped_by``), the words that mean it ran out of
#: its iteration budget first: its counts then only bound the method's from below, and the tables count
#: such cells as ``capped``.  Declared here (beside :class:`SolverResult`, so that reading records imports
#: no solver) and checked by :class:`kernlearn_cli.solvers.protocol.Certificate`, which refuses any other.
CAPPED = frozenset({"max_iter", "max_path_iter"})
#: ... and the words that do not: its checks were met (``tolerance``; ``optimality``: the KKT conditions hold,
#: nothing is violated or releasable), it can make no more progress (``stall``), or nothing is iterated (``fixed``).
STOP_REASONS = CAPPED | {"tolerance", "optimality", "stall", "fixed"}


@dataclass
class SolverResult:
    """What every solver returns.

    ``G`` (n x r) is the learned factor, K = G G^T.  ``history`` maps names to
    per-iteration sequences (e.g. ``dual_change``); ``info`` holds scalars that
    are written as attributes of the factors file and into the cell's record.
    ``arrays`` holds extra datasets the factors file must store so the objective
    can be recomputed from the file alone (solver-specific, may be empty); ``path``
    the factors along a regularization path (:class:`SpilledPath`: on disk, one read at a time;
    a run keeps it as ``path.h5`` beside the factors file, linked from it as ``path``).

    ``converged`` is set by :func:`kernlearn_cli.solvers.protocol.finish` from the
    ``certificate`` (the checks and figures that prove the result, with their tolerances):
    True or False, or None where convergence does not apply (an on-line run, a closed form).
    """

    G: np.ndarray
    objective: float
    iterations: int
    converged: bool | None
    history: dict[str, Any] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    #: (gamma, G) of every point of a regularization path for the evaluators (solver option
    #: ``keep_path``): a list, or a :class:`SpilledPath` that holds the factors on disk (a run
    #: keeps it beside the factors file, ``path.h5``, linked from it as ``path``).
    path: Any = field(default_factory=list)
    #: The certificate (:meth:`kernlearn_cli.solvers.protocol.Certificate.to_dict`), set by ``finish``.
    certificate: dict[str, Any] = field(default_factory=dict)


def _remove(name: str) -> None:
    try:
        os.unlink(name)
    except OSError:
        pass


class SpilledPath:
    """The (γ, G) points of a regularization path, held in a temporary HDF5 file instead of memory.

    :meth:`append` writes a factor and keeps only its γ; iterating or indexing reads one factor
    back at a time (the same bits), so a path of any length costs the memory of one factor;
    :meth:`save` copies it beside a cell's factors file (``path.h5``, linked from it as ``path``).
    The file (under ``$TMPDIR``) is removed when the object is collected or the process exits.
    """

    def __init__(self):
        fd, self._name = tempfile.mkstemp(prefix="kernlearn-path-", suffix=".h5")
        os.close(fd)
        self.gammas: list[float] = []
        self._finalizer = weakref.finalize(self, _remove, self._name)

    def append(self, point) -> None:
        import h5py

        gamma, G = point
        with h5py.File(self._name, "a") as f:
            f.create_dataset(str(len(self.gammas)), data=np.asarray(G, dtype=np.float64))
        self.gammas.append(float(gamma))

    def __len__(self) -> int:
        return len(self.gammas)

    def __getitem__(self, k: int):
        import h5py

        k = range(len(self.gammas))[k]
        with h5py.File(self._name, "r") as f:
            return self.gammas[k], f[str(k)][()]

    def __iter__(self):
        return (self[k] for k in range(len(self.gammas)))

    def save(self, dest) -> None:
        """Copy the path to ``dest`` (an HDF5 file: datasets ``0``, ``1``, … the factors G_k and
        ``gamma`` their γ's), disk to disk, never all in memory; atomic (a temporary file beside
        ``dest``, then renamed)."""
        import shutil

        import h5py

        with h5py.File(self._name, "a") as f:
            if "gamma" in f:
                del f["gamma"]
            f.create_dataset("gamma", data=np.asarray(self.gammas, dtype=np.float64))
        dest = os.fspath(dest)
        os.makedirs(os.path.dirname(dest) or ".", exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(dest)}.", suffix=".tmp", dir=os.path.dirname(dest))
        os.close(fd)
        try:
            shutil.copyfile(self._name, tmp)
            os.replace(tmp, dest)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
