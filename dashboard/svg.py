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
    """``fig`` (a Plotly figure of the subset above) drawn ``width`` px wide, scaling with its container.

    The figure is read once as plain data (``to_plotly_json``): reading its annotations and markers one by one
    through Plotly's objects costs time quadratic in their number."""
    spec = fig.to_plotly_json()
    layout = spec.get("layout") or {}
    height = int(layout.get("height") or 130)
    margin = layout.get("margin") or {}
    left, right = int(margin.get("l") or 10), int(margin.get("r") or 10)
    top, bottom = int(margin.get("t") or 10), int(margin.get("b") or 30)
    xaxis = layout.get("xaxis") or {}
    x_low, x_high = (xaxis.get("range") or (0, 1))
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
    for shape in layout.get("shapes") or ():
        if shape.get("type") != "rect":
            continue
        x0, x1 = sorted((px(shape.get("x0")), px(shape.get("x1"))))
        y_top, y_bottom = shape.get("y1"), shape.get("y0")
        y0, y1 = sorted((py(y_top if y_top is not None else 1), py(y_bottom if y_bottom is not None else 0)))
        parts.append(f'<rect x="{x0}" y="{y0}" width="{round(x1 - x0, 1)}" height="{round(y1 - y0, 1)}" '
                     f'fill="{html.escape(shape.get("fillcolor") or "none")}"/>')
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
    title = (xaxis.get("title") or {}).get("text")
    if title:
        parts.append(f'<text x="{left + plot_w / 2}" y="{height - 3}" text-anchor="middle" font-size="11" {_FONT} '
                     f'fill="{_AXIS_COLOR}">{_text(title)}</text>')
    for note in layout.get("annotations") or ():
        x = px(note.get("x")) if note.get("xref") == "x" else left + float(note.get("x") or 0) * plot_w
        size = (note.get("font") or {}).get("size") or 11
        y = note.get("y")
        parts.append(f'<text x="{round(x, 1)}" y="{py(y if y is not None else 0.5)}" text-anchor="middle" '
                     f'dominant-baseline="middle" font-size="{size}" {_FONT} fill="rgba(49,51,63,0.9)">'
                     f'{_text(note.get("text"))}</text>')
    for trace in spec.get("data") or ():
        xs = trace.get("x")
        if trace.get("type") != "scatter" or xs is None:
            continue
        xs, ys = list(xs), list(trace.get("y"))
        marker = trace.get("marker") or {}
        symbol, text = marker.get("symbol"), trace.get("text")
        symbols = list(symbol) if isinstance(symbol, (list, tuple)) else [symbol] * len(xs)
        texts = list(text) if isinstance(text, (list, tuple)) else [text] * len(xs)
        r = (marker.get("size") or 10) / 2
        color = marker.get("color")
        color = html.escape(color if isinstance(color, str) else "#d62728")
        for x, y, symbol, tip in zip(xs, ys, symbols, texts):
            cx, cy = px(x), py(y)
            fill = "white" if str(symbol).endswith("-open") else color
            parts.append(f'<path d="M{cx},{round(cy - r, 1)} L{round(cx + r, 1)},{cy} L{cx},{round(cy + r, 1)} '
                         f'L{round(cx - r, 1)},{cy} Z" fill="{fill}" stroke="{color}" stroke-width="1.5">'
                         + (f"<title>{_text(tip)}</title>" if tip else "") + "</path>")
    parts.append("</svg>")
    return "".join(parts)
