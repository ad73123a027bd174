"""The dashboard in headless Chromium: a real `streamlit run`, clicks, live plots, timings.

Needs Debian's /usr/bin/chromium (skipped with a reason when absent, failed when CI=true).
Writes a screenshot and tests/artifacts/dashboard_timing.json (git-ignored).
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import statistics
import time
from pathlib import Path

import pytest

from dashboard.figures import DETECTION_COLUMNS, RATIO_TICKS
from dashboard.serve import serve
from dashboard.teaching import detector_label
from ncld_core.config import RunConfig

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
DATA_DIR = Path(os.environ.get("NCLD_DATA_DIR") or ROOT.parent / "shared" / "datasets")
TIMINGS: dict = {}

# JavaScript: record (time, status text, first plot drawn?) whenever the page changes.
OBSERVE_STATUS = """
() => {
  window.__ncld = [];
  const note = () => {
    const box = document.querySelector('.st-key-run_status');
    const plot = document.querySelector('.st-key-panel_cardinality .js-plotly-plot .main-svg');
    const text = box ? box.innerText : '';
    const last = window.__ncld[window.__ncld.length - 1];
    if (!last || last[1] !== text || last[2] !== !!plot) window.__ncld.push([performance.now(), text, !!plot]);
  };
  new MutationObserver(note).observe(document.body, {subtree: true, childList: true, characterData: true});
  note();
}
"""


def _need_chromium():
    if not Path(CHROMIUM).exists():
        reason = f"{CHROMIUM} is not installed (apt-get install chromium) — browser tests need Debian's Chromium"
        if os.environ.get("CI") == "true":
            pytest.fail(reason + "; CI=true, so this is an error, not a skip")
        pytest.skip(reason)


@pytest.fixture(scope="module")
def server():
    _need_chromium()
    pytest.importorskip("playwright.sync_api")
    env = {"NCLD_DATA_DIR": str(DATA_DIR)} if DATA_DIR.is_dir() else {}
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with open(ARTIFACTS / "streamlit_server.log", "w") as log:
        try:
            with serve(env=env, log=log) as url:
                yield url
        except RuntimeError as exc:  # it did not start
            pytest.fail(f"{exc}; see {ARTIFACTS / 'streamlit_server.log'}")


@pytest.fixture(scope="module")
def browser(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, timeout=60_000)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module", autouse=True)
def _write_timings():
    yield
    if TIMINGS:
        # merged into what earlier runs wrote: make test measures the growth preset, the slow tier the per-dataset
        # latencies and Stop; make bench reads both (the last run's file alone used to hide the other's numbers)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / "dashboard_timing.json"
        try:
            kept = json.loads(path.read_text()) if path.is_file() else {}
        except ValueError:  # a file cut by a killed run: start again
            kept = {}
        path.write_text(json.dumps({**(kept if isinstance(kept, dict) else {}), **TIMINGS}, indent=2))
        print("\ndashboard timings:", json.dumps(TIMINGS, indent=2))


def _open(browser, url, height=3200):
    page = browser.new_page(viewport={"width": 1500, "height": height})
    page.set_default_timeout(30_000)
    page.goto(url, timeout=60_000)
    page.get_by_role("button", name="Run", exact=True).wait_for(timeout=60_000)
    return page


def _status(page, *, missing_ok: bool = False) -> str:
    """The run-status caption; with ``missing_ok``, "" while a rerun has not drawn it yet (polling loops)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        return page.locator(".st-key-run_status").inner_text(timeout=10_000)
    except PlaywrightTimeout:
        if missing_ok:  # a loaded server (ten visitors on two cores) can take longer than that to redraw it
            return ""
        raise


def _wait_status(page, pattern: str, timeout_s: float) -> str:
    """Wait until the run-status caption matches ``pattern`` (regex); bounded."""
    deadline = time.monotonic() + timeout_s
    text = ""
    while time.monotonic() < deadline:
        text = _status(page, missing_ok=True)
        if re.search(pattern, text):
            return text
        time.sleep(0.2)
    raise AssertionError(f"status never matched {pattern!r} within {timeout_s} s; last: {text!r}")


def _page_report(page, where: str, mark: int = 0) -> str:
    """What a page shows when a wait failed: the run status, ``where``'s details (open or not, its text), the
    errors on the page and the server log's last error lines after its first ``mark`` lines."""
    details = page.evaluate("(w) => { const d = document.querySelector(w + ' details');"
                            " return d ? {open: d.open, text: d.innerText.slice(0, 200)} : null }", where)
    shown = page.locator(".stException, .stAlert").all_inner_texts()
    return (f"status {_status(page, missing_ok=True)!r}, {where}: {details}, on the page: {shown[:4]}, "
            f"server log's last errors: {_server_error_lines(mark)[-6:]}")


def _server_log() -> list[str]:
    log = ARTIFACTS / "streamlit_server.log"
    return log.read_text(errors="replace").splitlines() if log.is_file() else []


def _server_error_lines(mark: int = 0) -> list[str]:
    """The server log's lines naming an error, after its first ``mark`` lines."""
    return [ln for ln in _server_log()[mark:] if any(w in ln for w in ("Traceback", "Error", "Exception", "error"))]


def _uncaught_since(mark: int) -> list[str]:
    """The server log's uncaught errors of a page's script (Streamlit's "Uncaught app execution", what a visitor
    sees as an error box) after its first ``mark`` lines, each with the first exception line of its traceback."""
    lines = _server_log()[mark:]
    found = []
    for i, line in enumerate(lines):
        if "Uncaught app execution" in line:
            tail = next((t for t in lines[i + 1:] if t and not t.startswith((" ", "Traceback"))), "")
            found.append(f"{line} -> {tail[:200]}")
    return found


def _table(page, container: str) -> list[list[str]]:
    rows = page.locator(f".st-key-{container} table tr")
    rows.first.wait_for(timeout=30_000)
    return [[c.strip() for c in r.locator("th, td").all_inner_texts()] for r in rows.all()]


# JavaScript: the texts of one panel's figure that are cut by its edges or overlap each other
# (legend entries, annotations, axis titles), and its y tick labels.
TEXT_PROBLEMS = """
(panel) => {
  const root = document.querySelector('.st-key-panel_' + panel + ' .js-plotly-plot');
  const svg = root.querySelector('.main-svg').getBoundingClientRect();
  const boxes = [...root.querySelectorAll('.annotation-text, .xtitle, .ytitle, .legendtext')]
    .filter(t => t.textContent).map(t => [t.textContent, t.getBoundingClientRect()]);
  const out = [];
  for (const [text, r] of boxes)
    if (r.left < svg.left - 1 || r.right > svg.right + 1 || r.top < svg.top - 1 || r.bottom > svg.bottom + 1)
      out.push('cut: ' + text);
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const [a, r] = boxes[i], [b, q] = boxes[j];
      if (r.left < q.right - 1 && q.left < r.right - 1 && r.top < q.bottom - 1 && q.top < r.bottom - 1)
        out.push('overlap: ' + a + ' / ' + b);
    }
  return {problems: out, yticks: [...root.querySelectorAll('.ytick text')].map(t => t.textContent)};
}
"""


def _text_problems(page, panel: str) -> dict:
    # plotly.js draws asynchronously and the graph follows its panel's width (dashboard/live_chart.py):
    # measure once it is drawn at the width it is shown at
    page.wait_for_function("""(panel) => { const gd = document.querySelector('.st-key-panel_' + panel + ' .js-plotly-plot');
        return gd && gd._fullLayout && Math.abs(gd._fullLayout.width - gd.clientWidth) <= 1; }""", arg=panel,
                           timeout=30_000)
    return page.evaluate(TEXT_PROBLEMS, panel)


#: JavaScript: whether a panel's legend is a scroll box (its scrollbar drawn with a height).
LEGEND_SCROLLS = """(p) => { const s = document.querySelector('.st-key-panel_' + p + ' .legend .scrollbar');
    return !!s && s.getBoundingClientRect().height > 0; }"""


