"""``kernlearn warmup``: the solvers' numba kernels compiled into numba's on-disk cache before a run.

:func:`warmup` compiles (or loads from the cache) the kernels of the named solvers, running the tiny
problem :data:`WARMUP_CELL` for a solver whose registry entry asks for it; :func:`numba_cache` says
where the cache is, after pruning the folders no current source reads.
"""

from __future__ import annotations

import time
import warnings
from typing import Iterable, Iterator

from .config import Cell
from .prepare import prepare


#: ``warmup``'s tiny problem: 40 points of two Gaussians in 3 dimensions and an RBF kernel.
WARMUP_CELL = {"name": "warmup", "seed": 0, "dataset": {"name": "two_gaussians", "n": 40, "dim": 3},
               "kernel": {"name": "rbf"}, "evaluate": []}


def warmup(names: Iterable[str]) -> Iterator[tuple[str, str, float]]:
    """Compile the numba kernels of the named solvers into numba's on-disk cache (or load them from it),
    so that a run or array task after it loads every kernel instead of compiling it.

    What a solver needs is its registry entry's ``warmup`` (:class:`~kernlearn_cli.registry.Entry`):
    importing its module (kernels declared with a signature compile then), or a run on the tiny
    problem :data:`WARMUP_CELL` with the entry's constraints (kernel, settings; the kernels' types do
    not depend on them) and otherwise the solver's defaults.

    Yields, for numba itself and then each named solver with kernels to compile, its name, what was
    done and the seconds it took; the other solvers have nothing to compile.
    """
    from .registry import solvers

    t0 = time.perf_counter()
    import numba  # noqa: F401
    yield "numba", "imported", time.perf_counter() - t0
    for name in names:
        t0 = time.perf_counter()
        entry = solvers.get(name, "warmup")
        if not entry.warmup:
            continue
        what = "imported: kernels compiled, or loaded from the cache"
        if isinstance(entry.warmup, dict):
            settings = entry.warmup.get("solver", {})          # one settings mapping, or several (each run)
            for solver in settings if isinstance(settings, list) else [settings]:
                cfg = {**WARMUP_CELL, **entry.warmup, "solver": {**solver, "name": name}}
                if entry.instead_of_kernel:                     # a solver that takes no initial kernel
                    del cfg["kernel"]
                prep = prepare(Cell(0, cfg), "warmup")
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")              # a tiny problem need not converge
                    entry.func(prep.G0, prep.constraints, **prep.solver_extra, **prep.bound["solver"][1])
            what = f"ran on {WARMUP_CELL['dataset']['n']} points: kernels compiled, or loaded from the cache"
        yield name, what, time.perf_counter() - t0


def numba_cache() -> str:
    """Where numba keeps the compiled kernels, after removing the folders no current source reads
    (:func:`kernlearn_cli.solvers.prune`): one folder per kernel module and version of the sources it
    reads, under ``NUMBA_CACHE_DIR`` or beside the sources; says how many old folders went."""
    from .solvers import cache_base, prune

    removed = prune()
    return f"{cache_base()}" + (f" ({len(removed)} old folder(s) removed)" if removed else "")
