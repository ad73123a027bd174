"""Plotly figures of the dashboard, built from the runner's ChunkResults (no model math here).

Every function takes plain data (a list of :class:`~ncld_core.eval.runner.ChunkResult`,
the true change points, the chunk size) and returns a ``plotly.graph_objects.Figure``;
the live view redraws them after every chunk, the HTML report embeds them.
Figures are built from dicts (one validation pass in ``go.Figure``) to keep the
per-chunk redraw cheap.
"""

from __future__ import annotations

import html
import math
import numbers
import re
import zlib

import plotly.graph_objects as go

from ncld_core.eval.baselines import BASELINES
from ncld_core.eval.cardinality_eval import interval_report
from ncld_core.eval.compare import coinciding_groups
from ncld_core.eval.drift_eval import change_chunks, detection_report
from ncld_core.eval.variants import ORACLES, REFERENCES
from ncld_core.model.detector import DETECTORS

from .teaching import BANDS, detector_label

__all__ = [
    "COLORS",
    "LIVE_METRICS",
    "model_color",
    "metrics_figure",
    "cardinality_figure",
    "cardinality_mode",
    "cardinality_note",
    "cardinality_title",
    "detector_figure",
    "detector_series",
    "timeline_figure",
    "schedule_figure",
    "sweep_figure",
    "gamma_labels",
    "SWEEP_MIN_SPAN",
    "detection_table",
    "firing_classes",
    "ORACLE",
    "CHANGE_NAME",
    "NOISE_CHANGE_NAME",
    "noise_text",
    "coinciding_models",
    "model_legend",
    "fix_y_ranges",
    "figure_from_spec",
    "wrap_label",
    "flip_rate_figure",
]

#: One colour per model the runner knows, the same on every run, panel and page (a colour taken by the position of
#: a model in the run's list changed when another model was added). Red is the true changes' colour.
COLORS = {
    "ELM-O": "#1f77b4",
    "ELM-I": "#ff7f0e",
    "ELM-II": "#2ca02c",
    "ELM (plain)": "#9467bd",
    "all-negative": "#7f7f7f",
    "noisy-prior": "#8c564b",
    "ELM-O (noise ignored)": "#bcbd22",
    "ELM-NCLD (paper settings)": "#17becf",
    "ELM-O (clean labels)": "#7b4173",
}
_EXTRA = ["#393b79", "#637939", "#8c6d31", "#843c39", "#3182bd", "#e6550d", "#31a354", "#756bb1", "#636363",
          "#d6616b", "#ce6dbd", "#9c9ede", "#e7ba52", "#6baed6"]
COLORS.update({name: _EXTRA[i % len(_EXTRA)] for i, name in enumerate(BASELINES)})
#: (key, title, direction) of the metrics drawn live, the paper's three; panel (a) writes the title
#: over the direction (two short lines: three subplots share a chart as narrow as 285 px).
LIVE_METRICS = (
    ("hamming_loss", "Hamming loss", "lower is better"),
    ("micro_f1", "micro-F1", "higher is better"),
    ("average_precision", "average precision", "higher is better"),
)
_CHANGE_COLOR = "#d62728"
#: What the learner never sees (true cardinality, change points, regimes, flip rates; the oracle's
#: clean labels) says so in every legend entry that draws it, with this suffix.
ORACLE = "oracle: hidden from the learner"
#: The legend entry of the true change lines (every panel that draws them).
CHANGE_NAME = f"true change ({ORACLE}; dotted: shift)"
_REGIME_FILL = {"single": "rgba(31,119,180,0.07)", "multi": "rgba(255,127,14,0.10)"}
_FONT = dict(size=12)


def figure_from_spec(spec: dict) -> go.Figure:
    """A Figure from a plain dict without plotly's per-property validation (10x faster per redraw).

    The dicts are checked by the tests (``go.Figure(fig.to_dict())`` validates); should plotly
    drop the ``_validate`` switch, the validated constructor is used.
    """
    try:
        return go.Figure(spec, _validate=False)
    except TypeError:  # pragma: no cover - older / newer plotly
        return go.Figure(spec)


def model_color(name: str) -> str:
    """The model's colour: its own in :data:`COLORS`, else one chosen by its name (never by its position among
    the run's models, so a name keeps its colour whatever runs beside it).

    >>> model_color("ELM-O (clean labels)") == COLORS["ELM-O (clean labels)"]
    True
    >>> model_color("my model") in _EXTRA  # by a checksum of the name: the same in every process
    True
    """
    if name in COLORS:
        return COLORS[name]
    return _EXTRA[zlib.crc32(str(name).encode("utf-8")) % len(_EXTRA)]


def _esc(text) -> str:
    """Plotly renders a subset of HTML in names and labels: escape anything from the user.

    Quotes are left as they are: plotly reads tags, not attributes, outside a tag a quote is text.
    """
    return html.escape(str(text), quote=False)


def _none(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else v


def _layout(height: int, **kw) -> dict:
    base = dict(
        height=height,
        margin=dict(l=55, r=15, t=40, b=40),
        legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0, font=_FONT,
                    traceorder="normal"),  # groups flow on one line instead of one block each
        hovermode="x unified",
        uirevision="keep",  # keeps zoom / hidden traces across redraws
    )
    base.update(kw)
    return base


#: The regime a change point leads to; other kinds (``shift``: other labels relevant, same
#: cardinality) keep the regime.
_REGIME_AFTER = {"growth": "multi", "reduction": "single"}
_REGIME_BEFORE = {"growth": "single", "reduction": "multi"}
_KIND_DASH = {"growth": "dash", "reduction": "dash"}  # any other kind: dotted
_KIND_SYMBOL = {"growth": "diamond", "reduction": "diamond"}  # any other kind (shift): an open diamond


def _initial_regime(change_points):
    """single / multi before the first growth or reduction; None when there is none."""
    for _, kind in change_points:
        if kind in _REGIME_BEFORE:
            return _REGIME_BEFORE[kind]
    return None


def _change_shapes(change_points, chunk_size, xrefs=("x",)) -> list[dict]:
    """A vertical line per true change (dashed; dotted for a shift or any other kind)."""
    shapes = []
    cuts = change_chunks([p for p, _ in change_points], chunk_size)
    for c, (_, kind) in zip(cuts, change_points):
        for xref in xrefs:
            yref = "paper" if xref == "x" else f"y{xref[1:]} domain"
            shapes.append(dict(type="line", xref=xref, yref=yref, x0=c, x1=c, y0=0, y1=1,
                               line=dict(color=_CHANGE_COLOR, width=1.5, dash=_KIND_DASH.get(kind, "dot"))))
    return shapes


#: Height (px) kept free above the plot area for the change labels.
_LABEL_PX = 16


def _change_labels(change_points, chunk_size) -> list[dict]:
    """The kind of each true change written over its line, just above the plot area (no data there)."""
    cuts = change_chunks([p for p, _ in change_points], chunk_size)
    return [dict(text=_esc(kind), x=c, y=1, yshift=1, xref="x", yref="paper", xanchor="center", yanchor="bottom",
                 showarrow=False, font=dict(size=10, color=_CHANGE_COLOR))
            for c, (_, kind) in zip(cuts, change_points)]


def _change_legend(change_points) -> list[dict]:
    """A legend-only entry naming the true change lines as oracle (none without a change)."""
    if not change_points:
        return []
    return [dict(type="scatter", x=[None], y=[None], mode="lines", name=CHANGE_NAME, legendgroup="truth",
                 line=dict(color=_CHANGE_COLOR, width=1.5, dash="dash"), hoverinfo="skip")]


#: Noise changes of the schedule (``noise@3000x1.5``): not a change of the truth, drawn in a style of their own.
_NOISE_COLOR = "#8c564b"
_NOISE_DASH = "dashdot"
#: The legend's name of the noise change lines (named only where one is drawn).
NOISE_CHANGE_NAME = "noise change: flip rates × factor from there (the models are still told the old rates)"


def noise_text(factor: float) -> str:
    """A noise change's label over its line: ``"noise ×1.5"``, ``"labels clean"`` for ×0.

    >>> noise_text(1.5), noise_text(0.0)
    ('noise ×1.5', 'labels clean')
    """
    return "labels clean" if factor == 0 else f"noise ×{factor:g}"


def _noise_shapes(noise_changes, chunk_size, xrefs=("x",)) -> list[dict]:
    """A vertical line per noise change, at its chunk (brown, dash-dot: not a true change)."""
    cuts = change_chunks([p for p, _ in noise_changes], chunk_size)
    return [dict(type="line", xref=xref, yref="paper" if xref == "x" else f"y{xref[1:]} domain", x0=c, x1=c, y0=0,
                 y1=1, line=dict(color=_NOISE_COLOR, width=1.5, dash=_NOISE_DASH))
            for c in cuts for xref in xrefs]


