"""Issue 54 item 5: rerun a sample of the studies' archived cells and count those bit-identical to their records.

For each paper (``configs/papers/<paper>/study.yaml``) and each of its experiments, the archived cells
of ``results/records/<paper>/<experiment>.jsonl.gz`` are ranked by their archived cost (the record's
``provenance.cpu_seconds``, else its wall or solver seconds; ties by cell id) and the ``--per-experiment``
cheapest are rerun (``--sample seeded``: as many drawn at random, seeded by ``--seed``, the paper and the
experiment), in this process, with the experiment's ``set`` and ``env`` as ``kernlearn reproduce`` runs
them, into a scratch folder (``--out``, default a temporary one; the committed archives are never
written).  The cells are taken one per experiment at a time, cheapest first, while their archived costs
add up to at most ``--max-seconds``, and no cell starts after ``--max-seconds`` of wall time.

Compared, bit for bit, as ``kernlearn reproduce PAPER --verify N`` compares one paper's cells: the functions
are :mod:`kernlearn_cli.reproduce.verify`'s (what is compared, and why a cell may differ: another kind of
machine, other code).

    python benchmarks/checks/verify_archives.py [PAPER ...] [--per-experiment N] [--max-seconds S]
        [--sample cheapest|seeded] [--seed K] [--experiment NAME ...] [--out DIR] [--results results]
        [--json FILE] [--list]

Exit code 1 when a rerun cell is not bit-identical to its record (or failed), 0 otherwise.
Run from the repository's folder with ``KERNLEARN_DATA_MIRROR`` set (``--jobs`` is always one: the
cells run here, one after the other, each at ``KERNLEARN_BLAS_THREADS`` threads, default 1).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from kernlearn_cli.reproduce.verify import candidates, report, sample, verify, within_budget

ROOT = Path(__file__).resolve().parents[2]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("papers", nargs="*", help="papers (default: every configs/papers/*/study.yaml)")
    parser.add_argument("--per-experiment", type=int, default=2, help="cells per experiment (default 2)")
    parser.add_argument("--max-seconds", type=float, default=300.0,
                        help="budget: archived costs of the cells taken, and wall time (default 300)")
    parser.add_argument("--sample", choices=("cheapest", "seeded"), default="cheapest")
    parser.add_argument("--seed", type=int, default=0, help="--sample seeded: the draw's seed")
    parser.add_argument("--experiment", action="append", help="only these experiments (repeatable)")
    parser.add_argument("--out", type=Path, help="scratch results folder (default: a new temporary folder)")
    parser.add_argument("--results", type=Path, default=Path("results"), help="results root holding records/")
    parser.add_argument("--json", type=Path, help="also write the outcomes here")
    parser.add_argument("--list", action="store_true", help="only list the cells chosen, with their archived cost")
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    from kernlearn_cli.study.find import study_names

    papers = args.papers or study_names()
    if args.list:
        chosen = {p: sample(candidates(p, args.results, args.experiment), args.per_experiment, args.sample, args.seed)
                  for p in papers}
        taken, left = within_budget(chosen, args.max_seconds)
        for job in taken:
            print(f"{job.paper}/{job.experiment} {job.cell.id}: archived {job.cost:.2f} s")
        print(f"{len(taken)} cell(s), archived cost {sum(j.cost for j in taken):.1f} s; {len(left)} left out by "
              f"--max-seconds {args.max_seconds:g}")
        return 0
    outcomes, left = verify(papers, per_experiment=args.per_experiment, max_seconds=args.max_seconds,
                            how=args.sample, seed=args.seed, experiments=args.experiment, out=args.out,
                            results=args.results)
    print()
    counts = report(outcomes, left)
    if args.json:
        args.json.write_text(json.dumps({
            "counts": counts,
            "cells": [{"paper": o.job.paper, "experiment": o.job.experiment, "cell": o.job.cell.id,
                       "status": o.status, "seconds": o.seconds, "archived_seconds": o.job.cost,
                       "archived_by": (o.job.record.get("provenance") or {}).get("git_commit"),
                       "machine": o.machine,
                       "differences": o.differences, "error": o.error} for o in outcomes],
            "not_run": [{"paper": j.paper, "experiment": j.experiment, "cell": j.cell.id} for j in left]},
            indent=1, default=str))
    return 1 if any(o.status != "identical" for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
