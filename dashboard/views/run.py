"""Live run: press Run, watch every chunk arrive, stop at any time, download the results.

The run lives in ``st.session_state["run"]`` (this visitor only). The runner's generator is
advanced in a process of its own (``ncld_core.eval.chunk_process``, started by a fork server;
where the platform has none, in a worker thread), one chunk per request of a relay thread, which
stores each ChunkResult under the run's lock as soon as it is complete; nothing else ever advances
the generator. The script thread only waits for new chunks and draws them, so a click (Stop, a
control, a page switch) interrupts it at once, even in the middle of a chunk that takes a minute:
Stop marks the run stopped and kills the process, every completed chunk is kept and the chunk
being computed is discarded (a worker thread instead finishes it and drops it). The relay asks
for no new chunk while no page has shown the run for a few seconds (another page, a closed tab);
showing the Live run again resumes it, and a run left alone for ten minutes is stopped.
"""

from __future__ import annotations

import os
import re
import statistics
import threading
import time
import uuid

import streamlit as st

from dashboard import compare, data, report
from dashboard import figures as F
from dashboard.controls import label_of
from dashboard.live_chart import draw_charts, mount, preload_plotly
from dashboard.teaching import detector_label, noise_cost_text
from dashboard.ui import md_escape, teach
from ncld_core.config import SYNTHETIC_DEFAULT_LENGTH
from ncld_core.eval.chunk_process import ChunkProcess, advance, process_context
from ncld_core.eval.runner import RunResult
from ncld_core.eval.variants import ELM_VARIANTS
from ncld_core.model.cost import MEMORY_BUDGET_BYTES, extrapolate
from ncld_core.model.flip_rates import estimate_errors

ss = st.session_state
ctx = ss["ctx"]
PLOT_CONFIG = {"displaylogo": False, "modeBarButtonsToRemove": ["lasso2d", "select2d"]}


#: The worker pauses after its chunk when no page has shown the run for this long (seconds).
IDLE_S = 5.0
#: How often the waiting script thread looks at the run (seconds): a click interrupts it within this.
POLL_S = 0.1


def _halt(run):
    """Mark ``run`` stopped (if it still runs), end the chunk being computed; never waits for it."""
    with run["lock"]:
        if run["status"] in ("starting", "running"):
            run["status"] = "stopped"
            run["t_stop"] = time.perf_counter()
        run["cond"].notify_all()
        proc = run.get("proc")
    if proc is not None:
        proc.kill()  # its chunk is discarded; the relay thread then closes the pipe


def _start():
    old = ss.get("run")
    if old is not None:  # a previous run's worker may still be computing a chunk: it discards it
        _halt(old)
    cfg = ss["ctx"].cfg
    lock = threading.Lock()
    ss["run"] = {"status": "starting", "token": uuid.uuid4().hex, "cfg": cfg, "upload": ss["ctx"].upload,
                 "t_click": time.perf_counter(), "lock": lock, "cond": threading.Condition(lock), "chunks": [], "update_ms": [], "compute_ms": [],
                 "first_plot_s": None, "n_chunks": 0, "chunk_size": cfg.chunk_size, "models": [],
                 "change_points": [], "stream_s": 0.0, "result": None, "seen": time.monotonic()}


def _stop():
    run = ss.get("run")
    if run:
        _halt(run)


def _describe(cfg) -> str:
    noise = {"none": "no noise", "range": f"flip rates ~ U[{cfg.rho_low:g}, {cfg.rho_high:g}]",
             "table": "flip-rate table"}[cfg.noise]
    n = cfg.n_instances or (SYNTHETIC_DEFAULT_LENGTH if cfg.dataset == "synthetic" else "all")
    sched = cfg.schedule or "no drift"
    return (f"{cfg.dataset} · {n} instances in chunks of {cfg.chunk_size} · {noise} · {sched} · "
            f"β={cfg.beta:g} γ={cfg.gamma:g} δ={cfg.delta:g} α={cfg.alpha:g} L={cfg.n_hidden} K={cfg.n_neighbors} · "
            f"acting detector: {detector_label(cfg.detector)}"
            + (f" · compared: {', '.join(detector_label(m) for m in cfg.monitors)}" if cfg.monitors else ""))


