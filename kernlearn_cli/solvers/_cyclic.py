r"""Shared pieces of the cyclic Bregman projection solvers (``burg``, ``von_neumann``).

Compiled helpers (the signed form of a constraint, the dual-corrected step of Bregman's method,
eq. (4) of Kulis et al. 2006) and the Python-side bookkeeping: the sweep loop with its stopping
rule, the certificate of a result, and the certificate of infeasibility.

**Signs and duals.** A constraint tr(K A_i) (<=, >=, =) b_i has sign s_i = +1 (<=), -1 (>=),
+1 (=). Both solvers keep dual variables lambda_i (>= 0 for inequalities, free for equalities)
such that, in the range of K0 (K = F M F^T, F = G0 for Burg, F = V0 for von Neumann, and
B_i = F^T A_i F),

* Burg:        M^{-1} = I + sum_i s_i lambda_i B_i,
* von Neumann: log M = log Lambda0 - sum_i s_i lambda_i B_i.

**Infeasibility (Farkas).** If y >= 0 (free on equalities) has S(y) = sum_i y_i s_i B_i PSD and
sum_i y_i s_i b_i < 0, then no M >= 0 meets the constraints: tr(M S(y)) >= 0 would have to be
<= sum_i y_i s_i b_i < 0. On an infeasible set the duals diverge along such a y; they are read
off, repaired (y <- y + delta u on the "<=" rank-one constraints, u_i = 1/b_i, the least delta
that lifts the smallest eigenvalue of S(y) above a rounding margin, from one generalised
eigenproblem), and the result is verified by an eigenvalue check. Only a verified certificate
raises :class:`~kernlearn_cli.errors.InfeasibleError`.
"""

from __future__ import annotations

import math
import time
from typing import Annotated, NamedTuple

import numpy as np
import scipy.linalg as sla
from numba import njit

from ..errors import ConfigError, DataError, InfeasibleError, SolverError
from ..linalg import eigh
from ..params import Interval
from ..registry import Checks
from ..resources import DOUBLE, PROJECTION_RATE
from ..kinds import DIST_EQ, DIST_LE, DISTANCE, EQUAL, KINDS, LOWER, UPPER
from ..types import Constraints
from .protocol import Certificate, Checked

OK, BROKEN, STUCK = 0, 1, 2

#: What the generic checks need of the two cyclic projection solvers, ``burg`` and ``von_neumann``
#: (:mod:`kernlearn_cli.testing`): an instance, another value per setting.
CYCLIC_CHECKS = Checks(
    instance="kernlearn_cli.testing.instances:pairs", settings_instance="kernlearn_cli.testing.instances:distance_pairs",
    alternatives={"tol": 1e-9, "feas_tol": 1e-9, "max_sweeps": 2, "slack": 0.1, "certify_every": 1,
                  "slack_if_infeasible": 1.0, "stop": "dual_change", "sweeps": "active", "order": "fixed"},
    unused={"slack_if_infeasible": "only acts on a constraint set certified infeasible "
                                     "(tests/test_infeasibility.py)",
            "certify_every": "sets how often the certificate is computed, not the iterates; the instance "
                             "converges before its check falls due either way"},
    together={"stop": {"slack": 1.0}, "sweeps": {"slack": 1.0, "stop": "dual_change"}})



def sweep_cost(method: str, passes: int):
    """The cost hook (:func:`~kernlearn_cli.resources.estimated`) of a cyclic projection solver: O(n r)
    memory (G0, its full-column-rank copy, the learned factor G0 B, an r x r work matrix) and ``passes``
    O(r²) passes over B per projection, a sweep visiting every constraint once (Kulis et al. 2006:
    Burg one pass, Sec. 5.1; von Neumann about ten Lanczos steps, Sec. 5.2, 7-10 in the benchmark)."""
    def cost(G0, constraints, **settings):
        (n, r), c = np.shape(G0), len(constraints)
        stop, sweeps = settings.get("stop", "certified"), settings.get("sweeps", "auto")
        if stop != "dual_change":
            instead = ("Hard constraints are certified by sweeps over all c constraints; a lower rank of K0 "
                       "(the kernel's 'rank:') makes each projection cheaper as r².")
        elif sweeps == "cyclic":
            instead = "sweeps: active (or auto) visits only the positive duals between full sweeps."
        else:
            instead = ""
        return (f"solver '{method}' on {n} points at rank {r}: one sweep over {c} constraints",
                DOUBLE * (3.0 * n * r + r * r + 6.0 * c), passes * c * r * r / PROJECTION_RATE, instead)
    return cost


