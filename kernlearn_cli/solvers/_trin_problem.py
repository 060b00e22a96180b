r"""The problem TRIN and PR-CG solve (Li, Fu, Dai, Sminchisescu & Wang, AISTATS 2009): its losses, the
trace map x_i = tr(K A_i), the objective with its gradient and Hessian, and the working coordinates
built from K0's factor (:func:`build_problem`, with the decoding of a solution back to a factor).

.. math::

    f(K) = w \sum_{i=1}^c \psi(\operatorname{tr}(K A_i)) + D_{ld}(K, K_0), \qquad w = \gamma / m
    \ \text{(or } \gamma\text{)},                                                          \quad (3)

    \nabla f = w \sum_i \psi'(x_i) A_i + K_0^{-1} - K^{-1}, \qquad x_i = \operatorname{tr}(K A_i), \quad (4)

    H(\Delta) = w \sum_i \psi''(x_i) \operatorname{tr}(\Delta A_i) A_i + K^{-1} \Delta K^{-1}.   \quad (5)

The constraint matrices A_i (Table 2) are never formed: each tr(K A_i) is a signed sum of at
most four kernel entries (triplet: d(i,j) − d(i,k) = K_jj − K_kk − 2K_ij + 2K_ik; ITML pair:
d(i,j); Hoi pair: 2T K_ij), kept as a sparse c × E matrix C over the E distinct entries, so
x = C k_E and Σ_i a_i A_i is the symmetric matrix with entries Cᵀa — O(c) per product.  A
gradient or a Hessian product therefore costs O(n³ + c) (Sec. 4.2).

K0 = G0 G0ᵀ may be rank deficient (footnote 2: the pseudo-inverse on the range).  With r < n
the unknown is the r × r matrix X with K = G0 X G0ᵀ, and D_ld(K, K0) = tr X − log det X − r.
When r is close to n and every A_i annihilates the null space N of K0 (triplets and distance
pairs on a connected graph Laplacian's pseudo-inverse, N = 1/√n), the n × n problem with
K0 + s NNᵀ is solved instead: its minimiser is K* + s NNᵀ exactly, and no basis change is needed.

The algorithms that minimise f (trust-region inexact Newton with Steihaug's CG, Polak-Ribière⁺ CG,
the γ path) are in :mod:`kernlearn_cli.solvers.trin`.

References
----------
.. [1] F. Li, Y. Fu, Y.-H. Dai, C. Sminchisescu and J. Wang. Kernel learning by unconstrained
   optimization. Proceedings of the 12th International Conference on Artificial Intelligence and
   Statistics (AISTATS 2009), PMLR 5, pages 328–335. https://proceedings.mlr.press/v5/li09a.html
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Annotated, Callable, Literal

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from ..errors import ConfigError, DataError
from ..lowrank import RANK_TOL, full_column_rank
from ..kinds import DISSIMILAR, SIMILAR
from ..linalg import eigh
from ..params import Interval, Positive, checked_arguments
from ..types import Constraints

#: Rows per block of the blocked n x n updates (a block is _BLOCK x n doubles).
_BLOCK = 256
LossName = Literal["log", "lmnn", "linear", "itml", "hoi"]
TRIPLET_LOSSES = ("log", "lmnn", "linear")
#: The knee t of the smoothed hinge (8), a setting of ``trin`` and ``pr_cg``.
Knee = Annotated[float, Interval(-1, 1, closed="neither")]


# ---- losses (Table 2) -------------------------------------------------------------------

@dataclass(frozen=True)
class Loss:
    """ψ and its first two derivatives, vectorised over the constraints."""

    name: str
    psi: Callable[[np.ndarray], np.ndarray]
    d1: Callable[[np.ndarray], np.ndarray]
    d2: Callable[[np.ndarray], np.ndarray]


def _expit(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def log_loss() -> Loss:
    """ψ(x) = log(1 + e^{−2x})."""
    def d2(x):                                        # 4 σ(2x) σ(−2x) = (1 + tanh x)(1 − tanh x)
        t = np.tanh(x)
        return (1.0 + t) * (1.0 - t)

    return Loss("log", lambda x: np.logaddexp(0.0, -2.0 * x), lambda x: -2.0 * _expit(-2.0 * x), d2)


@checked_arguments("t")
def smooth_hinge(t: Knee = 0.7, name: str = "lmnn") -> Loss:
    """The C¹ surrogate (8) of max(1 − x, 0): linear below t, quadratic on (t, 1], zero above (-1 < t < 1)."""
    a, q = 4.0 / (3.0 + t), 2.0 / ((1.0 - t) * (3.0 + t))

    def psi(x):
        return np.where(x <= t, (2.0 + 2.0 * t) / (3.0 + t) - a * x, np.where(x <= 1.0, q * (1.0 - x) ** 2, 0.0))

    def d1(x):
        return np.where(x <= t, -a, np.where(x <= 1.0, -2.0 * q * (1.0 - x), 0.0))

    def d2(x):
        return np.where((x > t) & (x <= 1.0), 2.0 * q, 0.0)

    return Loss(name, psi, d1, d2)


def linear_loss() -> Loss:
    """ψ(x) = −x (Li et al. 2007)."""
    return Loss("linear", lambda x: -x, lambda x: -np.ones_like(x), lambda x: np.zeros_like(x))


def itml_loss(bound: np.ndarray, similar: np.ndarray) -> Loss:
    """Davis et al.'s loss: x/b − log(x/b) − 1 where the pair violates its threshold b
    (x > u for a similar pair, x < l for a dissimilar one), 0 otherwise."""
    b = np.asarray(bound, dtype=np.float64)
    s = np.where(similar, 1.0, -1.0)

    def active(x):
        return s * (x - b) > 0.0

    def psi(x):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(active(x), x / b - np.log(x / b) - 1.0, 0.0)

    def d1(x):
        with np.errstate(divide="ignore"):
            return np.where(active(x), 1.0 / b - 1.0 / x, 0.0)

    def d2(x):
        with np.errstate(divide="ignore"):
            return np.where(active(x), 1.0 / (x * x), 0.0)

    return Loss("itml", psi, d1, d2)


# ---- the constraint operator ------------------------------------------------------------

class TraceMap:
    """x = (tr(K A_1), ..., tr(K A_c)) for K = B X Bᵀ (B = G0, or B = I when ``basis`` is None).

    The A_i are held as a sparse c × E matrix ``C`` over E distinct entries (a_e <= b_e) of K,
    so tr(K A_i) = Σ_e C_ie K_{a_e b_e} and Σ_i α_i A_i = Σ_e (Cᵀα)_e E_e, with
    E_e = (e_a e_bᵀ + e_b e_aᵀ)/2 (e_a e_aᵀ on the diagonal).  Every Σ α_i A_i in the working
    coordinates vanishes outside its leading ``extent`` × ``extent`` block: 1 + the last point the
    constraints touch (B = I), r otherwise.
    """

    def __init__(self, n: int, rows, a, b, coef, c: int, basis: np.ndarray | None):
        a, b = np.minimum(a, b), np.maximum(a, b)
        key, inv = np.unique(a * n + b, return_inverse=True)
        self.a, self.b = key // n, key % n
        self.C = sp.csr_matrix((coef, (rows, inv.ravel())), shape=(c, key.size))
        self.CT = self.C.T.tocsr()
        self.n, self.basis = n, basis
        # the n x n pattern of the E_e, built once: entry e sits at (a_e, b_e) and, off the diagonal,
        # at (b_e, a_e); _order takes the values in that order to the CSR's
        self._off = self.a != self.b
        pattern = sp.csr_matrix((np.arange(1.0, self.a.size + np.count_nonzero(self._off) + 1),
                                 (np.concatenate([self.a, self.b[self._off]]),
                                  np.concatenate([self.b, self.a[self._off]]))), shape=(n, n))
        self._order = pattern.data.astype(np.intp) - 1
        self._pattern = pattern.indices, pattern.indptr
        self._scale = np.where(self._off, 0.5, 1.0)
        self.extent = int(self.b.max()) + 1 if basis is None else basis.shape[1]

    def entries(self, X: np.ndarray) -> np.ndarray:
        """K_{a_e b_e} for all distinct entries e."""
        B = self.basis
        if B is None:
            return X[self.a, self.b]
        T = B @ X
        out = np.empty(self.a.size)
        step = max(64, min(8192, self.n // 8))          # O(E r) in blocks of <= n r / 4 doubles, no n x n matrix
        for s in range(0, self.a.size, step):
            e = slice(s, s + step)
            out[e] = np.einsum("ij,ij->i", T[self.a[e]], B[self.b[e]])
        return out

    def values(self, X: np.ndarray) -> np.ndarray:
        return self.C @ self.entries(X)

    def adjoint(self, alpha: np.ndarray):
        """Σ_i α_i A_i in the working coordinates: sparse n x n (B = I) or dense r x r (Bᵀ S B, r/16 columns
        at a time: no n x r temporary)."""
        v = self._scale * (self.CT @ alpha)                          # w_e / 2 off the diagonal, w_e on it
        S = sp.csr_matrix((np.concatenate([v, v[self._off]])[self._order], *self._pattern), shape=(self.n, self.n))
        B = self.basis
        if B is None:
            return S
        r = B.shape[1]
        out, step = np.empty((r, r)), max(32, r // 16)
        for i in range(0, r, step):
            b = slice(i, i + step)
            out[:, b] = B.T @ (S @ B[:, b])
        return out


def dense(S) -> np.ndarray:
    return S.toarray() if sp.issparse(S) else S


# ---- the problem ------------------------------------------------------------------------

@dataclass
class Problem:
    """f(X) in working coordinates: K = X (``op.basis`` None) or K = G0 X G0ᵀ.

    ``K0inv`` is the inverse of the (shifted) initial kernel in the first case and None (the
    identity) in the second, where D_ld(K, K0) = tr X − log det X − r.
    """

    op: TraceMap
    loss: Loss
    w: float
    K0inv: np.ndarray | None
    logdet_K0: float

    @property
    def dim(self) -> int:
        return self.op.n if self.op.basis is None else self.op.basis.shape[1]

    def trace_K0inv(self, X) -> float:
        return float(np.trace(X)) if self.K0inv is None else float(np.vdot(X, self.K0inv))

    def value(self, X: np.ndarray, logdet_X: float, x: np.ndarray) -> float:
        return float(self.w * np.sum(self.loss.psi(x)) + self.trace_K0inv(X) - logdet_X + self.logdet_K0 - self.dim)

    def gradient(self, Xinv: np.ndarray, x: np.ndarray) -> np.ndarray:
        """(4): w Σ ψ'(x_i) A_i + K0⁻¹ − K⁻¹."""
        G = dense(self.op.adjoint(self.w * self.loss.d1(x)))
        if self.K0inv is None:
            G.flat[::self.dim + 1] += 1.0                            # + I, without an n x n identity
        else:
            G += self.K0inv
        G -= Xinv
        return G

    def hessian_loss(self, P: np.ndarray, d2: np.ndarray):
        """H_F(P) = w Σ ψ''(x_i) tr(P A_i) A_i, the first part of (5) (sparse when K = X)."""
        return self.op.adjoint(self.w * d2 * self.op.values(P))


