"""β × γ sweep: the paper's sensitivity figure, GM = sqrt((1 - HL) × micro-F1) as a heat map.

Computed on demand on the stream configured in the sidebar, as a job of the server's run hub
(``dashboard.data.start_sweep``: queued with the runs, in a process of its own that Stop kills, followed or
replayed when another visitor asked for the same sweep); the page draws the job's steps as they come. The
current (β, γ) and the best grid point are marked.
"""

from __future__ import annotations

import json
import time

import streamlit as st

from dashboard import checks, data, link, live_session
from dashboard import figures as F
from dashboard.controls import set_config
from dashboard.labels import errors_text
from dashboard.serving.live_run import duration_text
from dashboard.serving.run_hub import role_text
from dashboard.teaching import SWEEP
from dashboard.ui import md_escape, teach
from ncld_core.config import MODEL_PARAMS
from dashboard.serving.limits import LIMITS
from ncld_core.eval.sweep import PAPER_GAMMAS, SWEEPABLE, best_point, default_betas, seconds_range, sweep_runs

ss = st.session_state
ctx = ss["ctx"]
cfg = ctx.cfg

st.markdown("## β × γ sweep")
st.caption("The paper's parameter-sensitivity analysis (Fig. Sens): one prequential run per grid point on the "
           "stream of the sidebar, scored by GM = √((1 − HL) × micro-F1) of the cumulative metrics.")

#: This session's sweep job while it is under way: ``{"job": LiveRun, "role", "basis", "chosen", "variant"}``.
SWEEP_JOB = "sweep_job"
#: How often the waiting script thread looks at the job (seconds): a click interrupts it within this.
POLL_S = 0.1

held = ss.get(SWEEP_JOB)
ss["sweep_running"] = held is not None and held["job"].active  # a job queued or computing for this page
teach(SWEEP)  # drawn at once: opening a lazy one would rerun the page (a sweep under way goes on, followed again)
c1, c2, c3 = st.columns([1, 2, 2])
variants = [m for m in cfg.models if m in SWEEPABLE] or list(SWEEPABLE)
if "sweep_beta_range" not in ss:  # the controls start where the link puts them (dashboard/link.py)
    grid = link.sweep_values(ss.get(link.SWEEP) or {})
    ss["sweep_beta_range"], ss["sweep_beta_step"] = grid["beta"][:2], grid["beta"][2]
    ss["sweep_gammas"], ss["sweep_include"] = list(grid["gammas"]), grid["include"]
    if grid["variant"] in variants:
        ss["sweep_variant"] = grid["variant"]
variant = c1.selectbox("Variant", variants, key="sweep_variant")
lo, hi = c2.slider("β range", 0.0, 1.0, step=0.05, key="sweep_beta_range")
step = c2.select_slider("β step", list(link.SWEEP_BETA_STEPS), key="sweep_beta_step")
glabels = {g: F.gamma_label(g) for g in PAPER_GAMMAS}
gammas = c3.multiselect("γ values", list(PAPER_GAMMAS), key="sweep_gammas", format_func=glabels.get)
current = (f"β={cfg.beta:g}, γ={cfg.gamma:g}" if all(isinstance(v, (int, float)) for v in (cfg.beta, cfg.gamma))
           else "the sidebar's β and γ")  # an emptied box is None (its error is in the sidebar)
include = c3.checkbox(f"add {current}", key="sweep_include",
                      help="The sidebar's current β and γ are added to the grid, so the heat map marks them.")
link.set_sweep(variant, (lo, hi, step), gammas, include)  # the link carries the grid, the page keeps it
link.sync_url(cfg)

betas = default_betas(lo, hi, step) if hi >= lo else [lo]
grid = (tuple(betas), tuple(gammas), include)  # the grid asked for, without the sidebar's point it may add
problems = dict(ctx.errors)
if include and not problems:
    betas = sorted(set(betas) | {float(cfg.beta)})
    gammas = sorted(set(gammas) | {float(cfg.gamma)})
if not gammas:
    problems["gammas"] = "choose at least one γ"
n_points = len(betas) * len(gammas)


# Every setting of the run but the swept beta and gamma (also the sweep's identity in the run hub): the stream
# spec, then the model parameters and what the models are told.
swept = {"beta", "gamma"}
params = json.dumps({k: getattr(cfg, k) for k in (*MODEL_PARAMS, "seed", "model_rates") if k not in swept},
                    sort_keys=True)
request = (data.stream_spec(cfg, ctx.upload), params, variant, tuple(betas), tuple(gammas),
           ctx.upload[1] if ctx.upload else None)
# what makes a computed sweep stale: its stream, parameters, variant or grid; the sidebar's (beta, gamma) only when
# it is off the computed grid ("Use the best point" moves it onto a point of it)
basis = (request[0], params, variant, grid, request[5])

