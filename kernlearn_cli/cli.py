"""The ``kernlearn`` command line: a thin layer over config, experiment and report."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import List, Optional

import typer

from . import __version__
from .errors import ConfigError, InfeasibleError, KernlearnError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Learn kernel matrices from side information, reproducibly.")
datasets_app = typer.Typer(no_args_is_help=True, help="Fetch and verify catalogue datasets in the data home.")
app.add_typer(datasets_app, name="datasets")

def _echo_err(msg: str) -> None:
    typer.echo(msg, err=True)


def _cells(config: Path, overrides, seed):
    from .config import expand, load

    cfg = load(config, overrides or [], seed)
    return cfg, expand(cfg)


SET_HELP = "Override a value: --set solver.tol=1e-6, --set grid.seed='range(3)' (repeatable)."


@app.command()
def run(config: Path = typer.Argument(..., help="YAML experiment config."),
        out: Optional[Path] = typer.Option(None, "--out", help="Results folder (default results/<name>)."),
        set_: List[str] = typer.Option([], "--set", help=SET_HELP),
        seed: Optional[int] = typer.Option(None, "--seed", help="Seed of every cell (drops a seed grid axis)."),
        jobs: int = typer.Option(1, "--jobs", "-j", help="Worker processes for the cells."),
        array_index: Optional[int] = typer.Option(
            None, "--array-index", help="Run only array task K (default: $SLURM_ARRAY_TASK_ID, $SGE_TASK_ID, "
                                        "$PBS_ARRAY_INDEX or $LSB_JOBINDEX when set)."),
        cells_per_task: int = typer.Option(1, "--cells-per-task", help="Cells per array task (with an index)."),
        force: bool = typer.Option(False, "--force", help="Rerun finished cells."),
        verbose: int = typer.Option(0, "--verbose", "-v", count=True, help="-v: solver iterations.")):
    """Run the cells of CONFIG (finished cells are skipped) and print the results table."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from .report import collect as collect_, convergence
    from .runner import array_index_from_env, claim_folder, run_cells, select_cells

    cfg, cells = _cells(config, set_, seed)
    out = out or Path("results") / cfg["name"]
    if array_index is None:
        array_index = array_index_from_env()
    if array_index is not None:
        cells = select_cells(cells, array_index, cells_per_task, str(config))
    claim_folder(out, cfg, str(config))

    done = skipped = 0
    failed: list[str] = []
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, transient=True, disable=not sys.stderr.isatty()) as bar:
        task = bar.add_task(cfg["name"], total=len(cells))
        for cell, record, error in run_cells(cells, out, where=str(config), jobs=jobs, force=force,
                                                   verbose=bool(verbose)):
            bar.advance(task)
            if error is not None:     # certified infeasible, or a numerical breakdown; the others still run
                failed.append(f"[{cell.index}] {cell.id}: {error}")
                bar.console.print(f"[{cell.index}] {cell.id}: FAILED ({error.split(':')[0]}), nothing written",
                                  highlight=False)
            elif record is None:
                skipped += 1
            else:
                done += 1
                metrics = "  ".join(f"{k}={v:.4f}" for k, v in record["metrics"].items()
                                    if not k.endswith("_std") and isinstance(v, (int, float)))
                bar.console.print(f"[{cell.index}] {cell.id}: {record['solver']} {record['iterations']} it "
                                  f"{record['seconds']:.2f}s {convergence(record)}  {metrics}", highlight=False,
                                  soft_wrap=True)
    _echo_err(f"{done} cell(s) run, {skipped} already finished, {len(failed)} failed, results in {out}")
    if failed:
        raise InfeasibleError(f"{len(failed)} cell(s) failed and wrote nothing; the first: {failed[0]}")
    if array_index is None:
        _, md, _ = collect_([out])
        typer.echo(md)


