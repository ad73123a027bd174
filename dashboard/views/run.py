"""Live run: press Run, watch every chunk arrive, stop at any time, download the results.

Layout and session state only. The run is a :class:`dashboard.live_run.LiveRun` in
``st.session_state["run"]`` (this visitor only), which computes the chunks in a process of its own and
keeps each as soon as it is complete; this script only waits for new chunks and draws them, so a click
(Stop, a control, a page switch) interrupts it at once, even in the middle of a chunk that takes a
minute. The panels are those of :data:`dashboard.panels.PANELS`, laid out and redrawn one by one.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import streamlit as st

from dashboard import compare, data, link, live_page, panels, report
from dashboard import figures as F
from dashboard.controls import set_config
from dashboard.labels import errors_text, settings_text
from dashboard.live_chart import SHARED, draw_charts, mount, preload_plotly
from dashboard.live_run import LiveRun, duration_text
from dashboard.run_hub import ordinal, role_text
from dashboard.teaching import LESSONS, noise_cost_text
from dashboard.ui import md_escape, teach
from ncld_core.config import PRESETS
from ncld_core.limits import LIMITS
from ncld_core.eval.variants import ELM_VARIANTS
from ncld_core.model.cost import MEMORY_BUDGET_BYTES

ss = st.session_state
ctx = ss["ctx"]
PLOT_CONFIG = {"displaylogo": False, "modeBarButtonsToRemove": ["lasso2d", "select2d"]}

#: How often the waiting script thread looks at the run (seconds): a click interrupts it within this.
POLL_S = 0.1
#: The identity (``data.upload_identity``: name and digest) of the upload this session's run read (None: no upload).
RUN_UPLOAD = "run_upload"


def _start():
    """The server's run of these settings (dashboard.run_hub): replayed when computed for an earlier visitor,
    followed when being computed for another, else queued for a free slot. This session's previous run is
    stopped (unless other visitors follow it)."""
    cfg, upload = ss["ctx"].cfg, ss["ctx"].upload
    ss[RUN_UPLOAD] = data.upload_identity(upload)  # which file: no setting says (the caption compares it)
    ss["run"], ss["run_role"] = data.run_hub().start(
        data.session_id(), cfg, extra=ss[RUN_UPLOAD], build_stream=lambda: data.build_stream(cfg, upload))
    if ss["run_role"] == "computing":  # its chunk times calibrate the next estimates (a replay's were counted)
        ss[RUN_COST] = (ss["run"].token, ss["ctx"].cost)


#: ``(run token, the run's cost estimate)`` until the run's measured chunk times are given to the calibration.
RUN_COST = "run_cost"


def _calibrate(run):
    """A finished run's measured chunk times re-measure the speed the time estimates use (once per run)."""
    token, cost = ss.get(RUN_COST) or (None, None)
    if token != run.token or cost is None:
        return
    ss.pop(RUN_COST, None)
    if len(run.compute_ms) >= 2:  # chunk 0 only initialises: a chunk after it is needed
        data.time_calibration().observe(cost, [ms / 1000 for ms in run.compute_ms])


def _stop():
    ss[LIVE] = False  # the page waits for Run again: a knob moved after Stop starts nothing
    run = ss.get("run")
    if run is None:
        return
    data.run_hub().detach(data.session_id())  # stopped, unless other visitors follow it
    if run.active:  # others follow it: this visitor keeps what it has received, stopped
        ss["run"], ss["run_role"] = LiveRun.frozen(run, "stopped"), None


def _describe(cfg) -> str:
    """Every setting of the run that differs from the defaults (:func:`dashboard.labels.settings_text`)."""
    text = settings_text(cfg)
    return text if text == "the default settings" else f"the defaults, except {text}"


#: Run was pressed. The run starts in the script run the click triggers, once the sidebar has read every control
#: (dashboard/app.py renders it first), not in the button's callback: that sees ``ss["ctx"]`` of the last script
#: run that reached the sidebar's end, so a click arriving with a control's new value (during its rerun, under
#: load) started the previous settings (tests/test_dashboard_app.py: a new seed and the click in one script run).
START_REQUESTED = "start_requested"
#: Run was pressed in this session and Stop not since: a control changed then starts its run by itself
#: (:func:`dashboard.live_page.starts_by_itself`); a link alone never does.
LIVE = "live"


def _request_start():
    ss[START_REQUESTED] = True
    ss[LIVE] = True


