"""The package's modules import one another in one direction (issue 46, item 2): no import cycle among
``kernlearn_cli``'s ``import`` statements, at module level or inside functions, and matplotlib is
imported by one module only.  The registry's loading of components by name (``importlib`` on a
string) is not an import statement and does not count."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "kernlearn_cli"


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its own name, for its __init__)."""
    names = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def imported(name: str, path: Path, known: dict) -> set[str]:
    """The modules of the package that the ``import`` and ``from ... import`` statements of module
    ``name`` (anywhere in it, functions included) name: a module, or the module a name comes from."""
    here = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = here.split(".")[:len(here.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:          # `from .m import f`: f is in module m
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imported(name, path, known) for name, path in known.items()}


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (its modules, the first repeated at the end), or None."""
    state: dict[str, int] = {}          # 1: on the current path, 2: done

    def visit(node, path):
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt, path + [nxt])):
                return found
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start, [start])):
            return found
    return None


def test_the_cycle_finder_finds_a_cycle_and_reads_function_level_imports(tmp_path):
    pkg = tmp_path / "kernlearn_cli"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub.b import f\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..a import g\n")
    known = modules(pkg)
    graph = {name: imported(name, path, known) for name, path in known.items()}
    assert graph["kernlearn_cli.a"] == {"kernlearn_cli.sub.b"}
    assert graph["kernlearn_cli.sub.b"] == {"kernlearn_cli.a"}
    assert cycle(graph) == ["kernlearn_cli.a", "kernlearn_cli.sub.b", "kernlearn_cli.a"]


def test_no_import_cycle_in_the_package():
    graph = import_graph()
    assert len(graph) > 40 and sum(map(len, graph.values())) > 100          # the whole package was read
    assert cycle(graph) is None, " -> ".join(cycle(graph))


def test_records_and_results_folders_are_below_the_runner_and_the_tables():
    """The cycle report <-> runner was ``read_experiment`` one way and ``convergence`` the other: both now
    live in modules that import neither."""
    graph = import_graph()
    for low in ("kernlearn_cli.results", "kernlearn_cli.report.records"):
        assert not graph[low] & {"kernlearn_cli.runner", "kernlearn_cli.report.tables", "kernlearn_cli.cli"}, low


def test_only_the_figures_module_imports_matplotlib():
    users = {name for name, path in modules().items()
             if any(isinstance(node, (ast.Import, ast.ImportFrom))
                    and any("matplotlib" in (alias.name if isinstance(node, ast.Import) else node.module or "")
                            for alias in node.names)
                    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))))}
    assert users == {"kernlearn_cli.report.figures"}


def test_one_writer_per_table_format(tmp_path):
    """A new table format is one entry of WRITERS: write_tables writes exactly its suffixes, in its order."""
    import pandas as pd

    from kernlearn_cli.report.formats import WRITERS, write_tables

    table = pd.DataFrame({"method": ["a_b"], "nmi": ["0.500 ± 0.010 †"]})
    table.attrs["note"] = "† a note"
    paths = write_tables(table, tmp_path / "t")
    assert [p.suffix for p in paths] == list(WRITERS) == [".csv", ".md", ".tex"]
    assert all(p.read_text() == WRITERS[p.suffix](table, table) for p in paths)
    assert "\\dagger" in (tmp_path / "t.tex").read_text() and (tmp_path / "t.md").read_text().endswith("† a note\n")
