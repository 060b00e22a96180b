"""The ``auto`` defaults (issue 56, items 1 and 2): the rbf kernel's factorization, burg's sweep
schedule and MEG's update each take the fast path above a measured size, say so in one
line, record the choice, give the same bits as the explicit setting they pick, and never move the id
of a cell that pins the former default."""

import json

import numpy as np
import yaml

import kernlearn_cli.kernels as kernels
import kernlearn_cli.solvers._cyclic as cyclic
import kernlearn_cli.solvers.meg as meg_module
from kernlearn_cli import config
from kernlearn_cli.kernels import PIVOTED_RANK, factor_info, rbf, rbf_factorization
from kernlearn_cli.registry import constraints as generators
from kernlearn_cli.registry import datasets, kernels as kernel_registry, solvers
from kernlearn_cli.rng import component_rng
from kernlearn_cli.runner import run_config
from kernlearn_cli.types import Dataset


def blobs(n, d=30, seed=0):
    rng = np.random.default_rng(seed)
    return Dataset("blobs", rng.standard_normal((n, d)), y=rng.integers(0, 3, n))


def test_rbf_auto_is_eigh_up_to_its_size_and_pivoted_at_the_default_rank_above(monkeypatch, capsys):
    ds = blobs(300)
    assert np.array_equal(rbf(ds), rbf(ds, factorization="eigh"))          # n <= EIGH_MAX_N: the same bits
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(kernels, "EIGH_MAX_N", 100)
    monkeypatch.setattr(kernels, "PIVOTED_RANK", 40)
    G = rbf(ds)
    assert "factorization 'auto' takes pivoted_cholesky at rank 40 (n = 300 > 100" in capsys.readouterr().err
    assert np.array_equal(G, rbf(ds, factorization="pivoted_cholesky", rank=40)) and G.shape == (300, 40)
    assert np.array_equal(rbf(ds, factorization="eigh", rank=7), rbf(ds, factorization="eigh", rank=7))
    assert rbf(ds, factorization="eigh").shape[1] == 300                   # an explicit setting wins
    info = factor_info("rbf", ds, G, {})
    assert info["factorization"] == "pivoted_cholesky" and info["auto"] == "n = 300 > 100" and info["rank"] == 40
    assert 0 < info["relative_trace_residual"] < 1
    assert factor_info("rbf", ds, rbf(ds, factorization="eigh"), {"factorization": "eigh"}) is None


def test_pivoted_cholesky_without_rank_stops_at_the_default_rank():
    """On main a 30-dimensional set of 600 points took 600 columns (an n x n factor: the traceback of
    issue 56 at n = 200,000); the default rank bounds it."""
    ds = blobs(600)
    assert rbf(ds, factorization="pivoted_cholesky").shape == (600, min(PIVOTED_RANK, 600))
    assert rbf_factorization(10, "pivoted_cholesky", 0) == ("pivoted_cholesky", 10, "")
    assert rbf_factorization(10**6, "auto", 5) == ("pivoted_cholesky", 5, "n = 1,000,000 > 6,000")


def test_a_large_dense_rbf_step_names_the_pivoted_factorization(monkeypatch, capsys):
    """The large-step line before the dense path names the setting that avoids it in this config, not
    'a rank: setting does not avoid this step'; the bandwidth's distances name it too."""
    import kernlearn_cli.resources as resources

    monkeypatch.setattr(resources, "LIMIT_BYTES", 1.0)
    rbf(blobs(50, 3), factorization="eigh")
    err = capsys.readouterr().err
    assert err.count("large step") == 3 and err.count("factorization: pivoted_cholesky") == 3
    assert "does not avoid" not in err


def itml_problem(n, r=8):
    ds = datasets.get("two_gaussians").func(n=n, dim=r)
    G0 = kernels.linear(ds)
    return G0, generators.get("itml_pairs").func(ds, G0, rng=component_rng(0, 1), count=n)


def test_sweeps_auto_takes_active_from_its_count_under_the_dual_change_rule(monkeypatch, capsys):
    name = "burg"
    solve = solvers.get(name).func
    G0, C = itml_problem(120)
    kw = dict(slack=1.0, stop="dual_change", tol=1e-3, max_sweeps=5000)
    low = solve(G0, C, **kw)                                      # c = 120 < ACTIVE_MIN_C: cyclic
    assert cyclic.ACTIVE_MIN_C > len(C)
    assert np.array_equal(low.G, solve(G0, C, sweeps="cyclic", **kw).G)
    assert low.info["sweeps"] == "cyclic" and f"< {cyclic.ACTIVE_MIN_C:,}" in low.info["sweeps_auto"]
    monkeypatch.setattr(cyclic, "ACTIVE_MIN_C", 100)
    capsys.readouterr()
    high = solve(G0, C, **kw)
    assert f"solver {name}: sweeps 'auto' takes the active schedule" in capsys.readouterr().err
    assert np.array_equal(high.G, solve(G0, C, sweeps="active", **kw).G) and high.info["sweeps"] == "active"
    from kernlearn_cli.testing.instances import pairs

    G0, C, _ = pairs(0)
    hard = solve(G0, C)                                           # hard constraints: every sweep is full
    assert hard.info["sweeps"] == "cyclic" and "certified" in hard.info["sweeps_auto"]
    assert "sweeps" not in solve(G0, C, sweeps="cyclic").info    # pinned: the record as before