def _noise_labels(noise_changes, chunk_size) -> list[dict]:
    """Each noise change's factor written inside the plot's top edge, right of its line."""
    cuts = change_chunks([p for p, _ in noise_changes], chunk_size)
    return [dict(text=_esc(noise_text(f)), x=c, y=1, xref="x", yref="paper", xanchor="left", yanchor="top",
                 xshift=2, showarrow=False, font=dict(size=10, color=_NOISE_COLOR))
            for c, (_, f) in zip(cuts, noise_changes)]


def _noise_legend(noise_changes) -> list[dict]:
    """A legend-only entry naming the noise change lines (none without one)."""
    if not noise_changes:
        return []
    return [dict(type="scatter", x=[None], y=[None], mode="lines", name=NOISE_CHANGE_NAME, legendgroup="noise",
                 line=dict(color=_NOISE_COLOR, width=1.5, dash=_NOISE_DASH), hoverinfo="skip")]


def legend_wrap(name: str, width: int = 50) -> str:
    """A legend name longer than ``width`` on several lines: before the variants it names (`` · ``),
    else at spaces; ``name.replace("<br>", " ")`` gives it back."""
    if len(name) <= width:
        return name
    if " · " in name:
        head, tail = name.split(" · ", 1)
        return legend_wrap(head, width) + "<br>" + wrap_label("· " + tail, width)
    return wrap_label(name, width)


def model_legend(name: str) -> str:
    """A model's legend name; an oracle (trained on labels the learner never has) says so."""
    return f"{name} ({ORACLE})" if name in ORACLES else name


def coinciding_models(chunks, models, keys=tuple(k for k, _, _ in LIVE_METRICS)) -> list[list[str]]:
    """Models whose panel (a) curves (per-chunk and cumulative ``keys``) coincide within the tolerance of
    :func:`ncld_core.eval.compare.coinciding_groups`: drawn once, the legend naming all of them."""
    scored = [c for c in chunks if c.metrics]
    series = {name: [v for c in scored for k in keys
                     for v in (c.metrics.get(name, {}).get(k), c.cumulative.get(name, {}).get(k))]
              for name in models}
    return coinciding_groups(series)


#: Width (px) a panel's graph is laid out for when nothing else is known: a narrow panel at 820 px (about 390).
PANEL_PX = 380
#: The graph widths (px) a legend is also laid out for (:func:`fit_legend`): the page draws the layout of the widest
#: of them its graph holds (dashboard/live_chart.py), so that a wide panel's legend is not wrapped for a narrow one.
LEGEND_WIDTHS = (460, 560, 660, 760, 900, 1100)
#: The plot area keeps at least this height (px) per category of a categorical y axis (panel (d)'s rows,
#: whose labels take two lines).
ROW_PX = 40


def _entry_lines(name: str) -> int:
    return name.count("<br>") + 1


def _get(d, *keys):
    """``d[k1][k2]...`` of nested dicts (a figure's spec), None where a level is missing."""
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def _legend_facts(fig) -> dict:
    """What :func:`_legend_layout` needs of ``fig`` (a Figure, or a spec of plain dicts), read once (plotly's property
    reads cost more than the layout): the legend's and the x axes' type sizes, whether the y axis is categorical, the
    side margins and the shown traces' names by index."""
    if isinstance(fig, dict):
        lay = fig.get("layout") or {}
        return dict(
            font=_get(lay, "legend", "font", "size") or _get(lay, "font", "size") or 12,
            axis_font=max([_get(a, "title", "font", "size") for k, a in lay.items()
                           if re.fullmatch(r"xaxis\d*", k) and _get(a, "title", "font", "size")] or [12]),
            category=_get(lay, "yaxis", "type") == "category",
            sides=(_get(lay, "margin", "l") or 0) + (_get(lay, "margin", "r") or 0),
            names=[(i, t.get("name")) for i, t in enumerate(fig.get("data") or [])
                   if t.get("showlegend") is not False and t.get("name")])
    lay = fig.layout
    return dict(
        font=(lay.legend.font.size if lay.legend and lay.legend.font and lay.legend.font.size else None)
        or (lay.font.size if lay.font and lay.font.size else 12),
        axis_font=max([a.title.font.size for a in fig.select_xaxes() if a.title.font.size] or [12]),
        category=bool(lay.yaxis and lay.yaxis.type == "category"),
        sides=(lay.margin.l or 0) + (lay.margin.r or 0),
        names=[(i, t.name) for i, t in enumerate(fig.data) if t.showlegend is not False and t.name])


def _legend_frame(fig) -> dict:
    """The rest :func:`fit_legend` reads of ``fig`` (a Figure or a spec): the top and bottom margins, the height, the
    meta dict and the categorical y axis's categories."""
    if isinstance(fig, dict):
        lay = fig.get("layout") or {}
        meta = lay.get("meta")
        return dict(t=_get(lay, "margin", "t"), b=_get(lay, "margin", "b"), height=lay.get("height"),
                    meta=dict(meta) if isinstance(meta, dict) else {},
                    categories=_get(lay, "yaxis", "categoryarray") if _get(lay, "yaxis", "type") == "category" else None)
    lay = fig.layout
    return dict(t=lay.margin.t, b=lay.margin.b, height=lay.height,
                meta=dict(lay.meta) if isinstance(lay.meta, dict) else {},
                categories=lay.yaxis.categoryarray if lay.yaxis and lay.yaxis.type == "category" else None)


def _legend_layout(facts: dict, width_px: int, columns: int, plot_px: float, axis_b: float, margin_t: float) -> dict:
    """:func:`fit_legend`'s layout of a figure's legend (``facts``: :func:`_legend_facts`) for a graph ``width_px``
    wide: the shown traces' wrapped names (by trace index), the bottom margin, the figure's height and the legend's
    entry width and height limit."""
    font, axis_font = facts["font"], facts["axis_font"]
    # plotly's entry width is a fraction of the plot area's: the margins (and (d)'s row labels, about 120 px, pushed
    # into the left margin) are not the legend's
    plot_w = width_px - facts["sides"] - (120 if facts["category"] else 0)
    while columns > 1 and plot_w / columns < 200:  # too narrow for so many columns side by side: fewer
        columns -= 1
    chars = max(14, int((plot_w / columns - 40) / (0.6 * font)))
    names = {i: legend_wrap(name.replace("<br>· ", " · ").replace("<br>", " "), chars) for i, name in facts["names"]}
    shown = list(names.values())
    rows = [shown[i:i + columns] for i in range(0, len(shown), columns)]
    legend_px = int(sum(max(_entry_lines(n) for n in row) * font * 1.3 + 8 for row in rows)) + (10 if rows else 0)
    below = int(axis_b * max(1.0, axis_font / 12))  # tick labels, the x-axis title and a note under them
    # maxheight: plotly makes a horizontal legend taller than half the figure a scroll box; this one has its room
    return dict(w=int(width_px), names=names, b=below + legend_px, height=int(margin_t + plot_px + below + legend_px),
                plot=plot_px, entrywidth=1 / columns, maxheight=legend_px + 4 * font, font=font)


