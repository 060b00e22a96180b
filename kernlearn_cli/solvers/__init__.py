"""Solvers: one module per method family; compiled inner loops live beside them (``_*_kernels.py``)."""

from . import baseline, burg, definiteboost, meg, von_neumann  # noqa: F401