class Sweep(NamedTuple):
    """What a compiled sweep reports (the von Neumann sweeps add their counts to these fields).

    Attributes
    ----------
    status : int
        ``OK``, ``BROKEN`` (a numerical breakdown) or ``STUCK`` (a violated constraint that no
        update can move).
    index : int
        The constraint the sweep stopped at (-1 when ``OK``).
    max_violation : float
        The largest relative violation met before a projection.
    worst : int
        Its constraint (-1: none violated).
    """

    status: int
    index: int
    max_violation: float
    worst: int

TINY = 1e-300
_EPS = float(np.finfo(np.float64).eps)


@njit(cache=True)
def sign(kind):
    """delta of the signed form delta tr(KA) <= delta b: +1 (<=), -1 (>=), 0 (=)."""
    if kind in UPPER:
        return 1.0
    if kind in LOWER:
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


# ---- constraints in the range of K0 ---------------------------------------------------------

def signs(constraints: Constraints) -> np.ndarray:
    """s_i: -1 for >=, +1 for <= and = (the sign of lambda_i in the optimality conditions)."""
    return np.where(np.isin(constraints.kind, LOWER), -1.0, 1.0)


class InRange:
    """The constraints on K = F M F^T as r x r forms: tr(K A_i) = p_i^T M q_i, B_i = sym(p_i q_i^T),
    with p = F^T (e_i - e_j), q = p for distances and p = F^T e_i, q = F^T e_j for similarities.

    Every method works through the constraints in blocks of rows, so no c x r matrix is held.
    """

    BLOCK = 4096

    def __init__(self, F: np.ndarray, constraints: Constraints):
        self.F, self.constraints = F, constraints
        self.is_dist = np.isin(constraints.kind, DISTANCE)
        self.r = F.shape[1]

    def blocks(self, rows: np.ndarray | None = None):
        """(row indices, P, Q) for consecutive blocks of ``rows`` (default: all constraints)."""
        rows = np.arange(len(self.constraints)) if rows is None else rows
        for start in range(0, len(rows), self.BLOCK):
            q = rows[start:start + self.BLOCK]
            Fi, Fj = self.F[self.constraints.i[q]], self.F[self.constraints.j[q]]
            dist = self.is_dist[q, None]
            P = np.where(dist, Fi - Fj, Fi)
            yield q, P, np.where(dist, P, Fj)

    def values(self, B: np.ndarray) -> np.ndarray:
        """tr(K A_i) for M = B B^T, O(c r^2)."""
        out = np.empty(len(self.constraints))
        for q, P, Q in self.blocks():
            out[q] = np.einsum("ij,ij->i", P @ B, Q @ B)
        return out

    def gram(self, coef: np.ndarray) -> np.ndarray:
        """sum_i coef_i B_i, O(r^2) per nonzero coefficient."""
        S = np.zeros((self.r, self.r))
        for q, P, Q in self.blocks(np.flatnonzero(coef)):
            S += (P * coef[q, None]).T @ Q
        return 0.5 * (S + S.T)

    def span(self, rows: np.ndarray) -> np.ndarray:
        """Orthonormal basis (r x k) of the span of p_i, q_i over ``rows`` (from sum p p^T + q q^T)."""
        S = np.zeros((self.r, self.r))
        for _, P, Q in self.blocks(rows):
            S += P.T @ P + Q.T @ Q
        ev, U = eigh(S)
        return U[:, ev > 1e-13 * max(ev[-1], 0.0)] if ev.size and ev[-1] > 0 else np.zeros((self.r, 0))

    def sizes(self) -> np.ndarray:
        """||p_i|| ||q_i|| (the scale of term i of S(y))."""
        out = np.empty(len(self.constraints))
        for q, P, Q in self.blocks():
            out[q] = np.linalg.norm(P, axis=1) * np.linalg.norm(Q, axis=1)
        return out


def relative_violations(values: np.ndarray, constraints: Constraints, bound: np.ndarray) -> np.ndarray:
    """|violation| / |b| per constraint (0 when met), against ``bound`` (the slack-adjusted bounds)."""
    le, ge = np.isin(constraints.kind, UPPER), np.isin(constraints.kind, LOWER)
    v = np.where(le, np.maximum(values - bound, 0.0),
                 np.where(ge, np.maximum(bound - values, 0.0), np.abs(values - bound)))
    return v / np.maximum(np.abs(bound), 1e-12)


