"""Issue 47 item 5, li2009 §6.1 "TRIN is virtually unaffected" (explanation trin_unaffected).

TRIN's CPU time at 6400 pairs over its time at 400 is 0.36-4.6 across gamma, 2 of 9 within the rule's
factor 2. The cause tested: the time ratio splits into the ratio of Newton iterations (which moves
with gamma) times the ratio of CPU seconds per iteration (the O(c d^2) gradient and Hessian terms:
16 times the pairs). Reads the study's archived cells (``results/records/li2009/fig1_trin.jsonl.gz``,
the solves' CPU seconds, as li2009_fig1_trin_seconds) and writes ``results/causes/li2009/trin_time_split.csv``: per
gamma, both counts' iterations and CPU seconds and the three ratios (time = iterations x per-iteration).
No solve is run (budget: seconds).

    python benchmarks/causes/li2009_trin_time_split.py
"""

import argparse
import csv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FEW, MANY = 400, 6400


def rows() -> list[dict]:
    """One row per gamma: iterations and CPU seconds at FEW and MANY pairs, and their ratios."""
    from kernlearn_cli.archive import Archive
    cells = Archive.read(ROOT / "results/records/li2009/fig1_trin.jsonl.gz", "fig1_trin").records.values()
    by = {(r["grid"]["solver.gamma"], r["grid"]["constraints.count"]): r for r in cells if r["seed"] == 0}
    out = []
    for gamma in sorted({g for g, _ in by}):
        few, many = by[gamma, FEW], by[gamma, MANY]
        it = (few["iterations"], many["iterations"])
        cpu = (few["cpu_seconds"], many["cpu_seconds"])
        out.append({"gamma": gamma, "iterations_400": it[0], "iterations_6400": it[1],
                    "capped_400": not few["converged"], "capped_6400": not many["converged"],
                    "cpu_400": f"{cpu[0]:.4f}", "cpu_6400": f"{cpu[1]:.4f}",
                    "time_ratio": f"{cpu[1] / cpu[0]:.3f}", "iteration_ratio": f"{it[1] / it[0]:.3f}",
                    "per_iteration_ratio": f"{cpu[1] / it[1] / (cpu[0] / it[0]):.3f}"})
    return out


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args(argv)
    table = rows()
    path = ROOT / "results/causes/li2009/trin_time_split.csv"
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)
    print(path.read_text())


if __name__ == "__main__":
    main()
