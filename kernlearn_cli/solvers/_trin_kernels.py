"""Compiled passes of TRIN's Steihaug CG (:func:`kernlearn_cli.solvers.trin.steihaug_pcg`).

CG runs in the preconditioner's coordinates (P̂, R̂, Ẑ); in the Frobenius trust region it also
carries Table 1's step and residual in K's coordinates (Z, R and Q = L⁻ᵀ P̂ L⁻¹), symmetric, so
packed as lower triangles (n(n+1)/2 doubles each: :func:`pack_lower`).  The direction in K's
coordinates, P = L P̂ Lᵀ, is formed afresh each step in one work array.  Each function here
is one pass over every array it touches.  The loss Hessian H = H_F(P) lives on the leading k × k
block only (``TraceMap.extent``), and so does Ĥₖ = Lₖᵀ H Lₖ: Ĥ(P̂) = P̂ + Ĥₖ there.  Sums run in
index order (no fastmath), so the bits do not depend on the machine's vector width.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, error_model="numpy")
def cg_dots(P, Praw, H, R, Zh):
    """(<P̂, Ĥ(P̂)>, <R̂, P̂>, <Ẑ, P̂>, <P̂, P̂>): the curvature of the direction as ‖P̂‖² + <P, H>
    (= <P̂, Lᵀ H L>, H = H_F(P) on the leading k × k block, k = len(H)), the slope of the model along
    it, and the two products of the natural trust region's test."""
    n, k = P.shape[0], H.shape[0]
    php, rp, zp, pp = 0.0, 0.0, 0.0, 0.0
    for i in range(n):
        for j in range(n):
            p = P[i, j]
            pp += p * p
            if i < k and j < k:
                php += Praw[i, j] * H[i, j]
            rp += R[i, j] * p
            zp += Zh[i, j] * p
    return pp + php, rp, zp, pp


@njit(cache=True, error_model="numpy")
def pack_lower(A, out):
    """out ← A's lower triangle, row by row (``out[i(i+1)/2 + j]`` = A[i, j], j <= i): a symmetric
    matrix in n(n+1)/2 doubles."""
    idx = 0
    for i in range(A.shape[0]):
        for j in range(i + 1):
            out[idx] = A[i, j]
            idx += 1
    return out


@njit(cache=True, error_model="numpy")
def packed_norm2(Ap):
    """‖A‖²_F of a symmetric matrix packed by :func:`pack_lower` (off-diagonal entries twice)."""
    total, idx, i = 0.0, 0, 0
    while idx < Ap.size:
        for j in range(i + 1):
            a = Ap[idx]
            total += a * a if j == i else 2.0 * a * a
            idx += 1
        i += 1
    return total


@njit(cache=True, error_model="numpy")
def cg_dots_packed(P, Praw, H, R, Zp):
    """(<P̂, Ĥ(P̂)>, <R̂, P̂>, <Z, P>, <P, P>) for the Frobenius trust region, the step Z in K's coordinates packed (:func:`pack_lower`) and the direction
    (:func:`pack_lower`) and the direction P = L P̂ Lᵀ (symmetric) read on its lower triangle."""
    n, k = P.shape[0], H.shape[0]
    php, rp, zp, pp = 0.0, 0.0, 0.0, 0.0
    idx = 0
    for i in range(n):
        for j in range(n):
            p = P[i, j]
            php += p * p
            if i < k and j < k:
                php += Praw[i, j] * H[i, j]
            rp += R[i, j] * p
        for j in range(i + 1):
            q = Praw[i, j]
            w = 1.0 if j == i else 2.0
            zp += w * Zp[idx] * q
            pp += w * q * q
            idx += 1
    return php, rp, zp, pp


@njit(cache=True, error_model="numpy")
def cg_step_raw(alpha, Praw, H, Zp, Rp, Qp):
    """Z += αP, R += α(Q + H) (H = H_F(P) on the k × k block): Table 1's step and residual in K's
    coordinates, all three symmetric and packed (:func:`pack_lower`), P read on its lower triangle.
    Returns ‖R‖²_F after the update."""
    n, k = Praw.shape[0], H.shape[0]
    rr = 0.0
    idx = 0
    for i in range(n):
        for j in range(i + 1):
            Zp[idx] += alpha * Praw[i, j]
            q = Qp[idx] + H[i, j] if i < k else Qp[idx]
            s = Rp[idx] + alpha * q
            Rp[idx] = s
            rr += s * s if j == i else 2.0 * s * s
            idx += 1
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
def cg_direction(beta, R, P, Rp, Qp):
    """The next direction P̂ = −R̂ + βP̂, and its image Q = L⁻ᵀ P̂ L⁻¹ = −R + βQ (packed; empty in the
    natural trust region, where it is not carried)."""
    n = P.shape[0]
    for i in range(n):
        for j in range(n):
            P[i, j] = beta * P[i, j] - R[i, j]
    for idx in range(Qp.size):
        Qp[idx] = beta * Qp[idx] - Rp[idx]
