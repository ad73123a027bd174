"""The Live run's panels, in one registry: what each draws, its heading, its explanation and how a
pinned run is drawn under it.

Every consumer reads :data:`PANELS` (at call time, so a test can swap it): the Live run page lays
out one panel per entry and redraws their figures after each chunk (``dashboard/views/run.py``),
the HTML report embeds them (:func:`dashboard.report.run_figures`), the compare section draws a
pinned run under them (:func:`dashboard.compare.overlay`) and the server's warm-up draws each once
(:func:`dashboard.data.warm_up`). A panel's letter is its place in :data:`PANELS`.

Adding a panel: write its figure function (``PanelData -> plotly Figure``, or None while it has
nothing to draw; the figures themselves live in :mod:`dashboard.figures`), its explanation (a
:class:`~dashboard.teaching.Teaching` in :mod:`dashboard.teaching`) and one :class:`Panel` entry in
:data:`PANELS`.

Plain data only, no Streamlit: the registry and every function here are tested without it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pandas as pd

from ncld_core.model.flip_rates import estimate_errors

from . import figures as F
from . import teaching as T
from .teaching import Teaching

__all__ = ["PanelData", "BaselineDraw", "Panel", "PANELS", "letter", "heading", "figures", "dimmed_lines",
           "every_trace", "by_key", "focus_span", "acting_learner", "drawn_order"]


@dataclass(frozen=True)
class PanelData:
    """What every panel is drawn from: a run's records so far and what the page chose to show.

    ``focus``: the variants whose estimates and detectors the per-variant panels draw (default: every
    model); ``show_paper``: the paper's Eq. (card) estimate in the cardinality panel; ``rho_pos``,
    ``rho_neg``: the stream's true flip rates (drawn as the oracle), ``label_names`` its labels';
    ``default_rates``: what the models are told about the rates ("known", "estimate", "ignore"), said
    by a heading before the first record; ``trusted_fraction``: the stream's trusted sample (share of each
    chunk; 0: none); ``noise_changes``: ``(position, factor)`` of the stream's noise changes (every panel marks
    them; the true rates of panel (e) follow them).
    """

    chunks: Sequence = ()
    models: Sequence[str] = ()
    change_points: Sequence[tuple[int, str]] = ()
    chunk_size: int = 1
    n_chunks: int | None = None
    focus: Sequence[str] | None = None
    show_paper: bool = False
    rho_pos: object = None
    rho_neg: object = None
    label_names: Sequence[str] = ()
    default_rates: str = "known"
    trusted_fraction: float = 0.0
    noise_changes: Sequence[tuple[int, float]] = ()

    @property
    def detail(self) -> list[str]:
        """The models the per-variant panels draw."""
        return list(self.focus) if self.focus else list(self.models)


@dataclass(frozen=True)
class BaselineDraw:
    """How a pinned run is drawn under a panel: its legend ``prefix`` (``"baseline #k: "``) and whether
    its true change points are the current run's (``same_truth``: then drawn once)."""

    prefix: str
    same_truth: bool


def every_trace(spec: dict, base: dict, how: BaselineDraw) -> list[dict]:
    """Every trace of the baseline's figure that has data (the default overlay of a panel)."""
    return [t for t in base["data"] if _has_data(t)]


def _has_data(trace: dict) -> bool:
    return any(v is not None for v in (trace.get("x") or []))


@dataclass(frozen=True)
class Panel:
    """One panel of the Live run.

    ``key`` names it everywhere: its figure's slot, its containers in the page (``panel_<key>``),
    presentation mode's choice. ``title``: its heading after its letter (a function of the records drawn
    when the heading says what they show); ``label``: its name in presentation mode's selector;
    ``teaching``: the explanation beside it.

    ``figure``: its figure function (None while it has nothing to draw). ``overlay``: which traces of a
    pinned run's figure (the same function on the pinned run's records) are drawn, dimmed, under it; it
    may widen the current figure's axes (it gets the current figure's spec to edit); None: no overlay.
    ``caption`` (above the graph), ``note`` (below it) and ``table`` (below, headed ``table_title`` in
    the report; ``table_scrolls``: a scrolling table of 4-decimal numbers rather than every row) are
    written beside the figure when they return something.

    ``per_variant``: it draws the records of the variants chosen in "show the records of" (the choice,
    and the paper's estimate on request, sit above the first such panel); ``wide``: the graph takes the
    page's width, its explanation beside the heading; ``kind="summary"``: the run's summary table and
    downloads instead of a figure.
    """

    key: str
    title: str | Callable[[PanelData], str]
    label: str
    teaching: Teaching
    figure: Callable[[PanelData], object] | None = None
    overlay: Callable[[dict, dict, BaselineDraw], list[dict]] | None = every_trace
    caption: Callable[[PanelData], str | None] | None = None
    note: Callable[[PanelData], str | None] | None = None
    table: Callable[[PanelData], pd.DataFrame | None] | None = None
    table_title: str = ""
    table_scrolls: bool = False
    per_variant: bool = False
    wide: bool = False
    kind: str = "graph"


