"""Live panels drawn in place: one Plotly graph per slot, updated with ``Plotly.react``.

``st.plotly_chart`` derives its element id from the figure, so every redraw of a live panel mounts a
new chart and plotly.js builds it from nothing, four times per chunk. Here a small ``st.components.v2``
component keeps each slot's graph in the page and hands it the new figure: plotly.js then updates only
what changed (a chunk that only adds points is a transition: the traces are redrawn, not the axes,
legend and hover layers). Each panel holds a *mount* (:func:`mount`, once per script run) where its graph
sits; a chunk's figures travel together in one element (:func:`draw_charts`): every element sent is a
render of the whole page in the browser.

That element is a hidden ``st.html`` *carrier* (:mod:`dashboard.figure_carrier`), not a component instance: the page
calls a component's script only after the render that shows it has been painted and its module imported
again (an asynchronous step, in which Streamlit renders the whole page once more), while the carrier's
text is in the page as soon as its render ends, where the component's script (loaded by the mounts)
watches for it. The per-chunk update is measured by the browser tests and reported in
``docs/performance.md`` (sections 5b and 8).

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
from plotly.io.json import to_json_plotly
import streamlit as st

from dashboard.figure_carrier import carrier_html
from dashboard.figures import fix_y_ranges
from dashboard.serving.limits import LIMITS

STATIC = Path(__file__).resolve().parent / "static"
PLOTLY_JS = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"
#: The copy the page loads, at ``app/static/<name>`` (named by the version: a browser never keeps an old one).
SERVED_JS = STATIC / f"plotly-{plotly.__version__}.min.js"

#: The component's script (a static file: plotly's public API, no Python string).
SCRIPT = Path(__file__).resolve().parent / "static" / "live_chart.js"


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
_component = st.components.v2.component("ncld_live_chart", js=SCRIPT.read_text(encoding="utf-8"),
                                        isolate_styles=False)


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
    then drawn as a transition, which does not autorange), without a plotly template (Streamlit's default one
    holds placeholder colours that only ``st.plotly_chart`` replaces, and it would travel with every chunk);
    JSON strings pass as they are."""
    out = {}
    for slot, fig in figs.items():
        if not isinstance(fig, str):
            fix_y_ranges(fig)
            spec = fig.to_plotly_json()
            spec["layout"].pop("template", None)
            fig = to_json_plotly(spec)
        out[slot] = fig
    return out


class SharedDrawings:
    """The serialized figures of a run's chunk, shared by every session that draws that chunk with the same options.

    A class opening one preset follows or replays one run (``dashboard/serving/run_hub.py``): each session drew the same
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
    ``st.empty`` of no height; the element is :func:`dashboard.figure_carrier.carrier_html`'s): one render of
    the page in the browser for all of them.

    ``key`` names the fallback's charts (``st.plotly_chart``, without the served plotly.js: new within a script
    run); ``owner`` names the run (as the mounts'). ``chunk`` (the
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
        st.html(carrier_html(_payload(figs, config, chunk, owner)))


def preload_plotly(placeholder, key: str = "plotly_preload"):
    """Put an instance in ``placeholder`` that only fetches plotly.js, so the first chunk's panels do not wait."""
    if SERVED:
        with placeholder:
            _component(data={"preload": True, "src": SERVED_JS.name}, key=key, width="stretch", height=0)
