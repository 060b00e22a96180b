"""The shared symmetric eigensolver and its fallback driver."""

import numpy as np

from kernlearn_cli import linalg


def test_eigh_falls_back_to_mrrr_when_divide_and_conquer_fails(monkeypatch):
    rng = np.random.default_rng(0)
    A = rng.standard_normal((30, 30))
    S = A + A.T
    w_ref, _ = np.linalg.eigh(S)

    def broken(a):
        raise np.linalg.LinAlgError("Eigenvalues did not converge")

    monkeypatch.setattr(linalg.np.linalg, "eigh", broken)
    w, V = linalg.eigh(S)
    np.testing.assert_allclose(w, w_ref, atol=1e-12 * np.abs(w_ref).max())
    np.testing.assert_allclose(V @ np.diag(w) @ V.T, S, atol=1e-12 * np.abs(S).max())
    np.testing.assert_allclose(V.T @ V, np.eye(30), atol=1e-12)
