"""Li et al. (2009) Table 5, the linear loss: how far its path can leave K0 (issue 47, item 4).

ψ(x) = −x has a minimiser only for loss weights w < w_sup = 1 / λ_max(Σ A_i, K0⁻¹)
(:func:`kernlearn_cli.solvers.trin.linear_weight_sup`), i.e. γ < g_sup = w_sup · m (m labelled
points, ``normalize``), and the path stops at its last γ ≤ g_sup / 2 (``trin.py``, the path's end).
For every archived linear-loss labeling of Table 5 this rebuilds the cell's problem (its data, K0
and seeded triplets: no solve), computes g_sup, and prints per dataset: g_sup, the path's last γ,
the γ leave-one-out picks, and how often the chosen kernel's test error equals K0's (the
``table5_laplacian`` cell of the same labeling).

    python benchmarks/causes/li2009_linear_loss_reach.py [--results results] [--limit N]
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, parsed before the heavy imports below (``--help`` answers at once)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default="results")
    ap.add_argument("--limit", type=int, default=0, help="labelings per dataset at most (0: all)")
    return ap.parse_args(argv)


if __name__ == "__main__":                 # --help and a bad option answered before the heavy imports
    arguments()

import numpy as np  # noqa: E402

from kernlearn_cli.archive import Archive  # noqa: E402
from kernlearn_cli.config import expand  # noqa: E402
from kernlearn_cli.prepare import prepare  # noqa: E402
from kernlearn_cli.reproduce.layout import Layout, expected_config  # noqa: E402
from kernlearn_cli.solvers.trin import build_problem, linear_weight_sup  # noqa: E402
from kernlearn_cli.study.reader import load_study  # noqa: E402

EXPERIMENTS = ("table5", "table5_sonar_stage2", "table5_ionosphere_stage2", "table5_heart_stage2",
               "table5_wine_stage2")


def g_sup(cell) -> float:
    """The cell's γ bound for the linear loss (its problem built as trin builds it, no solve)."""
    prep = prepare(cell)
    s = {"normalize": True, "t": 0.7, "itml_percentiles": (5.0, 95.0), **prep.bound["solver"][1]}   # trin's defaults
    prob, _, _, meta = build_problem(prep.G0, prep.constraints, "linear", s["gamma"], s["normalize"], s["t"],
                                     tuple(s["itml_percentiles"]), "trin", support_first=True)
    return linear_weight_sup(prob) * (meta["labeled"] if s["normalize"] else 1.0)


def main(argv: list[str] | None = None) -> None:
    args = arguments(argv)
    study = load_study(Path(__file__).resolve().parents[2] / "configs" / "papers" / "li2009" / "study.yaml")
    layout = Layout.of(Path(args.results), quick=False)
    k0 = {}
    base = study.experiments["table5_laplacian"]
    records = Archive.read(layout.archive(study, "table5_laplacian"), "table5_laplacian").records
    for c in expand(expected_config(base, quick=False)):
        if c.id in records:
            k0[(c.config["dataset"]["name"], c.seed)] = records[c.id]["metrics"]["error"]
    rows = defaultdict(list)
    t0 = time.process_time()
    for name in EXPERIMENTS:
        e = study.experiments[name]
        records = Archive.read(layout.archive(study, name), name).records
        for c in expand(expected_config(e, quick=False)):
            if c.config["solver"]["loss"] != "linear" or c.id not in records:
                continue
            ds = c.config["dataset"]["name"]
            if args.limit and len(rows[ds]) >= args.limit:
                continue
            r = records[c.id]
            rows[ds].append({"g_sup": g_sup(c), "last": r["info"]["gamma"], "loo": r["metrics"]["gamma_loo"],
                             "error": r["metrics"]["error_loo"], "k0": k0.get((ds, c.seed)),
                             "moved": max(r["metrics"]["error_path"]) - min(r["metrics"]["error_path"])})
    print("| dataset | labelings | g_sup (median, range) | last γ of the path | γ chosen by leave-one-out "
          "| error = K0's | test error over the path: largest − smallest (median) |")
    print("| --- | ---: | --- | --- | --- | ---: | ---: |")
    for ds, rs in rows.items():
        g = np.array([r["g_sup"] for r in rs])
        last = sorted({r["last"] for r in rs})
        loo = np.array([r["loo"] for r in rs])
        same = sum(r["k0"] is not None and abs(r["error"] - r["k0"]) < 1e-12 for r in rs)
        known = sum(r["k0"] is not None for r in rs)
        print(f"| {ds} | {len(rs)} | {np.median(g):.3g} ({g.min():.3g}–{g.max():.3g}) | "
              f"{', '.join(f'2^{np.log2(x):.0f}' for x in last)} | "
              f"2^-12 in {int(np.sum(np.isclose(loo, 2.0 ** -12)))} of {len(rs)} | {same} of {known} | "
              f"{np.median([r['moved'] for r in rs]):.4f} |")
    print(f"\n({time.process_time() - t0:.0f} s CPU)")


if __name__ == "__main__":
    main()
