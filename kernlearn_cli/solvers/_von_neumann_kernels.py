"""Compiled inner loops of the low-rank von Neumann projections (Kulis et al. 2006, Alg. 2).

The iterate is X = V0 exp(L) V0^T, L symmetric (r x r): the exponent in the range of K0.  A
projection onto z^T X z (<=,>=,=) b with v = V0^T z adds beta v v^T to L, beta the root of
phi(alpha) = v^T exp(L + alpha v v^T) v = b (dual-corrected, eq. 4).  Two sweeps compute phi:

``krylov_sweep`` (rank-one constraints; the solver's choice unless the spectrum is wide):

* a Lanczos run on L from v (full reorthogonalisation) gives the Jacobi matrix T_m; since
  L + alpha v v^T has the same Krylov space and the same T_m but for its (1,1) entry,
  phi(alpha) ~= ||v||^2 e_1^T exp(T_m + alpha ||v||^2 e_1 e_1^T) e_1 for every alpha, the
  m-node Gauss rule of v's spectral measure (Golub & Meurant 2010).  The run stops when the
  rule's error bound is below LZ_RTOL relative (it falls like prod b_k^2 / (2m)!) or the
  space is exhausted (m = r: exact).  O(m r^2);
* trial values by the Talbot rule below, g at its nodes being a continued fraction of T_m;
  the exact fallback takes the secular roots of the rule's own diagonal-plus-rank-one problem;
* the accepted step updates L <- L + beta v v^T, O(r^2): no eigenvectors, no r x r product.

``eigen_sweep`` (every constraint kind; the paper's way): the exponent is kept as W D W^T
(W orthogonal), w = W^T v, and the projection needs the eigen-decomposition
D + alpha w w^T = U Theta U^T (Sec. 5.2.1):

* its eigenvalues are the roots of the secular equation
  1 + alpha sum_j w_j^2 / (d_j - theta) = 0 (Golub 1973; Demmel 1997, Sec. 5.3.3),
  after deflating zero weights and merging equal poles: O(r) per root, O(r^2) in all;
* the constraint value for a trial alpha needs no eigenvectors:
  z^T X(alpha) z = sum_i exp(theta_i) (u_i . w)^2 with (u_i . w)^2 = 1/(alpha^2 S2_i),
  S2_i = sum_j w_j^2/(d_j - theta_i)^2 (the eigenvector is u_i ~ (D - theta_i)^-1 w);
* the accepted step solves the secular equation once at that alpha (or reuses the roots of
  an exact last evaluation), forms U (O(r^2)) and W <- W U (O(r^3): the dense product the
  paper would replace by a fast multipole method).
Off-diagonal similarity constraints K_ij = a^T exp(D) c (a, c the rows of V0 W) add the
rank-two term alpha (a c^T + c a^T)/2 = (alpha/4)(s s^T - t t^T): two successive
diagonal-plus-rank-one decompositions, O(r^2) per trace evaluation.

Shared by both:

* the search for alpha needs only phi(alpha), and that needs no secular roots:
  phi(alpha) = (1/2 pi i) oint e^z g(z) / (1 - alpha g(z)) dz with g(z) = w^T (z - D)^-1 w
  (Sherman-Morrison on the resolvent), evaluated by the Talbot quadrature of e^z (Trefethen,
  Weideman & Schmelzer 2006) on N = 24 nodes shifted to sigma >= the largest eigenvalue: g at
  the 12 conjugate-pair nodes is set up once per projection, after which a trial alpha costs
  O(N).  The quadrature's error is below QUAD_ERR e^sigma ||w||^2 whatever the spectrum; a
  trial whose value this bound does not certify to QUAD_RTOL relative (w^T X w far below
  e^sigma ||w||^2: a wide spectrum that w barely sees at its top, or alpha beyond the nodes'
  shift) is evaluated exactly from the secular roots instead (the exact fallback);
* alpha is found by a bracketed secant iteration on log z^T X(alpha) z from a first guess
  alpha0 = log(b/p)/s, exact when the exponent is a multiple of I: s = ||w||^2 in the eigen
  sweep, Newton's s = phi'(0)/phi(0) from the Talbot nodes in the Krylov sweep; the dual correction
  beta = min(lambda_i, alpha) is tested first, so a clamped step costs one trace evaluation
  and a satisfied constraint with lambda_i = 0 costs none.

The pieces live along their mathematical seams: the contour quadrature in
:mod:`~kernlearn_cli.solvers._contour`, the secular equation and the rank-one eigen-update
(``rank_one_update``, DefiniteBoost's) in :mod:`~kernlearn_cli.solvers._secular`, Lanczos and the
Gauss rule in :mod:`~kernlearn_cli.solvers._lanczos`.  This module holds the search for alpha and
the two sweeps, which report named counts (:class:`EigenSweep`, :class:`KrylovSweep`).

References
----------
Kulis, B., Sustik, M. & Dhillon, I. S. (2006). Learning low-rank kernel matrices. Proceedings of
the 23rd International Conference on Machine Learning (ICML), 505-512.
"""

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ..kinds import DISTANCE
from ._contour import QUAD_Z, quad_log, quad_setup, quad_slope
from ._cyclic import BROKEN, OK, STUCK, TINY, Sweep, dual_step, rel_violation, sign
from ._lanczos import LOG_LZ_RTOL, cf_setup, krylov, rule_poles
from ._secular import N_IW, N_WK, eigvals, eigvecs, exp_form, poles, sort_perm

