"""Constraint generator ``itml_pairs`` (ITML's thresholds; Li et al. 2009, Sec. 6.1) and the linear
kernel's ``standardize`` setting, against references computed another way."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from kernlearn_cli.config import Cell
from kernlearn_cli.constraints.pairs import sample_pairs
from kernlearn_cli.errors import ConfigError, DataError
from kernlearn_cli.inductive import linear_rows
from kernlearn_cli.registry import constraints, kernels
from kernlearn_cli.types import KIND_CODE, Dataset

itml_pairs = constraints.get("itml_pairs").func
linear = kernels.get("linear").func


def percentile(values, p):
    """The p-th percentile by its definition (linear interpolation between order statistics)."""
    v = sorted(values)
    h = (len(v) - 1) * p / 100.0
    lo = math.floor(h)
    return v[lo] + (h - lo) * (v[min(lo + 1, len(v) - 1)] - v[lo])


def sqdist(X, a, b):
    return sum((float(x) - float(y)) ** 2 for x, y in zip(X[a], X[b]))


@pytest.fixture
def toy():
    """12 points in 3-D, two classes; rows 3 and 7 coincide, so do rows 5 and 10 (different classes)."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(12, 3)) * [1.0, 3.0, 0.5]
    X[7] = X[3]
    X[10] = X[5]
    y = np.array([0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1])
    return Dataset("toy", X=X, y=y)


def test_all_usable_pairs_give_the_brute_force_percentiles(toy):
    usable = [(a, b) for a, b in itertools.combinations(range(12), 2) if sqdist(toy.X, a, b) > 0]
    assert len(usable) == 66 - 2
    C = itml_pairs(toy, toy.X, rng=np.random.default_rng(0), count=len(usable))
    assert sorted(zip(C.i.tolist(), C.j.tolist())) == usable           # every usable pair once, i < j
    d = [sqdist(toy.X, a, b) for a, b in usable]
    u, l = percentile(d, 5), percentile(d, 95)
    same = toy.y[C.i] == toy.y[C.j]
    assert np.array_equal(C.kind, np.where(same, KIND_CODE["dist_le"], KIND_CODE["dist_ge"]))
    np.testing.assert_allclose(C.bound[same], u, rtol=1e-12)
    np.testing.assert_allclose(C.bound[~same], l, rtol=1e-12)


@pytest.mark.parametrize("percentiles", [(5.0, 95.0), (20.0, 70.0), (0.0, 100.0)])
def test_thresholds_are_the_percentiles_of_the_drawn_pairs(toy, percentiles):
    C = itml_pairs(toy, toy.X, rng=np.random.default_rng(3), count=9, percentiles=list(percentiles))
    assert len(C) == 9 and len(set(zip(C.i.tolist(), C.j.tolist()))) == 9
    d = [sqdist(toy.X, a, b) for a, b in zip(C.i, C.j)]
    assert min(d) > 0                                                     # no coincident pair drawn
    same = toy.y[C.i] == toy.y[C.j]
    expected = np.where(same, percentile(d, percentiles[0]), percentile(d, percentiles[1]))
    np.testing.assert_allclose(C.bound, expected, rtol=1e-12)


def test_pairs_are_sample_pairs_draw_when_no_pair_coincides(toy):
    X = toy.X.copy()
    X[7] += 1.0
    X[10] -= 1.0
    ds = Dataset("distinct", X=X, y=toy.y)
    C = itml_pairs(ds, X, rng=np.random.default_rng(11), count=20)
    i, j = sample_pairs(12, 20, np.random.default_rng(11))
    assert np.array_equal(C.i, i) and np.array_equal(C.j, j)


def test_coincident_rows_are_skipped_and_the_draw_stays_full(toy):
    for seed in range(20):
        C = itml_pairs(toy, toy.X, rng=np.random.default_rng(seed), count=40)
        pairs = set(zip(C.i.tolist(), C.j.tolist()))
        assert len(pairs) == 40 and not pairs & {(3, 7), (5, 10)}


def test_the_distances_are_those_of_the_reference_factor(toy):
    G = toy.X @ np.diag([2.0, 0.1, 1.0])                    # a reference other than the features
    C = itml_pairs(toy, G, rng=np.random.default_rng(0), count=64)
    d = [sqdist(G, a, b) for a, b in zip(C.i, C.j)]
    same = toy.y[C.i] == toy.y[C.j]
    np.testing.assert_allclose(C.bound[same], percentile(d, 5), rtol=1e-12)


def test_same_seed_same_bits_and_another_seed_other_pairs(toy):
    a = itml_pairs(toy, toy.X, rng=np.random.default_rng([5, 1, 0]), count=30)
    b = itml_pairs(toy, toy.X, rng=np.random.default_rng([5, 1, 0]), count=30)
    c = itml_pairs(toy, toy.X, rng=np.random.default_rng([6, 1, 0]), count=30)
    for field in ("i", "j", "kind", "bound"):
        assert getattr(a, field).tobytes() == getattr(b, field).tobytes()
    assert not (np.array_equal(a.i, c.i) and np.array_equal(a.j, c.j))


