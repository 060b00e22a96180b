"""Every registered component is documented where a reader looks for it, checked against the registry:
a new component fails here, with the place to add it named, until it is."""

import re

import pytest

from kernlearn_cli.registry import REGISTRIES

from helpers import REPO

SOLVERS_MD = REPO / "docs" / "solvers.md"
#: The Components table's row of each registry.
ROWS = {"datasets": "datasets", "kernels": "kernels", "constraints": "constraints", "solvers": "solvers",
        "evaluators": "evaluators"}


def _section(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else None]


def _row(table: str, kind: str) -> str:
    (line,) = [line for line in table.splitlines() if line.startswith(f"| {kind} |")]
    return line


def _builtins(key):
    return [e.name for e in REGISTRIES[key].entries() if e.func.__module__.startswith("kernlearn_cli.")]


@pytest.mark.parametrize("key", sorted(ROWS))
def test_every_component_is_in_the_components_table(key):
    row = _row(_section(SOLVERS_MD.read_text(), "Components"), ROWS[key])
    missing = [name for name in _builtins(key) if f"`{name}`" not in row]
    assert not missing, (f"docs/solvers.md, section 'Components', row '{ROWS[key]}': add {', '.join(missing)} "
                         f"(each in backquotes, with a few words on what it is)")


def test_every_solver_has_a_row_and_a_section():
    text = SOLVERS_MD.read_text()
    table = _section(text, "Solvers")
    rows = "\n".join(line for line in table.splitlines() if line.startswith("| ["))
    headings = "\n".join(re.findall(r"^### .*$", text, flags=re.M))
    for name in _builtins("solvers"):
        assert f"`{name}`" in rows, (f"docs/solvers.md, section 'Solvers': add a table row for `{name}` (paper and "
                                     f"algorithm, cost, what `converged` means)")
        assert f"`{name}`" in headings, (f"docs/solvers.md: add a section '### `{name}`' (method and cost, settings, "
                                         f"certificate, deviations) and its line in the contents")


def test_every_solver_is_in_the_certified_results_table_and_an_inductive_one_in_inductive_use():
    text = SOLVERS_MD.read_text()
    table = "\n".join(line for line in _section(text, "Certified results").splitlines() if line.startswith("| `"))
    start = text.index("### Inductive use")
    inductive = text[start:text.index("\n## ", start)]
    for entry in REGISTRIES["solvers"].entries():
        if not entry.func.__module__.startswith("kernlearn_cli."):
            continue
        assert f"`{entry.name}`" in table, (f"docs/solvers.md, section 'Certified results': add `{entry.name}` to the "
                                            f"table (its checks with their default tolerances, further figures)")
        if entry.inductive:
            assert f"`{entry.name}`" in inductive or entry.inductive == "landmarks", (
                f"docs/solvers.md, section 'Inductive use': name `{entry.name}` (inductive: {entry.inductive})")


def test_every_dataset_is_in_the_datasets_readme():
    readme = (REPO / "datasets" / "README.md").read_text()
    missing = [name for name in _builtins("datasets") if f"`{name}`" not in readme]
    assert not missing, f"datasets/README.md: add {', '.join(missing)} (source, parsing, size, licence)"
