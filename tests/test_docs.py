"""The docs say what the code does (issue 31, item 7).

Every line of a code block in README.md and docs/*.md (not docs/papers/, which is generated) that
starts with ``kernlearn`` is a command, and ``COMMANDS`` below classifies each one:

* ``run(...)``: it runs in a temporary folder where the README's own run (``kernlearn run
  configs/quick.yaml``, in its own process) has finished, with the placeholders of
  ``PLACEHOLDERS`` replaced, through kernlearn's entry point in this process (exit status, stdout
  and stderr as a process gives them; shared imports keep the file fast); it must exit 0.
  Synopsis lines (``[--strict]``, ``PAPER|all``) say which forms run.
* ``not_run(reason)``: too long or needs a cluster; the reason says why.

Either way the command must parse: its subcommand exists, every option it uses is one the
subcommand declares, and the command line with ``--help`` appended is accepted. A command in the
docs that ``COMMANDS`` does not classify fails ``test_every_doc_command_is_classified``, and so
does an entry of ``COMMANDS`` the docs no longer show.

The README's example output of ``make run`` must be what that run prints (the seconds aside; the
run is deterministic), its ``...`` standing for lines or table columns it leaves out. Links, the
repository paths the docs name and the environment variables the code reads are checked too.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import yaml

from helpers import REPO, has_mirror

README = REPO / "README.md"
DOCS = [README, *sorted((REPO / "docs").glob("*.md"))]      # docs/papers/*.md are generated: not here
QUICK = "configs/quick.yaml"
QUICK_DIR = "results/quick_iris_burg"
NYSTROM_DIR = "results/nystrom"

#: Placeholder tokens of the docs' synopsis lines -> what the tests run. CELL_DIR is the one cell of a
#: ``nystrom`` run (``embed`` needs an inductive solver; the quick run is ``burg``), PAPER a tiny study
#: (a folder holding study.yaml, which ``reproduce`` accepts in place of a paper's name).
PLACEHOLDERS = {
    "CONFIG": QUICK,
    "DIR": QUICK_DIR,
    "DIR...": QUICK_DIR,
    "results/<name>": QUICK_DIR,
    "CELL_DIR": "results/nystrom/<cell>",     # resolved when the nystrom run has finished
    "NAME": "iris",
    "PAPER": "tinypaper",
}


@dataclass(frozen=True)
class Entry:
    runs: tuple = ()            # command lines that run (empty for not_run)
    reason: str = ""            # not_run: why it is not run
    parse: tuple = ()           # command lines checked with --help (default: the doc line, brackets dropped)
    xfail: str = ""             # a known failure being fixed (strict: the test says when it passes)
    needs_mirror: bool = False  # runs only when the dataset mirror is there (else it would download)
    expect: tuple = ()          # run: what its output must contain (regexes) and the files it writes ("file:GLOB")


def run(*lines: str, expect: tuple, xfail: str = "", needs_mirror: bool = False) -> Entry:
    """Runs, as written (no arguments) or as each of ``lines``; ``expect``: regexes (multiline) one of
    the lines' stdout or stderr must match, and ``file:GLOB`` patterns a file of the folder must match."""
    return Entry(runs=lines or ("",), xfail=xfail, needs_mirror=needs_mirror, expect=expect)


def not_run(reason: str, *parse: str) -> Entry:
    return Entry(reason=reason, parse=parse)


PAPERS = ("kulis2006", "tsuda2005", "hu2013", "zhang2012", "li2009")
#: What the quick run's table shows (collect), the tiny study's verdict and its quick settings (one count, 10,
#: so the statement's row 30 is missing).
QUICK_TABLE = (r"^\| +100 \| 0\.\d{4} ± 0\.\d{4} \|.*\| 3/3 +\| (max_violation|dual_change) [\d.]+ ≤ 0\.001 +\| +3 \|$",)
TINY_OK = r"^## tinypaper: 1 statement\(s\), 1 tested: 1 reproduced, 0 deviates$"
TINY_QUICK = (r"^## tinypaper: 1 statement\(s\), 1 tested: 0 deviates, 1 missing$", "file:results/quick/tables/tinypaper_verdicts.csv")

