"""The input files a cell read, by content: their sha256, recorded and compared with the files now.

A dataset loader or a constraint generator records the files it read (:func:`input_files`: path ->
sha256, computed once per version of a file, :func:`input_digest`); a finished cell whose input
file has changed since is computed again (:func:`changed_inputs`, said by :func:`describe_changes`).
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


#: sha256 of the input files read in this process, by path: ((size, mtime_ns, ctime_ns, inode), digest).
_DIGESTS: dict[str, tuple[tuple[int, int, int, int], str]] = {}


#: A file modified less than this many seconds before it was hashed is hashed again at each use: the
#: file system's clock is coarse, so a second edit within one tick keeps size and times (git's "racily
#: clean" entries).
_RACY_SECONDS = 2.0


def input_digest(path: str | Path) -> str:
    """sha256 of an input file, computed once per version of the file in this process: memoised on its
    size, times and inode, except while it is recent enough that an edit could leave those unchanged."""
    st = os.stat(path)
    stamp = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    key = str(path)
    if key in _DIGESTS and _DIGESTS[key][0] == stamp:
        return _DIGESTS[key][1]
    digest = sha256_file(Path(path))
    if time.time() - max(st.st_mtime, st.st_ctime) > _RACY_SECONDS:
        _DIGESTS[key] = (stamp, digest)
    return digest


def input_files(*paths: str | Path) -> dict[str, str]:
    """``{absolute path: sha256}`` of the files a component read: what a dataset loader puts in
    ``Dataset.meta["inputs"]`` and a constraint generator in ``Constraints.files``, so that every cell
    records the content of its inputs (``record.json``: ``inputs``) and a finished cell whose input
    was edited since is computed again (:func:`changed_inputs`)."""
    return {str(Path(p).absolute()): input_digest(p) for p in paths}


def changed_inputs(record: dict) -> list[tuple[str, str, str | None]]:
    """The input files of a record (``inputs``: path -> sha256) whose content on disk differs now:
    ``(path, recorded sha256, current sha256 or None when the file is gone)``.  A record without
    ``inputs`` (an archived or older record, or one whose data came from the catalogue, pinned by
    its MANIFEST sha256) has none."""
    out = []
    for path, digest in (record.get("inputs") or {}).items():
        try:
            now = input_digest(path)
        except OSError:
            now = None
        if now != digest:
            out.append((path, digest, now))
    return out


def describe_changes(changes: dict[str, list[tuple[str, str, str | None]]]) -> str:
    """``cell -> changed_inputs(...)`` as one sentence per file: which file, its content then and now,
    and how many cells read the earlier version."""
    files: dict[tuple[str, str, str | None], list[str]] = {}
    for cell, changed in changes.items():
        for change in changed:
            files.setdefault(change, []).append(cell)
    return " ".join(f"'{path}' {'is gone' if now is None else f'has changed (sha256 now {now[:12]}…)'} since "
                    f"{len(cells)} finished cell(s) read it (sha256 {then[:12]}…; e.g. {cells[0]})."
                    for (path, then, now), cells in files.items())
