"""The ``kernlearn`` command line: a thin layer over config, runner, slurm, report and reproduce."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import List, Optional

import typer
from typer.core import TyperCommand

from . import __version__
from .errors import ConfigError, KernlearnError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, rich_markup_mode=None,
                  help="Learn kernel matrices from side information, reproducibly.")
datasets_app = typer.Typer(no_args_is_help=True, help="Fetch and verify catalogue datasets in the data home.")
app.add_typer(datasets_app, name="datasets")

def _echo_err(msg: str) -> None:
    typer.echo(msg, err=True)


SET_HELP = ("Override a value: --set solver.tol=1e-6, --set grid.seed='range(3)' (repeatable); a key a grid axis "
            "sets is refused: override the axis (--set grid.KEY='[VALUE]').")


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
        budget: Optional[str] = typer.Option(None, "--budget", help="Start no cell after this much time (e.g. 40m, "
                                                                  "2h, 01:30:00); a rerun resumes."),
        verbose: int = typer.Option(0, "--verbose", "-v", count=True, help="-v: solver iterations.")):
    """Run the cells of CONFIG (finished cells are skipped) and print the results table."""
    import time

    from .results import finished_cells
    from .runner import array_index_from_env, failed_error, parse_budget, run_config

    deadline = time.monotonic() + parse_budget(budget) if budget is not None else None
    if array_index is None:
        array_index = array_index_from_env()
    out, failed = run_config(config, out, set_, seed, jobs=jobs, array_index=array_index,
                             cells_per_task=cells_per_task, force=force, verbose=verbose, deadline=deadline)
    if array_index is None and len(failed) < len(finished_cells(out)) + len(failed):
        from .report.collect import collect as collect_

        _, md, _ = collect_([out])          # the finished cells, failed ones counted per row
        typer.echo(md)
    if failed:
        raise failed_error(failed)


@app.command()
def slurm(config: Path = typer.Argument(..., help="YAML experiment config."),
          out: Optional[Path] = typer.Option(None, "--out", help="Results folder (default results/<name>)."),
          set_: List[str] = typer.Option([], "--set", help=SET_HELP),
          seed: Optional[int] = typer.Option(None, "--seed", help="Seed of every cell."),
          cells_per_task: int = typer.Option(1, "--cells-per-task", help="Cells per array task."),
          partition: Optional[str] = typer.Option(None, "--partition", help="#SBATCH --partition."),
          time: Optional[str] = typer.Option(None, "--time", help="#SBATCH --time, e.g. 01:00:00."),
          mem: Optional[str] = typer.Option(None, "--mem", help="#SBATCH --mem, e.g. 4G."),
          cpus: int = typer.Option(1, "--cpus-per-task", help="#SBATCH --cpus-per-task; a task of several cells "
                                                              "runs that many at once (--jobs), a task of one cell "
                                                              "gives them to BLAS (docs/cluster.md)."),
          account: Optional[str] = typer.Option(None, "--account", help="#SBATCH --account."),
          qos: Optional[str] = typer.Option(None, "--qos", help="#SBATCH --qos."),
          sbatch_arg: List[str] = typer.Option([], "--sbatch-arg",
                                               help="A further #SBATCH option, e.g. --sbatch-arg=--constraint=avx2 "
                                                    "(repeatable)."),
          max_array_size: int = typer.Option(1000, "--max-array-size",
                                             help="Most array tasks the cluster accepts (SLURM MaxArraySize); cells "
                                                  "are packed into fewer tasks to fit."),
          max_running: Optional[int] = typer.Option(None, "--max-running",
                                                    help="Most array tasks running at once (--array=0-K%N), to leave "
                                                         "the cluster's other users room."),
          script: Optional[Path] = typer.Option(None, "--script", "-o",
                                                help="Where to write the script (default OUT/slurm/<name>.sbatch).")):
    """Write an sbatch job-array script that runs the cells of CONFIG, one array task per cell (or pack)."""
    import shlex

    from .slurm import array_job

    job = array_job(config, out, set_, seed, cells_per_task=cells_per_task, max_array_size=max_array_size, cpus=cpus,
                    python=sys.executable, partition=partition, time=time, mem=mem, account=account, qos=qos,
                    extra=sbatch_arg, max_running=max_running)
    script = job.write(script or job.out / "slurm" / f"{job.name}.sbatch")
    typer.echo(str(script))
    packed = f" ({job.per_task} cells per task to stay within --max-array-size {max_array_size})" \
        if job.per_task > cells_per_task else ""
    _echo_err(f"{job.cells} cell(s) in {job.tasks} array task(s){packed}; submit with: sbatch {shlex.quote(str(script))}")


@app.command()
def plan(config: Path = typer.Argument(..., help="YAML experiment config."),
         set_: List[str] = typer.Option([], "--set", help=SET_HELP),
         seed: Optional[int] = typer.Option(None, "--seed", help="Seed of every cell.")):
    """Print the numbered cells a config's grid expands into, each with its estimated peak memory and
    time where one exists (the dense K0 eigendecomposition, TRIN's and MEG's n x n work, Burg's
    O(n r) memory and O(c r²) sweep; docs/scale.md)."""
    from .config import load_cells
    from .estimates import estimate

    _, cells = load_cells(config, set_, seed)
    for cell in cells:
        values = ", ".join(f"{k}={v}" for k, v in cell.grid_values.items())
        typer.echo(f"{cell.index:4d}  {cell.id}  {values}  {_estimate_text(estimate(cell, str(config)))}".rstrip())
    typer.echo(f"{len(cells)} cell(s)")


def _estimate_text(est: dict | None) -> str:
    """``[est. memory 9.6 GB, time 1m03s]`` (``+ 2s per sweep``), or ``[est. -]``."""
    from .progress import clock, per_iteration
    from .resources import size

    if est is None:
        return "[est. -]"
    per = f" + {per_iteration(est['per_seconds'])} per {est['per']}" if est["per"] else ""
    return f"[est. memory {size(est['bytes'])}, time {clock(est['seconds'])}{per}]"


@app.command()
def collect(directories: List[Path] = typer.Argument(..., help="Results folder(s) of experiments."),
            metric: Optional[str] = typer.Option(None, "--metric", "-m",
                                                 help="Lay one metric out as a paper's table (rows x cols)."),
            rows: Optional[str] = typer.Option(None, "--rows", help="Row key of --metric (e.g. constraints.count)."),
            cols: Optional[str] = typer.Option(None, "--cols", help="Column key of --metric (default solver)."),
            agg: str = typer.Option("mean", "--agg", help="--metric cells: mean (± std), min or max."),
            prefix: Optional[Path] = typer.Option(None, "--prefix", help="Write PREFIX.csv/.md/.tex."),
            into: Optional[Path] = typer.Option(None, "--into", help="Also fill this Markdown file's block ..."),
            marker: Optional[str] = typer.Option(None, "--marker", help="... <!-- kernlearn:MARKER -->."),
            strict: bool = typer.Option(False, "--strict",
                                        help="Exit with status 2 if any expected cell is missing, failed or "
                                             "unreadable (the tables are still written)."),
            tidy: Optional[Path] = typer.Option(None, "--tidy",
                                                help="Instead of the tables, write FILE.csv or FILE.parquet: one "
                                                     "row per cell and metric, every setting, the certificate, "
                                                     "timings and environment as columns.")):
    """Aggregate per-cell records into tables (CSV, Markdown, LaTeX), mean ± std over seeds.

    One folder: the tables go into it (or to --prefix).  Several folders: only to --prefix.  Settings
    that differ between folders of one experiment (e.g. runs with different --set) are columns; a
    --metric table whose entry would average cells of different settings is refused, naming them.

    Cells of the recorded grid that are not finished are counted per row (finished/expected) and
    named in one warning line."""
    from .report.collect import collect as collect_
    from .report.markers import check_marker, fill_marker

    if tidy is not None:
        _collect_tidy(directories, tidy, metric=metric, prefix=prefix, into=into, marker=marker)
        return
    if (into is None) != (marker is None):
        raise ConfigError("collect: --into and --marker go together (--into README.md --marker NAME).")
    if into is not None:
        check_marker(into, marker)
    _, md, done = collect_(directories, metric=metric, rows=rows, cols=cols, agg=agg, prefix=prefix)
    typer.echo(md)
    if prefix is None and len(directories) > 1:
        _echo_err(f"note: {len(directories)} folders: the table is printed, not written into any of them; "
                  f"--prefix PATH writes PATH.csv, PATH.md and PATH.tex.")
    if into is not None:
        fill_marker(into, marker, md)
        _echo_err(f"filled <!-- kernlearn:{marker} --> in {into}")
    if not done.complete:
        if strict:
            raise KernlearnError(f"collect --strict: {done.message()}")
        _echo_err(f"warning: {done.message()}")


def _collect_tidy(directories: List[Path], tidy: Path, **others) -> None:
    """``collect --tidy FILE``: the tidy table of the folders' finished cells, alone."""
    from .report.tidy import check_tidy_path, tidy_records, write_tidy

    given = [f"--{k}" for k, v in others.items() if v is not None]
    if given:
        raise ConfigError(f"collect --tidy writes the tidy table alone; {', '.join(given)} shape(s) the "
                          f"aggregated tables: run collect once with each.")
    check_tidy_path(tidy)
    table = tidy_records(directories)
    write_tidy(table, tidy)
    typer.echo(f"{tidy}: {len(table)} row(s) ({table['cell'].nunique()} cell(s) x {table['metric'].nunique()} "
               f"metric(s)), {table.shape[1]} column(s)")


