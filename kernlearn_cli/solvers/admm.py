r"""Pairwise constraint propagation by ADMM, KL_ADMM (Hu & Kwok 2013, Alg. 1).

The PCP problem of Li et al. (2008), eq. (1):

.. math::

    \min_{K \succeq 0} \operatorname{tr}(K L) + \frac{\gamma}{2} \sum_{(i,j) \in T} (K_{ij} - T_{ij})^2

with L the Laplacian of the data manifold (:func:`kernlearn_cli.graph.knn_laplacian`)
and T the must-link (1), cannot-link (0) and (i, i) (1) targets of eq. (2).  The sum runs
over ordered pairs: an off-diagonal pair counts twice, (i, i) once (``pair_count =
"twice"``), which is what the column updates (11)-(12) with T_i = {j | (i, j) in T} minimise
and what Table 1's constraint counts (|T| = 4 round(0.6 n) + n) and ranks assume.

KL_ADMM writes K = V^T U with V = U (eq. 5) and alternates closed-form column updates
(13), applied through Sherman-Morrison-Woodbury (25), with the multiplier step; the
penalty rho follows rule (15).  Each iteration costs O(nnz(L) r + sum_i (|T_i|^3 + r |T_i|^2)),
linear in n (eq. 26); no n x n matrix is formed.

References
----------
.. [1] E.-L. Hu and J. T. Kwok. Efficient kernel learning from side information using ADMM. Proceedings
   of the 23rd International Joint Conference on Artificial Intelligence (IJCAI 2013), pages
   1408–1414. https://www.ijcai.org/Abstract/13/211
.. [2] S. Boyd, N. Parikh, E. Chu, B. Peleato and J. Eckstein. Distributed optimization and statistical
   learning via the alternating direction method of multipliers. Foundations and Trends in Machine
   Learning 3 (2011), pages 1–122.
"""

from __future__ import annotations

import math
import time
from typing import Annotated, Callable

import numpy as np
import scipy.sparse as sp
import scipy.sparse.csgraph  # noqa: F401  (makes sp.csgraph available)

from ..errors import ConfigError
from ..graph import Laplacian, Scaling, knn_laplacian, scale_features
from ..params import Interval, Length, NonNegativeInt, Positive, PositiveInt
from ..registry import TRANSDUCTIVE_CHECKS, Checks, EstimatorSpec, solvers
from ..resources import DOUBLE, estimated
from ..kinds import SIM_EQ
from ..types import Constraints, SolverResult
from . import _admm_kernels as _k
from .protocol import Certificate, Checked, finish, warn_if_compiling


