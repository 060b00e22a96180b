r"""On-line kernel learning with the Matrix Exponentiated Gradient update (Tsuda, Rätsch & Warmuth 2005, Sec. 3).

The learner keeps a symmetric positive definite parameter W_t with tr(W_t) = 1.  In
trial t it is shown an instance matrix X_t, predicts

.. math::  \hat y_t = \operatorname{tr}(W_t X_t),

incurs the square loss (\hat y_t - y_t)^2 and updates by the MEG update (eq. 4)

.. math::  W_{t+1} = \frac{1}{Z_t} \exp\bigl(\log W_t - 2\eta(\hat y_t - y_t) X_t\bigr).

**Stable form (Sec. 3.2).**  The update is computed as in eq. (7), from the initial
parameter and the sum of all gradient steps, never from log W_t:

.. math::

    W_{t+1} = \frac{1}{\tilde Z_t}\exp\Bigl(c_t I + \log W_1 - 2\eta\sum_{s=1}^t(\hat y_s - y_s)X_s\Bigr),
    \qquad V_t \Lambda_t V_t^\top = c_t I + \log W_1 - 2\eta\sum_{s=1}^t(\hat y_s - y_s)X_s ,

with c_t chosen so that the largest eigenvalue of the exponent is 0, and
W_{t+1} = V_t exp(Λ_t) V_tᵀ / tr(exp(Λ_t)).  The exponent without c_t is kept as an explicit
n × n symmetric matrix S_t (each trial changes at most four of its entries) and its
eigendecomposition is recomputed from it in every trial: **O(n³) per trial** (a dense
symmetric eigendecomposition), which is the paper's algorithm; no error accumulates in the
eigenvectors.  The prediction needs two rows of W_t only: O(n) from V_t and exp(Λ_t).

**Without the eigendecomposition (``update: lanczos``).**  X_t is ½ v vᵀ (dist_eq, v = e_a - e_b) or
¼(u₊u₊ᵀ - u₋u₋ᵀ) (sim_eq, u± = e_a ± e_b), so ŷ_t needs vᵀ exp(S) v and tr exp(S), and the step
changes tr exp(S) by a function of v's spectral measure under S (Krein's spectral shift).  A Lanczos
run on S from v gives both to about 1e-13 relative (:class:`_Krylov`): O(m n²) per trial for m
steps, one eigendecomposition at the end.  The same ŷ_t, losses and kernel as the dense update to
about 1e-12 relative, but not the same bits: a setting, ``eigh`` by default.

**Examples.**  Each row of the constraint set is one trial, in order (``distance_stream``
produces such a stream):

* ``dist_eq`` (a, b, bound): the paper's distance example (Sec. 5), X_t with 1/2 at (a, a)
  and (b, b) and -1/2 at (a, b) and (b, a), i.e. X_t = ½(e_a - e_b)(e_a - e_b)ᵀ, so that
  tr(W X_t) is half the squared distance; y_t = bound / (2 s);
* ``sim_eq`` (a, b, bound): X_t = ½(e_a e_bᵀ + e_b e_aᵀ), tr(W X_t) = W_ab; y_t = bound / s.

Both have λ_max(X_t) - λ_min(X_t) ≤ r = 1 (Lemma 3.1).

**Scale and K0.**  The bounds are in the units of a kernel K with tr(K) = s; MEG learns the
trace-one W = K / s.  s is the trace of the kernel that generated the stream -- the
``reference`` factor that the runner passes (the generator's ``constraints.reference``,
by default K0 itself) -- or tr(K0) when no reference is given.  The initial parameter is
the trace-normalised initial kernel, W_1 = K0 / tr(K0) = G0 G0ᵀ / ‖G0‖²_F; with
``kernel: identity`` this is the paper's W_1 = I/n.  W_1 must be positive definite (log W_1
enters eq. 7), so G0 must have rank n.  The returned factor is G = √s · V_T exp(Λ_T/2) /
√tr(exp(Λ_T)) (n × n: W is full rank), so K = G Gᵀ = s W_{T+1} is in the stream's units.

**Relative loss bound (Lemma 3.2).**  For a comparison matrix U (symmetric PSD, tr U = 1),
L_U(S) = Σ_t (tr(U X_t) - y_t)² and Δ(U, W_1) = tr(U log U - U log W_1) (eq. 1, normalised
case), with η = 2c / (r²(2 + c)), i.e. c = 2ηr² / (2 - ηr²) for 0 < ηr² < 2, eq. (6) reads

.. math::

    L_{MEG}(S) \le \Bigl(1 + \frac c2\Bigr)L_U(S) + \Bigl(\frac12 + \frac1c\Bigr)r^2\Delta(U, W_1)
             = \frac{2}{2 - \eta r^2}L_U(S) + \frac{\Delta(U, W_1)}{\eta}.

At ηr² = 2 (the paper's η = 2, the limit c → ∞) the bound is Δ(U, W_1)/η when L_U(S) = 0
and infinite otherwise; for ηr² > 2 the lemma gives no bound (reported as ``inf``).
``comparison: target`` takes U = K_ref / tr(K_ref), the trace-normalised kernel that
generated the stream, so L_U(S) = 0 as in the paper's experiment (per-trial residuals
below 1e-12 relative, i.e. rounding, count as 0).

References
----------
.. [1] K. Tsuda, G. Rätsch and M. K. Warmuth. Matrix exponentiated gradient updates for on-line
   learning and Bregman projection. Advances in Neural Information Processing Systems 17 (NIPS
   2004), pages 1425–1432; Journal of Machine Learning Research 6 (2005), pages 995–1018.
"""