TINY_STANDIN = "PAPER is a tiny study (2 cells, seconds) that stands in for a paper's study (hours)"

COMMANDS = {
    # README.md: reproducing the papers
    "kernlearn reproduce kulis2006":
        not_run("the whole Kulis et al. study, 1160 cells: hours (`reproduce PAPER` runs on a tiny study)"),
    "kernlearn reproduce all --jobs 2":
        not_run("every paper's study: hours"),
    "kernlearn reproduce all --quick":
        not_run("every paper's quick settings: many minutes (`reproduce PAPER --quick` runs on a tiny study)"),
    "kernlearn reproduce li2009 --launcher slurm --partition short --time 02:00:00":
        not_run("submits job arrays with sbatch: needs a SLURM cluster (tests/test_slurm.py runs it on one)"),
    "kernlearn reproduce hu2013 --no-run":
        run("kernlearn reproduce PAPER --no-run",               # hu2013's cells take hours: TINY_STANDIN
            expect=(TINY_OK, "file:results/tables/tinypaper_verdicts.csv", "file:docs/papers/tinypaper.md")),
    "kernlearn reproduce all --check":
        run(expect=tuple(rf"^{paper}: ok \(\d+ experiment\(s\), \d+ cell\(s\)" for paper in PAPERS)),
    "kernlearn reproduce li2009 --plan":
        run(expect=(r"^li2009: experiment \| cells \| archived \| left", r"^  total: \d+ cell\(s\) left, about \w+ of compute")),
    "kernlearn reproduce li2009 --budget 40m":
        not_run("runs the Li et al. study for up to 40 minutes (`reproduce PAPER --budget 40m` runs on a tiny study)"),
    # README.md: command line
    "kernlearn run CONFIG":
        run(expect=(r"^9 cell\(s\) run, 0 already finished, 0 failed, results in results/quick_iris_burg$",
                    "file:results/quick_iris_burg/table.csv")),
    "kernlearn run CONFIG --out DIR --set solver.tol=1e-6 --seed 3 --jobs 4 -v":
        # a new folder: the quick run's folder refuses a different config (by design)
        run("kernlearn run CONFIG --out results/overrides --set solver.tol=1e-6 --seed 3 --jobs 4 -v",
            expect=(r"^3 cell\(s\) run, 0 already finished, 0 failed, results in results/overrides$",
                    r"\| dual_change [\d.e-]+ ≤ 1e-06 +\|")),           # the tolerance set is the one used
    'kernlearn run CONFIG --set "grid.seed=range(3)"':
        run(expect=(r"^0 cell\(s\) run, 9 already finished, 0 failed",)),    # the quick run's seeds are 0, 1, 2
    "kernlearn plan CONFIG":
        run(expect=(r"^9 cell\(s\)$", r"^ +8 +count-100_seed-2_\w+ +constraints.count=100, seed=2 ")),
    "kernlearn collect DIR... [--strict]":
        run("kernlearn collect DIR --strict",                    # (without --strict: the same on a finished run)
            expect=QUICK_TABLE),
    "kernlearn collect DIR... -m nmi --rows constraints.count --cols solver --prefix T":
        run(expect=(r"^\| +constraints.count \| burg +\|$", r"^\| +100 \| 0\.\d{3} ± 0\.\d{3} \|$",
                    r"^All 9 cell\(s\) where convergence applies converged", "file:T.csv", "file:T.md", "file:T.tex")),
    "kernlearn plot DIR... -m nmi -o fig.png":
        run(expect=(r"^fig.png$", "file:fig.png")),
    "kernlearn plot-history DIR... --mean --logx -o d.png":
        run("kernlearn plot-history DIR --mean --logx -o d.png", "kernlearn plot-history DIR -k dual_change -o d2.png",
            expect=(r"^3 line\(s\) of history 'dual_change'$", r"^9 line\(s\) of history 'dual_change'$", "file:d.png",
                    "file:d2.png")),                             # --mean: one line per constraint count
    "kernlearn embed CELL_DIR new_points.npy":
        run(f"kernlearn run nystrom.yaml --out {NYSTROM_DIR}", "kernlearn embed CELL_DIR new_points.npy",
            expect=(r"^results/nystrom/cell_\w+/embed_new_points.npy$", "file:results/nystrom/cell_*/embed_new_points.npy")),
    "kernlearn show CELL_DIR":
        run(f"kernlearn run nystrom.yaml --out {NYSTROM_DIR}", "kernlearn show CELL_DIR",
            expect=(r"^1 cell\(s\) run, 0 already finished, 0 failed, results in results/nystrom$",
                    r"^ +cpu_seconds: \d", r"^ +blas_threads: \d+$")),
    "kernlearn show DIR_OR_ARCHIVE CELL_ID":
        not_run("a results folder and a cell id: tests/test_cli.py::test_show_prints_a_cells_provenance_that_tables_ignore"),
    "kernlearn list [KIND [NAME]]":
        run("kernlearn list", "kernlearn list solvers", "kernlearn list solvers burg",
            expect=(r"^  svm_accuracy +Linear SVM", r"^  von_neumann +", r"^  sweeps = 'auto'$")),
    "kernlearn datasets fetch NAME":
        run(needs_mirror=True, expect=(r"^ok +\S+/data_home/iris/iris.data$",)),   # from the mirror into the test's data home
    "kernlearn datasets verify [NAME]":
        run("kernlearn datasets verify", "kernlearn datasets verify NAME",
            expect=(r"^wine +wine/wine.data +bundled \(scikit-learn\)$", r"^iris +iris/iris.data +ok$")),
    "kernlearn slurm CONFIG ...":
        run("kernlearn slurm CONFIG",                           # writes the script; sbatch is not called
            expect=(r"^9 cell\(s\) in 9 array task\(s\); submit with: sbatch \S+/quick_iris_burg.sbatch$",
                    "file:results/quick_iris_burg/slurm/quick_iris_burg.sbatch")),
    "kernlearn warmup":
        run(expect=(r"^warmup: done in [\d.]+ s; numba cache: ", r"^trin +[\d.]+ s +ran on \d+ points")),
    "kernlearn reproduce PAPER|all [--quick] [--jobs N] [--launcher local|slurm]":
        run("kernlearn reproduce PAPER --quick --jobs 1 --launcher local",    # TINY_STANDIN; all: see above
            expect=TINY_QUICK),
    # README.md: on a cluster
    "kernlearn slurm CONFIG --partition short --time 01:00:00 --mem 4G [--cells-per-task 5] [--account A --qos Q "
    "--sbatch-arg=--constraint=avx2 --max-array-size 1000]":
        run("kernlearn slurm CONFIG --partition short --time 01:00:00 --mem 4G --cells-per-task 5 --account A "
            "--qos Q --sbatch-arg=--constraint=avx2 --max-array-size 1000",
            expect=(r"^9 cell\(s\) in 2 array task\(s\); submit with: sbatch ",)),     # 5 cells per task
    "kernlearn collect results/<name> --strict":
        run(expect=QUICK_TABLE),
    "kernlearn reproduce PAPER --launcher slurm [same sbatch options]":
        not_run("submits job arrays with sbatch: needs a SLURM cluster (tests/test_slurm.py runs it on one)",
                "kernlearn reproduce PAPER --launcher slurm --partition short --time 01:00:00 --mem 4G --account A "
                "--qos Q --sbatch-arg=--constraint=avx2 --max-array-size 1000"),
    # docs/studies.md: running a study
    "kernlearn reproduce PAPER|all [--quick] [--jobs N]":
        run("kernlearn reproduce PAPER --jobs 1", "kernlearn reproduce PAPER --quick --jobs 1",    # TINY_STANDIN
            expect=(TINY_OK, *TINY_QUICK, r"^\[tinypaper\] burg: 2 cell\(s\) archived")),
    "kernlearn reproduce PAPER --launcher slurm [--partition P --time T --mem M --account A --qos Q "
    "--sbatch-arg=--opt=value --max-array-size 1000]":
        not_run("submits job arrays with sbatch: needs a SLURM cluster (tests/test_slurm.py runs it on one)",
                "kernlearn reproduce PAPER --launcher slurm --partition P --time T --mem M --account A --qos Q "
                "--sbatch-arg=--opt=value --max-array-size 1000"),
    "kernlearn reproduce PAPER --no-run":
        run(expect=(TINY_OK, "file:results/tables/tiny_acc.csv")),
    "kernlearn reproduce PAPER --check":
        run(expect=(r"^tinypaper: ok \(1 experiment\(s\), 2 cell\(s\), 1 table\(s\), 0 figure\(s\); 1 judged ",)),
    "kernlearn reproduce PAPER --plan":
        run(expect=(r"^  burg \| 2 \| 2 \| 0 \| -$", r"^  total: 0 cell\(s\) left")),    # the fixture's run archived both
    "kernlearn reproduce PAPER --budget 40m":
        run(expect=(TINY_OK, r"^0 cell\(s\) run, 0 already finished, 0 failed, 2 archived")),
    "kernlearn reproduce PAPER --rerun EXPERIMENT":
        run("kernlearn reproduce PAPER --rerun burg", expect=(TINY_OK, r"^2 cell\(s\) run, 0 already finished, 0 failed")),
    "kernlearn reproduce PAPER --merge DIR_OR_ARCHIVE":
        run("kernlearn reproduce PAPER --no-run --merge results",    # the run's own root: merges nothing new
            expect=(TINY_OK,)),
    # docs/report.md
    "kernlearn report DIR... [-o report.html]":
        run("kernlearn report DIR", "kernlearn report DIR -o report.html",
            expect=(r"report\.html: [\d.]+ MB$", "file:report.html")),
    "kernlearn collect DIR... --tidy tidy.csv":
        run("kernlearn collect DIR --tidy tidy.csv",
            expect=(r"^tidy\.csv: \d+ row\(s\) \(\d+ cell\(s\) x \d+ metric\(s\)\), \d+ column\(s\)$", "file:tidy.csv")),
}