MAX_EVALS = 60
TOL_G = 1e-10          # root-finder stop: relative error of the constraint value


# Root finding for alpha: the increasing function g (log z^T X(alpha) z - log b + alpha/gamma
# for rank-one constraints) is driven by a bracketed secant iteration, kept as a small state
# vector so that every projection type can run its own evaluations in a plain loop:
#     x = _root_start(st, g0, c, gc, a1)
#     while True: x, done = _root_advance(st, x, g(x), evals); if done: break
# The root is then always the point evaluated last, so its secular roots can be reused.
_LO, _GLO, _HI, _GHI, _X0, _Y0 = range(6)


@njit(cache=True, error_model="numpy")
def _root_start(st, g0, c, gc, a1):
    """Bracket from the known points g(0) = g0 and (c != 0) g(c) = gc; returns the first point."""
    st[_LO], st[_GLO], st[_HI], st[_GHI] = -np.inf, -np.inf, np.inf, np.inf
    if g0 < 0.0:
        st[_LO], st[_GLO] = 0.0, g0
    else:
        st[_HI], st[_GHI] = 0.0, g0
    if c != 0.0:
        if gc < 0.0 and c > st[_LO]:
            st[_LO], st[_GLO] = c, gc
        elif gc > 0.0 and c < st[_HI]:
            st[_HI], st[_GHI] = c, gc
    st[_X0], st[_Y0] = 0.0, g0
    lo, hi = st[_LO], st[_HI]
    if lo < a1 < hi:
        return a1
    if math.isfinite(lo) and math.isfinite(hi):               # regula falsi on the bracket
        return lo - st[_GLO] * (hi - lo) / (st[_GHI] - st[_GLO])
    return a1 if math.isfinite(a1) else (lo + 1.0 if math.isfinite(lo) else hi - 1.0)


@njit(cache=True, error_model="numpy")
def _root_advance(st, x1, y1, evals):
    """Take g(x1) = y1; returns (next point, done).  Done: |g| <= TOL_G, the bracket has
    collapsed, or MAX_EVALS evaluations (x1 is then the answer); nan: no finite value."""
    if not math.isfinite(y1):
        return np.nan, True
    if y1 < 0.0:
        st[_LO], st[_GLO] = x1, y1
    else:
        st[_HI], st[_GHI] = x1, y1
    lo, hi = st[_LO], st[_HI]
    collapsed = math.isfinite(lo) and math.isfinite(hi) and hi - lo <= 1e-15 * max(abs(lo), abs(hi))
    if abs(y1) <= TOL_G or collapsed or evals >= MAX_EVALS:
        return x1, True
    x0, y0 = st[_X0], st[_Y0]
    x2 = x1 - y1 * (x1 - x0) / (y1 - y0) if y1 != y0 else np.nan
    if not lo < x2 < hi:
        if math.isfinite(lo) and math.isfinite(hi):
            x2 = 0.5 * (lo + hi)                                # bisection keeps the bracket honest
        elif math.isfinite(lo):
            x2 = lo + 2.0 * max(abs(lo - x0), abs(lo), 1e-3)   # expand towards the missing side
        else:
            x2 = hi - 2.0 * max(abs(hi - x0), abs(hi), 1e-3)
    st[_X0], st[_Y0] = x1, y1
    return x2, False


