"""Progress of a run, for a person watching a terminal or reading a log.

On a terminal (stderr is a TTY): a bar over the cells (done / total, failed, elapsed, estimate
left), and with ``-v`` a bar over the running cell's iterations (``k of max``) when the cells run
in this process.  In a log: plain lines, each finished cell with ``k/n`` and the estimate, and
(``-v``) one line per solver iteration with ``k of max``.  On Ctrl-C: one line saying what finished
and that a rerun resumes.

The estimate of the time left is the mean time of the cells run so far (cells found finished cost
nothing) times the cells left (the mean is of wall time, so parallel workers are in it); an iteration's estimate is the time left if
the solver ran to its iteration limit at its current pace (an upper bound: it stops when converged).
"""

from __future__ import annotations

import sys
import time

#: Settings that bound a solver's iterations, in the order they are looked up (the first present).
ITERATION_LIMITS = ("max_sweeps", "max_iter", "max_steps", "iterations")


def clock(seconds: float) -> str:
    """``seconds`` as ``12s``, ``3m05s`` or ``2h03m``."""
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def iteration_limit(solver_params: dict) -> int | None:
    """The iteration limit among a solver's bound settings (:data:`ITERATION_LIMITS`), if any."""
    for key in ITERATION_LIMITS:
        value = solver_params.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


class IterationLines:
    """``-v`` in a log or a worker process: one line per solver iteration, ``k of max`` and the time
    left at this pace (picklable, so worker processes can use it)."""

    def __init__(self, label: str, limit: int | None):
        self.label, self.limit, self.start = label, limit, time.monotonic()

    def __call__(self, step, /, **metrics):
        now = time.monotonic()
        of = f" of {self.limit}" if self.limit else ""
        left = ""
        if self.limit and step > 0:
            elapsed = now - self.start
            left = f"  {clock(elapsed)}, at most {clock(elapsed / step * (self.limit - step))} more"
        values = "  ".join(f"{k.replace('_', ' ')} {v:.3e}" for k, v in metrics.items())
        print(f"    [{self.label}] iter {step:5d}{of}  {values}{left}", file=sys.__stdout__, flush=True)


class RunProgress:
    """Progress over the cells of one experiment (a context manager).

    Parameters
    ----------
    name : str
        What runs (the experiment's name), shown on the bar and in the lines.
    total : int
        Cells of this run (finished ones included: they are counted as they are found).
    per_cell : bool
        A line per cell run; without it a log gets a line at most every ``every`` seconds.
    verbose : bool
        ``-v``: the running cell's iterations (:meth:`iterations`).
    tty : bool, optional
        Draw bars (default: whether stderr is a terminal).
    """

    def __init__(self, name: str, total: int, *, per_cell: bool = True, verbose: bool = False,
                 tty: bool | None = None, every: float = 10.0):
        self.name, self.total, self.per_cell, self.verbose = name, total, per_cell, verbose
        self.tty = sys.stderr.isatty() if tty is None else tty
        self.every = every
        self.run = self.skipped = 0
        self.failed: list[str] = []
        self.start = self.last_line = time.monotonic()
        self.bar = None

    # ---- context ----------------------------------------------------------------------------
    def __enter__(self):
        if self.tty:
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                       TimeRemainingColumn)

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TextColumn("{task.fields[note]}"), TimeElapsedColumn(), TimeRemainingColumn(),
                                console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task(self.name, total=self.total, note="")
        return self

    def __exit__(self, kind, exc, tb):
        if self.bar is not None:
            self.bar.stop()
        if kind is not None and issubclass(kind, KeyboardInterrupt):
            print(self.interrupted(), file=sys.stderr, flush=True)
        return False

    # ---- counts -----------------------------------------------------------------------------
    @property
    def finished(self) -> int:
        return self.run + self.skipped + len(self.failed)

    def left_seconds(self) -> float | None:
        """Estimated seconds left: mean wall seconds per cell computed here x cells left."""
        computed = self.run + len(self.failed)
        if computed == 0:
            return None
        per_cell = (time.monotonic() - self.start) / computed
        return per_cell * (self.total - self.finished)

    def status(self) -> str:
        """``k/n cells, f failed, elapsed, ~left``."""
        left = self.left_seconds()
        failed = f", {len(self.failed)} failed" if self.failed else ""
        estimate = f", about {clock(left)} left" if left is not None and self.finished < self.total else ""
        return f"{self.finished}/{self.total} cells{failed}, {clock(time.monotonic() - self.start)} elapsed{estimate}"

    def interrupted(self) -> str:
        """The line printed on Ctrl-C."""
        return (f"interrupted: {self.name}: {self.run + self.skipped} of {self.total} cells finished ({self.run} in this "
                f"run), {len(self.failed)} failed, after {clock(time.monotonic() - self.start)}; finished cells are "
                f"kept, and the same command resumes with the other {self.total - self.run - self.skipped}.")

    # ---- events -----------------------------------------------------------------------------
    def say(self, line: str) -> None:
        """A line above the bar (stdout)."""
        if self.bar is not None:
            self.bar.console.print(line, highlight=False, soft_wrap=True, markup=False)
        else:
            print(line, flush=True)

    def cell(self, cell, record: dict | None, error: str | None, describe) -> None:
        """A cell came back: ``record`` None and no error means it was already finished."""
        if error is not None:
            # the long reason is said once, below; the list keeps the kind ("infeasible (certified)", ...)
            self.failed.append(f"[{cell.index}] {cell.id} (seed {cell.seed}): {error.partition(': ')[0]}")
        elif record is None:
            self.skipped += 1
        else:
            self.run += 1
        if self.bar is not None:
            self.bar.update(self.task, advance=1, note=f"{len(self.failed)} failed" if self.failed else "")
        head = f"[{self.finished}/{self.total}] {cell.id}"
        if error is not None:
            self.say(f"{head}: FAILED (cell #{cell.index}, seed {cell.seed}): {error}")
        elif record is not None and (self.per_cell or self.verbose):
            left = self.left_seconds()
            tail = f"  ({clock(left)} left)" if self.bar is None and left is not None and self.finished < self.total \
                else ""
            self.say(f"{head}: {describe(record)}{tail}")
        elif self.bar is None and time.monotonic() - self.last_line >= self.every and self.finished < self.total:
            self.say(f"{self.name}: {self.status()}")
        else:
            return
        self.last_line = time.monotonic()

    def iterations(self, cell, limit: int | None):
        """The ``-v`` callback of a cell run in this process: a bar on a terminal, else lines."""
        if self.bar is None:
            return IterationLines(cell.id, limit)
        task = self.bar.add_task(f"  {cell.id}", total=limit, note="iterations")

        def update(step, /, **metrics):
            values = "  ".join(f"{k.replace('_', ' ')} {v:.2e}" for k, v in metrics.items())
            self.bar.update(task, completed=step, note=values)

        update.done = lambda: self.bar.remove_task(task)
        return update
