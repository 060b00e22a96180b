"""The ``kernlearn`` process watches the process that does the work, so that Ctrl-C ends any command
within seconds, whatever the work is doing.

Python runs a signal handler only between bytecodes: a cell inside LAPACK (a 20,000 x 20,000
eigendecomposition) or a compiled kernel would not see Ctrl-C for minutes.  So the command runs in a
child process (fork, in a process group of its own, with the cells' worker processes); this process
only waits for it.  On SIGINT (Ctrl-C) or SIGTERM it passes the signal on to the child's group: a child
in Python code stops as it always did (the line saying what finished, exit 130; SIGTERM is taken
like Ctrl-C, :func:`stop_on_sigterm`, exit 143).  A child that has not ended :data:`GRACE` seconds
later (:data:`TERM_GRACE` after SIGTERM) is inside compiled code; the whole group is killed and this process
says so itself.  Killing costs nothing that was finished: cells are written atomically (a killed cell
leaves no file that looks finished, and a rerun computes it).

The child is the same process the command ran in before (fork: the modules already imported, and each
dataset and initial kernel memoised once per run), and it dies with this process, as the cells' worker
processes die with it (Linux: the parent death signal), so ``kill -9`` on ``kernlearn`` (or on its
process group, as when a node dies) stops the work too.  Where ``fork`` is missing (Windows)
or ``KERNLEARN_SUPERVISE=0``, the command runs in this process as before.
"""

from __future__ import annotations

import os
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
    sys.stdout.flush()
    sys.stderr.flush()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:                               # the child: the command's own process
        os.setpgid(0, 0)
        die_with_parent()
        if os.getppid() != parent:             # the parent died before prctl took effect
            os._exit(137)
        return
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
        status = _stop(pid, first.signum)
    sys.stdout.flush()
    os._exit(_exit_code(status))


def _stop(pid: int, signum: int) -> int:
    """Pass ``signum`` on to the child's group; after :data:`GRACE` seconds (or a second signal; for
    SIGTERM :data:`TERM_GRACE`, and a repeated SIGTERM, as SLURM may send, is ignored) kill the group.
    Returns the wait status to exit with."""
    _killpg(pid, signum)
    grace = GRACE
    if signum == signal.SIGTERM:
        signal.signal(signum, signal.SIG_IGN)
        grace = TERM_GRACE
    deadline = time.monotonic() + grace
    try:
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                _killpg(pid, signal.SIGKILL)   # the cells' workers, if any is left
                return status
            time.sleep(0.02)
    except _Signal:
        pass
    _killpg(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    what = "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"
    print(f"kernlearn: {what}: the work was inside compiled code (a factorization or a solver's kernel) and "
          f"was ended after {grace:.0f} s. Finished cells are kept (each is written whole or not at all); the "
          f"same command resumes with the others.", file=sys.stderr, flush=True)
    return (128 + signum) << 8                 # exit status 128 + signal number, as a shell reports it
