"""The rank-one eigen-update diag(D) + alpha w w^T = U diag(Theta) U^T by the secular equation (compiled).

* The eigenvalues are the roots of the secular equation 1 + alpha sum_j w_j^2 / (d_j - theta) = 0,
  after deflating zero weights and merging equal poles (:func:`poles`): O(r) per root by Gragg's
  "middle way" (as LAPACK's dlaed4), O(r^2) in all (:func:`eigvals`);
* w^T exp(D + alpha w w^T) w needs no eigenvectors (:func:`exp_form`):
  sum_i exp(theta_i) (u_i . w)^2 with (u_i . w)^2 = 1/(alpha^2 S2_i), S2_i = sum_j w_j^2/(d_j - theta_i)^2;
* the eigenvectors are u_i ~ (D - theta_i)^-1 w, with a Householder basis within each merged pole
  (:func:`eigvecs`), O(r^2).

:func:`rank_one_update` is the package's one rank-one eigen-update (DefiniteBoost's steps, Tsuda et
al. 2005, Sec. 4); the von Neumann eigen sweep (:mod:`~kernlearn_cli.solvers._von_neumann_kernels`)
runs the same pieces inline with its own workspace.

References
----------
Golub, G. H. (1973). Some modified matrix eigenvalue problems. SIAM Review 15(2), 318-334.
Demmel, J. W. (1997). Applied Numerical Linear Algebra. SIAM, Philadelphia, Sec. 5.3.3.
"""

import math

import numpy as np
from numba import njit

# Every loop here keeps IEEE semantics (no fastmath): these functions are compiled into several
# kernels (the von Neumann sweeps, DefiniteBoost's steps, the Lanczos and contour helpers), and numba
# links a called function by its symbol, so which compiled copy of it runs depends on what the process
# compiled or loaded first.  Copies optimised in different callers reassociate a reduction differently
# (cold-compiled and cache-loaded code differed by up to 1e-13 relative in 40 of 129 result arrays,
# benchmarks/checks/same_bits_kinds_split.py); strict arithmetic gives every copy the same bits.  The
# cost, measured by benchmarks/speed/bench_von_neumann.py --quick: 5-50 % per projection at r = 16-256
# (docs/scale.md).
# The secular solver subtracts the root's offset from exactly computed pole differences, which
# reassociation would also have broken near a pole.  The loops take numpy's error model: Python's
# raises on a zero divisor, a test per division that keeps the loop slower; a root never sits on a
# pole, and a non-finite sum is caught by the caller.
EPS = 2.220446049250313e-16
# A secular root is taken without a last pass once the model's step is below STEP_ACCEPT of
# its offset from the origin pole: the middle way converges quadratically (steps measured on
# the benchmark's spectra: 7e-3, 7e-7, 7e-15; 3e-4, 6e-9; contraction constant <= 0.1), so the
# step after it would be below 1e-17 relative, under rounding.  It saves the last pass of most
# roots (Gragg steps per root 4.06 -> 3.5 at r = 16 ... 256).
STEP_ACCEPT = 1e-8


@njit(cache=True, error_model="numpy")
def _sums(delta, weight, start, stop, t):
    """sum_j weight_j q_j and sum_j weight_j q_j^2 over j in [start, stop), q_j = 1/(delta_j - t)."""
    s = 0.0
    ds = 0.0
    for j in range(start, stop):
        q = 1.0 / (delta[j] - t)                          # one division per term (as dlaed4)
        wq = weight[j] * q
        s += wq
        ds += wq * q
    return s, ds


@njit(cache=True)
def _sumsq(x):
    s = 0.0
    for j in range(x.shape[0]):
        s += x[j] * x[j]
    return s


@njit(cache=True, error_model="numpy")
def sort_perm(d, perm):
    """perm = argsort(d) by insertion sort from the identity: O(r) when d is nearly sorted,
    as it is after every projection (the new eigenvalues come out in increasing order)."""
    r = d.shape[0]
    for j in range(r):
        perm[j] = j
    for j in range(1, r):
        p = perm[j]
        x = d[p]
        m = j - 1
        while m >= 0 and d[perm[m]] > x:
            perm[m + 1] = perm[m]
            m -= 1
        perm[m + 1] = p


