r"""The Nyström method and its generalisation with priors (Zhang, Lan, Wang & Moerchen 2012).

Both build an inductive low-rank kernel from m landmarks Z: E (n x m) is the Gaussian
kernel between the samples and the landmarks, W (m x m) among the landmarks, and

.. math::  K \approx E S E^T,

with S = W^+ for the standard Nyström method (``nystrom``) and, for ``nystrom_prior``, the
dictionary kernel learned from the labeled points (Zhang et al., "Including side information"):

.. math::

    \min_{S \succeq 0} \lambda \|S - S_0\|_F^2 + \|T \circ (E_l S E_l^T) - K^*_l\|_F^2, \qquad S_0 = W^+,

K*_l the ideal kernel on the labeled block (1 same class, 0 otherwise) and T the mask of
the constrained pairs (all ones for labels; the "grouping constraints" variant otherwise).
It is solved by gradient mapping (Nemirovski 1994) with the Armijo-Goldstein rule on A and
a PSD projection per trial, from the closed-form solution of the unconstrained stationarity
equation (exact when T is all ones). The paper leaves the metric of the steps open; ours is that
of the congruence S = M R M, M = (E_lᵀE_l + √λ I)^{-1/2} (:func:`congruence`), chosen in
advance from the problem's Hessian, not from results: it keeps the PSD cone and makes the
small-λ problems of Fig. 1 solvable to the certified tolerance in hundreds of iterations.
Memory is O(mn): E is computed in row blocks and turned into the factor G = E S^{1/2} block by
block, so no n x n matrix is ever formed and E itself is never held whole.  Any point, seen
or new, has the factor row E_x S^{1/2} (``kernlearn embed``).

References
----------
.. [1] K. Zhang, L. Lan, J. Liu, A. Rauber and F. Moerchen. Inductive kernel low-rank decomposition
   with priors: a generalized Nyström method. Proceedings of the 29th International Conference on
   Machine Learning (ICML 2012). https://arxiv.org/abs/1206.4619
.. [2] C. K. I. Williams and M. Seeger. Using the Nyström method to speed up kernel machines. Advances
   in Neural Information Processing Systems 13 (NIPS 2000), pages 682–688.
"""

from __future__ import annotations

import math
import time
from typing import Annotated, Literal

import numpy as np

from ..errors import ConfigError, DataError
from ..evaluate.supervised import nka
from ..linalg import eigh
from ..params import Fraction, Length, Positive, PositiveInt
from ..registry import Checks, EstimatorSpec, solvers
from ..resources import DOUBLE, EIGH_RATE, GEMM_RATE, estimated
from ..kinds import SIM_EQ
from ..types import Constraints, SolverResult
from .protocol import Certificate, finish, not_applicable

BLOCK = 8192          # at most this many rows of E at a time (and at most n / 16: temporaries stay small)
#: Why the Nyström solvers take no ``kernel:`` (the message refusing one): k is evaluated at the
#: k-means centroids and at new points, which a kernel matrix K0 on the training points cannot give.
OWN_KERNEL = ("it evaluates its own Gaussian kernel exp(-||x - z||^2 / b), b the mean pairwise squared distance "
              "of the features, between the points and its landmarks (Zhang et al. 2012)")


# ---- landmarks and kernel blocks --------------------------------------------------------

def gaussian_width(X: np.ndarray) -> float:
    """b = the average squared distance over all pairs i != j, in O(nd):
    mean_{i != j} ||x_i - x_j||^2 = 2n / (n - 1) (mean ||x||^2 - ||mean x||^2)."""
    n = X.shape[0]
    mu = X.mean(axis=0)
    return float(2.0 * n / (n - 1) * (np.einsum("ij,ij->", X, X) / n - mu @ mu))


def gaussian_block(X: np.ndarray, Z: np.ndarray, b: float) -> np.ndarray:
    """exp(-||x - z||^2 / b) for the rows of X against the landmarks Z (Zhang et al.'s kernel)."""
    d2 = (X * X).sum(1)[:, None] - 2.0 * X @ Z.T + (Z * Z).sum(1)[None, :]
    np.maximum(d2, 0.0, out=d2)
    d2 *= -1.0 / b
    return np.exp(d2, out=d2)


