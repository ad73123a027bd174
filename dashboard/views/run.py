"""Live run: press Run, watch every chunk arrive, stop at any time, download the results.

Layout only. The run is a :class:`dashboard.serving.live_run.LiveRun` in ``st.session_state["run"]`` (this visitor
only), started through the server's :class:`dashboard.serving.run_hub.RunHub` and computed in a process of its own.
While it is active, the live part (:func:`_live`) is a fragment rerun every :data:`dashboard.live_page.POLL_S`
seconds (``st.fragment(run_every=...)``): it begins the run once the server has a slot, reads the run's snapshot and draws
what arrived; a click (Stop, a control, a page switch) is a rerun like any other, and the run's end reruns the page
(its buttons, the summary). What the page decides and says is :mod:`dashboard.live_page`, the session's run
:mod:`dashboard.live_session`, its panels' places and drawing :mod:`dashboard.run_panels`, presentation mode's
widgets :mod:`dashboard.present_view`; the panels are those of :data:`dashboard.panels.PANELS`.
"""

from __future__ import annotations

import time
from pathlib import Path

import streamlit as st
from streamlit.errors import StreamlitInvalidLayoutContextError

from dashboard import compare, data, interventions, knob_row, link, live_page, live_session, panels, present_view
from dashboard.labels import errors_text
from dashboard.live_chart import preload_plotly
from dashboard.run_panels import LivePanels, summary
from dashboard.serving.limits import LIMITS
from dashboard.serving.run_hub import role_text
from dashboard.ui import md_escape, rerun_after_refused_write, teach

ss = st.session_state
ctx = ss["ctx"]

#: ``(run token, chunks)`` this session last drew: each redraw of new chunks is timed once (``LiveRun.note_drawn``).
SHOWN = "shown"
#: The choice of "(b)-(d) show the records of", kept outside the widget: presentation mode draws the widget
#: above its first panel only, and Streamlit forgets a widget's value in a run that does not draw it.
FOCUS = "focus_choice"
#: The page's stylesheets: its layout, and presentation mode's (large type for a projector, one panel at a time).
STYLE, PRESENT_STYLE = (Path(__file__).resolve().parents[1] / "static" / n for n in ("run.css", "present.css"))


live_session.start_wanted()
run = ss.get("run")
running = run is not None and run.active

# --------------------------------------------------------------------------- heading, buttons, status
st.html(STYLE)
# presentation mode: the page's heading gives its line to the lesson's chooser, and with a lesson the chooser goes
# beside the panel with the step, Run and Stop to the toggle's line (the screen's height is the panel's)
with_lesson = bool(ss.get("presenting")) and ss.get(link.LESSON) is not None
if with_lesson:
    b1, b2, b3, tg = st.columns([1, 1, 4, 2], vertical_alignment="center")
elif ss.get("presenting"):  # the lesson's chooser on the first line (the screen's height is short), the buttons below
    hd, tg = st.columns([4, 2], vertical_alignment="bottom")
    with hd:
        present_view.lesson_select()
    b1, b2, b3 = st.columns([1, 1, 6], vertical_alignment="center")
else:  # one line: Run, Stop, the status, the mode (the navigation names the page; the explanations are help)
    b1, b2, b3, tg = st.columns([1, 1, 5, 2], vertical_alignment="center")
presenting = tg.toggle("Presentation mode", key="presenting",
                       help="For a projector: large type, one panel at a time (choose it, or step with "
                            "Previous / Next), the sidebar hidden; a panel, its caption and a lesson's step fit "
                            "1280 × 720, 1024 × 768 and 820 px wide screens without scrolling.")
if presenting:
    st.html(PRESENT_STYLE)
b1.button("Run", type="primary", icon=":material/play_arrow:", disabled=(not ctx.ok) or running,
          on_click=live_session.request_start, key="run_button", width="stretch",
          help=None if presenting else live_page.RUN_HELP)
