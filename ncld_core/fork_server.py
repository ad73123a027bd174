"""The fork server: the processes of runs and upload parses are forked from a small process started once.

Forking the dashboard's server itself (dozens of threads) deadlocked it: OpenBLAS's at-fork handler stops
the BLAS thread pool while another thread's matrix product runs on it (``ncld_core.eval.chunk_process``
tells the story; ``tests/test_chunk_process.py`` reproduces it). A fork server is single-threaded, and
it imports :data:`PRELOAD` once, so each child starts without importing them.

>>> ctx = process_context()
>>> ctx is None or ctx.get_start_method() == "forkserver"
True
"""

from __future__ import annotations

import contextlib
import multiprocessing
import sys
import threading
import types

__all__ = ["PRELOAD", "process_context", "start_fork_server", "bare_main"]

#: Imported once by the fork server, so each child starts without importing them.
PRELOAD = ["ncld_core.eval.runner"]


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


_MAIN_LOCK = threading.Lock()


@contextlib.contextmanager
def bare_main():
    """Start processes inside this block without the parent's ``__main__`` script.

    A process started by the fork server (or spawned) first runs the parent's ``__main__`` file as
    ``__mp_main__`` when that module has a file and no import name. Under Streamlit, ``__main__`` is the page
    script being run: each run's process ran the whole dashboard page without a server, about 500 warning lines
    in the server's log per run, and the time of drawing a page before its first chunk. Our processes' targets
    live in ``ncld_core``: none needs the parent's script. Inside the block ``__main__`` is an empty module; it
    is put back unless a script run replaced it meanwhile (Streamlit sets it at each script run).
    """
    main = sys.modules.get("__main__")
    if main is None or getattr(main, "__spec__", None) is not None or not getattr(main, "__file__", None):
        yield
        return
    bare = types.ModuleType("__main__")
    with _MAIN_LOCK:
        sys.modules["__main__"] = bare
        try:
            yield
        finally:
            if sys.modules.get("__main__") is bare:
                sys.modules["__main__"] = main
