"""Path arguments and file reads of the data layer, with messages that name the parameter.

The ARFF reader, the registry and the downloads take paths from users; each checks them here,
so a bad path is one ``ValueError`` saying which argument and why.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> (folder / "a.arff").write_bytes(b"@relation r")
11
>>> read_file(as_path(folder / "a.arff", "arff_path"), "arff_path")
b'@relation r'
>>> as_path(3, "dest")
Traceback (most recent call last):
...
ValueError: dest must be a path (str or os.PathLike), got 3
>>> read_file(folder / "b.arff", "arff_path")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: arff_path: no such file: .../b.arff
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["as_path", "read_file"]


def as_path(value, param: str) -> Path:
    """``value`` (a non-empty ``str`` or ``os.PathLike``) as a ``Path`` with ``~`` expanded."""
    if isinstance(value, (str, os.PathLike)) and str(value):
        return Path(value).expanduser()
    raise ValueError(f"{param} must be a path (str or os.PathLike), got {value!r}")


def read_file(path: Path, param: str, *, max_bytes: int | None = None) -> bytes:
    """The bytes of the regular file ``path``; a missing, non-regular or unreadable file is a ``ValueError``, and so
    is one of more than ``max_bytes`` bytes (when given: checked before it is read, and what is read is bounded
    too, should the file grow meanwhile). A device, a pipe or a folder is never read: ``/dev/zero`` has no end."""
    if not path.exists():
        raise ValueError(f"{param}: no such file: {path}")
    if not path.is_file():
        raise ValueError(f"{param}: not a regular file: {path}")
    try:
        if max_bytes is None:
            return path.read_bytes()
        with path.open("rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            data = fh.read(max_bytes + 1) if size <= max_bytes else b""
    except OSError as exc:
        raise ValueError(f"{param}: cannot read {path}: {exc.strerror or exc}") from None
    if size > max_bytes or len(data) > max_bytes:
        has = f"{size:,} bytes" if size > max_bytes else f"more than {max_bytes:,} bytes"
        raise ValueError(f"{param}: {path} has {has}, past the bound of {max_bytes:,} bytes (not read)")
    return data
