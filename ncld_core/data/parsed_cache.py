"""A disk cache of parsed datasets: an ARFF is parsed once per content, later loads read arrays.

Parsing a sparse ARFF of a few MB takes 1-2 s (arts, health); reading the same arrays back from an
``.npz`` takes a few ms. The entry's name is the sha256 of the ARFF bytes, of the XML bytes and of the
parser's own source (``arff.py``, ``dataset.py``), so an edited file or an edited parser never meets a
stale entry. Entries hold plain arrays and strings only and are read with ``allow_pickle=False``:
nothing in the cache is ever unpickled or executed. Writes are atomic (a temporary file renamed), and
any failure to read or write only costs the parse.

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
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .dataset import Dataset

#: Environment variable naming the cache folder; set to an empty string to turn the cache off.
CACHE_ENV = "NCLD_CACHE_DIR"
_FORMAT = 1


def cache_dir() -> Path | None:
    """The cache folder, or None when ``NCLD_CACHE_DIR`` is set empty."""
    env = os.environ.get(CACHE_ENV)
    if env is not None:
        return Path(env).expanduser() if env.strip() else None
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ncld" / "parsed"


@functools.lru_cache(maxsize=1)
def _parser_digest() -> str:
    here = Path(__file__).resolve().parent
    h = hashlib.sha256(str(_FORMAT).encode())
    for module in ("arff.py", "dataset.py"):
        h.update((here / module).read_bytes())
    return h.hexdigest()


def content_key(arff_bytes: bytes, xml_bytes: bytes | None) -> str:
    """The entry name of a dataset: its files' contents and the parser's source."""
    h = hashlib.sha256(_parser_digest().encode())
    h.update(hashlib.sha256(arff_bytes).digest())
    h.update(b"\0" if xml_bytes is None else hashlib.sha256(xml_bytes).digest())
    return h.hexdigest()


def _path(key: str, folder) -> Path | None:
    folder = cache_dir() if folder is None else Path(folder)
    return None if folder is None else folder / f"{key}.npz"


def fetch(key: str, *, name: str | None = None, source: str | None = None, folder=None) -> Dataset | None:
    """The cached dataset of ``key``, or None (missing, unreadable or cache off).

    ``name`` / ``source``: the caller's (the same content may sit under another name or path).
    """
    path = _path(key, folder)
    if path is None or not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            if meta.get("format") != _FORMAT:
                return None
            if meta["sparse"]:
                X = sp.csr_matrix((z["x_data"], z["x_indices"], z["x_indptr"]), shape=tuple(meta["shape"]))
            else:
                X = z["x_dense"]
            return Dataset(name or meta["name"], X, z["y"], label_names=tuple(meta["label_names"]),
                           feature_names=tuple(meta["feature_names"]), source=source or meta["source"])
    except (OSError, ValueError, KeyError, TypeError):  # a damaged entry: parse again
        return None


def store(ds: Dataset, key: str, *, folder=None) -> bool:
    """Write ``ds`` under ``key``; False when the cache is off or the folder cannot be written."""
    path = _path(key, folder)
    if path is None:
        return False
    sparse = sp.issparse(ds.X)
    meta = {"format": _FORMAT, "name": ds.name, "source": ds.source, "sparse": sparse, "shape": list(ds.X.shape),
            "label_names": list(ds.label_names), "feature_names": list(ds.feature_names)}
    arrays = ({"x_data": ds.X.data, "x_indices": ds.X.indices, "x_indptr": ds.X.indptr} if sparse
              else {"x_dense": np.asarray(ds.X)})
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npz")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(tmp, meta=np.array(json.dumps(meta)), y=ds.Y, **arrays)
        tmp.replace(path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        return False
    return True
