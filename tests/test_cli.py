"""The command line end to end: outputs, resume, collect, and clear errors for bad input."""

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from helpers import REPO, gyrb_standin, has_mirror, kernlearn
from kernlearn_cli.factors import read_factors
from reference import burg_divergence_dense



def config(tmp_path, **parts):
    cfg = {"name": "t", "seed": 0, "dataset": {"name": "iris"}, "kernel": {"name": "linear"},
           "constraints": {"name": "idealized_pairs", "count": 30}, "solver": {"name": "burg", "slack": 1.0},
           "evaluate": [{"name": "kernel_kmeans_nmi"}, {"name": "knn_accuracy", "repeats": 2}]}
    cfg.update(parts)
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.mark.slow
def test_run_writes_contract_outputs_and_resumes(tmp_path):
    cfg = config(tmp_path, grid={"constraints.count": [10, 30], "seed": "range(2)"})
    out = tmp_path / "out"
    first = kernlearn("run", cfg, "--out", out)
    assert first.returncode == 0, first.stderr
    assert "knn_accuracy" in first.stdout and "4 cell(s) run, 0 already finished, 0 failed" in first.stderr
    cells = sorted(p for p in out.iterdir() if p.is_dir() and p.name != "shared")
    assert len(cells) == 4
    f = read_factors(cells[0] / "factors.h5")
    G, attrs = f["G"], f["attrs"]
    assert G.dtype == np.float64 and G.shape == (150, 4)
    assert set(attrs) >= {"solver", "config", "seed", "converged", "iterations", "seconds", "objective",
                          "kernlearn_version"}
    assert yaml.safe_load(attrs["config"])["solver"]["name"] == "burg"
    assert len(f["constraints"]) in (10, 30) and f["labels"].shape == (150,)
    # the objective D_Burg(K, K0) recomputes from the file alone
    assert burg_divergence_dense(G @ G.T, f["G0"] @ f["G0"].T) == pytest.approx(attrs["objective"], rel=1e-6)
    rec = json.loads((cells[0] / "record.json").read_text())
    assert rec["metrics"]["nmi"] > 0.5 and rec["iterations"] == attrs["iterations"]
    again = kernlearn("run", cfg, "--out", out)
    assert "0 cell(s) run, 4 already finished, 0 failed" in again.stderr
    assert (out / "table.md").read_text() == again.stdout
    coll = kernlearn("collect", out)
    assert coll.returncode == 0 and "± " in coll.stdout and (out / "table.csv").is_file()


@pytest.mark.slow
def test_initial_factor_is_kept_once_per_results_folder(tmp_path):
    """K0's factor is one file in OUT/shared/ for all the cells that share it (named by its content),
    linked from each factors file, which still recomputes the objective; a cell folder moved alone
    says what is missing."""
    cfg = config(tmp_path, grid={"constraints.count": [10, 30], "seed": "range(2)"})
    out = tmp_path / "out"
    assert kernlearn("run", cfg, "--out", out).returncode == 0
    (shared,) = (out / "shared").iterdir()
    cells = sorted(p for p in out.iterdir() if p.is_dir() and p.name != "shared")
    assert len(cells) == 4
    for cell in cells:
        f = read_factors(cell / "factors.h5")
        assert f["G0"].shape == (150, 4)
        assert burg_divergence_dense(f["G"] @ f["G"].T, f["G0"] @ f["G0"].T) == pytest.approx(f["attrs"]["objective"],
                                                                                              rel=1e-6)
    import h5py

    with h5py.File(cells[0] / "factors.h5", "r") as f:
        assert f.get("G0", getlink=True).filename == f"../shared/{shared.name}"
    moved = tmp_path / "moved"
    shutil.copytree(cells[0], moved)
    with pytest.raises(FileNotFoundError, match="array 'G0' is kept once for all cells"):
        read_factors(moved / "factors.h5")


