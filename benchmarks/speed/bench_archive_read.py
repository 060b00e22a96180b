"""Reading the committed record archives: CPU time of today's read (format 2, ids as stored) beside
the read every call made before (issue 46 item 7: each record's id recomputed from its config,
:func:`kernlearn_cli.archive.current_id`, as ``archive.rekeyed`` did), in one process, alternating.

    PYTHONPATH=. python benchmarks/speed/bench_archive_read.py [--repeats 3]

Run on migrated (format-2) archives; a format-1 archive would be migrated by the first read.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, parsed before the heavy imports below (``--help`` answers at once)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    return parser.parse_args(argv)


if __name__ == "__main__":                 # --help and a bad option answered before the heavy imports
    arguments()

from kernlearn_cli.archive import Archive, current_id  # noqa: E402

ROOT = Path(__file__).resolve().parents[2] / "results" / "records"


def read_all(files: list[Path], rekey: bool) -> int:
    """Read every archive; with ``rekey``, recompute every record's id as each read did before."""
    count = 0
    for path in files:
        for cell, rec in Archive.read(path).records.items():
            count += 1
            if rekey and current_id(rec) != cell:
                raise SystemExit(f"{path}: cell {cell} has another id now: the archive needs migrating")
    return count


def main() -> None:
    args = arguments()
    files = sorted(ROOT.glob("*/*.jsonl.gz"))
    read_all(files, rekey=True)                       # imports and registries loaded once, outside the timing
    spent = {False: [], True: []}
    for _ in range(args.repeats):
        for rekey in (True, False):
            start = time.process_time()
            records = read_all(files, rekey)
            spent[rekey].append(time.process_time() - start)
    best = {k: min(v) for k, v in spent.items()}
    print(f"{len(files)} archives, {records} records (0 change id: checked by the rekeyed pass)")
    print(f"read with every id recomputed (before): {best[True]:.3f} s CPU (best of {args.repeats})")
    print(f"read as stored (now):                   {best[False]:.3f} s CPU (best of {args.repeats})")
    print(f"ratio: {best[True] / best[False]:.2f}x; recomputing took {1 - best[False] / best[True]:.0%} of the read")


if __name__ == "__main__":
    main()