#: Compute was clicked: the sweep starts in the script run, once the controls above have been read (a click that
#: arrives with a control's new value computes the new value), and before the buttons are drawn (Stop then ends it).
SWEEP_REQUESTED = "sweep_requested"


def _request():
    ss[SWEEP_REQUESTED] = True
    # the sweep takes the session's one job (the hub stops its Live run): the Live run page is no longer live, so
    # going back to it starts nothing by itself (it would detach, and so stop, this sweep)
    ss[live_session.LIVE] = False


def _stop():
    """End this page's sweep (its process killed at once; it goes on for other visitors following it)."""
    ss.pop(SWEEP_REQUESTED, None)
    held = ss.pop(SWEEP_JOB, None)
    job = held["job"] if held else None
    running = job is not None and job.active
    if running:
        data.run_hub().detach(data.session_id(), job=job)
    ss["sweep_stopped"] = running  # with none under way, nothing to say


estimate, estimate_s = "", None
one = None if problems else checks.sweep_cost(cfg, variant, ctx.facts)
if one is not None and one.n_chunks:
    runs = sweep_runs(cfg, len(betas), len(gammas), ctx.facts.n_labels or cfg.n_labels, one.flops)
    estimate_s = runs * data.time_calibration().seconds_total(one)
    low, high = seconds_range(estimate_s, data.sweep_calibration())
    measured = data.sweep_calibration().n_runs
    estimate = (f" Roughly {duration_text(low)} to {duration_text(high)} on this server: {runs:.1f} runs of "
                f"{variant} alone, the range " + (f"of the {measured} sweeps measured here." if measured >= 2 else
                                                  "measured in docs/sweep-estimate.md."))
started = bool(ss.get(SWEEP_REQUESTED)) and not problems
if started:
    ss["sweep_stopped"] = False
    ss.pop("sweep_error", None)
    job, role = data.start_sweep(cfg, ctx.upload, params, variant, tuple(betas), tuple(gammas))
    ss[SWEEP_JOB] = {"job": job, "role": role, "basis": basis, "chosen": (float(cfg.beta), float(cfg.gamma)),
                     "variant": variant, "estimate_s": estimate_s}
    ss["sweep_running"] = job.active
# dropped once the sweep is started: a rerun arriving meanwhile interrupts the script inside start_sweep, and the
# click would be lost with the flag
ss.pop(SWEEP_REQUESTED, None)

b1, b2 = st.columns([3, 1], vertical_alignment="center")
# Compute is disabled while this page's sweep is under way (Stop comes first), Stop while none is
b1.button("Compute the sweep", type="primary", icon=":material/grid_on:", on_click=_request,
          disabled=bool(problems) or ss["sweep_running"], key="sweep_go")
b2.button("Stop", icon=":material/stop:", key="sweep_stop", on_click=_stop, disabled=not ss["sweep_running"],
          help="Ends a sweep being computed or waiting for its turn; the grid points done so far are not kept.")
st.caption(f"{len(betas)} β × {len(gammas)} γ = {n_points} grid points on the sidebar's stream, the models "
           "told the flip rates as the sidebar says. With given rates the drift firings and the per-chunk "
           "statistics do not depend on β or γ, so the cost is one run plus one small solve per β and chunk; "
           "with estimated rates every grid point is a full run." + estimate)

if problems:
    st.warning("Fix the settings first: " + errors_text(problems), icon=":material/block:")


def _waiting_text(job) -> str:
    return data.sweep_waiting_text(job.queue_position(), LIMITS.max_concurrent_runs, job.cfg.n_points)


def _follow(held) -> None:
    """Draw the job's steps as they come, until it ends; every wait reads the session state, where Streamlit
    interrupts the script for a click (Stop, or a control moved: the job goes on, and the next script run
    follows it again)."""
    job = held["job"]
    line = st.empty()
    bar = st.progress(0.0, text=_waiting_text(job))
    shown = -1
    while True:
        ss.get(SWEEP_JOB)  # a yield point: a pending click interrupts the script here
        if job.status == "starting":  # queued, or its stream being built (the hub begins it when admitted)
            if not job.begin():
                bar.progress(0.0, text=_waiting_text(job))
                time.sleep(POLL_S)
            continue
        steps, state = job.wait(shown, timeout=POLL_S)
        if len(steps) != shown:
            shown = len(steps)
            role = role_text(held["role"], status=state, others=data.run_hub().others_watching(data.session_id()))
            if role:
                line.caption(f"**{role}**")
            if steps:
                last = steps[-1]
                bar.progress(last.done / last.total,
                             text=data.sweep_progress_text(last.done, last.total, last.n_points, last.one_by_one,
                                                           last.remaining_s))
            else:
                bar.progress(0.0, text=f"Sweeping β × γ: {job.cfg.n_points} grid points …")
        if state != "running":
            return