@app.command()
def slurm(config: Path = typer.Argument(..., help="YAML experiment config."),
          out: Optional[Path] = typer.Option(None, "--out", help="Results folder (default results/<name>)."),
          set_: List[str] = typer.Option([], "--set", help=SET_HELP),
          seed: Optional[int] = typer.Option(None, "--seed", help="Seed of every cell."),
          cells_per_task: int = typer.Option(1, "--cells-per-task", help="Cells per array task."),
          partition: Optional[str] = typer.Option(None, "--partition", help="#SBATCH --partition."),
          time: Optional[str] = typer.Option(None, "--time", help="#SBATCH --time, e.g. 01:00:00."),
          mem: Optional[str] = typer.Option(None, "--mem", help="#SBATCH --mem, e.g. 4G."),
          cpus: int = typer.Option(1, "--cpus-per-task", help="#SBATCH --cpus-per-task."),
          script: Optional[Path] = typer.Option(None, "--script", "-o",
                                                help="Where to write the script (default OUT/slurm/<name>.sbatch).")):
    """Write an sbatch job-array script that runs the cells of CONFIG, one array task per cell (or pack)."""
    from .runner import sbatch_script, select_cells, task_count

    cfg, cells = _cells(config, set_, seed)
    select_cells(cells, 0, cells_per_task, str(config))        # validates --cells-per-task
    out = (out or Path("results") / cfg["name"]).resolve()
    text = sbatch_script(config.resolve(), out, task_count(len(cells), cells_per_task), cells_per_task,
                         name=cfg["name"], overrides=set_, seed=seed, partition=partition, time=time, mem=mem,
                         cpus=cpus, python=sys.executable)
    script = script or out / "slurm" / f"{cfg['name']}.sbatch"
    script.parent.mkdir(parents=True, exist_ok=True)
    (out / "slurm").mkdir(parents=True, exist_ok=True)
    script.write_text(text)
    typer.echo(str(script))
    _echo_err(f"{len(cells)} cell(s) in {task_count(len(cells), cells_per_task)} array task(s); "
              f"submit with: sbatch {script}")


@app.command()
def plan(config: Path = typer.Argument(..., help="YAML experiment config."),
         set_: List[str] = typer.Option([], "--set", help=SET_HELP),
         seed: Optional[int] = typer.Option(None, "--seed", help="Seed of every cell.")):
    """Print the numbered cells a config's grid expands into."""
    _, cells = _cells(config, set_, seed)
    for cell in cells:
        values = ", ".join(f"{k}={v}" for k, v in cell.grid_values.items())
        typer.echo(f"{cell.index:4d}  {cell.id}  {values}")
    typer.echo(f"{len(cells)} cell(s)")


@app.command()
def collect(directories: List[Path] = typer.Argument(..., help="Results folder(s) of experiments."),
            metric: Optional[str] = typer.Option(None, "--metric", "-m",
                                                 help="Lay one metric out as a paper's table (rows x cols)."),
            rows: Optional[str] = typer.Option(None, "--rows", help="Row key of --metric (e.g. constraints.count)."),
            cols: Optional[str] = typer.Option(None, "--cols", help="Column key of --metric (default solver)."),
            agg: str = typer.Option("mean", "--agg", help="--metric cells: mean (± std), min or max."),
            prefix: Optional[Path] = typer.Option(None, "--prefix", help="Write PREFIX.csv/.md/.tex."),
            into: Optional[Path] = typer.Option(None, "--into", help="Also fill this Markdown file's block ..."),
            marker: Optional[str] = typer.Option(None, "--marker", help="... <!-- kernlearn:MARKER -->.")):
    """Aggregate per-cell records into tables (CSV, Markdown, LaTeX), mean ± std over seeds."""
    from .report import collect as collect_, fill_marker

    if (into is None) != (marker is None):
        raise ConfigError("collect: --into and --marker go together (--into README.md --marker NAME).")
    _, md, incomplete = collect_(directories, metric=metric, rows=rows, cols=cols, agg=agg, prefix=prefix)
    typer.echo(md)
    if incomplete:
        _echo_err(f"note: {incomplete} incomplete cell(s) ignored (no record.json).")
    if into is not None:
        fill_marker(into, marker, md)
        _echo_err(f"filled <!-- kernlearn:{marker} --> in {into}")


@app.command()
def plot(directories: List[Path] = typer.Argument(..., help="Results folder(s) of experiments."),
         metric: str = typer.Option(..., "--metric", "-m", help="y axis: a metric, seconds or iterations."),
         x: str = typer.Option("constraints.count", "--x", help="x axis: a grid key, or n."),
         by: Optional[str] = typer.Option(None, "--by", help="One curve per value of this key (default solver)."),
         loglog: bool = typer.Option(False, "--loglog", help="Log-log axes (e.g. time vs n)."),
         logx: bool = typer.Option(False, "--logx", help="Logarithmic x axis (e.g. iterations)."),
         title: Optional[str] = typer.Option(None, "--title"),
         output: Path = typer.Option(..., "--output", "-o", help="Figure file (.png, .pdf, .svg).")):
    """Draw metric vs x, one curve per method, mean with ± std error bars over seeds."""
    from .report import load_records, plot_curves

    df, _ = load_records(directories)
    ringed = plot_curves(df, metric, x, by, loglog=loglog, logx=logx, title=title, output=output)
    typer.echo(str(output))
    if ringed:
        _echo_err(f"note: {ringed} point(s) include cells that did not converge (ringed in red)")