def assert_panels_read(page, sizes=(None,), what=""):
    """Issue 24 item 3, on the four graphs of the Live run at each viewport ``(width, height)`` of ``sizes`` (None:
    as it is): no legend is a scroll box and no title, legend entry, row label or axis caption is cut or drawn over
    another."""
    for size in sizes:
        if size is not None:
            page.set_viewport_size({"width": size[0], "height": size[1]})
        for panel in ("metrics", "cardinality", "threshold", "timeline"):
            found = _text_problems(page, panel)
            assert not found["problems"], (what, size, panel, found["problems"])
            assert not page.evaluate(LEGEND_SCROLLS, panel), (what, size, panel, "the legend scrolls")


def _run_and_time(page, timeout_s: float) -> dict:
    """Press Run; return browser-measured seconds to the first plot and per-chunk intervals, and the caption."""
    page.evaluate(OBSERVE_STATUS)
    run = page.get_by_role("button", name="Run", exact=True)
    t0 = time.perf_counter()
    js_click = page.evaluate("performance.now()")
    run.click()
    page.locator(".st-key-panel_cardinality .js-plotly-plot").first.wait_for(state="visible", timeout=60_000)
    first_plot = time.perf_counter() - t0
    final = _wait_status(page, r"^(done|stopped|failed) ·", timeout_s)
    assert final.startswith("done"), final
    events = page.evaluate("window.__ncld")
    started = next((t for t, text, _ in events if text.startswith(("starting", "running"))), None)
    plotted = next((t for t, _, plot in events if plot), None)
    chunk_times = {}
    for t, text, _ in events:
        m = re.search(r"running · chunk (\d+)/", text)
        if m:
            chunk_times.setdefault(int(m.group(1)), t)
    ks = sorted(chunk_times)
    # mean time between two drawn chunks as the browser saw them (compute + redraw + transport + render)
    chunk_interval = (chunk_times[ks[-1]] - chunk_times[ks[0]]) / (ks[-1] - ks[0]) if len(ks) > 1 else None
    m = re.search(r"median update (\d+) ms · median compute (\d+) ms · first plot after ([\d.]+) s "
                  r"\(stream ready in ([\d.]+) s\)", final)
    assert m, final
    return {
        # measured in the page (performance.now): click -> the cardinality plot is drawn
        "first_plot_s_browser": None if plotted is None else round((plotted - js_click) / 1000, 3),
        # the same seen from Python (adds Playwright's own polling and round trips)
        "first_plot_s_playwright": round(first_plot, 3),
        # split of the browser time: click -> the server runs the page -> the plot is drawn
        "click_to_server_run_s": None if started is None else round((started - js_click) / 1000, 3),
        "server_run_to_plot_s": None if None in (started, plotted) else round((plotted - started) / 1000, 3),
        "first_plot_s_server": float(m.group(3)),
        "stream_build_s_server": float(m.group(4)),
        "median_update_ms_server": int(m.group(1)),
        "median_compute_ms_server": int(m.group(2)),
        "mean_chunk_interval_ms_browser": None if chunk_interval is None else round(chunk_interval, 1),
        "status": final,
    }


# In the slow tier (.ci/run runs it after make test; 25 s of a make test worker): make test keeps the preset's numbers
# (tests/test_presets.py), its band's traces (tests/test_figures.py) and a finished run's graphs drawn by plotly.js in
# the page (test_layout_at_820_px_keeps_labels_and_titles_apart).
@pytest.mark.slow
def test_growth_preset_detects_the_change(browser, server):
    page = _open(browser, server)
    page.get_by_role("radio", name="concept growth").click()
    page.wait_for_url(re.compile(r"schedule=growth%402500"), timeout=30_000)  # preset applied, URL in sync
    timing = _run_and_time(page, timeout_s=300)
    TIMINGS["growth_preset_synthetic_5000_chunk250"] = timing
    assert re.match(r"done · chunk 20/20", timing["status"])

    # (b) the moment estimate's 95 % interval is drawn as a shaded band, named in the legend
    card = page.locator(".st-key-panel_cardinality .js-plotly-plot")
    card.locator(".scatterlayer .fills path").first.wait_for(timeout=30_000)  # plotly.js draws asynchronously
    assert card.locator(".scatterlayer .fills path").count() >= 1
    legend = " ".join(card.locator(".legendtext").all_text_contents())
    assert "95 % interval" in legend and "oracle" in legend, legend

    # (d) the acting detector's firing against the true change point: growth@2500 in chunks of 250 is chunk 10
    det = _table(page, "panel_timeline_table")
    header, rows = det[0], det[1:]
    assert header == DETECTION_COLUMNS
    assert [r[:2] for r in rows] == [[detector_label(RunConfig().detector), "acting"]]
    col = {name: i for i, name in enumerate(header)}
    for r in rows:
        fired = [int(c) for c in r[col["fired at chunks"]].split(",")]
        assert any(10 <= c <= 11 for c in fired), r  # a firing at (or one chunk after) the change
        assert r[col["detected"]] == "1" and r[col["missed"]] == "0", r  # detected, not missed
        assert float(r[col["mean delay (chunks)"]]) <= 1.0, r  # delay in chunks
    assert page.locator(".st-key-panel_timeline .js-plotly-plot").count() == 1
    assert page.locator(".st-key-panel_threshold .js-plotly-plot").count() == 1

    # (e) the summary lists every variant, with GM and the drift scores
    summary = _table(page, "panel_summary")
    assert summary[0][:5] == ["variant", "Hamming loss", "Micro-F1", "Average precision", "GM"]
    assert [r[0] for r in summary[1:]] == ["ELM-O", "ELM-I", "ELM-II", "all-negative", "noisy-prior"]
    for r in summary[1:]:
        assert 0 <= float(r[1]) <= 1
    for label in ("Per-chunk CSV", "Summary JSON", "HTML report"):
        # drawn after the summary table in the same script run: wait for it rather than race it
        page.get_by_role("button", name=label).wait_for(timeout=30_000)
        assert page.get_by_role("button", name=label).count() == 1
    assert page.get_by_role("button", name="Run", exact=True).is_enabled()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "dashboard_growth.png"), full_page=True)

    # no title, legend entry or axis caption is cut or drawn over another, at the widths QA used;
    # panel (c)'s log axis has one labelled tick per decade (no minor "2" / "5" labels)
    for width, height in ((1280, 720), (1400, 1000), (820, 1000)):
        page.set_viewport_size({"width": width, "height": height})
        time.sleep(1.5)  # plotly re-lays out on resize
        for panel in ("metrics", "cardinality", "threshold", "timeline"):
            found = _text_problems(page, panel)
            assert not found["problems"], (width, panel, found["problems"])
            if panel == "threshold":
                assert "1" in found["yticks"] and set(found["yticks"]) <= set(RATIO_TICKS.values()), found
    page.close()


# In the slow tier (.ci/run runs it after make test; about 19 s of make test's browser worker): make test keeps its
# twins without a browser (tests/test_live_run.py: a stop in the middle keeps every chunk received;
# tests/test_runner.py: a stopped run's status and exports); the page's own caption is checked here only.
@pytest.mark.slow
def test_stop_keeps_partial_results(browser, server):
    page = _open(browser, f"{server}/?n_instances=30000&chunk_size=300&models=%5B%22ELM-O%22%5D&references=false",
                 height=1400)
    page.get_by_role("button", name="Run", exact=True).click()
    _wait_status(page, r"running · chunk ([3-9]|\d\d)/100", 120)
    page.get_by_role("button", name="Stop", exact=True).click()
    stopped = _wait_status(page, r"^stopped · chunk \d+/100", 60)
    k = int(re.search(r"chunk (\d+)/100", stopped).group(1))
    assert 3 <= k < 100
    time.sleep(2)
    assert _status(page) == stopped  # nothing runs on after Stop
    summary = _table(page, "panel_summary")
    assert [r[0] for r in summary[1:]] == ["ELM-O"]
    assert page.get_by_text(f"the run stopped at chunk {k} of 100").count() == 1
    # every export says where the run stopped
    texts = {}
    for label in ("Per-chunk CSV", "Summary JSON", "HTML report"):
        with page.expect_download(timeout=60_000) as dl:
            page.get_by_role("button", name=label).click()
        texts[label] = Path(dl.value.path()).read_text(encoding="utf-8")
    assert texts["Per-chunk CSV"].startswith(f"# stopped at chunk {k} of 100\n")
    assert json.loads(texts["Summary JSON"])["status"] == f"stopped at chunk {k} of 100"
    assert f"Run stopped at chunk {k} of 100." in texts["HTML report"]
    page.close()