LandmarkMethod = Literal["kmeans", "uniform"]
#: Where ``nystrom_prior``'s gradient mapping starts: the closed form (Zhang et al., Initialization)
#: projected on the PSD cone, or the prior S0 = W^+ (the start without it).
Start = Literal["closed_form", "prior"]


def select_landmarks(X: np.ndarray, m: int, method: LandmarkMethod, rng: np.random.Generator) -> np.ndarray:
    """m landmarks: k-means centroids (Zhang & Kwok's clustered Nyström) or a uniform sample."""
    n = X.shape[0]
    if m > n:
        raise ConfigError(f"solver.landmarks = {m} must be between 1 and n = {n} (the dataset has {n} points).")
    if method == "uniform":
        return X[np.sort(rng.choice(n, m, replace=False))].copy()
    from sklearn.cluster import KMeans

    seed = int(rng.integers(0, 2**31 - 1))
    return KMeans(n_clusters=m, n_init=1, max_iter=50, random_state=seed).fit(X).cluster_centers_


def pinv_psd(W: np.ndarray, rtol: float = 1e-10) -> np.ndarray:
    """Pseudo-inverse of a symmetric PSD matrix (eigenvalues below rtol * largest dropped)."""
    ev, Q = eigh((W + W.T) / 2)
    keep = ev > rtol * max(ev.max(), 0.0)
    return (Q[:, keep] / ev[keep]) @ Q[:, keep].T


def psd_sqrt(S: np.ndarray) -> np.ndarray:
    ev, Q = eigh((S + S.T) / 2)
    return (Q * np.sqrt(np.clip(ev, 0.0, None))) @ Q.T


def project_psd(S: np.ndarray) -> np.ndarray:
    """Nearest PSD matrix in Frobenius norm: U Lambda_+ U^T."""
    ev, Q = eigh((S + S.T) / 2)
    return (Q * np.clip(ev, 0.0, None)) @ Q.T