def fit_legend(fig, *, width_px: int = PANEL_PX, columns: int | tuple[int, ...] = 2,
               wider: tuple = LEGEND_WIDTHS) -> None:
    """Put ``fig``'s legend under the x axis, outside the plot area, in ``columns`` columns (several: for each
    width, the number of them that makes the legend lowest, the fewer on a tie), and grow the figure
    by the legend's height: the plot keeps its own height whatever the number of entries (five detectors and a
    pinned baseline included) and the legend is never a scroll box (plotly scrolls a legend taller than half the
    figure). Names are re-wrapped to the columns' width (``width_px``: the graph's width); the plot area of a
    categorical y axis gets :data:`ROW_PX` per row. Applied again (after an overlay or larger type), it lays the
    legend out afresh.

    The same is laid out for each of the ``wider`` widths above ``width_px`` and kept in ``layout.meta.legends``
    (narrowest first): the page draws the one of the widest graph its panel holds (dashboard/live_chart.py).

    ``fig`` is a Figure, or a figure's spec (``{"data": [...], "layout": {...}}``, the plain dicts
    :func:`figure_from_spec` takes): a spec is laid out the same without plotly's property reads and writes, which
    cost more than the layout (the live panels' builders lay out their spec before making the Figure).

    >>> fig = go.Figure(dict(data=[dict(type="scatter", y=[1, 2], name=f"series {i}") for i in range(6)],
    ...                      layout=dict(height=300, margin=dict(t=40, b=40))))
    >>> fit_legend(fig); fit_legend(fig)
    >>> fig.layout.legend.yref, fig.layout.margin.b > 40, fig.layout.height - fig.layout.margin.b
    ('container', True, 260)
    >>> [l["w"] for l in fig.layout.meta["legends"]][:3]
    [380, 460, 560]
    """
    frame = _legend_frame(fig)
    margin_t = frame["t"] if frame["t"] is not None else 40
    meta = frame["meta"]
    axis_b = meta.get("axis_b", frame["b"] if frame["b"] is not None else 40)
    plot_px = meta.get("plot_px", (frame["height"] or 340) - margin_t - (frame["b"] if frame["b"] is not None else 40))
    if frame["categories"]:
        plot_px = max(plot_px, ROW_PX * len(frame["categories"]))
    facts = _legend_facts(fig)
    choices = sorted({columns} if isinstance(columns, int) else set(columns))
    layouts = [min((_legend_layout(facts, w, c, plot_px, axis_b, margin_t) for c in choices), key=lambda l: l["b"])
               for w in sorted({int(width_px), *(int(w) for w in wider if w > width_px)})]
    first = layouts[0]
    legend = dict(orientation="h", xref="container", yref="container", x=0.01, xanchor="left", y=0,
                  yanchor="bottom", entrywidth=first["entrywidth"], entrywidthmode="fraction", traceorder="normal",
                  font=dict(size=first["font"]), valign="top", maxheight=first["maxheight"])
    # JSON keys are strings: the page reads the names by trace index
    legends = [{k: ({str(i): n for i, n in v.items()} if k == "names" else v) for k, v in layout.items() if k != "font"}
               for layout in layouts]
    meta = meta | {"axis_b": axis_b, "plot_px": plot_px, "legends": legends}
    if isinstance(fig, dict):
        lay = fig.setdefault("layout", {})
        for i, name in first["names"].items():
            fig["data"][i]["name"] = name
        lay["margin"] = dict(lay.get("margin") or {}, b=first["b"])
        lay.update(height=first["height"], legend=legend, meta=meta)
        return
    lay = fig.layout
    for i, name in first["names"].items():
        fig.data[i].name = name
    lay.margin.b = first["b"]
    lay.height = first["height"]
    lay.legend = legend
    lay.meta = meta


#: Legend names of the regime shading (panel (d)), with a swatch stronger than the shading itself.
REGIME_NAMES = {"single": f"true single-label regime ({ORACLE})", "multi": f"true multi-label regime ({ORACLE})"}
_REGIME_SWATCH = {"single": "rgba(31,119,180,0.25)", "multi": "rgba(255,127,14,0.35)"}


def _regimes_drawn(change_points, chunk_size, n_chunks) -> list[str]:
    """The regimes shaded by :func:`_regime_shapes`, in order of first appearance."""
    out = []
    for shape in _regime_shapes(change_points, chunk_size, n_chunks):
        regime = next(r for r, fill in _REGIME_FILL.items() if fill == shape["fillcolor"])
        if regime not in out:
            out.append(regime)
    return out


def wrap_label(text: str, width: int = 24) -> str:
    """Break a (plotly) label into lines of about ``width`` characters at spaces."""
    lines, line = [], ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return "<br>".join(lines + [line])


def _regime_shapes(change_points, chunk_size, n_chunks):
    """Shading of the single- / multi-label regimes; only growth and reduction switch it."""
    initial = _initial_regime(change_points)
    if not n_chunks or initial is None:
        return []
    cuts = change_chunks([p for p, _ in change_points], chunk_size)
    switches = [(c, _REGIME_AFTER[k]) for c, (_, k) in zip(cuts, change_points) if k in _REGIME_AFTER]
    bounds = [-0.5] + [c - 0.5 for c, _ in switches] + [n_chunks - 0.5]
    regimes = [initial] + [r for _, r in switches]
    return [dict(type="rect", xref="x", yref="paper", x0=a, x1=b, y0=0, y1=1, layer="below",
                 line=dict(width=0), fillcolor=_REGIME_FILL[r])
            for a, b, r in zip(bounds[:-1], bounds[1:], regimes)]


def _x_range(n_chunks: int | None) -> dict:
    if not n_chunks:
        return {}
    return dict(range=[-0.5, max(n_chunks - 0.5, 1)])


#: Room left above and below the data by :func:`fix_y_ranges`, a fraction of the data's span (plotly's own
#: autorange pads about as much), before the range is widened to whole steps of :func:`nice_step`.
Y_PAD = 0.04


def nice_step(span: float, intervals: int = 5) -> float:
    """A step of 1, 2, 2.5 or 5 times a power of ten that cuts ``span`` into about ``intervals`` pieces.

    >>> nice_step(0.013), nice_step(1.0), nice_step(37)
    (0.005, 0.2, 10.0)
    """
    raw = span / intervals
    power = 10.0 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw * 0.999)


def _axis_name(ref: str | None) -> str:
    """``"y2"`` -> ``"yaxis2"`` (a trace's or a shape's axis reference)."""
    ref = ref or "y"
    return "yaxis" + ref[1:]


def fix_y_ranges(fig) -> None:
    """Give every y axis plotly would autorange an explicit range: the span of the values drawn on it
    (traces, and shapes drawn in its units), padded by :data:`Y_PAD` and widened to whole steps of
    :func:`nice_step` (half decades on log axes); ``rangemode="tozero"`` keeps 0 in it.

    Why: the live panels draw a chunk that only adds points as a plotly transition (only the traces are
    redrawn; ``dashboard/live_chart.py``), and plotly's transitions do not autorange. Widened to whole
    steps, the range stays the same for most chunks, so most chunks are drawn that way. Category axes and
    axes with a range of their own are left alone.

    >>> fig = go.Figure(dict(data=[dict(type="scatter", y=[0.061, 0.068])], layout=dict(yaxis=dict())))
    >>> fix_y_ranges(fig); fig.layout.yaxis.range
    (0.06, 0.07)
    """
    values: dict[str, list[float]] = {}
    for trace in fig.data:
        ys = getattr(trace, "y", None)
        if ys is None:
            continue
        values.setdefault(_axis_name(getattr(trace, "yaxis", None)), []).extend(
            float(v) for v in ys if isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v))
    for shape in fig.layout.shapes or ():
        if shape.yref and shape.yref.startswith("y") and "domain" not in shape.yref:
            values.setdefault(_axis_name(shape.yref), []).extend(
                float(v) for v in (shape.y0, shape.y1) if isinstance(v, numbers.Real) and math.isfinite(v))
    for name, vals in values.items():
        axis = fig.layout[name]
        if axis.type == "category" or axis.range is not None:
            continue
        log = axis.type == "log"
        if log:
            vals = [math.log10(v) for v in vals if v > 0]
        if not vals:
            continue
        lo, hi = min(vals), max(vals)
        tozero = axis.rangemode == "tozero" and not log
        if tozero:
            lo, hi = min(lo, 0.0), max(hi, 0.0)
        span = hi - lo
        if span <= 1e-9 * max(abs(lo), abs(hi)):  # flat (to float precision): a range around the value
            span = 0.1 * max(abs(hi), 1.0)
        lo, hi = (lo if tozero and lo == 0 else lo - Y_PAD * span), hi + Y_PAD * span
        step = 0.5 if log else nice_step(hi - lo)
        # rounded to the step's digits: the same range is written the same way every chunk (the page compares
        # the figures); a step down / up where rounding crossed the data
        digits = max(0, 3 - math.floor(math.log10(step)))
        low, high = round(math.floor(lo / step) * step, digits), round(math.ceil(hi / step) * step, digits)
        if low > lo:
            low = round(low - step, digits)
        if high < hi or high <= low:
            high = round(max(high, low) + step, digits)
        axis.range = [low, high]


# --------------------------------------------------------------------------- (a) metrics
#: The live metrics bounded by [0, 1] whatever the data: drawn on that fixed range.
BOUNDED_METRICS = ("micro_f1", "average_precision")
#: Type size (px) of the grey line under a subplot's title ("lower is better").
SUBTITLE_PX = 11


def _subtitle(text: str, px: int) -> str:
    return f"<span style='color:#666;font-size:{px}px'>{text}</span>"


def scale_subtitles(fig, px: int) -> None:
    """Redraw the subplot subtitles of ``fig`` at ``px`` (presentation mode enlarges every other text)."""
    for ann in fig.layout.annotations or ():
        if ann.text and f"font-size:{SUBTITLE_PX}px" in ann.text:
            ann.text = ann.text.replace(f"font-size:{SUBTITLE_PX}px", f"font-size:{px}px")


