"""Li et al. (2009), Tables 3-4: what the relative stopping rule gives up against the absolute one.

Pairs the cells of two result folders that differ only in ``solver.stop`` (same dataset, path
multiplier and seed), e.g. ``make li2009-table3`` (relative) and ``make li2009-table3-absolute``,
and prints per dataset the iterations under each rule, the relative objective excess of the
relative rule's solution, (f_rel - f_abs) / |f_abs|, and its test error beside the absolute one's.

    python benchmarks/causes/li2009_stop_rules.py RELATIVE_DIR ABSOLUTE_DIR
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, parsed before the heavy imports below (``--help`` answers at once)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("relative", type=Path)
    ap.add_argument("absolute", type=Path)
    return ap.parse_args(argv)


if __name__ == "__main__":                 # --help and a bad option answered before the heavy imports
    arguments()

import numpy as np  # noqa: E402


def records(folder: Path) -> dict:
    out = {}
    for p in folder.rglob("record.json"):
        r = json.loads(p.read_text())
        out[(r["dataset"], r["grid"].get("solver.path", 0), r["seed"])] = r
    return out


def main() -> None:
    args = arguments()
    rel, ab = records(args.relative), records(args.absolute)
    rows = defaultdict(lambda: defaultdict(list))
    for key in sorted(rel.keys() & ab.keys()):
        r, a = rel[key], ab[key]
        row = rows[(key[0], "baseline" if key[1] == 0 else "path")]
        row["it_rel"].append(r["iterations"])
        row["it_abs"].append(a["iterations"])
        row["excess"].append((r["objective"] - a["objective"]) / abs(a["objective"]))
        row["err_rel"].append(r["metrics"]["error"])
        row["err_abs"].append(a["metrics"]["error"])
    if not rows:
        raise SystemExit(f"no cells in common between {args.relative} and {args.absolute}")
    print("| dataset | cells | iterations relative / absolute | objective excess, median (max) "
          "| test error relative / absolute |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for (name, kind), v in sorted(rows.items()):
        ex = np.array(v["excess"])
        print(f"| {name} ({kind}) | {len(ex)} | {np.mean(v['it_rel']):.1f} / {np.mean(v['it_abs']):.1f} | "
              f"{np.median(ex):.1e} ({ex.max():.1e}) | {np.mean(v['err_rel']):.3f} / {np.mean(v['err_abs']):.3f} |")


if __name__ == "__main__":
    main()
