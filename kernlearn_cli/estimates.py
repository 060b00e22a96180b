"""A cell's estimated peak memory and time, before it runs (``kernlearn plan``): :func:`estimate`,
from the dataset's size, K0's cost (:func:`~kernlearn_cli.kernels.factor_cost`) and the cost the
solver declares (:func:`~kernlearn_cli.resources.estimated`).
"""

from __future__ import annotations

from .config import Cell, bind_cell
from .memo import dataset_key, load_dataset


def estimate(cell: Cell, where: str = "config") -> dict | None:
    """A cell's estimated peak memory and time, before it runs (``kernlearn plan``), or None.

    Reads only the dataset (for n and d): the process (:data:`~kernlearn_cli.resources.PROCESS_BYTES`)
    and the features it holds, K0 by :func:`~kernlearn_cli.kernels.factor_cost`, the
    solver by the cost it runs under (:func:`~kernlearn_cli.resources.estimated`), called with
    :class:`~kernlearn_cli.resources.Sized` stand-ins for G0 and the constraints (their count is the
    generator's ``count`` when it has one).  Returns ``bytes`` (the larger of the two steps),
    ``seconds`` (K0 plus the solver, or K0 alone when the solver's time is per ``per``),
    ``per_seconds`` and ``per`` (e.g. one sweep), ``evaluate_seconds`` (the evaluators that declare a
    cost, e.g. :func:`~kernlearn_cli.evaluate.knn.knn_cost`; counted in ``seconds``), or None when no
    step has an estimate.
    """
    from .kernels import factor_cost
    from .resources import DOUBLE, PROCESS_BYTES, Sized, UnknownSize

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
            held = DOUBLE * ds.n * rank if kernel else 0.0      # G0 stays in memory while the solver runs
            out["bytes"] = max(out["bytes"], held + nbytes)
            if solver.func.cost_per:
                out["per"], out["per_seconds"] = solver.func.cost_per, seconds
            else:
                out["seconds"] += seconds
    evaluated = 0.0
    for ev, ev_params in bound.get("evaluate", []):        # evaluators that declare a cost (knn_accuracy)
        ev_cost = getattr(ev.func, "cost", None)
        if ev_cost is None:
            continue
        try:
            _, nbytes, seconds, _ = ev_cost(Sized((ds.n, rank)), None, **ev_params)
        except UnknownSize:
            continue
        out["bytes"] = max(out["bytes"], DOUBLE * ds.n * rank + nbytes)   # beside the learned factor
        evaluated += seconds
    if evaluated:
        out["seconds"] += evaluated
        out["evaluate_seconds"] = evaluated
    if kernel or cost is not None or evaluated:
        out["bytes"] += PROCESS_BYTES + DOUBLE * ds.n * d    # the process itself and the dataset
        return out
    return None
