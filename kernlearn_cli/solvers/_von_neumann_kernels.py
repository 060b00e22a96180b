"""Compiled inner loop of the low-rank von Neumann projections (Kulis et al. 2006, Alg. 2).

The iterate is X = V0 W exp(D) W^T V0^T with W orthogonal (r x r) and D the diagonal
of the exponent (Lambda = exp(D)).  A projection onto the constraint z^T X z (<=,>=,=) b
with v = V0^T z, w = W^T v needs the eigen-decomposition of the diagonal-plus-rank-one
exponent D + alpha w w^T = U Theta U^T (Sec. 5.2.1).  Here:

* its eigenvalues are the roots of the secular equation
  1 + alpha sum_j w_j^2 / (d_j - theta) = 0 (Golub 1973; Demmel 1997, Sec. 5.3.3),
  after deflating zero weights and merging equal poles: O(r) per root, O(r^2) in all;
* the constraint value for a trial alpha needs no eigenvectors:
  z^T X(alpha) z = sum_i exp(theta_i) (u_i . w)^2 with (u_i . w)^2 = 1/(alpha^2 S2_i),
  S2_i = sum_j w_j^2/(d_j - theta_i)^2 (the eigenvector is u_i ~ (D - theta_i)^-1 w);
* alpha is found by a safeguarded secant iteration on log z^T X(alpha) z (exact when
  D is constant, which gives the first guess alpha0 = log(b/p)/||w||^2), counting
  trace evaluations;
* only the accepted step forms U (O(r^2)) and W <- W U (O(r^3): the dense product the
  paper would replace by a fast multipole method).
"""

import math

import numpy as np
from numba import njit

from ._cyclic import BROKEN, OK, STUCK, TINY, dual_step, rel_violation, sign

# No fastmath here: reassociation would turn (pole_j - pole_org) - tau into
# pole_j - (pole_org + tau) and destroy the relative accuracy of roots near a pole.
_EPS = 2.220446049250313e-16
MAX_EVALS = 60


@njit(cache=True, error_model="numpy")
def _poles(d, w, perm, pole, weight, owner):
    """Sort D ascending and merge (numerically) equal entries into poles.

    Returns k, the number of poles with positive weight: pole[g], weight[g] = sum of
    w_j^2 over the group; owner[j] = group index of sorted position j (-1: weight 0).
    """
    r = d.shape[0]
    scale = 0.0
    wsum = 0.0
    for j in range(r):
        scale = max(scale, abs(d[j]))
        wsum += w[j] * w[j]
    gap = 64.0 * _EPS * max(scale, 1.0)
    k = 0
    j = 0
    while j < r:
        start = j
        acc = 0.0
        while j < r and d[perm[j]] - d[perm[start]] <= gap:
            acc += w[perm[j]] ** 2
            j += 1
        if acc > _EPS * _EPS * wsum:
            pole[k] = d[perm[start]]
            weight[k] = acc
            for t in range(start, j):
                owner[t] = k
            k += 1
        else:
            for t in range(start, j):
                owner[t] = -1
    return k


