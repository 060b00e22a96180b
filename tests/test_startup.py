"""Start-up of a cell: the K-th cell made directly, lazy registration, warmup and its sbatch lines.

Correctness only: the timings are in ``benchmarks/speed/bench_startup.py``.
"""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kernlearn_cli.config import Grid, check_cell, expand, load
from kernlearn_cli.errors import ConfigError
from kernlearn_cli.builtins import BUILTINS, load_builtins
from kernlearn_cli.registry import REGISTRIES
from kernlearn_cli.runner import select_cells, task_count
from kernlearn_cli.slurm import sbatch_script

REPO = Path(__file__).resolve().parents[1]

BASE = {
    "name": "t", "seed": 0,
    "dataset": {"name": "iris"}, "kernel": {"name": "linear"},
    "constraints": {"name": "idealized_pairs", "count": 10},
    "solver": {"name": "burg"}, "evaluate": [{"name": "knn_accuracy"}],
}
GRIDS = {
    "none": None,
    "one value": {"seed": [7]},
    "seed range": {"seed": "range(3, 40, 3)"},
    "two keys": {"constraints.count": [5, 10, 20], "seed": "range(4)"},
    "component specs": {"dataset": [{"name": "iris"}, {"name": "wine"}], "solver.tol": [1e-3, 1e-4],
                        "kernel": [{"name": "linear"}, {"name": "rbf", "sigma": 1.0}], "seed": "range(2)"},
    "list index and nested": {"evaluate.0.k": [1, 3], "constraints.reference": [{"name": "rbf"}, {"name": "linear"}],
                              "solver": [{"name": "burg", "slack": 1.0}, {"name": "initial"}],
                              "seed": "range(5, 8)"},
}


def config(tmp_path, grid):
    cfg = dict(BASE, **({"grid": grid} if grid else {}))
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return load(path)


def same(a, b):
    return (a.index, a.config, a.grid_values, a.id) == (b.index, b.config, b.grid_values, b.id)


@pytest.mark.parametrize("grid", GRIDS.values(), ids=GRIDS.keys())
def test_kth_cell_equals_expansion(tmp_path, grid):
    cfg = config(tmp_path, grid)
    cells, lazy = expand(cfg), Grid(cfg)
    assert len(lazy) == len(cells)
    for k in range(-len(cells), len(cells)):
        assert same(lazy[k], cells[k]), k
    assert all(same(a, b) for a, b in zip(lazy[1::3], cells[1::3])) and len(lazy[1::3]) == len(cells[1::3])
    with pytest.raises(IndexError, match="out of range"):
        lazy[len(cells)]


@pytest.mark.parametrize("grid", GRIDS.values(), ids=GRIDS.keys())
def test_array_task_selects_the_same_cells(tmp_path, grid):
    cfg = config(tmp_path, grid)
    cells = expand(cfg)
    for per_task in (1, 2, 5):
        for task in range(task_count(len(cells), per_task)):
            got = select_cells(Grid(cfg), task, per_task, "c.yaml")
            want = select_cells(cells, task, per_task, "c.yaml")
            assert len(got) == len(want) and all(map(same, got, want)), (per_task, task)
    with pytest.raises(ConfigError, match="out of range"):
        select_cells(Grid(cfg), len(cells), 1, "c.yaml")


def test_a_cell_of_a_large_grid_without_the_others(tmp_path):
    """The 9,999th of 10,000 cells, made directly: it is the same cell a grid of it alone has."""
    cfg = config(tmp_path, {"constraints.count": [10, 30], "seed": "range(5000)"})
    cell = Grid(cfg)[9_999]
    alone = config(tmp_path, {"constraints.count": [30], "seed": [4999]})
    assert cell.grid_values == {"constraints.count": 30, "seed": 4999} and cell.id == Grid(alone)[0].id
    assert cell.config == Grid(alone)[0].config


def test_every_cell_false_leaves_the_cells_to_the_task(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(dict(BASE, grid={"solver.tol": [1e-3, "not a number"]})))
    with pytest.raises(ConfigError, match=r"\(cell 1\): solver.tol"):
        load(path)
    cfg = load(path, every_cell=False)                  # the grid's shape is still checked
    check_cell(Grid(cfg)[0], str(path))
    with pytest.raises(ConfigError, match=r"\(cell 1\): solver.tol"):
        check_cell(Grid(cfg)[1], str(path))
    path.write_text(yaml.safe_dump(dict(BASE, grid={"seed": [-1]})))
    with pytest.raises(ConfigError, match="grid.seed value"):
        load(path, every_cell=False)