@njit(cache=True, error_model="numpy")
def poles(d, w, perm, pole, weight, owner):
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
    gap = 64.0 * EPS * max(scale, 1.0)
    k = 0
    j = 0
    while j < r:
        start = j
        acc = 0.0
        while j < r and d[perm[j]] - d[perm[start]] <= gap:
            acc += w[perm[j]] ** 2
            j += 1
        if acc > EPS * EPS * wsum:
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
def _guess(delta, weight, k, rho, o, lo, hi):
    """One-pole first guess for the root next to pole o: 1/rho + R - w_o/tau = 0."""
    rl, _ = _sums(delta, weight, 0, o, 0.0)
    rr, _ = _sums(delta, weight, o + 1, k, 0.0)
    rest = 1.0 / rho + rl + rr
    t = weight[o] / rest if rest != 0.0 else 0.5 * (lo + hi)
    return t if lo < t < hi else 0.5 * (lo + hi)


@njit(cache=True, error_model="numpy")
def _two_pole(c, a2, b2, dl, dr, lo, hi):
    """The root in [lo, hi] of c + a2/(dl - x) + b2/(dr - x) = 0, i.e. of the quadratic
    c (dl - x)(dr - x) + a2 (dr - x) + b2 (dl - x) = 0 (each root by the stable formula)."""
    qa = c
    qb = -(c * (dl + dr) + a2 + b2)
    qc = c * dl * dr + a2 * dr + b2 * dl
    if qa == 0.0:
        return -qc / qb
    disc = max(qb * qb - 4.0 * qa * qc, 0.0)
    sq = math.sqrt(disc)
    x1 = (-qb - sq) / (2.0 * qa) if qb > 0.0 else 2.0 * qc / (-qb + sq) if (-qb + sq) != 0.0 else np.nan
    x2 = qc / (qa * x1) if x1 != 0.0 and math.isfinite(x1) else (-qb + sq) / (2.0 * qa)
    return x1 if lo <= x1 <= hi else x2


@njit(cache=True, error_model="numpy")
def _root(delta, weight, k, rho, i, lo, hi, t):
    """Root i of 1/rho + sum_j weight_j/(delta_j - tau) = 0 in (lo, hi), from t; delta_j are
    the pole offsets from the root's origin (delta_o = 0)."""
    dl = delta[i]
    dr = delta[i + 1] if i + 1 < k else 0.0
    # Gragg's "middle way" (as LAPACK's dlaed4): model the left poles (j <= i) and the
    # right poles (j > i) each by one pole with matching value and slope at t, solve the
    # model exactly, keep the bracket; converges in a few steps.
    for _ in range(100):
        psi, dpsi = _sums(delta, weight, 0, i + 1, t)
        phi, dphi = _sums(delta, weight, i + 1, k, t)
        f = 1.0 / rho + psi + phi
        if f < 0.0:
            lo = t
        else:
            hi = t
        # f at rounding level (its terms sum to 1/rho - psi + phi in magnitude): a root
        if abs(f) <= 8.0 * EPS * (1.0 / rho - psi + phi) or hi - lo <= 4.0 * EPS * max(abs(lo), abs(hi)):
            break
        # model: c + a/(dl - x) + b/(dr - x) = 0 with a = dpsi (dl-t)^2, b = dphi (dr-t)^2
        a2 = dpsi * (dl - t) ** 2
        c = 1.0 / rho + psi - dpsi * (dl - t)
        if i + 1 < k:
            b2 = dphi * (dr - t) ** 2
            c += phi - dphi * (dr - t)
            x = _two_pole(c, a2, b2, dl, dr, lo, hi)
        else:
            c += phi
            x = dl + a2 / c if c != 0.0 else np.nan
        if abs(x - t) <= 2.0 * EPS * abs(t):          # converged (the bracket may stay one-sided)
            break
        if not lo < x < hi:                               # never onto a pole: bisect instead
            x = 0.5 * (lo + hi)
        elif abs(x - t) <= STEP_ACCEPT * abs(t):          # the next step would be below rounding
            return x
        t = x
    return t


@njit(cache=True, error_model="numpy")
def _offsets(pole, k, base, delta):
    for j in range(k):
        delta[j] = pole[j] - base                         # exact for j near the origin (Sterbenz)


