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

References
----------
.. [1] B. Kulis, M. Sustik and I. Dhillon. Learning low-rank kernel matrices. Proceedings of the 23rd
   International Conference on Machine Learning (ICML 2006), pages 505–512.
   https://doi.org/10.1145/1143844.1143908
.. [2] B. Kulis, M. Sustik and I. Dhillon. Low-rank kernel learning with Bregman matrix divergences.
   Journal of Machine Learning Research 10 (2009), pages 341–376.
.. [3] J. V. Davis, B. Kulis, P. Jain, S. Sra and I. S. Dhillon. Information-theoretic metric learning.
   Proceedings of the 24th International Conference on Machine Learning (ICML 2007), pages 209–216.
"""

from __future__ import annotations

import math
import time
from typing import Callable, Literal

import numpy as np

from ..errors import DataError
from ..kinds import DISTANCE
from ..lowrank import full_column_rank
from ..registry import EstimatorSpec, solvers
from ..resources import estimated
from ..types import Constraints, SolverResult
from . import _burg_kernels as _k
from ..params import Positive, PositiveInt
from ._cyclic import (CYCLIC_CHECKS, sweep_cost, InRange, Slack, SubsetSweeps, bregman_certificate, check_schedule, describe, hard_else_slack,
                      infeasibility_certificate, refuse_zero_distances, reduced_slacks, relative_violations, require_constraints, sweep_schedule,
                      run_sweeps, signs)
from .protocol import finish


def burg_divergence_core(B: np.ndarray) -> float:
    """D_Burg(K, K0) for K = G0 B B^T G0^T with G0 of full column rank: tr(M) - log det M - r."""
    r = B.shape[0]
    sign, logdet = np.linalg.slogdet(B)
    return float(np.sum(B * B) - 2.0 * logdet - r) if sign != 0 else math.inf


def burg_dual(rc: InRange, lam: np.ndarray, slack: float) -> float:
    """Lagrange dual g(lambda) = log det(I + sum s_i lambda_i B_i) - sum s_i lambda_i b_i
    (with slack gamma: + gamma sum log(1 - s_i lambda_i b_i / gamma) instead of the last sum);
    a lower bound on the optimal value for every admissible lambda (-inf outside its domain)."""
    constraints = rc.constraints
    coef = signs(constraints) * lam
    ev = np.linalg.eigvalsh(np.eye(rc.r) + rc.gram(coef))
    if not ev[0] > 0:                     # outside the domain (a determinant's sign misses an even count)
        return -math.inf
    logdet = float(np.sum(np.log(ev)))
    if math.isinf(slack):
        return float(logdet - coef @ constraints.bound)
    arg = 1.0 - coef * constraints.bound / slack
    return float(logdet + slack * np.sum(np.log(arg))) if np.all(arg > 0) else -math.inf


def slack_penalty(bhat: np.ndarray, b: np.ndarray, slack: float) -> float:
    """gamma D_Burg(diag(bhat), diag(b)) = gamma sum (bhat/b - log(bhat/b) - 1) (0 without slack)."""
    if math.isinf(slack):
        return 0.0
    ratio = bhat / b
    return float(slack * np.sum(ratio - np.log(ratio) - 1.0))


@solvers.register("burg", checks=CYCLIC_CHECKS, inductive="initial factor", exact=("slack", "slack_if_infeasible"),
                  warmup=True,
                  budget="max_sweeps", estimator=EstimatorSpec(
                      "BurgKernel", "Low-rank LogDet (Burg) kernel learning by cyclic Bregman projections "
                      "(Kulis et al. 2006).", constraint_defaults={"count": 20},
                      check_settings={"slack": 1.0}), defaults_before={"sweeps": "cyclic", "order": "fixed"})
@estimated(sweep_cost("burg", 1), per="sweep")
def burg(G0: np.ndarray, constraints: Constraints, *, tol: Positive = 1e-3, feas_tol: Positive = 1e-3,
         max_sweeps: PositiveInt = 10000, slack: Slack = math.inf, certify_every: PositiveInt = 50,
         slack_if_infeasible: Positive | None = None, stop: Literal["certified", "dual_change", "gap"] = "certified",
         sweeps: Literal["auto", "cyclic", "active"] = "auto",
         order: Literal["fixed", "shuffled"] = "shuffled", rng: np.random.Generator | None = None,
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
        :func:`~kernlearn_cli.solvers._cyclic.dual_change`, is below ``tol`` (> 0; Kulis et al. use
        1e-3) *and* every constraint is met to ``feas_tol``.
    feas_tol : float
        Largest relative violation |tr(K A_i) - b_i| / |b_i| (of the slack-adjusted bounds) that a
        converged result may keep (> 0).
    max_sweeps : int
        Give up after this many sweeps (>= 1); the result then has ``converged=False``.
    slack : float
        ITML-style slack gamma > 0; ``inf`` (default) enforces the constraints exactly.
        Finite gamma always has a solution (use it for infeasible sets); supported for
        distance constraints and diagonal similarity constraints with positive bounds.
    stop : {"certified", "dual_change", "gap"}
        ``certified`` (default): the rule above, dual change <= ``tol`` and every constraint met to
        ``feas_tol``. ``dual_change``: the dual change alone, the rule of the authors' ITML code
        (Davis et al. 2007: ||lambda - lambda_old||_1 / (||lambda||_2 + ||lambda_old||_2) < tol after a
        sweep), for finite ``slack`` only; the certificate then checks the dual change (the largest
        violation is kept as a figure), so ``converged`` says that the dual change fell to ``tol``
        within ``max_sweeps``. ``gap`` (finite ``slack`` only): the relative duality gap
        (F(K) - g(lambda)) / max(1, |F(K)|) <= ``tol``, with F the primal with the slacks minimised out
        (:func:`~kernlearn_cli.solvers._cyclic.reduced_slacks`), computed after a sweep whose dual
        change is <= ``tol`` and every ``certify_every`` sweeps, O(c r²) each: ``converged`` then says
        that the learned kernel's objective is within that relative gap of the optimum.
    slack_if_infeasible : float, optional
        Enforce the constraints exactly, and only where that run is certified infeasible solve
        again with slack gamma = this value, a finite gamma > 0
        (:func:`~kernlearn_cli.solvers._cyclic.hard_else_slack`).
    certify_every : int
        With hard constraints, sweeps (>= 1) between attempts to read a certificate of infeasibility
        off the diverging dual variables (module :mod:`~kernlearn_cli.solvers._cyclic`).
    sweeps : {"auto", "cyclic", "active"}
        ``auto`` (default): ``active`` under ``stop: dual_change`` from
        :data:`~kernlearn_cli.solvers._cyclic.ACTIVE_MIN_C` constraints, else ``cyclic``
        (:func:`~kernlearn_cli.solvers._cyclic.sweep_schedule`; ``info`` keeps ``sweeps`` and ``sweeps_auto``, why).
        ``cyclic``: every sweep visits every constraint (Kulis et al. 2006, Alg. 1).
        ``active`` (with ``stop: dual_change``): between full sweeps, sweeps visit only the
        constraints with a positive dual; only a full sweep stops the run
        (:func:`~kernlearn_cli.solvers._cyclic.run_sweeps`). Other iterates than ``cyclic``, the same
        stopping rule.
    order : {"fixed", "shuffled"}
        ``shuffled`` (default): every sweep visits the constraints in a new permutation drawn from
        ``rng`` (:class:`~kernlearn_cli.solvers._cyclic.SubsetSweeps`); 13-41 sweeps where the fixed order
        took 429-20,000 on ITML\'s problem at n = c = 10⁴ (docs/scale.md). ``fixed``: in their given order
        every sweep (Kulis et al. 2006, Alg. 1); other iterates, the same stopping rule.
    rng : numpy.random.Generator, optional
        The cell's solver stream (the runner passes it); None: ``default_rng(0)``.
    callback : callable, optional
        ``callback(sweep, dual_change=..., max_violation=...)`` after every sweep, each a
        :class:`~kernlearn_cli.solvers.protocol.Checked` with its tolerance (``tol``, ``feas_tol``).

    Returns
    -------
    SolverResult
        ``G = G0 B`` (n x r), ``objective`` = D_Burg(K, K0), ``iterations`` = sweeps;
        history ``dual_change`` and ``max_violation`` (largest relative violation met
        before a projection, per sweep); info ``projections``, ``rank``, ``max_violation``
        (relative violation of the returned K); certificate: the largest relative violation and
        the dual change (checks), complementarity, the duality gap (primal with the slack penalty
        minus :func:`burg_dual`) and the slack used.

    Raises
    ------
    InfeasibleError
        Only with a verified certificate of infeasibility: a violated constraint no rank-preserving
        update can move, or a Farkas combination read off the diverging duals.
    SolverError
        A projection broke down numerically and no certificate could be verified.
    """
    check_schedule(stop, sweeps, slack, slack_if_infeasible)
    if slack_if_infeasible is not None:          # hard where feasible, slack where certified infeasible
        return hard_else_slack(
            lambda gamma: burg(G0, constraints, tol=tol, feas_tol=feas_tol, max_sweeps=max_sweeps, slack=gamma,
                               certify_every=certify_every, sweeps=sweeps, order=order, rng=rng, callback=callback),
            constraints, slack, slack_if_infeasible, "burg")
    require_constraints("burg", constraints)
    sweeps, why = sweep_schedule("burg", sweeps, stop, len(constraints))
    refuse_zero_distances("burg", G0, constraints)
    is_dist = np.isin(constraints.kind, DISTANCE)
    if slack != float("inf"):
        rank2 = ~is_dist & (constraints.i != constraints.j)
        if rank2.any() or np.any(constraints.bound <= 0):
            raise DataError("solver.slack < inf supports distance constraints and diagonal similarity "
                              "constraints with positive bounds only; found "
                              f"{describe(constraints, int(np.flatnonzero(rank2 | (constraints.bound <= 0))[0]))}.")
    G0 = np.array(full_column_rank(np.asarray(G0, dtype=np.float64)), order="C")  # private, writable copy
    r = G0.shape[1]
    B = np.eye(r)
    lam = np.zeros(len(constraints))
    bhat = constraints.bound.copy()
    work = [np.empty(r) for _ in range(4)]
    rc = InRange(G0, constraints)
    last = {}

    def violation() -> float:         # the stopping test's (kept: if it stops the run, nothing moves after)
        last["x"] = rc.values(B)
        return float(relative_violations(last["x"], constraints, bhat).max())

    def relative_gap() -> float:      # stop 'gap': the certificate's figure, at the current iterate
        primal = burg_divergence_core(B) + slack_penalty(reduced_slacks(rc.values(B), constraints),
                                                         constraints.bound, slack)
        return (primal - burg_dual(rc, lam, slack)) / max(1.0, abs(primal))

    shuffle = (rng if rng is not None else np.random.default_rng(0)) if order == "shuffled" else None
    subsets = SubsetSweeps(constraints, bhat, lam, shuffle)

    def one_sweep(subset=None):
        return subsets.run(lambda i, j, kind, bh, lm: _k.burg_sweep(G0, i, j, kind, bh, lm, B, float(slack), *work),
                           subset)

    t0 = time.perf_counter()
    stopped_by, sweep, history, check_seconds = run_sweeps(
        one_sweep, lam, constraints, name="burg", tol=tol, feas_tol=feas_tol, max_sweeps=max_sweeps,
        hard=math.isinf(slack), certify_every=certify_every, feasible=stop == "certified",
        violation=violation, farkas=lambda y0: infeasibility_certificate(rc, y0), callback=callback,
        active_set=sweeps == "active", gap=relative_gap if stop == "gap" else None)
    seconds = time.perf_counter() - t0
    t1 = time.perf_counter()
    x = last["x"] if stopped_by == "tolerance" and stop == "certified" else rc.values(B)  # stale after dual_change
    objective = burg_divergence_core(B)
    cert = bregman_certificate(x, constraints, lam, bhat, slack=slack, tol=tol, feas_tol=feas_tol,
                               feasible=stop == "certified", gap_rule=stop == "gap",
                               dual_changes=history["dual_change"], stopped_by=stopped_by,
                               primal=objective + slack_penalty(reduced_slacks(x, constraints), constraints.bound,
                                                                slack),
                               dual=burg_dual(rc, lam, slack), sweeps=sweep)
    check_seconds += time.perf_counter() - t1
    G = G0 @ B
    viol = relative_violations(x, constraints, constraints.bound)
    return finish(SolverResult(
        G=G, objective=objective, iterations=sweep, converged=False, history=history,
        info={"projections": subsets.projections, "rank": r, "max_violation": float(viol.max()),
              "solver_seconds": seconds, "certificate_seconds": check_seconds, "slack": float(slack),
              **({"full_sweeps": int(np.sum(history["full_sweep"]))} if sweeps == "active" else {}),
              **({"sweeps": sweeps, "sweeps_auto": why} if why else {})},
        arrays={"G0": G0, "dual": lam, "bhat": bhat}), cert, "burg")
