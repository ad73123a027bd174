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

import multiprocessing

__all__ = ["PRELOAD", "process_context", "start_fork_server"]

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