def metrics_figure(chunks, models, change_points=(), chunk_size=1, n_chunks=None, *, height=340, noise_changes=()):
    """HL, micro-F1 and AP per variant: thin dotted = per chunk, thick = cumulative; ``noise_changes``:
    ``(position, factor)`` of the schedule's noise changes (drawn apart from the true changes)."""
    traces = []
    x = [c.chunk for c in chunks if c.metrics]
    # coinciding variants (e.g. ELM-O, ELM-I, ELM-II without a firing) are drawn once, named together
    for names in coinciding_models(chunks, models):
        name = names[0]
        label = " = ".join(model_legend(n) for n in names)
        color = model_color(name)
        dash_ref = "dot" if name in REFERENCES else "solid"
        for k, (key, _title, _direction) in enumerate(LIVE_METRICS):
            axis = "" if k == 0 else str(k + 1)
            per = [_none(c.metrics.get(name, {}).get(key)) for c in chunks if c.metrics]
            cum = [_none(c.cumulative.get(name, {}).get(key)) for c in chunks if c.metrics]
            traces.append(dict(
                type="scatter", x=x, y=per, mode="lines+markers", name=_esc(label), legendgroup=name,
                showlegend=False, line=dict(color=color, width=1, dash="dot"), marker=dict(size=4),
                opacity=0.6, xaxis=f"x{axis}", yaxis=f"y{axis}",
                hovertemplate=f"{_esc(label)} chunk %{{y:.4f}}<extra></extra>",
            ))
            traces.append(dict(
                type="scatter", x=x, y=cum, mode="lines", name=_esc(label), legendgroup=name,
                showlegend=(k == 0), line=dict(color=color, width=3, dash=dash_ref),
                xaxis=f"x{axis}", yaxis=f"y{axis}",
                hovertemplate=f"{_esc(label)} cumulative %{{y:.4f}}<extra></extra>",
            ))
    gap = 0.06
    width = (1 - 2 * gap) / 3
    layout = _layout(height, hovermode="closest")
    margin = dict(l=45, r=10, t=50, b=62)
    annotations = []
    for k, (_key, title, direction) in enumerate(LIVE_METRICS):
        axis = "" if k == 0 else str(k + 1)
        lo = k * (width + gap)
        layout[f"xaxis{axis}"] = dict(domain=[lo, lo + width], anchor=f"y{axis}", **_x_range(n_chunks))
        # From 0: a scale that does not magnify small differences. Scores in [0, 1] keep that range for the
        # whole run (no rescaling mid-stream; a live update then redraws only the traces, see fix_y_ranges).
        layout[f"yaxis{axis}"] = dict(anchor=f"x{axis}", automargin=True, rangemode="tozero",
                                      **(dict(range=[-0.03, 1.03]) if _key in BOUNDED_METRICS else {}))
        annotations.append(dict(text=f"<b>{title}</b><br>{_subtitle(direction, SUBTITLE_PX)}",
                                x=lo + width / 2, y=1.0, yshift=2, xref="paper", yref="paper", xanchor="center",
                                yanchor="bottom", showarrow=False, font=_FONT))
    key_text = "x: chunk · thick: cumulative · thin dotted: this chunk"
    if change_points:  # only what is drawn is named
        key_text += f"<br>red lines: true changes ({ORACLE}; dotted: shift)"
    if noise_changes:
        key_text += "<br>brown dash-dot: noise changes (flip rates × factor)"
    annotations.append(dict(text=key_text,
                            x=1, y=0, yshift=-24, xref="paper", yref="paper", xanchor="right", yanchor="top",
                            align="right", showarrow=False, font=dict(size=11, color="#666")))
    layout["annotations"] = annotations
    layout["margin"] = margin
    layout["shapes"] = (_change_shapes(change_points, chunk_size, ("x", "x2", "x3"))
                        + _noise_shapes(noise_changes, chunk_size, ("x", "x2", "x3")))
    spec = dict(data=traces, layout=layout)
    # under the plot, never over the two-line titles; three columns where the graph is wide (the page's first screen
    # holds this panel whole at 1280 x 720: one row of legend for three models)
    fit_legend(spec, columns=3)
    return figure_from_spec(spec)


# --------------------------------------------------------------------------- (b) cardinality
def _record_values(chunks, name, read) -> list:
    """``read(record)`` of model ``name`` per chunk (None where it has no record or no number)."""
    return [None if c.diagnostics.get(name) is None else _none(read(c.diagnostics[name])) for c in chunks]


def _estimate_groups(chunks, models, keys=("lcard_hat", "lcard_low", "lcard_high", "lcard_paper")):
    """Variants whose cardinality records coincide (ncld_core.eval.compare.coinciding_groups) share one
    trace (ELM-O/I/II told the same rates)."""
    series = {}
    for name in models:
        vals = [_record_values(chunks, name, lambda r, k=k: getattr(r, k)) for k in keys]
        if all(v is None for v in vals[0]):
            continue
        series[name] = [v for col in vals for v in col]
    return coinciding_groups(series)


def flip_rate_figure(over_time, *, n_chunks=None, height=300, noise_changes=(), chunk_size=1):
    """Error of the estimated flip rates per chunk (or the mean estimates when the truth is unknown); the schedule's
    ``noise_changes`` (``(position, factor)``, at ``chunk_size``) marked where the true rates move."""
    traces = []
    x = list(over_time["chunk"]) if len(over_time) else []
    known = "mae_rho_pos" in over_time.columns
    for col, name, color in (("rho_neg", "ρ− (false positives)", "#1f77b4"), ("rho_pos", "ρ+ (missed positives)", "#ff7f0e")):
        key = f"mae_{col}" if known else f"mean_{col}"
        if key in over_time.columns:
            traces.append(dict(type="scatter", x=x, y=list(over_time[key]), mode="lines+markers", name=name,
                               line=dict(color=color, width=2), marker=dict(size=5)))
    layout = _layout(height)
    layout["xaxis"] = dict(title=dict(text="chunk", font=_FONT), **_x_range(n_chunks))
    # one line: the panel's heading says the true rates are the oracle's (a second line, rotated, ran past the graph's
    # top in presentation mode's type)
    layout["yaxis"] = dict(title=dict(text="mean |estimate − true rate|" if known else "mean estimate", font=_FONT),
                           rangemode="tozero")
    traces += _noise_legend(noise_changes)
    layout["shapes"] = _noise_shapes(noise_changes, chunk_size)
    layout["annotations"] = _noise_labels(noise_changes, chunk_size)
    return figure_from_spec(dict(data=traces, layout=layout))


#: Legend names in panel (b); the tests and the HTML report find the traces by them.
TRUTH_NAME = f"true cardinality ({ORACLE})"
OBSERVED_NAME = "observed cardinality (noisy labels)"
#: The same trace's name on a stream without noise, where it is the truth itself.
OBSERVED_CLEAN_NAME = "observed cardinality (= true: no noise)"
_OBSERVED_COLOR = "#7f7f7f"  # not red: red is the true changes' colour
PAPER_NAME = "paper's Eq. (card) estimate (biased upwards)"
_PAPER_COLOR = "#e377c2"
#: Marker of the moment / plug-in estimate (a diamond is a true change, a circle a detection).
ESTIMATE_SYMBOL = "square"
#: (estimate, band) legend names by what a variant was told about the flip rates: the stream's rates
#: ("known"), nothing ("estimate"), or rates 0 ("ignore", and ELM (plain) always).  With estimated
#: rates the band is the identified set, not a confidence interval, and the estimate is a biased plug-in.
_ESTIMATE_NAMES = {
    "known": ("moment estimate (unbiased: true rates given)", "95 % interval for the chunk's true cardinality"),
    "estimate": ("plug-in estimate (rates estimated: biased)", "identified set (rates from 0 to their bounds)"),
    "trusted": ("estimate from the trusted sample (rates estimated)",
                "95 % interval from the trusted sample"),
    "ignore": ("moment estimate with rates 0 (= observed)", "interval if the labels were clean (rates taken as 0)"),
}
#: Panel (b)'s heading by the rate mode of the records drawn (the live view and the HTML report).
_CARDINALITY_TITLES = {
    "known": "Label cardinality: true (oracle), observed (noisy), moment estimate with its 95 % interval",
    "estimate": "Label cardinality: true (oracle), observed (noisy), plug-in estimate (biased) and the identified "
                "set (rates estimated)",
    "trusted": "Label cardinality: true (oracle), observed (noisy), the trusted sample's estimate with its 95 % "
               "interval (rates estimated)",
    "ignore": "Label cardinality: true (oracle), observed (noisy), moment estimate with rates 0 (= observed)",
}


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def _rate_mode(chunks, name) -> str:
    """What a variant was told about the flip rates, read from its records (it names the band).

    Rates it estimates -> "estimate", or "trusted" once a trusted sample makes the band a confidence
    interval (its newest record); rates 0 -> "ignore" (on a noise-free stream those are the
    true rates, and the "if the labels were clean" band is then the interval); other given
    rates are the stream's own (the runner hands the true rates or none) -> "known".
    """
    records = [c.diagnostics[name] for c in chunks if name in c.diagnostics]
    if any(r.estimates_rates for r in records):
        return "trusted" if records[-1].n_trusted and records[-1].lcard_identified else "estimate"
    if records and all(r.rho_pos_mean == 0 and r.rho_neg_mean == 0 for r in records):
        return "ignore"
    return "known"


