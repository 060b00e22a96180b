"""Triplet constraints (Li et al. 2009): the Constraints record, files, the runner check, neighbor_triplets."""

import numpy as np
import pytest

from kernlearn_cli.constraints.labeled import labeled_indices
from kernlearn_cli.constraints.pairs import from_file
from kernlearn_cli.constraints.triplets import neighbor_triplets
from kernlearn_cli.errors import ConfigError, DataError
from kernlearn_cli.registry import Entry, constraints as constraint_registry, solvers
from kernlearn_cli.types import KIND_CODE, KINDS, PAIR_KINDS, Constraints, Dataset, SolverResult

PATTERN = np.array([[0, -1, 1], [-1, 1, 0], [1, 0, -1]], dtype=float)   # Li et al. Table 2, rows/cols (i, j, k)


def dense_A(n, i, j, k):
    A = np.zeros((n, n))
    idx = [i, j, k]
    for a in range(3):
        for b in range(3):
            A[idx[a], idx[b]] += PATTERN[a, b]
    return A


def _rng(seed=0):
    return np.random.default_rng(seed)


# ---------------------------------------------------------------- the record

def test_kind_code_appended_at_the_end():
    assert PAIR_KINDS == KINDS[:6] == ("dist_le", "dist_ge", "sim_le", "sim_ge", "dist_eq", "sim_eq")
    assert KIND_CODE["triplet"] == 6


def test_values_match_dense_trace():
    rng = _rng(1)
    n = 9
    G = rng.standard_normal((n, 4))
    K = G @ G.T
    trip = np.array([rng.choice(n, 3, replace=False) for _ in range(30)])
    C = Constraints.triplets(trip[:, 0], trip[:, 1], trip[:, 2])
    dense = np.array([np.trace(K @ dense_A(n, *t)) for t in trip])
    np.testing.assert_allclose(C.values(G), dense, rtol=1e-12, atol=1e-12)
    d = lambda a, b: K[a, a] + K[b, b] - 2 * K[a, b]                      # noqa: E731
    np.testing.assert_allclose(dense, [d(i, j) - d(i, k) for i, j, k in trip], atol=1e-12)
    # violations: a triplet is a >= constraint on d(i, j) - d(i, k)
    np.testing.assert_allclose(C.violations(G), np.maximum(-dense, 0.0), atol=1e-12)


def test_triplets_classmethod_and_invariants():
    C = Constraints.triplets([0, 1], [2, 3], [4, 5])
    assert C.has_triplets and len(C) == 2
    assert C.kind_names() == ["triplet", "triplet"]
    assert C.bound.tolist() == [0.0, 0.0] and C.k.dtype == np.int64
    assert not Constraints.from_lists([0], [1], ["dist_le"], [1.0]).has_triplets
    with pytest.raises(ValueError, match="third index"):
        Constraints(np.array([0]), np.array([1]), np.array([KIND_CODE["triplet"]]), np.array([0.0]))
    with pytest.raises(ValueError, match="do not mix"):
        Constraints(np.array([0, 1]), np.array([1, 2]), np.array([KIND_CODE["triplet"], KIND_CODE["dist_le"]]),
                    np.zeros(2), k=np.array([2, 0]))
    sub = C.subset([1])
    assert (sub.i.tolist(), sub.j.tolist(), sub.k.tolist()) == ([1], [3], [5])


def test_labeled_indices_include_k():
    C = Constraints.triplets([0, 1], [2, 3], [7, 5])
    assert labeled_indices(C).tolist() == [0, 1, 2, 3, 5, 7]


