"""Live panels drawn in place: one Plotly graph per slot, updated with ``Plotly.react``.

``st.plotly_chart`` derives its element id from the figure, so every redraw of a live panel mounts a
new chart and plotly.js builds it from nothing, four times per chunk. Here a small ``st.components.v2``
component keeps each slot's graph in the page and hands it the new figure: plotly.js then updates only
what changed (a chunk that only adds points is a transition: the traces are redrawn, not the axes,
legend and hover layers). Each panel holds a *mount* (:func:`mount`, once per script run) where its graph
sits; a chunk's figures travel together in one element (:func:`draw_charts`): every element sent is a
render of the whole page in the browser. The per-chunk update is measured by the browser tests and
reported in ``docs/performance.md`` (section 5b).

plotly.js comes from the installed plotly package, served by Streamlit's static file serving
(``.streamlit/config.toml``: ``enableStaticServing``) from ``dashboard/static/`` (a copy made at start,
named by plotly's version, ignored by git): nothing is loaded from the internet. Where that folder cannot
be written the panels fall back to ``st.plotly_chart``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path

import plotly
import streamlit as st

from dashboard.figures import fix_y_ranges
from dashboard.serving.limits import LIMITS

STATIC = Path(__file__).resolve().parent / "static"
PLOTLY_JS = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"
#: The copy the page loads, at ``app/static/<name>`` (named by the version: a browser never keeps an old one).
SERVED_JS = STATIC / f"plotly-{plotly.__version__}.min.js"

# The graph of a slot lives in window.__ncldGraphs[slot] and sits in the slot's mount (the element of the
# newest instance that said {mount: slot}) when both belong to the same run (its owner token): after a rerun
# the new mount takes over the run's graph as it was drawn, and never shows another run's.
_JS = r"""
const graphs = (window.__ncldGraphs = window.__ncldGraphs || {});
const mounts = (window.__ncldMounts = window.__ncldMounts || {});

function plotlyReady(src) {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!window.__ncldPlotly) {
    const index = [...document.scripts].map(s => s.src).find(s => s.includes('/static/js/index'));
    const root = index ? index.split('/static/js/')[0] : window.location.origin;
    window.__ncldPlotly = new Promise((resolve, reject) => {
      const tag = document.createElement('script');
      tag.src = root + '/app/static/' + src;
      tag.onload = () => resolve(window.Plotly);
      tag.onerror = () => { tag.remove(); window.__ncldPlotly = null; reject(new Error('plotly.js did not load')); };
      document.head.appendChild(tag);
    });
  }
  return window.__ncldPlotly;
}

function graph(slot) {
  let gd = graphs[slot];
  if (!gd) {
    gd = document.createElement('div');
    gd.style.width = '100%';
    graphs[slot] = gd;
    // follow the width of wherever the graph is (moved into a wider panel, the sidebar closed, the window)
    let pending = false;
    new ResizeObserver(() => {
      if (pending || !window.Plotly || !gd._fullLayout) return;
      pending = true;
      requestAnimationFrame(() => {
        pending = false;
        followWidth(gd, slot);
      });
    }).observe(gd);
  }
  return gd;
}

// Draw the graph at its div's width when it was drawn at another (the legend laid out afresh for that width).
// Called on the graph's resizes and on every change of the page (refitAll): a graph drawn while its div had no
// width (plotly's 700 px default) whose div widened during a draw would otherwise keep the old width.
function followWidth(gd, slot) {
  if (!window.Plotly || !gd._fullLayout || gd.__ncldBusy || !gd.isConnected || !gd.clientWidth ||
      Math.abs(gd.clientWidth - gd._fullLayout.width) <= 1) return;
  const pick = legendFor(gd, gd.layout);
  if (pick && pick.w !== gd.__ncldLegend) {  // the legend laid out for this width, on the figure as drawn
    const fig = {data: gd.data, layout: Object.assign({}, gd.layout)};
    applyLegend(gd, fig);
    fig.layout.height = fittedHeight(gd, fig.layout);
    gd.style.height = fig.layout.height + 'px';
    gd.__ncldFigure = gd.__ncldShape = null;  // the next figure is drawn whole
    gd.__ncldBusy = true;
    window.Plotly.react(gd, fig.data, fig.layout).then(() => {
      if (gd.clientWidth && Math.abs(gd.clientWidth - gd._fullLayout.width) > 1) return window.Plotly.Plots.resize(gd);
    }).catch(() => {}).finally(() => {
      gd.__ncldBusy = false;
      place(slot);
    });
  } else window.Plotly.Plots.resize(gd).catch(() => {});
}

