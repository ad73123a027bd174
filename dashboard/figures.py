"""Plotly figures of the dashboard, built from the runner's ChunkResults (no model math here).

Every function takes plain data (a list of :class:`~ncld_core.runner.ChunkResult`,
the true change points, the chunk size) and returns a ``plotly.graph_objects.Figure``;
the live view redraws them after every chunk, the HTML report embeds them.
Figures are built from dicts (one validation pass in ``go.Figure``) to keep the
per-chunk redraw cheap.
"""

from __future__ import annotations

import html
import math

import plotly.graph_objects as go

from ncld_core.baselines import BASELINES
from ncld_core.drift_eval import change_chunks, detection_report
from ncld_core.variants import REFERENCES

__all__ = [
    "COLORS",
    "LIVE_METRICS",
    "model_color",
    "metrics_figure",
    "cardinality_figure",
    "threshold_figure",
    "timeline_figure",
    "schedule_figure",
    "sweep_figure",
    "detection_table",
    "firing_classes",
]

COLORS = {
    "ELM-O": "#1f77b4",
    "ELM-I": "#ff7f0e",
    "ELM-II": "#2ca02c",
    "ELM (plain)": "#9467bd",
    "all-negative": "#7f7f7f",
    "noisy-prior": "#8c564b",
}
_EXTRA = ["#e377c2", "#17becf", "#bcbd22", "#d62728", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173",
          "#3182bd", "#e6550d"]
COLORS.update({name: _EXTRA[i % len(_EXTRA)] for i, name in enumerate(BASELINES)})
#: (key, title) of the metrics drawn live, the paper's three.
LIVE_METRICS = (
    ("hamming_loss", "Hamming loss (lower is better)"),
    ("micro_f1", "micro-F1 (higher is better)"),
    ("average_precision", "average precision (higher is better)"),
)
_CHANGE_COLOR = "#d62728"
_REGIME_FILL = {"single": "rgba(31,119,180,0.07)", "multi": "rgba(255,127,14,0.10)"}
_FONT = dict(size=12)


def _figure(spec: dict) -> go.Figure:
    """A Figure from a plain dict without plotly's per-property validation (10x faster per redraw).

    The dicts are checked by the tests (``go.Figure(fig.to_dict())`` validates); should plotly
    drop the ``_validate`` switch, the validated constructor is used.
    """
    try:
        return go.Figure(spec, _validate=False)
    except TypeError:  # pragma: no cover - older / newer plotly
        return go.Figure(spec)


def model_color(name: str, index: int = 0) -> str:
    return COLORS.get(name, _EXTRA[index % len(_EXTRA)])


def _esc(text) -> str:
    """Plotly renders a subset of HTML in names and labels: escape anything from the user."""
    return html.escape(str(text), quote=True)


def _none(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else v


def _layout(height: int, **kw) -> dict:
    base = dict(
        height=height,
        margin=dict(l=55, r=15, t=40, b=40),
        legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0, font=_FONT),
        hovermode="x unified",
        uirevision="keep",  # keeps zoom / hidden traces across redraws
    )
    base.update(kw)
    return base


def _change_shapes(change_points, chunk_size, xrefs=("x",)) -> list[dict]:
    shapes = []
    for c in change_chunks([p for p, _ in change_points], chunk_size):
        for xref in xrefs:
            yref = "paper" if xref == "x" else f"y{xref[1:]} domain"
            shapes.append(dict(type="line", xref=xref, yref=yref, x0=c, x1=c, y0=0, y1=1,
                               line=dict(color=_CHANGE_COLOR, width=1.5, dash="dash")))
    return shapes


def _x_range(n_chunks: int | None) -> dict:
    if not n_chunks:
        return {}
    return dict(range=[-0.5, max(n_chunks - 0.5, 1)])


