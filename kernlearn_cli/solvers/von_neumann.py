r"""Low-rank kernel learning under the von Neumann divergence (Kulis et al. 2006, Alg. 2).

Solves

.. math::

    \min_{K \succeq 0} D_{vN}(K, K_0) = \operatorname{tr}(K \log K - K \log K_0 - K + K_0)
    \quad\text{s.t.}\quad z_i^T K z_i \;(\le, \ge, =)\; b_i

in the range of K0 = V0 Lambda0 V0^T (Sec. 4: the rank of K never exceeds rank K0), by
cyclic Bregman projections with the dual correction beta = min(lambda_i, alpha)
(eq. 4).  The iterate is K = V0 exp(L) V0^T: a projection adds beta v v^T to the exponent
(v = V0^T z), beta the root of z^T K(alpha) z = b found by a safeguarded one-dimensional root
finder whose trace evaluations are counted (the paper: rarely more than six).  Two sweeps
(compiled in ``_von_neumann_kernels``, from the pieces in ``_contour``, ``_secular`` and
``_lanczos``) compute those trace values:

* the Krylov sweep: a Lanczos run on L from v, whose Gauss rule gives
  phi(alpha) = v^T exp(L + alpha v v^T) v for every trial alpha, to 1e-13 relative by the rule's
  error bound (with T_m's top eigenvalue standing in for L's), in O(m r^2) for m Lanczos
  steps (m ~ 7-10 on the benchmark's spectra), then L <- L + beta v v^T, O(r^2);
* the eigen sweep, the paper's (Sec. 5.2.1-5.2.3): the exponent kept as W D W^T, the
  eigenvalues of D + alpha w w^T from the secular equation, then W <- W U, an O(r^3) product
  the paper would reduce with a fast multipole method.

The Krylov sweep runs first; when its Lanczos runs average more than KRYLOV_EXHAUSTED r steps
(a wide spectrum: the Krylov space is nearly exhausted, and the eigen-update is cheaper), eigen
sweeps follow, with a Krylov sweep tried again after PROBE_FIRST of them (the wait doubling to
PROBE_MAX).  Sets with off-diagonal similarity constraints (a rank-two term in the exponent:
two diagonal-plus-rank-one decompositions per trace value) use the eigen sweep throughout.
Either way a trial value is the Talbot contour integral of the resolvent, O(1) per trial after
an O(r) or O(m) setup, with an exact secular-root fallback where its certified error bound is
not below 1e-12 relative (``exact_trace_evaluations``).  After every sweep W, D are
re-derived by a symmetric eigensolver from L (O(r^3) once per sweep), so rounding never lets W
drift from orthogonal; they give the constraint values and the result.
With ``slack`` = gamma < inf each bound gets a slack variable penalised by gamma
times its (generalised KL) divergence from b, the von Neumann analogue of ITML's slack.

References
----------
.. [1] B. Kulis, M. Sustik and I. Dhillon. Learning low-rank kernel matrices. Proceedings of the 23rd
   International Conference on Machine Learning (ICML 2006), pages 505–512.
   https://doi.org/10.1145/1143844.1143908
.. [2] B. Kulis, M. Sustik and I. Dhillon. Low-rank kernel learning with Bregman matrix divergences.
   Journal of Machine Learning Research 10 (2009), pages 341–376.
.. [3] K. Tsuda, G. Rätsch and M. K. Warmuth. Matrix exponentiated gradient updates for on-line
   learning and Bregman projection. Advances in Neural Information Processing Systems 17 (NIPS
   2004), pages 1425–1432; Journal of Machine Learning Research 6 (2005), pages 995–1018.
"""

from __future__ import annotations

import math
import time
from typing import Callable, Literal

import numpy as np

from ..errors import DataError
from ..lowrank import full_column_rank
from ..linalg import eigh
from ..registry import EstimatorSpec, solvers
from ..resources import estimated
from ..kinds import DISTANCE
from ..types import Constraints, SolverResult
from . import _von_neumann_kernels as _k
from ..params import Positive, PositiveInt
from ._cyclic import (CYCLIC_CHECKS, sweep_cost, InRange, Slack, SubsetSweeps, bregman_certificate, check_schedule, describe, hard_else_slack,
                      infeasibility_certificate, refuse_zero_distances, reduced_slacks, relative_violations, require_constraints,
                      run_sweeps, signs)
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