# slow tier (make test's browser worker is its critical path): a 100-chunk run, changed and stopped, about 12 s
@pytest.mark.slow
def test_a_control_changed_during_a_run_starts_its_run_and_stop_ends_the_live_page(browser, server):
    """A control changed while a run computes: the stale run is stopped and the new settings' run starts by
    itself (issue 38 item 1); after Stop, a control changed starts nothing and the note says to press Run."""
    page = _open(browser, f"{server}/?n_instances=30000&chunk_size=300&models=%5B%22ELM-O%22%5D&references=false"
                 "&seed=11",  # a seed of its own: no earlier test's finished run of these settings to replay
                 height=1400)
    page.get_by_role("button", name="Run", exact=True).click()
    _wait_status(page, r"running · chunk \d+/100", 120)
    box = page.get_by_label("model seed", exact=True)
    box.fill("5")
    box.press("Enter")
    page.get_by_text(re.compile(r"This run: .*model seed 5")).wait_for(timeout=60_000)
    _wait_status(page, r"running · chunk ([2-9]|\d\d)/100", 120)  # the new run's (its caption is drawn first)
    page.get_by_role("button", name="Stop", exact=True).click()
    stopped = _wait_status(page, r"^stopped · chunk \d+/100", 60)
    box.fill("6")
    box.press("Enter")
    page.get_by_text("press Run for them").wait_for(timeout=30_000)
    assert _status(page) == stopped and page.get_by_role("button", name="Run", exact=True).is_enabled()
    page.close()


# JavaScript: the time (performance.now) the cardinality graph is first drawn by another run than the one it shows
# now (dashboard/live_chart.py keeps the run's token on the graph as __ncldDrawn), in window.__ncldNewPlot.
OBSERVE_NEW_PLOT = """
() => {
  const gd = () => document.querySelector('.st-key-panel_cardinality .js-plotly-plot');
  const old = gd() ? gd().__ncldDrawn : null;
  window.__ncldNewPlot = null;
  if (window.__ncldNewPlotObserver) window.__ncldNewPlotObserver.disconnect();  // an earlier call's
  const note = () => {
    const g = gd();
    if (window.__ncldNewPlot === null && g && g.__ncldDrawn && g.__ncldDrawn !== old && g.dataset.chunk)
      window.__ncldNewPlot = performance.now();
  };
  window.__ncldNewPlotObserver = new MutationObserver(note);
  window.__ncldNewPlotObserver.observe(document.body, {subtree: true, childList: true, characterData: true,
                                                       attributes: true, attributeFilter: ['data-chunk']});
}
"""


def _knob_to_new_plot(page, seed: int) -> float:
    """Type a model seed and press Enter: seconds (browser clock) from the key press to the new run's first plot."""
    page.evaluate(OBSERVE_NEW_PLOT)
    box = page.get_by_label("model seed", exact=True)
    box.fill(str(seed))
    t0 = page.evaluate("performance.now()")
    box.press("Enter")
    page.wait_for_function("() => window.__ncldNewPlot !== null", timeout=120_000)
    return (page.evaluate("window.__ncldNewPlot") - t0) / 1000


# Slow tier (make test-slow): 90 s of a make test worker; make test keeps its AppTest twins (tests/test_knob_row.py,
# tests/test_dashboard_app.py).
@pytest.mark.slow
def test_a_control_changed_after_a_preset_draws_its_run_without_a_run_click(browser, server):
    """Issue 38 item 1: after a preset and one Run, each control changed starts its run and draws it, no Run click
    (the knob-to-first-new-plot time goes to tests/artifacts/dashboard_timing.json). Then on the default stream."""
    page = _open(browser, server, height=1400)
    page.get_by_role("radio", name="clean vs noisy", exact=True).click()
    page.wait_for_url(re.compile(r"beta=0.55"), timeout=30_000)
    page.get_by_role("button", name="Run", exact=True).click()
    _wait_status(page, r"^(running|done) · chunk", 300)
    seconds = [_knob_to_new_plot(page, 101)]
    page.get_by_text(re.compile(r"This run: .*model seed 101")).wait_for(timeout=30_000)
    page.close()
    page = _open(browser, server, height=1400)  # the default stream
    page.get_by_role("button", name="Run", exact=True).click()
    _wait_status(page, r"^done · chunk", 300)
    for seed in (102, 103, 104):
        seconds.append(_knob_to_new_plot(page, seed))
        _wait_status(page, r"^done · chunk", 300)
    assert page.get_by_text("settings have changed").count() == 0
    TIMINGS["knob_to_first_new_plot_s"] = [round(s, 3) for s in seconds]
    print("\nknob to first new plot (s):", TIMINGS["knob_to_first_new_plot_s"])
    page.close()


# slow tier, beside its AppTest twin in make test (tests/test_dashboard_link.py), which cannot click mid-sweep
@pytest.mark.slow
def test_the_sweeps_stop_ends_a_sweep_and_is_disabled_when_idle(browser, server):
    """Stop is enabled only while a sweep is computed; pressed then, the sweep ends and the page says so."""
    # rates estimated: every grid point is a run of its own, 60 short ones: long enough to press Stop during the
    # sweep (a job of the run hub, in a process of its own: Stop kills it where it is)
    page = browser.new_page(viewport={"width": 1500, "height": 1200})
    page.set_default_timeout(30_000)
    page.goto(f"{server}/sweep?n_instances=4000&chunk_size=200&model_rates=estimate&sweep_beta=0.05,0.95,0.1",
              timeout=60_000)
    go = page.get_by_role("button", name="Compute the sweep")
    stop = page.get_by_role("button", name="Stop", exact=True)
    go.wait_for(timeout=60_000)
    assert stop.is_disabled() and go.is_enabled()
    go.click()
    deadline = time.monotonic() + 30
    while stop.is_disabled() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert stop.is_enabled(), "Stop was not enabled while the sweep was computed"
    stop.click()
    page.get_by_text("The sweep was stopped: press Compute to run it again.").wait_for(timeout=30_000)
    assert stop.is_disabled()
    assert page.get_by_test_id("stPlotlyChart").count() == 0  # nothing computed is shown
    page.close()


@pytest.mark.slow
def test_medical_timing(browser, server):
    if not (DATA_DIR / "medical.arff").is_file():
        pytest.skip(f"medical.arff not found in {DATA_DIR} (set NCLD_DATA_DIR)")
    # the link carries the whole setting: medical in chunks of 100, default variants
    page = _open(browser, f"{server}/?dataset=medical&chunk_size=100")
    assert page.get_by_text("978 instances").count() >= 1
    timing = _run_and_time(page, timeout_s=300)
    TIMINGS["medical_chunk100"] = timing
    assert timing["status"].startswith("done · chunk 10/10")
    summary = _table(page, "panel_summary")
    assert [r[0] for r in summary[1:]] == ["ELM-O", "ELM-I", "ELM-II", "all-negative", "noisy-prior"]
    page.screenshot(path=str(ARTIFACTS / "dashboard_medical.png"), full_page=True)
    page.close()
    print(f"\nmedical: first plot {timing['first_plot_s_browser']} s (browser clock), "
          f"median per-chunk update {timing['median_update_ms_server']} ms (server)")


# JavaScript: at every change of the page (a mutation observer: requestAnimationFrame stops in a page the browser
# does not draw), the status and the chunk each live graph shows (null: no graph in the panel).
OBSERVE_GRAPHS = """
() => {
  window.__graphs = [];
  const note = () => {
    const box = document.querySelector('.st-key-run_status');
    const text = box ? box.innerText : '';
    const shown = ['metrics', 'cardinality', 'threshold', 'timeline', 'rates'].map(p => {
      const gd = document.querySelector('.st-key-panel_' + p + ' .js-plotly-plot');
      return gd ? gd.dataset.chunk || '' : null; });
    const last = window.__graphs[window.__graphs.length - 1];
    if (!last || last[0] !== text || JSON.stringify(last[1]) !== JSON.stringify(shown))
      window.__graphs.push([text, shown, performance.now()]);
  };
  new MutationObserver(note).observe(document.body, {subtree: true, childList: true, characterData: true,
                                                     attributes: true, attributeFilter: ['data-chunk']});
  note();
}
"""


