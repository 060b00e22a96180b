"""Lanczos runs and the Gauss rule of phi(alpha) = v^T exp(L + alpha v v^T) v (compiled).

Lanczos on L from v gives the Jacobi matrix T_m (diagonal a_0..a_{m-1}, off-diagonal b_1..b_{m-1})
and mu0 = ||v||^2; L + alpha v v^T has the same Krylov space and the same T_m but for
a_0 + alpha mu0, so one Lanczos run serves every trial alpha:
    phi(alpha) ~= mu0 e_1^T exp(T_m + alpha mu0 e_1 e_1^T) e_1,
the m-node Gauss rule of the spectral measure of L seen by v.  Its error is
mu0 e^xi prod_k b_k^2 / (2m)! for some xi in the spectrum (Golub & Meurant 2010, Thm 6.2), and
phi(alpha) >= mu0 exp(a_0 + alpha mu0) (Jensen), so the relative error is at most
    exp(log prod_k b_k^2/(2m)! + xi_max - a_0 - min(alpha, 0) mu0),
with xi_max estimated by the largest eigenvalue of T_m (+ max(alpha, 0) mu0, which cancels).
A run (:func:`krylov`) stops once that is below LZ_RTOL, or when the Krylov space is exhausted
(m = r or b_m at rounding level: the rule is then exact).  Trial values come from the Talbot
nodes by a continued fraction (:func:`cf_setup`), exact ones from the rule's nodes and weights
(:func:`rule_poles`, Golub & Welsch 1969) and their secular roots.

References
----------
Golub, G. H. & Meurant, G. (2010). Matrices, Moments and Quadrature with Applications. Princeton
University Press, Ch. 6-7.
Golub, G. H. & Welsch, J. H. (1969). Calculation of Gauss quadrature rules. Mathematics of
Computation 23(106), 221-230.
"""

import math

import numpy as np
from numba import njit

from ._contour import QUAD_Z
from ._secular import EPS, poles, sort_perm

LZ_RTOL = 1e-13
LOG_LZ_RTOL = math.log(LZ_RTOL)
TOP_SLACK = 2.0        # Gershgorin's bound is refined when it may exceed the top by more (nats)


@njit(cache=True, error_model="numpy")
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
def krylov(L, Q, a, b, u, m, logp, need):
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
            if full or logp + gersh - a[0] + need <= LOG_LZ_RTOL:
                top = _top(a, b, m) if gersh - low > TOP_SLACK else gersh
                return m, logp, top, full
            if gersh - low > TOP_SLACK and logp + low - a[0] + need <= LOG_LZ_RTOL:
                top = _top(a, b, m)                     # the tighter bound may pass the test
                if logp + top - a[0] + need <= LOG_LZ_RTOL:
                    return m, logp, top, False
        _lanczos_step(L, Q, a, b, u, m)
        m += 1
        if m >= 2:
            inner = max(inner, a[m - 2] + b[m - 2] + b[m - 1])
            diag = max(diag, a[m - 2])
            scale = max(scale, abs(a[m - 2]) + b[m - 2] + b[m - 1])
        if b[m] > 0.0:
            logp += math.log(b[m] * b[m] / (2.0 * m * (2.0 * m - 1.0)))


@njit(cache=True, error_model="numpy")
def cf_setup(a, b, m, mu0, sigma, gre, gim, fr, fi):
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
            while mm < m - 1 and abs(e[mm]) > EPS * (abs(d[mm]) + abs(d[mm + 1])):
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
def rule_poles(a, b, m, mu0, pole, weight, perm, owner, wk):
    """The Gauss rule of T_m as sorted, merged poles with weights mu0 z_j^2 (for the exact
    secular-root values); returns their number k, or -1 if QL did not converge.  wk rows 4-7."""
    d, z, e, w = wk[4, :m], wk[5, :m], wk[6, :m], wk[7, :m]
    if _gauss_rule(a, b, m, d, z, e) != 0:
        return -1
    root = math.sqrt(mu0)
    for j in range(m):
        w[j] = root * z[j]
    sort_perm(d, perm[:m])
    return poles(d, w, perm[:m], pole, weight, owner[:m])
