"""Inductive use of a learned kernel through the initial factor (``kernlearn embed``).

A kernel learned in the range of K0, K = G0 L Lᵀ G0ᵀ, maps a new point x to g0(x) L, g0 the
initial kernel's out-of-sample map.  The references are refits on the union of the training and
the new points with the same constraints (on training points only): for the LogDet divergence
(``burg``) the learned kernel of the union is K0_u + K0_u S K0_u with S supported on the training
block, so with a linear K0 every block of it equals the embedding's, and with a full-rank Gaussian
K0 the training and the new-by-training blocks do (the new-by-new block is then Nyström's
k0(x, X) K0⁻¹ k0(X, y), not k0(x, y)).
"""

import numpy as np
import pytest
import yaml

from helpers import kernlearn
from kernlearn_cli.factors import read_factors

N_TRAIN = 40


@pytest.fixture(scope="module")
def points():
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))
    X, y = X[order], y[order]
    return (X - X.mean(axis=0)) / X.std(axis=0), y


def fit(tmp_path, name, X, y, kernel, solver="burg", constraints=None, n_pairs=12):
    """`kernlearn run` on features X with pair constraints among the first N_TRAIN points (the same
    pairs and bounds for every X sharing those rows); returns the cell folder."""
    folder = tmp_path / name
    folder.mkdir()
    np.save(folder / "X.npy", X)
    np.save(folder / "y.npy", y)
    if constraints is None:
        rng = np.random.default_rng(1)
        i, j = rng.choice(N_TRAIN, size=(2, 3 * n_pairs))
        keep = np.flatnonzero(i != j)[:n_pairs]
        i, j = i[keep], j[keep]
        d0 = ((X[i] - X[j]) ** 2).sum(axis=1)
        same = y[i] == y[j]
        rows = [f"{a},{b},{'dist_le' if s else 'dist_ge'},{float((0.8 if s else 1.25) * d)!r}"
                for a, b, s, d in zip(i, j, same, d0)]
        constraints = folder / "pairs.csv"
        constraints.write_text("i,j,kind,bound\n" + "\n".join(rows) + "\n")
    cfg = {"name": name, "seed": 0, "dataset": {"name": "files", "features": str(folder / "X.npy"),
                                                 "labels": str(folder / "y.npy")},
           "kernel": kernel, "constraints": {"name": "from_file", "path": str(constraints)},
           "solver": {"name": solver, "tol": 1e-12, "max_sweeps": 100000}, "evaluate": []}
    (folder / "c.yaml").write_text(yaml.safe_dump(cfg))
    run = kernlearn("run", folder / "c.yaml", "--out", folder / "out")
    assert run.returncode == 0, run.stderr
    (cell,) = (folder / "out").glob("*/factors.h5")
    return cell.parent, constraints


def embedded(tmp_path, cell, X_new):
    np.save(tmp_path / "new.npy", X_new)
    proc = kernlearn("embed", cell, tmp_path / "new.npy", "-o", tmp_path / "rows.npy")
    assert proc.returncode == 0, proc.stderr
    return np.load(tmp_path / "rows.npy")


def rel(a, b):
    return np.abs(a - b).max() / np.abs(b).max()


@pytest.mark.slow
@pytest.mark.parametrize("solver", ["burg", "von_neumann"])
@pytest.mark.parametrize("kernel", [{"name": "linear"}, {"name": "rbf", "sigma": 0.6}])
def test_training_points_give_their_rows_back(tmp_path, points, solver, kernel):
    X, y = points
    cell, _ = fit(tmp_path, "train", X[:N_TRAIN], y[:N_TRAIN], kernel, solver)
    G = read_factors(cell / "factors.h5")["G"]
    assert rel(embedded(tmp_path, cell, X[:N_TRAIN]), G) <= 1e-10


