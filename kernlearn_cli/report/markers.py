"""Filling a Markdown file's block ``<!-- kernlearn:NAME -->`` ... ``<!-- /kernlearn:NAME -->``
(``collect --into``, the README's status summary and ``docs/status.md``'s table)."""

from __future__ import annotations

import re
from pathlib import Path

from ..atomic import atomic_path
from ..errors import ConfigError


def _marker_pattern(marker: str) -> re.Pattern:
    return re.compile(rf"(<!-- kernlearn:{re.escape(marker)} -->\n).*?(<!-- /kernlearn:{re.escape(marker)} -->)", re.S)


def check_marker(path: Path, marker: str, option: str = "collect --into") -> None:
    """Refuse to fill PATH's block NAME unless PATH exists and holds it; ``option`` names, in the
    message, what gave PATH."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{option} '{path}': file not found; it must be an existing Markdown file "
                          f"holding '<!-- kernlearn:{marker} -->' ... '<!-- /kernlearn:{marker} -->'.")
    if not _marker_pattern(marker).search(path.read_text()):
        raise ConfigError(f"{option} '{path}': no block '<!-- kernlearn:{marker} -->' ... "
                          f"'<!-- /kernlearn:{marker} -->' to fill.")


def fill_marker(path: Path, marker: str, text: str, option: str = "collect --into") -> None:
    """Replace what stands between ``<!-- kernlearn:MARKER -->`` and ``<!-- /kernlearn:MARKER -->``."""
    check_marker(path, marker, option)
    path = Path(path)
    source = path.read_text()
    pattern = _marker_pattern(marker)
    with atomic_path(path) as tmp:
        tmp.write_text(pattern.sub(lambda m: m.group(1) + text.rstrip() + "\n" + m.group(2), source))
