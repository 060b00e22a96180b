"""One cell end to end: dataset -> K0 -> constraints -> solver -> evaluators -> files."""

from __future__ import annotations

import inspect
from contextlib import contextmanager
import json
import os
import time
import warnings
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np
from threadpoolctl import threadpool_limits

from . import __version__
from .codehash import changed_code, code_of
from .config import Cell, bind_cell, check_cell
from .errors import ConfigError, InfeasibleError
from .io import (PATH_FILE, RECORD, SHARED, cell_state, changed_inputs, factors_image, read_record, shared_name, write_cell,
                 write_shared)
from .kernels import factor_info
from .progress import phase
from .provenance import code_provenance, environment_provenance
from .resources import PeakMemory
from .types import SpilledPath
from .kinds import KINDS


def component_rng(seed: int, stream: int, sub: int = 0) -> np.random.Generator:
    """Independent, reproducible random stream per component: (seed, stream, sub)."""
    return np.random.default_rng([seed, stream, sub])


STREAM_CONSTRAINTS, STREAM_EVALUATE, STREAM_SOLVER = 1, 2, 3


@contextmanager
def located(where: str, kind: str, name: str):
    """Name the config location in a component's :class:`ConfigError`: library code names only its
    own parameters ("neighbors = 12 must be ..."), the runner adds where they were set
    ("configs/x.yaml: kernel 'laplacian_pinv': neighbors = 12 must be ...")."""
    try:
        yield
    except ConfigError as exc:
        message = str(exc)
        if message.startswith(f"{where}:"):
            raise
        own = f"{kind} '{name}'"
        raise ConfigError(f"{where}: {message}" if message.startswith(own) else f"{where}: {own}: {message}") from None


def component_key(entry, params) -> str:
    return json.dumps([entry.name, params], sort_keys=True, default=str)


def dataset_key(bound: dict) -> str:
    """The key of a cell's dataset (:func:`load_dataset`): its loader and settings, and the ``subset``
    setting when the config gives one (:mod:`kernlearn_cli.data.subset`); then the ``holdout``
    setting when it gives one (:mod:`kernlearn_cli.data.holdout`, applied after the subset)."""
    entry, params = bound["dataset"]
    if "holdout" in bound:
        return json.dumps([entry.name, params, bound.get("subset"), bound["holdout"]], sort_keys=True, default=str)
    if "subset" not in bound:
        return component_key(*bound["dataset"])
    return json.dumps([entry.name, params, bound["subset"]], sort_keys=True, default=str)


def load_dataset(key: str):
    """The dataset of ``key``, memoised per process and working directory (relative paths are read
    from it); loaded again (with the initial factors built from it) when a file it was read from has
    changed since (``meta["inputs"]``)."""
    ds = _load_dataset_cached(key, os.getcwd())
    if changed_inputs({"inputs": ds.meta.get("inputs")}):
        _load_dataset_cached.cache_clear()
        _initial_factor_cached.cache_clear()
        ds = _load_dataset_cached(key, os.getcwd())
    return ds


@lru_cache(maxsize=8)
def _load_dataset_cached(key: str, cwd: str):
    from .registry import datasets

    name, params, *subset = json.loads(key)
    if len(subset) == 2:                 # a holdout: split the dataset (memoised without it) afterwards
        from .data.holdout import split_holdout

        base = json.dumps([name, params, subset[0]] if subset[0] else [name, params], sort_keys=True, default=str)
        return split_holdout(_load_dataset_cached(base, cwd), **subset[1], where=f"dataset '{name}': holdout")
    ds = datasets.get(name).func(**params)
    if subset:
        from .data.subset import stratified_subset

        ds = stratified_subset(ds, **subset[0], where=f"dataset '{name}': subset")
    return ds


def _initial_factor(dataset_key: str, kernel_key: str) -> np.ndarray:
    """K0's factor, memoised like :func:`load_dataset` (which it calls first, so a changed data file
    also clears the factors built from it)."""
    load_dataset(dataset_key)
    return _initial_factor_cached(dataset_key, kernel_key, os.getcwd())