def _same_settings(run) -> bool:
    """Whether ``run`` is of the settings on the controls (an upload: of the same file too)."""
    return run.cfg == ctx.cfg and (run.cfg.dataset != data.UPLOAD
                                   or ss.get(RUN_UPLOAD) == data.upload_identity(ctx.upload))


if ss.get(START_REQUESTED) and ctx.ok:
    _start()
elif live_page.starts_by_itself(live=bool(ss.get(LIVE)), ok=ctx.ok, run=ss.get("run"), same=_same_settings):
    _start()  # a knob moved on a live page: the new settings' run, the stale one stopped (RunHub.start)
# dropped once the run is started: a rerun arriving meanwhile (a control changed just after the click) interrupts
# the script inside _start, and the click would be lost with the flag
ss.pop(START_REQUESTED, None)
run = ss.get("run")
running = run is not None and run.active

#: The page's stylesheets: its layout, and presentation mode's (large type for a projector, one panel at a time).
STYLE, PRESENT_STYLE = (Path(__file__).resolve().parents[1] / "static" / n for n in ("run.css", "present.css"))
#: Plotly font size (px) of the figures in presentation mode.
PRESENT_FONT = 18
#: Presentation mode: the plot area's height as sent (px; panel (d) takes more with many rows), which the page
#: then fits to the height the screen has left (dashboard/live_chart.py) within PRESENT_PLOT_RANGE_PX; the plot
#: area of a categorical axis (panel (d)'s rows) keeps PRESENT_ROW_PX a row at least.
PRESENT_PLOT_PX = 135
PRESENT_PLOT_RANGE_PX = (90, 420)
PRESENT_ROW_PX = 46


def _step_panel(delta: int):
    keys = [p.key for p in panels.PANELS]
    cur = ss.get("present_panel") if ss.get("present_panel") in keys else keys[0]
    ss["present_panel"] = keys[(keys.index(cur) + delta) % len(keys)]


# --------------------------------------------------------------------------- guided lesson (presentation mode)
NO_LESSON = ""


def _go_to_step(at):
    """Show step ``at = (slug, k)`` (None: no lesson): the link follows, and so does the panel of the step."""
    link.set_lesson(at)
    if at is not None:
        step = LESSONS[at[0]].step(at[1])
        if step.panel or at[1] == LESSONS[at[0]].n_steps:
            ss["present_panel"] = step.panel or LESSONS[at[0]].panel
    ss["lesson_pick"] = at[0] if at else NO_LESSON


def _pick_lesson():
    slug = ss.get("lesson_pick") or None
    if slug is None:
        _go_to_step(None)
        return
    preset = LESSONS[slug].preset
    set_config(PRESETS[preset])  # the lesson runs its preset: every setting on a control
    ss["preset_applied"] = preset
    _go_to_step((slug, 1))


def _lesson_select():
    """The chooser of a lesson (presentation mode: on the page heading's line), its label hidden."""
    at = ss.get(link.LESSON)
    if ss.get("lesson_pick") != (at[0] if at else NO_LESSON):
        ss["lesson_pick"] = at[0] if at else NO_LESSON
    if at is not None and ss.get("lesson_shown") != at:  # opened by a link: its step's panel
        ss["lesson_shown"] = at
        step = LESSONS[at[0]].step(at[1])
        if step.panel:
            ss["present_panel"] = step.panel
    st.selectbox("Lesson", [NO_LESSON, *LESSONS], key="lesson_pick", on_change=_pick_lesson,
                 format_func=lambda s: "no lesson: choose the panels yourself" if s == NO_LESSON
                 else f"lesson: {LESSONS[s].preset}", label_visibility="collapsed",
                 help="A preset as a short lecture: the setting, what to watch, then what this run measured. "
                      "The link opens the same step.")


def _lesson_box():
    """With a lesson chosen, its current step: setting, what to watch, what the run measured (the step buttons are
    on the panel's line, :func:`present_panel`). Beside the panel on a wide screen, above it on a narrow one
    (dashboard/static/present.css)."""
    at = ss.get(link.LESSON)
    if at is None:
        return
    lesson, k = LESSONS[at[0]], at[1]
    shown = run if run is not None and run.cfg == ctx.cfg and run.chunks else None
    step = lesson.step(k, shown.result() if shown else None, shown.stream if shown else None, cfg=ctx.cfg)
    with st.container(border=True, key="lesson_step"):
        st.markdown(f"**{md_escape(lesson.preset)}** · step {k} of {lesson.n_steps}: **{md_escape(step.title)}**")
        st.markdown(step.text)


