"""Every family against n: CPU and wall time, iterations and peak memory (issue 45, item 6).

    python benchmarks/scale/bench_scale.py --quick            # small n grid, under 5 minutes (part of `make bench`)
    python benchmarks/scale/bench_scale.py                    # the full grid, 10 minutes at most per cell
    python benchmarks/scale/bench_scale.py --families burg_linear,itml --budget 120

Each (family, n) cell runs in a fresh process (``--cell FAMILY N``), one BLAS and numba thread, so
its peak resident memory (:class:`kernlearn_cli.resources.PeakMemory`, the process's high-water
mark reset before the cell: imports included, which is what a SLURM ``--mem`` has to cover) is the
cell's own.  Before its measured block a cell runs the same family once at a small n (imports,
numba's cache, first calls).  The measured block is the cell end to end through the library's own
pipeline (:func:`kernlearn_cli.prepare.prepare`: dataset, K0, constraints; then the solver): the
problems are kernlearn configs (``FAMILIES`` below), seed 0, so a rerun solves the same problems
and gives the same iterations.

A cell stops at ``--budget`` seconds of wall time (killed, recorded ``timeout``).  A cell whose
estimate from the two previous n (time and memory extrapolated along their log-log slope, or the
family's nominal exponent after one n) exceeds the budget or ``--max-memory`` is not started
(recorded ``skipped``, with the estimate), nor is any larger n of that family.

Beside ours, on the same data: metric-learn's ITML (on ``burg_linear``'s points and constraints,
the same bounds and slack γ = 1) in a virtualenv of its own (metric-learn 0.7 needs
scikit-learn < 1.8; created on demand at ``--ml-venv``, ITML skipped with the reason when it
cannot be), and scikit-learn's ``Nystroem`` (on ``nystrom``'s points, the same m and width).

Writes ``benchmarks/scale/figures/scale.csv`` and ``scale.png`` (``scale_quick.*`` with ``--quick``):
log-log time (CPU seconds of the cell) and memory (what the cell added to the process at its peak:
the imports, about 0.2 GB, would flatten every curve) against n, one curve per family, the
least-squares exponent in the legend.  The CSV has both the peak and the added memory.
"""

# ---- one thread: before numpy / numba are imported ----------------------------------------
import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import csv  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FIGURES = HERE / "figures"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

#: Landmarks of the Nyström families and of scikit-learn's Nystroem (bench_nystrom's m).
LANDMARKS = 100
#: Trials of MEG per cell (each a dense n x n eigendecomposition today).
MEG_TRIALS = 20
#: n of each cell's untimed warm-up run of its family.
WARM_N = 300
FIELDS = ["family", "n", "status", "constraints", "rank", "iterations", "converged", "cpu_seconds", "wall_seconds",
          "setup_seconds", "solve_cpu_seconds", "peak_bytes", "added_bytes", "process_wall_seconds", "note"]


def _pairs(count):
    return {"name": "itml_pairs", "count": count}


def _cfg(dataset, kernel, constraints, solver):
    return {"name": "bench_scale", "seed": 0, "dataset": dataset, "constraints": constraints, "solver": solver,
            **({"kernel": kernel} if kernel else {}), "evaluate": []}


BURG = {"name": "burg", "slack": 1.0, "stop": "dual_change", "sweeps": "active"}
VON_NEUMANN = {"name": "von_neumann", "slack": 1.0}
LINEAR = {"name": "linear"}
RBF_LOW_RANK = {"name": "rbf", "factorization": "pivoted_cholesky", "rank": 64}


def gauss(n, dim):
    return {"name": "two_gaussians", "n": n, "dim": dim}


@dataclass(frozen=True)
class Family:
    """One curve: a kernlearn config at n (``config``), or a reference library's run (``runner``)."""

    config: object               # n -> config dict; for the references, the family whose data they share
    quick: tuple
    full: tuple
    exponent: float              # nominal time exponent, to extrapolate from a single n
    runner: str = "kernlearn"    # kernlearn | itml | sklearn_nystroem


