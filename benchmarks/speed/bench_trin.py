"""Li et al. (2009), Tables 3-4 and Sec. 6.2: TRIN vs Polak-Ribière+ CG along the regularization path.

For each dataset (one labeling, seed 0): K0 = L^+ (laplacian_pinv, standardized features), 50n
neighbour triplets, log-loss, tol 1e-3; gamma from 2^-12 to 2^16 times alpha, warm-started
(alpha 0 = the cold gamma = 2^16 baseline).  Prints path iterations and CPU seconds of `trin`,
of plain `pr_cg` (the paper's Table 4 baseline) and of `pr_cg` preconditioned by TRIN's
ΔK ↦ KΔKK, side by side with their time ratios, from one sequential run on one BLAS thread.
The preconditioned CG runs on the path only (with --cold-pc also on the cold baseline, where
it stalls: on Table 3's sonar setting, seed 0, it stopped at the 10000-iteration cap after
382 s with f = 7110 against the optimum 236).

    python benchmarks/speed/bench_trin.py [--datasets sonar,wine] [--alphas 16,0] [--max-iter 10000]
                                    [--stop absolute|relative] [--cold-pc]
"""

from __future__ import annotations

import argparse
import time

DATASETS = {"breast_cancer_wisconsin": {"missing": "impute"}, "sonar": {}, "ionosphere": {}, "heart": {},
            "wine": {}}


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, parsed before the heavy imports below (``--help`` answers at once)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--alphas", default="2,4,8,16,32,64,128,0")
    ap.add_argument("--max-iter", type=int, default=10000, help="per gamma (the paper stops CG at 10000)")
    ap.add_argument("--stop", default="absolute", choices=["absolute", "relative"], help="solver.stop")
    ap.add_argument("--no-cg", action="store_true", help="trin only")
    ap.add_argument("--cold-pc", action="store_true", help="preconditioned pr_cg on the cold baseline too")
    return ap.parse_args(argv)


if __name__ == "__main__":                 # --help and a bad option answered before the heavy imports
    arguments()

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from kernlearn_cli.registry import constraints, datasets, kernels  # noqa: E402
from kernlearn_cli.solvers.trin import pr_cg, trin  # noqa: E402


def setting(name: str):
    ds = datasets.get(name).func(**DATASETS.get(name, {}))
    G0 = kernels.get("laplacian_pinv").func(ds, neighbors=10, scale_features="standard")
    C = constraints.get("neighbor_triplets").func(ds, G0, rng=np.random.default_rng(0), fraction=0.5)
    return ds, G0, C


def run(solver, G0, C, alpha: float, max_iter: int, stop: str, **extra):
    t0 = time.process_time()
    res = solver(G0, C, loss="log", gamma=2.0 ** 16, gamma_min=2.0 ** -12, path=alpha, tol=1e-3, max_iter=max_iter,
                 stop=stop, **extra)
    return res.iterations, time.process_time() - t0, res.converged, res.objective


def main() -> None:
    args = arguments()
    alphas = [float(a) for a in args.alphas.split(",")]
    print("| dataset | alpha | trin iter | trin s | pr_cg iter | pr_cg s | pr_cg / trin time "
          "| preconditioned pr_cg iter | s | / trin time | objective gap |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    with threadpool_limits(limits=1):
        for name in args.datasets.split(","):
            ds, G0, C = setting(name)
            for a in alphas:
                it_t, s_t, ok_t, f_t = run(trin, G0, C, a, args.max_iter, args.stop)
                label = "baseline" if a == 0 else f"{a:g}"
                row = f"| {name} (n={ds.n}) | {label} | {it_t}{'' if ok_t else '*'} | {s_t:.2f} |"
                if args.no_cg:
                    print(row + " | | | | | | |", flush=True)
                    continue
                gap = 0.0
                for precondition in (False, True):
                    if precondition and a == 0 and not args.cold_pc:
                        row += " | | |"
                        continue
                    it_c, s_c, ok_c, f_c = run(pr_cg, G0, C, a, args.max_iter, args.stop, precondition=precondition)
                    row += f" {it_c}{'' if ok_c else '*'} | {s_c:.2f} | {s_c / s_t:.1f} |"
                    gap = max(gap, abs(f_c - f_t) / abs(f_t))
                print(row + f" {gap:.1e} |", flush=True)
    print("\n* = not converged within --max-iter iterations at some gamma.")


if __name__ == "__main__":
    main()