@pytest.mark.slow
def test_burg_linear_embedding_is_the_union_refit(tmp_path, points):
    """K0 = X Xᵀ: K = X A Xᵀ, and the refit on the union is X_u A X_uᵀ, every block."""
    X, y = points
    cell, pairs = fit(tmp_path, "train", X[:N_TRAIN], y[:N_TRAIN], {"name": "linear"})
    union, _ = fit(tmp_path, "union", X[:60], y[:60], {"name": "linear"}, constraints=pairs)
    G = read_factors(cell / "factors.h5")["G"]
    Ge = np.vstack([G, embedded(tmp_path, cell, X[N_TRAIN:60])])
    Gu = read_factors(union / "factors.h5")["G"]
    assert rel(Ge @ Ge.T, Gu @ Gu.T) <= 1e-8


@pytest.mark.slow
def test_burg_rbf_embedding_agrees_with_the_union_refit_where_it_must(tmp_path, points):
    """Full-rank Gaussian K0 (σ fixed, so training and union share the kernel function): the
    training block and the new-by-training block of the refit on the union are the embedding's."""
    X, y = points
    kernel = {"name": "rbf", "sigma": 0.6}
    cell, pairs = fit(tmp_path, "train", X[:N_TRAIN], y[:N_TRAIN], kernel)
    union, _ = fit(tmp_path, "union", X[:45], y[:45], kernel, constraints=pairs)
    f, fu = read_factors(cell / "factors.h5"), read_factors(union / "factors.h5")
    assert f["G0"].shape == (N_TRAIN, N_TRAIN) and fu["G0"].shape == (45, 45)      # full rank: no truncation
    Ge = np.vstack([f["G"], embedded(tmp_path, cell, X[N_TRAIN:45])])
    Ke, Ku = Ge @ Ge.T, fu["G"] @ fu["G"].T
    assert rel(Ke[:N_TRAIN, :N_TRAIN], Ku[:N_TRAIN, :N_TRAIN]) <= 1e-8
    assert rel(Ke[N_TRAIN:, :N_TRAIN], Ku[N_TRAIN:, :N_TRAIN]) <= 1e-8


@pytest.mark.slow
def test_transductive_kernels_and_solvers_are_refused(tmp_path, points):
    X, y = points
    cell, _ = fit(tmp_path, "lap", X[:N_TRAIN], y[:N_TRAIN], {"name": "laplacian_pinv", "neighbors": 5})
    np.save(tmp_path / "new.npy", X[N_TRAIN:45])
    proc = kernlearn("embed", cell, tmp_path / "new.npy")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "initial kernel 'laplacian_pinv' is defined on the training points only" in proc.stderr
    assert not list(cell.glob("embed_*"))
    np.save(tmp_path / "bad.npy", X[N_TRAIN:45, :3])
    proc = kernlearn("embed", cell, tmp_path / "bad.npy")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr


@pytest.mark.parametrize("edit", ["shuffled", "appended", None])
def test_a_cell_whose_training_file_changed_is_refused(tmp_path, points, edit):
    """The cell's record holds the sha256 of the files it read; ``embed`` compares them with the files
    now, as ``run``, ``collect`` and ``report`` do, before it reads any data: rows shuffled (same shape,
    which otherwise gave rows ~10³ times too large, exit 0) or rows appended (which otherwise blamed the
    labels: "40 labels for 45 points") are one paragraph naming the file, exit 2, nothing written."""
    X, y = points
    cell, _ = fit(tmp_path, "train", X[:N_TRAIN], y[:N_TRAIN], {"name": "rbf", "sigma": 0.6})
    features = tmp_path / "train" / "X.npy"
    before = read_factors(cell / "factors.h5")["G"]
    if edit == "shuffled":
        np.save(features, X[:N_TRAIN][np.random.default_rng(3).permutation(N_TRAIN)])
    elif edit == "appended":
        np.save(features, X[:N_TRAIN + 5])
    np.save(tmp_path / "new.npy", X[:N_TRAIN])
    proc = kernlearn("embed", cell, tmp_path / "new.npy", "-o", tmp_path / "rows.npy")
    if edit is None:
        assert proc.returncode == 0, proc.stderr
        assert rel(np.load(tmp_path / "rows.npy"), before) <= 1e-10
        return
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    message = " ".join(proc.stderr.split())
    assert f"'{features}' has changed" in message and "labels for" not in message
    assert "kernlearn run CONFIG" in message and "experiment.yaml" in message
    assert not (tmp_path / "rows.npy").exists() and not list(cell.glob("embed_*"))