# --------------------------------------------------------------------------- whose records (b)-(d) draw
#: The learners a run acts with, in the order the per-variant panels prefer them (ELM-O: the model the
#: run's notes speak of); an oracle is never one (it learns labels the learner never has).
ACTING_ORDER = ("ELM-O", "ELM-I", "ELM-II")


def acting_learner(models) -> str | None:
    """The learner panels (b)-(d) show by default: ELM-O, else the first ELM-NCLD variant, else None.

    >>> acting_learner(["ELM-O (clean labels)", "ELM-O", "ELM (plain)"])
    'ELM-O'
    >>> acting_learner(["ELM (plain)", "ELM-II"]), acting_learner(["ML-kNN"])
    ('ELM-II', None)
    """
    from ncld_core.eval.variants import ELM_VARIANTS, ORACLES

    models = list(models)
    for name in (*ACTING_ORDER, *(m for m in models if m in ELM_VARIANTS and m not in ORACLES)):
        if name in models:
            return name
    return None


def drawn_order(models) -> list[str]:
    """Every model, the acting learner first and the oracles last: the first drawn names panel (b)'s
    heading and note, so an oracle never speaks for the run (it is drawn, legend "(oracle)", after).

    >>> drawn_order(["ELM-O (clean labels)", "ELM-O", "ELM (plain)"])
    ['ELM-O', 'ELM (plain)', 'ELM-O (clean labels)']
    """
    from ncld_core.eval.variants import ORACLES

    first = acting_learner(models)
    rest = [m for m in models if m != first]
    return ([first] if first else []) + [m for m in rest if m not in ORACLES] + [m for m in rest if m in ORACLES]


# --------------------------------------------------------------------------- (a) quality
def _metrics(d: PanelData):
    return F.metrics_figure(d.chunks, d.models, d.change_points, d.chunk_size, d.n_chunks,
                            noise_changes=d.noise_changes)


def dimmed_lines(spec: dict, base: dict, how: BaselineDraw) -> list[dict]:
    """The baseline's cumulative curves (lines), not its per-chunk markers."""
    return [t for t in base["data"] if t.get("mode") == "lines"]


# --------------------------------------------------------------------------- (b) cardinality
def _cardinality(d: PanelData):
    return F.cardinality_figure(d.chunks, d.detail, d.change_points, d.chunk_size, d.n_chunks,
                                show_paper=d.show_paper, noise_changes=d.noise_changes)


def _cardinality_title(d: PanelData) -> str:
    return F.cardinality_title(d.chunks, d.detail, default_mode=d.default_rates)


def _cardinality_note(d: PanelData) -> str | None:
    return F.cardinality_note(d.chunks, d.detail, trusted_fraction=d.trusted_fraction, show_paper=d.show_paper) or None


def _cardinality_lines(spec: dict, base: dict, how: BaselineDraw) -> list[dict]:
    """Every line of the baseline; the bands stay the current run's."""
    return [t for t in base["data"]
            if _has_data(t) and not t.get("fill") and (t.get("line") or {}).get("width", 1) > 0]


# --------------------------------------------------------------------------- (c) drift tests
def _detectors(d: PanelData):
    return F.detector_figure(d.chunks, d.detail, d.change_points, d.chunk_size, d.n_chunks,
                             noise_changes=d.noise_changes)


def _detector_lines(spec: dict, base: dict, how: BaselineDraw) -> list[dict]:
    """Every line of the baseline; the log axis is widened to hold both runs' statistics."""
    ya, yb = spec["layout"]["yaxis"], base["layout"]["yaxis"]
    ya["range"] = [min(ya["range"][0], yb["range"][0]), max(ya["range"][1], yb["range"][1])]
    return every_trace(spec, base, how)


# --------------------------------------------------------------------------- (d) firings
def _timeline(d: PanelData):
    return F.timeline_figure(d.chunks, d.detail, d.change_points, d.chunk_size, d.n_chunks,
                             noise_changes=d.noise_changes)


def _detections(d: PanelData) -> pd.DataFrame | None:
    if not F.detecting_models(d.chunks, d.detail):
        return None
    return F.detection_table(d.chunks, d.detail, d.change_points, d.chunk_size)


def _timeline_rows(spec: dict, base: dict, how: BaselineDraw) -> list[dict]:
    """The baseline's firings on rows of their own (one per baseline detector, under the current run's);
    its true changes get a row only when they are not the current run's."""
    add = []
    for t in base["data"]:
        if not _has_data(t) or (how.same_truth and t.get("y") and t["y"][0] == F.TRUE_CHANGE_ROW):
            continue
        add.append(dict(t, y=[how.prefix + str(y) for y in t["y"]]))
    rows = [how.prefix + r for r in base["layout"]["yaxis"]["categoryarray"][::-1]
            if not (how.same_truth and r == F.TRUE_CHANGE_ROW)]
    ya = spec["layout"]["yaxis"]
    ya["categoryarray"] = rows[::-1] + list(ya["categoryarray"])
    ya["tickvals"] = list(ya["tickvals"]) + rows
    ya["ticktext"] = list(ya["ticktext"]) + [F.wrap_label(r) for r in rows]
    ya["range"] = [-0.6, len(ya["categoryarray"]) - 0.4]
    spec["layout"]["height"] = spec["layout"].get("height", 240) + 40 * len(rows)
    return add


