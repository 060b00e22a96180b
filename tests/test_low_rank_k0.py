"""Low-rank initial kernels by pivoted incomplete Cholesky (issue 45, item 1), and the Gaussian kernel
and its bandwidth rules pinned against scikit-learn and scipy."""

import json

import h5py
import numpy as np
import pytest
import yaml
from scipy.spatial.distance import pdist
from sklearn.metrics.pairwise import rbf_kernel as sklearn_rbf

import kernlearn_cli.kernels as kernels
from kernlearn_cli.inductive import rbf_rows
from kernlearn_cli.kernels import rbf, rbf_bandwidth, rbf_kernel_matrix
from kernlearn_cli.lowrank import pivoted_cholesky
from kernlearn_cli.runner import run_config
from kernlearn_cli.solvers.burg import burg
from kernlearn_cli.types import Constraints, Dataset


def points(n=40, d=5, seed=0):
    return np.random.default_rng(seed).standard_normal((n, d))


def test_rbf_matrix_and_bandwidths_against_scikit_learn_and_scipy():
    X = points(60, 4)
    for sigma in (0.5, 1.7):
        assert np.abs(rbf_kernel_matrix(X, sigma) - sklearn_rbf(X, gamma=1 / (2 * sigma ** 2))).max() <= 1e-13
    d = pdist(X)                                        # scipy's pairwise Euclidean distances
    assert rbf_bandwidth(X, "median") == pytest.approx(np.median(d), rel=1e-10)
    assert rbf_bandwidth(X, "mean_sq") == pytest.approx(np.sqrt(np.mean(d ** 2)), rel=1e-10)
    assert rbf_bandwidth(X, "zhang2012") == pytest.approx(np.sqrt(np.mean(d ** 2) / 2), rel=1e-10)


def test_pivoted_cholesky_is_the_nystrom_factor_of_its_pivots():
    """On a rank-10 PSD matrix: exact at full pivoting, lower triangular in pivot order, G = K[:, P] L⁻ᵀ,
    and at a smaller rank the residual trace it reports is tr(K - G Gᵀ) computed densely."""
    rng = np.random.default_rng(3)
    F = rng.standard_normal((50, 10))
    K = F @ F.T
    G, P, residual = pivoted_cholesky(lambda p: K[:, p], np.diag(K))
    assert G.shape == (50, 10) and len(set(P.tolist())) == 10
    assert np.abs(G @ G.T - K).max() <= 1e-10 * np.abs(K).max() and residual <= 1e-10 * np.trace(K)
    G6, P6, residual6 = pivoted_cholesky(lambda p: K[:, p], np.diag(K), rank=6)
    assert np.array_equal(P6, P[:6])
    assert all(np.abs(G6[P6[k], k + 1:]).max(initial=0) <= 1e-12 * np.abs(G6).max() for k in range(6))
    assert np.abs(G6 - K[:, P6] @ np.linalg.inv(G6[P6]).T).max() <= 1e-9 * np.abs(G6).max()
    assert residual6 == pytest.approx(np.trace(K - G6 @ G6.T), rel=1e-9)
    Gt, _, rt = pivoted_cholesky(lambda p: K[:, p], np.diag(K), trace_tol=0.3)
    assert rt <= 0.3 * np.trace(K) and Gt.shape[1] < 10


def greedy_pivots(K, rank):
    """The pivot rule written out densely: the residual R = K - G Gᵀ as an n x n array, its largest
    diagonal entry the next pivot (a tie to the lowest index, as np.argmax), then
    R <- R - R[:, p] R[p, :] / R[p, p] (a Schur complement); also the gap between the chosen and the
    runner-up diagonal entry at each step (the choice is well posed where it is not 0)."""
    R, pivots, gaps = np.array(K, dtype=float), [], []
    for _ in range(rank):
        d = np.diag(R).copy()
        d[pivots] = -np.inf
        order = np.argsort(-d, kind="stable")
        gaps.append(d[order[0]] - d[order[1]])
        p = int(order[0])
        pivots.append(p)
        R = R - np.outer(R[:, p], R[p, :]) / R[p, p]
    return pivots, np.array(gaps)