def cardinality_figure(chunks, models, change_points=(), chunk_size=1, n_chunks=None, *, height=340,
                       show_paper=False, noise_changes=()):
    """True cardinality (oracle), observed (noisy) cardinality, the moment estimate with its interval band.

    The band's name says what it is (a 95 % interval with the true rates, the set consistent with
    the data with estimated rates); ``show_paper`` adds the paper's Eq. (card) estimate.
    """
    x = [c.chunk for c in chunks]
    traces = [
        dict(type="scatter", x=x, y=[c.true_cardinality for c in chunks], mode="lines+markers",
             name=TRUTH_NAME, line=dict(color="#222", width=3), marker=dict(size=5),
             hovertemplate="true (oracle) %{y:.3f}<extra></extra>"),
        dict(type="scatter", x=x, y=[c.observed_cardinality for c in chunks], mode="lines+markers",
             name=OBSERVED_CLEAN_NAME if labels_clean(chunks) else OBSERVED_NAME, line=dict(color=_OBSERVED_COLOR, width=2, dash="dot"), marker=dict(size=5),
             hovertemplate="observed %{y:.3f}<extra></extra>"),
    ]
    groups = _estimate_groups(chunks, models)
    for gi, names in enumerate(groups):
        first = names[0]
        suffix = "" if len(groups) == 1 and len(names) == 1 else f" · {' = '.join(map(model_legend, names))}"
        est_name, band_name = _ESTIMATE_NAMES[_rate_mode(chunks, first)]
        color = model_color(first)

        def col(read, first=first):
            return _record_values(chunks, first, read)

        low, high = col(lambda r: r.lcard_low), col(lambda r: r.lcard_high)
        traces.append(dict(type="scatter", x=x, y=high, mode="lines", line=dict(width=0, color=color),
                           name=_esc(band_name + suffix), legendgroup=f"band{gi}", showlegend=False,
                           hoverinfo="skip"))
        traces.append(dict(type="scatter", x=x, y=low, mode="lines", line=dict(width=0, color=color),
                           fill="tonexty", fillcolor=_rgba(color, 0.18), name=_esc(band_name + suffix),
                           legendgroup=f"band{gi}", customdata=high,
                           hovertemplate=_esc(band_name) + ": [%{y:.3f}, %{customdata:.3f}]<extra></extra>"))
        traces.append(dict(type="scatter", x=x, y=col(lambda r: r.lcard_hat), mode="lines+markers",
                           name=_esc(est_name + suffix), line=dict(color=color, width=2),
                           marker=dict(size=6, symbol=ESTIMATE_SYMBOL),
                           hovertemplate=_esc(est_name) + " %{y:.3f}<extra></extra>"))
        if show_paper:
            traces.append(dict(type="scatter", x=x, y=col(lambda r: r.lcard_paper), mode="lines+markers",
                               name=_esc(PAPER_NAME + suffix),
                               line=dict(color=_PAPER_COLOR if gi == 0 else color, width=2, dash="dashdot"),
                               marker=dict(size=5, symbol="triangle-up"),
                               hovertemplate="paper's Eq. (card) %{y:.3f}<extra></extra>"))
    traces += _change_legend(change_points) + _noise_legend(noise_changes)
    layout = _layout(height)
    layout["margin"] = dict(l=55, r=15, t=35, b=40)
    layout["legend"] = dict(font=dict(size=11))
    layout["xaxis"] = dict(title=dict(text="chunk", font=_FONT), **_x_range(n_chunks))
    layout["yaxis"] = dict(title=dict(text="labels per instance", font=_FONT), rangemode="tozero")
    if observed_off_scale(chunks, traces[2:]):
        # the noisy labels' cardinality far above the truth and the estimates (corel16k001: ~47 against ~2.9): one
        # quantity keeps one axis (a second one, 0-50 beside 0-8, read as comparable), which frames the truth and
        # the estimates; the observed line leaves it at the top, its name says so and its hover gives the values
        layout["yaxis"]["range"] = [0.0, framing_top(chunks, traces[2:])]
        traces[1].update(name=OBSERVED_NAME + " (above this scale: values on hover)", cliponaxis=True)
    layout["shapes"] = _change_shapes(change_points, chunk_size) + _noise_shapes(noise_changes, chunk_size)
    layout["annotations"] = _change_labels(change_points, chunk_size) + _noise_labels(noise_changes, chunk_size)
    spec = dict(data=traces, layout=layout)
    fit_legend(spec)
    return figure_from_spec(spec)


def labels_clean(chunks) -> bool:
    """Whether the chunks' observed cardinality is the true one in every chunk (a stream without noise).

    >>> from types import SimpleNamespace as R
    >>> labels_clean([R(true_cardinality=2.0, observed_cardinality=2.0)]), labels_clean([])
    (True, False)
    >>> labels_clean([R(true_cardinality=2.0, observed_cardinality=2.4)])
    False
    """
    pairs = [(c.true_cardinality, c.observed_cardinality) for c in chunks]
    return bool(pairs) and all(t is not None and o is not None and math.isclose(t, o, rel_tol=0, abs_tol=1e-12)
                               for t, o in pairs)


#: The observed cardinality gets an axis of its own when its largest value is this many times the largest of the
#: truth and the estimates (their bands included).
OFF_SCALE = 3.0


def framing_top(chunks, estimate_traces=()) -> float:
    """The top of panel (b)'s axis when the observed cardinality is off its scale: the largest truth or estimate
    (bands included), padded by :data:`Y_PAD` and raised to a whole step of :func:`nice_step` (the same range for
    most chunks, so the live page redraws them as transitions).

    >>> from types import SimpleNamespace as R
    >>> framing_top([R(true_cardinality=2.9, observed_cardinality=47.0)])
    4.0
    """
    def top(values):
        return max((float(v) for v in values if isinstance(v, numbers.Real) and math.isfinite(v)), default=0.0)

    high = max([top(c.true_cardinality for c in chunks)] + [top(t.get("y") or ()) for t in estimate_traces])
    high = max(high, 1e-9) * (1 + Y_PAD)
    step = nice_step(high)
    return round(math.ceil(high / step) * step, 6)


def observed_off_scale(chunks, estimate_traces=()) -> bool:
    """Whether panel (b)'s observed cardinality is so far above the truth and the estimates (``estimate_traces``:
    their traces) that one axis for all would squash them (:data:`OFF_SCALE`).

    >>> from types import SimpleNamespace as R
    >>> observed_off_scale([R(true_cardinality=2.9, observed_cardinality=47.0)])
    True
    >>> observed_off_scale([R(true_cardinality=1.9, observed_cardinality=2.4)])
    False
    """
    def top(values):
        return max((float(v) for v in values if isinstance(v, numbers.Real) and math.isfinite(v)), default=None)

    observed = top(c.observed_cardinality for c in chunks)
    framed = [top(c.true_cardinality for c in chunks)] + [top(t.get("y") or ()) for t in estimate_traces]
    framed = [v for v in framed if v is not None]
    return observed is not None and bool(framed) and observed > OFF_SCALE * max(max(framed), 1e-9)


def cardinality_mode(chunks, models) -> str | None:
    """What the first variant drawn in panel (b) was told about the rates ("known", "estimate",
    "ignore"); None before any record."""
    groups = _estimate_groups(chunks, models)
    return _rate_mode(chunks, groups[0][0]) if groups else None


def cardinality_title(chunks, models, default_mode: str = "known") -> str:
    """Panel (b)'s heading for the records drawn (``default_mode`` before the first chunk)."""
    return _CARDINALITY_TITLES[cardinality_mode(chunks, models) or default_mode]


