r"""DefiniteBoost: greedy (approximate) Bregman projections under the von Neumann divergence
(Tsuda, Rätsch & Warmuth 2005, Sec. 4), with Kulis et al.'s dual-variable correction as an option.

Problem (Tsuda et al. eq. 8), for a trace-one density matrix W:

.. math::

    \min_W \Delta(W, W_1) = \operatorname{tr}(W \log W - W \log W_1)
    \quad\text{s.t.}\quad \operatorname{tr} W = 1,\;
    \operatorname{tr}(W C_j) \le 0 \;(j = 1..c),

and its dual (eq. 9)

.. math::

    \gamma^* = \arg\min_{\gamma \ge 0}\; \log\operatorname{tr}\exp\Big(\log W_1 - \sum_j \gamma_j C_j\Big),
    \qquad W^* = \exp\big(\log W_1 - \textstyle\sum_j \gamma^*_j C_j\big) / Z .

**Mapping kernlearn's constraints onto C_j (b = 0 form).** The kernel is K = s W with
s = tr K0 and W1 = K0 / s (the scaled identity gives W1 = I / n), so tr K = tr K0 throughout.
A constraint tr(K A) (<=|>=|=) b becomes, using tr W = 1,

* ``*_le``: C = A - (b/s) I,    tr(W C) <= 0;
* ``*_ge``: C = (b/s) I - A,    tr(W C) <= 0;
* ``*_eq``: C = A - (b/s) I,    tr(W C) = 0 (its dual variable is free in sign),

with A = z z^T, z = e_i - e_j for ``dist_*`` (rank one) and A = (e_i e_j^T + e_j e_i^T)/2 for
``sim_*`` (rank two; rank one when i = j). This is Kulis et al.'s von Neumann problem with
r = n, b = 0 (Sec. 5.3) plus the trace constraint: min D_vN(K, K0) s.t. tr(K A_j) (<=|>=|=) b_j,
tr K = tr K0, and D_vN(K, K0) = s Delta(W, W1). Tsuda's Sec. 5 constraints,
C_j = X_j - gamma I with X_j = z z^T / 2, are ``dist_le`` with b = 2 gamma s (see
:func:`kernlearn_cli.constraints.threshold.threshold_pairs`). A rank-deficient K0 is handled in
its range (Kulis et al. Sec. 4): with K0 = Q diag(sigma^2) Q^T (Q n x r orthonormal) everything
below is r x r, A_j is replaced by Q^T A_j Q, and the learned K stays in the range of K0.

**Algorithm.** The exponent E = log W1 - sum_j gamma_j C_j is kept as an eigendecomposition
(Sec. 3.2; the identity parts of the C_j are a scalar shift carried apart), W = V exp(Theta) V^T / Z.
Each step

1. computes r_j = tr(W C_j) for every constraint and picks the most violated one
   (Sec. 4.1, j_t = argmax_j r_j); with ``dual_correction`` the greedy rule uses the violation
   of the optimality conditions instead (r_j if r_j > 0, -r_j if r_j < 0 and gamma_j > 0:
   a constraint that holds with slack may release its dual variable). ``order="cyclic"``
   visits the constraints in turn instead (Bregman's method, the order of Kulis et al.'s
   solvers; offered for comparisons, it needs only r_t);
2. takes the step alpha_t on gamma_{j_t}:

   * ``approximate`` (eq. 13): alpha = log[(1 - r/lambda_min) / (1 - r/lambda_max)] /
     (lambda_max - lambda_min), lambda_min < 0 < lambda_max the extreme eigenvalues of C_t.
     This is the minimiser of the Golden–Thompson/convexity bound whose minimum is rho(r_t) of
     Theorem 4.1. (The conference paper prints eq. 13 as log[(1 + r/lambda_max)/(1 + r/lambda_min)],
     which agrees for the AdaBoost case lambda = +-1 but is not the minimiser of that bound, nor
     defined for r > -lambda_min, in general; we use the minimiser, whose value is the paper's rho.)
   * ``exact`` (eq. 11): the root of tr(W(alpha) C_t) = 0, W(alpha) ~ exp(E - alpha C_t), found by a
     bracketing (doubling) plus Illinois regula-falsi search — safeguarded, since
     tr(W(alpha) C_t) is monotone decreasing in alpha (-d/dalpha of the convex log Z(alpha)).

   Tsuda et al. keep alpha >= 0 (gamma only grows); with ``dual_correction`` (Kulis et al. eq. 4,
   alpha' = min(lambda_i, alpha) in their sign convention) the step is clipped at alpha >= -gamma_j,
   so gamma_j >= 0 can also shrink. Equality constraints are never clipped.
3. updates the eigendecomposition: a distance constraint changes E by -alpha C_t, i.e. a rank-one
   change of the diagonal matrix Theta, solved by deflation and the secular equation in O(r^2)
   (``_secular.rank_one_update``, the package's one rank-one eigen-update, shared with
   ``von_neumann``), plus one O(n r^2) product for the eigenvectors (Kulis et al. Sec. 5.2.1);
   similarity constraints are two rank-one changes.

The dual objective (9), log Z = shift + logsumexp(Theta), is recorded after every step (history
``dual_objective``, starting from its value 0 at gamma = 0). It decreases monotonically: with
exact steps alpha minimises log Z on a line; with approximate steps the bound rho(r) <= 1 holds
for any clipped alpha between 0 and the bound's minimiser (convexity), so each step multiplies Z
by at most 1 (Theorem 4.1). A rise beyond round-off is a bug and raises ``RuntimeError``.

**Convergence.** After every c steps (c = number of constraints; one *sweep*, the work of one
cyclic pass of Kulis et al.'s solvers), the change of the dual variables over those c steps is
measured as in :func:`~kernlearn_cli.solvers._cyclic.dual_change` (||gamma - gamma_old||_1 /
(||gamma||_2 + ||gamma_old||_2), the measure of the authors' ITML code) and the run stops when it
is below ``tol`` *and* every constraint is met to ``feas_tol`` (relative); these two are the checks
of the result's certificate, beside the duality gap and complementarity. The same measure, tolerance and sweep length as the cyclic ``burg`` solver make
"sweeps to convergence" comparable (Kulis et al. Sec. 6 compare DefiniteBoost's sweeps with those
of exact von Neumann projections); the maximum violation alone would not do, because without the
dual correction the constraints can all be met long before gamma is optimal. The run also stops,
converged, when no constraint is violated and (with the correction) no dual variable can be
released (``stopped_by = "optimality"``). ``iterations`` = sweeps = ceil(steps / c); ``info["steps"]`` =
projections.

**Infeasibility.** A single constraint no positive definite trace-one W can meet (lambda_min(C) >= 0)
is reported before the first step. Otherwise weak duality gives Delta(W, W1) >= -log Z(gamma) for
every feasible W and every gamma, and Delta(W, W1) <= -log lambda_min(W1) for every trace-one W, so
log Z(gamma) < log lambda_min(W1) certifies that the set is infeasible; the solver checks it every
step and stops with :class:`~kernlearn_cli.errors.InfeasibleError`.

The learned kernel is rebuilt at the end from the dual variables alone, K = s exp(E(gamma)) / Z,
so ``G0`` and ``dual`` in the factors file reproduce it.

References
----------
.. [1] K. Tsuda, G. Rätsch and M. K. Warmuth. Matrix exponentiated gradient updates for on-line
   learning and Bregman projection. Advances in Neural Information Processing Systems 17 (NIPS
   2004), pages 1425–1432; Journal of Machine Learning Research 6 (2005), pages 995–1018.
"""