@njit(cache=True, error_model="numpy")
def _secular(pole, weight, k, rho, org, tau):
    """Eigenvalues of diag(pole) + rho * (rank one with squared components ``weight``), rho > 0.

    Root i lies in (pole[i], pole[i+1]) (the last in (pole[k-1], pole[k-1] + rho sum weight))
    and is stored as theta_i = pole[org[i]] + tau[i], relative to the nearer pole, so that
    theta_i - pole[org[i]] keeps full relative accuracy however close the root is to it
    (as LAPACK's dlaed4).  Bracketed Newton on f(tau) = 1/rho + sum_j weight_j/(delta_j - tau),
    delta_j = pole_j - pole[org], bisecting when Newton leaves the bracket.
    """
    total = 0.0
    for j in range(k):
        total += weight[j]
    for i in range(k):
        if i == k - 1:
            o = i
            lo, hi = 0.0, rho * total
        else:
            mid = 0.5 * (pole[i] + pole[i + 1])
            f = 1.0 / rho
            for j in range(k):
                f += weight[j] / (pole[j] - mid)
            if f >= 0.0:                                  # root in the left half: origin pole[i]
                o = i
                lo, hi = 0.0, mid - pole[i]
            else:
                o = i + 1
                lo, hi = mid - pole[i + 1], 0.0
        base = pole[o]
        # Gragg's "middle way" (as LAPACK's dlaed4): model the left poles (j <= i) and the
        # right poles (j > i) each by one pole with matching value and slope at t, solve the
        # model exactly, keep the bracket; converges in a few steps.
        dl = pole[i] - base
        dr = pole[i + 1] - base if i + 1 < k else 0.0
        rest = 1.0 / rho                                  # one-pole first guess at tau = 0
        for j in range(k):
            if j != o:
                rest += weight[j] / (pole[j] - base)
        t = weight[o] / rest if rest != 0.0 else 0.5 * (lo + hi)   # 1/rho + R - w_o/tau = 0
        if not lo < t < hi:
            t = 0.5 * (lo + hi)
        for _ in range(100):
            psi = 0.0
            dpsi = 0.0
            phi = 0.0
            dphi = 0.0
            for j in range(k):
                q = 1.0 / ((pole[j] - base) - t)
                if j <= i:
                    psi += weight[j] * q
                    dpsi += weight[j] * q * q
                else:
                    phi += weight[j] * q
                    dphi += weight[j] * q * q
            f = 1.0 / rho + psi + phi
            if f < 0.0:
                lo = t
            else:
                hi = t
            if f == 0.0 or hi - lo <= 4.0 * _EPS * max(abs(lo), abs(hi)):
                break
            # model: c + a/(dl - x) + b/(dr - x) = 0 with a = dpsi (dl-t)^2, b = dphi (dr-t)^2
            a2 = dpsi * (dl - t) ** 2
            c = 1.0 / rho + psi - dpsi * (dl - t)
            if i + 1 < k:
                b2 = dphi * (dr - t) ** 2
                c += phi - dphi * (dr - t)
                # c (dl - x)(dr - x) + a2 (dr - x) + b2 (dl - x) = 0, a quadratic in x
                qa = c
                qb = -(c * (dl + dr) + a2 + b2)
                qc = c * dl * dr + a2 * dr + b2 * dl
                if qa == 0.0:
                    x = -qc / qb
                else:
                    disc = max(qb * qb - 4.0 * qa * qc, 0.0)
                    sq = math.sqrt(disc)
                    x1 = (-qb - sq) / (2.0 * qa) if qb > 0.0 else 2.0 * qc / (-qb + sq) if (-qb + sq) != 0.0 else np.nan
                    x2 = qc / (qa * x1) if x1 != 0.0 and math.isfinite(x1) else (-qb + sq) / (2.0 * qa)
                    x = x1 if lo < x1 < hi else x2
            else:
                c += phi
                x = dl + a2 / c if c != 0.0 else np.nan
            t_new = x if lo < x < hi else 0.5 * (lo + hi)
            if abs(t_new - t) <= 2.0 * _EPS * abs(t_new):   # converged (the bracket may stay one-sided)
                t = t_new
                break
            t = t_new
        if t == 0.0:                                      # underflow: keep the root off the pole
            t = 1e-300 if o == i else -1e-300
        org[i] = o
        tau[i] = t


