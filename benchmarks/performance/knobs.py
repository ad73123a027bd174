"""Section 8: the default stream explored in a real browser (issue 38 item 8): a moved knob to its run's first
plot, the per-chunk update and the stream's readiness.

:func:`bench_knobs` starts the dashboard (``dashboard.serve``), opens the default page in headless Chromium
(Debian's, :data:`benchmarks.classroom.CHROMIUM`) at 1400 x 1000, presses Run once, then moves the sidebar's
controls one after another, :data:`KNOBS` taking turns (noise level, β, a change point, the trusted share; each
value new, so every run is computed, none replayed). On a live page (Run pressed) each moved control starts its
run by itself (``dashboard/live_session.py``); the benchmark waits for that run to end before the next move.

Everything is timed in the page, on its clock (``performance.now()``), by :data:`OBSERVE`: the input event (the
Enter that commits a number box, the click on a button, captured before the page's handlers see it) and every
change of the run's status line and of the four live graphs (a MutationObserver: each graph's run token and
``data-chunk``, which ``dashboard/static/live_chart.js`` sets once the figure is drawn). From those frames
:func:`analyse` computes, per run:

- **knob to first new plot**: from the input event to the first graph drawn by the new run (and to all four);
- **per-chunk update**: from the status line naming chunk k (the page sends it before the figures) to every
  graph showing chunk k, chunks 2 on (as section 5b: the server's figures, their transport and plotly.js); the
  interval between successive chunks' redraws (which also holds the chunk's computation); plotly.js's own
  drawing of each redraw (``Plotly.react``, wrapped in the page);
- **stream ready**: what the page's status line says when the run is done ("stream ready in ... s": the stream
  built or taken from the page's cache, the runner made and the run's process started).

The whole measurement is bounded (``budget_s``): moves stop when the time left would not hold one more, and the
report says how many were made. ``python -m benchmarks.performance knobs --changes 2 --out FILE`` writes this
section alone (``make bench`` puts it in ``docs/performance.md``).
"""

from __future__ import annotations

import math
import os
import re
import statistics
import sys
import time
from pathlib import Path

from benchmarks.common import argument_parser, md_table, write_atomic
from dashboard.labels import label_of
from benchmarks.performance.formatting import target_row
from benchmarks.performance.protocol import TARGETS, log

__all__ = ["KNOBS", "OBSERVE", "analyse", "bench_knobs", "render", "target_rows", "main"]

#: The live graphs, in the page's order (``dashboard/panels.py``).
PANELS = ("metrics", "cardinality", "threshold", "timeline")

#: The knobs moved, taking turns: ``(kind, the sidebar control's label (dashboard.labels), value of the r-th move)``;
#: the change point's first move is the click on "Add a change point" (a change in the middle of the stream, the
#: paper's form), the later ones type its position. Every value differs from the defaults and from the kind's others.
KNOBS = (
    ("noise level (rho high)", label_of("rho_high"), lambda r: round(0.25 + 0.01 * r, 2)),
    ("β", label_of("beta"), lambda r: round(0.19 + 0.01 * r, 2)),
    ("change point", "at instance (change 1)", lambda r: None if r == 0 else 250 * (1 + r)),
    ("trusted share", label_of("trusted_fraction"), lambda r: round(0.01 * (1 + r), 2)),
)
#: At most this many moves: each kind's values stay new and in range (rho high in (0.2, 0.4), a change inside the
#: stream's 5000 instances).
MAX_CHANGES = 60

#: Installed in the page once it is open: the input events (``[timeStamp, type]``: an Enter pressed, a click),
#: a frame ``[performance.now(), status text, graphs]`` whenever the status line or a graph changes (``graphs``:
#: per panel of :data:`PANELS` ``[run token, chunks shown]`` once drawn, else null), and each ``Plotly.react`` of
#: the page (``[start, end]``: plotly.js's own draw, wrapped once plotly.js is loaded).
OBSERVE = """
() => {
  const w = (window.__knobs = {events: [], frames: [], draws: [], last: null});
  const input = e => { if (e.type === 'click' || e.key === 'Enter') w.events.push([e.timeStamp, e.type]); };
  document.addEventListener('keydown', input, true);
  document.addEventListener('click', input, true);
  const wrap = () => {
    if (!window.Plotly || window.Plotly.__knobsTimed) return;
    const react = window.Plotly.react;
    window.Plotly.react = function (...args) {
      const t0 = performance.now();
      return react.apply(this, args).then(r => { w.draws.push([t0, performance.now()]); return r; });
    };
    window.Plotly.__knobsTimed = true;
  };
  const panels = %s;
  const note = () => {
    wrap();
    const box = document.querySelector('.st-key-run_status');
    const text = box ? box.innerText.trim() : '';
    const graphs = panels.map(p => {
      const gd = document.querySelector('.st-key-panel_' + p + ' .js-plotly-plot');
      return gd && gd.__ncldDrawn && gd.dataset.chunk !== undefined ? [gd.__ncldDrawn, Number(gd.dataset.chunk)] : null;
    });
    const key = text + JSON.stringify(graphs);
    if (key !== w.last) { w.last = key; w.frames.push([performance.now(), text, graphs]); }
  };
  new MutationObserver(note).observe(document.body, {subtree: true, childList: true, characterData: true,
                                                     attributes: true, attributeFilter: ['data-chunk']});
  note();
}
""" % list(PANELS).__repr__().replace("'", '"')