from __future__ import annotations

import math
import time
from typing import Callable, Literal

import numba as nb
import numpy as np

from ..errors import ConfigError, DataError, InfeasibleError, SolverError
from ..lowrank import RANK_TOL
from ..kinds import DISTANCE, EQUAL, LOWER
from ..linalg import eigh
from ..params import Positive, PositiveInt
from ..registry import TRANSDUCTIVE_CHECKS, Checks, EstimatorSpec, solvers
from ..resources import DOUBLE, GEMM_RATE, estimated
from ..types import Constraints, SolverResult
from ._cyclic import describe as _describe, dual_change, relative_violations
from ._secular import rank_one_update
from .protocol import Certificate, Checked, finish, warn_if_compiling

_EPS = float(np.finfo(np.float64).eps)
OK, DONE, BROKEN, INFEASIBLE = 0, 1, 2, 3


@nb.njit(cache=True)
def _probs(theta, p):
    """p <- softmax(theta); returns logsumexp(theta)."""
    mx = theta.max()
    tot = 0.0
    for k in range(theta.shape[0]):
        p[k] = math.exp(theta[k] - mx)
        tot += p[k]
    for k in range(theta.shape[0]):
        p[k] /= tot
    return mx + math.log(tot)


@nb.njit(cache=True, fastmath={"reassoc", "contract"})
def _value(Y, p, a, b, isdist):
    """tr(W A) for the constraint on points (a, b), W = V diag(p) V^T, rows of Y = Q V."""
    acc = 0.0
    if isdist:
        for k in range(p.shape[0]):
            t = Y[a, k] - Y[b, k]
            acc += p[k] * t * t
    else:
        for k in range(p.shape[0]):
            acc += p[k] * Y[a, k] * Y[b, k]
    return acc


