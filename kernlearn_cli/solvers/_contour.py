"""Talbot contour quadrature of phi(alpha) = w^T exp(D + alpha w w^T) w (compiled).

phi(alpha) = (1/2 pi i) oint e^z g(z) / (1 - alpha g(z)) dz with g(z) = w^T (z - D)^-1 w
(Sherman-Morrison on the resolvent), evaluated by the Talbot quadrature of e^z on N = 24 nodes
shifted to sigma >= the largest eigenvalue.  g at the 12 conjugate-pair nodes is set up once per
projection (:func:`quad_setup` from poles and weights, :func:`~kernlearn_cli.solvers._lanczos.cf_setup`
from a Jacobi matrix), after which a trial alpha costs O(N) (:func:`quad_value`).  The quadrature's
error is below QUAD_ERR e^sigma ||w||^2 whatever the spectrum; :func:`quad_log` gives a value only
where that bound certifies it to QUAD_RTOL relative (elsewhere the sweeps evaluate phi exactly from
secular roots, :mod:`~kernlearn_cli.solvers._secular`).

References
----------
Trefethen, L. N., Weideman, J. A. C. & Schmelzer, T. (2006). Talbot quadratures and rational
approximations. BIT Numerical Mathematics 46(3), 653-670.
"""

import math

import numpy as np
from numba import njit


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


@njit(cache=True, error_model="numpy")
def _quad_node(shifted, weight, k, zr, zi2):
    """(sum_j weight_j a_j / (a_j^2 + zi2), sum_j weight_j / (a_j^2 + zi2)), a_j = zr - shifted_j:
    the reductions of one node in IEEE order (the shift is subtracted before, exactly as written; no fastmath,
    so every compiled copy gives the same bits: the note in ``_secular.py``)."""
    sr = 0.0
    s = 0.0
    for j in range(k):
        a = zr - shifted[j]
        q = weight[j] / (a * a + zi2)
        sr += q * a
        s += q
    return sr, s


@njit(cache=True, error_model="numpy")
def quad_setup(pole, weight, k, sigma, gre, gim, shifted):
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
def quad_value(gre, gim, alpha):
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
def quad_slope(gre, gim):
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


@njit(cache=True, error_model="numpy")
def quad_log(quad, alpha):
    """log phi(alpha) by the Talbot rule, or nan where it is not certified.

    ``quad`` = (sigma, amax, sum of the weights, g at the nodes (real, imaginary parts)).  The
    value is used when alpha <= amax (then every eigenvalue is <= sigma: theta_max <= d_max +
    max(alpha, 0) ||w||^2) and its certified error QUAD_ERR e^sigma ||w||^2 is at most
    QUAD_RTOL of it."""
    sigma, amax, wsum, gre, gim = quad
    if alpha <= amax:
        s = quad_value(gre, gim, alpha)
        if s > 0.0 and QUAD_ERR * wsum <= QUAD_RTOL * s:
            return math.log(s) + sigma
    return np.nan
