"""The server's parsed uploads are released when the last session that showed them is gone
(dashboard.serving.uploads)."""

from __future__ import annotations

import gc
import time
import weakref

import numpy as np
import pytest

from dashboard.serving.uploads import UploadCache
from ncld_core.data import Dataset
from dashboard.serving.limits import Limits

ARFF = b"@relation 'toy: -C 1'\n@attribute y {0,1}\n@attribute x numeric\n@data\n1,2.5\n0,1\n1,3\n0,0\n"


class Stream:
    """A stand-in for a built stream (any object a weak reference can follow)."""


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class Parser:
    """A parse that makes a fresh dataset each time and counts the calls."""

    def __init__(self):
        self.calls = 0

    def __call__(self, arff_bytes, xml_bytes, name):
        self.calls += 1
        rng = np.random.default_rng(self.calls)
        return Dataset(name, rng.normal(size=(40, 3)), (rng.random((40, 2)) < 0.5).astype(int), source="upload")


def _cache(alive: set, clock: Clock, forgotten: list | None = None, **limits):
    limits = {"upload_grace_s": 3.0, "parse_cache_ttl_s": 1800.0, "parse_cache_entries": 4, **limits}
    return UploadCache(Limits(**limits), session_alive=alive.__contains__, clock=clock, watch_s=0,
                       forget=None if forgotten is None else forgotten.append)


def _released(ref: weakref.ref) -> bool:
    gc.collect()
    return ref() is None


def test_an_upload_is_released_when_its_last_session_is_gone():
    alive, clock, forgotten, parse = {"a", "b"}, Clock(), [], Parser()
    cache = _cache(alive, clock, forgotten)
    ds = cache.load("a", ARFF, None, "toy", parse)
    assert cache.load("b", ARFF, None, "toy", parse) is ds and parse.calls == 1  # parsed once for both
    stream = cache.stream("toy", cache.key(ARFF, None, "toy")[1], "spec", Stream)
    refs = weakref.ref(ds), weakref.ref(stream)
    del ds, stream
    alive.discard("a")
    cache.reap()
    clock.now = 10.0
    cache.reap()  # a gone past the grace; b still shows the upload
    assert len(cache) == 1 and forgotten == ["a"] and not cache.holds("a") and cache.holds("b")
    alive.discard("b")
    cache.reap()
    assert len(cache) == 1  # within the grace: a dropped connection that comes back keeps it
    clock.now = 12.0
    cache.reap()
    assert len(cache) == 1
    clock.now = 13.5
    cache.reap()
    assert len(cache) == 0 and forgotten == ["a", "b"]
    assert all(_released(r) for r in refs)  # the dataset and its stream are gone from memory


def test_a_page_back_within_streamlits_reconnect_window_keeps_its_session_and_upload():
    """Streamlit keeps a disconnected session 2 minutes for its page to come back to; the cache closed it (and
    released its upload) after the runs' 3 s grace, so a student whose wifi dropped for 5 s came back to a new
    session without the file. The upload's grace is now the reconnect window's."""
    assert Limits().upload_grace_s >= 120.0 > Limits().session_grace_s
    alive, clock, forgotten, parse = {"a"}, Clock(), [], Parser()
    cache = UploadCache(Limits(), session_alive=alive.__contains__, clock=clock, watch_s=0,
                        forget=forgotten.append)
    ds = cache.load("a", ARFF, None, "toy", parse)
    alive.discard("a")
    cache.reap()
    clock.now = 60.0  # a minute without its connection
    cache.reap()
    assert cache.holds("a") and not forgotten
    alive.add("a")  # the page is back
    cache.reap()
    assert cache.load("a", ARFF, None, "toy", parse) is ds and parse.calls == 1
    alive.discard("a")
    cache.reap()
    clock.now = 60.0 + Limits().upload_grace_s
    cache.reap()
    assert forgotten == ["a"] and len(cache) == 0


def test_the_freed_memory_is_handed_back_a_grace_after_the_last_release(monkeypatch):
    from dashboard.serving import uploads

    trims = []
    monkeypatch.setattr(uploads, "return_freed_memory", lambda: trims.append(1) or True)
    alive, clock, parse = {"a"}, Clock(), Parser()
    cache = _cache(alive, clock)
    cache.load("a", ARFF, None, "toy", parse)
    alive.clear()
    for now in (0.0, 3.0, 4.0, 5.9):  # released at 3.0 (the grace); Streamlit closes the session meanwhile
        clock.now = now
        cache.reap()
    assert len(cache) == 0 and trims == []
    for now in (6.0, 7.0, 100.0):
        clock.now = now
        cache.reap()
    assert trims == [1]  # once


def test_a_session_that_comes_back_within_the_grace_keeps_its_upload():
    alive, clock, forgotten, parse = {"a"}, Clock(), [], Parser()
    cache = _cache(alive, clock, forgotten)
    cache.load("a", ARFF, None, "toy", parse)
    alive.discard("a")
    cache.reap()
    clock.now = 2.0
    alive.add("a")
    cache.reap()
    clock.now = 100.0
    cache.reap()
    assert len(cache) == 1 and forgotten == [] and parse.calls == 1


