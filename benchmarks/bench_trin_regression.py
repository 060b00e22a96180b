"""TRIN per-path CPU time against an older trin.py (issue 34 item 3), one sequential run, one BLAS thread.

The reference solver is loaded at run time from git (``git show REV:kernlearn_cli/solvers/trin.py``,
default 9893b93^, the commit before TRIN's CG moved to the preconditioner's coordinates) into a
temporary module; nothing old is kept in the package.  Cells: Li et al. (2009) Table 3
(configs/papers/li2009/table3_trin.yaml): K0 = laplacian_pinv (10-NN, standardized features) with
bandwidth edge_mean or half_mean, 50n neighbour triplets (seed 0), log-loss, tol 1e-3, gamma from
2^-12 to 2^16 times alpha (alpha 0 = the cold gamma = 2^16 baseline).  Each solver runs --repeat
times per cell, alternating, and the least CPU time (time.process_time) is kept.

    python benchmarks/bench_trin_regression.py [--datasets heart,wine] [--bandwidths edge_mean,half_mean]
                                               [--alphas 16,0] [--rev 9893b93^] [--repeat 1]
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

import numpy as np
from threadpoolctl import threadpool_limits

from kernlearn_cli.registry import constraints, datasets, kernels, solvers
from kernlearn_cli.solvers.trin import trin

DATASETS = {"breast_cancer_wisconsin": {"missing": "impute"}, "heart": {}, "wine": {}, "sonar": {},
            "ionosphere": {}}
ROOT = Path(__file__).resolve().parents[1]


def old_trin(rev: str):
    """``trin`` of kernlearn_cli/solvers/trin.py at git revision ``rev``, as a temporary module."""
    src = subprocess.run(["git", "show", f"{rev}:kernlearn_cli/solvers/trin.py"], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "trin_old.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("kernlearn_cli.solvers._trin_old", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    with mock.patch.object(solvers, "register", lambda *a, **k: (lambda f: f)):   # not registered again
        spec.loader.exec_module(module)
    return module.trin


def setting(name: str, bandwidth: str):
    ds = datasets.get(name).func(**DATASETS.get(name, {}))
    G0 = kernels.get("laplacian_pinv").func(ds, neighbors=10, scale_features="standard", bandwidth=bandwidth)
    C = constraints.get("neighbor_triplets").func(ds, G0, rng=np.random.default_rng(0), fraction=0.5,
                                                  in_class=10, out_class=10)
    return ds, G0, C


def run(solver, G0, C, alpha: float):
    t0 = time.process_time()
    res = solver(G0, C, loss="log", gamma=2.0 ** 16, gamma_min=2.0 ** -12, path=alpha, tol=1e-3, max_iter=10000)
    return time.process_time() - t0, res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--bandwidths", default="edge_mean,half_mean")
    ap.add_argument("--alphas", default="16,0")
    ap.add_argument("--rev", default="9893b93^", help="the reference revision of trin.py")
    ap.add_argument("--repeat", type=int, default=1, help="runs per solver and cell; the least CPU time is kept")
    args = ap.parse_args()
    old = old_trin(args.rev)
    print("| dataset | bandwidth | alpha | iter old | iter new | CG old | CG new | CPU s old | CPU s new | new / old "
          "| rel. objective diff |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    with threadpool_limits(limits=1):
        for name in args.datasets.split(","):
            for bw in args.bandwidths.split(","):
                ds, G0, C = setting(name, bw)
                for a in (float(x) for x in args.alphas.split(",")):
                    best = {"old": np.inf, "new": np.inf}
                    res = {}
                    for _ in range(args.repeat):
                        for key, solver in (("old", old), ("new", trin)):
                            sec, res[key] = run(solver, G0, C, a)
                            best[key] = min(best[key], sec)
                    o, n = res["old"], res["new"]
                    mark = lambda r: "" if r.converged else "*"        # noqa: E731
                    print(f"| {name} (n={ds.n}) | {bw} | {'baseline' if a == 0 else f'{a:g}'} "
                          f"| {o.iterations}{mark(o)} | {n.iterations}{mark(n)} | {o.info['cg_steps']} "
                          f"| {n.info['cg_steps']} | {best['old']:.2f} | {best['new']:.2f} "
                          f"| {best['new'] / best['old']:.2f} "
                          f"| {abs(n.objective - o.objective) / max(1.0, abs(o.objective)):.1e} |", flush=True)
    print("\n* = the certificate failed (not converged) at some gamma.")


if __name__ == "__main__":
    main()