@app.command("plot-history")
def plot_history(directories: List[Path] = typer.Argument(..., help="Results folder(s) of experiments."),
                 key: str = typer.Option("dual_objective", "--key", "-k",
                                         help="History dataset of factors.h5 (e.g. dual_objective, dual_change)."),
                 mean: bool = typer.Option(False, "--mean", help="Mean ± std band per setting instead of one line per cell."),
                 logx: bool = typer.Option(False, "--logx", help="Logarithmic step axis."),
                 logy: bool = typer.Option(False, "--logy", help="Logarithmic value axis."),
                 xlabel: str = typer.Option("step", "--xlabel", help="Label of the x axis."),
                 title: Optional[str] = typer.Option(None, "--title"),
                 output: Path = typer.Option(..., "--output", "-o", help="Figure file (.png, .pdf, .svg).")):
    """Draw a per-iteration history (history/KEY of each cell's factors.h5) against the step."""
    from .report import plot_history as plot_history_

    lines = plot_history_(directories, key, mean=mean, logx=logx, logy=logy, xlabel=xlabel, title=title,
                          output=output)
    typer.echo(str(output))
    _echo_err(f"{lines} line(s) of history '{key}'")


@app.command()
def embed(run_dir: Path = typer.Argument(..., help="Cell folder of a finished run (holds factors.h5)."),
          new_data: Path = typer.Argument(..., help="Features of new points: .npy, .csv or .txt (n_new x d)."),
          output: Optional[Path] = typer.Option(None, "--output", "-o",
                                                help="Where to write the rows (.npy; default RUN_DIR/embed_<name>.npy).")):
    """Factor rows of new points for an inductive learned kernel (nystrom, nystrom_prior)."""
    from .embed import embed as embed_

    typer.echo(str(embed_(run_dir, new_data, output)))


@app.command("list")
def list_(kind: Optional[str] = typer.Argument(None, help="datasets|kernels|constraints|solvers|evaluators")):
    """List the registered components (and their settings)."""
    from .registry import REGISTRIES, did_you_mean

    if kind is not None and kind not in REGISTRIES:
        raise ConfigError(f"unknown kind '{kind}'.{did_you_mean(kind, REGISTRIES)} "
                          f"Valid kinds: {', '.join(REGISTRIES)}.")
    for name, reg in REGISTRIES.items():
        if kind not in (None, name):
            continue
        typer.echo(f"{name}:")
        for entry in reg.entries():
            params = ", ".join(f"{p}={par.default!r}" if par.default is not par.empty else p
                               for p, par in entry.parameters().items())
            typer.echo(f"  {entry.name:<26} {entry.summary}")
            if params:
                typer.echo(f"  {'':<26} [{params}]")


@datasets_app.command("fetch")
def datasets_fetch(name: str = typer.Argument(..., help="Catalogue dataset name.")):
    """Download a dataset into the data home (mirror first) and check its sha256."""
    from .data import catalogue

    for path in catalogue.fetch(name).values():
        typer.echo(f"ok  {path}")


@datasets_app.command("verify")
def datasets_verify(name: Optional[str] = typer.Argument(None, help="Catalogue dataset (default all).")):
    """Check the sha256 of the files in the data home (exit status 1 if any file is corrupt)."""
    from .data import catalogue

    rows = catalogue.verify(name)
    for row in rows:
        typer.echo(f"{row.dataset:<26} {row.file:<48} {row.status}")
    if any(row.status == "mismatch" for row in rows):
        raise typer.Exit(1)


@app.command()
def version():
    """Print the kernlearn version."""
    typer.echo(__version__)


def _show_warning(message, category, filename, lineno, file=None, line=None):
    _echo_err(f"warning: {message}")


def main() -> None:
    warnings.showwarning = _show_warning
    try:
        app()
    except KernlearnError as exc:
        _echo_err(f"kernlearn: error: {exc}")
        sys.exit(2)