st.html(STYLE)
hd, tg = st.columns([4, 2], vertical_alignment="bottom")
if ss.get("presenting"):  # the page's heading gives its line to the lesson's chooser (the screen's height is short)
    with hd:
        _lesson_select()
else:
    hd.markdown("## Live run")
presenting = tg.toggle("Presentation mode", key="presenting",
                       help="For a projector: large type, one panel at a time (choose it, or step with "
                            "Previous / Next), the sidebar hidden; a panel, its caption and a lesson's step fit "
                            "1280 × 720, 1024 × 768 and 820 px wide screens without scrolling.")
if presenting:
    st.html(PRESENT_STYLE)
else:
    st.caption("Prequential test-then-train on a noisy stream: every chunk is scored against the ground truth, "
               "then learned from its noisy labels. Whatever a legend marks *oracle: hidden from the learner* (the "
               "true cardinality, change points and regimes, the true flip rates, a model trained on the clean "
               "labels) is drawn to judge the learner, which never sees it.")
b1, b2, b3 = st.columns([1, 1, 6], vertical_alignment="center")
b1.button("Run", type="primary", icon=":material/play_arrow:", disabled=(not ctx.ok) or running,
          on_click=_request_start, key="run_button", width="stretch")
b2.button("Stop", icon=":material/stop:", disabled=not running, on_click=_stop, key="stop_button", width="stretch")
with b3:
    status = st.container(key="run_status").empty()
run_caption = st.empty()
alert = st.empty()


def _expected_text(cost) -> str:
    """The settings' expected memory and time per chunk (the core's estimate), said before Run."""
    calibration = data.time_calibration()
    per, total = calibration.seconds_per_chunk(cost), calibration.seconds_total(cost)
    runs = calibration.n_runs
    speed = (f"this server's speed measured on its last {runs} run{'s' if runs > 1 else ''}" if runs
             else "this server's speed from one matrix product until a run has finished")
    mem = cost.memory_bytes / 1024**2
    mem_txt = f"{mem / 1024:.1f} GB" if mem >= 1024 else f"{mem:.0f} MB"
    return (f"Expected for these settings: about {mem_txt} of arrays per chunk (budget "
            f"{MEMORY_BUDGET_BYTES / 1024**3:.0f} GB) · about {per:.1f} s per chunk"
            + (f", {duration_text(total)} for {cost.n_chunks} chunks" if total is not None else "")
            + f" — an estimate from the array shapes and {speed}; "
              "a run's status replaces it with its measured chunk times.")


if ctx.ok and ctx.cost is not None and not presenting:
    st.container(key="run_estimate").caption(_expected_text(ctx.cost))
if not ctx.ok:
    st.warning(f"Run is disabled until these settings are fixed (see the sidebar): {errors_text(ctx.errors)}",
               icon=":material/block:")

# --------------------------------------------------------------------------- layout
slots = {}
sent = {}  # what each slot shows in this script run (see _put)
folds = {}  # presentation mode: a table slot -> the slot inside its expander, where _put writes (_put_table)
ALL = "all"
OWNER = run.token if run else None  # the run the graphs' mounts show (dashboard.live_chart.mount)
#: The choice of "(b)-(d) show the records of", kept outside the widget: presentation mode draws the widget
#: above its first panel only, and Streamlit forgets a widget's value in a run that does not draw it.
FOCUS = "focus_choice"


def _keep_focus():
    ss[FOCUS] = ss.get("focus_variant")


def _focus_options():
    """[ALL, the ELM variants] when there are several, else None (and the choice is dropped)."""
    cfg = run.cfg if run else ctx.cfg
    elm = [m for m in cfg.models if m in ELM_VARIANTS]
    if len(elm) < 2:
        ss.pop("focus_variant", None)
        ss.pop(FOCUS, None)
        return None
    return [ALL, *elm]


def _focus_choice(options) -> str:
    """The kept choice, else the default: the acting learner (ELM-O, the model the run acts with)."""
    if ss.get(FOCUS) in options:
        return ss[FOCUS]
    cfg = run.cfg if run else ctx.cfg
    acting = panels.acting_learner(cfg.models)
    return acting if acting in options else options[1]