def _wait_all_graphs_at(page, k: int):
    """Until the five live graphs (panels (a)-(e)) show chunk ``k``; bounded."""
    page.wait_for_function(f"() => [...document.querySelectorAll('.js-plotly-plot')]"
                           f".filter(g => g.dataset.chunk === '{k}').length >= 5", timeout=30_000)


# JavaScript: plotly's array-attribute lookup as dashboard/static/live_chart.js caches it, against the original, on
# every trace of every live graph as drawn (plotly's own _fullData), and how often plotly's redraws found it kept.
ARRAY_ATTRIBUTES = """
() => {
  const f = window.Plotly.PlotSchema.findArrayAttributes;
  if (!f.original) return {cached: false};
  const hits = f.hits;  // plotly's own redraws, before the comparison below asks
  const wrong = [];
  let traces = 0;
  for (const [slot, gd] of Object.entries(window.__ncldGraphs))
    for (const t of gd._fullData || []) {
      traces++;
      const got = JSON.stringify(f(t)), want = JSON.stringify(f.original(t));
      if (got !== want) wrong.push([slot, t.name, got, want]);
    }
  return {cached: true, hits, traces, wrong};
}
"""


#: The figures' carriers in the page (dashboard/figure_carrier.py): whether each is hidden, its box's height and
#: the chunk its payload shows.
CARRIERS = """() => [...document.getElementsByClassName('ncld-figures')].map(e => ({
  hidden: e.hidden && getComputedStyle(e).display === 'none', height: e.getBoundingClientRect().height,
  chunk: JSON.parse(e.textContent).chunk}))"""


# Slow tier (make test-slow): 33-53 s of make test's browser worker, its longest test. make test keeps the page
# script's side of the carrier (tests/test_live_page.py), not the graphs between two runs in a browser.
@pytest.mark.slow
def test_a_new_run_shows_only_its_own_graphs_and_the_rate_panel_draws(browser, server):
    """The live graphs stay in the page between runs (dashboard/live_chart.py); a new run's panels never show
    the previous run's graphs (given 1 s from its first status line: they leave within a few ms of it),
    and every panel ends on the run's last chunk, panel (e) included. The figures came in one hidden carrier,
    of no height, holding the last chunk's. plotly's array-attribute lookup, cached by the page, was used by the
    redraws and answers as plotly's own on every trace of the last ones."""
    page = _open(browser, f"{server}/?model_rates=estimate&n_instances=3000&chunk_size=250", height=1000)
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.get_by_role("button", name="Run", exact=True).click()
    _wait_status(page, r"^done · chunk 12/12", 300)
    _wait_all_graphs_at(page, 12)
    # the graphs can show chunk 12 before the page's last run has sent the table under them
    page.locator(".st-key-panel_rates [data-testid=stDataFrame]").first.wait_for(timeout=30_000)
    assert page.locator(".st-key-panel_rates [data-testid=stDataFrame]").count() == 1
    assert page.evaluate(CARRIERS) == [{"hidden": True, "height": 0, "chunk": 12}], page.evaluate(CARRIERS)
    lookup = page.evaluate(ARRAY_ATTRIBUTES)
    assert lookup["cached"] and lookup["hits"] > 0 and lookup["traces"] >= 10 and not lookup["wrong"], lookup
    page.evaluate(OBSERVE_GRAPHS)
    # another model seed: a run the server computes anew (the same settings would be replayed, RunHub)
    seed = page.locator("[class*=\"st-key-w_seed_\"] input")  # key w_seed_<version of the controls>
    seed.fill("7")
    seed.press("Enter")
    page.wait_for_url(re.compile(r"seed=7"), timeout=30_000)
    # no click: the page is live (Run was pressed), so the new seed's run starts by itself, and Run stays disabled
    # while it computes (a click waited for its end: past 30 s on a loaded machine)
    # the new run began: the status reads "running" (until then the old run's "done · chunk 12/12" still matches)
    page.wait_for_function(r"() => window.__graphs.some(([text]) => /^running · chunk \d+\//.test(text))",
                           timeout=120_000)
    _wait_status(page, r"^done · chunk 12/12", 300)
    frames = page.evaluate("window.__graphs")
    running = [(text, shown, ms) for text, shown, ms in frames if re.match(r"running · chunk \d+/", text)]
    assert running, frames  # the new run was seen computing (twelve chunks: long enough to be seen)
    new_run = next(ms for text, _, ms in frames if not text.startswith("done"))  # its first status line
    # while the new run computes, no panel shows a chunk it has not reached: the previous run's graphs (at
    # chunk 12) are gone from the first redraw; a panel is empty, being drawn (""), or at the run's chunks
    for text, shown, ms in running:
        k = int(re.search(r"chunk (\d+)/", text).group(1))
        if ms - new_run < 1000:
            # the page takes the new run's mounts a few ms after its status line (measured 20-25 ms from the
            # first to the last panel): since the run's process starts at once, "running · chunk 0" and even
            # "chunk 1" (seen 57 ms after the first status line, in a clean clone's make test) can come first
            continue
        assert all(v in (None, "") or int(v) <= k for v in shown), (text, shown, ms - new_run, frames)
    _wait_all_graphs_at(page, 12)
    page.close()


def test_typed_numbers_in_an_integer_box_are_read_as_written(browser, server):
    """The browser's integer box read "1e3" as 1 and 250.5 as 250, silently: the box is a float box now, so "1e3"
    is 1000 and 250.5 is an error under it, Run disabled."""
    page = _open(browser, server, height=1000)
    box = page.get_by_label("chunk size", exact=True)
    for typed, link in (("1e3", "chunk_size=1000"), ("250.5", None)):
        box.fill("")
        box.type(typed)
        box.press("Enter")
        if link:
            page.wait_for_function("(q) => location.search.includes(q)", arg=link, timeout=30_000)
            assert box.input_value() == "1000"
        else:
            error = page.locator("[data-testid=stSidebar]").get_by_test_id("stAlertContentError")
            error.get_by_text("chunk size must be a whole number, got 250.5").wait_for(timeout=30_000)
            # the sidebar (and its error) is drawn before the page's Run button in the same script run: wait for it
            from playwright.sync_api import expect

            expect(page.get_by_role("button", name="Run", exact=True)).to_be_disabled(timeout=30_000)
    page.close()


#: Model seeds no other run of these tests uses, one per attempt: a run is computed, never replayed (the server keeps
#: every finished run of the same settings, dashboard/serving/run_hub.py), even when a test is tried again (--reruns).
OWN_SEEDS = itertools.count(4200)


# Slow tier (make test-slow): 46 s of a make test worker.
@pytest.mark.slow
def test_an_equation_expander_typesets_its_equations_when_opened(browser, server):
    """The panels' explanations are drawn when their expander opens (the page's first answer does not wait for
    the typesetting): opened, the equation is typeset and the text is there; closed again, it folds."""
    page = _open(browser, server, height=1400)
    box = page.locator(".st-key-teach_metrics")
    assert box.locator(".katex").count() == 0
    box.locator("summary").first.click()
    box.locator(".katex").first.wait_for(timeout=30_000)
    assert "Hamming" in box.inner_text()
    box.locator("summary").first.click()
    page.wait_for_function("() => !document.querySelector('.st-key-teach_metrics .katex')"
                           " || !document.querySelector('.st-key-teach_metrics .katex').checkVisibility()",
                           timeout=30_000)
    page.close()
    # opened during a live run (a rerun): the run goes on to its end, every chunk drawn, and no error box (the page's
    # rerun raced with its live part's: Streamlit refused the live part's writes in 3 of 10 runs of this test before
    # dashboard/views/run.py caught that, an uncaught error in the server's log)
    mark = len(_server_log())
    page = _open(browser, f"{server}/?n_instances=12000&chunk_size=300&models=%5B%22ELM-O%22%5D&references=false"
                          f"&seed={next(OWN_SEEDS)}", height=1400)  # computed, not replayed
    page.get_by_role("button", name="Run", exact=True).click()
    _wait_status(page, r"running · chunk ([2-9]|\d\d)/40", 120)
    page.locator(".st-key-teach_cardinality summary").first.click()
    try:
        page.locator(".st-key-teach_cardinality .katex").first.wait_for(timeout=30_000)
    except Exception as exc:  # (it failed twice in one CI run, never here: say what the page showed)
        raise AssertionError(f"not typeset within 30 s: {_page_report(page, '.st-key-teach_cardinality', mark)}") from exc
    assert re.match(r"done · chunk 40/40", _wait_status(page, r"^(done|failed|stopped)", 120))
    page.close()
    assert not _uncaught_since(mark), _uncaught_since(mark)