def chol(X: np.ndarray, overwrite: bool = False):
    """(lower Cholesky factor, log det X), or None when X is not positive definite.  With ``overwrite``
    a symmetric C-ordered X is factored in its own memory (X is destroyed)."""
    if overwrite and X.flags.c_contiguous:
        X = X.T                                                      # = X, Fortran-ordered: no copy
    L, info = sla.lapack.dpotrf(X, lower=1, clean=1, overwrite_a=int(overwrite))
    if info != 0:
        return None
    return L, 2.0 * float(np.sum(np.log(np.diag(L))))


def inverse_from_chol(L: np.ndarray) -> np.ndarray:
    """X⁻¹ from X's lower Cholesky factor (one n x n array besides L)."""
    Xinv, info = sla.lapack.dpotri(L, lower=1)
    if info != 0:
        raise np.linalg.LinAlgError("dpotri failed")
    n = len(Xinv)
    for i in range(0, n, _BLOCK):                                   # the lower triangle mirrored, in place
        b, rest = slice(i, i + _BLOCK), slice(i + _BLOCK, n)
        D = Xinv[b, b]
        D[...] = np.tril(D) + np.tril(D, -1).T
        Xinv[b, rest] = Xinv[rest, b].T
    return Xinv.T                                                    # = Xinv, C-ordered


