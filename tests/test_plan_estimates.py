"""`kernlearn plan` prices each cell before it runs: K0's factor and the solver's own cost hook (issue 45)."""

import numpy as np
import pytest
import yaml

from helpers import kernlearn
from kernlearn_cli.config import Cell
from kernlearn_cli.estimates import estimate
from kernlearn_cli.builtins import load_builtins
from kernlearn_cli.registry import solvers
from kernlearn_cli.resources import DOUBLE, EIGH_RATE, GEMM_RATE, Sized, UnknownSize
from kernlearn_cli.resources import PROCESS_BYTES, PROJECTION_RATE

load_builtins()


def cell(n, d=2, kernel=None, constraints=None, solver=None):
    return Cell(0, {"name": "t", "seed": 0, "dataset": {"name": "two_gaussians", "n": n, "dim": d},
                    "kernel": kernel or {"name": "rbf"}, "constraints": constraints or {"name": "itml_pairs", "count": 50},
                    "solver": solver or {"name": "burg", "slack": 1.0}})


def test_dense_rbf_k0_is_priced_by_its_eigendecomposition_without_building_it():
    """n = 300,000: the n x n kernel (2.9 TB with its eigendecomposition) is priced, not attempted."""
    n, d = 300_000, 2
    est = estimate(cell(n, d, kernel={"name": "rbf", "factorization": "eigh"}))
    burg = DOUBLE * (3 * n * n + n * n + 6 * 50)                 # Burg at rank n, beside G0 (n x n)
    assert est["bytes"] == pytest.approx(PROCESS_BYTES + DOUBLE * n * d + max(4 * DOUBLE * n * n, DOUBLE * n * n + burg))
    assert est["seconds"] == pytest.approx(n ** 3 / EIGH_RATE + 2 * n * n * d / GEMM_RATE)
    assert est["per"] == "sweep"        # Burg at the most rank n: one sweep over the 50 constraints
    assert est["per_seconds"] == pytest.approx(50 * n * n / PROJECTION_RATE)


def test_low_rank_k0_and_burg_sweep_are_o_n_r():
    n, d, r, c = 20_000, 5, 64, 20_000
    est = estimate(cell(n, d, {"name": "rbf", "factorization": "pivoted_cholesky", "rank": r},
                        {"name": "itml_pairs", "count": c}))
    burg_bytes = DOUBLE * (3 * n * r + r * r + 6 * c)           # G0, its full-rank copy, G0 B, work; the duals
    assert est["bytes"] == pytest.approx(PROCESS_BYTES + DOUBLE * n * d + max(DOUBLE * n * (2 * r + d),
                                                                             DOUBLE * n * r + burg_bytes))
    assert est["seconds"] == pytest.approx(2 * n * r * (r + d) / 2.5e9)
    assert est["per_seconds"] == pytest.approx(c * r * r / PROJECTION_RATE)


def test_trin_and_meg_use_the_cost_they_run_under():
    n = 400
    trin = estimate(cell(n, kernel={"name": "laplacian_pinv"}, constraints={"name": "neighbor_triplets"},
                         solver={"name": "trin"}))
    own = solvers.get("trin").func.cost(Sized((n, n)), Sized((None,)))
    assert trin["bytes"] == pytest.approx(PROCESS_BYTES + DOUBLE * n * 2 + max(3 * DOUBLE * n * n, DOUBLE * n * n + own[1]))
    assert trin["per"] == ""
    meg = estimate(cell(n, kernel={"name": "identity"}, constraints={"name": "distance_stream", "count": 30},
                        solver={"name": "meg"}))
    assert meg["seconds"] == pytest.approx(solvers.get("meg").func.cost(Sized((n, n)), Sized((30,)))[2])
    eigh = estimate(cell(n, kernel={"name": "identity"}, constraints={"name": "distance_stream", "count": 30},
                         solver={"name": "meg", "update": "eigh"}))
    assert eigh["seconds"] == pytest.approx(30 * n ** 3 / EIGH_RATE)     # one eigendecomposition per trial
    assert meg["seconds"] < eigh["seconds"] / 5                           # auto: lanczos at n = 400


def test_auto_rbf_is_priced_by_the_path_it_takes():
    """Above EIGH_MAX_N the default prices the pivoted factor at the default rank (was: the dense one)."""
    n, d = 300_000, 2
    est = estimate(cell(n, d))
    assert est["bytes"] == pytest.approx(PROCESS_BYTES + 8 * n * d + 8 * n * 256 + 8 * (3 * n * 256 + 256 ** 2 + 6 * 50))


def test_no_estimate_and_unknown_count():
    assert estimate(Cell(0, {"name": "t", "dataset": {"name": "two_gaussians", "n": 50},
                             "constraints": {"name": "must_cannot"}, "solver": {"name": "admm"}})) is None
    with pytest.raises(UnknownSize):
        len(Sized((None,)))
    assert np.shape(Sized((3, 2))) == (3, 2) and len(Sized((7,))) == 7


@pytest.mark.slow
def test_plan_prints_the_estimates(tmp_path):
    cfg = {"name": "t", "seed": 0, "grid": {"dataset.n": [2000, 20000]},
           "dataset": {"name": "two_gaussians", "n": 100, "dim": 2}, "kernel": {"name": "rbf"},
           "constraints": {"name": "itml_pairs", "count": 1000}, "solver": {"name": "burg", "slack": 1.0}}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    res = kernlearn("plan", tmp_path / "c.yaml")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    # n = 20,000 > EIGH_MAX_N: rbf's auto factorization prices the pivoted factor at rank 256 (was the
    # dense path's 12.8 GB, 19m03s + 2m13s per sweep)
    assert lines[1].endswith("[est. memory 365 MB, time 1s + 21.8ms per sweep]"), res.stdout
    assert lines[0].endswith("[est. memory 360 MB, time 1s + 1.33s per sweep]"), res.stdout


def test_von_neumann_sweeps_cost_ten_lanczos_passes_per_projection():
    n, d, r, c = 20_000, 5, 64, 20_000
    spec = ({"name": "rbf", "factorization": "pivoted_cholesky", "rank": r}, {"name": "itml_pairs", "count": c})
    burg = estimate(cell(n, d, *spec))
    vn = estimate(cell(n, d, *spec, solver={"name": "von_neumann", "slack": 1.0}))
    assert vn["per"] == "sweep" and vn["per_seconds"] == pytest.approx(10 * burg["per_seconds"])
    assert vn["bytes"] == burg["bytes"]