@nb.njit(cache=True, fastmath={"reassoc", "contract"})
def _residuals(Y, p, ii, jj, isdist, sig, beta, out):
    """out_j = r_j = tr(W C_j) = sig_j (tr(W A_j) - beta_j).

    :func:`_value`'s loop written out: as a call per constraint (not inlined across numba's
    functions) the scan took 34 ns a constraint at r = 16, inline 5 ns; the same loop under the
    same flags gives the same bits (benchmarks/profiles/profile_definiteboost.py checks it)."""
    r = p.shape[0]
    for q in range(ii.shape[0]):
        a = ii[q]
        b = jj[q]
        acc = 0.0
        if isdist[q]:
            for k in range(r):
                t = Y[a, k] - Y[b, k]
                acc += p[k] * t * t
        else:
            for k in range(r):
                acc += p[k] * Y[a, k] * Y[b, k]
        out[q] = sig[q] * (acc - beta[q])


@nb.njit(cache=True)
def _apply(theta, X, a, b, isdist, coef):
    """E <- E + coef * A for the constraint on rows (a, b) of X (X <- X U, theta <- theta')."""
    if isdist:
        return rank_one_update(theta, coef, X[a] - X[b], X)
    # (y_a y_b^T + y_b y_a^T)/2 = ((y_a + y_b)(.)^T - (y_a - y_b)(.)^T)/4; the second vector is
    # taken after the first update, in the new eigenbasis (it vanishes when a == b).
    st = rank_one_update(theta, 0.25 * coef, X[a] + X[b], X)
    if st != 0:
        return st
    return rank_one_update(theta, -0.25 * coef, X[a] - X[b], X)


@nb.njit(cache=True)
def _trial(theta, Y, a, b, isdist, sig, beta, alpha, th, Xt, p):
    """r(alpha) = tr(W(alpha) C) with W(alpha) ~ exp(E - alpha C); status in the second slot."""
    th[:] = theta
    Xt[0] = Y[a]
    Xt[1] = Y[b]
    st = _apply(th, Xt, 0, 1, isdist, -alpha * sig)
    _probs(th, p)
    return sig * (_value(Xt, p, 0, 1, isdist) - beta), st


