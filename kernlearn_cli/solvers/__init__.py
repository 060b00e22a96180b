"""Solvers: one module per method family; compiled inner loops live beside them (``_*_kernels.py``).

The modules register themselves when imported; :data:`kernlearn_cli.registry.BUILTINS` says which
module holds which solver, so a run imports (and compiles) only the solvers it uses.

numba's on-disk cache is keyed per source file: a compiled function that calls a helper of another
file (a sweep of ``_burg_kernels.py`` calling ``_cyclic.rel_violation``) would be loaded from the cache
after an edit of that helper, stale.  So the cache lives in a folder named after the sha256 of every
source file of this package and of :data:`CONSTANTS` (:func:`cache_dir`), set before any kernel is
compiled: an edit anywhere there compiles everything again, into a new folder; unchanged sources
share one folder across processes and array tasks, as before.
"""

import hashlib
import os
from pathlib import Path

import numba

HERE = Path(__file__).parent
#: Modules outside this package whose constants the kernels read: numba compiles a global in as a
#: constant, so an edit of one must key a new cache as an edit of a kernel does.
CONSTANTS = (HERE.parent / "kinds.py",)


def source_digest() -> str:
    """sha256 (16 hex digits) of the names and bytes of this package's ``.py`` files and of :data:`CONSTANTS`."""
    h = hashlib.sha256()
    for path in [*sorted(HERE.glob("*.py")), *CONSTANTS]:
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def cache_dir() -> Path:
    """Where numba keeps the compiled kernels: ``$NUMBA_CACHE_DIR/kernlearn-<digest>`` when that variable
    is set, else ``kernlearn_cli/solvers/__pycache__/kernlearn-<digest>`` (:func:`source_digest`)."""
    base = os.environ.get("NUMBA_CACHE_DIR") or str(HERE / "__pycache__")
    return Path(base) / f"kernlearn-{source_digest()}"


numba.config.CACHE_DIR = str(cache_dir())