def _focus(run) -> list:
    """The models whose estimates and detectors the per-variant panels draw (every one: the acting learner
    first, an oracle last, so that the heading and note of (b) speak of the learner)."""
    options = _focus_options()
    pick = None if options is None else _focus_choice(options)
    return [pick] if pick in run.models else panels.drawn_order(run.models)


def _default_rates(cfg) -> str:
    """What the drawn variants are told about the rates, said by a heading before the first record."""
    if any(m in ELM_VARIANTS and m != "ELM (plain)" for m in cfg.models):
        return cfg.model_rates
    return "ignore" if "ELM (plain)" in cfg.models else "known"  # ELM (plain) takes the rates as 0


def _panel_data(run=None, chunks=None) -> panels.PanelData:
    """What the panels draw: ``chunks`` (default: every chunk received) of ``run``; without a running
    run, no records (the headings then speak of the settings)."""
    if run is None or run.stream is None:
        return panels.PanelData(default_rates=_default_rates(run.cfg if run else ctx.cfg))
    stream = run.stream
    return panels.PanelData(
        chunks=list(run.chunks) if chunks is None else chunks, models=list(run.models),
        change_points=list(run.change_points), chunk_size=run.chunk_size, n_chunks=run.n_chunks,
        focus=_focus(run), show_paper=bool(ss.get("show_paper")), rho_pos=stream.rho_pos, rho_neg=stream.rho_neg,
        label_names=tuple(getattr(stream, "label_names", ()) or ()), default_rates=_default_rates(run.cfg),
        trusted_fraction=float(run.cfg.trusted_fraction))


def _graph_slot(name: str):
    """A live panel's placeholder, holding the mount of its graph."""
    slots[name] = st.empty()
    mount(slots[name], name, key=f"mount_{name}", owner=OWNER)


def _options():
    """Above the first per-variant panel: the paper's estimate on request; with several ELM variants, whose
    records the per-variant panels draw."""
    c1, c2 = st.columns([3, 2], vertical_alignment="center")
    c1.checkbox("show the paper's estimate", key="show_paper",
                help="Adds the paper's Eq. (card): importance weights clipped at 0, P_D fitted on the same "
                     "chunk; biased upwards, unlike the moment estimate it is drawn beside.")
    options = _focus_options()
    if options is None:
        return
    if ss.get("focus_variant") not in options:
        ss["focus_variant"] = _focus_choice(options)
    ss[FOCUS] = ss["focus_variant"]
    label = f"{panels.focus_span()} show the records of"
    # presentation mode: the label inside the box, on the checkbox's line (the screen's height is short)
    prefix = f"{label} " if presenting else ""
    c2.selectbox(label, options, key="focus_variant", on_change=_keep_focus,
                 label_visibility="collapsed" if presenting else "visible",
                 format_func=lambda m: prefix + ("every variant (identical ones share a line)" if m == ALL else m),
                 help="The variants' cardinality estimates and detectors agree when they are told the same "
                      "rates; with estimated rates they part after a drift they act on.")


def _heading(panel, where=None):
    """The panel's heading (a slot when it says what the records drawn show: :func:`draw` rewrites it)."""
    before = panels.PanelData(default_rates=_default_rates(run.cfg if run else ctx.cfg))  # no records yet
    text = "##### " + panels.heading(panel, before)
    if callable(panel.title):
        slots[f"{panel.key}_heading"] = (where or st).empty()
        slots[f"{panel.key}_heading"].markdown(text)
    else:
        (where or st).markdown(text)


def _body(panel):
    """The panel's container (``panel_<key>``): its caption, graph, note and table, as the panel has them;
    for the summary, the box its content goes in (returned)."""
    if panel.kind == "summary":
        return st.container(key=f"panel_{panel.key}").empty()  # one child: a new run's layout clears it
    with st.container(key=f"panel_{panel.key}"):
        if panel.caption is not None:
            slots[f"{panel.key}_caption"] = st.empty()
        if panel.figure is not None:
            _graph_slot(panel.key)
        if panel.note is not None:
            slots[f"{panel.key}_note"] = st.empty()
        if panel.table is not None:
            slots[f"{panel.key}_table"] = st.container(key=f"panel_{panel.key}_table").empty()
    return None


def _present_label(key: str) -> str:
    index = next(i for i, p in enumerate(panels.PANELS) if p.key == key)
    return f"({panels.letter(index)}) {panels.PANELS[index].label}"


