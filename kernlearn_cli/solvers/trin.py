r"""Kernel learning by unconstrained optimization (Li, Fu, Dai, Sminchisescu & Wang, AISTATS 2009).

.. math::

    f(K) = w \sum_{i=1}^c \psi(\operatorname{tr}(K A_i)) + D_{ld}(K, K_0), \qquad w = \gamma / m
    \ \text{(or } \gamma\text{)},                                                          \quad (3)

    \nabla f = w \sum_i \psi'(x_i) A_i + K_0^{-1} - K^{-1}, \qquad x_i = \operatorname{tr}(K A_i), \quad (4)

    H(\Delta) = w \sum_i \psi''(x_i) \operatorname{tr}(\Delta A_i) A_i + K^{-1} \Delta K^{-1}.   \quad (5)

The LogDet divergence is a barrier, so f is minimised without constraints.  Two solvers:

* ``trin`` -- trust-region inexact Newton (Sec. 3): the Newton equation H(D) = -∇f is solved
  by the preconditioned CG of Table 1 (preconditioner Δ ↦ KΔK, the inverse of the LogDet part
  of H) inside a Frobenius-norm trust region, stopped at ‖R‖ < ν_k ‖∇f‖ with
  ν_k = min(0.5, √‖∇f‖) (Sec. 4.1); the radius follows Nocedal & Wright, Alg. 4.1.  The CG
  runs in the preconditioner's coordinates and trial points are factored through K's Cholesky
  factor (same iterates in exact arithmetic; robust when cond K nears 1/eps).
* ``pr_cg`` -- the Polak-Ribière⁺ nonlinear CG baseline of Sec. 6.2, with an exact line search
  that stays inside the PD cone (the LogDet term along K + tD is Σ log(1 + t μ_j)).

The problem itself -- the losses, the trace map tr(K A_i), f with its gradient and Hessian, and the
working coordinates from K0's factor -- is :mod:`kernlearn_cli.solvers._trin_problem`.

References
----------
.. [1] F. Li, Y. Fu, Y.-H. Dai, C. Sminchisescu and J. Wang. Kernel learning by unconstrained
   optimization. Proceedings of the 12th International Conference on Artificial Intelligence and
   Statistics (AISTATS 2009), PMLR 5, pages 328–335. https://proceedings.mlr.press/v5/li09a.html
.. [2] T. Steihaug. The conjugate gradient method and trust regions in large scale optimization.
   SIAM Journal on Numerical Analysis 20 (1983), pages 626–637.
.. [3] J. Nocedal and S. J. Wright. Numerical Optimization, 2nd ed. Springer, 2006 (Alg. 4.1, Sec. 7.2).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Annotated, Callable, Literal

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.linalg.blas import dtrmm, dtrsm

from ..errors import ConfigError, DataError
from ..params import Interval, Length, Positive, PositiveInt
from ..registry import Checks, EstimatorSpec, solvers
from ..resources import DOUBLE, estimated
from ..types import Constraints, SolverResult, SpilledPath
from ._trin_kernels import cg_direction, cg_dots, cg_dots_packed, cg_step, cg_step_raw, pack_lower, packed_norm2
from ._trin_problem import (Knee, LossName, Problem, build_problem, chol, dense, inverse_from_chol, linear_weight_sup,
                            symmetrize)
from .protocol import Certificate, Checked, finish

#: The declarations of the settings ``trin`` and ``pr_cg`` share (besides the common ones of params).
Stop = Literal["absolute", "relative"]
Percentiles = Annotated[list[Annotated[float, Interval(0, 100)]], Length(2, 2)]
PathMultiplier = Annotated[float, Interval(0, None, closed="left")]


# ---- the state of a solve ----------------------------------------------------------------

@dataclass
class _State:
    """A point X ≻ 0: its lower Cholesky factor, x_i = tr(K A_i), f and ∇f (X⁻¹ is not kept).

    ``grad_fro`` is ‖∇f‖_F; TRIN keeps the natural gradient ``Gh`` = Lᵀ∇f L and releases X and ∇f
    while it iterates (:func:`_lean`); its CG then takes ``Gh`` over as its residual."""

    X: np.ndarray | None
    L: np.ndarray
    x: np.ndarray
    f: float
    G: np.ndarray | None
    logdet: float = 0.0
    grad_fro: float = math.nan
    Gh: np.ndarray | None = None


def _point(prob: Problem, X: np.ndarray, factor: tuple | None = None) -> _State | None:
    """X, its factor, x and f (``G`` None), or None when X is not positive definite.
    ``factor`` = (L, log det X) when the Cholesky factor of X is already known."""
    c = chol(X) if factor is None else factor
    if c is None:
        return None
    L, logdet = c
    x = prob.op.values(X)
    return _State(X, L, x, prob.value(X, logdet, x), None, logdet)


def _with_gradient(prob: Problem, s: _State) -> _State:
    """``s`` with its gradient (4), from X⁻¹ formed from the factor and released."""
    s.G = prob.gradient(inverse_from_chol(s.L), s.x)
    s.grad_fro = float(np.linalg.norm(s.G))
    return s


def _lean(s: _State) -> _State:
    """``s`` as TRIN iterates on it: the natural gradient Ĝ = Lᵀ∇f L kept, X and ∇f released
    (X = L Lᵀ is formed again where a kernel is asked for: :func:`_with_kernel`)."""
    s.Gh = natural_gradient(s)
    s.X = s.G = None
    return s


def _with_kernel(s: _State) -> _State:
    """``s`` with X = L Lᵀ formed again when released (the product that made a trial point's X)."""
    if s.X is None:
        s.X = s.L @ s.L.T
    return s


def _state(prob: Problem, X: np.ndarray, factor: tuple | None = None) -> _State | None:
    """Objective, factor and gradient at X, or None when X is not positive definite.
    ``factor`` = (L, log det X) when the Cholesky factor of X is already known."""
    s = _point(prob, X, factor)
    return None if s is None else _with_gradient(prob, s)


def _blas_lower(L: np.ndarray) -> tuple[np.ndarray, int, int]:
    """L for BLAS without a copy: (L, lower=1, flip=0) when L is Fortran-ordered, else its transpose,
    a Fortran-ordered view, as (Lᵀ, lower=0, flip=1); ``trans_a ^ flip`` then applies op(L)."""
    return (L, 1, 0) if L.flags.f_contiguous else (L.T, 0, 1)


def _congruence(L: np.ndarray, A, transpose: bool = False, out: np.ndarray | None = None) -> np.ndarray:
    """L A Lᵀ, or Lᵀ A L with ``transpose``, for a lower-triangular L and a symmetric A, dense or
    sparse (two triangular products; a sparse A is multiplied first).  Operands reach BLAS without
    copies (:func:`_blas_lower`; A or Aᵀ = A, whichever is Fortran-ordered); the symmetric product
    is returned transposed, C-ordered.  ``out``, a Fortran-ordered array of A's shape (``A.T`` for
    a C-ordered A's own memory), holds the product instead of a new array (dense A)."""
    T, lower, flip = _blas_lower(L)
    t = int(transpose)
    if sp.issparse(A):                                               # op(L) A = (A op(L)ᵀ)ᵀ, A = Aᵀ
        inner = np.asarray(A @ (L if t else L.T)).T
    else:
        B = A if A.flags.f_contiguous else A.T
        if out is not None and not np.shares_memory(out, B):
            out[...] = B
        inner = dtrmm(1.0, T, B if out is None else out, lower=lower, trans_a=t ^ flip, overwrite_b=int(out is not None))
    return dtrmm(1.0, T, inner, side=1, lower=lower, trans_a=(1 - t) ^ flip, overwrite_b=1).T


def _inverse_congruence(L: np.ndarray, A: np.ndarray) -> np.ndarray:
    """L⁻ᵀ A L⁻¹ for a lower-triangular L and a symmetric dense A (two triangular solves; one new
    array, returned transposed, C-ordered, as :func:`_congruence`)."""
    T, lower, flip = _blas_lower(L)
    inner = dtrsm(1.0, T, A if A.flags.f_contiguous else A.T, lower=lower, trans_a=1 ^ flip)
    return dtrsm(1.0, T, inner, side=1, lower=lower, trans_a=flip, overwrite_b=1).T


def _trial(prob: Problem, s: _State, Zh: np.ndarray) -> tuple[_State | None, float, float]:
    """The point K + Z, Z = L Ẑ Lᵀ (K = L Lᵀ), and the actual decrease f(K) − f(K + Z).

    K + Z = L (I + Ẑ) Lᵀ is positive definite iff I + Ẑ is -- a well-conditioned test where a
    Cholesky of K + Z fails in rounding once cond K nears 1/eps -- and its factor is L chol(I + Ẑ).
    The decrease is summed from its parts, w Σ (ψ(x_i) − ψ(x_i + δ_i)) − tr(K0⁻¹ Z) + log det(I + Ẑ)
    with δ_i = tr(Z A_i), so it keeps its accuracy when f is large; its rounding error is bounded
    by a few eps times the parts' magnitudes.  Same iterates as a Cholesky of K + Z in exact
    arithmetic.  Ẑ is overwritten (it becomes the trial's factor); the trial's gradient is left to
    :func:`_with_gradient`, once the current point may be released.  Returns (the point, ``G``
    None, or None when not PD; decrease; its rounding bound).
    """
    symmetrize(Zh)
    Z = _congruence(s.L, Zh)
    psi0, psi1 = prob.loss.psi(s.x), prob.loss.psi(s.x + prob.op.values(Z))
    if prob.K0inv is None:                                           # tr(K0⁻¹Z) = Σ of its entries (diagonal if I)
        tr, scale_tr = float(np.trace(Z)), float(np.sum(np.abs(np.diag(Z))))
    else:
        Z *= prob.K0inv
        tr = float(np.sum(Z))
        scale_tr = float(np.sum(np.abs(Z, out=Z)))
    del Z
    Zh.flat[::len(Zh) + 1] += 1.0                                    # I + Ẑ, factored in place
    C = chol(Zh, overwrite=True)
    if C is None:
        return None, -math.inf, math.inf
    T, lower, flip = _blas_lower(s.L)
    Lt = dtrmm(1.0, T, C[0], lower=lower, trans_a=flip, overwrite_b=1)   # L chol(I + Ẑ), lower triangular
    trial = _point(prob, Lt @ Lt.T, factor=(Lt, s.logdet + C[1]))
    ared = prob.w * float(np.sum(psi0 - psi1)) - tr + C[1]
    scale = prob.w * float(np.sum(np.abs(psi0) + np.abs(psi1))) + scale_tr + abs(C[1])
    return trial, ared, 64 * np.finfo(float).eps * scale


# ---- TRIN -------------------------------------------------------------------------------

def steihaug_pcg(prob: Problem, s: _State, radius: float, nu: float, max_cg: int, natural: bool,
                 g: np.ndarray | None = None):
    """Table 1: preconditioned CG on H(Z) = −∇f inside the trust region ‖Z‖ <= radius.

    The preconditioner Δ ↦ KΔK = S Sᵀ(Δ), with S(Ẑ) = L Ẑ Lᵀ and K = L Lᵀ, makes PCG on H the
    plain CG on Ĥ(Ẑ) = Sᵀ H S (Ẑ) = Lᵀ H_F(L Ẑ Lᵀ) L + Ẑ = −Lᵀ∇f L, with the iterates mapped by
    Z = S(Ẑ): the same Z's in exact arithmetic, and it is run in these coordinates because
    every inner product is then a sum of squares -- the printed recurrence's <R, KRK> falls to
    <= 0 in rounding once cond K nears 1/eps (Ionosphere's K0 has 2.3e9).  The trust region is
    ‖Z‖_F <= Δ (eq. 7) or, with ``natural``, the preconditioner's norm ‖Z‖_K = ‖Ẑ‖_F (Nocedal &
    Wright, Sec. 7.2); CG stops at ‖R‖_F < ν ‖∇f‖_F (Table 1), or at ‖R̂‖_F < ν ‖Ĝ‖_F with
    ``natural``.  ``g`` is Ĝ = Lᵀ∇f L when already known (:func:`natural_gradient`); CG's residual
    R̂ starts in its memory, so it is overwritten.

    Only the scalars of CG (α, β, the trust-region test) and Ẑ, R̂ come from these coordinates.
    The direction in K's coordinates, P = L P̂ Lᵀ, on which H_F is evaluated, is formed each step
    (two triangular products, in one work array); the curvature is <P̂, Ĥ(P̂)> = ‖P̂‖² + <P, H_F(P)>.
    In the Frobenius trust region Z = Σ αP is carried beside Ẑ, and Table 1's residual
    R = L⁻ᵀ R̂ L⁻¹ of the stopping test by its recurrence R₊ = R + α(H_F(P) + Q),
    Q = L⁻ᵀ P̂ L⁻¹ = −R + βQ; the three are symmetric and kept as packed lower triangles
    (n(n+1)/2 doubles each).  H_F(P) vanishes outside its leading k × k block
    (:attr:`TraceMap.extent`), where L is the k × k triangle L_k, so Lᵀ H_F L = L_kᵀ H_F L_k
    (k³; k = m, the points the constraints touch, when they are numbered first:
    :func:`build_problem`), formed in H_F's own memory.  The n × n updates of a step are compiled
    passes (:mod:`._trin_kernels`), and the model's decrease is summed step by step,
    m(Z) − m(Z + αP) = −(α<R̂, P̂> + ½α²<P̂, Ĥ(P̂)>), so Ĝ need not be kept.  The arrays: Ẑ, R̂, P̂,
    the work array and H_F's block (5 n²), and with the Frobenius region Z, R and Q (1.5 n²).
    Returns (Ẑ, predicted decrease m(0) − m(Z) of model (7), CG steps, hit the boundary, ‖Z‖).
    """
    L = s.L
    d2 = prob.loss.d2(s.x)
    R = natural_gradient(s) if g is None else g                      # R̂ = Ĥ(Ẑ) + Ĝ, from Ĝ = Lᵀ ∇f L
    del g
    Zh = np.zeros_like(R)
    P = -R
    rr = float(np.vdot(R, R))
    if not rr > 0:
        return Zh, 0.0, 0, False, 0.0
    target = nu * math.sqrt(rr) if natural else nu * s.grad_fro
    k = prob.op.extent
    L_k = L if k == len(L) else np.asfortranarray(L[:k, :k])
    work = np.empty(R.shape, order="F")                              # P = L P̂ Lᵀ, formed in it each step
    Zp = Rp = Qp = np.zeros(0)                                       # (natural: not carried)
    if not natural:                                                  # packed lower triangles
        Zp = np.zeros(len(R) * (len(R) + 1) // 2)                    # Z = L Ẑ Lᵀ
        Rp = pack_lower(_inverse_congruence(L, R), np.empty_like(Zp))   # R = L⁻ᵀ R̂ L⁻¹ = ∇f
        Qp = -Rp                                                     # Q = L⁻ᵀ P̂ L⁻¹
    zz, pred = 0.0, 0.0                                              # ‖Z‖² (Ẑ's with ``natural``), m(0) − m(Z)
    for step in range(1, max_cg + 1):
        Praw = _congruence(L, P, out=work)
        H = dense(prob.hessian_loss(Praw, d2)[:k, :k])             # H_F(P) on the k x k block, C-ordered
        php, rp, zp, pp = cg_dots(P, Praw, H, R, Zh) if natural else cg_dots_packed(P, Praw, H, R, Zp)
        alpha = rr / php
        if zz + 2 * alpha * zp + alpha * alpha * pp >= radius * radius:  # boundary: ‖Z + τP‖ = radius
            tau = (-zp + math.sqrt(max(zp * zp + pp * (radius * radius - zz), 0.0))) / pp
            P *= tau
            Zh += P
            return Zh, pred - (tau * rp + 0.5 * tau * tau * php), step, True, radius
        pred -= alpha * rp + 0.5 * alpha * alpha * php
        if not natural:
            rr_raw = cg_step_raw(alpha, Praw, H, Zp, Rp, Qp)
        Hh_k = _congruence(L_k, H, transpose=True, out=H.T)          # Ĥ(P̂) = P̂ + L_kᵀ H_F L_k
        rr_next = cg_step(alpha, P, Hh_k, Zh, R)
        H = Hh_k = None                                              # (released before the next step's)
        zz += 2 * alpha * zp + alpha * alpha * pp
        if math.sqrt(rr_next if natural else rr_raw) < target:
            break
        cg_direction(rr_next / rr, R, P, Rp, Qp)
        rr = rr_next
    else:
        step = max_cg
    znorm = float(np.linalg.norm(Zh)) if natural else math.sqrt(packed_norm2(Zp))
    return Zh, pred, step, False, znorm


def natural_gradient(s: _State) -> np.ndarray:
    """Ĝ = Lᵀ ∇f L (K = L Lᵀ), the gradient in the preconditioner's coordinates."""
    return np.ascontiguousarray(_congruence(s.L, s.G, transpose=True))


def natural_norm(s: _State) -> float:
    """‖K^{1/2} ∇f K^{1/2}‖_F = ‖Lᵀ∇f L‖_F, the gradient in the metric of the LogDet Hessian (scale free)."""
    return float(np.linalg.norm(natural_gradient(s)))


def gap_bound(s: _State, gn: float) -> float:
    """An upper bound on f(K) − f*, from the natural gradient Ĝ = K^{1/2} ∇f K^{1/2}.

    The losses are convex, so f(K') >= f(K) + <∇f, K' − K> + D_ld(K', K) (the LogDet part is
    exact); minimising the right side over K' ≻ 0 gives f* >= f(K) − Σ_j (g_j − log(1 + g_j)),
    g_j the eigenvalues of Ĝ (−inf if some g_j <= −1).  With ρ = max(0, −min g_j) <= ‖Ĝ‖_F = ``gn``
    < 1 the sum is at most ‖Ĝ‖²_F / (2(1 − ρ)) (termwise: g − log(1+g) <= g² / (2(1 + min(g, 0)))),
    which needs no eigenvalues and is used while gn < 1/2 (where it is within a factor 2 of the
    sum); otherwise the eigenvalues are computed (O(n³), once per γ).
    """
    if gn < 0.5:
        return gn * gn / (2.0 * (1.0 - gn))
    g = np.linalg.eigvalsh(s.L.T @ s.G @ s.L if s.Gh is None else s.Gh)
    return float(np.sum(g - np.log1p(g))) if g.min() > -1.0 else math.inf


def trin_solve(prob: Problem, X0: np.ndarray, *, tol: float, max_iter: int, max_cg: int = 500,
               trust_norm: str = "frobenius", callback: Callable | None = None):
    """Trust-region inexact Newton from X0 (PD).  Returns (state, stats, history).

    ``trust_norm`` "frobenius" is eq. (7) and Table 1 as printed: ‖Z‖_F <= Δ, ν_k = min(0.5,
    √‖∇f‖_F), first radius ‖K∇fK‖_F.  "natural" measures the step, the forcing term and the
    residual in the preconditioner's metric instead (scale free: the same iterates for K0 and
    c K0), with first radius 1, inside which K + Z is always positive definite.  Stops when the
    natural gradient norm :func:`natural_norm` is <= tol.  The point is kept as its factor and
    natural gradient (:func:`_lean`); the state returned has X again."""
    s = _state(prob, X0)
    del X0                                                               # (s.X, when positive definite)
    if s is None:
        raise DataError("trin: the starting kernel is not positive definite on the range of K0.")
    hist = {k: [] for k in ("objective", "grad_norm", "cg_steps", "radius", "rho", "seconds")}
    t0 = time.perf_counter()
    cg_total, it = 0, 0
    natural = trust_norm == "natural"
    radius = 1.0 if natural else max(np.linalg.norm(s.X @ s.G @ s.X), 1e-8 * np.linalg.norm(s.X))
    floor = 1e-15 if natural else 1e-15 * np.linalg.norm(s.X)
    s = _lean(s)
    gn = float(np.linalg.norm(s.Gh))
    while gn > tol and it < max_iter:
        it += 1
        nu = min(0.5, math.sqrt(gn if natural else s.grad_fro))         # Sec. 4.1
        Gh, s.Gh = _natural_gradient_of(prob, s), None                  # (CG's residual starts in its memory)
        Zh, pred, steps, hit, znorm = steihaug_pcg(prob, s, radius, nu, max_cg, natural, Gh)  # pred = m(0) − m(Z)
        del Gh
        cg_total += steps
        trial, ared, ared_err = _trial(prob, s, Zh) if pred > 0 else (None, -math.inf, math.inf)
        del Zh                                                           # (its memory is the trial's factor now)
        rho = ared / pred if trial is not None else -math.inf
        if trial is not None and pred <= ared_err:                       # the decrease is below rounding:
            Gh_trial = natural_gradient(_with_gradient(prob, trial))     # judge by the gradient instead
            rho = 1.0 if float(np.linalg.norm(Gh_trial)) < gn else 0.0
            del Gh_trial
        if rho < 0.25:                                                   # N&W Alg. 4.1
            radius = 0.25 * znorm
        elif rho > 0.75 and hit:
            radius = 2.0 * radius
        if rho > 1e-4:
            s = None                                                     # the current point released first
            s = _lean(trial if trial.G is not None else _with_gradient(prob, trial))
            gn = float(np.linalg.norm(s.Gh))
        trial = None
        for key, v in (("objective", s.f), ("grad_norm", gn), ("cg_steps", steps), ("radius", radius),
                       ("rho", rho), ("seconds", time.perf_counter() - t0)):
            hist[key].append(v)
        if callback is not None:
            callback(it, grad_norm=Checked(gn, tol), objective=s.f, cg=steps, radius=radius)
        if radius < floor:                                               # no progress possible
            break
    stats = {"iterations": it, "cg_steps": cg_total, "stopped_by": _stopped_by(gn, tol, it, max_iter),
             "grad_norm": gn, "seconds": time.perf_counter() - t0}
    s.Gh = _natural_gradient_of(prob, s)
    return _with_kernel(s), stats, hist


def _natural_gradient_of(prob: Problem, s: _State) -> np.ndarray:
    """``s.Gh``, formed again from the point when the last CG spent it (its step rejected)."""
    return s.Gh if s.Gh is not None else _lean(_with_gradient(prob, s)).Gh


def _stopped_by(gn: float, tol: float, it: int, max_iter: int) -> str:
    return "tolerance" if gn <= tol else ("max_iter" if it >= max_iter else "stall")


# ---- Polak-Ribière+ nonlinear CG --------------------------------------------------------

def _line_search(prob: Problem, s: _State, D: np.ndarray, max_newton: int = 60) -> float:
    """argmin_t f(K + tD) over the PD interval t in (0, t_max): safeguarded Newton on φ'(t).

    φ(t) = w Σ ψ(x_i + t δ_i) + t tr(D K0⁻¹) − Σ_j log(1 + t μ_j) + const, with μ the
    eigenvalues of L⁻¹ D L⁻ᵀ (K = L Lᵀ) and δ_i = tr(D A_i): one O(n³) eigenproblem, then
    O(c + n) per trial.
    """
    Li = sla.solve_triangular(s.L, np.eye(s.L.shape[0]), lower=True, check_finite=False)
    mu = np.linalg.eigvalsh(Li @ D @ Li.T)
    delta = prob.op.values(D)
    tr0 = prob.trace_K0inv(D)
    w, loss = prob.w, prob.loss

    def dphi(t):
        return (w * float(np.dot(loss.d1(s.x + t * delta), delta)) + tr0 - float(np.sum(mu / (1.0 + t * mu))),
                w * float(np.dot(loss.d2(s.x + t * delta), delta * delta)) + float(np.sum((mu / (1.0 + t * mu)) ** 2)))

    g0 = dphi(0.0)[0]
    if not g0 < 0:
        return 0.0
    t_max = -1.0 / mu.min() if mu.min() < 0 else math.inf
    lo, hi = 0.0, None
    t = min(1.0, 0.5 * t_max)
    while hi is None:                                   # bracket the root of φ'
        g = dphi(t)[0]
        if g >= 0:
            hi = t
        else:
            lo = t
            t = 0.5 * (t + t_max) if math.isfinite(t_max) else 2.0 * t
            if t - lo <= 1e-15 * max(t, 1.0):
                return lo
    t = 0.5 * (lo + hi)
    for _ in range(max_newton):
        g, h = dphi(t)
        if abs(g) <= 1e-12 * abs(g0):
            break
        if g > 0:
            hi = t
        else:
            lo = t
        t_new = t - g / h if h > 0 else 0.5 * (lo + hi)
        t = t_new if lo < t_new < hi else 0.5 * (lo + hi)
        if hi - lo <= 1e-15 * hi:
            break
    return t


def prcg_solve(prob: Problem, X0: np.ndarray, *, tol: float, max_iter: int, precondition: bool = False,
               callback: Callable | None = None):
    """Polak-Ribière⁺ nonlinear CG (Nocedal & Wright, Sec. 5.2) with an exact PD line search.

    With ``precondition`` the residual is preconditioned by TRIN's ΔK ↦ KΔKK (Y = K∇fK, the
    inverse of the LogDet part of the Hessian): D = −Y + βD, β = max(0, <∇f₊, Y₊ − Y>/<∇f, Y>).
    Stops when the natural gradient norm is <= tol.  Returns (state, stats, history)."""
    s = _state(prob, X0)
    if s is None:
        raise DataError("pr_cg: the starting kernel is not positive definite on the range of K0.")
    hist = {k: [] for k in ("objective", "grad_norm", "step", "seconds")}
    t0 = time.perf_counter()
    Y = s.X @ s.G @ s.X if precondition else s.G
    D = -Y
    it = 0
    gn = natural_norm(s)
    while gn > tol and it < max_iter:
        it += 1
        t = _line_search(prob, s, D)
        for _ in range(60):       # the minimiser can sit within rounding of the PD boundary: back off
            Xt = s.X + t * D
            trial = _state(prob, 0.5 * (Xt + Xt.T))
            if trial is not None or t == 0.0:
                break
            t *= 0.5
        if trial is None or t == 0.0 or not trial.f <= s.f:
            if np.array_equal(D, -Y):                    # even steepest descent fails: rounding floor
                break
            D = -Y                                       # restart
            continue
        Y_next = trial.X @ trial.G @ trial.X if precondition else trial.G
        beta = max(0.0, float(np.vdot(trial.G, Y_next - Y)) / float(np.vdot(s.G, Y)))   # PR+
        s, Y = trial, Y_next
        D = -Y + beta * D
        if float(np.vdot(D, s.G)) >= 0:
            D = -Y
        gn = natural_norm(s)
        for key, v in (("objective", s.f), ("grad_norm", gn), ("step", t), ("seconds", time.perf_counter() - t0)):
            hist[key].append(v)
        if callback is not None:
            callback(it, grad_norm=Checked(gn, tol), objective=s.f, t=t)
    stats = {"iterations": it, "cg_steps": 0, "stopped_by": _stopped_by(gn, tol, it, max_iter), "grad_norm": gn,
             "seconds": time.perf_counter() - t0}
    return s, stats, hist


# ---- the path and the solvers ----------------------------------------------------------

def path_gammas(gamma_min: float, gamma: float, alpha: float) -> list[float]:
    """γ_min, α γ_min, α² γ_min, ... while below γ, then γ itself (Sec. 6.2)."""
    out, g = [], gamma_min
    while g < gamma * (1 - 1e-12):
        out.append(g)
        g *= alpha
    return out + [gamma]


def relative_progress(callback: Callable, scale: float, tol: float) -> Callable:
    """``callback`` given the measure of ``stop: relative`` (the certificate's ``relative_grad_norm``):
    the natural gradient norm over ``scale``, its value at K0 for the γ being solved, against ``tol``."""
    def report(step, /, grad_norm, **metrics):
        callback(step, relative_grad_norm=Checked(grad_norm / scale, tol), **metrics)
    return report


def _gradient_scales(prob: Problem, X0: np.ndarray, weights: list[float]) -> list[float]:
    """The natural gradient norm at X0 for each loss weight (``stop: relative``'s scales), X0⁻¹ formed once."""
    start = _point(prob, X0)
    Xinv = inverse_from_chol(start.L)
    scales = []
    for w in weights:
        prob.w = w
        scales.append(natural_norm(replace(start, G=prob.gradient(Xinv, start.x))))
    return scales


def _solve(method: str, G0, constraints, *, loss, gamma, tol, max_iter, path, gamma_min, normalize, t,
           itml_percentiles, max_cg, keep_path, callback, stop="absolute", trust_norm="frobenius",
           precondition=False, max_path_iter=None) -> tuple[SolverResult, Certificate]:
    """The path of ``method`` and its certificate (``trin`` and ``pr_cg`` hand them to :func:`finish`)."""
    if path and not (path > 1 and gamma_min < gamma):
        raise ConfigError(f"solver.path (the multiplier α) must be > 1 with 0 < gamma_min < gamma; got path = "
                          f"{path}, gamma_min = {gamma_min}, gamma = {gamma}. Use path: 0 for a single gamma.")
    if stop == "relative" and not tol < 1:
        raise ConfigError(f"solver.stop 'relative' needs tol < 1 (a fraction of the gradient norm at K0); got "
                          f"tol = {tol}.")
    if not itml_percentiles[0] < itml_percentiles[1]:
        raise ConfigError(f"solver.itml_percentiles must be [u, l] with 0 <= u < l <= 100; got {itml_percentiles}.")
    prob, X0, decode, meta = build_problem(G0, constraints, loss, gamma, normalize, t, tuple(itml_percentiles), method,
                                           support_first=method == "trin")
    gammas = path_gammas(gamma_min, gamma, path) if path else [gamma]
    if loss == "linear":                                 # unbounded below for w >= w_sup
        w_sup = linear_weight_sup(prob)
        g_sup = w_sup * (meta["labeled"] if normalize else 1.0)
        if gamma >= g_sup and not path:
            raise ConfigError(f"solver '{method}': with loss 'linear' the objective is unbounded below at gamma = "
                              f"{gamma:g} (K0^-1 - w sum A_i is not positive definite); it has a minimiser only "
                              f"for gamma < {g_sup:.4g}.")
        gammas = [g for g in gammas if g <= 0.5 * g_sup]       # a path stops at half the bound
        if not gammas:
            raise ConfigError(f"solver '{method}': with loss 'linear' a minimiser exists only for gamma < {g_sup:.4g}; "
                              f"the path starts at gamma_min = {gamma_min:g}. Lower gamma_min.")
    weights = [g / meta["labeled"] if normalize else g for g in gammas]
    scales = _gradient_scales(prob, X0, weights) if stop == "relative" else None
    held = [X0]                                  # the solvers take the start out of it (the caller keeps no copy)
    del X0
    per_gamma = {k: [] for k in ("path_gamma", "path_iterations", "path_cg_steps", "path_seconds", "path_objective",
                                 "path_grad_norm", "path_stop_target", "path_gap_bound")}
    kept, history, check_seconds, stops = SpilledPath() if keep_path else [], {}, 0.0, []
    budget = math.inf if max_path_iter is None else max_path_iter
    for g, w in zip(gammas, weights):
        if budget - sum(per_gamma["path_iterations"]) < 1:          # the path's budget is spent: stop here
            break
        cap = int(min(max_iter, budget - sum(per_gamma["path_iterations"])))
        prob.w = w
        scale = scales[len(per_gamma["path_gamma"])] if scales is not None else 1.0
        target = tol * scale if scales is not None else tol
        report = relative_progress(callback, scale, tol) if scales is not None and callback is not None else callback
        if method == "trin":
            s, stats, hist = trin_solve(prob, held.pop(), tol=target, max_iter=cap, max_cg=max_cg,
                                        trust_norm=trust_norm, callback=report)
        else:
            s, stats, hist = prcg_solve(prob, held.pop(), tol=target, max_iter=cap, precondition=precondition,
                                        callback=report)
        t0 = time.perf_counter()
        bound = gap_bound(s, stats["grad_norm"])
        check_seconds += time.perf_counter() - t0
        stops.append(stats["stopped_by"])
        for key, v in (("path_gamma", g), ("path_iterations", stats["iterations"]),
                       ("path_cg_steps", stats["cg_steps"]), ("path_seconds", stats["seconds"]),
                       ("path_objective", s.f), ("path_grad_norm", stats["grad_norm"]),
                       ("path_stop_target", target), ("path_gap_bound", bound)):
            per_gamma[key].append(v)
        history = hist
        held.append(s.X)
        objective, s = s.f, None                 # the next γ starts from X alone: factor and gradient released
        if keep_path:
            kept.append((g, decode(held[0])))
    prob.K0inv = None                            # the last kernel is decoded in the solver's memory
    G = decode(held.pop(), overwrite=True)
    arrays = {}
    if constraints.has_triplets:
        arrays["triplets"] = np.column_stack([constraints.i, constraints.j, constraints.k])
    arrays["G0"] = G0                       # K0 = G0 G0ᵀ: f is recomputable from the factors file
    unsolved = len(gammas) - len(per_gamma["path_gamma"])
    info = {"loss": loss, "gamma": float(per_gamma["path_gamma"][-1]), "loss_weight": prob.w, "normalize": normalize,
            "mode": meta["mode"], "labeled": meta["labeled"], "cg_steps": int(np.sum(per_gamma["path_cg_steps"])),
            "path_points": len(gammas), "unsolved_path_points": unsolved, "iterations_last": stats["iterations"],
            "grad_norm": stats["grad_norm"], "certificate_seconds": check_seconds}
    path = {k: np.asarray(v, dtype=np.float64) for k, v in per_gamma.items()}
    result = SolverResult(G=G, objective=objective, iterations=int(np.sum(per_gamma["path_iterations"])),
                          converged=False, history={**{k: np.asarray(v) for k, v in history.items()}, **path},
                          info=info, arrays=arrays, path=kept)
    return result, path_certificate(path, tol, stop, stops, unsolved)


def path_certificate(path: dict, tol: float, stop: str, stops: list[str], unsolved: int = 0) -> Certificate:
    """Every γ of the path: its stopping measure met, and f − f* <= tol · max(1, |f|) (:func:`gap_bound`).

    The stopping measure is the natural gradient norm against ``tol`` ("absolute") or against tol
    times its value at K0 for that γ ("relative", Li et al.'s rule); the second check is what
    certifies the result, whatever the rule.  ``unsolved`` γ's (the path's iteration budget spent
    before them) fail the certificate.
    """
    rel_gap = path["path_gap_bound"] / np.maximum(1.0, np.abs(path["path_objective"]))
    if stop == "absolute":
        checks = {"grad_norm": (float(path["path_grad_norm"].max()), tol)}
    else:
        rel = path["path_grad_norm"] / (path["path_stop_target"] / tol)
        checks = {"relative_grad_norm": (float(rel.max()), tol)}
    checks["gap_bound"] = (float(rel_gap.max()), tol)
    checks["unsolved_path_points"] = (float(unsolved), 0.0)
    return Certificate(
        rule=f"at every γ of the path: natural gradient norm <= tol ({stop} rule) and the bound on f − f* "
             "<= tol · max(1, |f|)",
        checks=checks,
        figures={"path_gamma": path["path_gamma"], "path_grad_norm": path["path_grad_norm"],
                 "path_gap_bound": path["path_gap_bound"], "path_objective": path["path_objective"],
                 "path_relative_gap_bound": rel_gap, "stop": stop},
        stopped_by="max_path_iter" if unsolved else next((why for why in ("max_iter", "stall") if why in stops),
                                                          "tolerance"))


_PARAMS_DOC = """
    Parameters
    ----------
    G0 : ndarray (n, r)
        Factor of the initial kernel K0 = G0 G0ᵀ (rank deficient allowed: footnote 2).
    constraints : Constraints
        Triplets (loss log, lmnn, linear; tr(K A_ijk) = d(i,j) − d(i,k)) or similar/dissimilar
        pairs (loss itml, hoi; triplets give their pairs (i,k) similar and (i,j) dissimilar).
    loss : {"log", "lmnn", "linear", "itml", "hoi"}
        Table 2; lmnn and hoi use the smooth hinge (8) with ``t``.
    gamma : float
        γ > 0, the loss weight of eq. (3) (the last point of the path).
    tol : float
        Convergence tolerance (> 0) on the natural gradient norm ‖K^{1/2} ∇f K^{1/2}‖_F (Li et al.: 1e-3);
        below 1 with ``stop: relative``.
    stop : {"absolute", "relative"}
        Stop when that norm is <= tol ("absolute"), or <= tol times its value at K0 for the γ
        being solved ("relative"), a fixed scale per γ, so that a warm-started and a cold solve
        of the same γ stop at the same accuracy.  Either way the result's certificate bounds
        f − f* at every γ (:func:`gap_bound`) and ``converged`` requires that bound to be
        <= tol · max(1, |f|); the relative rule often stops well above the optimum, and its
        records then say converged = false (README, Tables 3-4).
    max_iter : int
        Iterations per γ (>= 1).
    max_path_iter : int or None
        Iterations summed over the path at most (>= 1; None: no limit).  When they are spent the path
        stops where it is: the result holds the last γ reached, ``info["unsolved_path_points"]``
        counts the γ's left, and the certificate fails.  Li et al.'s Tables 3-4 print such a run
        as "> 10000".
    path : float
        The multiplier α > 1 of the regularization path (Sec. 4.3): γ_min, αγ_min, ... below γ, then γ,
        each warm-started from the last; 0 solves γ alone from K0 (the "baseline").  With loss
        ``linear`` (unbounded below from a computable γ on) the path stops at half that γ.
    gamma_min : float
        First γ of the path (0 < gamma_min < gamma; 2⁻¹²).
    normalize : bool
        Weight the loss by γ/m (m = points in the constraints, eq. 3); false weights by γ (Sec. 6.1).
    t : float
        Knee of the smooth hinge (8), -1 < t < 1.
    itml_percentiles : [float, float]
        ITML thresholds u, l as percentiles of the K0 distances of the pairs (0 <= u < l <= 100),
        when the pairs carry none.
    keep_path : bool
        Keep every path point's factor for evaluators (``result.path``, a :class:`~kernlearn_cli.types.SpilledPath`:
        written to a temporary file as it is produced and read back one at a time, so the memory
        does not grow with the path); not written to the factors file.
    max_cg : int
        (trin) CG steps per Newton iteration at most (>= 1).
    trust_norm : {"frobenius", "natural"}
        (trin) The trust region's norm: ‖Z‖_F as printed in eq. (7) (default), or the scale-free
        ‖K^{-1/2} Z K^{-1/2}‖_F; see :func:`trin_solve`.
    precondition : bool
        (pr_cg) Precondition the CG directions with TRIN's ΔK ↦ KΔKK; off (default) is the plain
        PR⁺ of the paper's Table 4; see :func:`prcg_solve`.

    Returns
    -------
    SolverResult
        G with K = G Gᵀ; ``iterations`` summed over the path; history per iteration (objective,
        grad_norm, ...) of the last γ and per γ
        (path_gamma, path_iterations, path_cg_steps, path_seconds, path_objective); arrays
        ``triplets`` (triplet constraints) and ``G0``, K0's factor as given (K0 = G0 G0ᵀ: the objective
        can be recomputed from the factors file); info ``loss``, ``gamma``, ``loss_weight``.
"""


def _doc(summary: str):
    def deco(func):
        func.__doc__ = summary + "\n" + _PARAMS_DOC
        return func
    return deco


#: ``kernlearn warmup``'s constraints for TRIN, whose truncated CG compiles its kernels (:mod:`._trin_kernels`) on
#: first use: triplets of a few neighbours (PR-CG calls none of them).
#: ``kernlearn warmup``'s runs: each trust norm has CG kernels of its own (packed Z, R, Q for Frobenius).
WARMUP = {"constraints": {"name": "neighbor_triplets", "in_class": 3, "out_class": 3},
          "solver": [{"trust_norm": "frobenius"}, {"trust_norm": "natural"}]}


def _dense_cost(method: str, per_n2: float):
    """TRIN and PR-CG keep dense n x n iterates, their Cholesky factors and CG directions: ``per_n2`` n²
    doubles at the peak.  TRIN: 8 (7.8 measured at n = 2000 by benchmarks/scale/bench_trin_memory.py: the
    factor, Ẑ, R̂, P̂, the work array and the loss Hessian, and Z, R, Q packed; 9 with K0⁻¹ in the
    n x n modes when the constraints touch every point);
    PR-CG: 12 (10.6 measured at n = 2000 by benchmarks/scale/bench_trin_memory.py --solvers pr_cg, in the
    r x r mode; K0⁻¹ adds one in the n x n modes)."""
    def cost(G0, constraints, **settings):
        n = np.shape(G0)[0]
        return (f"solver '{method}' on {n} points: dense {n} x {n} iterates, factors and work space",
                per_n2 * DOUBLE * n * n, 0.0, "kernlearn has no lower-memory form of it yet; fewer points fit.")
    return cost


#: Why scikit-learn's 1-feature check cannot fit TRIN's estimators.
TOO_FEW = ("the check fits 10 points; the constraint generator's defaults need more (10 in-class and 10 "
           "out-of-class neighbours per labeled point)")
#: What the generic checks need (:mod:`kernlearn_cli.testing`): an instance, another value per setting.
TRIN_CHECKS = Checks(
    instance="kernlearn_cli.testing.instances:trin",
    alternatives={"loss": "lmnn", "gamma": 0.25, "tol": 1e-9, "max_iter": 2, "path": 2.0, "gamma_min": 1.0,
                  "normalize": False, "t": 0.3, "itml_percentiles": [10.0, 90.0], "max_cg": 1, "keep_path": True,
                  "stop": "relative", "trust_norm": "natural", "max_path_iter": 2},
    unused={"itml_percentiles": "only read by loss 'itml' (the instance has triplets)",
            "gamma_min": "only read on a regularization path (path > 0)",
            "keep_path": "keeps the path's factors for evaluators (result.path, on disk); G is the same",
            "t": "the knee of the smooth hinge, not read by the instance's loss 'log'"})


@solvers.register("trin", checks=TRIN_CHECKS, triplets=True, inductive="initial factor", budget="max_iter", warmup=WARMUP,
                  estimator=EstimatorSpec("TRINKernel", "Trust-region inexact Newton kernel learning with a "
                                          "LogDet regularizer (Li et al. 2009).", constraints="neighbor_triplets",
                                          expected_failed={"check_fit2d_1feature": TOO_FEW}))
@estimated(_dense_cost("trin", 8.0))
@_doc("Trust-region inexact Newton kernel learning with a LogDet regularizer (Li et al. 2009, TRIN).")
def trin(G0: np.ndarray, constraints: Constraints, *, loss: LossName = "log", gamma: Positive = 1.0,
         tol: Positive = 1e-3, max_iter: PositiveInt = 1000, path: PathMultiplier = 0.0,
         gamma_min: Positive = 2.0 ** -12, normalize: bool = True, t: Knee = 0.7,
         itml_percentiles: Percentiles = (5.0, 95.0), max_cg: PositiveInt = 500, keep_path: bool = False,
         stop: Stop = "absolute", trust_norm: Literal["frobenius", "natural"] = "frobenius",
         max_path_iter: PositiveInt | None = None, callback: Callable | None = None) -> SolverResult:
    return finish(*_solve("trin", G0, constraints, loss=loss, gamma=gamma, tol=tol, max_iter=max_iter, path=path,
                          gamma_min=gamma_min, normalize=normalize, t=t, itml_percentiles=itml_percentiles,
                          max_cg=max_cg, keep_path=keep_path, stop=stop, trust_norm=trust_norm,
                          max_path_iter=max_path_iter, callback=callback), "trin")


#: What the generic checks need (:mod:`kernlearn_cli.testing`): an instance, another value per setting.
PR_CG_CHECKS = Checks(
    instance="kernlearn_cli.testing.instances:pr_cg", settings_instance="kernlearn_cli.testing.instances:pr_cg_short",
    alternatives={"loss": "lmnn", "gamma": 0.25, "tol": 1e3, "max_iter": 2, "path": 2.0, "gamma_min": 1.0,
                  "normalize": False, "t": 0.3, "itml_percentiles": [10.0, 90.0], "keep_path": True,
                  "stop": "relative", "precondition": True, "max_path_iter": 1},
    unused={"itml_percentiles": "only read by loss 'itml' (the instance has triplets)",
            "gamma_min": "only read on a regularization path (path > 0)",
            "keep_path": "keeps the path's factors for evaluators (result.path, on disk); G is the same",
            "t": "the knee of the smooth hinge, not read by the instance's loss 'log'"})


@solvers.register("pr_cg", checks=PR_CG_CHECKS, triplets=True, inductive="initial factor", budget="max_iter",
                  estimator=EstimatorSpec("PRCGKernel", "Polak-Ribière⁺ CG on Li et al.'s (2009) objective "
                                          "(their Table 4 baseline).", constraints="neighbor_triplets",
                                          expected_failed={"check_fit2d_1feature": TOO_FEW}))
@estimated(_dense_cost("pr_cg", 12.0))
@_doc("Polak-Ribière⁺ nonlinear CG on the TRIN objective, with an exact line search that keeps K positive "
      "definite (the baseline of Li et al. 2009, Sec. 6.2).")
def pr_cg(G0: np.ndarray, constraints: Constraints, *, loss: LossName = "log", gamma: Positive = 1.0,
          tol: Positive = 1e-3, max_iter: PositiveInt = 10000, path: PathMultiplier = 0.0,
          gamma_min: Positive = 2.0 ** -12, normalize: bool = True, t: Knee = 0.7,
          itml_percentiles: Percentiles = (5.0, 95.0), keep_path: bool = False, stop: Stop = "absolute",
          precondition: bool = False, max_path_iter: PositiveInt | None = None,
          callback: Callable | None = None) -> SolverResult:
    return finish(*_solve("pr_cg", G0, constraints, loss=loss, gamma=gamma, tol=tol, max_iter=max_iter, path=path,
                          gamma_min=gamma_min, normalize=normalize, t=t, itml_percentiles=itml_percentiles,
                          max_cg=0, keep_path=keep_path, stop=stop, precondition=precondition,
                          max_path_iter=max_path_iter, callback=callback), "pr_cg")