@lru_cache(maxsize=8)
def _initial_factor_cached(dataset_key: str, kernel_key: str, cwd: str) -> np.ndarray:
    from .registry import kernels

    name, params = json.loads(kernel_key)
    G = kernels.get(name).func(load_dataset(dataset_key), **params)
    G.setflags(write=False)
    return G


def check_triplets(constraints, generator: str, solver: str, accepts: bool, where: str = "config") -> None:
    """Refuse to hand triplet constraints (Li et al. 2009) to a solver registered without ``triplets=True``.

    Raises
    ------
    ConfigError
        Naming the constraint generator, the solver and the solvers that accept triplets.
    """
    if not constraints.has_triplets or accepts:
        return
    from .registry import solvers

    able = [e.name for e in solvers.entries() if e.triplets]
    valid = ", ".join(able) if able else "(none is installed)"
    raise ConfigError(
        f"{where}: constraint generator '{generator}' produced {len(constraints)} triplet constraints "
        f"(d(i, j) - d(i, k), Li et al. 2009), but solver '{solver}' handles only pairwise constraints "
        f"(dist_*/sim_*). Use a solver that accepts triplets: {valid}; or a pairwise constraint generator.")


def blas_threads() -> int:
    """BLAS threads per cell: ``KERNLEARN_BLAS_THREADS`` (default 1, the same in every process)."""
    value = os.environ.get("KERNLEARN_BLAS_THREADS", "1")
    return int(value) if value.isdigit() and int(value) > 0 else 1


#: The variables a native thread pool reads once, when its library is loaded: OpenMP runtimes
#: (scikit-learn's libgomp), OpenBLAS, MKL, BLIS.
THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")


@contextmanager
def cell_threads():
    """Every native thread pool at :func:`blas_threads` threads while a cell computes, including
    the pools of libraries first loaded inside (the variables :data:`THREAD_ENV` set meanwhile).

    ``threadpool_limits`` limits only the libraries loaded when it is entered.  scikit-learn (and
    its OpenMP runtime) is imported lazily, by the first cell that uses it, so that cell's k-means
    (``nystrom`` landmarks, ``kernel_kmeans_nmi``, ``pairwise_accuracy``) ran with as many OpenMP
    threads as the machine has cores and the later cells of the process with one: the centroids'
    per-thread partial sums moved their last bits, and a cell's record depended on whether it came
    first in its process (zhang2012 spambase: another C chosen by cross-validation).  A library
    loaded here reads the variables and starts at the cell's thread count; the variables are
    restored afterwards.
    """
    n = blas_threads()
    with environment({key: str(n) for key in THREAD_ENV}), threadpool_limits(limits=n):
        yield


