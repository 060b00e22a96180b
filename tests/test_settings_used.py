"""Every declared setting is used: changing it changes the result, or it is listed here as unused.

For each registered solver (and kernel, on one small dataset) :data:`ALTERNATIVES` gives, per
declared setting, another valid value; the component is run with the default and with that value
on a tiny instance and the results must differ (the factor G, the iteration count, or the
certificate's measured values and stop reason).  A setting that does not change the result on
its instance is listed in :data:`UNUSED` with the reason.  A new setting without an entry in either
fails :func:`test_every_setting_has_an_alternative`, so nobody forgets to check it.

The solver-level question -- does it use the initial kernel K0 (the config's ``kernel:``)? -- is
:func:`test_kernel_is_used_or_refused`: a solver registered with ``instead_of_kernel`` must refuse a
config's ``kernel:``, the others must change their result when K0 changes.
"""

import inspect
import json
import warnings

import numpy as np
import pytest

from kernlearn_cli.config import Cell, bind_cell
from kernlearn_cli.constraints.labeled import labeled_subset
from kernlearn_cli.data.synthetic import two_gaussians
from kernlearn_cli.errors import ConfigError
from kernlearn_cli.registry import kernels, solvers
from kernlearn_cli.solvers.protocol import ConvergenceWarning

from test_burg import feasible_instance
from test_certificates import INSTANCES, _trin
from test_meg import random_factor, stream


def _burg_like(seed):
    """Feasible distance constraints (positive bounds, so that a finite ``slack`` applies)."""
    G0, C = feasible_instance(seed, n=30, r=5, c=12, kinds=("dist_le", "dist_ge", "dist_eq"))
    return G0, C, {}


def _meg(seed):
    rng = np.random.default_rng(seed)
    F = random_factor(rng, 8)
    return np.eye(8), stream(rng, F, 60), {"reference": F}


def _nystrom_prior(seed):
    G0, C, kw = INSTANCES["nystrom"](seed)
    return G0, C, {**kw, "max_iter": 200}


#: The tiny instance of each solver: seed -> (G0, constraints, keyword arguments).
SOLVER_INSTANCES = {**INSTANCES, "burg": _burg_like, "von_neumann": _burg_like, "meg": _meg,
                    "nystrom_prior": _nystrom_prior,
                    "pr_cg": lambda seed: (*_trin(seed)[:2], {"gamma": 4.0, "max_iter": 30})}

#: Per solver, per declared setting: a valid value other than the default.
ALTERNATIVES = {
    "burg": {"tol": 1e-9, "feas_tol": 1e-9, "max_sweeps": 2, "slack": 0.1, "certify_every": 1,
             "slack_if_infeasible": 1.0},
    "von_neumann": {"tol": 1e-9, "feas_tol": 1e-9, "max_sweeps": 2, "slack": 0.1, "certify_every": 1,
                    "slack_if_infeasible": 1.0},
    "definiteboost": {"projection": "approximate", "dual_correction": False, "order": "cyclic", "tol": 1e-8,
                      "feas_tol": 1e-8, "max_steps": 5},
    "meg": {"eta": 0.5, "iterations": 10, "comparison": "none"},
    "initial": {},
    "trin": {"loss": "lmnn", "gamma": 0.25, "tol": 1e-9, "max_iter": 2, "path": 2.0, "gamma_min": 1.0,
             "normalize": False, "t": 0.3, "itml_percentiles": [10.0, 90.0], "max_cg": 1, "keep_path": True,
             "stop": "relative", "trust_norm": "natural", "max_path_iter": 2},
    "pr_cg": {"loss": "lmnn", "gamma": 0.25, "tol": 1e3, "max_iter": 2, "path": 2.0, "gamma_min": 1.0,
              "normalize": False, "t": 0.3, "itml_percentiles": [10.0, 90.0], "keep_path": True,
              "stop": "relative", "precondition": True, "max_path_iter": 1},
    "admm": {"gamma": 10.0, "rank": 2, "neighbors": 8, "sigma_neighbors": 3, "laplacian": "unnormalized",
             "scale": "standard", "rho": 1.0, "tol": 1e-2, "max_iter": 3, "select_folds": 3},
    "pcp_sdp": {"gamma": 10.0, "neighbors": 8, "sigma_neighbors": 3, "laplacian": "unnormalized",
                "scale": "standard", "backend": "scs", "kkt_tol": 1e-14},
    "nystrom": {"landmarks": 5, "landmark_method": "uniform", "rcond": 0.5},
    "nystrom_prior": {"landmarks": 5, "landmark_method": "uniform", "lam": 0.01, "tol": 1e-2, "gap_tol": 1e-1,
                      "max_iter": 1, "rcond": 0.5},
}

