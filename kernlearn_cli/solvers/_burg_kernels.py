"""Compiled inner loop of the low-rank Burg (LogDet) projections (Kulis et al. 2006, Alg. 1).

One call runs one sweep over all constraints in place on the r x r matrix B
(G = G0 B).  Every projection is O(r^2): two matrix-vector products with B
and one rank-one (rank-two for off-diagonal similarity constraints) update.

Constraint codes are those of :data:`kernlearn_cli.types.KINDS`.
"""

import math

import numpy as np
from numba import njit

from ..kinds import DISTANCE
from ._cyclic import BROKEN, OK, STUCK, TINY, Sweep, dual_step, rel_violation, sign

# Reassociation and contraction let LLVM vectorize the dot products; the NaN/Inf
# assumptions stay off so the breakdown checks below keep working.
_FASTMATH = {"reassoc", "contract", "nsz", "arcp"}



@njit(cache=True, fastmath=_FASTMATH)
def _bt_times(B, v, out):
    """out = B^T v, four rows of B per pass over ``out`` (fewer loads and stores)."""
    r = B.shape[0]
    for k in range(r):
        out[k] = 0.0
    l = 0
    while l + 4 <= r:
        v0, v1, v2, v3 = v[l], v[l + 1], v[l + 2], v[l + 3]
        for k in range(r):
            out[k] += v0 * B[l, k] + v1 * B[l + 1, k] + v2 * B[l + 2, k] + v3 * B[l + 3, k]
        l += 4
    while l < r:
        vl = v[l]
        for k in range(r):
            out[k] += vl * B[l, k]
        l += 1


@njit(cache=True, fastmath=_FASTMATH)
def _rank_one_update(B, w, coef, Bw):
    """B <- B (I + coef w w^T) = B + coef (B w) w^T, in O(r^2); B w four rows at a time."""
    r = B.shape[0]
    l = 0
    while l + 4 <= r:
        s0 = s1 = s2 = s3 = 0.0
        for k in range(r):
            wk = w[k]
            s0 += B[l, k] * wk
            s1 += B[l + 1, k] * wk
            s2 += B[l + 2, k] * wk
            s3 += B[l + 3, k] * wk
        Bw[l], Bw[l + 1], Bw[l + 2], Bw[l + 3] = coef * s0, coef * s1, coef * s2, coef * s3
        l += 4
    while l < r:
        s = 0.0
        for k in range(r):
            s += B[l, k] * w[k]
        Bw[l] = coef * s
        l += 1
    for l in range(r):
        f = Bw[l]
        for k in range(r):
            B[l, k] += f * w[k]


@njit(cache=True, fastmath=_FASTMATH)
def _eigen_update(B, u, s, alpha, Bw):
    """B <- B L with L = I + (1/sqrt(1 - alpha s) - 1) u u^T/|u|^2, the symmetric square
    root of (I - alpha s uu^T/|u|^2)^-1 on the eigenvector u of B^T A B.  False if not PD."""
    nn = 0.0
    for l in range(u.shape[0]):
        nn += u[l] * u[l]
    if nn <= TINY or s == 0.0:
        return True
    den = 1.0 - alpha * s
    if not den > 0.0:
        return False
    _rank_one_update(B, u, (1.0 / math.sqrt(den) - 1.0) / nn, Bw)
    return True


# Compiled eagerly (at import, or loaded from numba's cache) so that solver timings
# never include JIT compilation.
_SWEEP_SIG = ("Tuple((int64, int64, float64, int64))(float64[:, ::1], int64[::1], int64[::1], int8[::1], "
              "float64[::1], float64[::1], float64[:, ::1], float64, "
              "float64[::1], float64[::1], float64[::1], float64[::1])")


