"""``kernlearn collect --tidy``: the finished cells as a tidy table, one row per cell and metric.

Each row holds the cell's every setting (grid values and the rest of its config, by dotted key),
its certificate, its timings and the environment that ran it (``provenance.*``), then ``metric``,
``value`` and ``value_std`` (the spread within the cell, for metrics that record one).  The loader
is :func:`tidy_records`; :func:`write_tidy` writes CSV, or Parquet where pyarrow or fastparquet is
installed.
"""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

import pandas as pd

from ..atomic import atomic_path
from ..errors import ConfigError, KernlearnError
from ..records import RECORD
from .records import flat_settings, load_records, records_of
from .show import provenance_text
from .tables import metric_columns


#: The files ``--tidy`` writes, by suffix.
TIDY_FORMATS = (".csv", ".parquet")
#: The libraries pandas writes Parquet with; one must be installed for ``--tidy FILE.parquet``.
PARQUET_ENGINES = ("pyarrow", "fastparquet")


def check_tidy_path(path: Path) -> None:
    """Refuse a ``--tidy`` file whose format is unknown, or Parquet where no Parquet library is installed."""
    suffix = Path(path).suffix.lower()
    if suffix not in TIDY_FORMATS:
        raise ConfigError(f"collect --tidy '{path}': unknown format '{suffix or '(none)'}'; use one of "
                          f"{', '.join(TIDY_FORMATS)}.")
    if suffix == ".parquet" and not any(importlib.util.find_spec(e) for e in PARQUET_ENGINES):
        raise ConfigError(f"collect --tidy '{path}': writing Parquet needs {' or '.join(PARQUET_ENGINES)}, and "
                          f"neither is installed (pip install pyarrow); or write CSV: --tidy "
                          f"{Path(path).with_suffix('.csv')}.")


def environment_columns(rec: dict) -> dict:
    """A record's provenance as ``provenance.<key>`` columns: one per library version
    (``provenance.versions.numpy``), the others as text (:func:`~.show.provenance_text`) or numbers."""
    out = {}
    for key, value in (rec.get("provenance") or {}).items():
        if key == "versions":
            out.update({f"provenance.versions.{k}": str(v) for k, v in value.items()})
        elif isinstance(value, (int, float)) or value is None:
            out[f"provenance.{key}"] = value
        else:
            out[f"provenance.{key}"] = provenance_text(key, value)
    return out


def _uniform(column: pd.Series) -> pd.Series:
    """A settings column as numbers when every value present is a number (not a bool), else as text,
    so that it has one type (Parquet needs one); missing values stay missing."""
    present = column.dropna()
    if present.map(lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)).all():
        return column
    if present.map(lambda v: isinstance(v, bool)).all():
        return column
    return column.map(lambda v: v if v is None or (isinstance(v, float) and v != v) else str(v))


def tidy_records(roots: list[Path], command: str = "collect --tidy") -> pd.DataFrame:
    """The finished cells under ``roots`` (results folders or record archives), one row per cell and metric.

    Parameters
    ----------
    roots : list of Path
        Results folders or record archives (as :func:`~.records.load_records` reads them).
    command : str
        The command named in error messages.

    Returns
    -------
    DataFrame
        The columns of :func:`~.records.load_records` (experiment, cell, grid values, seed, solver,
        dataset, convergence, certificate ``cert_*``, iterations, objective, ``seconds``,
        ``cpu_seconds``), then every other setting of the cell's config by dotted key (``solver.tol``;
        lists as JSON), the environment (:func:`environment_columns`), and ``metric``, ``value``,
        ``value_std``.  Rows are in the cells' order, then the metrics' order.

    Raises
    ------
    KernlearnError
        When no cell under ``roots`` is finished.
    """
    cells, done = load_records(roots, command)
    if cells.empty:
        raise KernlearnError(f"{command}: no finished cells under {', '.join(map(str, roots))} (no readable "
                             f"{RECORD} files). {done.message()}".rstrip())
    # Keyed by (cell, k): the k-th root holding the cell, as in ``cells``, whose rows come root by root.
    # By cell alone, a cell under two roots would show the first root's environment on both rows.
    extra, held = {}, Counter()
    for root in roots:
        for cell, _, rec in records_of(Path(root), command):
            if isinstance(rec, dict):
                extra[cell, held[cell]] = {
                    **{k: v for k, v in flat_settings(rec.get("config") or {}, rec["grid"])},
                    **({"peak_rss_bytes": rec["peak_rss_bytes"]} if "peak_rss_bytes" in rec else {}),
                    **environment_columns(rec)}
                held[cell] += 1
    more = pd.DataFrame([extra[key] for key in zip(cells["cell"], cells.groupby("cell").cumcount())],
                        index=cells.index)
    more = more[[c for c in more.columns if c not in cells.columns]].apply(_uniform)
    metrics = metric_columns(cells)
    ids = pd.concat([cells.drop(columns=metrics + [c for c in cells.columns if c.endswith("_std")]),
                     more], axis=1)
    parts = [ids.assign(metric=m, value=cells[m].astype(float),
                        value_std=cells[f"{m}_std"].astype(float) if f"{m}_std" in cells else float("nan"))
             for m in metrics]
    out = pd.concat(parts, ignore_index=False).sort_index(kind="stable").reset_index(drop=True)
    out.attrs = {}
    return out


def write_tidy(table: pd.DataFrame, path: Path) -> Path:
    """Write a tidy table (:func:`tidy_records`) as CSV or Parquet, by ``path``'s suffix, atomically."""
    check_tidy_path(path)
    with atomic_path(Path(path)) as tmp:
        if Path(path).suffix.lower() == ".parquet":
            table.to_parquet(tmp, index=False)
        else:
            table.to_csv(tmp, index=False)
    return Path(path)