#: The panel above which the choice of variants (and the paper's estimate) sit.
FIRST_PER_VARIANT = next((p.key for p in panels.PANELS if p.per_variant), None)
summary_box = None


def present_panel():
    """Presentation mode: the chooser of the panel, Previous / Next, and the panel shown (the summary's box when it
    is the summary)."""
    keys = [p.key for p in panels.PANELS]
    p1, p2, p3 = st.container(key="present_nav").columns([4, 1, 1], vertical_alignment="bottom")
    with p1:
        st.selectbox("Panel", keys, key="present_panel", format_func=_present_label, label_visibility="collapsed")
    at = ss.get(link.LESSON)
    if at is not None:  # a lesson steps through its panels: its step buttons take the panel buttons' place
        lesson, k = LESSONS[at[0]], at[1]
        p2.button("Previous step", icon=":material/chevron_left:", key="lesson_prev", disabled=k <= 1,
                  on_click=_go_to_step, args=((lesson.slug, k - 1),), width="stretch")
        p3.button("Next step", icon=":material/chevron_right:", key="lesson_next", disabled=k >= lesson.n_steps,
                  on_click=_go_to_step, args=((lesson.slug, k + 1),), width="stretch")
    else:
        p2.button("Previous", icon=":material/chevron_left:", on_click=_step_panel, args=(-1,), key="present_prev",
                  width="stretch")
        p3.button("Next", icon=":material/chevron_right:", on_click=_step_panel, args=(1,), key="present_next",
                  width="stretch")
    present = panels.by_key(ss.get("present_panel") or keys[0])
    _heading(present)
    if present.key == FIRST_PER_VARIANT:
        _options()
    return _body(present)


if presenting:
    # one panel, no explanation beside it (a lesson's step, when one is chosen); chosen or stepped through
    keys = [p.key for p in panels.PANELS]
    if ss.get("present_panel") not in keys:
        ss["present_panel"] = keys[0]
    where = st.container()
    if ss.get(link.LESSON) is not None:  # the panel and the lesson's step side by side (stacked when narrow)
        where, beside = st.container(key="present_with_lesson").columns([2, 1])
        with beside:
            _lesson_box()
    with where:
        summary_box = present_panel()
else:
    for panel in panels.PANELS:
        if panel.wide:  # the full width for the graph, its explanation beside the heading
            h, t = st.columns([3, 2], vertical_alignment="bottom")
            _heading(panel, h)
            with t:
                teach(panel.teaching, key=f"teach_{panel.key}")
            box = _body(panel)
        else:
            _heading(panel)
            left, right = st.columns([4, 1] if panel.kind == "summary" else [3, 2])
            with left:
                if panel.key == FIRST_PER_VARIANT:
                    _options()
                box = _body(panel)
            with right:
                teach(panel.teaching, key=f"teach_{panel.key}")
        if panel.kind == "summary":
            summary_box = box


def draw(run, chunks=None):
    """Redraw every live panel from ``chunks`` (default: the chunks received so far)."""
    shown = _panel_data(run, chunks)
    k = len(shown.chunks)  # a fresh key per redraw: two identical figures in one run are allowed
    base = compare.baseline_for(run.record())

    def make():
        figs = panels.figures(shown, keys=slots)  # presentation mode: the panel shown
        if base is not None:  # the pinned run, dimmed, under every panel
            figs = compare.overlay(figs, base, shown)
        if presenting:
            for fig in figs.values():
                _enlarge(fig)
        return figs

    # the same chunk drawn with the same options by another session (a class on one run): its figures as drawn;
    # a pinned run is the session's own (its history), never shared
    chunk = shown.chunks[-1] if shown.chunks and base is None else None
    figs = SHARED.figures(chunk, (k, tuple(shown.focus), shown.show_paper, tuple(sorted(slots)), presenting), make)
    # chunk: each graph says how many chunks it shows (the browser test's latency measurement)
    draw_charts(hub, slots, figs, key=f"figs_{k}", owner=OWNER, config=PLOT_CONFIG, chunk=k)
    for panel in panels.PANELS:  # then what the panels write beside their graphs
        key = panel.key
        if f"{key}_heading" in slots:
            _put(f"{key}_heading", "markdown", "##### " + panels.heading(panel, shown))
        for part in ("caption", "note"):
            if f"{key}_{part}" in slots:
                text = getattr(panel, part)(shown)
                if text:
                    _put(f"{key}_{part}", "caption", text)
        if f"{key}_table" in slots:
            table = panel.table(shown)
            if table is not None and not table.empty:
                # presentation mode: the table on request (the graph, its legend and caption fit the screen), in
                # an expander drawn only once there is a table (none when no variant estimates the rates)
                _put_table(f"{key}_table", table, scrolls=panel.table_scrolls,
                           folded=(panel.table_title or "table") if presenting else None)


