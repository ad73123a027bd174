"""The knob row of the Live run page: the few settings a lesson turns, in plain words, above the panels.

The row and the sidebar (:mod:`dashboard.controls`) are two views of the same settings, whose one source of truth
is the canonical values in ``st.session_state`` (:data:`dashboard.link.CANON`):

* a knob moved here hands its new settings to :func:`dashboard.controls.set_values` in its callback, before the
  script run draws anything: the sidebar then draws them, checks them and writes the link, and on a live page the
  run of the new settings starts by itself (:mod:`dashboard.live_session`), as when a sidebar control moves;
* before a knob is drawn, its state is set from the canonical values, so a sidebar control, a preset or a link
  moves it too.

The knobs (:func:`render`; in presentation mode, where the screen's height is the panel's, behind a button on
the panel chooser's line, :func:`popover`): the label noise (the range the flip rates are drawn from; the noise's kind when it is
a table or a noise family), the change points placed on the stream's timeline (written in the schedule's
notation, ``growth@2500``), the trusted sample, β, and what the models are told about the noise (the correction a
lesson turns). The symbols are in the help texts. A knob's key is ``knob_<name>_<version>``, the version of the
sidebar's controls (:func:`dashboard.controls.wkey`): a preset draws the row afresh too, so a click carrying the
values shown before it names no knob. (Two change points are one slider with two thumbs, which Streamlit draws
only from a value given to the widget: that knob is given its value, and its key names it instead.) What a knob shows and what a new value changes are plain functions
(:func:`noise_value`, :func:`change_knob`, ...; tested without Streamlit). The settings' errors are said under
the knob they concern as well as in the sidebar (which presentation mode hides).

>>> from ncld_core.config import RunConfig
>>> noise_value(RunConfig(noise="range", rho_low=0.1, rho_high=0.3)), noise_value(RunConfig(noise="none"))
((0.1, 0.3), (0.0, 0.0))
>>> noise_changes((0.0, 0.0)), noise_changes((0.05, 0.2))
({'noise': 'none'}, {'noise': 'range', 'rho_low': 0.05, 'rho_high': 0.2})
>>> knob = change_knob(RunConfig(schedule="growth@2500"), None)
>>> knob.label, knob.value, knob.options[:3], change_changes(knob, 1000)
('concept growth at instance', 2500, ('none', 250, 500), {'schedule': 'growth@1000'})
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from ncld_core.config import RunConfig
from ncld_core.eval.runner import RATE_MODES
from ncld_core.stream.noise_families import NOISE_FAMILIES
from ncld_core.stream.schedule import KINDS

from . import controls
from .link import CANON
from .ui import md_escape

__all__ = ["NONE", "PAPER", "RATE_MAX", "TRUSTED_SHARES", "MAX_POSITIONS", "ChangeKnob", "knob_key", "noise_value",
           "noise_changes", "noise_kinds", "change_knob", "change_changes", "trusted_options", "beta_value", "render",
           "popover"]

ss = st.session_state
_DEFAULT = RunConfig()
#: The knob row's stylesheet (compact labels, its knobs side by side).
STYLE = Path(__file__).resolve().parent / "static" / "knob_row.css"

#: The noise range knob's largest rate: a label's two rates must sum below 1 (``rho_high`` below 0.5).
RATE_MAX = 0.49
RATE_STEP = 0.01
#: The change-point knob's option for no change, and for the paper's form (a change after the first pool).
NONE, PAPER = "none", "paper"
#: The most places the change-point knob offers (a chunk's start each; every k-th chunk's on a long stream).
MAX_POSITIONS = 200
#: The trusted sample's shares of each chunk the knob offers (the setting's own value is added when between).
TRUSTED_SHARES = (0.0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5)

_KIND_WORDS = {"growth": "concept growth", "reduction": "concept reduction", "shift": "label shift"}
_NOISE_WORDS = {"none": "no noise", "range": "flip rates in a range", "table": "a table of flip rates per label",
                "missing": "missing labels", "mixed": "mixed (paper's or missing, per label)"}
_RATE_WORDS = {"known": "rates told", "estimate": "rates estimated", "ignore": "no correction"}


def knob_key(name: str, state=None) -> str:
    """The widget key of knob ``name`` in this version of the controls (``editor_ver`` of ``state``: by default
    this session's)."""
    state = ss if state is None else state
    return f"knob_{name}_{state['editor_ver'] if 'editor_ver' in state else 0}"


def _number(value, low: float, high: float, default: float) -> float:
    """``value`` as a knob shows it: the default when it is no number, else held to the knob's range (the setting
    itself is left as it is; its error is said under the knob)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value != value:
        return default
    return min(max(float(value), low), high)


# --------------------------------------------------------------------------- the label noise
def noise_value(cfg) -> tuple[float, float] | None:
    """The noise knob's ``(low, high)`` flip rates: ``(0, 0)`` for no noise; None when the noise is a table or a
    noise family (the knob then offers the kinds of noise, :func:`noise_kinds`)."""
    if cfg.noise == "none":
        return (0.0, 0.0)
    if cfg.noise != "range":
        return None
    low = _number(cfg.rho_low, 0.0, RATE_MAX, _DEFAULT.rho_low)
    high = _number(cfg.rho_high, 0.0, RATE_MAX, _DEFAULT.rho_high)
    return (min(low, high), max(low, high))


def noise_changes(value) -> dict:
    """The settings a new noise knob value sets: a ``(low, high)`` range (both 0: no noise), or a kind of noise."""
    if isinstance(value, (tuple, list)):
        low, high = (round(float(v), 2) for v in value)  # the knob's step: no 0.30000000000000004 in the link
        return {"noise": "none"} if high == 0 else {"noise": "range", "rho_low": low, "rho_high": high}
    return {"noise": value}


def noise_kinds(cfg) -> list[str]:
    """The kinds of noise the knob offers when the noise is a table or a family: every kind but the paper's family
    (the range 0.2-0.4)."""
    kinds = ["none", "range", "table", *(n for n in NOISE_FAMILIES if n != "paper")]
    return kinds if cfg.noise in kinds else [*kinds, cfg.noise]


# --------------------------------------------------------------------------- the change points
@dataclass(frozen=True)
class ChangeKnob:
    """What the change-point knob shows: a choice of a kind (``kinds`` empty: no change point yet; the kind chosen
    is placed at the middle of ``places``), a slider over the stream's chunk starts (one change point: ``value``
    one option; two: a pair), or a ``note`` in its place."""

    label: str = "concept change"
    options: tuple = ()
    value: object = None
    kinds: tuple = ()
    note: str | None = None
    places: tuple = ()

    @property
    def choose_kind(self) -> bool:
        return self.note is None and not self.kinds


def _length(cfg, n_available) -> int | None:
    try:
        length = cfg.stream.length(n_available)
    except TypeError:
        return None
    return length if isinstance(length, int) and not isinstance(length, bool) else None


def _places(cfg, n_available) -> list[int] | None:
    """Where a change may be placed: each chunk's start after the first chunk's, inside the stream (None when the
    stream's length or the chunk size is not known or not valid)."""
    length, size = _length(cfg, n_available), cfg.chunk_size
    if length is None or not isinstance(size, int) or isinstance(size, bool) or not 2 <= size < length:
        return None
    places = range(size, length, size)  # (a range: a stream length past its bound is said, not listed)
    stride = -(-len(places) // MAX_POSITIONS)  # every k-th chunk's start on a long stream
    return list(places[::stride])


def change_knob(cfg, n_available: int | None) -> ChangeKnob:
    """The change-point knob of ``cfg`` on a stream of ``n_available`` instances (the dataset's; None: unknown or
    the synthetic generator's own length)."""
    try:
        schedule = cfg.drift_schedule
    except ValueError:
        return ChangeKnob(note="the change points cannot be read (see the sidebar's error)")
    points = [] if schedule is None else list(schedule.points)
    places = _places(cfg, n_available)
    if not points:
        if places is None:
            return ChangeKnob(note="no change point (the stream's length and chunk size are needed to place one)")
        return ChangeKnob(options=(NONE, *KINDS), value=NONE, places=tuple(places))
    if len(points) > 2:
        return ChangeKnob(note=f"{len(points)} change points ({cfg.schedule}): moved in the sidebar")
    if places is None:
        return ChangeKnob(note=f"change points {cfg.schedule}: the stream's length and chunk size are needed to "
                               "move them")
    kinds = tuple(p.kind for p in points)
    at = [PAPER if p.position is None else p.position for p in points]
    positioned = sorted({*places, *(p for p in at if p != PAPER)})
    if len(points) == 1:
        options = (NONE, *([PAPER] if at[0] == PAPER else []), *positioned)
        return ChangeKnob(f"{_KIND_WORDS[kinds[0]]} at instance", options, at[0], kinds)
    return ChangeKnob(f"{kinds[0]}, then {kinds[1]} at instances", tuple(positioned), tuple(at), kinds)


def change_changes(knob: ChangeKnob, value) -> dict:
    """The schedule a new value of the change-point ``knob`` sets, in the schedule's notation (``growth@2500``)."""
    if knob.choose_kind:
        if value == NONE:
            return {"schedule": ""}
        return {"schedule": f"{value}@{knob.places[len(knob.places) // 2]}"}
    if len(knob.kinds) == 1:
        if value == NONE:
            return {"schedule": ""}
        return {"schedule": knob.kinds[0] if value == PAPER else f"{knob.kinds[0]}@{value}"}
    return {"schedule": ", ".join(f"{kind}@{at}" for kind, at in zip(knob.kinds, value))}


def _change_place_text(value) -> str:
    """A place on the change-point knob: the instance (short: two thumbs' texts stand side by side)."""
    return {NONE: "none", PAPER: "paper's place"}.get(value, str(value))


# --------------------------------------------------------------------------- the trusted sample, β
def trusted_options(cfg) -> tuple[tuple, float]:
    """The trusted-sample knob's shares and the one it shows (the setting's, when it is a share the setting can
    hold; else none)."""
    value = cfg.trusted_fraction
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= TRUSTED_SHARES[-1]
    shown = float(value) if ok else 0.0
    return tuple(sorted({*TRUSTED_SHARES, shown})), shown


def beta_value(cfg) -> float:
    """The β knob's value: the setting's, held to [0, 1] (its default when the box is empty)."""
    return _number(cfg.beta, 0.0, 1.0, _DEFAULT.beta)


# --------------------------------------------------------------------------- drawing
def _keyed(name: str, shown) -> str:
    """The knob's key, its state set to ``shown`` (the canonical values' view) before the knob is drawn.

    Set on every run, not only when it differs: a state set in this run is sent to the browser with the widget,
    and a knob the browser mounts afresh (opening :func:`popover`, whose content is in the page only while it is
    open) shows what it was sent, else its first option (a trusted sample of 2 % was shown as 0 %)."""
    key = knob_key(name)
    ss[key] = shown
    return key


def _drawn(*fields) -> tuple:
    """What a knob is drawn from: the controls' version (its key's, :func:`knob_key`) and the canonical values of
    the settings ``fields`` it shows."""
    canon = ss.get(CANON, {})
    return ss.get("editor_ver", 0), tuple((name, canon.get(name)) for name in fields)


def _moved(key: str, drawn: tuple, changes):
    """A knob's callback: its new value's settings into the canonical values and the sidebar's controls.

    Only for a knob drawn from the settings as they are (``drawn``, :func:`_drawn`); Streamlit calls the callback
    of a knob the page no longer shows too:

    * a click that reaches the server while a preset's (or a link's) script run still draws carries the knobs
      drawn before it, and the interrupted run has not removed them, so their callbacks come too, with the
      settings from before the preset (they set them back, and Run ran those): the version differs;
    * a rerun the browser sends before it has drawn the last script run (the live part's poll, under load)
      carries the knobs it still shows: the change knob's choice of a kind ("none"), gone once the sidebar's
      "Add a change point" made a change point, came as a change to "none" and took the point away
      (tests/test_knob_row.py): the setting differs."""
    if drawn == _drawn(*(name for name, _ in drawn[1])):
        controls.set_values(changes(ss[key]))


def _errors(ctx, *fields):
    for name in fields:
        if name in ctx.errors:
            st.error(md_escape(ctx.errors[name]), icon=":material/error:")


def _noise(ctx):
    cfg = ctx.cfg
    value = noise_value(cfg)
    if value is not None:
        key = _keyed("noise", value)
        st.slider("label noise: flip rates", 0.0, RATE_MAX, step=RATE_STEP, format="%.2f",
                  key=key, on_change=_moved, args=(key, _drawn("noise", "rho_low", "rho_high"), noise_changes),
                  help="The chance that a label is flipped: ρ₊ (a relevant label dropped) and ρ₋ (an irrelevant "
                       "one added), drawn for every label between the two ends (the paper: 0.2-0.4). Both at 0: "
                       "no noise. The sidebar's label noise section also has a table per label and the noise "
                       "families.")
    else:
        key = _keyed("noise_kind", cfg.noise)
        st.selectbox("label noise", noise_kinds(cfg), key=key, on_change=_moved,
                     args=(key, _drawn("noise"), noise_changes), format_func=lambda k: _NOISE_WORDS.get(k, k),
                     help="How the flip rates ρ₊ (a relevant label dropped) and ρ₋ (an irrelevant one added) of "
                          "each label are set: "
                          + "; ".join(f"{n}: {f.description}" for n, f in NOISE_FAMILIES.items() if n != "paper")
                          + ". Choose the range to set them with a slider here.")
    _errors(ctx, "noise", "rho_low", "rho_high", "rates")


def _change_points(ctx):
    cfg = ctx.cfg
    facts = ctx.facts
    knob = change_knob(cfg, None if facts is None else facts.n_instances)
    help_text = ("Where the true label distribution changes: the first instance of the new regime, at a chunk's "
                 "start here (any instance in the sidebar). Concept growth: to multi-label instances; reduction: to "
                 "single-label ones; label shift: other labels relevant, as many. The learners are never told "
                 "where. The link writes it as growth@2500.")
    if knob.note is not None:
        st.caption(md_escape(knob.note))
    elif knob.choose_kind:
        key = _keyed("change_kind", NONE)
        st.selectbox(knob.label, knob.options, key=key, on_change=_moved,
                     args=(key, _drawn("schedule"), lambda v: change_changes(knob, v)),
                     format_func=lambda k: "none" if k == NONE else f"{_KIND_WORDS[k]} (placed mid-stream)",
                     help=help_text)
    elif len(knob.kinds) == 1:
        key = _keyed("change", knob.value)
        st.select_slider(knob.label, knob.options, key=key, on_change=_moved,
                         args=(key, _drawn("schedule"), lambda v: change_changes(knob, v)),
                         format_func=_change_place_text, help=help_text)
    else:
        # two thumbs: a select slider is a range only when its value (not its state) is a pair, so the pair is
        # given as the value and named in the key (a new key when the setting moves, elsewhere too)
        key = f"{knob_key('change_pair')}_{'_'.join(map(str, knob.value))}"
        st.select_slider(knob.label, knob.options, value=knob.value, key=key, on_change=_moved,
                         args=(key, _drawn("schedule"), lambda v: change_changes(knob, v)),
                         format_func=_change_place_text, help=help_text)
    _errors(ctx, "schedule")


def _trusted(ctx):
    options, shown = trusted_options(ctx.cfg)
    key = _keyed("trusted", shown)
    st.select_slider("trusted sample", options, key=key, on_change=_moved,
                     args=(key, _drawn("trusted_fraction"), lambda v: {"trusted_fraction": float(v)}),
                     format_func=lambda v: f"{v:.1%}",
                     help="The share of each chunk whose labels a user has checked by hand (their clean labels "
                          "revealed). The models told nothing about the noise use them for the flip rates and the "
                          "cardinality band (docs/flip-rates.md).")
    _errors(ctx, "trusted_fraction")


def _beta(ctx):
    key = _keyed("beta", beta_value(ctx.cfg))
    st.slider("label fit weight", 0.0, 1.0, step=0.01, format="%.2f", key=key,
              on_change=_moved, args=(key, _drawn("beta"), lambda v: {"beta": round(float(v), 2)}),
              help="β of Eq. (N2): how much the model fits the observed labels (1) rather than its neighbours' "
                   "scores in the chunk's feature graph (0).")
    _errors(ctx, "beta")


def _correction(ctx):
    cfg = ctx.cfg
    options = list(RATE_MODES) if cfg.model_rates in RATE_MODES else [*RATE_MODES, cfg.model_rates]
    key = _keyed("model_rates", cfg.model_rates)
    st.selectbox("noise correction", options, key=key, on_change=_moved,
                 args=(key, _drawn("model_rates"), lambda v: {"model_rates": v}),
                 format_func=lambda m: _RATE_WORDS.get(m, m),
                 help="What the ELM-NCLD variants know of the label noise: the true flip rates ρ₊, ρ₋ (the "
                      "paper's setting), nothing (they estimate the rates online, with the trusted sample when "
                      "there is one), or rates 0 (no correction). The baselines are never told.")
    _errors(ctx, "model_rates")


KNOBS = (_noise, _change_points, _trusted, _beta, _correction)


def render(ctx, *, stacked: bool = False) -> None:
    """The knob row of the settings ``ctx`` (:class:`dashboard.controls.Context`), above the Live run's panels
    (``stacked``: the knobs one under another, as :func:`popover` shows them)."""
    st.html(STYLE)
    with st.container(key="knob_row"):
        if stacked:
            for draw in KNOBS:
                draw(ctx)
            return
        cols = st.columns([5, 5, 4, 4, 4], gap="small", vertical_alignment="top")
        for col, draw in zip(cols, KNOBS):
            with col:
                draw(ctx)


def popover(ctx) -> None:
    """Presentation mode: the knobs behind a button, drawn where the caller puts it (the panel chooser's line,
    :func:`dashboard.present_view.panel_nav`). A row above the panel took the height a lesson's step and its
    panel need at 1280 x 720 and 1024 x 768 (tests/test_dashboard_browser.py fits them); opened, the knobs lie
    over the page and move nothing."""
    st.html(STYLE)  # (outside the popover: its content is in the page only while it is open)
    with st.popover("Settings", icon=":material/tune:", key="knob_popover",
                    help="The knobs a lesson turns (noise, change point, trusted sample, β, the correction): a "
                         "moved knob starts its run once Run has been pressed."):
        render(ctx, stacked=True)
