"""Solvers: one module per method family; compiled inner loops live beside them (``_*_kernels.py``).

The modules register themselves when imported; :data:`kernlearn_cli.builtins.BUILTINS` says which
module holds which solver, so a run imports (and compiles) only the solvers it uses.

numba's on-disk cache is keyed per source file: a compiled function that calls a helper of another
file (a sweep of ``_burg_kernels.py`` calling ``_cyclic.rel_violation``) would be loaded from the cache
after an edit of that helper, stale; and a global of another module (``kinds.DISTANCE``) is compiled
in as a constant.  So each ``kernlearn_cli`` module's compiled functions are cached in a folder named
after that module and the digest of the sources it reaches by imports
(:func:`kernlearn_cli.codehash.closure`, the same digest a cell's record keeps) — :func:`cache_dir`.
An edit of a kernel module or of anything it imports compiles that module's kernels again, into a new
folder (the old one is removed, :func:`prune`); an edit elsewhere (a NumPy-only solver, the CLI)
compiles nothing.  Unchanged sources share one folder across processes and array tasks.  A plugin's
kernels are cached where numba puts them by default.
"""

import hashlib
import os
import re
import shutil
from pathlib import Path

from numba.core import caching

HERE = Path(__file__).parent
PACKAGE = HERE.parent.name
#: A cache folder's name: ``kernlearn-<module, less the package>-<digest>``.
FOLDER = re.compile(r"kernlearn-(?P<module>[\w.]+)-(?P<digest>[0-9a-f]{16})")


def kernel_digest(module: str) -> str:
    """sha256 (16 hex digits) of the sources ``module`` reaches by imports (itself included)."""
    from ..codehash import closure, file_digest

    lines = "\n".join(f"{m} {file_digest(m)}" for m in closure(module))
    return hashlib.sha256(lines.encode()).hexdigest()[:16]


def cache_base() -> Path:
    """``$NUMBA_CACHE_DIR`` when set, else ``kernlearn_cli/solvers/__pycache__``."""
    return Path(os.environ.get("NUMBA_CACHE_DIR") or HERE / "__pycache__")


def _short(module: str) -> str:
    return module.split(".", 1)[1] if module.startswith(PACKAGE + ".") else module


def cache_dir(module: str) -> Path:
    """Where numba keeps the compiled functions of ``module`` (a ``kernlearn_cli`` module):
    ``<cache_base()>/kernlearn-<module>-<kernel_digest(module)>``."""
    return cache_base() / f"kernlearn-{_short(module)}-{kernel_digest(module)}"


def prune(base: Path | None = None, module: str | None = None) -> list[Path]:
    """Remove the cache folders no source of this version reads: a module's folders of other digests,
    folders of modules that no longer exist, and the one-folder-for-everything caches of earlier
    versions (``kernlearn-<digest>``); with ``module``, only that module's.  A folder of the current
    sources is never removed (another process may be filling it).  Returns the folders removed."""
    from ..codehash import _source

    removed = []
    pattern = f"kernlearn-{_short(module)}-*" if module else "kernlearn-*"
    for path in sorted((base or cache_base()).glob(pattern)):
        m = FOLDER.fullmatch(path.name)
        current = m is not None and _source(f"{PACKAGE}.{m['module']}") is not None \
            and kernel_digest(f"{PACKAGE}.{m['module']}") == m["digest"]
        if path.is_dir() and not current:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


_Base = getattr(caching, "UserProvidedCacheLocator", None) or caching._UserProvidedCacheLocator
_Impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl


class ClosureCacheLocator(_Base):
    """numba cache locator of this package's ``@njit(cache=True)`` functions: :func:`cache_dir` of the
    function's module.  Other functions (a plugin's) fall through to numba's own locators."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        folder = cache_dir(py_func.__module__)
        if not folder.exists():                       # a new version of this module's code: drop the old
            prune(folder.parent, py_func.__module__)
        self._cache_path = str(folder / self.get_suitable_cache_subpath(py_file))

    @classmethod
    def from_function(cls, py_func, py_file):
        if not getattr(py_func, "__module__", "").startswith(PACKAGE + "."):
            return None
        return super(_Base, cls).from_function(py_func, py_file)   # skip numba.config.CACHE_DIR's check


if ClosureCacheLocator.__name__ not in [c.__name__ for c in _Impl._locator_classes]:
    _Impl._locator_classes.insert(0, ClosureCacheLocator)