# --------------------------------------------------------------------------- (a) metrics
def metrics_figure(chunks, models, change_points=(), chunk_size=1, n_chunks=None, *, height=340):
    """HL, micro-F1 and AP per variant: thin dotted = per chunk, thick = cumulative."""
    traces = []
    x = [c.chunk for c in chunks if c.metrics]
    for mi, name in enumerate(models):
        color = model_color(name, mi)
        dash_ref = "dot" if name in REFERENCES else "solid"
        for k, (key, _title) in enumerate(LIVE_METRICS):
            axis = "" if k == 0 else str(k + 1)
            per = [_none(c.metrics.get(name, {}).get(key)) for c in chunks if c.metrics]
            cum = [_none(c.cumulative.get(name, {}).get(key)) for c in chunks if c.metrics]
            traces.append(dict(
                type="scatter", x=x, y=per, mode="lines+markers", name=_esc(name), legendgroup=name,
                showlegend=False, line=dict(color=color, width=1, dash="dot"), marker=dict(size=4),
                opacity=0.6, xaxis=f"x{axis}", yaxis=f"y{axis}",
                hovertemplate=f"{_esc(name)} chunk %{{y:.4f}}<extra></extra>",
            ))
            traces.append(dict(
                type="scatter", x=x, y=cum, mode="lines", name=_esc(name), legendgroup=name,
                showlegend=(k == 0), line=dict(color=color, width=3, dash=dash_ref),
                xaxis=f"x{axis}", yaxis=f"y{axis}",
                hovertemplate=f"{_esc(name)} cumulative %{{y:.4f}}<extra></extra>",
            ))
    gap = 0.06
    width = (1 - 2 * gap) / 3
    layout = _layout(height, hovermode="closest")
    annotations = []
    for k, (_key, title) in enumerate(LIVE_METRICS):
        axis = "" if k == 0 else str(k + 1)
        lo = k * (width + gap)
        layout[f"xaxis{axis}"] = dict(domain=[lo, lo + width], anchor=f"y{axis}", **_x_range(n_chunks))
        layout[f"yaxis{axis}"] = dict(anchor=f"x{axis}", automargin=True)
        annotations.append(dict(text=f"<b>{title}</b>", x=lo + width / 2, y=1.0, xref="paper", yref="paper",
                                xanchor="center", yanchor="bottom", showarrow=False, font=_FONT))
    annotations.append(dict(text="x: chunk · thick: cumulative · thin dotted: this chunk · dashed red: true change",
                            x=1, y=-0.14, xref="paper", yref="paper", xanchor="right", yanchor="top",
                            showarrow=False, font=dict(size=11, color="#666")))
    layout["annotations"] = annotations
    layout["legend"] = dict(orientation="h", yanchor="bottom", y=1.12, xanchor="left", x=0, font=_FONT)
    layout["margin"] = dict(l=45, r=10, t=70, b=50)
    layout["shapes"] = _change_shapes(change_points, chunk_size, ("x", "x2", "x3"))
    return _figure(dict(data=traces, layout=layout))


# --------------------------------------------------------------------------- (b) cardinality
def _estimate_groups(chunks, models):
    """Variants whose diagnostics are identical share one trace (ELM-O/I/II see the same LCard_hat)."""
    groups = []  # [(names, key values)]
    for name in models:
        vals = tuple(
            None if _none(c.diagnostics.get(name, {}).get("lcard_hat")) is None
            else round(float(c.diagnostics[name]["lcard_hat"]), 10)
            for c in chunks
        )
        thr = tuple(
            None if _none(c.diagnostics.get(name, {}).get("threshold")) is None
            else round(float(c.diagnostics[name]["threshold"]), 10)
            for c in chunks
        )
        if all(v is None for v in vals):
            continue
        for g in groups:
            if g[1] == (vals, thr):
                g[0].append(name)
                break
        else:
            groups.append(([name], (vals, thr)))
    return [names for names, _ in groups]


def flip_rate_figure(over_time, *, height=300):
    """Error of the estimated flip rates per chunk (or the mean estimates when the truth is unknown)."""
    traces = []
    x = list(over_time["chunk"]) if len(over_time) else []
    known = "mae_rho_pos" in over_time.columns
    for col, name, color in (("rho_neg", "ρ− (false positives)", "#1f77b4"), ("rho_pos", "ρ+ (missed positives)", "#ff7f0e")):
        key = f"mae_{col}" if known else f"mean_{col}"
        if key in over_time.columns:
            traces.append(dict(type="scatter", x=x, y=list(over_time[key]), mode="lines+markers", name=name,
                               line=dict(color=color, width=2), marker=dict(size=5)))
    layout = _layout(height)
    layout["xaxis"] = dict(title=dict(text="chunk", font=_FONT))
    layout["yaxis"] = dict(title=dict(text="mean |estimate − truth|" if known else "mean estimate", font=_FONT),
                           rangemode="tozero")
    return _figure(dict(data=traces, layout=layout))