# The one cell CELL_DIR stands for: an inductive solver on the quick run's data.
NYSTROM_CONFIG = {"name": "nystrom_iris", "seed": 0, "dataset": {"name": "iris"},
                  "constraints": {"name": "labeled_subset", "count": 20}, "solver": {"name": "nystrom", "landmarks": 20},
                  "evaluate": [{"name": "knn_accuracy", "k": 5, "repeats": 2}]}
# The tiny study PAPER stands for.
TINY_CONFIG = {"name": "tiny", "seed": 0, "grid": {"constraints.count": [10, 30]}, "dataset": {"name": "iris"},
               "kernel": {"name": "linear"}, "constraints": {"name": "idealized_pairs", "count": 10},
               "solver": {"name": "burg", "slack": 1.0}, "evaluate": [{"name": "knn_accuracy", "k": 5, "repeats": 2}]}
TINY_STUDY = {"paper": "tinypaper", "title": "A tiny paper",
              "experiments": {"burg": {"config": "tiny.yaml", "quick": {"set": ["grid.constraints.count=[10]"]}}},
              "tables": {"tiny_acc": {"title": "5-NN accuracy", "from": ["burg"], "metric": "knn_accuracy",
                                      "rows": "constraints.count", "cols": "solver"}},
              "statements": [{"table": "tiny_acc", "row": 30, "col": "burg", "paper": 0.5, "rule": "at_least", "quote": "at least 0.5",
                           "where": "Fig. 1"}]}