@njit(cache=True, error_model="numpy")
def _secular(pole, weight, k, rho, org, tau, delta, warm):
    """Eigenvalues of diag(pole) + rho * (rank one with squared components ``weight``), rho > 0.

    Root i lies in (pole[i], pole[i+1]) (the last in (pole[k-1], pole[k-1] + rho sum weight))
    and is stored as theta_i = pole[org[i]] + tau[i], relative to the nearer pole, so that
    theta_i - pole[org[i]] keeps full relative accuracy however close the root is to it
    (as LAPACK's dlaed4).  With ``warm`` the previous (org, tau), from a nearby rho, are the
    first guesses; a root found in the other half of its interval is redone from that pole.
    """
    total = 0.0
    for j in range(k):
        total += weight[j]
    for i in range(k):
        if i == k - 1:
            o = i
            lo, hi = 0.0, rho * total
        elif warm:
            o = org[i]
            lo, hi = pole[i] - pole[o], pole[i + 1] - pole[o]
        else:
            _offsets(pole, k, pole[i], delta)
            half = 0.5 * delta[i + 1]
            fl, _ = _sums(delta, weight, 0, i + 1, half)
            fr, _ = _sums(delta, weight, i + 1, k, half)
            fmid = 1.0 / rho + fl + fr
            # first guess without another pass (as LAPACK's dlaed4): the two poles of the interval
            # exactly, the others by their value c at the midpoint; in the origin's coordinates
            c = fmid - weight[i] / (0.0 - half) - weight[i + 1] / (delta[i + 1] - half)
            if fmid >= 0.0:                               # root in the left half: origin pole[i]
                o = i
                lo, hi = 0.0, half
                dl, dr = 0.0, delta[i + 1]
            else:
                o = i + 1
                lo, hi = half - delta[i + 1], 0.0
                dl, dr = -delta[i + 1], 0.0
            t = _two_pole(c, weight[i], weight[i + 1], dl, dr, lo, hi)
            if not lo < t < hi:
                t = 0.5 * (lo + hi)
        if warm or i == k - 1 or o != i:
            _offsets(pole, k, pole[o], delta)
        if warm and org[i] == o and lo < tau[i] < hi:
            t = tau[i]
        elif warm or i == k - 1:
            t = _guess(delta, weight, k, rho, o, lo, hi)
        t = _root(delta, weight, k, rho, i, lo, hi, t)
        if warm and i < k - 1:
            half = 0.5 * (pole[i + 1] - pole[i])
            if (o == i and t > half) or (o == i + 1 and t < -half):
                other = i + 1 if o == i else i
                t += pole[o] - pole[other]                # the same point, from the nearer pole
                o = other
                lo, hi = (0.0, half) if o == i else (-half, 0.0)
                _offsets(pole, k, pole[o], delta)
                t = _root(delta, weight, k, rho, i, lo, hi, t if lo < t < hi else 0.5 * (lo + hi))
        if t == 0.0:                                      # underflow: keep the root off the pole
            t = 1e-300 if o == i else -1e-300
        org[i] = o
        tau[i] = t


@njit(cache=True, error_model="numpy")
def eigvals(pole, weight, k, alpha, org, tau, wk, iw, warm):
    """Secular roots of diag(pole) + alpha * rank one, for either sign of alpha:
    theta_i = pole[org[i]] + tau[i], in increasing order.

    ``wk`` rows 0-3 and ``iw`` row 0 are workspace; rows wk[3] / iw[0] keep the solver's own
    (for alpha < 0: reversed) roots, the warm start of the next call with the same sign.
    """
    sorg, stau, delta = iw[0], wk[3], wk[2]
    if alpha > 0.0:
        _secular(pole, weight, k, alpha, sorg, stau, delta, warm)
        for i in range(k):
            org[i] = sorg[i]
            tau[i] = stau[i]
        return
    # D + alpha ww^T = -((-D) + |alpha| ww^T): poles reversed and negated
    rp, rw = wk[0], wk[1]
    for j in range(k):
        rp[j] = -pole[k - 1 - j]
        rw[j] = weight[k - 1 - j]
    _secular(rp, rw, k, -alpha, sorg, stau, delta, warm)
    for i in range(k):
        org[i] = k - 1 - sorg[k - 1 - i]
        tau[i] = -stau[k - 1 - i]


@njit(cache=True, error_model="numpy")
def exp_form(pole, weight, k, alpha, org, tau, wk, iw, warm):
    """w^T exp(D + alpha w w^T) w from the secular roots alone (one trace evaluation)."""
    if alpha == 0.0:
        s = 0.0
        for j in range(k):
            s += math.exp(pole[j]) * weight[j]
        return s
    eigvals(pole, weight, k, alpha, org, tau, wk, iw, warm)
    delta = wk[2]
    s = 0.0
    for i in range(k):
        base = pole[org[i]]
        for j in range(k):
            delta[j] = pole[j] - base
        _, s2 = _sums(delta, weight, 0, k, tau[i])
        s += math.exp(base + tau[i]) / (alpha * alpha * s2)
    return s