# ---- building the problem from a config -------------------------------------------------

def _pairs_from(constraints: Constraints) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(i, j, similar, bound) of pair constraints; triplets (i, j, k) give the similar pair (i, k)
    and the dissimilar pair (i, j), each once, bound NaN (filled from K0 by the caller)."""
    if constraints.has_triplets:
        sim = np.stack([constraints.i, constraints.k], 1)
        dis = np.stack([constraints.i, constraints.j], 1)
        ij = np.concatenate([np.sort(sim, 1), np.sort(dis, 1)])
        similar = np.concatenate([np.ones(len(sim), bool), np.zeros(len(dis), bool)])
        _, first = np.unique(np.column_stack([ij, similar]), axis=0, return_index=True)
        first = np.sort(first)
        return ij[first, 0], ij[first, 1], similar[first], np.full(first.size, np.nan)
    kind = constraints.kind
    similar = np.isin(kind, SIMILAR)
    dissimilar = np.isin(kind, DISSIMILAR)
    if not np.all(similar | dissimilar):
        raise ConfigError("pair losses (itml, hoi) need similar / dissimilar pairs (kinds "
                          "dist_le / dist_ge, or sim_ge / sim_le) or triplets; found equality constraints.")
    return constraints.i, constraints.j, similar, constraints.bound.copy()


def _triplet_terms(constraints: Constraints, loss_name: str):
    """Rows, entries and coefficients of C for the loss's constraint matrices (Table 2)."""
    c = len(constraints)
    if not constraints.has_triplets:
        raise ConfigError(f"solver.loss = '{loss_name}' works on triplets (d(i,j) - d(i,k), Li et al. "
                          "Table 2); use constraint generator 'neighbor_triplets' or a triplet CSV "
                          "(from_file with header i,j,k), or loss 'itml' / 'hoi' for pairs.")
    i, j, k = constraints.i, constraints.j, constraints.k
    r = np.arange(c)
    # tr(K A_ijk) = K_jj - K_kk - 2 K_ij + 2 K_ik
    return (np.concatenate([r, r, r, r]), np.concatenate([j, k, i, i]), np.concatenate([j, k, j, k]),
            np.concatenate([np.ones(c), -np.ones(c), -2 * np.ones(c), 2 * np.ones(c)]), c)


