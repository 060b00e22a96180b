"""The PCP problem (Hu & Kwok 2013, eq. 1) as a full SDP, by an off-the-shelf convex solver.

A reference for small n (the global optimum that KL_ADMM's objective is checked against):
the same Laplacian, targets and pair count as :func:`kernlearn_cli.solvers.admm.admm`,
solved over the n x n PSD cone with cvxpy (Clarabel by default, or SCS).  Needs the
optional extra ``pip install 'kernlearn[sdp]'`` (cvxpy, clarabel).

References
----------
.. [1] E.-L. Hu and J. T. Kwok. Efficient kernel learning from side information using ADMM. Proceedings
   of the 23rd International Joint Conference on Artificial Intelligence (IJCAI 2013), pages
   1408–1414. https://www.ijcai.org/Abstract/13/211
"""

from __future__ import annotations

import time
from typing import Literal

import numpy as np

from ..errors import ConfigError, SolverError
from ..graph import Laplacian, Scaling
from ..linalg import eigh
from ..params import Positive, PositiveInt
from ..registry import Checks, solvers
from ..resources import estimated
from ..types import Constraints, SolverResult
from .admm import MANIFOLD, pcp_arrays, pcp_setup
from .protocol import Certificate, finish

MAX_N = 400


#: What the generic checks need (:mod:`kernlearn_cli.testing`): an instance, another value per setting.
PCP_SDP_CHECKS = Checks(
    instance="kernlearn_cli.testing.instances:pcp",
    alternatives={"gamma": 10.0, "neighbors": 8, "sigma_neighbors": 3, "laplacian": "unnormalized",
                  "scale": "standard", "backend": "scs", "kkt_tol": 1e-14})



def _sdp_cost(G0, constraints, *, dataset=None, **settings):
    """Measured with Clarabel (``two_gaussians`` in 4-D, ``must_cannot``; n = 50, 70, 90, 110): peak memory
    above the process's imports 88 MB, 329 MB, 884 MB, 1.96 GB, about 13.5 n⁴ bytes (the interior point's
    KKT system over the n(n+1)/2 entries of K); 1.5, 5.5, 18.6, 47.5 s, about n⁵ / 3.4e8 s.  Taken for
    ``backend: scs`` too (not measured)."""
    n = dataset.n if dataset is not None else np.shape(G0)[0]
    return (f"solver 'pcp_sdp': an interior-point SDP over {n} x {n} kernels", 13.5 * float(n) ** 4,
            float(n) ** 5 / 3.4e8, "Solver 'admm' solves the same problem in O(n r) memory (Hu & Kwok 2013).")