@njit(cache=True, error_model="numpy")
def _eigvals(pole, weight, k, alpha, org, tau, work_p, work_w):
    """Secular roots of diag(pole) + alpha * rank one, for either sign of alpha:
    theta_i = pole[org[i]] + tau[i], in increasing order."""
    if alpha > 0.0:
        _secular(pole, weight, k, alpha, org, tau)
        return
    # D + alpha ww^T = -((-D) + |alpha| ww^T): poles reversed and negated
    for j in range(k):
        work_p[j] = -pole[k - 1 - j]
        work_w[j] = weight[k - 1 - j]
    _secular(work_p, work_w, k, -alpha, org, tau)
    for j in range(k // 2):
        org[j], org[k - 1 - j] = org[k - 1 - j], org[j]
        tau[j], tau[k - 1 - j] = tau[k - 1 - j], tau[j]
    for j in range(k):
        org[j] = k - 1 - org[j]
        tau[j] = -tau[j]


@njit(cache=True, error_model="numpy")
def _value(pole, weight, k, alpha, org, tau, work_p, work_w):
    """w^T exp(D + alpha w w^T) w from the secular roots alone (one trace evaluation)."""
    if alpha == 0.0:
        s = 0.0
        for j in range(k):
            s += math.exp(pole[j]) * weight[j]
        return s
    _eigvals(pole, weight, k, alpha, org, tau, work_p, work_w)
    s = 0.0
    for i in range(k):
        base = pole[org[i]]
        s2 = 0.0
        for j in range(k):
            q = 1.0 / ((pole[j] - base) - tau[i])
            s2 += weight[j] * q * q
        s += math.exp(base + tau[i]) / (alpha * alpha * s2)
    return s


@njit(cache=True, error_model="numpy")
def _solve_alpha(pole, weight, k, b, p, wnorm2, inv_slack, org, tau, work_p, work_w):
    """alpha with log w^T exp(D + alpha ww^T) w - log b + alpha/gamma = 0 (1/gamma = inv_slack,
    0 for hard constraints): bracketed, Illinois-safeguarded secant; returns (alpha, evaluations)."""
    target = math.log(b)
    g0 = math.log(p) - target                     # at alpha = 0
    if g0 == 0.0:
        return 0.0, 0
    a1 = -g0 / (wnorm2 + inv_slack)               # exact when D is constant
    g1 = math.log(_value(pole, weight, k, a1, org, tau, work_p, work_w)) - target + a1 * inv_slack
    evals = 1
    # bracket [lo, hi] with g(lo) < 0 < g(hi); g is increasing in alpha
    if g0 < 0.0:
        lo, glo = 0.0, g0
        hi, ghi = a1, g1
        while ghi < 0.0 and evals < MAX_EVALS:
            lo, glo = hi, ghi
            hi = 2.0 * hi
            ghi = math.log(_value(pole, weight, k, hi, org, tau, work_p, work_w)) - target + hi * inv_slack
            evals += 1
    else:
        hi, ghi = 0.0, g0
        lo, glo = a1, g1
        while glo > 0.0 and evals < MAX_EVALS:
            hi, ghi = lo, glo
            lo = 2.0 * lo
            glo = math.log(_value(pole, weight, k, lo, org, tau, work_p, work_w)) - target + lo * inv_slack
            evals += 1
    if glo > 0.0 or ghi < 0.0:
        return np.nan, evals
    # Illinois-modified regula falsi on the bracket
    side = 0
    a = a1
    while evals < MAX_EVALS:
        a = hi - ghi * (hi - lo) / (ghi - glo)
        if not (lo < a < hi):
            a = 0.5 * (lo + hi)
        g = math.log(_value(pole, weight, k, a, org, tau, work_p, work_w)) - target + a * inv_slack
        evals += 1
        if abs(g) <= 1e-13 or hi - lo <= 1e-15 * max(abs(lo), abs(hi)):
            break
        if g < 0.0:
            lo, glo = a, g
            if side == -1:
                ghi *= 0.5
            side = -1
        else:
            hi, ghi = a, g
            if side == 1:
                glo *= 0.5
            side = 1
    return a, evals


@njit(cache=True, error_model="numpy")
def _eigvecs(d, w, perm, owner, pole, k, org, tau, U):
    """Orthonormal eigenvectors of D + alpha ww^T (columns of U, original index order).

    Secular roots: u_i ~ (D - theta_i)^-1 w.  Each merged group of size m contributes
    m - 1 vectors orthogonal to its part of w (a Householder basis); zero-weight
    entries keep their unit vectors.  Returns the eigenvalue of every column in ``d``.
    """
    r = d.shape[0]
    newd = np.empty(r)
    live = np.empty(r, dtype=np.bool_)              # index j belongs to a pole with weight
    for t in range(r):
        live[perm[t]] = owner[t] >= 0
    for i in range(r):
        for j in range(r):
            U[j, i] = 0.0
    group = np.empty(r, dtype=np.int64)            # pole of each original index
    for t in range(r):
        group[perm[t]] = owner[t]
    col = 0
    for i in range(k):
        base = pole[org[i]]
        nn = 0.0
        for j in range(r):
            # d_j - theta_i = (pole_g - pole_org) - tau_i, exact for j in the origin group
            q = w[j] / ((pole[group[j]] - base) - tau[i]) if live[j] else 0.0
            U[j, col] = q
            nn += q * q
        nn = 1.0 / math.sqrt(nn)
        for j in range(r):
            U[j, col] *= nn
        newd[col] = base + tau[i]
        col += 1
    # groups: complement of w within the group; weight-0 entries: unit vectors
    t = 0
    while t < r:
        g = owner[t]
        start = t
        while t < r and owner[t] == g and (g >= 0 or t == start):
            t += 1
        if g < 0:
            j = perm[start]
            U[j, col] = 1.0
            newd[col] = d[j]
            col += 1
            continue
        m = t - start
        if m == 1:
            continue
        # Householder H = I - 2 h h^T / h^T h maps w_G to -sign(w_0)|w_G| e_0; columns 1..m-1 of H
        nw = 0.0
        for s in range(start, t):
            nw += w[perm[s]] ** 2
        nw = math.sqrt(nw)
        h = np.empty(m)
        for s in range(m):
            h[s] = w[perm[start + s]]
        h[0] += math.copysign(nw, h[0])
        hh = 0.0
        for s in range(m):
            hh += h[s] * h[s]
        for c in range(1, m):
            for s in range(m):
                U[perm[start + s], col] = (1.0 if s == c else 0.0) - 2.0 * h[s] * h[c] / hh
            newd[col] = pole[g]
            col += 1
    for i in range(r):
        d[i] = newd[i]


_SWEEP_SIG = ("Tuple((int64, int64, float64, int64, int64, int64, int64))(float64[:, ::1], int64[::1], int64[::1], "
              "int8[::1], float64[::1], float64[::1], float64[:, ::1], float64[::1], float64)")


@njit(_SWEEP_SIG, cache=True, error_model="numpy")
def von_neumann_sweep(V0, ci, cj, kind, bhat, lam, W, D, slack):
    """One cyclic sweep of von Neumann projections (Alg. 2), in place on W, D, lam, bhat.

    Constraints are distance constraints (z = e_i - e_j) or diagonal similarity
    constraints (z = e_i).  Returns (status, index, max relative violation met before a
    projection, its constraint, trace evaluations, root-finder calls, most trace
    evaluations one call needed).
    """
    r = W.shape[0]
    hard = math.isinf(slack)
    inv_slack = 0.0 if hard else 1.0 / slack
    v = np.empty(r)
    w = np.empty(r)
    pole = np.empty(r)
    weight = np.empty(r)
    owner = np.empty(r, dtype=np.int64)
    org = np.empty(r, dtype=np.int64)
    tau = np.empty(r)
    work_p = np.empty(r)
    work_w = np.empty(r)
    U = np.empty((r, r))
    maxviol = 0.0
    argmax = -1
    evals = 0
    maxev = 0
    solves = 0
    for q in range(ci.shape[0]):
        i = ci[q]
        j = cj[q]
        kd = kind[q]
        delta = sign(kd)
        is_dist = kd == 0 or kd == 1 or kd == 4
        for l in range(r):
            v[l] = V0[i, l] - V0[j, l] if is_dist else V0[i, l]
        for l in range(r):                                  # w = W^T v
            w[l] = 0.0
        for m in range(r):
            vm = v[m]
            for l in range(r):
                w[l] += vm * W[m, l]
        p = 0.0
        wnorm2 = 0.0
        for l in range(r):
            p += math.exp(D[l]) * w[l] * w[l]               # p = z^T X z
            wnorm2 += w[l] * w[l]
        b = bhat[q]
        viol = rel_violation(p, b, delta)
        if viol > maxviol:
            maxviol = viol
            argmax = q
        if not math.isfinite(p):
            return BROKEN, q, maxviol, argmax, evals, solves, maxev
        if p <= TINY:
            if viol > 0.0:
                return STUCK, q, maxviol, argmax, evals, solves, maxev
            continue
        perm = np.argsort(D)
        k = _poles(D, w, perm, pole, weight, owner)
        if b > 0.0:
            alpha_eq, ev = _solve_alpha(pole, weight, k, b, p, wnorm2, inv_slack, org, tau, work_p, work_w)
            evals += ev
            solves += 1
            maxev = max(maxev, ev)
            if not math.isfinite(alpha_eq):
                return BROKEN, q, maxviol, argmax, evals, solves, maxev
        elif delta < 0.0:
            alpha_eq = -np.inf                              # z^T X z >= b <= 0 always holds
        else:
            return STUCK, q, maxviol, argmax, evals, solves, maxev
        alpha = dual_step(alpha_eq, lam, q, delta)          # beta = min(lambda_i, alpha)
        if alpha == 0.0:
            continue
        if not math.isfinite(alpha):
            return BROKEN, q, maxviol, argmax, evals, solves, maxev
        if not hard:
            bhat[q] = b * math.exp(-alpha * inv_slack)      # slack: log bhat <- log bhat - alpha/gamma
        _eigvals(pole, weight, k, alpha, org, tau, work_p, work_w)  # D + beta ww^T = U Theta U^T
        _eigvecs(D, w, perm, owner, pole, k, org, tau, U)  # D <- Theta
        Wn = W @ U                                          # W <- W U
        for a in range(r):
            for c in range(r):
                W[a, c] = Wn[a, c]
    return OK, -1, maxviol, argmax, evals, solves, maxev