def _merge_rank_one(constraints: Constraints, rank_one: np.ndarray) -> np.ndarray:
    """Group label per constraint: rank-one constraints on the same vector (the same pair's distance,
    or the same K_ii) share a label, so their terms in S(y) add exactly; others get their own."""
    lo, hi = np.minimum(constraints.i, constraints.j), np.maximum(constraints.i, constraints.j)
    is_dist = np.isin(constraints.kind, DISTANCE)
    key = np.stack([np.where(rank_one, lo, -1 - np.arange(len(lo))), np.where(rank_one, hi, 0),
                    is_dist.astype(np.int64)], 1)
    return np.unique(key, axis=0, return_inverse=True)[1].ravel()


def infeasibility_certificate(rc: InRange, y0: np.ndarray) -> dict | None:
    """A verified Farkas certificate of infeasibility near the direction ``y0``, or None.

    Looks for y >= 0 (free on equalities) with S(y) = sum y_i s_i B_i PSD and sum y_i s_i b_i < 0
    (module docstring). Rank-one terms on the same vector are merged first (their coefficients
    add exactly), and a merged coefficient below 0 is lifted to 0 by the cheapest "<=" (or "=")
    constraint on that vector. S(y) is then PSD by construction if every remaining term is a PSD
    rank-one term with a coefficient >= 0; otherwise its smallest eigenvalue on the span of the
    vectors involved (S vanishes outside it) must exceed a margin that dominates the rounding of
    forming S and of the eigensolver, after a repair (y <- y + delta u on the "<=" rank-one
    constraints, u_i = 1/b_i).

    Returns ``{"weights", "min_eigenvalue", "combined_bound", "margin", "support", "structural"}``
    (weights scaled to sum_i y_i s_i b_i = -1), or None when no certificate could be verified.
    """
    constraints = rc.constraints
    s, b = signs(constraints), constraints.bound
    is_eq = np.isin(constraints.kind, EQUAL)
    y = np.where(is_eq, y0, np.maximum(y0, 0.0)).astype(np.float64)
    if not np.all(np.isfinite(y)) or not (y * s) @ b < 0:
        return None
    rank_one = np.isin(constraints.kind, DISTANCE) | (constraints.i == constraints.j)
    liftable = rank_one & ((s > 0) | is_eq)                 # raising y_i adds a PSD term
    group = _merge_rank_one(constraints, rank_one)
    coef = y * s
    merged = np.bincount(group, weights=coef)
    spread = np.bincount(group, weights=np.abs(coef))
    for g in np.flatnonzero(merged < 0):                    # lift a negative merged coefficient to (just above) 0
        members = np.flatnonzero((group == g) & liftable)
        if members.size:
            q = members[np.argmin(b[members])]
            y[q] += -merged[g] + 1e-12 * spread[g]
    coef = y * s
    merged = np.bincount(group, weights=coef)
    size_i = rc.sizes()
    vanishes = np.bincount(group, weights=size_i, minlength=merged.size) == 0   # the vector is 0 in the range
    structural = bool(np.all((merged >= 0) | vanishes) and np.all(rank_one | (coef == 0)))
    rounding = 1e3 * (len(constraints) + rc.r) * _EPS
    u = np.where(liftable & (b > 0), 1.0 / np.where(b > 0, b, 1.0), 0.0)
    # S(y) and the repair directions live in the span of the vectors involved: test PSD there
    V = rc.span(np.flatnonzero((y != 0) | (u > 0)))
    S = V.T @ rc.gram(coef) @ V

    def smallest(A):
        return float(np.linalg.eigvalsh(A)[0]) if A.size else 0.0

    if structural:                        # a sum of PSD rank-one terms: PSD without an eigenvalue test
        margin, lmin = 0.0, smallest(S)
    else:
        margin = rounding * float(np.abs(y) @ size_i)
        lmin = smallest(S)
        if lmin < margin:                 # repair along the "<=" rank-one constraints
            try:
                mu = float(sla.eigh(S - 2.0 * margin * np.eye(len(S)), V.T @ rc.gram(u * s) @ V,
                                    eigvals_only=True)[0])
            except (np.linalg.LinAlgError, ValueError):
                return None                # the liftable constraints do not span: no repair
            if mu < 0:
                y = y - mu * (1.0 + 1e-6) * u
                coef = y * s
                S = V.T @ rc.gram(coef) @ V
                margin = rounding * float(np.abs(y) @ size_i)
            lmin = smallest(S)
    total = float(coef @ b)
    strict = total < -rounding * float(np.abs(y) @ np.abs(b))
    # total = 0 with S PSD and nonzero still excludes every positive definite M (rank preserving)
    if not ((structural or lmin >= margin) and (strict or (structural and total <= 0 and np.abs(S).max() > 0))):
        return None
    scale = -total if total < 0 else 1.0
    return {"weights": y / scale, "min_eigenvalue": lmin / scale, "combined_bound": total / scale,
            "margin": margin / scale, "support": int(np.count_nonzero(y)), "structural": structural}


