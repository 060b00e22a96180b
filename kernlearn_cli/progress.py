"""Progress of a run, for a person watching a terminal or reading a log.

On a terminal (stderr is a TTY): a bar over the cells (done / total, failed, elapsed, estimate
left), and with ``-v`` a bar over the running cell's iterations (``k of max``) when the cells run
in this process.  In a log: plain lines, each finished cell with ``k/n`` and the estimate, and
(``-v``) one line per solver iteration with ``k of max``.  On Ctrl-C: one line saying what finished
and that a rerun resumes.

The estimate of the time left is the mean time of the cells run so far (cells found finished cost
nothing) times the cells left (the mean is of wall time, so parallel workers are in it).  An
iteration's line (:class:`IterationStatus`) shows what the solver's stopping rule tests, each with its
tolerance, the time elapsed and the measured time per iteration; the time left it gives only as the
worst case, labelled so: the solver stops sooner when its checks are met, which it does not predict.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import contextmanager

#: A solver's iteration limit: its setting's name and value, e.g. ``("max_iter", 500)``.
Limit = tuple[str, int]


def clock(seconds: float) -> str:
    """``seconds`` as ``12s``, ``3m05s`` or ``2h03m``."""
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def per_iteration(seconds: float) -> str:
    """A time per iteration: ``850us``, ``12.5ms``, ``3.2s`` or (a minute and more) :func:`clock`."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.3g}us"
    if seconds < 1:
        return f"{seconds * 1e3:.3g}ms"
    return f"{seconds:.3g}s" if seconds < 60 else clock(seconds)


def iteration_limit(solver_params: dict, budget: str) -> Limit | None:
    """The iteration limit of a solver whose setting ``budget`` bounds its iterations (its registry
    entry's ``budget``; empty for none), from its bound settings: None unless a positive int."""
    value = solver_params.get(budget) if budget else None
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return budget, value
    return None


# ---- phases of a cell: what it is doing now, said when it lasts ---------------------------------------
#: A phase is said this many seconds after it started (a shorter one is not worth a line), and again
#: every :data:`PHASE_EVERY` seconds while it lasts.
PHASE_FIRST, PHASE_EVERY = 3.0, 60.0


class _Phases:
    """The phase of the cell this process runs (a cell runs in one process), and a daemon thread that
    says it when it lasts: ``[cell] building K0 'rbf' (n = 20000), 3s``.  The thread runs while the
    work is in LAPACK (NumPy releases the interpreter lock there); where compiled code keeps the lock,
    the line comes when it returns, and Ctrl-C still ends the command (:mod:`kernlearn_cli.supervise`).
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.current: list | None = None            # [label, text, started, last said or None]
        self.sink: tuple[int, object] | None = None  # (pid, callable): lines go there in that process
        self.thread: tuple[int, threading.Thread] | None = None

    def say(self, line: str) -> None:
        pid_sink = self.sink
        if pid_sink is not None and pid_sink[0] == os.getpid():
            pid_sink[1](line)
        else:
            print(line, file=sys.stderr, flush=True)

    def start(self, label: str, text: str) -> list:
        if self.thread is None or self.thread[0] != os.getpid() or not self.thread[1].is_alive():
            thread = threading.Thread(target=self._beat, name="kernlearn-phases", daemon=True)
            self.thread = (os.getpid(), thread)
            thread.start()
        with self.lock:
            self.current = [label, text, time.monotonic(), None]
            return self.current

    def end(self, token: list) -> None:
        with self.lock:
            if self.current is token:
                self.current = None

    def _beat(self) -> None:
        while True:
            time.sleep(0.25)
            with self.lock:
                cur = self.current
                now = time.monotonic()
                due = cur is not None and now - cur[2] >= PHASE_FIRST and (cur[3] is None or now - cur[3] >= PHASE_EVERY)
                if due:
                    cur[3] = now
            if due:
                self.say(f"    [{cur[0]}] {cur[1]}, {clock(now - cur[2])}")


PHASES = _Phases()


@contextmanager
def phase(label: str, text: str):
    """The cell ``label`` is doing ``text`` (``building K0 'rbf' (n = 150)``) until the block ends;
    said when it lasts :data:`PHASE_FIRST` seconds, again every :data:`PHASE_EVERY` seconds."""
    token = PHASES.start(label, text)
    try:
        yield
    except KeyboardInterrupt:
        PHASES.stopped_in = (label, text.split(" | ")[0])
        raise
    finally:
        PHASES.end(token)


def stopped_stage() -> str:
    """What was running when Ctrl-C came (:func:`phase`), for the interrupt line: ``; it stopped cell-0 while
    evaluating 'knn_accuracy' (its learned factor is kept: a rerun evaluates only)``; empty if no phase ran."""
    where = getattr(PHASES, "stopped_in", None)
    if where is None:
        return ""
    kept = (" (its learned factor is kept: a rerun evaluates only)"
            if where[1].startswith(("evaluating", "mapping the held-out")) else "")
    return f"; it stopped cell {where[0]} while {where[1]}{kept}"


def phase_step(done: int, total: int, unit: str) -> None:
    """The running phase has done ``done`` of ``total`` equal steps (``unit``, e.g. ``fold``): its
    line (:func:`phase`) gains ``fold 3 of 20, about 1m05s left`` (the mean time of the steps done
    times the steps left) and is said now."""
    with PHASES.lock:
        cur = PHASES.current
        if cur is None:
            return
        base = cur[1].split(" | ")[0]
        elapsed = time.monotonic() - cur[2]
        left = elapsed / done * (total - done) if done else None
        cur[1] = f"{base} | {unit} {done} of {total}" + (f", about {clock(left)} left" if left is not None else "")
        label, text = cur[0], cur[1]
        due = elapsed >= PHASE_FIRST
        if due:
            cur[3] = time.monotonic()
    if due:
        PHASES.say(f"    [{label}] {text}, {clock(elapsed)}")


def announce(line: str) -> None:
    """A line now, where the phases' lines go (above the bar of a run in this process, else stderr)."""
    PHASES.say(line)


