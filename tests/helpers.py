"""Helpers shared by the test modules: the repository's paths, the dataset mirror, the command line in a
subprocess, synthetic data files and the random problem instances several test modules solve.

Test modules import from here (``from helpers import kernlearn``), never from each other or from
``conftest`` (which holds the fixtures only).
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kernlearn_cli.types import KIND_CODE, PAIR_KINDS, Constraints

REPO = Path(__file__).resolve().parents[1]
#: The dataset mirror beside the clone (CI and this workplace), used when KERNLEARN_DATA_MIRROR is unset.
MIRROR = REPO.parent / "shared" / "datasets"


def mirror_dir() -> Path | None:
    """The dataset mirror as a local folder: ``KERNLEARN_DATA_MIRROR`` when it names one, else
    ``../shared/datasets`` beside the clone when it exists, else None (usable at collection time)."""
    configured = os.environ.get("KERNLEARN_DATA_MIRROR", "").removeprefix("file://")
    if configured and Path(configured).is_dir():
        return Path(configured)
    return MIRROR if MIRROR.is_dir() else None


def slow_for(cases, solvers, name=lambda case: case) -> list:
    """``cases`` for ``pytest.mark.parametrize``, those of the named ``solvers`` (``name(case)``) marked
    ``slow``: their instances take seconds to solve (pr_cg's PR+ steps, meg's Lanczos updates, ...)."""
    return [pytest.param(*(case if isinstance(case, tuple) else (case,)), marks=pytest.mark.slow)
            if name(case) in solvers else case for case in cases]


def has_mirror() -> bool:
    """True when a data mirror is configured or sits beside the clone (usable at collection time)."""
    return bool(os.environ.get("KERNLEARN_DATA_MIRROR")) or MIRROR.is_dir()


def kernlearn(*args, cwd=None, env=None) -> subprocess.CompletedProcess:
    """Run the command line in a subprocess (real exit codes, real stderr)."""
    return subprocess.run([sys.executable, "-m", "kernlearn_cli", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, **(env or {})})


def gyrb_standin(home: Path) -> Path:
    """Write a synthetic 52 x 52 stand-in for the GyrB kernel (3 classes) into ``home``/gyrb."""
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], [17, 17, 18])
    X = rng.standard_normal((52, 5)) + 3.0 * np.eye(5)[y]
    (home / "gyrb").mkdir(parents=True)
    np.save(home / "gyrb" / "kernel.npy", np.exp(-0.1 * ((X[:, None] - X[None]) ** 2).sum(-1)))
    np.save(home / "gyrb" / "labels.npy", y)
    return home


# ---- problem instances ---------------------------------------------------------------------------

def feasible_instance(seed, n=40, r=6, c=25, kinds=PAIR_KINDS, full_rank=False):
    """Random G0 and constraints that a known K* = G0 M* G0^T satisfies (so a solution exists)."""
    rng = np.random.default_rng(seed)
    G0 = rng.standard_normal((n, n if full_rank else r))
    R = rng.standard_normal((G0.shape[1],) * 2) * 0.3
    Kstar = G0 @ (np.eye(G0.shape[1]) + R @ R.T) @ G0.T
    i = rng.integers(0, n, c)
    j = (i + 1 + rng.integers(0, n - 1, c)) % n
    kind = rng.choice(kinds, c)
    dist = Kstar[i, i] + Kstar[j, j] - 2 * Kstar[i, j]
    sim = Kstar[i, j]
    val = np.where(np.char.startswith(kind.astype(str), "dist"), dist, sim)
    slackv = 0.1 * np.abs(val) + 0.05
    bound = np.select([np.char.endswith(kind.astype(str), "le"), np.char.endswith(kind.astype(str), "ge")],
                      [val + slackv, val - slackv], val)
    return G0, Constraints.from_lists(i, j, kind, bound)


def relative_violation(G, C):
    return C.violations(G) / np.maximum(np.abs(C.bound), 1e-12)


def definiteboost_instance(seed, n=10, c=14, kinds=PAIR_KINDS, rank=None):
    """Identity (or rank-`rank`) start and constraints met by a known kernel T with tr T = tr K0."""
    rng = np.random.default_rng(seed)
    if rank is None:
        G0 = np.eye(n)
        X = rng.standard_normal((n, 3))
        T = X @ X.T + 0.5 * np.eye(n)
    else:
        G0 = rng.standard_normal((n, rank))
        R = rng.standard_normal((rank, rank)) * 0.4
        T = G0 @ (np.eye(rank) + R @ R.T) @ G0.T
    T *= np.trace(G0 @ G0.T) / np.trace(T)
    i = rng.integers(0, n, c)
    j = (i + 1 + rng.integers(0, n - 1, c)) % n
    kind = rng.choice(kinds, c).astype(str)
    val = np.where(np.char.startswith(kind, "dist"), T[i, i] + T[j, j] - 2 * T[i, j], T[i, j])
    slack = 0.05 * np.abs(val) + 0.01
    bound = np.select([np.char.endswith(kind, "le"), np.char.endswith(kind, "ge")], [val + slack, val - slack], val)
    return G0, Constraints.from_lists(i, j, kind, bound)


def random_factor(rng, n, r=None, cond=20.0):
    """A full-rank (r = n) or low-rank random kernel factor with moderate conditioning."""
    r = n if r is None else r
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return Q[:, :r] * np.sqrt(np.geomspace(1.0, 1.0 / cond, r))


def meg_stream(rng, G_ref, count, noise=0.0, sim_share=0.0):
    """dist_eq / sim_eq examples labelled by K_ref = G_ref G_refᵀ, optionally with label noise."""
    n = G_ref.shape[0]
    K = G_ref @ G_ref.T
    i = rng.integers(0, n, count)
    j = (i + 1 + rng.integers(0, n - 1, count)) % n
    sim = rng.random(count) < sim_share
    j = np.where(sim & (rng.random(count) < 0.3), i, j)           # a few diagonal entries K_ii
    y = np.where(sim, K[i, j], K[i, i] + K[j, j] - 2 * K[i, j])
    y = y + noise * np.abs(y).mean() * rng.standard_normal(count)
    kind = np.where(sim, KIND_CODE["sim_eq"], KIND_CODE["dist_eq"]).astype(np.int8)
    return Constraints(i, j, kind, y)


def trin_instance(seed=0, n=24, rate=0.03):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = rng.integers(0, 3, n)
    K0 = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 8.0) + 1e-2 * np.eye(n)
    tr = [(i, j, k) for i in range(n) for j in range(n) for k in range(n)
          if y[i] != y[j] and y[i] == y[k] and i != k and rng.random() < rate]
    tr = np.array(tr)
    return X, y, np.linalg.cholesky(K0), Constraints.triplets(tr[:, 0], tr[:, 1], tr[:, 2])


#: A tiny study (12 Burg cells on iris, a few seconds): its experiment's config and its study file, one
#: table and one statement; tests add what they need (a second table, explanations).
TINY_CONFIG = {"name": "tiny", "seed": 0, "grid": {"constraints.count": [30, 100, 300], "seed": "range(4)"},
               "dataset": {"name": "iris"}, "kernel": {"name": "linear"},
               "constraints": {"name": "idealized_pairs", "count": 10}, "solver": {"name": "burg", "slack": 1.0},
               "evaluate": [{"name": "knn_accuracy", "k": 5, "repeats": 2}]}
TINY_STUDY = {"paper": "tinypaper", "title": "A tiny paper",
              "experiments": {"burg": {"config": "tiny.yaml", "seconds_per_cell": 0.5}},
              "tables": {"tiny_acc": {"title": "accuracy", "from": ["burg"], "metric": "knn_accuracy",
                                      "rows": "constraints.count", "cols": "solver"}},
              "statements": [{"table": "tiny_acc", "row": 30, "col": "burg", "paper": 0.9, "rule": "abs 0.1", "quote": "about 0.9",
                              "where": "Table 1"}]}


def quick_run(tmp_path_factory) -> Path:
    """The README's first run, ``kernlearn run configs/quick.yaml`` (Burg with slack on iris, 3
    constraint counts x 3 seeds), in this process in a fresh folder; returns that folder."""
    import shutil
    import sys

    import pytest

    from kernlearn_cli.cli import main

    here = tmp_path_factory.mktemp("quick")
    (here / "configs").mkdir()
    shutil.copy(REPO / "configs" / "quick.yaml", here / "configs" / "quick.yaml")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(here)
        mp.setattr(sys, "argv", ["kernlearn", "run", "configs/quick.yaml"])
        with pytest.raises(SystemExit) as done:
            main()
    assert not done.value.code
    return here
