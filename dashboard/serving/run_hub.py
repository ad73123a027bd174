"""The server's runs, shared by every visitor: a FIFO queue with a limit on the runs computing at once, one
active run per session, runs of closed sessions given up within seconds, and each run computed once.

A run is a pure function of its configuration (and the upload it reads), its seeds and the code: finished
runs are kept (bounded in number and age, :mod:`dashboard.serving.limits`) keyed by ``(configuration key, code
fingerprint)``, and a visitor asking for a kept run gets it replayed (a :meth:`LiveRun.frozen` copy: nothing
is computed); a visitor asking for a run being computed for another follows it (both pages wait on the same
:class:`~dashboard.serving.live_run.LiveRun`). Any other run takes a place in the queue and starts when it is first
in line and a slot is free (:meth:`LiveRun.begin` asks :meth:`RunHub.position`).

A job of the hub is a run, or a β × γ sweep (its configuration a :class:`~ncld_core.eval.sweep.SweepJob`, whose
steps the same :class:`LiveRun` computes in a process of its own): both share the queue, the slots, the one job
per session and the replays. An upload's parse is a job too (:meth:`RunHub.parse`, a
:class:`~dashboard.serving.parse_job.ParseJob`): queued in the same line for the same slots, parsed once for
the sessions that uploaded the same file (name and bytes) at the same time, stopped at once; it is not replayed
(the dashboard keeps parsed uploads in its :class:`~dashboard.serving.uploads.UploadCache`), and an ended parse
(its dataset, or its failure) leaves the line but stays with the sessions holding it until each has collected it
(:meth:`RunHub.detach`) or is gone. With a watchdog (``watch_s`` > 0), the hub begins a job itself when it is
admitted (its slot free; :meth:`RunHub.admit`): no page needs to be polling for it to start.

A session holds one run at a time (computing, queued, followed or replayed), and beside it one parse (the lanes
:data:`RUN` and :data:`PARSE`): starting another detaches it from the one it held in that lane, which stops
unless another session follows it. A session that is gone
(``session_alive`` says so: the page passes Streamlit's runtime, whose sessions end when their browser goes
away) is detached by a watchdog thread every ``watch_s`` seconds once it has been gone ``session_grace_s``
(a dropped connection that comes back keeps its run): its place in the queue is freed, and a run nobody
else follows is stopped. No Streamlit here (``tests/test_run_hub.py`` drives it with threads).

>>> from ncld_core.config import RunConfig
>>> from dashboard.serving.limits import Limits
>>> hub = RunHub(Limits(max_concurrent_runs=1), use_process=False, watch_s=0)  # (no watchdog: the page begins it)
>>> cfg = RunConfig(n_instances=60, chunk_size=20, n_features=3, n_labels=4, n_neighbors=3, models=["ELM-O"],
...                 references=False)
>>> first, role = hub.start("a", cfg)
>>> role, first.begin()
('computing', True)
>>> second, role = hub.start("b", cfg)
>>> role, second is first
('following', True)
>>> while first.wait(len(first.chunks), timeout=1.0)[1] == "running":  # the pages show it
...     pass
>>> hub.reap()
>>> third, role = hub.start("c", cfg)
>>> role, third.status, len(third.chunks)
('replayed', 'done', 3)
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from ncld_core.code_version import code_fingerprint
from .limits import LIMITS, Limits
from ncld_core.threads import threads_for

from .live_run import LiveRun
from .parse_job import ParseJob
from .uploads import upload_digest
from .watchdog import Watchdog

__all__ = ["RunHub", "Role", "RUN", "PARSE", "ordinal", "queue_text", "config_key", "role_text"]

#: The lanes of a session's jobs: it holds one of each at a time, its run (or sweep) and its upload's parse.
RUN, PARSE = "run", "parse"

#: How a session's run came to be: computed for it, followed (computed for another visitor now) or replayed.
Role = str


def role_text(role: Role | None, *, status: str, others: int) -> str | None:
    """What a page says of how its run came (None: computed for it): ``status`` the run's
    (:attr:`~dashboard.serving.live_run.LiveRun.status`), ``others`` the other pages showing it now
    (:meth:`RunHub.others_watching`).

    >>> role_text("following", status="running", others=2)
    'following: this run is being computed for 2 other visitors too; computed once for all'
    >>> role_text("following", status="running", others=0)
    'following: the visitor this run was started for no longer shows it; it goes on for this page'
    >>> role_text("following", status="done", others=1)
    'followed: computed once, for another visitor and this page'
    >>> role_text("following", status="error", others=0)
    'followed: computed for another visitor and this page; it failed'
    """
    if role == "replayed":
        return "replayed: computed for an earlier visitor, nothing was recomputed"
    if role != "following":
        return None
    if status not in ("starting", "running"):
        return {"done": "followed: computed once, for another visitor and this page",
                "error": "followed: computed for another visitor and this page; it failed"}.get(
            status, "followed: computed for another visitor and this page until it stopped")
    if others <= 0:
        return "following: the visitor this run was started for no longer shows it; it goes on for this page"
    if others == 1:
        return "following: this run is being computed for another visitor too; computed once for both"
    return f"following: this run is being computed for {others} other visitors too; computed once for all"


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``11th``, ``22nd``."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def queue_text(place: int, slots: int, what: str) -> str:
    """A queued job's place, said the same for runs, sweeps and upload parses (one queue, one limit for all).

    >>> queue_text(2, 1, "run")
    'waiting: 2nd in line · the server computes 1 job (runs, sweeps, upload parses) at once; this run starts when one ends'
    """
    return (f"waiting: {ordinal(place)} in line · the server computes {slots} job{'s' if slots != 1 else ''} "
            f"(runs, sweeps, upload parses) at once; this {what} starts when one ends")


def config_key(cfg, extra: str | None = None) -> str:
    """A run's configuration as one string (every field, and ``extra``: for an upload, its name and digest,
    ``dashboard.data.upload_identity``)."""
    return json.dumps([cfg.to_dict(), extra], sort_keys=True, default=str)


class RunHub:
    """Every run of the server (see the module's description). ``session_alive(session_id)``: whether a
    session's browser is still there (default: always); ``fingerprint``: the code version (default
    :func:`ncld_core.code_version.code_fingerprint`); ``use_process``, ``beside``: passed to each :class:`LiveRun`; ``watch_s``: how often the
    watchdog looks for gone sessions and ended runs (seconds; 0: no watchdog, :meth:`reap` by hand)."""

    def __init__(self, limits: Limits = LIMITS, *, session_alive: Callable[[str], bool] | None = None,
                 fingerprint: Callable[[], str] = code_fingerprint, use_process: bool | None = None,
                 watch_s: float = 0.5, clock: Callable[[], float] = time.monotonic, beside: bool = False):
        self.limits = limits
        self.beside = beside
        self.session_alive = session_alive or (lambda session_id: True)
        self.fingerprint = fingerprint
        self.use_process = use_process
        self.clock = clock
        self.computations = 0  # runs computed (not followed, not replayed): what the tests count
        self.parses = 0  # upload parses begun (not followed)
        self._lock = threading.RLock()
        self._line: list[tuple] = []  # (key, job) of the jobs admitted or waiting, in arrival order
        self._watchers: dict[tuple, set] = {}  # key -> sessions showing that computation
        self._runs: dict[tuple, LiveRun | ParseJob] = {}  # key -> its computation
        self._sessions: dict[tuple[str, str], tuple] = {}  # (session, lane) -> the key it holds there
        self._finished: OrderedDict = OrderedDict()  # key -> (time kept, frozen LiveRun)
        self._gone_since: dict[str, float] = {}  # session -> when it was first seen disconnected
        self._watchdog = Watchdog(watch_s, self._tick, name="ncld-run-hub")
        self._admitted: list[LiveRun] = []  # jobs begun by admit() whose begin may not have ended yet

    # ------------------------------------------------------------------ runs
    def key(self, cfg, extra: str | None = None) -> tuple:
        return config_key(cfg, extra), self.fingerprint()

    def start(self, session_id: str, cfg, *, extra: str | None = None,
              build_stream: Callable[[], object] | None = None,
              shown_from: tuple | None = None) -> tuple[LiveRun, Role]:
        """The run of ``cfg`` for ``session_id`` and how it came: ``"replayed"``, ``"following"`` or
        ``"computing"`` (queued until a slot is free). A session holding a run is detached from it first.
        ``shown_from``: ``(run, k)``, the run an intervention changed from chunk ``k`` on: a run computed anew
        shows its first ``k`` chunks until it has computed them (:meth:`LiveRun.show_from`)."""
        self.detach(session_id)
        with self._lock:
            self._watchdog.ensure()
            self.reap()
            key = self.key(cfg, extra)
            kept = self._kept(key)
            if kept is not None:
                return LiveRun.frozen(kept), "replayed"
            if key in self._runs:
                self._watchers[key].add(session_id)
                self._sessions[(session_id, RUN)] = key
                return self._runs[key], "following"
            # BLAS threads from the runs that may share the machine (the server's slots): one each for the
            # default model; a large hidden layer gets the cores per slot (ncld_core.threads).
            threads = threads_for(n_hidden=int(cfg.n_hidden), concurrent_runs=self.limits.max_concurrent_runs)
            run = LiveRun(cfg, build_stream=build_stream, use_process=self.use_process,
                          waiting=lambda: self.position(key), n_threads=threads,
                          niceness=self.limits.run_niceness, shown_from=shown_from, beside=self.beside)
            self._runs[key], self._watchers[key] = run, {session_id}
            self._sessions[(session_id, RUN)] = key
            self._line.append((key, run))
            self.computations += 1
            return run, "computing"

    def parse_key(self, name: str, digest: str) -> tuple:
        """The key of the parse of an upload named ``name`` whose files' digest is ``digest``."""
        return json.dumps(["upload parse", name, digest]), self.fingerprint()

    def parse(self, session_id: str, arff_bytes, xml_bytes, name: str, *,
              check: Callable[[object], None] | None = None, digest: str | None = None) -> tuple[ParseJob, Role]:
        """The parse of the upload ``(arff_bytes, xml_bytes)`` named ``name`` for ``session_id`` and how it came:
        ``"computing"`` (queued until a slot is free) or ``"following"`` (another session asked for the same file,
        name and bytes: parsed once). The session's parse lane holds it; a session holding another upload's parse
        is detached from that one first (the same upload's: the job it holds). ``check``: see
        :class:`~dashboard.serving.parse_job.ParseJob`; the server's upload limits bound the parse. ``digest``: the
        files' (:func:`~dashboard.serving.uploads.upload_digest`), when the caller has it."""
        digest = upload_digest(arff_bytes, xml_bytes) if digest is None else digest
        key = self.parse_key(name, digest)
        with self._lock:
            if self._sessions.get((session_id, PARSE)) == key and key in self._runs:
                return self._runs[key], "computing" if len(self._watchers[key]) == 1 else "following"
        self.detach(session_id, lane=PARSE)
        with self._lock:
            self._watchdog.ensure()
            self.reap()
            self._sessions[(session_id, PARSE)] = key
            if key in self._runs:
                self._watchers[key].add(session_id)
                return self._runs[key], "following"
            job = ParseJob(arff_bytes, xml_bytes, name, digest=digest, check=check,
                           waiting=lambda: self.position(key), use_process=self.use_process,
                           memory_bytes=self.limits.upload_parse_bytes, timeout_s=self.limits.upload_parse_timeout_s)
            self._runs[key], self._watchers[key] = job, {session_id}
            self._line.append((key, job))
            self.parses += 1
            return job, "computing"

    def others_watching(self, session_id: str, lane: str = RUN) -> int:
        """How many other sessions show the job ``session_id`` shows in ``lane`` (0: none, or it holds none)."""
        with self._lock:
            key = self._sessions.get((session_id, lane))
            return 0 if key is None else max(len(self._watchers.get(key, ())) - 1, 0)

    def position(self, key: tuple) -> int:
        """The place in line of ``key``'s run: 0 when admitted (or unknown), else 1 for first in line, ..."""
        with self._lock:
            self.reap()
            keys = [k for k, _ in self._line]
            if key not in keys:
                return 0
            i = keys.index(key)
            return 0 if i < self.limits.max_concurrent_runs else i - self.limits.max_concurrent_runs + 1

    def position_of(self, session_id: str, lane: str = RUN) -> int:
        """The place in line of the session's job in ``lane`` (0: computing, followed, replayed, ended or none)."""
        with self._lock:
            key = self._sessions.get((session_id, lane))
            return 0 if key is None else self.position(key)

    @property
    def running(self) -> int:
        """Jobs holding a slot now."""
        with self._lock:
            return min(len(self._line), self.limits.max_concurrent_runs)

    @property
    def waiting(self) -> int:
        """Jobs waiting for a slot."""
        with self._lock:
            return max(len(self._line) - self.limits.max_concurrent_runs, 0)

    def held(self, session_id: str, lane: str = RUN) -> LiveRun | ParseJob | None:
        """The computation the session holds in ``lane`` (computing, queued or followed; a parse also once ended,
        until collected), or None."""
        with self._lock:
            key = self._sessions.get((session_id, lane))
            return None if key is None else self._runs.get(key)

    def detach(self, session_id: str, *, stop: bool = True, job: LiveRun | ParseJob | None = None,
               lane: str = RUN) -> None:
        """The session no longer shows its job in ``lane`` (a :class:`ParseJob` given as ``job``: its parse lane):
        a job nobody else shows is stopped (``stop``) and its place freed (a run kept for replay when it had
        finished); a job others follow goes on for them. ``job``: only if the session holds that one (a page's
        Stop ends its own job, never one another page of the session started since)."""
        if isinstance(job, ParseJob):
            lane = PARSE
        with self._lock:
            if job is not None and self.held(session_id, lane) is not job:
                return
            key = self._sessions.pop((session_id, lane), None)
            if key is None:
                return
            watchers = self._watchers.get(key, set())
            watchers.discard(session_id)
            if watchers or not stop:
                return
            # a finished run whose session went away before a reap kept it is kept here (else the next visitor
            # of the same settings computed it again: seen in tests/test_dashboard_app.py, 1 time in 6)
            run, _ = self._retire(key)
        if run is not None:
            run.stop()

    def _retire(self, key) -> tuple:
        """Take ``key``'s computation out of the hub (kept for replay when it finished): ``(run, its watchers)``."""
        run = self._runs.pop(key, None)
        if isinstance(run, LiveRun) and run.status == "done":  # (a parse is kept by the dashboard's UploadCache)
            self._keep(key, run)
        self._line = [(k, r) for k, r in self._line if k != key]
        return run, self._watchers.pop(key, set())

    def reap(self) -> None:
        """Detach the sessions gone for ``session_grace_s`` (a page whose connection dropped reconnects to its
        session within a second or two, and its run goes on; from a parse: ``upload_grace_s``, as long as the
        upload is kept for it); free the places of ended jobs and keep the finished runs (an ended parse stays with
        the sessions holding it, out of the line)."""
        with self._lock:
            now = self.clock()
            for session_id, lane in list(self._sessions):
                # an upload's parse waits as long as its upload would (the page's files and state are kept as long)
                grace = self.limits.upload_grace_s if lane == PARSE else self.limits.session_grace_s
                if self.session_alive(session_id):
                    self._gone_since.pop(session_id, None)
                elif now - self._gone_since.setdefault(session_id, now) >= grace:
                    self.detach(session_id, lane=lane)
            holding = {session_id for session_id, _ in self._sessions}
            for session_id in [s for s in self._gone_since if s not in holding]:
                del self._gone_since[session_id]
            for key, run in list(self._runs.items()):
                if run.active:
                    continue
                parse = isinstance(run, ParseJob)
                if parse and run.status in ("done", "error") and self._watchers.get(key):
                    self._line = [(k, r) for k, r in self._line if k != key]  # its slot freed, its result kept
                    continue
                lane = PARSE if parse else RUN
                for session_id in self._retire(key)[1]:
                    if self._sessions.get((session_id, lane)) == key:
                        del self._sessions[(session_id, lane)]
            for key in [k for k, (t, _) in self._finished.items() if now - t > self.limits.run_cache_ttl_s]:
                del self._finished[key]

    def admit(self) -> list[LiveRun]:
        """Begin, each in a thread of its own, the jobs that hold a slot and were not yet begun (their stream
        is built there, not in the watchdog's thread); the watchdog calls it after each :meth:`reap`. Returns
        the jobs begun now (a page's own :meth:`LiveRun.begin` meanwhile makes the hub's a no-op)."""
        with self._lock:
            admitted = [run for key, run in self._line[:self.limits.max_concurrent_runs]
                        if run.status == "starting" and run not in self._admitted]
            self._admitted = [run for run in self._admitted if run.status == "starting"] + admitted
        for run in admitted:
            threading.Thread(target=run.begin, name="ncld-admit", daemon=True).start()
        return admitted

    # ------------------------------------------------------------------ finished runs
    def _keep(self, key, run: LiveRun) -> None:
        self._finished[key] = (self.clock(), LiveRun.frozen(run, "done"))
        self._finished.move_to_end(key)
        while len(self._finished) > self.limits.run_cache_entries:
            self._finished.popitem(last=False)

    def _kept(self, key):
        hit = self._finished.get(key)
        if hit is None or self.clock() - hit[0] > self.limits.run_cache_ttl_s:
            self._finished.pop(key, None)
            return None
        self._finished.move_to_end(key)
        return hit[1]

    @property
    def kept(self) -> int:
        """Finished runs kept for replay."""
        with self._lock:
            return len(self._finished)

    # ------------------------------------------------------------------ watchdog
    def _tick(self) -> None:
        self.reap()
        self.admit()