def raise_infeasible(constraints: Constraints, cert: dict, name: str, sweep: int) -> None:
    """InfeasibleError naming the constraints with the largest certificate weights."""
    y = cert["weights"]
    top = np.argsort(-np.abs(y) * np.abs(constraints.bound), kind="stable")[:3]
    named = "; ".join(f"{describe(constraints, int(q))} weight {y[q]:.3g}" for q in top if y[q] != 0)
    psd = ("a sum of positive semidefinite terms" if cert["structural"] else
           f"smallest eigenvalue {cert['min_eigenvalue']:.3g} >= {cert['margin']:.3g}, a rounding margin")
    raise InfeasibleError(
        f"the constraints are infeasible (certified after {sweep} sweep(s) of {name}): a combination of "
        f"{cert['support']} of them, sum_i y_i s_i tr(K A_i) <= sum_i y_i s_i b_i = {cert['combined_bound']:.3g} < 0, "
        f"has a positive semidefinite left side ({psd}) on the range of K0, so no kernel there meets them all. "
        f"The largest weights: "
        f"{named}. Remove or loosen these, or use solver.slack to trade violations against divergence.",
        {**cert, "sweeps": sweep})


# ---- the sweep loop ----------------------------------------------------------------------------

#: ``sweeps: auto`` takes the active schedule from this many constraints (under ``stop: dual_change``; with
#: hard constraints every sweep visits every constraint): on ITML's problem, in the shuffled order, it took
#: 1.5x (r = 64) and 1.4x (r = 16) less CPU than cyclic sweeps at c = 4000, and 1.4x and 1.0x at c = 2000
#: (``benchmarks/sizing/auto_crossovers.py sweeps``, docs/scale.md).
ACTIVE_MIN_C = 4000


def sweep_schedule(method: str, sweeps: str, stop: str, c: int) -> tuple[str, str]:
    """(schedule, why) of solver ``method``: ``sweeps`` itself (why empty) unless it is ``auto``, which
    takes ``active`` under ``stop: dual_change`` or ``gap`` with at least :data:`ACTIVE_MIN_C` constraints and
    ``cyclic`` otherwise, says so in one line when it takes ``active``, and gives the reason to record."""
    if sweeps != "auto":
        return sweeps, ""
    if stop == "certified":
        return "cyclic", "stop 'certified': every sweep visits every constraint"
    if c < ACTIVE_MIN_C:
        return "cyclic", f"c = {c:,} < {ACTIVE_MIN_C:,} constraints"
    why = f"c = {c:,} >= {ACTIVE_MIN_C:,} constraints under stop '{stop}'"
    from ..progress import announce

    announce(f"solver {method}: sweeps 'auto' takes the active schedule ({why}; between full sweeps only the "
             "constraints with a positive dual; only a full sweep stops the run). 'sweeps: cyclic' forces "
             "Kulis et al.'s schedule.")
    return "active", why


def reduced_slacks(values: np.ndarray, constraints: Constraints) -> np.ndarray:
    """The slack targets b̂ that minimise the slack penalty for the kernel's own constraint values x:
    b̂_i = max(b_i, x_i) for <=, min(b_i, x_i) for >=, x_i for =.  Both penalties (Burg's γ Σ φ(b̂/b),
    φ(t) = t − log t − 1, and von Neumann's γ Σ (b̂ log(b̂/b) − b̂ + b)) are convex in b̂ with their minimum
    at b, so this is the closest admissible b̂; (K, b̂) is then feasible, and the reduced primal
    F(K) = D(K, K0) + penalty(b̂) is an upper bound on the optimum, whatever the iterate: the duality
    gap F(K) − g(λ) is non-negative up to rounding (issue 57)."""
    b, x = constraints.bound, np.asarray(values, dtype=np.float64)
    return np.where(np.isin(constraints.kind, EQUAL), x,
                    np.where(np.isin(constraints.kind, LOWER), np.minimum(b, x), np.maximum(b, x)))


