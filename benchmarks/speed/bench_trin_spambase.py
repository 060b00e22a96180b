r"""Li et al. (2009), Sec. 6.1 and Fig. 1: speed of TRIN vs ITML in linear metric learning on Spambase.

Fig. 1 is an experiment of the li2009 study: ``configs/papers/li2009/fig1_itml.yaml`` and
``fig1_trin.yaml``, tables li2009_fig1_* and the statements judged on them (``kernlearn reproduce
li2009``; the setting, its choices and the budget are in the study's protocol, "§6.1, Fig. 1").
This script is the quick way to draw the figure from the same problem, and it adds what the
study's records do not hold: the two solvers' objectives at their results, side by side, which
checks that they solve the same problem.

Setting (Sec. 6.1): Spambase (4601 x 57, loader ``spambase``), a Mahalanobis metric M on the 57
features started at M0 = I, i.e. K = G0 M G0^T with G0 = X (kernel ``linear``, K0 = X X^T), and
one ITML constraint per random pair of points, A = (x_i - x_j)(x_i - x_j)^T, that is the distance
d(i, j) = tr(K A) = (x_i - x_j)^T M (x_i - x_j): similar pairs (same class) d <= u, dissimilar
pairs d >= l.  Both solvers see exactly these pairs and bounds and minimize the same objective

    f(M) = D_ld(M, I) + gamma * sum_i psi(d_i(M)),   psi = ITML loss of Li et al. Table 2,

* ``burg`` with ``slack = gamma`` -- cyclic Bregman projections with ITML's slack variables
  (Davis et al. 2007); minimizing ITML's D_ld(M, I) + gamma D_ld(diag xi, diag xi0) subject to
  d_i <= xi_i (>= for dissimilar pairs) over the slacks xi gives exactly gamma * psi(d_i);
* ``trin`` with ``loss="itml", normalize=False`` -- the loss weight is gamma itself, not gamma/m
  ("gamma is not normalized ... to provide equal comparison with ITML", Sec. 6.1).

As in the study:

* Features standardized (zero mean, unit variance per feature) before G0 = X (``--scale
  standard``, the default: kernel ``linear`` with ``standardize: true``); ``--scale none`` uses the
  raw features, which span 5 orders of magnitude (standard deviations 0.08 ... 606).
* The pairs and thresholds are constraint generator ``itml_pairs``: ``count`` distinct pairs drawn
  uniformly, pairs of identical feature vectors skipped (Spambase has 394 duplicate rows), u and l
  the 5th and 95th percentiles of the drawn pairs' K0 distances.  Trial t draws with the study's
  constraint stream of seed t, so trial t sees the pairs of the study's cells of seed t.
* Tolerance 1e-3 for both, on different quantities: trin stops when the natural gradient norm
  ||K^1/2 grad f K^1/2||_F <= tol; burg (``--stop dual_change``, the default) when the dual change
  of a sweep ||lambda - lambda_old||_1 / (||lambda||_2 + ||lambda_old||_2) < tol, the ITML code's
  rule (``--stop certified`` also asks every constraint met to 1e-3 of its slack-adjusted bound).
  Hence the objectives are printed: f(burg) is f evaluated at burg's M (D_Burg of the result plus
  gamma * sum psi at its distances), f(trin) is ``result.objective``; "gap" is
  (f(burg) - f(trin)) / |f(trin)| (positive: burg stopped at a worse point).
* trin uses its default trust region (``trust_norm="frobenius"``, eq. (7) as printed);
  ``--trust-norm natural`` selects the scale-free variant.  trin's iteration cap is ``--max-iter``.

Timing: CPU seconds (``time.process_time``) of each solver call, problem set-up included, under
``threadpool_limits(1)`` (one BLAS thread; burg's numba sweep is serial).  Seconds and iterations
are means over ``--trials`` draws of pairs (the paper averages 20); a trailing ``*`` marks a mean
over runs of which some did not converge (burg: ``--max-sweeps``, paper 8000; trin: ``--max-iter``).

The paper's grid is 9 gammas 1e-4 ... 1e4.  The default here is 1e-2, 1, 1e2: at gamma >= 1e3 trin
on 400 or 800 pairs needs more than 300 iterations (tens of seconds, past 1000 iterations at
1e4), so the full grid does not fit a ~10 minute run; pass
``--gammas 1e-4,1e-3,1e-2,1e-1,1,1e1,1e2,1e3,1e4`` for it.

    python benchmarks/speed/bench_trin_spambase.py [--counts 400,800,6400] [--gammas 1e-2,1,1e2]
        [--trials 1] [--max-sweeps 8000] [--max-iter 1000] [--stop dual_change] [--scale standard]
        [--figure PATH]

Prints one markdown table and writes benchmarks/speed/figures/li2009_fig1_spambase.png (CPU time vs
gamma, one line per solver and number of constraints, log axes).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

PAPER_GAMMAS = "1e-4,1e-3,1e-2,1e-1,1,1e1,1e2,1e3,1e4"


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, parsed before the heavy imports below (``--help`` answers at once)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--counts", default="400,800,6400", help="numbers of random pairs (paper: 400,800,6400)")
    ap.add_argument("--gammas", default="1e-2,1,1e2", help=f"loss weights (paper: {PAPER_GAMMAS})")
    ap.add_argument("--trials", type=int, default=1, help="random draws of pairs per count (paper: 20)")
    ap.add_argument("--max-sweeps", type=int, default=8000, help="burg sweep cap (paper: 8000)")
    ap.add_argument("--max-iter", type=int, default=1000, help="trin Newton iteration cap")
    ap.add_argument("--tol", type=float, default=1e-3)
    ap.add_argument("--stop", choices=("dual_change", "certified"), default="dual_change",
                    help="burg's stopping rule (dual_change: the ITML code's)")
    ap.add_argument("--trust-norm", choices=("frobenius", "natural"), default="frobenius")
    ap.add_argument("--scale", choices=("standard", "none"), default="standard", help="feature scaling")
    ap.add_argument("--seed", type=int, default=0, help="the first trial's seed (trial t: seed + t)")
    ap.add_argument("--figure", type=Path, default=Path("benchmarks/speed/figures/li2009_fig1_spambase.png"))
    return ap.parse_args(argv)


if __name__ == "__main__":                 # --help and a bad option answered before the heavy imports
    arguments()

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from kernlearn_cli.registry import constraints, datasets, kernels  # noqa: E402
from kernlearn_cli.rng import STREAM_CONSTRAINTS, component_rng  # noqa: E402
from kernlearn_cli.solvers._trin_problem import itml_loss  # noqa: E402
from kernlearn_cli.solvers.burg import burg  # noqa: E402
from kernlearn_cli.solvers.trin import trin  # noqa: E402
from kernlearn_cli.types import KIND_CODE, Constraints  # noqa: E402


def factor(scale: str):
    """(dataset, G0) with K0 = G0 G0^T the linear kernel of the Spambase features (standardized for
    ``scale="standard"``: kernel ``linear`` with ``standardize``, as in the study)."""
    ds = datasets.get("spambase").func()
    return ds, kernels.get("linear").func(ds, standardize=scale == "standard")


def draw(ds, G0: np.ndarray, count: int, trial: int) -> tuple[Constraints, np.ndarray, float, float]:
    """The study's pairs of seed ``trial`` (generator ``itml_pairs``, the cell's constraint stream):
    (constraints, similar mask, u, l)."""
    C = constraints.get("itml_pairs").func(ds, G0, rng=component_rng(trial, STREAM_CONSTRAINTS), count=count)
    similar = C.kind == KIND_CODE["dist_le"]
    u, l = (float(C.bound[mask][0]) if mask.any() else float("nan") for mask in (similar, ~similar))
    return C, similar, u, l


def objective_at(G: np.ndarray, divergence: float, C: Constraints, similar: np.ndarray, gamma: float) -> float:
    """f = D_ld(M, I) + gamma * sum psi(d_i), psi the ITML loss, at K = G G^T."""
    psi = itml_loss(C.bound, similar).psi(C.values(G))
    return float(divergence + gamma * np.sum(psi))


def run_burg(G0, C, similar, gamma, tol, max_sweeps, stop):
    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # "not converged after max_sweeps": kept as the flag
        res = burg(G0, C, tol=tol, max_sweeps=max_sweeps, slack=gamma, stop=stop)
    sec = time.process_time() - t0
    return {"sec": sec, "it": res.iterations, "ok": res.converged,
            "f": objective_at(res.G, res.objective, C, similar, gamma), "viol": res.info["max_violation"]}


def run_trin(G0, C, similar, gamma, tol, max_iter, trust_norm):
    t0 = time.process_time()
    res = trin(G0, C, loss="itml", gamma=gamma, normalize=False, tol=tol, max_iter=max_iter,
               trust_norm=trust_norm)
    sec = time.process_time() - t0
    viol = C.violations(res.G) / np.abs(C.bound)
    return {"sec": sec, "it": res.iterations, "ok": res.converged, "f": float(res.objective),
            "viol": float(viol.max()), "cg": res.info["cg_steps"], "gn": res.info["grad_norm"]}


def mean(runs, key):
    return float(np.mean([r[key] for r in runs]))


def flag(runs):
    return "" if all(r["ok"] for r in runs) else "*"


def main() -> None:
    args = arguments()
    counts = [int(c) for c in args.counts.split(",")]
    gammas = [float(g) for g in args.gammas.split(",")]

    wall0 = time.perf_counter()
    ds, G0 = factor(args.scale)
    print(f"spambase {G0.shape[0]} x {G0.shape[1]}, features: {args.scale}; tol {args.tol:g}; trials {args.trials}; "
          f"burg max_sweeps {args.max_sweeps}, stop {args.stop}; trin max_iter {args.max_iter}, trust_norm {args.trust_norm}; "
          f"load average {os.getloadavg()[0]:.2f}")
    draws = {}
    for c in counts:
        draws[c] = [draw(ds, G0, c, args.seed + t) for t in range(args.trials)]
        us, ls, sims = zip(*[(u, l, s.mean()) for _, s, u, l in draws[c]])
        print(f"  {c} pairs: u = {np.mean(us):.4g}, l = {np.mean(ls):.4g} (5th / 95th percentile), "
              f"similar fraction {np.mean(sims):.3f}")
    print()

    rows, errors = [], []
    print("| pairs | gamma | burg s | burg sweeps | trin s | trin iter (CG) | burg / trin time | f(burg) | f(trin) "
          "| gap | max rel. viol. burg / trin |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    with threadpool_limits(limits=1):
        C0, sim0, _, _ = draws[counts[0]][0]           # warm-up, untimed: numba compilation, first-call costs
        run_burg(G0, C0, sim0, gammas[0], args.tol, args.max_sweeps, args.stop)
        run_trin(G0, C0, sim0, gammas[0], args.tol, args.max_iter, args.trust_norm)
        for c in counts:
            for g in gammas:
                rb, rt = [], []
                for C, sim, _, _ in draws[c]:
                    for name, runs in (("burg", rb), ("trin", rt)):
                        try:
                            if name == "burg":
                                runs.append(run_burg(G0, C, sim, g, args.tol, args.max_sweeps, args.stop))
                            else:
                                runs.append(run_trin(G0, C, sim, g, args.tol, args.max_iter, args.trust_norm))
                        except Exception as exc:  # noqa: BLE001 - reported below, the grid goes on
                            errors.append(f"{name}, {c} pairs, gamma {g:g}: {type(exc).__name__}: {exc}")
                if not rb or not rt:                     # a solver raised on every draw
                    cell = [f"{mean(runs, 'sec'):.3g}" if runs else "error" for runs in (rb, rt)]
                    print(f"| {c} | {g:g} | {cell[0]} | | {cell[1]} | | | | | | |", flush=True)
                    rows.append((c, g, rb, rt))
                    continue
                fb, ft = mean(rb, "f"), mean(rt, "f")
                gap = float(np.mean([(b["f"] - t["f"]) / abs(t["f"]) for b, t in zip(rb, rt)]))
                print(f"| {c} | {g:g} | {mean(rb, 'sec'):.3g} | {mean(rb, 'it'):.0f}{flag(rb)} | {mean(rt, 'sec'):.3g} "
                      f"| {mean(rt, 'it'):.0f}{flag(rt)} ({mean(rt, 'cg'):.0f}) | {mean(rb, 'sec') / mean(rt, 'sec'):.3g} "
                      f"| {fb:.6g} | {ft:.6g} | {gap:+.1e} | {mean(rb, 'viol'):.3g} / {mean(rt, 'viol'):.3g} |",
                      flush=True)
                rows.append((c, g, rb, rt))
    print("\n* = some run hit its cap without converging (burg: --max-sweeps, trin: --max-iter).")
    print("gap = (f(burg) - f(trin)) / |f(trin)|, f = D_ld(M, I) + gamma * sum ITML loss; "
          "max rel. viol. = max over pairs of the violation of u / l, relative to the bound (soft constraints).")
    unconverged = [(c, g, r["gn"]) for c, g, _, rt in rows for r in rt if not r["ok"]]
    for c, g, gn in unconverged:
        print(f"trin not converged: {c} pairs, gamma {g:g}, natural gradient norm {gn:.3g} > tol {args.tol:g}")
    for e in errors:
        print("ERROR", e)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.2))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, c in enumerate(counts):
        for name, solver, style, marker in (("ITML (burg)", 0, "-", "o"), ("TRIN", 1, "--", "s")):
            pts = [(g, mean(runs[solver], "sec"), all(x["ok"] for x in runs[solver]))
                   for cc, g, *runs in rows if cc == c and runs[solver]]
            if not pts:
                continue
            gs, secs, _ = zip(*pts)
            ax.plot(gs, secs, style, color=colors[k % len(colors)], marker=marker, label=f"{name}, {c} pairs")
            bad = [(gg, s) for gg, s, ok in pts if not ok]
            if bad:
                ax.plot(*zip(*bad), "x", color="k", markersize=10, zorder=5)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("gamma")
    ax.set_ylabel("CPU seconds (1 thread)")
    ax.set_title(f"Spambase, ITML loss, tol {args.tol:g} ({args.trials} trial{'s' * (args.trials > 1)}; x = not converged)",
                 fontsize=9)
    ax.legend(fontsize=7, ncol=2)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    args.figure.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.figure, dpi=120)
    print(f"\nfigure: {args.figure}")
    print(f"wall time: {time.perf_counter() - wall0:.0f} s")


if __name__ == "__main__":
    main()