run = ss.get("run")
running = bool(run) and run["status"] in ("starting", "running")

# Run and Stop keep their labels at any width (820 px included): their columns never shrink below the label.
# Every other label in the page wraps where its column is narrow instead of being cut to "…" (Streamlit's
# default for widget and button labels).
LAYOUT_CSS = """<style>
[data-testid="stColumn"]:has(.st-key-run_button), [data-testid="stColumn"]:has(.st-key-stop_button) {
  min-width: 6.5rem; flex: 0 0 auto; width: auto; }
.st-key-run_button button, .st-key-stop_button button { white-space: nowrap; }
.stMainBlockContainer .stMarkdownEllipsis, .stMainBlockContainer .stMarkdownEllipsis p {
  white-space: normal; overflow: visible; text-overflow: clip; }
</style>"""
# Presentation mode: large type for a projector, one panel at a time, no explanations beside the panels.
PRESENT_CSS = """<style>
.stMainBlockContainer { font-size: 1.3rem; }
.stMainBlockContainer p, .stMainBlockContainer li, .stMainBlockContainer td, .stMainBlockContainer th,
.stMainBlockContainer button, .stMainBlockContainer label { font-size: 1.3rem !important; }
.stMainBlockContainer h2 { font-size: 2.4rem; }
.stMainBlockContainer h5 { font-size: 1.8rem; }
.stMainBlockContainer [data-testid="stCaptionContainer"] p { font-size: 1.15rem !important; }
.stMainBlockContainer { padding-top: 3.5rem; max-width: 100%; }
section[data-testid="stSidebar"] { display: none; }
.st-key-present_prev button, .st-key-present_next button { white-space: nowrap; }
.st-key-present_panel input { font-size: 1.3rem; }
[data-testid="stColumn"]:has(.st-key-present_prev), [data-testid="stColumn"]:has(.st-key-present_next) {
  min-width: 8.5rem; flex: 0 0 auto; width: auto; }
</style>"""
#: Presentation mode's panels, in order: (key, the selector's label).
PRESENT_PANELS = (("metrics", "(a) quality"), ("cardinality", "(b) cardinality"), ("threshold", "(c) drift tests"),
                  ("timeline", "(d) firings"), ("rates", "(e) flip rates"), ("summary", "(f) summary"))
#: Plotly font size (px) of the figures in presentation mode.
PRESENT_FONT = 18


def _step_panel(delta: int):
    keys = [k for k, _ in PRESENT_PANELS]
    cur = ss.get("present_panel") if ss.get("present_panel") in keys else keys[0]
    ss["present_panel"] = keys[(keys.index(cur) + delta) % len(keys)]


st.html(LAYOUT_CSS)
hd, tg = st.columns([4, 2], vertical_alignment="bottom")
hd.markdown("## Live run")
presenting = tg.toggle("Presentation mode", key="presenting",
                       help="For a projector: large type, one panel at a time (choose it, or step with "
                            "Previous / Next), the sidebar hidden; readable at 1024 × 768.")
if presenting:
    st.html(PRESENT_CSS)
else:
    st.caption("Prequential test-then-train on a noisy stream: every chunk is scored against the ground truth, "
               "then learned from its noisy labels. Whatever a legend marks *oracle: hidden from the learner* (the "
               "true cardinality, change points and regimes, the true flip rates, a model trained on the clean "
               "labels) is drawn to judge the learner, which never sees it.")
b1, b2, b3 = st.columns([1, 1, 6], vertical_alignment="center")
b1.button("Run", type="primary", icon=":material/play_arrow:", disabled=(not ctx.ok) or running,
          on_click=_start, key="run_button", width="stretch")
b2.button("Stop", icon=":material/stop:", disabled=not running, on_click=_stop, key="stop_button", width="stretch")
with b3:
    status = st.container(key="run_status").empty()