def check_schedule(stop: str, sweeps: str, slack: float, slack_if_infeasible: float | None) -> None:
    """Refuse ``stop: dual_change`` or ``gap`` without a finite slack and ``sweeps: active`` without one
    of them (settings of ``burg`` and ``von_neumann``)."""
    if stop in ("dual_change", "gap") and (math.isinf(slack) or slack_if_infeasible is not None):
        rule = ("ITML's rule: the dual change alone" if stop == "dual_change"
                else "the certified gap, whose primal minimises the slacks out")
        raise ConfigError(f"solver.stop '{stop}' ({rule}) needs a finite solver.slack and no slack_if_infeasible; "
                          f"got slack {slack:g}: hard constraints must be met to feas_tol (stop 'certified').")
    if sweeps == "active" and stop not in ("dual_change", "gap"):
        raise ConfigError("solver.sweeps 'active' needs stop 'dual_change' or 'gap' (and a finite slack): with hard "
                          "constraints the sweeps must visit every constraint to certify feasibility.")


class SubsetSweeps:
    """A compiled sweep run on all constraints or on the active subset of
    :func:`run_sweeps` (``active_set``), in a fixed or a freshly shuffled order, counting the projections.

    ``run(kernel, subset)`` calls ``kernel(i, j, kind, bhat, lam)`` (the compiled sweep on those
    arrays, updating ``bhat`` and ``lam`` in place; it returns a :class:`Sweep` or a named result
    with its fields) on every constraint (``subset`` None) or on the constraints ``subset``, and
    writes ``lam``, ``bhat`` back; the indices it returns are mapped back to the whole set.  With
    ``rng`` each sweep visits its constraints in a new permutation drawn from it (``order:
    shuffled``; Kulis et al. 2006 need only that every constraint is visited infinitely often, after
    Censor & Zenios 1997; random permutations are the known cure of cyclic coordinate descent's
    worst case, Sun & Ye 2019); without, in the given order (``order: fixed``, the papers' cyclic
    order), where a subset's arrays are made once.
    """

    def __init__(self, constraints: Constraints, bhat: np.ndarray, lam: np.ndarray,
                 rng: np.random.Generator | None = None):
        self.constraints, self.bhat, self.lam, self.rng = constraints, bhat, lam, rng
        self.projections = 0
        self._subset = self._arrays = None

    def run(self, kernel, subset=None) -> Sweep:
        C, bhat, lam = self.constraints, self.bhat, self.lam
        visit = subset
        if self.rng is not None:
            visit = self.rng.permutation(len(C)) if subset is None else subset[self.rng.permutation(len(subset))]
        if visit is None:
            self.projections += len(C)
            return kernel(C.i, C.j, C.kind, bhat, lam)
        self.projections += len(visit)
        if self._subset is not visit:
            self._subset, self._arrays = visit, (C.i[visit], C.j[visit], C.kind[visit])
        sub_bhat, sub_lam = bhat[visit], lam[visit]
        out = kernel(*self._arrays, sub_bhat, sub_lam)
        lam[visit], bhat[visit] = sub_lam, sub_bhat

        def whole(q):
            return int(visit[q]) if 0 <= q < len(visit) else q
        return out._replace(index=whole(out.index), worst=whole(out.worst))


