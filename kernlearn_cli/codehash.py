"""Which code computed a cell: one digest per component, over the sources it runs.

A cell's record keeps, under ``provenance.code`` (:func:`code_of`):

- ``components``: per component of the cell (``"dataset wine"``, ``"kernel rbf"``, ``"constraints
  labeled_subset"``, ``"solver burg"``, ``"evaluate svm_accuracy"``, and the settings every component
  of a kind takes: ``"subset"``, ``"holdout"`` and ``"inductive"`` (the inductive maps that score
  the held-out points), ``"reference rbf"``), the sha256 over the sources of the module that
  defines it and of every ``kernlearn_cli`` module it imports — at the top or inside a function,
  transitively (:func:`closure`), so the numba kernels a solver calls are in it — less
  :data:`NOT_NUMERIC`, the modules that route, validate or report and never change a number;
- ``files``: each of those sources' sha256 (12 hex digits), to name the file that changed.

A finished cell whose components' digests differ from the code's now was computed by other code
(:func:`changed_code`): ``kernlearn run`` computes it again, as it does a cell whose input file was
edited, and says which component and file changed; a record without it (written before kernlearn
recorded it) counts as computed by other code.  A plugin's component is digested the same way, over its
own module and the ``kernlearn_cli`` modules it reaches.  Benchopt keys its cached results to the md5
of each solver's file the same way.
"""

from __future__ import annotations

import ast
import hashlib
import sys
from functools import lru_cache
from pathlib import Path

#: The modules left out of a component's digest: the package's version (``kernlearn_cli``), routing
#: a component (``registry``), wording its errors (``errors``), reporting progress (``progress``),
#: recording provenance (``provenance``), estimating memory to refuse a cell up front
#: (``resources``), checking settings (``params``: a setting it would change changes the cell's
#: config, hence its id), digesting code (``codehash``: the solvers' package reads it to name numba's
#: cache folders), hashing the input files a loader read to record them (``inputs``: the sha256 goes to
#: the record's ``inputs``, never into an array), writing a file whole under a temporary name
#: (``atomic``: the catalogue's downloads, whose bytes their sha256 checks) — none computes a number
#: of the cell.
NOT_NUMERIC = frozenset(["kernlearn_cli"] + [f"kernlearn_cli.{m}" for m in (
    "registry", "errors", "progress", "provenance", "resources", "params", "codehash", "inputs", "atomic")])
#: The package whose modules a digest follows.
PACKAGE = "kernlearn_cli"


def _source(module: str) -> Path | None:
    """The source file of an imported or importable module (None for a built-in or a missing one)."""
    mod = sys.modules.get(module)
    path = getattr(mod, "__file__", None)
    if path is None:
        import importlib.util

        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            return None
        path = spec.origin if spec is not None else None
    return Path(path) if path and str(path).endswith(".py") else None


@lru_cache(maxsize=None)
def _imports(module: str) -> frozenset[str]:
    """The ``kernlearn_cli`` modules ``module``'s source imports anywhere (top level or in a function)."""
    path = _source(module)
    if path is None:
        return frozenset()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            full = ".".join(base + ([node.module] if node.module else []))
            candidates = [full] + [f"{full}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            candidates = [a.name for a in node.names]
        else:
            continue
        found.update(c for c in candidates if c.split(".")[0] == PACKAGE and _source(c) is not None)
    return frozenset(found)


@lru_cache(maxsize=None)
def closure(module: str) -> tuple[str, ...]:
    """``module`` and every ``kernlearn_cli`` module it reaches by imports, less :data:`NOT_NUMERIC`, sorted."""
    seen, stack = set(), [module]
    while stack:
        m = stack.pop()
        if m in seen or m in NOT_NUMERIC:
            continue
        seen.add(m)
        stack.extend(_imports(m))
    return tuple(sorted(seen))


@lru_cache(maxsize=None)
def file_digest(module: str) -> str:
    """sha256 of a module's source (read once per process: the code it runs)."""
    path = _source(module)
    return hashlib.sha256(path.read_bytes()).hexdigest() if path is not None else ""


def _rel(module: str) -> str:
    path = _source(module)
    parts = Path(path).parts if path is not None else (module,)
    return "/".join(parts[parts.index(PACKAGE):]) if PACKAGE in parts else str(path)


def component_code(func) -> tuple[str, dict[str, str]]:
    """(the digest of the code ``func`` runs, ``{source file: its sha256[:12]}``)."""
    modules = closure(func.__module__)
    files = {_rel(m): file_digest(m)[:12] for m in modules}
    digest = hashlib.sha256("\n".join(f"{m} {file_digest(m)}" for m in modules).encode()).hexdigest()
    return digest, files


def code_of(bound: dict) -> dict:
    """``{"components": {label: digest}, "files": {source: sha256[:12]}}`` of a bound cell
    (:func:`kernlearn_cli.config.bind_cell`)."""
    components, files = {}, {}
    for label, func in _functions(bound):
        components[label], mine = component_code(func)
        files.update(mine)
    return {"components": components, "files": dict(sorted(files.items()))}


def _functions(bound: dict):
    """(label, the function that computes it) of each component of a bound cell."""
    from .data.holdout import split_holdout
    from .data.subset import stratified_subset

    for role in ("dataset", "kernel", "reference", "constraints", "solver"):
        if role in bound:
            entry = bound[role][0]
            yield f"{role} {entry.name}", entry.func
    if "subset" in bound:
        yield "subset", stratified_subset
    if "holdout" in bound:
        from .inductive import result_rows

        yield "holdout", split_holdout
        yield "inductive", result_rows            # the held-out points' rows: the inductive maps
    for entry, _ in bound.get("evaluate", []):
        yield f"evaluate {entry.name}", entry.func


def changed_code(record: dict, bound: dict) -> list[str]:
    """What computed ``record`` that differs from the code now (``bound``: the record's cell bound
    now), one phrase per component: ``"solver 'burg' (kernlearn_cli/solvers/burg.py changed)"``.
    A record without ``provenance.code`` gives one phrase saying so.  Empty when the code is the same."""
    then = (record.get("provenance") or {}).get("code")
    if not isinstance(then, dict) or not isinstance(then.get("components"), dict):
        return ["the code that computed it (its record names none: written before kernlearn recorded it)"]
    now = code_of(bound)
    old_files = then.get("files") or {}
    out = []
    for label in sorted(set(now["components"]) | set(then["components"])):
        if now["components"].get(label) == then["components"].get(label):
            continue
        kind, _, name = label.partition(" ")
        which = name and f"{kind} '{name}'" or kind
        if label not in then["components"] or label not in now["components"]:
            out.append(f"{which} (not part of the cell {'then' if label not in then['components'] else 'now'})")
            continue
        _, files = component_code(dict(_functions(bound))[label])
        edited = sorted(f for f in files if old_files.get(f) != files[f])
        out.append(f"{which} ({', '.join(edited) or 'its modules'} changed)")
    return out