# In the slow tier (.ci/run runs it after make test; about 30 s of make test's browser worker, its longest test):
# make test keeps its hub-level twin (tests/test_run_hub.py: a session whose connection drops and comes back).
@pytest.mark.slow
def test_a_run_survives_its_page_losing_its_connection_for_a_moment(browser, server):
    """A page whose websocket drops reconnects to its session (Streamlit's frontend does, within a second here);
    the server gives the session ``session_grace_s`` before it gives its run up, so the run goes on to its end
    (before, it said "stopped" at the chunk the connection dropped)."""
    context = browser.new_context(viewport={"width": 1500, "height": 1400})
    context.add_init_script("""(() => { const Base = window.WebSocket; window.__sockets = [];
      window.WebSocket = class extends Base { constructor(...a) { super(...a); window.__sockets.push(this); } }; })();""")
    page = context.new_page()
    mark = len(_server_log())
    # a seed of its own: a run of the same settings finished by another test (or try) would be replayed, not computed
    page.goto(f"{server}/?n_instances=12000&chunk_size=300&models=%5B%22ELM-O%22%5D&references=false"
              f"&seed={next(OWN_SEEDS)}",
              timeout=60_000)
    page.get_by_role("button", name="Run", exact=True).click(timeout=60_000)
    _wait_status(page, r"running · chunk ([2-9]|\d\d)/40", 120)
    assert page.evaluate("() => { window.__sockets.forEach(s => s.close()); return window.__sockets.length; }") >= 1
    assert re.match(r"done · chunk 40/40", _wait_status(page, r"^(done|failed|stopped)", 120))
    assert page.evaluate("() => window.__sockets.length") >= 2  # it did reconnect
    context.close()
    assert not _uncaught_since(mark), _uncaught_since(mark)  # (no error box while it reconnected)


def test_change_points_are_added_set_and_removed_in_the_sidebar(browser, server):
    """The schedule's rows as a visitor uses them: add a change point, choose its kind and position (the link and
    the preview follow), remove it (no schedule again). The preview is drawn in the sidebar, as wide as the
    sidebar's controls, with a band per regime and a marker per change point whose tooltip names it (an SVG sent
    through st.html was sent and never shown: its sanitizer drops SVG); without drift it says so. (One page for
    both: the preview had a test of its own, 19-22 s of make test's browser worker for two more pages.)"""
    page = _open(browser, f"{server}/?schedule=", height=1000)
    side = page.locator("[data-testid=stSidebar]")
    plain = side.locator('svg[aria-label^="drift schedule: none"]')
    plain.wait_for(timeout=30_000)
    assert "no drift: one regime" in plain.evaluate("e => e.textContent")
    side.get_by_role("button", name="Add a change point").click()
    position = side.get_by_role("spinbutton", name="at instance (change 1)", exact=True)
    position.wait_for()
    side.get_by_role("combobox", name="change 1", exact=True).click()  # the kind: open it and choose
    page.get_by_role("option", name="reduction").click()
    position.fill("3000")
    position.press("Enter")
    page.wait_for_url(re.compile(r"schedule=reduction%403000"), timeout=30_000)
    preview = side.locator('svg[aria-label^="drift schedule: reduction@3000"]')
    preview.wait_for(timeout=30_000)
    box = preview.bounding_box()
    assert box["width"] > 200 and 60 < box["height"] < 200, box
    assert preview.evaluate("e => [...e.querySelectorAll('title')].map(t => t.textContent)") == ["reduction@3000"]
    assert preview.evaluate("e => e.querySelectorAll('rect').length") == 2
    # Streamlit disables every widget while the page's connection is down: under a full make test's load it was
    # down for over 30 s once (the button found disabled, the click timed out); the click waits for it up to 90 s
    side.get_by_role("button", name="Remove change 1").click(timeout=90_000)
    side.locator('svg[aria-label^="drift schedule: none"]').wait_for(timeout=30_000)
    assert side.get_by_label("at instance (change 1)").count() == 0
    page.close()


def test_nothing_is_loaded_from_the_internet(browser, server):
    """Every request of the page (favicon included) goes to the local server; the favicon is ours."""
    page = browser.new_page(viewport={"width": 1500, "height": 1200})
    hosts = []
    page.on("request", lambda req: hosts.append(req.url))
    page.goto(server, timeout=60_000)
    page.get_by_role("button", name="Run", exact=True).wait_for(timeout=60_000)
    time.sleep(2)
    icon = page.evaluate("() => [...document.querySelectorAll('link[rel~=icon]')].map(l => l.href)")
    external = [u for u in hosts + icon if not u.startswith(server) and not u.startswith(("data:", "blob:"))]
    assert not external, external
    assert icon and all(u.startswith(server) for u in icon), icon
    page.close()
    config = (ROOT / ".streamlit" / "config.toml").read_text()
    assert "http://" not in config and "https://" not in config



# ----------------------------------------------------------------------------- guards, presentation, latency
#: Stop must take effect within this (seconds) ...
STOP_TARGET_S = 1.0
#: ... or within this on a machine loaded past 2 runnable processes per core (1-minute load average): the
#: shared test machine often is, and the page's rerun then waits for a CPU. The test prints which applied.
STOP_LOADED_S = 2.0

# JavaScript: click Stop and resolve with the milliseconds until the status says "stopped" (browser clock).
STOP_AND_TIME = """
() => new Promise(res => {
  const t0 = performance.now();
  const obs = new MutationObserver(() => {
    const x = document.querySelector('.st-key-run_status').innerText;
    if (x.startsWith('stopped')) { obs.disconnect(); res([performance.now() - t0, x]); }
  });
  obs.observe(document.body, {subtree: true, childList: true, characterData: true});
  [...document.querySelectorAll('.st-key-stop_button button')][0].click();
})
"""


def _shot(page, name):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name))


@pytest.mark.slow
def test_stop_inside_a_slow_chunk_takes_effect_at_once(browser, server):
    if not (DATA_DIR / "enron.arff").is_file():
        pytest.skip(f"enron.arff not found in {DATA_DIR} (set NCLD_DATA_DIR)")
    # enron with L = 4000: one chunk takes about 6 s here (the L x L products and the solve; the default P_D,
    # "knn", does not grow with L); at L = 2500 a chunk took 1.9 s on the CI machine, too short a window
    page = _open(browser, f"{server}/?dataset=enron&n_hidden=4000&models=%5B%22ELM-O%22%5D", height=1000)
    page.set_viewport_size({"width": 1400, "height": 1000})
    estimate = page.locator(".st-key-run_estimate").inner_text()
    assert re.search(r"about [\d.]+ [MG]B of arrays per chunk \(budget 2 GB\) · about [\d.]+ s per chunk", estimate), estimate
    page.get_by_role("button", name="Run", exact=True).click()
    # inside the second chunk, two seconds after it began
    before = _wait_status(page, r"running · chunk 1/7 .*computing chunk 2: ([2-9]|\d\d+) s", 300)
    load = os.getloadavg()[0] / (os.cpu_count() or 1)
    ms, stopped = page.evaluate(STOP_AND_TIME)
    bound = STOP_TARGET_S if load <= 2 else STOP_LOADED_S
    TIMINGS["stop_inside_slow_chunk_enron_L4000"] = {"stop_s_browser": round(ms / 1000, 3),
                                                    "load_per_core": round(load, 2), "bound_s": bound}
    print(f"\nStop inside a slow chunk: {ms:.0f} ms (browser clock; load {load:.1f} per core, bound {bound} s)")
    assert stopped.startswith("stopped · chunk 1/7"), (before, stopped)
    assert ms / 1000 <= bound, (ms, load)
    _shot(page, "dashboard_stop_slow_chunk_1400.png")
    # the chunk being computed is discarded: nothing arrives later; Run is usable again
    time.sleep(3)
    assert _status(page).startswith("stopped · chunk 1/7")
    assert page.get_by_role("button", name="Run", exact=True).is_enabled()
    # chunk 0 only initialises: the one kept chunk is said to score nothing yet (no traceback)
    page.get_by_text("No chunk was scored yet").wait_for(timeout=30_000)
    assert page.locator(".stException").count() == 0
    page.close()