b2.button("Stop", icon=":material/stop:", disabled=not running, on_click=live_session.stop, key="stop_button", width="stretch")
with b3:
    status = st.container(key="run_status").empty()
    if ctx.ok and ctx.cost is not None and not presenting and (run is None or run.cfg != ctx.cfg):
        # before a run of these settings only: its status line then says what was measured
        calibration = data.time_calibration()
        st.container(key="run_estimate").caption(live_page.expected_text(ctx.cost, calibration),
                                                 help=live_page.expected_help(calibration))
run_caption = st.empty()
alert = st.empty()
#: The one-glance strip (dashboard.glance), above the panels; presentation mode gives its height to the panel.
strip = None if presenting else st.container(key="glance_strip").empty()
if not ctx.ok:
    st.warning(f"Run is disabled until these settings are fixed (see the sidebar): {errors_text(ctx.errors)}",
               icon=":material/block:")
if not presenting:  # (presentation mode has them behind a button on the panel chooser's line: present_view.panel_nav)
    knob_row.render(ctx)  # the knobs a lesson turns, beside the plots
    interventions.render(run)  # labels grow / shrink / shift / noise up / down from the next chunk, while it streams


# --------------------------------------------------------------------------- the panels
def _keep_focus():
    ss[FOCUS] = ss.get("focus_variant")


def _focus():
    """Whose records the per-variant panels draw (:data:`dashboard.live_page.ALL`: every variant's), or None."""
    cfg = run.cfg if run else ctx.cfg
    options = live_page.focus_options(cfg)
    if options is None:  # one ELM variant: no choice (and the kept one is dropped)
        ss.pop("focus_variant", None)
        ss.pop(FOCUS, None)
        return None
    return live_page.focus_choice(options, ss.get(FOCUS), cfg)


def _shown(run, chunks=None) -> panels.PanelData:
    return live_page.panel_data(run, ctx.cfg, focus=_focus(), show_paper=bool(ss.get("show_paper")), chunks=chunks)


def _options(stacked: bool = False):
    """Above the first per-variant panel (``stacked``: one under the other, beside a lesson's panel): the paper's
    estimate on request; with several ELM variants, whose records the per-variant panels draw."""
    c1, c2 = (st, st) if stacked else st.columns([3, 2], vertical_alignment="center")
    c1.checkbox("show the paper's estimate", key="show_paper",
                help="Adds the paper's Eq. (card): importance weights clipped at 0, P_D fitted on the same "
                     "chunk; biased upwards, unlike the moment estimate it is drawn beside.")
    pick = _focus()
    if pick is None:
        return
    options = live_page.focus_options(run.cfg if run else ctx.cfg)
    ss["focus_variant"] = ss[FOCUS] = pick
    label = f"{panels.focus_span()} show the records of"
    # presentation mode: the label inside the box, on the checkbox's line (the screen's height is short)
    prefix = f"{label} " if presenting else ""
    c2.selectbox(label, options, key="focus_variant", on_change=_keep_focus,
                 label_visibility="collapsed" if presenting else "visible",
                 format_func=lambda m: prefix + ("every variant (identical ones share a line)" if m == live_page.ALL
                                                 else m),
                 help="The variants' cardinality estimates and detectors agree when they are told the same "
                      "rates; with estimated rates they part after a drift they act on.")


lp = LivePanels(presenting=presenting, owner=run.owner if run else None, hub=None,
                said=present_view.step_said(ctx.cfg) if presenting else "")
before = panels.PanelData(default_rates=live_page.default_rates(run.cfg if run else ctx.cfg))  # no records yet
#: The panel above which the choice of variants (and the paper's estimate) sit.
FIRST_PER_VARIANT = next((p.key for p in panels.PANELS if p.per_variant), None)
summary_box = None
if presenting:  # one panel, no explanation beside it; chosen or stepped through
    where = beside = st.container()
    if with_lesson:  # the panel, and beside it the lesson, its step and the panel's controls (stacked when narrow)
        where, beside = st.container(key="present_with_lesson").columns([2, 1])
        with beside:
            present_view.lesson_select()
            present_view.lesson_box(run, ctx.cfg)
    with beside:
        present = present_view.panel_nav()
    with where:
        lp.heading(present, before)
        shown = not present_view.stale_flag(run)  # a run of other settings than the lesson's text: flagged, not drawn
    if shown and present.key == FIRST_PER_VARIANT:
        with beside:
            _options(stacked=with_lesson)
    if shown:
        with where:
            summary_box = lp.body(present)