def factor_rows(X: np.ndarray, Z: np.ndarray, b: float, R: np.ndarray) -> np.ndarray:
    """G = E R (E = gaussian_block(X, Z, b)), computed BLOCK rows at a time: O(mn) memory."""
    n = X.shape[0]
    G = np.empty((n, R.shape[1]))
    block = max(256, min(BLOCK, n // 16))
    for start in range(0, n, block):
        stop = min(start + block, n)
        G[start:stop] = gaussian_block(X[start:stop], Z, b) @ R
    return G


# ---- the problem with priors ------------------------------------------------------------

def ideal_block(constraints: Constraints, solver: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Labeled indices, K*_l and the mask T from pair targets K_ij = 0/1 (kind ``sim_eq``)."""
    if len(constraints) == 0:
        raise ConfigError(f"solver '{solver}' needs labeled points; the constraint set is empty "
                          "(use constraint generator 'labeled_subset').")
    if np.any(constraints.kind != SIM_EQ):
        raise ConfigError(f"solver '{solver}' needs ideal-kernel targets K_ij = 1 (same class) / 0 (kind sim_eq), "
                          "as constraint generator 'labeled_subset' makes them; found other kinds.")
    labeled = np.unique(np.concatenate([constraints.i, constraints.j]))
    pos = np.searchsorted(labeled, constraints.i), np.searchsorted(labeled, constraints.j)
    l = len(labeled)
    K = np.zeros((l, l))
    T = np.zeros((l, l))
    K[pos] = K[pos[::-1]] = constraints.bound
    T[pos] = T[pos[::-1]] = 1.0
    return labeled, K, T


def prior_objective(S, S0, El, Kl, T, lam) -> float:
    """J(S) = lam ||S - S0||_F^2 + ||T o (E_l S E_l^T) - K*_l||_F^2 (K*_l zero outside T)."""
    R = T * (El @ S @ El.T) - Kl
    return float(lam * np.sum((S - S0) ** 2) + np.sum(R * R))


def prior_value_and_gradient(S, S0, El, Kl, T, lam) -> tuple[float, np.ndarray]:
    """J(S) and grad J = 2 lam (S - S0) + 2 E_l^T (T o (E_l S E_l^T) - K*_l) E_l, sharing the residual."""
    R = T * (El @ S @ El.T) - Kl
    D = S - S0
    return float(lam * np.sum(D * D) + np.sum(R * R)), 2.0 * lam * D + 2.0 * El.T @ R @ El


def closed_form(S0, El, Kl, lam) -> np.ndarray:
    """Stationary point of J without the PSD constraint (and T = 1):
    lam S + E_l^T E_l S E_l^T E_l = E_l^T K*_l E_l + lam S0, i.e. S + P S P = Q with
    P = E_l^T E_l / sqrt(lam) = U Lambda U^T, Q = S0 + E_l^T K*_l E_l / lam;
    in the eigenbasis [S~]_ij = Q~_ij / (1 + Lambda_ii Lambda_jj) (Zhang et al., Initialization)."""
    P = El.T @ El / math.sqrt(lam)
    Q = S0 + El.T @ Kl @ El / lam
    ev, U = eigh((P + P.T) / 2)
    Qt = U.T @ Q @ U
    St = Qt / (1.0 + np.outer(ev, ev))
    return U @ St @ U.T


def prior_certificate(S, S0, El, Kl, T, lam, mu: float) -> tuple[float, float, float]:
    """(J(S), ‖ξ‖_F, bound on J(S) − J*) for a PSD S, from the least-norm subgradient ξ.

    The subdifferential of J + ι_{S ⪰ 0} at S is ∇J(S) − {Z ⪰ 0 : Z S = 0}; its least-norm
    element is ξ = ∇J − N [Nᵀ ∇J N]_+ Nᵀ, N an orthonormal basis of the null space of S
    (eigenvalues <= 1e-10 times the largest).  J is μ-strongly convex, so J(S) − J* <= ‖ξ‖² / (2μ)
    (the gradient-mapping residual's certificate; 0 exactly at the optimum).
    """
    J, g = prior_value_and_gradient(S, S0, El, Kl, T, lam)
    ev, U = eigh((S + S.T) / 2)
    N = U[:, ev <= 1e-10 * max(ev.max(), 0.0)]
    xi = g - N @ project_psd(N.T @ g @ N) @ N.T if N.shape[1] else g
    res = float(np.linalg.norm(xi))
    return J, res, res * res / (2.0 * mu)


def strong_convexity(El, T, lam) -> float:
    """μ of J: 2λ, plus 2 λ_min(E_lᵀE_l)² when T is all ones (the Hessian is 2λ I + 2 E_lᵀE_l ⊗ E_lᵀE_l)."""
    if np.all(T == 1.0):
        e_min = max(float(np.linalg.eigvalsh(El.T @ El)[0]), 0.0)
        return 2.0 * lam + 2.0 * e_min * e_min
    return 2.0 * lam


def congruence(El, lam) -> tuple[np.ndarray, np.ndarray]:
    """M = (E_lᵀE_l + √λ I)^{-1/2} and M^{-1}: the change of variables S = M R M of :func:`gradient_mapping`.

    In the eigenbasis of P = E_lᵀE_l (eigenvalues p_i) the Hessian of J is diagonal with entries
    2(λ + p_i p_j) when T is all ones, a condition number up to p_max² / λ (1e9 and more at the
    small λ of Zhang et al.'s Fig. 1, where plain gradient mapping needs ~1e5 iterations). In R
    the entries become 2(λ + p_i p_j) / ((p_i + √λ)(p_j + √λ)), which lie in [λ/(p_max+√λ)², 2]
    and equal 1/2 .. 1 on the diagonal i = j: the condition number drops to about p_max / √λ.
    A congruence keeps the cone, S ⪰ 0 ⟺ R ⪰ 0, so each step is still one PSD projection.
    """
    P = El.T @ El
    ev, U = eigh((P + P.T) / 2)
    root = np.sqrt(np.maximum(ev, 0.0) + math.sqrt(lam))
    return (U / root) @ U.T, (U * root) @ U.T


def gradient_mapping(S, S0, El, Kl, T, lam, *, tol: float, gap_tol: float, max_iter: int, A: float = 1.0,
                     growth: float = 2.0):
    """Accelerated gradient mapping with the Armijo-Goldstein rule (Zhang et al., Optimization;
    Nemirovski 1994; Nesterov's extrapolation with adaptive restart, Beck & Teboulle 2009), run in
    the variable R of S = M R M (:func:`congruence`, a preconditioner that keeps the PSD cone):

    with J~(R) = J(M R M) and grad J~ = M grad J M, at the extrapolated point Y,
    B_A = argmin_{B >= 0} tr(grad B) + A/2 ||B - Y||^2 = Proj_PSD(Y - grad / A); while
    J~(B_A) > J~(Y) + tr(grad (B_A - Y)) + A/2 ||B_A - Y||^2, A <- growth A (a "trial").  Restarts
    the momentum when J increases (a step that does not decrease J counts as a change of 0: at
    the optimum rounding alone rejects every step, and the certificate decides).  Stops when the
    relative objective change is below ``tol`` *and* the certified bound on J − J*
    (:func:`prior_certificate`, computed on S itself) is below ``gap_tol`` max(1, J), checked when
    the change first falls below ``tol`` and then every max(10, it/10) iterations.  Returns (S,
    iterations, trials, stopped_by, certificate figures, history).
    """
    t0 = time.perf_counter()
    mu = strong_convexity(El, T, lam)
    check_seconds = time.perf_counter() - t0
    M, M_inv = congruence(El, lam)
    to_S = lambda R: M @ R @ M          # noqa: E731

    EM = El @ M                         # ||E_l M|| <= 1

    def residuals(R):
        # The data term through E_l M: with S0 = W+ up to 1e7 (spambase), E_l S E_l^T would sum
        # terms of 1e10 and be good to only ~1e-6, below which Armijo's test fails on rounding and
        # A runs away (the steps then stall far from the optimum).
        return to_S(R) - S0, T * (EM @ R @ EM.T) - Kl

    def value(R, gradient=False):
        D, Q = residuals(R)
        J = float(lam * np.sum(D * D) + np.sum(Q * Q))
        return (J, 2.0 * lam * (M @ D @ M) + 2.0 * EM.T @ Q @ EM) if gradient else J

    R = project_psd(M_inv @ S @ M_inv)  # S is PSD; the projection only removes rounding
    J = value(R)
    Y, t = R.copy(), 1.0
    hist = {"objective": [J], "A": [A], "trials": [0]}
    stopped_by = "max_iter"
    change = math.inf
    it = trials = next_check = 0
    while it < max_iter:
        it += 1
        JY, g = value(Y, gradient=True)
        A = max(A / growth, 1e-12)                      # let A shrink again after easy steps
        n_trials = 0
        while True:
            n_trials += 1
            B = project_psd(Y - g / A)
            D = B - Y
            JB = value(B)
            if JB <= JY + np.sum(g * D) + 0.5 * A * np.sum(D * D) or n_trials >= 60:
                break
            A *= growth
        trials += n_trials
        if JB > J:              # adaptive restart: drop the momentum; J did not decrease (change 0)
            Y, t = R.copy(), 1.0
            change = 0.0
        else:
            change = (J - JB) / max(abs(J), 1e-300)
            t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
            Y = B + ((t - 1.0) / t_next) * (B - R)
            R, J, t = B, JB, t_next
        hist["objective"].append(J)
        hist["A"].append(A)
        hist["trials"].append(n_trials)
        if change < tol and it >= next_check:
            t0 = time.perf_counter()
            _, _, bound = prior_certificate(to_S(R), S0, El, Kl, T, lam, mu)
            check_seconds += time.perf_counter() - t0
            if bound <= gap_tol * max(1.0, abs(J)):
                stopped_by = "tolerance"
                break
            next_check = it + max(10, it // 10)
    t0 = time.perf_counter()
    S = to_S(R)
    J, res, bound = prior_certificate(S, S0, El, Kl, T, lam, mu)
    figures = {"objective": J, "subgradient_norm": res, "gap_bound": bound, "strong_convexity": mu,
               "relative_change": change, "certificate_seconds": check_seconds + time.perf_counter() - t0}
    return S, it, trials, stopped_by, figures, {k: np.asarray(v) for k, v in hist.items()}


# ---- solvers ----------------------------------------------------------------------------

def _setup(dataset, landmarks: int, landmark_method: LandmarkMethod, rng, solver: str):
    if dataset is None or dataset.X is None:
        raise DataError(f"solver '{solver}' needs the dataset's features (it evaluates a Gaussian kernel on them).")
    X = np.ascontiguousarray(dataset.X, dtype=np.float64)
    b = gaussian_width(X)
    if not b > 0:
        raise DataError(f"solver '{solver}': all points of dataset '{dataset.name}' coincide (kernel width 0).")
    Z = select_landmarks(X, landmarks, landmark_method, rng)
    W = gaussian_block(Z, Z, b)
    ev = np.linalg.eigvalsh(W)
    if ev[0] <= 1e-10 * ev[-1]:
        dup = len(Z) - len(np.unique(np.round(Z, 12), axis=0))
        raise DataError(f"solver '{solver}': the {len(Z)} landmarks give a singular W (smallest eigenvalue "
                        f"{ev[0]:.2e} of {ev[-1]:.2e}; {dup} duplicate landmark(s)), so S0 = W^+ drops directions. "
                        "Use fewer landmarks than distinct points, or landmark_method: uniform on deduplicated data.")
    return X, b, Z, W


#: The estimators' constraints (:class:`~kernlearn_cli.registry.EstimatorSpec`): a fifth of the points labeled, every class.
LABELED = {"fraction": 0.2, "every_class": True}


def _inductive_arrays(Z, b, S) -> dict:
    return {"landmarks": Z, "S": S, "kernel_width": np.array(b)}


def _landmark_cost(method: str, per: str):
    """The cost hook of the Nyström solvers (:func:`~kernlearn_cli.resources.estimated`): O(n m)
    memory (the points, E and its products, m = ``landmarks``); time: the n x m kernel block and W's
    eigendecomposition (the landmarks' k-means not counted), or with ``per`` one gradient-mapping
    iteration (an m x m PSD projection and the n x m products)."""
    def cost(G0, constraints, *, dataset=None, landmarks=100, **settings):
        n, d = dataset.X.shape if dataset is not None else np.shape(G0)
        m = min(landmarks, n)
        step = m ** 3 / EIGH_RATE + (2.0 * n * m * m / GEMM_RATE if per else 2.0 * n * m * d / GEMM_RATE)
        return (f"solver '{method}' on {n} points with {m} landmarks" + (f": one {per}" if per else ""),
                DOUBLE * (n * d + 3.0 * n * m + 3.0 * m * m), step, "Fewer landmarks cost less (O(n m) memory).")
    return cost


#: What the generic checks need (:mod:`kernlearn_cli.testing`): an instance, another value per setting.
NYSTROM_CHECKS = Checks(
    instance="kernlearn_cli.testing.instances:nystrom",
    alternatives={"landmarks": 5, "landmark_method": "uniform", "rcond": 0.5})


@solvers.register("nystrom", checks=NYSTROM_CHECKS, instead_of_kernel=OWN_KERNEL, inductive="landmarks", estimator=EstimatorSpec(
    "NystromKernel", "The standard Nyström kernel of landmarks (the baseline of Zhang et al. 2012).",
    constraints="labeled_subset", constraint_defaults=LABELED, check_settings={"landmarks": 5}))
@estimated(_landmark_cost("nystrom", ""))
def nystrom(G0: np.ndarray, constraints: Constraints, *, dataset, rng, landmarks: PositiveInt = 100,
            landmark_method: LandmarkMethod = "kmeans", rcond: Fraction = 1e-10) -> SolverResult:
    """Standard Nyström: K = E W^+ E^T with the same landmarks as ``nystrom_prior`` (the baseline).

    Returns ``G = E (W^+)^{1/2}`` (n x m); arrays ``landmarks``, ``S`` (= W^+), ``kernel_width``
    (inductive: ``kernlearn embed`` maps new points).  ``G0`` and the constraints are not used
    (no initial kernel: a config refuses ``kernel:``).

    Parameters
    ----------
    landmarks : int
        m, 1 <= m <= n.
    landmark_method : {"kmeans", "uniform"}
        k-means centroids, or a uniform sample of the points.
    rcond : float
        Eigenvalues of W below ``rcond`` times the largest are dropped from the pseudo-inverse
        (a relative cutoff, 0 <= rcond < 1).
    """
    t0 = time.perf_counter()
    X, b, Z, W = _setup(dataset, landmarks, landmark_method, rng, "nystrom")
    S = pinv_psd(W, rcond)
    G = factor_rows(X, Z, b, psd_sqrt(S))
    return finish(SolverResult(G=G, objective=0.0, iterations=0, converged=None, history={},
                               info={"landmarks": len(Z), "kernel_width": b, "inductive": True,
                                     "solver_seconds": time.perf_counter() - t0},
                               arrays=_inductive_arrays(Z, b, S)),
                  not_applicable("closed form (K = E W^+ E^T), nothing is iterated"), "nystrom")


#: What the generic checks need (:mod:`kernlearn_cli.testing`): an instance, another value per setting.
NYSTROM_PRIOR_CHECKS = Checks(
    instance="kernlearn_cli.testing.instances:nystrom_prior", settings_instance="kernlearn_cli.testing.instances:nystrom_prior_single",
    alternatives={"landmarks": 5, "landmark_method": "uniform", "lam": 0.01, "tol": 1e-2, "gap_tol": 1e-1,
                  "max_iter": 1, "rcond": 0.5, "start": "prior"},
    unused={key: "T is all ones: the closed-form start is the optimum, certified at the first check"
            for key in ("tol", "gap_tol", "max_iter")})


@solvers.register("nystrom_prior", checks=NYSTROM_PRIOR_CHECKS, instead_of_kernel=OWN_KERNEL, inductive="landmarks", budget="max_iter",
                  estimator=EstimatorSpec("NystromPriorKernel", "Generalized Nyström with priors (Zhang et al. "
                                          "2012), by gradient mapping.", constraints="labeled_subset",
                                          constraint_defaults=LABELED, check_settings={"landmarks": 5}))
@estimated(_landmark_cost("nystrom_prior", "iteration"), per="iteration")
def nystrom_prior(G0: np.ndarray, constraints: Constraints, *, dataset, rng, landmarks: PositiveInt = 100,
                  landmark_method: LandmarkMethod = "kmeans",
                  lam: Annotated[list[Positive], Length(1)] | Positive = 1.0, tol: Positive = 1e-8,
                  gap_tol: Positive = 1e-5, max_iter: PositiveInt = 5000, rcond: Fraction = 1e-10,
                  start: Start = "closed_form") -> SolverResult:
    """Generalized Nyström with priors (Zhang et al. 2012): learn the dictionary kernel S.

    Parameters
    ----------
    G0 : None
        Not used: the kernel is the Gaussian below, evaluated at the landmarks (a config refuses
        ``kernel:``).
    constraints : Constraints
        Ideal-kernel targets on the labeled block (generator ``labeled_subset``): K*_ij = 1 same
        class, 0 otherwise (kind ``sim_eq``); pairs not listed are masked out (T_ij = 0).
    dataset : Dataset
        Features; the Gaussian kernel exp(-||x - y||^2 / b) uses b = the average pairwise
        squared distance (Zhang et al., Experiments).
    rng : numpy.random.Generator
        Seeds the k-means landmarks (or the uniform sample).
    landmarks : int
        m, 1 <= m <= n.
    landmark_method : {"kmeans", "uniform"}
        k-means centroids, or a uniform sample of the points.
    lam : float or list of float
        lambda > 0; a (non-empty) list selects by NKA: the maximiser of rho[S(lam), S0] * rho[E_l S(lam) E_l^T, K*_l]
        (the whole curve is kept in the history as ``nka_lambda``, ``nka_score``).
    tol, gap_tol, max_iter
        Gradient mapping (at most ``max_iter`` >= 1 iterations) stops when the relative objective
        change is below ``tol`` (> 0) and the
        certified bound on J − J* (:func:`prior_certificate`) is below ``gap_tol`` max(1, J) (> 0);
        these are the checks of the certificate, at every lambda of a list.
    rcond : float
        S0 = W^+ drops the eigenvalues of W below ``rcond`` times the largest (0 <= rcond < 1, as
        ``nystrom``).
        The Gaussian W is ill-conditioned (condition 1e3-1e8 on the paper's data), and its
        near-null directions dominate S0 and so rho[S, S0]; a larger cutoff (1e-2) makes the
        NKA criterion pick larger lambda (README, Zhang et al.).
    start : {"closed_form", "prior"}
        Start of the gradient mapping: the paper's closed form (the stationary point of the
        unconstrained problem, projected on the PSD cone; Initialization), or the prior S0 itself
        (what the paper's start replaces; also the start when the mask T is not all ones, where
        there is no closed form). Both reach the same optimum: the problem is strongly convex.

    Returns
    -------
    SolverResult
        ``G = E S^{1/2}`` (n x m), ``objective`` = J(S); arrays ``landmarks``, ``S``, ``S0``,
        ``E_labeled``, ``K_ideal``, ``kernel_width``; info ``lam``, ``iterations``, ``trials``,
        ``init_residual`` (of the closed form's stationarity equation, before projection).
    """
    lams = lam if isinstance(lam, list) else [lam]
    labeled, Kl, T = ideal_block(constraints, "nystrom_prior")
    y = dataset.y if dataset is not None else None
    if y is not None:
        missing = sorted(set(np.unique(y).tolist()) - set(np.unique(y[labeled]).tolist()))
        if missing:
            names = [dataset.classes[c] if dataset.classes else c for c in missing]
            raise DataError(f"solver 'nystrom_prior': no labeled pair involves class {names[0]!r} "
                            f"({len(missing)} class(es) without a labeled point); raise the labeled count or fraction.")
    t0 = time.perf_counter()
    X, b, Z, W = _setup(dataset, landmarks, landmark_method, rng, "nystrom_prior")
    S0 = pinv_psd(W, rcond)
    El = gaussian_block(X[labeled], Z, b)
    full_mask = bool(np.all(T == 1.0))
    curve = {k: [] for k in ("nka_lambda", "nka_score", "iterations", "trials", "gap_bound", "relative_change")}
    best, stops, check_seconds = None, [], 0.0
    for x in lams:
        if full_mask and start == "closed_form":
            S_free = closed_form(S0, El, Kl, x)
            M = El.T @ El
            lhs = x * S_free + M @ S_free @ M
            rhs = El.T @ Kl @ El + x * S0
            residual = float(np.linalg.norm(lhs - rhs) / max(np.linalg.norm(rhs), 1e-300))
            S_init = project_psd(S_free)
        else:                                          # grouping constraints (no closed form), or asked
            residual, S_init = float("nan"), S0.copy()
        S, iters, trials, stopped_by, fig, hist = gradient_mapping(S_init, S0, El, Kl, T, x, tol=tol, gap_tol=gap_tol,
                                                                   max_iter=max_iter)
        stops.append(stopped_by)
        check_seconds += fig["certificate_seconds"]
        score = nka(S, S0) * nka(T * (El @ S @ El.T), Kl)
        for key, value in (("nka_lambda", x), ("nka_score", score), ("iterations", iters), ("trials", trials),
                           ("gap_bound", fig["gap_bound"] / max(1.0, abs(fig["objective"]))),
                           ("relative_change", fig["relative_change"])):
            curve[key].append(value)
        if best is None or score > best[0]:
            best = (score, x, S, iters, trials, hist, residual, fig)
    score, lam_star, S, iters, trials, hist, residual, fig = best
    G = factor_rows(X, Z, b, psd_sqrt(S))
    curve = {k: np.asarray(v, dtype=np.float64) for k, v in curve.items()}
    cert = Certificate(
        rule="at every lambda: relative objective change <= tol and the certified bound on J - J* "
             "<= gap_tol max(1, J)",
        checks={"relative_change": (float(curve["relative_change"].max()), tol),
                "gap_bound": (float(curve["gap_bound"].max()), gap_tol)},
        figures={"lam": lam_star, "subgradient_norm": fig["subgradient_norm"], "strong_convexity": fig["strong_convexity"],
                 "lambda_grid": curve["nka_lambda"], "lambda_gap_bound": curve["gap_bound"]},
        stopped_by=next((why for why in ("max_iter",) if why in stops), "tolerance"))
    history = {**hist, **{k: v for k, v in curve.items() if k not in ("gap_bound", "relative_change")}}
    return finish(SolverResult(
        G=G, objective=prior_objective(S, S0, El, Kl, T, lam_star), iterations=iters, converged=False,
        history=history,
        info={"lam": lam_star, "nka": score, "trials": trials, "landmarks": len(Z), "labeled": len(labeled),
              "kernel_width": b, "init_residual": residual, "grouping_mask": not full_mask, "inductive": True,
              "solver_seconds": time.perf_counter() - t0, "certificate_seconds": check_seconds},
        arrays={**_inductive_arrays(Z, b, S), "S0": S0, "E_labeled": El, "K_ideal": Kl, "labeled": labeled}),
        cert, "nystrom_prior")