def test_guard_refuses_settings_past_the_memory_budget_next_to_the_control(browser, server):
    if not (DATA_DIR / "enron.arff").is_file():
        pytest.skip(f"enron.arff not found in {DATA_DIR} (set NCLD_DATA_DIR)")
    # the default P_D ("knn") fits nothing on H: past the budget it is the L x L statistics of the variants
    page = _open(browser, f"{server}/?dataset=enron&n_hidden=6000", height=1000)
    page.set_viewport_size({"width": 1400, "height": 1000})
    msg = page.get_by_text(re.compile(r"past the budget of 2\.0 GB: with chunks of 250, at most \d+ hidden nodes fit"))
    msg.first.wait_for(timeout=30_000)
    assert not page.get_by_role("button", name="Run", exact=True).is_enabled()
    # inline: right under the hidden nodes input
    field = page.get_by_label("hidden nodes", exact=True).bounding_box()
    box = msg.first.bounding_box()
    assert 0 <= box["y"] - (field["y"] + field["height"]) < 120, (field, box)
    _shot(page, "dashboard_guard_1400.png")
    page.close()


@pytest.mark.slow  # with test_presentation_mode_fits_the_screen (the fit at three sizes), in the slow tier too
def test_presentation_mode_one_panel_large_type(browser, server):
    for width, height in ((1280, 720), (1024, 768)):
        page = _open(browser, f"{server}/?n_instances=1500", height=height)
        page.set_viewport_size({"width": width, "height": height})
        page.get_by_role("button", name="Run", exact=True).click()
        _wait_status(page, r"^done · chunk 6/6", 120)
        page.get_by_text("Presentation mode").click()
        page.get_by_role("button", name="Next").wait_for(timeout=30_000)
        page.locator(".st-key-panel_metrics .js-plotly-plot").first.wait_for(timeout=30_000)
        # the other panels go as the rerun reaches them (a loaded machine leaves them longer): wait, bounded
        others = ("cardinality", "threshold", "timeline", "rates", "summary")
        try:
            page.wait_for_function("(ps) => ps.every(p => !document.querySelector('.st-key-panel_' + p))",
                                   arg=list(others), timeout=30_000)
        except Exception:  # noqa: BLE001 - the assertion below says which panels stayed
            pass
        panels = [p for p in ("metrics", *others) if page.locator(f".st-key-panel_{p}").count()]
        assert panels == ["metrics"], panels
        size = page.evaluate("""() => parseFloat(getComputedStyle(
            document.querySelector('.st-key-run_status p')).fontSize)""")
        assert size >= 18, size  # the status line: 1.3 rem and more
        # the chart redraws in the page after the rerun (dashboard/live_chart.py): wait for it, bounded, then read
        big_ticks = """() => { const t = document.querySelector('.st-key-panel_metrics .ytick text');
                                  return t ? parseFloat(t.style.fontSize) : 0; }"""
        try:
            page.wait_for_function(f"({big_ticks})() >= 16", timeout=30_000)
        except Exception:  # noqa: BLE001 - the assertion below gives the size drawn
            pass
        tick = page.evaluate(big_ticks)
        assert tick >= 16, tick
        chosen = page.evaluate("""() => parseFloat(getComputedStyle(document.querySelector(
            '.st-key-present_panel input')).fontSize)""")
        assert chosen >= 18, chosen  # the panel selector reads at the status line's size
        assert page.locator('section[data-testid="stSidebar"]').is_hidden()
        for label in ("Run", "Stop", "Previous", "Next"):  # labelled, on one line
            b = page.get_by_role("button", name=label, exact=True).bounding_box()
            assert b["height"] < 60, (label, b)
        _shot(page, f"dashboard_presentation_{width}x{height}.png")
        page.get_by_role("button", name="Next").click()
        page.locator(".st-key-panel_metrics").wait_for(state="detached", timeout=30_000)
        page.locator(".st-key-panel_cardinality .js-plotly-plot").first.wait_for(timeout=30_000)
        # the graph is updated in place (dashboard/live_chart.py): wait for the presentation figure to be drawn
        page.wait_for_function("""() => { const gd = document.querySelector('.st-key-panel_cardinality .js-plotly-plot');
            return gd && gd._fullLayout && gd._fullLayout.font.size >= 18
                && Math.abs(gd._fullLayout.width - gd.clientWidth) <= 1; }""", timeout=30_000)
        found = _text_problems(page, "cardinality")
        if found["problems"]:
            _shot(page, f"dashboard_presentation_cardinality_{width}x{height}.png")
        assert not found["problems"], found
        page.get_by_text("Presentation mode").click()  # back to the normal layout
        page.locator(".st-key-panel_timeline .js-plotly-plot").first.wait_for(timeout=30_000)
        page.close()


# JavaScript: the boxes of the shown panel's graph, legend, x-axis titles, captions and table, of the lesson's step
# (when one is shown), and the viewport.
PANEL_BOXES = """
(panel) => {
  const box = document.querySelector('.st-key-panel_' + panel);
  if (!box) return null;
  const gd = box.querySelector('.js-plotly-plot');
  const rect = e => { const r = e.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
  const out = {view: {top: 0, left: 0, bottom: window.innerHeight, right: window.innerWidth}, parts: {}};
  if (gd) {
    out.parts.graph = rect(gd.querySelector('.main-svg'));
    const legend = gd.querySelector('.legend');
    if (legend) out.parts.legend = rect(legend);
    [...gd.querySelectorAll('.xtitle')].forEach((t, i) => { out.parts['xtitle' + i] = rect(t); });
    out.plot_h = gd._fullLayout._size.h;
    out.legend_h = legend ? legend.getBoundingClientRect().height : 0;
    out.scrollbar = !!gd.querySelector('.legend .scrollbar') &&
        gd.querySelector('.legend .scrollbar').getBoundingClientRect().height > 0;
  }
  // what is shown: not in a closed expander (a table there is on request)
  const shown = e => e.offsetParent && !e.closest('details:not([open])') && e.getBoundingClientRect().height > 0;
  [...box.querySelectorAll('[data-testid="stCaptionContainer"]')].filter(shown)
    .forEach((c, i) => { out.parts['caption' + i] = rect(c); });
  [...box.querySelectorAll('table')].filter(shown).forEach((t, i) => {
    out.parts['table' + i] = rect(t);
    // a table wider than its box scrolls in it (its own box or a wrapper's), a column out of sight
    let scrolls = t.scrollWidth > t.clientWidth + 1;
    for (let e = t.parentElement; e && e !== box && !scrolls; e = e.parentElement)
      scrolls = e.scrollWidth > e.clientWidth + 1;
    if (scrolls) out.parts['table' + i + ' (scrolls)'] = {top: 0, bottom: 1e9, left: 0, right: 1e9};
  });
  const lesson = document.querySelector('.st-key-lesson_step');
  if (lesson) out.parts.lesson = rect(lesson);
  return out;
}
"""