def _pair_terms(i, j, similar, loss_name):
    c = i.size
    r = np.arange(c)
    if loss_name == "itml":                            # d(i,j) = K_ii + K_jj - 2 K_ij
        return (np.concatenate([r, r, r]), np.concatenate([i, j, i]), np.concatenate([i, j, j]),
                np.concatenate([np.ones(c), np.ones(c), -2 * np.ones(c)]), c)
    T = np.where(similar, 1.0, -1.0)                  # hoi: A = T (e_i e_j^T + e_j e_i^T), tr(K A) = 2 T K_ij
    return r, i, j, 2.0 * T, c


def _check_indices(constraints: Constraints) -> None:
    if not constraints.has_triplets:
        bad = np.flatnonzero(constraints.i == constraints.j)
        if bad.size:
            q = bad[0]
            raise ConfigError(f"constraint #{q} pairs point {constraints.i[q]} with itself.")
        return
    i, j, k = constraints.i, constraints.j, constraints.k
    bad = np.flatnonzero((i == j) | (i == k) | (j == k))
    if bad.size:
        q = bad[0]
        raise ConfigError(f"triplet #{q} (i, j, k) = ({i[q]}, {j[q]}, {k[q]}) repeats an index; "
                          f"{bad.size} triplet(s) do. A triplet needs three distinct points.")


def _full_column_rank(G: np.ndarray) -> np.ndarray:
    """:func:`~kernlearn_cli.lowrank.full_column_rank`, with its singular values alone computed first
    (one copy of G), and its thin SVD (about 7 n r doubles) only when G is rank deficient."""
    s = np.linalg.svd(G, compute_uv=False)
    return G if np.all(s > RANK_TOL * s[0]) else full_column_rank(G)


