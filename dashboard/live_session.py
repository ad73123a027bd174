"""The Live run of this session: started, stopped and started again by itself, in Streamlit's session state.

The Live run page (``dashboard/views/run.py``) keeps its run (a :class:`dashboard.serving.live_run.LiveRun`) in
``st.session_state["run"]`` and how it came in ``["run_role"]``; every run goes through the server's
:class:`dashboard.serving.run_hub.RunHub` (:func:`start`). :func:`start_wanted` is called at the top of each script
run of the page: it starts the run a click on Run asked for, or, on a live page (:mod:`dashboard.live_page`), the run of
settings a control has just changed.
"""

from __future__ import annotations

import streamlit as st

from dashboard import data, live_page
from dashboard.serving.live_run import LiveRun

__all__ = ["RUN_UPLOAD", "RUN_COST", "START_REQUESTED", "LIVE", "SHOWN_FROM", "start", "start_wanted", "request_start",
           "stop", "same_settings", "calibrate", "show_from"]

ss = st.session_state
#: The identity (``data.upload_identity``: name and digest) of the upload this session's run read (None: no upload).
RUN_UPLOAD = "run_upload"
#: ``(run token, the run's cost estimate)`` until the run's measured chunk times are given to the calibration.
RUN_COST = "run_cost"
#: Run was pressed. The run starts in the script run the click triggers, once the sidebar has read every control
#: (dashboard/app.py renders it first), not in the button's callback: that sees ``ss["ctx"]`` of the last script
#: run that reached the sidebar's end, so a click arriving with a control's new value (during its rerun, under
#: load) started the previous settings (tests/test_dashboard_app.py: a new seed and the click in one script run).
START_REQUESTED = "start_requested"
#: Run was pressed in this session and Stop not since: a control changed then starts its run by itself
#: (:func:`dashboard.live_page.starts_by_itself`); a link alone never does.
LIVE = "live"
#: An intervention (``dashboard.interventions``): ``(settings, run, k)``, the settings it made and the run whose first
#: ``k`` chunks the run of those settings shows until it has computed them (``LiveRun.show_from``).
SHOWN_FROM = "shown_from"


def start():
    """The server's run of these settings (dashboard.serving.run_hub): replayed when computed for an earlier visitor,
    followed when being computed for another, else queued for a free slot. This session's previous run is
    stopped (unless other visitors follow it)."""
    cfg, upload = ss["ctx"].cfg, ss["ctx"].upload
    ss[RUN_UPLOAD] = data.upload_identity(upload)  # which file: no setting says (the caption compares it)
    shown = ss.pop(SHOWN_FROM, None)  # an intervention's settings: the run they changed goes on from the change
    ss["run"], ss["run_role"] = data.run_hub().start(
        data.session_id(), cfg, extra=ss[RUN_UPLOAD], build_stream=lambda: data.build_stream(cfg, upload),
        shown_from=shown[1:] if shown is not None and shown[0] == cfg else None)
    if ss["run_role"] == "computing":  # its chunk times calibrate the next estimates (a replay's were counted)
        ss[RUN_COST] = (ss["run"].token, ss["ctx"].cost)


def same_settings(run) -> bool:
    """Whether ``run`` is of the settings on the controls (an upload: of the same file too)."""
    ctx = ss["ctx"]
    return run.cfg == ctx.cfg and (run.cfg.dataset != data.UPLOAD
                                   or ss.get(RUN_UPLOAD) == data.upload_identity(ctx.upload))


def start_wanted():
    """Start the run Run asked for, or on a live page the run of the settings a control has just changed (the
    stale run is stopped by :func:`start`)."""
    ok = ss["ctx"].ok
    if ss.get(START_REQUESTED) and ok:
        start()
    elif live_page.starts_by_itself(live=bool(ss.get(LIVE)), ok=ok, run=ss.get("run"), same=same_settings):
        start()
    # dropped once the run is started: a rerun arriving meanwhile (a control changed just after the click)
    # interrupts the script inside start, and the click would be lost with the flag
    ss.pop(START_REQUESTED, None)
    ss.pop(SHOWN_FROM, None)  # an intervention's run started (start took it), or its settings could not start


def show_from(cfg, run, k: int):
    """An intervention made the settings ``cfg`` from ``run``'s, changed from chunk ``k`` on: the page is live (their run
    starts by itself) and that run shows ``run``'s first ``k`` chunks until it has computed them."""
    ss[SHOWN_FROM] = (cfg, run, int(k))
    ss[LIVE] = True


def request_start():
    """Run's callback: the page is live, and the script run the click triggers starts the run."""
    ss[START_REQUESTED] = True
    ss[LIVE] = True


def stop():
    """Stop's callback: the session's run stops (unless other visitors follow it) and the page is no longer live (a
    control changed after Stop starts nothing)."""
    ss[LIVE] = False
    run = ss.get("run")
    if run is None:
        return
    data.run_hub().detach(data.session_id())  # stopped, unless other visitors follow it
    if run.active:  # others follow it: this visitor keeps what it has received, stopped
        ss["run"], ss["run_role"] = LiveRun.frozen(run, "stopped"), None


def calibrate(run):
    """A finished run's measured chunk times re-measure the speed the time estimates use (once per run)."""
    token, cost = ss.get(RUN_COST) or (None, None)
    if token != run.token or cost is None:
        return
    ss.pop(RUN_COST, None)
    if len(run.compute_ms) >= 2:  # chunk 0 only initialises: a chunk after it is needed
        data.time_calibration().observe(cost, [ms / 1000 for ms in run.compute_ms])