@njit(cache=True)
def _gemm_into(A, B, out):
    """out = A B for square matrices (BLAS, no allocation; B may be a transposed view)."""
    np.dot(A, B, out)


@njit(cache=True)
def _matvec(A, x, out):
    """out = A x."""
    r = A.shape[0]
    for i in range(r):
        s = 0.0
        for j in range(r):
            s += A[i, j] * x[j]
        out[i] = s


@njit(cache=True)
def _tmatvec(U, x, out):
    """out = U^T x."""
    r = U.shape[0]
    for j in range(r):
        out[j] = 0.0
    for m in range(r):
        xm = x[m]
        for j in range(r):
            out[j] += xm * U[m, j]


@njit(cache=True, error_model="numpy")
def _dexp(x, y):
    """Divided difference (e^x - e^y)/(x - y), e^x when x = y."""
    h = x - y
    if abs(h) < 1e-12:
        return math.exp(0.5 * (x + y))
    return math.exp(y) * math.expm1(h) / h


# Workspace rows (r-vectors): wk: those of the secular functions (N_WK), then the rank-two vectors;
# iw: those of the secular functions (N_IW), then permutations, owners and root origins.
_WK_S, _WK_T, _WK_A, _WK_C, _WK_T1, _WK_A1, _WK_C1, _WK_D1, _WK_D2, _WK_P2, _WK_W2, _WK_TAU2 = range(N_WK, N_WK + 12)
_N_WK = N_WK + 12
_IW_PERM2, _IW_OWN2, _IW_ORG2 = range(N_IW, N_IW + 3)
_N_IW = N_IW + 3


@njit(cache=True, error_model="numpy")
def _rank_two_value(alpha, k, D, perm, pole, weight, owner, org, tau, U1, U2, wk, iw):
    """K_ij(alpha) = a^T exp(D + (alpha/4)(s s^T - t t^T)) c by two diagonal-plus-rank-one
    decompositions (left in U1^T, wk[D1] and U2^T, wk[D2], eigenvectors as rows); O(r^2).  The k poles of the first
    stage (D with weights s^2) are set up by the caller."""
    r = D.shape[0]
    s, t, a, c = wk[_WK_S], wk[_WK_T], wk[_WK_A], wk[_WK_C]
    t1, a1, c1, d1, d2 = wk[_WK_T1], wk[_WK_A1], wk[_WK_C1], wk[_WK_D1], wk[_WK_D2]
    for j in range(r):
        d1[j] = D[j]
    if alpha != 0.0:
        eigvals(pole, weight, k, 0.25 * alpha, org, tau, wk, iw, False)
        eigvecs(d1, s, perm, owner, pole, k, org, tau, U1, wk, iw)
        _matvec(U1, t, t1)
        _matvec(U1, a, a1)
        _matvec(U1, c, c1)
    else:
        for i in range(r):
            for j in range(r):
                U1[i, j] = 1.0 if i == j else 0.0
            t1[i], a1[i], c1[i] = t[i], a[i], c[i]
    perm2, owner2 = iw[_IW_PERM2], iw[_IW_OWN2]
    pole2, weight2, tau2 = wk[_WK_P2], wk[_WK_W2], wk[_WK_TAU2]
    org2 = iw[_IW_ORG2]
    sort_perm(d1, perm2)
    for j in range(r):
        d2[j] = d1[j]
    k2 = poles(d1, t1, perm2, pole2, weight2, owner2)
    if alpha != 0.0 and k2 > 0:
        eigvals(pole2, weight2, k2, -0.25 * alpha, org2, tau2, wk, iw, False)
        eigvecs(d2, t1, perm2, owner2, pole2, k2, org2, tau2, U2, wk, iw)
    else:
        for i in range(r):
            for j in range(r):
                U2[i, j] = 1.0 if i == j else 0.0
    f = 0.0
    for l in range(r):
        ua = 0.0
        uc = 0.0
        for m in range(r):
            ua += U2[l, m] * a1[m]
            uc += U2[l, m] * c1[m]
        f += math.exp(d2[l]) * ua * uc
    return f