def run_sweeps(sweep, lam, constraints: Constraints, *, name: str, tol: float, feas_tol: float,
               max_sweeps: int, hard: bool, certify_every: int, violation, farkas, callback=None,
               after_sweep=None, feasible: bool = True, active_set: bool = False, gap=None):
    """Cyclic sweeps until the dual change is <= ``tol`` and every constraint is met to ``feas_tol``
    (with ``feasible`` False: until the dual change is <= ``tol``, the rule of the authors' ITML
    code, which stops on it alone).

    ``active_set`` (with ``feasible`` False only): after a full sweep, the sweeps visit only the
    constraints whose dual is positive (``sweep(subset)``, ``subset`` their indices; ``sweep(None)``
    is a full sweep) until their dual change is <= ``tol``; then a full sweep checks every
    constraint, and only a full sweep with a dual change <= ``tol`` stops the run, so ``converged``
    still means that every constraint was visited in the last sweep. Constraints with a zero dual
    are met at the current targets when visited, so a sweep over them moves nothing until the
    kernel has moved enough to violate one, which the next full sweep finds. History ``full_sweep``
    marks the full sweeps.

    ``sweep()`` runs one compiled sweep (updating ``lam`` in place) and returns its :class:`Sweep`
    (or a named result with the same fields); ``after_sweep()`` (optional)
    runs after each successful sweep; ``violation()`` is the largest relative violation of the
    current iterate (computed only when the sweep's own measures say "done"); ``farkas(y0)``
    returns a verified infeasibility certificate near y0, or None.

    With hard constraints, every ``certify_every`` sweeps in which a constraint is still violated
    and the largest violation has not halved since the last such sweep, the duals are tried as a
    Farkas certificate; a verified one raises InfeasibleError, and so
    does a projection that cannot move a violated constraint (verified as a one-constraint
    certificate). A numerical breakdown without a certificate raises SolverError.

    A start point K0 that already meets every constraint to ``feas_tol`` is the solution (the
    divergence D(K, K0) >= 0 is 0 there, with lambda = 0): the loop returns it after no sweep.

    Returns (stopped_by, sweeps, history, seconds spent on checks).
    """
    history = {"dual_change": [], "max_violation": [], "lambda_norm": [], **({"full_sweep": []} if active_set else {})}
    subset = None                          # active_set: the constraints the next sweep visits (None: all)
    t0 = time.perf_counter()
    start = violation()
    check_seconds = time.perf_counter() - t0
    count = 0
    stopped_by = "max_iter"
    if feasible and start <= feas_tol:    # K0 meets every constraint: D(K0, K0) = 0 is the least divergence,
        stopped_by = "tolerance"          # lambda = 0 its dual (gap 0); no sweep can improve on it
    while count < max_sweeps and stopped_by != "tolerance":
        lam_old = lam.copy()
        out = sweep(subset) if active_set else sweep()
        status, q, maxviol = out.status, out.index, out.max_violation
        count += 1
        if status == STUCK:                   # a violated constraint no update can move: one-constraint proof
            y0 = np.zeros(len(lam))
            y0[q] = -1.0 if constraints.kind[q] in EQUAL and constraints.bound[q] > 0 else 1.0
            cert = farkas(y0)
            if cert is not None:
                raise_infeasible(constraints, cert, name, count)
        if status != OK or not np.all(np.isfinite(lam)):
            cert = farkas(lam_old) if np.all(np.isfinite(lam_old)) else None
            if cert is not None:
                raise_infeasible(constraints, cert, name, count)
            raise SolverError(
                f"the {name} projections broke down at sweep {count} on {describe(constraints, q)}: the update "
                "would leave the positive definite cone or produced non-finite values, and no certificate of "
                "infeasibility could be verified. The constraint set is nearly infeasible or numerically "
                "degenerate at double precision; try solver.slack to allow violations.")
        if after_sweep is not None:
            after_sweep()
        change = dual_change(lam, lam_old)
        history["dual_change"].append(change)
        history["max_violation"].append(maxviol)
        history["lambda_norm"].append(float(np.linalg.norm(lam)))
        if active_set:
            history["full_sweep"].append(subset is None)
        if callback is not None:
            callback(count, dual_change=Checked(change, tol),
                     max_violation=Checked(maxviol, feas_tol) if feasible else maxviol)
        if gap is not None and (change <= tol or count % certify_every == 0):
            t0 = time.perf_counter()
            certified = gap()              # the relative gap F(K) - g(lambda): a bound, over every constraint
            check_seconds += time.perf_counter() - t0
            if certified <= tol:
                stopped_by = "tolerance"
                break
        if active_set:                     # a settled active phase is checked by a full sweep
            settled, full = change <= tol, subset is None
            if settled and full and gap is None:
                stopped_by = "tolerance"
                break
            if settled or full:
                positive = np.flatnonzero(lam > 0)
                subset = None if settled or positive.size in (0, len(lam)) else positive
            continue
        if change <= tol and not feasible and gap is None:
            stopped_by = "tolerance"
            break
        if change <= tol and maxviol <= feas_tol:
            t0 = time.perf_counter()
            final = violation()
            check_seconds += time.perf_counter() - t0
            if final <= feas_tol:
                stopped_by = "tolerance"
                break
        slow = count > certify_every and maxviol > 0.5 * history["max_violation"][-1 - certify_every]
        if hard and maxviol > feas_tol and count % certify_every == 0 and slow:
            t0 = time.perf_counter()
            cert = farkas(lam)
            check_seconds += time.perf_counter() - t0
            if cert is not None:
                raise_infeasible(constraints, cert, name, count)
    return stopped_by, count, {k: np.asarray(v) for k, v in history.items()}, check_seconds