def _assert_panel_fits(page, panel: str, where: str) -> dict:
    """The shown ``panel`` (and a lesson's step) inside the viewport, no legend scroll box, no text cut or drawn
    over another; returns the boxes."""
    from dashboard.panels import PANELS

    if next(p for p in PANELS if p.key == panel).figure is None:
        # a panel without a graph (the summary): while the page swaps panels, the previous panel's graph can stand
        # for a moment where this one is drawn; wait for it to go
        page.wait_for_function("(panel) => !document.querySelector('.st-key-panel_' + panel + ' .js-plotly-plot')",
                               arg=panel, timeout=30_000)
    has_graph = page.locator(f".st-key-panel_{panel} .js-plotly-plot").count() > 0  # (none: no data to draw)
    if has_graph:
        try:
            page.wait_for_function("""(panel) => { const gd = document.querySelector('.st-key-panel_' + panel + ' .js-plotly-plot');
                return gd && gd._fullLayout && gd._fullLayout.font.size >= 18
                    && Math.abs(gd._fullLayout.width - gd.clientWidth) <= 1; }""", arg=panel, timeout=30_000)
        except Exception as e:  # noqa: BLE001 - say what was drawn
            drawn = page.evaluate("""(panel) => [...document.querySelectorAll('.st-key-panel_' + panel + ' .js-plotly-plot')]
                .map(gd => ({font: gd._fullLayout && gd._fullLayout.font.size, width: gd._fullLayout && gd._fullLayout.width,
                             div: gd.clientWidth, busy: !!gd.__ncldBusy}))""", panel)
            _shot(page, f"dashboard_presentation_fit_{where}.png")
            raise AssertionError(f"{where}: panel {panel} not drawn large at its width within 30 s: {drawn}") from e
    time.sleep(0.6)  # the page fits the graph's height to the screen after the rest is drawn (live_chart.py)
    found = page.evaluate(PANEL_BOXES, panel)
    if found is None:
        from benchmarks.screenshot import SHOWN

        raise AssertionError(f"{where}: panel {panel} left the page; on it: {page.evaluate(SHOWN)!r}")
    view = found["view"]
    outside = {k: r for k, r in found["parts"].items()
               if r["top"] < view["top"] - 1 or r["bottom"] > view["bottom"] + 1
               or r["left"] < view["left"] - 1 or r["right"] > view["right"] + 1}
    if outside or found.get("scrollbar"):
        _shot(page, f"dashboard_presentation_fit_{where}.png")
    assert not outside, (where, panel, outside, view)
    if has_graph:
        assert not found["scrollbar"], (where, panel)
        problems = _text_problems(page, panel)["problems"]
        assert not problems, (where, panel, problems)
    return found


# slow tier: beside the parallel suite its 820 px case timed out once in a clean clone's make test (alone it passes)
@pytest.mark.slow
@pytest.mark.parametrize("width,height", [(1280, 720), (1024, 768), (820, 768)])
def test_presentation_mode_fits_the_screen(browser, server, width, height):
    """Issue 24 item 2: every panel shown in presentation mode has its graph, legend, x-axis title, captions and
    table inside the viewport without scrolling; its legend is no scroll box and no taller than the plot; Next
    stays on the selector's line; the summary's table is not cut."""
    page = _open(browser, f"{server}/?n_instances=1500", height=height)
    page.set_viewport_size({"width": width, "height": height})
    page.get_by_role("button", name="Run", exact=True).click()
    _wait_status(page, r"^done · chunk 6/6", 120)
    page.get_by_text("Presentation mode").click()
    page.get_by_role("button", name="Next", exact=True).wait_for(timeout=30_000)
    from benchmarks.screenshot import present

    for panel in ("metrics", "cardinality", "threshold", "timeline", "rates", "summary"):
        present(page, panel)
        if panel == "rates" and not page.locator(f".st-key-panel_{panel} .js-plotly-plot").count():
            pass  # (e) has no graph when the stream has no flip rates to show: its caption says so
        found = _assert_panel_fits(page, panel, f"{panel}_{width}x{height}")
        if "plot_h" in found:
            assert found["legend_h"] <= found["plot_h"], (panel, found["legend_h"], found["plot_h"])  # the legend eats no plot
        nxt = page.get_by_role("button", name="Next", exact=True).bounding_box()
        sel = page.locator(".st-key-present_panel").bounding_box()
        assert abs(nxt["y"] - sel["y"]) < 20 and nxt["height"] < 60, (nxt, sel)  # one line, beside the selector
    cut = page.evaluate("""() => { const t = document.querySelector('.st-key-panel_summary table');
        const r = t.getBoundingClientRect(); let scrolls = t.scrollWidth > t.clientWidth + 1;
        const box = document.querySelector('.st-key-panel_summary');
        for (let e = t.parentElement; e && e !== box && !scrolls; e = e.parentElement)
          scrolls = e.scrollWidth > e.clientWidth + 1;
        return r.right > window.innerWidth + 1 || scrolls; }""")
    assert not cut, (width, height)
    page.close()


# Every step of every lesson on a narrow screen: about a minute on one worker, so in the slow tier (make test-slow,
# which .ci/run runs after make test). The projector's sizes, 1280 x 720 and 1024 x 768, with more checks (no plot
# under 200 px, axis titles clear of ticks, no stale run, the knob row's room): tests/test_dashboard_present_browser.py.
@pytest.mark.slow
@pytest.mark.parametrize("width,height", [(820, 768)])
def test_every_lesson_step_fits_the_screen(browser, server, width, height):
    """Issue 24 items 2 and 7: each step of each guided lesson, after its preset's run, shows its panel (graph,
    legend, axes, captions) and the step's text whole, without scrolling, on an 820 px wide screen (the step above
    the panel)."""
    from dashboard.panels import PANELS
    from dashboard.teaching import LESSONS

    for slug, lesson in LESSONS.items():
        page = browser.new_page(viewport={"width": width, "height": height})
        page.set_default_timeout(30_000)
        page.goto(f"{server}/?lesson={slug}&step=1", timeout=60_000)
        page.locator(".st-key-lesson_step").wait_for(timeout=60_000)
        page.get_by_role("button", name="Run", exact=True).click()
        _wait_status(page, r"^done · ", 300)
        panel = "metrics"  # the first panel, until a step names its own
        for k in range(1, lesson.n_steps + 1):
            box = page.locator(".st-key-lesson_step", has_text=f"step {k} of {lesson.n_steps}")
            box.wait_for(timeout=30_000)
            panel = lesson.step(k).panel or (lesson.panel if k == lesson.n_steps else panel)
            page.locator(f".st-key-panel_{panel}").wait_for(timeout=30_000)  # the step's panel, the others gone
            others = [p.key for p in PANELS if p.key != panel]
            page.wait_for_function("(ps) => ps.every(p => !document.querySelector('.st-key-panel_' + p))",
                                   arg=others, timeout=30_000)
            if k == lesson.n_steps:  # the measured step reads its sentence from the run on screen
                assert "Press **Run**" not in box.inner_text() and "Press Run" not in box.inner_text(), box.inner_text()
            _assert_panel_fits(page, panel, f"{slug}_{k}_{width}x{height}")
            if k < lesson.n_steps:
                page.get_by_role("button", name="Next step").click()
        page.close()


def test_layout_at_820_px_keeps_labels_and_titles_apart(browser, server):
    page = _open(browser, f"{server}/?n_instances=1500", height=1000)
    page.set_viewport_size({"width": 820, "height": 1000})
    page.get_by_role("button", name="Run", exact=True).click()
    _wait_status(page, r"^done · chunk 6/6", 120)
    page.locator(".st-key-panel_summary table").wait_for(timeout=30_000)
    for label in ("Run", "Stop"):
        btn = page.get_by_role("button", name=label, exact=True)
        box = btn.bounding_box()
        text = btn.locator("p").first.bounding_box()
        assert box["height"] < 50, (label, box)  # one line
        assert text["x"] >= box["x"] and text["x"] + text["width"] <= box["x"] + box["width"], (label, box, text)
    for panel in ("metrics", "cardinality", "threshold", "timeline"):
        found = _text_problems(page, panel)
        assert not found["problems"], (panel, found["problems"])
    # no control or button label is cut to "…" (the toggle, the checkbox, the downloads, Pin)
    cut = page.evaluate("""() => [...document.querySelectorAll('.stMainBlockContainer .stMarkdownEllipsis')]
        .filter(e => e.offsetParent && e.scrollWidth > e.clientWidth + 1).map(e => e.innerText)""")
    assert not cut, cut
    # the panels' headings do not overlap each other or the figures
    heads = page.evaluate("""() => [...document.querySelectorAll('.stMainBlockContainer h5')]
        .map(h => { const r = h.getBoundingClientRect(); return [h.innerText, r.top, r.bottom]; })""")
    heads.sort(key=lambda h: h[1])
    for a, b in zip(heads, heads[1:]):
        assert a[2] <= b[1] + 1, (a, b)
    _shot(page, "dashboard_820.png")
    page.close()


