"""Datasets of Hu & Kwok (2013): the synthetic generators and the adult a4a-a6a approximations.

The adult tests read from the shared mirror (``../shared/datasets`` beside the
clone) into a temporary data home, never from the network; they are skipped when
the mirror is absent.
"""

import inspect

import numpy as np
import pytest

from kernlearn_cli.data import synthetic, uci
from kernlearn_cli.errors import ConfigError
from kernlearn_cli.registry import datasets



def check_types(ds, n, d):
    assert ds.X.shape == (n, d) and ds.X.dtype == np.float64
    assert ds.y.dtype == np.int64 and sorted(set(ds.y.tolist())) == list(range(len(ds.classes)))


# ---------------------------------------------------------------- synthetic

@pytest.mark.parametrize("loader, d", [(synthetic.chessboard, 2), (synthetic.double_spiral, 3)])
def test_table1_synthetic_shapes(loader, d):
    ds = loader()
    check_types(ds, 100, d)
    assert ds.classes == [0, 1] and np.bincount(ds.y).tolist() == [50, 50]
    assert ds.name == loader.__name__ and ds.meta["seed"] == 0 and ds.meta["n"] == 100
    assert "generator" in ds.meta


@pytest.mark.parametrize("board", [2, 4])
def test_chessboard_labels_are_cell_parity(board):
    ds = synthetic.chessboard(n=500, seed=3, board=board)
    assert ds.X.min() >= 0 and ds.X.max() < board
    assert np.array_equal(ds.y, np.floor(ds.X).astype(int).sum(axis=1) % 2)
    assert np.bincount(ds.y).tolist() == [250, 250]
    assert len({tuple(c) for c in np.floor(ds.X).astype(int)}) == board * board


def test_double_spiral_without_noise_lies_on_the_spirals():
    ds = synthetic.double_spiral(n=51, noise=0.0)
    t = ds.X[:, 2]
    a = 4 * np.pi * t + np.pi * ds.y
    assert np.allclose(ds.X[:, 0], t * np.cos(a)) and np.allclose(ds.X[:, 1], t * np.sin(a))
    assert np.bincount(ds.y).tolist() == [25, 26] and ds.meta["noise"] == 0.0


def test_two_gaussians_means():
    ds = synthetic.two_gaussians(n=2000)
    check_types(ds, 2000, 10)
    assert np.bincount(ds.y).tolist() == [1000, 1000]
    assert np.allclose(ds.X[ds.y == 0].mean(axis=0), 1.0, atol=0.15)
    assert np.allclose(ds.X[ds.y == 1].mean(axis=0), -1.0, atol=0.15)
    assert np.allclose(ds.X[ds.y == 0].std(axis=0), 1.0, atol=0.15)
    assert synthetic.two_gaussians(n=7, dim=3).X.shape == (7, 3)
    assert np.bincount(synthetic.two_gaussians(n=7, dim=3).y).tolist() == [3, 4]


@pytest.mark.parametrize("loader", [synthetic.chessboard, synthetic.double_spiral, synthetic.two_gaussians])
def test_synthetic_deterministic(loader):
    a, b, c = loader(seed=5), loader(seed=5), loader(seed=6)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.y, b.y) and a.meta == b.meta
    assert not np.array_equal(a.X, c.X)
    assert loader(n=2).classes == [0, 1] and sorted(loader(n=2).y.tolist()) == [0, 1]


@pytest.mark.parametrize("call, match", [
    (lambda: synthetic.chessboard(n=1), r"^dataset 'chessboard': n: expected an int in \[2, inf\), got 1\.$"),
    (lambda: synthetic.chessboard(n=10.0), "chessboard': n: expected an int"),
    (lambda: synthetic.chessboard(seed=-1), r"seed: expected an int in \[0, inf\), got -1"),
    (lambda: synthetic.double_spiral(n=0), "double_spiral': n: expected an int in"),
    (lambda: synthetic.double_spiral(noise=-0.1), r"noise: expected a float in \[0, inf\), got -0.1"),
    (lambda: synthetic.double_spiral(noise=float("nan")), "noise: expected .* got nan"),
    (lambda: synthetic.double_spiral(noise=float("inf")), "noise: expected .* got inf"),
    (lambda: synthetic.two_gaussians(n=1), "two_gaussians': n: expected"),
    (lambda: synthetic.two_gaussians(dim=0), r"dim: expected an int in \[1, inf\), got 0"),
    (lambda: uci.adult_a4a_approx(subset_seed=-2), r"adult_a4a_approx': subset_seed: expected an int in \[0, inf\)"),
])
def test_invalid_values(empty_home, call, match):
    with pytest.raises(ConfigError, match=match):
        call()


def test_registered_with_keyword_params():
    names = {"chessboard", "double_spiral", "two_gaussians", "adult_a4a_approx", "adult_a5a_approx",
             "adult_a6a_approx"}
    assert names <= set(datasets.names())
    for name in names:
        entry = datasets._entries[name]
        assert entry.summary
        for p in inspect.signature(entry.func).parameters.values():
            assert p.kind is p.KEYWORD_ONLY and p.annotation is not p.empty and p.default is not p.empty
    _, params = datasets.bind({"name": "double_spiral", "noise": "0.1", "n": 40}, "test: dataset")
    assert params == {"noise": 0.1, "n": 40}


# ---------------------------------------------------------------- adult approximations

@pytest.mark.slow
def test_adult_approx(home):
    pool = uci.adult_a1a(split="all")
    keys = {row.tobytes() + bytes([label]) for row, label in zip(pool.X, pool.y)}
    for k, n in ((4, 4781), (5, 6414), (6, 11220)):
        ds = getattr(uci, f"adult_a{k}a_approx")()
        check_types(ds, n, 123)
        assert ds.name == f"adult_a{k}a_approx" and ds.classes == [-1, 1]
        assert {key: ds.meta[key] for key in ("approximates", "source", "subset_seed")} == {
            "approximates": f"a{k}a", "source": "a1a + a1a.t", "subset_seed": 0}
        assert set(np.unique(ds.X)) == {0.0, 1.0}
        assert all(row.tobytes() + bytes([label]) in keys for row, label in zip(ds.X, ds.y))
        rows = np.sort(np.random.default_rng(0).choice(pool.n, n, replace=False))
        assert np.array_equal(ds.X, pool.X[rows]) and np.array_equal(ds.y, pool.y[rows])


@pytest.mark.slow
def test_adult_approx_deterministic(home):
    a, b, c = uci.adult_a4a_approx(), uci.adult_a4a_approx(), uci.adult_a4a_approx(subset_seed=1)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.y, b.y)
    assert not np.array_equal(a.X, c.X) and c.meta["subset_seed"] == 1