// The legend laid out for the widest graph this one holds (layout.meta.legends, narrowest first, each for a
// graph w px wide: dashboard/figures.py fit_legend): its wrapped names, bottom margin and height.
function legendFor(gd, layout) {
  const all = layout.meta && layout.meta.legends;
  if (!all || !all.length) return null;
  const width = gd.clientWidth || 0;
  let pick = all[0];
  for (const l of all) if (l.w <= width + 1) pick = l;
  return pick;
}

function applyLegend(gd, fig) {
  const pick = legendFor(gd, fig.layout);
  gd.__ncldLegend = pick ? pick.w : null;
  if (!pick) return;
  for (const [i, name] of Object.entries(pick.names)) if (fig.data[i]) fig.data[i].name = name;
  fig.layout.margin = Object.assign({}, fig.layout.margin, {b: pick.b});
  fig.layout.height = pick.height;
  fig.layout.legend = Object.assign({}, fig.layout.legend, {entrywidth: pick.entrywidth, maxheight: pick.maxheight});
  const fit = fig.layout.meta.fit;
  if (fit) { fit.base = pick.height; fit.plot = pick.plot; }
}

// Presentation mode (layout.meta.fit = {base, plot, min, max}: the figure's height and its plot area's, as drawn
// by the app, and the plot area's bounds): the plot area takes the height the window has left under the graph's
// top, less what its panel shows under it (a note, a table) and the page's bottom padding, within [min, max] px.
// The panel then fits the screen whatever stands above it (a lesson's step of any length, a wrapped heading).
function fittedHeight(gd, layout) {
  const fit = layout.meta && layout.meta.fit;
  if (!fit || !gd.isConnected) return layout.height;
  const panel = gd.closest('[class*="st-key-panel_"]') || gd.parentNode;
  const top = gd.getBoundingClientRect().top + window.scrollY;
  // what the panel shows under the graph, to its lowest element (a caption's text can overhang its box)
  const bottom = Math.max(panel.getBoundingClientRect().bottom,
    ...[...panel.querySelectorAll('[data-testid="stCaptionContainer"], [data-testid="stExpander"], table')]
      .map(e => e.getBoundingClientRect().bottom));
  const below = Math.max(0, bottom - gd.getBoundingClientRect().bottom);
  const main = document.querySelector('.stMainBlockContainer');
  const pad = main ? parseFloat(getComputedStyle(main).paddingBottom) || 0 : 0;
  const room = window.innerHeight - top - below - pad - 8;
  const plot = Math.min(fit.max, Math.max(fit.min, room - (fit.base - fit.plot)));
  return Math.round(fit.base - fit.plot + plot);
}

// Fit again every fitted graph when the page under or above it changes height, or the window its size.
function refitAll() {
  if (!window.Plotly) return;
  for (const [slot, gd] of Object.entries(graphs)) {
    followWidth(gd, slot);
    if (!gd._fullLayout || gd.__ncldBusy || !gd.isConnected || !(gd.layout.meta && gd.layout.meta.fit)) continue;
    const h = fittedHeight(gd, gd.layout);
    if (Math.abs(h - gd.layout.height) > 2) {
      gd.style.height = h + 'px';
      window.Plotly.relayout(gd, {height: h}).catch(() => {});
    }
  }
}
if (!window.__ncldWatching) {
  window.__ncldWatching = true;
  let queued = false;
  const soon = () => { if (!queued) { queued = true; requestAnimationFrame(() => {
    queued = false;
    for (const [slot, gd] of Object.entries(graphs)) if (!gd.isConnected) place(slot);  // its mount left the page
    refitAll();
  }); } };
  window.addEventListener('resize', soon);
  new MutationObserver(soon).observe(document.body, {subtree: true, childList: true, characterData: true});
  new ResizeObserver(soon).observe(document.body);
}

// The slot's newest mount still in the page. Streamlit can render a mount's instance twice in one rerun and keep
// the first (the second leaves the page at once): every instance is kept until it leaves the page.
function latestMount(slot) {
  const list = (mounts[slot] || []).filter(m => m.el.isConnected);
  mounts[slot] = list;
  return list.length ? list[list.length - 1] : null;
}