def _annihilated_null_space(G0: np.ndarray, constraints: Constraints, loss: str) -> np.ndarray | None:
    """An orthonormal basis N of K0's null space (K0 = G0 G0ᵀ) when every A_i annihilates it -- distance
    constraints whose points N does not tell apart (a connected graph Laplacian's pseudo-inverse) --
    else None."""
    if loss not in TRIPLET_LOSSES and loss != "itml":
        return None
    N = np.array(sla.null_space(G0.T), order="C")      # (an SVD, before any n x n array of the solve; a
    #                                                   copy, or the view would keep its n x n Vᵀ alive)
    if loss in TRIPLET_LOSSES:
        pts = [constraints.i, constraints.j] + ([constraints.k] if constraints.has_triplets else [])
        ok = all(np.allclose(N[p], N[pts[0]], atol=1e-8) for p in pts[1:])
    else:
        i, j, _, _ = _pairs_from(constraints)
        ok = np.allclose(N[i], N[j], atol=1e-8)
    return N if ok else None


def add_shift(K: np.ndarray, shift: tuple[float, np.ndarray], sign: float) -> None:
    """K += sign · s N Nᵀ in place, ``shift`` = (s, N), a block of rows at a time (no n x n temporary)."""
    s, N = shift
    for i in range(0, len(K), _BLOCK):
        b = slice(i, i + _BLOCK)
        K[b] += sign * (s * (N[b] @ N.T))


def symmetrize(K: np.ndarray) -> np.ndarray:
    """K ← (K + Kᵀ) / 2 in place, a pair of blocks at a time (the same bits as ``0.5 * (K + K.T)``)."""
    n = len(K)
    for i in range(0, n, _BLOCK):
        bi = slice(i, i + _BLOCK)
        for j in range(i, n, _BLOCK):
            bj = slice(j, j + _BLOCK)
            S = 0.5 * (K[bi, bj] + K[bj, bi].T)
            K[bi, bj] = S
            K[bj, bi] = S.T
    return K


def _full_decode(shift: tuple | None, pos: np.ndarray | None) -> Callable:
    """decode(X, overwrite=False) -> G with G Gᵀ = X − s NNᵀ (eigh; eigenvalues <= 1e-10 λ_max dropped),
    rows in the caller's order; ``overwrite`` lets it work in X's memory."""
    def decode(X, overwrite=False):
        K = X if overwrite else X.copy()
        if shift is not None:
            add_shift(K, shift, -1.0)
        ev, U = eigh(symmetrize(K))
        del K
        keep = np.flatnonzero(ev > 1e-10 * ev[-1])[::-1]            # descending
        G = U[:, keep]
        del U
        G *= np.sqrt(ev[keep])
        return np.ascontiguousarray(G if pos is None else G[pos])
    return decode


def _range_decode(G0: np.ndarray, pos: np.ndarray | None) -> Callable:
    """decode(X, overwrite=False) -> G0 L with X = L Lᵀ (K = G0 X G0ᵀ), rows in the caller's order."""
    def decode(X, overwrite=False):
        G = G0 @ chol(X)[0]
        return np.ascontiguousarray(G if pos is None else G[pos])
    return decode


