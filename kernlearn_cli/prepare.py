"""Preparing a cell: its components resolved and everything its solver needs computed.

:func:`prepare` binds a cell's settings, loads its dataset and builds K0 (memoised,
:mod:`~kernlearn_cli.memo`), generates its constraints (from :func:`training_data`), refuses what its
solver cannot solve (:mod:`~kernlearn_cli.refusals`) and returns a :class:`Prepared`, with what the
runner passes the solver besides G0 and the constraints (:func:`runner_extras`).  :class:`NoKernel`
stands for the reference factor of a cell without a kernel.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .config import Cell, bind_cell
from .errors import ConfigError, located
from .kernels import factor_info
from .memo import component_key, dataset_key, initial_factor, load_dataset
from .progress import phase
from .refusals import check_heldout_map, check_triplets, refuse_conflicts
from .rng import STREAM_CONSTRAINTS, STREAM_SOLVER, component_rng
from .threads import cell_threads


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
    (:func:`~kernlearn_cli.threads.blas_threads`) wherever it is called from: the memoised factors it
    computes are the ones the cell then uses, and their last bits depend on the number of threads.
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
                    G_ref = initial_factor(ds_key, component_key(*bound[role]))
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
