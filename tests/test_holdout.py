"""The ``holdout`` setting of every dataset (:mod:`kernlearn_cli.data.holdout`): points held out of
everything the solver sees and scored afterwards through the learned kernel's inductive map
(``seen: false``), or kept in the solver's data, never labeled, and scored alike (``seen: true``)."""

import numpy as np
import pytest
import yaml

from helpers import kernlearn
from kernlearn_cli.config import Cell
from kernlearn_cli.data.holdout import check_holdout, split_holdout
from kernlearn_cli.data.subset import subset_rows
from kernlearn_cli.errors import ConfigError
from kernlearn_cli.experiment import heldout_factor, run_cell
from kernlearn_cli.factors import read_factors
from kernlearn_cli.prepare import prepare
from kernlearn_cli.registry import datasets
from kernlearn_cli.rng import STREAM_EVALUATE, STREAM_SOLVER, component_rng
from kernlearn_cli.solvers.nystrom import factor_rows, psd_sqrt, select_landmarks

N_OUT = 30            # of wine's 178 points


def config(seen=False, solver=None, seed=0, **holdout):
    return {"name": "h", "seed": seed, "dataset": {"name": "wine", "holdout": {"size": N_OUT, "seen": seen, **holdout}},
            "constraints": {"name": "labeled_subset", "count": 40},
            "solver": solver or {"name": "nystrom", "landmarks": 12, "landmark_method": "kmeans"},
            "evaluate": [{"name": "svm_accuracy", "cv": True}]}


def held_rows(seed=0):
    wine = datasets.get("wine").func()
    return wine, subset_rows(wine.y, wine.n, N_OUT, seed, "t")


def row_set(X):
    return {tuple(np.round(x, 12)) for x in X}


def test_the_held_out_rows_never_reach_the_solver(tmp_path):
    """Unseen: the solver's dataset is wine without the drawn rows; its k-means landmarks are those of
    the training part alone (a held-out row fed to k-means would move them), and G has n - N rows."""
    wine, held = held_rows()
    prep = prepare(Cell(0, config()))
    assert prep.dataset.n == wine.n - N_OUT and prep.solver_extra["dataset"] is prep.dataset
    assert not row_set(prep.dataset.X) & row_set(wine.X[held])
    assert np.array_equal(prep.dataset.heldout.X, wine.X[held]) and np.array_equal(prep.dataset.heldout.y, wine.y[held])
    record = run_cell(Cell(0, config()), tmp_path)
    assert record["n"] == wine.n - N_OUT
    f = read_factors(next(tmp_path.glob("*/factors.h5")))
    assert f["G"].shape[0] == wine.n - N_OUT
    train = np.setdiff1d(np.arange(wine.n), held)
    Z = select_landmarks(wine.X[train], 12, "kmeans", component_rng(0, STREAM_SOLVER))
    assert np.allclose(f["landmarks"], Z)
    assert f["labels"].shape == (wine.n - N_OUT,) and f["constraints"].i.max() < wine.n - N_OUT


def test_uniform_landmarks_are_never_held_out_points():
    wine, held = held_rows(5)
    cell = Cell(0, config(solver={"name": "nystrom", "landmarks": 40, "landmark_method": "uniform"}, seed=5))
    prep = prepare(cell)
    result = prep.bound["solver"][0].func(prep.G0, prep.constraints, **prep.solver_extra, **prep.bound["solver"][1])
    assert not row_set(result.arrays["landmarks"]) & row_set(wine.X[held])