@app.command()
def reproduce(paper: str = typer.Argument(..., help="A paper (kulis2006, tsuda2005, hu2013, zhang2012, li2009), "
                                                    "'all', or the path of a study.yaml."),
              quick: bool = typer.Option(False, "--quick", help="The study's quick settings (3 seeds, subsets), "
                                                                 "into RESULTS/quick."),
              jobs: int = typer.Option(2, "--jobs", "-j", help="Worker processes per experiment (local)."),
              launcher: str = typer.Option("local", "--launcher", help="local: run here; slurm: submit one job "
                                                                       "array per experiment and a collect job."),
              results: Path = typer.Option(Path("results"), "--results", help="Results root."),
              no_run: bool = typer.Option(False, "--no-run", help="Only build tables, figures and verdicts from "
                                                                  "the finished cells."),
              check: bool = typer.Option(False, "--check", help="Only check the study files and their configs."),
              plan: bool = typer.Option(False, "--plan", help="Only print, per experiment, the cells, those archived "
                                                              "and the estimated compute left."),
              budget: Optional[str] = typer.Option(None, "--budget", help="Start no cell after this much time "
                                                                        "(e.g. 40m, 2h); what finished is archived, "
                                                                        "a rerun resumes."),
              rerun: List[str] = typer.Option([], "--rerun", help="Recompute this experiment's every cell, "
                                                                  "replacing its archive (repeatable)."),
              verify: Optional[int] = typer.Option(None, "--verify", min=1,
                                                   help="Only rerun N archived cells (one per experiment at a "
                                                        "time, cheapest first) into a scratch folder and say how "
                                                        "many give their records' bits."),
              merge: List[Path] = typer.Option([], "--merge", help="Merge the cells of an archive file, or of a "
                                                                   "results root (records/ or <paper>/ folders), "
                                                                   "by cell id (repeatable)."),
              docs: Optional[Path] = typer.Option(None, "--docs", help="Where the paper pages go (default "
                                                                       "docs/papers; quick: RESULTS/quick/docs)."),
              readme: Optional[Path] = typer.Option(Path("README.md"), "--readme",
                                                    help="Markdown file whose status block a full run fills with "
                                                         "a summary line (the table: docs/status.md beside it)."),
              no_readme: bool = typer.Option(False, "--no-readme",
                                             help="Leave the README's status line and docs/status.md alone."),
              partition: Optional[str] = typer.Option(None, "--partition", help="slurm: #SBATCH --partition."),
              time_: Optional[str] = typer.Option(None, "--time", help="slurm: #SBATCH --time per array task."),
              mem: Optional[str] = typer.Option(None, "--mem", help="slurm: #SBATCH --mem."),
              cpus: int = typer.Option(1, "--cpus-per-task", help="slurm: #SBATCH --cpus-per-task; a task holds that "
                                                                  "many cells and runs them at once (docs/cluster.md)."),
              account: Optional[str] = typer.Option(None, "--account", help="slurm: #SBATCH --account."),
              qos: Optional[str] = typer.Option(None, "--qos", help="slurm: #SBATCH --qos."),
              sbatch_arg: List[str] = typer.Option([], "--sbatch-arg", help="slurm: a further #SBATCH option."),
              max_array_size: int = typer.Option(1000, "--max-array-size",
                                                 help="slurm: most tasks per array (cells are packed to fit)."),
              max_running: Optional[int] = typer.Option(None, "--max-running",
                                                        help="slurm: most tasks of each array running at once.")):
    """Reproduce a paper: run (or resume) its study's experiments, build its tables, figures and HTML
    report (RESULTS/<paper>_report.html), and print a verdict per statement of the paper (ours, the
    paper's, the rule, and its kind: reproduced, deviates, unconverged, lower bound, calibrated, not
    comparable or context)."""
    import time

    from .reproduce.command import reproduce as reproduce_
    from .reproduce.layout import Layout
    from .reproduce.plan import check as check_study, plan_rows, plan_text, statements_text
    from .runner import parse_budget
    from .study.find import find_studies
    from .study.reader import load_study

    deadline = time.monotonic() + parse_budget(budget) if budget is not None else None
    studies = [load_study(p) for p in find_studies(paper)]
    if plan:
        for study in studies:
            check_study(study, quick)
            typer.echo(plan_text(study, plan_rows(study, Layout.of(results, quick), quick, jobs), jobs))
        return
    if verify is not None:
        from .reproduce.verify import verify_study

        outcomes = [o for study in studies for o in verify_study(study.paper, verify, results=results, echo=_echo_err)]
        wrong = [o for o in outcomes if o.status in ("differs", "failed")]
        if wrong:
            raise KernlearnError(f"--verify: {len(wrong)} of {len(outcomes)} rerun cell(s) differ from their records "
                                 f"beyond rounding or failed (listed above with the keys that differ).")
        return
    if check:
        for study in studies:
            cells = check_study(study, quick)
            typer.echo(f"{study.paper}: ok ({len(study.selected(quick))} experiment(s), {cells} cell(s), "
                       f"{len(study.tables)} table(s), {len(study.figures)} figure(s); {statements_text(study)})")
        return
    sbatch = dict(partition=partition, time=time_, mem=mem, cpus=cpus, account=account, qos=qos, extra=sbatch_arg,
                  max_running=max_running)
    failed = reproduce_(studies, results=results, quick=quick, jobs=jobs, launcher=launcher, run=not no_run,
                        docs=docs, readme=None if no_readme else readme, sbatch=sbatch,
                        max_array_size=max_array_size, echo=_echo_err, show=typer.echo, deadline=deadline,
                        rerun=tuple(rerun), merge_from=tuple(merge))
    if failed:
        raise KernlearnError(f"{len(failed)} cell(s) failed (each reason is printed above and kept in its "
                             f"failed.json; their entries are missing from the tables); the first: {failed[0]}")


