"""Opening the dashboard in Streamlit's AppTest, as the page tests do."""

from __future__ import annotations

import json
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from dashboard import live_page
from dashboard.figure_carrier import carried as payload_of

APP = Path(__file__).resolve().parents[1] / "dashboard" / "app.py"


class LiveAppTest(AppTest):
    """AppTest that, after each script run, runs the page again while the session's Live run is active (or its upload
    is being parsed).

    In a browser the page's live part is a fragment that Streamlit reruns every ``live_page.POLL_S`` seconds while a run is
    active (``dashboard/views/run.py``); AppTest has no browser to time those reruns, so each run of the page here
    is followed by whole-page reruns (the fragment inside them) until the run has ended and the page has drawn it
    ended, as a browser left open would show it. A run that stays active past the timeout is left active."""

    #: Seconds between two reruns while the run is active (the page's).
    POLL_S = live_page.POLL_S

    def _run(self, widget_state=None, timeout=None):
        deadline = time.monotonic() + (timeout or self.default_timeout)
        before = self._run_state()
        out = super()._run(widget_state, timeout)
        # again while the run is active, and once more when it moved on while the page was drawn (it may have ended
        # after its status was drawn: the page then still showed it running)
        while ((self._live_run_active() or self._parse_under_way() or self._run_state() != before)
               and time.monotonic() < deadline and not self.exception):
            if self._live_run_active() or self._parse_under_way():
                time.sleep(self.POLL_S)
            before = self._run_state()
            out = super()._run(self._tree.get_widget_states(), timeout)
        return out

    def _run_state(self):
        """The session's run as the page could draw it: which run, its status and its chunk count."""
        try:
            run = self.session_state["run"]
        except KeyError:
            return None
        return None if run is None else (id(run), run.status, len(run.chunks))

    def _parse_under_way(self) -> bool:
        """The sidebar shows its upload being parsed (``dashboard/upload_view.py``, a fragment the browser reruns):
        run the page again until it is parsed. A parse waiting for a slot of the server is left waiting (the test
        that filled the slots frees one)."""
        try:
            self.button(key="upload_cancel_sidebar")
        except KeyError:
            return False
        return not any(c.value.replace("\\", "").startswith("waiting:") for c in self.caption)  # (Markdown-escaped)

    def _live_run_active(self) -> bool:
        try:
            run = self.session_state["run"]
        except KeyError:
            return False
        return run is not None and run.active


def open_app(query: dict | None = None, *, timeout: float = 120) -> AppTest:
    """The page opened with the link's ``query``, run once (and while its run is active: :class:`LiveAppTest`); an
    uncaught exception fails the test."""
    at = LiveAppTest(APP, default_timeout=timeout)
    if query:
        at.query_params.update(query)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def carried(at) -> list[dict]:
    """The payloads of the figures' carriers sent in the page's last run, in order (dashboard.live_chart)."""
    found = (payload_of(c.proto.body) for c in at.get("html"))
    return [p for p in found if p is not None]


def drawn_figure(at, panel: str) -> dict:
    """The spec (plotly JSON) of the newest figure drawn in a panel of the Live run (dashboard.live_chart)."""
    figures = [json.loads(d["figures"][panel]) for d in carried(at) if panel in d.get("figures", {})]
    assert figures, f"no figure in panel {panel}"
    return figures[-1]