def cardinality_note(chunks, models, *, trusted_fraction: float = 0.0, show_paper: bool = False) -> str:
    """What the band is and how it did on the run on screen (every number from these chunks).

    Rates given: how often the 95 % interval holds the truth, its mean width, the mean errors (and, with a
    trusted sample in the stream, that it is not used). Rates estimated: the band is the identified set (its
    mean width says how little the data pin down), and the point estimate, a plug-in of rates that are only
    upper bounds, is biased. The paper's estimate is spoken of only when it is drawn (``show_paper``).
    """
    groups = _estimate_groups(chunks, models)
    if not groups:
        return ""
    name = groups[0][0]
    mode = _rate_mode(chunks, name)
    rows = [(c.true_cardinality, c.diagnostics[name]) for c in chunks if name in c.diagnostics]
    report = interval_report([t for t, _ in rows], *([_none(getattr(r, key)) for _, r in rows]
                                                     for key in ("lcard_low", "lcard_high", "lcard_hat", "lcard_paper")))
    if not report["n"]:
        return ""
    n, inside, width, truth = report["n"], report["inside"], report["width"], report["truth"]
    mean_err = None if report["mean_error"] is None else f"{report['mean_error']:+.3f}"
    paper_err = None if report["paper_error"] is None or not show_paper else f"{report['paper_error']:+.3f}"
    who = "" if len(groups) == 1 else f" ({name})"
    if mode == "trusted":
        last = rows[-1][1]
        text = (f"{BANDS['trusted']} This run{who}: {last.n_trusted} trusted rows (clean labels revealed) so far; "
                f"the band's mean width {width:.2f} labels per instance, holding the true cardinality in {inside} of "
                f"{n} chunks")
        if mean_err:
            text += f"; mean error {mean_err} labels per instance"
        return text + (f". Rates pinned down on {last.rates_identified:.0%} of the labels." if last.estimates_rates
                       else ".")
    if mode == "estimate":
        q = next((len(r.rho_pos_est) for _, r in reversed(rows) if r.estimates_rates), None)
        ident = rows[-1][1].rates_identified
        text = (f"{BANDS['identified']} {BANDS['point']} This run{who}: the noisy labels pin both flip rates down "
                f"on {ident:.0%} of the labels (ρ+ needs near-certain positives; elsewhere only upper bounds hold). "
                f"The band's mean width is {width:.2f} labels per instance (mean true cardinality {truth:.2f}"
                + (f", {q} labels" if q else "") + f"), so holding the truth ({inside} of {n} chunks) says little; "
                f"the point estimate's bias is measured in docs/flip-rates.md (a trusted sample of checked labels "
                f"narrows the band)")
        if mean_err:
            text += f": mean error here {mean_err} labels per instance"
            if paper_err:
                text += f" (the paper's estimate: {paper_err})"
        return text + "."
    if mode == "ignore":
        text = (f"This run{who}: the band (the interval if the labels were clean, rates taken as 0; mean width "
                f"{width:.2f}) holds the true cardinality in {inside} of {n} chunks")
        what = "the estimate (= observed)"
    else:
        text = (f"This run{who}: the 95 % interval (mean width {width:.2f} labels per instance) holds the true "
                f"cardinality in {inside} of {n} chunks")
        what = "the moment estimate"
    if mean_err:
        text += f"; mean error of {what} {mean_err}"
    if paper_err:
        text += f", of the paper's estimate {paper_err}"
    text += " labels per instance." if mean_err or paper_err else "."
    if trusted_fraction > 0 and mode != "ignore":  # the checked rows feed only a model that estimates the rates
        text += (" The trusted sample is not used here: the models are told the rates, and with the true rates "
                 "the moment estimate needs no checked labels (under *The models are told*, *nothing* shows what it "
                 "buys).")
    return text


# --------------------------------------------------------------------------- (c) drift tests
#: One colour per detector (panels (c) and (d)).
DETECTOR_COLORS = {
    "paper": "#9467bd",
    "welch": "#17becf",
    "adaptive": "#1f77b4",
    "labels": "#ff7f0e",
    "adaptive+labels": "#2ca02c",
}
_RATIO_FLOOR, _RATIO_CEIL = 1e-2, 1e4
_VARIANT_DASHES = ("solid", "dash", "dashdot", "longdash", "dot")
_DETECT_GLYPH = dict(symbol="circle", size=12, line=dict(color="#111", width=1.5))
_ALARM_GLYPH = dict(symbol="x", size=12, line=dict(width=1))
#: One glyph, one meaning, in panels (c) and (d): a filled circle is a detection, a cross a false alarm.
DETECTION_NAME = "detection: firing that catches a true change"
FALSE_ALARM_NAME = "false alarm: firing with no true change to catch"
THRESHOLD_NAME = "threshold: fires above 1"
#: Panel (c)'s y ticks, one per decade; ratios are drawn between _RATIO_FLOOR and _RATIO_CEIL.
RATIO_TICKS = {0.01: "≤ 0.01", 0.1: "0.1", 1: "1", 10: "10", 100: "100", 1000: "1000", 10000: "≥ 10⁴"}


def detecting_models(chunks, models) -> list[str]:
    return [m for m in models if m not in REFERENCES and any(m in c.diagnostics for c in chunks)]


def detector_series(chunks, models) -> list[dict]:
    """Per detector (the acting one, then each compared one): statistic, threshold and firings per chunk.

    Variants whose records of a detector are identical share one series (``variants``); ``name``
    names the detector for people, with the variants when a detector has more than one series;
    ``label`` adds " (acting)" to the acting one (legends).
    """
    series = []
    for name in detecting_models(chunks, models):
        rows = [(c.chunk, c.diagnostics[name]) for c in chunks if name in c.diagnostics]
        last = rows[-1][1]
        entries = [(last.detector, lambda r: r.acting, "acting")]
        entries += [(m, lambda r, m=m: r.monitors.get(m), "compared") for m in last.monitors if m in DETECTORS]
        for det, verdict, role in entries:
            results = [(ch, verdict(r)) for ch, r in rows]
            stat = [None if v is None else _none(v.statistic) for _, v in results]
            thr = [None if v is None else _none(v.threshold) for _, v in results]
            fired = [ch for ch, v in results if v is not None and v.fired]
            # same detector and role, same firings, statistics and thresholds within the tolerance of
            # ncld_core.eval.compare.coincide: one series naming every variant
            values = [*stat, *thr, *(str(ch) for ch in fired), str(len(fired))]
            for s in series:
                if s["key"] == (det, role) and coinciding_groups({0: s["values"], 1: values}) == [[0, 1]]:
                    s["variants"].append(name)
                    break
            else:
                series.append(dict(key=(det, role), values=values, detector=det, role=role, variants=[name],
                                   x=[ch for ch, _ in rows], statistic=stat, threshold=thr, fired=fired))
    per_detector, seen = {}, {}
    for s in series:
        per_detector[(s["detector"], s["role"])] = per_detector.get((s["detector"], s["role"]), 0) + 1
    for i, s in enumerate(series):
        name = detector_label(s["detector"])
        s["dash"] = "solid" if s["role"] == "acting" else "dot"
        if per_detector[(s["detector"], s["role"])] > 1:  # one detector, several variants: one dash each
            name += f" · {' = '.join(map(model_legend, s['variants']))}"
            k = seen[(s["detector"], s["role"])] = seen.get((s["detector"], s["role"]), -1) + 1
            s["dash"] = _VARIANT_DASHES[k % len(_VARIANT_DASHES)]
        s["name"] = name  # the detection table has a role column
        s["label"] = name + (" (acting)" if s["role"] == "acting" else "")
        if len(s["variants"]) > 1 and per_detector[(s["detector"], s["role"])] == 1:
            s["label"] += f" · {' = '.join(map(model_legend, s['variants']))}"  # one line drawn for all of them: say so
        s["color"] = DETECTOR_COLORS.get(s["detector"], _EXTRA[i % len(_EXTRA)])
        del s["key"], s["values"]
    return series


def _g3(v) -> str:
    """``v`` to 3 significant digits for a hover label ("–" for none; a zero is "0", never "-0")."""
    if v is None:
        return "–"
    text = f"{v:.3g}"
    return "0" if text == "-0" else text


def _ratio(stat, thr):
    if stat is None or thr is None:
        return None
    if thr > 0:
        r = stat / thr
    else:
        r = _RATIO_CEIL if stat > 0 else _RATIO_FLOOR
    return min(max(r, _RATIO_FLOOR), _RATIO_CEIL)


def _firing_traces(xs, ys, texts, color, group, row_hover):
    """Detections (filled circles) and false alarms (crosses) of one detector: the same glyphs in (c) and (d)."""
    out = []
    for idx, glyph, kind in ((0, _DETECT_GLYPH, "detection"), (1, _ALARM_GLYPH, "false alarm")):
        px = [x for x, k in zip(xs, texts) if k[0] == idx]
        if not px:
            continue
        out.append(dict(type="scatter", x=px, y=[y for y, k in zip(ys, texts) if k[0] == idx], mode="markers",
                        name=_esc(f"{group}: {kind}"), legendgroup=_esc(group), showlegend=False,
                        marker=dict(color=color, **glyph), text=[k[1] for k in texts if k[0] == idx],
                        hovertemplate=row_hover + "chunk %{x}: %{text}<extra></extra>"))
    return out


