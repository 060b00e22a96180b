r"""Low-rank kernel learning under the Burg (LogDet) divergence (Kulis et al. 2006, Alg. 1).

Solves

.. math::

    \min_{K \succeq 0} D_{Burg}(K, K_0) = \operatorname{tr}(K K_0^{-1})
        - \log\det(K K_0^{-1}) - n
    \quad\text{s.t.}\quad \operatorname{tr}(K A_i) \;(\le, \ge, =)\; b_i ,

for rank-deficient K0 = G0 G0^T in the range of K0 (Sec. 4), by cyclic Bregman
projections.  The iterate is kept as K = G0 M G0^T with M = B B^T, so that
D_Burg(K, K0) = tr(M) - log det(M) - r and each projection touches only the
r x r matrix B:

* distance constraints (A = z z^T, z = e_i - e_j) and diagonal similarity
  constraints (z = e_i): w = B^T G0^T z, p = ||w||^2, alpha = 1/p - 1/b (Sec. 5.1.1),
  beta = alpha / (1 - alpha p), B <- B L with the symmetric square root
  L = I + sigma w w^T of I + beta w w^T (O(r^2), no Cholesky needed);
* off-diagonal similarity constraints K_ij (A = (e_i e_j^T + e_j e_i^T)/2, rank two):
  the projection parameter solves a quadratic, and B is updated by two such
  square roots along the eigenvectors of B^T G0^T A G0 B.

Inequalities use the dual-variable correction alpha' = min(lambda_i, alpha) (eq. 4).
With ``slack`` = gamma < inf, each constraint gets an ITML-style slack variable
(Davis et al. 2007; Kulis, Sustik & Dhillon, JMLR 2009): the objective becomes
D_Burg(K, K0) + gamma D_Burg(diag(bhat), diag(b)) and the projections move both.
"""

from __future__ import annotations

import math
import time
import warnings
from typing import Callable

import numpy as np

from ..errors import ConfigError, InfeasibleError
from ..kernels import full_column_rank
from ..registry import solvers
from ..types import KINDS, Constraints, SolverResult
from . import _burg_kernels as _k


def burg_divergence_core(B: np.ndarray) -> float:
    """D_Burg(K, K0) for K = G0 B B^T G0^T with G0 of full column rank: tr(M) - log det M - r."""
    r = B.shape[0]
    sign, logdet = np.linalg.slogdet(B)
    return float(np.sum(B * B) - 2.0 * logdet - r) if sign != 0 else math.inf


def dual_change(lam: np.ndarray, lam_old: np.ndarray) -> float:
    """Convergence measure on the dual variables after a sweep (as in the authors' ITML code):
    ||lambda - lambda_old||_1 / (||lambda||_2 + ||lambda_old||_2)."""
    normsum = np.linalg.norm(lam) + np.linalg.norm(lam_old)
    return 0.0 if normsum == 0 else float(np.abs(lam - lam_old).sum() / normsum)


def _describe(constraints: Constraints, q: int) -> str:
    return (f"constraint #{q} ({KINDS[constraints.kind[q]]} between points {constraints.i[q]} and "
            f"{constraints.j[q]}, bound {constraints.bound[q]:.6g})")


def _stalled(viol: list[float], lam_norm: list[float], window: int) -> bool:
    """Infeasibility signature: over the last ``window`` sweeps the largest violation did not
    shrink by 1% while the dual variables kept growing by more than 10%."""
    if len(viol) < 2 * window:
        return False
    return viol[-1] > 1e-9 and viol[-1] > 0.99 * viol[-1 - window] \
        and lam_norm[-1] > 1.1 * lam_norm[-1 - window]


