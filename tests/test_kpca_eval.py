"""Evaluator kpca_1nn_error (Li et al. 2009, Sec. 6.3): kernel PCA to 10 dimensions, then 1-NN."""

import numpy as np
import pytest

from kernlearn_cli.constraints.labeled import labeled_indices
from kernlearn_cli.errors import ConfigError, DataError
from kernlearn_cli.evaluate.kpca import kpca_1nn_error, kpca_coordinates
from kernlearn_cli.registry import evaluators
from kernlearn_cli.types import Constraints, Dataset


def _problem(n=80, r=30, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % classes
    G = rng.standard_normal((n, r)) * np.linspace(3, 0.2, r) + 0.8 * np.eye(r)[y % r]
    return G, Dataset("toy", X=G, y=y)


def _triplet_set(n, m, seed=1):
    lab = np.random.default_rng(seed).choice(n, size=m, replace=False)
    # any triplets over the labeled points: the labeled set is the set of indices used
    return Constraints.triplets(lab, np.roll(lab, 1), np.roll(lab, 2))


def slow_reference(G, y, lab, components):
    from sklearn.decomposition import KernelPCA
    from sklearn.neighbors import KNeighborsClassifier

    K = G @ G.T
    Z = KernelPCA(n_components=components, kernel="precomputed").fit_transform(K)
    test = np.setdiff1d(np.arange(len(y)), lab)
    clf = KNeighborsClassifier(n_neighbors=1).fit(Z[lab], y[lab])
    return float(np.mean(clf.predict(Z[test]) != y[test])), Z


def test_registered():
    assert "kpca_1nn_error" in evaluators.names()


@pytest.mark.parametrize("r, components", [(30, 10), (200, 10), (30, 3)])    # r = 200 > n: a wide G
def test_matches_sklearn_kernel_pca(r, components):
    G, ds = _problem(r=r)
    C = _triplet_set(ds.n, 40)
    lab = labeled_indices(C)
    ref, Zref = slow_reference(G, ds.y, lab, components)
    got = kpca_1nn_error(G, ds, rng=np.random.default_rng(0), constraints=C, components=components)
    assert got == {"error": pytest.approx(ref, abs=1e-15)}
    Z = kpca_coordinates(G, components)
    np.testing.assert_allclose(np.abs(Z), np.abs(Zref), rtol=1e-6, atol=1e-8)   # up to the sign of each axis
    D = ((Z[:, None] - Z[None]) ** 2).sum(-1)
    np.testing.assert_allclose(D, ((Zref[:, None] - Zref[None]) ** 2).sum(-1), rtol=1e-6, atol=1e-8)


def test_pair_constraints_and_perfect_separation():
    y = np.repeat([0, 1], 20)
    G = np.column_stack([10.0 * y, np.random.default_rng(0).standard_normal(40) * 0.1])
    C = Constraints.from_lists(np.arange(0, 40, 4), np.arange(1, 40, 4), ["sim_eq"] * 10, np.ones(10))
    out = kpca_1nn_error(G, Dataset("sep", X=G, y=y), rng=np.random.default_rng(0), constraints=C)
    assert out == {"error": 0.0}


def test_errors():
    G, ds = _problem()
    C = _triplet_set(ds.n, 40)
    rng = np.random.default_rng(0)
    with pytest.raises(ConfigError, match=r"components: expected an int in \[1, inf\), got 0"):
        kpca_1nn_error(G, ds, rng=rng, constraints=C, components=0)
    with pytest.raises(ConfigError, match="nothing to test on"):
        kpca_1nn_error(G, ds, rng=rng, constraints=_triplet_set(ds.n, ds.n))
    with pytest.raises(ConfigError, match="constraint set is empty"):
        kpca_1nn_error(G, ds, rng=rng, constraints=Constraints.triplets([], [], []))
    with pytest.raises(ConfigError, match="outside 0..79"):
        kpca_1nn_error(G, ds, rng=rng, constraints=Constraints.triplets([0], [1], [80]))
    with pytest.raises(DataError, match="class labels"):
        kpca_1nn_error(G, Dataset("u", X=G), rng=rng, constraints=C)