#: The status line of a finished run (``LiveRun.status_text``).
DONE = re.compile(r"^done · chunk (\d+)/(\d+)(?: · median update (\d+) ms)?(?: · median compute (\d+) ms)?"
                  r"(?: · first plot after ([\d.]+) s \(stream ready in ([\d.]+) s\))?")
SAID = re.compile(r"^(running|done) · chunk (\d+)/")


def percentile(values, q: float) -> float:
    """The ``q``-th percentile by nearest rank (the smallest value with ``q`` % of them at or below it); nan for none.

    >>> percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 95), percentile([0.5], 50)
    (10, 0.5)
    """
    values = sorted(values)
    return values[max(0, math.ceil(q / 100 * len(values)) - 1)] if values else math.nan


def _run_of(frames, t0: float, t1: float, old: set) -> dict:
    """One run's measurements from the frames between its input event ``t0`` and the next one ``t1``: ``old``,
    the run tokens the graphs showed before the event."""
    window = [f for f in frames if t0 <= f[0] < t1]
    token = next((g[0] for _, _, graphs in window for g in graphs if g and g[0] not in old), None)
    out = {"first_plot_s": None, "all_plots_s": None, "answer_s": None, "chunk1_said_s": None, "draw_ms": [],
           "interval_ms": [], "status": None, "chunks": None}
    if token is None:
        return out
    first = next(t for t, _, graphs in window if any(g and g[0] == token for g in graphs))
    out["first_plot_s"] = (first - t0) / 1000
    # The new run's status lines start where the line first says it begins ("starting", "waiting", chunk 0) or
    # names fewer chunks than the line before (the old run's, had it not ended: a move during a run)
    said, begun, before = {}, None, None
    for t, text, _ in window:
        m = SAID.match(text)
        k = int(m.group(2)) if m else None
        if begun is None and (text.startswith(("starting", "waiting")) or k == 0
                              or (k is not None and before is not None and k < before)):
            begun = t
        if m:
            before = k
        if begun is not None and m:
            said.setdefault(k, t)
    # where the time to the first plot went: the page's answer (the new run's first status line), the first
    # chunk computed (the line names chunk 1), then its figures made, sent and drawn
    chunk1 = min((t for k, t in said.items() if k >= 1), default=None)
    out["answer_s"] = None if begun is None else (begun - t0) / 1000
    out["chunk1_said_s"] = None if chunk1 is None else (chunk1 - t0) / 1000
    # when each graph first showed chunk k or later of this run (a chunk skipped past counts as drawn)
    reached = [{} for _ in PANELS]
    for t, text, graphs in window:
        for i, g in enumerate(graphs):
            if g and g[0] == token:
                reached[i].setdefault(g[1], t)
        if begun is not None and t >= begun and DONE.match(text) and (out["status"] is None or "stream ready" in text):
            out["status"] = text  # the line with the run's times (a redraw may say less)
    drawn_at = lambda k: max(min((t for c, t in r.items() if c >= k), default=math.inf) for r in reached)  # noqa: E731
    top = min((max(r) for r in reached if r), default=0) if all(reached) else 0
    out["chunks"] = top
    if all(reached):
        out["all_plots_s"] = (drawn_at(1) - t0) / 1000
    for k, t_said in said.items():
        t_drawn = drawn_at(k)
        if k >= 2 and math.isfinite(t_drawn) and t_drawn >= t_said:  # chunk 1 mounts the graphs: first plot's
            out["draw_ms"].append(t_drawn - t_said)
    # successive redraws of all four graphs: ms per chunk between one and the next
    steps = sorted({drawn_at(k): k for k in range(1, top + 1) if math.isfinite(drawn_at(k))}.items())
    for (ta, ka), (tb, kb) in zip(steps, steps[1:]):
        if kb > ka:
            out["interval_ms"].append((tb - ta) / (kb - ka))
    return out


