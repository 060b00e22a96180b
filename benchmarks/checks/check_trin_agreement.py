"""TRIN against an older trin.py on one path: per-γ Newton iterations, CG steps, objectives and kernels.

The check of issue 45 item 3 ("same iteration counts, per-γ objectives within 1e-10"), for both
working modes and both trust norms: n points of benchmarks/scale/bench_trin_memory.py's blobs (K0 =
laplacian_pinv of a disconnected graph: ``mode: range``) and a connected Laplacian's pseudo-inverse
(tests/test_trin.py's ``laplacian_factor``: ``full_shifted``), log-loss, γ = 2⁻⁸ … 2⁴ (α = 16),
tol 1e-6, at most 60 Newton iterations over the path.  The older solver is loaded from git as in
benchmarks/speed/bench_trin_regression.py.

    python benchmarks/checks/check_trin_agreement.py [--n 300] [--rev main]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, parsed before the heavy imports below (``--help`` answers at once)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--rev", default="main", help="the git revision of the older trin.py")
    return ap.parse_args(argv)


if __name__ == "__main__":                 # --help and a bad option answered before the heavy imports
    arguments()

import numpy as np  # noqa: E402

BENCHMARKS = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(BENCHMARKS / "scale"), str(BENCHMARKS / "speed")]   # bench_trin_memory's blobs, bench_trin_regression's old_trin
from bench_trin_memory import setting  # noqa: E402
from bench_trin_regression import old_trin  # noqa: E402
from kernlearn_cli.solvers.trin import trin  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
from test_trin import laplacian_factor  # noqa: E402


def main() -> None:
    args = arguments()
    warnings.simplefilter("ignore")
    old = old_trin(args.rev)
    G0, C = setting(args.n)
    print("| K0 | trust_norm | mode | Newton iterations per γ (old = new) | CG steps per γ (old = new) "
          "| per-γ objectives: max rel. diff | K: max diff / max |K| |")
    print("| --- | --- | --- | --- | --- | ---: | ---: |")
    for label, G in (("blobs, disconnected", G0), ("connected Laplacian", laplacian_factor(args.n))):
        for norm in ("frobenius", "natural"):
            kw = dict(loss="log", gamma=2.0 ** 4, gamma_min=2.0 ** -8, path=16.0, tol=1e-6, trust_norm=norm,
                      max_path_iter=60)
            a, b = old(G, C, **kw), trin(G, C, **kw)
            it = [h.history["path_iterations"].astype(int).tolist() for h in (a, b)]
            cg = [h.history["path_cg_steps"].astype(int).tolist() for h in (a, b)]
            fa, fb = a.history["path_objective"], b.history["path_objective"]
            diff = float(np.max(np.abs(fa - fb) / np.abs(fa))) if len(fa) == len(fb) else float("nan")
            Ka, Kb = a.G @ a.G.T, b.G @ b.G.T
            same = lambda x: f"{x[0]}" if x[0] == x[1] else f"{x[0]} ≠ {x[1]}"  # noqa: E731
            print(f"| {label} | {norm} | {b.info['mode']} | {same(it)} | {same(cg)} | {diff:.1e} "
                  f"| {np.abs(Ka - Kb).max() / np.abs(Ka).max():.1e} |", flush=True)
    print(f"\nn = {args.n}, old = trin.py at {args.rev}.")


if __name__ == "__main__":
    main()