# A Krylov sweep whose Lanczos runs average more than KRYLOV_EXHAUSTED r steps (wide spectra: the
# space is nearly exhausted) costs more than the paper's eigen-updates; the next sweeps then update
# the eigen-decomposition instead, and a Krylov sweep is tried again after PROBE_FIRST of them,
# the wait doubling (to PROBE_MAX) while the spectrum stays wide.  Decided by step counts, so the
# same run takes the same path on any machine.
KRYLOV_EXHAUSTED = 0.75
PROBE_FIRST, PROBE_MAX = 8, 64


def next_mode(steps: int, r: int, c: int, probe: int) -> tuple[str, int, int]:
    """(mode of the next sweep, eigen sweeps before the next Krylov try, the wait after that) after
    a Krylov sweep of c projections that took ``steps`` Lanczos steps in all."""
    if steps > KRYLOV_EXHAUSTED * r * c:
        return "eigen", probe, min(2 * probe, PROBE_MAX)
    return "krylov", 0, PROBE_FIRST


def _is_rank_one(constraints: Constraints) -> np.ndarray:
    """Distances and diagonal similarities (z = e_i - e_j or e_i): a rank-one change of the exponent."""
    return np.isin(constraints.kind, DISTANCE) | (constraints.i == constraints.j)


#: O(r²) passes per von Neumann projection: the Lanczos steps of the trace evaluations (7-10 measured).
#: kulis2006 fig2_wine_von_neumann, 1000 constraints at r = 178: 0.072 s a sweep (median cell time over
#: sweeps, 20 archived cells), 0.106 s estimated; Burg on the same cells 0.016 s measured, 0.011 s estimated.
LANCZOS_PASSES = 10


@solvers.register("von_neumann", checks=CYCLIC_CHECKS, inductive="initial factor", exact=("slack", "slack_if_infeasible"), warmup=True,
                  budget="max_sweeps", estimator=EstimatorSpec(
                      "VonNeumannKernel", "Low-rank von Neumann kernel learning by cyclic Bregman projections "
                      "(Kulis et al. 2006).", constraint_defaults={"count": 20},
                      check_settings={"slack": 1.0}), defaults_before={"order": "fixed"})