@njit(cache=True, error_model="numpy")
def _apply(W, Ut, Wn):
    """W <- W U, given Ut = U^T (the O(r^3) step of Alg. 2)."""
    _gemm_into(W, Ut.T, Wn)
    r = W.shape[0]
    for a in range(r):
        for c in range(r):
            W[a, c] = Wn[a, c]


@njit(cache=True, error_model="numpy")
def _trial(alpha, quad, a, b, m, k, pole, weight, perm, owner, org, tau, wk, iw, warm):
    """(log phi(alpha), exact?, k) for a trial alpha.

    ``quad`` = (sigma, amax, mu0, g at the nodes) from :func:`cf_setup`: the Talbot value where
    :func:`quad_log` certifies it, otherwise the exact value of the rule from its secular roots
    (left in org, tau), the rule being computed on first need (k < 0 on entry: not yet; the k
    returned is kept by the caller)."""
    y = quad_log(quad, alpha)
    if not math.isnan(y):
        return y, False, k
    if k < 0:
        k = rule_poles(a, b, m, quad[2], pole, weight, perm, owner, wk)
        if k <= 0:
            return np.nan, True, k
        warm = False
    val = exp_form(pole, weight, k, alpha, org, tau, wk, iw, warm)
    return (math.log(val) if val > 0.0 else np.nan), True, k


# --- the search for alpha and the two sweeps ---
_NO_RULE = np.zeros(1)                                  # (the eigen sweep's poles are given: no Gauss rule)


@njit(cache=True, error_model="numpy", inline="always")   # (as a call, 2.06 -> 2.2 µs a projection at r = 16)
def _search(g0, target, c_clamp, delta, a1, inv_slack, quad, a, b, m, k, pole, weight, perm, owner, org, tau,
            wk, iw, st):
    """alpha of a rank-one projection: y(alpha) = log phi(alpha) + alpha/gamma - log b = 0, the dual
    correction's clamp c_clamp (signed lambda_i) tested first, then the bracketed secant iteration
    from a1 (y(0) = g0).  A trial value is the Talbot value where :func:`quad_log` certifies it,
    else exact (:func:`_trial`: from the poles, k >= 0, or from the Gauss rule of (a, b, m),
    computed on first need, k < 0).  Returns (alpha, trace evaluations, how many exact,
    root-finder calls (0 or 1), whether org/tau hold the secular roots at alpha, k, ok)."""
    alpha = c_clamp
    gc = 0.0
    sgn = 0.0                                               # sign of the last alpha evaluated exactly
    exact = False
    ev = 0
    xev = 0
    if c_clamp != 0.0:
        gc = quad_log(quad, c_clamp)
        exact = math.isnan(gc)
        if exact:
            gc, exact, k = _trial(c_clamp, quad, a, b, m, k, pole, weight, perm, owner, org, tau, wk, iw, False)
            sgn = c_clamp
        gc += c_clamp * inv_slack - target
        ev = 1
        xev += exact
        if delta * gc <= 0.0:                               # the clamp holds: beta = -lambda_i (signed)
            return alpha, ev, xev, 0, exact, k, True
    x = _root_start(st, g0, c_clamp, gc, a1)
    done = False
    y = 0.0
    while not done:
        y = quad_log(quad, x)
        exact = math.isnan(y)
        if exact:
            warm = (x > 0.0) == (sgn > 0.0) and sgn != 0.0
            y, exact, k = _trial(x, quad, a, b, m, k, pole, weight, perm, owner, org, tau, wk, iw, warm)
            sgn = x
        y += x * inv_slack - target
        ev += 1
        xev += exact
        alpha = x
        x, done = _root_advance(st, x, y, ev)
    return alpha, ev, xev, 1, exact, k, math.isfinite(x) and not (ev >= MAX_EVALS and abs(y) > 1e-6)


@njit(cache=True, error_model="numpy")
def _sym_rank_one(L, beta, v):
    """L <- L + beta v v^T, each entry as beta (v_l v_c): the same bits at (l, c) and (c, l), so L
    stays exactly symmetric (no fastmath here: a fused multiply-add would break that)."""
    r = L.shape[0]
    for l in range(r):
        vl = v[l]
        for c in range(r):
            L[l, c] += beta * (vl * v[c])