else:
    for panel in panels.PANELS:
        if panel.wide:  # the full width for the graph, its explanation beside the heading
            h, t = st.columns([3, 2], vertical_alignment="bottom")
            lp.heading(panel, before, h)
            with t:
                teach(panel.teaching, key=f"teach_{panel.key}")
            box = lp.body(panel)
        else:
            lp.heading(panel, before)
            left, right = st.columns([4, 1] if panel.kind == "summary" else [3, 2])
            with left:
                if panel.key == FIRST_PER_VARIANT:
                    _options()
                box = lp.body(panel)
            with right:
                teach(panel.teaching, key=f"teach_{panel.key}")
        if panel.kind == "summary":
            summary_box = box
    lp.slots["glance"] = strip  # the one-glance strip: each draw rewrites it (LivePanels.draw)


# --------------------------------------------------------------------------- the run
def _role(run) -> str | None:
    """How this page's run came (followed, replayed), as of now: the other visitors showing it come and go."""
    # the watchers first: a run that ends in between then reads as ended (read the other way round, a run reaped
    # in between would say its first visitor had gone)
    others = data.run_hub().others_watching(data.session_id())
    return role_text(ss.get("run_role"), status=run.status, others=others)


def _show(run, chunks, figures_shown: dict, live: bool = False):
    """The status and the panels for ``chunks``; the graphs only when they show another number of chunks than
    ``figures_shown`` says (what this page's graphs show since the page was drawn); ``live``: drawn by the live
    part (a run that has ended since its snapshot reruns the page instead). The status comes first while
    the run is active (it says which chunk is being drawn), last once it has ended (with the last redraw's time:
    written once, it never changes under a reader)."""
    busy = int(run.computing_s()) if run.status == "running" else 0  # a slow chunk: how long it has computed
    text = run.status_text(len(chunks)) + (f" · computing chunk {len(chunks) + 1}: {busy} s" if busy else "")
    if live and text.startswith(("done ·", "stopped ·", "failed ·")):  # ended since its snapshot: never "done"
        st.rerun()  # at a chunk before the last; the page's full run says how it ended
    if run.active or not chunks:
        status.caption(text)
    if not chunks:
        return
    t1 = time.perf_counter()
    lp.draw(run, _shown(run, chunks), figures=figures_shown.get(run.token) != len(chunks))
    figures_shown[run.token] = len(chunks)
    if ss.get(SHOWN) != (run.token, len(chunks)):
        ss[SHOWN] = (run.token, len(chunks))
        run.note_drawn(time.perf_counter() - t1)
        ss["timings"] = run.timings()
    if live and not run.active:  # it ended during the draw: the page's full run says how, at its last chunk
        st.rerun()
    if not run.active:
        status.caption(run.status_text(len(chunks)))


def _live(run, line, figures_shown: dict):
    """The live part (:func:`_follow`); a write Streamlit refuses after a racing full run reruns the page."""
    try:
        _follow(run, line, figures_shown)
    except StreamlitInvalidLayoutContextError:
        rerun_after_refused_write()