def cardinality_figure(chunks, models, change_points=(), chunk_size=1, n_chunks=None, *, height=320):
    """True cardinality, observed (noisy) cardinality and the unbiased estimate LCard_hat (Eq. card)."""
    x = [c.chunk for c in chunks]
    traces = [
        dict(type="scatter", x=x, y=[c.true_cardinality for c in chunks], mode="lines+markers",
             name="true LCard (hidden from the learner)", line=dict(color="#222", width=3), marker=dict(size=5)),
        dict(type="scatter", x=x, y=[c.observed_cardinality for c in chunks], mode="lines+markers",
             name="observed noisy LCard", line=dict(color="#d62728", width=2, dash="dot"), marker=dict(size=5)),
    ]
    for gi, names in enumerate(_estimate_groups(chunks, models)):
        label = " = ".join(names)
        traces.append(dict(
            type="scatter", x=x, y=[_none(c.diagnostics.get(names[0], {}).get("lcard_hat")) for c in chunks],
            mode="lines+markers", name=_esc(f"LCard̂ {label}"), line=dict(color=model_color(names[0], gi), width=2),
            marker=dict(size=6, symbol="diamond"),
        ))
    layout = _layout(height)
    layout["xaxis"] = dict(title=dict(text="chunk", font=_FONT), **_x_range(n_chunks))
    layout["yaxis"] = dict(title=dict(text="labels per instance", font=_FONT), rangemode="tozero")
    layout["shapes"] = _change_shapes(change_points, chunk_size)
    return _figure(dict(data=traces, layout=layout))


# --------------------------------------------------------------------------- (c) Hoeffding test
def threshold_figure(chunks, models, change_points=(), chunk_size=1, n_chunks=None, *, height=320):
    """|Delta LCard_hat| against the Hoeffding threshold eps_i (Eq. Hfd); crosses mark firings."""
    x = [c.chunk for c in chunks]
    traces = []
    for gi, names in enumerate(_estimate_groups(chunks, models)):
        name = names[0]
        label = " = ".join(names)
        color = model_color(name, gi)
        diff = [_none(c.diagnostics.get(name, {}).get("difference")) for c in chunks]
        thr = [_none(c.diagnostics.get(name, {}).get("threshold")) for c in chunks]
        traces.append(dict(type="bar", x=x, y=diff, name=_esc(f"|ΔLCard̂| {label}"), marker=dict(color=color),
                           opacity=0.75))
        traces.append(dict(type="scatter", x=x, y=thr, mode="lines", name=_esc(f"ε_i {label}"),
                           line=dict(color=color, width=2, dash="dash", shape="hvh")))
        fired = [(c.chunk, c.diagnostics[name].get("difference")) for c in chunks
                 if c.diagnostics.get(name, {}).get("fired")]
        if fired:
            traces.append(dict(type="scatter", x=[f[0] for f in fired], y=[f[1] for f in fired], mode="markers",
                               name=_esc(f"fired {label}"), marker=dict(symbol="x", size=12, color="#d62728",
                                                                        line=dict(width=2))))
    layout = _layout(height, barmode="group")
    layout["xaxis"] = dict(title=dict(text="chunk", font=_FONT), **_x_range(n_chunks))
    layout["yaxis"] = dict(title=dict(text="labels per instance", font=_FONT), rangemode="tozero")
    layout["shapes"] = _change_shapes(change_points, chunk_size)
    return _figure(dict(data=traces, layout=layout))


# --------------------------------------------------------------------------- (d) firings vs truth
def detecting_models(chunks, models) -> list[str]:
    return [m for m in models if m not in REFERENCES and any(m in c.diagnostics for c in chunks)]


def firing_classes(fired, truth, n_chunks) -> dict:
    """Split firings into detections (firing chunk -> (change chunk, delay)) and false alarms."""
    rep = detection_report(fired, truth, n_chunks)
    return {
        "detections": {c: (start, c - start) for c, start in rep["detections"].items()},
        "false_alarms": rep["false_alarm_chunks"],
    }


def detection_table(chunks, models, change_points, chunk_size):
    """Per detecting variant: firings, detected, missed, false alarms, mean delay (chunks) so far."""
    import pandas as pd

    n_seen = len(chunks)
    truth = change_chunks([p for p, _ in change_points], chunk_size)
    rows = []
    for name in detecting_models(chunks, models):
        fired = [c.chunk for c in chunks if c.diagnostics.get(name, {}).get("fired")]
        rep = detection_report(fired, truth, n_seen)
        rows.append({
            "variant": name,
            "firings": len(fired),
            "detected": rep["detected"],
            "missed": rep["missed"],
            "false alarms": rep["false_alarms"],
            "mean delay (chunks)": "–" if math.isnan(rep["mean_delay"]) else f"{rep['mean_delay']:.1f}",
            "fired at chunks": ", ".join(str(c) for c in fired) or "–",
        })
    return pd.DataFrame(rows, columns=["variant", "firings", "detected", "missed", "false alarms",
                                       "mean delay (chunks)", "fired at chunks"])