#: The issue's problems (issue 45's table): ITML-style pairs with count = n for the Bregman solvers, Li et al.'s
#: graph kernel and neighbour triplets for TRIN, Hu & Kwok's must/cannot pairs, Zhang et al.'s 100 labelled
#: points, Tsuda et al.'s identity K0 and distance stream for MEG.
FAMILIES = {
    "burg_linear": Family(lambda n: _cfg(gauss(n, 64), LINEAR, _pairs(n), BURG),
                          (1000, 5000), (1000, 3000, 10_000, 30_000, 100_000, 300_000, 1_000_000), 1.8),
    "burg_rbf": Family(lambda n: _cfg(gauss(n, 20), RBF_LOW_RANK, _pairs(n), BURG),
                       (1000, 5000), (1000, 3000, 10_000, 30_000, 100_000, 300_000, 1_000_000), 1.8),
    "von_neumann_linear": Family(lambda n: _cfg(gauss(n, 64), LINEAR, _pairs(n), VON_NEUMANN),
                                 (1000, 3000), (1000, 3000, 10_000, 30_000, 100_000, 300_000, 1_000_000), 2.0),
    "von_neumann_rbf": Family(lambda n: _cfg(gauss(n, 20), RBF_LOW_RANK, _pairs(n), VON_NEUMANN),
                              (1000, 3000), (1000, 3000, 10_000, 30_000, 100_000, 300_000, 1_000_000), 2.0),
    "trin": Family(lambda n: _cfg(gauss(n, 10), {"name": "laplacian_pinv", "neighbors": 10},
                                  {"name": "neighbor_triplets"},
                                  {"name": "trin", "loss": "log", "gamma": 1.0, "tol": 1e-3, "max_iter": 30}),
                   (300, 600), (500, 1000, 2000, 3000, 5000), 3.0),
    "admm": Family(lambda n: _cfg(gauss(n, 10), None, {"name": "must_cannot", "count": 1000},
                                  {"name": "admm", "rank": 44, "max_iter": 100}),
                   (1000, 4000), (1000, 4000, 16_000, 64_000), 1.2),
    "nystrom": Family(lambda n: _cfg(gauss(n, 10), None, {"name": "labeled_subset", "count": 100},
                                     {"name": "nystrom", "landmarks": LANDMARKS}),
                      (10_000, 100_000), (10_000, 100_000, 1_000_000), 1.0),
    "nystrom_prior": Family(lambda n: _cfg(gauss(n, 10), None, {"name": "labeled_subset", "count": 100},
                                           {"name": "nystrom_prior", "landmarks": LANDMARKS, "lam": 1.0}),
                            (10_000, 100_000), (10_000, 100_000, 1_000_000), 1.0),
    "meg": Family(lambda n: _cfg(gauss(n, 10), {"name": "identity"}, {"name": "distance_stream", "count": MEG_TRIALS,
                                                                       "reference": LINEAR},
                                 {"name": "meg", "iterations": MEG_TRIALS}),
                  (250, 500), (250, 500, 1000, 2000, 4000), 3.0),
    "meg_lanczos": Family(lambda n: _cfg(gauss(n, 10), {"name": "identity"},
                                         {"name": "distance_stream", "count": MEG_TRIALS, "reference": LINEAR},
                                         {"name": "meg", "iterations": MEG_TRIALS, "update": "lanczos"}),
                          (250, 500), (250, 500, 1000, 2000, 4000, 8000), 2.0),
    "definiteboost": Family(lambda n: _cfg(gauss(n, 16), LINEAR, {"name": "random_pairs", "count": n},
                                           {"name": "definiteboost", "dual_correction": True, "max_steps": 20 * n}),
                            (1000, 2000), (1000, 3000, 10_000, 30_000), 2.0),
    "pcp_sdp": Family(lambda n: _cfg(gauss(n, 10), None, {"name": "must_cannot", "count": n},
                                     {"name": "pcp_sdp"}),
                      (30, 50), (30, 50, 80, 120, 200), 3.0),
    "itml": Family("burg_linear", (1000, 2000), (1000, 3000, 10_000, 30_000), 1.8, runner="itml"),
    "sklearn_nystroem": Family("nystrom", (10_000, 100_000), (10_000, 100_000, 1_000_000), 1.0,
                               runner="sklearn_nystroem"),
}