@njit(_SWEEP_SIG, cache=True, fastmath=_FASTMATH)
def _burg_sweep(G0, ci, cj, kind, bhat, lam, B, slack, v, w, e, Bw):
    """One cyclic sweep of Burg projections over all constraints, in place.

    Parameters
    ----------
    G0 : (n, r) initial factor; ci, cj, kind : constraint indices and kind codes;
    bhat : (c,) current targets (the bounds, moved by the slack updates when slack < inf);
    lam : (c,) dual variables; B : (r, r) factor update, G = G0 B;
    slack : gamma of the ITML-style slack (inf = hard constraints);
    v, w, e, Bw : (r,) work vectors.

    Returns
    -------
    The fields of :class:`~kernlearn_cli.solvers._cyclic.Sweep` (:func:`burg_sweep` names them):
    status OK, BROKEN (non-finite or 1 - alpha p <= 0 at constraint ``index``) or STUCK (the
    constrained quantity is 0 in the range of K0 and cannot move), that index, the largest
    relative violation met before a projection during the sweep and its constraint.
    """
    r = B.shape[0]
    hard = math.isinf(slack)
    gp = 1.0 if hard else slack / (slack + 1.0)      # ITML's gamma/(gamma+1) scaling
    maxviol = 0.0
    argmax = -1
    for q in range(ci.shape[0]):
        i = ci[q]
        j = cj[q]
        k = kind[q]
        delta = sign(k)
        is_dist = k in DISTANCE
        b = bhat[q]
        if is_dist or i == j:
            # ---- rank-one constraint tr(K z z^T): z = e_i - e_j (distance) or e_i (K_ii)
            for l in range(r):
                v[l] = G0[i, l] - G0[j, l] if is_dist else G0[i, l]
            _bt_times(B, v, w)                        # w = B^T v (Alg. 1)
            p = 0.0
            for l in range(r):
                p += w[l] * w[l]                      # p = z^T K z = ||w||^2
            viol = rel_violation(p, b, delta)
            if viol > maxviol:
                maxviol = viol
                argmax = q
            if not math.isfinite(p):
                return BROKEN, q, maxviol, argmax
            if p <= TINY:
                if viol > 0.0:
                    return STUCK, q, maxviol, argmax
                continue
            if b > 0.0:
                alpha_eq = gp * (1.0 / p - 1.0 / b)   # closed-form projection parameter
            elif delta < 0.0:
                alpha_eq = -np.inf                    # z^T K z >= b <= 0 always holds: release lambda
            else:
                return STUCK, q, maxviol, argmax
            alpha = dual_step(alpha_eq, lam, q, delta)
            denom = 1.0 - alpha * p
            if not denom > 0.0 or not math.isfinite(alpha):
                return BROKEN, q, maxviol, argmax
            beta = alpha / denom                      # X <- X + beta X z z^T X
            if not hard:
                bhat[q] = 1.0 / (1.0 / b + alpha / slack)
            # symmetric square root L = I + sigma w w^T of I + beta w w^T
            sigma = beta / (1.0 + math.sqrt(1.0 + beta * p))
            _rank_one_update(B, w, sigma, Bw)
        else:
            # ---- similarity K_ij, A = (e_i e_j^T + e_j e_i^T)/2: rank two in the range
            for l in range(r):
                v[l] = G0[i, l]
            _bt_times(B, v, w)                        # a = B^T g_i  (in w)
            for l in range(r):
                v[l] = G0[j, l]
            _bt_times(B, v, e)                        # c = B^T g_j  (in e)
            na = 0.0
            nc = 0.0
            t = 0.0
            for l in range(r):
                na += w[l] * w[l]
                nc += e[l] * e[l]
                t += w[l] * e[l]                      # t = K_ij
            viol = rel_violation(t, b, delta)
            if viol > maxviol:
                maxviol = viol
                argmax = q
            if not math.isfinite(t):
                return BROKEN, q, maxviol, argmax
            na = math.sqrt(na)
            nc = math.sqrt(nc)
            if na * nc <= TINY:
                if viol > 0.0:
                    return STUCK, q, maxviol, argmax
                continue
            # B^T A B = (a c^T + c a^T)/2 has eigenvalues s+- = (t +- |a||c|)/2 with
            # eigenvectors a/|a| +- c/|c|.  The constraint after the update
            # M^-1 <- M^-1 - alpha A is  s+/(1 - alpha s+) + s-/(1 - alpha s-) = b,
            # a quadratic in alpha with one root in (1/s-, 1/s+).
            sp = 0.5 * (t + na * nc)
            sm = 0.5 * (t - na * nc)
            d = sp * sm
            A2 = b * d
            A1 = 2.0 * d - b * t
            A0 = b - t
            lo = 1.0 / sm if sm < 0.0 else -np.inf
            hi = 1.0 / sp if sp > 0.0 else np.inf
            if A2 == 0.0:
                alpha_eq = -A0 / A1 if A1 != 0.0 else np.nan
            else:
                disc = max(A1 * A1 - 4.0 * A2 * A0, 0.0)
                qq = -0.5 * (A1 + math.copysign(math.sqrt(disc), A1))
                r1 = qq / A2
                r2 = A0 / qq if qq != 0.0 else np.nan
                alpha_eq = r1 if (r1 > lo and r1 < hi) else r2
            if not (alpha_eq > lo and alpha_eq < hi):
                if delta != 0.0 and viol == 0.0:
                    alpha_eq = delta * np.inf         # target unreachable but met: release lambda
                else:
                    return STUCK, q, maxviol, argmax
            alpha = dual_step(alpha_eq, lam, q, delta)
            if not math.isfinite(alpha):
                return BROKEN, q, maxviol, argmax
            for l in range(r):
                wa = w[l] / na
                ec = e[l] / nc
                w[l] = wa + ec                         # unnormalised e+
                e[l] = wa - ec                         # unnormalised e-
            if not (_eigen_update(B, w, sp, alpha, Bw) and _eigen_update(B, e, sm, alpha, Bw)):
                return BROKEN, q, maxviol, argmax
    return OK, -1, maxviol, argmax


def burg_sweep(G0, ci, cj, kind, bhat, lam, B, slack, v, w, e, Bw) -> Sweep:
    """One cyclic sweep of Burg projections (the compiled :func:`_burg_sweep`), its result named."""
    return Sweep(*_burg_sweep(G0, ci, cj, kind, bhat, lam, B, slack, v, w, e, Bw))
