"""Solvers: one module per method family; compiled inner loops live beside them (``_*_kernels.py``)."""

from . import baseline, burg  # noqa: F401
