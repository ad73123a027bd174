"""Parse an uploaded ARFF in a process of its own, its memory capped: a shared server stays within bounds.

Parsing an ARFF takes many times the file's size in memory (liac-arff builds a Python object per value),
and a server parses what strangers upload. So
:func:`load_arff_bytes_bounded` parses in a child process whose address space is capped at what it had
after start-up plus ``memory_bytes``, one upload at a time (:data:`PARSES_AT_ONCE`), within ``timeout_s``
(:func:`parse_bounded` is the same parse without the turn and stoppable at once: the dashboard's parses are jobs
of its run hub, ``dashboard.serving.parse_job``, which share the hub's slots with the runs):

* the server's own memory only ever holds the parsed arrays (what the run needs anyway);
* a file that needs more is refused by name ("needs more than N MB to parse"), not an out-of-memory
  server, and a file that parses too slowly is refused after ``timeout_s``;
* the child hands back plain arrays (``numpy.save`` format, read with ``allow_pickle=False``) and a JSON
  of names: nothing is unpickled.

Where the platform has no fork server (Windows) the parse runs in-process, unbounded.

The upload is handed to the child in a temporary folder named for the process that made it
(:func:`parse_folder_prefix`: ``ncld-parse-<pid>-<start>-``, the pid and start time of that process), so no
folder stays behind for long: it goes when the parse ends or at the process's orderly end (even mid-parse:
``tempfile.TemporaryDirectory`` cleans up at exit), and :func:`remove_orphaned_folders` (called at the first
parse of a process and by the dashboard's start-up) removes those whose process is gone (a server killed with
SIGKILL mid-parse). A folder of a process still running (another server on the same machine) is kept.

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

import contextlib
import json
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ncld_core.data.arff import load_arff_bytes
from ncld_core.data.dataset import Dataset

from .fork_server import end_with, process_context
from .limits import LIMITS

__all__ = ["load_arff_bytes_bounded", "parse_bounded", "ParseCancelled", "PARSES_AT_ONCE", "FOLDER_PREFIX",
           "parse_folder_prefix", "remove_orphaned_folders"]

#: Uploads parsed at the same time on one server (the others wait their turn).
PARSES_AT_ONCE = 1
_TURN = threading.BoundedSemaphore(PARSES_AT_ONCE)
#: The start of every parse folder's name (then the owner's pid and start time: :func:`parse_folder_prefix`).
FOLDER_PREFIX = "ncld-parse-"
_FOLDER = re.compile(re.escape(FOLDER_PREFIX) + r"(\d+)-(\d+)-")
_SWEPT: set = set()  # (pid, folder): orphans removed there at this process's first parse
_SWEEP_LOCK = threading.Lock()


def _start_time(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot, Linux's ``/proc/<pid>/stat``), None if unknown or gone:
    with the pid it names one process, even after the pid is reused."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return int(stat[stat.rindex(")") + 2:].split()[19])  # field 22, after "pid (comm) "
    except (OSError, ValueError, IndexError):
        return None


def _alive(pid: int, start: int) -> bool:
    """Whether the process ``pid`` that started at ``start`` (0: unknown) still runs."""
    if start and Path("/proc/self/stat").is_file():
        return _start_time(pid) == start
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, another user's
        return True
    return True


def parse_folder_prefix(pid: int | None = None) -> str:
    """The name every parse folder of process ``pid`` (default: this one) starts with:
    ``ncld-parse-<pid>-<start time>-`` (start time 0 where the platform does not tell it)."""
    pid = os.getpid() if pid is None else pid
    return f"{FOLDER_PREFIX}{pid}-{_start_time(pid) or 0}-"


def remove_orphaned_folders(folder=None) -> list[Path]:
    """Remove the parse folders in ``folder`` (default: the temporary folder, ``tempfile.gettempdir()``) whose
    process is gone (killed mid-parse); the folders of running processes stay. The folders removed."""
    root = Path(tempfile.gettempdir() if folder is None else folder)
    removed = []
    with contextlib.suppress(OSError):
        for entry in root.iterdir():
            m = _FOLDER.match(entry.name)
            if m is None or not entry.is_dir() or entry.is_symlink() or _alive(int(m[1]), int(m[2])):
                continue
            shutil.rmtree(entry, ignore_errors=True)
            if not entry.exists():
                removed.append(entry)
    return removed


def _first_parse_here(folder: str) -> None:
    """Once per process and temporary folder: the orphans there are removed."""
    key = (os.getpid(), folder)
    with _SWEEP_LOCK:
        if key in _SWEPT:
            return
        _SWEPT.add(key)
    remove_orphaned_folders(folder)


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


class ParseCancelled(Exception):
    """A parse ended by its ``cancel`` event (:func:`parse_bounded`): not a fault of the file."""


#: How often a parse's waiting thread looks at its ``cancel`` event (seconds): a cancelled child is killed within it.
POLL_S = 0.05


def load_arff_bytes_bounded(arff_bytes, xml_bytes=None, *, name: str = "upload",
                            memory_bytes: int | None = None, timeout_s: float | None = None) -> Dataset:
    """:func:`~ncld_core.data.arff.load_arff_bytes` in a child process with at most ``memory_bytes`` more
    memory than it starts with (default ``LIMITS.upload_parse_bytes``) and ``timeout_s`` seconds (default
    ``LIMITS.upload_parse_timeout_s``); a ValueError naming the file when it needs more or takes longer. One
    parse of this process at a time (:data:`PARSES_AT_ONCE`; the dashboard's parses are jobs of its run hub
    instead, :func:`parse_bounded` within the hub's slots)."""
    with _TURN:
        return parse_bounded(arff_bytes, xml_bytes, name=name, memory_bytes=memory_bytes, timeout_s=timeout_s)


def parse_bounded(arff_bytes, xml_bytes=None, *, name: str = "upload", memory_bytes: int | None = None,
                  timeout_s: float | None = None, cancel: threading.Event | None = None,
                  started: Callable[[object], None] | None = None) -> Dataset:
    """:func:`load_arff_bytes_bounded` without waiting for this process's turn (the caller bounds how many
    parses run at once: the dashboard's run hub, ``dashboard.serving.parse_job``), and stoppable: once
    ``cancel`` is set (from any thread) the child is killed within :data:`POLL_S`, its folder removed, and
    :class:`ParseCancelled` raised. ``started(process)`` is called once the child runs (its
    ``multiprocessing`` process: whoever shows the parse may look at it). The limits of
    :func:`load_arff_bytes_bounded` hold: ``memory_bytes``, and ``timeout_s`` counted from the child's start."""
    memory_bytes = LIMITS.upload_parse_bytes if memory_bytes is None else int(memory_bytes)
    timeout_s = LIMITS.upload_parse_timeout_s if timeout_s is None else float(timeout_s)
    ctx = process_context()
    if ctx is None:
        return load_arff_bytes(arff_bytes, xml_bytes, name=name)
    if not isinstance(arff_bytes, (bytes, bytearray)):
        return load_arff_bytes(arff_bytes, xml_bytes, name=name)  # its own message names the argument
    tag = "" if name == "upload" else f" ({name})"
    _first_parse_here(tempfile.gettempdir())
    with tempfile.TemporaryDirectory(prefix=parse_folder_prefix()) as folder:
        out = Path(folder)
        (out / "in.arff").write_bytes(arff_bytes)
        if xml_bytes is not None:
            (out / "in.xml").write_bytes(bytes(xml_bytes))
        if cancel is not None and cancel.is_set():
            raise ParseCancelled(f"arff_bytes{tag}: the parse was cancelled")
        child = ctx.Process(target=_parse_in_child, daemon=True,
                            args=(folder, name, xml_bytes is not None, memory_bytes, os.getpid()))
        child.start()
        if started is not None:
            started(child)
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            child.join(max(min(POLL_S if cancel is not None else left, left), 0))
            if not child.is_alive():
                break
            if cancel is not None and cancel.is_set():
                child.kill()
                child.join()
                raise ParseCancelled(f"arff_bytes{tag}: the parse was cancelled")
            if left <= 0:
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