run_caption = st.empty()
alert = st.empty()


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def _expected_text(cost) -> str:
    """The settings' expected memory and time per chunk (the core's estimate), said before Run."""
    per = cost.seconds_per_chunk(data.flops_rate())
    total = cost.seconds_total(data.flops_rate())
    mem = cost.memory_bytes / 1024**2
    mem_txt = f"{mem / 1024:.1f} GB" if mem >= 1024 else f"{mem:.0f} MB"
    return (f"Expected for these settings: about {mem_txt} of arrays per chunk (budget "
            f"{MEMORY_BUDGET_BYTES / 1024**3:.0f} GB) · about {per:.1f} s per chunk"
            + (f", {_duration(total)} for {cost.n_chunks} chunks" if total is not None else "")
            + " — an estimate from the array shapes, right within a factor of about 2; "
              "a run's status replaces it with its measured chunk times.")


if ctx.ok and ctx.cost is not None and not presenting:
    st.container(key="run_estimate").caption(_expected_text(ctx.cost))
if not ctx.ok:
    fix = "; ".join(f"**{md_escape(label_of(k))}**: {md_escape(v)}" for k, v in ctx.errors.items())
    st.warning(f"Run is disabled until these settings are fixed (see the sidebar): {fix}",
               icon=":material/block:")

# --------------------------------------------------------------------------- layout
slots = {}
sent = {}  # what each slot shows in this script run (see _put)
ALL = "all"
OWNER = run.get("token") if run else None  # the run the graphs' mounts show (dashboard.live_chart.mount)


def _graph_slot(name: str):
    """A live panel's placeholder, holding the mount of its graph."""
    slots[name] = st.empty()
    mount(slots[name], name, key=f"mount_{name}", owner=OWNER)


def _rates_slots():
    """Panel (e): what the estimates are, their graph, the per-label table."""
    with st.container(key="panel_rates"):
        slots["rates_caption"] = st.empty()
        _graph_slot("rates")
        slots["rates_table"] = st.empty()


def _panel_options():
    """Above panel (b): the paper's estimate on request; with several ELM variants, whose records (b)-(d) draw."""
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
    c2.selectbox("(b)–(d) show the records of", options, key="focus_variant", on_change=_keep_focus,
                 format_func=lambda m: "every variant (identical ones share a line)" if m == ALL else m,
                 help="The variants' cardinality estimates and detectors agree when they are told the same "
                      "rates; with estimated rates they part after a drift they act on.")


#: The choice of "(b)-(d) show the records of", kept outside the widget: presentation mode draws the widget
#: on panel (b) only, and Streamlit forgets a widget's value in a run that does not draw it.
FOCUS = "focus_choice"


def _keep_focus():
    ss[FOCUS] = ss.get("focus_variant")


def _focus_options():
    """[ALL, the ELM variants] when there are several, else None (and the choice is dropped)."""
    cfg = run["cfg"] if run else ctx.cfg
    elm = [m for m in cfg.models if m in ELM_VARIANTS]
    if len(elm) < 2:
        ss.pop("focus_variant", None)
        ss.pop(FOCUS, None)
        return None
    return [ALL, *elm]


def _focus_choice(options) -> str:
    """The kept choice, else the default: variants that estimate their own rates part after a drift they act
    on, so one at a time; otherwise every variant."""
    if ss.get(FOCUS) in options:
        return ss[FOCUS]
    cfg = run["cfg"] if run else ctx.cfg
    return options[1] if cfg.model_rates == "estimate" else ALL


def _focus(run) -> list:
    """The models whose estimates and detectors panels (b)-(d) draw."""
    options = _focus_options()
    pick = None if options is None else _focus_choice(options)
    return [pick] if pick in run["models"] else run["models"]


def _cardinality_heading(chunks=(), models=()) -> str:
    """Panel (b)'s heading: what its band is for the records drawn (before any, for the settings)."""
    cfg = run["cfg"] if run else ctx.cfg
    if any(m in ELM_VARIANTS and m != "ELM (plain)" for m in cfg.models):
        default = cfg.model_rates
    else:  # ELM (plain) takes the rates as 0; baselines draw no estimate
        default = "ignore" if "ELM (plain)" in cfg.models else "known"
    return "##### (b) " + F.cardinality_title(chunks, models, default_mode=default)