@pytest.mark.slow
def test_same_cell_same_bits_whatever_runs_it(tmp_path):
    cfg = config(tmp_path, grid={"seed": "range(3)"})
    assert kernlearn("run", cfg, "--out", tmp_path / "all").returncode == 0
    one = kernlearn("run", cfg, "--out", tmp_path / "one", env={"SLURM_ARRAY_TASK_ID": "2"})
    assert one.returncode == 0, one.stderr
    (cell,) = [p for p in (tmp_path / "one").iterdir() if p.is_dir() and p.name != "shared"]
    a = read_factors(tmp_path / "all" / cell.name / "factors.h5")
    b = read_factors(cell / "factors.h5")
    assert np.array_equal(a["G"], b["G"])
    ra = json.loads((tmp_path / "all" / cell.name / "record.json").read_text())["metrics"]
    rb = json.loads((cell / "record.json").read_text())["metrics"]
    assert ra == rb


@pytest.mark.slow
def test_same_bits_whatever_blas_threads_the_machine_has(tmp_path):
    """A cell computes under KERNLEARN_BLAS_THREADS threads, including the initial and reference
    factors that ``run`` prepares (and memoises) before the cells start: with 1 or 2 OpenBLAS threads
    in the calling process the record is the same to the last bit (this MEG cell on the wine RBF
    kernel differed in the last digits and in one 1-NN tie when the preparation ran with 2 threads)."""
    if not has_mirror():
        pytest.skip("needs the wine data of the mirror")
    cfg = REPO / "configs" / "papers" / "tsuda2005" / "fig2_wine_meg.yaml"
    records = []
    for threads in ("1", "2"):
        res = kernlearn("run", cfg, "--out", tmp_path / threads, "--set", "grid.solver.iterations=[10]",
                        "--set", "grid.seed=[6]", env={"OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads})
        assert res.returncode == 0, res.stderr
        (rec,) = (tmp_path / threads).glob("*/record.json")
        records.append(json.loads(rec.read_text())["metrics"])
    assert records[0] == records[1]


@pytest.mark.slow
def test_plan_and_list(tmp_path):
    res = kernlearn("plan", config(tmp_path, grid={"constraints.count": [1, 2], "seed": "range(3)"}))
    assert res.returncode == 0 and "6 cell(s)" in res.stdout and res.stdout.splitlines()[5].startswith("   5")
    res = kernlearn("list", "solvers")
    assert "burg" in res.stdout and "tol=0.001" in res.stdout
    res = kernlearn("list", "solvers", "burg")
    assert "slack = inf\n      a float in (0, inf]" in res.stdout, res.stdout
    res = kernlearn("list", "solvers", "burgg")
    assert res.returncode != 0 and "Did you mean 'burg'?" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.slow
def test_gyrb_config_on_synthetic_standin(tmp_path):
    """configs/gyrb_burg.yaml runs once a kernel is in <data home>/gyrb: here a synthetic 52 x 52 stand-in."""
    home = gyrb_standin(tmp_path / "home")
    res = kernlearn("run", REPO / "configs" / "gyrb_burg.yaml", "--out", tmp_path / "out",
                    "--set", "grid={constraints.count: [20, 200], seed: [0]}", env={"KERNLEARN_DATA": str(home)})
    assert res.returncode == 0, res.stderr
    assert "2 cell(s) run" in res.stderr and "knn_accuracy" in res.stdout


@pytest.mark.slow
def test_infeasible_cell_fails_alone_with_its_reason(tmp_path):
    """A cell whose constraints are certified infeasible writes no result, only failed.json (the other
    bad inputs are in tests/test_failures.py)."""
    X = np.random.default_rng(0).standard_normal((20, 3))
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", np.arange(20) % 2)
    # infeasible by the triangle inequality (a contradicting pair of rows is refused before solving instead)
    (tmp_path / "cons.csv").write_text("i,j,kind,bound\n0,1,dist_le,1.0\n1,2,dist_le,1.0\n0,2,dist_ge,4.5\n")
    out = tmp_path / "out"
    res = kernlearn("run", config(tmp_path, dataset={"name": "files", "features": str(tmp_path / "X.npy"),
                                                     "labels": str(tmp_path / "y.npy")},
                                  solver={"name": "burg"},
                                  constraints={"name": "from_file", "path": str(tmp_path / "cons.csv")}),
                    "--out", out)
    assert res.returncode == 2 and "kernlearn: error:" in res.stderr and "infeasible" in res.stderr
    assert "Traceback" not in res.stderr + res.stdout
    assert not list(out.rglob("factors.h5")) and not list(out.rglob("record.json"))
    (failed,) = out.glob("*/failed.json")
    assert json.loads(failed.read_text())["certificate"]


@pytest.mark.slow
@pytest.mark.skipif(not has_mirror(), reason="needs KERNLEARN_DATA_MIRROR (../shared/datasets)")
def test_checksum_mismatch_on_download(tmp_path):
    mirror = tmp_path / "mirror"
    shutil.copytree(os.environ["KERNLEARN_DATA_MIRROR"] + "/sonar", mirror / "sonar")
    with open(mirror / "sonar" / "sonar.all-data", "a") as fh:
        fh.write("tampered\n")
    env = {"KERNLEARN_DATA_MIRROR": str(mirror), "KERNLEARN_DATA": str(tmp_path / "home")}
    res = kernlearn("datasets", "fetch", "sonar", env=env)
    assert res.returncode == 2 and "sha256" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "home" / "sonar" / "sonar.all-data").exists()
    run = kernlearn("run", config(tmp_path, dataset={"name": "sonar"}), "--out", tmp_path / "out", env=env)
    assert run.returncode == 2 and "sha256" in run.stderr and not list((tmp_path).rglob("factors.h5"))


def without_timing(csv):
    """A results table without its wall-clock columns (the only ones that may differ between runs)."""
    df = pd.read_csv(csv)
    return df[[c for c in df.columns if not c.startswith("seconds")]]


@pytest.mark.slow
def test_jobs_and_array_tasks_give_the_same_table(tmp_path):
    cfg = config(tmp_path, grid={"constraints.count": [10, 30], "seed": "range(2)"})
    one = kernlearn("run", cfg, "--out", tmp_path / "one")
    two = kernlearn("run", cfg, "--out", tmp_path / "two", "--jobs", "2")
    assert one.returncode == 0 and two.returncode == 0, two.stderr
    for task in range(2):       # two array tasks of two cells each
        res = kernlearn("run", cfg, "--out", tmp_path / "arr", "--array-index", task, "--cells-per-task", 2)
        assert res.returncode == 0 and "2 cell(s) run" in res.stderr
    kernlearn("collect", tmp_path / "arr")
    tables = [without_timing(tmp_path / d / "table.csv") for d in ("one", "two", "arr")]
    assert tables[0].equals(tables[1]) and tables[0].equals(tables[2])


@pytest.mark.slow
def test_records_carry_the_solvers_cpu_seconds(tmp_path):
    """Beside the solver's wall-clock seconds a record has its CPU seconds (a busy machine does not
    stretch them in a single-threaded cell): within the whole cell's CPU time, in the timing table,
    and a metric a paper table can show."""
    cfg = config(tmp_path, grid={"seed": "range(2)"})
    assert kernlearn("run", cfg, "--out", tmp_path / "out").returncode == 0
    for rec in map(json.loads, map(Path.read_text, (tmp_path / "out").glob("*/record.json"))):
        assert 0 < rec["cpu_seconds"] <= rec["provenance"]["cpu_seconds"]
    assert {"seconds_mean", "cpu_seconds_mean"} <= set(pd.read_csv(tmp_path / "out" / "timing.csv").columns)
    assert "cpu_seconds" not in pd.read_csv(tmp_path / "out" / "table.csv").columns
    res = kernlearn("collect", tmp_path / "out", "--metric", "cpu_seconds")
    assert res.returncode == 0, res.stderr


@pytest.mark.slow
def test_collect_pivot_latex_into_and_plot(tmp_path):
    cfg = config(tmp_path, grid={"constraints.count": [10, 30], "seed": "range(2)"})
    assert kernlearn("run", cfg, "--out", tmp_path / "out").returncode == 0
    readme = tmp_path / "R.md"
    readme.write_text("intro\n<!-- kernlearn:t -->\nOLD TEXT\n<!-- /kernlearn:t -->\nend\n")
    res = kernlearn("collect", tmp_path / "out", "--metric", "nmi", "--rows", "constraints.count",
                    "--into", readme, "--marker", "t")
    assert res.returncode == 0, res.stderr
    text = readme.read_text()
    assert "OLD TEXT" not in text and "constraints.count |" in text and text.endswith("<!-- /kernlearn:t -->\nend\n")
    assert r"\pm" in (tmp_path / "out" / "table_nmi.tex").read_text()
    res = kernlearn("plot", tmp_path / "out", "--metric", "nmi", "-o", tmp_path / "fig.png")
    assert res.returncode == 0 and (tmp_path / "fig.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow
def test_tables_and_figures_mark_unconverged_cells(tmp_path):
    """A cell whose certificate is not met is counted, marked † in paper tables and ringed in figures."""
    from kernlearn_cli.report.figures import plot_curves
    from kernlearn_cli.report.records import load_records

    cfg = config(tmp_path, grid={"solver.max_sweeps": [2, 10000], "seed": "range(2)"},
                 solver={"name": "burg", "slack": 1.0, "tol": 1e-6})
    run = kernlearn("run", cfg, "--out", tmp_path / "out")
    assert run.returncode == 0 and "NOT converged (" in run.stdout
    assert "converged" in run.stdout and "2/2 †" not in run.stdout and "0/2 †" in run.stdout
    res = kernlearn("collect", tmp_path / "out", "-m", "nmi", "--rows", "solver.max_sweeps")
    assert res.returncode == 0, res.stderr
    rows = {line.split("|")[1].strip(): line for line in res.stdout.splitlines() if line.startswith("|")}
    assert "†" in rows["2"] and "†" not in rows["10000"]
    assert "† includes cells that did not converge (certificate not met): 2 of 4 cell(s); worst: " in res.stdout
    assert r"$^\dagger$" in (tmp_path / "out" / "table_nmi.tex").read_text()
    df, _ = load_records([tmp_path / "out"])
    assert plot_curves(df, "nmi", "solver.max_sweeps", None, output=tmp_path / "f.png") == 1
    record = json.loads(next((tmp_path / "out").glob("*/record.json")).read_text())
    assert set(record["certificate"]) >= {"converged", "rule", "checks", "figures", "stopped_by", "worst"}


@pytest.mark.slow
def test_slurm_script_and_scheduler_mistakes(tmp_path):
    cfg = config(tmp_path, grid={"seed": "range(5)"})
    res = kernlearn("slurm", cfg, "--out", tmp_path / "out", "--cells-per-task", 2, "--partition", "short",
                    "--time", "00:10:00", "--mem", "2G")
    assert res.returncode == 0, res.stderr
    script = Path(res.stdout.strip()).read_text()
    assert "#SBATCH --array=0-2" in script and "#SBATCH --partition=short" in script
    assert "--cells-per-task 2" in script and "run" in script
    bad = kernlearn("run", cfg, "--out", tmp_path / "out", "--array-index", 5)
    assert bad.returncode == 2 and "array index 5 is out of range" in bad.stderr and "0..4" in bad.stderr
    assert kernlearn("run", cfg, "--out", tmp_path / "out", "--array-index", 0).returncode == 0
    other = config(tmp_path, grid={"seed": "range(5)"}, solver={"name": "burg", "slack": 2.0})
    clash = kernlearn("run", other, "--out", tmp_path / "out")
    assert clash.returncode == 2 and "was written by a different config" in clash.stderr and "solver" in clash.stderr


def test_float_grid_settings_are_settings_not_metrics(tmp_path):
    """A grid over floats (solver.gamma: [1.0, 10.0]) groups the table; it is never averaged."""
    import json

    from kernlearn_cli.report.records import load_records
    from kernlearn_cli.report.tables import metric_columns, summarize

    for gamma in (1.0, 10.0):
        for seed in (0, 1):
            cell = tmp_path / f"gamma-{gamma}_seed-{seed}"
            cell.mkdir()
            (cell / "record.json").write_text(json.dumps({
                "experiment": "e", "cell": cell.name, "grid": {"solver.gamma": gamma, "seed": seed}, "seed": seed,
                "solver": "admm", "dataset": "iris", "constraints": 10, "n": 150, "rank0": 4, "converged": True,
                "iterations": 5, "objective": 1.0, "seconds": 0.1, "metrics": {"acc": gamma / 100 + seed}}))
    df, _ = load_records([tmp_path])
    assert "solver.gamma" not in metric_columns(df)
    table = summarize(df)
    assert list(table["solver.gamma"]) == [1.0, 10.0]
    np.testing.assert_allclose(table["acc_mean"], [0.51, 0.6])


@pytest.mark.slow
def test_show_prints_a_cells_provenance_that_tables_ignore(tmp_path):
    """Every record carries its provenance (commit, versions, BLAS and its threads, host, start and
    wall time); `kernlearn show` prints it, `collect` leaves it out of the tables."""
    import numpy
    from importlib.metadata import version

    cfg = config(tmp_path)
    out = tmp_path / "out"
    assert kernlearn("run", cfg, "--out", out).returncode == 0
    (cell,) = [p for p in out.iterdir() if (p / "record.json").is_file()]
    prov = json.loads((cell / "record.json").read_text())["provenance"]
    assert prov["versions"]["numpy"] == numpy.__version__ and prov["versions"]["scikit-learn"] == version("scikit-learn")
    assert prov["blas_threads"] == 1 and prov["blas"] and all(b["internal_api"] for b in prov["blas"])
    assert {"git_commit", "git_dirty", "host", "python", "platform", "started", "wall_seconds"} <= set(prov)
    shown = kernlearn("show", cell)
    assert shown.returncode == 0, shown.stderr
    assert f"numpy {numpy.__version__}" in shown.stdout and f"host: {prov['host']}" in shown.stdout
    assert "blas_threads: 1" in shown.stdout and cell.name in shown.stdout
    again = kernlearn("show", out, cell.name)
    assert again.returncode == 0 and again.stdout == shown.stdout
    coll = kernlearn("collect", out)
    header = (out / "table.csv").read_text().splitlines()[0]
    assert coll.returncode == 0 and not any(k in header for k in ("host", "blas", "git_commit", "numpy"))
    missing = kernlearn("show", out, "no-such-cell")
    assert missing.returncode != 0 and "no cell 'no-such-cell'" in missing.stderr and "Traceback" not in missing.stderr


@pytest.mark.slow
def test_a_components_error_names_the_component_and_config_not_another(tmp_path):
    """Library code names its own parameters; the runner adds where they were set: the graph's
    k is the kernel's neighbors here (not 'solver.neighbors'), pr_cg's triplet check says pr_cg."""
    cfg = config(tmp_path, constraints={"name": "must_cannot"}, solver={"name": "admm", "neighbors": 500})
    cfg.write_text(cfg.read_text().replace("kernel:\n  name: linear\n", ""))
    proc = kernlearn("run", cfg, "--out", tmp_path / "a")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"{cfg}: solver 'admm': neighbors = 500 must be between 1 and n - 1 = 149" in proc.stderr
    assert "solver." not in proc.stderr
    from kernlearn_cli.errors import ConfigError
    from kernlearn_cli.solvers.trin import pr_cg
    from kernlearn_cli.types import Constraints

    with pytest.raises(ConfigError, match=r"^triplet #0 \(i, j, k\) = \(0, 1, 1\) repeats an index") as err:
        pr_cg(np.eye(3), Constraints.triplets(np.array([0]), np.array([1]), np.array([1])))
    assert "trin" not in str(err.value)


def test_show_prints_checks_settings_a_failed_cell_and_cells_by_number(tmp_path, inproc):
    """`kernlearn show` prints each certificate check against its tolerance and the solver's settings;
    a failed cell shows its failed.json (not FileNotFoundError); a cell is found by its number (as
    `plan` and `run --array-index` number them); a results folder alone lists its numbered cells."""
    from kernlearn_cli.config import expand, load
    from kernlearn_cli.records import write_failure

    cfg = config(tmp_path, grid={"constraints.count": [10, 30]}, solver={"name": "burg", "slack": 1.0, "tol": 1e-4})
    out = tmp_path / "out"
    assert inproc("run", cfg, "--out", out)[0] == 0
    first, second = expand(load(cfg))
    code, shown, err = inproc("show", out / first.id)
    assert code == 0, err
    rec = json.loads((out / first.id / "record.json").read_text())
    assert "solver      burg: slack=1.0, tol=0.0001;" in shown
    for name, check in rec["certificate"]["checks"].items():
        assert f"{name} {check['value']:.4g} {'<=' if check['met'] else '>'} tol {check['tol']:.4g}: " in shown, name
    assert inproc("show", out, "0")[1] == inproc("show", out, first.id)[1] == shown

    (out / second.id / "record.json").unlink()                  # the second cell failed on its last attempt
    (out / second.id / "factors.h5").unlink()
    write_failure(out / second.id, {"cell": second.id, "index": 1, "seed": 0, "kind": "solver",
                                    "error": "burg: the constraints are infeasible", "certificate": {}})
    for args in ([out / second.id], [out, second.id], [out, "1"]):
        code, failed, err = inproc("show", *args)
        assert code == 0 and "FileNotFoundError" not in err, err
        assert "FAILED (solver)" in failed and "error       burg: the constraints are infeasible" in failed
        assert "solver      burg: slack=1.0, tol=0.0001;" in failed
    code, listed, _ = inproc("show", out)
    assert code == 0 and f"   0  {first.id}  finished" in listed and f"   1  {second.id}  failed" in listed
    assert "2 cell(s): 1 finished, 1 failed" in listed
    code, _, err = inproc("show", out, "2")
    assert code == 2 and "numbered 0 to 1; there is no cell 2" in err and f"kernlearn show {out}` lists" in err


def test_embed_help_lists_every_inductive_solver(inproc):
    """`embed --help` names every solver the registry marks inductive, and no transductive one."""
    from kernlearn_cli.inductive import inductive_solvers
    from kernlearn_cli.registry import solvers

    code, out, _ = inproc("embed", "--help")
    inductive = inductive_solvers()
    assert code == 0 and {"burg", "von_neumann", "trin", "pr_cg", "nystrom", "nystrom_prior"} <= set(inductive)
    listed = " ".join(out.split("Inductive solvers:")[1].split("Arguments:")[0].split()).rstrip(".")
    names = [name for group in listed.split("; ") for name in group.split(": ")[0].split(", ")]
    assert sorted(names) == sorted(inductive) and set(inductive) < set(solvers.names()), listed


def test_list_describes_every_setting_and_the_generators_reference(inproc):
    """`kernlearn list` gives each setting's default, what it accepts and what it does (from the
    docstring), and the `reference` kernel every constraint generator takes."""
    from kernlearn_cli.params import describe
    from kernlearn_cli.registry import REGISTRIES

    code, out, _ = inproc("list")
    assert code == 0
    for reg in REGISTRIES.values():
        for entry in reg.entries():
            for p, par in entry.parameters().items():
                assert entry.descriptions[p], f"{reg.kind} '{entry.name}': setting '{p}' has no description"
                default = " (required)" if par.default is par.empty else f"={par.default!r}"
                assert f"      {p}{default}: {describe(entry.hints[p])} — " in out, (entry.name, p)
    assert "every constraint generator also takes\n      reference: a kernel spec" in out
    code, one, _ = inproc("list", "constraints", "random_pairs")
    assert code == 0 and "  count = 100\n      an int in [1, inf)\n      Number of pairs" in one
    assert "  reference\n      a kernel spec" in one
