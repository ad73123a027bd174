"""A Live run without the page: start it, receive each chunk as soon as it is computed, stop it at any time.

What a LiveRun computes is what its configuration's ``runner()`` yields: a run's chunks (a
:class:`~ncld_core.config.RunConfig`), or a β × γ sweep's steps (a :class:`~ncld_core.eval.sweep.SweepJob`:
its grid points, or its chunks when every grid point advances through the stream together; the last step
carries the sweep's table). ``n_chunks`` is then the number of steps, ``chunks`` the steps received.

The runner's generator is advanced in a process of its own (``dashboard.serving.chunk_process``, started by
a fork server; where the platform has none, or ``NCLD_DASHBOARD_THREADS`` is set, in a worker thread; with
``NCLD_DASK_SCHEDULER`` set, on a worker of that Dask cluster: ``dashboard.serving.dask_run.DaskChunkRun``),
one chunk per request of a relay thread, which keeps each ChunkResult under the run's lock as soon as it
is complete; nothing else advances the generator. Whoever shows the run only waits for new chunks
(:meth:`LiveRun.wait`), so it can be interrupted at once, even in the middle of a chunk that takes a
minute: :meth:`LiveRun.stop` marks the run stopped and kills the process, every completed chunk is kept
and the chunk being computed is discarded (a worker thread instead finishes it and drops it). The relay
asks for no new chunk while nobody has waited on the run for :attr:`LiveRun.idle_s` seconds (another
page, a closed tab); waiting again resumes it, and a run left alone for :attr:`LiveRun.abandon_s` is
stopped.

No Streamlit here: the Live run page (``dashboard/views/run.py``) keeps one LiveRun per visitor in its
session state and draws what :meth:`LiveRun.wait` returns; ``tests/test_live_run.py`` drives it alone.

>>> from ncld_core.config import RunConfig
>>> cfg = RunConfig(n_instances=60, chunk_size=20, n_features=3, n_labels=4, n_neighbors=3,
...                 models=["ELM-O"], references=False)
>>> run = LiveRun(cfg)
>>> run.begin()
True
>>> while run.wait(len(run.chunks), timeout=1.0)[1] == "running":
...     pass
>>> run.status, len(run.chunks), run.n_chunks
('done', 3, 3)
"""

from __future__ import annotations

import json
import math
import os
import statistics
import threading
import time
import uuid
from collections.abc import Callable
from typing import Literal

from ncld_core.eval.runner import RunResult
from ncld_core.model.cost import extrapolate

from .chunk_process import ChunkProcess, advance, process_context
from .dask_run import DaskChunkRun, configured_client

__all__ = ["LiveRun", "Status", "duration_text", "same_records"]

#: Where a run stands: being built, computing chunks, or ended (all chunks, Stop / abandoned, failed).
Status = Literal["starting", "running", "done", "stopped", "error"]


def same_records(a, b) -> bool:
    """Whether two ChunkResults hold the same records (every row of :meth:`ChunkResult.rows`, not the seconds).

    Numbers are the same within a relative 1e-9: a run computed again gives its records again up to the order
    of BLAS's floating-point sums, which its thread count sets."""
    def rows(chunk):
        return json.loads(json.dumps([{k: v for k, v in row.items() if k != "seconds"} for row in chunk.rows()],
                                     sort_keys=True, default=repr))

    return _same(rows(a), rows(b))


def _same(x, y) -> bool:
    if isinstance(x, bool) or isinstance(y, bool) or not (isinstance(x, (int, float)) and isinstance(y, (int, float))):
        if isinstance(x, list) and isinstance(y, list):
            return len(x) == len(y) and all(_same(u, v) for u, v in zip(x, y))
        if isinstance(x, dict) and isinstance(y, dict):
            return x.keys() == y.keys() and all(_same(x[k], y[k]) for k in x)
        return x == y
    return (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)


def duration_text(seconds: float) -> str:
    """``"42 s"``, or in minutes from 90 s on."""
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


