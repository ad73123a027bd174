"""A disk cache of parsed datasets: an ARFF is parsed once per content, later loads read arrays.

Parsing a sparse ARFF of a few MB takes 1-2 s (arts, health); reading the same arrays back from an
``.npz`` takes a few ms. An entry is named by the sha256 of the ARFF bytes and of the XML bytes, in a
folder named by the parser (the source of ``arff.py`` and ``dataset.py`` and liac-arff's version), so an
edited file or an edited parser never meets a stale entry; folders of other parser versions are removed
when an entry is written. Entries hold plain arrays and strings only and are read with
``allow_pickle=False``: nothing in the cache is ever unpickled or executed. Writes are atomic (a
temporary file of the writer's own, renamed), a damaged entry is deleted and parsed again, and any
failure to read or write only costs the parse. Entries are not checksummed against the registry:
``load_dataset(verify=True)`` checks the ARFF and XML bytes, whose hashes name the entry.

The folder is bounded (:mod:`ncld_core.limits`: ``parsed_disk_bytes``, ``parsed_disk_days``): after each
write, entries unread for longer than the age limit go, then the least recently read until the folder fits
(a read marks an entry by its modification time); the entry just written stays.

The folder is ``NCLD_CACHE_DIR`` if set (an empty value turns the cache off), else
``$XDG_CACHE_HOME/ncld/parsed`` (``~/.cache/ncld/parsed``).

>>> import numpy as np, tempfile
>>> from ncld_core.data.dataset import Dataset
>>> folder = tempfile.mkdtemp()
>>> ds = Dataset("toy", np.eye(3), np.array([[1, 0], [0, 1], [1, 1]]), source="toy.arff")
>>> store(ds, "abc", folder=folder)
True
>>> back = fetch("abc", folder=folder)
>>> back.name, back.X.tolist() == ds.X.tolist(), back.Y.tolist(), back.label_names
('toy', True, [[1, 0], [0, 1], [1, 1]], ('label_0', 'label_1'))
>>> fetch("other", folder=folder) is None
True
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .dataset import Dataset

#: Environment variable naming the cache folder; set to an empty string to turn the cache off.
CACHE_ENV = "NCLD_CACHE_DIR"
#: The modules whose source decides what a parse returns (beside liac-arff's version).
PARSER_SOURCES = tuple(Path(__file__).resolve().parent / m for m in ("arff.py", "dataset.py"))
_FORMAT = 1
_VERSION_DIR = re.compile(r"^[0-9a-f]{16}$")


def cache_dir() -> Path | None:
    """The cache folder, or None when ``NCLD_CACHE_DIR`` is set empty."""
    env = os.environ.get(CACHE_ENV)
    if env is not None:
        return Path(env).expanduser() if env.strip() else None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ncld" / "parsed"


def parser_digest(sources=PARSER_SOURCES) -> str:
    """A hash of what decides a parse: the parser's source files, liac-arff's version, the entry format."""
    return _parser_digest(tuple(str(s) for s in sources))


@functools.lru_cache(maxsize=8)
def _parser_digest(sources: tuple) -> str:
    import arff  # liac-arff: the ARFF decoder the parser uses

    h = hashlib.sha256(f"{_FORMAT}|{getattr(arff, '__version__', '?')}".encode())
    for path in sources:
        h.update(Path(path).read_bytes())
    return h.hexdigest()


def content_key(arff_bytes: bytes, xml_bytes: bytes | None) -> str:
    """The entry name of a dataset: the sha256 of its files' contents."""
    h = hashlib.sha256(hashlib.sha256(arff_bytes).digest())
    h.update(b"\0" if xml_bytes is None else hashlib.sha256(xml_bytes).digest())
    return h.hexdigest()


def entry_path(key: str, *, folder=None) -> Path | None:
    """Where the entry of ``key`` lives for the current parser (None: the cache is off)."""
    root = cache_dir() if folder is None else Path(folder)
    return None if root is None else root / parser_digest()[:16] / f"{key}.npz"