@solvers.register("pcp_sdp", checks=PCP_SDP_CHECKS, instead_of_kernel=MANIFOLD)
@estimated(_sdp_cost)
def pcp_sdp(G0: np.ndarray, constraints: Constraints, *, dataset, gamma: Positive = 1.0, neighbors: PositiveInt = 5,
            sigma_neighbors: PositiveInt = 10, laplacian: Laplacian = "normalized", scale: Scaling = "none",
            backend: Literal["clarabel", "scs"] = "clarabel", kkt_tol: Positive = 1e-6) -> SolverResult:
    """min over K >= 0 of tr(K L) + gamma/2 sum_{(i,j) in T} (K_ij - T_ij)^2 (ordered pairs), exactly.

    Parameters as for ``admm``; ``backend`` is the cvxpy solver (``clarabel`` or ``scs``).
    Returns ``G`` with K = G G^T from the eigendecomposition of the optimal K (negative
    rounding eigenvalues clipped), ``objective`` = (1) at that K.  Its certificate checks the
    KKT conditions of the returned K independently of the backend: Z = grad f(K) = L + gamma R
    (R_ij = K_ij - T_ij on T) must be PSD and complementary to K, each to ``kkt_tol``
    (relative: -lambda_min(Z) / ||Z||_2 and |<Z, K>| / (||Z||_F ||K||_F)).

    Parameters
    ----------
    gamma : float
        Weight of the pair term (> 0), as for ``admm``.
    neighbors, sigma_neighbors : int
        The manifold's k-NN graph (1 <= k < n), see :func:`kernlearn_cli.graph.knn_laplacian`.
    laplacian : {"normalized", "unnormalized"}
        Its Laplacian, see :func:`kernlearn_cli.graph.knn_laplacian`.
    scale : {"none", "minmax", "standard"}
        Feature scaling before the graph (:func:`kernlearn_cli.graph.scale_features`).
    backend : {"clarabel", "scs"}
        The cvxpy solver.
    kkt_tol : float
        Relative tolerance (> 0) of the certificate's KKT checks.
    """
    try:
        import cvxpy as cp
    except ImportError:
        raise ConfigError("solver 'pcp_sdp' needs cvxpy: pip install 'kernlearn[sdp]' (cvxpy and clarabel).") from None
    n = dataset.n if dataset is not None else G0.shape[0]
    if n > MAX_N:
        raise ConfigError(f"solver 'pcp_sdp' solves an n x n SDP and is meant for small n (<= {MAX_N}); this dataset "
                          f"has {n} points. Use solver 'admm'.")
    names = {"clarabel": cp.CLARABEL, "scs": cp.SCS}
    L, (indptr, idx, tval), graph = pcp_setup(dataset, constraints, solver="pcp_sdp", neighbors=neighbors,
                                              sigma_neighbors=sigma_neighbors, laplacian=laplacian, scale=scale,
                                              gamma=gamma)
    import scipy.sparse as sp

    rows = np.repeat(np.arange(n), np.diff(indptr))
    K = cp.Variable((n, n), PSD=True)
    # tr(K L) = <K, L>; the pair entries through a sparse selector of vec(K) (column-major)
    S = sp.csr_matrix((np.ones(len(rows)), (np.arange(len(rows)), idx * n + rows)), shape=(len(rows), n * n))
    objective = cp.sum(cp.multiply(K, L.toarray())) + 0.5 * gamma * cp.sum_squares(S @ cp.vec(K, order="F") - tval)
    problem = cp.Problem(cp.Minimize(objective))
    t0 = time.perf_counter()
    problem.solve(solver=names[backend])
    seconds = time.perf_counter() - t0
    if problem.status not in ("optimal", "optimal_inaccurate"):
        raise SolverError(f"solver 'pcp_sdp': cvxpy/{backend} ended with status '{problem.status}' (this cell fails; "
                          f"the others run).")
    Kv = (K.value + K.value.T) / 2
    ev, Q = eigh(Kv)
    G = Q * np.sqrt(np.clip(ev, 0.0, None))
    Kp = G @ G.T
    value = float(np.sum(Kp * L.toarray()) + 0.5 * gamma * np.sum((Kp[rows, idx] - tval) ** 2))
    Z = L.toarray()
    np.add.at(Z, (rows, idx), gamma * (Kp[rows, idx] - tval))          # grad f(K) = L + gamma R
    zev = np.linalg.eigvalsh(Z)
    znorm = max(abs(zev[0]), abs(zev[-1]), 1e-300)
    cert = Certificate(
        rule="the KKT conditions of the returned K to kkt_tol: grad f(K) PSD "
             "(relative smallest eigenvalue) and complementary to K",
        checks={"dual_infeasibility": (max(0.0, -zev[0]) / znorm, kkt_tol),
                "complementarity": (abs(float(np.sum(Z * Kp))) / max(np.linalg.norm(Z) * np.linalg.norm(Kp), 1e-300),
                                    kkt_tol)},
        figures={"status": problem.status}, stopped_by="tolerance")
    return finish(SolverResult(
        G=G, objective=value, iterations=1, converged=False, history={},
        info={"gamma": float(gamma), "pair_count": "twice", "laplacian": laplacian, "backend": backend,
              "status": problem.status, "sigma": graph["sigma"], "graph_components": graph["components"],
              "rank": int(np.sum(ev > 1e-8 * max(ev.max(), 1e-300))), "solver_seconds": seconds},
        arrays=pcp_arrays(L, constraints)), cert, "pcp_sdp")
