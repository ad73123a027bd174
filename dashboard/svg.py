"""A small static figure as inline SVG: what the sidebar's schedule preview needs of a Plotly figure.

The sidebar's preview of the drift schedule is drawn without plotly.js, whose evaluation would otherwise come
before the Run button (what it cost is measured in ``docs/deploy.md``, ``python -m benchmarks.classroom``). This
draws the same figure (``figures.schedule_figure``, the one description of the preview) as an SVG string in the
page: nothing to load, drawn with the page.

It draws the subset the preview uses, in the figure's own coordinates: the x axis's range with a few round ticks
and its title, rectangles spanning the plot's height (``shapes``, x in data units), texts (``annotations``) and
marker traces (diamonds, filled or open; their hover text becomes the marker's tooltip). Texts are Plotly's, which
are HTML-escaped already (``figures._esc`` escapes anything from the user); tags are dropped.

>>> import plotly.graph_objects as go
>>> fig = go.Figure(layout=dict(height=100, xaxis=dict(range=[0, 1000], title=dict(text="instance")),
...                             shapes=[dict(type="rect", x0=0, x1=500, y0=0, y1=1, fillcolor="red")]))
>>> out = svg_of(fig, label="a schedule")
>>> out.startswith('<svg role="img" aria-label="a schedule"') and out.count("<rect") == 1
True
>>> nice_ticks(0, 10000)
[0, 2000, 4000, 6000, 8000, 10000]
"""

from __future__ import annotations

import html
import math
import re

__all__ = ["svg_of", "nice_ticks"]

_TAG = re.compile(r"<[^>]*>")
_AXIS_COLOR = "rgba(49,51,63,0.6)"
_FONT = 'font-family="Source Sans, sans-serif"'


def nice_ticks(low: float, high: float, *, at_most: int = 6) -> list:
    """Round tick values (1, 2 or 5 times a power of ten apart) covering ``[low, high]``, at most ``at_most``."""
    span = high - low
    if not span > 0:
        return [low]
    for power in range(int(math.floor(math.log10(span / at_most))) - 1, 20):
        for step in (1, 2, 5):
            size = step * 10.0**power
            first = math.ceil(low / size)
            ticks = [k * size for k in range(first, int(math.floor(high / size)) + 1)]
            if len(ticks) <= at_most:
                return [int(t) if float(t).is_integer() else t for t in ticks]
    return [low, high]


def _text(value) -> str:
    """A Plotly text as SVG text: tags dropped, already escaped (an unescaped ``&``, ``<`` or ``>`` escaped)."""
    plain = html.unescape(_TAG.sub("", str(value or "")))
    return html.escape(plain, quote=False)


def _tick_text(value) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def svg_of(fig, *, width: int = 300, label: str = "") -> str:
    """``fig`` (a Plotly figure of the subset above) drawn ``width`` px wide, scaling with its container."""
    layout = fig.layout
    height = int(layout.height or 130)
    margin = layout.margin
    left, right = int(margin.l or 10), int(margin.r or 10)
    top, bottom = int(margin.t or 10), int(margin.b or 30)
    x_low, x_high = (layout.xaxis.range or (0, 1))
    x_low, x_high = float(x_low), float(x_high)
    plot_w, plot_h = width - left - right, height - top - bottom
    if x_high <= x_low:
        x_high = x_low + 1

    def px(x) -> float:
        return round(left + (float(x) - x_low) / (x_high - x_low) * plot_w, 1)

    def py(y) -> float:  # y in [0, 1] of the plot's height (paper units; the preview's y axis is [0, 1])
        return round(top + (1 - float(y)) * plot_h, 1)

    parts = [f'<svg role="img" aria-label="{html.escape(label)}" xmlns="http://www.w3.org/2000/svg" '
             f'viewBox="0 0 {width} {height}" width="100%" style="display:block;max-width:{width * 2}px">']
    for shape in layout.shapes or ():
        if shape.type != "rect":
            continue
        x0, x1 = sorted((px(shape.x0), px(shape.x1)))
        y0, y1 = sorted((py(shape.y1 if shape.y1 is not None else 1), py(shape.y0 if shape.y0 is not None else 0)))
        parts.append(f'<rect x="{x0}" y="{y0}" width="{round(x1 - x0, 1)}" height="{round(y1 - y0, 1)}" '
                     f'fill="{html.escape(shape.fillcolor or "none")}"/>')
    # the x axis: its line, round ticks with their labels, its title
    base = py(0)
    parts.append(f'<line x1="{left}" y1="{base}" x2="{left + plot_w}" y2="{base}" stroke="{_AXIS_COLOR}"/>')
    for tick in nice_ticks(x_low, x_high, at_most=max(2, plot_w // 60)):
        x = px(tick)
        # the end ticks' labels inside the figure (a label centred on its edge would be cut)
        anchor = "start" if x - left < 12 else "end" if left + plot_w - x < 12 else "middle"
        parts.append(f'<line x1="{x}" y1="{base}" x2="{x}" y2="{base + 4}" stroke="{_AXIS_COLOR}"/>'
                     f'<text x="{x}" y="{base + 14}" text-anchor="{anchor}" font-size="10" {_FONT} '
                     f'fill="{_AXIS_COLOR}">{_tick_text(tick)}</text>')
    title = layout.xaxis.title.text if layout.xaxis.title else None
    if title:
        parts.append(f'<text x="{left + plot_w / 2}" y="{height - 3}" text-anchor="middle" font-size="11" {_FONT} '
                     f'fill="{_AXIS_COLOR}">{_text(title)}</text>')
    for note in layout.annotations or ():
        x = px(note.x) if note.xref == "x" else left + float(note.x or 0) * plot_w
        size = note.font.size if note.font and note.font.size else 11
        parts.append(f'<text x="{round(x, 1)}" y="{py(note.y if note.y is not None else 0.5)}" text-anchor="middle" '
                     f'dominant-baseline="middle" font-size="{size}" {_FONT} fill="rgba(49,51,63,0.9)">'
                     f'{_text(note.text)}</text>')
    for trace in fig.data:
        if getattr(trace, "type", None) != "scatter" or trace.x is None:
            continue
        marker = trace.marker
        symbols = marker.symbol if isinstance(marker.symbol, (list, tuple)) else [marker.symbol] * len(trace.x)
        texts = trace.text if isinstance(trace.text, (list, tuple)) else [trace.text] * len(trace.x)
        r = (marker.size or 10) / 2
        color = html.escape(marker.color if isinstance(marker.color, str) else "#d62728")
        for x, y, symbol, tip in zip(trace.x, trace.y, symbols, texts):
            cx, cy = px(x), py(y)
            fill = "white" if str(symbol).endswith("-open") else color
            parts.append(f'<path d="M{cx},{round(cy - r, 1)} L{round(cx + r, 1)},{cy} L{cx},{round(cy + r, 1)} '
                         f'L{round(cx - r, 1)},{cy} Z" fill="{fill}" stroke="{color}" stroke-width="1.5">'
                         + (f"<title>{_text(tip)}</title>" if tip else "") + "</path>")
    parts.append("</svg>")
    return "".join(parts)
