"""Downloads of a run: per-chunk CSV, summary JSON and a standalone HTML report.

The HTML report inlines plotly.js once (``include_plotlyjs=True``): it opens offline,
nothing is fetched from the network. Every user-provided string is HTML-escaped.
"""

from __future__ import annotations

import datetime as _dt
import html
import json

import pandas as pd

from ncld_core.eval.metrics import METRICS
from ncld_core.eval.sweep import geometric_mean
from ncld_core.eval.variants import ELM_VARIANTS

from . import panels
from .panels import PanelData, heading

__all__ = ["run_figures", "run_notes", "run_tables", "summary_table", "records_csv", "summary_json", "html_report",
           "seconds_note"]


def seconds_note(models) -> str:
    """What the summary's seconds count, where several ELM-NCLD variants run ("" where fewer than two do).

    The runner computes each chunk's hidden-layer output, kNN graph and ``P_D`` once for the variants whose
    settings agree (:class:`ncld_core.model.chunk_cache.ChunkCache`; ELM (plain) fits no ``P_D``, the paper's
    settings draw their own hidden layer) and counts each in the time of the first variant that needs it.

    >>> "counted in the time of the first variant listed that needs it (here ELM-O)" in seconds_note(
    ...     ["ELM-O", "ELM-I", "OSML-ELM"])
    True
    >>> seconds_note(["ELM-O", "OSML-ELM"])
    ''
    """
    elm = [m for m in models if m in ELM_VARIANTS]
    if len(elm) < 2:
        return ""
    return ("seconds: each model's time to score and learn. The ELM-NCLD variants share each chunk's hidden-layer "
            "output, kNN graph and P_D where their settings agree: each is computed once and counted in the time of "
            f"the first variant listed that needs it (here {elm[0]}); the others' seconds are what each adds.")


def run_figures(data: PanelData) -> dict:
    """``{heading: figure}`` of every panel of the Live run (:data:`dashboard.panels.PANELS`) with
    something to draw, headed as on the page."""
    return {heading(panels.by_key(key), data): fig for key, fig in panels.figures(data).items()}


def run_notes(data: PanelData) -> dict:
    """``{figure heading: text}``: what the panels write beside their figures (caption, note)."""
    out = {}
    for panel in panels.PANELS:
        if panel.figure is None:
            continue
        text = " ".join(t for t in (f(data) for f in (panel.caption, panel.note) if f is not None) if t)
        if text:
            out[heading(panel, data)] = text
    return out


def run_tables(data: PanelData) -> dict:
    """``{heading: DataFrame}``: the panels' tables (e.g. the drift detection per detector)."""
    out = {}
    for panel in panels.PANELS:
        table = panel.table(data) if panel.table is not None else None
        if table is not None and not table.empty:
            out[panel.table_title or heading(panel, data)] = table
    return out


_FIRST = ("hamming_loss", "micro_f1", "average_precision", "gm", "firings", "detected", "missed", "false_alarms",
          "mean_delay", "seconds")
_NAMES = {key: name for key, name, _ in METRICS} | {
    "gm": "GM", "false_alarms": "false alarms", "mean_delay": "mean delay (chunks)", "seconds": "seconds",
}


def summary_table(result, *, readable: bool = False) -> pd.DataFrame:
    """RunResult.summary() with the paper's GM next to the metrics, variants as a column.

    ``readable``: human column names (Hamming loss, Micro-F1, ...) for display.
    """
    df = result.summary()
    if df.empty:
        return df
    df = df.copy()
    if {"hamming_loss", "micro_f1"} <= set(df.columns):
        df.insert(0, "gm", geometric_mean(df["hamming_loss"], df["micro_f1"]))
    first = [c for c in _FIRST if c in df.columns]
    df = df[first + [c for c in df.columns if c not in first]]
    df.index.name = "variant"
    df = df.reset_index()
    if readable:
        df = df.rename(columns=_NAMES)
    return df


def records_csv(result) -> str:
    """The per-chunk CSV; a stopped run's first line is ``# stopped at chunk k of n``."""
    return result.records_csv()


def summary_json(result) -> str:
    """RunResult.to_json's document as text."""
    return result.summary_json()


def html_report(title: str, config: dict, figures: dict, summary: pd.DataFrame, notes: str = "",
                tables: dict | None = None, figure_notes: dict | None = None, status: str = "") -> str:
    """One self-contained HTML page: configuration, figures (plotly.js inlined once) and the summary.

    ``tables``: further ``{heading: DataFrame}`` shown after the summary (escaped);
    ``figure_notes``: ``{figure heading: text}`` written under that figure (escaped);
    ``status``: where the run stands (``RunResult.status``, e.g. "stopped at chunk 5 of 20"), shown first.
    """
    parts = []
    first = True
    for name, fig in figures.items():
        fig = fig.to_dict()
        layout = dict(fig.get("layout", {}))
        layout["template"] = "plotly_white"
        import plotly.graph_objects as go

        g = go.Figure(dict(data=fig["data"], layout=layout))
        parts.append(f"<h2>{html.escape(name)}</h2>")
        parts.append(g.to_html(full_html=False, include_plotlyjs=first, config={"displaylogo": False}))
        if (figure_notes or {}).get(name):
            parts.append(f'<p class="note">{html.escape(figure_notes[name])}</p>')
        first = False
    table = "<p>No chunk was scored.</p>"
    if not summary.empty:
        special = {"firings": "{:.0f}", "detected": "{:.0f}", "missed": "{:.0f}", "false alarms": "{:.0f}",
                   "false_alarms": "{:.0f}", "mean delay (chunks)": "{:.1f}", "mean_delay": "{:.1f}",
                   "seconds": "{:.2f}"}
        formatters = {c: (lambda v, f=special.get(c, "{:.4f}"): "–" if pd.isna(v) else f.format(v))
                      for c in summary.columns if summary[c].dtype.kind == "f"}
        table = '<div class="scroll">' + summary.to_html(index=False, escape=True, formatters=formatters,
                                                         na_rep="–") + "</div>"
    for heading, df in (tables or {}).items():
        if df is not None and not df.empty:
            table += (f"<h2>{html.escape(heading)}</h2>" + '<div class="scroll">'
                      + df.to_html(index=False, escape=True, na_rep="–") + "</div>")
    cfg_json = html.escape(json.dumps(config, indent=2, default=str))
    stamp = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{html.escape(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1200px; color: #222; }}
table {{ border-collapse: collapse; font-size: 0.9rem; }}
td, th {{ border: 1px solid #ccc; padding: 4px 8px; text-align: right; }}
pre {{ background: #f6f6f6; padding: 1rem; overflow-x: auto; }}
.scroll {{ overflow-x: auto; }}
.note {{ color: #555; font-size: 0.9rem; }}
</style></head><body>
<h1>{html.escape(title)}</h1>
{f'<p class="status"><strong>Run {html.escape(status)}.</strong></p>' if status else ""}
<p>ncld · ELM-NCLD lab report, {stamp}. {html.escape(notes)}</p>
<h2>Summary</h2>
{table}
{''.join(parts)}
<h2>Configuration</h2>
<pre>{cfg_json}</pre>
</body></html>
"""