def redraw_spans(draws, gap_ms: float = 50.0) -> list[float]:
    """ms from the first ``Plotly.react`` of a redraw to the end of its last (``draws``: ``[start, end]`` each): the
    graphs of one redraw are drawn one after another; a start more than ``gap_ms`` after every earlier draw's end
    begins the next redraw.

    >>> redraw_spans([[0, 20], [21, 45], [46, 60], [300, 310], [311, 330]])
    [60, 30]
    """
    spans, first, last = [], None, None
    for start, end in sorted(draws):
        if first is not None and start - last > gap_ms:
            spans.append(last - first)
            first = None
        if first is None:
            first, last = start, end
        last = max(last, end)
    if first is not None:
        spans.append(last - first)
    return spans


def analyse(frames: list, moves: list, draws=()) -> dict:
    """The runs' measurements from :data:`OBSERVE`'s ``frames`` and the ``moves`` (each ``{"kind", "value",
    "t": input event's time, "old": the run tokens shown before}``; the first is the click on Run), and plotly.js's
    draw of each redraw from its ``draws`` (:func:`redraw_spans`).

    >>> frames = [[0, "Ready: press Run.", [None] * 4], [10, "running · chunk 0/3", [None] * 4],
    ...           [300, "running · chunk 1/3", [None] * 4], [400, "running · chunk 1/3", [["a", 1]] * 4],
    ...           [500, "running · chunk 2/3", [["a", 1]] * 4], [540, "running · chunk 2/3", [["a", 2]] * 4],
    ...           [700, "done · chunk 3/3 · median update 20 ms · median compute 90 ms · first plot after 0.38 s "
    ...                 "(stream ready in 0.05 s)", [["a", 2]] * 4], [730, "done · chunk 3/3", [["a", 3]] * 4]]
    >>> res = analyse(frames, [{"kind": "Run", "value": None, "t": 5, "old": []}])
    >>> run = res["runs"][0]
    >>> run["first_plot_s"], run["draw_ms"], run["interval_ms"], run["stream_ready_s"]
    (0.395, [40, 30], [140.0, 190.0], 0.05)
    """
    runs = []
    for i, move in enumerate(moves):
        t1 = moves[i + 1]["t"] if i + 1 < len(moves) else math.inf
        one = _run_of(frames, move["t"], t1, set(move["old"]))
        m = DONE.match(one["status"] or "")
        one.update(kind=move["kind"], value=move["value"],
                   stream_ready_s=float(m.group(6)) if m and m.group(6) else None,
                   page_update_ms=int(m.group(3)) if m and m.group(3) else None,
                   compute_ms=int(m.group(4)) if m and m.group(4) else None)
        runs.append(one)
    return {"runs": runs, "plotly_ms": redraw_spans(draws)}


def summary(res: dict) -> dict:
    """The figures the report and its targets use: the knob moves' times to the first new plot (the Run click
    left out), every run's per-chunk draw costs and intervals, the stream-ready times (p50 / p95 each)."""
    runs = res.get("runs", [])
    knobs = [r for r in runs if r["kind"] != "Run"]
    first = [r["first_plot_s"] for r in knobs if r["first_plot_s"] is not None]
    allp = [r["all_plots_s"] for r in knobs if r["all_plots_s"] is not None]
    answer = [r["answer_s"] for r in knobs if r["answer_s"] is not None]
    chunk1 = [r["chunk1_said_s"] for r in knobs if r["chunk1_said_s"] is not None]
    draw = [d for r in runs for d in r["draw_ms"]]
    interval = [d for r in runs for d in r["interval_ms"]]
    ready = [r["stream_ready_s"] for r in runs if r["stream_ready_s"] is not None]
    compute = [r["compute_ms"] for r in runs if r["compute_ms"] is not None]
    plotly = list(res.get("plotly_ms", []))
    pct = lambda v: {"n": len(v), "p50": percentile(v, 50), "p95": percentile(v, 95),  # noqa: E731
                     "max": max(v) if v else math.nan}
    return {"knob_first_plot_s": pct(first), "knob_all_plots_s": pct(allp), "knob_answer_s": pct(answer),
            "knob_chunk1_said_s": pct(chunk1), "draw_ms": pct(draw),
            "interval_ms": pct(interval), "plotly_ms": pct(plotly), "stream_ready_s": pct(ready),
            "compute_ms": pct(compute),
            "moves": len(knobs), "missed": len(knobs) - len(first)}