@nb.njit(cache=True)
def _exact_alpha(theta, Y, a, b, isdist, sig, beta, r0, lower, guess, th, Xt, p):
    """Root of the decreasing r(alpha) = tr(W(alpha) C) (eq. 11), clipped at ``lower``.

    Brackets the root by doubling from the approximate step, then Illinois regula falsi.
    Returns (alpha, status).
    """
    if r0 > 0:
        lo, flo = 0.0, r0
        hi = guess if (guess > 0 and np.isfinite(guess)) else 1.0
        fhi, st = _trial(theta, Y, a, b, isdist, sig, beta, hi, th, Xt, p)
        n = 0
        while fhi > 0:
            if st != 0 or n > 1100:
                return hi, BROKEN
            lo, flo = hi, fhi
            hi *= 2.0
            fhi, st = _trial(theta, Y, a, b, isdist, sig, beta, hi, th, Xt, p)
            n += 1
    else:
        hi, fhi = 0.0, r0
        if np.isfinite(lower):
            flow, st = _trial(theta, Y, a, b, isdist, sig, beta, lower, th, Xt, p)
            if st != 0:
                return lower, BROKEN
            if flow <= 0:
                return lower, OK
            lo, flo = lower, flow
        else:
            lo = guess if (guess < 0 and np.isfinite(guess)) else -1.0
            flo, st = _trial(theta, Y, a, b, isdist, sig, beta, lo, th, Xt, p)
            n = 0
            while flo < 0:
                if st != 0 or n > 1100:
                    return lo, BROKEN
                hi, fhi = lo, flo
                lo *= 2.0
                flo, st = _trial(theta, Y, a, b, isdist, sig, beta, lo, th, Xt, p)
                n += 1
    if flo == 0.0:
        return lo, OK
    if fhi == 0.0:
        return hi, OK
    # Illinois: flo > 0 > fhi, lo < hi
    side = 0
    best, fbest = lo, flo
    for _ in range(200):
        x = (lo * fhi - hi * flo) / (fhi - flo)
        if not (lo < x < hi):
            x = 0.5 * (lo + hi)
        fx, st = _trial(theta, Y, a, b, isdist, sig, beta, x, th, Xt, p)
        if st != 0:
            return x, BROKEN
        if abs(fx) < abs(fbest):
            best, fbest = x, fx
        if fx == 0.0:
            return x, OK
        if fx > 0:
            lo, flo = x, fx
            if side == 1:
                fhi *= 0.5
            side = 1
        else:
            hi, fhi = x, fx
            if side == -1:
                flo *= 0.5
            side = -1
        if hi - lo <= 4.0 * _EPS * max(abs(lo), abs(hi)):
            break
    return best, OK


@nb.njit(cache=True)
def _steps(Y, theta, state, gamma, ii, jj, isdist, iseq, active, sig, beta, lmin, lmax,
           nsteps, exact, correction, cyclic, dual_floor, hist, res):
    """Up to ``nsteps`` DefiniteBoost steps in place; hist[t] = dual objective after step t.

    ``state`` = [shift, last chosen constraint, steps taken so far]. Returns (steps done, status).
    """
    r = theta.shape[0]
    c = ii.shape[0]
    p = np.empty(r)
    pt = np.empty(r)
    th = np.empty(r)
    Xt = np.empty((2, r))
    for t in range(nsteps):
        lse = _probs(theta, p)
        if cyclic:                      # Bregman's cyclic order: constraint (step mod c)
            q = int(state[2]) % c
            state[2] += 1
            rq = sig[q] * (_value(Y, p, ii[q], jj[q], isdist[q]) - beta[q])
            skip = not active[q] or (rq <= 0 and not iseq[q] and not (correction and gamma[q] > 0))
            if skip or rq == 0.0:
                hist[t] = state[0] + lse
                continue
        else:                           # Tsuda et al.: the most violated constraint
            state[2] += 1
            _residuals(Y, p, ii, jj, isdist, sig, beta, res)
            best = 0.0
            q = -1
            for k in range(c):
                if not active[k]:
                    continue
                rk = res[k]
                if iseq[k]:
                    score = abs(rk)
                elif rk > 0:
                    score = rk
                elif correction and gamma[k] > 0:
                    score = -rk
                else:
                    score = 0.0
                if score > best:
                    best = score
                    q = k
            if q < 0:
                state[2] -= 1
                return t, DONE
            rq = res[q]
        state[1] = q
        alpha = (math.log1p(-rq / lmin[q]) - math.log1p(-rq / lmax[q])) / (lmax[q] - lmin[q])   # eq. (13)
        if iseq[q]:
            lower = -np.inf
        elif correction:
            lower = -gamma[q]
        else:
            lower = 0.0
        if exact:
            alpha, st = _exact_alpha(theta, Y, ii[q], jj[q], isdist[q], sig[q], beta[q], rq, lower, alpha,
                                     th, Xt, pt)
            if st != 0:
                return t, BROKEN
        if alpha < lower:
            alpha = lower
        if not np.isfinite(alpha):
            return t, BROKEN
        if _apply(theta, Y, ii[q], jj[q], isdist[q], -alpha * sig[q]) != 0:
            return t, BROKEN
        state[0] += alpha * sig[q] * beta[q]
        gamma[q] += alpha
        dual = state[0] + _probs(theta, p)
        hist[t] = dual
        if not np.isfinite(dual):
            return t + 1, BROKEN
        if dual < dual_floor:
            return t + 1, INFEASIBLE
    return nsteps, OK


