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

``rank_one_update`` (the secular roots, their eigenvectors, then X <- X U) is the package's one
rank-one eigen-update, used by DefiniteBoost; ``eigen_sweep`` runs the same pieces inline.
"""

import math

import numpy as np
from numba import njit

from ..kinds import DISTANCE
from ._cyclic import BROKEN, OK, STUCK, TINY, dual_step, rel_violation, sign

# The secular solver subtracts the root's offset from exactly computed pole differences;
# reassociation there would destroy the relative accuracy of roots near a pole, so only the
# reductions below (over precomputed differences) may be vectorised.  They also take numpy's
# error model: Python's raises on a zero divisor, a test per division that keeps the loop scalar
# (4x slower at r = 64); a root never sits on a pole, and a non-finite sum is caught by the caller.
_EPS = 2.220446049250313e-16
_FASTMATH = {"reassoc", "contract", "nsz", "arcp"}
MAX_EVALS = 60
TOL_G = 1e-10          # root-finder stop: relative error of the constraint value
# A secular root is taken without a last pass once the model's step is below STEP_ACCEPT of
# its offset from the origin pole: the middle way converges quadratically (steps measured on
# the benchmark's spectra: 7e-3, 7e-7, 7e-15; 3e-4, 6e-9; contraction constant <= 0.1), so the
# step after it would be below 1e-17 relative, under rounding.  It saves the last pass of most
# roots (Gragg steps per root 4.06 -> 3.5 at r = 16 ... 256).
STEP_ACCEPT = 1e-8


def _talbot_nodes(n):
    """Nodes z_m and weights c_m (upper half, m = n/2 .. n-1) of the n-point Talbot rule,
    e^x ~= 2 Re sum_m c_m / (z_m - x) for real x <= 0 (Trefethen, Weideman & Schmelzer 2006,
    BIT 46, eq. (1.7) and the contour z(t) = n (0.5017 t cot 0.6407 t - 0.6122 + 0.2645 i t))."""
    t = -math.pi + (np.arange(n) + 0.5) * 2.0 * math.pi / n
    z = n * (0.5017 * t / np.tan(0.6407 * t) - 0.6122 + 0.2645j * t)
    dz = n * (0.5017 / np.tan(0.6407 * t) - 0.5017 * 0.6407 * t / np.sin(0.6407 * t) ** 2 + 0.2645j)
    c = np.exp(z) * dz / (1j * n)
    return np.ascontiguousarray(z[n // 2:]), np.ascontiguousarray(c[n // 2:])


N_QUAD = 24
QUAD_Z, QUAD_C = _talbot_nodes(N_QUAD)
# sup over x <= 0 of |2 Re sum c_m/(z_m - x) - e^x| is 2.4e-14 (tests/test_von_neumann.py measures
# it); QUAD_ERR doubles it for the rounding of g.  A trial value phi is used when
# QUAD_ERR e^sigma ||w||^2 <= QUAD_RTOL phi, i.e. when it is certified to 1e-12 relative.
QUAD_ERR = 5e-14
QUAD_RTOL = 1e-12


@njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
def _quad_node(shifted, weight, k, zr, zi2):
    """(sum_j weight_j a_j / (a_j^2 + zi2), sum_j weight_j / (a_j^2 + zi2)), a_j = zr - shifted_j:
    the reductions of one node, vectorised (the shift is subtracted before, exactly as written)."""
    sr = 0.0
    s = 0.0
    for j in range(k):
        a = zr - shifted[j]
        q = weight[j] / (a * a + zi2)
        sr += q * a
        s += q
    return sr, s


@njit(cache=True, error_model="numpy")
def _quad_setup(pole, weight, k, sigma, gre, gim, shifted):
    """g(sigma + z_m) = sum_j weight_j / (z_m - (pole_j - sigma)) at the Talbot nodes, O(N k);
    ``shifted`` is workspace for pole_j - sigma."""
    for j in range(k):
        shifted[j] = pole[j] - sigma
    for m in range(QUAD_Z.shape[0]):
        zi = QUAD_Z[m].imag
        sr, s = _quad_node(shifted, weight, k, QUAD_Z[m].real, zi * zi)
        gre[m] = sr
        gim[m] = -zi * s


@njit(cache=True, error_model="numpy")
def _quad_value(gre, gim, alpha):
    """e^-sigma w^T exp(D + alpha w w^T) w = 2 Re sum_m c_m g_m / (1 - alpha g_m), O(N)."""
    s = 0.0
    for m in range(QUAD_Z.shape[0]):
        dr = 1.0 - alpha * gre[m]
        di = -alpha * gim[m]
        inv = 1.0 / (dr * dr + di * di)
        fr = (gre[m] * dr + gim[m] * di) * inv         # g / (1 - alpha g)
        fi = (gim[m] * dr - gre[m] * di) * inv
        s += QUAD_C[m].real * fr - QUAD_C[m].imag * fi
    return 2.0 * s


@njit(cache=True, error_model="numpy")
def _quad_slope(gre, gim):
    """phi'(0) / phi(0) by the same nodes: phi'(0) = (1/2 pi i) oint e^z g(z)^2 dz, the derivative
    of g / (1 - alpha g) at alpha = 0 (a first guess's slope; its accuracy does not matter)."""
    s = 0.0
    ds = 0.0
    for m in range(QUAD_Z.shape[0]):
        g2r = gre[m] * gre[m] - gim[m] * gim[m]
        g2i = 2.0 * gre[m] * gim[m]
        s += QUAD_C[m].real * gre[m] - QUAD_C[m].imag * gim[m]
        ds += QUAD_C[m].real * g2r - QUAD_C[m].imag * g2i
    return ds / s


@njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
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


@njit(cache=True, fastmath=_FASTMATH)
def _sumsq(x):
    s = 0.0
    for j in range(x.shape[0]):
        s += x[j] * x[j]
    return s


@njit(cache=True, error_model="numpy")
def _sort_perm(d, perm):
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
        if abs(f) <= 8.0 * _EPS * (1.0 / rho - psi + phi) or hi - lo <= 4.0 * _EPS * max(abs(lo), abs(hi)):
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
        if abs(x - t) <= 2.0 * _EPS * abs(t):          # converged (the bracket may stay one-sided)
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
def _eigvals(pole, weight, k, alpha, org, tau, wk, iw, warm):
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
def _value(pole, weight, k, alpha, org, tau, wk, iw, warm):
    """w^T exp(D + alpha w w^T) w from the secular roots alone (one trace evaluation)."""
    if alpha == 0.0:
        s = 0.0
        for j in range(k):
            s += math.exp(pole[j]) * weight[j]
        return s
    _eigvals(pole, weight, k, alpha, org, tau, wk, iw, warm)
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
def _quad_log(quad, alpha):
    """log phi(alpha) by the Talbot rule, or nan where it is not certified.

    ``quad`` = (sigma, amax, sum of the weights, g at the nodes (real, imaginary parts)).  The
    value is used when alpha <= amax (then every eigenvalue is <= sigma: theta_max <= d_max +
    max(alpha, 0) ||w||^2) and its certified error QUAD_ERR e^sigma ||w||^2 is at most
    QUAD_RTOL of it."""
    sigma, amax, wsum, gre, gim = quad
    if alpha <= amax:
        s = _quad_value(gre, gim, alpha)
        if s > 0.0 and QUAD_ERR * wsum <= QUAD_RTOL * s:
            return math.log(s) + sigma
    return np.nan


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


@njit(cache=True, error_model="numpy")
def _eigvecs(d, w, perm, owner, pole, k, org, tau, Ut, wk, iw):
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


@njit(cache=True)
def _gemm_into(A, B, out):
    """out = A B for square matrices (BLAS, no allocation; B may be a transposed view)."""
    np.dot(A, B, out)


@njit(cache=True, fastmath=_FASTMATH)
def _matvec(A, x, out):
    """out = A x."""
    r = A.shape[0]
    for i in range(r):
        s = 0.0
        for j in range(r):
            s += A[i, j] * x[j]
        out[i] = s


@njit(cache=True, fastmath=_FASTMATH)
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


# Workspace rows (r-vectors).  wk: 0-3 secular scratch, 4-7 eigvecs scratch, then the rank-two
# vectors; iw: 0-1 secular/eigvecs scratch, then permutations, owners and root origins.
_WK_S, _WK_T, _WK_A, _WK_C, _WK_T1, _WK_A1, _WK_C1, _WK_D1, _WK_D2, _WK_P2, _WK_W2, _WK_TAU2 = range(8, 20)
_N_WK = 20
_IW_PERM2, _IW_OWN2, _IW_ORG2 = range(2, 5)
_N_IW = 5


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
        _eigvals(pole, weight, k, 0.25 * alpha, org, tau, wk, iw, False)
        _eigvecs(d1, s, perm, owner, pole, k, org, tau, U1, wk, iw)
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
    _sort_perm(d1, perm2)
    for j in range(r):
        d2[j] = d1[j]
    k2 = _poles(d1, t1, perm2, pole2, weight2, owner2)
    if alpha != 0.0 and k2 > 0:
        _eigvals(pole2, weight2, k2, -0.25 * alpha, org2, tau2, wk, iw, False)
        _eigvecs(d2, t1, perm2, owner2, pole2, k2, org2, tau2, U2, wk, iw)
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
    wk = np.empty((_N_WK, r))
    iw = np.zeros((_N_IW, r), dtype=np.int64)
    U = np.empty((r, r))
    _sort_perm(D, perm)
    k = _poles(D, w, perm, pole, weight, owner)
    if k == 0:
        return 0
    _eigvals(pole, weight, k, alpha, org, tau, wk, iw, False)
    _eigvecs(D, w, perm, owner, pole, k, org, tau, U, wk, iw)
    XU = np.dot(X, U.T)
    for a in range(X.shape[0]):
        for c in range(r):
            X[a, c] = XU[a, c]
    return 0


# --- the Krylov (Lanczos / Gauss quadrature) representation of phi(alpha) = v^T exp(L + alpha v v^T) v ---
# Lanczos on L from v gives the Jacobi matrix T_m (diagonal a_0..a_{m-1}, off-diagonal b_1..b_{m-1})
# and mu0 = ||v||^2; L + alpha v v^T has the same Krylov space and the same T_m but for
# a_0 + alpha mu0, so one Lanczos run serves every trial alpha:
#     phi(alpha) ~= mu0 e_1^T exp(T_m + alpha mu0 e_1 e_1^T) e_1,
# the m-node Gauss rule of the spectral measure of L seen by v (Golub & Meurant 2010, Ch. 6-7).
# Its error is mu0 e^xi prod_k b_k^2 / (2m)! for some xi in the spectrum (ibid., Thm 6.2), and
# phi(alpha) >= mu0 exp(a_0 + alpha mu0) (Jensen), so the relative error is at most
#     exp(log prod_k b_k^2/(2m)! + xi_max - a_0 - min(alpha, 0) mu0),
# with xi_max estimated by the largest eigenvalue of T_m (+ max(alpha, 0) mu0, which cancels).
# The run stops once that is below LZ_RTOL, or when the Krylov space is exhausted (m = r or
# b_m at rounding level: the rule is then exact).
LZ_RTOL = 1e-13
_LOG_LZ_RTOL = math.log(LZ_RTOL)
TOP_SLACK = 2.0        # Gershgorin's bound is refined when it may exceed the top by more (nats)


@njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
def _lanczos_step(L, Q, a, b, u, k):
    """Step k of the Lanczos process on L (symmetric, r x r) from Q[0]: a_k = q_k^T L q_k and
    b_{k+1} q_{k+1} = L q_k - a_k q_k - b_k q_{k-1}, the residual orthogonalised against every
    q_0..q_k (full reorthogonalisation, modified Gram-Schmidt); Q[k+1] is set when b_{k+1} > 0.
    O(r^2 + k r)."""
    r = L.shape[0]
    for i in range(r):
        u[i] = 0.0
    for j in range(r):                                    # u = L q_k = sum_j q_kj L[j, :] (L symmetric)
        qj = Q[k, j]
        for i in range(r):
            u[i] += qj * L[j, i]
    ak = 0.0
    for j in range(r):
        ak += Q[k, j] * u[j]
    a[k] = ak
    for i in range(k + 1):
        c = 0.0
        for j in range(r):
            c += Q[i, j] * u[j]
        for j in range(r):
            u[j] -= c * Q[i, j]
    bk = 0.0
    for j in range(r):
        bk += u[j] * u[j]
    bk = math.sqrt(bk)
    b[k + 1] = bk
    if bk > 0.0 and k + 1 < Q.shape[0]:
        inv = 1.0 / bk
        for j in range(r):
            Q[k + 1, j] = u[j] * inv


@njit(cache=True, error_model="numpy")
def _top(a, b, m):
    """An upper bound on the largest eigenvalue of T_m: Newton's method on det(x - T_m) from
    Gershgorin's bound, which converges from above (every root is real); each iterate is kept
    only if the LDL^T pivots of x - T_m are all positive (no eigenvalue above x).  O(m) a step."""
    x = -np.inf
    for i in range(m):
        x = max(x, a[i] + (b[i] if i > 0 else 0.0) + (b[i + 1] if i + 1 < m else 0.0))
    good = x
    for _ in range(50):
        d = x - a[0]                                      # pivot d_i, its derivative dd_i; s = sum dd_i / d_i
        if not d > 0.0:
            break
        inv = 1.0 / d
        dd = 1.0
        s = inv
        ok = True
        for i in range(1, m):
            bb = b[i] * b[i] * inv
            dd = 1.0 + bb * dd * inv
            d = x - a[i] - bb
            if not d > 0.0:
                ok = False
                break
            inv = 1.0 / d
            s += dd * inv
        if not ok:
            break
        good = x
        step = 1.0 / s                                    # det / det' at x
        if step <= 1e-2:                                  # x - top <~ step: 1 % of e^x
            break
        x -= step
    return good


@njit(cache=True, error_model="numpy")
def _krylov(L, Q, a, b, u, m, logp, need):
    """Extend a Lanczos run of m steps (logp = log prod_k b_k^2/(2k)! so far; b[0] = 0) until the
    Gauss rule's estimated relative error is below LZ_RTOL for every alpha with
    -min(alpha, 0) mu0 <= ``need``, or the Krylov space is exhausted.  Returns (m, logp, an upper
    bound on the top eigenvalue of T_m, exhausted).  The bound is Gershgorin's, refined by
    :func:`_top` only where it may be more than TOP_SLACK above the largest a_i (a lower bound)."""
    r = L.shape[0]
    inner = -np.inf                                       # Gershgorin over rows 0..m-2 of T_m
    diag = -np.inf                                        # max a_i <= top <= Gershgorin
    scale = 0.0
    for i in range(m - 1):
        inner = max(inner, a[i] + b[i] + b[i + 1])
        diag = max(diag, a[i])
        scale = max(scale, abs(a[i]) + b[i] + b[i + 1])
    while True:
        if m > 0:
            gersh = max(inner, a[m - 1] + b[m - 1])
            low = max(diag, a[m - 1])
            full = m == r or b[m] <= 1e-14 * max(scale, abs(a[m - 1]) + b[m - 1] + b[m])
            if full or logp + gersh - a[0] + need <= _LOG_LZ_RTOL:
                top = _top(a, b, m) if gersh - low > TOP_SLACK else gersh
                return m, logp, top, full
            if gersh - low > TOP_SLACK and logp + low - a[0] + need <= _LOG_LZ_RTOL:
                top = _top(a, b, m)                     # the tighter bound may pass the test
                if logp + top - a[0] + need <= _LOG_LZ_RTOL:
                    return m, logp, top, False
        _lanczos_step(L, Q, a, b, u, m)
        m += 1
        if m >= 2:
            inner = max(inner, a[m - 2] + b[m - 2] + b[m - 1])
            diag = max(diag, a[m - 2])
            scale = max(scale, abs(a[m - 2]) + b[m - 2] + b[m - 1])
        if b[m] > 0.0:
            logp += math.log(b[m] * b[m] / (2.0 * m * (2.0 * m - 1.0)))


@njit(cache=True, fastmath=_FASTMATH, error_model="numpy")
def _cf_setup(a, b, m, mu0, sigma, gre, gim, fr, fi):
    """g(sigma + z_n) = mu0 [(sigma + z_n - T_m)^-1]_11 at the Talbot nodes by the Jacobi continued
    fraction mu0 / (z - a_0 - b_1^2 / (z - a_1 - b_2^2 / ...)), evaluated from the bottom with the
    shift subtracted from each a_i first; O(N m).  (= sum_j weight_j / (z - pole_j) over the Gauss rule.)"""
    nz = QUAD_Z.shape[0]
    last = a[m - 1] - sigma
    for n in range(nz):
        fr[n] = QUAD_Z[n].real - last
        fi[n] = QUAD_Z[n].imag
    for i in range(m - 2, -1, -1):
        bb = b[i + 1] * b[i + 1]
        ai = a[i] - sigma
        for n in range(nz):
            q = bb / (fr[n] * fr[n] + fi[n] * fi[n])
            fr[n] = QUAD_Z[n].real - ai - q * fr[n]
            fi[n] = QUAD_Z[n].imag + q * fi[n]
    for n in range(nz):
        q = mu0 / (fr[n] * fr[n] + fi[n] * fi[n])
        gre[n] = q * fr[n]
        gim[n] = -q * fi[n]


@njit(cache=True, error_model="numpy")
def _gauss_rule(a, b, m, d, z, e):
    """Nodes d (eigenvalues of T_m) and z (first components of its eigenvectors; the weights are
    mu0 z^2) of the Gauss rule, by the implicit QL method on the first row only (Golub & Welsch
    1969; imtqlx of Elhay & Kautsky's IQPACK), O(m^2).  Returns 1 if QL did not converge."""
    for i in range(m):
        d[i] = a[i]
        z[i] = 0.0
        e[i] = b[i + 1] if i + 1 < m else 0.0
    z[0] = 1.0
    for l in range(m):
        it = 0
        while True:
            mm = l
            while mm < m - 1 and abs(e[mm]) > _EPS * (abs(d[mm]) + abs(d[mm + 1])):
                mm += 1
            if mm == l:
                break
            if it == 60:
                return 1
            it += 1
            p = d[l]
            g = (d[l + 1] - p) / (2.0 * e[l])
            h = math.sqrt(g * g + 1.0)
            g = d[mm] - p + e[l] / (g + (h if g >= 0.0 else -h))
            s = 1.0
            c = 1.0
            p = 0.0
            for i in range(mm - 1, l - 1, -1):
                f = s * e[i]
                bb = c * e[i]
                if abs(g) <= abs(f):
                    c = g / f
                    h = math.sqrt(c * c + 1.0)
                    e[i + 1] = f * h
                    s = 1.0 / h
                    c *= s
                else:
                    s = f / g
                    h = math.sqrt(s * s + 1.0)
                    e[i + 1] = g * h
                    c = 1.0 / h
                    s *= c
                g = d[i + 1] - p
                h = (d[i] - g) * s + 2.0 * c * bb
                p = s * h
                d[i + 1] = g + p
                g = c * h - bb
                f = z[i + 1]
                z[i + 1] = s * z[i] + c * f
                z[i] = c * z[i] - s * f
            d[l] -= p
            e[l] = g
            e[mm] = 0.0
    return 0


@njit(cache=True, error_model="numpy")
def _rule_poles(a, b, m, mu0, pole, weight, perm, owner, wk):
    """The Gauss rule of T_m as sorted, merged poles with weights mu0 z_j^2 (for the exact
    secular-root values); returns their number k, or -1 if QL did not converge.  wk rows 4-7."""
    d, z, e, w = wk[4, :m], wk[5, :m], wk[6, :m], wk[7, :m]
    if _gauss_rule(a, b, m, d, z, e) != 0:
        return -1
    root = math.sqrt(mu0)
    for j in range(m):
        w[j] = root * z[j]
    _sort_perm(d, perm[:m])
    return _poles(d, w, perm[:m], pole, weight, owner[:m])


@njit(cache=True, error_model="numpy")
def _trial(alpha, quad, a, b, m, k, pole, weight, perm, owner, org, tau, wk, iw, warm):
    """(log phi(alpha), exact?, k) for a trial alpha.

    ``quad`` = (sigma, amax, mu0, g at the nodes) from :func:`_cf_setup`: the Talbot value where
    :func:`_quad_log` certifies it, otherwise the exact value of the rule from its secular roots
    (left in org, tau), the rule being computed on first need (k < 0 on entry: not yet; the k
    returned is kept by the caller)."""
    y = _quad_log(quad, alpha)
    if not math.isnan(y):
        return y, False, k
    if k < 0:
        k = _rule_poles(a, b, m, quad[2], pole, weight, perm, owner, wk)
        if k <= 0:
            return np.nan, True, k
        warm = False
    val = _value(pole, weight, k, alpha, org, tau, wk, iw, warm)
    return (math.log(val) if val > 0.0 else np.nan), True, k


# --- the search for alpha and the two sweeps ---
_NO_RULE = np.zeros(1)                                  # (the eigen sweep's poles are given: no Gauss rule)


@njit(cache=True, error_model="numpy", inline="always")   # (as a call, 2.06 -> 2.2 µs a projection at r = 16)
def _search(g0, target, c_clamp, delta, a1, inv_slack, quad, a, b, m, k, pole, weight, perm, owner, org, tau,
            wk, iw, st):
    """alpha of a rank-one projection: y(alpha) = log phi(alpha) + alpha/gamma - log b = 0, the dual
    correction's clamp c_clamp (signed lambda_i) tested first, then the bracketed secant iteration
    from a1 (y(0) = g0).  A trial value is the Talbot value where :func:`_quad_log` certifies it,
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
        gc = _quad_log(quad, c_clamp)
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
        y = _quad_log(quad, x)
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
def eigen_sweep(V0, ci, cj, kind, bhat, lam, W, D, slack):
    """One cyclic sweep of von Neumann projections by eigen-updates (Alg. 2 as the paper does them),
    in place on W, D, lam, bhat (the iterate is X = V0 W exp(D) W^T V0^T).

    Distance constraints (z = e_i - e_j) and diagonal similarity constraints (z = e_i) are
    rank-one (trial values by the Talbot quadrature, exact fallback); off-diagonal similarity
    constraints K_ij are rank-two (trial values exact).  Returns (status, index, max relative
    violation met before a projection, its constraint, trace evaluations done exactly from
    secular roots, trace evaluations, root-finder calls, most trace evaluations one call needed).
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
        _sort_perm(D, perm)
        ev = 0
        if rank_two:
            s, t = wk[_WK_S], wk[_WK_T]
            for l in range(r):
                s[l] = a[l] + c[l]
                t[l] = a[l] - c[l]
            k = _poles(D, s, perm, pole, weight, owner)
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
        k = _poles(D, w, perm, pole, weight, owner)
        if b <= 0.0:
            if delta >= 0.0:
                return STUCK, q, maxviol, argmax, xev, evals, solves, maxev
            if c_clamp == 0.0:                              # z^T X z >= b <= 0 holds, lambda_i = 0
                continue
            alpha = c_clamp                                 # alpha = -inf, clamped to -lambda_i
            _eigvals(pole, weight, k, alpha, org, tau, wk, iw, False)
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
            _quad_setup(pole, weight, k, sigma, gre, gim, wk[4])       # wk[4]: free until the eigenvectors
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
                _eigvals(pole, weight, k, alpha, org, tau, wk, iw, False)
        applied = dual_step(alpha, lam, q, delta)           # = alpha: it lies within the clamp
        if not hard:
            bhat[q] = b * math.exp(-applied * inv_slack)    # slack: log bhat <- log bhat - alpha/gamma
        # D + beta ww^T = U Theta U^T from the secular roots at alpha (U holds U^T)
        _eigvecs(D, w, perm, owner, pole, k, org, tau, U, wk, iw)   # D <- Theta
        _apply(W, U, Wn)                                    # W <- W U
    return OK, -1, maxviol, argmax, xev, evals, solves, maxev


_KRYLOV_SIG = ("Tuple((int64, int64, float64, int64, int64, int64, int64, int64, int64))(float64[:, ::1], int64[::1], "
               "int64[::1], int8[::1], float64[::1], float64[::1], float64[:, ::1], float64)")


@njit(_KRYLOV_SIG, cache=True, error_model="numpy")
def krylov_sweep(V0, ci, cj, kind, bhat, lam, L, slack):
    """One cyclic sweep of von Neumann projections (Alg. 2) by Lanczos runs, in place on the
    exponent L, lam, bhat (the iterate is X = V0 exp(L) V0^T).

    Rank-one constraints only: distances (z = e_i - e_j) and diagonal similarities (z = e_i);
    sets with off-diagonal similarities go to :func:`eigen_sweep`.  phi(alpha) = v^T exp(L +
    alpha v v^T) v (v = V0^T z) from a Lanczos run on L (trial values by the Talbot quadrature
    of its Gauss rule, exact fallback from the rule's secular roots), then L <- L + beta v v^T:
    O(m r^2) for m Lanczos steps.  Returns (status, index, max relative violation met before a
    projection, its constraint, trace evaluations done exactly from secular roots, trace
    evaluations, root-finder calls, most trace evaluations one call needed, Lanczos steps).
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
            m, logp, top, full = _krylov(L, Q, ja, jb, u, 0, 0.0, 0.0)
            m_p, sigma_p = m, top
            _cf_setup(ja, jb, m, mu0, top, gre, gim, fr, fi)
            lp, exact, kk = _trial(0.0, (top, 0.0, mu0, gre, gim), ja, jb, m, kk, pole, weight, perm, owner,
                                   org, tau, wk, iw, False)
            p = math.exp(lp)                                # p = z^T X z
            steps += m
            slope = mu0 if exact else _quad_slope(gre, gim)  # d log phi / d alpha at 0
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
                    m, logp, top, full = _krylov(L, Q, ja, jb, u, m, logp, need)
                    steps += m - m0
                    if m > m0:
                        kk = -1                             # a longer rule: its poles are redone
                sigma = top + amax * mu0
                if sigma != sigma_p or m != m_p:            # (else the nodes of p serve)
                    _cf_setup(ja, jb, m, mu0, sigma, gre, gim, fr, fi)
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
                if full or logp + top - ja[0] - min(alpha, 0.0) * mu0 <= _LOG_LZ_RTOL:
                    break
                need = -min(alpha, 0.0) * mu0 + 1.0         # the step went further than planned
            evals += ev
        applied = dual_step(alpha, lam, q, delta)           # = alpha: it lies within the clamp
        if not hard:
            bhat[q] = b * math.exp(-applied * inv_slack)    # slack: log bhat <- log bhat - alpha/gamma
        _sym_rank_one(L, applied, v)                        # L <- L + beta v v^T
    return OK, -1, maxviol, argmax, xev, evals, solves, maxev, steps