@estimated(sweep_cost("von_neumann", LANCZOS_PASSES), per="sweep")
def von_neumann(G0: np.ndarray, constraints: Constraints, *, tol: Positive = 1e-3, feas_tol: Positive = 1e-3,
                max_sweeps: PositiveInt = 10000, slack: Slack = math.inf, certify_every: PositiveInt = 50,
                slack_if_infeasible: Positive | None = None, stop: Literal["certified", "dual_change", "gap"] = "certified",
                sweeps: Literal["cyclic", "active"] = "cyclic",
                order: Literal["fixed", "shuffled"] = "shuffled", rng: np.random.Generator | None = None,
                callback: Callable | None = None) -> SolverResult:
    """Cyclic Bregman projections under the von Neumann divergence (secular-equation updates).

    Parameters
    ----------
    G0 : ndarray (n, r)
        Factor of the initial kernel, K0 = G0 G0^T (its thin SVD gives V0 and Lambda0).
    constraints : Constraints
        Distance and similarity constraints, <=, >= or =.
    tol : float
        Stop when the dual variables change by less than ``tol`` (> 0) over a sweep
        (the measure of :func:`~kernlearn_cli.solvers._cyclic.dual_change`) and (``stop:
        certified``) every constraint is met to ``feas_tol``.
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
    stop : {"certified", "dual_change", "gap"}
        ``certified`` (default): dual change <= ``tol`` and every constraint met to ``feas_tol``.
        ``dual_change``: the dual change alone (the rule of ITML's code, as ``burg``'s), for finite
        ``slack`` only; the largest violation is then a figure of the certificate, not a check.
        ``gap`` (finite ``slack`` only): the certified relative duality gap <= ``tol``, as ``burg``'s.
    sweeps : {"cyclic", "active"}
        ``cyclic`` (default): every sweep visits every constraint (Alg. 2); unlike ``burg``'s, not
        ``auto``: on ITML's problem with slack 1 the active schedule took 1.3-1.6x more CPU at every
        c measured, 250-2000 (docs/scale.md). ``active`` (with
        ``stop: dual_change``): between full sweeps, sweeps visit only the constraints with a
        positive dual; only a full sweep stops the run
        (:func:`~kernlearn_cli.solvers._cyclic.run_sweeps`). Other iterates than ``cyclic``, the
        same stopping rule.
    order : {"fixed", "shuffled"}
        As ``burg``'s: ``shuffled`` (default), a new permutation from ``rng`` every sweep; ``fixed``, the
        given order (Alg. 2). On ITML's problem at slack 1 both take 8-9 sweeps; at slack 100 (400 points)
        the shuffled order took 22-36 where the fixed one took 151-168 (docs/scale.md).
    rng : numpy.random.Generator, optional
        The cell's solver stream (the runner passes it); None: ``default_rng(0)``.
    callback : callable, optional
        ``callback(sweep, dual_change=..., max_violation=...)`` after every sweep, each a
        :class:`~kernlearn_cli.solvers.protocol.Checked` with its tolerance (``tol``, ``feas_tol``).

    Returns
    -------
    SolverResult
        ``G = V0 W exp(D/2)`` (n x r), ``objective`` = D_vN(K, K0), ``iterations`` = sweeps;
        info ``projections``, ``trace_evaluations``, ``evaluations_per_projection`` (mean over
        the projections that ran the root finder), ``max_evaluations``, ``krylov_sweeps`` and
        ``lanczos_steps_per_projection`` (over those sweeps), with ``sweeps: active``
        ``full_sweeps`` (history ``full_sweep`` marks them); certificate as for
        ``burg`` (dual: :func:`von_neumann_dual`).

    Raises
    ------
    InfeasibleError
        Only with a verified certificate of infeasibility (see ``burg``).
    SolverError
        A projection broke down numerically and no certificate could be verified.
    """
    check_schedule(stop, sweeps, slack, slack_if_infeasible)
    if slack_if_infeasible is not None:          # hard where feasible, slack where certified infeasible
        return hard_else_slack(
            lambda gamma: von_neumann(G0, constraints, tol=tol, feas_tol=feas_tol, max_sweeps=max_sweeps, slack=gamma,
                               certify_every=certify_every, sweeps=sweeps, order=order, rng=rng, callback=callback),
            constraints, slack, slack_if_infeasible, "von_neumann")
    require_constraints("von_neumann", constraints)
    refuse_zero_distances("von_neumann", G0, constraints)
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
    counts = {"evals": 0, "exact": 0, "solves": 0, "max_evals": 0, "steps": 0, "krylov_sweeps": 0,
              "krylov_projections": 0}
    rank_one = bool(np.all(_is_rank_one(constraints)))      # the Krylov sweep takes rank-one constraints
    state = {"L": np.diag(np.log(lam0)), "W": np.eye(r), "D": np.log(lam0), "last": "",
             "mode": "krylov" if rank_one else "eigen", "wait": 0, "probe": PROBE_FIRST}
    rc = InRange(V0, constraints)

    shuffle = (rng if rng is not None else np.random.default_rng(0)) if order == "shuffled" else None
    subsets = SubsetSweeps(constraints, bhat, lam, shuffle)

    def sweep(subset=None):
        state["last"] = mode = state["mode"]
        before = subsets.projections
        if mode == "krylov":
            out = subsets.run(
                lambda i, j, kind, bh, lm: _k.krylov_sweep(V0, i, j, kind, bh, lm, state["L"], float(slack)), subset)
            visited = subsets.projections - before
            counts["steps"] += out.lanczos_steps
            counts["krylov_sweeps"] += 1
            counts["krylov_projections"] += visited
            state["mode"], state["wait"], state["probe"] = next_mode(out.lanczos_steps, r, visited, state["probe"])
        else:
            out = subsets.run(
                lambda i, j, kind, bh, lm: _k.eigen_sweep(V0, i, j, kind, bh, lm, state["W"], state["D"],
                                                          float(slack)), subset)
            state["wait"] -= 1
            if rank_one and state["wait"] <= 0:
                state["mode"] = "krylov"
        counts["evals"] += out.evaluations
        counts["exact"] += out.exact_evaluations
        counts["solves"] += out.solves
        counts["max_evals"] = max(counts["max_evals"], out.max_evaluations)
        return out

    def decompose():                    # W diag(D) W^T = L for the values, the result and the next sweep
        if state["last"] == "krylov":
            D, W = eigh(state["L"])
        else:                           # (re-derived, so that rounding never lets W drift from orthogonal)
            M = (state["W"] * state["D"]) @ state["W"].T
            state["L"] = M = (M + M.T) / 2
            D, W = eigh(M)
        state["W"], state["D"] = np.ascontiguousarray(W), D

    def values() -> np.ndarray:         # tr(K A_i) = p_i^T W e^D W^T q_i, O(c r^2)
        return rc.values(state["W"] * np.exp(state["D"] / 2))

    last = {}

    def violation() -> float:         # the stopping test's (kept: if it stops the run, nothing moves after)
        last["x"] = values()
        return float(relative_violations(last["x"], constraints, bhat).max())

    def relative_gap() -> float:      # stop 'gap': the certificate's figure, at the current iterate
        primal = (von_neumann_divergence_core(state["W"], state["D"], lam0)
                  + slack_penalty(reduced_slacks(values(), constraints), constraints.bound, slack))
        return (primal - von_neumann_dual(rc, lam, lam0, slack)) / max(1.0, abs(primal))

    t0 = time.perf_counter()
    stopped_by, count, history, check_seconds = run_sweeps(
        sweep, lam, constraints, name="von_neumann", tol=tol, feas_tol=feas_tol, max_sweeps=max_sweeps,
        hard=math.isinf(slack), certify_every=certify_every, feasible=stop == "certified",
        violation=violation, farkas=lambda y0: infeasibility_certificate(rc, y0), callback=callback,
        after_sweep=decompose, active_set=sweeps == "active", gap=relative_gap if stop == "gap" else None)
    seconds = time.perf_counter() - t0
    t1 = time.perf_counter()
    W, D = state["W"], state["D"]
    x = last["x"] if stopped_by == "tolerance" and stop == "certified" else values()  # stale after dual_change
    objective = von_neumann_divergence_core(W, D, lam0)
    cert = bregman_certificate(x, constraints, lam, bhat, slack=slack, tol=tol, feas_tol=feas_tol,
                               feasible=stop == "certified", gap_rule=stop == "gap",
                               dual_changes=history["dual_change"], stopped_by=stopped_by,
                               primal=objective + slack_penalty(reduced_slacks(x, constraints), constraints.bound,
                                                                slack),
                               dual=von_neumann_dual(rc, lam, lam0, slack), sweeps=count)
    check_seconds += time.perf_counter() - t1
    evals, solves, max_evals = counts["evals"], counts["solves"], counts["max_evals"]
    G = (V0 @ W) * np.exp(D / 2)
    viol = relative_violations(x, constraints, constraints.bound)
    return finish(SolverResult(
        G=G, objective=objective, iterations=count, converged=False, history=history,
        info={"projections": subsets.projections, "rank": r, "max_violation": float(viol.max()),
              "trace_evaluations": int(evals), "exact_trace_evaluations": int(counts["exact"]),
              "evaluations_per_projection": evals / max(solves, 1),
              "krylov_sweeps": counts["krylov_sweeps"],
              "lanczos_steps_per_projection": counts["steps"] / max(counts["krylov_projections"], 1),
              "max_evaluations": int(max_evals), "solver_seconds": seconds, "certificate_seconds": check_seconds,
              "slack": float(slack), **({"full_sweeps": int(np.sum(history["full_sweep"]))} if sweeps == "active" else {})},
        arrays={"G0": G0, "dual": lam, "bhat": bhat}), cert, "von_neumann")
