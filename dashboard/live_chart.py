"""Live panels drawn in place: one Plotly graph per slot, updated with ``Plotly.react``.

``st.plotly_chart`` derives its element id from the figure, so every redraw of a live panel mounts a
new chart and plotly.js builds it from nothing, four times per chunk. Here a small ``st.components.v2``
component keeps each slot's graph in the page and hands it the new figure: plotly.js then updates only
what changed. The per-chunk update before and after is measured by the browser tests and reported in
``docs/performance.md`` (section 5b).

plotly.js comes from the installed plotly package, served by Streamlit's static file serving
(``.streamlit/config.toml``: ``enableStaticServing``) from ``dashboard/static/`` (a copy made at start,
named by plotly's version, ignored by git): nothing is loaded from the internet. Where that folder cannot
be written the panels fall back to ``st.plotly_chart``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

import plotly
import streamlit as st

STATIC = Path(__file__).resolve().parent / "static"
PLOTLY_JS = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"
#: The copy the page loads, at ``app/static/<name>`` (named by the version: a browser never keeps an old one).
SERVED_JS = STATIC / f"plotly-{plotly.__version__}.min.js"

# The graph of a slot lives in window.__ncldGraphs[slot]: a redraw (a new component instance, since a
# script run cannot mount the same key twice) moves it under the new instance and updates it in place.
_JS = r"""
const graphs = (window.__ncldGraphs = window.__ncldGraphs || {});

function plotlyReady(src) {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!window.__ncldPlotly) {
    const index = [...document.scripts].map(s => s.src).find(s => s.includes('/static/js/index'));
    const root = index ? index.split('/static/js/')[0] : window.location.origin;
    window.__ncldPlotly = new Promise((resolve, reject) => {
      const tag = document.createElement('script');
      tag.src = root + '/app/static/' + src;
      tag.onload = () => resolve(window.Plotly);
      tag.onerror = () => { window.__ncldPlotly = null; reject(new Error('plotly.js did not load')); };
      document.head.appendChild(tag);
    });
  }
  return window.__ncldPlotly;
}

export default function (component) {
  const { data, parentElement } = component;
  if (data && data.preload) { plotlyReady(data.src).catch(() => {}); return; }  // before Run: fetch plotly.js
  if (!data || !data.slot) return;
  let gd = graphs[data.slot];
  if (!gd) {
    parentElement.querySelectorAll('.ncld-panel-error').forEach(e => e.remove());  // a failed earlier graph
    gd = document.createElement('div');
    gd.style.width = '100%';
    graphs[data.slot] = gd;
    // follow the width of wherever the graph is (moved into a wider panel, the sidebar closed, the window)
    let pending = false;
    new ResizeObserver(() => {
      if (pending || !window.Plotly || !gd._fullLayout) return;
      pending = true;
      requestAnimationFrame(() => {
        pending = false;
        if (gd.isConnected && gd.clientWidth && Math.abs(gd.clientWidth - gd._fullLayout.width) > 1)
          window.Plotly.Plots.resize(gd).catch(() => {});
      });
    }).observe(gd);
  }
  if (gd.parentNode !== parentElement) parentElement.appendChild(gd);
  gd.__ncldNext = data;  // the newest figure wins if several arrive while plotly.js loads
  plotlyReady(data.src).then(Plotly => {
    const next = gd.__ncldNext;
    if (!next) return;
    gd.__ncldNext = null;
    const fig = JSON.parse(next.figure);
    // the app's type, as st.plotly_chart's theme set it (legends and titles are sized for it)
    fig.layout = fig.layout || {};
    fig.layout.font = Object.assign({family: '"Source Sans", sans-serif', size: 12}, fig.layout.font || {});
    // the figure's own height (the div's width follows its parent, its height is the figure's)
    gd.style.height = (fig.layout && fig.layout.height ? fig.layout.height : 450) + 'px';
    return Plotly.react(gd, fig.data, fig.layout, next.config || {}).then(() => {
      if (gd.clientWidth && Math.abs(gd.clientWidth - gd._fullLayout.width) > 1) return Plotly.Plots.resize(gd);
    });
  }).catch(err => {
    // start this slot afresh next time, and say what went wrong where the graph was
    if (window.Plotly) window.Plotly.purge(gd);
    delete graphs[data.slot];
    gd.className = 'ncld-panel-error';
    gd.textContent = 'The panel could not be drawn: ' + String(err);
  });
}
"""


def ensure_served() -> bool:
    """Copy plotly.js next to the app (at start; again when the installed plotly changed).

    False when ``dashboard/static`` cannot be written (a read-only install): the panels are then drawn
    by ``st.plotly_chart``, as before, only slower.
    """
    if SERVED_JS.is_file() and SERVED_JS.stat().st_size == PLOTLY_JS.stat().st_size:
        return True
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=STATIC, prefix=".plotly.", suffix=".tmp")
        with os.fdopen(fd, "wb") as out, open(PLOTLY_JS, "rb") as src:
            shutil.copyfileobj(src, out)
        os.replace(tmp, SERVED_JS)  # atomic: a page never loads half a file
        for old in STATIC.glob("plotly-*.min.js"):  # other plotly versions' copies
            if old != SERVED_JS:
                old.unlink(missing_ok=True)
    except OSError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        return False
    return True


SERVED = ensure_served()
_component = st.components.v2.component("ncld_live_chart", js=_JS, isolate_styles=False)


def live_chart(placeholder, slot: str, fig, *, key: str, config: dict | None = None):
    """Draw ``fig`` into ``placeholder`` (an ``st.empty``) as the page's graph ``slot``, updated in place.

    ``key`` must be new within a script run: each redraw of a slot in one run takes a fresh one.
    """
    if not SERVED:
        placeholder.plotly_chart(fig, config=config or {}, key=key)
        return
    with placeholder.container():
        _component(data={"slot": slot, "figure": fig.to_json(), "config": config or {}, "src": SERVED_JS.name},
                   key=key, width="stretch")


def preload_plotly(key: str = "plotly_preload"):
    """Mount an empty instance that only fetches plotly.js, so the first chunk's panels do not wait for it."""
    if SERVED:
        _component(data={"preload": True, "src": SERVED_JS.name}, key=key, width="stretch", height=0)
