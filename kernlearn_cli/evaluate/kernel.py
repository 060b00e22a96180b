"""Properties of the kernel itself -- how well it meets its constraints, how well conditioned it is --
and the settings the solver chose on its way to it."""

from __future__ import annotations

import math
from typing import Annotated

import numpy as np

from ..errors import ConfigError
from ..params import Fraction, Length
from ..registry import Checks, evaluators


@evaluators.register("constraint_violation", metrics=("violation", "relaxed", "bound_spread"))
def constraint_violation(G: np.ndarray, ds, *, rng, constraints, result) -> dict:
    """The constraints as given, checked on K = G G^T.

    ``violation``: the largest relative violation max_i v_i / |b_i| (v_i the amount by which
    constraint i is violated, 0 when met; |b_i| floored at 1e-12). ``relaxed``: 1 when the
    solver met the constraints only up to ITML slack (a finite ``slack`` in its info, e.g. a set
    ``slack_if_infeasible`` found certified infeasible), else 0 -- its mean over seeds is the
    share of relaxed sets. ``bound_spread``: min_i |b_i| / max_i |b_i|, a property of the set
    itself -- tiny bounds (near-identical points) are what makes approximate projections slow
    (Kulis et al. 2006, Sec. 6). Put beside an accuracy, these say which problem was solved.
    """
    b = np.abs(constraints.bound)
    v = constraints.violations(G) / np.maximum(b, 1e-12)
    slack = float(result.info.get("slack", math.inf))
    return {"violation": float(v.max()) if len(v) else 0.0, "relaxed": float(math.isfinite(slack)),
            "bound_spread": float(b.min() / b.max()) if len(b) and b.max() > 0 else float("nan")}


@evaluators.register("kernel_condition", metrics=("condition", "kernel_rank"), checks=Checks(alternatives={"rank_tol": 0.5}))
def kernel_condition(G: np.ndarray, ds, *, rng, rank_tol: Fraction = 1e-10) -> dict:
    """Condition number of K = G G^T on its range, (s_max / s_min)^2 over the singular values of G
    above ``rank_tol`` times the largest, and that rank. With solver ``initial`` it describes K0:
    the condition of a Laplacian pseudo-inverse decides how hard TRIN's problems are (Li et al. 2009).

    Parameters
    ----------
    rank_tol : float
        The relative threshold of the range, 0 <= rank_tol < 1.
    """
    s = np.linalg.svd(np.asarray(G, dtype=np.float64), compute_uv=False)
    s = s[s > rank_tol * s[0]] if len(s) and s[0] > 0 else s[:0]
    return {"condition": float((s[0] / s[-1]) ** 2) if len(s) else float("nan"), "kernel_rank": float(len(s))}


@evaluators.register("solver_info", metrics="keys", checks=Checks(alternatives={"keys": ["slack"]}, base={"keys": ["rank"]}))
def solver_info(G: np.ndarray, ds, *, rng, result, keys: Annotated[list[str], Length(1)]) -> dict:
    """Numbers the solver recorded in its info, as metrics a table can show beside the scores: e.g.
    ``keys: [gamma]`` for the gamma that ``admm`` chose from a list by held-out pairs.

    Parameters
    ----------
    keys : list of str
        At least one key of the solver's info.
    """
    out = {}
    for key in keys:
        value = result.info.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            numeric = sorted(k for k, v in result.info.items() if isinstance(v, (int, float)) and not isinstance(v, bool))
            raise ConfigError(f"evaluate solver_info: the solver's info has no number '{key}'; it has "
                              f"{', '.join(numeric) or 'none'}.")
        out[key] = float(value)
    return out


@evaluators.register("primal_residual", metrics=("primal_residual",),
                     checks=Checks(instance="kernlearn_cli.testing.instances:admm_result"))
def primal_residual(G: np.ndarray, ds, *, rng, result) -> dict:
    """The primal residual of Hu & Kwok's (2013) eq. (14), Δ_primal = ||V - U||_F at the last
    iteration, relative to ||V||_F = ||G||_F (``admm`` returns G = V): the quantity their Fig. 2
    draws, on the scale of the stopping rule (``tol``), as a metric ``primal_residual`` a table can
    read — e.g. of runs stopped after a fixed number of iterations."""
    value = result.info.get("primal_residual")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError("evaluator 'primal_residual' reads the primal residual ||V - U|| that solver 'admm' "
                          "records; this solver does not report one.")
    return {"primal_residual": float(value) / max(float(np.linalg.norm(G)), 1e-300)}
