"""Compiled passes of TRIN's Steihaug CG (:func:`kernlearn_cli.solvers.trin.steihaug_pcg`).

CG runs in the preconditioner's coordinates (P̂, R̂, Ẑ) and carries Table 1's own recurrence in
K's (P = L P̂ Lᵀ, R, Q, Y = K R K, Z): nine n × n arrays, each updated every CG step.  Updated one
BLAS call at a time that is about fifteen passes over memory per step; each function here is
one pass over every array it touches, so a CG step costs the loss Hessian, the k × k congruence
and three passes.  The Hessian's contribution lives on the leading k × k block only
(``TraceMap.extent``): Ĥ(P̂) = P̂ + Ĥₖ and H(P) = Q + Hₖ there.  Sums run in index order (no
fastmath), so the bits do not depend on the machine's vector width.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, error_model="numpy")
def cg_dots(P, Hh, Z, Pn):
    """(<P̂, Ĥ(P̂)>, <Z, Pn>, <Pn, Pn>) with Ĥ(P̂) = P̂ + Hh on the leading k × k block (k = len(Hh)):
    the curvature of the direction and the two products of the trust-region test (Pn the
    direction in the trust norm's coordinates, Z the step in them)."""
    n, k = P.shape[0], Hh.shape[0]
    php, zp, pp = 0.0, 0.0, 0.0
    for i in range(n):
        for j in range(n):
            p = P[i, j]
            h = p + Hh[i, j] if i < k and j < k else p
            php += p * h
            q = Pn[i, j]
            zp += Z[i, j] * q
            pp += q * q
    return php, zp, pp


@njit(cache=True, error_model="numpy")
def cg_step(alpha, P, Hh, Zh, R, Praw, Q, Hk, Z, Rraw, raw):
    """Ẑ += αP̂, R̂ += αĤ(P̂); with ``raw`` also Z += αP and R += α(Q + Hₖ) (Hₖ = H_F(P) on the
    k × k block).  Returns (‖R̂‖²_F, ‖R‖²_F) after the update (the second 0 without ``raw``)."""
    n, k = P.shape[0], Hh.shape[0]
    rr, rr_raw = 0.0, 0.0
    for i in range(n):
        for j in range(n):
            p = P[i, j]
            block = i < k and j < k
            Zh[i, j] += alpha * p
            r = R[i, j] + alpha * (p + Hh[i, j] if block else p)
            R[i, j] = r
            rr += r * r
            if raw:
                Z[i, j] += alpha * Praw[i, j]
                q = Q[i, j] + Hk[i, j] if block else Q[i, j]
                s = Rraw[i, j] + alpha * q
                Rraw[i, j] = s
                rr_raw += s * s
    return rr, rr_raw


@njit(cache=True, error_model="numpy")
def cg_direction(alpha, beta, R, P, KHK, Y, Praw, Rraw, Q, raw):
    """The next directions: P̂ = −R̂ + βP̂; Y += α(K H_F(P) K + P) (K R₊ K), P = −Y + βP; with
    ``raw`` Q = −R + βQ (Table 1's recurrence in K's coordinates)."""
    n = P.shape[0]
    for i in range(n):
        for j in range(n):
            P[i, j] = beta * P[i, j] - R[i, j]
            y = Y[i, j] + alpha * (KHK[i, j] + Praw[i, j])
            Y[i, j] = y
            Praw[i, j] = beta * Praw[i, j] - y
            if raw:
                Q[i, j] = beta * Q[i, j] - Rraw[i, j]
