"""The ``kernlearn`` command line: a thin layer over config, experiment and report."""

from __future__ import annotations

import os
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

ARRAY_VARS = ("SLURM_ARRAY_TASK_ID", "SGE_TASK_ID", "PBS_ARRAY_INDEX", "LSB_JOBINDEX")


def _echo_err(msg: str) -> None:
    typer.echo(msg, err=True)


def _cells(config: Path, overrides, seed):
    from .config import expand, load

    cfg = load(config, overrides or [], seed)
    return cfg, expand(cfg)


@app.command()
def run(config: Path = typer.Argument(..., help="YAML experiment config."),
        out: Optional[Path] = typer.Option(None, "--out", help="Results folder (default results/<name>)."),
        set_: List[str] = typer.Option([], "--set", help="Override a value: --set solver.tol=1e-6 (repeatable)."),
        seed: Optional[int] = typer.Option(None, "--seed", help="Seed of every cell (drops a seed grid axis)."),
        array_index: Optional[int] = typer.Option(None, "--array-index",
                                                  help="Run only cell K (default: $SLURM_ARRAY_TASK_ID if set)."),
        force: bool = typer.Option(False, "--force", help="Rerun finished cells."),
        verbose: int = typer.Option(0, "--verbose", "-v", count=True, help="-v: solver iterations.")):
    """Run every cell of CONFIG (finished cells are skipped) and print the results table."""
    from rich.progress import Progress

    from .experiment import run_cell
    from .report import collect

    cfg, cells = _cells(config, set_, seed)
    out = out or Path("results") / cfg["name"]
    if array_index is None:
        for var in ARRAY_VARS:
            if os.environ.get(var, "").isdigit():
                array_index = int(os.environ[var])
                break
    if array_index is not None:
        if not 0 <= array_index < len(cells):
            raise ConfigError(f"--array-index {array_index} is out of range: {config} has {len(cells)} cells "
                              f"(0..{len(cells) - 1}).")
        cells = [cells[array_index]]

    def progress_cb(sweep, change, viol):
        if verbose:
            _echo_err(f"    sweep {sweep:5d}  dual change {change:.3e}  max violation {viol:.3e}")

    done = skipped = 0
    failed: list[str] = []
    with Progress(transient=True, disable=not sys.stderr.isatty()) as bar:
        task = bar.add_task(f"{cfg['name']}", total=len(cells))
        for cell in cells:
            try:
                record = run_cell(cell, out, where=str(config), progress=progress_cb if verbose else None)
            except InfeasibleError as exc:   # this cell's constraints; the other cells still run
                failed.append(f"[{cell.index}] {cell.id}: {exc}")
                bar.console.print(f"[{cell.index}] {cell.id}: FAILED (infeasible), nothing written", highlight=False)
                bar.advance(task)
                continue
            if record is None:
                skipped += 1
            else:
                done += 1
                metrics = "  ".join(f"{k}={v:.4f}" for k, v in record["metrics"].items() if not k.endswith("_std"))
                bar.console.print(f"[{cell.index}] {cell.id}: {record['solver']} {record['iterations']} it "
                                  f"{record['seconds']:.2f}s {'converged' if record['converged'] else 'NOT converged'}"
                                  f"  {metrics}", highlight=False, soft_wrap=True)
            bar.advance(task)
    _echo_err(f"{done} cell(s) run, {skipped} already finished, {len(failed)} failed, results in {out}")
    if failed:
        raise InfeasibleError(f"{len(failed)} cell(s) failed and wrote nothing; the first: {failed[0]}")
    if array_index is None:
        _, md, _ = collect(out)
        typer.echo(md)


@app.command()
def plan(config: Path = typer.Argument(..., help="YAML experiment config."),
         set_: List[str] = typer.Option([], "--set", help="Override a value (repeatable)."),
         seed: Optional[int] = typer.Option(None, "--seed", help="Seed of every cell.")):
    """Print the numbered cells a config's grid expands into."""
    _, cells = _cells(config, set_, seed)
    for cell in cells:
        values = ", ".join(f"{k}={v}" for k, v in cell.grid_values.items())
        typer.echo(f"{cell.index:4d}  {cell.id}  {values}")
    typer.echo(f"{len(cells)} cell(s)")


@app.command()
def collect(directory: Path = typer.Argument(..., help="Results folder of an experiment.")):
    """Aggregate per-cell records into table.csv and table.md (mean ± std over seeds)."""
    from .report import collect as collect_

    _, md, incomplete = collect_(directory)
    typer.echo(md)
    if incomplete:
        _echo_err(f"note: {incomplete} incomplete cell(s) ignored (no record.json).")
    _echo_err(f"wrote {directory / 'table.csv'} and {directory / 'table.md'}")


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
    """Check the sha256 of the files in the data home."""
    from .data import catalogue

    bad = 0
    for row in catalogue.verify(name):
        typer.echo("  ".join(str(x) for x in row))
        bad += row[-1] != "ok"
    if bad:
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