from __future__ import annotations

import math
import time
from typing import Callable, Literal

import numpy as np
from scipy.linalg import eigh_tridiagonal

from ..errors import ConfigError, DataError
from ..lowrank import RANK_TOL
from ..linalg import eigh
from ..params import NonNegativeInt, Positive
from ..registry import TRANSDUCTIVE_CHECKS, Checks, EstimatorSpec, evaluators, solvers
from ..resources import DOUBLE, eigh_cost, estimated
from ..kinds import DIST_EQ, KINDS, SIM_EQ
from ..types import Constraints, SolverResult
from ._lanczos import krylov
from .protocol import finish, not_applicable

#: λ_max - λ_min of every instance matrix X_t built from a dist_eq / sim_eq example.
R_EXAMPLES = 1.0
#: For the estimate of ``update: lanczos``: Lanczos steps per trial (measured 1-3.4 from K0 = I, 10-11 from
#: a dense K0) and flops per second of a step (2 n² and the reorthogonalisation; measured 4-6e9 at n = 2000:
#: docs/scale.md, "MEG without an eigendecomposition per trial").
LANCZOS_STEPS = 10
MATVEC_RATE = 4e9


def loss_bound(comparison_loss, divergence: float, eta: float, r: float = R_EXAMPLES):
    r"""The right-hand side of Lemma 3.2, eq. (6), for learning rate ``eta``.

    2 L_U / (2 - ηr²) + Δ(U, W_1) / η for 0 < ηr² < 2; Δ(U, W_1)/η at ηr² = 2 where L_U = 0
    (inf where L_U > 0); inf for ηr² > 2.  ``comparison_loss`` may be an array (bounds of
    every prefix of the stream).
    """
    L = np.asarray(comparison_loss, dtype=np.float64)
    er2 = eta * r * r
    if er2 < 2.0:
        out = 2.0 * L / (2.0 - er2) + divergence / eta
    elif er2 == 2.0:
        out = np.where(L == 0.0, divergence / eta, np.inf)
    else:
        out = np.full_like(L, np.inf)
    return float(out) if out.ndim == 0 else out


def neg_entropy(U_factor: np.ndarray) -> float:
    """tr(U log U) = Σ μ log μ over the eigenvalues μ of U = F Fᵀ (F = ``U_factor``), with 0 log 0 = 0."""
    mu = np.linalg.svd(U_factor, compute_uv=False) ** 2
    mu = mu[mu > 0]
    return float(np.sum(mu * np.log(mu)))


def von_neumann_divergence(U_factor: np.ndarray, log_W: np.ndarray) -> float:
    """Δ(U, W) = tr(U log U) - tr(U log W) (eq. 1 for tr U = tr W = 1), U = F Fᵀ, W given by log W."""
    return neg_entropy(U_factor) - float(np.sum(U_factor * (log_W @ U_factor)))


