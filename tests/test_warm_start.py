"""What the dashboard's server does once so that a first Run, or a moved knob, starts fast: the fork server computes
a tiny run when it starts (dashboard.serving.fork_warmup), so every run's process forked from it starts with what a
process sets up once already done."""

from __future__ import annotations

import sys

import pytest

from dashboard.serving.fork_server import PRELOAD, process_context

needs_fork_server = pytest.mark.skipif(process_context() is None, reason="this platform has no fork server")


def _report(conn):
    """In a child of the fork server: what it found in its memory at its start."""
    from ncld_core import threads

    warm = sys.modules.get("dashboard.serving.fork_warmup")
    # threadpoolctl's scan of the loaded libraries, which a cold process's first chunk makes
    conn.send({"warm": None if warm is None else warm.WARM, "libraries_scanned": threads._controller is not None})
    conn.close()


@needs_fork_server
def test_a_child_of_the_fork_server_starts_warm():
    ctx = process_context()
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_report, args=(child,), daemon=True)
    proc.start()
    child.close()
    try:
        assert parent.poll(120), "the child did not answer"
        found = parent.recv()
    finally:
        proc.join(timeout=30)
    assert found == {"warm": True, "libraries_scanned": True}


def test_the_warm_up_is_preloaded_last():
    """After the modules it warms: a module the fork server imports later would not be in the children warm."""
    assert PRELOAD[-1] == "dashboard.serving.fork_warmup"


def test_a_failed_warm_up_is_false_not_an_error(monkeypatch):
    import ncld_core.config
    from dashboard.serving import fork_warmup

    def refuse(*a, **k):
        raise ValueError("no run here")

    monkeypatch.setattr(ncld_core.config, "RunConfig", refuse)
    assert fork_warmup.warm() is False



def test_the_server_warm_up_leaves_the_default_stream_built(monkeypatch):
    """The first Run of the embedded default finds its stream built (dashboard.data.warm_up puts it in the stream
    cache): the run's start builds nothing."""
    import streamlit as st

    from dashboard import data
    from ncld_core.config import RunConfig, StreamSpec

    st.cache_data.clear()  # (no stream of an earlier test in this process)
    data.warm_up.clear()
    try:
        assert data.warm_up() is True

        def refused(self, dataset=None):
            raise AssertionError(f"a stream was built at the first Run: {self}")

        monkeypatch.setattr(StreamSpec, "build_stream", refused)
        stream = data.build_stream(RunConfig())
    finally:
        data.warm_up.clear()
    assert stream.n_labels == RunConfig().n_labels and len(stream.X) == 5000  # the default stream's instances
