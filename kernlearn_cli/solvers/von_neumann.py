r"""Low-rank kernel learning under the von Neumann divergence (Kulis et al. 2006, Alg. 2).

Solves

.. math::

    \min_{K \succeq 0} D_{vN}(K, K_0) = \operatorname{tr}(K \log K - K \log K_0 - K + K_0)
    \quad\text{s.t.}\quad z_i^T K z_i \;(\le, \ge, =)\; b_i

in the range of K0 = V0 Lambda0 V0^T (Sec. 4: the rank of K never exceeds rank K0), by
cyclic Bregman projections with the dual correction beta = min(lambda_i, alpha)
(eq. 4).  The iterate is K = V0 W exp(D) W^T V0^T with W orthogonal: a projection
changes the exponent D + beta w w^T (w = W^T V0^T z), whose eigen-decomposition
U Theta U^T comes from the secular equation, and sets W <- W U, D <- Theta
(Sec. 5.2.1-5.2.3; compiled in ``_von_neumann_kernels``).  The projection parameter
has no closed form: it is found by a safeguarded one-dimensional root finder on
z^T K(alpha) z = b, whose trace evaluations are counted (the paper: rarely more than six).
A trial value needs no eigen-decomposition: it is a contour integral of the resolvent
w^T (z - D - alpha w w^T)^-1 w = g(z) / (1 - alpha g(z)), g(z) = sum_j w_j^2 / (z - d_j),
by the Talbot rule on 24 nodes whose g is set up once per projection (O(r) per node, then
O(1) per node and trial alpha), with an exact secular-root fallback where its certified
error bound is not below 1e-12 relative; the secular equation is solved once per
projection, at the accepted alpha, for the eigen-update (``exact_trace_evaluations``
counts the trial values done from secular roots).

Constraints: squared distances (z = e_i - e_j) and diagonal similarities K_ii (z = e_i)
are rank-one; an off-diagonal similarity K_ij adds a rank-two term to the exponent, handled
as two successive diagonal-plus-rank-one decompositions (still O(r^2) per trace evaluation).
After every sweep W and D are re-derived from W D W^T by a symmetric eigensolver
(O(r^3) once per sweep) so that rounding never lets W drift from orthogonal.
With ``slack`` = gamma < inf each bound gets a slack variable penalised by gamma
times its (generalised KL) divergence from b, the von Neumann analogue of ITML's slack.
"""

from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np

from ..errors import DataError
from ..kernels import full_column_rank
from ..linalg import eigh
from ..registry import solvers
from ..types import Constraints, SolverResult
from . import _von_neumann_kernels as _k
from ..params import Positive, PositiveInt
from ._cyclic import (InRange, Slack, bregman_certificate, describe, hard_else_slack, infeasibility_certificate,
                      relative_violations, require_constraints, run_sweeps, signs)
from .protocol import finish


def von_neumann_divergence_core(W: np.ndarray, D: np.ndarray, lam0: np.ndarray) -> float:
    """D_vN(K, K0) for K = V0 W e^D W^T V0^T, K0 = V0 diag(lam0) V0^T (V0 orthonormal)."""
    M_diag = np.einsum("ij,j,ij->i", W, np.exp(D), W)
    eD = np.exp(D)
    return float(np.sum(eD * D) - np.sum(M_diag * np.log(lam0)) - eD.sum() + lam0.sum())


def von_neumann_dual(rc: InRange, lam: np.ndarray, lam0: np.ndarray, slack: float) -> float:
    """Lagrange dual g(lambda) = tr Lambda0 - tr exp(log Lambda0 - sum s_i lambda_i B_i) - sum s_i lambda_i b_i
    (with slack gamma: + gamma sum b_i (1 - exp(s_i lambda_i / gamma)) instead of the last sum),
    B_i = V0^T A_i V0: a lower bound on the optimal value for every admissible lambda."""
    constraints = rc.constraints
    coef = signs(constraints) * lam
    ev = np.linalg.eigvalsh(np.diag(np.log(lam0)) - rc.gram(coef))
    base = float(lam0.sum() - np.exp(ev).sum())
    if math.isinf(slack):
        return base - float(coef @ constraints.bound)
    return base + float(slack * np.sum(constraints.bound * -np.expm1(coef / slack)))


def slack_penalty(bhat: np.ndarray, b: np.ndarray, slack: float) -> float:
    """gamma sum (bhat log(bhat / b) - bhat + b), the generalised KL divergence of the slack (0 without)."""
    if math.isinf(slack):
        return 0.0
    return float(slack * np.sum(bhat * np.log(bhat / b) - bhat + b))