def _finish(held) -> None:
    """The job has ended: keep its table (the heat map below), its failure (said while its settings stay) or
    that it stopped."""
    ss.pop(SWEEP_JOB, None)
    job = held["job"]
    steps, state = job.snapshot()
    if state == "done" and steps and steps[-1].table is not None:
        if held["role"] == "computing" and held.get("estimate_s"):  # computed for this page: its time measured
            data.sweep_calibration().observe_seconds(steps[-1].seconds, held["estimate_s"])
        ss["sweep"] = {"basis": held["basis"], "df": steps[-1].table, "chosen": held["chosen"],
                       "variant": held["variant"], "stream": job.stream_name,
                       "role": role_text(held["role"], status="done", others=0)}
    elif state == "error":
        ss["sweep_error"] = (held["basis"], job.error or "the sweep failed")
    else:  # stopped: by another page of this session (it holds one job), or given up
        ss["sweep_stopped"] = True


held = ss.get(SWEEP_JOB)
if held is not None:
    under_way = held["job"].active
    if under_way:
        _follow(held)
    _finish(held)
    if under_way:
        st.rerun()  # the page again, from what the sweep left: Stop drawn disabled now that nothing is computed
failed = ss.get("sweep_error")
if failed and failed[0] == basis:  # the last Compute's failure, while its settings stay
    st.error(md_escape(failed[1]), icon=":material/error:")

result = ss.get("sweep")


def _point_rows(df, point):
    """The grid's row(s) at ``point`` = (beta, gamma) (none when it is off the grid)."""
    return df[(df["beta"] == point[0]) & (df["gamma"] == point[1])]


def _stale(result) -> bool:
    if result.get("basis") != basis:
        return True
    return include and not problems and _point_rows(result["df"], (float(cfg.beta), float(cfg.gamma))).empty


if ss.get("sweep_stopped") and not started and (result is None or _stale(result)):
    st.info("The sweep was stopped: press Compute to run it again.", icon=":material/stop_circle:")
if result is not None:
    df = result["df"]
    best = best_point(df)
    if _stale(result):
        st.info("The settings changed since this sweep was computed: press Compute to refresh it.",
                icon=":material/update:")
    # the sidebar's (beta, gamma) now: "Use the best point" or a typed value moves it after the sweep
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (cfg.beta, cfg.gamma))
    chosen = (float(cfg.beta), float(cfg.gamma)) if numbers else result["chosen"]
    st.plotly_chart(F.sweep_figure(df, chosen=chosen, best=best), key="sweep_heatmap",
                    config={"displaylogo": False})
    chosen_row = _point_rows(df, chosen)
    m1, m2, m3 = st.columns(3)
    m1.metric("best GM", f"{best['gm']:.4f}", help=f"β={best['beta']:g}, γ={best['gamma']:g}")
    if not chosen_row.empty:
        m2.metric("GM at the current setting", f"{chosen_row['gm'].iloc[0]:.4f}",
                  delta=f"{chosen_row['gm'].iloc[0] - best['gm']:+.4f} vs best",
                  help=f"the sidebar's β={chosen[0]:g}, γ={chosen[1]:g}")
    else:
        m2.caption(f"The sidebar's β={chosen[0]:g}, γ={chosen[1]:g} is not on this grid.")
    m3.metric("drift firings (same for every point)", len(df.attrs.get("firings", [])))
    how = f"**{result['role']}** · " if result.get("role") else ""  # followed or replayed: said
    st.caption(f"{how}{result['variant']} on {md_escape(result['stream'])}: {len(df)} points, "
               f"{df.attrs.get('chunks')} chunks, {df.attrs.get('seconds', 0):.1f} s.")

    def _use_best():
        from ncld_core.config import RunConfig

        vals = dict(ss["cfg_values"])
        vals.update(beta=float(best["beta"]), gamma=float(best["gamma"]))
        set_config(RunConfig(**vals))

    if chosen == (float(best["beta"]), float(best["gamma"])):
        st.caption(f"The sidebar uses the best point (β={best['beta']:g}, γ={best['gamma']:g}).")
    else:
        st.button(f"Use the best point (β={best['beta']:g}, γ={best['gamma']:g}) in the sidebar",
                  on_click=_use_best, key="sweep_use_best", icon=":material/check:")
    with st.expander("Top 10 grid points"):
        cols = ["beta", "gamma", "gm", "hamming_loss", "micro_f1", "average_precision"]
        st.dataframe(df.sort_values("gm", ascending=False)[cols].head(10), hide_index=True)