@contextmanager
def environment(values: dict):
    """``os.environ`` with ``values`` set, restored afterwards."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class NoKernel:
    """Stands for the reference factor of a cell without a kernel: any use of it raises a
    :class:`~kernlearn_cli.errors.ConfigError` with ``message``."""

    def __init__(self, message: str):
        self.message = message

    def _refuse(self, *args, **kwargs):
        raise ConfigError(self.message)

    __getitem__ = __array__ = __matmul__ = __rmatmul__ = __len__ = _refuse

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise ConfigError(self.message)


@dataclass
class Prepared:
    """A cell resolved up to the solve: its components, data, initial factor and constraints."""

    bound: dict
    dataset: object
    G0: np.ndarray | None          # None for a solver that does not use K0 (no ``kernel:``)
    G_ref: np.ndarray | None
    constraints: object
    solver_extra: dict
    kernel_info: dict | None = None  # an approximate K0's rank and residual trace (kernels.factor_info)


def prepare(cell: Cell, where: str = "config") -> Prepared:
    """Resolve a cell's components and compute everything the solver needs (no I/O but data loading).

    Raises :class:`~kernlearn_cli.errors.ConfigError` / :class:`~kernlearn_cli.errors.DataError`
    for a bad setting or bad data, naming ``where``.  Runs under the cell's BLAS thread count
    (:func:`blas_threads`) wherever it is called from: the memoised factors it computes are the
    ones the cell then uses, and their last bits depend on the number of threads.
    """
    bound = bind_cell(cell, where)
    ds_key = dataset_key(bound)
    with cell_threads():
        with located(where, "dataset", bound["dataset"][0].name), \
                phase(cell.id, f"loading dataset '{bound['dataset'][0].name}'"):
            ds = load_dataset(ds_key)
        G0 = G_ref = None
        for role, what in (("kernel", "K0"), ("reference", "the constraints' reference kernel")):
            if role in bound:
                with located(where, "kernel" if role == "kernel" else "constraints: reference kernel",
                             bound[role][0].name), phase(cell.id, f"building {what} '{bound[role][0].name}' "
                                                                  f"(n = {ds.n})"):
                    G_ref = _initial_factor(ds_key, component_key(*bound[role]))
                    G0 = G_ref if role == "kernel" else G0
        gen, gen_params = bound["constraints"]
        if G_ref is None:                # a generator that reads the kernel is told to name one
            G_ref = NoKernel(f"{where}: constraints: generator '{gen.name}' sets its bounds from a kernel, but solver "
                             f"'{bound['solver'][0].name}' takes no initial kernel (no 'kernel:'); give the generator "
                             f"one: constraints: {{name: {gen.name}, reference: {{name: linear}}}}.")
        with located(where, "constraint generator", gen.name), \
                phase(cell.id, f"generating constraints '{gen.name}'"):
            constraints = gen.func(*training_data(ds, G_ref), rng=component_rng(cell.seed, STREAM_CONSTRAINTS),
                                   **gen_params)
    solver, solver_params = bound["solver"]
    if ds.heldout is not None:
        check_heldout_map(bound, where)
    check_triplets(constraints, gen.name, solver.name, solver.triplets, where)
    refuse_conflicts(constraints, solver, solver_params, where, gen_params["path"] if gen.name == "from_file" else None)
    info = factor_info(bound["kernel"][0].name, ds, G0, bound["kernel"][1]) if G0 is not None else None
    return Prepared(bound, ds, G0, G_ref, constraints, runner_extras(solver.func, ds, G_ref, cell.seed), info)


def training_data(ds, G_ref):
    """What a constraint generator draws from: the dataset and the reference factor, restricted to
    the training part when held-out rows are in the solver's data (``holdout`` with ``seen: true``,
    :func:`~kernlearn_cli.data.holdout.training_part`), so both modes label the same points."""
    from .data.holdout import training_count, training_part

    k = training_count(ds)
    if k == ds.n:
        return ds, G_ref
    return training_part(ds), (G_ref[:k] if isinstance(G_ref, np.ndarray) else G_ref)


def check_heldout_map(bound: dict, where: str) -> None:
    """Refuse, before solving, held-out points (``holdout``, ``seen: false``) that the cell's learned
    kernel cannot map: a transductive solver, or one mapping through K0 whose initial kernel has no
    out-of-sample map (:data:`~kernlearn_cli.inductive.OUT_OF_SAMPLE`).

    Raises
    ------
    ConfigError
        Naming ``dataset.holdout``, the solver (or kernel) and what would map the points.
    """
    from .inductive import OUT_OF_SAMPLE
    from .registry import inductive_text

    if bound["holdout"]["seen"]:
        return
    solver = bound["solver"][0]
    if not solver.inductive:
        raise ConfigError(
            f"{where}: dataset.holdout: solver '{solver.name}' is transductive (its learned kernel is defined on "
            f"the points it was given only), so the held-out points (seen: false) have no rows of it to score. "
            f"Use an inductive solver ({inductive_text()}), or holdout seen: true to let the solver see them.")
    kernel = bound.get("kernel")
    if solver.inductive == "initial factor" and (kernel is None or kernel[0].name not in OUT_OF_SAMPLE):
        name = kernel[0].name if kernel else None
        raise ConfigError(
            f"{where}: dataset.holdout: solver '{solver.name}' maps new points through the initial kernel, but "
            f"kernel '{name}' is defined on the training points only, so the held-out points (seen: false) "
            f"have no rows. Use a kernel with an out-of-sample map ({', '.join(OUT_OF_SAMPLE)}), or holdout "
            f"seen: true.")


def heldout_factor(result, prep: "Prepared") -> np.ndarray | None:
    """The learned factor's rows of the held-out points, or None without any: rows of the solver's
    own factor with ``seen: true`` (the last ones), the inductive map of the result otherwise
    (:func:`~kernlearn_cli.inductive.result_rows`)."""
    ds = prep.dataset
    if ds.heldout is None:
        return None
    if ds.meta["holdout"]["seen"]:
        return np.asarray(result.G)[ds.n - ds.heldout.n:]
    from .inductive import result_rows

    return result_rows(result, ds.heldout.X, G0=prep.G0, dataset=ds, kernel=prep.bound.get("kernel"))


def refuse_conflicts(constraints, solver, params: dict, where: str, path: str | None = None) -> None:
    """Refuse, before solving, two constraints that bound one quantity incompatibly, for a solver that
    enforces its constraints exactly.

    The pairs are :meth:`~kernlearn_cli.types.Constraints.conflicts` (e.g. ``0,1,dist_le,1.0`` and
    ``1,0,dist_ge,5.0``), found whatever the order of the rows; no kernel meets both rows of a pair.
    A solver with soft constraints (``solver.exact`` False, or a setting such as ``slack`` that makes
    them soft, :meth:`~kernlearn_cli.registry.Entry.enforces_exactly`) trades violations against its
    objective, so it gets the set as it is.

    Parameters
    ----------
    constraints : Constraints
        The set the solver would get.
    solver : Entry
        The solver's registry entry; ``params`` its bound settings.
    where : str
        The config (or estimator) the message names.
    path : str, optional
        The constraints file the rows were read from, row q being line q + 2 (after the header);
        the message then names lines, otherwise 0-based constraint indices.

    Raises
    ------
    InfeasibleError
        Naming the first pair's two rows, what each asks and how many more pairs there are; its
        certificate holds the rows and the two bounds.
    """
    if not solver.enforces_exactly(params):
        return
    pairs = constraints.conflicts()
    if not len(pairs):
        return

    def name(q: int, short: bool = False) -> str:
        return (f"{q + 2}" if short else f"line {q + 2}") if path else f"{'' if short else 'constraint '}#{q}"

    def asks(q: int) -> str:
        i, j, kind, b = int(constraints.i[q]), int(constraints.j[q]), KINDS[constraints.kind[q]], float(constraints.bound[q])
        quantity = f"{'d' if kind.startswith('dist') else 'K'}({min(i, j)}, {max(i, j)})"
        return f"{name(q)} ({i},{j},{kind},{b!r}) asks {quantity} {dict(le='<=', ge='>=', eq='=')[kind[-2:]]} {b!r}"

    p, q = (int(v) for v in pairs[0])
    meaning = ("d(i, j) = K_ii + K_jj - 2 K_ij, the squared distance" if KINDS[constraints.kind[p]].startswith("dist")
               else "K(i, j) = K_ij, the similarity")
    mode, soft = "", "use a solver whose constraints are soft (a loss or slack)"
    if isinstance(solver.exact, tuple):            # exact unless these settings say otherwise
        key = solver.exact[0]
        mode = f" (solver.{key} = {params.get(key, solver.parameters()[key].default)})"
        soft = f"give solver.{key} a finite value (soft constraints, violations traded against the objective)"
    more = ""
    if len(pairs) > 1:
        listed = ", ".join(f"{name(a, True)} and {name(b, True)}" for a, b in pairs[1:6].tolist())
        more = (f" {len(pairs) - 1} more pair(s) of {'lines' if path else 'constraints'} contradict each other: "
                f"{listed}{', ...' if len(pairs) > 6 else ''}.")
    source = f"constraints file '{path}': " if path else ""
    raise InfeasibleError(
        f"{where}: {source}{asks(p)} and {asks(q)} ({meaning}, the same for (i, j) and (j, i)); no kernel meets "
        f"both, so the constraint set is infeasible. Solver '{solver.name}' enforces every constraint exactly"
        f"{mode}, so the set is refused before solving. Correct or remove one of the two, or {soft}.{more}",
        {"rows": [p, q], "bounds": [float(constraints.bound[p]), float(constraints.bound[q])]})


def estimate(cell: Cell, where: str = "config") -> dict | None:
    """A cell's estimated peak memory and time, before it runs (``kernlearn plan``), or None.

    Reads only the dataset (for n and d): K0 by :func:`~kernlearn_cli.resources.factor_cost`, the
    solver by the cost it runs under (:func:`~kernlearn_cli.resources.estimated`), called with
    :class:`~kernlearn_cli.resources.Sized` stand-ins for G0 and the constraints (their count is the
    generator's ``count`` when it has one).  Returns ``bytes`` (the larger of the two steps),
    ``seconds`` (K0 plus the solver, or K0 alone when the solver's time is per ``per``),
    ``per_seconds`` and ``per`` (e.g. one sweep), or None when neither step has an estimate.
    """
    from .resources import Sized, UnknownSize, factor_cost

    bound = bind_cell(cell, where)
    ds = load_dataset(dataset_key(bound))
    d = ds.X.shape[1] if ds.X is not None else ds.n
    kernel = factor_cost(bound["kernel"][0].name, ds.n, d, bound["kernel"][1]) if "kernel" in bound else None
    rank = kernel[0] if kernel else d
    solver, params = bound["solver"]
    out = {"bytes": kernel[1] if kernel else 0.0, "seconds": kernel[2] if kernel else 0.0, "per": "",
           "per_seconds": None}
    cost = getattr(solver.func, "cost", None)
    if cost is not None:
        try:
            _, nbytes, seconds, _ = cost(Sized((ds.n, rank)), Sized((bound["constraints"][1].get("count"),)),
                                         **params)
        except UnknownSize:
            cost = None
        else:
            out["bytes"] = max(out["bytes"], nbytes)
            if solver.func.cost_per:
                out["per"], out["per_seconds"] = solver.func.cost_per, seconds
            else:
                out["seconds"] += seconds
    return out if kernel or cost is not None else None


def runner_extras(func: Callable, ds, G_ref, seed: int) -> dict:
    """What the runner passes a solver besides G0, the constraints and its settings, each only when
    its signature names it: ``dataset``, ``reference`` (e.g. MEG's comparison matrix U, the
    reference factor) and ``rng`` (e.g. ADMM's random V⁰; the cell's stream (seed, 3))."""
    sig = inspect.signature(func).parameters
    extra = {"dataset": ds, "reference": G_ref}
    extra = {k: v for k, v in extra.items() if k in sig}
    if "rng" in sig:
        extra["rng"] = component_rng(seed, STREAM_SOLVER)
    return extra


def check_cells(cells: list[Cell], where: str = "config") -> None:
    """Validate a run before anything is written: every cell's settings (:func:`check_cell`), and the
    data, kernel and constraints of one cell per distinct (dataset, kernel, constraints) setting and
    whether its solver enforces constraints exactly (:func:`refuse_conflicts`).

    Datasets and initial factors are memoised, so the cells reuse this work.  Warns (once per
    setting) when the initial kernel already meets every constraint: the solver would have
    nothing to learn.
    """
    seen = set()
    for cell in cells:
        label = cell.label(where)
        solver, params = check_cell(cell, where)["solver"]
        key = json.dumps([cell.config.get(k) for k in ("dataset", "kernel", "constraints")]
                         + [solver.enforces_exactly(params)], sort_keys=True, default=str)
        if key in seen:
            continue
        seen.add(key)
        prep = prepare(cell, label)
        warn_if_already_met(prep, label)


def warn_if_already_met(prep: Prepared, where: str) -> None:
    """Warn when K0 meets every pairwise constraint exactly, tr(K0 A_i) = b_i (nothing to learn)."""
    C = prep.constraints
    if len(C) == 0 or C.has_triplets or prep.G0 is None or prep.bound["solver"][0].name == "initial":  # a baseline keeps K0
        return
    if np.all(np.abs(C.values(prep.G0) - C.bound) <= 1e-9 * np.maximum(1.0, np.abs(C.bound))):
        gen = prep.bound["constraints"][0].name
        warnings.warn(
            f"{where}: the initial kernel already satisfies all {len(C)} constraints from '{gen}' "
            f"exactly (every bound equals the current value), so the solver has nothing to learn and "
            f"returns K0. Give the constraints a reference kernel different from the initial kernel, e.g. "
            f"constraints: {{name: {gen}, reference: {{name: rbf}}}} with kernel: {{name: linear}}, or "
            f"use idealized_pairs (bounds pushed by epsilon).", stacklevel=2)


def run_cell(cell: Cell, out_dir: Path, *, where: str = "config", force: bool = False,
             progress: Callable | None = None, workers: int = 1) -> dict | None:
    """Run one cell under a fixed thread count for every native pool (:func:`cell_threads`; see
    :func:`_run_cell`)."""
    with cell_threads():
        return _run_cell(cell, out_dir, where=where, force=force, progress=progress, workers=workers)


def _run_cell(cell: Cell, out_dir: Path, *, where: str, force: bool, progress: Callable | None,
              workers: int = 1) -> dict | None:
    """Run one cell and write ``out_dir/<cell id>/{factors.h5, record.json}`` (:func:`write_cell`).

    Returns the record, or None when the cell was already finished (and ``force`` is off).
    With ``force`` a finished cell keeps its files until the new ones are complete.  ``workers``:
    how many cells the run computes at once, kept in the provenance (cells that share the cores
    cost more CPU time each, which ``reproduce --plan`` takes into account).  The
    components are pure functions; datasets and initial factors are memoised per process,
    which changes no number.
    """
    cell_dir = Path(out_dir) / cell.id
    if not force and is_current(cell_dir, cell):
        return None
    started, wall0, cpu0 = time.time(), time.perf_counter(), time.process_time()
    with PeakMemory() as mem:                      # this cell's peak, not the process's past
        prep = prepare(cell, where)
        (ds_entry, _), (gen, _), (solver, solver_params) = (prep.bound[k] for k in ("dataset", "constraints", "solver"))
        extra = dict(prep.solver_extra)
        if progress is not None and "callback" in inspect.signature(solver.func).parameters:
            extra["callback"] = progress
        ds, constraints = prep.dataset, prep.constraints
        t0, c0 = time.perf_counter(), time.process_time()
        with located(where, "solver", solver.name), phase(cell.id, f"solving '{solver.name}' (n = {ds.n}, "
                                                                f"{len(constraints)} constraints)"):
            result = solver.func(prep.G0, constraints, **extra, **solver_params)
        seconds, cpu_seconds = time.perf_counter() - t0, time.process_time() - c0

        metrics = {}
        heldout = None
        if any("heldout" in inspect.signature(ev.func).parameters for ev, _ in prep.bound["evaluate"]):
            with located(where, "dataset", ds_entry.name), phase(cell.id, "mapping the held-out points"):
                heldout = heldout_factor(result, prep)
        for k, (ev, ev_params) in enumerate(prep.bound["evaluate"]):
            wants = inspect.signature(ev.func).parameters
            extra = {key: value for key, value in (("result", result), ("constraints", constraints),
                                                   ("heldout", heldout)) if key in wants}
            with located(where, "evaluator", ev.name), phase(cell.id, f"evaluating '{ev.name}'"):
                found = ev.func(result.G, ds, rng=component_rng(cell.seed, STREAM_EVALUATE, k), **extra, **ev_params)
            if clash := sorted(set(found) & set(metrics)):
                raise ConfigError(f"evaluate[{k}] '{ev.name}' returns metric(s) {', '.join(clash)}, which an "
                                  f"earlier evaluator of the cell returned too; the second value would overwrite the "
                                  f"first. Keep one of the two evaluators in this config.")
            metrics.update(found)

        links = share_initial_factor(result, prep.G0, Path(out_dir))
        if isinstance(result.path, SpilledPath) and len(result.path):     # keep_path: streamed, disk to disk
            result.path.save(cell_dir / PATH_FILE)
            links["path"] = PATH_FILE
        factors = factors_image(result, constraints, ds.y, solver=solver.name, config=cell.config, seed=cell.seed,
                                seconds=seconds, links=links, kernel_info=prep.kernel_info)
    record = {
        "cell": cell.id, "index": cell.index, "experiment": cell.config["name"],
        "grid": cell.grid_values, "seed": cell.seed,
        "dataset": ds_entry.name, "kernel": prep.bound["kernel"][0].name if prep.G0 is not None else None, "constraints_generator": gen.name,
        "solver": solver.name, "n": ds.n, "rank0": int(prep.G0.shape[1]) if prep.G0 is not None else None, "constraints": len(constraints),
        "objective": float(result.objective), "iterations": int(result.iterations),
        "converged": result.converged, "seconds": seconds, "cpu_seconds": cpu_seconds,
        "peak_rss_bytes": mem.peak_bytes if mem.reset else None, "metrics": metrics,
        "certificate": result.certificate, "info": result.info, "config": cell.config,
        **({"kernel_info": prep.kernel_info} if prep.kernel_info else {}),
        **({"inputs": inputs} if (inputs := {**ds.meta.get("inputs", {}), **constraints.files}) else {}),
        "kernlearn_version": __version__,
        "provenance": {**code_provenance(), "code": code_of(prep.bound), "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
                       "wall_seconds": time.perf_counter() - wall0, "cpu_seconds": time.process_time() - cpu0,
                       "workers": workers, "blas_threads": blas_threads(), **environment_provenance()},
    }
    write_cell(cell_dir, factors, record)
    return record


def is_current(cell_dir: Path, cell: Cell) -> bool:
    """Whether ``cell`` is finished (:func:`~kernlearn_cli.io.cell_state`) from the input files on disk
    and by the code that runs now: a record whose ``inputs`` (path -> sha256) no longer match, or whose
    components' code differs (:func:`~kernlearn_cli.codehash.changed_code`), is not, and its cell runs again."""
    if cell_state(cell_dir)[0] != "finished":
        return False
    record = read_record(Path(cell_dir) / RECORD)
    return not changed_inputs(record) and not changed_code(record, bind_cell(cell, "config"))


def share_initial_factor(result, G0: np.ndarray | None, out_dir: Path) -> dict:
    """Keep the initial factor G0 (K0 = G0 G0ᵀ) once per results folder, not once per cell: a
    solver that returns it (``result.arrays["G0"]``, to make its objective recomputable) gets it
    written to ``OUT/shared/`` under a name of its content (:func:`~kernlearn_cli.io.shared_name`)
    and linked from the cell's factors file.  Returns the links for :func:`~kernlearn_cli.io.factors_image`."""
    arr = result.arrays.get("G0")
    if G0 is None or not isinstance(arr, np.ndarray) or arr.shape != G0.shape or not (arr is G0 or
                                                                                        np.array_equal(arr, G0)):
        return {}
    name = shared_name("G0", arr)
    write_shared(out_dir / SHARED / name, "G0", arr)
    return {"G0": f"../{SHARED}/{name}"}


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