// The slot's mount, when it is in the page and shows the run the graph's figures are of.
function mountOf(gd, slot) {
  const mount = latestMount(slot);
  return mount && mount.owner === gd.__ncldOwner ? mount.el : null;
}

// Draw what waits for the slot's mount, or show the graph there as it was drawn (after a rerun).
function place(slot) {
  const gd = graphs[slot], el = gd && mountOf(gd, slot);
  if (!el || gd.__ncldBusy) return;
  if (gd.__ncldNext) drawNext(gd, slot);
  else if (gd.__ncldDrawn === gd.__ncldOwner && gd.parentNode !== el) el.appendChild(gd);
}

export default function (component) {
  const { data, parentElement } = component;
  if (!data) return;
  if (data.preload) { plotlyReady(data.src).catch(() => {}); return; }  // before Run: fetch plotly.js
  if (data.mount) {
    mounts[data.mount] = (mounts[data.mount] || []).filter(m => m.el !== parentElement)
      .concat([{el: parentElement, owner: data.owner}]);
    const held = graphs[data.mount];  // a kept instance keeps its element: take another run's graph out
    if (held && held.parentNode === parentElement && held.__ncldDrawn !== data.owner && !held.__ncldBusy)
      parentElement.removeChild(held);
    place(data.mount);
  }
  for (const [slot, figure] of Object.entries(data.figures || {})) {
    const gd = graph(slot);
    // another run's graph leaves the page until it is drawn anew
    if (gd.__ncldOwner !== data.owner && !gd.__ncldBusy && gd.parentNode) gd.parentNode.removeChild(gd);
    gd.__ncldOwner = data.owner;
    // the newest figure wins if several arrive while one is drawn
    gd.__ncldNext = {figure, owner: data.owner, chunk: data.chunk, config: data.config, src: data.src};
    place(slot);
  }
}

// One figure at a time per graph (a transition ends after Plotly.react returns), in its run's mount; then the
// newest. Another run's drawing is emptied first: the panel never shows it under this run's status.
function drawNext(gd, slot) {
  if (!mountOf(gd, slot)) return;  // place() draws it once its mount is in the page
  gd.__ncldBusy = true;
  const next = gd.__ncldNext;
  gd.__ncldNext = null;
  plotlyReady(next.src).then(Plotly => {
    const el = mountOf(gd, slot);  // the mount may have changed while plotly.js loaded
    if (!el || next.owner !== gd.__ncldOwner) {
      if (!gd.__ncldNext && next.owner === gd.__ncldOwner) gd.__ncldNext = next;  // drawn once the mount is back
      return;
    }
    if (gd.__ncldDrawn !== next.owner) {
      if (gd._fullLayout) Plotly.purge(gd);
      delete gd.dataset.chunk;
      gd.__ncldFigure = gd.__ncldShape = null;
    }
    if (gd.parentNode !== el) {
      el.querySelectorAll('.ncld-panel-error').forEach(e => e.remove());  // a failed earlier graph
      el.appendChild(gd);
    }
    return draw(Plotly, gd, next);
  }).catch(err => {
    // say what went wrong where the graph is (or would be); the slot starts afresh with what waits for it
    if (window.Plotly && gd._fullLayout) window.Plotly.purge(gd);
    delete graphs[slot];
    const waiting = gd.__ncldNext;
    gd.__ncldNext = null;
    gd.className = 'ncld-panel-error';
    gd.textContent = 'The panel could not be drawn: ' + String(err);
    const el = latestMount(slot) && latestMount(slot).el;
    if (!gd.isConnected && el && el.isConnected) el.appendChild(gd);
    if (waiting) {
      const fresh = graph(slot);
      fresh.__ncldOwner = waiting.owner;
      fresh.__ncldNext = waiting;
    }
  }).finally(() => {
    gd.__ncldBusy = false;
    // a new run's mount while this one drew: take the graph out, it is another run's
    const mount = latestMount(slot);
    if (graphs[slot] === gd && mount && gd.parentNode === mount.el && mount.owner !== gd.__ncldDrawn)
      mount.el.removeChild(gd);
    place(slot);
  });
}

