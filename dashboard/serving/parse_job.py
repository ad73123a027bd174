"""An upload's parse as a job of the run hub: queued with the runs and sweeps, in a process of its own, stoppable.

A :class:`ParseJob` is what :meth:`dashboard.serving.run_hub.RunHub.parse` queues for an uploaded file: it waits
for a slot of the server's (the one limit of runs, sweeps and parses, ``NCLD_MAX_CONCURRENT_RUNS``), then parses
in a child process under the upload limits (:func:`dashboard.serving.bounded_parse.parse_bounded`: its memory
capped, its time bounded, its temporary folder removed at the end) and checks the parsed data (``check``, the
dashboard's ``ncld_core.data.check_features``). :meth:`ParseJob.stop` (a Cancel, or the hub giving up a gone
session's job) ends it at once: a waiting job never starts, a running one has its child killed within
:data:`~dashboard.serving.bounded_parse.POLL_S` and its folder removed.

A job begins (:meth:`ParseJob.begin`) once the hub says it may (its place in line 0: ``waiting``); the parse then
runs in a thread of the job's, so neither the page nor the hub's watchdog waits for it. Whoever shows the job
waits on it (:meth:`ParseJob.wait`) or reads :attr:`ParseJob.status`; the parsed dataset is
:attr:`ParseJob.dataset`, a failure's message :attr:`ParseJob.error` (a bad file's ValueError, as is). No
Streamlit here (``tests/test_run_hub.py`` drives it alone and through the hub).

>>> arff = b"@relation 'r: -C 1'\\n@attribute y {0,1}\\n@attribute x numeric\\n@data\\n1,2.5\\n0,1\\n"
>>> job = ParseJob(arff, None, "r")
>>> job.begin(), job.wait(timeout=60)
(True, 'done')
>>> job.dataset.n_instances, job.dataset.source
(2, 'upload')
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Literal

from ncld_core.data.arff import load_arff_bytes

from .bounded_parse import ParseCancelled, parse_bounded
from .fork_server import process_context
from .uploads import upload_digest

__all__ = ["ParseJob", "ParseStatus"]

#: Where a parse stands: waiting or being begun, parsing, or ended (parsed, cancelled, failed).
ParseStatus = Literal["starting", "running", "done", "stopped", "error"]


class ParseJob:
    """The parse of one upload (``arff_bytes``, ``xml_bytes``, shown as ``name``) as a job (the module's description).

    ``check(dataset)``: raises a ValueError for data no run can use (run in the job's thread after the parse);
    ``waiting()``: the job's place in the server's queue (0: it may start; the hub's), or None for no queue;
    ``use_process``: parse in a child process (True: :func:`~dashboard.serving.bounded_parse.parse_bounded`), in
    the job's thread unbounded (False), or as the platform and ``NCLD_DASHBOARD_THREADS`` allow (None);
    ``memory_bytes``, ``timeout_s``: the parse's limits (default the server's, ``dashboard.serving.limits``);
    ``digest``: the files' digest when the caller has it (else computed).

    Fields: ``name``, ``digest`` (of the files, :func:`dashboard.serving.uploads.upload_digest`: the upload's
    identity with its name), ``status`` (:data:`ParseStatus`), ``dataset`` (once done), ``error`` (once failed),
    ``mode`` ("process" or "thread", once begun), ``started_at`` (``time.monotonic()`` when it began).
    """

    def __init__(self, arff_bytes, xml_bytes, name: str, *, check: Callable[[object], None] | None = None,
                 waiting: Callable[[], int] | None = None, use_process: bool | None = None,
                 memory_bytes: int | None = None, timeout_s: float | None = None, digest: str | None = None):
        self.name = name
        self.digest = upload_digest(arff_bytes, xml_bytes) if digest is None else digest
        self.check = check
        self.waiting = waiting
        self.memory_bytes, self.timeout_s = memory_bytes, timeout_s
        self.status: ParseStatus = "starting"
        self.dataset = None
        self.error: str | None = None
        self.mode: str | None = None
        self.started_at: float | None = None
        if use_process is None:
            use_process = not os.environ.get("NCLD_DASHBOARD_THREADS")
        self._use_process = use_process and process_context() is not None
        self._files = (arff_bytes, xml_bytes)  # dropped once parsed: the job keeps no copy of the upload
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._process = None
        self._worker: threading.Thread | None = None

    @property
    def active(self) -> bool:
        """Waiting or parsing (Stop applies)."""
        return self.status in ("starting", "running")

    def queue_position(self) -> int:
        """1 for first in line, 2 for second, ...; 0 when the job may start (or has no queue)."""
        return 0 if self.waiting is None else int(self.waiting())

    def begin(self) -> bool:
        """Start the parse in a thread of its own, if the job is first to ask and its slot is free; returns at once.
        False when queued (ask again), begun by another caller, or stopped."""
        if self.status != "starting":  # (read again under the lock) begun or ended: the hub not asked
            return False
        # the line is asked outside this job's lock: the hub holds its own lock while it stops a job (a reap)
        if self.queue_position():
            return False
        with self._lock:
            if self.status != "starting":
                return False
            self.status, self.started_at = "running", time.monotonic()
            self.mode = "process" if self._use_process else "thread"
            self._worker = threading.Thread(target=self._work, name="ncld-parse", daemon=True)
        self._worker.start()
        return True

    def _started(self, process) -> None:
        with self._lock:
            self._process = process

    def _work(self) -> None:
        arff_bytes, xml_bytes = self._files
        dataset, error = None, None
        try:
            if self._use_process:
                dataset = parse_bounded(arff_bytes, xml_bytes, name=self.name, memory_bytes=self.memory_bytes,
                                        timeout_s=self.timeout_s, cancel=self._cancel, started=self._started)
            else:  # no fork server: in this thread, unbounded (a Stop discards what it parses)
                dataset = load_arff_bytes(arff_bytes, xml_bytes, name=self.name)
            if self.check is not None and not self._cancel.is_set():
                self.check(dataset)
        except ParseCancelled:
            pass
        except ValueError as exc:
            error = str(exc)
        except Exception as exc:  # noqa: BLE001 - a failure is a status and a message, never a traceback
            error = f"{type(exc).__name__}: {exc}"
        with self._cond:
            self._files = (None, None)
            if self.status == "running":
                if error is None:
                    self.status, self.dataset = "done", dataset
                else:
                    self.status, self.error = "error", error
            self._cond.notify_all()

    def stop(self) -> None:
        """End the job: a waiting one never starts, a running one's child is killed (within
        :data:`~dashboard.serving.bounded_parse.POLL_S`) and its folder removed; never waits for it."""
        with self._cond:
            if self.active:
                self.status = "stopped"
            self._cancel.set()
            self._cond.notify_all()

    def wait(self, timeout: float) -> ParseStatus:
        """Wait, at most ``timeout`` seconds, for the job to end; its status then."""
        with self._cond:
            self._cond.wait_for(lambda: not self.active, timeout=timeout)
            return self.status

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the job's thread (its child ended and its folder removed); True when it has ended (or never
        started)."""
        worker = self._worker
        if worker is None:
            return True
        worker.join(timeout)
        return not worker.is_alive()

    @property
    def pid(self) -> int | None:
        """The child process's id, once it started (None in thread mode)."""
        process = self._process
        return None if process is None else process.pid

    @property
    def process_alive(self) -> bool:
        """Whether the parse's child process still runs."""
        process = self._process
        return process is not None and process.is_alive()

    def seconds(self) -> float:
        """How long the job has parsed so far (0 while it waits)."""
        return 0.0 if self.started_at is None else time.monotonic() - self.started_at