# ---- one cell, in its own process ----------------------------------------------------------------------------------

def _prepared(config):
    from kernlearn_cli.config import Cell
    from kernlearn_cli.prepare import prepare

    cell = Cell(index=0, config=config)
    return cell, prepare(cell, "bench_scale")


def _solve_kernlearn(config):
    """(setup wall, result, constraints, rank of G0) of one cell through the library's pipeline."""
    t0 = time.perf_counter()
    _, prep = _prepared(config)
    setup = time.perf_counter() - t0
    solver, params = prep.bound["solver"]
    c0 = time.process_time()
    result = solver.func(prep.G0, prep.constraints, **prep.solver_extra, **params)
    rank = None if prep.G0 is None else int(prep.G0.shape[1])
    return {"setup_seconds": setup, "solve_cpu_seconds": time.process_time() - c0, "iterations": int(result.iterations),
            "converged": None if result.converged is None else bool(result.converged),   # None: a closed form
            "constraints": len(prep.constraints), "rank": rank}


def _solve_sklearn_nystroem(config):
    """scikit-learn's Nystroem on the nystrom family's points, m = LANDMARKS, width b of kernlearn's nystrom."""
    from sklearn.kernel_approximation import Nystroem

    from kernlearn_cli.config import bind_cell, Cell
    from kernlearn_cli.memo import dataset_key, load_dataset
    from kernlearn_cli.solvers.nystrom import gaussian_width

    t0 = time.perf_counter()
    ds = load_dataset(dataset_key(bind_cell(Cell(0, config), "bench_scale")))
    setup = time.perf_counter() - t0
    c0 = time.process_time()
    G = Nystroem(kernel="rbf", gamma=1.0 / gaussian_width(ds.X), n_components=LANDMARKS,
                 random_state=0).fit_transform(ds.X)
    return {"setup_seconds": setup, "solve_cpu_seconds": time.process_time() - c0, "iterations": 1, "converged": True, "constraints": 0, "rank": G.shape[1]}