def test_an_upload_unused_past_its_age_bound_is_released_though_its_session_is_there():
    alive, clock, parse = {"a"}, Clock(), Parser()
    cache = _cache(alive, clock, parse_cache_ttl_s=60.0)
    ref = weakref.ref(cache.load("a", ARFF, None, "toy", parse))
    clock.now = 59.0
    cache.reap()
    assert len(cache) == 1
    clock.now = 61.0
    cache.reap()
    assert len(cache) == 0 and _released(ref) and not cache.holds("a")
    cache.load("a", ARFF, None, "toy", parse)  # its next rerun parses it again
    assert parse.calls == 2 and len(cache) == 1


def test_a_session_holds_one_upload_and_the_server_a_bounded_number():
    alive, clock, parse = {"a", "b", "c"}, Clock(), Parser()
    cache = _cache(alive, clock, parse_cache_entries=2)
    first = weakref.ref(cache.load("a", ARFF, None, "first", parse))
    cache.load("a", ARFF + b"1,1\n", None, "second", parse)  # the session's other upload replaces the first
    assert len(cache) == 1 and _released(first)
    cache.load("b", ARFF, None, "b", parse)
    cache.load("c", ARFF, None, "c", parse)  # a third kept upload: the least recently loaded goes
    assert len(cache) == 2 and not cache.holds("a") and cache.holds("b") and cache.holds("c")


def test_a_failed_parse_keeps_nothing():
    alive, clock = {"a"}, Clock()
    cache = _cache(alive, clock)

    def bad(arff_bytes, xml_bytes, name):
        raise ValueError("arff_bytes (toy): malformed")

    with pytest.raises(ValueError, match="malformed"):
        cache.load("a", ARFF, None, "toy", bad)
    assert len(cache) == 0 and not cache.holds("a")


def test_the_watchdog_releases_an_upload_with_no_visitor_left():
    alive, forgotten, parse = {"a"}, [], Parser()
    cache = UploadCache(Limits(upload_grace_s=0.2), session_alive=alive.__contains__, forget=forgotten.append,
                        watch_s=0.05)
    ref = weakref.ref(cache.load("a", ARFF, None, "toy", parse))
    alive.clear()  # the tab closes; nobody calls the cache again
    deadline = time.monotonic() + 10
    while len(cache) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(cache) == 0 and forgotten == ["a"] and _released(ref)


def test_the_dashboard_keeps_uploads_in_the_cache_its_watchdog_releases(monkeypatch):
    """dashboard.data.upload_parse (a parse job of the server's run hub, its dataset then kept in the UploadCache)
    and build_stream go through the server's UploadCache (no st.cache_data copy that outlives the sessions): the
    parse and the stream are released when the session is gone, and the hub keeps nothing of it."""
    from dashboard import data
    from dashboard.serving.run_hub import PARSE
    from ncld_core.config import RunConfig

    alive = {"s1"}
    monkeypatch.setattr(data, "session_id", lambda: "s1")
    monkeypatch.setattr(data, "session_alive", alive.__contains__)
    monkeypatch.setattr(data, "close_session", lambda session: None)
    data.uploads.clear()
    data.run_hub.clear()
    try:
        cache, hub = data.uploads(), data.run_hub()
        cache.limits = Limits(upload_grace_s=0.0)
        ds, job = data.upload_parse(ARFF * 1, None, "toy")
        if ds is None:  # not read within the page's first wait (a loaded machine): the hub's job goes on
            assert hub.held("s1", PARSE) is job and job.wait(60) == "done"
            ds, job = data.upload_parse(ARFF, None, "toy")
        assert job is None and hub.held("s1", PARSE) is None  # collected: the upload cache keeps it now
        assert data.upload_parse(ARFF, None, "toy") == (ds, None) and hub.parses == 1
        upload = (ds, data.digest(ARFF, None))
        cfg = RunConfig(dataset=data.UPLOAD, chunk_size=2, n_neighbors=1, noise="none", schedule="")
        stream = data.build_stream(cfg, upload)
        assert data.build_stream(cfg, upload) is stream
        refs = weakref.ref(ds), weakref.ref(stream)
        del ds, stream, upload
        alive.clear()
        cache.reap()
        assert len(cache) == 0 and all(_released(r) for r in refs)
    finally:
        data.uploads.clear()
        data.run_hub.clear()


def test_a_gone_session_is_closed_in_streamlit_and_a_connected_one_is_not(monkeypatch):
    """close_session (the cache's forget) closes a session no longer connected through Streamlit's public,
    thread-safe call, which drops its stored state and its uploaded files; a connected session is left alone."""
    from streamlit import runtime

    from dashboard import data

    closed, connected = [], {"here"}

    class FakeRuntime:
        @staticmethod
        def exists():
            return True

        @staticmethod
        def instance():
            return FakeRuntime

        @staticmethod
        def is_active_session(session):
            return session in connected

        @staticmethod
        def clear_user_info_for_session(session):
            closed.append(session)

    monkeypatch.setattr(runtime, "Runtime", FakeRuntime)
    data.close_session("here")
    data.close_session("gone")
    assert closed == ["gone"]
