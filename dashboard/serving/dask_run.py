"""The dashboard's runs and sweeps on a Dask cluster: the one place that reads the cluster's setting.

A classroom outgrows one machine: with ``NCLD_DASK_SCHEDULER=tcp://host:8786`` (:data:`SCHEDULER_ENV`, read by
:func:`scheduler_address` only) the dashboard's Live runs and β × γ sweeps are computed on that cluster's
workers, the page unchanged. Without it nothing here is used and no Dask is imported (a setting without dask
installed is a clear error: :func:`ncld_core.eval.dask_backend.require_distributed`).

- :class:`DaskChunkRun` is :class:`~dashboard.serving.chunk_process.ChunkProcess` on a cluster: a Dask *actor*
  (:class:`RunActor`) holds the runner and the stream on a worker and advances ``runner.iter_run(stream)``
  once per :meth:`DaskChunkRun.next`, answering ``(kind, value, seconds)`` as
  :func:`~dashboard.serving.chunk_process.advance` does. A worker runs its actors' calls one at a time (Dask gives
  actors one thread per worker), so give the cluster as many single-threaded workers as it has cores.
- Stop (:meth:`DaskChunkRun.kill`) returns at once: the caller's wait ends (nothing is delivered after it; the run's
  slot in the dashboard's queue is free), the worker is told to end the chunk under way, then the actor is released.
  On a worker that may start processes the actor computes in one of its own, which the Stop kills: the chunk ends at
  once. On a daemonic worker (the default of ``dask worker``'s nanny) it computes in the worker's actor thread, which
  nothing can interrupt: the worker finishes that one chunk (no other), and the next run's calls on that worker wait
  for it. ``docs/deploy.md`` (section 2, "Stop") says which workers are which; ``tests/test_dask_backend.py`` checks
  and measures both.
- :func:`shared_client` is the one client per address a server process keeps; the sweeps go through
  :func:`ncld_core.eval.dask_backend.as_finished` on it.

>>> import os
>>> os.environ.pop(SCHEDULER_ENV, None) and None
>>> scheduler_address() is None, configured_client() is None
(True, True)
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import threading

from ncld_core.eval.dask_backend import SCHEDULER_ENV, require_distributed

from .chunk_process import ChunkProcess, advance, process_context

__all__ = ["SCHEDULER_ENV", "scheduler_address", "shared_client", "configured_client", "RunActor", "DaskChunkRun"]

#: How long opening a client waits for the scheduler (seconds).
CONNECT_TIMEOUT_S = 10.0

#: How often a waiting :meth:`DaskChunkRun.next` looks whether it was killed (seconds).
POLL_S = 0.1

#: How long a Stop waits for the worker to end the chunk under way before it releases the actor anyway (seconds).
STOP_TIMEOUT_S = 5.0

_clients: dict = {}
_clients_lock = threading.Lock()


def scheduler_address() -> str | None:
    """The configured scheduler address (:data:`SCHEDULER_ENV`), or None: run locally."""
    address = os.environ.get(SCHEDULER_ENV, "").strip()
    return address or None


def shared_client(address: str):
    """This process's one ``distributed.Client`` on ``address`` (opened at the first call, then reused by
    every run and sweep; a closed one is reopened). ValueError naming the setting when nobody answers."""
    distributed = require_distributed()
    with _clients_lock:
        client = _clients.get(address)
        if client is not None and client.status in ("running", "connecting", "newly-created"):
            return client
        try:
            client = distributed.Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
        except OSError as exc:
            raise ValueError(f"{SCHEDULER_ENV}: no Dask scheduler answers at {address!r} ({exc})") from None
        _clients[address] = client
        return client


def configured_client():
    """The shared client on the configured scheduler, or None when :data:`SCHEDULER_ENV` is unset."""
    address = scheduler_address()
    return None if address is None else shared_client(address)


class RunActor:
    """Lives on a Dask worker: the run's generator, advanced once per :meth:`next_chunk`.

    Where the worker may start processes (a fork server, and a worker process that is not daemonic: ``dask worker
    --no-nanny``, or its nanny told ``DASK_DISTRIBUTED__WORKER__DAEMON=False``), the generator is advanced in a
    process of the actor's own (:class:`~dashboard.serving.chunk_process.ChunkProcess`), so :meth:`stop` ends a
    chunk at once, as the local Stop does. Elsewhere it is advanced in the worker's actor thread, and a chunk
    under way runs to its end (:attr:`interruptible` False)."""

    def __init__(self, runner, stream):
        self._proc = None
        self._gen = None
        if process_context() is not None and not multiprocessing.current_process().daemon:
            with contextlib.suppress(OSError):  # (no process to be had: computed in the actor thread)
                self._proc = ChunkProcess(runner, stream)  # (no niceness: the workers' own priority)
        if self._proc is None:  # a daemonic process may start none (multiprocessing refuses)
            self._gen = runner.iter_run(stream)

    @property
    def interruptible(self) -> bool:
        """Whether :meth:`stop` ends the chunk under way (it is computed in a process of the actor's own)."""
        return self._proc is not None

    @property
    def pid(self) -> int | None:
        """The id of the process computing the chunks (None: the worker's actor thread computes them)."""
        return None if self._proc is None else self._proc.process.pid

    def next_chunk(self) -> tuple:
        """``(kind, value, seconds)`` of the next chunk (:func:`~dashboard.serving.chunk_process.advance`)."""
        if self._proc is not None:
            return self._proc.next()
        return advance(self._gen)

    async def stop(self) -> bool:
        """End the chunk under way at once (its process killed; what it computed is lost): a coroutine, so the worker
        runs it on its event loop at once, not after the chunk in its actor thread. True when a chunk could be
        ended."""
        if self._proc is None:
            return False
        self._proc.kill()
        return True


class DaskChunkRun:
    """Advance ``runner.iter_run(stream)`` on a Dask worker, one chunk per :meth:`next`: ChunkProcess's interface.

    ``client``: a ``distributed.Client`` (default :func:`configured_client`). The runner and stream are sent
    to the worker by Dask's serialisation (the project's own objects, never a user's file). :meth:`next` is
    called by one thread; :meth:`kill` may come from another (Stop).

    Stop: :meth:`kill` returns at once and no chunk is delivered after it. The chunk under way on the worker is
    ended at once where the actor computes in a process of its own (:attr:`RunActor.interruptible`: a worker that
    may start processes); elsewhere the worker finishes it (at most one chunk), and only then is the actor released
    and the worker's actor thread free for the next run (the bound: ``docs/deploy.md``, section 2).
    """

    def __init__(self, runner, stream, *, client=None):
        client = client if client is not None else configured_client()
        if client is None:
            raise ValueError(f"client: give a distributed.Client or set {SCHEDULER_ENV}")
        self._client = client
        self._killed = threading.Event()
        self._ended = False
        self._future = client.submit(RunActor, runner, stream, actor=True, pure=False)
        self._actor = None

    def _wait(self, future):
        """``future.result()``, unless :meth:`kill` comes first (then None).

        Polls ``done()`` rather than ``result(timeout=...)``: distributed's ``sync`` can end a timed-out wait
        with its own ``UnboundLocalError`` (seen once in 4 tests of a full test run, distributed 2026.8). The
        poll starts at 1 ms and doubles up to ``POLL_S``, so a chunk's answer is seen within about its own
        time's worth of delay (never more than ``POLL_S``), and Stop within ``POLL_S``."""
        pause = 0.001
        while not self._killed.is_set():
            if future.done():
                return future.result()
            self._killed.wait(pause)
            pause = min(2 * pause, POLL_S)
        return None

    def next(self) -> tuple:
        """The next ``(kind, value, seconds)``; an error when the run was killed or its worker failed."""
        if self._killed.is_set():
            return "error", "the run was stopped", 0.0
        try:
            # The actor's handle finds its client as the current one (the server's client is nobody's default).
            with self._client.as_current():
                answer = self._next()
        except Exception as exc:  # noqa: BLE001 - a lost worker or scheduler is a message, never a traceback
            self._ended = True
            return "error", f"the run's Dask worker failed ({type(exc).__name__}: {exc})", 0.0
        if answer is None:
            return "error", "the run was stopped", 0.0
        if answer[0] != "chunk":
            self._ended = True
        return answer

    def _next(self):
        """The actor's next answer, once it is placed on a worker; None when killed meanwhile."""
        if self._actor is None:
            self._actor = self._wait(self._future)
            if self._actor is None:
                return None
        return self._wait(self._actor.next_chunk())

    def is_alive(self) -> bool:
        """Whether the run can still give chunks (not killed, not ended)."""
        return not (self._killed.is_set() or self._ended)

    def kill(self) -> None:
        """Stop, returning at once: a waiting :meth:`next` returns, and in a thread of its own the worker is told to end
        the chunk under way (:meth:`RunActor.stop`), then the actor is released (its chunk is lost)."""
        if self._killed.is_set():
            return
        self._killed.set()
        threading.Thread(target=self._release, args=(self._actor,), name="ncld-dask-stop", daemon=True).start()

    def _release(self, actor) -> None:
        """End the actor's chunk (when it is placed), then release the actor: in that order, so the release cannot
        reach the worker first and leave the chunk running to its end with nobody to stop it."""
        if actor is not None:
            with contextlib.suppress(Exception):  # the worker or the client may be gone: the release still comes
                actor.stop().result(timeout=STOP_TIMEOUT_S)
        with contextlib.suppress(Exception):  # the client may already be closed
            self._client.cancel([self._future])

    def chunk_pid(self) -> int | None:
        """The id of the process computing the run's chunks on its worker (None: its actor thread computes them, or
        the actor is not placed yet)."""
        actor = self._actor
        if actor is None:
            return None
        with self._client.as_current():
            return actor.pid

    def close(self) -> None:
        self.kill()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