def _put(slot: str, kind: str, content, **kw):
    """Write ``content`` into ``slot`` with its ``kind`` method (and options ``kw``), unless the slot already
    shows it in this script run: every element sent is one more update the page renders while the next
    chunk waits."""
    seen = (content.to_json() if hasattr(content, "to_json") else content, repr(sorted(kw.items())))
    if sent.get(slot) == (kind, seen):
        return
    sent[slot] = (kind, seen)
    getattr(folds.get(slot) or slots[slot], kind)(content, **kw)


def _put_table(slot: str, table, *, scrolls: bool, folded: str | None = None):
    """A panel's table: every row (a plain HTML table), or scrolling with its numbers to 4 decimals (as the
    sidebar's rate table), a column of true values marked as hidden from the learner; ``folded``: inside a closed
    expander of that title."""
    if not scrolls:
        kind, kw = "table", {"hide_index": True}
    else:
        kind, kw = "dataframe", dict(
            hide_index=True, width="stretch", height=220,
            column_config={c: st.column_config.NumberColumn(c + (f" ({F.ORACLE})" if c.endswith(" true") else ""),
                                                            format="%.4f")
                           for c in table.columns if table[c].dtype.kind == "f"})
    if folded is not None and slot not in folds:  # drawn once a script run: an open one stays open as chunks come
        with slots[slot].container(), st.expander(folded):
            folds[slot] = st.empty()
    _put(slot, kind, table, **kw)


def _enlarge(fig):
    """Presentation mode: the figure's type at PRESENT_FONT px, its legend under the plot laid out afresh for that
    type, and its plot's height left to the page to fit to the screen (``meta.fit``, drawn by
    dashboard/live_chart.py): the panel, its axes, legend and caption, and a lesson's step, fit 1280 x 720,
    1024 x 768 and 820 x 768 without scrolling (tests/test_dashboard_browser.py measures it)."""
    fig.update_layout(font=dict(size=PRESENT_FONT))
    fig.update_annotations(font_size=PRESENT_FONT)
    F.scale_subtitles(fig, PRESENT_FONT - 4)
    fig.update_layout(legend_font_size=PRESENT_FONT - 4)  # under the plot, in two columns: fewer lines
    fig.update_xaxes(tickfont_size=PRESENT_FONT - 2, title_font_size=PRESENT_FONT)
    fig.update_yaxes(tickfont_size=PRESENT_FONT - 2, title_font_size=PRESENT_FONT)
    meta = dict(fig.layout.meta) if isinstance(fig.layout.meta, dict) else {}
    fig.layout.meta = meta | {"plot_px": PRESENT_PLOT_PX}
    F.fit_legend(fig)  # laid out for every width: the page draws the one of the graph's (dashboard/live_chart.py)
    plot = fig.layout.meta["plot_px"]
    low, high = PRESENT_PLOT_RANGE_PX
    if fig.layout.yaxis and fig.layout.yaxis.type == "category" and fig.layout.yaxis.categoryarray:
        low = PRESENT_ROW_PX * len(fig.layout.yaxis.categoryarray)
    fig.layout.meta = dict(fig.layout.meta) | {"fit": dict(base=fig.layout.height, plot=plot, min=low, max=max(high, plot))}


def _role(run) -> str | None:
    """How this page's run came (followed, replayed), as of now: the other visitors showing it come and go."""
    # the watchers first: a run that ends in between then reads as ended (read the other way round, a run reaped
    # in between would say its first visitor had gone)
    others = data.run_hub().others_watching(data.session_id())
    return role_text(ss.get("run_role"), status=run.status, others=others)


