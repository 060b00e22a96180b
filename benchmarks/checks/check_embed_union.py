"""A held-out point through ``kernlearn embed`` against its row in the factor of the union (issue 45 item 1).

    python benchmarks/checks/check_embed_union.py [--workdir DIR]

400 points in two Gaussian blobs (3 dimensions, seed 0) as a ``files`` dataset; ``rbf`` K0 by pivoted
incomplete Cholesky at rank 30; 200 ``idealized_pairs``; ``burg`` with slack 1 and tol 1e-8.  The run
and ``kernlearn embed CELL x_new.npy`` go through the command line; the held-out point is the data's
mean (never the largest residual, so the union keeps the training pivots).  The reference: the union's
pivoted factor Gu with the training σ, times the learned map T (G = G0 T, by least squares).  Printed:
the residual of G = G0 T, the embedded row against Gu[-1] T (absolute and relative), and how far the
union's training rows are from G0.
"""

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, parsed before the heavy imports below (``--help`` answers at once)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", type=Path, default=None, help="keep the run here (default: a temporary folder)")
    return ap.parse_args(argv)


if __name__ == "__main__":                 # --help and a bad option answered before the heavy imports
    arguments()

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import yaml  # noqa: E402

from kernlearn_cli.kernels import rbf, rbf_bandwidth  # noqa: E402
from kernlearn_cli.types import Dataset  # noqa: E402


def main() -> None:
    args = arguments()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.workdir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        rng = np.random.default_rng(0)
        X = np.vstack([rng.normal(0, 1, (200, 3)), rng.normal(3, 1, (200, 3))])
        x = X.mean(axis=0, keepdims=True)
        np.save(work / "X.npy", X)
        np.save(work / "y.npy", np.r_[np.zeros(200, int), np.ones(200, int)])
        np.save(work / "x_new.npy", x)
        config = {"name": "embed_check", "seed": 0,
                  "dataset": {"name": "files", "features": "X.npy", "labels": "y.npy"},
                  "kernel": {"name": "rbf", "factorization": "pivoted_cholesky", "rank": 30},
                  "constraints": {"name": "idealized_pairs", "count": 200},
                  "solver": {"name": "burg", "slack": 1.0, "tol": 1.0e-8}, "evaluate": []}
        (work / "embed_check.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        cli = [sys.executable, "-m", "kernlearn_cli"]
        subprocess.run(cli + ["run", "embed_check.yaml", "--out", "res"], cwd=work, check=True, capture_output=True)
        (cell,) = [p.parent for p in (work / "res").glob("*/factors.h5")]
        subprocess.run(cli + ["embed", str(cell), "x_new.npy", "-o", "row.npy"], cwd=work, check=True,
                       capture_output=True)
        with h5py.File(cell / "factors.h5") as f:
            G = f["G"][()]
        row = np.load(work / "row.npy")
    sigma = rbf_bandwidth(X, "median")
    G0 = rbf(Dataset("train", X=X), sigma=sigma, factorization="pivoted_cholesky", rank=30)
    Gu = rbf(Dataset("union", X=np.vstack([X, x])), sigma=sigma, factorization="pivoted_cholesky", rank=30)
    T = np.linalg.lstsq(G0, G, rcond=None)[0]
    ref = Gu[-1:] @ T
    err = float(np.abs(row - ref).max())
    print(f"G = G0 T residual {np.abs(G0 @ T - G).max():.2g}")
    print(f"embed's row against the union's row (learned): {err:.2g} absolute, {err / np.abs(ref).max():.2g} relative")
    print(f"the union's training rows against G0: {np.abs(Gu[:-1] - G0).max():.2g}")


if __name__ == "__main__":
    main()
