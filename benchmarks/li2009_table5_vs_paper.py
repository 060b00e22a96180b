"""Li et al. (2009), Table 5: our test errors beside the paper's, in units of the paper's std.

Reads the records of ``make li2009-table5`` (the four losses, γ by leave-one-out: metric
``error_loo``; the Laplacian baseline: metric ``error``) and prints, per dataset and column, our
mean ± std (%), the paper's, and (ours − paper) / paper std; |z| > 2 is marked.

    python benchmarks/li2009_table5_vs_paper.py results/li2009/table5 results/li2009/table5_laplacian
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

COLUMNS = ("log", "lmnn", "itml", "linear", "laplacian")
PAPER = {  # Table 5: error % (std) over 50 trials, columns as COLUMNS
    "breast_cancer_wisconsin": [(3.54, 0.73), (3.54, 0.74), (3.62, 1.26), (4.78, 0.84), (4.78, 0.87)],
    "sonar": [(17.79, 4.14), (17.52, 5.06), (17.37, 4.10), (16.22, 4.15), (18.50, 3.51)],
    "ionosphere": [(9.40, 1.46), (8.42, 2.05), (9.08, 1.70), (7.07, 1.81), (9.68, 1.85)],
    "heart": [(18.22, 2.65), (18.22, 2.61), (18.46, 3.29), (23.64, 3.61), (23.53, 3.35)],
    "wine": [(2.57, 1.39), (3.01, 1.41), (2.63, 1.51), (3.09, 1.95), (3.39, 1.09)],
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("losses", type=Path)
    ap.add_argument("laplacian", type=Path)
    args = ap.parse_args()
    errors = defaultdict(list)
    for p in args.losses.rglob("record.json"):
        r = json.loads(p.read_text())
        errors[(r["dataset"], r["grid"]["solver.loss"])].append(100 * r["metrics"]["error_loo"])
    for p in args.laplacian.rglob("record.json"):
        r = json.loads(p.read_text())
        errors[(r["dataset"], "laplacian")].append(100 * r["metrics"]["error"])
    print("| dataset | " + " | ".join(COLUMNS) + " |")
    print("| --- |" + " ---: |" * len(COLUMNS))
    for name, paper in PAPER.items():
        cells = []
        for col, (m, s) in zip(COLUMNS, paper):
            x = np.array(errors[(name, col)])
            if len(x) < 2:
                cells.append("")
                continue
            z = (x.mean() - m) / s
            cells.append(f"{x.mean():.2f} ± {x.std(ddof=1):.2f} vs {m} ± {s}: {z:+.1f}{' **' if abs(z) > 2 else ''}")
        print(f"| {name} (n = {len(errors[(name, 'log')])}) | " + " | ".join(cells) + " |")
    print("\n** = more than two of the paper's standard deviations away.")


if __name__ == "__main__":
    main()