@checked_arguments("loss", "gamma", "t")
def build_problem(G0: np.ndarray, constraints: Constraints, loss: LossName, gamma: Positive, normalize: bool,
                  t: Knee, itml_percentiles: tuple[float, float], solver: str, support_first: bool = False):
    """Validate the settings; return (Problem, X0, decode, meta) with decode(X) -> the factor G of K.

    With ``support_first`` the n × n working coordinates number the m points the constraints touch
    first (K's rows and columns permuted; decode returns G in the given order): then every Σ α_i A_i
    lives in the leading m × m block (``TraceMap.extent`` = m), and :func:`steihaug_pcg`'s
    Lᵀ H_F L is an m × m product.  The r × r coordinates (K = G0 X G0ᵀ) gain nothing from it
    (Σ α_i A_i is dense there) and use the caller's G0 as it is, without a copy.
    """
    if len(constraints) == 0:
        raise ConfigError(f"solver '{solver}' needs constraints; the constraint set is empty.")
    n = G0.shape[0]
    _check_indices(constraints)
    labeled = np.unique(np.concatenate([constraints.i, constraints.j] +
                                       ([constraints.k] if constraints.has_triplets else [])))
    m = labeled.size
    G0 = _full_column_rank(np.asarray(G0, dtype=np.float64))
    r = G0.shape[1]
    w = gamma / m if normalize else gamma
    # working coordinates: K itself (r = n, or r close to n with A_i N = 0) or X with K = G0 X G0^T
    shift_null = _annihilated_null_space(G0, constraints, loss) if r < n and 2 * r >= n else None
    full = r == n or shift_null is not None
    pos = None
    if support_first and full:                        # point p is working coordinate pos[p]
        pos = np.empty(n, dtype=np.int64)
        pos[np.concatenate([labeled, np.setdiff1d(np.arange(n), labeled)])] = np.arange(n)
        back = np.argsort(pos)
        G0 = G0[back]
        shift_null = None if shift_null is None else shift_null[back]
        constraints = replace(constraints, i=pos[constraints.i], j=pos[constraints.j],
                              k=None if constraints.k is None else pos[constraints.k])

    pair_info = None
    if loss in TRIPLET_LOSSES:
        rows, a, b, coef, c = _triplet_terms(constraints, loss)
    else:
        i, j, similar, bound = _pairs_from(constraints)
        rows, a, b, coef, c = _pair_terms(i, j, similar, loss)
        pair_info = (i, j, similar, bound)
    op = TraceMap(n, rows, a, b, coef, c, None if full else np.ascontiguousarray(G0))   # (no copy of a C-ordered G0)
    shift = None if shift_null is None else (np.sum(G0 * G0) / r, shift_null)   # s NNᵀ, s = tr(K0) / r
    if full:
        K0 = G0 @ G0.T
        del G0                                        # (the permuted copy) K0 is all the full problem needs
        if shift is not None:
            add_shift(K0, shift, 1.0)
        c0 = chol(K0)
        if c0 is None:
            raise DataError(f"solver '{solver}': the initial kernel is not positive definite on its range.")
        K0inv = inverse_from_chol(c0[0])
        prob = Problem(op, None, w, K0inv, c0[1])
        del c0
        X0 = K0
    else:
        prob = Problem(op, None, w, None, 0.0)
        X0 = np.eye(r)

    if loss == "log":
        prob.loss = log_loss()
    elif loss in ("lmnn", "hoi"):
        prob.loss = smooth_hinge(t, loss)
    elif loss == "linear":
        prob.loss = linear_loss()
    else:                                             # itml: thresholds from the pairs, else K0 percentiles
        i, j, similar, bound = pair_info
        if np.any(np.isnan(bound)):
            d0 = op.values(X0)
            lo, hi = itml_percentiles
            u, l = np.percentile(d0, lo), np.percentile(d0, hi)
            bound = np.where(similar, u, l)
        if np.any(bound <= 0):
            raise ConfigError("loss 'itml': distance thresholds must be > 0.")
        prob.loss = itml_loss(bound, similar)

    decode = _full_decode(shift, pos) if full else _range_decode(G0, pos)
    meta = {"loss_weight": w, "labeled": m, "mode": "full" if shift_null is None and full else
            ("full_shifted" if full else "range"), "rank0": r, "constraints_used": c}
    return prob, X0, decode, meta


def linear_weight_sup(prob: Problem) -> float:
    """ψ(x) = −x has a minimiser iff K0⁻¹ − w Σ A_i ≻ 0 (then K* = (K0⁻¹ − w Σ A_i)⁻¹): the supremum
    of such w, 1 / λ_max(Σ A_i, K0⁻¹) (inf when Σ A_i has no positive generalized eigenvalue)."""
    S = dense(prob.op.adjoint(np.ones(prob.op.C.shape[0])))
    base = np.eye(prob.dim) if prob.K0inv is None else prob.K0inv
    top = float(sla.eigh(S, base, eigvals_only=True)[-1])
    return 1.0 / top if top > 0 else math.inf
