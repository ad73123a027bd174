"""Compare runs: the session keeps its last runs, one can be pinned as the baseline, its curves are
drawn dimmed on the next runs' panels, and the pinned run travels in the link.

State (this visitor only, ``st.session_state``):

* ``run_history``: snapshots of the last :data:`MAX_RUNS` finished (or stopped) runs, oldest first:
  their settings and per-chunk records, never the stream's data;
* ``pinned_run``: the id of the pinned snapshot (kept even when it is older than the others).

Pinning puts the run's settings in the link (:func:`dashboard.link.set_baseline`); a link read in a fresh
session offers to re-run it (:func:`run_baseline`, deterministic: its seeds are settings) on a click.

Drawing only: the grouping, the scores and the chunk axis of another chunk size come from
:mod:`ncld_core.eval.compare`.
"""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from ncld_core.config import RunConfig
from ncld_core.eval.compare import differing_settings, rescale_chunks, run_scores

from . import data, link
from .labels import label_of

HISTORY, PINNED = "run_history", "pinned_run"
MAX_RUNS = 10
#: The longest a re-run of a link's pinned run may be expected to take (seconds; it runs in the page's own
#: thread, where Stop cannot reach it): a longer one is loaded into the controls and run with Run instead.
REPLAY_LIMIT_S = 120
#: How much a baseline's curves are dimmed.
DIM = 0.3


# --------------------------------------------------------------------------- history and pin
def history() -> list[dict]:
    return st.session_state.setdefault(HISTORY, [])


def pinned() -> dict | None:
    pid = st.session_state.get(PINNED)
    return next((s for s in history() if s["id"] == pid), None)


def remember(run: dict, origin: str = "run") -> dict | None:
    """Keep a finished / stopped run (with at least one chunk) in the history; once per run."""
    if not run or not run.get("chunks") or run.get("status") in ("starting", "running"):
        return None
    hist = history()
    sid = run.get("compare_id")
    snap = next((s for s in hist if s["id"] == sid), None) if sid is not None else None
    if snap is None:
        sid = st.session_state.get("run_seq", 0) + 1
        st.session_state["run_seq"] = sid
        run["compare_id"] = sid
        snap = {"id": sid, "origin": origin}
        hist.append(snap)
    snap.update(cfg=run["cfg"], chunks=list(run["chunks"]), models=list(run["models"]),
                change_points=list(run["change_points"]), chunk_size=run["chunk_size"], n_chunks=run["n_chunks"],
                stream_name=run.get("stream_name", run["cfg"].dataset), status=run["status"])
    while len(hist) > MAX_RUNS:  # bounded: the oldest unpinned run goes
        drop = next(s for s in hist if s["id"] != st.session_state.get(PINNED))
        hist.remove(drop)
    return snap


def pin(sid: int):
    """Pin a run as the baseline and put its settings in the link (an uploaded file cannot travel)."""
    snap = next((s for s in history() if s["id"] == sid), None)
    if snap is None:
        return
    st.session_state[PINNED] = sid
    link.set_baseline(snap["cfg"])


def unpin():
    st.session_state.pop(PINNED, None)
    link.set_baseline(None)


def baseline_for(run: dict | None) -> dict | None:
    """The pinned run to draw under ``run`` (never under itself)."""
    base = pinned()
    if base is None or (run is not None and run.get("compare_id") == base["id"]):
        return None
    return base


def label(snap: dict) -> str:
    return f"#{snap['id']}" + (" (from the link)" if snap.get("origin") == "link" else "")


# --------------------------------------------------------------------------- a link's pinned run
@st.cache_data(max_entries=8, show_spinner=False)
def replay(cfg_json: str) -> dict:
    """Run a configuration to the end (seeded: the same records as the run it reproduces)."""
    cfg = RunConfig(**json.loads(cfg_json))
    stream = data.build_stream(cfg)
    chunks = list(cfg.runner().iter_run(stream))
    return {"chunks": chunks, "models": list(cfg.models) + (["all-negative", "noisy-prior"] if cfg.references else []),
            "change_points": [(cp.position, cp.kind) for cp in stream.change_points], "chunk_size": cfg.chunk_size,
            "n_chunks": stream.n_chunks(cfg.chunk_size), "stream_name": stream.name}


