"""Writing result files: atomic writes, and JSON of numpy values.

:func:`write_atomic` writes a temporary file in the same folder, fsyncs it, then renames it: a
reader (or a crash) sees either the old file or the complete new one, never a half-written one.
Checkpoints, the runner's exports and the benchmarks' reports are all written through it.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "out", "a.txt")
>>> write_atomic(path, "hello")
>>> open(path).read(), sorted(os.listdir(os.path.dirname(path)))
('hello', ['a.txt'])
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["json_default", "write_atomic"]


def json_default(obj):
    """``json.dumps(default=...)`` for numpy values: arrays as lists, scalars as Python numbers, else ``str``."""
    import numpy as np

    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (np.integer, np.floating, np.bool_)):
        return obj.item()
    return str(obj)


def write_atomic(path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8, or bytes) to ``path`` atomically; parent folders are created."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; the result is an ordinary readable file
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
