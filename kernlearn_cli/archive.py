"""Record archives: a study's per-cell results, committed, so a reproduction outlives any one machine.

One file per experiment, ``<results>/records/<paper>/<experiment>.jsonl.gz``: gzip (no file name,
mtime 0, level 9) of JSON lines, the first a header naming the experiment and its config, then one
record per finished cell (the cell's ``record.json``, its keys in their order), sorted by cell id -- so the
file's bytes change only when a record does.  Factors stay in the git-ignored results folders;
per-iteration histories are archived (``history``) only for experiments a study's figure draws
them from.

Two records of one cell are *the same result* when they agree in everything but their provenance
and timings (:data:`VOLATILE`): merging archives from several machines (:func:`merge`) refuses two
records of one cell that differ otherwise, naming the cell.

Format 2 (the header's ``kernlearn_archive``): cell ids hash the validated settings, so ``1`` and
``1.0`` are one cell.  A format-1 archive (written before) is migrated on its first read, once: its
records under the ids their cells have now (:func:`current_id`), the file rewritten in place
(:meth:`Archive.read`).
"""

from __future__ import annotations

import gzip
import io
import json
import math
import sys
from pathlib import Path

from .atomic import atomic_path
from .errors import KernlearnError
from .records import RECORD_KEYS, json_default

SUFFIX = ".jsonl.gz"
FORMAT = 2
#: Record keys not compared: provenance, timings and peak memory differ between two runs of one cell without the
#: result differing; the histories (archived beside some records) come from the same run as the rest;
#: ``index`` is where the cell sits in its grid, which reordering the grid changes (not its id); ``config`` is
#: compared through the cell id, the hash of its validated settings, so a config that pins a setting's former
#: default (:meth:`~kernlearn_cli.registry.Entry.digest_params`) holds the same cell.
VOLATILE = ("provenance", "seconds", "cpu_seconds", "peak_rss_bytes", "history", "index", "config")
#: Keys of a record's ``info`` that are timings.
VOLATILE_INFO_SUFFIX = "seconds"


class ArchiveError(KernlearnError):
    """An archive file cannot be read (names the file and the line)."""


def line_of(record: dict, sort_keys: bool = False) -> str:
    """One JSON line; keys keep their order (a grid's order names its cells), as ``record.json`` has it."""
    return json.dumps(record, sort_keys=sort_keys, separators=(",", ":"), default=json_default, allow_nan=True)


#: Two runs of one cell on different CPU types (their BLAS kernels sum in other orders) agree to
#: rounding, not to the bit: numbers within this relative tolerance are the same result.
RTOL = 1e-9


def _essential(record: dict) -> dict:
    rec = {k: v for k, v in record.items() if k not in VOLATILE}
    if isinstance(rec.get("info"), dict):
        rec["info"] = {k: v for k, v in rec["info"].items() if not k.endswith(VOLATILE_INFO_SUFFIX)}
    if isinstance(rec.get("certificate"), dict):
        rec["certificate"] = {k: v for k, v in rec["certificate"].items() if k != "seconds"}
    return rec


def essence(record: dict) -> str:
    """The record without provenance and timings, as canonical text: equal for the same result
    computed on the same kind of machine."""
    return line_of(_essential(record), sort_keys=True)


def leaves(x, y, key: str = ""):
    """The aligned leaves of two JSON-like values, as (dotted key, x's, y's): two mappings by the union
    of their keys (a missing one None), two lists of one length item by item, anything else as one leaf."""
    if isinstance(x, dict) and isinstance(y, dict):
        for k in sorted(set(x) | set(y), key=str):
            yield from leaves(x.get(k), y.get(k), f"{key}.{k}" if key else str(k))
    elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        for i, (u, v) in enumerate(zip(x, y)):
            yield from leaves(u, v, f"{key}[{i}]")
    else:
        yield key, x, y


def _same(x, y) -> bool:
    """One leaf of :func:`differing`: integers, strings and structure exactly, floats to :data:`RTOL`."""
    if isinstance(x, bool) or isinstance(y, bool) or not isinstance(x, (int, float)) or not isinstance(y, (int, float)):
        return x == y
    if isinstance(x, int) and isinstance(y, int):
        return x == y
    if x == y or (math.isnan(x) and math.isnan(y)):          # equal infinities too
        return True
    return not (math.isinf(x) or math.isinf(y)) and abs(x - y) <= RTOL * max(abs(x), abs(y), 1e-3)


def differing(a: dict, b: dict) -> list[str]:
    """The keys (dotted) where two records of one cell differ beyond rounding: integers, strings
    and structure exactly, floats beyond :data:`RTOL` relative (of the larger; ``1e-3 * RTOL``
    absolute near zero; equal infinities and two NaNs agree), provenance and timings not at all."""
    return [key for key, x, y in leaves(_essential(a), _essential(b)) if not _same(x, y)]


def current_id(record: dict) -> str:
    """The id ``record``'s cell has now, recomputed from its ``config`` and ``grid``: ids hash the
    validated settings (:attr:`kernlearn_cli.config.Cell.validated`), so a record made when ``path: 2``
    and ``path: 2.0`` were two cells has the one id both have today.  A record without its config, or
    whose config no longer validates (a component since removed), keeps its id.  For the migrations
    of format-1 archives and of results folders (:func:`kernlearn_cli.results.migrate_folder`)."""
    from .config import Cell

    if not isinstance(record.get("config"), dict):
        return record["cell"]
    try:
        return Cell(record.get("index", 0), record["config"], record["grid"]).id
    except KernlearnError:
        return record["cell"]


