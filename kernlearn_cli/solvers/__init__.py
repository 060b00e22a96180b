"""Solvers: one module per method family; compiled inner loops live beside them (``_*_kernels.py``)."""

from . import admm, baseline, burg, definiteboost, meg, nystrom, pcp_sdp, trin, von_neumann  # noqa: F401
