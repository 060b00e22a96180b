"""KL_ADMM (Hu & Kwok 2013) against the exact SDP, a dense column update, and invariants;
the k-NN Laplacian against a dense construction; the must-link/cannot-link generator."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from kernlearn_cli.constraints.must_cannot import must_cannot
from kernlearn_cli.data.synthetic import chessboard, two_gaussians
from kernlearn_cli.errors import ConfigError, DataError
from kernlearn_cli.graph import knn_laplacian
from kernlearn_cli.solvers import _admm_kernels as _k
from kernlearn_cli.solvers.admm import admm, pair_structure, pcp_objective, table1_rank
from kernlearn_cli.types import Dataset


def dense_laplacian(X, k, m, kind):
    """The manifold of Hu & Kwok Sec. 4 built the slow way: all pairwise distances."""
    D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(D, np.inf)
    nearest = np.argsort(D, axis=1)
    sigma = 0.5 * np.mean(np.take_along_axis(D, nearest[:, :m], axis=1))
    W = np.zeros_like(D)
    for i in range(len(X)):
        for j in nearest[i, :k]:
            W[i, j] = W[j, i] = math.exp(-D[i, j] ** 2 / (2 * sigma ** 2))
    deg = W.sum(1)
    if kind == "unnormalized":
        return np.diag(deg) - W, sigma
    s = 1 / np.sqrt(deg)
    return np.eye(len(X)) - s[:, None] * W * s[None, :], sigma


@pytest.mark.parametrize("kind", ["normalized", "unnormalized"])
def test_knn_laplacian_matches_dense_construction(kind):
    X = np.random.default_rng(0).standard_normal((60, 3))
    L, info = knn_laplacian(X, neighbors=5, sigma_neighbors=10, kind=kind)
    Lref, sigma = dense_laplacian(X, 5, 10, kind)
    assert info["sigma"] == pytest.approx(sigma, rel=1e-12)
    np.testing.assert_allclose(L.toarray(), Lref, atol=1e-12)
    assert np.linalg.eigvalsh(L.toarray()).min() >= -1e-10


def test_nearest_neighbors_break_ties_by_index_whatever_the_threads(monkeypatch):
    """Binary features tie often (adult): the neighbours are the m smallest (distance, index) pairs,
    as a stable sort of the dense distances gives them, in blocks smaller than n, with 1 or 2 threads."""
    from threadpoolctl import threadpool_limits

    from kernlearn_cli import graph

    X = (np.random.default_rng(2).random((300, 6)) < 0.3).astype(float)
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(D, np.inf)
    ref = np.argsort(D, axis=1, kind="stable")[:, :12]
    monkeypatch.setattr(graph, "CHUNK_ROWS", 64)
    results = []
    for threads in (1, 2):
        with threadpool_limits(limits=threads):
            dist, idx = graph.nearest_neighbors(X, 12)
        np.testing.assert_array_equal(idx, ref)
        np.testing.assert_allclose(dist, np.sqrt(np.take_along_axis(D, ref, axis=1)), atol=1e-12)
        results.append((dist.tobytes(), idx.tobytes()))
    assert results[0] == results[1]
    assert (np.diff(np.take_along_axis(D, ref, axis=1), axis=1) == 0).sum() > 1000     # the test has ties


def test_knn_laplacian_bad_input_and_disconnected_graph():
    X = np.random.default_rng(1).standard_normal((10, 2))
    with pytest.raises(ConfigError, match="neighbors = 10 must be between 1 and n - 1 = 9"):
        knn_laplacian(X, neighbors=10, sigma_neighbors=3)
    # two far-apart clusters: a disconnected graph is allowed; L has one null vector per component
    X2 = np.vstack([X, X + 1000.0])
    L, info = knn_laplacian(X2, neighbors=3, sigma_neighbors=3)
    assert info["components"] == 2
    assert np.sum(np.linalg.eigvalsh(L.toarray()) < 1e-10) == 2


def test_must_cannot_pairs():
    ds = chessboard(n=100, seed=3)
    C = must_cannot(ds, None, rng=np.random.default_rng(0))
    m = round(0.6 * 100)
    i, j, T = C.i, C.j, C.bound
    must, cannot, diag = slice(0, m), slice(m, 2 * m), slice(2 * m, None)
    assert len(C) == 2 * m + 100 and np.all(C.kind == 5)          # sim_eq
    assert np.all(ds.y[i[must]] == ds.y[j[must]]) and np.all(T[must] == 1)
    assert np.all(ds.y[i[cannot]] != ds.y[j[cannot]]) and np.all(T[cannot] == 0)
    assert np.array_equal(i[diag], np.arange(100)) and np.array_equal(j[diag], np.arange(100)) and np.all(T[diag] == 1)
    pairs = set(zip(i[:2 * m].tolist(), j[:2 * m].tolist()))
    assert len(pairs) == 2 * m and all(a < b for a, b in pairs)
    again = must_cannot(ds, None, rng=np.random.default_rng(0))
    assert np.array_equal(again.i, C.i) and np.array_equal(again.j, C.j)
    # Table 1: |T| counts ordered pairs, 4 round(0.6 n) + n; chessboard (n = 100) -> 340, r = 25
    assert table1_rank(C) == 25
    with pytest.raises(DataError, match="single class"):
        must_cannot(Dataset("one", X=np.zeros((5, 1)), y=np.zeros(5, dtype=np.int64)), None, rng=np.random.default_rng(0))


def test_half_step_matches_dense_solve():
    """Eq. (13) through SMW (25) equals a dense solve of (rho I + gamma P P^T) v = c."""
    rng = np.random.default_rng(2)
    n, r, rho, gamma = 30, 6, 7.0, 3.0
    ds = two_gaussians(n=n, dim=4, seed=1)
    C = must_cannot(ds, None, rng=rng)
    indptr, idx, tval = pair_structure(C, n, "admm")
    Y, Lam = rng.standard_normal((n, r)), rng.standard_normal((n, r))
    L, _ = knn_laplacian(ds.X, neighbors=4, sigma_neighbors=4)
    LY = L @ Y
    out = np.empty((n, r))
    _k.half_step(Y, LY, Lam, -1.0, indptr, idx, tval, rho, gamma, out)
    for i in range(n):
        nb, t = idx[indptr[i]:indptr[i + 1]], tval[indptr[i]:indptr[i + 1]]
        A = rho * np.eye(r) + gamma * Y[nb].T @ Y[nb]
        c = gamma * t @ Y[nb] - LY[i] + rho * Y[i] - Lam[i]
        np.testing.assert_allclose(out[i], np.linalg.solve(A, c), rtol=1e-10, atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("make", [lambda: chessboard(n=40, seed=0), lambda: two_gaussians(n=60, dim=10, seed=2)])
def test_admm_reaches_the_sdp_optimum(make):
    pytest.importorskip("cvxpy")
    from kernlearn_cli.solvers.pcp_sdp import pcp_sdp

    ds = make()
    C = must_cannot(ds, None, rng=np.random.default_rng(0))
    ref = pcp_sdp(None, C, dataset=ds)
    res = admm(None, C, dataset=ds, rng=np.random.default_rng(1), max_iter=2000)
    assert res.converged
    assert res.objective >= ref.objective * (1 - 1e-6)          # the SDP is the global optimum
    assert (res.objective - ref.objective) / abs(ref.objective) <= 1e-3
    assert res.info["v_minus_u"] <= 1e-4 * np.linalg.norm(res.G)
    h = res.history
    assert h["primal"][-1] < h["primal"][0] and len(h["objective"]) == res.iterations


def test_admm_objective_recomputes_and_is_deterministic():
    ds = chessboard(n=50, seed=1)
    C = must_cannot(ds, None, rng=np.random.default_rng(4))
    a = admm(None, C, dataset=ds, rng=np.random.default_rng(5), gamma=2.0)
    b = admm(None, C, dataset=ds, rng=np.random.default_rng(5), gamma=2.0)
    assert np.array_equal(a.G, b.G) and a.iterations == b.iterations
    lap = a.arrays["laplacian"]
    L = sp.csr_matrix((lap["data"], lap["indices"], lap["indptr"]), shape=tuple(lap["shape"]))
    pairs = a.arrays["pairs"]
    K = a.G @ a.G.T
    ii, jj, T = pairs[:, 0].astype(int), pairs[:, 1].astype(int), pairs[:, 2]
    weight = np.where(ii == jj, 1.0, 2.0)                          # pair_count "twice"
    f = np.sum(K * L.toarray()) + 0.5 * 2.0 * np.sum(weight * (K[ii, jj] - T) ** 2)
    assert a.info["pair_count"] == "twice" and f == pytest.approx(a.objective, rel=1e-10)
    assert pcp_objective(a.G, L, pair_structure(C, ds.n, "admm"), 2.0) == pytest.approx(a.objective, rel=1e-12)


def test_gamma_held_out_selection_uses_the_constraints_only():
    """gamma from a list: the chosen one maximises the held-out pair accuracy of its curve; the final
    fit is exactly the solver at that gamma with the caller's generator; the labels play no part."""
    from kernlearn_cli.solvers.admm import heldout_pair_accuracy

    ds = chessboard(n=60, seed=2)
    C = must_cannot(ds, None, rng=np.random.default_rng(3))
    grid = [0.01, 1.0, 100.0]
    sel = admm(None, C, dataset=ds, rng=np.random.default_rng(5), gamma=grid)
    curve = sel.history["heldout_accuracy"]
    assert sel.info["gamma"] == grid[int(np.argmax(curve))] and np.all((curve >= 0) & (curve <= 1))
    direct = admm(None, C, dataset=ds, rng=np.random.default_rng(5), gamma=sel.info["gamma"])
    assert np.array_equal(sel.G, direct.G)
    relabelled = Dataset(ds.name, X=ds.X, y=ds.y[::-1].copy(), classes=ds.classes)
    again = admm(None, C, dataset=relabelled, rng=np.random.default_rng(5), gamma=grid)
    assert np.array_equal(again.history["heldout_accuracy"], curve)
    # the chosen gamma reaches a table through evaluator solver_info
    from kernlearn_cli.evaluate.kernel import solver_info

    assert solver_info(sel.G, ds, rng=None, result=sel, keys=["gamma"]) == {"gamma": sel.info["gamma"]}
    with pytest.raises(ConfigError, match="no number 'lam'.*gamma"):
        solver_info(sel.G, ds, rng=None, result=sel, keys=["lam"])
    # the score: must-links (1) at cos >= 1/2, cannot-links (0) below, no label involved
    from kernlearn_cli.types import Constraints

    G = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 1.0], [1.0, 0.1]])
    pairs = Constraints.from_lists([0, 0, 2], [1, 2, 3], ["sim_eq"] * 3, [1.0, 0.0, 1.0])
    assert heldout_pair_accuracy(G, pairs) == pytest.approx(2 / 3)
    with pytest.raises(ConfigError, match="select_folds"):
        admm(None, C, dataset=ds, rng=np.random.default_rng(5), gamma=grid, select_folds=1)