def _solve_itml(config, ml_python):
    """metric-learn's ITML on burg_linear's points and pairs (bounds u, l; gamma = burg's slack), in the ml venv."""
    t0 = time.perf_counter()
    _, prep = _prepared(config)
    C = prep.constraints
    from kernlearn_cli.types import KIND_CODE

    similar = C.kind == KIND_CODE["dist_le"]
    u = float(C.bound[similar][0]) if similar.any() else 0.0
    lo = float(C.bound[~similar][0]) if (~similar).any() else 0.0
    setup = time.perf_counter() - t0
    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "itml.npz"
        np.savez(data, X=prep.dataset.X, i=C.i, j=C.j, y=np.where(similar, 1, -1), bounds=np.array([u, lo]))
        out = subprocess.run([ml_python, __file__, "--itml-npz", str(data), "--slack", str(BURG["slack"])],
                             capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    if out.returncode:
        raise RuntimeError(f"ITML process failed: {out.stderr.strip()[-400:]}")
    row = json.loads(out.stdout.strip().splitlines()[-1])
    return {**row, "setup_seconds": setup, "constraints": len(C), "rank": prep.dataset.X.shape[1]}


def itml_cell(path: str, slack: float) -> dict:
    """In the ml venv: fit ITML, measured (CPU, wall, peak of this process)."""
    import numpy as np
    from metric_learn import ITML

    from kernlearn_cli.resources import PeakMemory

    with PeakMemory() as mem:
        d = np.load(path)
        pairs = np.stack([d["X"][d["i"]], d["X"][d["j"]]], axis=1)
        c0 = time.process_time()
        itml = ITML(gamma=slack, tol=1e-3, max_iter=10_000, prior="identity", random_state=0)
        itml.fit(pairs, d["y"], bounds=d["bounds"])
        cpu = time.process_time() - c0
    return {"iterations": int(itml.n_iter_), "converged": bool(itml.n_iter_ < 10_000), "itml_cpu": cpu,
            "itml_peak": mem.peak_bytes, "itml_added": mem.added_bytes}


def run_cell(family: str, n: int, ml_python: str | None) -> dict:
    """Warm up at WARM_N, then measure the cell at n: CPU and wall of the whole block, peak RSS."""
    from threadpoolctl import threadpool_limits

    from kernlearn_cli.resources import PeakMemory

    fam = FAMILIES[family]
    config = fam.config if callable(fam.config) else FAMILIES[fam.config].config

    def solve(m):
        if fam.runner == "itml":
            return _solve_itml(config(m), ml_python)
        if fam.runner == "sklearn_nystroem":
            return _solve_sklearn_nystroem(config(m))
        return _solve_kernlearn(config(m))

    with threadpool_limits(limits=1):
        solve(min(WARM_N, n)) if fam.runner != "itml" else None
        with PeakMemory() as mem:
            w0, c0 = time.perf_counter(), time.process_time()
            row = solve(n)
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    if fam.runner == "itml":     # the fit ran in the ml process: its own CPU, wall and peak
        row["solve_cpu_seconds"] = row.pop("itml_cpu")
        cpu, peak, added = cpu + row["solve_cpu_seconds"], row.pop("itml_peak"), row.pop("itml_added")
    else:
        peak, added = mem.peak_bytes, mem.added_bytes
    return {**row, "family": family, "n": n, "status": "ok", "cpu_seconds": cpu, "wall_seconds": wall,
            "peak_bytes": peak, "added_bytes": max(added, 1)}


# ---- the grid: one process per cell ---------------------------------------------------------------------------------

def ml_python(venv: Path) -> tuple[str | None, str]:
    """The ml venv's interpreter (created on demand), or None and the reason."""
    py = venv / "bin" / "python"
    check = [str(py), "-c", "import metric_learn, sklearn"]
    if py.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return str(py), ""
    print(f"creating {venv} (metric-learn 0.7 with scikit-learn < 1.8) ...", flush=True)
    try:
        subprocess.run(["python3", "-m", "venv", str(venv)], check=True,
                       capture_output=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", "metric-learn", "scikit-learn<1.8", "numpy"],
                       check=True, capture_output=True, timeout=900)
    except (OSError, subprocess.SubprocessError) as exc:
        err = getattr(exc, "stderr", b"") or b""
        return None, f"could not create {venv}: {exc} {err.decode(errors='replace').strip()[-300:]}"
    if subprocess.run(check, capture_output=True).returncode:
        return None, f"{venv} has no working metric_learn"
    return str(py), ""


def slope(x, y) -> float:
    import numpy as np

    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def estimate(done: list[dict], n: int, exponent: float) -> tuple[float, float]:
    """(wall seconds, peak bytes) at n, extrapolated from the family's measured cells."""
    ok = [r for r in done if r["status"] == "ok"]
    if not ok:
        return 0.0, 0.0
    last = ok[-1]
    if len(ok) >= 2:
        prev = ok[-2]
        p_t = min(max(slope([prev["n"], last["n"]], [prev["wall_seconds"], last["wall_seconds"]]), 1.0), 3.5)
        p_m = min(max(slope([prev["n"], last["n"]], [prev["added_bytes"], last["added_bytes"]]), 1.0), 2.0)
    else:
        p_t, p_m = exponent, min(exponent, 2.0)
    ratio = n / last["n"]
    overhead = last["process_wall_seconds"] - last["wall_seconds"]            # start-up and warm-up
    base = last["peak_bytes"] - last["added_bytes"]                           # imports
    return overhead + last["wall_seconds"] * ratio ** p_t, base + last["added_bytes"] * ratio ** p_m


def run_family(name: str, ns, budget: float, max_memory: float, ml: str | None, ml_reason: str) -> list[dict]:
    fam, rows = FAMILIES[name], []
    for n in ns:
        base = {"family": name, "n": n}
        if fam.runner == "itml" and ml is None:
            rows.append({**base, "status": "skipped", "note": ml_reason})
            continue
        if rows and rows[-1]["status"] != "ok":
            rows.append({**base, "status": "skipped", "note": f"n = {rows[-1]['n']}: {rows[-1]['status']}"})
            continue
        est_t, est_m = estimate(rows, n, fam.exponent)
        if est_t > budget or est_m > max_memory:
            rows.append({**base, "status": "skipped",
                         "note": f"estimate {est_t:.0f} s, {est_m / 1e9:.1f} GB > budget {budget:.0f} s, "
                                 f"{max_memory / 1e9:.1f} GB"})
            continue
        cmd = [sys.executable, __file__, "--cell", name, str(n)] + (["--ml-python", ml] if ml else [])
        t0 = time.perf_counter()
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=budget,
                                 env={**os.environ, "PYTHONPATH": str(ROOT)})
        except subprocess.TimeoutExpired:
            rows.append({**base, "status": "timeout", "process_wall_seconds": time.perf_counter() - t0,
                         "note": f"killed at the budget ({budget:.0f} s)"})
            continue
        took = time.perf_counter() - t0
        if out.returncode:
            rows.append({**base, "status": "failed", "process_wall_seconds": took,
                         "note": " ".join(out.stderr.strip().splitlines()[-1:])[:200]})
            continue
        rows.append({**json.loads(out.stdout.strip().splitlines()[-1]), "process_wall_seconds": took})
    return rows