function draw(Plotly, gd, next) {
  const shown = () => { if (next.chunk !== undefined && next.chunk !== null) gd.dataset.chunk = next.chunk; };
  if (next.figure === gd.__ncldFigure && gd._fullLayout) { shown(); refitAll(); return; }  // nothing changed
  const fig = JSON.parse(next.figure);
  // the app's type, as st.plotly_chart's theme set it (legends and titles are sized for it)
  fig.layout = fig.layout || {};
  applyLegend(gd, fig);
  fig.layout.height = fittedHeight(gd, fig.layout);
  fig.layout.font = Object.assign({family: '"Source Sans", sans-serif', size: 12}, fig.layout.font || {});
  // A new size or type size (presentation mode toggled) is drawn afresh: plotly's react keeps margins pushed
  // by the old legend and titles, and the change labels then overlap the legend.
  if (gd._fullLayout && (fig.layout.height !== gd.layout.height ||
      JSON.stringify(fig.layout.font) !== JSON.stringify(gd.layout.font))) {
    Plotly.purge(gd);
    gd.__ncldShape = null;
  }
  // A zoom (layout.uirevision) is kept while the figure's range of that axis stays; when the range moves the
  // axis shows the new one whole (plotly alone would keep the end the figure did not move and take the other).
  for (const [k, axis] of Object.entries(fig.layout))
    if (/^[xy]axis\d*$/.test(k) && axis && Array.isArray(axis.range) && axis.uirevision === undefined)
      axis.uirevision = JSON.stringify(axis.range);
  // A chunk that only adds points is drawn as a transition (of no duration): plotly then redraws the traces,
  // not the whole figure (axes, legend, annotations, shapes, hover layers): about a third of the work.
  // Plotly takes that path as soon as one change is animatable (x, y), and then draws no other layout change
  // (and draws everything again after it when a trace changed otherwise). So a transition only when the
  // layout and every trace but its data arrays are as last drawn; fix_y_ranges keeps the ranges still for
  // most chunks. The hover arrays are not animatable: their values go into the arrays plotly already holds.
  const hover = t => ['customdata', 'hovertext'].concat(String(t.mode || '').includes('text') ? [] : ['text']);
  const shape = JSON.stringify([fig.layout, fig.data.map(t => Object.fromEntries(
      Object.entries(t).filter(([k]) => k !== 'x' && k !== 'y' && !hover(t).includes(k))))]);
  if (gd._fullLayout && shape === gd.__ncldShape && gd.data && gd.data.length === fig.data.length) {
    fig.layout.transition = {duration: 0};
    fig.data.forEach((trace, i) => {
      for (const key of hover(trace)) {
        const now = gd.data[i][key];
        if (Array.isArray(trace[key]) && Array.isArray(now)) {
          now.length = 0;
          now.push(...trace[key]);
          trace[key] = now;
        }
      }
    });
  }
  // the figure's own height (the div's width follows its parent, its height is the figure's)
  gd.style.height = (fig.layout.height ? fig.layout.height : 450) + 'px';
  return Plotly.react(gd, fig.data, fig.layout, next.config || {}).then(() => {
    gd.__ncldFigure = next.figure;
    gd.__ncldShape = shape;
    gd.__ncldDrawn = next.owner;
    shown();
    if (gd.clientWidth && Math.abs(gd.clientWidth - gd._fullLayout.width) > 1) return Plotly.Plots.resize(gd);
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


def mount(placeholder, slot: str, *, key: str, owner: str | None) -> None:
    """Where the graph of ``slot`` is drawn: an instance in ``placeholder`` (an ``st.empty``), once per
    script run; :func:`draw_charts` then sends it figures. ``owner`` names the run the page shows (None:
    none): the mount shows the graph only while it holds that run's figures. Without the served plotly.js
    the placeholder is where :func:`draw_charts` puts the slot's ``st.plotly_chart``."""
    if SERVED:
        with placeholder:
            _component(data={"mount": slot, "owner": owner}, key=key, width="stretch")


def serialized(figs: dict) -> dict:
    """``{slot: JSON}`` of ``figs`` as the page draws them (y ranges fixed: a chunk that only adds points is
    then drawn as a transition, which does not autorange); JSON strings pass as they are."""
    out = {}
    for slot, fig in figs.items():
        if not isinstance(fig, str):
            fix_y_ranges(fig)
            fig = fig.to_json()
        out[slot] = fig
    return out


class SharedDrawings:
    """The serialized figures of a run's chunk, shared by every session that draws that chunk with the same options.

    A class opening one preset follows or replays one run (``dashboard/run_hub.py``): each session drew the same
    figures again, 40-60 ms of the server's Python per chunk and session, in the process that also answers every
    page. Entries are keyed by the chunk's record (the object, which the entry keeps alive, so its ``id`` is
    never another's while cached) and the drawing options; the least recently used go first past ``max_bytes``
    of JSON (a long run's later chunks are larger: the bound is in bytes, not entries).

    >>> shared = SharedDrawings(max_bytes=10_000)
    >>> made = []
    >>> chunk = object()
    >>> def make():
    ...     made.append(1)
    ...     return {"a": '{"data": []}'}
    >>> shared.figures(chunk, ("opts",), make) == shared.figures(chunk, ("opts",), make) and len(made)
    1
    >>> shared.figures(None, ("opts",), make) and len(made), shared.made  # no chunk to key on: made every time
    (2, 2)
    >>> shared.bytes
    12
    >>> tiny = SharedDrawings(max_bytes=20)
    >>> for _ in range(3):
    ...     _ = tiny.figures(object(), ("opts",), make)
    >>> tiny.bytes, len(tiny)   # the oldest went: at most 20 bytes of JSON kept
    (12, 1)
    """

    def __init__(self, max_bytes: int):
        self.max_bytes = int(max_bytes)
        self.bytes = 0
        self._kept: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        #: How many times figures were made (not taken from the shared ones).
        self.made = 0

    def __len__(self) -> int:
        return len(self._kept)

    def figures(self, chunk, options: tuple, make) -> dict:
        """``{slot: JSON}`` of ``make()`` (a dict of figures), kept for ``(chunk, options)``; ``chunk`` None: made
        and not kept."""
        if chunk is None:
            with self._lock:
                self.made += 1
            return serialized(make())
        key = (id(chunk), options)
        with self._lock:
            hit = self._kept.get(key)
            if hit is not None and hit[0] is chunk:
                self._kept.move_to_end(key)
                return hit[1]
        out = serialized(make())
        size = sum(len(v) for v in out.values())
        with self._lock:
            self.made += 1
            if key in self._kept:  # made meanwhile by another session: one copy
                self.bytes -= self._kept[key][2]
            self._kept[key] = (chunk, out, size)
            self._kept.move_to_end(key)
            self.bytes += size
            while self.bytes > self.max_bytes and self._kept:
                self.bytes -= self._kept.popitem(last=False)[1][2]
        return out


#: The server's shared drawings (``NCLD_DRAWN_FIGURES_BYTES``).
SHARED = SharedDrawings(LIMITS.drawn_figures_bytes)


def _payload(figs: dict, config: dict | None, chunk: int | None, owner: str | None) -> dict:
    return {"figures": serialized(figs), "config": config or {}, "src": SERVED_JS.name, "chunk": chunk,
            "owner": owner}


def draw_charts(hub, placeholders: dict, figs: dict, *, key: str, owner: str | None, config: dict | None = None,
                chunk: int | None = None) -> None:
    """Draw ``figs`` (slot -> figure) into the slots' mounts, all in one element put in ``hub`` (an
    ``st.empty`` of no height): one render of the page in the browser for all of them.

    ``key`` must be new within a script run; ``owner`` names the run (as the mounts'). ``chunk`` (the
    chunks the figures show) is put on each graph,
    as ``data-chunk``, once it is drawn (the browser tests' latency measurement). The figures' y axes get
    explicit ranges (:func:`dashboard.figures.fix_y_ranges`).
    """
    if not SERVED:
        for slot, fig in figs.items():
            placeholders[slot].plotly_chart(fig if not isinstance(fig, str) else json.loads(fig),
                                            config=config or {}, key=f"{key}_{slot}")
        return
    with hub:
        _component(data=_payload(figs, config, chunk, owner), key=key, width="stretch", height=0)


def preload_plotly(placeholder, key: str = "plotly_preload"):
    """Put an instance in ``placeholder`` that only fetches plotly.js, so the first chunk's panels do not wait."""
    if SERVED:
        with placeholder:
            _component(data={"preload": True, "src": SERVED_JS.name}, key=key, width="stretch", height=0)
