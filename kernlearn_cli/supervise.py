"""The ``kernlearn`` process watches the process that does the work, so that Ctrl-C ends any command
within seconds, whatever the work is doing.

Python runs a signal handler only between bytecodes: a cell inside LAPACK (a 20,000 x 20,000
eigendecomposition) or a compiled kernel would not see Ctrl-C for minutes.  So the command runs in a
child process (fork, in a process group of its own, with the cells' worker processes); this process
only waits for it.  On SIGINT (Ctrl-C) or SIGTERM it passes the signal on to the child's group: a child
in Python code stops as it always did (the line saying what finished, exit 130; SIGTERM is taken
like Ctrl-C, :func:`stop_on_sigterm`, exit 143), and its handler first tells this process so (a byte
on a pipe): however long the stop then takes on a loaded machine, it is waited for, and a second
Ctrl-C kills it at once.  A child that has not said so within :data:`GRACE` seconds (:data:`TERM_GRACE`
after SIGTERM) is inside compiled code, where no Python handler runs; the whole group is killed and
this process says so itself.  Killing costs nothing that was finished: cells are written atomically (a killed cell
leaves no file that looks finished, and a rerun computes it).

The child is the same process the command ran in before (fork: the modules already imported, and each
dataset and initial kernel memoised once per run), and it dies with this process, as the cells' worker
processes die with it (Linux: the parent death signal), so ``kill -9`` on ``kernlearn`` (or on its
process group, as when a node dies) stops the work too.  Where ``fork`` is missing (Windows)
or ``KERNLEARN_SUPERVISE=0``, the command runs in this process as before.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import time

#: Seconds a child gets to stop by itself after Ctrl-C, before its group is killed.
GRACE = 2.0
#: The same after SIGTERM, which a scheduler sends and follows with SIGKILL after its own grace (SLURM's
#: ``KillWait``, 30 s by default): a child that stopped needs seconds more to exit (a loaded node).
TERM_GRACE = 20.0
#: Exit code of a command stopped by SIGTERM (:func:`stop_on_sigterm`), as a shell reports it.
TERMINATED = 128 + signal.SIGTERM
#: Whether SIGTERM stopped this process's command (set by :func:`stop_on_sigterm`'s handler).
terminated = False
#: The child's end of the pipe on which it tells the supervisor that it is stopping (None: unsupervised).
_stopping_fd: int | None = None
#: The process whose Python signal handlers speak for the command (not its forked cell workers).
_owner: int | None = None


def _say_stopping() -> None:
    """In the command's process, from a signal handler: tell the supervisor that the command is in
    Python code and stopping (non-blocking; a full or closed pipe needs no second word)."""
    if _stopping_fd is not None and os.getpid() == _owner:
        try:
            os.write(_stopping_fd, b"s")
        except OSError:
            pass


def _interrupt(signum, frame):
    """SIGINT in the supervised command: say it is stopping, then Python's own ``KeyboardInterrupt``."""
    _say_stopping()
    signal.default_int_handler(signum, frame)


class _Signal(Exception):
    def __init__(self, signum: int):
        self.signum = signum


def _raise(signum, frame):
    raise _Signal(signum)


def die_with_parent() -> None:
    """Linux: SIGKILL this process when its parent dies (prctl PR_SET_PDEATHSIG); elsewhere nothing."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)          # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass


def stop_on_sigterm() -> None:
    """Make SIGTERM stop the command in this process as Ctrl-C does: a ``KeyboardInterrupt``, so a run
    says what finished and keeps it, and the command exits :data:`TERMINATED`.

    SLURM ends a preempted, requeued or cancelled task with SIGTERM (to each of its processes, and
    the supervisor passes its own on), then SIGKILL after its ``KillWait``.  Only the first SIGTERM
    interrupts; later ones are ignored, so they cannot break the cleanup.  The cells' worker processes,
    forked from this one, die of SIGTERM as before.  A SIGTERM ignored where the command started is
    left ignored.
    """
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return
    owner = os.getpid()

    def interrupt(signum, frame):
        global terminated
        if os.getpid() != owner:               # a forked worker: die of it, as without this handler
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        terminated = True
        signal.signal(signum, signal.SIG_IGN)
        _say_stopping()
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)


def _killpg(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _exit_code(status: int) -> int:
    """A wait status as the exit code a shell reports (128 + the signal for a killed process)."""
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def supervise() -> None:
    """Fork the process that runs the command and return in it; in this process, wait for it, pass
    Ctrl-C / SIGTERM on, and exit with its status (never returns here)."""
    if not hasattr(os, "fork") or os.environ.get("KERNLEARN_SUPERVISE", "1") == "0":
        return
    global _stopping_fd, _owner
    sys.stdout.flush()
    sys.stderr.flush()
    parent = os.getpid()
    stopping_r, stopping_w = os.pipe()
    pid = os.fork()
    if pid == 0:                               # the child: the command's own process
        os.setpgid(0, 0)
        die_with_parent()
        if os.getppid() != parent:             # the parent died before prctl took effect
            os._exit(137)
        os.close(stopping_r)
        os.set_blocking(stopping_w, False)
        _stopping_fd, _owner = stopping_w, os.getpid()
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, _interrupt)
        return
    os.close(stopping_w)
    try:
        os.setpgid(pid, pid)                   # (as the child does: whichever runs first)
    except OSError:
        pass
    handled = [s for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
               if signal.getsignal(s) is not signal.SIG_IGN]   # nohup / a background job keep theirs ignored
    for s in handled:
        signal.signal(s, _raise)
    status = None
    try:
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):             # killed from outside, e.g. by the kernel's OOM killer
            name = signal.Signals(os.WTERMSIG(status)).name
            print(f"kernlearn: the work was killed by {name}" + (" (the system's out-of-memory killer sends it "
                  "when memory runs out)" if name == "SIGKILL" else "") + ". Finished cells are kept; the same "
                  "command resumes with the others.", file=sys.stderr, flush=True)
    except _Signal as first:
        status = _stop(pid, first.signum, stopping_r)
    sys.stdout.flush()
    os._exit(_exit_code(status))


def _stop(pid: int, signum: int, stopping: int) -> int:
    """Pass ``signum`` on to the child's group and wait for the child.  A child that says it is stopping
    (a byte on the pipe ``stopping``) is waited for until it ends, or until a second signal; one that
    has not said so after :data:`GRACE` seconds (for SIGTERM :data:`TERM_GRACE`, and a repeated SIGTERM,
    as SLURM may send, is ignored) is killed with its group, as is one still running
    :data:`TERM_GRACE` after SIGTERM (the scheduler's SIGKILL follows).  Returns the wait status to exit
    with."""
    _killpg(pid, signum)
    grace = GRACE
    if signum == signal.SIGTERM:
        signal.signal(signum, signal.SIG_IGN)
        grace = TERM_GRACE
    start = time.monotonic()
    said = False
    try:
        while said and signum == signal.SIGINT or time.monotonic() < start + grace:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                _killpg(pid, signal.SIGKILL)   # the cells' workers, if any is left
                return status
            if said:
                time.sleep(0.02)
            else:
                said = bool(select.select([stopping], [], [], 0.02)[0])
    except _Signal:
        pass
    _killpg(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    what = "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"
    where = ("was stopping" if said else
             "was inside compiled code (a factorization or a solver's kernel)")
    print(f"kernlearn: {what}: the work {where} and was ended after {time.monotonic() - start:.0f} s. Finished "
          f"cells are kept (each is written whole or not at all); the same command resumes with the others.",
          file=sys.stderr, flush=True)
    return (128 + signum) << 8                 # exit status 128 + signal number, as a shell reports it
