"""Interventions during a run (issue 38 item 3): "labels grow now", "shrink now", "shift now", "noise up", "noise down".

While a run streams, each button appends a change to the run's drift schedule at the first instance of the next chunk
not yet computed (:func:`next_position`): ``ncld_core.stream.schedule.append_change`` refuses a change that would
alter the stream before it, so the records before the change are the run's. The settings (and so the link) then
carry it, and the page starts the run of the new settings as it does for any control (``dashboard.live_session``):
computed from the start, that run shows the chunks before the change at once while it recomputes them
(``LiveRun.show_from``), and the panels mark the change like the schedule's others (a noise change in its own style).
A button that cannot act is disabled and its help says why (the schedule full, no chunk left, a regime change the
stream cannot take, the rates at their bound).

What the buttons decide is plain functions here (:func:`candidate`, :func:`reasons`; tested without Streamlit); the
row itself is :func:`render`, drawn by the Live run page (``dashboard/views/run.py``).
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import streamlit as st

from ncld_core.stream.schedule import append_change, noise_factor_step

from . import data, live_session
from .controls import set_config
from .link import CANON
from .figures import noise_text
from .labels import worded

__all__ = ["Intervention", "INTERVENTIONS", "next_position", "candidate", "reasons", "render", "NOTE"]


class Intervention(NamedTuple):
    """One button: its ``key`` (``intervene_<key>``), ``label``, the schedule ``kind`` it appends, for a noise change
    the direction (``up``), and its ``help`` when it can act."""

    key: str
    label: str
    kind: str
    up: bool | None
    help: str


INTERVENTIONS = (
    Intervention("grow", "labels grow now", "growth", None,
                 "From the next chunk on, multi-label instances (a growth appended to the schedule)."),
    Intervention("shrink", "shrink now", "reduction", None,
                 "From the next chunk on, single-label instances (a reduction appended to the schedule)."),
    Intervention("shift", "shift now", "shift", None,
                 "From the next chunk on, other labels relevant, as many per instance (a shift appended to the "
                 "schedule)."),
    Intervention("noise_up", "noise up", "noise", True,
                 "From the next chunk on, every flip rate times 0.5 more (a noise change in the schedule); the "
                 "models are still told the old rates."),
    Intervention("noise_down", "noise down", "noise", False,
                 "From the next chunk on, every flip rate times 0.5 less, down to clean labels (a noise change in the "
                 "schedule); the models are still told the old rates."),
)

#: Session state: the sentence on the last intervention, with the settings it made (shown while they are the run's).
NOTE = "intervention_note"
#: Session state: why the last press did nothing (the run moved on between drawing the button and the press).
REFUSED = "intervention_refused"
#: Session state: a press changed the settings; the row's rerun then reruns the page (which starts their run).
PRESSED = "intervention_pressed"
#: How often (seconds) the row is drawn again while its run streams: which buttons can act changes with the chunk.
ROW_EVERY_S = 1.0


def next_position(run) -> int:
    """The first instance of the next chunk ``run`` has not computed (never chunk 0: it only initialises)."""
    return max(len(run.chunks), 1) * int(run.chunk_size)


def candidate(cfg, it: Intervention, position: int, *, change_points=(), n_available=None, n_labels_available=None,
              labels_true=None):
    """``(settings, None)``: ``cfg`` with ``it``'s change at instance ``position``, or ``(None, why not)``.

    ``change_points``: the running stream's ``(position, kind)`` (they place the paper's unpositioned change);
    ``n_available``, ``n_labels_available``, ``labels_true``: the dataset's size and labels, checked as the sidebar
    checks the settings (``RunConfig.errors``: the stream's length, a real dataset's pools)."""
    try:
        schedule = cfg.drift_schedule
    except ValueError as exc:
        return None, worded(str(exc))
    if schedule is not None and schedule.is_paper:
        if not change_points:
            return None, "the stream is being built: where its change falls is not known yet"
        schedule = schedule.at(change_points[0][0])
    factor = None
    if it.kind == "noise":
        if cfg.noise == "none":
            return None, "this stream has no noise to move: choose a noise in the sidebar (a new run)"
        current = 1.0 if schedule is None else schedule.noise_factor_at(position)
        factor = noise_factor_step(current, it.up, cfg.stream.noise_bound())
        if factor is None:
            return None, ("the labels are already clean from here" if not it.up else
                          f"the noise is at its largest here ({noise_text(current)}): every label's ρ₊ + ρ₋ must "
                          "stay below 1 (Eq. NR)")
    try:
        changed = append_change(schedule, position, it.kind, factor)
    except ValueError as exc:
        return None, worded(str(exc))
    new = dataclasses.replace(cfg, schedule=str(changed))
    error = new.stream.errors(n_available=n_available, n_labels_available=n_labels_available,
                              Y_true=labels_true).get("schedule")
    return (None, worded(error)) if error else (new, None)


def reasons(run, cfg, *, same: bool, **facts) -> dict:
    """``{key: (settings, why not)}`` of every button for the session's ``run`` and the settings ``cfg`` on the
    controls (``same``: they are the run's); ``facts``: the dataset's, as :func:`candidate` takes them."""
    why = None
    if run is None or not run.active:
        why = ("only while a run streams (this one has ended): place changes in the sidebar's schedule, or press Run "
               "and change it while it runs")
    elif not same:
        why = "the settings on the controls are not this run's"
    elif run.stream is None:
        why = "the stream is being built"
    elif next_position(run) >= run.stream.n_instances:
        why = "no chunk is left to change"
    if why is not None:
        return {it.key: (None, why) for it in INTERVENTIONS}
    position = next_position(run)
    return {it.key: candidate(run.cfg, it, position, change_points=run.change_points, **facts)
            for it in INTERVENTIONS}


def _facts(ctx) -> dict:
    """The chosen dataset's size and labels (for its pools), as the sidebar checks them."""
    facts = ctx.facts
    out = {"n_available": getattr(facts, "n_instances", None), "n_labels_available": getattr(facts, "n_labels", None)}
    cfg = ctx.cfg
    if cfg.dataset != "synthetic":
        if ctx.upload is not None:
            out["labels_true"] = ctx.upload[0].Y
        elif cfg.dataset != data.UPLOAD:
            try:
                out["labels_true"] = data.load_dataset(cfg.dataset).Y
            except ValueError:
                pass
    return out


def _press(key: str) -> None:
    """A button's callback: the change appended to the settings, which the page then runs (the run of the settings
    before it shown until the new one has recomputed its chunks)."""
    ss = st.session_state
    ss.pop(REFUSED, None)
    run, ctx = ss.get("run"), ss.get("ctx")
    if ctx is None:
        return
    it = next(i for i in INTERVENTIONS if i.key == key)
    new, why = reasons(run, ctx.cfg, same=run is not None and live_session.same_settings(run), **_facts(ctx))[key]
    if new is None:
        ss[REFUSED] = f"{it.label}: {why}"
        return
    position = next_position(run)
    k = position // int(run.chunk_size)
    set_config(new)  # every control afresh from the new settings: the schedule's rows, the link
    live_session.show_from(new, run, k)
    what = (noise_text(new.drift_schedule.noise_factor_at(position)) if it.kind == "noise" else it.kind)
    ss[NOTE] = (new, f"**{it.label}**: {what} from instance {position:,} (chunk {k}) on, added to the schedule and the "
                     f"link; the chunks before it stay as they were")
    ss[PRESSED] = True


def render(run) -> None:
    """The row of buttons above the panels (once the session has a run); a button that cannot act is disabled,
    its help says why. While the run streams, the row is a fragment drawn again every :data:`ROW_EVERY_S` seconds
    (what can act changes with the chunk the run is at: the page itself is not rerun then)."""
    if run is None:
        return
    st.fragment(_row, run_every=ROW_EVERY_S if run.active else None)()


def _row() -> None:
    ss = st.session_state
    run, ctx = ss.get("run"), ss.get("ctx")
    if ss.pop(PRESSED, False) and run is not None and ss.get(CANON) != run.cfg.to_dict():
        st.rerun()  # a press in the row's own rerun: the page's full run draws the new settings and starts their run
    if run is None or ctx is None:
        return
    same = live_session.same_settings(run)
    options = reasons(run, ctx.cfg, same=same, **(_facts(ctx) if run.active and same else {}))
    with st.container(key="interventions"):
        cols = st.columns([1.3, 1.4, 1, 1, 1, 1], vertical_alignment="center", gap="small")
        cols[0].caption("From the next chunk:", help="Each button appends a change to this run's drift schedule at the "
                        "first chunk not yet computed: the settings and the link carry it, the chunks before it stay "
                        "as they were, and the panels mark it.")
        for col, it in zip(cols[1:], INTERVENTIONS):
            new, why = options[it.key]
            col.button(it.label, key=f"intervene_{it.key}", disabled=new is None, help=why or it.help,
                       on_click=_press, args=(it.key,), width="stretch")
        note = ss.get(NOTE)
        if ss.get(REFUSED):
            st.caption(f":material/block: {ss[REFUSED]}")
        elif note is not None and note[0] == run.cfg:
            st.caption(note[1])
