"""Size and build time of the HTML reports (issue 48 item 1): ``kernlearn report`` of make run's folder and
of a synthetic 1,000-cell folder, and ``kernlearn reproduce li2009``'s paper report; each built twice and
compared byte for byte.

    python benchmarks/speed/bench_report.py                  # about a minute on a busy machine
    python benchmarks/speed/bench_report.py --cells 3000     # a larger synthetic folder

- make run's folder: ``results/quick_iris_burg`` (run ``make run``, or ``kernlearn run
  configs/quick.yaml``, first; 9 Burg cells on iris);
- the synthetic folder: make run's 9 cells copied into ``--cells`` cells (``constraints.count`` 10,
  20, ... x 10 seeds, the id each config gives; each cell's record and factors file (its histories)
  copied from one of the 9, its metrics perturbed by 1 %), in a temporary folder;
- li2009: the committed archives (``results/records/li2009``) copied into a temporary results root;
  the study's tables, figures and verdicts built there (``reproduce``'s ``build``), then its page.

Each figure is the CPU time (``time.process_time``) of building the page's text in this process,
the first build and the second (the second reuses matplotlib's font cache and imports), and the
page's size. Exit status 0 whatever the figures.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, parsed before the heavy imports below (``--help`` answers at once)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", type=int, default=1000, help="Cells of the synthetic folder.")
    return parser.parse_args(argv)


if __name__ == "__main__":                 # --help and a bad option answered before the heavy imports
    arguments()

sys.path.insert(0, str(REPO))

from kernlearn_cli.report.html import report_html  # noqa: E402


def synthetic(source: Path, out: Path, cells: int) -> Path:
    """``cells`` cells copied from the finished cells of ``source``, metrics perturbed, one grid."""
    import numpy as np

    from kernlearn_cli.config import Cell

    rng = np.random.default_rng(0)
    originals = sorted(p.parent for p in source.glob("*/record.json"))
    for k in range(cells):
        count, seed = 10 * (k // 10 + 1), k % 10
        origin = originals[k % len(originals)]
        rec = json.loads((origin / "record.json").read_text())
        rec["config"]["constraints"]["count"], rec["config"]["seed"] = count, seed
        grid = {"constraints.count": count, "seed": seed}
        cell = Cell(k, rec["config"], grid).id                   # the id a record's config and grid give
        rec.update(cell=cell, index=k, seed=seed, constraints=count, grid=grid)
        rec["metrics"] = {m: v * (1 + 0.01 * rng.standard_normal()) if isinstance(v, float) else v
                          for m, v in rec["metrics"].items()}
        (out / cell).mkdir(parents=True)
        (out / cell / "record.json").write_text(json.dumps(rec))
        shutil.copy(origin / "factors.h5", out / cell / "factors.h5")
    return out


def measure(name: str, build) -> None:
    """Build a page twice: CPU seconds of each, its size, and whether the two are the same bytes."""
    times, pages = [], []
    for _ in range(2):
        t0 = time.process_time()
        pages.append(build().encode())
        times.append(time.process_time() - t0)
    print(f"{name:<40} {len(pages[0]) / 1e6:7.3f} MB  build {times[0]:6.2f} s CPU (second {times[1]:6.2f} s)  "
          f"same bytes twice: {pages[0] == pages[1]}", flush=True)


def li2009_page(root: Path):
    """li2009's paper report from a copy of its archives (built first, as ``reproduce --no-run`` does)."""
    from kernlearn_cli.reproduce.build import build
    from kernlearn_cli.reproduce.layout import Layout
    from kernlearn_cli.reproduce.pages import report_page
    from kernlearn_cli.study.find import find_studies
    from kernlearn_cli.study.reader import load_study

    shutil.copytree(REPO / "results" / "records" / "li2009", root / "records" / "li2009")
    study = load_study(find_studies("li2009")[0])
    layout = Layout.of(root, False, root / "docs")
    v = build(study, layout, lambda _: None)
    return lambda: report_page(study, v, layout, "kernlearn reproduce li2009")


def main() -> None:
    args = arguments()
    quick = REPO / "results" / "quick_iris_burg"
    if not quick.is_dir():
        sys.exit(f"{quick} not found: run `make run` (kernlearn run configs/quick.yaml) first.")
    with tempfile.TemporaryDirectory() as tmp:
        measure("make run's folder (9 cells)", lambda: report_html([quick]))
        big = synthetic(quick, Path(tmp) / "synthetic", args.cells)
        measure(f"synthetic folder ({args.cells} cells)", lambda: report_html([big]))
        measure("li2009's paper report", li2009_page(Path(tmp) / "results"))


if __name__ == "__main__":
    main()
