"""Solvers: one module per method family; compiled inner loops live beside them (``_*_kernels.py``).

The modules register themselves when imported; :data:`kernlearn_cli.registry.BUILTINS` says which
module holds which solver, so a run imports (and compiles) only the solvers it uses.
"""
