"""Refusals before solving: what a cell's solver cannot do with its constraints or data, said before
it runs.

Triplet constraints for a pairwise solver (:func:`check_triplets`), held-out points the learned
kernel cannot map (:func:`check_heldout_map`) and two constraints no kernel meets, for a solver that
enforces its constraints exactly (:func:`refuse_conflicts`) are refused; an initial kernel that
already meets every constraint is warned about (:func:`warn_if_already_met`).
:func:`~kernlearn_cli.prepare.prepare` applies the refusals to every cell, and
:func:`~kernlearn_cli.experiment.check_cells` to one cell per setting before a run writes anything.
"""

from __future__ import annotations

import warnings

import numpy as np

from .errors import ConfigError, InfeasibleError
from .kinds import KINDS


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
    from .inductive import inductive_text

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


def warn_if_already_met(prep, where: str) -> None:
    """Warn when K0 meets every pairwise constraint exactly, tr(K0 A_i) = b_i (nothing to learn);
    ``prep``: a prepared cell (:class:`~kernlearn_cli.prepare.Prepared`, which imports this module)."""
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
