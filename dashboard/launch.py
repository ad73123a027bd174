"""The dashboard server's entry point: ``streamlit`` with its connections' Nagle algorithm off.

``python -m dashboard.launch run dashboard/app.py [streamlit options]`` is ``python -m streamlit run ...``
(the same command line and options) after :func:`send_without_delay`.

Why: Streamlit's server (Starlette on uvicorn) binds its listening socket itself, as ``socket.socket(family)``,
whose protocol number is 0. asyncio turns Nagle's algorithm off (``TCP_NODELAY``) only on sockets whose
protocol is ``IPPROTO_TCP``, so every connection of the server kept it. A response written in two parts (its
headers, then its body: every code file a page fetches) then holds the body until the client acknowledges the
headers, and the client delays that acknowledgement (Linux's delayed ACK): on a connection the browser reuses,
each small file a page fetches waits for it, and the websocket's small messages the same way. ``python -m
benchmarks.classroom`` measures the page's answer (docs/deploy.md section 5).

:func:`send_without_delay` wraps ``connection_made`` of each HTTP protocol uvicorn registers
(``uvicorn.config.HTTP_PROTOCOLS``): every connection it accepts, and the websocket it may become (the same
socket), sends each write at once. With a Streamlit that serves without uvicorn nothing is changed.

>>> from types import SimpleNamespace
>>> calls = []
>>> sock = SimpleNamespace(setsockopt=lambda *args: calls.append(args))
>>> transport = SimpleNamespace(get_extra_info=lambda name: sock if name == "socket" else None)
>>> set_nodelay(transport) and calls == [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
True
>>> set_nodelay(SimpleNamespace(get_extra_info=lambda name: None))   # no socket (a pipe, a test transport)
False
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import socket

__all__ = ["send_without_delay", "set_nodelay", "http_protocol_classes", "main"]

#: Marks a wrapped ``connection_made`` (wrapping twice would set the option twice).
_WRAPPED = "_ncld_nodelay"


def set_nodelay(transport) -> bool:
    """Turn Nagle's algorithm off on ``transport``'s TCP socket; whether it was set (False: no TCP socket)."""
    sock = transport.get_extra_info("socket")
    if sock is None:
        return False
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except (OSError, AttributeError):  # a Unix socket (server.address "unix://..."): no Nagle to turn off
        return False
    return True


def http_protocol_classes() -> list:
    """The HTTP protocol classes uvicorn can serve with (those whose modules import here)."""
    try:
        from uvicorn.config import HTTP_PROTOCOLS
    except ImportError:
        return []
    classes = []
    for path in HTTP_PROTOCOLS.values():
        module, _, name = path.partition(":")
        with contextlib.suppress(ImportError, AttributeError):
            cls = getattr(importlib.import_module(module), name)
            if cls not in classes:
                classes.append(cls)
    return classes


def send_without_delay() -> list[str]:
    """Make every connection uvicorn accepts in this process send at once (module doc); the classes wrapped."""
    wrapped = []
    for cls in http_protocol_classes():
        original = cls.connection_made
        if getattr(original, _WRAPPED, False):
            continue

        @functools.wraps(original)
        def connection_made(self, transport, *args, _original=original, **kwargs):
            set_nodelay(transport)
            return _original(self, transport, *args, **kwargs)

        setattr(connection_made, _WRAPPED, True)
        cls.connection_made = connection_made
        wrapped.append(f"{cls.__module__}.{cls.__qualname__}")
    return wrapped


def main() -> None:
    """``python -m streamlit`` with this process's arguments, after :func:`send_without_delay`."""
    send_without_delay()
    from streamlit.web.cli import main as streamlit_main

    streamlit_main(prog_name="streamlit")  # as streamlit's own __main__: the server sees the same command line


if __name__ == "__main__":
    main()