def _glyph_legend():
    """Legend entries explaining the two firing glyphs (drawn in grey, no data)."""
    return [dict(type="scatter", x=[None], y=[None], mode="markers", name=DETECTION_NAME, legendgroup="glyphs",
                 marker=dict(color="#999", **_DETECT_GLYPH), hoverinfo="skip"),
            dict(type="scatter", x=[None], y=[None], mode="markers", name=FALSE_ALARM_NAME, legendgroup="glyphs",
                 marker=dict(color="#999", **_ALARM_GLYPH), hoverinfo="skip")]


def _classified(fired, cuts, kinds, n_seen):
    """[(0 detection | 1 false alarm, hover text)] per firing, in firing order."""
    cls = firing_classes(fired, cuts, n_seen)
    out = []
    for c in fired:
        if c in cls["detections"]:
            start, delay = cls["detections"][c]
            out.append((0, f"detects the {kinds.get(start, 'change')} of chunk {start}, delay {delay}"))
        else:
            out.append((1, "false alarm"))
    return out


def detector_figure(chunks, models, change_points=(), chunk_size=1, n_chunks=None, *, height=340, noise_changes=()):
    """Every detector's statistic ÷ threshold per chunk (log axis; fires above 1), firings marked."""
    cuts = change_chunks([p for p, _ in change_points], chunk_size)
    kinds = {c: k for c, (_, k) in zip(cuts, change_points)}
    n_seen = len(chunks)
    traces = []
    series = detector_series(chunks, models)
    for s in series:
        ratio = s["ratio"] = [_ratio(a, b) for a, b in zip(s["statistic"], s["threshold"])]
        raw = [[_g3(a), _g3(b), ("–" if a is None or b is None else _g3(a / b) if b > 0 else "∞" if a > 0 else "0")]
               for a, b in zip(s["statistic"], s["threshold"])]
        group = s["label"]
        traces.append(dict(type="scatter", x=s["x"], y=ratio, mode="lines", name=_esc(group), legendgroup=_esc(group),
                           line=dict(color=s["color"], width=2, dash=s["dash"]),
                           customdata=raw, hovertemplate=_esc(group) + "<br>statistic %{customdata[0]} / threshold "
                           "%{customdata[1]} = %{customdata[2]}<extra></extra>"))
        by_chunk = dict(zip(s["x"], ratio))
        texts = _classified(s["fired"], cuts, kinds, n_seen)
        traces += _firing_traces(s["fired"], [by_chunk.get(c) for c in s["fired"]], texts, s["color"], group,
                                 _esc(group) + " ")
    # the threshold line is named in the legend (a text on the plot would sit under the data)
    traces.append(dict(type="scatter", x=[None], y=[None], mode="lines", name=THRESHOLD_NAME, legendgroup="threshold",
                       line=dict(color="#111", width=1.5, dash="dash"), hoverinfo="skip"))
    traces += _glyph_legend() + _change_legend(change_points) + _noise_legend(noise_changes)
    layout = _layout(height, hovermode="closest")
    layout["margin"] = dict(l=55, r=15, t=35, b=40)
    layout["xaxis"] = dict(title=dict(text="chunk", font=_FONT), **_x_range(n_chunks))
    # one labelled tick per decade: plotly's own log ticks add minor "2" and "5" labels that read as values
    # From the floor to 10 (a range the live view keeps, see fix_y_ranges), higher in half decades when a
    # statistic goes above 10 times its threshold; plotly's range of a log axis is in decades.
    top = max((math.log10(r) for s in series for r in s["ratio"] if r), default=0.0)
    layout["yaxis"] = dict(title=dict(text="statistic ÷ threshold (log)", font=_FONT), type="log",
                           tickmode="array", tickvals=list(RATIO_TICKS), ticktext=list(RATIO_TICKS.values()),
                           range=[math.log10(_RATIO_FLOOR) - 0.2, max(1.0, math.ceil((top + 0.1) * 2) / 2)])
    layout["shapes"] = ([dict(type="line", xref="paper", yref="y", x0=0, x1=1, y0=1, y1=1,
                              line=dict(color="#111", width=1.5, dash="dash"))]
                        + _change_shapes(change_points, chunk_size) + _noise_shapes(noise_changes, chunk_size))
    layout["annotations"] = _change_labels(change_points, chunk_size) + _noise_labels(noise_changes, chunk_size)
    spec = dict(data=traces, layout=layout)
    fit_legend(spec)
    return figure_from_spec(spec)


# --------------------------------------------------------------------------- (d) firings vs truth
def firing_classes(fired, truth, n_chunks) -> dict:
    """Split firings into detections (firing chunk -> (change chunk, delay)) and false alarms."""
    rep = detection_report(fired, truth, n_chunks)
    return {
        "detections": {c: (start, c - start) for c, start in rep["detections"].items()},
        "false_alarms": rep["false_alarm_chunks"],
    }


#: Panel (d)'s first row: the true change points (diamonds), which the learner never sees.
TRUE_CHANGE_ROW = f"true change ({ORACLE})"
DETECTION_COLUMNS = ["detector", "role", "firings", "detected", "within 1 chunk", "missed", "false alarms",
                     "mean delay (chunks)", "fired at chunks"]


def detection_table(chunks, models, change_points, chunk_size):
    """Per detector (acting, then compared): firings, detected (within one chunk), missed, false alarms, delay."""
    import pandas as pd

    n_seen = len(chunks)
    truth = change_chunks([p for p, _ in change_points], chunk_size)
    rows = []
    for s in detector_series(chunks, models):
        rep = detection_report(s["fired"], truth, n_seen)
        rows.append({
            "detector": s["name"],
            "role": "acting" if s["role"] == "acting" else "compared only",
            "firings": len(s["fired"]),
            "detected": rep["detected"],
            "within 1 chunk": sum(d <= 1 for d in rep["delays"]),
            "missed": rep["missed"],
            "false alarms": rep["false_alarms"],
            "mean delay (chunks)": "–" if math.isnan(rep["mean_delay"]) else f"{rep['mean_delay']:.1f}",
            "fired at chunks": ", ".join(str(c) for c in s["fired"]) or "–",
        })
    return pd.DataFrame(rows, columns=DETECTION_COLUMNS)


def timeline_figure(chunks, models, change_points=(), chunk_size=1, n_chunks=None, *, height=None,
                    noise_changes=()):
    """True change points and every detector's firings on one chunk axis.

    ``height`` (px) defaults to room for every row (labels of two lines) and a legend entry per line.
    """
    n_seen = len(chunks)
    total = n_chunks or n_seen
    series = detector_series(chunks, models)
    rows = [TRUE_CHANGE_ROW] + [_esc(s["label"]) for s in series]
    traces = []
    cuts = change_chunks([p for p, _ in change_points], chunk_size)
    kinds = {c: k for c, (_, k) in zip(cuts, change_points)}
    if change_points:
        traces.append(dict(
            type="scatter", x=cuts, y=[TRUE_CHANGE_ROW] * len(cuts), mode="markers+text", name=CHANGE_NAME,
            marker=dict(symbol=[_KIND_SYMBOL.get(k, "diamond-open") for _, k in change_points], size=14,
                        color=_CHANGE_COLOR, line=dict(color=_CHANGE_COLOR, width=2)),
            text=[_esc(k) for _, k in change_points], textposition="middle right", cliponaxis=False,
            customdata=[_esc(f"{k}@{p}") for p, k in change_points],
            hovertemplate="%{customdata} (chunk %{x})<extra></extra>", showlegend=False,
        ))
    for s in series:
        row = _esc(s["label"])
        texts = _classified(s["fired"], cuts, kinds, n_seen)
        traces += _firing_traces(s["fired"], [row] * len(s["fired"]), texts, s["color"], s["label"], "")
    traces += _glyph_legend() + _change_legend(change_points) + _noise_legend(noise_changes)
    # the regime shading is explained in the legend (an axis title that long is cut on narrow screens)
    for regime in _regimes_drawn(change_points, chunk_size, total):
        traces.append(dict(type="scatter", x=[None], y=[None], mode="markers", name=REGIME_NAMES[regime],
                           legendgroup="regimes", hoverinfo="skip",
                           marker=dict(symbol="square", size=14, color=_REGIME_SWATCH[regime],
                                       line=dict(color="#bbb", width=1))))
    if height is None:  # the rows' room; fit_legend adds the legend's under the plot
        height = 40 + max(130, ROW_PX * len(rows)) + 40
    layout = _layout(height, hovermode="closest")
    layout["margin"] = dict(l=55, r=15, t=40, b=40)
    layout["xaxis"] = dict(title=dict(text="chunk", font=_FONT), **_x_range(total))
    layout["yaxis"] = dict(type="category", categoryorder="array", categoryarray=rows[::-1],
                           range=[-0.6, len(rows) - 0.4], automargin=True,
                           tickmode="array", tickvals=rows, ticktext=[wrap_label(r) for r in rows])
    layout["shapes"] = (_regime_shapes(change_points, chunk_size, total) + _change_shapes(change_points, chunk_size)
                        + _noise_shapes(noise_changes, chunk_size))
    if not change_points:
        layout["annotations"] = [dict(text="no true change in this stream:<br>every firing is a false alarm",
                                      x=0.5, y=TRUE_CHANGE_ROW, xref="paper", yref="y", yanchor="middle", showarrow=False,
                                      font=dict(size=11, color="#666"))]
    spec = dict(data=traces, layout=layout)
    fit_legend(spec)
    return figure_from_spec(spec)