_EIGEN_SIG = ("Tuple((int64, int64, float64, int64, int64, int64, int64, int64))(float64[:, ::1], int64[::1], int64[::1], "
               "int8[::1], float64[::1], float64[::1], float64[:, ::1], float64[::1], float64)")


@njit(_EIGEN_SIG, cache=True, error_model="numpy")
def _eigen_sweep(V0, ci, cj, kind, bhat, lam, W, D, slack):
    """One cyclic sweep of von Neumann projections by eigen-updates (Alg. 2 as the paper does them),
    in place on W, D, lam, bhat (the iterate is X = V0 W exp(D) W^T V0^T).

    Distance constraints (z = e_i - e_j) and diagonal similarity constraints (z = e_i) are
    rank-one (trial values by the Talbot quadrature, exact fallback); off-diagonal similarity
    constraints K_ij are rank-two (trial values exact).  Returns the fields of :class:`EigenSweep`.
    """
    r = W.shape[0]
    hard = math.isinf(slack)
    inv_slack = 0.0 if hard else 1.0 / slack
    v = np.empty(r)
    w = np.empty(r)
    pole = np.empty(r)
    weight = np.empty(r)
    tau = np.empty(r)
    perm = np.empty(r, dtype=np.int64)
    owner = np.empty(r, dtype=np.int64)
    org = np.empty(r, dtype=np.int64)
    wk = np.empty((_N_WK, r))
    iw = np.zeros((_N_IW, r), dtype=np.int64)
    U = np.empty((r, r))
    U2 = np.empty((r, r))
    Wn = np.empty((r, r))
    st = np.empty(6)
    gre = np.empty(QUAD_Z.shape[0])
    gim = np.empty(QUAD_Z.shape[0])
    maxviol = 0.0
    argmax = -1
    xev = 0
    evals = 0
    maxev = 0
    solves = 0
    for q in range(ci.shape[0]):
        i = ci[q]
        j = cj[q]
        kd = kind[q]
        delta = sign(kd)
        rank_two = kd not in DISTANCE and i != j
        b = bhat[q]
        if rank_two:
            a, c = wk[_WK_A], wk[_WK_C]
            _tmatvec(W, V0[i], a)                            # a = W^T v_i, c = W^T v_j
            _tmatvec(W, V0[j], c)
            p = 0.0
            aa = 0.0
            cc = 0.0
            for l in range(r):
                p += math.exp(D[l]) * a[l] * c[l]           # p = K_ij
                aa += a[l] * a[l]
                cc += c[l] * c[l]
            degenerate = aa * cc <= TINY
        else:
            is_dist = kd in DISTANCE
            for l in range(r):
                v[l] = V0[i, l] - V0[j, l] if is_dist else V0[i, l]
            _tmatvec(W, v, w)                               # w = W^T v
            p = 0.0
            for l in range(r):
                p += math.exp(D[l]) * w[l] * w[l]           # p = z^T X z
            degenerate = p <= TINY
        viol = rel_violation(p, b, delta)
        if viol > maxviol:
            maxviol = viol
            argmax = q
        if not math.isfinite(p):
            return BROKEN, q, maxviol, argmax, xev, evals, solves, maxev
        if degenerate:                                      # no rank-preserving update moves it
            if viol > 0.0:
                return STUCK, q, maxviol, argmax, xev, evals, solves, maxev
            continue
        c_clamp = delta * lam[q]                            # beta = min(lambda_i, alpha), signed
        sort_perm(D, perm)
        ev = 0
        if rank_two:
            s, t = wk[_WK_S], wk[_WK_T]
            for l in range(r):
                s[l] = a[l] + c[l]
                t[l] = a[l] - c[l]
            k = poles(D, s, perm, pole, weight, owner)
            scale = max(abs(b), abs(p))
            g0 = (p - b) / scale
            if g0 == 0.0 or (delta != 0.0 and c_clamp == 0.0 and delta * g0 <= 0.0):
                continue                                    # at the bound, or satisfied with lambda_i = 0
            alpha = c_clamp
            gc = 0.0
            y = 0.0
            if c_clamp != 0.0:
                gc = (_rank_two_value(c_clamp, k, D, perm, pole, weight, owner, org, tau, U, U2, wk, iw)
                      - b * math.exp(-c_clamp * inv_slack)) / scale
                ev = 1
            if c_clamp == 0.0 or delta * gc > 0.0:          # the step is not clamped: find alpha
                slope = b * inv_slack                       # g'(0) * scale, for a Newton first guess
                for l in range(r):
                    for m in range(r):
                        slope += 0.5 * a[l] * c[m] * (a[l] * c[m] + c[l] * a[m]) * _dexp(D[l], D[m])
                x = _root_start(st, g0, c_clamp, gc, -g0 * scale / slope if slope > 0.0 else np.nan)
                done = False
                while not done:
                    y = (_rank_two_value(x, k, D, perm, pole, weight, owner, org, tau, U, U2, wk, iw)
                         - b * math.exp(-x * inv_slack)) / scale
                    ev += 1
                    alpha = x
                    x, done = _root_advance(st, x, y, ev)
                if not math.isfinite(x) or (ev >= MAX_EVALS and abs(y) > 1e-6):
                    return BROKEN, q, maxviol, argmax, xev + ev, evals + ev, solves + 1, max(maxev, ev)
                evals += ev
                xev += ev                                   # rank-two trial values are all exact
                solves += 1
                maxev = max(maxev, ev)
            elif c_clamp != 0.0:
                evals += ev
                xev += ev
            applied = dual_step(alpha, lam, q, delta)
            if not hard:
                bhat[q] = b * math.exp(-applied * inv_slack)
            _gemm_into(U2, U, Wn)                           # (U1 U2)^T = U2^T U1^T, then W <- W U1 U2
            for l in range(r):
                for m in range(r):
                    U[l, m] = Wn[l, m]
            _apply(W, U, Wn)
            d2 = wk[_WK_D2]
            for l in range(r):
                D[l] = d2[l]
            continue
        k = poles(D, w, perm, pole, weight, owner)
        if b <= 0.0:
            if delta >= 0.0:
                return STUCK, q, maxviol, argmax, xev, evals, solves, maxev
            if c_clamp == 0.0:                              # z^T X z >= b <= 0 holds, lambda_i = 0
                continue
            alpha = c_clamp                                 # alpha = -inf, clamped to -lambda_i
            eigvals(pole, weight, k, alpha, org, tau, wk, iw, False)
        else:
            target = math.log(b)
            g0 = math.log(p) - target
            if g0 == 0.0 or (delta != 0.0 and c_clamp == 0.0 and delta * g0 <= 0.0):
                continue
            wnorm2 = 0.0
            for l in range(r):
                wnorm2 += w[l] * w[l]
            a1 = -g0 / (wnorm2 + inv_slack)                 # exact when D is constant
            amax = max(0.0, c_clamp, 2.0 * a1)              # trial alphas the nodes' shift covers
            sigma = pole[k - 1] + amax * wnorm2
            wsum = 0.0
            for l in range(k):
                wsum += weight[l]
            quad_setup(pole, weight, k, sigma, gre, gim, wk[4])       # wk[4]: free until the eigenvectors
            quad = (sigma, amax, wsum, gre, gim)
            alpha, ev, x_ev, solved, exact, k, ok = _search(g0, target, c_clamp, delta, a1, inv_slack, quad,
                                                            _NO_RULE, _NO_RULE, 0, k, pole, weight, perm, owner,
                                                            org, tau, wk, iw, st)
            xev += x_ev
            if solved:
                solves += 1
                maxev = max(maxev, ev)
            if not ok:
                return BROKEN, q, maxviol, argmax, xev, evals + ev, solves, maxev
            evals += ev
            if not exact:                                   # the one secular solve of the projection
                                                            # (else org, tau hold the roots at alpha)
                eigvals(pole, weight, k, alpha, org, tau, wk, iw, False)
        applied = dual_step(alpha, lam, q, delta)           # = alpha: it lies within the clamp
        if not hard:
            bhat[q] = b * math.exp(-applied * inv_slack)    # slack: log bhat <- log bhat - alpha/gamma
        # D + beta ww^T = U Theta U^T from the secular roots at alpha (U holds U^T)
        eigvecs(D, w, perm, owner, pole, k, org, tau, U, wk, iw)   # D <- Theta
        _apply(W, U, Wn)                                    # W <- W U
    return OK, -1, maxviol, argmax, xev, evals, solves, maxev


