"""A run advanced one chunk per request, in a process of its own (the dashboard's Live run).

A page that draws chunks while they are computed wants the computation out of its own
interpreter: no GIL shared with the page, and Stop can end a chunk that takes a minute at
once, by killing the process (the chunk being computed is lost; every chunk already
received is kept). :class:`ChunkProcess` sends the runner and the stream to a new process,
which advances ``runner.iter_run(stream)`` once per :meth:`ChunkProcess.next` and answers
``(kind, value, seconds)`` as :func:`advance` does.

The process is started by a *fork server*: a small single-threaded process, started once,
forks each run's process. Forking the caller instead (a dashboard server with dozens of
threads) deadlocked it: OpenBLAS's at-fork handler stops the BLAS thread pool while another
thread's matrix product is running on it, and that product, and every later one in the
server, then waits forever. Ten visitors pressing Run at once hit it in about one test run
in two; ``tests/test_chunk_process.py`` reproduces it with plain threads.

>>> from ncld_core.config import RunConfig
>>> cfg = RunConfig(n_instances=60, chunk_size=20, n_features=3, n_labels=4, n_neighbors=3,
...                 models=["ELM-O"], references=False)
>>> with ChunkProcess(cfg.runner(), cfg.build_stream()) as proc:
...     kinds = [proc.next()[0] for _ in range(4)]
>>> kinds
['chunk', 'chunk', 'chunk', 'done']
"""

from __future__ import annotations

import os
import time

from .fork_server import end_with, process_context, start_fork_server
from .priority import check_niceness, lower_priority

__all__ = ["ChunkProcess", "advance", "process_context", "start_fork_server"]


def advance(gen) -> tuple:
    """``(kind, value, seconds)`` of advancing a run's generator once.

    ``("chunk", ChunkResult, seconds)``, ``("done", None, 0.0)`` at the end, or
    ``("error", message, 0.0)``: a ValueError's message as is, any other exception with its type.
    """
    t0 = time.perf_counter()
    try:
        return "chunk", next(gen), time.perf_counter() - t0
    except StopIteration:
        return "done", None, 0.0
    except Exception as exc:  # noqa: BLE001 - reported to the caller, never a traceback
        return "error", str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}", 0.0


def _serve(runner, stream, conn, niceness=0, caller=None):
    """The run's process: advance the generator once per ``"next"`` until it ends or the caller goes."""
    if caller is not None:
        end_with(caller)  # a server that crashed leaves no orphan run computing, even mid-chunk
    lower_priority(niceness)  # below the page's server and browsers: they answer visitors while runs compute
    gen = runner.iter_run(stream)
    try:
        while conn.recv() == "next":
            result = advance(gen)
            conn.send(result)
            if result[0] != "chunk":
                return
    except (EOFError, OSError):  # the caller's side is gone
        return


class ChunkProcess:
    """Advance ``runner.iter_run(stream)`` in a process of its own, one chunk per :meth:`next`.

    ``runner`` and ``stream`` are pickled to the process (the project's own objects, never a
    user's file); ``context`` is a multiprocessing context (default :func:`process_context`).
    :meth:`next` is called by one thread; :meth:`kill` may come from another (Stop). ``niceness`` (0-19) is
    added to the process's niceness, in a session (scheduling group) of its own at that niceness
    (:func:`dashboard.serving.priority.lower_priority`), so that the process computing gives way to other work of the
    machine (a dashboard server's pages, browsers); 0 leaves it as the caller's.
    """

    def __init__(self, runner, stream, *, context=None, niceness: int = 0):
        check_niceness(niceness)
        ctx = context if context is not None else process_context()
        if ctx is None:
            raise ValueError("context: this platform has no fork server; advance the generator in a thread")
        self._conn, child_conn = ctx.Pipe()
        self.process = ctx.Process(target=_serve, args=(runner, stream, child_conn, niceness, os.getpid()),
                                   name="ncld-run", daemon=True)
        try:
            self.process.start()
        finally:
            child_conn.close()

    def next(self) -> tuple:
        """The next ``(kind, value, seconds)`` (see :func:`advance`); an error when the process died."""
        try:
            self._conn.send("next")
            return self._conn.recv()
        except (EOFError, OSError):
            self.process.join(timeout=1)  # its exit code, when it has one
            return "error", f"the run's process ended unexpectedly (exit code {self.process.exitcode})", 0.0

    def is_alive(self) -> bool:
        return self.process.is_alive()

    def kill(self) -> None:
        """End the process at once: the chunk it is computing is lost."""
        if self.process.is_alive():
            self.process.kill()

    def close(self) -> None:
        self.kill()
        self.process.join(timeout=5)
        self._conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
