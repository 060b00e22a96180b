"""Issue 47 items 5 and 6: the cause experiments of the studies' "deviates", archived and read against the studies.

Each cause experiment is a ``kernlearn run`` config under ``configs/papers/<paper>/causes/`` (its header
gives the commands and the budget) run into ``results/causes/<paper>/<name>/``.  This script packs every
such folder into ``results/causes/<paper>/<name>.jsonl.gz`` with ``--pack`` (the studies' record-archive
format: a header with the committed config, whose grid the run's pieces cover in parts, one record per
finished cell, sorted; factors are not kept),
then pairs each archived cell with the study's archived cell of the same setting and seed and prints
the comparison (Markdown), with the experiment's measured CPU time (the records'
``provenance.cpu_seconds``).  Without ``--pack`` it reads the committed archives alone.

    python benchmarks/causes/causes.py hu2013 | li2009 | kulis2006 | tsuda2005 [--pack] [--results results]
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np

from kernlearn_cli.archive import SUFFIX, Archive
from kernlearn_cli.config import load

ROOT = Path(__file__).resolve().parents[2]

TABLE3 = ("table3_trin", "table3_trin_heart_stage2", "table3_trin_sonar_stage2", "table3_trin_wine_stage2")
TABLE5 = ("table5", "table5_sonar_stage2", "table5_heart_stage2", "table5_wine_stage2")
PR_CG = ("table3_pr_cg", "table3_pr_cg_heart", "table3_pr_cg_wine_stage2")
RBF = {"kernel": {"name": "rbf", "bandwidth": "median", "standardize": True}}
#: Per paper, the comparisons: (cause experiment, the study's experiments its cells are paired with,
#: the metrics compared, the grid axes left out of the pairing, the study's cells kept: axis -> value).
PAIRS = {
    "hu2013": [("adult_converged", ("table2_adult_heldout",), ("pairwise_accuracy", "iterations"), (), {})],
    "li2009": [("k0_unscaled", TABLE3, ("iterations", "error"), (), {}),
               ("stop_relative", TABLE3, ("iterations", "error"), (), {}),
               ("pr_cg_preconditioned", PR_CG, ("iterations", "error"), (), {}),
               ("pr_cg_preconditioned", TABLE3, ("iterations", "error"), (), {}),
               ("k0_unscaled_table5", TABLE5, ("error_loo", "error_best", "iterations"), (), {}),
               ("itml_6400_trials", ("fig1_itml",), ("iterations",), ("seed",), {"seed": 0}),
               ("uspst_labeling", ("uspst",), ("gamma_best", "error_best"), ("seed",), {}),
               ("baseline_stop_relative", TABLE3, ("iterations", "error"), (), {})],
    "kulis2006": [("wine_vn_more", ("fig2_wine_target",), ("knn_accuracy",), ("constraints.count", "kernel"), RBF),
                  ("digits_subsets", ("fig1_digits_initial",), ("knn_accuracy",), ("dataset.subset_seed",), {}),
                  ("digits_slack_burg", ("fig1_digits_burg",), ("iterations",), ("constraints.count",), {"constraints.count": 200}),
                  ("digits_slack_von_neumann", ("fig1_digits_von_neumann",), ("iterations",), ("constraints.count",),
                   {"constraints.count": 200}),
                  ("gyrb_like_offset", ("gyrb_protocol_projections_gyrb_like",), ("iterations",), ("dataset.offset",), {})],
    # the 52-point wine subset against the full wine's cells of the same setting and seed
    "tsuda2005": [("wine_n52_target", ("fig2_wine_target",), ("knn_error",), ("dataset",), {}),
                  ("wine_n52_meg", ("fig2_wine_meg_long",), ("knn_error", "bound_ratio"), ("dataset",), {})],
}


def pack(folder: Path, config: Path) -> Archive:
    """Add the cells of a ``kernlearn run`` results folder to its archive (written when its bytes change)."""
    archive = Archive.read(folder.parent / f"{folder.name}{SUFFIX}", folder.name)
    archive.config = load(config, every_cell=False)
    for path in sorted(folder.glob("*/record.json")):
        archive.add(json.loads(path.read_text()), source=str(path))
    archive.write()
    return archive


def key(record: dict, free: tuple) -> tuple:
    """A cell's dataset, setting (its grid point, without the axes in ``free``) and seed (dataset or seed:
    None if free)."""
    grid = {k: v for k, v in record["grid"].items() if k not in ("seed", "dataset", "dataset.name", *free)}
    return (None if "dataset" in free else record["dataset"], json.dumps(grid, sort_keys=True),
            None if "seed" in free else record["seed"])


def value(record: dict, metric: str) -> float:
    return float(record["iterations"] if metric == "iterations" else record["metrics"][metric])


def paired(diffs: list[float]) -> str:
    """Mean paired difference with its standard error, and the difference in standard errors."""
    d = np.round(np.asarray(diffs, dtype=float), 12)          # an exact tie prints as 0
    if len(d) < 2:
        return f"{d.mean():+.4g} (one pair)"
    se = round(d.std(ddof=1) / math.sqrt(len(d)), 12)            # equal pairs: 0, not a rounding residue
    return f"{d.mean():+.4g} ± {se:.2g} ({d.mean() / se:+.1f} SE)" if se > 0 else f"{d.mean():+.4g} (all pairs equal)"


def compare(name: str, sources: tuple, metrics: tuple, free: tuple, keep: dict, paper: str, results: Path) -> float:
    """Print the cause experiment beside the study's cells of the same settings; returns its CPU seconds."""
    mine = Archive.read(results / "causes" / paper / f"{name}{SUFFIX}", name).records
    study = {}
    for source in sources:
        for r in Archive.read(results / "records" / paper / f"{source}{SUFFIX}", source).records.values():
            if all(r["grid"].get(k) == v for k, v in keep.items()):
                study[key(r, free)] = r
    groups = defaultdict(list)
    for r in mine.values():
        groups[key(r, ())[:2]].append((r, study.get(key(r, free))))
    cpu = sum((r.get("provenance") or {}).get("cpu_seconds", r["seconds"]) for r in mine.values())
    print(f"\n### {paper} {name} against {', '.join(sources)}: {len(mine)} cells, {cpu:.0f} s of CPU\n")
    print("| dataset | setting | cells | converged | paired | " + " | ".join(
        f"{m}: study | {m}: this | {m}: this − study (paired)" for m in metrics) + " |")
    print("| --- | --- | ---: | ---: | ---: |" + " ---: | ---: | --- |" * len(metrics))
    for (ds, setting), pairs in sorted(groups.items()):
        both = [(a, b) for a, b in pairs if b is not None]
        cells = [f"{ds} | {setting} | {len(pairs)} | {sum(bool(a['converged']) for a, _ in pairs)}/{len(pairs)} | "
                 f"{len(both)}"]
        for m in metrics:
            ours, theirs = ([value(x[i], m) for x in both] for i in (0, 1))
            cells.append(f"{np.mean(theirs):.4g} | {np.mean(ours):.4g} | {paired([a - b for a, b in zip(ours, theirs)])}"
                         if both else f"– | {np.mean([value(a, m) for a, _ in pairs]):.4g} | –")
        print("| " + " | ".join(cells) + " |")
    return cpu


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paper", choices=sorted(PAIRS))
    ap.add_argument("--results", default="results", type=Path)
    ap.add_argument("--pack", action="store_true", help="archive the run folders first")
    args = ap.parse_args(argv)
    if args.pack:
        for name in dict.fromkeys(c[0] for c in PAIRS[args.paper]):
            if (args.results / "causes" / args.paper / name).is_dir():
                pack(args.results / "causes" / args.paper / name, ROOT / "configs" / "papers" / args.paper / "causes" /
                     f"{name}.yaml")
    cpu = {c[0]: compare(*c, paper=args.paper, results=args.results) for c in PAIRS[args.paper]}
    total = sum(cpu.values())
    print(f"\n{args.paper}: {total:.0f} s of CPU in all")


if __name__ == "__main__":
    main()