def test_von_neumann_keeps_cyclic_sweeps_where_active_measured_slower():
    assert solvers.get("von_neumann").parameters()["sweeps"].default == "cyclic"


def test_the_large_sweep_line_names_active_only_where_it_can_act():
    cost = solvers.get("burg").func.cost
    G0, C = np.zeros((10, 3)), range(5)
    assert "active" not in cost(G0, C)[3] and "rank" in cost(G0, C)[3]
    assert "sweeps: active" in cost(G0, C, slack=1.0, stop="dual_change", sweeps="cyclic")[3]


def test_meg_auto_is_lanczos_from_its_size(monkeypatch, capsys):
    from kernlearn_cli.testing.instances import meg as meg_instance

    G0, C, settings = meg_instance(0)
    n = G0.shape[0]
    meg = solvers.get("meg").func
    below = meg(G0, C, **settings)                                # n = 8 < LANCZOS_MIN_N
    assert below.info["update"] == "eigh" and np.array_equal(below.G, meg(G0, C, update="eigh", **settings).G)
    assert "update" not in meg(G0, C, update="eigh", **settings).info    # pinned: the record as before
    monkeypatch.setattr(meg_module, "LANCZOS_MIN_N", n)
    capsys.readouterr()
    above = meg(G0, C, **settings)
    assert "solver meg: update 'auto' takes lanczos (n = 8 >= 8" in capsys.readouterr().err
    assert above.info["update"] == "lanczos" and np.array_equal(above.G, meg(G0, C, update="lanczos", **settings).G)


def cell_of(cfg):
    (cell,) = config.expand(cfg)
    return cell


BASE = {"name": "x", "seed": 0, "dataset": {"name": "iris"}, "constraints": {"name": "idealized_pairs", "count": 5},
        "evaluate": []}


def test_pinning_the_former_default_keeps_the_id_and_the_new_default_gets_its_own():
    """A cell id hashes the validated config; a setting given its former default is left out of the hash
    (the id it had when that was the default: archived cells keep theirs), and one left out hashes as its
    default now (``auto``), so a pinned and an unpinned cell never share a folder."""
    pinned = cell_of({**BASE, "kernel": {"name": "rbf", "factorization": "eigh"},
                      "solver": {"name": "burg", "sweeps": "cyclic", "order": "fixed"}})
    old = json.dumps({**pinned.validated, "kernel": {"name": "rbf"}, "solver": {"name": "burg"}},
                     sort_keys=True, separators=(",", ":"), default=str)
    import hashlib

    assert pinned.digest == hashlib.sha256(old.encode()).hexdigest()[:10]
    unpinned = cell_of({**BASE, "kernel": {"name": "rbf"}, "solver": {"name": "burg"}})
    explicit = cell_of({**BASE, "kernel": {"name": "rbf", "factorization": "auto"},
                        "solver": {"name": "burg", "sweeps": "auto"}})
    assert unpinned.id == explicit.id != pinned.id
    assert kernel_registry.get("rbf").digest_params({"factorization": "pivoted_cholesky"}) == \
        {"factorization": "pivoted_cholesky"}


def test_an_own_data_run_records_what_auto_chose(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    np.save(tmp_path / "X.npy", rng.standard_normal((150, 6)))
    np.savetxt(tmp_path / "y.csv", rng.integers(0, 3, 150), fmt="%d")
    monkeypatch.setattr(kernels, "EIGH_MAX_N", 100)
    cfg = {"name": "own", "dataset": {"name": "files", "features": str(tmp_path / "X.npy"),
                                      "labels": str(tmp_path / "y.csv")},
           "kernel": {"name": "rbf"}, "constraints": {"name": "idealized_pairs", "count": 30},
           "solver": {"name": "burg", "slack": 1.0}, "evaluate": []}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    out, _ = run_config(tmp_path / "c.yaml", tmp_path / "out", [], per_cell=False)
    (rec,) = [json.loads(p.read_text()) for p in out.glob("*/record.json")]
    assert rec["kernel_info"]["factorization"] == "pivoted_cholesky" and rec["kernel_info"]["auto"] == "n = 150 > 100"
    assert rec["info"]["sweeps"] == "cyclic"