#: Backwards-compatible name of panel (c)'s figure.
threshold_figure = detector_figure


# --------------------------------------------------------------------------- schedule preview
def schedule_figure(points, n_instances, *, height=130, noise_changes=()):
    """The drift schedule on the stream: regimes as bands, change points as diamonds.

    ``points``: list of ``(position or None, kind)``; a single ``(None, kind)`` is the
    paper's form (the change comes after the whole first pool, known only from the data).
    A ``shift`` (or any kind other than growth / reduction) keeps the regime. ``noise_changes``:
    ``(position, factor)`` of the noise changes, open brown diamonds low on the band with their factor.
    """
    traces, shapes, annotations = [], [], []
    n = max(int(n_instances or 0), 1)
    known = [(p, k) for p, k in points if p is not None]
    initial = _initial_regime(points)
    if points and known and len(known) == len(points):
        bounds = [0] + [p for p, k in known if k in _REGIME_AFTER] + [n]
        after = [_REGIME_AFTER[k] for _, k in known if k in _REGIME_AFTER]
        regime = initial
        for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:])):
            fill = (_REGIME_FILL[regime].replace("0.07", "0.25").replace("0.10", "0.3") if regime
                    else "rgba(127,127,127,0.12)")
            shapes.append(dict(type="rect", xref="x", yref="paper", x0=a, x1=b, y0=0, y1=1, layer="below",
                               line=dict(width=0), fillcolor=fill))
            annotations.append(dict(x=(a + b) / 2, y=0.5, xref="x", yref="paper", showarrow=False,
                                    text=regime or "one regime", font=dict(size=11)))
            if i < len(after):
                regime = after[i]
        traces.append(dict(type="scatter", x=[p for p, _ in known], y=[0.5] * len(known), mode="markers",
                           marker=dict(symbol=[_KIND_SYMBOL.get(k, "diamond-open") for _, k in known], size=12,
                                       color=_CHANGE_COLOR),
                           text=[_esc(f"{k}@{p}") for p, k in known], hovertemplate="%{text}<extra></extra>"))
    elif points:
        kind = points[0][1]
        text = (f"paper's {kind}: all {initial}-label instances first, then the rest" if initial
                else f"{kind}: needs a position")
        annotations.append(dict(x=n / 2, y=0.5, xref="x", yref="paper", showarrow=False, font=dict(size=11),
                                text=_esc(text)))
    else:
        shapes.append(dict(type="rect", xref="x", yref="paper", x0=0, x1=n, y0=0, y1=1, layer="below",
                           line=dict(width=0), fillcolor="rgba(127,127,127,0.12)"))
        annotations.append(dict(x=n / 2, y=0.5, xref="x", yref="paper", showarrow=False, font=dict(size=11),
                                text="no drift: one regime"))
    if noise_changes:
        traces.append(dict(type="scatter", x=[p for p, _ in noise_changes], y=[0.2] * len(noise_changes),
                           mode="markers", marker=dict(symbol="diamond-open", size=10, color=_NOISE_COLOR),
                           text=[_esc(f"noise@{p}x{f:g}: {noise_text(f)}") for p, f in noise_changes],
                           hovertemplate="%{text}<extra></extra>"))
        annotations += [dict(x=p, y=0.06, xref="x", yref="paper", showarrow=False, font=dict(size=9),
                             text=_esc(f"×{f:g}")) for p, f in noise_changes]
    layout = dict(height=height, margin=dict(l=10, r=10, t=10, b=30), showlegend=False,
                  xaxis=dict(range=[0, n], title=dict(text="instance", font=dict(size=11))),
                  yaxis=dict(visible=False, range=[0, 1]), shapes=shapes, annotations=annotations)
    return figure_from_spec(dict(data=traces, layout=layout))


# --------------------------------------------------------------------------- sweep
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def gamma_label(g: float) -> str:
    """``0``, ``2⁻⁶`` for powers of two, else the number (``0.005``)."""
    if g == 0:
        return "0"
    k = math.log2(g)
    if abs(k - round(k)) < 1e-9:
        return "2" + str(int(round(k))).translate(_SUPERSCRIPT)
    return f"{g:.4g}"


def gamma_labels(gammas) -> dict:
    """Tick labels of ``gammas`` in one notation: powers of two (and 0) as ``2⁻⁶`` when every value is one,
    else every value as a number (a grid of powers of two with the sidebar's 0.005 read "2⁻⁸" beside "0.005").

    >>> gamma_labels([0, 2 ** -6, 2 ** -2])
    {0.0: '0', 0.015625: '2⁻⁶', 0.25: '2⁻²'}
    >>> gamma_labels([2 ** -8, 0.005])
    {0.00390625: '0.00391', 0.005: '0.005'}
    """
    values = [float(g) for g in gammas]
    if all(gamma_label(g) == "0" or gamma_label(g).startswith("2") for g in values):
        return {g: gamma_label(g) for g in values}
    return {g: f"{g:.3g}" for g in values}


#: The least span of GM the sweep's colour scale covers: a narrower one would paint a difference of a few
#: thousandths from one end of the scale to the other.
SWEEP_MIN_SPAN = 0.1


def sweep_figure(df, chosen=None, best=None, *, height=460):
    """Heat map of GM over beta (rows) x gamma (columns); the chosen and the best point marked.

    The colour scale spans at least :data:`SWEEP_MIN_SPAN` of GM, ending at the best value, and its title says
    the range it shows; the current setting's legend entry gives its GM when it is on the grid.
    """
    betas = sorted(df["beta"].unique())
    gammas = sorted(df["gamma"].unique())
    labels = gamma_labels(gammas)
    glabels = [labels[float(g)] for g in gammas]
    table = df.pivot(index="beta", columns="gamma", values="gm").reindex(index=betas, columns=gammas)
    z = table.values.tolist()
    text = [[f"{v:.3f}" for v in row] for row in table.values]
    values = [v for row in table.values for v in row if isinstance(v, numbers.Real) and math.isfinite(v)]
    top = max(values, default=1.0)
    low = max(0.0, min(min(values, default=0.0), top - SWEEP_MIN_SPAN))
    traces = [dict(type="heatmap", x=glabels, y=[f"{b:g}" for b in betas], z=z, text=text, zmin=low, zmax=top,
                   texttemplate="%{text}", textfont=dict(size=10), colorscale="Viridis",
                   colorbar=dict(title=dict(text=f"GM<br>{low:.2f}-{top:.2f}")),
                   hovertemplate="β=%{y}, γ=%{x}: GM %{z:.4f}<extra></extra>")]
    if best is not None:
        traces.append(dict(type="scatter", x=[labels.get(float(best["gamma"]), gamma_label(best["gamma"]))],
                           y=[f"{best['beta']:g}"], mode="markers", name=f"best GM {best['gm']:.4f}",
                           marker=dict(symbol="star", size=20, color="#ff2d55", line=dict(color="white", width=1.5))))
    if chosen is not None:
        here = df[(df["beta"] == chosen[0]) & (df["gamma"] == chosen[1])]["gm"]
        name = "current setting" + (f": GM {float(here.iloc[0]):.4f}" if len(here) else " (off the grid)")
        traces.append(dict(type="scatter", x=[labels.get(float(chosen[1]), gamma_label(chosen[1]))],
                           y=[f"{chosen[0]:g}"], mode="markers",
                           name=name, marker=dict(symbol="square-open", size=26, color="#111",
                                                  line=dict(color="#111", width=3))))
    layout = dict(height=height, margin=dict(l=60, r=20, t=40, b=50),
                  xaxis=dict(title=dict(text="γ (ranking weight)"), type="category"),
                  yaxis=dict(title=dict(text="β (label-fit weight)"), type="category"),
                  legend=dict(orientation="h", yanchor="bottom", y=1.01, x=0))
    return figure_from_spec(dict(data=traces, layout=layout))