_KRYLOV_SIG = ("Tuple((int64, int64, float64, int64, int64, int64, int64, int64, int64))(float64[:, ::1], int64[::1], "
               "int64[::1], int8[::1], float64[::1], float64[::1], float64[:, ::1], float64)")


@njit(_KRYLOV_SIG, cache=True, error_model="numpy")
def _krylov_sweep(V0, ci, cj, kind, bhat, lam, L, slack):
    """One cyclic sweep of von Neumann projections (Alg. 2) by Lanczos runs, in place on the
    exponent L, lam, bhat (the iterate is X = V0 exp(L) V0^T).

    Rank-one constraints only: distances (z = e_i - e_j) and diagonal similarities (z = e_i);
    sets with off-diagonal similarities go to :func:`_eigen_sweep`.  phi(alpha) = v^T exp(L +
    alpha v v^T) v (v = V0^T z) from a Lanczos run on L (trial values by the Talbot quadrature
    of its Gauss rule, exact fallback from the rule's secular roots), then L <- L + beta v v^T:
    O(m r^2) for m Lanczos steps.  Returns the fields of :class:`KrylovSweep`.
    """
    r = L.shape[0]
    hard = math.isinf(slack)
    inv_slack = 0.0 if hard else 1.0 / slack
    v = np.empty(r)
    u = np.empty(r)
    Q = np.empty((r, r))
    ja = np.empty(r)                                        # the Jacobi matrix T_m: a_0..a_{m-1}
    jb = np.zeros(r + 1)                                    # b_1..b_m (b_0 = 0)
    pole = np.empty(r)
    weight = np.empty(r)
    tau = np.empty(r)
    perm = np.empty(r, dtype=np.int64)
    owner = np.empty(r, dtype=np.int64)
    org = np.empty(r, dtype=np.int64)
    wk = np.empty((_N_WK, r))
    iw = np.zeros((_N_IW, r), dtype=np.int64)
    st = np.empty(6)
    nz = QUAD_Z.shape[0]
    gre, gim, fr, fi = np.empty(nz), np.empty(nz), np.empty(nz), np.empty(nz)
    maxviol = 0.0
    argmax = -1
    xev = 0
    evals = 0
    maxev = 0
    solves = 0
    steps = 0
    for q in range(ci.shape[0]):
        i = ci[q]
        j = cj[q]
        kd = kind[q]
        delta = sign(kd)
        is_dist = kd in DISTANCE
        if not is_dist and i != j:
            raise ValueError("krylov_sweep takes rank-one constraints only")
        b = bhat[q]
        m, logp, top, full, slope = 0, 0.0, 0.0, True, 0.0  # the Lanczos run
        m_p, sigma_p = 0, 0.0                               # and the shift of its Talbot nodes for p
        mu0 = 0.0
        for l in range(r):
            v[l] = V0[i, l] - V0[j, l] if is_dist else V0[i, l]
            mu0 += v[l] * v[l]
        p = 0.0
        kk = -1                                             # the Gauss rule's poles: not computed yet
        if mu0 > TINY:
            inv = 1.0 / math.sqrt(mu0)
            for l in range(r):
                Q[0, l] = v[l] * inv
            m, logp, top, full = krylov(L, Q, ja, jb, u, 0, 0.0, 0.0)
            m_p, sigma_p = m, top
            cf_setup(ja, jb, m, mu0, top, gre, gim, fr, fi)
            lp, exact, kk = _trial(0.0, (top, 0.0, mu0, gre, gim), ja, jb, m, kk, pole, weight, perm, owner,
                                   org, tau, wk, iw, False)
            p = math.exp(lp)                                # p = z^T X z
            steps += m
            slope = mu0 if exact else quad_slope(gre, gim)  # d log phi / d alpha at 0
        degenerate = p <= TINY
        viol = rel_violation(p, b, delta)
        if viol > maxviol:
            maxviol = viol
            argmax = q
        if not math.isfinite(p):
            return BROKEN, q, maxviol, argmax, xev, evals, solves, maxev, steps
        if degenerate:                                      # no rank-preserving update moves it
            if viol > 0.0:
                return STUCK, q, maxviol, argmax, xev, evals, solves, maxev, steps
            continue
        c_clamp = delta * lam[q]                            # beta = min(lambda_i, alpha), signed
        ev = 0
        if b <= 0.0:
            if delta >= 0.0:
                return STUCK, q, maxviol, argmax, xev, evals, solves, maxev, steps
            if c_clamp == 0.0:                              # z^T X z >= b <= 0 holds, lambda_i = 0
                continue
            alpha = c_clamp                                 # alpha = -inf, clamped to -lambda_i
        else:
            target = math.log(b)
            g0 = math.log(p) - target
            if g0 == 0.0 or (delta != 0.0 and c_clamp == 0.0 and delta * g0 <= 0.0):
                continue
            a1 = -g0 / (slope + inv_slack)                  # Newton's first step (exact when L is a multiple of I)
            amax = max(0.0, c_clamp, 2.0 * a1)              # trial alphas the nodes' shift covers
            need = -min(0.0, c_clamp, 2.0 * a1) * mu0       # and the Krylov run's accuracy
            for _rounds in range(8):                        # (a second round is rare)
                if not full and need > 0.0:
                    m0 = m
                    m, logp, top, full = krylov(L, Q, ja, jb, u, m, logp, need)
                    steps += m - m0
                    if m > m0:
                        kk = -1                             # a longer rule: its poles are redone
                sigma = top + amax * mu0
                if sigma != sigma_p or m != m_p:            # (else the nodes of p serve)
                    cf_setup(ja, jb, m, mu0, sigma, gre, gim, fr, fi)
                quad = (sigma, amax, mu0, gre, gim)
                alpha, ev1, x_ev, solved, _, kk, ok = _search(g0, target, c_clamp, delta, a1, inv_slack, quad,
                                                              ja, jb, m, kk, pole, weight, perm, owner, org, tau,
                                                              wk, iw, st)
                ev += ev1
                xev += x_ev
                if solved:
                    solves += 1
                    maxev = max(maxev, ev1)
                if not ok:
                    return BROKEN, q, maxviol, argmax, xev, evals + ev, solves, maxev, steps
                if full or logp + top - ja[0] - min(alpha, 0.0) * mu0 <= LOG_LZ_RTOL:
                    break
                need = -min(alpha, 0.0) * mu0 + 1.0         # the step went further than planned
            evals += ev
        applied = dual_step(alpha, lam, q, delta)           # = alpha: it lies within the clamp
        if not hard:
            bhat[q] = b * math.exp(-applied * inv_slack)    # slack: log bhat <- log bhat - alpha/gamma
        _sym_rank_one(L, applied, v)                        # L <- L + beta v v^T
    return OK, -1, maxviol, argmax, xev, evals, solves, maxev, steps