# ---- reading the docs -------------------------------------------------------------------------------------

def fenced_blocks(text: str) -> list[list[str]]:
    blocks, block = [], None
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            if block is None:
                block = []
            else:
                blocks.append(block)
                block = None
        elif block is not None:
            block.append(line)
    return blocks


def strip_comment(line: str) -> str:
    return re.sub(r"\s+#.*$", "", line).rstrip()


def doc_commands() -> dict[str, list[str]]:
    """Command (whitespace collapsed, comment dropped) -> the files showing it. A line ending in ``\\``
    or with an open ``[`` continues on the next; ``A | kernlearn B`` is two commands."""
    found: dict[str, list[str]] = {}
    for path in DOCS:
        for block in fenced_blocks(path.read_text()):
            lines = iter(block)
            for line in lines:
                if not re.match(r"\s*kernlearn(\s|$)", line):
                    continue
                text = strip_comment(line)
                while text.endswith("\\") or text.count("[") > text.count("]"):
                    text = text.rstrip("\\") + " " + strip_comment(next(lines, ""))
                for command in re.split(r"\s+\|\s+(?=kernlearn\s)", text):
                    found.setdefault(" ".join(command.split()), []).append(str(path.relative_to(REPO)))
    return found


def argv(line: str, values: dict) -> list[str]:
    """A command line as argv, placeholder tokens replaced."""
    return [values.get(t, t) for t in shlex.split(line)]