@njit(cache=True, error_model="numpy")
def eigvecs(d, w, perm, owner, pole, k, org, tau, Ut, wk, iw):
    """Orthonormal eigenvectors of D + alpha ww^T as the rows of Ut (D + alpha ww^T = U Theta U^T,
    components in original index order; rows, so that each is written contiguously).

    Secular roots: u_i ~ (D - theta_i)^-1 w.  Each merged group of size m contributes
    m - 1 vectors orthogonal to its part of w (a Householder basis); zero-weight
    entries keep their unit vectors.  Returns the eigenvalue of every row in ``d``
    (the roots first, in increasing order).  Workspace: wk rows 4-7, iw row 1.
    """
    r = d.shape[0]
    newd, h, dg, wl, group = wk[4], wk[5], wk[6], wk[7], iw[1]
    for t in range(r):
        group[perm[t]] = owner[t]                   # pole of each original index (-1: no weight)
    for j in range(r):
        live = group[j] >= 0
        dg[j] = pole[group[j]] if live else np.inf       # no weight: component 0
        wl[j] = w[j] if live else 0.0
    col = 0
    for i in range(k):
        base = pole[org[i]]
        ti = tau[i]
        for j in range(r):
            # d_j - theta_i = (pole_g - pole_org) - tau_i, exact for j in the origin group
            h[j] = wl[j] / ((dg[j] - base) - ti)
        nn = 1.0 / math.sqrt(_sumsq(h))
        for j in range(r):
            Ut[col, j] = h[j] * nn
        newd[col] = base + ti
        col += 1
    for i in range(k, r):
        for j in range(r):
            Ut[i, j] = 0.0
    # groups: complement of w within the group; weight-0 entries: unit vectors
    t = 0
    while t < r:
        g = owner[t]
        start = t
        while t < r and owner[t] == g and (g >= 0 or t == start):
            t += 1
        if g < 0:
            j = perm[start]
            Ut[col, j] = 1.0
            newd[col] = d[j]
            col += 1
            continue
        m = t - start
        if m == 1:
            continue
        # Householder H = I - 2 h h^T / h^T h maps w_G to -sign(w_0)|w_G| e_0; rows 1..m-1 of H
        nw = 0.0
        for s in range(start, t):
            nw += w[perm[s]] ** 2
        nw = math.sqrt(nw)
        for s in range(m):
            h[s] = w[perm[start + s]]
        h[0] += math.copysign(nw, h[0])
        hh = 0.0
        for s in range(m):
            hh += h[s] * h[s]
        for c in range(1, m):
            for s in range(m):
                Ut[col, perm[start + s]] = (1.0 if s == c else 0.0) - 2.0 * h[s] * h[c] / hh
            newd[col] = pole[g]
            col += 1
    for i in range(r):
        d[i] = newd[i]


# Workspace rows (r-vectors) of the functions above: wk 0-3 secular scratch (the last keeps the roots
# for a warm start), 4-7 eigenvector scratch; iw 0 the roots' origins, 1 eigenvector scratch.
N_WK = 8
N_IW = 2


@njit(cache=True, error_model="numpy")
def rank_one_update(D, alpha, w, X):
    """diag(D) + alpha w w^T = U diag(Theta) U^T: D <- Theta, X <- X U (in place); O(r^2) for
    the eigen-decomposition (secular equation, as in the sweep) plus the product X U.

    The package's one rank-one eigen-update, used by DefiniteBoost (Tsuda et al. 2005, Sec. 4)
    for its steps; the von Neumann sweep runs the same pieces inline, with its own workspace.
    Returns 0, or 1 when alpha ||w||^2 or w is not finite (nothing is changed).
    """
    r = D.shape[0]
    nw2 = 0.0
    for j in range(r):
        nw2 += w[j] * w[j]
    if not math.isfinite(alpha * nw2):
        return 1
    if alpha * nw2 == 0.0:
        return 0
    perm = np.empty(r, dtype=np.int64)
    owner = np.empty(r, dtype=np.int64)
    org = np.empty(r, dtype=np.int64)
    pole = np.empty(r)
    weight = np.empty(r)
    tau = np.empty(r)
    wk = np.empty((N_WK, r))
    iw = np.zeros((N_IW, r), dtype=np.int64)
    U = np.empty((r, r))
    sort_perm(D, perm)
    k = poles(D, w, perm, pole, weight, owner)
    if k == 0:
        return 0
    eigvals(pole, weight, k, alpha, org, tau, wk, iw, False)
    eigvecs(D, w, perm, owner, pole, k, org, tau, U, wk, iw)
    XU = np.dot(X, U.T)
    for a in range(X.shape[0]):
        for c in range(r):
            X[a, c] = XU[a, c]
    return 0