# ----------------------------------------------------------------------------- the browser
def _load() -> float | None:
    """The machine's 1-minute load average (None where the platform has none)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def _tokens(page) -> list:
    return page.evaluate("""(panels) => panels.map(p => {
      const gd = document.querySelector('.st-key-panel_' + p + ' .js-plotly-plot');
      return gd && gd.__ncldDrawn ? gd.__ncldDrawn : null; }).filter(t => t)""", list(PANELS))


def _status(page) -> str:
    return page.evaluate("() => { const b = document.querySelector('.st-key-run_status'); "
                         "return b ? b.innerText.trim() : ''; }")


def _wait_new_run_done(page, old: list, timeout_s: float) -> bool:
    """Until every graph shows the last chunk of a run other than ``old``'s and the status says done (or the run
    failed: the caller reads the status line); False when ``timeout_s`` passed first."""
    try:
        page.wait_for_function("""([panels, old]) => {
          const box = document.querySelector('.st-key-run_status');
          if (box && box.innerText.trim().startsWith('failed')) return true;
          const m = box && box.innerText.trim().match(/^done · chunk (\\d+)\\/(\\d+)/);
          if (!m) return false;
          return panels.every(p => {
            const gd = document.querySelector('.st-key-panel_' + p + ' .js-plotly-plot');
            return gd && gd.__ncldDrawn && !old.includes(gd.__ncldDrawn) && Number(gd.dataset.chunk) === Number(m[1]);
          }); }""", arg=[list(PANELS), old], timeout=max(1.0, timeout_s) * 1000, polling=100)
        return True
    except Exception:  # noqa: BLE001 - a playwright timeout: the report says the move's run was not seen done
        return False


def _move(page, label: str, value) -> None:
    """Move one sidebar control: type ``value`` into the number box labelled ``label`` and press Enter; None: the
    click on "Add a change point"."""
    side = page.locator('[data-testid="stSidebar"]')
    if value is None:
        side.get_by_role("button", name="Add a change point").click()
        return
    box = side.get_by_label(label, exact=True)
    box.fill(f"{value:g}")
    box.press("Enter")


def bench_knobs(n_changes: int = 24, budget_s: float = 120.0, *, width: int = 1400, height: int = 1000) -> dict:
    """Measure in Chromium (see the module's description): the first Run, then ``n_changes`` knob moves, within
    ``budget_s`` seconds in all (server start included). ``{"error": ...}`` when Chromium or playwright is missing
    or the page fails; else the frames' analysis (:func:`analyse`), its :func:`summary` and the run's facts."""
    from benchmarks.classroom import CHROMIUM, CHROMIUM_ARGS

    if not isinstance(n_changes, int) or not 1 <= n_changes <= MAX_CHANGES:
        raise ValueError(f"n_changes must be a whole number in [1, {MAX_CHANGES}], got {n_changes!r}")
    if not Path(CHROMIUM).exists():
        return {"error": f"{CHROMIUM} is not installed (apt-get install chromium)"}
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return {"error": "playwright is not installed (the test extra)"}
    from dashboard.serve import serve

    t_start = time.monotonic()
    load_start = _load()
    deadline = t_start + budget_s
    left = lambda: deadline - time.monotonic()  # noqa: E731
    moves, notes, per_move = [], [], []
    try:
        with serve() as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, timeout=60_000)
            try:
                page = browser.new_page(viewport={"width": width, "height": height})
                page.set_default_timeout(30_000)
                page.goto(url, timeout=60_000)
                run_button = page.get_by_role("button", name="Run", exact=True)
                run_button.wait_for(timeout=60_000)
                page.evaluate(OBSERVE)
                run_button.click()
                moves.append({"kind": "Run", "value": None, "t": page.evaluate("window.__knobs.events.at(-1)[0]"),
                              "old": []})
                if not _wait_new_run_done(page, [], min(60.0, left())):
                    notes.append("the first run was not seen done in time")
                for i in range(n_changes):
                    kind, label, value_of = KNOBS[i % len(KNOBS)]
                    # the slowest move so far, twice, must fit in what is left
                    need = 2 * max(per_move, default=5.0)
                    if left() < need:
                        notes.append(f"stopped after {i} of {n_changes} moves: the budget of {budget_s:.0f} s "
                                     f"had {left():.0f} s left")
                        break
                    t0 = time.monotonic()
                    old = _tokens(page)
                    seen = page.evaluate("window.__knobs.events.length")
                    value = value_of(i // len(KNOBS))
                    _move(page, label, value)
                    events = page.evaluate("(n) => window.__knobs.events.slice(n)", seen)
                    want = "click" if value is None else "keydown"
                    t_event = next((t for t, kind_ in events if kind_ == want), None)
                    if t_event is None:
                        notes.append(f"move {i + 1} ({kind}): no input event seen")
                        break
                    moves.append({"kind": kind, "value": value, "t": t_event, "old": old})
                    if not _wait_new_run_done(page, old, min(60.0, left())):
                        notes.append(f"move {i + 1} ({kind} {value}): its run was not seen done in time")
                    elif (line := _status(page)).startswith("failed"):
                        notes.append(f"move {i + 1} ({kind} {value}): its run failed ({line})")
                    per_move.append(time.monotonic() - t0)
                frames, draws = page.evaluate("[window.__knobs.frames, window.__knobs.draws]")
            finally:
                browser.close()
    except Exception as exc:  # noqa: BLE001 - the report says what failed; make bench goes on
        return {"error": f"{type(exc).__name__}: {exc}", "wall_s": time.monotonic() - t_start}
    res = analyse(frames, moves, draws)
    res.update(summary=summary(res), notes=notes, wall_s=time.monotonic() - t_start, budget_s=budget_s,
               asked=n_changes, viewport=f"{width} x {height}", load_start=load_start, load_end=_load())
    return res


# ----------------------------------------------------------------------------- the report
def _n(count: int, word: str) -> str:
    """``"1 move"``, ``"2 moves"``."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def _fmt(x, nd=2) -> str:
    return "–" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{nd}f}"