def options_used(command: str) -> list[str]:
    """The options a doc command uses: ``--x``, ``-x``, ``--x=...`` (brackets dropped)."""
    return [m.group(1) for m in re.finditer(r"(?:^|\s)\[?(--?[A-Za-z][\w-]*)", command)]


# ---- running commands -------------------------------------------------------------------------------------

def kernlearn_executable() -> list[str]:
    script = Path(sys.executable).parent / "kernlearn"          # what the README's PATH finds
    return [str(script)] if script.is_file() else [sys.executable, "-m", "kernlearn_cli"]


@dataclass
class Site:
    """A folder where the README's own run has finished."""
    root: Path
    env: dict
    values: dict
    done: dict

    def run(self, line: str, env: dict | None = None, process: bool = False) -> subprocess.CompletedProcess:
        """Run a command line here: in its own process (``process``), else in this one, as ``kernlearn``'s
        entry point would (exit status, stdout, stderr; imports are shared, which keeps the file fast)."""
        if "CELL_DIR" in line.split():                                 # the nystrom run's one cell
            cells = [p for p in (self.root / NYSTROM_DIR).glob("*/factors.h5")]
            assert len(cells) == 1, f"{NYSTROM_DIR} should hold one finished cell: {cells}"
            self.values["CELL_DIR"] = str(cells[0].parent.relative_to(self.root))
        args = argv(line, self.values)
        assert args[0] == "kernlearn", line
        key = (tuple(args), tuple(sorted((env or {}).items())))
        if key not in self.done and process:
            self.done[key] = subprocess.run(kernlearn_executable() + args[1:], cwd=self.root, capture_output=True,
                                            text=True, env={**os.environ, **self.env, **(env or {})}, timeout=600)
        elif key not in self.done:
            self.done[key] = self._in_process(args, {**self.env, **(env or {})})
        return self.done[key]

    def _in_process(self, args: list, env: dict) -> subprocess.CompletedProcess:
        import traceback
        import warnings
        from contextlib import redirect_stderr, redirect_stdout
        from io import StringIO

        from kernlearn_cli.cli import main

        saved = (os.getcwd(), sys.argv, warnings.showwarning, {k: os.environ.get(k) for k in env})
        out, err = StringIO(), StringIO()
        try:
            os.chdir(self.root)
            sys.argv = list(args)
            os.environ.update(env)
            with redirect_stdout(out), redirect_stderr(err), warnings.catch_warnings():
                try:
                    main()
                    code = 0
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else 1
                except Exception:                                      # a traceback, as the process would show
                    traceback.print_exc()
                    code = 1
        finally:
            os.chdir(saved[0])
            sys.argv, warnings.showwarning = saved[1], saved[2]
            for k, v in saved[3].items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Site:
    root = tmp_path_factory.mktemp("readme_run")
    shutil.copytree(REPO / "configs", root / "configs")
    env = {"KERNLEARN_DATA": str(root / "data_home")}                  # fetches go here, not to datasets/
    s = Site(root, env, {**PLACEHOLDERS}, {})
    quick = s.run(f"kernlearn run {QUICK}", process=True)              # the README's run (make run), as a user runs it
    assert quick.returncode == 0, quick.stderr
    (root / "nystrom.yaml").write_text(yaml.safe_dump(NYSTROM_CONFIG))
    rng = np.random.default_rng(0)
    np.save(root / "new_points.npy", rng.uniform([4.3, 2.0, 1.0, 0.1], [7.9, 4.4, 6.9, 2.5], size=(5, 4)))
    (root / "tinypaper").mkdir()
    (root / "tinypaper" / "tiny.yaml").write_text(yaml.safe_dump(TINY_CONFIG))
    (root / "tinypaper" / "study.yaml").write_text(yaml.safe_dump(TINY_STUDY))
    (root / "tinypaper" / "study.md").write_text("## summary\n\nBurg on iris.\n\n**Reproduced**\n- #1: the count.\n\n## protocol\n\nTwo counts.\n")
    tiny = s.run("kernlearn reproduce PAPER --jobs 1")                 # the finished cells --no-run rebuilds from
    assert tiny.returncode == 0, tiny.stderr
    return s