# ---------------------------------------------------------------------------------------------

def _range_basis(G0: np.ndarray, rank_tol: float = RANK_TOL) -> tuple[np.ndarray, np.ndarray]:
    """K0 = G0 G0^T = Q diag(sig2) Q^T with Q (n x r) orthonormal, sig2 > rank_tol * max."""
    G0 = np.asarray(G0, dtype=np.float64)
    if G0.ndim != 2 or G0.shape[0] == 0 or G0.shape[1] == 0:
        raise DataError(f"definiteboost: the initial kernel factor must be a non-empty n x r matrix, got shape "
                        f"{G0.shape}.")
    if not np.all(np.isfinite(G0)):
        raise DataError("definiteboost: the initial kernel has non-finite entries (NaN or inf).")
    U, s, _ = np.linalg.svd(G0, full_matrices=False)
    if s.size == 0 or not s[0] > 0:
        raise DataError("definiteboost: the initial kernel K0 is zero (trace 0); DefiniteBoost starts from "
                        "W1 = K0 / tr(K0), which needs tr(K0) > 0 (use e.g. kernel 'identity').")
    keep = s > math.sqrt(rank_tol) * s[0]         # eigenvalues sig^2 > rank_tol * max
    return np.ascontiguousarray(U[:, keep]), s[keep] ** 2


def _constraint_arrays(Q: np.ndarray, trace: float, constraints: Constraints) -> dict:
    """Per constraint: sign, beta = b/s, eigenvalue range [lmin, lmax] of C restricted to range(K0)."""
    kind = constraints.kind
    isdist = np.isin(kind, DISTANCE)
    iseq = np.isin(kind, EQUAL)
    sig = np.where(np.isin(kind, LOWER), -1.0, 1.0)
    beta = constraints.bound / trace
    qi, qj = Q[constraints.i], Q[constraints.j]
    r = Q.shape[1]
    dz = np.einsum("ij,ij->i", qi - qj, qi - qj)
    g = np.einsum("ij,ij->i", qi, qj)
    h = np.sqrt(np.einsum("ij,ij->i", qi, qi) * np.einsum("ij,ij->i", qj, qj))
    if r == 1:
        a_max = np.where(isdist, dz, g)
        a_min = a_max.copy()
    else:   # rank-one PSD z z^T: {||z||^2, 0}; (u v^T + v u^T)/2: {(g +- h)/2, 0}
        a_max = np.where(isdist, dz, 0.5 * (g + h))
        a_min = np.where(isdist, 0.0, 0.5 * (g - h))
    lmax = np.where(sig > 0, a_max - beta, beta - a_min)
    lmin = np.where(sig > 0, a_min - beta, beta - a_max)
    scale = np.maximum(np.maximum(np.abs(a_max), np.abs(a_min)), np.abs(beta))
    small = 1e-12 * np.maximum(scale, 1e-300)
    lmax = np.where(np.abs(lmax) <= small, 0.0, lmax)
    lmin = np.where(np.abs(lmin) <= small, 0.0, lmin)
    return {"isdist": isdist, "iseq": iseq, "sig": sig, "beta": beta, "lmin": lmin, "lmax": lmax}