@app.command()
def report(directories: List[Path] = typer.Argument(..., help="Results folder(s) or record archive(s)."),
           output: Optional[Path] = typer.Option(None, "--output", "-o",
                                                 help="The page (.html; default FOLDER/report.html for one "
                                                      "results folder).")):
    """Write one self-contained HTML page (no server, no network) of the results: sortable tables (†
    unconverged, certificate column), each metric against each numeric grid axis per solver, the cells'
    convergence histories, failed and missing cells with the command that resumes them, provenance."""
    from .report.html import report_html, report_path, write_page

    output = report_path(directories, output)
    text = report_html(directories)
    write_page(text, output)
    typer.echo(f"{output}: {len(text.encode()) / 1e6:.2f} MB")


@app.command()
def plot(directories: List[Path] = typer.Argument(..., help="Results folder(s) of experiments."),
         metric: str = typer.Option(..., "--metric", "-m", help="y axis: a metric, seconds or iterations."),
         x: str = typer.Option("constraints.count", "--x", help="x axis: a grid key, or n."),
         by: Optional[str] = typer.Option(None, "--by", help="One curve per value of this key (default solver)."),
         loglog: bool = typer.Option(False, "--loglog", help="Log-log axes (e.g. time vs n)."),
         logx: bool = typer.Option(False, "--logx", help="Logarithmic x axis (e.g. iterations)."),
         logy: Optional[bool] = typer.Option(None, "--logy/--linear-y",
                                             help="Value axis (default: log when the means are positive and "
                                                  "span more than two decades)."),
         title: Optional[str] = typer.Option(None, "--title"),
         output: Path = typer.Option(..., "--output", "-o", help="Figure file (.png, .pdf, .svg).")):
    """Draw metric vs x, one curve per method, mean with ± std error bars over seeds (said in the legend);
    axes labelled in words with units, curves told apart by colour, marker and line style."""
    from .report.figures import check_figure_path, plot_curves
    from .report.records import load_records

    check_figure_path(output, "plot")
    df, _ = load_records(directories, "plot")
    ringed = plot_curves(df, metric, x, by, loglog=loglog, logx=logx, logy=logy, title=title, output=output)
    typer.echo(str(output))
    if ringed:
        _echo_err(f"note: {ringed} point(s) include cells that did not converge (ringed in red)")


