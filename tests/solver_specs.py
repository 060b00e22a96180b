"""Per-solver test data, in one place (as scikit-learn's ``INIT_PARAMS``): a new solver adds its
entries here, and the tests that cover every registered solver fail until it has them.

- :data:`INSTANCES`: a small instance per solver, (G0, constraints, keyword arguments) from a seed, whose
  certificate ``tests/test_certificates.py`` recomputes independently
  (``test_every_registered_solver_has_an_instance``); ``tests/test_progress.py`` runs them with a callback.
- :data:`SOLVER_INSTANCES`, :data:`ALTERNATIVES`, :data:`UNUSED`, :data:`SOLVER_WITH`: per declared
  setting, another valid value that must change the result (``tests/test_settings_used.py``,
  ``test_every_setting_has_an_alternative``), or the reason it does not.
- :data:`CHECK_SETTINGS`, :data:`EXPECTED_FAILED`: what scikit-learn's estimator checks need of each
  estimator, and the checks that cannot apply (``tests/test_estimators.py``).

Everything else a solver declares (inductive, warm-up, budget, estimator, exactness) is in its registry
entry (``solvers.register(...)``); docs/extending.md section 7 lists the steps.
"""

import numpy as np

from kernlearn_cli.constraints.labeled import labeled_subset
from kernlearn_cli.constraints.must_cannot import must_cannot
from kernlearn_cli.data.synthetic import two_gaussians

from helpers import definiteboost_instance as db_instance
from helpers import feasible_instance, random_factor, trin_instance
from helpers import meg_stream as stream


# ---- instances: (G0, constraints, keyword arguments) per registered solver --------------------

def _pairs(seed):
    G0, C = feasible_instance(seed, n=30, r=5, c=12)
    return G0, C, {}


def _pcp(seed):
    ds = two_gaussians(n=40, dim=4, seed=seed)
    return None, must_cannot(ds, None, rng=np.random.default_rng(seed)), {"dataset": ds}


def _nystrom(seed):
    ds = two_gaussians(n=60, dim=3, seed=seed)
    C = labeled_subset(ds, None, rng=np.random.default_rng(seed), count=16)
    return None, C, {"dataset": ds, "rng": np.random.default_rng(seed + 1), "landmarks": 8}


def _meg(seed):
    rng = np.random.default_rng(seed)
    F = random_factor(rng, 8)
    return np.eye(8), stream(rng, F, 60), {"reference": F}


def _trin(seed, tol=1e-6):
    _, _, G0, C = trin_instance(seed, n=16, rate=0.05)
    return G0, C, {"gamma": 4.0, "tol": tol}


INSTANCES = {
    "burg": _pairs,
    "von_neumann": _pairs,
    "definiteboost": lambda seed: (*db_instance(seed)[:2], {"dual_correction": True, "projection": "exact"}),
    "trin": _trin,
    "pr_cg": lambda seed: _trin(seed, tol=1e-4),          # PR+ is slow and stalls at rounding near 1e-6
    "admm": lambda seed: (*_pcp(seed)[:2], {**_pcp(seed)[2], "rng": np.random.default_rng(seed), "max_iter": 3000}),
    "pcp_sdp": _pcp,
    "nystrom": lambda seed: _nystrom(seed),
    "nystrom_prior": lambda seed: (*_nystrom(seed)[:2], {**_nystrom(seed)[2], "lam": [0.1, 1.0]}),
    "meg": _meg,
    "initial": _pairs,
}


def _burg_like(seed):
    """Feasible distance constraints (positive bounds, so that a finite ``slack`` applies)."""
    G0, C = feasible_instance(seed, n=30, r=5, c=12, kinds=("dist_le", "dist_ge", "dist_eq"))
    return G0, C, {}


def _nystrom_prior(seed):
    G0, C, kw = INSTANCES["nystrom"](seed)
    return G0, C, {**kw, "max_iter": 200}


#: The tiny instance of each solver: seed -> (G0, constraints, keyword arguments).
SOLVER_INSTANCES = {**INSTANCES, "burg": _burg_like, "von_neumann": _burg_like,
                    "nystrom_prior": _nystrom_prior,
                    "pr_cg": lambda seed: (*_trin(seed)[:2], {"gamma": 4.0, "max_iter": 30})}