def metric_text(name: str, value: float) -> str:
    """``dual change 3.000e-04``; a :class:`~kernlearn_cli.solvers.protocol.Checked` value (one the
    stopping rule tests) with its tolerance: ``dual change 3.000e-04 (tol 1.0e-03)``."""
    tol = getattr(value, "tol", None)
    return f"{name.replace('_', ' ')} {value:.3e}" + ("" if tol is None else f" (tol {tol:.1e})")


class IterationStatus:
    """What ``-v`` says after a solver's iteration ``step``: its metrics (those the stopping rule
    tests with their tolerances), the time elapsed since the cell started, the time per iteration
    measured since the solver's first report (a count that starts again, a path's next point,
    starts a new measure), and the time to the iteration limit, labelled as the worst case."""

    def __init__(self, limit: Limit | None):
        self.limit, self.start = limit, time.monotonic()
        self.first: tuple[int, float] | None = None    # (step, time) the rate is measured from
        self.last = 0

    def __call__(self, step: int, metrics: dict) -> str:
        now = time.monotonic()
        if self.first is None or step <= self.last:
            self.first = (step, now)
        self.last = step
        text = "  ".join(metric_text(k, v) for k, v in metrics.items())
        text += f"  {clock(now - self.start)} elapsed"
        done = step - self.first[0]
        if done > 0:
            pace = (now - self.first[1]) / done
            text += f", {per_iteration(pace)}/iter"
            if self.limit is not None and step < self.limit[1]:
                name, value = self.limit
                text += f", ≤ {clock(pace * (value - step))} more if it runs to {name} {value}"
        return text


class IterationLines:
    """``-v`` in a log or a worker process: one line per solver iteration, ``k of max`` and its
    :class:`IterationStatus` (picklable, so worker processes can use it)."""

    def __init__(self, label: str, limit: Limit | None):
        self.label, self.limit, self.status = label, limit, IterationStatus(limit)

    def __call__(self, step, /, **metrics):
        of = f" of {self.limit[1]}" if self.limit else ""
        print(f"    [{self.label}] iter {step:5d}{of}  {self.status(step, metrics)}", file=sys.__stdout__, flush=True)


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

    #: Whether a run's interrupt line was printed in this process (the CLI then adds none).
    interrupt_said = False

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
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            # no TimeRemainingColumn: for an iteration bar it would be the time to the limit, unlabelled;
            # the cells' estimate (left_seconds) and the iterations' (IterationStatus) are in the notes
            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TextColumn("{task.fields[note]}"), TimeElapsedColumn(),
                                console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task(self.name, total=self.total, note="")
        PHASES.sink = (os.getpid(), self.say_err)
        return self

    def __exit__(self, kind, exc, tb):
        PHASES.sink = None
        if self.bar is not None:
            self.bar.stop()
        if kind is not None and issubclass(kind, KeyboardInterrupt):
            print(self.interrupted(), file=sys.stderr, flush=True)
            RunProgress.interrupt_said = True
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
                f"run), {len(self.failed)} failed, after {clock(time.monotonic() - self.start)}{stopped_stage()}; "
                f"finished cells are kept, and the same command resumes with the other "
                f"{self.total - self.run - self.skipped}.")

    # ---- events -----------------------------------------------------------------------------
    def say(self, line: str) -> None:
        """A line above the bar (stdout)."""
        if self.bar is not None:
            self.bar.console.print(line, highlight=False, soft_wrap=True, markup=False)
        else:
            print(line, flush=True)

    def say_err(self, line: str) -> None:
        """A line above the bar, else on stderr (progress of a cell's phases, large steps)."""
        if self.bar is not None:
            self.bar.console.print(line, highlight=False, soft_wrap=True, markup=False)
        else:
            print(line, file=sys.stderr, flush=True)

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
            left = self.left_seconds()
            notes = [f"{len(self.failed)} failed" if self.failed else "",
                     f"about {clock(left)} left" if left is not None and self.finished < self.total else ""]
            self.bar.update(self.task, advance=1, note=", ".join(filter(None, notes)))
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

    def iterations(self, cell, limit: Limit | None):
        """The ``-v`` callback of a cell run in this process: a bar on a terminal, else lines."""
        if self.bar is None:
            return IterationLines(cell.id, limit)
        task = self.bar.add_task(f"  {cell.id}", total=limit[1] if limit else None, note="iterations")
        status = IterationStatus(limit)

        def update(step, /, **metrics):
            self.bar.update(task, completed=step, note=status(step, metrics))

        update.done = lambda: self.bar.remove_task(task)
        return update
