// The live panels' graphs (dashboard/live_chart.py): one plotly graph per slot, updated in place with
// Plotly.react. Plotly's public API (Plotly.react / relayout / purge / Plots.resize, the graph div's data and
// layout), and one cache around Plotly.PlotSchema.findArrayAttributes (cacheArrayAttributes); whether and how
// wide a graph is drawn is read from the page (its svg), not from plotly's internals.
//
// The graph of a slot lives in window.__ncldGraphs[slot] and sits in the slot's mount (the element of the
// newest instance that said {mount: slot}) when both belong to the same run (its owner token): after a rerun
// the new mount takes over the run's graph as it was drawn, and never shows another run's. The figures come in
// carriers (takeCarried), the mounts and the early fetch of plotly.js as the component's instances.
const graphs = (window.__ncldGraphs = window.__ncldGraphs || {});
const mounts = (window.__ncldMounts = window.__ncldMounts || {});

// Whether plotly has drawn the graph, and the width it drew it at (0: not drawn), read from its svg.
function drawnWidth(gd) {
  const svg = gd.querySelector(':scope > .plot-container .main-svg');
  return svg ? parseFloat(svg.getAttribute('width')) || 0 : 0;
}
const isDrawn = gd => drawnWidth(gd) > 0;

// The paths of a trace's attributes that hold arrays (its own keys, not plotly's "_" ones); null where plotly's schema
// walk could see the trace otherwise: an array holding objects (the walk goes into those), an object that is not a
// plain one, a DataView, a key with a dot, nesting deeper than a trace's attributes go.
const plain = v => { const p = Object.getPrototypeOf(v); return p === Object.prototype || p === null; };
function arrayPaths(obj, prefix, out, depth) {
  if (depth > 6) return null;
  for (const k of Object.keys(obj)) {
    if (k[0] === '_') continue;
    if (k.includes('.')) return null;
    const v = obj[k];
    if (Array.isArray(v)) {
      if (v.some(e => e !== null && typeof e === 'object' && !Array.isArray(e) && !ArrayBuffer.isView(e))) return null;
      out.push(prefix + k);
    } else if (ArrayBuffer.isView(v)) {
      if (v instanceof DataView) return null;
      out.push(prefix + k);
    } else if (v !== null && typeof v === 'object') {
      if (!plain(v) || arrayPaths(v, prefix + k + '.', out, depth + 1) === null) return null;
    }
  }
  return out;
}

// On every redraw plotly.js asks, for each trace, which of its attributes hold data arrays: it walks the trace
// type's whole attribute schema (hundreds of entries) to answer, the largest single cost of a live redraw's
// script. For a trace as plotly filled it in (its _fullData, the only traces plotly asks about: they carry their
// _module) the answer depends only on the trace's type and on which of its attributes hold arrays, so it is kept
// under that key: the walk is then over the trace's own attributes. Any other trace is asked of plotly's own walk.
// The original stays as .original (the browser test compares the two on the drawn traces).
function cacheArrayAttributes(Plotly) {
  const schema = Plotly && Plotly.PlotSchema;
  if (!schema || typeof schema.findArrayAttributes !== 'function' || schema.findArrayAttributes.original) return;
  const original = schema.findArrayAttributes;
  const kept = new Map();
  const cached = function (trace) {
    const paths = trace && trace.type && trace._module && plain(trace) ? arrayPaths(trace, '', [], 0) : null;
    if (paths === null) return original.call(this, trace);
    const key = trace.type + '|' + paths.join(',');
    let found = kept.get(key);
    if (found) cached.hits++;
    else {
      if (kept.size >= 256) kept.clear();  // bounded: a page draws a few trace shapes
      found = original.call(this, trace);
      kept.set(key, found.slice());
    }
    return found.slice();
  };
  cached.original = original;
  cached.hits = 0;
  schema.findArrayAttributes = cached;
}

