"""Live run: press Run, watch every chunk arrive, stop at any time, download the results.

The run lives in ``st.session_state["run"]`` (this visitor only): the runner's
generator, and every ChunkResult as soon as it arrives. Any rerun (Stop, a control,
a page switch) interrupts the drawing loop between two chunks; nothing computed
is lost, and a rerun of this page resumes the generator where it stopped.
"""

from __future__ import annotations

import re
import statistics
import threading
import time

import streamlit as st

from dashboard import compare, data, report
from dashboard import figures as F
from dashboard.controls import label_of
from dashboard.teaching import detector_label, noise_cost_text
from dashboard.ui import md_escape, teach
from ncld_core.config import SYNTHETIC_DEFAULT_LENGTH
from ncld_core.eval.runner import RunResult
from ncld_core.eval.variants import ELM_VARIANTS
from ncld_core.model.flip_rates import estimate_errors

ss = st.session_state
ctx = ss["ctx"]
PLOT_CONFIG = {"displaylogo": False, "modeBarButtonsToRemove": ["lasso2d", "select2d"]}


def _start():
    old = ss.get("run")
    if old is not None:  # a previous run may still be finishing a chunk in another script thread
        with old["lock"]:
            old["status"] = "stopped" if old["status"] in ("starting", "running") else old["status"]
            old.pop("gen", None)
    cfg = ss["ctx"].cfg
    ss["run"] = {"status": "starting", "cfg": cfg, "upload": ss["ctx"].upload, "t_click": time.perf_counter(),
                 "lock": threading.Lock(), "chunks": [], "update_ms": [], "compute_ms": [], "first_plot_s": None,
                 "n_chunks": 0, "chunk_size": cfg.chunk_size, "models": [], "change_points": [], "stream_s": 0.0,
                 "result": None}


def _stop():
    run = ss.get("run")
    if run:
        # With fast reruns the interrupted script thread may still be computing a chunk: wait for it,
        # so that chunk is kept and the generator is never touched by two threads.
        with run["lock"]:
            if run["status"] in ("starting", "running"):
                run["status"] = "stopped"
            run.pop("gen", None)


def _describe(cfg) -> str:
    noise = {"none": "no noise", "range": f"flip rates ~ U[{cfg.rho_low:g}, {cfg.rho_high:g}]",
             "table": "flip-rate table"}[cfg.noise]
    n = cfg.n_instances or (SYNTHETIC_DEFAULT_LENGTH if cfg.dataset == "synthetic" else "all")
    sched = cfg.schedule or "no drift"
    return (f"{cfg.dataset} · {n} instances in chunks of {cfg.chunk_size} · {noise} · {sched} · "
            f"β={cfg.beta:g} γ={cfg.gamma:g} δ={cfg.delta:g} α={cfg.alpha:g} L={cfg.n_hidden} K={cfg.n_neighbors} · "
            f"acting detector: {detector_label(cfg.detector)}"
            + (f" · compared: {', '.join(detector_label(m) for m in cfg.monitors)}" if cfg.monitors else ""))


link_error = compare.restore_from_link()  # a link's pinned run: re-run and pinned, once per session
if ss.pop("autostart", False) and ctx.ok and ss.get("run") is None:
    _start()  # the link's current settings run beside it
run = ss.get("run")
running = bool(run) and run["status"] in ("starting", "running")

st.markdown("## Live run")
st.caption("Prequential test-then-train on a noisy stream: every chunk is scored against the ground truth, "
           "then learned from its noisy labels. Whatever a legend marks *oracle: hidden from the learner* (the true "
           "cardinality, change points and regimes, the true flip rates, a model trained on the clean labels) is "
           "drawn to judge the learner, which never sees it.")
b1, b2, b3 = st.columns([1, 1, 6], vertical_alignment="center")
b1.button("Run", type="primary", icon=":material/play_arrow:", disabled=(not ctx.ok) or running,
          on_click=_start, key="run_button", width="stretch")
b2.button("Stop", icon=":material/stop:", disabled=not running, on_click=_stop, key="stop_button", width="stretch")
with b3:
    status = st.container(key="run_status").empty()
run_caption = st.empty()
alert = st.empty()
if not ctx.ok:
    fix = "; ".join(f"**{md_escape(label_of(k))}**: {md_escape(v)}" for k, v in ctx.errors.items())
    st.warning(f"Run is disabled until these settings are fixed (see the sidebar): {fix}",
               icon=":material/block:")

# --------------------------------------------------------------------------- layout
slots = {}
ALL = "all"