PANELS = (("metrics", "(a) Prediction quality per variant"),
          ("cardinality", None),  # the heading says what the band is: see _cardinality_heading
          ("threshold", "(c) Drift tests: each detector's statistic ÷ threshold (fires above 1)"),
          ("timeline", "(d) Each detector's firings against the true change points"))
summary_box = None
if presenting:
    # one panel, the full width, no explanation beside it; chosen or stepped through
    if ss.get("present_panel") not in dict(PRESENT_PANELS):
        ss["present_panel"] = PRESENT_PANELS[0][0]
    p1, p2, p3 = st.columns([4, 1, 1], vertical_alignment="bottom")
    with p1:
        st.selectbox("Panel", [k for k, _ in PRESENT_PANELS], key="present_panel",
                     format_func=dict(PRESENT_PANELS).get, label_visibility="collapsed")
    p2.button("Previous", icon=":material/chevron_left:", on_click=_step_panel, args=(-1,), key="present_prev",
              width="stretch")
    p3.button("Next", icon=":material/chevron_right:", on_click=_step_panel, args=(1,), key="present_next",
              width="stretch")
    shown = ss.get("present_panel") or PRESENT_PANELS[0][0]
    if shown == "cardinality":
        slots["cardinality_heading"] = st.empty()
        slots["cardinality_heading"].markdown(_cardinality_heading())
        _panel_options()
    elif shown == "rates":
        st.markdown("##### (e) Flip rates: estimated against the true rates (oracle: hidden from the learner)")
    elif shown == "summary":
        st.markdown("##### (f) Summary")
    else:
        st.markdown(f"##### {dict(PANELS)[shown]}")
    if shown == "summary":
        summary_box = st.container(key="panel_summary").empty()  # one child: a new run's layout clears it
    elif shown == "rates":
        _rates_slots()
    else:
        with st.container(key=f"panel_{shown}"):
            _graph_slot(shown)
    if shown == "cardinality":
        slots["cardinality_note"] = st.empty()
    if shown == "timeline":
        slots["detections"] = st.container(key="panel_detections").empty()
else:
    for name, title in PANELS:
        if name == "metrics":
            # three subplots side by side: panel (a) takes the full width, its explanation beside the heading
            h, t = st.columns([3, 2], vertical_alignment="bottom")
            h.markdown(f"##### {title}")
            with t:
                teach(name)
            with st.container(key=f"panel_{name}"):
                _graph_slot(name)
            continue
        if name == "cardinality":
            slots["cardinality_heading"] = st.empty()
            slots["cardinality_heading"].markdown(_cardinality_heading())
        else:
            st.markdown(f"##### {title}")
        left, right = st.columns([3, 2])
        with left:
            if name == "cardinality":
                _panel_options()
            with st.container(key=f"panel_{name}"):
                _graph_slot(name)
            if name == "cardinality":
                slots["cardinality_note"] = st.empty()
            if name == "timeline":
                slots["detections"] = st.container(key="panel_detections").empty()
        with right:
            teach(name)
    st.markdown("##### (e) Flip rates: estimated against the true rates (oracle: hidden from the learner)")
    rl, rr = st.columns([3, 2])
    with rl:
        _rates_slots()
    with rr:
        teach("rates")
    st.markdown("##### (f) Summary")
    sl, sr = st.columns([4, 1])
    with sl:
        summary_box = st.container(key="panel_summary").empty()  # one child: a new run's layout clears it
    with sr:
        teach("summary")


def _info(run, chunks=None):
    return (run["chunks"] if chunks is None else chunks, run["models"], run["change_points"], run["chunk_size"],
            run["n_chunks"])


