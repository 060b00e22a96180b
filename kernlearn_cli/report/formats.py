"""A table's files: one entry of :data:`WRITERS` per format (CSV, Markdown, LaTeX); a new format
is one more entry."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..atomic import atomic_path
from .records import MARK


def markdown(table: pd.DataFrame) -> str:
    """The table as Markdown, with its note (``table.attrs["note"]``) below it."""
    note = table.attrs.get("note")
    return table.to_markdown(index=False) + (f"\n\n{note}" if note else "")


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  "±": r"$\pm$", MARK: r"$^\dagger$", "≤": r"$\leq$", "–": "--"}


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped (and ±, †, ≤ as math)."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def _latex(table: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``table`` whose text cells and column names are LaTeX-escaped."""
    out = table.map(lambda v: latex_escape(v) if isinstance(v, str) else v)
    out.columns = [latex_escape(c) for c in table.columns]
    return out


def csv_text(table: pd.DataFrame, numeric: pd.DataFrame) -> str:
    """The numbers behind the table (``numeric``) as CSV."""
    return numeric.to_csv(index=False)


def markdown_text(table: pd.DataFrame, numeric: pd.DataFrame) -> str:
    """The table as a Markdown file, its note below it (:func:`markdown`)."""
    return markdown(table) + "\n"


def latex_text(table: pd.DataFrame, numeric: pd.DataFrame) -> str:
    """The table as a LaTeX ``tabular``, text escaped (:func:`latex_escape`), its note below it."""
    note = table.attrs.get("note")
    latex = _latex(table).to_latex(index=False)
    return latex + ("\n" + latex_escape(note) + "\n" if note else "")


#: The files :func:`write_tables` writes, in this order: suffix -> its text of (the table as shown, the
#: numbers behind it).  A new format is one more entry.
WRITERS = {".csv": csv_text, ".md": markdown_text, ".tex": latex_text}


def write_tables(table: pd.DataFrame, prefix: Path, numeric: pd.DataFrame | None = None) -> list[Path]:
    """Write ``table`` at ``prefix`` in every format of :data:`WRITERS`, atomically.

    Parameters
    ----------
    table : DataFrame
        The table as shown ('mean ± std' text), its note in ``table.attrs["note"]``.
    prefix : Path
        Where the files go: ``prefix`` with each suffix of :data:`WRITERS`.
    numeric : DataFrame, optional
        The numbers behind it, for the CSV file (default ``table``).

    Returns
    -------
    list of Path
        The files written, in the order of :data:`WRITERS`.
    """
    numeric = table if numeric is None else numeric
    texts = {suffix: write(table, numeric) for suffix, write in WRITERS.items()}   # all made before any is written
    paths = []
    for suffix, text in texts.items():
        path = Path(prefix).with_suffix(suffix)
        with atomic_path(path) as tmp:
            tmp.write_text(text)
        paths.append(path)
    return paths
