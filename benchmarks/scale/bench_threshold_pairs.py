"""``threshold_pairs`` by a k-d tree against the all-pairs scan it replaced (issue 45 item 1), one process.

    python benchmarks/scale/bench_threshold_pairs.py N [N ...] [--rev 5c12826^] [--old-up-to 40000]

n points in 3 dimensions (standard normal, seed 1) as the factor G, ``gamma_scale = 2 n^(-2/3)`` (about
two pairs a point).  For each n the current generator runs, and the all-pairs scan of ``--rev`` (loaded
from git, as benchmarks/scale/bench_trin_memory.py loads an older trin.py; nothing old is kept in the package)
up to ``--old-up-to`` points: pairs found, identical or not, CPU seconds and peak added memory
(:class:`kernlearn_cli.resources.PeakMemory`).
"""

import argparse
import subprocess
import time
import types
from pathlib import Path


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, parsed before the heavy imports below (``--help`` answers at once)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("n", type=int, nargs="+")
    ap.add_argument("--rev", default="5c12826^", help="the revision of the all-pairs scan")
    ap.add_argument("--old-up-to", type=int, default=40000, help="largest n the old scan runs at")
    return ap.parse_args(argv)


if __name__ == "__main__":                 # --help and a bad option answered before the heavy imports
    arguments()

import numpy as np  # noqa: E402

from kernlearn_cli.constraints.threshold import threshold_pairs  # noqa: E402
from kernlearn_cli.resources import PeakMemory  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def old_threshold_pairs(rev: str):
    """The function ``threshold_pairs`` of ``kernlearn_cli/constraints/threshold.py`` at ``rev``."""
    src = subprocess.run(["git", "show", f"{rev}:kernlearn_cli/constraints/threshold.py"], cwd=ROOT,
                         check=True, capture_output=True, text=True).stdout
    src = src.replace('@constraints.register("threshold_pairs")', "")         # (the name is today's)
    module = types.ModuleType("kernlearn_cli.constraints._threshold_old")
    module.__package__ = "kernlearn_cli.constraints"
    exec(compile(src, f"{rev}:threshold.py", "exec"), module.__dict__)
    return module.threshold_pairs


def main() -> None:
    args = arguments()
    old = old_threshold_pairs(args.rev)
    data = types.SimpleNamespace(name="points")
    for n in args.n:
        G = np.random.default_rng(1).standard_normal((n, 3))
        data.n = n
        found = {}
        for name, func in (("new", threshold_pairs), ("old", old))[: 2 if n <= args.old_up_to else 1]:
            t = time.process_time()
            with PeakMemory() as mem:
                found[name] = func(data, G, rng=None, gamma_scale=2 * n ** (-2 / 3))
            print(f"n={n} {name}: {found[name].i.size} pairs, {time.process_time() - t:.2f} s CPU, "
                  f"+{mem.added_bytes / 1e6:.0f} MB", flush=True)
        if len(found) == 2:
            a, b = found["old"], found["new"]
            same = all(np.array_equal(getattr(a, k), getattr(b, k)) for k in ("i", "j", "kind", "bound"))
            print(f"n={n}: identical pairs, kinds and bounds: {same}", flush=True)


if __name__ == "__main__":
    main()
