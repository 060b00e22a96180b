"""Start-up cost of a cell (issue 15, part 4), measured in one run beside the bare library imports,
since this machine is slow and shared.

    python benchmarks/speed/bench_startup.py                 # 5 interleaved repetitions, about 2 minutes
    python benchmarks/speed/bench_startup.py --reps 9        # steadier minima
    python benchmarks/speed/bench_startup.py --all-solvers   # also ``kernlearn warmup`` of every solver, cold (~1 min)

Every figure is the wall time of a fresh process. The repetitions are interleaved (one of each
command, then the next round), and each row gives the minimum and the median over them:

- bare imports: ``import numpy, scipy.linalg, sklearn.cluster, h5py, yaml, pandas`` (the issue's list);
- cell libraries: every third-party module the 1-cell run below loads (measured in a probe run:
  numpy, scipy, scikit-learn, pandas, h5py, yaml, numba, typer ...), imported bare;
- ``kernlearn --help``;
- 1-cell run: ``kernlearn run configs/quick.yaml`` restricted to one cell (constraints.count 30,
  seed 7; iris, linear kernel, Burg, k-means NMI and 5-NN accuracy) into a fresh folder, the
  results table included;
- the same cell as array task 0 of a 1-cell grid, and as array task 7 of a 10,000-cell grid
  (seed: range(10000)), each with ``--array-index`` into a fresh folder;
- cold numba cache: the 1-cell run with an empty ``NUMBA_CACHE_DIR``, and ``kernlearn warmup`` of
  the config with an empty cache (each once per repetition); with ``--all-solvers``, once,
  ``kernlearn warmup`` of every solver with an empty cache.

Targets (issue 15): 1-cell run <= 1.3x the bare imports; ``--help`` <= 0.3 s; the 10,000-cell
task <= 1.15x the 1-cell task. Exit status 0 whatever the times.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "configs" / "quick.yaml"
ONE_CELL = ["--set", "grid.constraints.count=[30]", "--set", "grid.seed=[7]"]
BIG_GRID = ["--set", "grid.constraints.count=[30]", "--set", "grid.seed=range(10000)"]
BARE = "import numpy, scipy.linalg, sklearn.cluster, h5py, yaml, pandas"
ARRAY_VARS = ("SLURM_ARRAY_TASK_ID", "SGE_TASK_ID", "PBS_ARRAY_INDEX", "LSB_JOBINDEX")
TARGETS = {"run": 1.3, "help": 0.3, "grid": 1.15}

#: Runs the 1-cell run in-process and prints the third-party modules it loaded, in load order.
PROBE = """
import json, sys
from kernlearn_cli.cli import app
sys.argv = ["kernlearn", *json.loads(sys.argv[1])]
try:
    app()
except SystemExit:
    pass
std = set(sys.stdlib_module_names) | {"__main__", "kernlearn_cli"}
print(json.dumps([m for m in list(sys.modules) if m.split(".")[0] not in std]))
"""
#: Imports the given modules in order (a module that cannot be imported on its own is skipped).
IMPORT_ALL = """
import importlib, json, sys
for name in json.loads(sys.argv[1]):
    try:
        importlib.import_module(name)
    except Exception:
        pass