function plotlyReady(src) {
  if (window.Plotly) {
    cacheArrayAttributes(window.Plotly);
    return Promise.resolve(window.Plotly);
  }
  if (!window.__ncldPlotly) {
    const index = [...document.scripts].map(s => s.src).find(s => s.includes('/static/js/index'));
    const root = index ? index.split('/static/js/')[0] : window.location.origin;
    window.__ncldPlotly = new Promise((resolve, reject) => {
      const tag = document.createElement('script');
      tag.src = root + '/app/static/' + src;
      tag.onload = () => {
        cacheArrayAttributes(window.Plotly);
        resolve(window.Plotly);
      };
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
      if (pending || !window.Plotly || !isDrawn(gd)) return;
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
  if (!window.Plotly || !isDrawn(gd) || gd.__ncldBusy || !gd.isConnected || !gd.clientWidth ||
      Math.abs(gd.clientWidth - drawnWidth(gd)) <= 1) return;
  const pick = legendFor(gd, gd.layout);
  if (pick && pick.w !== gd.__ncldLegend) {  // the legend laid out for this width, on the figure as drawn
    const fig = {data: gd.data, layout: Object.assign({}, gd.layout)};
    applyLegend(gd, fig);
    fig.layout.height = fittedHeight(gd, fig.layout);
    gd.style.height = fig.layout.height + 'px';
    gd.__ncldFigure = gd.__ncldShape = null;  // the next figure is drawn whole
    gd.__ncldBusy = true;
    window.Plotly.react(gd, fig.data, fig.layout).then(() => {
      if (gd.clientWidth && Math.abs(gd.clientWidth - drawnWidth(gd)) > 1) return window.Plotly.Plots.resize(gd);
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

// Presentation mode (layout.meta.fit = {base, plot, min, max, wide, narrow_min}: the figure's height and its plot
// area's, as drawn by the app, and the plot area's bounds, its least narrow_min on a window narrower than wide px):
// the plot area takes the height the window has left under the graph's top, less what its panel shows under it (a
// note, a table) and the page's bottom padding, within [min, max] px. The panel then fits the screen whatever
// stands above it (a lesson's step of any length, a wrapped heading).
function fittedHeight(gd, layout) {
  const fit = layout.meta && layout.meta.fit;
  if (!fit || !gd.isConnected) return layout.height;
  const panel = gd.closest('[class*="st-key-panel_"]') || gd.parentNode;
  const top = gd.getBoundingClientRect().top + window.scrollY;
  // what the panel shows under the graph, to its lowest element (a caption's text can overhang its box); not what a
  // closed expander holds (laid out, though not shown: a table there took the graph's room)
  const bottom = Math.max(panel.getBoundingClientRect().bottom,
    ...[...panel.querySelectorAll('[data-testid="stCaptionContainer"], [data-testid="stExpander"], table')]
      .filter(e => !(e.parentElement && e.parentElement.closest('details:not([open])')))
      .map(e => e.getBoundingClientRect().bottom));
  const below = Math.max(0, bottom - gd.getBoundingClientRect().bottom);
  const main = document.querySelector('.stMainBlockContainer');
  const pad = main ? parseFloat(getComputedStyle(main).paddingBottom) || 0 : 0;
  const room = window.innerHeight - top - below - pad - 8;
  const low = fit.wide && window.innerWidth < fit.wide ? fit.narrow_min : fit.min;
  const plot = Math.min(fit.max, Math.max(low, room - (fit.base - fit.plot)));
  return Math.round(fit.base - fit.plot + plot);
}

// Fit again every fitted graph when the page under or above it changes height, or the window its size.
function refitAll() {
  if (!window.Plotly) return;
  for (const [slot, gd] of Object.entries(graphs)) {
    followWidth(gd, slot);
    if (!isDrawn(gd) || gd.__ncldBusy || !gd.isConnected || !(gd.layout.meta && gd.layout.meta.fit)) continue;
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

// The draws' carriers (dashboard/figure_carrier.py): hidden elements of st.html whose text is a draw's payload. The
// page shows one as soon as the render that holds it ends; each is taken once (st.html sets its HTML anew: a new
// text is a new element; the same figures sent again are not redrawn, draw()). The observer only queues the look:
// every observer of the same change (a test's, a benchmark's) sees it before anything is drawn.
const CARRIER = 'div.ncld-figures';
const taken = new WeakSet();
function takeCarried() {
  for (const el of document.querySelectorAll('[data-testid="stHtml"] > ' + CARRIER)) {
    if (taken.has(el)) continue;
    taken.add(el);
    let data = null;
    try { data = JSON.parse(el.textContent); } catch (err) { console.error('ncld: a carrier that is not JSON', err); }
    if (data) receive(data);
  }
}
if (!window.__ncldCarried) {
  window.__ncldCarried = true;
  new MutationObserver(() => queueMicrotask(takeCarried)).observe(document.body, {subtree: true, childList: true});
  queueMicrotask(takeCarried);  // a carrier that came before this script
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
}

// A draw's figures (a carrier's payload): each slot's graph takes the newest.
function receive(data) {
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
      if (isDrawn(gd)) Plotly.purge(gd);
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
    if (window.Plotly && isDrawn(gd)) window.Plotly.purge(gd);
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
  if (next.figure === gd.__ncldFigure && isDrawn(gd)) { shown(); refitAll(); return; }  // nothing changed
  const fig = JSON.parse(next.figure);
  // the app's type, as st.plotly_chart's theme set it (legends and titles are sized for it)
  fig.layout = fig.layout || {};
  applyLegend(gd, fig);
  fig.layout.height = fittedHeight(gd, fig.layout);
  fig.layout.font = Object.assign({family: '"Source Sans", sans-serif', size: 12}, fig.layout.font || {});
  // A new size or type size (presentation mode toggled) is drawn afresh: plotly's react keeps margins pushed
  // by the old legend and titles, and the change labels then overlap the legend.
  if (isDrawn(gd) && (fig.layout.height !== gd.layout.height ||
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
  if (isDrawn(gd) && shape === gd.__ncldShape && gd.data && gd.data.length === fig.data.length) {
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
    if (gd.clientWidth && Math.abs(gd.clientWidth - drawnWidth(gd)) > 1) return Plotly.Plots.resize(gd);
  });
}