def test_builtins_table_matches_what_the_modules_register():
    load_builtins()
    for key, registry in REGISTRIES.items():
        table = {name: f"kernlearn_cli.{module}" for module, kinds in BUILTINS.items() for name in kinds.get(key, ())}
        registered = {name: entry.func.__module__ for name, entry in registry._entries.items()
                      if entry.func.__module__.startswith("kernlearn_cli.")}
        assert registered == table, key


def test_every_registration_in_the_package_is_in_the_builtins_table():
    """A module that registers a component but is missing from BUILTINS is never imported by a run: found
    from the sources (so it cannot hide behind a test that imports it), with the line to add."""
    import re

    found = {}
    for path in sorted((REPO / "kernlearn_cli").rglob("*.py")):
        module = ".".join(path.relative_to(REPO / "kernlearn_cli").with_suffix("").parts)
        for key, name in re.findall(r'^@(\w+)\.register\(\s*"(\w+)"', path.read_text(), flags=re.M):
            if key in REGISTRIES:
                found.setdefault(module, {}).setdefault(key, []).append(name)
    for module, kinds in found.items():
        for key, names in kinds.items():
            missing = sorted(set(names) - set(BUILTINS.get(module, {}).get(key, ())))
            assert not missing, (f"kernlearn_cli/builtins.py: {key} {', '.join(missing)} (registered in "
                                 f"kernlearn_cli/{module.replace('.', '/')}.py) are not in BUILTINS, so no run imports "
                                 f"them: add \"{module}\": {{\"{key}\": {tuple(names)!r}}} to BUILTINS")


@pytest.mark.slow
def test_a_cell_imports_only_its_components():
    """Binding an iris/burg cell imports burg's module and none of the other solvers'; ``--help`` no numpy."""
    code = ("import sys; from kernlearn_cli.config import load; load('configs/quick.yaml'); "
            "print(sorted(m for m in sys.modules if m.startswith('kernlearn_cli.')))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    loaded = set(eval(res.stdout))
    assert "kernlearn_cli.solvers.burg" in loaded and "kernlearn_cli.data.bundled" in loaded
    others = {f"kernlearn_cli.{m}" for m in BUILTINS} - {"kernlearn_cli.solvers.burg", "kernlearn_cli.data.bundled",
                                                         "kernlearn_cli.constraints.pairs", "kernlearn_cli.kernels",
                                                         "kernlearn_cli.evaluate.clustering", "kernlearn_cli.evaluate.knn"}
    assert not loaded & others, loaded & others
    code = "import sys, kernlearn_cli.cli; print(sorted({'numpy', 'numba', 'pandas', 'rich'} & set(sys.modules)))"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert res.stdout.strip() == "[]"


@pytest.mark.slow
def test_warmup_command(tmp_path):
    res = subprocess.run([sys.executable, "-m", "kernlearn_cli", "warmup", "configs/quick.yaml"], capture_output=True,
                         text=True, cwd=REPO)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith("numba ") and lines[1].startswith("burg ") and " s  imported" in lines[1]
    assert lines[-1].startswith("warmup: done in ") and "numba cache: " in lines[-1] and len(lines) == 3


@pytest.mark.slow
def test_sbatch_script_warms_up_once_per_job(tmp_path):
    out = tmp_path / "out dir"
    text = sbatch_script(tmp_path / "c.yaml", out, 3, 2, name="t", overrides=["solver.tol=1e-6"], seed=None,
                         partition=None, time=None, mem=None, cpus=1, python="/py")
    lines = text.splitlines()
    warm = next(k for k, line in enumerate(lines) if "kernlearn_cli warmup" in line)
    run = next(k for k, line in enumerate(lines) if "kernlearn_cli run" in line)
    assert warm < run and "flock 9" in lines[warm] and "--set solver.tol=1e-6" in lines[warm]
    assert f"9>'{out}/slurm/.warmup.lock'" in lines[warm] and '|| echo "kernlearn warmup did not finish' in lines[warm + 1]
    assert f"'{out}/slurm/.warmup-'\"${{SLURM_ARRAY_JOB_ID:-0}}\"" in text
    assert subprocess.run(["bash", "-n"], input=text, text=True).returncode == 0