def fetch(key: str, *, name: str | None = None, source: str | None = None, folder=None) -> Dataset | None:
    """The cached dataset of ``key``, or None (missing, damaged or cache off; a damaged entry is deleted).

    ``name`` / ``source``: the caller's (the same content may sit under another name or path).
    """
    path = entry_path(key, folder=folder)
    if path is None or not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            if meta.get("format") != _FORMAT:
                raise ValueError("another entry format")
            if meta["sparse"]:
                X = sp.csr_matrix((z["x_data"], z["x_indices"], z["x_indptr"]), shape=tuple(meta["shape"]))
            else:
                X = z["x_dense"]
            ds = Dataset(name or meta["name"], X, z["y"], label_names=tuple(meta["label_names"]),
                         feature_names=tuple(meta["feature_names"]), source=source or meta["source"])
        with contextlib.suppress(OSError):
            os.utime(path)  # read now: the last to go when the folder is trimmed
        return ds
    except Exception:  # noqa: BLE001 - truncated, bit-flipped (BadZipFile, CRC), foreign: parse again
        with contextlib.suppress(OSError):
            path.unlink()
        return None


def store(ds: Dataset, key: str, *, folder=None) -> bool:
    """Write ``ds`` under ``key``; False when the cache is off or the folder cannot be written."""
    path = entry_path(key, folder=folder)
    if path is None:
        return False
    sparse = sp.issparse(ds.X)
    meta = {"format": _FORMAT, "name": ds.name, "source": ds.source, "sparse": sparse, "shape": list(ds.X.shape),
            "label_names": list(ds.label_names), "feature_names": list(ds.feature_names)}
    arrays = ({"x_data": ds.X.data, "x_indices": ds.X.indices, "x_indptr": ds.X.indptr} if sparse
              else {"x_dense": np.asarray(ds.X)})
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{key[:16]}.", suffix=".npz")  # one per writer
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, meta=np.array(json.dumps(meta)), y=ds.Y, **arrays)
        os.replace(tmp, path)
    except OSError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        return False
    _prune(path.parent)
    trim(path.parent, keep=path)
    return True


def trim(folder, *, max_bytes: int | None = None, max_age_s: float | None = None, keep: Path | None = None,
         now: float | None = None) -> list[Path]:
    """Remove the entries of ``folder`` unread for more than ``max_age_s``, then the least recently read
    until the rest take at most ``max_bytes`` (defaults: :mod:`ncld_core.limits`); never ``keep``. The
    entries removed.

    >>> import tempfile, os
    >>> folder = Path(tempfile.mkdtemp())
    >>> for i, name in enumerate("abc"):
    ...     _ = (folder / f"{name}.npz").write_bytes(b"x" * 100)
    ...     os.utime(folder / f"{name}.npz", (1000 + i, 1000 + i))
    >>> [p.name for p in trim(folder, max_bytes=250, max_age_s=10**9, now=2000)]
    ['a.npz']
    >>> [p.name for p in trim(folder, max_bytes=10**6, max_age_s=500, now=1503, keep=folder / "b.npz")]
    ['c.npz']
    """
    import time

    from ..limits import LIMITS

    max_bytes = LIMITS.parsed_disk_bytes if max_bytes is None else max_bytes
    max_age_s = LIMITS.parsed_disk_days * 86400 if max_age_s is None else max_age_s
    now = time.time() if now is None else now
    entries = []
    with contextlib.suppress(OSError):
        for f in Path(folder).iterdir():
            if f.suffix == ".npz" and not f.name.startswith(".") and f.is_file():
                st = f.stat()
                entries.append((st.st_mtime, st.st_size, f))
    entries.sort()  # least recently read first
    removed, total = [], sum(size for _, size, _ in entries)
    for mtime, size, f in entries:
        if f == keep:
            continue
        if now - mtime > max_age_s or total > max_bytes:
            with contextlib.suppress(OSError):
                f.unlink()
                removed.append(f)
                total -= size
    return removed


def _prune(current: Path) -> None:
    """Remove the folders of other parser versions (their entries can never be read again)."""
    with contextlib.suppress(OSError):
        for other in current.parent.iterdir():
            if other != current and other.is_dir() and _VERSION_DIR.match(other.name) \
                    and all(f.suffix == ".npz" for f in other.iterdir()):
                shutil.rmtree(other, ignore_errors=True)
