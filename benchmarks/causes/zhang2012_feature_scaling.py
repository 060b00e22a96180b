"""Zhang et al. (2012), a study choice measured (issue 47, item 6): the Gaussian kernel on unscaled features.

The study evaluates exp(−‖x − y‖²/b) on each data set's features as they come (the paper does not
say whether it scaled them).  This reruns the comparison's two Nyström methods (``compare_nystrom``
and ``compare_nystrom_prior``: the same cells, landmarks, labeled points and SVM) on features
standardized to zero mean and unit variance (:func:`kernlearn_cli.graph.scale_features`), and
prints per data set the gain of the prior over plain Nyström, paired by labeling (seed), on raw and
on standardized features (both computed here, by the same code path), each with its paired
standard error, and the λ the NKA criterion picks (an edge of the candidate set G marked).  The
raw cells are also compared with the study's archive: on spambase the SVM (C up to 2¹⁵, liblinear
stopping at its iteration limit) turns last-bit differences into other accuracies, so the count of
raw cells equal to the archive, and the largest difference, are printed.  Writes
``results/causes/zhang2012/feature_scaling.csv``.

    python benchmarks/causes/zhang2012_feature_scaling.py [--results results] [--seeds 10]
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import inspect
import math
import time
from collections import defaultdict
from pathlib import Path


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, parsed before the heavy imports below (``--help`` answers at once)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default="results", type=Path)
    ap.add_argument("--seeds", type=int, default=10, help="labelings per data set (the study's 10)")
    return ap.parse_args(argv)


if __name__ == "__main__":                 # --help and a bad option answered before the heavy imports
    arguments()

import numpy as np  # noqa: E402

from kernlearn_cli.archive import Archive  # noqa: E402
from kernlearn_cli.config import expand  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from kernlearn_cli.graph import scale_features  # noqa: E402
from kernlearn_cli.prepare import prepare, runner_extras  # noqa: E402
from kernlearn_cli.reproduce.layout import Layout, expected_config  # noqa: E402
from kernlearn_cli.rng import STREAM_EVALUATE, component_rng  # noqa: E402
from kernlearn_cli.study.reader import load_study  # noqa: E402
from kernlearn_cli.threads import blas_threads  # noqa: E402

METHODS = ("compare_nystrom", "compare_nystrom_prior")
METRIC = "svm_accuracy_cv"


def solve(cell, scaling: str) -> dict:
    """The cell's metrics and chosen λ with the features scaled by ``scaling`` (``none``: as the study)."""
    with threadpool_limits(limits=blas_threads()):         # as the runner: the same bits
        return _solve(cell, scaling)


def _solve(cell, scaling: str) -> dict:
    prep = prepare(cell)
    ds = dataclasses.replace(prep.dataset, X=scale_features(np.asarray(prep.dataset.X, dtype=float), scaling))
    solver, params = prep.bound["solver"]
    result = solver.func(None, prep.constraints, **runner_extras(solver.func, ds, None, cell.seed), **params)
    metrics = {}
    for k, (ev, ev_params) in enumerate(prep.bound["evaluate"]):
        wants = inspect.signature(ev.func).parameters
        extra = {key: v for key, v in (("result", result), ("constraints", prep.constraints)) if key in wants}
        metrics.update(ev.func(result.G, ds, rng=component_rng(cell.seed, STREAM_EVALUATE, k), **extra, **ev_params))
    return {"accuracy": metrics[METRIC], "lam": result.info.get("lam")}


def paired(d: list[float]) -> str:
    d = np.asarray(d, dtype=float)
    se = d.std(ddof=1) / math.sqrt(len(d))
    return f"{d.mean():+.4f} ± {se:.4f} ({d.mean() / se:+.1f} SE)" if se > 0 else f"{d.mean():+.4f} (all equal)"


def lam_text(lams: list[float], grid: list[float]) -> str:
    values, counts = np.unique(lams, return_counts=True)
    edge = {min(grid), max(grid)}
    return ", ".join(f"{v:g}{' (edge)' if v in edge else ''} ×{c}" for v, c in zip(values, counts))


def main(argv: list[str] | None = None) -> None:
    args = arguments(argv)
    study = load_study(Path(__file__).resolve().parents[2] / "configs" / "papers" / "zhang2012" / "study.yaml")
    layout = Layout.of(args.results, quick=False)
    rows, c0 = [], time.process_time()
    for method in METHODS:
        e = study.experiments[method]
        records = Archive.read(layout.archive(study, method), method).records
        for cell in expand(expected_config(e, quick=False)):
            if cell.seed >= args.seeds:
                continue
            archived = records[cell.id]
            raw, std = solve(cell, "none"), solve(cell, "standard")
            rows.append({"method": method, "dataset": archived["dataset"], "seed": cell.seed,
                         "archived": archived["metrics"][METRIC], "raw": raw["accuracy"],
                         "standardized": std["accuracy"], "lam_raw": raw["lam"], "lam_standardized": std["lam"]})
    cpu = time.process_time() - c0
    out = args.results / "causes" / "zhang2012" / "feature_scaling.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    lam_grid = expected_config(study.experiments["compare_nystrom_prior"], quick=False)["solver"]["lam"]
    by = defaultdict(dict)
    for r in rows:
        by[r["dataset"]].setdefault(r["method"], {})[r["seed"]] = r
    off = [abs(r["raw"] - r["archived"]) for r in rows]
    print(f"{out}: {len(rows)} cells, {cpu:.0f} s of CPU. Raw features recomputed here: {sum(d <= 1e-9 for d in off)} "
          f"of {len(rows)} equal the archive's {METRIC}, the largest difference {max(off):.4f}\n")
    print("| dataset | Nyström raw | Nyström standardized | prior − Nyström, raw (paired) "
          "| prior − Nyström, standardized (paired) | λ picked, raw | λ picked, standardized |")
    print("| --- | ---: | ---: | --- | --- | --- | --- |")
    for ds, m in sorted(by.items()):
        ny, pr = m["compare_nystrom"], m["compare_nystrom_prior"]
        seeds = sorted(set(ny) & set(pr))
        print(f"| {ds} | {np.mean([ny[s]['raw'] for s in seeds]):.4f} | "
              f"{np.mean([ny[s]['standardized'] for s in seeds]):.4f} | "
              f"{paired([pr[s]['raw'] - ny[s]['raw'] for s in seeds])} | "
              f"{paired([pr[s]['standardized'] - ny[s]['standardized'] for s in seeds])} | "
              f"{lam_text([pr[s]['lam_raw'] for s in seeds], lam_grid)} | "
              f"{lam_text([pr[s]['lam_standardized'] for s in seeds], lam_grid)} |")


if __name__ == "__main__":
    main()