def test_admm_bad_input():
    ds = chessboard(n=30, seed=0)
    C = must_cannot(ds, None, rng=np.random.default_rng(0))
    rng = np.random.default_rng(0)
    with pytest.raises(ConfigError, match="rank = 31 must be between 1 and n = 30"):
        admm(None, C, dataset=ds, rng=rng, rank=31)
    with pytest.raises(ConfigError, match="neighbors = 30"):
        admm(None, C, dataset=ds, rng=rng, neighbors=30)
    with pytest.raises(ConfigError, match=r"gamma: expected a float in \(0, inf\) or a list"):
        admm(None, C, dataset=ds, rng=rng, gamma=0.0)
    from kernlearn_cli.types import Constraints

    with pytest.raises(ConfigError, match="sim_eq"):
        admm(None, Constraints.from_lists([0], [1], ["dist_le"], [1.0]), dataset=ds, rng=rng)


@pytest.mark.slow
def test_cli_run_writes_what_the_objective_needs(tmp_path):
    """End to end: the factors file alone recomputes the objective (laplacian CSR, pairs, gamma,
    pair_count), and a user mistake (rank > n) is one clear error."""
    import h5py
    import yaml

    from helpers import kernlearn

    cfg = {"name": "admm_cli", "seed": 0, "dataset": {"name": "chessboard", "n": 40},
           "constraints": {"name": "must_cannot"},
           "solver": {"name": "admm", "gamma": 2.0, "max_iter": 300},
           "evaluate": [{"name": "pairwise_accuracy"}]}
    path = tmp_path / "admm.yaml"
    path.write_text(yaml.safe_dump(cfg))
    out = tmp_path / "out"
    proc = kernlearn("run", str(path), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    (factors,) = out.glob("*/factors.h5")
    with h5py.File(factors) as f:
        G = f["G"][()]
        lap = f["laplacian"]
        L = sp.csr_matrix((lap["data"][()], lap["indices"][()], lap["indptr"][()]), shape=tuple(lap["shape"][()]))
        pairs = f["pairs"][()]
        attrs = dict(f.attrs)
    K = G @ G.T
    i, j, T = pairs[:, 0].astype(int), pairs[:, 1].astype(int), pairs[:, 2]
    weight = np.where(i == j, 1.0, 2.0) if attrs["pair_count"] == "twice" else 1.0
    f_file = np.sum(K * L.toarray()) + 0.5 * attrs["gamma"] * np.sum(weight * (K[i, j] - T) ** 2)
    assert f_file == pytest.approx(attrs["objective"], rel=1e-10)
    cfg["solver"]["rank"] = 41
    path.write_text(yaml.safe_dump(cfg))
    proc = kernlearn("run", str(path), "--out", str(tmp_path / "bad"))
    assert proc.returncode == 2 and "rank = 41 must be between 1 and n = 40" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_primal_residual_evaluator_reads_eq_14_relative_to_V():
    """Evaluator primal_residual: ||V - U||_F / ||V||_F of the last iteration, the value the
    certificate's primal check holds (computed there from the kernels' sums); above tol after 3
    iterations, at most tol where the run stopped on its tolerance; refused for other solvers."""
    from kernlearn_cli.evaluate.kernel import primal_residual
    from kernlearn_cli.solvers.baseline import initial

    ds = chessboard(n=60, seed=0)
    C = must_cannot(ds, None, rng=np.random.default_rng(3))
    short = admm(None, C, dataset=ds, rng=np.random.default_rng(5), max_iter=3, tol=1e-6)
    done = admm(None, C, dataset=ds, rng=np.random.default_rng(5), tol=1e-6, max_iter=5000)
    for res in (short, done):
        value = primal_residual(res.G, ds, rng=None, result=res)["primal_residual"]
        assert value == pytest.approx(res.certificate["checks"]["primal_residual"]["value"], rel=1e-10)
        assert value == pytest.approx(res.info["v_minus_u"] / np.linalg.norm(res.G), rel=1e-10)
    assert primal_residual(short.G, ds, rng=None, result=short)["primal_residual"] > 1e-6
    assert done.certificate["stopped_by"] == "tolerance"
    assert primal_residual(done.G, ds, rng=None, result=done)["primal_residual"] <= 1e-6
    other = initial(np.eye(60)[:, :2], C)
    with pytest.raises(ConfigError, match="primal_residual"):
        primal_residual(other.G, ds, rng=None, result=other)