def _regime_shapes(change_points, chunk_size, n_chunks, initial):
    if not n_chunks:
        return []
    cuts = change_chunks([p for p, _ in change_points], chunk_size)
    bounds = [-0.5] + [c - 0.5 for c in cuts] + [n_chunks - 0.5]
    regime, shapes = initial, []
    for a, b in zip(bounds[:-1], bounds[1:]):
        shapes.append(dict(type="rect", xref="x", yref="paper", x0=a, x1=b, y0=0, y1=1, layer="below",
                           line=dict(width=0), fillcolor=_REGIME_FILL.get(regime, "rgba(0,0,0,0)")))
        regime = "multi" if regime == "single" else "single"
    return shapes


def timeline_figure(chunks, models, change_points=(), chunk_size=1, n_chunks=None, *, height=260):
    """True change points and each variant's drift firings on one chunk axis."""
    n_seen = len(chunks)
    total = n_chunks or n_seen
    rows = ["true change"] + [_esc(m) for m in detecting_models(chunks, models)]
    traces = []
    cuts = change_chunks([p for p, _ in change_points], chunk_size)
    if change_points:
        traces.append(dict(
            type="scatter", x=cuts, y=["true change"] * len(cuts), mode="markers+text", name="true change",
            marker=dict(symbol="diamond", size=14, color=_CHANGE_COLOR),
            text=[f"{k}@{p}" for p, k in change_points], textposition="middle right",
            hovertemplate="%{text} (chunk %{x})<extra></extra>", showlegend=False,
        ))
    det_x, det_y, det_t, fa_x, fa_y, fa_t = [], [], [], [], [], []
    for name in detecting_models(chunks, models):
        fired = [c.chunk for c in chunks if c.diagnostics.get(name, {}).get("fired")]
        cls = firing_classes(fired, cuts, n_seen)
        for c in fired:
            if c in cls["detections"]:
                start, delay = cls["detections"][c]
                det_x.append(c)
                det_y.append(_esc(name))
                det_t.append(f"detects the change of chunk {start}, delay {delay}")
            else:
                fa_x.append(c)
                fa_y.append(_esc(name))
                fa_t.append("false alarm")
    traces.append(dict(type="scatter", x=det_x, y=det_y, mode="markers", name="firing: detection",
                       marker=dict(symbol="circle", size=13, color="#2ca02c", line=dict(color="#111", width=1)),
                       text=det_t, hovertemplate="%{y} chunk %{x}: %{text}<extra></extra>"))
    traces.append(dict(type="scatter", x=fa_x, y=fa_y, mode="markers", name="firing: false alarm",
                       marker=dict(symbol="x", size=12, color="#d62728", line=dict(width=2)),
                       text=fa_t, hovertemplate="%{y} chunk %{x}: %{text}<extra></extra>"))
    initial = None
    if change_points:
        initial = "single" if change_points[0][1] == "growth" else "multi"
    layout = _layout(height, hovermode="closest")
    layout["xaxis"] = dict(title=dict(text="chunk", font=_FONT), **_x_range(total))
    layout["yaxis"] = dict(type="category", categoryorder="array", categoryarray=rows[::-1], range=[-0.6, len(rows) - 0.4])
    layout["shapes"] = _regime_shapes(change_points, chunk_size, total, initial) + _change_shapes(change_points, chunk_size)
    if not change_points:
        layout["annotations"] = [dict(text="no true change in this stream: every firing is a false alarm",
                                      x=0.5, y="true change", xref="paper", yref="y", yanchor="middle", showarrow=False,
                                      font=dict(size=11, color="#666"))]
    if initial:
        layout["annotations"] = [dict(text="shaded: blue = single-label regime, orange = multi-label regime",
                                      x=1, y=1.02, xref="paper", yref="paper", xanchor="right", yanchor="bottom",
                                      showarrow=False, font=dict(size=11, color="#666"))]
    return _figure(dict(data=traces, layout=layout))


