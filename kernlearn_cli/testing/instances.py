"""Small problem instances: what the generic checks (:mod:`kernlearn_cli.testing.checks`) and the test
suite solve.  A solver names its instance in ``register(..., checks=Checks(instance=...))``
(:class:`kernlearn_cli.registry.Checks`), as ``"kernlearn_cli.testing.instances:<function>"``, so a run
never imports this module.

Each ``*_instance`` builder takes a seed and sizes; the functions without that suffix are the
solvers' declared instances, ``seed -> (G0, constraints, keyword arguments)``.
"""

import warnings

import numpy as np

from ..registry import Registry, solvers
from ..types import KIND_CODE, PAIR_KINDS, Constraints


# ---- builders ------------------------------------------------------------------------------------

def feasible_instance(seed, n=40, r=6, c=25, kinds=PAIR_KINDS, full_rank=False):
    """Random G0 and constraints that a known K* = G0 M* G0^T satisfies (so a solution exists)."""
    rng = np.random.default_rng(seed)
    G0 = rng.standard_normal((n, n if full_rank else r))
    R = rng.standard_normal((G0.shape[1],) * 2) * 0.3
    Kstar = G0 @ (np.eye(G0.shape[1]) + R @ R.T) @ G0.T
    i = rng.integers(0, n, c)
    j = (i + 1 + rng.integers(0, n - 1, c)) % n
    kind = rng.choice(kinds, c)
    dist = Kstar[i, i] + Kstar[j, j] - 2 * Kstar[i, j]
    sim = Kstar[i, j]
    val = np.where(np.char.startswith(kind.astype(str), "dist"), dist, sim)
    slackv = 0.1 * np.abs(val) + 0.05
    bound = np.select([np.char.endswith(kind.astype(str), "le"), np.char.endswith(kind.astype(str), "ge")],
                      [val + slackv, val - slackv], val)
    return G0, Constraints.from_lists(i, j, kind, bound)


def definiteboost_instance(seed, n=10, c=14, kinds=PAIR_KINDS, rank=None):
    """Identity (or rank-`rank`) start and constraints met by a known kernel T with tr T = tr K0."""
    rng = np.random.default_rng(seed)
    if rank is None:
        G0 = np.eye(n)
        X = rng.standard_normal((n, 3))
        T = X @ X.T + 0.5 * np.eye(n)
    else:
        G0 = rng.standard_normal((n, rank))
        R = rng.standard_normal((rank, rank)) * 0.4
        T = G0 @ (np.eye(rank) + R @ R.T) @ G0.T
    T *= np.trace(G0 @ G0.T) / np.trace(T)
    i = rng.integers(0, n, c)
    j = (i + 1 + rng.integers(0, n - 1, c)) % n
    kind = rng.choice(kinds, c).astype(str)
    val = np.where(np.char.startswith(kind, "dist"), T[i, i] + T[j, j] - 2 * T[i, j], T[i, j])
    slack = 0.05 * np.abs(val) + 0.01
    bound = np.select([np.char.endswith(kind, "le"), np.char.endswith(kind, "ge")], [val + slack, val - slack], val)
    return G0, Constraints.from_lists(i, j, kind, bound)


def random_factor(rng, n, r=None, cond=20.0):
    """A full-rank (r = n) or low-rank random kernel factor with moderate conditioning."""
    r = n if r is None else r
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return Q[:, :r] * np.sqrt(np.geomspace(1.0, 1.0 / cond, r))


def meg_stream(rng, G_ref, count, noise=0.0, sim_share=0.0):
    """dist_eq / sim_eq examples labelled by K_ref = G_ref G_refᵀ, optionally with label noise."""
    n = G_ref.shape[0]
    K = G_ref @ G_ref.T
    i = rng.integers(0, n, count)
    j = (i + 1 + rng.integers(0, n - 1, count)) % n
    sim = rng.random(count) < sim_share
    j = np.where(sim & (rng.random(count) < 0.3), i, j)           # a few diagonal entries K_ii
    y = np.where(sim, K[i, j], K[i, i] + K[j, j] - 2 * K[i, j])
    y = y + noise * np.abs(y).mean() * rng.standard_normal(count)
    kind = np.where(sim, KIND_CODE["sim_eq"], KIND_CODE["dist_eq"]).astype(np.int8)
    return Constraints(i, j, kind, y)


def trin_instance(seed=0, n=24, rate=0.03):
    """Points in 4-D with 3 random labels, an RBF K0 (Cholesky factor) and a random share of the
    triplets (i, j, k) with i, k of one class and j of another."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = rng.integers(0, 3, n)
    K0 = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 8.0) + 1e-2 * np.eye(n)
    tr = [(i, j, k) for i in range(n) for j in range(n) for k in range(n)
          if y[i] != y[j] and y[i] == y[k] and i != k and rng.random() < rate]
    tr = np.array(tr)
    return X, y, np.linalg.cholesky(K0), Constraints.triplets(tr[:, 0], tr[:, 1], tr[:, 2])


def solve(name: str, seed: int = 0, settings: bool = False, registry: Registry | None = None, **extra):
    """The solver on its declared instance (``settings``: the one its alternatives run on), ``extra``
    replacing the instance's keyword arguments; convergence warnings silenced."""
    from ..solvers.protocol import ConvergenceWarning

    entry = (registry or solvers).get(name)
    G0, C, kw = entry.checks.make(seed, settings=settings)
    if entry.instead_of_kernel:
        G0 = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return entry.func(G0, C, **{**kw, **extra})