def target_rows(res: dict | None) -> list:
    """The three targets of issue 38 item 8 on the default stream, met or missed."""
    what = (f"default stream: knob to first new plot, p95 <= {TARGETS['knob_first_plot_s']:g} s",
            f"default stream: per-chunk update in the browser <= {TARGETS['knob_update_ms']:.0f} ms",
            f"default stream: ready <= {TARGETS['stream_ready_s']:g} s")
    if not res or "error" in res:
        why = "not measured in this run" + (f" ({res['error']})" if res and res.get("error") else "")
        return [target_row(w, why, None, None) for w in what]
    s = res["summary"]
    k, d, r = s["knob_first_plot_s"], s["draw_ms"], s["stream_ready_s"]
    return [
        target_row(what[0], f"p95 {_fmt(k['p95'])} s, median {_fmt(k['p50'])} s over {_n(k['n'], 'move')} (section 8)",
                   k["p95"] if k["n"] else None, TARGETS["knob_first_plot_s"], False, " s"),
        target_row(what[1], f"median {_fmt(d['p50'], 0)} ms, p95 {_fmt(d['p95'], 0)} ms over {_n(d['n'], 'chunk')} "
                   f"(status line to every graph drawn; section 8)", d["p50"] if d["n"] else None,
                   TARGETS["knob_update_ms"], False, " ms"),
        target_row(what[2], f"p95 {_fmt(r['p95'])} s, median {_fmt(r['p50'])} s over {_n(r['n'], 'run')} (the page's "
                   f"status line; section 8)", r["p95"] if r["n"] else None, TARGETS["stream_ready_s"], False, " s"),
    ]