class LiveRun:
    """One run of ``cfg``, advanced chunk by chunk in the background.

    ``build_stream``: makes the run's stream (the page passes its cached one; default
    ``cfg.build_stream()``); ``use_process``: compute in a process of its own (True), a thread (False),
    or as the platform and ``NCLD_DASHBOARD_THREADS`` allow (None). ``idle_s``, ``abandon_s``: see the
    module's description. ``shown_from``: ``(run, k)``, another run whose first ``k`` chunks this one shows
    until it has computed its own (:meth:`show_from`: an intervention's run). ``beside``: also compute the models
    the run's one-glance summary needs (``RunConfig.beside_plan``: where the memory budget allows; each chunk's
    ``beside``, never in its records); ``beside_missing`` then names those it could not, with the reason.

    Fields read by whoever shows the run (written by the run under its lock; :meth:`snapshot` reads
    the chunks and the status together): ``status`` (:data:`Status`), ``error`` (the message when it
    failed), ``chunks`` (every ChunkResult received), ``compute_ms`` (each chunk's compute time),
    ``stream`` and, once it runs, ``n_chunks``, ``models`` (the variants and references in the records),
    ``change_points`` (``(position, kind)``), ``noise_changes`` (``(position, factor)``), ``stream_name``, ``stream_s`` (seconds to build the
    stream), ``mode`` ("process", "thread" or "dask"), ``paused`` (waiting to be shown again). The page's own measurements: ``update_ms`` (each redraw),
    ``first_plot_s`` (click to the first chunk drawn), kept by :meth:`note_drawn`. ``token`` names the
    run (the page's graphs show one run's figures only), ``compare_id`` its entry in the compare
    section, once it has one.
    """

    #: The worker pauses after its chunk when nobody has waited on the run for this long (seconds).
    IDLE_S = 5.0
    #: A paused run is stopped, and its process ended, after this long (seconds).
    ABANDON_S = 600.0

    def __init__(self, cfg, *, build_stream: Callable[[], object] | None = None, use_process: bool | None = None,
                 idle_s: float = IDLE_S, abandon_s: float = ABANDON_S, waiting: Callable[[], int] | None = None,
                 n_threads="auto", niceness: int = 0, shown_from: tuple | None = None, beside: bool = False):
        self.cfg = cfg
        self.beside = beside
        self.beside_missing: dict[str, str] = {}
        #: Added to the niceness of the run's process (``ChunkProcess``; the hub sets ``NCLD_RUN_NICENESS``).
        self.niceness = niceness
        #: BLAS threads of the run's chunks (``PrequentialRunner(n_threads=...)``; the hub sets it from the
        #: runs that share the server, ``ncld_core.threads.threads_for``).
        self.n_threads = n_threads
        #: The run's place in the server's queue (0: it may start; ``dashboard.serving.run_hub.RunHub``), or None.
        self.waiting = waiting
        self.token = uuid.uuid4().hex
        #: Whose graphs the page's panels hold (``dashboard.live_chart``): the run's ``token``, or for a run shown from
        #: another (:meth:`show_from`) that run's, so that its graphs are updated in place and never emptied.
        self.owner = self.token
        self.status: Status = "starting"
        self.error: str | None = None
        self.chunks: list = []
        self.compute_ms: list[float] = []
        self.update_ms: list[float] = []
        self.first_plot_s: float | None = None
        self.t_click = time.perf_counter()
        self.stream = None
        self.stream_name: str = cfg.dataset
        self.stream_s = 0.0
        self.chunk_size: int = cfg.chunk_size
        self.n_chunks = 0
        self.models: list[str] = []
        self.change_points: list[tuple[int, str]] = []
        self.noise_changes: list[tuple[int, float]] = []
        self.mode: str | None = None
        self.paused = False
        self.compare_id: int | None = None
        self.idle_s, self.abandon_s = idle_s, abandon_s
        self._build_stream = build_stream or cfg.build_stream
        if use_process is None:
            use_process = not os.environ.get("NCLD_DASHBOARD_THREADS")
        self._context = process_context() if use_process else None
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._begun = False
        self._seen = time.monotonic()
        self._t_chunk = time.perf_counter()
        self._proc: ChunkProcess | None = None
        self._worker: threading.Thread | None = None
        self._result: RunResult | None = None
        #: Chunks shown from another run until this run has computed them (:meth:`show_from`), and how many of them it
        #: has computed so far.
        self.shown_before = 0
        self.recomputed = 0
        #: A chunk this run computed differed from the one shown for it (its records are then this run's own).
        self.prefix_differed = False
        if shown_from is not None:
            self.show_from(*shown_from)

    def show_from(self, run: "LiveRun", k: int) -> None:
        """Show the first ``k`` chunks of ``run`` until this run has computed its own: a run whose settings are
        ``run``'s with a change from chunk ``k`` on (an intervention, ``ncld_core.stream.schedule.append_change``),
        whose records before it are ``run``'s. The page then goes on from chunk ``k`` instead of chunk 0 while this
        run recomputes them from the start (a run stays a pure function of its settings). Each chunk computed
        replaces the one shown (the same records: only its seconds differ); one that differs, which an
        append_change never gives, ends the showing there: the page then draws this run's own.
        Until its stream is built, the run shows ``run``'s facts (its rates and labels are the same); its graphs are
        ``run``'s (:attr:`owner`), updated in place."""
        chunks, _ = run.snapshot()
        shown = list(chunks[:k])
        self.owner = run.owner
        self.chunks, self.compute_ms = shown, list(run.compute_ms[:len(shown)])
        self.shown_before, self.recomputed = len(shown), 0
        self.stream, self.stream_name, self.chunk_size = run.stream, run.stream_name, run.chunk_size
        self.n_chunks, self.models = run.n_chunks, list(run.models)
        self.beside_missing = dict(run.beside_missing)  # (the chunks shown carry their one-glance models)
        try:
            schedule = self.cfg.drift_schedule
        except ValueError:
            schedule = None
        if schedule is not None and not schedule.is_paper:  # the new change drawn at once
            self.change_points = [(p.position, p.kind) for p in schedule]
            self.noise_changes = [(c.position, c.factor) for c in schedule.noise_changes]
        else:
            self.change_points, self.noise_changes = list(run.change_points), list(run.noise_changes)

    # ----------------------------------------------------------------------- start and stop
    @property
    def active(self) -> bool:
        """Starting or running (Stop applies)."""
        return self.status in ("starting", "running")

    def begin(self) -> bool:
        """Build the stream and the runner, start the run's process (or worker thread) and its relay.

        One caller begins the run: False when another has begun it (or the run no longer starts). A
        failure gives the status "error" and its message, never an exception; the lock is not held
        while the stream is built or the process started, so a Stop meanwhile returns at once (the
        process is then closed). Interrupted by anything else (a rerun of the page raised through it),
        the run is left to be begun again.
        """
        if self.status != "starting" or self._begun:  # (read again under the lock) begun, or ended: the hub not asked
            return False
        # the line is asked outside this run's lock: the hub holds its own lock while it stops a run (a reap)
        if self.queue_position():  # waiting for a free slot on the server: the caller asks again
            return False
        with self._lock:
            if self.status != "starting" or self._begun:
                return False
            self._begun = True
        try:
            self._start()
        finally:
            with self._lock:
                if self.status == "starting":  # interrupted while building: the next caller begins it again
                    self._begun = False
        return True

    def _start(self) -> None:
        cfg = self.cfg
        t0 = time.perf_counter()
        proc = None
        try:
            stream = self._build_stream()
            plan = cfg.beside_plan(stream) if self.beside and hasattr(cfg, "beside_plan") else None  # (not a sweep)
            runner = cfg.runner() if plan is None else cfg.runner(beside=plan.models)
            runner.n_threads = self.n_threads
            client = configured_client()  # NCLD_DASK_SCHEDULER set: the chunks are computed on that Dask cluster
            if client is not None:
                proc = DaskChunkRun(runner, stream, client=client)
                worker = threading.Thread(target=self._relay, args=(proc,), name="ncld-relay", daemon=True)
            elif self._context is not None:
                # A process of its own: no GIL shared with the page, and Stop can end a chunk at once (kill).
                proc = ChunkProcess(runner, stream, context=self._context, niceness=self.niceness)
                worker = threading.Thread(target=self._relay, args=(proc,), name="ncld-relay", daemon=True)
            else:  # a thread computes (Stop then waits for no chunk, but the chunk is finished in the background)
                worker = threading.Thread(target=self._work, args=(runner.iter_run(stream),), name="ncld-run",
                                          daemon=True)
        except Exception as exc:  # noqa: BLE001 - bad input is a status and a message, never a traceback
            with self._lock:
                if self.status == "starting":
                    self.status = "error"
                    self.error = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
                    if self.shown_before:  # chunks of another run: never kept as this one's
                        self.chunks, self.compute_ms, self.stream = [], [], None
                        self.shown_before = self.recomputed = 0
                self._cond.notify_all()
            return
        with self._lock:
            if self.status != "starting":  # stopped while the stream was built
                if proc is not None:
                    proc.close()
                return
            self.stream, self.stream_name = stream, stream.name
            self.n_chunks = runner.n_steps(stream)  # a run's chunks, or a sweep's steps
            self.change_points = [(cp.position, cp.kind) for cp in stream.change_points]
            self.noise_changes = [(c.position, c.factor) for c in getattr(stream, "noise_changes", ())]
            self.models = runner.model_names
            self.beside_missing = {} if plan is None else dict(plan.missing)
            self.stream_s = time.perf_counter() - t0
            self._seen = time.monotonic()
            self._t_chunk = time.perf_counter()
            self._proc, self._worker = proc, worker
            self.mode = "thread" if proc is None else "dask" if isinstance(proc, DaskChunkRun) else "process"
            self.status = "running"
            self._cond.notify_all()
        worker.start()

    def queue_position(self) -> int:
        """1 for first in line, 2 for second, ...; 0 when the run may start (or has no queue)."""
        return 0 if self.waiting is None else int(self.waiting())

    @classmethod
    def frozen(cls, run: "LiveRun", status: Status | None = None) -> "LiveRun":
        """A copy of ``run``'s chunks and facts that computes nothing (a replay, or what a follower keeps when it
        stops following); ``status``: its status (default: ``run``'s)."""
        chunks, run_status = run.snapshot()
        copy = cls(run.cfg, build_stream=lambda: run.stream, use_process=False)
        for name in ("stream", "stream_name", "stream_s", "chunk_size", "n_chunks", "models", "change_points",
                     "noise_changes", "error", "beside", "beside_missing"):
            setattr(copy, name, getattr(run, name))
        copy.chunks, copy.compute_ms = chunks, list(run.compute_ms[:len(chunks)])
        copy.status = status or run_status
        copy.mode, copy._begun = "replay", True
        return copy

    def stop(self) -> None:
        """Mark the run stopped (if it still runs) and end the chunk being computed; never waits for it."""
        with self._lock:
            if self.active:
                self.status = "stopped"
            self._cond.notify_all()
            proc = self._proc
        if proc is not None:
            proc.kill()  # its chunk is discarded; the relay thread then closes the pipe

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the worker (or relay) thread to end; True when it has (or never started)."""
        worker = self._worker
        if worker is not None:
            worker.join(timeout)
            return not worker.is_alive()
        return True

    @property
    def process_alive(self) -> bool:
        """Whether the run's process still runs (False in thread mode)."""
        return self._proc is not None and self._proc.is_alive()

    # ----------------------------------------------------------------------- the worker
    def _wait_shown(self) -> bool:
        """Under the lock: wait while nobody shows the run; False when the run no longer runs."""
        while self.status == "running" and time.monotonic() - self._seen > self.idle_s:
            if time.monotonic() - self._seen > self.abandon_s:
                self.status = "stopped"
                break
            self.paused = True
            self._cond.wait(min(1.0, self.idle_s))
        self.paused = False
        return self.status == "running"

    def _store(self, kind, value, seconds) -> bool:
        """Under the lock: keep what the worker computed, unless the run was stopped meanwhile (then it
        is discarded). True while the run goes on."""
        if self.status != "running":
            return False
        if kind == "chunk" and self.recomputed < self.shown_before:  # a chunk shown from another run, computed
            i = self.recomputed
            self.recomputed += 1
            if same_records(self.chunks[i], value):
                self.chunks[i], self.compute_ms[i] = value, 1000 * seconds
            else:  # never from append_change: this run's own records from here
                del self.chunks[i:], self.compute_ms[i:]
                self.shown_before, self.prefix_differed = i, True
                self.chunks.append(value)
                self.compute_ms.append(1000 * seconds)
        elif kind == "chunk":
            self.chunks.append(value)
            self.compute_ms.append(1000 * seconds)
        elif kind == "done":
            self.status = "done"
        else:
            self.status, self.error = "error", value
        self._cond.notify_all()
        return kind == "chunk"

    def _drive(self, compute) -> None:
        """The worker's loop: while the run is shown, ``compute()`` one chunk (``(kind, value, seconds)``, see
        :func:`~dashboard.serving.chunk_process.advance`) and store it; a result arriving after a Stop is discarded."""
        try:
            while True:
                with self._cond:
                    if not self._wait_shown():
                        return
                    self._t_chunk = time.perf_counter()
                result = compute()
                with self._cond:
                    if not self._store(*result):
                        return
        finally:
            with self._cond:
                self._cond.notify_all()

    def _work(self, gen) -> None:
        """Thread mode: this thread alone advances the generator."""
        self._drive(lambda: advance(gen))

    def _relay(self, proc: ChunkProcess | DaskChunkRun) -> None:
        """Process mode: ask the process for each chunk and store it, unless the run was stopped meanwhile
        (then the process has been killed, the chunk it was computing is lost, and nothing is stored)."""
        try:
            self._drive(proc.next)
        finally:
            proc.close()

    # ----------------------------------------------------------------------- whoever shows the run
    def wait(self, shown: int, timeout: float) -> tuple[list, str]:
        """Mark the run as shown and wait, at most ``timeout`` seconds, for more than ``shown`` chunks or
        the run's end; ``(chunks, status)`` as they then are."""
        with self._cond:
            self._seen = time.monotonic()
            self._cond.notify_all()  # wakes a worker paused while nobody showed the run
            self._cond.wait_for(lambda: len(self.chunks) != shown or self.status != "running", timeout=timeout)
            return list(self.chunks), self.status

    def snapshot(self) -> tuple[list, str]:
        """``(chunks, status)`` read together."""
        with self._lock:
            return list(self.chunks), self.status

    def computing_s(self) -> float:
        """How long the chunk being computed has taken so far (seconds)."""
        return time.perf_counter() - self._t_chunk

    def note_drawn(self, seconds: float) -> None:
        """The page drew the chunks received: keep the redraw's time and the time from the click to the first."""
        self.update_ms.append(1000 * seconds)
        if self.first_plot_s is None:
            self.first_plot_s = time.perf_counter() - self.t_click

    def timings(self) -> dict:
        """The run's measured times (the page keeps them for the browser tests)."""
        return {"first_plot_s": self.first_plot_s, "stream_s": self.stream_s, "update_ms": list(self.update_ms),
                "compute_ms": list(self.compute_ms)}

    def status_text(self, k: int | None = None) -> str:
        """The status line for ``k`` chunks drawn (default: received): running with the last update and
        compute times and the time left, or ended with the medians."""
        k = len(self.chunks) if k is None else k
        n = self.n_chunks
        upd, comp = self.update_ms, self.compute_ms
        # a time not measured (no redraw yet: a replay before it is drawn, a run that ended before its first
        # redraw) is left out rather than shown as 0 or nan
        if self.status == "starting" and k:  # a run shown from another's chunks (show_from) while it starts
            return f"starting · chunk {k}/{n} · building the stream with the change"
        if self.status == "running" and self.recomputed < self.shown_before:
            return (f"running · chunk {k}/{n} · the change applies from chunk {self.shown_before}: recomputing the "
                    f"chunks before it ({self.recomputed} of {self.shown_before} done)")
        if self.status == "running":
            left = (f" · about {duration_text(extrapolate([c / 1000 for c in comp[:k]], n))} left"
                    if 0 < k < n else "")
            times = (f" · update {upd[-1]:.0f} ms" if upd else "") + (f" · compute {comp[-1]:.0f} ms" if comp else "")
            return f"running · chunk {k}/{n}{times}{left}"
        first = self.first_plot_s
        first_txt = (f" · first plot after {first:.2f} s (stream ready in {self.stream_s:.2f} s)"
                     if first is not None else "")
        word = {"done": "done", "stopped": "stopped", "error": "failed"}.get(self.status, self.status)
        times = ((f" · median update {statistics.median(upd):.0f} ms" if upd else "")
                 + (f" · median compute {statistics.median(comp):.0f} ms" if comp else ""))
        return f"{word} · chunk {k}/{n}{times}{first_txt}"

    # ----------------------------------------------------------------------- results
    def result(self) -> RunResult:
        """The chunks received as a RunResult (its status says when the run stopped early)."""
        chunks = list(self.chunks)
        if self._result is None or len(self._result.chunks) != len(chunks):
            self._result = RunResult(chunks, self.stream, self.chunk_size, config=self.cfg.to_dict(),
                                     n_chunks=self.n_chunks)
        return self._result

    def record(self) -> dict:
        """The run as the compare section keeps it (``dashboard.compare.remember``): its settings and records,
        never the stream's data."""
        chunks, status = self.snapshot()
        return {"cfg": self.cfg, "chunks": chunks, "models": list(self.models),
                "change_points": list(self.change_points), "noise_changes": list(self.noise_changes),
                "chunk_size": self.chunk_size, "n_chunks": self.n_chunks,
                "stream_name": self.stream_name, "status": status, "compare_id": self.compare_id}
