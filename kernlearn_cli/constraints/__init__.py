"""Constraint generators: ``f(dataset, G_ref, *, rng, **params) -> Constraints``.

``G_ref`` is the factor of the reference kernel whose distances set the bounds:
the initial kernel by default, or the kernel named by the generator's
``reference`` key (e.g. the GyrB target kernel when K0 is the scaled identity).
The modules register themselves when imported (:data:`kernlearn_cli.builtins.BUILTINS`).
"""