#: Settings that do not change the result on their instance here, with the reason.
UNUSED = {
    ("burg", "slack_if_infeasible"): "only acts on a constraint set certified infeasible (tests/test_infeasibility.py)",
    ("von_neumann", "slack_if_infeasible"): "only acts on a constraint set certified infeasible "
                                           "(tests/test_infeasibility.py)",
    ("trin", "itml_percentiles"): "only read by loss 'itml' (the instance has triplets)",
    ("pr_cg", "itml_percentiles"): "only read by loss 'itml' (the instance has triplets)",
    ("trin", "gamma_min"): "only read on a regularization path (path > 0)",
    ("pr_cg", "gamma_min"): "only read on a regularization path (path > 0)",
    ("admm", "select_folds"): "only read when gamma is a list (held-out selection)",
    ("burg", "certify_every"): "sets how often the certificate is computed, not the iterates; the instance "
                               "converges before its check falls due either way",
    ("von_neumann", "certify_every"): "sets how often the certificate is computed, not the iterates; the "
                                      "instance converges before its check falls due either way",
    ("meg", "comparison"): "chooses the comparison matrix U of the loss bound (history, info), not the iterates",
    ("trin", "keep_path"): "keeps the path's factors in memory for evaluators (result.path); G is the same",
    ("pr_cg", "keep_path"): "keeps the path's factors in memory for evaluators (result.path); G is the same",
    ("trin", "t"): "the knee of the smooth hinge, not read by the instance's loss 'log'",
    ("pr_cg", "t"): "the knee of the smooth hinge, not read by the instance's loss 'log'",
    ("nystrom_prior", "tol"): "T is all ones: the closed-form start is the optimum, certified at the first check",
    ("nystrom_prior", "gap_tol"): "T is all ones: the closed-form start is the optimum, certified at the first check",
    ("nystrom_prior", "max_iter"): "T is all ones: the closed-form start is the optimum, certified at the first "
                                   "check",
}


def fingerprint(result) -> tuple:
    """What a setting may change: G (its bits), the iteration count, the certificate's measured values."""
    cert = result.certificate or {}
    checks = {k: v["value"] for k, v in cert.get("checks", {}).items()}
    return (np.asarray(result.G).tobytes(), np.asarray(result.G).shape, int(result.iterations),
            json.dumps(checks, sort_keys=True), cert.get("stopped_by"), result.converged)


def run_solver(name, **settings):
    G0, C, kw = SOLVER_INSTANCES[name](0)
    if solvers.get(name).instead_of_kernel:
        G0 = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return solvers.get(name).func(G0, C, **{**kw, **settings})


def _defaults(name) -> dict:
    """The instance's own settings override the declared defaults (e.g. ``landmarks: 8``)."""
    return SOLVER_INSTANCES[name](0)[2]


SOLVER_CASES = [(name, key) for name in sorted(ALTERNATIVES) for key in sorted(ALTERNATIVES[name])]


def test_every_setting_has_an_alternative():
    """Each registered solver is in the table, with an alternative for each declared setting and no stale one."""
    for entry in solvers.entries():
        assert entry.name in ALTERNATIVES, f"solver '{entry.name}' has no entry in ALTERNATIVES"
        declared = set(entry.parameters())
        assert set(ALTERNATIVES[entry.name]) == declared, (
            f"solver '{entry.name}': settings without an alternative value {sorted(declared - set(ALTERNATIVES[entry.name]))}, "
            f"stale entries {sorted(set(ALTERNATIVES[entry.name]) - declared)}")
    for entry in kernels.entries():
        assert set(KERNEL_ALTERNATIVES.get(entry.name, {})) == set(entry.parameters()), entry.name


@pytest.mark.parametrize("name,key", SOLVER_CASES, ids=[f"{n}.{k}" for n, k in SOLVER_CASES])
def test_solver_setting_changes_the_result(name, key):
    value = ALTERNATIVES[name][key]
    current = _defaults(name).get(key, solvers.get(name).parameters()[key].default)
    assert value != current, f"{name}.{key}: the alternative equals the instance's value {current!r}"
    base, changed = fingerprint(run_solver(name)), fingerprint(run_solver(name, **{key: value}))
    if (name, key) in UNUSED:
        assert base == changed, f"{name}.{key} is listed as unused ({UNUSED[(name, key)]}) but changes the result"
    else:
        assert base != changed, f"{name}.{key} = {value!r} (instead of {current!r}) does not change the result"


