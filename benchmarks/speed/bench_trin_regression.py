"""TRIN per-path CPU time against an older trin.py (issue 34 item 3), one sequential run, one BLAS thread.

The reference solver is loaded at run time from git (``git show REV:kernlearn_cli/solvers/trin.py``,
default 9893b93^, the commit before TRIN's CG moved to the preconditioner's coordinates) into a
temporary module; nothing old is kept in the package.  Cells: Li et al. (2009) Table 3
(configs/papers/li2009/table3_trin.yaml): K0 = laplacian_pinv of the standardized features under two
graphs, ``hoi`` (the study's: Hoi et al.'s 5-NN graph, sigma half the mean distance to the 10 nearest)
and ``former`` (10-NN, sigma^2 the mean squared edge length), 50n neighbour triplets (seed 0),
log-loss, tol 1e-3, gamma from 2^-12 to 2^16 times alpha (alpha 0 = the cold gamma = 2^16 baseline).
Each solver runs --repeat times per cell, alternating, and the least CPU time (time.process_time) is
kept.  ``--max-iter`` caps each gamma (the older code has no cap per path): on the hard sets, where
a gamma can take thousands of iterations, a small cap compares the cost per iteration and per CG
step of the two codes on the same capped work (iteration counts marked * stopped at the cap).

    python benchmarks/speed/bench_trin_regression.py [--datasets heart,wine] [--graphs hoi,former]
                                               [--alphas 16,0] [--rev 9893b93^] [--repeat 1] [--max-iter 10000]
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

DATASETS = {"breast_cancer_wisconsin": {"missing": "impute"}, "heart": {}, "wine": {}, "sonar": {},
            "ionosphere": {}}
GRAPHS = {"hoi": {"neighbors": 5, "bandwidth": "half_mean", "sigma_neighbors": 10},
          "former": {"neighbors": 10, "bandwidth": "edge_mean"}}


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, parsed before the heavy imports below (``--help`` answers at once)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--graphs", default="hoi,former", help="K0's graph: " + ", ".join(GRAPHS))
    ap.add_argument("--alphas", default="16,0")
    ap.add_argument("--rev", default="9893b93^", help="the reference revision of trin.py")
    ap.add_argument("--repeat", type=int, default=1, help="runs per solver and cell; the least CPU time is kept")
    ap.add_argument("--max-iter", type=int, default=10000, help="iterations per gamma at most")
    return ap.parse_args(argv)


if __name__ == "__main__":                 # --help and a bad option answered before the heavy imports
    arguments()

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from kernlearn_cli.registry import constraints, datasets, kernels, solvers  # noqa: E402
from kernlearn_cli.solvers.trin import trin  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _load(rev: str, path: str, name: str, patch=lambda src: src):
    """The file ``path`` at git revision ``rev`` (its source through ``patch``) as the module ``name``."""
    src = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, check=True, capture_output=True,
                         text=True).stdout
    file = Path(tempfile.mkdtemp()) / (name.rsplit(".", 1)[1] + ".py")
    file.write_text(patch(src))
    spec = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    with mock.patch.object(solvers, "register", lambda *a, **k: (lambda f: f)):   # not registered again
        spec.loader.exec_module(module)
    return module


def old_trin(rev: str):
    """``trin`` of kernlearn_cli/solvers/trin.py at git revision ``rev``, as a temporary module, with the
    compiled CG passes (solvers/_trin_kernels.py) and the problem (solvers/_trin_problem.py) of the same
    revision where it has them."""
    def own_modules(src: str) -> str:
        for part in ("_trin_kernels", "_trin_problem"):
            if f"from .{part} import" in src:
                _load(rev, f"kernlearn_cli/solvers/{part}.py", f"kernlearn_cli.solvers.{part}_old")
                src = src.replace(f"from .{part} import", f"from .{part}_old import")
        return src

    return _load(rev, "kernlearn_cli/solvers/trin.py", "kernlearn_cli.solvers._trin_old", own_modules).trin


def setting(name: str, graph: str):
    ds = datasets.get(name).func(**DATASETS.get(name, {}))
    G0 = kernels.get("laplacian_pinv").func(ds, scale_features="standard", **GRAPHS[graph])
    C = constraints.get("neighbor_triplets").func(ds, G0, rng=np.random.default_rng(0), fraction=0.5,
                                                  in_class=10, out_class=10)
    return ds, G0, C


def run(solver, G0, C, alpha: float, max_iter: int):
    t0 = time.process_time()
    res = solver(G0, C, loss="log", gamma=2.0 ** 16, gamma_min=2.0 ** -12, path=alpha, tol=1e-3, max_iter=max_iter)
    return time.process_time() - t0, res


def main() -> None:
    args = arguments()
    old = old_trin(args.rev)
    print("| dataset | graph | alpha | iter old | iter new | CG old | CG new | CPU s old | CPU s new | new / old "
          "| ms per CG step old | new | rel. objective diff |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    with threadpool_limits(limits=1):
        for name in args.datasets.split(","):
            for graph in args.graphs.split(","):
                ds, G0, C = setting(name, graph)
                for a in (float(x) for x in args.alphas.split(",")):
                    best = {"old": np.inf, "new": np.inf}
                    res = {}
                    for _ in range(args.repeat):
                        for key, solver in (("old", old), ("new", trin)):
                            sec, res[key] = run(solver, G0, C, a, args.max_iter)
                            best[key] = min(best[key], sec)
                    o, n = res["old"], res["new"]
                    mark = lambda r: "" if r.converged else "*"        # noqa: E731
                    print(f"| {name} (n={ds.n}) | {graph} | {'baseline' if a == 0 else f'{a:g}'} "
                          f"| {o.iterations}{mark(o)} | {n.iterations}{mark(n)} | {o.info['cg_steps']} "
                          f"| {n.info['cg_steps']} | {best['old']:.2f} | {best['new']:.2f} "
                          f"| {best['new'] / best['old']:.2f} "
                          f"| {1e3 * best['old'] / max(1, o.info['cg_steps']):.2f} "
                          f"| {1e3 * best['new'] / max(1, n.info['cg_steps']):.2f} "
                          f"| {abs(n.objective - o.objective) / max(1.0, abs(o.objective)):.1e} |", flush=True)
    print(f"\n* = the certificate failed (not converged) at some gamma; --max-iter {args.max_iter}.")


if __name__ == "__main__":
    main()