def _panel_options():
    """Above panel (b): the paper's estimate on request; with several ELM variants, whose records (b)-(d) draw."""
    c1, c2 = st.columns([3, 2], vertical_alignment="center")
    c1.checkbox("show the paper's estimate", key="show_paper",
                help="Adds the paper's Eq. (card): importance weights clipped at 0, P_D fitted on the same "
                     "chunk; biased upwards, unlike the moment estimate it is drawn beside.")
    cfg = run["cfg"] if run else ctx.cfg
    elm = [m for m in cfg.models if m in ELM_VARIANTS]
    if len(elm) < 2:
        ss.pop("focus_variant", None)
        return
    options = [ALL, *elm]
    if ss.get("focus_variant") not in options:
        # variants that estimate their own rates part after a drift they act on: one at a time by default
        ss["focus_variant"] = elm[0] if cfg.model_rates == "estimate" else ALL
    c2.selectbox("(b)–(d) show the records of", options, key="focus_variant",
                 format_func=lambda m: "every variant (identical ones share a line)" if m == ALL else m,
                 help="The variants' cardinality estimates and detectors agree when they are told the same "
                      "rates; with estimated rates they part after a drift they act on.")


def _focus(run) -> list:
    """The models whose estimates and detectors panels (b)-(d) draw."""
    pick = ss.get("focus_variant")
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
for name, title in PANELS:
    if name == "metrics":
        # three subplots side by side: panel (a) takes the full width, its explanation beside the heading
        h, t = st.columns([3, 2], vertical_alignment="bottom")
        h.markdown(f"##### {title}")
        with t:
            teach(name)
        slots[name] = st.container(key=f"panel_{name}").empty()
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
        slots[name] = st.container(key=f"panel_{name}").empty()
        if name == "cardinality":
            slots["cardinality_note"] = st.empty()
        if name == "timeline":
            slots["detections"] = st.container(key="panel_detections").empty()
    with right:
        teach(name)
st.markdown("##### (e) Flip rates: estimated against the true rates (oracle: hidden from the learner)")
rl, rr = st.columns([3, 2])
with rl:
    slots["rates"] = st.container(key="panel_rates").empty()
with rr:
    teach("rates")
st.markdown("##### (f) Summary")
sl, sr = st.columns([4, 1])
with sl:
    summary_box = st.container(key="panel_summary")
with sr:
    teach("summary")


def _info(run):
    return (run["chunks"], run["models"], run["change_points"], run["chunk_size"], run["n_chunks"])


def draw(run):
    """Redraw every live panel from the chunks received so far."""
    args = _info(run)
    chunks, models, cps, size, n = args
    focus = _focus(run)
    k = len(chunks)  # a fresh key per redraw: two identical figures in one run are allowed
    figs = {
        "metrics": F.metrics_figure(*args),
        "cardinality": F.cardinality_figure(chunks, focus, cps, size, n, show_paper=bool(ss.get("show_paper"))),
        "threshold": F.detector_figure(chunks, focus, cps, size, n),
        "timeline": F.timeline_figure(chunks, focus, cps, size, n),
    }
    base = compare.baseline_for(run)
    if base is not None:  # the pinned run, dimmed, under every panel
        figs = compare.overlay(figs, base, size, n, focus, cps)
    for name, fig in figs.items():
        slots[name].plotly_chart(fig, config=PLOT_CONFIG, key=f"fig_{name}_{k}")
    slots["cardinality_heading"].markdown(_cardinality_heading(chunks, focus))
    note = F.cardinality_note(chunks, focus)
    if note:
        slots["cardinality_note"].caption(note)
    _draw_rates(run, k)
    if F.detecting_models(chunks, focus):
        slots["detections"].table(F.detection_table(chunks, focus, cps, size), hide_index=True)


def _draw_rates(run, k):
    chunks = run["chunks"]
    estimating = [m for m in run["models"]
                  if any(m in c.diagnostics and c.diagnostics[m].estimates_rates for c in chunks)]
    if not estimating:
        slots["rates"].caption("No variant estimates its flip rates in this run: set *The models are told* "
                               "to *nothing (estimate the rates)* in the sidebar.")
        return
    stream = run["stream"]
    over_time, per_label = estimate_errors(chunks, estimating[0], stream.rho_pos, stream.rho_neg)
    with slots["rates"].container():
        others = estimating[1:]
        st.caption(f"{estimating[0]}'s estimates"
                   + (f" ({', '.join(others)} estimate their own; they part from these after a drift they act on)."
                      if others else "."))
        st.plotly_chart(F.flip_rate_figure(over_time), config=PLOT_CONFIG, key=f"fig_rates_{k}")
        names = list(getattr(stream, "label_names", ()) or [])
        if names and len(names) == len(per_label):
            per_label["label"] = names
        # the rates as the model holds them (4 decimals, as the sidebar's table)
        st.dataframe(per_label, hide_index=True, width="stretch", height=220,
                     column_config={c: st.column_config.NumberColumn(
                         c + (f" ({F.ORACLE})" if c.endswith(" true") else ""), format="%.4f")
                         for c in per_label.columns if c != "label"})