def _loop(run, caption_rest=None):
    """Wait for the run's chunks and draw the newest; every wait reads the session state, which is where
    Streamlit interrupts the script for a click (Stop is handled by the rerun that follows). ``caption_rest``:
    the run caption's parts after the role, for a followed run (its role is redrawn with each chunk)."""
    shown = len(run.chunks)
    last_tick = None
    role = _role(run) if caption_rest is not None else None
    while True:
        ss.get("run")  # a yield point: a pending click interrupts the script here
        chunks, state = run.wait(shown, timeout=POLL_S)
        if len(chunks) != shown:
            t1 = time.perf_counter()
            shown = len(chunks)
            now = _role(run) if caption_rest is not None else None
            if now != role and now is not None:  # the visitor it was computed for left, or others came
                role = now
                run_caption.caption(" · ".join(t for t in (f"**{role}**", *caption_rest) if t))
            status.caption(run.status_text(len(chunks)))  # first: the status says which chunk is being drawn
            draw(run, chunks)
            run.note_drawn(time.perf_counter() - t1)
            ss["timings"] = run.timings()
            last_tick = None
        if state != "running":
            break
        # a slow chunk: say how long it has been computing (once a second)
        busy = int(run.computing_s())
        if busy >= 1 and busy != last_tick:
            last_tick = busy
            status.caption(run.status_text(len(chunks)) + f" · computing chunk {len(chunks) + 1}: {busy} s")


def _summary(run):
    if summary_box is None:  # presentation mode shows another panel
        return
    result = run.result()
    table = report.summary_table(result, readable=True)
    with summary_box.container():
        if table.empty or "Hamming loss" not in table.columns:
            st.info("No chunk was scored yet: chunk 0 only initialises the models, so the stream needs at "
                    "least two chunks.", icon=":material/info:")
            return
        partial = run.status != "done"
        if partial:
            st.caption(f"Partial results: the run {result.status}; the downloads say so.")
        special = {"seconds": "{:.2f}", "mean delay (chunks)": "{:.1f}", "firings": "{:.0f}", "detected": "{:.0f}",
                   "missed": "{:.0f}", "false alarms": "{:.0f}"}
        fmt = {c: special.get(c, "{:.4f}") for c in table.columns if table[c].dtype.kind == "f"}
        cost = result.noise_cost("average_precision", corrected=next(
            (m for m in ("ELM-O", "ELM-I", "ELM-II") if m in result.models), "ELM-O"))
        if cost is not None:
            st.caption(noise_cost_text(cost), help="The oracle learns the ground truth, which the learner never "
                                                   "has: it only measures what the label noise costs.")
        main_cols = ["variant", "Hamming loss", "Micro-F1", "Average precision", "GM", "detected", "missed",
                     "false alarms", "mean delay (chunks)", "seconds"]
        if presenting:  # a projector's 1024 px beside a lesson's step: the table without what says nothing here
            no_change = run.stream is not None and not run.stream.change_points
            main_cols = [c for c in main_cols if c != "seconds" and not (
                no_change and c in ("detected", "missed", "mean delay (chunks)"))]
        main_cols = [c for c in main_cols if c in table.columns]
        # st.table: a plain HTML table (readable by screen readers and the browser test)
        st.table(table[main_cols].style.format({k: v for k, v in fmt.items() if k in main_cols}, na_rep="–")
                 .hide(axis="index"))
        seconds = report.seconds_note(result.models)
        if presenting:  # (the downloads and the full table are on the page outside presentation mode)
            st.caption("Cumulative over the run. GM = √((1 − Hamming loss) × micro-F1).")
            return
        st.caption("Cumulative over the run. GM = √((1 − Hamming loss) × micro-F1), the paper's score of the β × γ "
                   "sweep; mean delay: chunks from a true change to the firing that detects it. "
                   + md_escape(seconds))
        with st.expander("All cumulative metrics"):
            st.dataframe(table.style.format(fmt, na_rep="–"), hide_index=True, width="stretch")
        cfg = run.cfg
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"ncld_{run.stream_name}_N{cfg.chunk_size}")
        d1, d2, d3 = st.columns(3)
        d1.download_button("Per-chunk CSV", data=lambda: report.records_csv(result), file_name=f"{stem}_chunks.csv",
                           mime="text/csv", on_click="ignore", icon=":material/download:", width="stretch")
        d2.download_button("Summary JSON", data=lambda: report.summary_json(result), file_name=f"{stem}_summary.json",
                           mime="application/json", on_click="ignore", icon=":material/download:", width="stretch")
        drawn = _panel_data(run)  # read now: the report is made when it is downloaded

        def _html():
            return report.html_report(f"ncld run on {run.stream_name}", cfg.to_dict(), report.run_figures(drawn), table,
                                      notes=" ".join(t for t in (_describe(cfg) + (f". {noise_cost_text(cost)}" if cost
                                                                                   else ""), seconds) if t),
                                      tables=report.run_tables(drawn), figure_notes=report.run_notes(drawn),
                                      status=result.status)

        d3.download_button("HTML report", data=_html, file_name=f"{stem}_report.html", mime="text/html",
                           on_click="ignore", icon=":material/download:", width="stretch")


