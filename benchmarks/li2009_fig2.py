"""Li et al. (2009), Fig. 2: time to traverse the path and test error vs gamma on uspst.

Reads the records of ``kernlearn run configs/papers/li2009/uspst.yaml`` (each keeps the path's
``error_path`` / ``gamma_path``), prints seconds per path and the error at each gamma, and draws
results/figures/li2009_fig2_uspst.png.

    python benchmarks/li2009_fig2.py RESULTS_DIR [--figure PATH]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("--figure", type=Path, default=Path("results/figures/li2009_fig2_uspst.png"))
    args = ap.parse_args()
    recs = [json.loads(p.read_text()) for p in sorted(args.results.rglob("record.json"))]
    if not recs:
        raise SystemExit(f"no finished cells under {args.results}")
    gammas = np.array(recs[0]["metrics"]["gamma_path"])
    errors = np.array([r["metrics"]["error_path"] for r in recs])
    secs = np.array([r["seconds"] for r in recs])
    print(f"{len(recs)} path(s), n = {recs[0]['n']}, {recs[0]['constraints']} triplets: "
          f"{secs.mean():.0f} s per path (min {secs.min():.0f}, max {secs.max():.0f}); "
          f"iterations {np.mean([r['iterations'] for r in recs]):.0f}")
    print("| log2 gamma | test error |\n| ---: | ---: |")
    for g, e, s in zip(np.log2(gammas), errors.mean(0), errors.std(0)):
        print(f"| {g:.0f} | {e:.4f} ± {s:.4f} |")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.errorbar(np.log2(gammas), errors.mean(0), yerr=errors.std(0), marker="o", capsize=3)
    ax.set_xlabel("log2 gamma")
    ax.set_ylabel("test error (KPCA 10 + 1-NN)")
    ax.set_title(f"uspst, log-loss, alpha = 32: {secs.mean():.0f} s per path")
    fig.tight_layout()
    args.figure.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.figure, dpi=120)
    print(f"figure: {args.figure}")


if __name__ == "__main__":
    main()