def _status_text(run) -> str:
    k, n = len(run["chunks"]), run["n_chunks"]
    upd = run["update_ms"]
    if run["status"] == "running":
        last_u = upd[-1] if upd else 0
        last_c = run["compute_ms"][-1] if run["compute_ms"] else 0
        return f"running · chunk {k}/{n} · update {last_u:.0f} ms · compute {last_c:.0f} ms"
    med = statistics.median(upd) if upd else float("nan")
    first = run.get("first_plot_s")
    first_txt = (f" · first plot after {first:.2f} s (stream ready in {run['stream_s']:.2f} s)"
                 if first is not None else "")
    word = {"done": "done", "stopped": "stopped", "error": "failed"}.get(run["status"], run["status"])
    return (f"{word} · chunk {k}/{n} · median update {med:.0f} ms · "
            f"median compute {statistics.median(run['compute_ms']) if run['compute_ms'] else float('nan'):.0f} ms"
            f"{first_txt}")


def _begin(run):
    """Build the stream (cached) and the runner's generator."""
    cfg = run["cfg"]
    t0 = time.perf_counter()
    try:
        stream = data.build_stream(cfg, run.get("upload"))
        runner = cfg.runner()
        gen = runner.iter_run(stream)
    except Exception as exc:  # noqa: BLE001 - bad input is shown inline, never as a traceback
        run.update(status="error", error=str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}")
        return
    run.update(
        status="running", gen=gen, stream=stream, chunks=[], update_ms=[], compute_ms=[], first_plot_s=None,
        chunk_size=cfg.chunk_size, n_chunks=stream.n_chunks(cfg.chunk_size),
        change_points=[(cp.position, cp.kind) for cp in stream.change_points],
        models=list(cfg.models) + (["all-negative", "noisy-prior"] if cfg.references else []),
        stream_name=stream.name, result=None, stream_s=time.perf_counter() - t0,
    )


def _loop(run):
    while True:
        # One script thread at a time advances the generator (a rerun may start a new thread while an
        # interrupted one is still computing); each chunk is stored before it is drawn, so a Stop
        # (or any rerun) during the redraw loses nothing.
        with run["lock"]:
            gen = run.get("gen")
            if run["status"] != "running" or gen is None:
                break
            t0 = time.perf_counter()
            try:
                chunk = next(gen)
            except StopIteration:
                run["status"] = "done"
                run.pop("gen", None)
                break
            except Exception as exc:  # noqa: BLE001 - shown inline, never a traceback
                run.update(status="error", error=str(exc) if isinstance(exc, ValueError) else
                           f"{type(exc).__name__}: {exc}")
                run.pop("gen", None)
                break
            t1 = time.perf_counter()
            run["chunks"].append(chunk)
            run["compute_ms"].append(1000 * (t1 - t0))
        draw(run)
        t2 = time.perf_counter()
        run["update_ms"].append(1000 * (t2 - t1))
        if run["first_plot_s"] is None:
            run["first_plot_s"] = t2 - run["t_click"]
        ss["timings"] = {"first_plot_s": run["first_plot_s"], "stream_s": run["stream_s"],
                         "update_ms": list(run["update_ms"]), "compute_ms": list(run["compute_ms"])}
        status.caption(_status_text(run))


def _result(run):
    if run.get("result") is None or len(run["result"].chunks) != len(run["chunks"]):
        run["result"] = RunResult(list(run["chunks"]), run["stream"], run["chunk_size"], config=run["cfg"].to_dict(),
                                  n_chunks=run["n_chunks"])
    return run["result"]


def _summary(run):
    result = _result(run)
    table = report.summary_table(result, readable=True)
    with summary_box:
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
if run is None:
    status.caption("Ready: press Run.")
    slots["metrics"].info("Press **Run** to stream the configured data through the selected variants. "
                          "Presets in the sidebar fill every control.", icon=":material/info:")
else:
    if run["status"] == "starting":
        status.caption("starting · building the stream and the models…")
        with run["lock"]:
            if run["status"] == "starting":
                _begin(run)
        if run["status"] == "error":
            st.rerun()  # redraw the buttons: Run usable again, Stop disabled; the reason is shown below
    if run["status"] == "error" and not run.get("chunks"):
        status.caption("failed")
        alert.error(md_escape(run.get("error", "the run failed")), icon=":material/error:")
    elif run["status"] == "stopped" and not run["chunks"]:
        status.caption("stopped before the first chunk")
    else:
        run_caption.caption(f"This run: {md_escape(_describe(run['cfg']))}")
        if run["status"] != "running":
            with run["lock"]:  # let an interrupted thread finish storing its chunk first
                pass
        if run["chunks"]:
            draw(run)
        status.caption(_status_text(run))
        if run["status"] == "running":
            _loop(run)
            st.rerun()  # redraw the buttons (Run enabled, Stop disabled) and the summary
        if run["status"] == "error":
            alert.error(md_escape(run.get("error", "the run failed")), icon=":material/error:")
        if run["status"] in ("done", "stopped", "error") and run["chunks"]:
            compare.remember(run)
            _summary(run)
if link_error:
    alert.error(md_escape(link_error), icon=":material/error:")
st.markdown("##### (g) Compare runs")
with st.container(key="compare_section"):
    compare.render(run if run and run.get("compare_id") is not None else None)
    if not compare.history():
        st.caption("Every finished run of this session is kept here (the last ten): pin one as the baseline "
                   "and its curves are drawn dimmed under the next runs' panels.")
