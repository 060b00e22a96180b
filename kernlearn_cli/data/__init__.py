"""Dataset loaders, registered in :data:`kernlearn_cli.registry.datasets`.

``bundled`` (scikit-learn), ``uci`` (the download catalogue of ``catalogue``),
``user`` (GyrB and user files); shared checks live in ``_validate``.
The modules register themselves when imported (:data:`kernlearn_cli.builtins.BUILTINS`).
"""