# ---- the tests --------------------------------------------------------------------------------------------

def test_every_doc_command_is_classified():
    found = doc_commands()
    new = {c: found[c] for c in found if c not in COMMANDS}
    assert not new, ("commands in the docs that tests/test_docs.py does not classify; add each to COMMANDS, "
                     "as run(...) or not_run(reason):\n" + "\n".join(f"  {c!r}  ({', '.join(f)})" for c, f in new.items()))
    stale = [c for c in COMMANDS if c not in found]
    assert not stale, "COMMANDS entries the docs no longer show (remove them):\n" + "\n".join(f"  {c!r}" for c in stale)


@pytest.mark.parametrize("command", list(COMMANDS), ids=list(COMMANDS))
def test_doc_command_parses(command):
    """Subcommand and options exist; the command line is accepted (with --help, so nothing runs)."""
    import typer
    from typer.testing import CliRunner

    from kernlearn_cli.cli import app

    root = typer.main.get_command(app)
    entry = COMMANDS[command]
    values = PLACEHOLDERS
    if entry.parse:
        lines = list(entry.parse)
    elif entry.runs:
        lines = [line or command for line in entry.runs]
    else:
        lines = [command.replace("[", "").replace("]", "")]
    for line in lines:
        args = argv(line, values)[1:]
        cmd, path = root, []
        while hasattr(cmd, "commands"):                                 # a group: the next word is a subcommand
            assert args[len(path)] in cmd.commands, f"{command!r}: no subcommand {args[len(path)]!r} of {cmd.name!r}"
            cmd = cmd.commands[args[len(path)]]
            path.append(cmd.name)
        declared = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)}
        unknown = [o for o in options_used(command) if o not in declared]
        assert not unknown, f"{command!r}: `kernlearn {' '.join(path)}` has no option {unknown}; it has {sorted(declared)}"
        result = CliRunner().invoke(app, [*args, "--help"])
        assert result.exit_code == 0, f"{line!r} is refused:\n{result.output}"
        assert "Usage:" in result.output


def test_commands_in_the_text_name_real_subcommands_and_options():
    """`kernlearn ...` in running text (not a code block): its subcommand and options exist."""
    import typer

    from kernlearn_cli.cli import app

    root = typer.main.get_command(app)
    problems = []
    for path in DOCS + [REPO / "datasets" / "README.md", REPO / "benchmarks" / "README.md"]:
        text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
        for m in re.finditer(r"`(kernlearn(?: [^`]*)?)`", text):
            words, cmd = m.group(1).split()[1:], root
            while words and hasattr(cmd, "commands") and words[0] in cmd.commands:
                cmd = cmd.commands[words.pop(0)]
            if hasattr(cmd, "commands") and words and not words[0].startswith("-"):
                problems.append(f"{path.name}: `{m.group(1)}`: no subcommand {words[0]!r}")
                continue
            declared = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)} | {"--help"}
            problems += [f"{path.name}: `{m.group(1)}`: no option {o}" for o in options_used(" ".join(words))
                         if o not in declared]
    assert not problems, problems