# --------------------------------------------------------------------------- schedule preview
def schedule_figure(points, n_instances, *, height=130):
    """The drift schedule on the stream: regimes as bands, change points as diamonds.

    ``points``: list of ``(position or None, kind)``; a single ``(None, kind)`` is the
    paper's form (the change comes after the whole first pool, known only from the data).
    """
    traces, shapes, annotations = [], [], []
    n = max(int(n_instances or 0), 1)
    known = [(p, k) for p, k in points if p is not None]
    if points:
        initial = "single" if points[0][1] == "growth" else "multi"
        if known and len(known) == len(points):
            bounds = [0] + [p for p, _ in known] + [n]
            regime = initial
            for a, b in zip(bounds[:-1], bounds[1:]):
                shapes.append(dict(type="rect", xref="x", yref="paper", x0=a, x1=b, y0=0, y1=1, layer="below",
                                   line=dict(width=0), fillcolor=_REGIME_FILL[regime].replace("0.07", "0.25")
                                   .replace("0.10", "0.3")))
                annotations.append(dict(x=(a + b) / 2, y=0.5, xref="x", yref="paper", showarrow=False,
                                        text=regime, font=dict(size=11)))
                regime = "multi" if regime == "single" else "single"
            traces.append(dict(type="scatter", x=[p for p, _ in known], y=[0.5] * len(known), mode="markers",
                               marker=dict(symbol="diamond", size=12, color=_CHANGE_COLOR),
                               text=[f"{k}@{p}" for p, k in known], hovertemplate="%{text}<extra></extra>"))
        else:
            kind = points[0][1]
            annotations.append(dict(x=n / 2, y=0.5, xref="x", yref="paper", showarrow=False, font=dict(size=11),
                                    text=f"paper's {kind}: all {initial}-label instances first, then the rest"))
    else:
        shapes.append(dict(type="rect", xref="x", yref="paper", x0=0, x1=n, y0=0, y1=1, layer="below",
                           line=dict(width=0), fillcolor="rgba(127,127,127,0.12)"))
        annotations.append(dict(x=n / 2, y=0.5, xref="x", yref="paper", showarrow=False, font=dict(size=11),
                                text="no drift: one regime"))
    layout = dict(height=height, margin=dict(l=10, r=10, t=10, b=30), showlegend=False,
                  xaxis=dict(range=[0, n], title=dict(text="instance", font=dict(size=11))),
                  yaxis=dict(visible=False, range=[0, 1]), shapes=shapes, annotations=annotations)
    return _figure(dict(data=traces, layout=layout))


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


def sweep_figure(df, chosen=None, best=None, *, height=460):
    """Heat map of GM over beta (rows) x gamma (columns); the chosen and the best point marked."""
    betas = sorted(df["beta"].unique())
    gammas = sorted(df["gamma"].unique())
    glabels = [gamma_label(g) for g in gammas]
    table = df.pivot(index="beta", columns="gamma", values="gm").reindex(index=betas, columns=gammas)
    z = table.values.tolist()
    text = [[f"{v:.3f}" for v in row] for row in table.values]
    traces = [dict(type="heatmap", x=glabels, y=[f"{b:g}" for b in betas], z=z, text=text,
                   texttemplate="%{text}", textfont=dict(size=10), colorscale="Viridis",
                   colorbar=dict(title=dict(text="GM")),
                   hovertemplate="β=%{y}, γ=%{x}: GM %{z:.4f}<extra></extra>")]
    if best is not None:
        traces.append(dict(type="scatter", x=[gamma_label(best["gamma"])], y=[f"{best['beta']:g}"],
                           mode="markers", name=f"best GM {best['gm']:.4f}",
                           marker=dict(symbol="star", size=20, color="#ff2d55", line=dict(color="white", width=1.5))))
    if chosen is not None:
        traces.append(dict(type="scatter", x=[gamma_label(chosen[1])], y=[f"{chosen[0]:g}"], mode="markers",
                           name="current setting", marker=dict(symbol="square-open", size=26, color="#111",
                                                               line=dict(color="#111", width=3))))
    layout = dict(height=height, margin=dict(l=60, r=20, t=40, b=50),
                  xaxis=dict(title=dict(text="γ (ranking weight)"), type="category"),
                  yaxis=dict(title=dict(text="β (label-fit weight)"), type="category"),
                  legend=dict(orientation="h", yanchor="bottom", y=1.01, x=0))
    return _figure(dict(data=traces, layout=layout))