# --------------------------------------------------------------------------- state machine
hub = st.empty()  # of no height: fetches plotly.js before Run, then carries each chunk's figures (draw_charts)
preload_plotly(hub)
if run is None:
    status.caption("Ready: press Run." if ctx.ok else "Waiting for the settings to be fixed: Run is disabled.")
    next(iter(slots.values()), st.empty()).info("Press **Run** to stream the configured data through the selected variants. "
                          "Presets in the sidebar fill every control.", icon=":material/info:")
else:
    if run.status == "starting":
        status.caption("starting · building the stream and the models…")
        while run.status == "starting":
            if not run.begin():  # queued, or another script thread is beginning it: wait (interruptible)
                place = run.queue_position()
                n = LIMITS.max_concurrent_runs
                status.caption(f"waiting: {ordinal(place)} in line · the server computes "
                               f"{n} run{'s' if n != 1 else ''} at once; this one starts when a run ends"
                               if place else "starting · building the stream and the models…")
                ss.get("run")
                time.sleep(POLL_S)
        if run.status == "error":
            st.rerun()  # redraw the buttons: Run usable again, Stop disabled; the reason is shown below
    if run.status == "error" and not run.chunks:
        status.caption("failed")
        alert.error(md_escape(run.error or "the run failed"), icon=":material/error:")
    elif run.status == "stopped" and not run.chunks:
        status.caption("stopped before the first chunk")
    elif run.status == "starting":
        status.caption("starting · building the stream and the models…")
    else:
        # replayed or followed: said before what the run is (not in presentation mode: the screen's height is short,
        # and a replay shows the numbers the run computed)
        role = None if presenting else _role(run)
        # an upload's name is in no setting (a link cannot carry the file): said beside them
        upload = f" (the uploaded file {run.stream_name})" if run.cfg.dataset == data.UPLOAD else ""
        about = "" if presenting else f"This run: {md_escape(_describe(run.cfg) + upload)}"
        # a preset or a control changed after the run: its numbers are not the settings' above (said, not hidden:
        # the run stays readable until the next one)
        same = _same_settings(run)
        # Run is disabled while a run is under way (this one, or one this page follows): Stop comes first
        changed = None if presenting else live_page.changed_note(same=same, ok=ctx.ok, running=running,
                                                                 live=bool(ss.get(LIVE)))
        line = [changed, about]  # what follows the role, which _loop redraws as visitors come and go
        if role or about or changed:
            run_caption.caption(" · ".join(t for t in (role and f"**{role}**", *line) if t))
        if not presenting and run.stream is not None and run.stream.coverage_note():  # never silent
            alert.info(f"The stream {md_escape(run.stream.coverage_note())}.", icon=":material/info:")
        chunks, _ = run.snapshot()
        status.caption(run.status_text(len(chunks)))  # before the panels: Stop is seen at once
        if chunks:
            draw(run, chunks)
        if run.status == "running":
            _loop(run, line if role else None)
            st.rerun()  # redraw the buttons (Run enabled, Stop disabled) and the summary
        if run.status == "error":
            alert.error(md_escape(run.error or "the run failed"), icon=":material/error:")
        if not run.active and run.chunks:
            _calibrate(run)
            kept = compare.remember(run.record())
            if kept is not None:
                run.compare_id = kept["id"]
            _summary(run)
if not presenting:  # (the projector's screen holds one panel; a pinned baseline is still drawn under it)
    st.markdown(f"##### ({panels.letter(len(panels.PANELS))}) Compare runs")
    with st.container(key="compare_section"):
        compare.render(run.record() if run is not None and run.compare_id is not None else None)
        if not compare.history():
            st.caption(f"Every finished run of this session is kept here (the last {compare.MAX_RUNS}): pin one as "
                       "the baseline and its curves are drawn dimmed under the next runs' panels.")