# --------------------------------------------------------------------------- (e) flip rates
def _estimating(d: PanelData) -> list[str]:
    """The models that estimate their own flip rates in these records."""
    return [m for m in d.models
            if any(m in c.diagnostics and c.diagnostics[m].estimates_rates for c in d.chunks)]


def _noise_changes(d: PanelData) -> list:
    from ncld_core.stream.stream import NoiseChange

    return [NoiseChange(p, f) for p, f in d.noise_changes]


def _rates(d: PanelData):
    estimating = _estimating(d)
    if not estimating:
        return None
    over_time, _ = estimate_errors(d.chunks, estimating[0], d.rho_pos, d.rho_neg, _noise_changes(d))
    return F.flip_rate_figure(over_time, n_chunks=d.n_chunks, noise_changes=d.noise_changes, chunk_size=d.chunk_size)


def _rates_caption(d: PanelData) -> str:
    estimating = _estimating(d)
    if not estimating:
        return ("No variant estimates its flip rates in this run: set *noise correction* (above the panels) "
                "to *rates estimated*.")
    others = estimating[1:]
    return (f"{estimating[0]}'s estimates"
            + (f" ({', '.join(others)} estimate their own; they part from these after a drift they act on)."
               if others else "."))


def _rates_table(d: PanelData) -> pd.DataFrame | None:
    """The newest estimates per label, as the model holds them (beside the true rates when known)."""
    estimating = _estimating(d)
    if not estimating:
        return None
    _, per_label = estimate_errors(d.chunks, estimating[0], d.rho_pos, d.rho_neg, _noise_changes(d))
    names = list(d.label_names or [])
    if names and len(names) == len(per_label):
        per_label["label"] = names
    return per_label


#: The Live run's panels, in reading order (their letters).
PANELS: tuple[Panel, ...] = (
    Panel("metrics", "Prediction quality per variant", "quality", T.METRICS, figure=_metrics,
          overlay=dimmed_lines, wide=True),
    Panel("cardinality", _cardinality_title, "cardinality", T.CARDINALITY, figure=_cardinality,
          overlay=_cardinality_lines, note=_cardinality_note, per_variant=True),
    Panel("threshold", "Drift tests: each detector's statistic ÷ threshold (fires above 1)", "drift tests",
          T.THRESHOLD, figure=_detectors, overlay=_detector_lines, per_variant=True),
    Panel("timeline", "Each detector's firings against the true change points", "firings", T.TIMELINE,
          figure=_timeline, overlay=_timeline_rows, table=_detections, table_title="Drift detection per detector",
          per_variant=True),
    Panel("rates", f"Flip rates: estimated against the true rates ({F.ORACLE})", "flip rates", T.RATES,
          figure=_rates, overlay=None, caption=_rates_caption, table=_rates_table,
          table_title="Flip rates per label (the last chunk's estimates)", table_scrolls=True),
    Panel("summary", "Summary", "summary", T.SUMMARY, overlay=None, kind="summary"),
)


def letter(index: int) -> str:
    """The letter of the panel at ``index`` of :data:`PANELS` (and of the sections after them)."""
    return chr(ord("a") + index)


def by_key(key: str) -> Panel:
    """The panel named ``key``; KeyError names the known ones."""
    for panel in PANELS:
        if panel.key == key:
            return panel
    raise KeyError(f"no panel {key!r}: the panels are {', '.join(p.key for p in PANELS)}")


def heading(panel: Panel, data: PanelData | None = None) -> str:
    """``"(b) ..."``: the panel's letter and its title (for the records in ``data``)."""
    index = next(i for i, p in enumerate(PANELS) if p.key == panel.key)
    title = panel.title(data or PanelData()) if callable(panel.title) else panel.title
    return f"({letter(index)}) {title}"


def focus_span() -> str:
    """``"(b)–(d)"``: the letters of the per-variant panels (those the choice of variants applies to)."""
    found = [letter(i) for i, p in enumerate(PANELS) if p.per_variant]
    if not found:
        return ""
    return f"({found[0]})" if len(found) == 1 else f"({found[0]})–({found[-1]})"


def figures(data: PanelData, keys=None) -> dict:
    """``{key: figure}`` of every panel (of those in ``keys``) with something to draw, in reading order."""
    out = {}
    for panel in PANELS:
        if panel.figure is None or (keys is not None and panel.key not in keys):
            continue
        fig = panel.figure(data)
        if fig is not None:
            out[panel.key] = fig
    return out
