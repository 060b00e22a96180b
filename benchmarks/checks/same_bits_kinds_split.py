"""Same bits across issue 46 item 3 (constraint kinds, named sweep results, the split of the von
Neumann kernels): run burg, von_neumann (Krylov and eigen sweeps, hard and slack), definiteboost
and meg on small seeded problems and write every learned factor and history to an .npz; run it
once per tree and compare the files bit for bit:

    PYTHONPATH=<old tree> python benchmarks/checks/same_bits_kinds_split.py old.npz
    PYTHONPATH=<new tree> python benchmarks/checks/same_bits_kinds_split.py new.npz
    python benchmarks/checks/same_bits_kinds_split.py --compare old.npz new.npz
"""

import argparse
import sys

import numpy as np


def instance(seed, n=40, r=6, c=25, kinds=("dist_le", "dist_ge", "sim_le", "sim_ge", "dist_eq", "sim_eq")):
    """Random G0 and constraints met by a known K* = G0 M* G0^T, tr K* = tr K0 (as tests/test_burg.py)."""
    from kernlearn_cli.types import Constraints
    rng = np.random.default_rng(seed)
    G0 = rng.standard_normal((n, r))
    R = rng.standard_normal((r, r)) * 0.3
    K = G0 @ (np.eye(r) + R @ R.T) @ G0.T
    K *= np.sum(G0 * G0) / np.trace(K)
    i = rng.integers(0, n, c)
    j = np.where(rng.random(c) < 0.15, i, (i + 1 + rng.integers(0, n - 1, c)) % n)
    kind = rng.choice(kinds, c).astype(str)
    val = np.where(np.char.startswith(kind, "dist"), K[i, i] + K[j, j] - 2 * K[i, j], K[i, j])
    gap = 0.1 * np.abs(val) + 0.05
    bound = np.select([np.char.endswith(kind, "le"), np.char.endswith(kind, "ge")], [val + gap, val - gap], val)
    keep = ~(np.char.startswith(kind, "dist") & (i == j))
    return G0, Constraints.from_lists(i[keep], j[keep], kind[keep], bound[keep])


def run() -> dict:
    from kernlearn_cli.solvers.burg import burg
    from kernlearn_cli.solvers.definiteboost import definiteboost
    from kernlearn_cli.solvers.meg import meg
    from kernlearn_cli.solvers.von_neumann import von_neumann
    from kernlearn_cli.types import Constraints
    out = {}

    def keep(name, res):
        out[f"{name}/G"] = res.G
        out[f"{name}/objective"] = np.float64(res.objective)
        for key, value in res.history.items():
            out[f"{name}/history/{key}"] = np.asarray(value)

    for seed in range(3):
        G0, C = instance(seed)
        dist = C.subset(np.flatnonzero(np.isin(C.kind, (0, 1, 4)) | (C.i == C.j)))
        keep(f"burg/{seed}", burg(G0, C, tol=1e-9))
        keep(f"burg_slack/{seed}", burg(G0, dist, tol=1e-9, slack=10.0))
        keep(f"vn_eigen/{seed}", von_neumann(G0, C, tol=1e-9))
        keep(f"vn_krylov/{seed}", von_neumann(G0, dist, tol=1e-9))
        keep(f"vn_slack/{seed}", von_neumann(G0, dist, tol=1e-9, slack=10.0))
        G1, small = instance(seed, n=12, r=12, c=14)
        keep(f"definiteboost/{seed}", definiteboost(G1, small, tol=1e-6))
        keep(f"definiteboost_exact/{seed}", definiteboost(G1, small, tol=1e-6, projection="exact"))
        eq = C.subset(np.flatnonzero(np.isin(C.kind, (4, 5))))
        eq = Constraints(eq.i, eq.j, eq.kind, eq.bound)
        keep(f"meg/{seed}", meg(np.eye(40), eq, eta=0.05, iterations=200, comparison="none"))
        keep(f"meg_lanczos/{seed}", meg(np.eye(40), eq, eta=0.05, iterations=200, update="lanczos", comparison="none"))
    return out


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line: the .npz to write, or ``--compare OLD NEW``."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    ap.add_argument("output", nargs="?", help="the .npz to write this tree's arrays to (an option is never one)")
    ap.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"), help="compare two written .npz bit for bit")
    args = ap.parse_args(argv)
    if (args.output is None) == (args.compare is None):
        ap.error("give either the .npz to write or --compare OLD NEW")
    return args


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    if args.compare:
        a, b = np.load(args.compare[0]), np.load(args.compare[1])
        assert sorted(a.files) == sorted(b.files), set(a.files) ^ set(b.files)
        differ = [k for k in a.files if a[k].tobytes() != b[k].tobytes()]
        print(f"{len(a.files)} arrays compared, {len(differ)} differ: {differ}")
        return 1 if differ else 0
    np.savez(args.output, **run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
