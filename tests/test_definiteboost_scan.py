"""DefiniteBoost's residual scan (issue 45, item 5): ``_residuals`` writes ``_value``'s loop out
for speed (34 -> 5 ns a constraint at r = 16); it must give r_j = tr(W C_j) (against a dense W),
and the bits of ``_value`` per constraint, so that archived runs keep theirs."""

import numba as nb
import numpy as np
import pytest

from kernlearn_cli.solvers.definiteboost import _residuals, _value


@nb.njit
def residuals_by_call(Y, p, ii, jj, isdist, sig, beta, out):
    """The scan as it was: one ``_value`` call a constraint."""
    for q in range(ii.shape[0]):
        out[q] = sig[q] * (_value(Y, p, ii[q], jj[q], isdist[q]) - beta[q])


@pytest.mark.parametrize("r", [1, 3, 16, 17, 64])
def test_residual_scan_is_tr_W_C_and_the_per_constraint_value_to_the_bit(r):
    rng = np.random.default_rng(r)
    n, c = 80, 500
    Y = np.ascontiguousarray(np.linalg.qr(rng.standard_normal((n, r)))[0])   # rows of Q V, orthonormal columns
    p = rng.random(r)
    p /= p.sum()
    ii, jj = rng.integers(0, n, c), rng.integers(0, n, c)
    isdist = rng.random(c) < 0.5
    sig = np.where(rng.random(c) < 0.5, 1.0, -1.0)
    beta = rng.random(c) / n
    out, ref = np.empty(c), np.empty(c)
    _residuals(Y, p, ii, jj, isdist, sig, beta, out)
    residuals_by_call(Y, p, ii, jj, isdist, sig, beta, ref)
    assert np.array_equal(out, ref)
    W = (Y * p) @ Y.T                                                # W = Q V diag(p) V^T Q^T
    e = np.eye(n)
    A = [np.outer(e[a] - e[b], e[a] - e[b]) if d else (np.outer(e[a], e[b]) + np.outer(e[b], e[a])) / 2
         for a, b, d in zip(ii, jj, isdist)]
    dense = sig * (np.array([np.sum(W * Aq) for Aq in A]) - beta)
    assert np.allclose(out, dense, rtol=1e-12, atol=1e-15)
