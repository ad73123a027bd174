"""A visitor without a browser: a client of the dashboard's websocket, speaking Streamlit's protocol as the page does.

The classroom load test (``python -m benchmarks.classroom``) opens ten real Chromium pages and makes the rest of a
class of these: each is a session of its own on the server (the same script runs, the same runs computed, queued
and replayed), without a browser drawing its page on the server's cores. What it measures is the server's part of
a visitor's wait:

- ``answer_s``: from connecting until the server sent the Run button (a page also needs its browser to draw it);
- ``first_plot_s``: from pressing Run until the server sent the first chunk's figures (a page then draws them);
- ``status``: the run's status line as last sent ("waiting: 2nd in line …", "running · chunk 3/20 …", "done …").

The protocol is the page's (``streamlit.proto``): a ``BackMsg`` asks for a script run with the link's query
string; the server answers with ``ForwardMsg`` deltas; pressing Run is a script run whose widget states carry the
Run button's trigger (the other widgets keep their values in the session, as when the page sends them all).
A reader thread takes every message as it comes (the server never waits on a slow client), bounded by a deadline;
a fragment the server asks to rerun every so often (``st.fragment(run_every=...)``: the Live run's live part) is
asked for at that interval by a ticker thread, as the page's timer does, until a full script run no longer
registers it.

>>> SocketVisitor.status_of("done · chunk 20/20 · median update 51 ms")
'done · chunk 20/20 · median update 51 ms'
>>> SocketVisitor.status_of("Press **Run** to stream the configured data") is None
True
"""

from __future__ import annotations

import collections
import re
import threading
import time
import urllib.parse

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.sync.client import connect

from dashboard.figure_carrier import carried

__all__ = ["SocketVisitor"]

#: The run's status line, as ``dashboard/views/run.py`` words it (the only caption starting with these words).
STATUS = re.compile(r"^(Ready: press Run|Waiting for the settings|starting|waiting|running|done|failed|stopped)\b")
ENDED = re.compile(r"^(done|failed|stopped)\b")