def draw(run, chunks=None):
    """Redraw every live panel from ``chunks`` (default: the chunks received so far)."""
    args = _info(run, list(run["chunks"]) if chunks is None else chunks)
    chunks, models, cps, size, n = args
    focus = _focus(run)
    k = len(chunks)  # a fresh key per redraw: two identical figures in one run are allowed
    makers = {
        "metrics": lambda: F.metrics_figure(*args),
        "cardinality": lambda: F.cardinality_figure(chunks, focus, cps, size, n, show_paper=bool(ss.get("show_paper"))),
        "threshold": lambda: F.detector_figure(chunks, focus, cps, size, n),
        "timeline": lambda: F.timeline_figure(chunks, focus, cps, size, n),
    }
    figs = {name: make() for name, make in makers.items() if name in slots}  # presentation mode: one panel
    base = compare.baseline_for(run)
    if base is not None:  # the pinned run, dimmed, under every panel
        figs = compare.overlay(figs, base, size, n, focus, cps)
    rates_fig, rates_text = _rates_panel(run, chunks) if "rates" in slots else (None, None)
    if rates_fig is not None:
        figs["rates"] = rates_fig
    if presenting:
        for fig in figs.values():
            _enlarge(fig)
    # chunk: each graph says how many chunks it shows (the browser test's latency measurement)
    draw_charts(hub, slots, figs, key=f"figs_{k}", owner=OWNER, config=PLOT_CONFIG, chunk=k)
    if rates_text is not None:
        rates_text()
    if "cardinality" in slots:
        _put("cardinality_heading", "markdown", _cardinality_heading(chunks, focus))
        note = F.cardinality_note(chunks, focus)
        if note:
            _put("cardinality_note", "caption", note)
    if "detections" in slots and F.detecting_models(chunks, focus):
        _put("detections", "table", F.detection_table(chunks, focus, cps, size), hide_index=True)


def _put(slot: str, kind: str, content, **kw):
    """Write ``content`` into ``slot`` with its ``kind`` method (and options ``kw``), unless the slot already
    shows it in this script run: every element sent is one more update the page renders while the next
    chunk waits."""
    seen = (content.to_json() if hasattr(content, "to_json") else content, repr(sorted(kw.items())))
    if sent.get(slot) == (kind, seen):
        return
    sent[slot] = (kind, seen)
    getattr(slots[slot], kind)(content, **kw)


def _enlarge(fig):
    """Presentation mode: the figure's type at PRESENT_FONT px, and taller (the panel has the page to itself)."""
    fig.update_layout(font=dict(size=PRESENT_FONT), height=max(fig.layout.height or 340, 460))
    fig.update_annotations(font_size=PRESENT_FONT)
    F.scale_subtitles(fig, PRESENT_FONT - 4)
    fig.update_layout(legend_font_size=PRESENT_FONT - 2)
    fig.update_xaxes(tickfont_size=PRESENT_FONT - 2, title_font_size=PRESENT_FONT)
    fig.update_yaxes(tickfont_size=PRESENT_FONT - 2, title_font_size=PRESENT_FONT)


def _rates_panel(run, chunks):
    """Panel (e): its figure (None when no variant estimates its rates) and a function writing its caption
    and per-label table (called after the figures are sent: they come first to the page)."""
    estimating = [m for m in run["models"]
                  if any(m in c.diagnostics and c.diagnostics[m].estimates_rates for c in chunks)]
    if not estimating:
        return None, lambda: _put("rates_caption", "caption", "No variant estimates its flip rates in this run: "
                                  "set *The models are told* to *nothing (estimate the rates)* in the sidebar.")
    stream = run["stream"]
    over_time, per_label = estimate_errors(chunks, estimating[0], stream.rho_pos, stream.rho_neg)
    others = estimating[1:]
    names = list(getattr(stream, "label_names", ()) or [])
    if names and len(names) == len(per_label):
        per_label["label"] = names

    def write():
        _put("rates_caption", "caption", f"{estimating[0]}'s estimates"
             + (f" ({', '.join(others)} estimate their own; they part from these after a drift they act on)."
                if others else "."))
        # the rates as the model holds them (4 decimals, as the sidebar's table)
        _put("rates_table", "dataframe", per_label, hide_index=True, width="stretch", height=220,
             column_config={c: st.column_config.NumberColumn(
                 c + (f" ({F.ORACLE})" if c.endswith(" true") else ""), format="%.4f")
                 for c in per_label.columns if c != "label"})

    return F.flip_rate_figure(over_time, n_chunks=run["n_chunks"]), write


