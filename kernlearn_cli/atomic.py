"""Atomic writes: a file is written whole under a temporary name beside it, then renamed onto its name.

A killed process never leaves a partial file under the real name, and two processes writing one
file each rename a complete one (:func:`atomic_path`).  Every file is created with the permissions
the umask gives (0644 under the usual 022), not the 0600 of a temporary file (:func:`new_file_mode`).
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path


def new_file_mode() -> int:
    """Permissions of a new regular file under the process umask (0o644 under umask 022)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def temp_beside(path: Path) -> Path:
    """A new empty file beside ``path`` (same file system) with the umask's permissions."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    os.chmod(tmp, new_file_mode())
    return Path(tmp)


@contextmanager
def atomic_path(path: Path, commit: bool = True):
    """Yield a temporary path beside ``path``; rename it onto ``path`` if the block succeeds.

    With ``commit=False`` the caller renames it (:func:`~kernlearn_cli.records.write_cell`); the temporary file is
    removed if it is still there when the block exits.  An ``OSError`` (disk full, read-only
    place) names ``path``, not the temporary name.
    """
    path = Path(path)
    tmp = None
    try:
        tmp = temp_beside(path)
        yield tmp
        if commit:
            os.replace(tmp, path)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
    finally:
        if tmp is not None and tmp.exists():
            tmp.unlink()