def run_baseline(cfg: RunConfig) -> str | None:
    """Re-run a link's pinned run (checked by :func:`dashboard.link.read_baseline`) and pin it: the click's
    work. An error message, or None."""
    try:
        with st.spinner("Re-running the pinned baseline from the link…"):
            out = replay(json.dumps(cfg.to_dict(), sort_keys=True))
    except ValueError as exc:  # the core's message; anything else is the page's error (with its id)
        return f"The pinned baseline of the link could not be re-run: {exc}"
    snap = remember({**out, "cfg": cfg, "status": "done"}, origin="link")
    pin(snap["id"])
    return None


# --------------------------------------------------------------------------- overlay
def _shift_x(xs, base, cur_size):
    if xs is None:
        return None
    return rescale_chunks(list(xs), from_size=base["chunk_size"], to_size=cur_size)


def _dim(trace: dict, base: dict, cur_size: int, prefix: str) -> dict:
    from . import figures as F

    t = dict(trace)
    t["x"] = _shift_x(t.get("x"), base, cur_size)
    t["opacity"] = DIM
    t["name"] = F.legend_wrap(prefix + str(t.get("name", "")).replace("<br>", " "))
    t["legendgroup"] = prefix + str(t.get("legendgroup", t.get("name", "")))
    if "hovertemplate" in t:
        t["hovertemplate"] = prefix + t["hovertemplate"]
    return t


def overlay(figs: dict, base: dict, current) -> dict:
    """The live panels (``{panel key: figure}``) with the baseline's curves drawn under them, dimmed, named
    ``baseline #k: …``; ``current``: the :class:`~dashboard.panels.PanelData` the figures were drawn from.

    Each panel of :data:`dashboard.panels.PANELS` says which of the baseline's traces it draws (its
    ``overlay``, given the same figure function on the baseline's records); panels without one are
    returned as they are.
    """
    from . import figures as F
    from . import panels

    prefix = f"baseline {label(base)}: "
    cur_size = current.chunk_size
    base_data = panels.PanelData(
        chunks=base["chunks"], models=base["models"], change_points=base["change_points"],
        chunk_size=base["chunk_size"], n_chunks=base["n_chunks"],
        focus=[m for m in current.detail if m in base["models"]] or list(base["models"]))
    how = panels.BaselineDraw(prefix, same_truth=(list(base["change_points"]), base["chunk_size"])
                              == (list(current.change_points), cur_size))
    span = rescale_chunks([base["n_chunks"] - 1], from_size=base["chunk_size"], to_size=cur_size)[0]
    x_hi = max((current.n_chunks or len(current.chunks)) - 0.5, span + 0.5, 1)
    out = dict(figs)
    for panel in panels.PANELS:
        if panel.key not in figs or panel.overlay is None or panel.figure is None:
            continue
        base_fig = panel.figure(base_data)
        if base_fig is None:
            continue
        spec = figs[panel.key].to_dict()
        add = panel.overlay(spec, base_fig.to_dict(), how)
        spec["data"] = [_dim(t, base, cur_size, prefix) for t in add] + spec["data"]  # under the current run's
        for key, axis in spec["layout"].items():
            if key.startswith("xaxis") and isinstance(axis, dict) and "range" in axis:
                axis["range"] = [-0.5, x_hi]
        out[panel.key] = F.figure_from_spec(spec)
        F.fit_legend(out[panel.key])  # the baseline's entries join the legend under the plot, which keeps its height
    return out


