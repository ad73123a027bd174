"""β × γ sweep: the paper's sensitivity figure, GM = sqrt((1 - HL) × micro-F1) as a heat map.

Computed on demand (ncld_core.eval.sweep, cached by stream, parameters and grid) on the
stream configured in the sidebar; the current (β, γ) and the best grid point are marked.
"""

from __future__ import annotations

import json

import streamlit as st

from dashboard import data, link
from dashboard import figures as F
from dashboard.controls import set_config
from dashboard.labels import errors_text
from dashboard.live_run import duration_text
from dashboard.teaching import SWEEP
from dashboard.ui import md_escape, teach
from ncld_core.config import MODEL_PARAMS
from ncld_core.eval.sweep import PAPER_GAMMAS, SWEEPABLE, best_point, default_betas, sweep_runs

ss = st.session_state
ctx = ss["ctx"]
cfg = ctx.cfg

st.markdown("## β × γ sweep")
st.caption("The paper's parameter-sensitivity analysis (Fig. Sens): one prequential run per grid point on the "
           "stream of the sidebar, scored by GM = √((1 − HL) × micro-F1) of the cumulative metrics.")

ss["sweep_running"] = False  # (a sweep runs only inside the script run its click starts: none is under way now)
teach(SWEEP)  # drawn at once: opening a lazy one reruns the page, which would end a sweep under way
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


def _stop():
    # the click's rerun ends a sweep under way where it is (at its next progress step); with none, nothing to say
    ss["sweep_stopped"] = bool(ss.get("sweep_running"))


b1, b2 = st.columns([3, 1], vertical_alignment="center")
pressed = b1.button("Compute the sweep", type="primary", icon=":material/grid_on:", disabled=bool(problems),
                    key="sweep_go")
# Stop is enabled only in the script run that computes a sweep (the click's run): idle, it has nothing to end
b2.button("Stop", icon=":material/stop:", key="sweep_stop", on_click=_stop, disabled=not pressed,
          help="Ends a sweep being computed; the grid points done so far are not kept.")
if pressed:  # this script run computes the sweep: a Stop clicked from here on ends it and says so
    ss["sweep_running"] = True  # left True if the script run is ended mid-sweep (Stop, or a control moved)
    ss["sweep_stopped"] = False
    ss.pop("sweep_error", None)
estimate = ""
if ctx.cost is not None and ctx.cost.n_chunks:
    one = ctx.cost.one_model()
    runs = sweep_runs(cfg, len(betas), len(gammas), ctx.facts.n_labels or cfg.n_labels, one.flops)
    seconds = runs * data.time_calibration().seconds_total(one)
    estimate = (f" Roughly {duration_text(seconds)} on this server: {runs:.1f} runs' work of one variant, each "
                "an even share of the Live run page's estimate for its variants.")
st.caption(f"{len(betas)} β × {len(gammas)} γ = {n_points} grid points on the sidebar's stream, the models "
           "told the flip rates as the sidebar says. With given rates the drift firings and the per-chunk "
           "statistics do not depend on β or γ, so the cost is one run plus one small solve per β and chunk; "
           "with estimated rates every grid point is a full run." + estimate)

if problems:
    st.warning("Fix the settings first: " + errors_text(problems), icon=":material/block:")

# Every setting of the run but the swept beta and gamma (also the cache key): the stream spec, then
# the model parameters and what the models are told.
swept = {"beta", "gamma"}
params = json.dumps({k: getattr(cfg, k) for k in (*MODEL_PARAMS, "seed", "model_rates") if k not in swept},
                    sort_keys=True)
request = (data.stream_spec(cfg, ctx.upload), params, variant, tuple(betas), tuple(gammas),
           ctx.upload[1] if ctx.upload else None)
# what makes a computed sweep stale: its stream, parameters, variant or grid; the sidebar's (beta, gamma) only when
# it is off the computed grid ("Use the best point" moves it onto a point of it)
basis = (request[0], params, variant, grid, request[5])
if pressed:
    try:
        stream = data.build_stream(cfg, ctx.upload)
        # At the page's top level: the cached function draws its own progress bar (replayed on a hit).
        df = data.run_sweep(*request, _stream=stream)
    except ValueError as exc:
        ss["sweep_error"] = (basis, str(exc))
    else:
        ss["sweep"] = {"basis": basis, "df": df, "chosen": (float(cfg.beta), float(cfg.gamma)), "variant": variant,
                       "stream": stream.name}
    ss["sweep_running"] = False
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


if ss.get("sweep_stopped") and not pressed and (result is None or _stale(result)):
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
    st.caption(f"{result['variant']} on {md_escape(result['stream'])}: {len(df)} points, "
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