"""


def kernlearn() -> list[str]:
    """The console script beside this interpreter (what a user runs), else ``python -m kernlearn_cli``."""
    script = Path(sys.executable).with_name("kernlearn")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "kernlearn_cli"]


def timed(cmd: list[str], env: dict) -> float:
    t0 = time.perf_counter()
    res = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    seconds = time.perf_counter() - t0
    if res.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({res.returncode}):\n{res.stderr}")
    return seconds


def cell_modules(tmp: Path, env: dict) -> list[str]:
    args = ["run", str(CONFIG), *ONE_CELL, "--out", str(tmp / "probe")]
    res = subprocess.run([sys.executable, "-c", PROBE, json.dumps(args)], capture_output=True, text=True, env=env)
    if res.returncode != 0:
        sys.exit(f"probe run failed:\n{res.stderr}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5, help="interleaved repetitions (default 5)")
    ap.add_argument("--all-solvers", action="store_true", help="also time a cold warmup of every solver (once)")
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k not in ARRAY_VARS}
    kl = kernlearn()
    with tempfile.TemporaryDirectory(prefix="bench_startup_") as tmp:
        tmp = Path(tmp)
        timed([*kl, "warmup", str(CONFIG)], env)            # numba's cache warm for the warm rows
        modules = cell_modules(tmp, env)
        packages = sorted({m.split(".")[0] for m in modules if not m.startswith("_")})
        rows: dict[str, list[float]] = {}
        for rep in range(args.reps):
            cold = {**env, "NUMBA_CACHE_DIR": str(tmp / f"numba_run_{rep}")}
            commands = {
                "bare imports": [sys.executable, "-c", BARE],
                "cell libraries": [sys.executable, "-c", IMPORT_ALL, json.dumps(modules)],
                "kernlearn --help": [*kl, "--help"],
                "1-cell run": [*kl, "run", str(CONFIG), *ONE_CELL, "--out", str(tmp / f"run_{rep}")],
                "task 0 of a 1-cell grid": [*kl, "run", str(CONFIG), *ONE_CELL, "--array-index", "0",
                                            "--out", str(tmp / f"one_{rep}")],
                "task 7 of a 10,000-cell grid": [*kl, "run", str(CONFIG), *BIG_GRID, "--array-index", "7",
                                                 "--out", str(tmp / f"big_{rep}")],
            }
            for name, cmd in commands.items():
                rows.setdefault(name, []).append(timed(cmd, env))
            rows.setdefault("1-cell run, cold numba cache", []).append(
                timed([*kl, "run", str(CONFIG), *ONE_CELL, "--out", str(tmp / f"cold_{rep}")], cold))
            rows.setdefault("warmup of the config, cold cache", []).append(
                timed([*kl, "warmup", str(CONFIG)], {**env, "NUMBA_CACHE_DIR": str(tmp / f"numba_warm_{rep}")}))
            print(f"repetition {rep + 1}/{args.reps} done", file=sys.stderr, flush=True)
        if args.all_solvers:
            rows["warmup of every solver, cold cache"] = [
                timed([*kl, "warmup"], {**env, "NUMBA_CACHE_DIR": str(tmp / "numba_all")})]

    best = {name: min(times) for name, times in rows.items()}
    ratios = {
        "cell libraries": ("bare imports", None),
        "1-cell run": ("bare imports", TARGETS["run"]),
        "task 0 of a 1-cell grid": ("bare imports", None),
        "task 7 of a 10,000-cell grid": ("task 0 of a 1-cell grid", TARGETS["grid"]),
        "1-cell run, cold numba cache": ("1-cell run", None),
        "warmup of the config, cold cache": ("bare imports", None),
        "warmup of every solver, cold cache": ("bare imports", None),
    }
    print(f"Start-up of a cell, {args.reps} interleaved repetitions (min and median wall time of a fresh process)")
    print(f"{'':34} {'min s':>7} {'median s':>9}   ratio of the minima")
    for name, times in rows.items():
        line = f"{name:34} {min(times):7.2f} {statistics.median(times):9.2f}"
        if name in ratios:
            base, target = ratios[name]
            line += f"   {best[name] / best[base]:5.2f}x {base}"
            if target:
                line += f" (target <= {target}x)"
        elif name == "kernlearn --help":
            line += f"   (target <= {TARGETS['help']} s)"
        print(line)
    print(f"1-cell run / cell libraries: {best['1-cell run'] / best['cell libraries']:.2f}x; the cell's "
          f"third-party packages: {', '.join(packages)}")


if __name__ == "__main__":
    main()