@pytest.mark.parametrize("kind", ["gram", "rbf"])
def test_pivots_follow_the_residual_diagonal_on_a_permuted_matrix(kind):
    """The pivot sequence equals a dense greedy reference on the largest *residual* diagonal, and
    permuting the points permutes the pivots the same way.  Pivots taken from diag(K) instead (the
    audit's mutant) pass every Nyström identity above, but not this: for the Gaussian kernel diag(K)
    is all ones (they come out in index order), and for the Gram matrix of points of unequal norms the
    residual reorders them after the first step."""
    rng = np.random.default_rng(11)
    X = rng.standard_normal((40, 6)) * rng.uniform(0.3, 3.0, size=(40, 1))
    K = X @ X.T if kind == "gram" else rbf_kernel_matrix(X, 6.0)
    perm = rng.permutation(40)
    Kp = K[np.ix_(perm, perm)]
    for M in (K, Kp):
        _, P, _ = pivoted_cholesky(lambda p, M=M: M[:, p], np.diag(M), rank=6)
        reference, gaps = greedy_pivots(M, 6)
        # no near tie after the first step (a Gaussian kernel's first step is an exact tie of ones,
        # broken by the lowest index in both): the sequence is well defined
        assert gaps[1:].min() > 1e-6 * np.abs(M).max() and (gaps[0] > 1e-6 or kind == "rbf")
        assert P.tolist() == reference
    _, P, _ = pivoted_cholesky(lambda p: K[:, p], np.diag(K), rank=6)
    _, Pp, _ = pivoted_cholesky(lambda p: Kp[:, p], np.diag(Kp), rank=6)
    if kind == "gram":                                        # distinct diagonal: the same points, renamed
        assert perm[Pp].tolist() == P.tolist()


def test_pivoted_path_forms_no_dense_kernel(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("an n x n step on the pivoted_cholesky path")

    monkeypatch.setattr(kernels, "rbf_kernel_matrix", refuse)
    monkeypatch.setattr(kernels, "factorize", refuse)
    ds = Dataset("pts", X=points(3000, 3))
    G = rbf(ds, factorization="pivoted_cholesky", rank=20)
    assert G.shape == (3000, 20)


def test_full_rank_paths_agree_on_k0_and_on_the_learned_kernel():
    """Both factorizations of a well-conditioned 40-point Gaussian kernel: K0 and Burg's learned K
    agree to 1e-10 (the factors differ by a rotation)."""
    ds = Dataset("pts", X=points(40, 5))
    Ge, Gc = rbf(ds, sigma=1.0), rbf(ds, sigma=1.0, factorization="pivoted_cholesky", trace_tol=0.0)
    assert Ge.shape == Gc.shape == (40, 40)
    K0 = Ge @ Ge.T
    assert np.abs(Gc @ Gc.T - K0).max() <= 1e-10
    rng = np.random.default_rng(1)
    i = rng.integers(0, 40, 30)
    j = (i + 1 + rng.integers(0, 39, 30)) % 40
    d0 = K0[i, i] + K0[j, j] - 2 * K0[i, j]
    C = Constraints.from_lists(i, j, ["dist_le"] * 15 + ["dist_ge"] * 15, np.r_[0.7 * d0[:15], 1.3 * d0[15:]])
    Ke, Kc = (res.G @ res.G.T for res in (burg(Ge, C, tol=1e-12), burg(Gc, C, tol=1e-12)))
    assert np.abs(Ke - Kc).max() <= 1e-10 * np.abs(Ke).max()


def test_new_points_rows_through_the_pivots():
    """The training rows come back; a held-out point's row is its row in the factor of the union when
    the union's pivots are the training ones (the point is not a pivot)."""
    X = points(400, 3)
    ds = Dataset("pts", X=X)
    G0 = rbf(ds, factorization="pivoted_cholesky", rank=30)
    assert np.abs(rbf_rows(ds, X, G0, factorization="pivoted_cholesky", rank=30) - G0).max() <= 1e-9
    x = X.mean(axis=0, keepdims=True)                   # the centre: never the largest residual
    sigma = rbf_bandwidth(X, "median")
    union = Dataset("union", X=np.vstack([X, x]))
    Gu = rbf(union, sigma=sigma, factorization="pivoted_cholesky", rank=30)
    row = rbf_rows(ds, x, G0, factorization="pivoted_cholesky", rank=30)
    assert np.abs(row - Gu[-1:]).max() <= 1e-9 and np.abs(Gu[:-1] - G0).max() <= 1e-9


def test_a_run_records_the_approximation_error(tmp_path):
    cfg = {"name": "ichol", "seed": 0, "dataset": {"name": "two_gaussians", "n": 300, "dim": 4},
           "kernel": {"name": "rbf", "factorization": "pivoted_cholesky", "rank": 12},
           "constraints": {"name": "idealized_pairs", "count": 40}, "solver": {"name": "burg", "slack": 1.0},
           "evaluate": []}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    out, _ = run_config(tmp_path / "c.yaml", tmp_path / "out", [], per_cell=False)
    (rec,) = [json.loads(p.read_text()) for p in out.glob("*/record.json")]
    info = rec["kernel_info"]
    assert info["factorization"] == "pivoted_cholesky" and info["rank"] == rec["rank0"] == 12
    assert 0 < info["trace_residual"] == pytest.approx(300 * info["relative_trace_residual"])
    with h5py.File(next(out.glob("*/factors.h5"))) as f:
        assert f.attrs["k0_trace_residual"] == info["trace_residual"]