# JavaScript: at every change of the page, note the status text and the chunk count each panel's figure shows
# (its data-chunk, set by dashboard/live_chart.py once the figure of that many chunks is drawn).
OBSERVE_PANELS = """
() => {
  window.__frames = [];
  window.__endedAt = null;
  window.__observing = true;
  let observer = null;
  const stop = () => { window.__observing = false; if (observer) observer.disconnect(); };
  const tick = () => {
    if (!window.__observing) return;
    const box = document.querySelector('.st-key-run_status');
    const metas = ['metrics', 'cardinality', 'threshold', 'timeline'].map(p => {
      const gd = document.querySelector('.st-key-panel_' + p + ' .js-plotly-plot');
      return gd && gd.dataset.chunk !== undefined ? Number(gd.dataset.chunk) : null; });
    const text = box ? box.innerText : '';
    const key = text + JSON.stringify(metas);
    const last = window.__frames[window.__frames.length - 1];
    if (!last || last[3] !== key) window.__frames.push([performance.now(), text, metas, key]);
    // after the run's end, until every panel has drawn (the status line is drawn before the panels, and a short
    // fast stream's figures may all come after "done"), at most 10 s
    const ended = text.startsWith('done') || text.startsWith('stopped');
    if (ended && window.__endedAt === null) {
      window.__endedAt = performance.now();
      setTimeout(stop, 10000);
    }
    if (ended && !metas.includes(null)) stop();
  };
  // at every change of the page, as it happens: a frame's sampling (requestAnimationFrame) would first see the
  // status line after the page's script has begun drawing (it takes a chunk's figures as the render holding
  // them ends, dashboard/static/live_chart.js), and count only the rest of the draw
  observer = new MutationObserver(tick);
  observer.observe(document.body, {subtree: true, childList: true, characterData: true, attributes: true,
                                   attributeFilter: ['data-chunk']});
  tick();
}
"""


def chunk_update_latency(*runs) -> dict:
    """From OBSERVE_PANELS' frames (one list per run, each on a fresh page): per chunk k, ms from the status
    first saying chunk k (it is sent before the figures) to the moment every panel shows k or later (a panel
    the page skipped past counts as drawn).

    The median and p90 are over chunks 2 on of every run, the updates of panels already in the page; chunk
    1's draw mounts the four graphs, is part of Run to first plot (its own target), and is reported for the
    first run as ``first_draw_ms``.
    """
    lat, first_draw = [], None
    for r, frames in enumerate(runs):
        said, first_at = {}, {}
        for t, text, metas, _ in frames:
            m = re.search(r"chunk (\d+)/", text)
            # "running · chunk k/n" or, once the run has computed its last chunk (a short stream computes
            # faster than the page draws), "done · chunk k/n": said before chunk k's figures either way
            if m and text.startswith(("running", "done")):
                said.setdefault(int(m.group(1)), t)
            for i, v in enumerate(metas or ()):
                if v is not None:
                    first_at.setdefault((i, int(v)), t)
        for k, t_said in sorted(said.items()):
            reach = [min((t for (j, v), t in first_at.items() if j == i and v >= k), default=None) for i in range(4)]
            if None in reach or k == 0:  # "chunk 0": computing the first chunk, nothing to draw yet
                continue
            if max(reach) < t_said:  # drawn before its status line said it (the page's rerun after the run's
                continue  # end drew the last chunks under an empty status): not measurable here
            if k > 1:
                lat.append(max(reach) - t_said)
            elif r == 0:
                first_draw = round(max(reach) - t_said, 1)
    lat.sort()
    return {"chunks_measured": len(lat), "runs": len(runs),
            "median_ms": round(statistics.median(lat), 1) if lat else None,
            # nearest rank: the smallest measurement with at least 90 % of them at or below it
            "p90_ms": round(lat[math.ceil(0.9 * len(lat)) - 1], 1) if lat else None, "first_draw_ms": first_draw}


def _parsed_cache_state(arff: Path) -> str:
    """"warm" when the parsed cache (the server's: same environment) holds this file's arrays, else "cold"."""
    from ncld_core.data import parsed_cache

    xml = arff.with_suffix(".xml")
    entry = parsed_cache.entry_path(parsed_cache.content_key(arff.read_bytes(),
                                                             xml.read_bytes() if xml.is_file() else None))
    return "warm" if entry is not None and entry.is_file() else "cold"


SHARED = ("emotions", "medical", "enron", "langlog", "corel16k001", "arts", "health", "rcv1subset5", "tmc2007_500")
#: The large ones are cut to their first 3250 instances (13 chunks of 250) to keep the test short.
LARGE = {"corel16k001", "arts", "health", "rcv1subset5", "tmc2007_500"}
#: Datasets of 3 to 7 chunks at the defaults: run on three fresh pages, so that their median per-chunk update
#: rests on several updates, not on 2 or 3 (langlog, 6 chunks of ~0.2 s: in a clean clone's slow tier under a load
#: of 3.2, its one page had no chunk whose update the status line could time; enron, 7 chunks of ~0.08 s once a
#: run's process started without the page script: one timed chunk on an idle machine, none beside other work).
SMALL = {"emotions", "medical", "langlog", "enron"}


def _observed_run(page, timeout_s: float) -> tuple[list, float, str]:
    """Press Run with OBSERVE_PANELS watching: (frames, click time on the page's clock, final status)."""
    page.evaluate(OBSERVE_PANELS)
    t_click = page.evaluate("performance.now()")
    page.get_by_role("button", name="Run", exact=True).click()
    final = _wait_status(page, r"^(done|stopped|failed) ·", timeout_s)
    if not final.startswith("failed"):  # the observer goes on until every panel has drawn (bounded: 10 s)
        page.wait_for_function("() => window.__observing === false", timeout=20_000)
    return page.evaluate("window.__frames"), t_click, final


#: Not measurable: at the defaults these streams have 3 and 4 chunks and compute faster than the page draws them;
#: the page's rerun after the run's end draws the last chunks under an empty status line (so no status says them
#: first). Counting "done · chunk k/n" too, three pages each measured 0 to 3 updates per try, over 10-620 ms.
UNMEASURABLE = ("emotions", "medical")


@pytest.mark.slow
@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.skip(reason="3-4 chunk stream computed faster than drawn: its per-chunk "
                                                  "updates are not measurable by the status line (UNMEASURABLE)"))
    if n in UNMEASURABLE else n for n in SHARED])
def test_per_chunk_update_latency_at_the_defaults(browser, server, name):
    """Per-chunk browser update on each shared dataset at the defaults (the first 12 chunks), and Run to first plot."""
    if not (DATA_DIR / f"{name}.arff").is_file():
        pytest.skip(f"{name}.arff not found in {DATA_DIR}")
    cache_state = _parsed_cache_state(DATA_DIR / f"{name}.arff")  # before the page reads it: parsed before?
    runs, first, final = [], None, ""
    for r in range(3):
        # a large dataset runs on one page, unless that page timed no chunk's update (in one CI run the cold
        # server's first plot took 2.5 s, tmc2007_500's 13 chunks 1.8 s: the run had ended): then on more
        if r >= (3 if name in SMALL else 1) and chunk_update_latency(*runs)["chunks_measured"]:
            break
        # a model seed per page: the server computes each run (the same settings would be replayed, RunHub)
        page = _open(browser, f"{server}/?dataset={name}&seed={100 + r}" + ("&n_instances=3250" if name in LARGE else ""),
                     height=1000)
        page.set_viewport_size({"width": 1400, "height": 1000})
        frames, t_click, final = _observed_run(page, 600)
        assert final.startswith("done"), final
        runs.append(frames)
        if r == 0:  # Run to first plot: the first Run of this dataset on the server
            first = next((t for t, _, metas, _ in frames if metas and all(v is not None for v in metas)), None)
            first = None if first is None else round((first - t_click) / 1000, 3)
        page.close()
    res = chunk_update_latency(*runs)
    res["run_to_first_plot_s"] = first
    res["status"] = final
    res["parsed_cache"] = cache_state
    TIMINGS[f"latency_{name}"] = res
    print(f"\n{name}: {res}")
    # a measurement (docs/performance.md compares it with the 200 ms / 2 s targets): it must exist
    assert res["chunks_measured"] >= 1 and res["run_to_first_plot_s"] is not None, res