# ---- the initial kernel K0 -----------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(ALTERNATIVES))
def test_kernel_is_used_or_refused(name):
    """A solver that uses K0 changes its result with K0; one that does not refuses a config's ``kernel:``."""
    entry = solvers.get(name)
    G0, C, kw = SOLVER_INSTANCES[name](0)
    base = {"name": "x", "seed": 0, "dataset": {"name": "two_gaussians", "n": 30, "dim": 3},
            "constraints": {"name": "labeled_subset", "count": 10}, "solver": {"name": name}}
    if entry.instead_of_kernel:
        with pytest.raises(ConfigError, match=r"kernel: solver '.*' does not use an initial kernel K0 .*remove it"):
            bind_cell(Cell(0, {**base, "kernel": {"name": "linear"}}), "x.yaml")
        assert "kernel" not in bind_cell(Cell(0, base), "x.yaml")
        assert G0 is None or "dataset" in kw
        return
    with pytest.raises(ConfigError, match="missing required key 'kernel'"):
        bind_cell(Cell(0, base), "x.yaml")
    # another K0 of the same rank: G0 R for a random invertible R, then its columns rescaled
    R = np.linalg.qr(np.random.default_rng(1).standard_normal((G0.shape[1],) * 2))[0] * np.linspace(1.0, 2.0,
                                                                                                      G0.shape[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = solvers.get(name).func(G0, C, **kw)
        b = solvers.get(name).func(G0 @ R, C, **kw)
    Ka, Kb = a.G @ a.G.T, b.G @ b.G.T
    assert not np.allclose(Ka, Kb), f"solver '{name}' gives the same kernel from a different K0"


def test_refusal_names_the_file_key_and_reason():
    cfg = {"name": "x", "seed": 0, "dataset": {"name": "iris"}, "kernel": {"name": "rbf", "sigma": 0.1},
           "constraints": {"name": "labeled_subset", "count": 20}, "solver": {"name": "nystrom"}}
    with pytest.raises(ConfigError) as err:
        bind_cell(Cell(0, cfg), "configs/ny.yaml")
    msg = str(err.value)
    assert msg.startswith("configs/ny.yaml: kernel: solver 'nystrom'") and "Gaussian" in msg and "remove it" in msg


# ---- kernels -------------------------------------------------------------------------------------

#: Per kernel, per declared setting: another valid value (on :func:`kernel_dataset`).
KERNEL_ALTERNATIVES = {
    "linear": {"center": True, "rank": 2},
    "rbf": {"sigma": 0.7, "bandwidth": "mean_sq", "standardize": True, "rank": 3, "rank_tol": 1e-2},
    "identity": {"scale": 2.0},
    "precomputed": {"rank": 3, "rank_tol": 1e-2},
    "laplacian_pinv": {"neighbors": 4, "bandwidth": "half_mean", "sigma_neighbors": 3, "scale_features": "standard",
                       "normalize": False, "rank_tol": 0.3},
}
KERNEL_UNUSED = {
    ("laplacian_pinv", "sigma_neighbors"): "only read by bandwidth 'half_mean'",
}


def kernel_dataset():
    ds = two_gaussians(n=30, dim=4, seed=0)
    ds.X = ds.X * np.array([1.0, 3.0, 0.5, 2.0])            # unequal feature scales: standardize matters
    X = ds.X
    ds.K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 8.0)
    return ds


KERNEL_CASES = [(name, key) for name in sorted(KERNEL_ALTERNATIVES) for key in sorted(KERNEL_ALTERNATIVES[name])]


@pytest.mark.parametrize("name,key", KERNEL_CASES, ids=[f"{n}.{k}" for n, k in KERNEL_CASES])
def test_kernel_setting_changes_k0(name, key):
    ds, func = kernel_dataset(), kernels.get(name).func
    G, H = func(ds), func(ds, **{key: KERNEL_ALTERNATIVES[name][key]})
    same = G.shape == H.shape and np.allclose(G @ G.T, H @ H.T, rtol=1e-12, atol=1e-12)
    assert same == ((name, key) in KERNEL_UNUSED), f"kernel {name}.{key}: same K0 = {same}"
