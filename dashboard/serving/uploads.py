"""The server's parsed uploads, shared by the sessions that uploaded the same file and released when the last of
them is gone.

An upload is parsed once (``parse``: a bounded parse; the dashboard parses in its run hub's parse jobs and hands
the dataset over with :meth:`UploadCache.keep`) and kept with the streams built from it,
keyed by its name and its bytes' digest; every session that loads it is noted as a user. A session holds one
upload at a time (loading another detaches it from the first). An upload is released, with its streams,

* when its last user is gone: ``session_alive`` says so for ``upload_grace_s`` (as long as Streamlit keeps a
  disconnected session for its page to come back to); ``forget(session_id)`` is then called for that session, which
  the dashboard uses to close Streamlit's session (its stored state and its uploaded files, which Streamlit
  itself never drops once the session has expired from its reconnect store);
* when it has not been loaded for ``parse_cache_ttl_s`` (a session still there parses it again at its next
  rerun);
* when more than ``parse_cache_entries`` uploads are kept: the least recently loaded goes.

A watchdog thread looks every ``watch_s`` seconds (0: no watchdog, :meth:`UploadCache.reap` by hand), so the
memory is released with no visitor left to trigger it, and handed back to the system (glibc keeps freed heap
pages otherwise: :func:`return_freed_memory`). No Streamlit here (``tests/test_uploads.py`` drives it).

>>> from dashboard.serving.limits import Limits
>>> alive = {"a", "b"}
>>> cache = UploadCache(Limits(upload_grace_s=0), session_alive=alive.__contains__, watch_s=0)
>>> parse = lambda arff, xml, name: f"parsed {name}"
>>> cache.load("a", b"1,0", None, "toy", parse), cache.load("b", b"1,0", None, "toy", parse), cache.parses
('parsed toy', 'parsed toy', 1)
>>> alive.discard("a"); cache.reap(); len(cache)   # b still shows it
1
>>> alive.discard("b"); cache.reap(); len(cache)
0
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from .limits import LIMITS, Limits
from .watchdog import Watchdog

__all__ = ["UploadCache", "upload_digest", "return_freed_memory"]


def upload_digest(*parts: bytes | None) -> str:
    """The sha256 of the files' contents (each file hashed, None for a file not given)."""
    h = hashlib.sha256()
    for p in parts:
        h.update(b"\0" if p is None else hashlib.sha256(p).digest())
    return h.hexdigest()