@app.command("plot-history")
def plot_history(directories: List[Path] = typer.Argument(..., help="Results folder(s) of experiments."),
                 key: Optional[str] = typer.Option(None, "--key", "-k",
                                                   help="History dataset of factors.h5 (e.g. dual_change, "
                                                        "max_violation; default: the first of dual_objective, "
                                                        "objective, dual_change, loss that every cell records)."),
                 mean: bool = typer.Option(False, "--mean", help="Mean ± std band per setting instead of one line per cell."),
                 logx: bool = typer.Option(False, "--logx", help="Logarithmic step axis."),
                 logy: Optional[bool] = typer.Option(None, "--logy/--linear-y",
                                                     help="Value axis (default: log when the values are "
                                                          "positive and span more than two decades, e.g. "
                                                          "dual_change)."),
                 xlabel: str = typer.Option("step", "--xlabel", help="Label of the x axis."),
                 title: Optional[str] = typer.Option(None, "--title"),
                 output: Path = typer.Option(..., "--output", "-o", help="Figure file (.png, .pdf, .svg).")):
    """Draw a per-iteration history (history/KEY of each cell's factors.h5) against the step."""
    from .report.figures import check_figure_path, plot_history as plot_history_

    check_figure_path(output, "plot-history")
    lines, key = plot_history_(directories, key, mean=mean, logx=logx, logy=logy, xlabel=xlabel, title=title,
                               output=output)
    typer.echo(str(output))
    _echo_err(f"{lines} line(s) of history '{key}'")