def test_factors_file_round_trip(tmp_path):
    from kernlearn_cli.factors import read_factors, write_factors

    C = Constraints.triplets([0, 4], [1, 2], [3, 5])
    res = SolverResult(G=np.eye(6), objective=0.0, iterations=0, converged=True)
    write_factors(tmp_path / "f.h5", res, C, np.zeros(6, int), solver="x", config={}, seed=0, seconds=0.0)
    back = read_factors(tmp_path / "f.h5")["constraints"]
    assert back.has_triplets
    for name in ("i", "j", "k", "kind", "bound"):
        np.testing.assert_array_equal(getattr(back, name), getattr(C, name))
    pairs = Constraints.from_lists([0], [1], ["dist_le"], [1.0])
    write_factors(tmp_path / "p.h5", res, pairs, None, solver="x", config={}, seed=0, seconds=0.0)
    assert not read_factors(tmp_path / "p.h5")["constraints"].has_triplets


# ---------------------------------------------------------------- from_file

def _ds(n=6):
    return Dataset("toy", X=np.zeros((n, 2)), y=np.arange(n) % 2)


def _file(tmp_path, text):
    p = tmp_path / "trip.csv"
    p.write_text(text)
    return str(p)


def test_from_file_triplets(tmp_path):
    C = from_file(_ds(), None, rng=_rng(), path=_file(tmp_path, "i,j,k\n0,1,2\n5,3, 4\n"))
    assert C.has_triplets
    assert (C.i.tolist(), C.j.tolist(), C.k.tolist()) == ([0, 5], [1, 3], [2, 4])
    assert C.kind_names() == ["triplet"] * 2 and C.bound.tolist() == [0.0, 0.0]
    with pytest.raises(DataError, match=r"trip.csv' has the header 'i,j,k' but no rows"):
        from_file(_ds(), None, rng=_rng(), path=_file(tmp_path, "i,j,k\n"))


@pytest.mark.parametrize("rows, message", [
    ("0,1,2\n1,1,2\n", r"data row 2 \(line 3\): triplet \(i, j, k\) = \(1, 1, 2\) repeats an index"),
    ("0,1,0\n", r"data row 1 \(line 2\): triplet \(i, j, k\) = \(0, 1, 0\) repeats an index"),
    ("0,1,2\n0,1,2\n3,4,4\n", r"data row 3 .*\(3, 4, 4\) repeats"),
    ("0,1,2\n0,6,2\n", r"data row 2 \(line 3\): j = 6 is out of range.*6 points \(valid indices 0\.\.5\)"),
    ("-1,1,2\n", r"data row 1 .*i = -1 is out of range"),
    ("0,1,2\n0,1,2.5\n", r"data row 2 \(line 3\): column 'k' must hold integers.*got '2\.5'"),
    ("0,x,2\n", r"data row 1 .*column 'j' must hold integers.*got 'x'"),
    ("0,1,\n", r"data row 1 .*column 'k' must hold integers"),
])
def test_from_file_triplet_errors(tmp_path, rows, message):
    path = _file(tmp_path, "i,j,k\n" + rows)
    with pytest.raises(DataError, match=message) as err:
        from_file(_ds(), None, rng=_rng(), path=path)
    assert "trip.csv" in str(err.value)


def test_from_file_header_and_kind(tmp_path):
    with pytest.raises(DataError, match=r"'i,j,kind,bound' \(pairs\) or 'i,j,k' \(triplets\)"):
        from_file(_ds(), None, rng=_rng(), path=_file(tmp_path, "i,j,kk\n0,1,2\n"))
    with pytest.raises(DataError, match="header 'i,j,k'"):
        from_file(_ds(), None, rng=_rng(), path=_file(tmp_path, "i,j,kind,bound\n0,1,triplet,0\n"))
    C = from_file(_ds(), None, rng=_rng(), path=_file(tmp_path, "i,j,kind,bound\n0,1,dist_le,1.5\n"))
    assert not C.has_triplets and C.kind_names() == ["dist_le"] and C.bound.tolist() == [1.5]


# ---------------------------------------------------------------- the runner refuses non-triplet solvers

def _config(tmp_path, solver):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"""
name: trip
dataset: {{name: iris}}
kernel: {{name: linear}}
constraints: {{name: neighbor_triplets, fraction: 0.5, in_class: 2, out_class: 2}}
solver: {{name: {solver}}}
evaluate: [{{name: kpca_1nn_error, components: 2}}]
""")
    return cfg