class Archive:
    """The archived records of one experiment (a mapping cell id -> record) and its header.

    Parameters
    ----------
    path : Path
        ``<results>/records/<paper>/<experiment>.jsonl.gz``.
    experiment : str
        The study's experiment name.
    config : dict
        The experiment's config as run (its overrides applied, grid included): the cells it expects.
    """

    def __init__(self, path: Path, experiment: str, config: dict | None = None, records: dict | None = None):
        self.path, self.experiment, self.config = Path(path), experiment, config
        self.records: dict[str, dict] = dict(records or {})

    # ---- reading -------------------------------------------------------------------------------
    @classmethod
    def read(cls, path: Path, experiment: str | None = None) -> "Archive":
        """Read an archive; a missing file is an empty archive.

        Raises
        ------
        ArchiveError
            A line that is not a record (damaged file), naming the file and the line; the file is
            left as it is (``reproduce --rerun EXPERIMENT`` recomputes and rewrites it).
        """
        path = Path(path)
        name = experiment or path.name[: -len(SUFFIX)]
        if not path.is_file():
            return cls(path, name)
        try:
            text = gzip.decompress(path.read_bytes()).decode("utf-8")
        except (OSError, EOFError, UnicodeDecodeError, gzip.BadGzipFile) as exc:
            raise ArchiveError(f"record archive '{path}': not a readable gzip file of JSON lines ({exc}). "
                               f"Restore it from git (git checkout -- '{path}'), or recompute the experiment "
                               f"with kernlearn reproduce PAPER --rerun {name}.") from None
        lines = text.splitlines()
        archive, version = cls(path, name), FORMAT
        for number, line in enumerate(lines, 1):
            try:
                item = json.loads(line)
                if not isinstance(item, dict):
                    raise ValueError("not a JSON object")
                if number == 1:
                    version = item.get("kernlearn_archive")
                    if version not in (1, FORMAT):
                        raise ValueError(f"the header line must hold kernlearn_archive: {FORMAT} (or 1, migrated)")
                    archive.config = item.get("config")
                    continue
                missing = [k for k in RECORD_KEYS if k not in item]
                if missing:
                    raise ValueError(f"missing key(s) {', '.join(missing)}")
            except ValueError as exc:
                raise ArchiveError(f"record archive '{path}', line {number}: {exc}. The other records are kept; "
                                   f"restore the file from git, or recompute the experiment with kernlearn "
                                   f"reproduce PAPER --rerun {name}.") from None
            archive.add(item, source=f"line {number} of '{path}'")
        if version == 1:
            archive._migrate()
        return archive

    def _migrate(self) -> None:
        """Format 1 to 2, once: each record under the id its cell has now (:func:`current_id`; two
        records that come to share one must be the same result, :meth:`add`), the file rewritten
        atomically, and one line on stderr saying so.  A file that cannot be written is migrated in
        memory, on each read, and the line says why."""
        old, self.records, moved = self.records, {}, 0
        for cell, rec in sorted(old.items()):
            new = current_id(rec)
            moved += new != cell
            self.add(rec if new == cell else {**rec, "cell": new}, source=f"the record of cell {cell}")
        try:
            self.write()
            done = "rewritten in place (once)"
        except OSError as exc:
            done = f"not rewritten ({exc.strerror}): migrated in memory on each read until the file is writable"
        print(f"record archive '{self.path}': format 1 migrated to {FORMAT} (cell ids hash the validated settings): "
              f"{moved} of {len(old)} record(s) re-keyed, {len(old) - len(self.records)} duplicate(s) merged; {done}.",
              file=sys.stderr, flush=True)

    # ---- writing -------------------------------------------------------------------------------
    def image(self) -> bytes:
        """The file's bytes: deterministic for the same header and records."""
        header = {"kernlearn_archive": FORMAT, "experiment": self.experiment, "config": self.config}
        text = "\n".join([line_of(header)] + [line_of(self.records[c]) for c in sorted(self.records)]) + "\n"
        buffer = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as gz:
            gz.write(text.encode("utf-8"))
        return buffer.getvalue()

    def write(self) -> bool:
        """Write the file atomically when its bytes change; True if written."""
        data = self.image()
        if self.path.is_file() and self.path.read_bytes() == data:
            return False
        with atomic_path(self.path) as tmp:
            tmp.write_bytes(data)
        return True

    # ---- merging -------------------------------------------------------------------------------
    def add(self, record: dict, source: str) -> bool:
        """Add a record; True if it is new.  The same result again, to rounding (:func:`differing`),
        is kept as it is (the first record wins); a different result for an archived cell raises
        :class:`ArchiveError`."""
        cell = record["cell"]
        mine = self.records.get(cell)
        if mine is None:
            self.records[cell] = record
            return True
        keys = differing(mine, record)
        if keys:
            shown = ", ".join(keys[:5]) + (f" and {len(keys) - 5} more" if len(keys) > 5 else "")
            raise ArchiveError(
                f"cell {cell} of experiment '{self.experiment}': the record from {source} differs from the one in "
                f"'{self.path}' beyond rounding (relative {RTOL:g}; in: {shown}; made by {_made_by(record)} and "
                f"{_made_by(mine)}). One cell "
                f"id, two results: the code changed between the runs. Keep one: recompute the experiment with "
                f"kernlearn reproduce PAPER --rerun {self.experiment}, or leave {source} out.")
        return False

    def commits(self) -> dict[str, int]:
        """Cells per git commit (with ``+dirty`` when made from a modified checkout)."""
        out: dict[str, int] = {}
        for rec in self.records.values():
            key = _made_by(rec)
            out[key] = out.get(key, 0) + 1
        return dict(sorted(out.items()))


def _made_by(record: dict) -> str:
    prov = record.get("provenance") or {}
    commit = prov.get("git_commit") or f"kernlearn {record.get('kernlearn_version', '?')}"
    return commit[:10] + ("+dirty" if prov.get("git_dirty") else "")
