"""The ``subset`` setting of every dataset (:mod:`kernlearn_cli.data.subset`): a stratified random subset,
per class in proportion to its size by largest remainder, drawn by the stated rule."""

import numpy as np
import pytest

from kernlearn_cli.data.subset import check_subset, stratified_subset, subset_rows
from kernlearn_cli.errors import ConfigError, DataError
from kernlearn_cli.registry import datasets
from kernlearn_cli.types import Dataset


def largest_remainder(counts, size):
    """Hamilton's apportionment, written out: floors, then one more seat per largest remainder."""
    n = sum(counts)
    quotas = [size * c / n for c in counts]
    seats = [int(q) for q in quotas]
    for k in sorted(range(len(counts)), key=lambda k: (-(quotas[k] - seats[k]), k))[:size - sum(seats)]:
        seats[k] += 1
    return seats


@pytest.mark.parametrize("counts,size", [([59, 71, 48], 52), ([5, 5, 5], 7), ([10, 2, 30], 20), ([3, 3], 6)])
def test_each_class_keeps_its_share_drawn_by_the_stated_rule(counts, size):
    y = np.repeat(np.arange(len(counts)), counts)[np.random.default_rng(1).permutation(sum(counts))]
    rows = subset_rows(y, y.size, size, seed=3, where="t")
    assert np.bincount(y[rows], minlength=len(counts)).tolist() == largest_remainder(counts, size)
    rng = np.random.default_rng(3)
    expected = [np.sort(rng.choice(np.flatnonzero(y == c), m, replace=False))
                for c, m in enumerate(largest_remainder(counts, size))]
    assert np.array_equal(rows, np.concatenate(expected))
    assert np.array_equal(rows, subset_rows(y, y.size, size, seed=3, where="t"))          # deterministic
    assert not np.array_equal(rows, subset_rows(y, y.size, size, seed=4, where="t")) or size == y.size


def test_quotas_over_many_counts_and_sizes_sum_to_the_size_each_within_one_of_its_share():
    """Property test over 300 random (class counts, size), including the audit's [5, 5, 5] with size 8
    (exact shares 8/3: rounding gives 3 + 3 + 3 and the remainder step then adds two more, 11 rows):
    exactly ``size`` rows, class c keeps floor or ceil of size n_c / n (within 1 of its share), the
    counts are Hamilton's apportionment written out, and the same call gives the same rows."""
    rng = np.random.default_rng(55)
    cases = [([5, 5, 5], 8), ([5, 5, 5], 11), ([1, 1, 1, 1], 3)] + [
        (rng.integers(1, 25, size=rng.integers(2, 7)).tolist(), None) for _ in range(300)]
    checked = 0
    for counts, size in cases:
        n = sum(counts)
        size = size or int(rng.integers(1, n + 1))
        y = np.repeat(np.arange(len(counts)), counts)[rng.permutation(n)]
        share = size * np.array(counts) / n
        try:
            rows = subset_rows(y, n, size, seed=7, where="t")
        except DataError:           # refused only when the apportionment leaves a class without a point
            assert min(largest_remainder(counts, size)) == 0, (counts, size)
            continue
        kept = np.bincount(y[rows], minlength=len(counts))
        assert rows.size == size and np.unique(rows).size == size, (counts, size, kept)
        assert np.all((kept == np.floor(share)) | (kept == np.ceil(share))), (counts, size, kept)
        assert np.all(np.abs(kept - share) < 1), (counts, size, kept)
        assert kept.tolist() == largest_remainder(counts, size), (counts, size, kept)
        assert np.array_equal(rows, subset_rows(y, n, size, seed=7, where="t"))
        checked += 1
    assert checked >= 150


def test_wine_52_is_the_papers_size_in_wines_proportions():
    wine = datasets.get("wine").func()
    sub = stratified_subset(wine, 52, 0, "wine")
    assert sub.n == 52 and np.bincount(sub.y).tolist() == [17, 21, 14]
    rows = subset_rows(wine.y, wine.n, 52, 0, "wine")
    assert np.array_equal(sub.X, wine.X[rows]) and sub.meta["subset"] == {"size": 52, "seed": 0, "of": 178}


def test_a_kernel_dataset_and_an_unlabelled_one():
    K = np.arange(36.0).reshape(6, 6)
    sub = stratified_subset(Dataset("k", K=K), 3, 0, "k")
    rows = np.sort(np.random.default_rng(0).choice(6, 3, replace=False))
    assert np.array_equal(sub.K, K[np.ix_(rows, rows)]) and sub.y is None and sub.X is None


def test_bad_subsets_name_the_key_and_what_is_valid():
    assert check_subset({"size": 5}, "w") == {"size": 5, "seed": 0}
    with pytest.raises(ConfigError, match=r"w: expected a mapping with the subset's size"):
        check_subset(52, "w")
    with pytest.raises(ConfigError, match=r"w.size: expected an int in \[1, inf\), got 0"):
        check_subset({"size": 0}, "w")
    with pytest.raises(DataError, match=r"leaves out class\(es\) 1 \(class sizes 10, 1, 10\)"):
        subset_rows(np.repeat([0, 1, 2], [10, 1, 10]), 21, 5, 0, "w")


def test_the_subset_is_part_of_the_cell_id():
    """A cell's id hashes its validated config: a subset (and its size and seed) must change it, as any
    setting does, or a run with another subset would take the folder of the first as finished."""
    from kernlearn_cli.config import Cell, expand

    def cell_id(**dataset):
        return Cell(0, {"name": "x", "seed": 0, "dataset": {"name": "wine", **dataset}, "kernel": {"name": "linear"},
                        "constraints": {"name": "random_pairs", "count": 5}, "solver": {"name": "burg"}}).id

    ids = [cell_id(), cell_id(subset={"size": 52}), cell_id(subset={"size": 60}), cell_id(subset={"size": 52, "seed": 1})]
    assert len(set(ids)) == 4
    assert cell_id(subset={"size": 52}) == cell_id(subset={"size": 52, "seed": 0})
    grid = expand({"name": "x", "seed": 0, "grid": {"dataset.subset.size": [40, 52]},
                   "dataset": {"name": "wine", "subset": {"size": 10}}, "kernel": {"name": "linear"},
                   "constraints": {"name": "random_pairs", "count": 5}, "solver": {"name": "burg"}})
    assert [c.id.split("_")[0] for c in grid] == ["size-40", "size-52"]          # a grid axis like any setting
