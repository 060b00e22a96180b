"""knn_accuracy at the solvers' scale (issue 56 item 3): a fold scores at most TEST_POINTS test points,
drawn from the evaluator's own generator, says how many, and reports progress per fold."""

import numpy as np

from kernlearn_cli.evaluate import knn
from kernlearn_cli import progress


class _DS:
    def __init__(self, y):
        self.y = y

    def labels(self, who):
        return self.y


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    G = rng.standard_normal((n, 4)) + y[:, None]
    return G, _DS(y)


def test_large_test_half_is_sampled_and_its_size_recorded(monkeypatch):
    monkeypatch.setattr(knn, "TEST_POINTS", 40)
    G, ds = _data(200)
    out = knn.knn_accuracy(G, ds, rng=np.random.default_rng(1), repeats=2)
    assert out["knn_test_points"] == 40
    # same draws again: deterministic from the evaluator's generator
    again = knn.knn_accuracy(G, ds, rng=np.random.default_rng(1), repeats=2)
    assert again == out


def test_small_n_unchanged_and_whole_test_half_scored():
    G, ds = _data(300)
    out = knn.knn_accuracy(G, ds, rng=np.random.default_rng(3), repeats=3)
    assert "knn_test_points" not in out                      # whole halves: the record as before
    # the protocol as before the sample rule (Kulis 2006: 50/50, 2-fold, repeated)
    from sklearn.model_selection import StratifiedKFold
    from sklearn.neighbors import KNeighborsClassifier
    from kernlearn_cli.evaluate._common import seed_from

    rng, accs = np.random.default_rng(3), []
    for _ in range(3):
        for tr, te in StratifiedKFold(n_splits=2, shuffle=True, random_state=seed_from(rng)).split(G, ds.y):
            accs.append(KNeighborsClassifier(n_neighbors=5).fit(G[tr], ds.y[tr]).score(G[te], ds.y[te]))
    assert out["knn_accuracy"] == float(np.mean(accs))
    assert out["knn_accuracy_std"] == float(np.std(accs))


def test_progress_line_per_fold_with_time_left(monkeypatch):
    lines = []
    monkeypatch.setattr(progress.PHASES, "say", lines.append)
    monkeypatch.setattr(progress, "PHASE_FIRST", 0.0)
    G, ds = _data(100)
    with progress.phase("cell-0", "evaluating 'knn_accuracy'"):
        knn.knn_accuracy(G, ds, rng=np.random.default_rng(0), repeats=2)
    folds = [line for line in lines if "fold" in line]
    assert any("fold 4 of 4" in line for line in folds)
    assert any("fold 1 of 4, about" in line and "left" in line for line in folds)


def test_plan_estimates_knn_accuracy():
    """knn_accuracy declares its cost (kernlearn plan counts it): linear in n above the sample threshold."""
    from kernlearn_cli.config import Cell
    from kernlearn_cli.estimates import estimate
    from kernlearn_cli.resources import Sized

    _, _, small, _ = knn.knn_cost(Sized((100_000, 64)))
    _, _, large, _ = knn.knn_cost(Sized((200_000, 64)))
    assert large == 2 * small                                  # the test half is a 10,000-point sample
    _, _, whole, _ = knn.knn_cost(Sized((10_000, 64)))
    assert whole == 2 * 5000 * 5000 * 64 * 10 / knn.KNN_RATE   # quadratic below it
    cell = Cell(0, {"name": "e", "seed": 0, "dataset": {"name": "iris"}, "kernel": {"name": "linear"},
                    "constraints": {"name": "idealized_pairs", "count": 10},
                    "solver": {"name": "burg"}, "evaluate": [{"name": "knn_accuracy", "repeats": 4}]})
    est = estimate(cell)
    assert est["evaluate_seconds"] == knn.knn_cost(Sized((150, 4)), repeats=4)[2]