@app.command()
def show(where: Path = typer.Argument(..., help="A cell folder, or a results folder or record archive."),
         cell: Optional[str] = typer.Argument(None, help="Cell id, or its number (as `plan` and `run "
                                                         "--array-index` number the cells), in a results folder "
                                                         "or record archive.")):
    """Print one cell: its solver settings, result, certificate (each check against its tolerance) and
    provenance; for a failed cell, its failed.json (the error).  A results folder or record archive
    without CELL: its numbered cells and the state of each."""
    from .report.show import show_cell

    typer.echo(show_cell(where, cell))


class EmbedCommand(TyperCommand):
    """``embed``'s help, its list of inductive solvers read from the registry when the help is shown
    (listing them imports every solver module, which a run of ``embed`` does not need)."""

    def format_help_text(self, ctx, formatter) -> None:
        from .inductive import inductive_text

        super().format_help_text(ctx, formatter)
        formatter.write_paragraph()
        with formatter.indentation():
            formatter.write_text(f"Inductive solvers: {inductive_text()}.")


@app.command(cls=EmbedCommand)
def embed(run_dir: Path = typer.Argument(..., help="Cell folder of a finished run (holds factors.h5)."),
          new_data: Path = typer.Argument(..., help="Features of new points: .npy, .csv or .txt (n_new x d)."),
          output: Optional[Path] = typer.Option(None, "--output", "-o",
                                                help="Where to write the rows (.npy; default RUN_DIR/embed_<name>.npy).")):
    """Factor rows of new points for the kernel learned by an inductive solver (listed below).

    A cell whose input files changed since it was computed (their sha256 differ from its record, as
    run, collect and report check) is refused: compute it again with `kernlearn run`.
    """
    from .embed import embed as embed_

    typer.echo(str(embed_(run_dir, new_data, output)))