def pair_structure(constraints: Constraints, n: int, solver: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR (indptr, idx, tval) of T over ordered pairs from targets K_ij = T_ij (``sim_eq``)."""
    if len(constraints) == 0:
        raise ConfigError(f"solver '{solver}' needs pairwise targets, but the constraint set is empty.")
    if np.any(constraints.kind != SIM_EQ):
        raise ConfigError(f"solver '{solver}' needs pairwise targets K_ij = T_ij (kind sim_eq), as constraint "
                          "generator 'must_cannot' makes them; found other kinds.")
    i, j, t = constraints.i, constraints.j, constraints.bound
    off = i != j
    rows = np.concatenate([i, j[off]])
    cols = np.concatenate([j, i[off]])
    vals = np.concatenate([t, t[off]])
    order = np.lexsort((cols, rows))
    rows, cols, vals = rows[order], cols[order], vals[order]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.add.at(indptr, rows + 1, 1)
    return np.cumsum(indptr), np.ascontiguousarray(cols, dtype=np.int64), np.ascontiguousarray(vals)


def table1_rank(constraints: Constraints) -> int:
    """Largest r with r(r+1)/2 <= |T|, |T| counting ordered pairs (Hu & Kwok, Table 1)."""
    m = 2 * int(np.count_nonzero(constraints.i != constraints.j)) + int(np.count_nonzero(constraints.i == constraints.j))
    return int((math.isqrt(8 * m + 1) - 1) // 2)


def pcp_setup(dataset, constraints: Constraints, *, solver: str, neighbors: int, sigma_neighbors: int,
              laplacian: str, scale: str, gamma: float):
    """Laplacian, T structure and checks shared by ``admm`` and ``pcp_sdp``."""
    if dataset is None or dataset.X is None:
        raise ConfigError(f"solver '{solver}' builds the data manifold from features, but the dataset has none.")
    n = dataset.n
    X = scale_features(dataset.X, scale)
    L, graph = knn_laplacian(X, neighbors=neighbors, sigma_neighbors=sigma_neighbors, kind=laplacian)
    return L, pair_structure(constraints, n, solver), graph


def pcp_objective(V: np.ndarray, L: sp.csr_matrix, T, gamma: float, U: np.ndarray | None = None) -> float:
    """tr(V L U^T) + gamma/2 sum_T (v_i . u_j - T_ij)^2 (eq. 5; eq. 1 when U = V)."""
    U = V if U is None else U
    indptr, idx, tval = T
    return float(np.sum(V * (L @ U)) + 0.5 * gamma * _k.pair_loss(V, U, indptr, idx, tval))


def stationarity(V: np.ndarray, L: sp.csr_matrix, T, gamma: float) -> float:
    """||(L + gamma R) V||_F, R_ij = v_i . v_j - T_ij on T: half the gradient of (1) at K = V V^T with
    respect to V (0 at a first-order stationary point of the factored problem), O((nnz(L) + |T|) r)."""
    indptr, idx, tval = T
    V = np.ascontiguousarray(V)
    Z = np.ascontiguousarray(L @ V)
    _k.pair_gradient(V, indptr, idx, tval, float(gamma), Z)
    return float(np.linalg.norm(Z))


def pcp_arrays(L: sp.csr_matrix, constraints: Constraints) -> dict:
    """What the objective depends on, for the factors file: the Laplacian (CSR) and the pairs."""
    return {"laplacian": {"data": L.data, "indices": L.indices, "indptr": L.indptr, "shape": np.array(L.shape)},
            "pairs": np.column_stack([constraints.i, constraints.j, constraints.bound])}


def heldout_pair_accuracy(G: np.ndarray, constraints: Constraints) -> float:
    """Share of the pairs whose target (1 must-link, 0 cannot-link) lies on the same side of 1/2 as
    the learned normalized kernel cos(v_i, v_j) = K_ij / sqrt(K_ii K_jj). Needs no label."""
    gi, gj = G[constraints.i], G[constraints.j]
    norm = np.sqrt(np.einsum("ij,ij->i", gi, gi) * np.einsum("ij,ij->i", gj, gj))
    cos = np.einsum("ij,ij->i", gi, gj) / np.maximum(norm, 1e-300)
    return float(np.mean((cos >= 0.5) == (constraints.bound >= 0.5)))


def select_gamma(fit: Callable, constraints: Constraints, gammas: list[float], folds: int,
                 rng: np.random.Generator) -> tuple[float, np.ndarray]:
    """gamma of ``gammas`` with the best mean held-out pair accuracy (:func:`heldout_pair_accuracy`)
    over ``folds`` folds of the off-diagonal targets; ties go to the first in the list.

    A rule fixed before any result: it uses the constraints only, never the labels the paper
    scores with. ``fit(constraints, gamma, rng)`` solves on the training targets (the (i, i)
    targets always stay in training). The folds and the fits draw from generators spawned from
    ``rng``, which leaves ``rng`` itself untouched for the final fit. Returns (gamma, the mean
    accuracy per gamma).
    """
    import warnings

    from .protocol import ConvergenceWarning

    off = np.flatnonzero(constraints.i != constraints.j)
    if len(off) < folds:
        raise ConfigError(f"solver.gamma: a list needs at least select_folds = {folds} must/cannot-link pairs to hold "
                          f"out; the set has {len(off)}.")
    fold_rng, *fit_rngs = rng.spawn(1 + folds * len(gammas))
    assign = fold_rng.permutation(len(off)) % folds
    scores = np.zeros((len(gammas), folds))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)      # the selection fits are not results
        for f in range(folds):
            test = off[assign == f]
            train = np.setdiff1d(np.arange(len(constraints)), test)
            for g, gamma in enumerate(gammas):
                res = fit(constraints.subset(train), gamma, fit_rngs[f * len(gammas) + g])
                scores[g, f] = heldout_pair_accuracy(res.G, constraints.subset(test))
    mean = scores.mean(axis=1)
    return gammas[int(np.flatnonzero(mean == mean.max())[0])], mean


#: Why the PCP solvers take no ``kernel:`` (the message refusing one).
MANIFOLD = "it builds the Laplacian L of the features' k-NN graph (Hu & Kwok 2013, problem (1))"


def _iteration_cost(G0, constraints, *, dataset=None, rank=0, **settings):
    """Measured, not derived (``two_gaussians`` in 10-D, ``must_cannot``, 50 iterations; n = 4000, 16000,
    64000 at Table 1's rank r = 164, 329, 659): peak memory above the process's start 110 MB, 542 MB,
    3.80 GB, fitted by 8 n r + 2100 n doubles (the factors V, U, Λ and their work arrays; the k-NN graph's
    distance blocks and the per-point constraint sets); 1.3, 14.5, 149 s, about n r² / 8e9 s an iteration.
    The rank is ``rank``, else Table 1's from the constraint count (pairs i != j counted twice)."""
    n = dataset.n if dataset is not None else np.shape(G0)[0]
    r = rank or (table1_rank(constraints) if isinstance(constraints, Constraints)
                 else (math.isqrt(16 * len(constraints) + 1) - 1) // 2)
    r = max(min(r, n), 1)
    return (f"solver 'admm' on {n} points at rank {r}: one iteration", DOUBLE * (8.0 * n * r + 2100.0 * n),
            n * r * r / 8e9, "A smaller rank (solver.rank) costs O(n r) memory and O(n r²) an iteration.")


#: What the generic checks need (:mod:`kernlearn_cli.testing`): an instance, another value per setting.
ADMM_CHECKS = Checks(
    instance="kernlearn_cli.testing.instances:admm",
    alternatives={"gamma": 10.0, "rank": 2, "neighbors": 8, "sigma_neighbors": 3, "laplacian": "unnormalized",
                  "scale": "standard", "rho": 1.0, "tol": 1e-2, "max_iter": 3, "select_folds": 3},
    unused={"select_folds": "only read when gamma is a list (held-out selection)"})


@solvers.register("admm", checks=ADMM_CHECKS, instead_of_kernel=MANIFOLD, warmup={"constraints": {"name": "must_cannot", "count": 20}},
                  budget="max_iter", estimator=EstimatorSpec(
                      "ADMMKernel", "Pairwise constraint propagation by ADMM (Hu & Kwok 2013, KL_ADMM); "
                      "transductive.", constraints="must_cannot", expected_failed={
                          **TRANSDUCTIVE_CHECKS,
                          "check_estimators_nan_inf": "the check fits 10 points; the graph's bandwidth needs 10 neighbours",
                          "check_fit2d_1feature": "the check fits 10 points; the graph's bandwidth needs 10 neighbours"}))
@estimated(_iteration_cost, per="iteration")
def admm(G0: np.ndarray, constraints: Constraints, *, dataset, rng,
         gamma: Positive | Annotated[list[Positive], Length(1)] = 1.0, rank: NonNegativeInt = 0,
         neighbors: PositiveInt = 5, sigma_neighbors: PositiveInt = 10, laplacian: Laplacian = "normalized",
         scale: Scaling = "none", rho: Positive = 100.0, tol: Positive = 1e-4, max_iter: PositiveInt = 500,
         select_folds: Annotated[int, Interval(2, None)] = 5, callback: Callable | None = None) -> SolverResult:
    """KL_ADMM (Hu & Kwok 2013, Alg. 1) for the pairwise-constraint-propagation problem (1).

    Parameters
    ----------
    G0 : None
        Not used: the manifold comes from the dataset's features (a config refuses ``kernel:``).
    constraints : Constraints
        Targets K_ij = T_ij (kind ``sim_eq``), e.g. from generator ``must_cannot``.
    dataset : Dataset
        Its features define the k-NN graph and Laplacian L.
    rng : numpy.random.Generator
        Draws the random V^0 = U^0 (rows N(0, I/r)).
    gamma : float or list of float
        Weight of the pair term in (1), > 0. Hu & Kwok do not state theirs; a (non-empty) list is
        chosen from by held-out constraints (:func:`select_gamma`), then the solver runs on all of them.
    rank : int
        r, 1 <= r <= n; 0 (default) takes Table 1's rule, the largest r with r(r+1)/2 <= |T|.
    neighbors, sigma_neighbors : int
        The manifold's k-NN graph (1 <= k < n), see :func:`kernlearn_cli.graph.knn_laplacian`.
    laplacian : {"normalized", "unnormalized"}
        Its Laplacian, see :func:`kernlearn_cli.graph.knn_laplacian`.
    scale : {"none", "minmax", "standard"}
        Feature scaling before the graph (:func:`kernlearn_cli.graph.scale_features`).
    rho : float
        Initial penalty (> 0; paper: 100), then rule (15).
    tol : float
        Stop when both residuals (14), as relative changes, are below tol (> 0):
        ||V - U||_F <= tol ||V||_F and ||V^{k+1} - V^k||_F (= dual / rho) <= tol ||V||_F.
    max_iter : int
        IterMax (>= 1; paper: 500; 100 on the adult sets).
    select_folds : int
        Folds (>= 2) of the held-out selection of ``gamma`` (with a list).

    Returns
    -------
    SolverResult
        ``G = V`` (n x r, K = V V^T), ``objective`` = (1) at K = V V^T, history ``objective``,
        ``primal``, ``dual``, ``rho`` per iteration; arrays ``laplacian`` (CSR group), ``pairs``.
        With a list of ``gamma``: history ``gamma_grid`` and ``heldout_accuracy``, info ``gamma``
        the chosen one.
    """
    if isinstance(gamma, (list, tuple)):
        settings = dict(neighbors=neighbors, sigma_neighbors=sigma_neighbors, laplacian=laplacian, scale=scale,
                        rho=rho, tol=tol, max_iter=max_iter)
        r = rank or (table1_rank(constraints) if len(constraints) else 0)
        chosen, curve = select_gamma(
            lambda C, g, child: admm(G0, C, dataset=dataset, rng=child, gamma=g, rank=r, **settings),
            constraints, gamma, select_folds, rng)
        result = admm(G0, constraints, dataset=dataset, rng=rng, gamma=chosen, rank=rank, callback=callback, **settings)
        result.history.update(gamma_grid=np.asarray(gamma, dtype=np.float64), heldout_accuracy=curve)
        result.certificate["figures"].update(gamma_selected_by=f"held-out pair accuracy, {select_folds} folds")
        return result
    L, T, graph = pcp_setup(dataset, constraints, solver="admm", neighbors=neighbors,
                            sigma_neighbors=sigma_neighbors, laplacian=laplacian, scale=scale, gamma=gamma)
    n = dataset.n
    r = rank or table1_rank(constraints)
    if not 1 <= r <= n:
        raise ConfigError(f"solver.rank = {r} must be between 1 and n = {n}.")
    V0 = rng.standard_normal((n, r)) / math.sqrt(r)
    # Work in reverse Cuthill-McKee order of the graph, so that the rows the sparse products
    # gather are near each other in memory (a relabelling: the iterates are the same up to rounding).
    # Measured: 20-25% less time on the adult sets a3a-a6a (benchmarks/scale/bench_admm.py).
    perm = sp.csgraph.reverse_cuthill_mckee(L, symmetric_mode=True).astype(np.int64)
    inv = np.empty_like(perm)
    inv[perm] = np.arange(n)
    Lp = sp.csr_matrix(L[perm][:, perm])
    Lp.sort_indices()
    Cp = Constraints(inv[constraints.i], inv[constraints.j], constraints.kind, constraints.bound)
    Tp = pair_structure(Cp, n, "admm")
    indptr, idx, tval = Tp
    V = np.ascontiguousarray(V0[perm])
    U = V.copy()
    Lam = np.zeros((n, r))
    Vn, Un = np.empty_like(V), np.empty_like(U)
    history = {"objective": [], "primal": [], "dual": [], "rho": []}
    stopped_by = "max_iter"
    warn_if_compiling("admm", _k.csr_times, _k.half_step, _k.multiplier_step, _k.pair_loss)
    t0 = time.perf_counter()
    it = 0
    LU, LV = np.empty_like(U), np.empty_like(V)
    _k.csr_times(Lp.indptr, Lp.indices, Lp.data, U, LU)
    while it < max_iter:
        it += 1
        _k.half_step(U, LU, Lam, -1.0, indptr, idx, tval, rho, gamma, Vn)     # (13): v_i = A_i^-1 c_i
        _k.csr_times(Lp.indptr, Lp.indices, Lp.data, Vn, LV)
        _k.half_step(Vn, LV, Lam, 1.0, indptr, idx, tval, rho, gamma, Un)     # (13): u_i = B_i^-1 d_i
        p2, c2, v2 = _k.multiplier_step(V, Vn, Un, Lam, rho)                  # line 8
        primal, dual, size = math.sqrt(p2), rho * math.sqrt(c2), math.sqrt(v2)  # (14)
        V, Vn = Vn, V
        U, Un = Un, U
        _k.csr_times(Lp.indptr, Lp.indices, Lp.data, U, LU)
        objective = float(np.sum(V * LV)) + 0.5 * gamma * _k.pair_loss(V, V, indptr, idx, tval)
        for key, value in (("objective", objective), ("primal", primal), ("dual", dual), ("rho", rho)):
            history[key].append(value)
        if callback is not None:                          # the residuals as the stop rule and certificate test them
            callback(it, primal_residual=Checked(primal / max(size, 1e-300), tol),
                     dual_residual=Checked(dual / rho / max(size, 1e-300), tol), objective=objective, rho=rho)
        if max(primal, dual / rho) <= tol * size:        # ||V - U||, ||V^k+1 - V^k|| relative to ||V||
            stopped_by = "tolerance"
            break
        if primal > 10.0 * dual:                          # (15)
            rho = 2.0 * rho
        elif dual > 10.0 * primal:
            rho = max(rho / 2.0, 10.0)
    seconds = time.perf_counter() - t0
    t1 = time.perf_counter()
    stationary = stationarity(V[inv], L, T, gamma)
    check_seconds = time.perf_counter() - t1
    cert = Certificate(
        rule="relative residuals (14): ||V - U||_F <= tol ||V||_F and ||V^k+1 - V^k||_F <= tol ||V||_F "
             "(Hu & Kwok's IterMax is max_iter)",
        checks={"primal_residual": (primal / max(size, 1e-300), tol),
                "dual_residual": (dual / history["rho"][-1] / max(size, 1e-300), tol)},   # the rho of (14), not (15)'s
        figures={"v_minus_u": float(np.linalg.norm(V - U)), "rho": rho, "iterations": it, "max_iter": max_iter,
                 "stationarity": stationary},
        stopped_by=stopped_by)
    return finish(SolverResult(
        G=V[inv], objective=pcp_objective(V[inv], L, T, gamma), iterations=it, converged=False,
        history={k: np.asarray(v) for k, v in history.items()},
        info={"rank": r, "gamma": float(gamma), "pair_count": "twice", "laplacian": laplacian, "scale": scale,
              "neighbors": neighbors, "sigma": graph["sigma"], "graph_components": graph["components"],
              "primal_residual": history["primal"][-1], "dual_residual": history["dual"][-1],
              "v_minus_u": float(np.linalg.norm(V - U)), "solver_seconds": seconds,
              "certificate_seconds": check_seconds},
        arrays=pcp_arrays(L, constraints)), cert, "admm")