def test_experiment_rejects_triplets_for_pair_solver(tmp_path):
    from kernlearn_cli.config import expand, load
    from kernlearn_cli.experiment import run_cell

    (cell,) = expand(load(_config(tmp_path, "burg")))
    with pytest.raises(ConfigError, match="constraint generator 'neighbor_triplets'") as err:
        run_cell(cell, tmp_path / "out", where="c.yaml")
    msg = str(err.value)
    assert "constraint generator 'neighbor_triplets'" in msg and "solver 'burg'" in msg
    able = [e.name for e in solvers.entries() if e.triplets]
    assert "initial" in able and "burg" not in able
    assert ", ".join(able) in msg
    assert not list((tmp_path / "out").rglob("*.h5"))


def test_check_triplets_lists_registered_triplet_solvers(monkeypatch):
    from kernlearn_cli.refusals import check_triplets

    solvers.names()                                     # load the built-ins first
    monkeypatch.setitem(solvers._entries, "zz_fake", Entry("zz_fake", lambda G0, c: None, "", triplets=True))
    C = Constraints.triplets([0], [1], [2])
    with pytest.raises(ConfigError, match=r"from_file.*solver 'burg'.*accepts triplets: .*zz_fake"):
        check_triplets(C, "from_file", "burg", False)
    check_triplets(C, "from_file", "zz_fake", True)                           # accepted
    check_triplets(Constraints.from_lists([0], [1], ["dist_le"], [1.0]), "x", "burg", False)


def test_baseline_runs_on_triplets(tmp_path):
    from kernlearn_cli.config import expand, load
    from kernlearn_cli.experiment import run_cell

    (cell,) = expand(load(_config(tmp_path, "initial")))
    rec = run_cell(cell, tmp_path / "out")
    assert rec["constraints"] == 75 * 2 * 2 and 0 <= rec["metrics"]["error"] <= 1


# ---------------------------------------------------------------- neighbor_triplets

def brute_force(X, y, lab, in_class, out_class):
    """Triplets by explicit loops: neighbours sorted by (exact squared distance, index)."""
    out = []
    for i in sorted(lab):
        d = {p: float(np.sum((X[i] - X[p]) ** 2)) for p in lab if p != i}
        same = sorted((p for p in d if y[p] == y[i]), key=lambda p: (d[p], p))[:in_class]
        other = sorted((p for p in d if y[p] != y[i]), key=lambda p: (d[p], p))[:out_class]
        out += [(i, j, k) for j in other for k in same]
    return np.array(out, dtype=np.int64).reshape(-1, 3)


def _toy(n=60, seed=0, sizes=(30, 22, 8)):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(len(sizes)), sizes)
    X = rng.standard_normal((n, 3)) + 1.5 * np.eye(3)[y]
    return Dataset("toy", X=X, y=y, classes=["a", "b", "c"])


def test_registered():
    assert "neighbor_triplets" in constraint_registry.names()


@pytest.mark.parametrize("in_class, out_class", [(3, 4), (10, 10), (1, 50)])
def test_neighbor_triplets_match_brute_force(in_class, out_class):
    ds = _toy()
    C = neighbor_triplets(ds, None, rng=_rng(2), fraction=0.5, in_class=in_class, out_class=out_class)
    lab = np.sort(_rng(2).choice(ds.n, size=30, replace=False))         # the same draw as the generator
    np.testing.assert_array_equal(labeled_indices(C), lab)
    ref = brute_force(ds.X, ds.y, lab, in_class, out_class)
    np.testing.assert_array_equal(np.column_stack([C.i, C.j, C.k]), ref)
    # count: sum over anchors of min(in, same-1) * min(out, others)
    counts = np.bincount(ds.y[lab], minlength=3)
    expect = sum(min(in_class, counts[ds.y[i]] - 1) * min(out_class, len(lab) - counts[ds.y[i]]) for i in lab)
    assert len(C) == expect
    # orientation: j from another class, k from the anchor's class
    assert np.all(ds.y[C.j] != ds.y[C.i]) and np.all(ds.y[C.k] == ds.y[C.i])
    assert np.all(C.i != C.k) and C.has_triplets and np.all(C.bound == 0)


