"""Writing result files: atomic writes, and JSON of numpy values.

:func:`write_atomic` writes a temporary file in the same folder, fsyncs it, then renames it: a
reader (or a crash) sees either the old file or the complete new one, never a half-written one.
Checkpoints, the runner's exports and the benchmarks' reports are all written through it.

A reader (or a crash) sees either the old file or the complete new one, never a
half-written one.  On any error or interrupt (``KeyboardInterrupt`` included) the
temporary file is removed; a process killed outright cannot remove it, so each write
first removes the temporaries of earlier writes of the same path that are older than
:data:`STALE_TEMP_SECONDS` (a write in progress elsewhere keeps touching its own).

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "out", "a.txt")
>>> write_atomic(path, "hello")
>>> open(path).read(), sorted(os.listdir(os.path.dirname(path)))
('hello', ['a.txt'])
>>> with atomic_writer(path) as fh:
...     _ = fh.write(b"bye")
>>> open(path).read(), sorted(os.listdir(os.path.dirname(path)))
('bye', ['a.txt'])
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
import time
from pathlib import Path

__all__ = ["json_default", "check_writable", "write_atomic", "atomic_writer", "remove_stale_temps", "STALE_TEMP_SECONDS",
           "FILE_KINDS", "file_kind"]

#: A temporary file of a write of the same path older than this (seconds) was left by a killed
#: process: the next write of that path removes it.
STALE_TEMP_SECONDS = 15 * 60


def json_default(obj):
    """``json.dumps(default=...)`` for numpy values: arrays as lists, scalars as Python numbers, else ``str``."""
    import numpy as np

    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (np.integer, np.floating, np.bool_)):
        return obj.item()
    return str(obj)


def _temp_pattern(path: Path) -> re.Pattern:
    # tempfile.mkstemp's names: prefix, 8 characters of [a-z0-9_], suffix
    return re.compile(rf"\.{re.escape(path.name)}\.[a-z0-9_]{{8}}\.tmp")


def remove_stale_temps(path, older_than: float = STALE_TEMP_SECONDS) -> list[Path]:
    """Remove the temporary files of earlier writes of ``path`` older than ``older_than`` seconds.

    Only names :func:`atomic_writer` makes for this very path are touched; returns those removed.
    """
    path = Path(path)
    pattern, cutoff, removed = _temp_pattern(path), time.time() - older_than, []
    try:
        candidates = [p for p in path.parent.iterdir() if pattern.fullmatch(p.name)]
    except OSError:
        return removed
    for tmp in candidates:
        with contextlib.suppress(OSError):  # gone meanwhile, or not ours to remove: left alone
            if tmp.is_file() and not tmp.is_symlink() and tmp.stat().st_mtime < cutoff:
                tmp.unlink()
                removed.append(tmp)
    return removed


@contextlib.contextmanager
def atomic_writer(path):
    """A binary file to write ``path``'s new content into; it replaces ``path`` when the block ends.

    The file is a temporary in ``path``'s folder (created with its parents), flushed, fsynced and
    renamed onto ``path``; if the block raises anything (``KeyboardInterrupt`` too) it is removed and
    ``path`` is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; the result is an ordinary readable file
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_atomic(path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8, or bytes) to ``path`` atomically; parent folders are created."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    with atomic_writer(path) as fh:
        fh.write(payload)


#: What a path that is neither a regular file nor a symbolic link is, in words, by its ``stat.S_IFMT`` mode.
FILE_KINDS = {stat.S_IFDIR: "a directory", stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFCHR: "a character device",
              stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}


def file_kind(mode: int) -> str:
    """What a file of ``mode`` (``os.stat(...).st_mode``) is, in words, where it is not a regular file.

    >>> import os
    >>> file_kind(os.stat("/dev/null").st_mode)
    'a character device'
    """
    return FILE_KINDS.get(stat.S_IFMT(mode), "not a regular file")


def check_writable(path, name: str, *, folder: bool) -> Path:
    """``path`` as a :class:`~pathlib.Path` if a run can write there, else a ValueError naming ``name``: checked
    before any work, so that a run is never computed only to fail at its last step.

    ``folder``: ``path`` is a folder to write files in (``--out``), else a file to write (``--checkpoint``).
    Refused: a file where a folder is meant and a folder where a file is; a path through a file; a folder the
    process cannot write in; a device, pipe or socket where a file is meant (the atomic write would replace it).
    Folders that do not exist yet are fine (they are created when written).

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile() as f:
    ...     check_writable(f.name, "--out", folder=True)
    Traceback (most recent call last):
    ...
    ValueError: --out ... is a file, not a folder
    """
    path = Path(path)
    try:  # (a folder on the way the process may not enter makes exists() raise)
        if path.exists() and path.is_dir() != folder:
            raise ValueError(f"{name} {path} is a {'file' if folder else 'folder'}, not a "
                             f"{'folder' if folder else 'file'}")
        if not folder and path.exists() and not path.is_file():
            # a device, pipe or socket: the atomic write would replace it with a regular file (as root, /dev/zero)
            raise ValueError(f"{name} {path} is {file_kind(path.stat().st_mode)}, not a regular file")
        existing = path if folder else path.parent  # the folder the files go in, or its first existing ancestor
        while not existing.exists():
            existing = existing.parent
        if not existing.is_dir():
            raise ValueError(f"{name} {path}: {existing} is a file, not a folder")
    except OSError as exc:
        raise ValueError(f"{name} {path}: cannot reach it ({exc.strerror or exc})") from None
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"{name} {path}: cannot write in {existing}")
    return path