def _default_text(default: str, equals: str) -> str:
    """How ``list`` shows a setting's default: ``=0.001``, `` (required)``, or nothing (a shared setting)."""
    return f" {default}" if default == "(required)" else f"{equals}{default}" if default else ""


@app.command("list")
def list_(kind: Optional[str] = typer.Argument(None, help="datasets|kernels|constraints|solvers|evaluators"),
          name: Optional[str] = typer.Argument(None, help="One component: its settings, defaults and ranges.")):
    """List the registered components and their settings (each with its default, the values it
    accepts and what it does, in one line); with a name, one component's settings in full."""
    import re

    from .params import did_you_mean
    from .plugins import PLUGIN_GROUP, load_plugins
    from .registry import REGISTRIES

    singular = {"dataset": "datasets", "kernel": "kernels", "constraint": "constraints", "solver": "solvers",
                "evaluator": "evaluators", "evaluate": "evaluators"}      # a config's keys name them so
    kind = singular.get(kind, kind)
    if kind is not None and kind not in REGISTRIES:
        raise ConfigError(f"unknown kind '{kind}'.{did_you_mean(kind, REGISTRIES)} "
                          f"Valid kinds: {', '.join(REGISTRIES)}.")
    if name is not None:
        entry = REGISTRIES[kind].get(name)
        typer.echo(f"{kind} '{entry.name}': {entry.summary}")
        for p, default, accepts, what in REGISTRIES[kind].setting_rows(entry):
            typer.echo(f"  {p}{_default_text(default, ' = ')}\n      {accepts}" + (f"\n      {what}" if what else ""))
        return
    for reg_name, reg in REGISTRIES.items():
        if kind not in (None, reg_name):
            continue
        typer.echo(f"{reg_name}:")
        for entry in reg.entries():
            typer.echo(f"  {entry.name:<26} {entry.summary}")
            for p, default, accepts, what in reg.setting_rows(entry)[:len(entry.parameters())]:
                first = re.split(r"(?<=\.)\s+(?=[A-Z`])", what, maxsplit=1)[0]
                typer.echo(f"      {p}{_default_text(default, '=')}: {accepts}" + (f" — {first}" if first else ""))
        for p, (accepts, what) in reg.shared.items():
            typer.echo(f"  every {reg.kind} also takes\n      {p}: {accepts} — {what}")
    if kind is None and load_plugins():
        typer.echo(f"plugins (entry point group {PLUGIN_GROUP}):")
        for plugin in load_plugins():
            typer.echo(f"  {plugin}")


@datasets_app.command("fetch")
def datasets_fetch(name: str = typer.Argument(..., help="Catalogue dataset name.")):
    """Download a dataset into the data home (mirror first) and check its sha256."""
    from .data import catalogue

    for path in catalogue.fetch(name).values():
        typer.echo(f"ok  {path}")