def test_count_above_the_usable_pairs_is_refused(toy):
    with pytest.raises(ConfigError, match=r"constraints.count = 65 exceeds the 64 usable pairs of 12 points"):
        itml_pairs(toy, toy.X, rng=np.random.default_rng(0), count=65)
    with pytest.raises(ConfigError, match="constraints.count = 67 exceeds the 66 distinct pairs"):
        itml_pairs(toy, toy.X, rng=np.random.default_rng(0), count=67)


@pytest.mark.parametrize("settings, message", [
    ({"count": 0}, r"count: expected an int in \[1, inf\), got 0"),
    ({"percentiles": [5, 101]}, r"percentiles: expected a list of floats in \[0, 100\] with exactly 2 items"),
    ({"percentiles": [5]}, "with exactly 2 items"),
    ({"percentiles": [95, 5]}, r"constraints.percentiles must be \[u, l\] with 0 <= u < l <= 100"),
    ({"percentiles": [50, 50]}, r"constraints.percentiles must be \[u, l\]"),
])
def test_bad_settings_name_the_key_and_what_is_valid(toy, settings, message):
    with pytest.raises(ConfigError, match=message):
        itml_pairs(toy, toy.X, rng=np.random.default_rng(0), **settings)


def test_a_config_is_checked_against_the_declarations():
    entry, params = constraints.bind({"name": "itml_pairs", "count": 400, "percentiles": [5, "95"]}, "x.yaml: constraints")
    assert params == {"count": 400, "percentiles": [5.0, 95.0]}
    with pytest.raises(ConfigError, match="x.yaml: constraints: unknown key 'bounds' for constraint generator 'itml_pairs'.*Valid keys: count, percentiles"):
        constraints.bind({"name": "itml_pairs", "bounds": 3}, "x.yaml: constraints")
    with pytest.raises(ConfigError, match=r"x.yaml: constraints.count: expected an int in \[1, inf\), got 1.5"):
        constraints.bind({"name": "itml_pairs", "count": 1.5}, "x.yaml: constraints")


def test_labels_and_reference_rows_are_required(toy):
    with pytest.raises(DataError, match="needs class labels"):
        itml_pairs(Dataset("unlabelled", X=toy.X), toy.X, rng=np.random.default_rng(0), count=3)
    with pytest.raises(DataError, match="reference kernel has 11 rows, but dataset 'toy' has 12 points"):
        itml_pairs(toy, toy.X[:11], rng=np.random.default_rng(0), count=3)


# ---- the linear kernel's standardize -----------------------------------------------------------

def test_standardize_is_zero_mean_unit_variance_and_constant_features_become_zero():
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.normal(5.0, 100.0, 30), rng.normal(-2.0, 0.01, 30), np.full(30, 4.0)])
    Z = linear(Dataset("d", X=X), standardize=True)
    ref = np.column_stack([(X[:, f] - X[:, f].mean()) / np.sqrt(np.mean((X[:, f] - X[:, f].mean()) ** 2))
                           for f in range(2)] + [np.zeros(30)])
    np.testing.assert_allclose(Z, ref, rtol=1e-12, atol=1e-12)
    assert np.array_equal(linear(Dataset("d", X=X)), X)                    # the default: G0 = X exactly


@pytest.mark.parametrize("rank", [0, 2])
def test_standardized_out_of_sample_rows_use_the_training_means_and_stds(rank):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(25, 4)) * [1.0, 50.0, 0.2, 7.0] + [3.0, -40.0, 0.0, 1.0]
    ds = Dataset("train", X=X)
    G0 = linear(ds, standardize=True, rank=rank)
    np.testing.assert_allclose(linear_rows(ds, X, G0, standardize=True, rank=rank), G0, atol=1e-10)
    X_new = rng.normal(size=(6, 4)) * 20.0
    Z_new = (X_new - X.mean(axis=0)) / X.std(axis=0)      # the training statistics, not the new points'
    if rank == 0:
        np.testing.assert_allclose(linear_rows(ds, X_new, G0, standardize=True), Z_new, rtol=1e-10, atol=1e-10)
    else:                                                 # K0(new, train) is kept: rows of G0 G0^T's map
        Z = (X - X.mean(axis=0)) / X.std(axis=0)
        U, s, Vt = np.linalg.svd(Z, full_matrices=False)
        np.testing.assert_allclose(linear_rows(ds, X_new, G0, standardize=True, rank=2), Z_new @ Vt[:2].T,
                                   rtol=1e-8, atol=1e-8)


def test_a_setting_left_at_its_default_keeps_the_cell_id():
    base = {"name": "x", "seed": 0, "dataset": {"name": "iris"}, "constraints": {"name": "random_pairs", "count": 10},
            "solver": {"name": "burg", "sweeps": "cyclic", "order": "fixed"},  # the defaults then
            "evaluate": []}
    plain = Cell(0, {**base, "kernel": {"name": "linear"}})
    assert "standardize" not in plain.validated["kernel"]
    # the id of this config before `standardize` existed (kernlearn 9b4a85c)
    assert plain.id == "cell_" + plain.digest and plain.digest == "7093c79c15"
    assert Cell(0, {**base, "kernel": {"name": "linear", "standardize": True}}).digest != plain.digest