# --------------------------------------------------------------------------- the table and the controls
def table(snaps: list[dict]) -> pd.DataFrame:
    """One row per run and model: final metrics, detection scores, then the settings that differ between the runs."""
    settings = [_settings(s) for s in snaps]
    differ = differing_settings(settings)
    pid = st.session_state.get(PINNED)
    rows = []
    for s, cfg in zip(snaps, settings):
        head = {"run": label(s), "pinned": "pinned" if s["id"] == pid else "",
                "status": s["status"] + (f" at chunk {len(s['chunks'])}/{s['n_chunks']}" if s["status"] != "done" else "")}
        # the scores first, then the settings that differ: many differing settings (presets) pushed the scores
        # past the right edge of a projector's 1280 px screen
        tail = {label_of(k): _cell(cfg[k]) for k in differ}
        for r in run_scores(s["chunks"], s["models"], s["change_points"], s["chunk_size"]):
            rows.append({**head, **r, **tail})
    # a delay in chunks compares runs of one chunk size only; across sizes, in instances
    drop = ["mean delay (instances)" if len({s["chunk_size"] for s in snaps}) <= 1 else "mean delay (chunks)"]
    if pid is None:
        drop.append("pinned")  # (a column of blanks until a run is pinned)
    return pd.DataFrame(rows).drop(columns=drop, errors="ignore")


def _settings(snap: dict) -> dict:
    """A run's settings as the table compares them: an upload's dataset by its file's name (every upload's setting
    reads "upload", so runs on two files looked alike)."""
    cfg = snap["cfg"].to_dict()
    if cfg["dataset"] == data.UPLOAD:
        cfg["dataset"] = f"{data.UPLOAD}: {snap.get('stream_name') or '?'}"
    return cfg


def _cell(v) -> str:
    if v is None:
        return "all"
    if isinstance(v, list):
        return ", ".join(map(str, v)) or "none"
    return str(v) if v != "" else "none"


def _pin_picked():
    sid = st.session_state.pop("pin_pick", None)
    if sid is not None:
        pin(sid)


def render(run: dict | None):
    """The compare section: pin / unpin, what is pinned, the table of the session's runs."""
    snaps = history()
    base = pinned()
    if run is not None and run.get("compare_id") is not None:
        c1, c2, _ = st.columns([2, 2, 3])
        is_pinned = base is not None and base["id"] == run["compare_id"]
        c1.button("Pin this run as the baseline", icon=":material/push_pin:", key="pin_button", width="stretch",
                  disabled=is_pinned, on_click=pin, args=(run["compare_id"],),
                  help="Its curves are drawn dimmed under the next runs' panels, and the link carries it.")
        c2.button("Unpin", key="unpin_button", disabled=base is None, on_click=unpin, width="stretch")
    if base is not None:
        travel = ("a link to this page carries its settings (its seeds included) and offers to re-run it"
                  if base["cfg"].dataset != data.UPLOAD else
                  "it ran on an uploaded file, which cannot travel in a link: the link does not carry it")
        st.caption(f"Pinned baseline: run {label(base)}, drawn dimmed (“baseline {label(base)}: …” in the legends) "
                   f"under the panels of every other run; {travel}.")
    if len(snaps) > 1 or (snaps and base is None):
        with st.container(key="panel_compare"):
            df = table(snaps)
            fmt = {c: "{:.4f}" for c in ("Hamming loss", "micro-F1", "average precision")}
            fmt.update({c: "{:.0f}" for c in ("firings", "detected", "missed", "false alarms")})
            fmt.update({"mean delay (chunks)": "{:.1f}", "mean delay (instances)": "{:.0f}"})
            st.table(df.style.format({k: v for k, v in fmt.items() if k in df.columns}, na_rep="–").hide(axis="index"))
            others = [s["id"] for s in snaps if base is None or s["id"] != base["id"]]
            if others:
                st.selectbox("Pin another run of this session", [None, *others], key="pin_pick",
                             format_func=lambda i: "choose a run" if i is None else
                             label(next(s for s in snaps if s["id"] == i)),
                             on_change=_pin_picked)
        st.caption(f"The session keeps its last {MAX_RUNS} runs (and the pinned one); the columns after the "
                   "scores are the settings that differ between them; the detection scores are the acting "
                   "detector's, against the true change points (oracle: hidden from the learner).")