@datasets_app.command("verify")
def datasets_verify(name: Optional[str] = typer.Argument(None, help="Catalogue dataset (default all).")):
    """Check the sha256 of the files in the data home (exit status 1 if any file is corrupt).

    A file not yet downloaded is reported ``not fetched``, or ``bundled (scikit-learn)`` for
    iris and wine, which load without it; neither is an error."""
    from .data import catalogue

    rows = catalogue.verify(name)
    width = max(len(row.file) for row in rows)
    for row in rows:
        typer.echo(f"{row.dataset:<26} {row.file:<{width}}  {row.status}")
    if any(row.status == "mismatch" for row in rows):
        raise typer.Exit(1)


@app.command()
def version():
    """Print the kernlearn version."""
    typer.echo(__version__)


@app.command()
def warmup(config: Optional[Path] = typer.Argument(None, help="YAML experiment config (default: every solver)."),
           set_: List[str] = typer.Option([], "--set", help=SET_HELP)):
    """Compile the solvers' numba kernels into numba's on-disk cache, once per machine or cluster job,
    so that runs and array tasks load them instead of compiling; prints what it did and how long it took."""
    import time

    from .config import Grid, load
    from .plugins import load_plugins
    from .registry import solvers
    from .warmup import numba_cache, warmup as warmup_

    t0 = time.perf_counter()
    if config is None:
        load_plugins("warmup")                          # every solver: the built-ins and the plugins'
        names = solvers.names()
    else:
        names = sorted({cell.config["solver"]["name"] for cell in Grid(load(config, set_, every_cell=False))})
    for name, what, seconds in warmup_(names):
        typer.echo(f"{name:<14} {seconds:6.2f} s  {what}")
    typer.echo(f"warmup: done in {time.perf_counter() - t0:.2f} s; numba cache: {numba_cache()}")


def _show_warning(message, category, filename, lineno, file=None, line=None):
    _echo_err(f"warning: {message}")


def os_error_message(exc: OSError) -> str:
    """One paragraph for a file-system failure: what, where, and what to do."""
    import errno

    where = f" '{exc.filename}'" if exc.filename else ""
    advice = {errno.ENOSPC: "free some space or write elsewhere (--out, --prefix, -o)",
              errno.EDQUOT: "free some space or write elsewhere (--out, --prefix, -o)",
              errno.EACCES: "choose a place you may write to (--out, --prefix, -o)",
              errno.EPERM: "choose a place you may write to (--out, --prefix, -o)",
              errno.EROFS: "the file system is read-only; write elsewhere (--out, --prefix, -o)",
              errno.EISDIR: "give a file name, not a folder",
              errno.ENOTDIR: "a part of the path is a file, not a folder"}
    return (f"cannot write or read{where}: {exc.strerror or exc}"
            f"{'; ' + advice[exc.errno] if exc.errno in advice else ''}. Finished results are left as they were.")


def entry() -> None:
    """The ``kernlearn`` command: :func:`main` in a child process this one watches, so that Ctrl-C ends
    it within seconds (:mod:`kernlearn_cli.supervise`)."""
    from .supervise import stop_on_sigterm, supervise

    supervise()
    stop_on_sigterm()
    main()


def main() -> None:
    """The command line in this process (tests; :func:`entry` is the console script)."""
    warnings.showwarning = _show_warning
    try:
        app()
    except KernlearnError as exc:
        _echo_err(f"kernlearn: error: {exc}")
        sys.exit(2)
    except OSError as exc:
        _echo_err(f"kernlearn: error: {os_error_message(exc)}")
        sys.exit(2)
    except SystemExit as exc:             # typer ends a KeyboardInterrupt as exit 130, silently
        from . import supervise
        from .progress import RunProgress

        if exc.code == 130 and supervise.terminated:
            _echo_err("kernlearn: stopped by SIGTERM (as a scheduler ends a preempted or cancelled job); finished "
                      "cells are kept, a rerun (or SLURM's requeue) resumes with the others.")
            sys.exit(supervise.TERMINATED)
        if exc.code == 130 and not RunProgress.interrupt_said:
            _echo_err("kernlearn: interrupted; finished cells are kept, a rerun resumes with the others.")
        raise