def kernel_from_dual(G0: np.ndarray, constraints: Constraints, dual: np.ndarray) -> tuple[np.ndarray, float, float]:
    """The DefiniteBoost kernel of dual variables gamma: K = s exp(log W1 - sum_j gamma_j C_j) / Z.

    Returns (G, dual objective (9) = log Z, divergence D_vN(K, K0) = s Delta(W, W1)), with
    K = G G^T, s = tr K0. This is how the solver builds its result, so ``G0`` and ``dual`` of a
    factors file reproduce ``G``.
    """
    Q, sig2 = _range_basis(G0)
    s = float(sig2.sum())
    logm1 = np.log(sig2 / s)
    ca = _constraint_arrays(Q, s, constraints)
    wt = np.asarray(dual, dtype=np.float64) * ca["sig"]         # E = log M1 - sum wt_j A_j + shift I
    shift = float(np.sum(wt * ca["beta"]))
    qi, qj = Q[constraints.i], Q[constraints.j]
    dist = ca["isdist"]
    E = np.diag(logm1)
    dz = qi[dist] - qj[dist]
    E -= (dz * wt[dist, None]).T @ dz
    S = (qi[~dist] * wt[~dist, None]).T @ qj[~dist]
    E -= 0.5 * (S + S.T)
    theta, V = eigh(0.5 * (E + E.T))
    mx = theta.max()
    p = np.exp(theta - mx)
    Z = p.sum()
    p /= Z
    log_z = shift + mx + math.log(Z)
    nz = p > 0
    delta = float(np.sum(p[nz] * np.log(p[nz])) - p @ ((V * V).T @ logm1))
    G = math.sqrt(s) * (Q @ V) * np.sqrt(p)
    return G, log_z, s * delta


#: What the generic checks need (:mod:`kernlearn_cli.testing`): an instance, another value per setting.
DEFINITEBOOST_CHECKS = Checks(
    instance="kernlearn_cli.testing.instances:definiteboost",
    alternatives={"projection": "approximate", "dual_correction": False, "order": "cyclic", "tol": 1e-8,
                  "feas_tol": 1e-8, "max_steps": 5})



def _step_cost(G0, constraints, **settings):
    """O(n r) memory (G0, the eigenvectors of W on its range, the residuals of the c constraints) and,
    per step, the O(r²) secular update and one O(n r²) product for the eigenvectors (Sec. 4)."""
    (n, r), c = np.shape(G0), len(constraints)
    return (f"solver 'definiteboost' on {n} points at rank {r}: one step among {c} constraints",
            DOUBLE * (3.0 * n * r + r * r + 6.0 * c), 2.0 * n * r * r / GEMM_RATE,
            "The steps to converge grow with c and the accuracy asked (tol, feas_tol).")


@solvers.register("definiteboost", checks=DEFINITEBOOST_CHECKS, exact=True, warmup={"constraints": {"name": "idealized_pairs", "count": 20}},
                  budget="max_steps", estimator=EstimatorSpec(
                      "DefiniteBoostKernel", "DefiniteBoost (Tsuda et al. 2005): von Neumann projections on all "
                      "constraints at once; transductive.", kernel="rbf", constraint_defaults={"count": 20},
                      expected_failed=TRANSDUCTIVE_CHECKS))
