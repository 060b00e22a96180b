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
"""

from __future__ import annotations

import math
import time
from typing import Callable, Literal

import numpy as np

from ..errors import ConfigError, DataError
from ..kernels import RANK_TOL
from ..linalg import eigh
from ..params import NonNegativeInt, Positive
from ..registry import evaluators, solvers
from ..resources import eigh_cost, estimated
from ..types import KIND_CODE, KINDS, Constraints, SolverResult
from .protocol import finish, not_applicable

#: λ_max - λ_min of every instance matrix X_t built from a dist_eq / sim_eq example.
R_EXAMPLES = 1.0
_DIST, _SIM = KIND_CODE["dist_eq"], KIND_CODE["sim_eq"]


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
        out[sl] = np.where(constraints.kind[sl] == _DIST, 0.5 * np.einsum("ij,ij->i", d, d),
                           np.einsum("ij,ij->i", fa, fb))
    return out


def _trial_cost(G0, constraints, *, iterations=0, **settings):
    """One dense eigendecomposition of the n x n exponent per trial (eq. 7)."""
    n, trials = np.shape(G0)[0], iterations or len(constraints)
    memory, seconds = eigh_cost(n)
    return (f"solver 'meg': {trials} trials, each an eigendecomposition of a {n} x {n} matrix", memory,
            trials * seconds, "Fewer trials ('iterations:') or fewer points cost proportionally less.")


@solvers.register("meg")
@estimated(_trial_cost)
def meg(G0: np.ndarray, constraints: Constraints, *, eta: Positive = 2.0, iterations: NonNegativeInt = 0,
        comparison: Literal["target", "none"] = "target", reference=None,
        callback: Callable | None = None) -> SolverResult:
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
    bad = np.flatnonzero((constraints.kind != _DIST) & (constraints.kind != _SIM))
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
    is_dist = constraints.kind[order] == _DIST
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
    V, p = Q1, w1
    c = -math.log(float(w1[-1]))                    # W_1 = exp(S_0 + c I) / Z̃ with the largest exponent 0
    log_Z = math.log(float(np.sum(w1 / w1[-1])))
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
        if is_dist[t]:
            d = V[a] - V[b]
            yhat = 0.5 * float(p @ (d * d))
        else:
            yhat = float(p @ (V[a] * V[b]))
        err = yhat - y[t]
        loss[t] = err * err
        g = 2.0 * eta * err                          # S <- S - g X_t
        if g != 0.0 and not (is_dist[t] and a == b):
            if is_dist[t]:
                S[a, a] -= 0.5 * g
                S[b, b] -= 0.5 * g
                S[a, b] += 0.5 * g
                S[b, a] += 0.5 * g
            elif a == b:
                S[a, a] -= g
            else:
                S[a, b] -= 0.5 * g
                S[b, a] -= 0.5 * g
            lam, V = eigh(S)
            c = -lam[-1]                              # c_t: largest eigenvalue of the exponent is 0
            e = np.exp(lam + c)
            log_Z = math.log(float(e.sum()))
            p = e / e.sum()
            if not np.all(np.isfinite(p)):
                raise DataError(f"solver 'meg': the update produced non-finite values at trial {t + 1} "
                                f"(eta = {eta:g}); the labels or the learning rate are too large.")
        if with_bound:
            tr_US -= g * float(uX[t])
            # Δ(U, W_{t+1}) = tr(U log U) - tr(U log W_{t+1}), log W_{t+1} = S_t + c_t I - log Z̃_t I
            divergence[t] = h_U - (tr_US + c - log_Z)
        if callback is not None and ((t + 1) % every == 0 or t + 1 == T):
            callback(t + 1, loss=float(loss[t]), cumulative_loss=float(loss[: t + 1].sum()))
    seconds = time.perf_counter() - t0

    cumulative = np.cumsum(loss)
    G = math.sqrt(scale) * V[:, ::-1] * np.sqrt(p[::-1])
    history = {"loss": loss, "cumulative_loss": cumulative}
    info = {"cumulative_loss": float(cumulative[-1]), "eta": float(eta), "r": R_EXAMPLES, "scale": scale,
            "stream_length": m, "solver_seconds": seconds}
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


@evaluators.register("meg_loss")
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