def return_freed_memory() -> bool:
    """Hand the heap's freed pages back to the system (glibc's ``malloc_trim``): a released upload's many small
    buffers (its upload's chunks, its parse's names) otherwise stay in the process's resident memory, freed
    but kept. False where there is no glibc."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return False
    trim(0)
    return True


class _Entry:
    __slots__ = ("dataset", "sessions", "used", "streams")

    def __init__(self, dataset, used: float):
        self.dataset = dataset
        self.sessions: set = set()
        self.used = used
        self.streams: OrderedDict = OrderedDict()


class UploadCache:
    """Parsed uploads kept while a session uses them (see the module's description). ``limits``: the bounds
    (``parse_cache_entries``, ``parse_cache_ttl_s``, ``stream_cache_entries`` streams per upload,
    ``upload_grace_s``); ``session_alive(session_id)``: whether a session's page is still there (default:
    always); ``forget(session_id)``: called once for a session found gone; ``clock``: seconds."""

    def __init__(self, limits: Limits = LIMITS, *, session_alive: Callable[[str], bool] | None = None,
                 forget: Callable[[str], None] | None = None, watch_s: float = 0.5,
                 clock: Callable[[], float] = time.monotonic):
        self.limits = limits
        self.session_alive = session_alive or (lambda session_id: True)
        self.forget = forget
        self.clock = clock
        self.parses = 0  # uploads parsed (not found kept): what the tests count
        self._lock = threading.RLock()
        self._parsing = threading.Lock()  # one parse at a time: a file uploaded twice at once is parsed once
        self._entries: OrderedDict = OrderedDict()  # key -> _Entry, least recently loaded first
        self._by_session: dict[str, tuple] = {}  # session -> the key of the upload it holds
        self._gone_since: dict[str, float] = {}
        self._watchdog = Watchdog(watch_s, self.reap, name="ncld-uploads")
        self._freed_at: float | None = None  # when uploads or sessions were last released (memory to hand back)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def key(self, arff_bytes: bytes, xml_bytes: bytes | None, name: str) -> tuple:
        return name, upload_digest(arff_bytes, xml_bytes)

    def load(self, session_id: str, arff_bytes: bytes, xml_bytes: bytes | None, name: str,
             parse: Callable[[bytes, bytes | None, str], object]):
        """The parsed upload for ``session_id`` (``parse(arff_bytes, xml_bytes, name)`` the first time; its
        ValueError passes through, nothing is kept); the session becomes one of its users."""
        key = self.key(arff_bytes, xml_bytes, name)
        self._watchdog.ensure()
        with self._lock:
            entry = self._entries.get(key)
        if entry is None:
            with self._parsing:  # (a kept upload is never held up by another's parse)
                with self._lock:
                    entry = self._entries.get(key)
                if entry is None:
                    dataset = parse(arff_bytes, xml_bytes, name)
                    with self._lock:
                        self.parses += 1
                        entry = self._entries.setdefault(key, _Entry(dataset, self.clock()))
        with self._lock:
            return self._use(session_id, key, entry)

    def attach(self, session_id: str, key: tuple):
        """The kept upload ``key`` (``(name, digest)``, :meth:`key`) for ``session_id``, which becomes one of its
        users; None when it is not kept (nothing is parsed here)."""
        self._watchdog.ensure()
        with self._lock:
            entry = self._entries.get(key)
            return None if entry is None else self._use(session_id, key, entry)

    def keep(self, session_id: str, key: tuple, dataset):
        """Keep ``dataset``, parsed elsewhere (the run hub's parse job), as the upload ``key`` for ``session_id``, one
        of its users; the dataset kept (one kept meanwhile under the same key stays)."""
        self._watchdog.ensure()
        with self._lock:
            entry = self._entries.setdefault(key, _Entry(dataset, self.clock()))
            return self._use(session_id, key, entry)

    def _use(self, session_id: str, key: tuple, entry: _Entry):
        """Under the lock: ``session_id`` becomes a user of ``entry`` (its previous upload detached); its dataset."""
        held = self._by_session.get(session_id)
        if held is not None and held != key:
            self._detach(session_id)
        entry.sessions.add(session_id)
        entry.used = self.clock()
        self._by_session[session_id] = key
        self._entries[key] = entry  # (again, if a reap released it meanwhile)
        self._entries.move_to_end(key)
        self._trim()
        return entry.dataset

    def stream(self, name: str, digest: str, spec: str, build: Callable[[], object]):
        """The stream ``spec`` (a string naming its settings) of the upload ``(name, digest)``, built by
        ``build()`` once and kept with the upload (released with it); built and not kept when the upload is no
        longer kept."""
        key = (name, digest)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and spec in entry.streams:
                entry.streams.move_to_end(spec)
                return entry.streams[spec]
        stream = build()
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                entry.streams[spec] = stream
                while len(entry.streams) > self.limits.stream_cache_entries:
                    entry.streams.popitem(last=False)
        return stream

    def holds(self, session_id: str) -> bool:
        """Whether ``session_id`` is a user of a kept upload."""
        with self._lock:
            return session_id in self._by_session

    def _detach(self, session_id: str) -> None:
        key = self._by_session.pop(session_id, None)
        entry = self._entries.get(key) if key is not None else None
        if entry is None:
            return
        entry.sessions.discard(session_id)
        if not entry.sessions:
            del self._entries[key]

    def _trim(self) -> None:
        while len(self._entries) > max(self.limits.parse_cache_entries, 1):
            key, entry = self._entries.popitem(last=False)
            for session_id in entry.sessions:
                self._by_session.pop(session_id, None)

    def reap(self) -> None:
        """Release the uploads whose last user is gone (for ``upload_grace_s``) or that were not loaded for
        ``parse_cache_ttl_s``; ``forget`` each session found gone. ``session_grace_s`` after the last release (the
        closed sessions' state is gone by then), hand the freed memory back to the system (:func:`return_freed_memory`)."""
        gone = []
        with self._lock:
            kept = len(self._entries)
            now = self.clock()
            for session_id in list(self._by_session):
                if self.session_alive(session_id):
                    self._gone_since.pop(session_id, None)
                elif now - self._gone_since.setdefault(session_id, now) >= self.limits.upload_grace_s:
                    self._detach(session_id)
                    gone.append(session_id)
            for session_id in [s for s in self._gone_since if s not in self._by_session]:
                del self._gone_since[session_id]
            for key in [k for k, e in self._entries.items() if now - e.used > self.limits.parse_cache_ttl_s]:
                for session_id in self._entries.pop(key).sessions:
                    self._by_session.pop(session_id, None)
            released = len(self._entries) < kept
        if self.forget is not None:
            for session_id in gone:
                self.forget(session_id)
        if released or gone:
            self._freed_at = self.clock()
        elif self._freed_at is not None and self.clock() - self._freed_at >= self.limits.session_grace_s:
            self._freed_at = None  # the closed sessions' state and files are gone by now (closed on the event loop)
            return_freed_memory()
