"""Li et al. (2009) study, stage 2: labelings per group from stage 1's measured cost (study.yaml,
*Labelings*).  Reads the record archive only (never a result), prints each group's stage-1 cost,
the common extra time T, L_g and the experiments to add to study.yaml.

    python benchmarks/sizing/li2009_size_stage2.py [--results results]
"""

from __future__ import annotations

import argparse
from pathlib import Path


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, parsed before the heavy imports below (``--help`` answers at once)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default="results")
    return ap.parse_args(argv)


if __name__ == "__main__":                 # --help and a bad option answered before the heavy imports
    arguments()

from kernlearn_cli.archive import Archive  # noqa: E402
from kernlearn_cli.config import expand  # noqa: E402
from kernlearn_cli.reproduce.layout import Layout, expected_config  # noqa: E402
from kernlearn_cli.study.budget import labelings_by_budget  # noqa: E402
from kernlearn_cli.study.reader import load_study  # noqa: E402

BUDGET = 4 * 3600.0                 # the whole study, CPU seconds on this 2-core machine
STAGE2 = "_stage2"                  # stage 2's experiments end so; every other experiment is stage 1's
#: Stage-1 CPU seconds spent on cells stopped unfinished (no record): the two breast TRIN paths
#: started in the paper's row order (study.yaml, the first amendment), 895 s and 894 s, and the
#: two Ionosphere TRIN paths (α = 8, 16) the old order started before it was stopped, 107 s and 63 s.
UNRECORDED = 895.0 + 894.0 + 107.0 + 63.0
PAPER = {"uspst": 10}               # the paper's labelings (50 elsewhere)
CONTEXT = {"table3_trin_relative", "table3_trin_relative_hard", "table3_pr_cg_relative",
           "table3_pr_cg_relative_baselines"}
CONTEXT_MOST = 5
DONE = {"table5_laplacian"}         # runs the paper's 50 in stage 1
#: Experiments on budgets of their own (study.yaml: uspst's 40-minute piece, Fig. 1's 30 minutes),
#: added after the sizing: neither stage 1's spending nor a group of stage 2.
OWN_BUDGET = {"uspst", "fig1_itml", "fig1_trin"}
#: The rows stage 1 did not reach, run on amendment 3's own budget (one experiment per cell, named
#: t3_<set>_<α> / t4_<set>_<α>): added after the sizing too.
AMENDMENT_3 = ("t3_", "t4_")
#: Groups stage 1 ran in part (Ionosphere's Table 3 and heart's Table 4 at α = 2 and 4 only): their
#: cost is stage 1's, and they keep their one labeling (study.yaml, *As run*).
IN_PART = {"table3_trin_hard", "table3_pr_cg_heart"}


def cpu(record: dict) -> float:
    return (record.get("provenance") or {}).get("cpu_seconds", record["seconds"])


def main(argv: list[str] | None = None) -> None:
    args = arguments(argv)
    study = load_study(Path(__file__).resolve().parents[2] / "configs" / "papers" / "li2009" / "study.yaml")
    layout = Layout.of(Path(args.results), quick=False)
    spent, costs, most, untested = 0.0, {}, {}, []
    for name, e in study.experiments.items():
        if name.endswith(STAGE2) or name in OWN_BUDGET or name.startswith(AMENDMENT_3):
            continue
        cells = expand(expected_config(e, quick=False))
        records = Archive.read(layout.archive(study, name), name).records
        spent += sum(cpu(records[c.id]) for c in cells if c.id in records)
        if name in DONE or name in IN_PART:
            continue
        for dataset in dict.fromkeys(c.grid_values.get("dataset", c.config["dataset"])["name"] for c in cells):
            mine = [c for c in cells if c.config["dataset"]["name"] == dataset]
            if all(c.id in records for c in mine):
                costs[(name, dataset)] = sum(cpu(records[c.id]) for c in mine)
                most[(name, dataset)] = CONTEXT_MOST if name in CONTEXT else PAPER.get(name, 50)
            else:
                untested.append((name, dataset, sum(c.id in records for c in mine), len(mine)))
    spent += UNRECORDED
    left = BUDGET - spent
    T, L = labelings_by_budget(costs, most, left)
    print(f"stage 1: {spent:.0f} s CPU of {BUDGET:.0f}; left for stage 2: {left:.0f} s; T = {T:.1f} s")
    print("group | stage-1 cost c_g (s) | P_g | L_g | stage-2 compute (s)")
    for g, c in costs.items():
        print(f"{g[0]} {g[1]} | {c:.1f} | {most[g]} | {L[g]} | {(L[g] - 1) * c:.0f}")
    for name in sorted(IN_PART):
        print(f"{name} | ran in part in stage 1 | - | 1 | -")
    for name, dataset, done, n in untested:
        print(f"{name} {dataset} | untested in stage 1 ({done} of {n} cells) | - | 0 | -")
    print(f"stage 2 total: {sum((L[g] - 1) * c for g, c in costs.items()):.0f} s\n\nexperiments:")
    for (name, dataset), n in L.items():
        if n < 2:
            continue
        e = study.experiments[name]
        cells = [c for c in expand(expected_config(e, quick=False)) if c.config["dataset"]["name"] == dataset]
        spec = next(c.config["dataset"] for c in cells)
        flow = "{" + ", ".join(f"{k}: {v}" for k, v in spec.items()) + "}"
        own = [x for x in e.set if not x.startswith("grid.dataset=")]   # the dataset axis is replaced
        print(f"  {name}_{dataset}{STAGE2}:\n    config: {e.config.name}\n"
              f"    set: {own + [f'grid.dataset=[{flow}]', f'grid.seed=range(1, {n})']}\n"
              f"    seconds_per_cell: {costs[(name, dataset)] / len(cells):.3g}\n    quick: false")


if __name__ == "__main__":
    main()
