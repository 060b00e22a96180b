"""kernlearn: learn kernel matrices from side information, reproducibly.

The package is organised as one path every run takes (see ``README.md``)::

    config -> dataset -> initial kernel K0 = G0 G0^T -> constraints -> solver -> evaluators

Each stage is a registry of small, pure functions (``kernlearn_cli.registry``).
"""

__version__ = "0.1.0"