def _status_text(run, k=None) -> str:
    k = len(run["chunks"]) if k is None else k
    n = run["n_chunks"]
    upd = run["update_ms"]
    if run["status"] == "running":
        last_u = upd[-1] if upd else 0
        last_c = run["compute_ms"][-1] if run["compute_ms"] else 0
        left = (f" · about {_duration(extrapolate([c / 1000 for c in run['compute_ms'][:k]], n))} left"
                if 0 < k < n else "")
        return f"running · chunk {k}/{n} · update {last_u:.0f} ms · compute {last_c:.0f} ms{left}"
    med = statistics.median(upd) if upd else float("nan")
    first = run.get("first_plot_s")
    first_txt = (f" · first plot after {first:.2f} s (stream ready in {run['stream_s']:.2f} s)"
                 if first is not None else "")
    word = {"done": "done", "stopped": "stopped", "error": "failed"}.get(run["status"], run["status"])
    return (f"{word} · chunk {k}/{n} · median update {med:.0f} ms · "
            f"median compute {statistics.median(run['compute_ms']) if run['compute_ms'] else float('nan'):.0f} ms"
            f"{first_txt}")


def _begin(run):
    """Build the stream (cached) and the runner, start the run's process (or worker thread) and its relay.

    Called by one script thread only (``run["begun"]``); the lock is not held while the stream is
    built or the process started, so a Stop meanwhile returns at once (the process is then closed).
    """
    cfg = run["cfg"]
    t0 = time.perf_counter()
    proc = None
    try:
        stream = data.build_stream(cfg, run.get("upload"))
        runner = cfg.runner()
        if _PROCESSES is not None:
            # A process of its own: no GIL shared with the page, and Stop can end a chunk at once (kill).
            proc = ChunkProcess(runner, stream, context=_PROCESSES)
            worker = threading.Thread(target=_relay, args=(run, proc), name="ncld-relay", daemon=True)
        else:  # no fork server on this platform: a thread computes (Stop then waits for no chunk, but it finishes)
            worker = threading.Thread(target=_work, args=(run, runner.iter_run(stream)), name="ncld-run", daemon=True)
    except Exception as exc:  # noqa: BLE001 - bad input is shown inline, never as a traceback
        with run["lock"]:
            if run["status"] == "starting":
                run.update(status="error", error=str(exc) if isinstance(exc, ValueError) else
                           f"{type(exc).__name__}: {exc}")
        return
    with run["lock"]:
        if run["status"] != "starting":  # stopped while the stream was built
            if proc is not None:
                proc.close()
            return
        run.update(
            status="running", stream=stream, chunks=[], update_ms=[], compute_ms=[], first_plot_s=None,
            chunk_size=cfg.chunk_size, n_chunks=stream.n_chunks(cfg.chunk_size),
            change_points=[(cp.position, cp.kind) for cp in stream.change_points],
            models=list(cfg.models) + (["all-negative", "noisy-prior"] if cfg.references else []),
            stream_name=stream.name, result=None, stream_s=time.perf_counter() - t0, seen=time.monotonic(),
            t_chunk=time.perf_counter(), proc=proc, worker=worker,
        )
    worker.start()


#: Chunks are computed in a process started by a fork server where the platform has one (else in a
#: thread). NCLD_DASHBOARD_THREADS=1 forces the thread (what platforms without one use; tested).
_PROCESSES = None if os.environ.get("NCLD_DASHBOARD_THREADS") else process_context()
#: A paused run (no page showed it) is stopped, and its process ended, after this long (seconds).
ABANDON_S = 600.0


def _wait_shown(run) -> bool:
    """Under the lock: wait while no page shows the run; False when the run no longer runs."""
    cond = run["cond"]
    while run["status"] == "running" and time.monotonic() - run["seen"] > IDLE_S:
        if time.monotonic() - run["seen"] > ABANDON_S:
            run["status"] = "stopped"
            break
        cond.wait(1.0)
    return run["status"] == "running"