def bregman_certificate(values: np.ndarray, constraints: Constraints, lam: np.ndarray, bhat: np.ndarray, *,
                        slack: float, tol: float, feas_tol: float, dual_changes: np.ndarray, stopped_by: str,
                        primal: float, dual: float, sweeps: int, feasible: bool = True,
                        gap_rule: bool = False) -> Certificate:
    """Checks (largest relative violation of the slack-adjusted bounds, the last sweep's dual change:
    0 after no sweep, lambda = 0 unchanged) and figures (complementarity max |lambda_i (x_i - bhat_i)|,
    duality gap, slack used) of a Bregman result. With ``feasible`` False (ITML's rule, the dual
    change alone) the violation is a figure, not a check; with ``gap_rule`` (``stop: gap``) the one check is
    the relative duality gap, a bound on the distance to the optimum (:func:`reduced_slacks`)."""
    last_change = float(dual_changes[-1]) if len(dual_changes) else 0.0
    viol = relative_violations(values, constraints, bhat)
    figures = {"complementarity": float(np.max(np.abs(lam * (values - bhat)))),
               "primal_objective": primal, "dual_objective": dual, "duality_gap": primal - dual,
               "relative_duality_gap": (primal - dual) / max(1.0, abs(primal)), "sweeps": sweeps,
               "slack": slack}
    if math.isfinite(slack):
        figures["slack_used"] = float(np.max(np.abs(bhat - constraints.bound) / np.maximum(np.abs(constraints.bound),
                                                                                             1e-12)))
    if gap_rule:
        figures.update(max_violation=float(viol.max()), dual_change=last_change)
        return Certificate(rule="relative duality gap (F(K) - g(lambda)) / max(1, |F(K)|) <= tol, F the primal with "
                                "the slacks minimised out",
                           checks={"relative_duality_gap": (figures["relative_duality_gap"], tol)}, figures=figures,
                           stopped_by=stopped_by)
    if not feasible:
        figures["max_violation"] = float(viol.max())
        return Certificate(rule="dual change <= tol (the ITML code's rule; the violation is not checked)",
                           checks={"dual_change": (last_change, tol)}, figures=figures, stopped_by=stopped_by)
    return Certificate(
        rule="largest relative violation (of the slack-adjusted bounds) <= feas_tol and dual change <= tol",
        checks={"max_violation": (float(viol.max()), feas_tol), "dual_change": (last_change, tol)},
        figures=figures, stopped_by=stopped_by)


def conflict_certificate(constraints: Constraints) -> dict | None:
    """The Farkas certificate of the first pair of rows that bound one quantity incompatibly
    (:meth:`~kernlearn_cli.types.Constraints.conflicts`), or None when there is none.

    With l > u the two bounds, weights 1 / (l - u) on both rows (-1 / (l - u) on an equality giving
    the lower bound) make S(y) = 0 and sum_i y_i s_i b_i = (u - l) / (l - u) = -1: verified without
    a solve. Returns the keys of :func:`infeasibility_certificate`.
    """
    pairs = constraints.conflicts()
    if not len(pairs):
        return None
    lower, upper = sorted(pairs[0], key=lambda q: -constraints.bound[q])     # l > u: the larger bound is l
    gap = float(constraints.bound[lower] - constraints.bound[upper])
    y = np.zeros(len(constraints))
    y[upper], y[lower] = 1.0 / gap, (-1.0 if constraints.kind[lower] in EQUAL else 1.0) / gap
    return {"weights": y, "min_eigenvalue": 0.0, "combined_bound": -1.0, "margin": 0.0, "support": 2,
            "structural": True, "sweeps": 0}