def _follow(run, line, figures_shown: dict):
    """The live part's work: begin the run when the server has a slot, then draw what arrived; rerun the page when the
    run has ended. ``line``: the run caption's parts after the role, for a followed run (redrawn with its role)."""
    pending = ss.get(live_session.SHOWN_FROM)
    if pending is not None and pending[1] is run:  # an intervention replaces this run from a chunk it has drawn: no
        st.rerun()  # later chunk of it is drawn (the page would step back to that chunk); the page's full run starts
    lp.clear()  # a fragment's rerun writes again what it wrote
    if line is not None:  # the visitor it was computed for left, or others came
        role = _role(run)
        run_caption.caption(" · ".join(t for t in (role and f"**{role}**", *line) if t))
    shown = run.status == "starting" and bool(run.chunks)  # an intervention's run (LiveRun.show_from): the chunks
    if shown:  # before its change are drawn before its stream is built, never chunk 0 again
        if not figures_shown:
            lp.reserve(before)
            figures_shown[None] = 0
        _show(run, run.snapshot()[0], figures_shown, live=True)
    if run.status == "starting" and not run.begin():  # queued, or another script thread is beginning it
        if not shown:
            lp.reserve(before)
        if not shown or run.queue_position():
            status.caption(live_page.waiting_text(run.queue_position(), LIMITS.max_concurrent_runs))
        return
    chunks, state = run.wait(len(run.chunks), timeout=0)  # marks the run shown: its worker goes on
    if state not in ("starting", "running"):
        st.rerun()  # the buttons (Run enabled, Stop disabled), the summary, or the reason it failed
    if not chunks or not figures_shown:  # (the page's full run: every place the fragment's reruns write)
        lp.reserve(before)
        figures_shown[None] = 0
    _show(run, chunks, figures_shown, live=True)


lp.hub = st.empty()  # of no height: fetches plotly.js before Run, then carries each draw's figures (draw_charts)
preload_plotly(lp.hub)
if run is None:
    status.caption("Ready: press Run." if ctx.ok else "Waiting for the settings to be fixed: Run is disabled.")
    (strip or next(iter(lp.slots.values()), st.empty())).info(  # in the strip's place: its numbers come with Run
        "Press **Run** to stream the data through the selected models.", icon=":material/info:")
elif run.status in ("error", "stopped") and not run.chunks:
    status.caption("failed" if run.status == "error" else "stopped before the first chunk")
    if run.status == "error":
        alert.error(md_escape(run.error or "the run failed"), icon=":material/error:")
else:
    # replayed or followed: said before what the run is (not in presentation mode: the screen's height is short,
    # and a replay shows the numbers the run computed)
    role = None if presenting else _role(run)
    # an upload's name is in no setting (a link cannot carry the file): said beside them
    upload = f" (the uploaded file {run.stream_name})" if run.cfg.dataset == data.UPLOAD else ""
    # a preset or a control changed after the run: its numbers are not the settings' above (said, not hidden: the
    # run stays readable until the next one)
    changed = None if presenting else live_page.changed_note(same=live_session.same_settings(run), ok=ctx.ok, running=running,
                                                             live=bool(ss.get(live_session.LIVE)))
    said = None if presenting else live_page.about_run(run.cfg, same=changed is None, upload=bool(upload))
    about = f"This run: {md_escape(said + upload)}" if said else ""
    line = [changed, about]  # what follows the role, which the live part redraws as visitors come and go
    if role or about or changed:
        run_caption.caption(" · ".join(t for t in (role and f"**{role}**", *line) if t))
    if not presenting and run.stream is not None and run.stream.coverage_note():  # never silent
        alert.info(f"The stream {md_escape(run.stream.coverage_note())}.", icon=":material/info:")
    if run.active:
        st.fragment(_live, run_every=live_page.POLL_S)(run, line if role else None, {})
    else:
        _show(run, run.snapshot()[0], {})
        if run.status == "error":
            alert.error(md_escape(run.error or "the run failed"), icon=":material/error:")
        if run.chunks:
            live_session.calibrate(run)
            kept = compare.remember(run.record())
            if kept is not None:
                run.compare_id = kept["id"]
            if summary_box is not None:  # (presentation mode may show another panel)
                summary(summary_box, run, presenting=presenting, drawn=_shown(run))
if not presenting:  # (the projector's screen holds one panel; a pinned baseline is still drawn under it)
    st.markdown(f"##### ({panels.letter(len(panels.PANELS))}) Compare runs")
    with st.container(key="compare_section"):
        compare.render(run.record() if run is not None and run.compare_id is not None else None)
        if not compare.history():
            st.caption(f"Every finished run of this session is kept here (the last {compare.MAX_RUNS}): pin one as "
                       "the baseline and its curves are drawn dimmed under the next runs' panels.")