RUNNABLE = [pytest.param(c, marks=[pytest.mark.xfail(strict=True, reason=e.xfail)] if e.xfail else [], id=c)
            for c, e in COMMANDS.items() if e.runs]


@pytest.mark.slow
@pytest.mark.parametrize("command", RUNNABLE)
def test_doc_command_runs(site, command):
    entry = COMMANDS[command]
    if entry.needs_mirror and not has_mirror():
        pytest.skip("no dataset mirror (KERNLEARN_DATA_MIRROR or ../shared/datasets): this would download")
    outputs = []
    for line in entry.runs:
        proc = site.run(line or command)
        assert proc.returncode == 0, (f"`{' '.join(argv(line or command, site.values))}` (the docs' `{command}`) "
                                      f"exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
        outputs += [proc.stdout, proc.stderr]
    assert entry.expect, f"{command!r}: say what its output or files show (run(..., expect=...))"
    for pattern in entry.expect:
        if pattern.startswith("file:"):
            assert list(site.root.glob(pattern[5:])), f"{command!r} wrote no {pattern[5:]}"
        else:
            assert any(re.search(pattern, text, re.M) for text in outputs), (
                f"{command!r}: no line matches {pattern!r} in its output:\n" + "\n".join(o[-2000:] for o in outputs))


@pytest.mark.slow
def test_datasets_verify_calls_bundled_iris_and_wine_present(site):
    """iris and wine load from scikit-learn's copies: an empty data home does not lack them."""
    proc = site.run("kernlearn datasets verify", env={"KERNLEARN_DATA": str(site.root / "empty_home")})
    assert proc.returncode == 0, proc.stderr
    rows = [line.split(None, 2) for line in proc.stdout.splitlines() if line.strip()]
    status = {(r[0], r[1]): r[2] for r in rows if len(r) == 3 and r[0] in ("iris", "wine")}
    assert {d for d, _ in status} == {"iris", "wine"}, proc.stdout
    wrong = {k: v for k, v in status.items() if "missing" in v or "not fetched" in v}
    assert not wrong, f"bundled datasets reported as absent: {wrong}"


def elided_match(doc: list, actual: list, same) -> list | None:
    """Match ``doc`` against ``actual``, each ``...`` item of doc standing for one or more actual items.
    Returns, per doc item, the actual indices it covers; None if there is no match."""
    def go(i, j):
        if i == len(doc):
            return [] if j == len(actual) else None
        if doc[i] == "...":
            for k in range(j + 1, len(actual) + 1):
                rest = go(i + 1, k)
                if rest is not None:
                    return [list(range(j, k))] + rest
            return None
        if j < len(actual) and same(doc[i], actual[j]):
            rest = go(i + 1, j + 1)
            return None if rest is None else [[j]] + rest
        return None

    return go(0, 0)


def cells_of(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def alignment(cell: str) -> str:
    return {(True, True): "center", (True, False): "left", (False, True): "right"}.get(
        (cell.startswith(":"), cell.endswith(":")), "default")


@pytest.mark.slow
def test_readme_shows_what_make_run_prints(site):
    (block,) = [b for b in fenced_blocks(README.read_text()) if b and b[0].startswith("[") and
                any(re.match(r"\d+ cell\(s\) run", line) for line in b)]
    doc_table = [line for line in block if line.startswith("|")]
    doc_summary = [line for line in block if re.match(r"\d+ cell\(s\) run", line)]
    doc_cells = [line for line in block if line not in doc_table and line not in doc_summary]
    proc = site.done[(("kernlearn", "run", QUICK), ())]
    out = proc.stdout.splitlines()
    cells = [line for line in out if line.startswith("[")]
    table = [line for line in out if line.startswith("|")]

    def seconds(s):
        return re.sub(r"\b\d+(\.\d+)?s\b", "<seconds>", s)             # times and time left vary

    assert elided_match(doc_cells, cells, lambda d, a: seconds(d) == seconds(a)), (
        "README's cell lines are not what `kernlearn run configs/quick.yaml` prints (seconds aside); it prints:\n"
        + "\n".join(cells))
    assert doc_summary == [line for line in proc.stderr.splitlines() if re.match(r"\d+ cell\(s\) run", line)]

    doc_header = cells_of(doc_table[0])
    columns = elided_match(doc_header, cells_of(table[0]), str.__eq__)
    assert columns, f"README's table header {doc_header} is not the run's {cells_of(table[0])}"
    assert len(doc_table) == len(table), "the run's table:\n" + "\n".join(table)
    for k, (doc_row, row) in enumerate(zip(doc_table, table)):
        d, a = cells_of(doc_row), cells_of(row)
        assert len(d) == len(doc_header), doc_row
        for cell, name, cols in zip(d, doc_header, columns):
            if name == "...":
                assert set(cell) <= set(".-:"), f"README table row {k}: {cell!r} where columns are left out"
            elif k == 1:
                assert alignment(cell) == alignment(a[cols[0]]), f"column {cols[0]}: alignment differs"
            else:
                assert cell == a[cols[0]], (f"README table row {k}: {cell!r}, the run prints {a[cols[0]]!r}; "
                                            f"the run's table:\n" + "\n".join(table))


def test_readme_opens_with_make_run_and_make_test():
    first = fenced_blocks(README.read_text())[0]
    assert [line.split("#")[0].strip() for line in first] == ["make run", "make test"]


def test_environment_variables_are_documented():
    """Every KERNLEARN_* variable the code reads is in the README, and the PATH route sets the mirror."""
    code = "\n".join(p.read_text() for p in (REPO / "kernlearn_cli").rglob("*.py"))
    readme = README.read_text()
    names = sorted(set(re.findall(r"KERNLEARN_[A-Z_]+", code)))
    assert names and not [n for n in names if n not in readme], names
    path_route = readme[readme.index("Put `.venv/bin` on your PATH"):readme.index("## The papers")]
    assert re.search(r"export KERNLEARN_DATA_MIRROR=", path_route)


def test_links_and_paths_exist():
    problems = []
    for path in DOCS:
        text = path.read_text()
        for m in re.finditer(r"\]\(([^)\s]+)\)", text):
            target = m.group(1).split("#")[0]
            if target and "://" not in target and not (path.parent / target).exists():
                problems.append(f"{path.name}: link {m.group(1)}")
        for m in re.finditer(r"`([^`\s]+)`", text):
            p = m.group(1)
            if ("/" in p and p.split("/")[0] in {"tests", "benchmarks", "kernlearn_cli", "configs", "docs", "datasets",
                                                 ".ci"} and not re.search(r"[<*{$]", p) and not (REPO / p).exists()):
                problems.append(f"{path.name}: path {p}")
    layout = [b for b in fenced_blocks(README.read_text()) if b and b[0].startswith("kernlearn_cli/")][0]
    folder = None
    for line in layout:
        if not line.startswith(" "):
            folder = line.split()[0]
        for name in line.split():
            if (re.fullmatch(r"\w+\.py|\w+\.md|\w+/", name) and name != folder and not (REPO / folder / name).exists()
                    and not (REPO / name).exists()):
                problems.append(f"README.md layout: {folder}{name}")
    assert not problems, problems


def test_counts_in_testing_md():
    """Counts docs/testing.md states that are cheap to check (the kinds of bad input: tests/test_failures.py)."""
    text = " ".join((REPO / "docs" / "testing.md").read_text().split())
    kills = re.search(r"^TRIALS = (\d+)$", (REPO / "tests" / "test_kill.py").read_text(), re.M).group(1)
    assert f"{kills} SIGKILLs at random moments" in text
    default = re.search(r'KERNLEARN_FORCE_KILLS", "(\d+)"', (REPO / "tests" / "test_failures.py").read_text()).group(1)
    assert f"({default} kills;" in text
