"""benchmarks/README.md is the index of benchmarks/: one section per folder, one line per file of it.

A script added to a folder without its line in the index, or a line left after its script moved or
went, fails here, so the index cannot go stale (issue 55, item 7)."""

from __future__ import annotations

import re

from helpers import REPO

BENCHMARKS = REPO / "benchmarks"
#: A folder's section: ``## `speed/` — ...`` up to the next section.
SECTION = re.compile(r"^## `(\w+)/`[^\n]*\n(.*?)(?=^## |\Z)", re.M | re.S)
#: A file's line in its folder's index: ``- `bench_burg.py` — what it measures: `python benchmarks/speed/...```.
ENTRY = re.compile(r"^- `([\w.]+\.(?:py|yaml))` — (.+)$", re.M)


def index() -> dict[str, dict[str, str]]:
    """``{folder: {file: its index line}}`` as benchmarks/README.md lists them."""
    text = (BENCHMARKS / "README.md").read_text()
    return {m.group(1): dict(ENTRY.findall(m.group(2))) for m in SECTION.finditer(text)}


def scripts() -> dict[str, set[str]]:
    """``{folder: {file}}``: the scripts and configs in benchmarks/'s folders."""
    found: dict[str, set[str]] = {}
    for path in sorted(BENCHMARKS.rglob("*")):
        if path.suffix in (".py", ".yaml") and "__pycache__" not in path.parts:
            rel = path.relative_to(BENCHMARKS)
            assert len(rel.parts) == 2, f"benchmarks/{rel.as_posix()}: a file belongs in one folder per job"
            found.setdefault(rel.parts[0], set()).add(rel.parts[1])
    return found


def test_every_script_in_benchmarks_has_its_line_in_the_index_of_its_folder():
    listed, present = index(), scripts()
    assert present and set(listed) == set(present), (sorted(listed), sorted(present))
    missing = sorted(f"{folder}/{name}" for folder, names in present.items() for name in names - set(listed[folder]))
    gone = sorted(f"{folder}/{name}" for folder, lines in listed.items() for name in set(lines) - present[folder])
    assert not missing, f"scripts without a line in benchmarks/README.md: {missing}"
    assert not gone, f"benchmarks/README.md lists files that are not there: {gone}"


def test_each_index_line_gives_the_command_of_its_own_file():
    for folder, lines in index().items():
        for name, line in lines.items():
            assert f"benchmarks/{folder}/{name}" in line, (folder, name, line)