def render(res: dict | None, command: str = "`make bench`") -> list[str]:
    """Section 8 of the report (Markdown lines)."""
    L = ["", "## 8. Exploring the default stream in the browser (issue 38 item 8)", ""]
    if not res:
        return L + ["Not measured in this run."]
    if "error" in res:
        return L + [f"Not measured in this run: {res['error']}."]
    s = res["summary"]
    L += [
        f"Measured by {command} (`benchmarks/performance/knobs.py`) in headless Chromium at {res['viewport']}, on a "
        f"dashboard server of its own: the default page, Run pressed once, then {_n(s['moves'], 'move')} of the "
        f"sidebar's controls ({', '.join(k for k, _, _ in KNOBS)} taking turns, each value new: every run computed, "
        f"none replayed), each starting its run by itself; the next move once that run is done. Everything on the "
        f"page's clock (`performance.now()`, a MutationObserver): from the input event (the Enter committing a "
        f"number, the click on *Add a change point*) to the first graph drawn by the new run; the per-chunk "
        f"update from the status line naming chunk k to every graph showing it (chunks 2 on, as section 5b), "
        f"the interval between successive redraws (it holds the chunk's computation too) and plotly.js's own "
        f"drawing of each redraw (`Plotly.react` wrapped in the page); stream ready as "
        f"the page's status line says it. The whole measurement took {res['wall_s']:.0f} s (bound "
        f"{res['budget_s']:.0f} s); the machine's load average (1 min) was {_fmt(res.get('load_start'), 1)} at its "
        f"start and {_fmt(res.get('load_end'), 1)} at its end (other work slows every time here).", ""]
    rows = [
        ["knob to first new plot, s", s["knob_first_plot_s"], 2, f"p95 <= {TARGETS['knob_first_plot_s']:g}"],
        ["knob to all four graphs drawn, s", s["knob_all_plots_s"], 2, ""],
        ["of which: knob to the new run's status line (the page answers), s", s["knob_answer_s"], 2, ""],
        ["of which: knob to the line naming chunk 1 (first chunk computed), s", s["knob_chunk1_said_s"], 2, ""],
        ["per-chunk update (status line to drawn), ms", s["draw_ms"], 0, f"<= {TARGETS['knob_update_ms']:.0f}"],
        ["interval between successive redraws, ms per chunk", s["interval_ms"], 0, ""],
        ["plotly.js drawing a redraw's graphs (every redraw), ms", s["plotly_ms"], 0, ""],
        ["chunk computation (the page's median per run), ms", s["compute_ms"], 0, ""],
        ["stream ready (the page's status line), s", s["stream_ready_s"], 2, f"<= {TARGETS['stream_ready_s']:g}"],
    ]
    L.append(md_table(["measure", "n", "median", "p95", "max", "target"],
                      [[name, str(v["n"]), _fmt(v["p50"], nd), _fmt(v["p95"], nd), _fmt(v["max"], nd), t]
                       for name, v, nd, t in rows]))
    L += ["", "Per run (the first is the Run click):", ""]
    L.append(md_table(
        ["move", "value", "status line s", "chunk 1 said s", "first plot s", "all four s", "chunks drawn",
         "median update ms", "stream ready s", "page's median compute ms"],
        [[r["kind"], "add (middle)" if r["kind"] == "change point" and r["value"] is None else
          ("–" if r["value"] is None else f"{r['value']:g}"), _fmt(r["answer_s"]), _fmt(r["chunk1_said_s"]),
          _fmt(r["first_plot_s"]), _fmt(r["all_plots_s"]),
          str(r["chunks"] or 0), _fmt(statistics.median(r["draw_ms"]), 0) if r["draw_ms"] else "–",
          _fmt(r["stream_ready_s"]), "–" if r["compute_ms"] is None else str(r["compute_ms"])]
         for r in res["runs"]]))
    if s["missed"]:
        L += ["", f"**{s['missed']} move(s) drew no new plot within the bound.**"]
    if res.get("notes"):
        L += ["", "Notes: " + "; ".join(res["notes"]) + "."]
    return L


def main(argv=None) -> int:
    parser = argument_parser("benchmarks.performance knobs", __doc__)
    parser.add_argument("--changes", type=int, default=24, help=f"knob moves after the first Run (1-{MAX_CHANGES}; "
                                                                 "default 24)")
    parser.add_argument("--budget", type=float, default=120.0, help="seconds for the whole measurement (default 120)")
    parser.add_argument("--out", type=Path, required=True, help="where to write the section (Markdown)")
    args = parser.parse_args(argv)
    if not 1 <= args.changes <= MAX_CHANGES:
        parser.error(f"--changes must be in [1, {MAX_CHANGES}], got {args.changes}")
    if not args.budget > 0:
        parser.error(f"--budget must be a positive number of seconds, got {args.budget}")
    res = bench_knobs(args.changes, args.budget)
    cmd = f"`python -m benchmarks.performance knobs --changes {args.changes}`"
    text = "\n".join(["| target | measured | verdict |", "|---|---|---|"]
                     + [f"| {' | '.join(r)} |" for r in target_rows(res)] + render(res, cmd)) + "\n"
    write_atomic(args.out, text)
    log(f"wrote {args.out}")
    return 1 if "error" in res else 0


if __name__ == "__main__":
    sys.exit(main())
