"""nystrom_prior at small lambda (Zhang et al. 2012, Fig. 1 setting): is "converged" true only at the optimum?

    python benchmarks/checks/nystrom_prior_certified.py [--dataset sonar] [--seeds 3] [--lams 1e-5,1e-4,1e-3,1e-2,1]

The Fig. 1 cells (20 labeled points, one per class first; m = 50 k-means landmarks; tol 1e-8,
max_iter 5000) are solved by ``nystrom_prior`` and, independently, by cvxpy + Clarabel (the same
J over S >= 0, built from the factors the solver returns: S0, E_l, K*_l). Printed per cell: the
solver's converged flag, its certified bound on (J - J*) / J, and the true relative excess
(J - J*_cvxpy) / J*. The issue's rule: converged => excess <= 1e-5; otherwise converged = false.
"""

from __future__ import annotations

import argparse
import warnings


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, parsed before the heavy imports below (``--help`` answers at once)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", default="sonar")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--lams", default="1e-5,1e-4,1e-3,1e-2,1")
    return ap.parse_args(argv)


if __name__ == "__main__":                 # --help and a bad option answered before the heavy imports
    arguments()

from kernlearn_cli.registry import constraints as generators, datasets  # noqa: E402
from kernlearn_cli.rng import STREAM_CONSTRAINTS, STREAM_SOLVER, component_rng  # noqa: E402
from kernlearn_cli.solvers.nystrom import nystrom_prior  # noqa: E402


def reference(S0, El, Kl, lam) -> float:
    import cvxpy as cp

    m = S0.shape[0]
    S = cp.Variable((m, m), PSD=True)
    prob = cp.Problem(cp.Minimize(lam * cp.sum_squares(S - S0) + cp.sum_squares(El @ S @ El.T - Kl)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12, max_iter=500)
    return float(prob.value)


def main() -> None:
    args = arguments()
    ds = datasets.get(args.dataset).func()
    bad = 0
    print(f"{args.dataset}: {'lambda':>8} {'seed':>4} {'converged':>9} {'iterations':>10} {'bound':>9} {'excess':>9}")
    for lam in map(float, args.lams.split(",")):
        for seed in range(args.seeds):
            C = generators.get("labeled_subset").func(ds, None, rng=component_rng(seed, STREAM_CONSTRAINTS), count=20,
                                                      every_class=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = nystrom_prior(None, C, dataset=ds, rng=component_rng(seed, STREAM_SOLVER), landmarks=50, lam=lam,
                                    tol=1e-8, max_iter=5000)
            J = res.objective
            J_star = reference(res.arrays["S0"], res.arrays["E_labeled"], res.arrays["K_ideal"], lam)
            excess = (J - J_star) / abs(J_star)
            bound = res.certificate["checks"]["gap_bound"]["value"]
            bad += bool(res.converged and excess > 1e-5)
            print(f"{'':>{len(args.dataset) + 1}} {lam:>8.0e} {seed:>4} {str(res.converged):>9} {res.iterations:>10} "
                  f"{bound:>9.2e} {excess:>9.2e}", flush=True)
    print(f"converged cells more than 1e-5 above the optimum: {bad} (must be 0)")


if __name__ == "__main__":
    main()