class SocketVisitor:
    """One session at ``link`` (a page's URL with its query string), driven over the websocket.

    ``start()`` connects and asks for the page; ``wait_answer()`` blocks until the Run button was sent;
    ``press_run()`` presses it; ``ended`` tells when the status line says the run ended; ``close()`` leaves
    (the server then frees the session's run, as when a browser tab closes).
    """

    def __init__(self, link: str, *, deadline: float, run_label: str = "Run"):
        parts = urllib.parse.urlsplit(link)
        self.socket_url = f"ws://{parts.netloc}/_stcore/stream"
        self.query = parts.query
        self.page_name = parts.path.strip("/")  # the page of a multipage app ("": the main page)
        self.deadline = deadline
        self.run_label = run_label
        self.answer_s: float | None = None
        self.first_plot_s: float | None = None
        self.status = ""
        #: Every status line sent after Run was pressed, in order, and when each arrived (perf_counter seconds).
        self.statuses: list[str] = []
        self.status_times: list[float] = []
        self.error: str | None = None
        self._run_id: str | None = None
        self._t0 = 0.0
        self._t_click: float | None = None
        self._answered = threading.Event()
        self._ended = threading.Event()
        self._ending = False  # an ending status came; ended once its script run has finished
        self._closing = threading.Event()
        self._socket = self._connection = None
        self._thread = threading.Thread(target=self._read, name="socket-visitor", daemon=True)
        self._auto: dict[str, list[float]] = {}  # fragment id -> [interval, next due] (st.fragment's run_every)
        #: Where a visit that never ended stopped (:meth:`where_it_stopped`): the timed reruns asked and the script
        #: runs finished since the last status line, the last message's arrival (perf_counter seconds).
        self.reruns_since_status = self.runs_since_status = 0
        #: The elements the server sent since the last status line, by kind, and the last error it showed.
        self.kinds_since_status: collections.Counter = collections.Counter()
        self.last_error: str | None = None
        #: The last protocol events (perf_counter seconds, what): script runs started and finished, the fragments the
        #: server asked to rerun or stop rerunning, the reruns asked for, the status lines: a hang's story.
        self.events: collections.deque = collections.deque(maxlen=5000)
        self.last_message_at: float | None = None
        self._auto_lock = threading.Lock()
        self._ticker = threading.Thread(target=self._tick, name="socket-visitor-ticker", daemon=True)

    @staticmethod
    def status_of(text: str) -> str | None:
        """``text`` when it is the run's status line, else None."""
        return text if STATUS.match(text) else None

    # ------------------------------------------------------------------ driving
    def start(self) -> "SocketVisitor":
        self._t0 = time.perf_counter()
        self._connection = connect(self.socket_url, max_size=None, open_timeout=max(1.0, self._left()),
                                   close_timeout=2)
        self._socket = self._connection.__enter__()  # a context manager, closed by close()
        try:
            self._send(rerun={})
            self._thread.start()
            self._ticker.start()
        except BaseException:
            self.close()
            raise
        return self

    def wait_answer(self, timeout: float) -> float:
        """Seconds from connecting until the server sent the Run button; TimeoutError after ``timeout``."""
        if not self._answered.wait(min(timeout, self._left())):
            raise TimeoutError(self.error or f"no Run button within {timeout:.0f} s")
        if self.error:
            raise RuntimeError(self.error)
        if self.answer_s is None:  # the reader ended (its deadline) before the button came
            raise TimeoutError("no Run button before the deadline")
        return self.answer_s

    def press_run(self) -> None:
        """Press Run: a script run whose widget states carry the button's trigger."""
        if self._run_id is None:
            raise RuntimeError("the Run button was not sent yet")
        self._t_click = time.perf_counter()
        self._send(rerun={self._run_id: True})

    @property
    def ended(self) -> bool:
        """The status line says done, failed or stopped (after Run was pressed) and the script run that said so
        has finished (its figures, drawn below the status line, have come), or the visit ended (the connection
        closed, or the deadline passed: ``status`` then says where the run was)."""
        return self._ended.is_set()

    def close(self) -> None:
        self._closing.set()
        if self._connection is not None:
            self._connection.__exit__(None, None, None)
        for thread in (self._thread, self._ticker):
            if thread.is_alive():
                thread.join(timeout=5)

    def where_it_stopped(self, now: float | None = None) -> str:
        """What a visit that never ended did after its last status line: its page's timed reruns asked for (none:
        the page stopped asking, so the server had no chance to say more), the script runs the server finished
        (asked but none finished: the server stopped answering), how long since its last message.

        >>> v = SocketVisitor("http://127.0.0.1:1/", deadline=0.0)
        >>> v.last_message_at, v.reruns_since_status, v.runs_since_status = 10.0, 12, 12
        >>> v.where_it_stopped(now=40.0)
        'after it: 12 timed reruns asked, 12 script runs finished, the last message 30 s before; 0 fragments timed'
        >>> v.kinds_since_status.update(["markdown", "markdown", "exception"]); v.last_error = "KeyError: 'x'"
        >>> v.where_it_stopped(now=40.0).split("; ", 1)[1]
        "0 fragments timed; elements sent: markdown 2, exception 1; the last error: KeyError: 'x'"
        """
        now = time.perf_counter() if now is None else now
        last = ("no message" if self.last_message_at is None
                else f"the last message {now - self.last_message_at:.0f} s before")
        with self._auto_lock:
            timed = len(self._auto)
        kinds = ", ".join(f"{kind} {n}" for kind, n in self.kinds_since_status.most_common())
        return (f"after it: {self.reruns_since_status} timed reruns asked, {self.runs_since_status} script runs "
                f"finished, {last}; {timed} fragment{'s' if timed != 1 else ''} timed"
                + (f"; elements sent: {kinds}" if kinds else "")
                + (f"; the last error: {self.last_error}" if self.last_error else ""))

    # ------------------------------------------------------------------ protocol
    def _left(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def _send(self, *, rerun: dict, fragment_id: str | None = None) -> None:
        msg = BackMsg()
        msg.rerun_script.query_string = self.query
        msg.rerun_script.page_script_hash = ""
        msg.rerun_script.page_name = self.page_name
        if fragment_id is not None:  # a fragment's timed rerun, as the page's timer asks for it
            msg.rerun_script.fragment_id = fragment_id
            msg.rerun_script.is_auto_rerun = True
        for widget_id, trigger in rerun.items():
            state = msg.rerun_script.widget_states.widgets.add()
            state.id = widget_id
            state.trigger_value = trigger
        self._socket.send(msg.SerializeToString())

    def _read(self) -> None:
        try:
            while not self._closing.is_set() and self._left() > 0:
                try:
                    raw = self._socket.recv(timeout=min(1.0, self._left()))
                except TimeoutError:
                    continue
                if isinstance(raw, bytes):
                    self._take(raw, time.perf_counter())
        except Exception as exc:  # noqa: BLE001 - a closed connection ends the visit; said by ``error``
            if not self._closing.is_set():
                self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self._answered.set()  # nobody waits forever on a visitor whose connection ended
            self._ended.set()

    def _tick(self) -> None:
        """Ask for each registered fragment's rerun at its interval, until the visit ends."""
        while not self._closing.is_set() and not self._ended.is_set() and self._left() > 0:
            now = time.monotonic()
            with self._auto_lock:
                due = [f for f, (interval, at) in self._auto.items() if at <= now]
                for f in due:
                    self._auto[f][1] = now + self._auto[f][0]
            for f in due:
                try:
                    self._send(rerun={}, fragment_id=f)
                    self.reruns_since_status += 1
                    self.events.append((time.perf_counter(), f"asked rerun {f[:8]}"))
                except Exception:  # noqa: BLE001 - a closed connection: the reader says so
                    return
            time.sleep(0.02)

    def _take(self, raw: bytes, now: float) -> None:
        msg = ForwardMsg()
        msg.ParseFromString(raw)
        self.last_message_at = now
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            fragments = list(msg.metadata.run.fragment_ids)
            self.events.append((now, f"run started {msg.metadata.run.script_run_id[:8]} "
                                     f"{'fragments ' + ' '.join(f[:8] for f in fragments) if fragments else 'full'}"))
            if not fragments:  # a full script run: its fragments anew
                with self._auto_lock:
                    self._auto.clear()
        elif kind == "auto_rerun":
            self.events.append((now, f"auto_rerun {msg.auto_rerun.fragment_id[:8]}"))
            with self._auto_lock:
                self._auto[msg.auto_rerun.fragment_id] = [msg.auto_rerun.interval,
                                                          time.monotonic() + msg.auto_rerun.interval]
        elif kind == "stop_auto_rerun":
            self.events.append((now, f"stop_auto_rerun {' '.join(f[:8] for f in msg.stop_auto_rerun.fragment_ids)}"))
            with self._auto_lock:
                for f in msg.stop_auto_rerun.fragment_ids:
                    self._auto.pop(f, None)
        if msg.WhichOneof("type") == "script_finished":
            self.events.append((now, f"run finished {ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished)}"))
            self.runs_since_status += 1
            # the run that wrote "done" may still send the figures drawn below the status line: the visit has
            # ended when that script run has (a run cut short for a rerun draws them again)
            if self._ending and msg.script_finished != ForwardMsg.ScriptFinishedStatus.FINISHED_EARLY_FOR_RERUN:
                self._ended.set()
            return
        if msg.WhichOneof("type") != "delta" or msg.delta.WhichOneof("type") != "new_element":
            return
        element = msg.delta.new_element
        kind = element.WhichOneof("type")
        self.kinds_since_status[kind] += 1
        if kind == "exception":
            self.last_error = f"{element.exception.type}: {element.exception.message}"[:300]
        elif kind == "alert" and element.alert.format == element.alert.ERROR:
            self.last_error = element.alert.body[:300]
        if kind == "button" and element.button.label == self.run_label and self._run_id is None:
            self._run_id = element.button.id
            self.answer_s = now - self._t0
            self._answered.set()
        elif kind == "markdown" and self.status_of(element.markdown.body):
            if self._t_click is not None:
                self.status = element.markdown.body
                self.events.append((now, f"status {self.status[:40]}"))
                self.statuses.append(self.status)
                self.status_times.append(now)
                self.reruns_since_status = self.runs_since_status = 0
                self.kinds_since_status.clear()
                self._ending = bool(ENDED.match(self.status))
        elif kind == "html" and self._t_click is not None and self.first_plot_s is None:
            try:
                data = carried(element.html.body)
            except ValueError:
                return
            if isinstance(data, dict) and data.get("figures") and (data.get("chunk") or 0) >= 1:
                self.first_plot_s = now - self._t_click
