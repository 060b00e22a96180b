"""Compiled column updates of KL_ADMM (Hu & Kwok 2013, Alg. 1 line 6).

The factors are stored as n x r arrays whose rows are the paper's columns v_i, u_i.
The pair set T is a CSR structure: for row i, ``idx[indptr[i]:indptr[i+1]]`` are the
j with (i, j) in T (both orders of an off-diagonal pair, (i, i) once) and ``tval`` the
targets T_ij of eq. (2).
"""

import math

import numpy as np
from numba import njit

_FASTMATH = {"reassoc", "contract", "nsz", "arcp"}


@njit(cache=True, fastmath=_FASTMATH)
def _dot(a, b):
    s = 0.0
    for l in range(a.shape[0]):
        s += a[l] * b[l]
    return s


@njit(cache=True, fastmath=_FASTMATH)
def half_step(Y, LY, Lam, lam_sign, indptr, idx, tval, rho, gamma, out):
    """One half of Alg. 1 line 6, all n columns (each independent of the others):

    out_i = (rho I + gamma P_i P_i^T)^-1 c_i,  P_i = [y_j]_{j in T_i},
    c_i = gamma sum_{j in T_i} T_ij y_j - (L Y)_i + rho y_i + lam_sign Lambda_i   (eqs. 11-13),

    with Y = U^k, lam_sign = -1 for the V-step and Y = V^{k+1}, lam_sign = +1 for the U-step.
    The inverse is applied through Sherman-Morrison-Woodbury (eq. 25):
    (rho I + gamma P P^T)^-1 c = (c - P (rho/gamma I + P^T P)^-1 P^T c) / rho,
    a |T_i| x |T_i| Cholesky solve: O(|T_i|^3 + r |T_i|^2) per column.
    """
    n, r = Y.shape
    maxt = 0
    for i in range(n):
        maxt = max(maxt, indptr[i + 1] - indptr[i])
    M = np.empty((maxt, maxt))
    s = np.empty(maxt)
    c = np.empty(r)
    shift = rho / gamma
    for i in range(n):
        a = indptr[i]
        t = indptr[i + 1] - a
        for l in range(r):
            c[l] = rho * Y[i, l] - LY[i, l] + lam_sign * Lam[i, l]
        for p in range(t):
            tv = gamma * tval[a + p]
            if tv != 0.0:
                yj = Y[idx[a + p]]
                for l in range(r):
                    c[l] += tv * yj[l]
        # M = rho/gamma I + P^T P (lower triangle), s = P^T c
        for p in range(t):
            yp = Y[idx[a + p]]
            for q in range(p + 1):
                M[p, q] = _dot(yp, Y[idx[a + q]])
            M[p, p] += shift
            s[p] = _dot(yp, c)
        # Cholesky M = R R^T in place (lower), then s <- M^-1 s
        for p in range(t):
            for q in range(p + 1):
                acc = M[p, q]
                for m in range(q):
                    acc -= M[p, m] * M[q, m]
                if p == q:
                    M[p, p] = math.sqrt(acc)
                else:
                    M[p, q] = acc / M[q, q]
        for p in range(t):
            acc = s[p]
            for m in range(p):
                acc -= M[p, m] * s[m]
            s[p] = acc / M[p, p]
        for p in range(t - 1, -1, -1):
            acc = s[p]
            for m in range(p + 1, t):
                acc -= M[m, p] * s[m]
            s[p] = acc / M[p, p]
        for l in range(r):
            out[i, l] = c[l]
        for p in range(t):
            yj = Y[idx[a + p]]
            sp = s[p]
            for l in range(r):
                out[i, l] -= sp * yj[l]
        for l in range(r):
            out[i, l] /= rho


@njit(cache=True, fastmath=_FASTMATH)
def pair_loss(V, U, indptr, idx, tval):
    """sum over (i, j) in T (both orders off the diagonal) of (v_i . u_j - T_ij)^2."""
    n = V.shape[0]
    total = 0.0
    for i in range(n):
        for p in range(indptr[i], indptr[i + 1]):
            e = _dot(V[i], U[idx[p]]) - tval[p]
            total += e * e
    return total


@njit(cache=True, fastmath=_FASTMATH)
def pair_gradient(V, indptr, idx, tval, gamma, out):
    """out += gamma R V with R_ij = v_i . v_j - T_ij on T (the pair part of the gradient of (1)), O(|T| r)."""
    n = V.shape[0]
    for i in range(n):
        for p in range(indptr[i], indptr[i + 1]):
            j = idx[p]
            e = gamma * (_dot(V[i], V[j]) - tval[p])
            for k in range(V.shape[1]):
                out[i, k] += e * V[j, k]


@njit(cache=True, fastmath=_FASTMATH)
def multiplier_step(V, Vn, Un, Lam, rho):
    """Alg. 1 line 8, Lambda += rho (V^{k+1} - U^{k+1}), fused with the sums the residuals (14)
    need: returns (||V^{k+1} - U^{k+1}||^2, ||V^{k+1} - V^k||^2, ||V^{k+1}||^2)."""
    n, r = V.shape
    primal = 0.0
    change = 0.0
    size = 0.0
    for i in range(n):
        for l in range(r):
            d = Vn[i, l] - Un[i, l]
            e = Vn[i, l] - V[i, l]
            primal += d * d
            change += e * e
            size += Vn[i, l] * Vn[i, l]
            Lam[i, l] += rho * d
    return primal, change, size


@njit(cache=True, fastmath=_FASTMATH)
def csr_times(indptr, indices, data, Y, out):
    """out = L Y for L in CSR form and Y row-major (n x r): O(nnz(L) r), rows of Y streamed."""
    n, r = Y.shape
    for i in range(n):
        for l in range(r):
            out[i, l] = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            a = data[p]
            y = Y[indices[p]]
            for l in range(r):
                out[i, l] += a * y[l]