def test_neighbor_triplets_defaults_give_50n():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 200)
    ds = Dataset("big", X=rng.standard_normal((400, 4)) + y[:, None], y=y)
    C = neighbor_triplets(ds, None, rng=_rng(0))
    assert len(C) == 50 * ds.n                     # 200 labeled x 10 x 10 (Li et al. Sec. 6.2)


def test_neighbor_triplets_determinism():
    ds = _toy()
    a = neighbor_triplets(ds, None, rng=_rng(7), fraction=0.4)
    b = neighbor_triplets(ds, None, rng=_rng(7), fraction=0.4)
    c = neighbor_triplets(ds, None, rng=_rng(8), fraction=0.4)
    for name in ("i", "j", "k"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert not np.array_equal(labeled_indices(a), labeled_indices(c))


def test_neighbor_triplets_ties_by_index():
    # 4 copies of one point per class: every distance within a class ties, order must be by index
    X = np.repeat(np.array([[0.0, 0.0], [5.0, 0.0]]), 4, axis=0)
    y = np.repeat([0, 1], 4)
    C = neighbor_triplets(Dataset("dup", X=X, y=y), None, rng=_rng(0), fraction=1.0, in_class=2, out_class=2)
    first = np.column_stack([C.i, C.j, C.k])[:4]
    np.testing.assert_array_equal(first, [[0, 4, 1], [0, 4, 2], [0, 5, 1], [0, 5, 2]])


def test_neighbor_triplets_kernel_only_dataset_uses_reference():
    ds = _toy()
    G_ref = ds.X * np.array([1.0, 3.0, 0.5])
    kernel_ds = Dataset("k", K=G_ref @ G_ref.T, y=ds.y)
    C = neighbor_triplets(kernel_ds, G_ref, rng=_rng(1), fraction=0.5, in_class=2, out_class=3)
    lab = labeled_indices(C)
    np.testing.assert_array_equal(np.column_stack([C.i, C.j, C.k]), brute_force(G_ref, ds.y, lab, 2, 3))
    with pytest.raises(ConfigError, match="scale_features"):
        neighbor_triplets(kernel_ds, G_ref, rng=_rng(1), scale_features="standard")


def test_neighbor_triplets_scaling():
    ds = _toy()
    ds.X[:, 0] *= 1000.0
    C = neighbor_triplets(ds, None, rng=_rng(2), fraction=0.5, in_class=2, out_class=2, scale_features="standard")
    Xs = (ds.X - ds.X.mean(0)) / ds.X.std(0)
    np.testing.assert_array_equal(np.column_stack([C.i, C.j, C.k]),
                                  brute_force(Xs, ds.y, labeled_indices(C), 2, 2))


def test_neighbor_triplets_errors():
    ds = _toy()
    with pytest.raises(DataError, match=r"every class needs at least 2 labeled points.*'c' \(\d\).*raise constraints.fraction"):
        neighbor_triplets(ds, None, rng=_rng(0), fraction=0.05)
    with pytest.raises(ConfigError, match="fraction"):
        neighbor_triplets(ds, None, rng=_rng(0), fraction=0.0)
    with pytest.raises(ConfigError, match="in_class"):
        neighbor_triplets(ds, None, rng=_rng(0), in_class=0)
    with pytest.raises(ConfigError, match="scale_features: expected one of"):
        neighbor_triplets(ds, None, rng=_rng(0), scale_features="zscore")
    with pytest.raises(DataError, match="class labels"):
        neighbor_triplets(Dataset("u", X=ds.X), None, rng=_rng(0))
    with pytest.raises(DataError, match="single class"):
        neighbor_triplets(Dataset("one", X=ds.X, y=np.zeros(ds.n, int)), None, rng=_rng(0))
