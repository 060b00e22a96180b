"""Shared pieces of the cyclic Bregman projection solvers (``burg``, ``von_neumann``).

Compiled helpers (the signed form of a constraint, the dual-corrected step of
Bregman's method, eq. (4) of Kulis et al. 2006) and the Python-side bookkeeping
(dual-variable convergence, infeasibility detection, messages).
"""

import numpy as np
from numba import njit

from ..types import KINDS, Constraints

OK, BROKEN, STUCK = 0, 1, 2
TINY = 1e-300


@njit(cache=True)
def sign(kind):
    """delta of the signed form delta tr(KA) <= delta b: +1 (<=), -1 (>=), 0 (=)."""
    if kind == 0 or kind == 2:
        return 1.0
    if kind == 1 or kind == 3:
        return -1.0
    return 0.0


@njit(cache=True)
def dual_step(alpha_eq, lam, q, delta):
    """Dual-corrected step of Bregman's method, eq. (4): returns the applied alpha."""
    if delta == 0.0:          # equality: exact projection, lambda only tracked
        lam[q] -= alpha_eq
        return alpha_eq
    a = min(lam[q], delta * alpha_eq)   # alpha' = min(lambda_i, alpha) in the signed form
    lam[q] -= a
    return delta * a


@njit(cache=True)
def rel_violation(value, b, delta):
    scale = max(abs(b), 1e-12)
    if delta > 0:
        return max(value - b, 0.0) / scale
    if delta < 0:
        return max(b - value, 0.0) / scale
    return abs(value - b) / scale


def dual_change(lam: np.ndarray, lam_old: np.ndarray) -> float:
    """Convergence measure on the dual variables after a sweep (as in the authors' ITML code):
    ||lambda - lambda_old||_1 / (||lambda||_2 + ||lambda_old||_2)."""
    normsum = np.linalg.norm(lam) + np.linalg.norm(lam_old)
    return 0.0 if normsum == 0 else float(np.abs(lam - lam_old).sum() / normsum)


def describe(constraints: Constraints, q: int) -> str:
    return (f"constraint #{q} ({KINDS[constraints.kind[q]]} between points {constraints.i[q]} and "
            f"{constraints.j[q]}, bound {constraints.bound[q]:.6g})")


def stalled(viol: list[float], lam_norm: list[float], window: int) -> bool:
    """Infeasibility signature: over the last ``window`` sweeps the largest violation did not
    shrink by 1% while the dual variables kept growing by more than 10%."""
    if len(viol) < 2 * window:
        return False
    return viol[-1] > 1e-9 and viol[-1] > 0.99 * viol[-1 - window] \
        and lam_norm[-1] > 1.1 * lam_norm[-1 - window]




def run_sweeps(sweep, lam, constraints: Constraints, *, name: str, tol: float, max_sweeps: int,
               slack: float, stall_window: int, callback=None, after_sweep=None):
    """Drive cyclic sweeps to convergence on the dual variables; shared by the Bregman solvers.

    ``sweep()`` runs one compiled sweep (updating ``lam`` in place) and returns
    ``(status, index, max violation, its constraint)``; ``after_sweep()`` (optional)
    runs after each successful sweep.  Returns (converged, sweeps, history).  Raises
    :class:`InfeasibleError` for a stuck or broken projection, non-finite duals, or a
    stall (hard constraints only); warns when ``max_sweeps`` is reached.
    """
    import warnings

    from ..errors import InfeasibleError

    history = {"dual_change": [], "max_violation": [], "lambda_norm": []}
    converged = False
    count = 0
    while count < max_sweeps:
        lam_old = lam.copy()
        status, q, maxviol, argmax = sweep()
        count += 1
        if status == STUCK:
            raise InfeasibleError(f"the constraints are infeasible: {describe(constraints, q)} constrains a "
                                  "quantity that is zero in the range of the initial kernel (or cannot reach its "
                                  f"bound) and cannot be changed by a rank-preserving {name} update. Remove it, "
                                  "or use solver.slack for distance constraints.")
        if status == BROKEN or not np.all(np.isfinite(lam)):
            raise InfeasibleError(f"the {name} projections broke down at sweep {count} on {describe(constraints, q)}: "
                                  "the update would leave the positive definite cone or produced non-finite values. "
                                  "The constraint set is infeasible or numerically degenerate; try solver.slack "
                                  "to allow violations.")
        if after_sweep is not None:
            after_sweep()
        change = dual_change(lam, lam_old)
        history["dual_change"].append(change)
        history["max_violation"].append(maxviol)
        history["lambda_norm"].append(float(np.linalg.norm(lam)))
        if callback is not None:
            callback(count, change, maxviol)
        if change < tol:
            converged = True
            break
        if slack == float("inf") and stalled(history["max_violation"], history["lambda_norm"], stall_window):
            raise InfeasibleError(
                f"the constraints look infeasible: after {count} sweeps the largest violation "
                f"({maxviol:.3g} relative, at {describe(constraints, argmax)}) has stopped shrinking while the "
                "dual variables keep growing. Check for contradictory constraints, or use solver.slack "
                "to trade violations against divergence.")
    if not converged:
        warnings.warn(f"{name}: not converged after {max_sweeps} sweeps (dual change "
                      f"{history['dual_change'][-1]:.3g} > tol {tol:g}); the result is written with "
                      "converged=false.", stacklevel=3)
    return converged, count, {k: np.asarray(v) for k, v in history.items()}


def check_settings(name: str, constraints: Constraints, tol: float, slack: float) -> None:
    """The checks every cyclic Bregman solver makes before its first sweep."""
    from ..errors import ConfigError

    if len(constraints) == 0:
        raise ConfigError(f"solver '{name}' needs at least one constraint, but the constraint set is empty.")
    if not tol > 0:
        raise ConfigError(f"solver.tol must be > 0, got {tol}.")
    if not slack > 0:
        raise ConfigError(f"solver.slack must be > 0 (or inf for hard constraints), got {slack}.")
