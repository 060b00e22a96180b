"""Initial kernel laplacian_pinv: K0 = L^+ of the Gaussian k-NN graph (Li et al. 2009, Sec. 6.2)."""

import warnings

import numpy as np
import pytest

from kernlearn_cli.errors import ConfigError
from kernlearn_cli.kernels import laplacian_pinv
from kernlearn_cli.registry import kernels
from kernlearn_cli.types import Dataset


def _blobs(n=40, seed=0, gap=0.0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    return Dataset("blobs", X=rng.standard_normal((n, 3)) + gap * y[:, None], y=y)


def dense_laplacian(X, neighbors, sigma_neighbors, bandwidth="edge_mean"):
    """What the docstring says, by brute force: symmetrized k-NN graph, L = D - W with
    exp(-d^2 / s^2), s^2 the mean squared k-NN distance (edge_mean), or exp(-d^2 / (2 sigma^2)),
    sigma = half the mean distance to the sigma_neighbors nearest (half_mean)."""
    n = len(X)
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    np.fill_diagonal(D, np.inf)
    order = np.argsort(D, axis=1, kind="stable")
    sigma = 0.5 * np.mean(np.take_along_axis(D, order[:, :sigma_neighbors], axis=1))
    if bandwidth == "edge_mean":
        sigma = np.sqrt(np.mean(np.take_along_axis(D, order[:, :neighbors], axis=1) ** 2) / 2)
    A = np.zeros((n, n), bool)
    A[np.repeat(np.arange(n), neighbors), order[:, :neighbors].ravel()] = True
    A |= A.T
    W = np.where(A, np.exp(-np.where(A, D, 0) ** 2 / (2 * sigma ** 2)), 0.0)
    return np.diag(W.sum(1)) - W


def test_registered():
    assert "laplacian_pinv" in kernels.names()


@pytest.mark.parametrize("bandwidth", ["edge_mean", "half_mean"])
def test_pinv_of_the_documented_laplacian(bandwidth):
    ds = _blobs()
    G0 = laplacian_pinv(ds, neighbors=5, sigma_neighbors=7, bandwidth=bandwidth, normalize=False)
    L = dense_laplacian(ds.X, 5, 7, bandwidth)
    np.testing.assert_allclose(G0 @ G0.T, np.linalg.pinv(L, rcond=1e-10, hermitian=True), rtol=1e-7, atol=1e-9)


def test_normalized_to_unit_mean_diagonal():
    ds = _blobs()
    K = laplacian_pinv(ds, neighbors=5, normalize=False)
    K = K @ K.T
    G0 = laplacian_pinv(ds, neighbors=5)
    np.testing.assert_allclose(G0 @ G0.T, K * ds.n / np.trace(K), rtol=1e-9, atol=1e-12)


def test_connected_graph_projector_and_rank():
    ds = _blobs()
    G0 = laplacian_pinv(ds, normalize=False)
    n = ds.n
    K0 = G0 @ G0.T
    L = dense_laplacian(ds.X, 10, 10)
    P = np.eye(n) - np.ones((n, n)) / n                   # projector onto range(L): one component
    np.testing.assert_allclose(K0 @ L, P, atol=1e-9)
    np.testing.assert_allclose(K0 @ np.ones(n), 0.0, atol=1e-9)
    assert G0.shape == (n, n - 1)
    assert np.linalg.matrix_rank(G0) == n - 1            # full column rank
    # columns by decreasing eigenvalue of K0
    norms = np.einsum("ij,ij->j", G0, G0)
    assert np.all(np.diff(norms) <= 1e-12 * norms[0])


def test_disconnected_graph_drops_one_null_vector_per_component():
    ds = _blobs(gap=100.0)                                # two far clusters, k-NN stays inside each
    G0 = laplacian_pinv(ds, neighbors=3, sigma_neighbors=3, normalize=False)
    n = ds.n
    assert G0.shape[1] == n - 2
    L = dense_laplacian(ds.X, 3, 3)
    E = np.stack([ds.y == c for c in (0, 1)], axis=1).astype(float)
    E /= np.linalg.norm(E, axis=0)                        # orthonormal basis of the null space
    np.testing.assert_allclose(G0 @ G0.T @ L, np.eye(n) - E @ E.T, atol=1e-9)
    np.testing.assert_allclose(G0.T @ E, 0.0, atol=1e-9)


def test_scaling_and_errors():
    ds = _blobs()
    ds.X[:, 0] *= 1e3
    Xs = (ds.X - ds.X.mean(0)) / ds.X.std(0)
    G0 = laplacian_pinv(ds, neighbors=5, sigma_neighbors=5, scale_features="standard", normalize=False)
    np.testing.assert_allclose(G0 @ G0.T, np.linalg.pinv(dense_laplacian(Xs, 5, 5), rcond=1e-10, hermitian=True),
                               rtol=1e-7, atol=1e-9)
    with pytest.raises(ConfigError, match=r"neighbors = 40 must be between 1 and n - 1 = 39"):
        laplacian_pinv(ds, neighbors=40)
    with pytest.raises(ConfigError, match="scale_features: expected one of 'none', 'minmax', 'standard', got 'zscore'"):
        laplacian_pinv(ds, scale_features="zscore")
    with pytest.raises(ConfigError, match="needs feature vectors"):
        laplacian_pinv(Dataset("k", K=np.eye(4), y=np.zeros(4, int)))


def test_no_warning_when_null_space_matches_components():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        laplacian_pinv(_blobs(gap=100.0), neighbors=3, sigma_neighbors=3)
