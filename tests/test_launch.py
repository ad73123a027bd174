"""The server's entry point turns Nagle's algorithm off on the connections uvicorn accepts (dashboard/launch.py)."""

from __future__ import annotations

import asyncio
import http.client
import socket
import threading

import pytest

from dashboard import launch
from dashboard.serve import ROOT

uvicorn = pytest.importorskip("uvicorn")


async def _ok(scope, receive, send):
    """A one-route ASGI app: 200, a short body."""
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"ok"})


def _nodelay_of_open_connections(*, wrapped: bool) -> list[int]:
    """Serve ``_ok`` with uvicorn on a listening socket bound as Streamlit binds it (protocol 0), keep a request's
    connection open, and read ``TCP_NODELAY`` of the server's side of each open connection."""
    listener = socket.socket(family=socket.AF_INET)  # as streamlit's starlette server binds it: proto 0
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(_ok, log_level="warning", lifespan="off"))
    originals = {cls: cls.__dict__.get("connection_made") for cls in launch.http_protocol_classes()} if wrapped else {}
    try:
        if wrapped:
            launch.send_without_delay()
        thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[listener])), daemon=True)
        thread.start()
        for _ in range(200):
            if server.started:
                break
            threading.Event().wait(0.05)
        assert server.started, "uvicorn did not start"
        client = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        client.request("GET", "/")
        assert client.getresponse().read() == b"ok"
        values = [conn.transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
                  for conn in list(server.server_state.connections)]
        client.close()
        return values
    finally:
        server.should_exit = True
        for cls, original in originals.items():  # leave the classes as other tests found them
            if original is not None:
                cls.connection_made = original
        thread.join(timeout=10)
        listener.close()


def test_uvicorn_leaves_nagle_on_for_a_socket_bound_as_streamlit_binds_it():
    # what the launcher is for: without it the server's side of a connection keeps Nagle's algorithm
    assert _nodelay_of_open_connections(wrapped=False) == [0]


def test_the_launcher_turns_nagle_off_on_every_connection_uvicorn_accepts():
    assert _nodelay_of_open_connections(wrapped=True) == [1]


def test_wrapping_twice_wraps_once():
    classes = launch.http_protocol_classes()
    originals = {cls: cls.__dict__.get("connection_made") for cls in classes}
    try:
        first, second = launch.send_without_delay(), launch.send_without_delay()
        assert first and second == []
        assert "uvicorn.protocols.http.h11_impl.H11Protocol" in first  # the one uvicorn picks without httptools
    finally:
        for cls, original in originals.items():
            if original is not None:
                cls.connection_made = original


def test_the_servers_the_project_starts_go_through_the_launcher():
    # make demo and dashboard.serve.serve (tests, benchmarks) start the server by the launcher, not `-m streamlit`
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    serve_source = (ROOT / "dashboard" / "serve.py").read_text(encoding="utf-8")
    assert "-m dashboard.launch run dashboard/app.py" in makefile
    assert '"-m", "dashboard.launch", "run"' in serve_source
    assert "-m streamlit run" not in makefile