@solvers.register("von_neumann")
def von_neumann(G0: np.ndarray, constraints: Constraints, *, tol: Positive = 1e-3, feas_tol: Positive = 1e-3,
                max_sweeps: PositiveInt = 10000, slack: Slack = math.inf, certify_every: PositiveInt = 50,
                slack_if_infeasible: Positive | None = None, callback: Callable | None = None) -> SolverResult:
    """Cyclic Bregman projections under the von Neumann divergence (secular-equation updates).

    Parameters
    ----------
    G0 : ndarray (n, r)
        Factor of the initial kernel, K0 = G0 G0^T (its thin SVD gives V0 and Lambda0).
    constraints : Constraints
        Distance and similarity constraints, <=, >= or =.
    tol : float
        Stop when the dual variables change by less than ``tol`` (> 0) over a sweep
        (the measure of :func:`~kernlearn_cli.solvers._cyclic.dual_change`) and every constraint is
        met to ``feas_tol``.
    feas_tol : float
        Largest relative violation (of the slack-adjusted bounds) a converged result may keep (> 0).
    max_sweeps : int
        Give up after this many sweeps (>= 1; ``converged=False``, with a ConvergenceWarning).
    slack : float
        gamma > 0 of the slack variables; ``inf`` (default) enforces the constraints exactly.
    slack_if_infeasible : float, optional
        Hard constraints, and slack gamma = this value (finite, > 0) only for a set certified
        infeasible (:func:`~kernlearn_cli.solvers._cyclic.hard_else_slack`).
    certify_every : int
        With hard constraints, sweeps (>= 1) between attempts to certify infeasibility from the duals.
    callback : callable, optional
        ``callback(sweep, dual_change=..., max_violation=...)`` after every sweep.

    Returns
    -------
    SolverResult
        ``G = V0 W exp(D/2)`` (n x r), ``objective`` = D_vN(K, K0), ``iterations`` = sweeps;
        info ``projections``, ``trace_evaluations``, ``evaluations_per_projection`` (mean over
        the projections that ran the root finder) and ``max_evaluations``; certificate as for
        ``burg`` (dual: :func:`von_neumann_dual`).

    Raises
    ------
    InfeasibleError
        Only with a verified certificate of infeasibility (see ``burg``).
    SolverError
        A projection broke down numerically and no certificate could be verified.
    """
    if slack_if_infeasible is not None:          # hard where feasible, slack where certified infeasible
        return hard_else_slack(
            lambda gamma: von_neumann(G0, constraints, tol=tol, feas_tol=feas_tol, max_sweeps=max_sweeps, slack=gamma,
                               certify_every=certify_every, callback=callback),
            slack, slack_if_infeasible, "von_neumann")
    require_constraints("von_neumann", constraints)
    if slack != float("inf") and np.any(constraints.bound <= 0):
        raise DataError("solver.slack < inf needs positive bounds; found "
                          f"{describe(constraints, int(np.flatnonzero(constraints.bound <= 0)[0]))}.")
    G0 = full_column_rank(np.asarray(G0, dtype=np.float64))
    U0, s0, _ = np.linalg.svd(G0, full_matrices=False)
    V0 = np.ascontiguousarray(U0)
    lam0 = s0 ** 2
    r = V0.shape[1]
    lam = np.zeros(len(constraints))
    bhat = constraints.bound.copy()
    counts = {"evals": 0, "exact": 0, "solves": 0, "max_evals": 0}
    state = {"W": np.eye(r), "D": np.log(lam0)}
    rc = InRange(V0, constraints)

    def sweep():
        status, q, maxviol, argmax, xv, ev, sv, mx = _k.von_neumann_sweep(
            V0, constraints.i, constraints.j, constraints.kind, bhat, lam, state["W"], state["D"], float(slack))
        counts["evals"] += ev
        counts["exact"] += xv
        counts["solves"] += sv
        counts["max_evals"] = max(counts["max_evals"], mx)
        return status, q, maxviol, argmax

    def reorthogonalize():              # keep W orthogonal: re-derive W, D from W D W^T (once per sweep)
        W, D = state["W"], state["D"]
        D, W = eigh((W * D) @ W.T)
        state["W"], state["D"] = np.ascontiguousarray(W), D

    def values() -> np.ndarray:         # tr(K A_i) = p_i^T W e^D W^T q_i, O(c r^2)
        return rc.values(state["W"] * np.exp(state["D"] / 2))

    last = {}

    def violation() -> float:         # the stopping test's (kept: if it stops the run, nothing moves after)
        last["x"] = values()
        return float(relative_violations(last["x"], constraints, bhat).max())

    t0 = time.perf_counter()
    stopped_by, sweeps, history, check_seconds = run_sweeps(
        sweep, lam, constraints, name="von_neumann", tol=tol, feas_tol=feas_tol, max_sweeps=max_sweeps,
        hard=math.isinf(slack), certify_every=certify_every,
        violation=violation,
        farkas=lambda y0: infeasibility_certificate(rc, y0), callback=callback,
        after_sweep=reorthogonalize)
    seconds = time.perf_counter() - t0
    t1 = time.perf_counter()
    W, D = state["W"], state["D"]
    x = last["x"] if stopped_by == "tolerance" else values()
    objective = von_neumann_divergence_core(W, D, lam0)
    cert = bregman_certificate(x, constraints, lam, bhat, slack=slack, tol=tol, feas_tol=feas_tol,
                               dual_changes=history["dual_change"], stopped_by=stopped_by,
                               primal=objective + slack_penalty(bhat, constraints.bound, slack),
                               dual=von_neumann_dual(rc, lam, lam0, slack), sweeps=sweeps)
    check_seconds += time.perf_counter() - t1
    evals, solves, max_evals = counts["evals"], counts["solves"], counts["max_evals"]
    G = (V0 @ W) * np.exp(D / 2)
    viol = relative_violations(x, constraints, constraints.bound)
    return finish(SolverResult(
        G=G, objective=objective, iterations=sweeps, converged=False, history=history,
        info={"projections": sweeps * len(constraints), "rank": r, "max_violation": float(viol.max()),
              "trace_evaluations": int(evals), "exact_trace_evaluations": int(counts["exact"]),
              "evaluations_per_projection": evals / max(solves, 1),
              "max_evaluations": int(max_evals), "solver_seconds": seconds, "certificate_seconds": check_seconds,
              "slack": float(slack)},
        arrays={"G0": G0, "dual": lam, "bhat": bhat}), cert, "von_neumann")
