"""Compiled passes of TRIN's Steihaug CG (:func:`kernlearn_cli.solvers.trin.steihaug_pcg`).

CG runs in the preconditioner's coordinates (P̂, R̂, Ẑ); in the Frobenius trust region it also
carries Table 1's step and residual in K's coordinates (Z, R and Q = L⁻ᵀ P̂ L⁻¹).  The direction
in K's coordinates, P = L P̂ Lᵀ, is formed afresh each step in one work array.  Each function here
is one pass over every array it touches.  The loss Hessian H = H_F(P) lives on the leading k × k
block only (``TraceMap.extent``), and so does Ĥₖ = Lₖᵀ H Lₖ: Ĥ(P̂) = P̂ + Ĥₖ there.  Sums run in
index order (no fastmath), so the bits do not depend on the machine's vector width.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, error_model="numpy")
def cg_dots(P, Praw, H, Z, Pn):
    """(<P̂, Ĥ(P̂)>, <Z, Pn>, <Pn, Pn>), the curvature of the direction as ‖P̂‖² + <P, H> (= <P̂, Lᵀ H L>,
    H = H_F(P) on the leading k × k block, k = len(H)) and the two products of the trust-region test
    (Pn the direction in the trust norm's coordinates, Z the step in them)."""
    n, k = P.shape[0], H.shape[0]
    php, zp, pp = 0.0, 0.0, 0.0
    for i in range(n):
        for j in range(n):
            p = P[i, j]
            php += p * p
            if i < k and j < k:
                php += Praw[i, j] * H[i, j]
            q = Pn[i, j]
            zp += Z[i, j] * q
            pp += q * q
    return php, zp, pp


@njit(cache=True, error_model="numpy")
def cg_step_raw(alpha, Praw, Q, H, Z, Rraw):
    """Z += αP, R += α(Q + H) (H = H_F(P) on the k × k block): Table 1's step and residual in K's
    coordinates.  Returns ‖R‖²_F after the update."""
    n, k = Praw.shape[0], H.shape[0]
    rr = 0.0
    for i in range(n):
        for j in range(n):
            Z[i, j] += alpha * Praw[i, j]
            q = Q[i, j] + H[i, j] if i < k and j < k else Q[i, j]
            s = Rraw[i, j] + alpha * q
            Rraw[i, j] = s
            rr += s * s
    return rr


@njit(cache=True, error_model="numpy")
def cg_step(alpha, P, Hh, Zh, R):
    """Ẑ += αP̂, R̂ += αĤ(P̂) (Ĥ(P̂) = P̂ + Hh on the k × k block).  Returns ‖R̂‖²_F after the update."""
    n, k = P.shape[0], Hh.shape[0]
    rr = 0.0
    for i in range(n):
        for j in range(n):
            p = P[i, j]
            Zh[i, j] += alpha * p
            r = R[i, j] + alpha * (p + Hh[i, j] if i < k and j < k else p)
            R[i, j] = r
            rr += r * r
    return rr


@njit(cache=True, error_model="numpy")
def cg_direction(beta, R, P, Rraw, Q, raw):
    """The next direction P̂ = −R̂ + βP̂; with ``raw`` also Q = −R + βQ (its image L⁻ᵀ P̂ L⁻¹)."""
    n = P.shape[0]
    for i in range(n):
        for j in range(n):
            P[i, j] = beta * P[i, j] - R[i, j]
            if raw:
                Q[i, j] = beta * Q[i, j] - Rraw[i, j]