def _store(run, kind, value, seconds) -> bool:
    """Under the lock: keep what the worker computed, unless the run was stopped meanwhile (then it is
    discarded). True while the run goes on."""
    if run["status"] != "running":
        return False
    if kind == "chunk":
        run["chunks"].append(value)
        run["compute_ms"].append(1000 * seconds)
    elif kind == "done":
        run["status"] = "done"
    else:
        run.update(status="error", error=value)
    run["cond"].notify_all()
    return kind == "chunk"


def _drive(run, compute):
    """The worker's loop: while a page shows the run, ``compute()`` one chunk (``(kind, value, seconds)``,
    see :func:`~ncld_core.eval.chunk_process.advance`) and store it; a result arriving after a Stop is discarded."""
    cond = run["cond"]
    try:
        while True:
            with cond:
                if not _wait_shown(run):
                    return
                run["t_chunk"] = time.perf_counter()
            result = compute()
            with cond:
                if not _store(run, *result):
                    return
    finally:
        with cond:
            cond.notify_all()


def _work(run, gen):
    """No fork on this platform: this thread alone advances the generator (a chunk finished after a
    Stop is discarded; the CPU finishes it in the background)."""
    _drive(run, lambda: advance(gen))


def _relay(run, proc):
    """In the server: ask the process for each chunk and store it, unless the run was stopped meanwhile
    (then the process has been killed, the chunk it was computing is lost, and nothing is stored)."""
    try:
        _drive(run, proc.next)
    finally:
        proc.close()


def _loop(run):
    """Wait for the worker's chunks and draw the newest; every wait reads the session state, which is
    where Streamlit interrupts the script for a click (Stop is handled by the rerun that follows)."""
    cond = run["cond"]
    shown = len(run["chunks"])
    last_tick = None
    while True:
        ss.get("run")  # a yield point: a pending click interrupts the script here
        with cond:
            run["seen"] = time.monotonic()
            cond.notify_all()  # wakes a worker paused while no page showed the run
            cond.wait_for(lambda: len(run["chunks"]) != shown or run["status"] != "running", timeout=POLL_S)
            chunks, state = list(run["chunks"]), run["status"]
        if len(chunks) != shown:
            t1 = time.perf_counter()
            shown = len(chunks)
            status.caption(_status_text(run, len(chunks)))  # first: the status says which chunk is being drawn
            draw(run, chunks)
            t2 = time.perf_counter()
            run["update_ms"].append(1000 * (t2 - t1))
            if run["first_plot_s"] is None:
                run["first_plot_s"] = t2 - run["t_click"]
            ss["timings"] = {"first_plot_s": run["first_plot_s"], "stream_s": run["stream_s"],
                             "update_ms": list(run["update_ms"]), "compute_ms": list(run["compute_ms"])}
            last_tick = None
        if state != "running":
            break
        # a slow chunk: say how long it has been computing (once a second)
        busy = int(time.perf_counter() - run.get("t_chunk", time.perf_counter()))
        if busy >= 1 and busy != last_tick:
            last_tick = busy
            status.caption(_status_text(run, len(chunks)) + f" · computing chunk {len(chunks) + 1}: {busy} s")


def _result(run):
    if run.get("result") is None or len(run["result"].chunks) != len(run["chunks"]):
        run["result"] = RunResult(list(run["chunks"]), run["stream"], run["chunk_size"], config=run["cfg"].to_dict(),
                                  n_chunks=run["n_chunks"])
    return run["result"]


