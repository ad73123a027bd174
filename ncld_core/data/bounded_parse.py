"""Parse an uploaded ARFF in a process of its own, its memory capped: a shared server stays within bounds.

Parsing an ARFF takes many times the file's size in memory (liac-arff builds a Python object per value),
and a server parses what strangers upload. So
:func:`load_arff_bytes_bounded` parses in a child process whose address space is capped at what it had
after start-up plus ``memory_bytes``, one upload at a time (:data:`PARSES_AT_ONCE`), within ``timeout_s``:

* the server's own memory only ever holds the parsed arrays (what the run needs anyway);
* a file that needs more is refused by name ("needs more than N MB to parse"), not an out-of-memory
  server, and a file that parses too slowly is refused after ``timeout_s``;
* the child hands back plain arrays (``numpy.save`` format, read with ``allow_pickle=False``) and a JSON
  of names: nothing is unpickled.

Where the platform has no fork server (Windows) the parse runs in-process, unbounded.

>>> arff = b"@relation 'r: -C 1'\\n@attribute y {0,1}\\n@attribute x numeric\\n@data\\n1,2.5\\n0,1\\n"
>>> ds = load_arff_bytes_bounded(arff, name="r")
>>> ds.Y.ravel().tolist(), ds.X.ravel().tolist(), ds.source
([1, 0], [2.5, 1.0], 'upload')
>>> load_arff_bytes_bounded(b"@relation r\\n@data\\n", name="r")
Traceback (most recent call last):
...
ValueError: arff_bytes (r): malformed ARFF at line 2: @data before any @attribute line (the header is @relation, then @attribute lines, then @data)
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..fork_server import end_with, process_context
from ..limits import LIMITS
from .arff import load_arff_bytes
from .dataset import Dataset

__all__ = ["load_arff_bytes_bounded", "PARSES_AT_ONCE"]

#: Uploads parsed at the same time on one server (the others wait their turn).
PARSES_AT_ONCE = 1
_TURN = threading.BoundedSemaphore(PARSES_AT_ONCE)


def _vm_size_bytes() -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _parse_in_child(folder: str, name: str, has_xml: bool, memory_bytes: int, caller: int | None = None) -> None:
    """The child: cap the address space, parse, write the arrays and names (or the error) into ``folder``."""
    import resource

    if caller is not None:
        end_with(caller)  # a server that crashed leaves no parse running
    out = Path(folder)
    base = _vm_size_bytes()
    if base is not None:
        limit = base + memory_bytes
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        arff = (out / "in.arff").read_bytes()
        xml = (out / "in.xml").read_bytes() if has_xml else None
        ds = load_arff_bytes(arff, xml, name=name)
        arrays = {"Y": ds.Y}
        if sp.issparse(ds.X):
            X = ds.X.tocsr()
            arrays.update(X_data=X.data, X_indices=X.indices, X_indptr=X.indptr,
                          X_shape=np.asarray(X.shape, dtype=np.int64))
        else:
            arrays["X"] = np.asarray(ds.X)
        np.savez(out / "arrays.npz", **arrays)
        meta = {"label_names": list(ds.label_names), "feature_names": list(ds.feature_names)}
    except ValueError as exc:
        meta = {"error": str(exc)}
    except MemoryError:
        meta = {"memory": True}
    (out / "meta.json").write_text(json.dumps(meta))


def _megabytes(n: int) -> str:
    return f"{n / 1024**2:,.0f} MB"


def load_arff_bytes_bounded(arff_bytes, xml_bytes=None, *, name: str = "upload",
                            memory_bytes: int | None = None, timeout_s: float | None = None) -> Dataset:
    """:func:`~ncld_core.data.arff.load_arff_bytes` in a child process with at most ``memory_bytes`` more
    memory than it starts with (default ``LIMITS.upload_parse_bytes``) and ``timeout_s`` seconds (default
    ``LIMITS.upload_parse_timeout_s``); a ValueError naming the file when it needs more or takes longer."""
    memory_bytes = LIMITS.upload_parse_bytes if memory_bytes is None else int(memory_bytes)
    timeout_s = LIMITS.upload_parse_timeout_s if timeout_s is None else float(timeout_s)
    ctx = process_context()
    if ctx is None:
        return load_arff_bytes(arff_bytes, xml_bytes, name=name)
    if not isinstance(arff_bytes, (bytes, bytearray)):
        return load_arff_bytes(arff_bytes, xml_bytes, name=name)  # its own message names the argument
    tag = "" if name == "upload" else f" ({name})"
    with _TURN, tempfile.TemporaryDirectory(prefix="ncld-parse-") as folder:
        out = Path(folder)
        (out / "in.arff").write_bytes(arff_bytes)
        if xml_bytes is not None:
            (out / "in.xml").write_bytes(bytes(xml_bytes))
        child = ctx.Process(target=_parse_in_child, daemon=True,
                            args=(folder, name, xml_bytes is not None, memory_bytes, os.getpid()))
        child.start()
        child.join(timeout_s)
        if child.is_alive():
            child.kill()
            child.join()
            raise ValueError(f"arff_bytes{tag}: parsing took longer than {timeout_s:g} s; upload a smaller file")
        meta_path = out / "meta.json"
        meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {"memory": True}
        if "error" in meta:
            raise ValueError(meta["error"])
        if meta.get("memory"):
            raise ValueError(f"arff_bytes{tag}: the file needs more than {_megabytes(memory_bytes)} of memory to "
                             f"parse, the server's limit for one upload; upload a smaller file")
        with np.load(out / "arrays.npz", allow_pickle=False) as z:
            if "X" in z:
                X = z["X"]
            else:
                X = sp.csr_matrix((z["X_data"], z["X_indices"], z["X_indptr"]), shape=tuple(z["X_shape"]))
            Y = z["Y"]
    return Dataset(name, X, Y, tuple(meta["label_names"]), tuple(meta["feature_names"]), source="upload")