def hard_else_slack(solve, constraints: Constraints, slack: float, fallback: float | None, name: str):
    """Hard constraints where they can be met, ITML slack where a certificate says they cannot.

    ``solve(gamma)`` runs the solver with ``slack=gamma`` on ``constraints``. With ``fallback`` None
    this is ``solve(slack)``. Otherwise the constraints are first enforced exactly (Kulis et al.'s
    problem); only if that run raises :class:`InfeasibleError` -- a verified Farkas certificate, never
    a heuristic -- or two rows contradict each other on one quantity (:func:`conflict_certificate`,
    found before any sweep) is the set solved again with slack gamma = ``fallback`` (Davis et al.
    2007's ITML relaxation). The result then says so: ``info["slack"]`` is gamma, ``info["hard_sweeps"]``
    and ``info["hard_seconds"]`` what the hard attempt cost, and the certificate's figures carry the
    evidence of infeasibility (``infeasible_support``, ``infeasible_combined_bound`` < 0,
    ``infeasible_min_eigenvalue``). A hard run that stops at ``max_sweeps`` without a certificate
    is returned as it is (converged false): unproven infeasibility never switches the problem.
    """
    if fallback is None:
        return solve(slack)
    if not math.isinf(slack):
        raise ConfigError(f"solver.slack_if_infeasible replaces hard constraints (slack: inf) where they are "
                          f"certified infeasible; it cannot be combined with slack {slack}.")
    t0 = time.perf_counter()
    cert = conflict_certificate(constraints)
    if cert is None:
        try:
            result = solve(math.inf)
        except InfeasibleError as exc:
            cert = exc.certificate
        else:
            result.info.update(hard_sweeps=result.iterations, hard_seconds=time.perf_counter() - t0)
            return result
    hard_seconds = time.perf_counter() - t0
    result = solve(fallback)
    result.info.update(hard_sweeps=int(cert.get("sweeps", 0)), hard_seconds=hard_seconds)
    result.certificate["figures"].update(
        infeasible_support=int(cert["support"]), infeasible_combined_bound=float(cert["combined_bound"]),
        infeasible_min_eigenvalue=float(cert.get("min_eigenvalue", math.nan)))
    result.certificate["rule"] += f" ({name} with hard constraints was certified infeasible; slack gamma {fallback})"
    return result


#: ``slack`` of the cyclic Bregman solvers: gamma > 0, or inf for hard constraints.
Slack = Annotated[float, Interval(0, math.inf, closed="right")]


def require_constraints(name: str, constraints: Constraints) -> None:
    """A cyclic Bregman solver needs at least one constraint to project onto."""
    if len(constraints) == 0:
        raise ConfigError(f"solver '{name}' needs at least one constraint, but the constraint set is empty.")


def refuse_zero_distances(name: str, G0: np.ndarray, constraints: Constraints) -> None:
    """Refuse a squared distance bound of 0 (``dist_le``, ``dist_eq``) between two points apart under K0.

    Such a bound asks the two points to coincide. The LogDet (``burg``) and von Neumann
    divergences are finite only on kernels of K0's range and rank, K = G0 B B^T G0^T with B
    invertible, where g0_i - g0_j != 0 gives a positive distance: no kernel the solver reaches
    meets the bound (the projections break down). Points that coincide under K0 (distance at
    most 1e-12 times the mean squared row norm of G0, rounding) meet it already and pass.

    Raises
    ------
    DataError
        Naming the first such constraint and the two points' distance under K0.
    """
    zero = np.isin(constraints.kind, (DIST_LE, DIST_EQ)) & (constraints.bound == 0)
    if not zero.any():
        return
    G0 = np.asarray(G0, dtype=np.float64)
    q = np.flatnonzero(zero)
    diff = G0[constraints.i[q]] - G0[constraints.j[q]]
    d0 = np.einsum("ij,ij->i", diff, diff)
    apart = d0 > 1e-12 * float(np.einsum("ij,ij->", G0, G0)) / max(len(G0), 1)
    if apart.any():
        k = int(np.flatnonzero(apart)[0])
        raise DataError(f"solver '{name}': {describe(constraints, int(q[k]))} asks a squared distance of 0, i.e. that "
                        f"the two points coincide; they are {d0[k]:.6g} apart under K0, and {name} (a Bregman "
                        f"divergence finite only on kernels of K0's rank and range) keeps points apart that are "
                        f"apart in K0, so no kernel it reaches meets this bound. Give a positive bound (e.g. a "
                        f"fraction of {d0[k]:.3g}), or remove the constraint.")