_COUNTS = [("exact_evaluations", int), ("evaluations", int), ("solves", int), ("max_evaluations", int)]


class EigenSweep(NamedTuple("EigenSweep", [*Sweep.__annotations__.items(), *_COUNTS])):
    """What a sweep of eigen-updates reports (:func:`eigen_sweep`): the fields of
    :class:`~kernlearn_cli.solvers._cyclic.Sweep`, then its counts.

    Attributes
    ----------
    exact_evaluations : int
        Trace evaluations done exactly from secular roots.
    evaluations : int
        Trace evaluations.
    solves : int
        Root-finder calls (projections not settled by the dual correction's clamp).
    max_evaluations : int
        The most trace evaluations one call needed.
    """

    __slots__ = ()


class KrylovSweep(NamedTuple("KrylovSweep", [*Sweep.__annotations__.items(), *_COUNTS, ("lanczos_steps", int)])):
    """What a sweep of Lanczos runs reports (:func:`krylov_sweep`): :class:`EigenSweep`'s fields, then
    ``lanczos_steps``, the Lanczos steps of the sweep."""

    __slots__ = ()


def eigen_sweep(V0, ci, cj, kind, bhat, lam, W, D, slack) -> EigenSweep:
    """One cyclic sweep by eigen-updates (the compiled :func:`_eigen_sweep`), its counts named."""
    return EigenSweep(*_eigen_sweep(V0, ci, cj, kind, bhat, lam, W, D, slack))


def krylov_sweep(V0, ci, cj, kind, bhat, lam, L, slack) -> KrylovSweep:
    """One cyclic sweep by Lanczos runs (the compiled :func:`_krylov_sweep`), its counts named."""
    return KrylovSweep(*_krylov_sweep(V0, ci, cj, kind, bhat, lam, L, slack))
