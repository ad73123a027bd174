"""The fork server: the processes of runs and upload parses are forked from a small process started once.

Forking the dashboard's server itself (dozens of threads) deadlocked it: OpenBLAS's at-fork handler stops
the BLAS thread pool while another thread's matrix product runs on it (``dashboard.serving.chunk_process``
tells the story; ``tests/test_chunk_process.py`` reproduces it). A fork server is single-threaded, and
it imports :data:`PRELOAD` once (and computes a tiny run), so each child starts without importing them, warm.

A child of the fork server is not ended by the end of the process that asked for it: the fork server outlives
that process while any child lives (each child holds the pipe whose end would end it), so the kernel's parent-death
signal never comes. A child that calls :func:`end_with` with the asking process's pid ends when that process does,
even in the middle of a chunk: a dashboard server that crashed or was killed leaves no orphan run computing.

>>> ctx = process_context()
>>> ctx is None or ctx.get_start_method() == "forkserver"
True
"""

from __future__ import annotations

import multiprocessing
import os
import select
import threading

__all__ = ["PRELOAD", "process_context", "start_fork_server", "end_with"]

#: Imported once by the fork server, so each child starts without importing them; the last computes a tiny run
#: there, so each child starts with what a process sets up once done (:mod:`dashboard.serving.fork_warmup`).
PRELOAD = ["ncld_core.eval.runner", "dashboard.serving.chunk_process", "dashboard.serving.bounded_parse",
           "dashboard.serving.fork_warmup"]

#: Seconds between two looks at the asking process where the platform cannot wait on it (no ``pidfd_open``).
POLL_S = 1.0


def process_context():
    """The fork server's multiprocessing context, or None where the platform has none (Windows)."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return None
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx


def start_fork_server() -> bool:
    """Start the fork server now (it imports :data:`PRELOAD`, about a second), not at the first run;
    False where the platform has none."""
    if process_context() is None:
        return False
    from multiprocessing import forkserver

    forkserver.ensure_running()
    return True


def end_with(pid: int) -> threading.Thread:
    """End the calling process (``os._exit(1)``, one line on stderr first) once process ``pid`` has ended: a daemon
    thread waits on it.

    Linux waits on a pid file descriptor (``os.pidfd_open``: woken when the process ends, even while its parent
    has not yet reaped it; no polling). Elsewhere, or if that wait fails, the thread looks every :data:`POLL_S`
    seconds whether ``pid`` still exists: a process ended but not yet reaped still does, so there the child ends
    once the ended process is reaped. The thread holds no lock while it waits, so the process's own computing is
    not slowed. Returns the thread.
    """
    if pid == os.getpid():
        raise ValueError("pid: a process cannot wait for its own end")

    def end():
        os.write(2, f"ncld: process {pid} ended; process {os.getpid()} ends with it\n".encode())
        os._exit(1)

    def wait_pidfd() -> bool:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:  # already gone
            return True
        except (AttributeError, OSError):  # no pidfd here (not Linux, an old kernel)
            return False
        try:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            while not poller.poll():  # (poll with no timeout returns only with an event)
                pass
            return True
        except (OSError, ValueError):  # the wait itself failed: look by polling instead
            return False

    def watch():
        if wait_pidfd():
            end()
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                end()
            except PermissionError:  # exists, someone else's (not the asking process: harmless)
                pass
            threading.Event().wait(POLL_S)

    thread = threading.Thread(target=watch, name=f"end-with-{pid}", daemon=True)
    thread.start()
    return thread