@estimated(_step_cost, per="step")
def definiteboost(G0: np.ndarray, constraints: Constraints, *,
                  projection: Literal["approximate", "exact"] = "approximate", dual_correction: bool = False,
                  order: Literal["greedy", "cyclic"] = "greedy", tol: Positive = 1e-3, feas_tol: Positive = 1e-3,
                  max_steps: PositiveInt = 2_000_000, callback: Callable | None = None) -> SolverResult:
    """DefiniteBoost (Tsuda et al. 2005, Sec. 4): greedy von Neumann projections of trace-one W.

    Parameters
    ----------
    G0 : ndarray (n, r)
        Factor of the initial kernel, K0 = G0 G0^T; W1 = K0 / tr K0 (scaled identity: I / n).
        A rank-deficient K0 is handled in its range.
    constraints : Constraints
        Distance / similarity constraints, <=, >= or =; tr(K A) <= b is tr(W (A - b/tr(K0) I)) <= 0.
    projection : {"approximate", "exact"}
        Step on the chosen constraint: eq. (13) (DefiniteBoost), or the exact Bregman projection
        (11) by a safeguarded root search.
    dual_correction : bool
        Kulis et al.'s correction for inequalities: dual variables may shrink back to 0
        (alpha >= -gamma_j), and slack constraints with gamma_j > 0 can be chosen. False is
        Tsuda et al.'s algorithm (gamma only grows).
    order : {"greedy", "cyclic"}
        ``greedy`` (the paper): the most violated constraint each step. ``cyclic``: constraints
        in turn, as in Bregman's method and Kulis et al.'s solvers (for comparisons only).
    tol : float
        Stop when the dual variables change by less than ``tol`` (> 0) over a sweep of c steps
        (measure of :func:`~kernlearn_cli.solvers._cyclic.dual_change`; Kulis et al. use 1e-3) and
        every constraint is met to ``feas_tol``.
    feas_tol : float
        Largest relative violation |tr(K A_i) - b_i| / |b_i| a converged result may keep (> 0).
    max_steps : int
        Give up after this many steps (projections, >= 1); the result then has ``converged=False``.
    callback : callable, optional
        ``callback(steps, dual_change=..., max_violation=...)`` after every sweep: the steps so far (the
        unit of ``max_steps``) and the two checks as :class:`~kernlearn_cli.solvers.protocol.Checked`.

    Returns
    -------
    SolverResult
        ``G`` (n x r) with K = G G^T, tr K = tr K0; ``objective`` = D_vN(K, K0); ``iterations`` =
        sweeps = ceil(steps / c). History ``dual_objective`` (eq. 9 at step 0, 1, ..., steps),
        ``dual_change`` and ``max_violation`` (largest relative violation, per sweep). Info
        ``steps``, ``rank``, ``trace``, ``dual_objective``, ``duality_gap`` (Delta(W, W1) + log Z,
        0 at the optimum), ``max_violation``, ``projection``, ``dual_correction``. Arrays ``G0``
        and ``dual`` (gamma), from which :func:`kernel_from_dual` rebuilds ``G``.

    Raises
    ------
    DataError
        The initial kernel is zero (trace 0) or not finite.
    InfeasibleError
        A constraint no positive definite trace-one kernel meets, a dual objective below the
        weak-duality floor log lambda_min(W1) (a certificate of infeasibility), or a numerical
        breakdown.
    """
    c = len(constraints)
    if c == 0:
        raise ConfigError("solver 'definiteboost' needs at least one constraint, but the constraint set is empty.")
    n = np.asarray(G0).shape[0]
    if constraints.i.min() < 0 or constraints.j.min() < 0 or max(constraints.i.max(), constraints.j.max()) >= n:
        raise ConfigError(f"definiteboost: a constraint indexes a point outside 0..{n - 1}.")
    Q, sig2 = _range_basis(G0)
    s = float(sig2.sum())
    logm1 = np.log(sig2 / s)
    ca = _constraint_arrays(Q, s, constraints)
    lmin, lmax, iseq = ca["lmin"], ca["lmax"], ca["iseq"]
    bad = np.where(iseq, ~(((lmin < 0) & (lmax > 0)) | ((lmin == 0) & (lmax == 0))), (lmin >= 0) & (lmax > 0))
    if bad.any():
        q = int(np.flatnonzero(bad)[0])
        raise InfeasibleError(
            f"the constraints are infeasible: {_describe(constraints, q)} cannot hold for any positive definite "
            f"kernel K with tr K = tr K0 = {s:.6g} in the range of K0 (DefiniteBoost keeps the trace of K0). "
            "Remove it, or rescale the initial kernel or the bound.",
            {"constraint": q, "lambda_min": float(lmin[q]), "lambda_max": float(lmax[q])})
    active = np.where(iseq, (lmin < 0) & (lmax > 0), lmax > 0)
    exact = projection == "exact"
    dual_floor = float(logm1.min()) - 1e-9 * (1.0 + abs(float(logm1.min())))

    Y = np.array(Q, order="C")
    theta = logm1.copy()
    gamma = np.zeros(c)
    state = np.zeros(3)
    res = np.empty(c)
    p = np.empty(theta.shape[0])
    hist_blocks = [np.zeros(1)]
    history = {"dual_change": [], "max_violation": []}
    absb = np.maximum(np.abs(ca["beta"]), 1e-12 / s)
    warn_if_compiling("definiteboost", _steps, _probs, _residuals)
    t0 = time.perf_counter()
    steps = 0
    sweep = 0
    last = 0.0
    stopped_by = "max_iter"
    change = math.nan
    while steps < max_steps:
        gamma_old = gamma.copy()
        block = min(c, max_steps - steps)
        hist = np.empty(block)
        done, status = _steps(Y, theta, state, gamma, constraints.i, constraints.j, ca["isdist"], iseq, active,
                              ca["sig"], ca["beta"], lmin, lmax, block, exact, bool(dual_correction),
                              order == "cyclic", dual_floor, hist, res)
        steps += done
        hist = hist[:done]
        if done:
            sweep += 1
        if status == BROKEN:
            q = int(state[1])
            raise SolverError(
                f"definiteboost broke down at step {steps} on {_describe(constraints, q)}: the step or the "
                "eigen-update produced non-finite values (the kernel became numerically singular), and no "
                "certificate of infeasibility was reached. The constraint set is nearly infeasible or numerically "
                "degenerate for a kernel of trace tr K0; check its bounds.")
        if status == INFEASIBLE:
            raise InfeasibleError(
                f"the constraints are infeasible: after {steps} steps the dual objective (9) fell to {hist[-1]:.6g}, "
                f"below log lambda_min(W1) = {logm1.min():.6g}, which no feasible kernel allows (weak duality). "
                "No positive definite kernel with tr K = tr K0 meets them all; check for contradictory constraints.",
                {"dual_objective": float(hist[-1]), "floor": float(logm1.min()), "steps": steps,
                 "weights": gamma.copy()})
        mono = np.diff(np.concatenate([[last], hist]))
        if mono.size and mono.max() > 1e-10 * (1.0 + abs(last)):
            k = int(np.argmax(mono))
            raise RuntimeError(f"definiteboost: the dual objective rose by {mono[k]:.3g} at step "
                               f"{steps - done + k + 1} (it must decrease monotonically; this is a bug).")
        if done:
            last = float(hist[-1])
        hist_blocks.append(hist)
        _probs(theta, p)
        _residuals(Y, p, constraints.i, constraints.j, ca["isdist"], ca["sig"], ca["beta"], res)
        viol = np.where(iseq, np.abs(res), np.maximum(res, 0.0)) / absb
        change = dual_change(gamma, gamma_old)
        if done:
            history["dual_change"].append(change)
            history["max_violation"].append(float(viol.max()))
            if callback is not None:
                callback(steps, dual_change=Checked(change, tol), max_violation=Checked(viol.max(), feas_tol))
        if status == DONE:                     # no constraint violated, no dual variable releasable: KKT
            stopped_by, change = "optimality", 0.0
            break
        if done == c and change < tol and viol.max() <= feas_tol:  # a partial last block (max_steps) is no sweep
            stopped_by = "tolerance"
            break
    seconds = time.perf_counter() - t0
    G, log_z, divergence = kernel_from_dual(G0, constraints, gamma)
    t1 = time.perf_counter()
    x = constraints.values(G)
    viol = relative_violations(x, constraints, constraints.bound)
    cert = Certificate(
        rule="largest relative violation <= feas_tol and dual change over a sweep <= tol",
        checks={"max_violation": (float(viol.max()), feas_tol), "dual_change": (change, tol)},
        figures={"duality_gap": divergence / s + log_z, "dual_objective": log_z, "dual_floor": float(logm1.min()),
                 "complementarity": float(np.max(np.abs(gamma * (x - constraints.bound)))) / s, "steps": steps},
        stopped_by=stopped_by)
    return finish(SolverResult(
        G=G, objective=divergence, iterations=-(-steps // c), converged=False,
        history={"dual_objective": np.concatenate(hist_blocks),
                 **{k: np.asarray(v, dtype=np.float64) for k, v in history.items()}},
        info={"steps": steps, "rank": int(Q.shape[1]), "trace": s, "dual_objective": log_z,
              "duality_gap": divergence / s + log_z, "max_violation": float(viol.max()),
              "projection": projection, "dual_correction": bool(dual_correction), "order": order,
              "solver_seconds": seconds, "certificate_seconds": time.perf_counter() - t1},
        arrays={"G0": np.ascontiguousarray(G0, dtype=np.float64), "dual": gamma}), cert, "definiteboost")
