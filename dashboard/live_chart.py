"""Live panels drawn in place: one Plotly graph per slot, updated with ``Plotly.react``.

``st.plotly_chart`` derives its element id from the figure, so every redraw of a live panel mounts a
new chart and plotly.js builds it from nothing (about 100 ms per panel in Chromium; four panels per
chunk made the per-chunk update 300-650 ms). Here a small ``st.components.v2`` component keeps each
slot's graph in the page and hands it the new figure: plotly.js then updates only what changed.

plotly.js comes from the installed plotly package, served by Streamlit's static file serving
(``.streamlit/config.toml``: ``enableStaticServing``) from ``dashboard/static/`` (a copy made at start,
ignored by git): nothing is loaded from the internet.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import plotly
import streamlit as st

STATIC = Path(__file__).resolve().parent / "static"
PLOTLY_JS = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"
#: The copy the page loads, at ``app/static/plotly.min.js``.
SERVED_JS = STATIC / "plotly.min.js"

# The graph of a slot lives in window.__ncldGraphs[slot]: a redraw (a new component instance, since a
# script run cannot mount the same key twice) moves it under the new instance and updates it in place.
_JS = r"""
const graphs = (window.__ncldGraphs = window.__ncldGraphs || {});

function plotlyReady() {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!window.__ncldPlotly) {
    const index = [...document.scripts].map(s => s.src).find(s => s.includes('/static/js/index'));
    const root = index ? index.split('/static/js/')[0] : window.location.origin;
    window.__ncldPlotly = new Promise((resolve, reject) => {
      const tag = document.createElement('script');
      tag.src = root + '/app/static/plotly.min.js';
      tag.onload = () => resolve(window.Plotly);
      tag.onerror = () => { window.__ncldPlotly = null; reject(new Error('plotly.js did not load')); };
      document.head.appendChild(tag);
    });
  }
  return window.__ncldPlotly;
}

export default function (component) {
  const { data, parentElement } = component;
  if (data && data.preload) { plotlyReady().catch(() => {}); return; }  // before Run: fetch plotly.js early
  if (!data || !data.slot) return;
  let gd = graphs[data.slot];
  if (!gd) {
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
          window.Plotly.Plots.resize(gd);
      });
    }).observe(gd);
  }
  if (gd.parentNode !== parentElement) parentElement.appendChild(gd);
  gd.__ncldNext = data;  // the newest figure wins if several arrive while plotly.js loads
  plotlyReady().then(Plotly => {
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
  }).catch(err => { gd.textContent = String(err); });
}
"""



def ensure_served() -> None:
    """Copy plotly.js next to the app (at start; again when the installed plotly changed)."""
    if not SERVED_JS.is_file() or SERVED_JS.stat().st_size != PLOTLY_JS.stat().st_size:
        STATIC.mkdir(exist_ok=True)
        tmp = SERVED_JS.with_suffix(f".{os.getpid()}.tmp")
        shutil.copyfile(PLOTLY_JS, tmp)
        tmp.replace(SERVED_JS)  # atomic: a page never loads half a file


ensure_served()
_component = st.components.v2.component("ncld_live_chart", js=_JS, isolate_styles=False)


def live_chart(placeholder, slot: str, fig, *, key: str, config: dict | None = None):
    """Draw ``fig`` into ``placeholder`` (an ``st.empty``) as the page's graph ``slot``, updated in place.

    ``key`` must be new within a script run: each redraw of a slot in one run takes a fresh one.
    """
    with placeholder.container():
        _component(data={"slot": slot, "figure": fig.to_json(), "config": config or {}}, key=key, width="stretch")


def preload_plotly(key: str = "plotly_preload"):
    """Mount an empty instance that only fetches plotly.js, so the first chunk's panels do not wait for it."""
    _component(data={"preload": True}, key=key, width="stretch", height=0)
