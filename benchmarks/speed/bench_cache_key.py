"""What an edit costs the compiled-kernel cache (issue 55, item 5): ``kernlearn warmup`` of every
solver after editing a NumPy-only solver, and after editing a compiled helper, in one run.

    python benchmarks/speed/bench_cache_key.py                       # this checkout's kernlearn_cli (~5 min)
    python benchmarks/speed/bench_cache_key.py --tree OTHER_CHECKOUT  # another version, for a before/after

A copy of the package goes into a scratch folder with its own ``NUMBA_CACHE_DIR``; then, each a fresh
process timed by wall clock:

1. ``kernlearn warmup`` with an empty cache (everything compiles);
2. again, nothing edited (everything loads);
3. after appending a comment to ``solvers/trin.py`` (no numba kernel; TRIN's kernels live in
   ``_trin_kernels.py``): a cache keyed to what each kernel reads loads everything;
4. after appending a comment to ``solvers/_cyclic.py`` (compiled helpers of the Burg and von Neumann
   sweeps): only the kernels that read it compile.

It also prints the ``kernlearn-*`` folders the cache holds at the end.  Exit status 0 whatever the times.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
STEPS = (("cold cache", None), ("nothing edited", None),
         ("comment in solvers/trin.py (NumPy only)", "solvers/trin.py"),
         ("comment in solvers/_cyclic.py (compiled helpers)", "solvers/_cyclic.py"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, default=REPO, help="checkout whose kernlearn_cli is measured")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="kl-cachekey-") as tmp:
        tmp = Path(tmp)
        shutil.copytree(args.tree / "kernlearn_cli", tmp / "kernlearn_cli",
                        ignore=shutil.ignore_patterns("__pycache__"))
        env = {**os.environ, "PYTHONPATH": str(tmp), "NUMBA_CACHE_DIR": str(tmp / "numba")}
        print(f"tree: {args.tree}")
        for what, edit in STEPS:
            if edit:
                with open(tmp / "kernlearn_cli" / edit, "a") as f:
                    f.write("\n# an edit that changes no number\n")
            t0 = time.perf_counter()
            res = subprocess.run([sys.executable, "-m", "kernlearn_cli", "warmup"], env=env, cwd=tmp,
                                 capture_output=True, text=True)
            took = time.perf_counter() - t0
            status = "" if res.returncode == 0 else f"  (exit {res.returncode}: {res.stderr.strip()[-300:]})"
            print(f"  warmup, {what}: {took:.1f} s{status}", flush=True)
        folders = sorted(p.name for p in (tmp / "numba").glob("kernlearn-*"))
        print(f"  cache folders at the end ({len(folders)}): {', '.join(folders)}")


if __name__ == "__main__":
    main()