def test_the_draw_is_deterministic_in_its_seed_and_defaults_to_the_cells():
    wine = datasets.get("wine").func()
    a, b, c = (split_holdout(wine, N_OUT, 0.0, s, False, "t") for s in (3, 3, 4))
    assert np.array_equal(a.heldout.X, b.heldout.X) and not np.array_equal(a.heldout.X, c.heldout.X)
    assert check_holdout({"fraction": 0.2}, 7, "w") == {"size": 0, "fraction": 0.2, "seed": 7, "seen": False}
    assert check_holdout({"size": 5, "seed": 2, "seen": True}, 7, "w")["seed"] == 2
    for seed in (0, 1):
        ds = prepare(Cell(0, config(seed=seed))).dataset
        assert np.array_equal(ds.heldout.X, wine.X[held_rows(seed)[1]])
    assert split_holdout(wine, 0, 0.2, 0, False, "t").heldout.n == round(0.2 * 178)


def test_mapped_rows_are_the_learned_kernels_rows_of_the_new_points(tmp_path):
    """E_x S^{1/2} of the held-out rows, computed directly from the result's landmarks, S and width
    (Zhang et al. 2012: K_xy = E_x S E_y^T for any pair), and the metric is the SVM's score on them."""
    from sklearn.svm import LinearSVC

    from kernlearn_cli.constraints.labeled import labeled_indices
    from kernlearn_cli.evaluate._common import seed_from

    cell = Cell(0, config(solver={"name": "nystrom_prior", "landmarks": 12, "landmark_method": "uniform"}))
    prep = prepare(cell)
    result = prep.bound["solver"][0].func(prep.G0, prep.constraints, **prep.solver_extra, **prep.bound["solver"][1])
    rows = heldout_factor(result, prep)
    a = result.arrays
    direct = factor_rows(prep.dataset.heldout.X, a["landmarks"], float(a["kernel_width"]), psd_sqrt(a["S"]))
    assert rows.shape == (N_OUT, result.G.shape[1]) and np.array_equal(rows, direct)
    record = run_cell(cell, tmp_path)
    lab = labeled_indices(prep.constraints)
    seed = seed_from(component_rng(0, STREAM_EVALUATE, 0))
    clf = LinearSVC(C=1.0, dual="auto", max_iter=10000, random_state=seed).fit(result.G[lab], prep.dataset.y[lab])
    assert record["metrics"]["svm_accuracy_heldout"] == clf.score(direct, prep.dataset.heldout.y)


def test_through_the_initial_factor_the_map_is_kernlearn_embeds(tmp_path):
    """A solver in the range of K0 (burg, linear K0): the held-out rows are what ``kernlearn embed``
    computes from the cell's factors file for the same points."""
    from kernlearn_cli.embed import embed_rows

    cfg = {**config(), "kernel": {"name": "linear", "standardize": True},
           "constraints": {"name": "random_pairs", "count": 30}, "solver": {"name": "burg", "tol": 1e-9}}
    cell = Cell(0, cfg)
    prep = prepare(cell)
    result = prep.bound["solver"][0].func(prep.G0, prep.constraints, **prep.solver_extra, **prep.bound["solver"][1])
    rows = heldout_factor(result, prep)
    run_cell(cell, tmp_path)
    assert np.allclose(rows, embed_rows(next(tmp_path.glob("*/factors.h5")), prep.dataset.heldout.X), atol=1e-10)


def test_seen_and_unseen_score_the_same_rows_with_the_same_labels(tmp_path):
    unseen, seen = (prepare(Cell(0, config(seen=s))) for s in (False, True))
    k = unseen.dataset.n
    assert seen.dataset.n == k + N_OUT
    assert np.array_equal(seen.dataset.X[:k], unseen.dataset.X)                  # the training part first
    assert np.array_equal(seen.dataset.X[k:], unseen.dataset.heldout.X)          # then the held-out rows
    assert np.array_equal(seen.dataset.heldout.y, unseen.dataset.heldout.y)
    for key in ("i", "j", "kind", "bound"):                                      # the same labeled points
        assert np.array_equal(getattr(seen.constraints, key), getattr(unseen.constraints, key))
    result = seen.bound["solver"][0].func(seen.G0, seen.constraints, **seen.solver_extra, **seen.bound["solver"][1])
    assert np.array_equal(heldout_factor(result, seen), result.G[k:])
    a, b = (run_cell(Cell(0, config(seen=s)), tmp_path / str(s))["metrics"] for s in (False, True))
    assert set(a) == set(b) >= {"svm_accuracy_heldout", "svm_accuracy_cv_heldout", "svm_accuracy_cv"}