def _initial_parameter(G0: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Eigendecomposition (w, Q) of W_1 = K0 / tr(K0), and tr(K0); errors for an unusable K0."""
    if G0.ndim != 2 or G0.shape[0] != n:
        raise DataError(f"solver 'meg': the initial kernel factor has shape {G0.shape}, expected {n} rows.")
    if not np.all(np.isfinite(G0)):
        raise DataError("solver 'meg': the initial kernel K0 has non-finite entries.")
    trace = float(np.sum(G0 * G0))
    if not trace > 0:
        raise DataError("solver 'meg': the initial kernel K0 has zero trace, so W_1 = K0 / tr(K0) is undefined. "
                        "Use kernel: identity (W_1 = I/n, as in Tsuda et al. 2005) or a full-rank kernel.")
    kappa, Q = eigh(G0 @ G0.T)
    if G0.shape[1] < n or kappa[0] <= RANK_TOL * kappa[-1]:
        rank = int(np.sum(kappa > RANK_TOL * kappa[-1]))
        raise ConfigError(
            f"solver 'meg' needs a positive definite initial kernel: W_1 = K0 / tr(K0) enters the update "
            f"through log W_1 (Tsuda et al. eq. 7), but K0 has rank {rank} < n = {n} (smallest eigenvalue "
            f"{kappa[0]:.3g}, largest {kappa[-1]:.3g}). Use kernel: identity (W_1 = I/n, the paper's choice) or a "
            "full-rank kernel (e.g. rbf with rank: 0).")
    w = kappa / kappa.sum()
    return w, Q, trace


def _comparison_predictions(U_factor: np.ndarray, constraints: Constraints, chunk: int = 4096) -> np.ndarray:
    """tr(U X_t) for every example of the stream (U = F Fᵀ), in chunks to bound the memory."""
    out = np.empty(len(constraints))
    for lo in range(0, len(constraints), chunk):
        sl = slice(lo, lo + chunk)
        fa, fb = U_factor[constraints.i[sl]], U_factor[constraints.j[sl]]
        d = fa - fb
        out[sl] = np.where(constraints.kind[sl] == DIST_EQ, 0.5 * np.einsum("ij,ij->i", d, d),
                           np.einsum("ij,ij->i", fa, fb))
    return out


def _add_step(S: np.ndarray, a: int, b: int, dist: bool, g: float) -> None:
    """S <- S - g X_t in place, for the example (a, b) (X_t of a dist_eq or a sim_eq row; a != b for dist_eq)."""
    if dist:
        S[a, a] -= 0.5 * g
        S[b, b] -= 0.5 * g
        S[a, b] += 0.5 * g
        S[b, a] += 0.5 * g
    elif a == b:
        S[a, a] -= g
    else:
        S[a, b] -= 0.5 * g
        S[b, a] -= 0.5 * g


def _exponential(S: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, float]:
    """W = exp(S) / tr exp(S) = V diag(p) Vᵀ by one dense eigendecomposition S = V Λ Vᵀ; also c = -λ_max
    and log Z̃ = log tr exp(S + c I) (eq. 7's shift, so the largest exponent is 0)."""
    lam, V = eigh(S)
    c = -lam[-1]
    e = np.exp(lam + c)
    log_Z = math.log(float(e.sum()))
    return V, e / e.sum(), c, log_Z


class _Eigen:
    """The paper's trial (eq. 7): W_t = V diag(p) Vᵀ from a dense eigendecomposition of the exponent S
    after every step, O(n³); the prediction reads two rows of V."""

    def __init__(self, S: np.ndarray, w1: np.ndarray, Q1: np.ndarray):
        self.S, self.V, self.p, self.trial = S, Q1, w1, (0, 0, True)
        self.c = -math.log(float(w1[-1]))           # W_1 = exp(S_0 + c I) / Z̃ with the largest exponent 0
        self.log_Z = math.log(float(np.sum(w1 / w1[-1])))

    def predict(self, a: int, b: int, dist: bool) -> float:
        """ŷ_t = tr(W_t X_t)."""
        self.trial = (a, b, dist)
        if dist:
            d = self.V[a] - self.V[b]
            return 0.5 * float(self.p @ (d * d))
        return float(self.p @ (self.V[a] * self.V[b]))

    def step(self, g: float) -> tuple[float, float]:
        """S <- S - g X_t for the last predicted trial; returns (c_t, log Z̃_t): log W_{t+1} = S + (c_t - log Z̃_t) I."""
        _add_step(self.S, *self.trial, g)
        self.V, self.p, self.c, self.log_Z = _exponential(self.S)
        return self.c, self.log_Z

    def factor(self) -> tuple[np.ndarray, np.ndarray]:
        """(V, p) of the current W = V diag(p) Vᵀ."""
        return self.V, self.p


class _Krylov:
    r"""The trials' quantities from Lanczos runs on the exponent S, without its eigendecomposition.

    For a trial matrix that is a sum of rank-one terms ±u uᵀ (dist_eq: ½ v vᵀ with v = e_a - e_b;
    sim_eq: ¼(u₊u₊ᵀ - u₋u₋ᵀ) with u± = e_a ± e_b, or e_a e_aᵀ when a = b), a Lanczos run on S from u
    gives the Jacobi matrix T_m, and uᵀ exp(S) u ≈ ‖u‖² e₁ᵀ exp(T_m) e₁ (the m-node Gauss rule of u's
    spectral measure).  S + α u uᵀ has the same Krylov space and the same T_m but for α‖u‖² added to
    its (1, 1) entry, and d/ds tr exp(S + s u uᵀ) = uᵀ exp(S + s u uᵀ) u, so

    .. math::  \operatorname{tr}\exp(S + \alpha u u^\top) - \operatorname{tr}\exp(S)
               \approx \operatorname{tr}\exp(T_m + \alpha\lVert u\rVert^2 e_1e_1^\top) - \operatorname{tr}\exp(T_m),

    the integral of the same Gauss rule (the spectral shift of Krein), exact once the Krylov space is
    invariant.  The runs and their stopping rule are the von Neumann Krylov sweep's
    (:func:`~kernlearn_cli.solvers._lanczos.krylov`: estimated relative error of the rule
    below 1e-13 over the trial's step, or an invariant space); each step is one product with S
    (O(n²)).  ``log_Z`` = log tr exp(S) is carried from log tr exp(S_0) = log tr W_1 (S_0 = log W_1)
    through these differences.
    """

    def __init__(self, S: np.ndarray, log_Z: float):
        n = S.shape[0]
        self.S, self.c, self.log_Z = S, 0.0, log_Z
        self.Q, self.u = np.empty((n, n)), np.empty(n)
        self.ja, self.jb = np.empty(n), np.zeros(n + 1)
        self.trial, self.run, self.steps = (0, 0, True), (0, 0.0), 0

    def _run(self, idx, coef, mu0: float, need: float = 0.0) -> tuple[int, float]:
        """A Lanczos run on S from u = Σ coef_k e_idx_k (‖u‖² = mu0), good for steps α with -α mu0 <= need."""
        self.Q[0] = 0.0
        self.Q[0, idx] = np.asarray(coef) / math.sqrt(mu0)
        m, logp, _, _ = krylov(self.S, self.Q, self.ja, self.jb, self.u, 0, 0.0, need)
        self.steps += m
        return m, logp

    def _rule(self, m: int, alpha: float = 0.0):
        """(nodes - a_0, weights) of the Gauss rule of T_m + α e₁e₁ᵀ; the shift a_0 keeps its eigenvalues exact."""
        d = self.ja[:m] - self.ja[0]
        d[0] += alpha
        theta, Z = eigh_tridiagonal(d, self.jb[1:m])
        return theta, Z[0] ** 2

    def _form(self, m: int, mu0: float) -> float:
        """uᵀ W u = ‖u‖² e₁ᵀ exp(T_m) e₁ / tr exp(S) for the run in ja, jb."""
        theta, weight = self._rule(m)
        return mu0 * float(weight @ np.exp(theta + (self.ja[0] - self.log_Z)))

    def _shift(self, run: tuple[int, float], mu0: float, alpha: float) -> None:
        """log tr exp(S + α u uᵀ) from log tr exp(S): the run extended for the step, then the trace difference."""
        m, _ = run
        if alpha < 0.0:
            m, _, _, _ = krylov(self.S, self.Q, self.ja, self.jb, self.u, *run, -alpha * mu0)
            self.steps += m - run[0]
        before, _ = self._rule(m)
        after, _ = self._rule(m, alpha * mu0)
        top = max(before[-1], after[-1])
        change = float(np.sum(np.exp(after - top)) - np.sum(np.exp(before - top)))
        self.log_Z += math.log1p(change * math.exp(top + self.ja[0] - self.log_Z))

    def predict(self, a: int, b: int, dist: bool) -> float:
        """ŷ_t = tr(W_t X_t); keeps the runs :meth:`step` needs."""
        self.trial = (a, b, dist)
        if dist:
            if a == b:
                return 0.0
            self.run = self._run([a, b], [1.0, -1.0], 2.0)
            return 0.5 * self._form(self.run[0], 2.0)
        if a == b:
            self.run = self._run([a], [1.0], 1.0)
            return self._form(self.run[0], 1.0)
        minus = self._form(self._run([a, b], [1.0, -1.0], 2.0)[0], 2.0)
        self.run = self._run([a, b], [1.0, 1.0], 2.0)
        return 0.25 * (self._form(self.run[0], 2.0) - minus)

    def step(self, g: float) -> tuple[float, float]:
        """S <- S - g X_t for the last predicted trial, and log tr exp(S) carried along; returns
        (0, log tr exp(S)): log W_{t+1} = S - log tr exp(S) I."""
        a, b, dist = self.trial
        if dist:
            self._shift(self.run, 2.0, -0.5 * g)
        elif a == b:
            self._shift(self.run, 1.0, -g)
        else:                                        # two rank-one steps: -g/4 u₊u₊ᵀ, then +g/4 u₋u₋ᵀ
            self._shift(self.run, 2.0, -0.25 * g)
            cells = (np.array([a, b, a, b]), np.array([a, b, b, a]))
            kept = self.S[cells]
            self.S[cells] -= 0.25 * g
            self._shift(self._run([a, b], [1.0, -1.0], 2.0, max(0.0, -0.5 * g)), 2.0, 0.25 * g)
            self.S[cells] = kept
        _add_step(self.S, a, b, dist, g)
        return 0.0, self.log_Z

    def factor(self) -> tuple[np.ndarray, np.ndarray]:
        """(V, p) of W = exp(S) / tr exp(S) = V diag(p) Vᵀ: one dense eigendecomposition."""
        V, p, _, _ = _exponential(self.S)
        return V, p


#: ``update: auto`` takes ``lanczos`` from this many points: the whole call took 1.4x (K0 = I) and 1.3x (a
#: dense K0) less CPU than ``eigh`` at n = 35 over 200 trials, 1.0-1.1x at n = 30 and 0.9x at n = 25
#: (``benchmarks/sizing/auto_crossovers.py meg``, docs/scale.md).
LANCZOS_MIN_N = 35


def meg_update(update: str, n: int) -> tuple[str, str]:
    """(update, why): ``update`` itself (why empty) unless ``auto``, which takes ``lanczos`` from
    :data:`LANCZOS_MIN_N` points and ``eigh`` below, with the reason to record."""
    if update != "auto":
        return update, ""
    if n >= LANCZOS_MIN_N:
        return "lanczos", f"n = {n:,} >= {LANCZOS_MIN_N}"
    return "eigh", f"n = {n:,} < {LANCZOS_MIN_N}"


def _trial_cost(G0, constraints, *, iterations=0, update="auto", **settings):
    """One dense eigendecomposition of the n x n exponent per trial (eq. 7); with ``update: lanczos``
    about LANCZOS_STEPS products with it (n² each) per trial and one eigendecomposition."""
    n, trials = np.shape(G0)[0], iterations or len(constraints)
    memory, seconds = eigh_cost(n)
    if meg_update(update, n)[0] == "lanczos":
        return (f"solver 'meg': {trials} trials, each about {LANCZOS_STEPS} products with a {n} x {n} matrix",
                memory + DOUBLE * n * n, seconds + trials * LANCZOS_STEPS * 2.0 * n * n / MATVEC_RATE,
                "Fewer trials ('iterations:') or fewer points cost proportionally less.")
    return (f"solver 'meg': {trials} trials, each an eigendecomposition of a {n} x {n} matrix", memory,
            trials * seconds, f"Cheaper: update: lanczos (what 'auto', the default, takes from n = {LANCZOS_MIN_N}) "
                              "replaces each trial's eigendecomposition by about ten products with the matrix.")


#: What the generic checks need (:mod:`kernlearn_cli.testing`): an instance, another value per setting.
MEG_CHECKS = Checks(
    instance="kernlearn_cli.testing.instances:meg",
    alternatives={"eta": 0.5, "iterations": 10, "comparison": "none", "update": "lanczos"},
    unused={"comparison": "chooses the comparison matrix U of the loss bound (history, info), not the iterates"})


@solvers.register("meg", checks=MEG_CHECKS, budget="iterations", defaults_before={"update": "eigh"}, warmup={
    "kernel": {"name": "identity"}, "solver": {"update": "lanczos"},
    "constraints": {"name": "distance_stream", "count": 20, "reference": {"name": "rbf"}}},
    estimator=EstimatorSpec("MEGKernel", "On-line Matrix Exponentiated Gradient (Tsuda et al. 2005, Sec. 3): one "
                            "trial per example of a stream of squared distances under the reference kernel of "
                            "constraint_params (labels not needed); transductive.", kernel="identity",
                            constraints="distance_stream",
                            constraint_defaults={"count": 1000, "reference": {"name": "rbf"}},
                            check_settings={"constraint_params": {"count": 100, "reference": {"name": "rbf"}}},
                            expected_failed=TRANSDUCTIVE_CHECKS))
@estimated(_trial_cost)
def meg(G0: np.ndarray, constraints: Constraints, *, eta: Positive = 2.0, iterations: NonNegativeInt = 0,
        comparison: Literal["target", "none"] = "target", update: Literal["auto", "eigh", "lanczos"] = "auto",
        reference=None, callback: Callable | None = None) -> SolverResult:
    r"""On-line Matrix Exponentiated Gradient (MEG) for the square loss (Tsuda et al. 2005, Sec. 3, eq. 7).

    Parameters
    ----------
    G0 : ndarray (n, r)
        Factor of the initial kernel; W_1 = G0 G0ᵀ / tr(G0 G0ᵀ) must be positive definite
        (r = n).  ``kernel: identity`` gives the paper's W_1 = I/n.
    constraints : Constraints
        The example stream, one ``dist_eq`` or ``sim_eq`` row per trial, in time order
        (e.g. from ``distance_stream``).
    eta : float
        Learning rate η > 0.  η = 2 = 2/r² is the paper's choice: it minimises the Lemma 3.2
        bound when the comparison matrix has zero loss.
    iterations : int
        Number of trials T (>= 0).  0 (default): the whole stream once; otherwise the first
        ``iterations`` examples, cycling through the stream again (from its first example)
        when it is shorter than that.
    comparison : {"target", "none"}
        The comparison matrix U of Lemma 3.2: ``target`` = the trace-normalised reference
        kernel that generated the stream (needs ``reference``); ``none`` = no bound.
    update : {"auto", "eigh", "lanczos"}
        How a trial is computed.  ``auto`` (default): ``lanczos`` from :data:`LANCZOS_MIN_N` points,
        ``eigh`` below (:func:`meg_update`; ``info`` keeps ``update`` and ``update_auto``, why).  ``eigh``: a dense
        eigendecomposition of the exponent per trial, O(n³) (the paper's algorithm).  ``lanczos``: the prediction and the change of
        tr exp(S) from Lanczos runs on the exponent from the trial's vectors (:class:`_Krylov`), O(m n²)
        for m steps (one run per dist_eq trial, three per off-diagonal sim_eq), and one eigendecomposition
        at the end for the kernel.  Every ŷ_t, the loss and the kernel agree with ``eigh``'s to about
        1e-12 relative, not bit for bit: hence a setting.
    reference : ndarray (n, q), optional
        Supplied by the runner, not a config key: the factor of the kernel whose distances
        are the stream's labels (the generator's reference kernel).  Sets the scale s =
        tr(K_ref) and U = K_ref / s; without it s = tr(K0).
    callback : callable, optional
        ``callback(t, loss=..., cumulative_loss=...)`` about 100 times over the run (and at the end).

    Returns
    -------
    SolverResult
        ``G`` (n × n) with G Gᵀ = s W_{T+1}; ``objective`` = the cumulative loss L_MEG(S);
        ``iterations`` = T; ``converged`` = None (does not apply: the on-line algorithm has no
        stopping test, it completes its T trials; the certificate holds the cumulative loss, the
        Lemma 3.2 bound and whether the loss is within it).  History (length T): ``loss`` (ŷ_t - y_t)²,
        ``cumulative_loss``; with a comparison also ``comparison_loss`` (cumulative L_U),
        ``bound`` (eq. 6 for the first t trials) and ``divergence`` Δ(U, W_{t+1}).  Info:
        ``cumulative_loss``, ``loss_bound``, ``bound_ratio`` (= loss_bound / cumulative_loss;
        about 2 in the paper's Fig. 2), ``comparison_loss``, ``initial_divergence`` Δ(U, W_1),
        ``eta``, ``r``, ``scale`` s, ``stream_length``, ``solver_seconds``.  Arrays: ``G0``
        and ``reference`` (when given), so the losses and the bound recompute from the file.

    Raises
    ------
    ConfigError
        η ≤ 0, iterations < 0 or an unknown comparison (as declared), a non-equality example,
        ``target`` without a reference, or an initial kernel that is not positive definite.
    DataError
        A zero-trace or non-finite initial or reference kernel, or indices out of range.
    """
    m = len(constraints)
    if m == 0:
        raise ConfigError("solver 'meg' needs at least one example, but the constraint set is empty.")
    bad = np.flatnonzero((constraints.kind != DIST_EQ) & (constraints.kind != SIM_EQ))
    if bad.size:
        q = int(bad[0])
        raise ConfigError(f"solver 'meg' learns on-line from equality examples (dist_eq: a squared distance, "
                          f"sim_eq: a kernel entry) with the square loss, but constraint #{q} is "
                          f"'{KINDS[constraints.kind[q]]}'. Use constraints 'distance_stream' (or a file of "
                          "dist_eq / sim_eq rows); inequality constraints are for 'burg'.")
    G0 = np.asarray(G0, dtype=np.float64)
    n = int(G0.shape[0])
    ia, ib = constraints.i, constraints.j
    out = (ia < 0) | (ia >= n) | (ib < 0) | (ib >= n)
    if out.any():
        q = int(np.flatnonzero(out)[0])
        raise DataError(f"solver 'meg': constraint #{q} refers to points ({ia[q]}, {ib[q]}), but the kernel has "
                        f"{n} points (valid indices 0..{n - 1}).")
    w1, Q1, trace0 = _initial_parameter(G0, n)

    if reference is not None:
        F = np.asarray(reference, dtype=np.float64)
        if F.ndim != 2 or F.shape[0] != n or not np.all(np.isfinite(F)):
            raise DataError(f"solver 'meg': the reference kernel factor must be a finite array with {n} rows, "
                            f"got shape {F.shape}.")
        scale = float(np.sum(F * F))
        if not scale > 0:
            raise DataError("solver 'meg': the reference kernel has zero trace; U = K_ref / tr(K_ref) is undefined.")
    elif comparison == "target":
        raise ConfigError("solver.comparison 'target' needs the kernel that generated the stream (the runner "
                          "passes it as 'reference'); without it, set solver.comparison: none.")
    else:
        F, scale = None, trace0
    with_bound = comparison == "target"

    T = int(iterations) if iterations > 0 else m
    order = np.arange(T) % m
    a_t, b_t = ia[order], ib[order]
    is_dist = constraints.kind[order] == DIST_EQ
    y = np.where(is_dist, constraints.bound[order] / (2.0 * scale), constraints.bound[order] / scale)

    if with_bound:
        U = F / math.sqrt(scale)                    # U = U_f U_fᵀ, tr U = 1
        uX = _comparison_predictions(U, constraints)[order]
        resid = uX - y
        resid[np.abs(resid) <= 1e-12 * (np.abs(uX) + np.abs(y))] = 0.0
        comparison_loss = np.cumsum(resid * resid)
    # eq. (7): S = log W_1 - 2η Σ_s (ŷ_s - y_s) X_s, kept explicitly; W_t = V diag(p) Vᵀ
    S = (Q1 * np.log(w1)) @ Q1.T
    S = 0.5 * (S + S.T)
    update, why = meg_update(update, S.shape[0])
    if update == "lanczos" and why:
        from ..progress import announce

        announce(f"solver meg: update 'auto' takes lanczos ({why}: Krylov products instead of an eigendecomposition "
                 "per trial; the same predictions to about 1e-12). 'update: eigh' forces the paper's dense update.")
    trials = _Krylov(S, math.log(float(np.sum(w1)))) if update == "lanczos" else _Eigen(S, w1, Q1)
    c, log_Z = trials.c, trials.log_Z
    if with_bound:
        h_U = neg_entropy(U)
        delta1 = von_neumann_divergence(U, S)       # Δ(U, W_1)
        tr_US = h_U - delta1                        # tr(U S_0) = tr(U log W_1), then updated per trial
        divergence = np.empty(T)
    loss = np.empty(T)
    every = max(1, T // 100)
    t0 = time.perf_counter()
    for t in range(T):
        a, b = int(a_t[t]), int(b_t[t])
        err = trials.predict(a, b, bool(is_dist[t])) - y[t]
        loss[t] = err * err
        g = 2.0 * eta * err                          # S <- S - g X_t
        if g != 0.0 and not (is_dist[t] and a == b):
            c, log_Z = trials.step(g)
            if not math.isfinite(log_Z):
                raise DataError(f"solver 'meg': the update produced non-finite values at trial {t + 1} "
                                f"(eta = {eta:g}); the labels or the learning rate are too large.")
        if with_bound:
            tr_US -= g * float(uX[t])
            # Δ(U, W_{t+1}) = tr(U log U) - tr(U log W_{t+1}), log W_{t+1} = S_t + c_t I - log Z̃_t I
            divergence[t] = h_U - (tr_US + c - log_Z)
        if callback is not None and ((t + 1) % every == 0 or t + 1 == T):
            callback(t + 1, loss=float(loss[t]), cumulative_loss=float(loss[: t + 1].sum()))
    V, p = trials.factor()
    seconds = time.perf_counter() - t0

    cumulative = np.cumsum(loss)
    G = math.sqrt(scale) * V[:, ::-1] * np.sqrt(p[::-1])
    history = {"loss": loss, "cumulative_loss": cumulative}
    info = {"cumulative_loss": float(cumulative[-1]), "eta": float(eta), "r": R_EXAMPLES, "scale": scale,
            "stream_length": m, "solver_seconds": seconds}
    if update == "lanczos":
        info["lanczos_steps"] = trials.steps         # products with the exponent, all trials together
    if why:
        info.update(update=update, update_auto=why)
    arrays = {"G0": G0}
    if with_bound:
        bound = loss_bound(comparison_loss, delta1, float(eta))
        history.update(comparison_loss=comparison_loss, bound=bound, divergence=divergence)
        final_bound = float(bound[-1])
        info.update(loss_bound=final_bound, comparison_loss=float(comparison_loss[-1]), initial_divergence=delta1,
                    bound_ratio=final_bound / float(cumulative[-1]) if cumulative[-1] > 0 else math.inf)
        arrays["reference"] = F
    else:
        info.update(loss_bound=math.nan, comparison_loss=math.nan, initial_divergence=math.nan,
                    bound_ratio=math.nan)
    figures = {"cumulative_loss": info["cumulative_loss"], "loss_bound": info["loss_bound"],
               "bound_holds": bool(info["cumulative_loss"] <= info["loss_bound"]) if with_bound else None}
    return finish(SolverResult(G=np.ascontiguousarray(G), objective=float(cumulative[-1]), iterations=T,
                               converged=None, history=history, info=info, arrays=arrays),
                  not_applicable(f"on-line algorithm, {T} trials by design; evidence: the cumulative loss and its "
                                 "Lemma 3.2 bound", **figures), "meg")


@evaluators.register("meg_loss", metrics=("cumulative_loss", "loss_bound", "bound_ratio", "comparison_loss"),
                     checks=Checks(instance="kernlearn_cli.testing.instances:meg_result"))
def meg_loss(G: np.ndarray, ds, *, rng, result=None) -> dict:
    """The on-line loss of a ``meg`` run and its Lemma 3.2 bound, as metrics.

    Copies ``cumulative_loss`` (L_MEG), ``loss_bound`` (eq. 6), ``bound_ratio``
    (bound / loss) and ``comparison_loss`` (L_U) from the solver's result, so that
    ``kernlearn collect`` / ``plot`` can tabulate them (e.g. ``-m bound_ratio``).
    """
    keys = ("cumulative_loss", "loss_bound", "bound_ratio", "comparison_loss")
    if result is None or any(k not in result.info for k in keys):
        raise ConfigError("evaluator 'meg_loss' reports the on-line loss of solver 'meg'; this cell's solver "
                          "does not produce it. Remove 'meg_loss' from evaluate, or use solver: meg.")
    return {k: float(result.info[k]) for k in keys}