@solvers.register("burg")
def burg(G0: np.ndarray, constraints: Constraints, *, tol: float = 1e-3, max_sweeps: int = 10000,
         slack: float = math.inf, stall_window: int = 50,
         callback: Callable | None = None) -> SolverResult:
    """Cyclic Bregman projections under the Burg (LogDet) divergence, O(r^2) per projection.

    Parameters
    ----------
    G0 : ndarray (n, r)
        Factor of the initial kernel, K0 = G0 G0^T (reduced to full column rank first).
    constraints : Constraints
        Distance / similarity constraints, <=, >= or =.
    tol : float
        Stop when the change of the dual variables over a sweep, measured by
        :func:`dual_change`, falls below ``tol`` (Kulis et al. use 1e-3).
    max_sweeps : int
        Give up after this many sweeps; the result then has ``converged=False``.
    slack : float
        ITML-style slack gamma; ``inf`` (default) enforces the constraints exactly.
        Finite gamma always has a solution (use it for infeasible sets); supported for
        distance constraints and diagonal similarity constraints with positive bounds.
    stall_window : int
        Sweeps over which a non-shrinking violation with growing duals is declared infeasible.
    callback : callable, optional
        ``callback(sweep, dual_change, max_violation)`` after every sweep.

    Returns
    -------
    SolverResult
        ``G = G0 B`` (n x r), ``objective`` = D_Burg(K, K0), ``iterations`` = sweeps;
        history ``dual_change`` and ``max_violation`` (largest relative violation met
        before a projection, per sweep); info ``projections``, ``rank``, ``max_violation``
        (relative violation of the returned K).

    Raises
    ------
    InfeasibleError
        When the constraints cannot be met: a constrained quantity that is 0 in the
        range of K0, a projection that would leave the PD cone, non-finite values, or
        violations that stop shrinking while the duals grow (see ``stall_window``).
    """
    if len(constraints) == 0:
        raise ConfigError("solver 'burg' needs at least one constraint, but the constraint set is empty.")
    if not tol > 0:
        raise ConfigError(f"solver.tol must be > 0, got {tol}.")
    if not slack > 0:
        raise ConfigError(f"solver.slack must be > 0 (or inf for hard constraints), got {slack}.")
    is_dist = np.isin(constraints.kind, [0, 1, 4])
    if slack != float("inf"):
        rank2 = ~is_dist & (constraints.i != constraints.j)
        if rank2.any() or np.any(constraints.bound <= 0):
            raise ConfigError("solver.slack < inf supports distance constraints and diagonal similarity "
                              "constraints with positive bounds only; found "
                              f"{_describe(constraints, int(np.flatnonzero(rank2 | (constraints.bound <= 0))[0]))}.")
    G0 = np.array(full_column_rank(np.asarray(G0, dtype=np.float64)), order="C")  # private, writable copy
    r = G0.shape[1]
    B = np.eye(r)
    lam = np.zeros(len(constraints))
    bhat = constraints.bound.copy()
    work = [np.empty(r) for _ in range(4)]
    history = {"dual_change": [], "max_violation": [], "lambda_norm": []}
    t0 = time.perf_counter()
    converged = False
    sweep = 0
    while sweep < max_sweeps:
        lam_old = lam.copy()
        status, q, maxviol, argmax = _k.burg_sweep(G0, constraints.i, constraints.j, constraints.kind,
                                                   bhat, lam, B, float(slack), *work)
        sweep += 1
        if status == _k.STUCK:
            raise InfeasibleError(f"the constraints are infeasible: {_describe(constraints, q)} constrains a "
                                  "quantity that is zero in the range of the initial kernel (or cannot reach "
                                  "its bound) and cannot be changed by a rank-preserving Burg update. Remove it, "
                                  "or use solver.slack for distance constraints.")
        if status == _k.BROKEN or not np.all(np.isfinite(lam)):
            raise InfeasibleError(f"the Burg projections broke down at sweep {sweep} on {_describe(constraints, q)}: "
                                  "the update would leave the positive definite cone (1 - alpha p <= 0) or "
                                  "produced non-finite values. The constraint set is infeasible or numerically "
                                  "degenerate; try solver.slack (e.g. 1.0) to allow violations.")
        change = dual_change(lam, lam_old)
        history["dual_change"].append(change)
        history["max_violation"].append(maxviol)
        history["lambda_norm"].append(float(np.linalg.norm(lam)))
        if callback is not None:
            callback(sweep, change, maxviol)
        if change < tol:
            converged = True
            break
        if slack == float("inf") and _stalled(history["max_violation"], history["lambda_norm"], stall_window):
            raise InfeasibleError(
                f"the constraints look infeasible: after {sweep} sweeps the largest violation "
                f"({maxviol:.3g} relative, at {_describe(constraints, argmax)}) has stopped shrinking while the "
                "dual variables keep growing. Check for contradictory constraints, or use solver.slack "
                "(e.g. 1.0) to trade violations against divergence.")
    seconds = time.perf_counter() - t0
    G = G0 @ B
    if not converged:
        warnings.warn(f"burg: not converged after {max_sweeps} sweeps (dual change {history['dual_change'][-1]:.3g} "
                      f"> tol {tol:g}); the result is written with converged=false.", stacklevel=2)
    viol = constraints.violations(G) / np.maximum(np.abs(constraints.bound), 1e-12)
    return SolverResult(
        G=G, objective=burg_divergence_core(B), iterations=sweep, converged=converged,
        history={k: np.asarray(v) for k, v in history.items()},
        info={"projections": sweep * len(constraints), "rank": r, "max_violation": float(viol.max()),
              "solver_seconds": seconds, "slack": float(slack)},
        arrays={"G0": G0, "dual": lam, "bhat": bhat})