def test_seen_rows_are_scored_apart_from_the_training_parts_test_points(monkeypatch):
    """seen: true — svm_accuracy tests on the training part's unlabeled points only (the same count as
    unseen), the held-out rows only in the *_heldout scores."""
    from kernlearn_cli.evaluate import supervised

    seen = prepare(Cell(0, config(seen=True)))
    G = np.random.default_rng(0).normal(size=(seen.dataset.n, 5))
    tested = []
    real = supervised.labeled_split
    monkeypatch.setattr(supervised, "labeled_split", lambda *a: tested.append(real(*a)) or tested[-1])
    out = supervised.svm_accuracy(G, seen.dataset, rng=np.random.default_rng(0), constraints=seen.constraints,
                                  heldout=G[-N_OUT:])
    lab, test = tested[0]
    assert test.max() < seen.dataset.n - N_OUT and lab.size + test.size == seen.dataset.n - N_OUT
    assert "svm_accuracy_heldout" in out and "svm_accuracy_cv_heldout" not in out


@pytest.mark.parametrize("holdout,message", [
    ({"size": 178}, r"holdout: size 178 holds out 178 of the dataset's 178 points, leaving none"),
    ({"size": 2}, r"holdout: size 2 holds out 2 point\(s\), fewer than the dataset's 3 classes"),
    ({"fraction": 0.01}, r"fraction 0.01 \(round\(0.01 × 178\) = 2 points\) holds out 2 point\(s\), fewer"),
    ({"size": 10, "seeen": True}, r"dataset.holdout: unknown key 'seeen'. Valid keys: size, fraction, seed, seen"),
    ({"size": 10, "fraction": 0.1}, r"dataset.holdout: give exactly one of size .* and fraction"),
    ({"seed": 1}, r"dataset.holdout: give exactly one of size"),
    ({"size": 10, "seen": "maybe"}, r"dataset.holdout.seen: expected"),
])
def test_bad_holdouts_are_one_config_error_naming_the_key(holdout, message):
    cfg = config()
    cfg["dataset"]["holdout"] = holdout
    with pytest.raises(ConfigError, match=message):
        prepare(Cell(0, cfg))


def test_a_transductive_solver_with_unseen_points_is_refused_before_solving():
    cfg = {**config(), "kernel": {"name": "linear"}, "solver": {"name": "initial"}}
    with pytest.raises(ConfigError, match=r"dataset.holdout: solver 'initial' is transductive .* seen: true"):
        prepare(Cell(0, cfg))
    cfg["dataset"]["holdout"]["seen"] = True                         # seen: nothing to map
    assert prepare(Cell(0, cfg)).dataset.n == 178
    cfg = {**config(), "kernel": {"name": "laplacian_pinv"}, "solver": {"name": "burg"},
           "constraints": {"name": "random_pairs", "count": 10}}
    with pytest.raises(ConfigError, match=r"dataset.holdout: solver 'burg' maps new points through the initial "
                                          r"kernel, but kernel 'laplacian_pinv' is defined on the training points"):
        prepare(Cell(0, cfg))


def test_the_command_line_says_it_in_one_paragraph(tmp_path):
    cfg = {**config(), "kernel": {"name": "linear"}, "solver": {"name": "initial"}}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    run = kernlearn("run", tmp_path / "c.yaml", "--out", tmp_path / "out")
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert "dataset.holdout: solver 'initial' is transductive" in run.stderr


def test_the_holdout_is_part_of_the_cell_id():
    ids = {Cell(0, config(seen=s, **extra)).id for s in (False, True) for extra in ({}, {"seed": 1})}
    assert len(ids) == 4