def show(r: dict) -> str:
    if r["status"] != "ok":
        return f"  {r['family']:>18} n = {r['n']:>8,}: {r['status']} ({r.get('note', '')})"
    conv = " (not converged)" if r["converged"] is False else ""
    return (f"  {r['family']:>18} n = {r['n']:>8,}: CPU {r['cpu_seconds']:8.2f} s (solve "
            f"{r['solve_cpu_seconds']:7.2f} s), wall {r['wall_seconds']:8.2f} s, {r['iterations']:>6} iterations"
            f"{conv}, peak {r['peak_bytes'] / 1e9:6.2f} GB (+{r['added_bytes'] / 1e9:.2f} GB)")


def markdown(rows: list[dict]) -> str:
    """The table of docs/scale.md: one line per cell."""
    lines = ["| family | n | constraints | rank | iterations | CPU s | wall s | peak GB | added GB | note |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        if r["status"] != "ok":
            lines.append(f"| {r['family']} | {int(r['n']):,} | | | | | | | | {r['status']}: {r.get('note', '')} |")
            continue
        conv = " (cap)" if r["converged"] is False else ""
        lines.append(f"| {r['family']} | {int(r['n']):,} | {int(r['constraints']):,} | {r['rank'] or '-'} | "
                     f"{r['iterations']}{conv} | {float(r['cpu_seconds']):.2f} | {float(r['wall_seconds']):.2f} | "
                     f"{float(r['peak_bytes']) / 1e9:.2f} | {float(r['added_bytes']) / 1e9:.2f} | |")
    return "\n".join(lines)


def read_rows(paths: list[Path]) -> list[dict]:
    """Rows of earlier runs' CSVs (numbers back to numbers), to merge pieces run separately."""
    rows = []
    for path in paths:
        with open(path) as f:
            for r in csv.DictReader(f):
                for key in ("n", "constraints", "iterations"):
                    r[key] = int(r[key]) if r[key] else None
                for key in ("cpu_seconds", "wall_seconds", "setup_seconds", "solve_cpu_seconds", "peak_bytes",
                            "added_bytes", "process_wall_seconds"):
                    r[key] = float(r[key]) if r[key] else None
                r["rank"] = int(r["rank"]) if r["rank"] else None
                r["converged"] = {"True": True, "False": False}.get(r["converged"])
                rows.append(r)
    return rows


def write(rows: list[dict], out: Path) -> None:
    """The CSV, its figure (same stem, .png) and the exponents."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    figure(rows, out.with_suffix(".png"))
    print(f"wrote {out} and {out.with_suffix('.png')}")
    for name in FAMILIES:
        ok = [r for r in rows if r["family"] == name and r["status"] == "ok"]
        if len(ok) >= 2:
            n = [r["n"] for r in ok]
            print(f"  {name:>18}: time exponent {slope(n, [r['cpu_seconds'] for r in ok]):.2f}, "
                  f"memory exponent {slope(n, [r['added_bytes'] for r in ok]):.2f} (added at the peak)")
    print(markdown(rows))


def figure(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8))
    colors = dict(zip(FAMILIES, plt.cm.tab20.colors[::2] + plt.cm.tab20.colors[1::2]))
    for name in FAMILIES:
        ok = [r for r in rows if r["family"] == name and r["status"] == "ok"]
        if not ok:
            continue
        n = [r["n"] for r in ok]
        style = "s--" if FAMILIES[name].runner != "kernlearn" else "o-"
        for ax, key in zip(axes, ("cpu_seconds", "added_bytes")):
            y = [r[key] / (1e9 if key == "added_bytes" else 1) for r in ok]
            label = f"{name} ({slope(n, y):.2f})" if len(ok) >= 2 else f"{name} (one n)"
            ax.loglog(n, y, style, ms=4, color=colors[name], label=label)
    axes[0].set(xlabel="n", ylabel="CPU seconds (data, K0, constraints, solve)", title="time vs n (exponent)")
    axes[1].set(xlabel="n", ylabel="GB: peak resident memory minus that on entry",
                title="memory the cell adds at its peak vs n (exponent)")
    for ax in axes:
        ax.grid(True, which="both", lw=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small n grid (under 5 minutes)")
    ap.add_argument("--families", default=",".join(FAMILIES), help="comma-separated subset of: " + ", ".join(FAMILIES))
    ap.add_argument("--budget", type=float, default=None, help="wall seconds per cell (default 30 quick, 600 full)")
    ap.add_argument("--max-memory", type=float, default=8.0, help="GB: skip cells estimated above it")
    ap.add_argument("--ml-venv", type=Path, default=ROOT / ".venv-ml", help="virtualenv for metric-learn's ITML")
    ap.add_argument("--out", type=Path, default=None, help="CSV path (default benchmarks/scale/figures/scale[_quick].csv)")
    ap.add_argument("--merge", type=Path, nargs="+", help="only merge these CSVs (pieces run separately) into --out")
    ap.add_argument("--cell", nargs=2, metavar=("FAMILY", "N"), help=argparse.SUPPRESS)
    ap.add_argument("--ml-python", help=argparse.SUPPRESS)
    ap.add_argument("--itml-npz", help=argparse.SUPPRESS)
    ap.add_argument("--slack", type=float, default=1.0, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.itml_npz:
        print(json.dumps(itml_cell(args.itml_npz, args.slack)))
        return 0
    if args.cell:
        print(json.dumps(run_cell(args.cell[0], int(args.cell[1]), args.ml_python)))
        return 0

    stem = "scale_quick" if args.quick else "scale"
    out = args.out or FIGURES / f"{stem}.csv"
    if args.merge:
        write(read_rows(args.merge), out)
        return 0
    names = [f.strip() for f in args.families.split(",") if f.strip()]
    unknown = sorted(set(names) - set(FAMILIES))
    if unknown:
        ap.error(f"unknown families {unknown}; valid: {', '.join(FAMILIES)}")
    budget = args.budget or (30.0 if args.quick else 600.0)
    ml, reason = (None, "not selected")
    if "itml" in names:
        ml, reason = ml_python(args.ml_venv)
        if ml is None:
            print(f"ITML skipped: {reason}")
    started = time.perf_counter()
    print(f"bench_scale{' --quick' if args.quick else ''}: {len(names)} families, {budget:.0f} s per cell at most, "
          f"one thread; CPU/wall of the cell (data, K0, constraints, solve), peak RSS of its process", flush=True)
    t0 = time.perf_counter()             # numba compiles once here (after an edit), not inside a cell's budget
    subprocess.run([sys.executable, "-m", "kernlearn_cli", "warmup"], check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    print(f"kernlearn warmup (compiled kernels into numba's cache, untimed): {time.perf_counter() - t0:.0f} s",
          flush=True)
    rows = []
    for name in names:
        fam = FAMILIES[name]
        for r in run_family(name, fam.quick if args.quick else fam.full, budget, args.max_memory * 1e9, ml, reason):
            rows.append(r)
            print(show(r), flush=True)
    write(rows, out)
    print(f"bench_scale: {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