# ---- the solvers' declared instances: seed -> (G0, constraints, keyword arguments) ------------------

def pairs(seed):
    """Feasible pair constraints of every kind on a rank-5 G0 of 30 points (12 rows)."""
    G0, C = feasible_instance(seed, n=30, r=5, c=12)
    return G0, C, {}


def distance_pairs(seed):
    """Feasible distance constraints (positive bounds, so that a finite ``slack`` applies)."""
    G0, C = feasible_instance(seed, n=30, r=5, c=12, kinds=("dist_le", "dist_ge", "dist_eq"))
    return G0, C, {}


def definiteboost(seed):
    """:func:`definiteboost_instance`, solved with exact projections and the dual correction."""
    return (*definiteboost_instance(seed)[:2], {"dual_correction": True, "projection": "exact"})


def trin(seed, tol=1e-6):
    """:func:`trin_instance` (16 points), gamma 4."""
    _, _, G0, C = trin_instance(seed, n=16, rate=0.05)
    return G0, C, {"gamma": 4.0, "tol": tol}


def pr_cg(seed):
    """:func:`trin` at tol 1e-4 (PR+ is slow and stalls at rounding near 1e-6)."""
    return trin(seed, tol=1e-4)


def pr_cg_short(seed):
    """:func:`trin` with at most 30 iterations (its settings' alternatives)."""
    return (*trin(seed)[:2], {"gamma": 4.0, "max_iter": 30})


def pcp(seed):
    """Must-link/cannot-link pairs on two Gaussians (40 points in 4-D); no G0."""
    from ..constraints.must_cannot import must_cannot
    from ..data.synthetic import two_gaussians

    ds = two_gaussians(n=40, dim=4, seed=seed)
    return None, must_cannot(ds, None, rng=np.random.default_rng(seed)), {"dataset": ds}


def admm(seed):
    """:func:`pcp` with the runner's rng and 3000 iterations at most."""
    _, C, kw = pcp(seed)
    return None, C, {**kw, "rng": np.random.default_rng(seed), "max_iter": 3000}


def nystrom(seed):
    """16 labeled points of two Gaussians (60 points in 3-D), 8 landmarks; no G0."""
    from ..constraints.labeled import labeled_subset
    from ..data.synthetic import two_gaussians

    ds = two_gaussians(n=60, dim=3, seed=seed)
    C = labeled_subset(ds, None, rng=np.random.default_rng(seed), count=16)
    return None, C, {"dataset": ds, "rng": np.random.default_rng(seed + 1), "landmarks": 8}


def nystrom_prior(seed):
    """:func:`nystrom` with a path of two priors' weights."""
    G0, C, kw = nystrom(seed)
    return G0, C, {**kw, "lam": [0.1, 1.0]}


def nystrom_prior_single(seed):
    """:func:`nystrom` with one weight and 200 iterations at most (its settings' alternatives)."""
    G0, C, kw = nystrom(seed)
    return G0, C, {**kw, "max_iter": 200}


def meg(seed):
    """A stream of 60 squared distances labelled by a random 8 x 8 kernel, from the identity."""
    rng = np.random.default_rng(seed)
    F = random_factor(rng, 8)
    return np.eye(8), meg_stream(rng, F, 60), {"reference": F}


# ---- the other kinds' instances --------------------------------------------------------------------

def kernel_dataset(seed=0):
    """Two Gaussians (30 points in 4-D) with unequal feature scales (so ``standardize`` matters) and a
    precomputed RBF kernel ``K``: what a kernel's settings are checked on."""
    from ..data.synthetic import two_gaussians

    ds = two_gaussians(n=30, dim=4, seed=seed)
    ds.X = ds.X * np.array([1.0, 3.0, 0.5, 2.0])
    ds.K = np.exp(-((ds.X[:, None] - ds.X[None]) ** 2).sum(-1) / 8.0)
    return ds


def overlapping_factor(seed=0):
    """A factor G (40 x 6) of two Gaussians whose classes overlap, so that errors move with a setting;
    and the dataset: what an evaluator's settings are checked on."""
    from ..data.synthetic import two_gaussians

    ds = two_gaussians(n=40, dim=3)
    rng = np.random.default_rng(1 + seed)
    return 0.5 * ds.X @ rng.standard_normal((3, 6)) + rng.standard_normal((40, 6)), ds


def clustered_factor(seed=0):
    """A factor G (40 x 3) of two Gaussians with clusters k-means can find in several ways; and the dataset."""
    from ..data.synthetic import two_gaussians

    ds = two_gaussians(n=40, dim=3)
    rng = np.random.default_rng(1 + seed)
    return ds.X @ rng.standard_normal((3, 3)) + 0.5 * rng.standard_normal((40, 3)), ds


def _with_result(solver: str, seed: int):
    return (*overlapping_factor(seed), solve(solver, seed))


def meg_result(seed=0):
    """:func:`overlapping_factor` and a ``meg`` result (what ``meg_loss`` reads)."""
    return _with_result("meg", seed)


def nystrom_prior_result(seed=0):
    """:func:`overlapping_factor` and a ``nystrom_prior`` result on a path of priors (``nka_criterion``)."""
    return _with_result("nystrom_prior", seed)


def admm_result(seed=0):
    """:func:`overlapping_factor` and an ``admm`` result (``primal_residual``)."""
    return _with_result("admm", seed)