def _summary(run):
    if summary_box is None:  # presentation mode shows another panel
        return
    result = _result(run)
    table = report.summary_table(result, readable=True)
    with summary_box.container():
        if table.empty or "Hamming loss" not in table.columns:
            st.info("No chunk was scored yet: chunk 0 only initialises the models, so the stream needs at "
                    "least two chunks.", icon=":material/info:")
            return
        partial = run["status"] != "done"
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
        main_cols = [c for c in ("variant", "Hamming loss", "Micro-F1", "Average precision", "GM", "detected",
                                 "missed", "false alarms", "mean delay (chunks)", "seconds") if c in table.columns]
        # st.table: a plain HTML table (readable by screen readers and the browser test)
        st.table(table[main_cols].style.format({k: v for k, v in fmt.items() if k in main_cols}, na_rep="–")
                 .hide(axis="index"))
        with st.expander("All cumulative metrics"):
            st.dataframe(table.style.format(fmt, na_rep="–"), hide_index=True, width="stretch")
        cfg = run["cfg"]
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"ncld_{run['stream_name']}_N{cfg.chunk_size}")
        d1, d2, d3 = st.columns(3)
        d1.download_button("Per-chunk CSV", data=lambda: report.records_csv(result), file_name=f"{stem}_chunks.csv",
                           mime="text/csv", on_click="ignore", icon=":material/download:", width="stretch")
        d2.download_button("Summary JSON", data=lambda: report.summary_json(result), file_name=f"{stem}_summary.json",
                           mime="application/json", on_click="ignore", icon=":material/download:", width="stretch")

        def _html():
            figs = report.run_figures(*_info(run), show_paper=bool(ss.get("show_paper")), focus=_focus(run))
            det = F.detection_table(run["chunks"], _focus(run), run["change_points"], run["chunk_size"])
            card = F.cardinality_title(run["chunks"], _focus(run))
            return report.html_report(f"ncld run on {run['stream_name']}", cfg.to_dict(), figs, table,
                                      notes=_describe(cfg) + (f". {noise_cost_text(cost)}" if cost else ""), tables={"Drift detection per detector": det},
                                      figure_notes={card: F.cardinality_note(run["chunks"], _focus(run))},
                                      status=result.status)

        d3.download_button("HTML report", data=_html, file_name=f"{stem}_report.html", mime="text/html",
                           on_click="ignore", icon=":material/download:", width="stretch")


# --------------------------------------------------------------------------- state machine
hub = st.empty()  # of no height: fetches plotly.js before Run, then carries each chunk's figures (draw_charts)
preload_plotly(hub)
if run is None:
    status.caption("Ready: press Run.")
    next(iter(slots.values()), st.empty()).info("Press **Run** to stream the configured data through the selected variants. "
                          "Presets in the sidebar fill every control.", icon=":material/info:")
else:
    if run["status"] == "starting":
        status.caption("starting · building the stream and the models…")
        while run["status"] == "starting":
            with run["lock"]:  # one script thread begins the run; the lock is not held while it builds
                mine = run["status"] == "starting" and not run.get("begun")
                if mine:
                    run["begun"] = True
            if not mine:  # another script thread is beginning it: wait (interruptible)
                ss.get("run")
                time.sleep(POLL_S)
                continue
            try:
                _begin(run)
            finally:
                with run["lock"]:
                    if run["status"] == "starting":
                        # interrupted while building (a rerun raised through it): the next script run begins it
                        # again; before, the flag stayed set and every later run waited for nobody
                        run["begun"] = False
        if run["status"] == "error":
            st.rerun()  # redraw the buttons: Run usable again, Stop disabled; the reason is shown below
    if run["status"] == "error" and not run.get("chunks"):
        status.caption("failed")
        alert.error(md_escape(run.get("error", "the run failed")), icon=":material/error:")
    elif run["status"] == "stopped" and not run["chunks"]:
        status.caption("stopped before the first chunk")
    elif run["status"] == "starting":
        status.caption("starting · building the stream and the models…")
    else:
        if not presenting:
            run_caption.caption(f"This run: {md_escape(_describe(run['cfg']))}")
        with run["lock"]:
            chunks = list(run["chunks"])
        status.caption(_status_text(run, len(chunks)))  # before the panels: Stop is seen at once
        if chunks:
            draw(run, chunks)
        if run["status"] == "running":
            _loop(run)
            st.rerun()  # redraw the buttons (Run enabled, Stop disabled) and the summary
        if run["status"] == "error":
            alert.error(md_escape(run.get("error", "the run failed")), icon=":material/error:")
        if run["status"] in ("done", "stopped", "error") and run["chunks"]:
            compare.remember(run)
            _summary(run)
st.markdown("##### (g) Compare runs")
with st.container(key="compare_section"):
    compare.render(run if run and run.get("compare_id") is not None else None)
    if not compare.history():
        st.caption("Every finished run of this session is kept here (the last ten): pin one as the baseline "
                   "and its curves are drawn dimmed under the next runs' panels.")