#: Per solver, per declared setting: a valid value other than the default.
ALTERNATIVES = {
    "burg": {"tol": 1e-9, "feas_tol": 1e-9, "max_sweeps": 2, "slack": 0.1, "certify_every": 1,
             "slack_if_infeasible": 1.0, "stop": "dual_change", "sweeps": "active"},
    "von_neumann": {"tol": 1e-9, "feas_tol": 1e-9, "max_sweeps": 2, "slack": 0.1, "certify_every": 1,
                    "slack_if_infeasible": 1.0, "stop": "dual_change", "sweeps": "active"},
    "definiteboost": {"projection": "approximate", "dual_correction": False, "order": "cyclic", "tol": 1e-8,
                      "feas_tol": 1e-8, "max_steps": 5},
    "meg": {"eta": 0.5, "iterations": 10, "comparison": "none", "update": "lanczos"},
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
                      "max_iter": 1, "rcond": 0.5, "start": "prior"},
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
    ("trin", "keep_path"): "keeps the path's factors for evaluators (result.path, on disk); G is the same",
    ("pr_cg", "keep_path"): "keeps the path's factors for evaluators (result.path, on disk); G is the same",
    ("trin", "t"): "the knee of the smooth hinge, not read by the instance's loss 'log'",
    ("pr_cg", "t"): "the knee of the smooth hinge, not read by the instance's loss 'log'",
    ("nystrom_prior", "tol"): "T is all ones: the closed-form start is the optimum, certified at the first check",
    ("nystrom_prior", "gap_tol"): "T is all ones: the closed-form start is the optimum, certified at the first check",
    ("nystrom_prior", "max_iter"): "T is all ones: the closed-form start is the optimum, certified at the first "
                                   "check",
}


#: Settings both runs of a solver case need (``stop: dual_change`` takes a finite slack only).
SOLVER_WITH = {(name, setting): settings for name in ("burg", "von_neumann")
               for setting, settings in (("stop", {"slack": 1.0}), ("sweeps", {"slack": 1.0, "stop": "dual_change"}))}


# ---- scikit-learn's estimator checks ---------------------------------------------------------

#: Settings that let each estimator fit sklearn's tiny check data (10-30 points, 1-5 features).
CHECK_SETTINGS = {"burg": {"slack": 1.0}, "von_neumann": {"slack": 1.0}, "nystrom": {"landmarks": 5},
                  "nystrom_prior": {"landmarks": 5},
                  "meg": {"constraint_params": {"count": 100, "reference": {"name": "rbf"}}}}
TRANSDUCTIVE = "transductive: it transforms its training points only, and this check transforms others"
TOO_FEW = ("the check fits 10 points; the constraint generator's defaults need more (10 in-class and 10 "
           "out-of-class neighbours per labeled point)")
#: sklearn checks that cannot apply, and why (docs/estimators in kernlearn_cli/estimators.py).
EXPECTED_FAILED = {
    "trin": {"check_fit2d_1feature": TOO_FEW},
    "pr_cg": {"check_fit2d_1feature": TOO_FEW},
    "admm": {"check_methods_sample_order_invariance": TRANSDUCTIVE, "check_methods_subset_invariance": TRANSDUCTIVE,
             "check_fit_idempotent": TRANSDUCTIVE,
             "check_estimators_nan_inf": "the check fits 10 points; the graph's bandwidth needs 10 neighbours",
             "check_fit2d_1feature": "the check fits 10 points; the graph's bandwidth needs 10 neighbours"},
    "definiteboost": {"check_methods_sample_order_invariance": TRANSDUCTIVE,
                      "check_methods_subset_invariance": TRANSDUCTIVE, "check_fit_idempotent": TRANSDUCTIVE},
    "meg": {"check_methods_sample_order_invariance": TRANSDUCTIVE,
            "check_methods_subset_invariance": TRANSDUCTIVE, "check_fit_idempotent": TRANSDUCTIVE},
}
