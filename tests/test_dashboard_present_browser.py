"""Every lesson step in presentation mode, in Chromium, at a projector's 1280 x 720 and 1024 x 768 (issue 38 item 5).

One page per screen size walks every step of every lesson, the lessons chosen one after another from the lesson
chooser as a teacher would (the first one's Run makes the page live: each next lesson's run starts by itself; at the
second size the server replays them). At every step: the step's own panel alone, no run of other settings under the
text (no flag, the quality panel's legend names the lesson's models and no others), the panel and the lesson's
column (with the knobs' Settings button: presentation mode has the knob row behind it) inside the screen without
scrolling, every plot at least ``MIN_PLOT_PX`` tall, no axis title on its tick
labels, and what the step asks a teacher to change on screen. Then, at 1280 x 720, the step's button is pressed and
its run measured, and the Sweep page's link followed.

About four minutes of a worker on a loaded two-core machine: the slow tier (make test-slow). Its fast twin in make
test is tests/test_dashboard_present.py (AppTest: each step's panel, the flag, the actions) with
tests/test_lesson_guard.py. Screenshots of a failing step go to tests/artifacts/present_<lesson>_<k>_<size>.png.
"""

from __future__ import annotations

import re
import time

import pytest

from dashboard.panels import PANELS
from dashboard.teaching import LESSONS
from ncld_core.config import PRESETS
from tests.test_dashboard_browser import ARTIFACTS, PANEL_BOXES, TEXT_PROBLEMS, browser, server  # noqa: F401

pytestmark = pytest.mark.browser

#: The least plot height (px) of a graph in presentation mode at these sizes.
MIN_PLOT_PX = 200

# JavaScript: the shown panel's plot heights, and every axis title lying on a tick label of its graph.
PLOTS_AND_TITLES = """
(panel) => {
  const box = document.querySelector('.st-key-panel_' + panel);
  const out = {plots: [], overlaps: []};
  if (!box) return out;
  const r = e => e.getBoundingClientRect();
  const hit = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  for (const gd of box.querySelectorAll('.js-plotly-plot')) {
    if (!gd._fullLayout) continue;
    // each subplot's plot area (panel (a) has three side by side)
    gd.querySelectorAll('.cartesianlayer .subplot .bg, .cartesianlayer > .subplot > .plot')
    const areas = [...gd.querySelectorAll('.bglayer rect.bg')].map(e => r(e).height);
    out.plots.push(areas.length ? Math.min(...areas) : gd._fullLayout._size.h);
    const titles = [...gd.querySelectorAll('.xtitle, .ytitle, [class*="y2title"], [class*="y3title"]')]
      .filter(t => t.textContent);
    const ticks = [...gd.querySelectorAll('.xtick text, .ytick text, [class*="tick"] text')].filter(t => t.textContent);
    for (const t of titles) for (const k of ticks)
      if (hit(r(t), r(k))) out.overlaps.push(t.textContent + ' / ' + k.textContent);
  }
  return out;
}
"""

# JavaScript: what stands outside the screen or makes the page scroll: the lesson's column (its chooser, step,
# buttons, the panel's chooser and options), the flag, the knob row and the page's height.
OFF_SCREEN = """
() => {
  const out = [];
  const h = window.innerHeight, w = window.innerWidth;
  for (const sel of ['.st-key-lesson_pick', '.st-key-lesson_step', '.st-key-lesson_nav', '.st-key-present_nav',
                     '.st-key-show_paper', '.st-key-focus_variant', '.st-key-lesson_stale', '.st-key-knob_row']) {
    const e = document.querySelector(sel);
    if (!e) continue;
    const b = e.getBoundingClientRect();
    if (b.height && (b.top < -1 || b.bottom > h + 1 || b.left < -1 || b.right > w + 1)) out.push(sel);
  }
  const page = document.querySelector('[data-testid="stMain"]') || document.scrollingElement;
  if (page.scrollHeight > page.clientHeight + 1) out.push('the page scrolls: ' + page.scrollHeight + ' > ' + page.clientHeight);
  return out;
}
"""

#: How the quality panel's legend names each model some lesson runs (one that is not the lesson's: another lesson's
#: run is drawn under it).
NAMED = {"ELM-O (clean labels)": r"clean labels", "ELM-O": r"ELM-O(?!\s*\(clean)", "ELM (plain)": r"ELM \(plain\)",
         "ELM-I": r"ELM-I(?!I)", "ELM-II": r"ELM-II"}


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name))


def _status(page) -> str:
    try:
        return page.locator(".st-key-run_status").inner_text(timeout=10_000)
    except Exception:  # noqa: BLE001 - a rerun that has not drawn it yet
        return ""


def _wait_done(page, timeout_s: float = 300) -> str:
    deadline = time.monotonic() + timeout_s
    text = ""
    while time.monotonic() < deadline:
        text = _status(page)
        if text.startswith(("done", "stopped", "failed")):
            assert text.startswith("done"), text
            return text
        time.sleep(0.3)
    raise AssertionError(f"the run did not end within {timeout_s} s: {text!r}")


def _shown_panels(page) -> list[str]:
    keys = {p.key for p in PANELS}
    found = page.evaluate("""() => [...document.querySelectorAll('[class*="st-key-panel_"]')]
        .map(e => [...e.classList].find(c => c.startsWith('st-key-panel_')).slice('st-key-panel_'.length))""")
    return [k for k in found if k in keys]


def _legend(page, panel: str) -> str:
    return " ".join(page.locator(f".st-key-panel_{panel} .legendtext").all_text_contents())


def _wait_drawn(page, panel: str, where: str) -> None:
    """The step's panel alone on the page, its graph (if it has one) drawn large at its width and fitted."""
    try:
        page.wait_for_function("""([panel, keys]) => keys.every(k => (k === panel) ===
                                  !!document.querySelector('.st-key-panel_' + k))""",
                               arg=[panel, [p.key for p in PANELS]], timeout=30_000)
    except Exception as e:  # noqa: BLE001 - say what is on the page
        _shot(page, f"present_{where}.png")
        raise AssertionError(f"{where}: panel {panel} is not the one shown: {_shown_panels(page)}") from e
    if next(p for p in PANELS if p.key == panel).figure is not None and page.locator(
            f".st-key-panel_{panel} .js-plotly-plot").count():
        page.wait_for_function("""(panel) => { const gd = document.querySelector('.st-key-panel_' + panel + ' .js-plotly-plot');
            return gd && gd._fullLayout && gd._fullLayout.font.size >= 18 && !gd.__ncldBusy
                && Math.abs(gd._fullLayout.width - gd.clientWidth) <= 1; }""", arg=panel, timeout=30_000)
    time.sleep(0.8)  # the page fits the graph's height to the screen once the rest is drawn (live_chart.js)


def _check_step(page, slug: str, k: int, size: tuple[int, int], done: bool = True) -> None:
    """Step ``k`` of lesson ``slug`` as the page shows it (``done``: its run has ended)."""
    lesson = LESSONS[slug]
    step = lesson.step(k)
    where = f"{slug}_{k}_{size[0]}x{size[1]}"
    box = page.locator(".st-key-lesson_step", has_text=f"step {k} of {lesson.n_steps}")
    box.wait_for(timeout=30_000)
    _wait_drawn(page, step.panel, where)
    problems = []
    # no run of other settings under the text: no flag, the measured step measured, the legend the lesson's models
    if page.locator(".st-key-lesson_stale").count():
        problems.append("flagged: " + page.locator(".st-key-lesson_stale").inner_text())
    if k == lesson.n_steps and "Press Run" in box.inner_text():
        problems.append("the measured step is not measured")
    if step.panel == "metrics":
        legend = _legend(page, "metrics")
        named = {m for m, pattern in NAMED.items() if re.search(pattern, legend)}
        want = set(PRESETS[lesson.preset].models)
        if named - want or (done and named != want):
            problems.append(f"the quality legend names {sorted(named)}; the lesson runs {sorted(want)}")
    # it fits: the panel's parts (graph, legend, axis titles, captions, tables) and the lesson's column on screen
    found = page.evaluate(PANEL_BOXES, step.panel)
    view = found["view"]
    problems += [f"{name} off screen: {r}" for name, r in found["parts"].items()
                 if r["top"] < view["top"] - 1 or r["bottom"] > view["bottom"] + 1
                 or r["left"] < view["left"] - 1 or r["right"] > view["right"] + 1]
    problems += [f"off screen: {sel}" for sel in page.evaluate(OFF_SCREEN)]
    if found.get("scrollbar"):
        problems.append("the legend scrolls")
    # readable: every plot MIN_PLOT_PX tall or more, no axis title on a tick label, no text cut or drawn over another
    plots = page.evaluate(PLOTS_AND_TITLES, step.panel)
    problems += [f"a plot {h:.0f} px tall" for h in plots["plots"] if h < MIN_PLOT_PX - 0.5]
    problems += [f"axis title on tick labels: {o}" for o in plots["overlaps"]]
    if page.locator(f".st-key-panel_{step.panel} .js-plotly-plot").count():
        problems += page.evaluate(TEXT_PROBLEMS, step.panel)["problems"]
    # what the step asks a teacher to change is on screen (the sidebar is hidden)
    for action in step.actions:
        target = page.get_by_role("link" if action.page else "button", name=action.label)
        if not target.is_visible():
            problems.append(f"the step's action {action.label!r} is not on screen")
    assert page.locator('section[data-testid="stSidebar"]').is_hidden()
    if problems:
        _shot(page, f"present_{where}.png")
    assert not problems, (where, problems)


@pytest.mark.slow
@pytest.mark.parametrize("size", [(1280, 720), (1024, 768)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_lesson_step_fits_shows_its_own_panel_and_no_stale_run(browser, server, size):  # noqa: F811
    page = browser.new_page(viewport={"width": size[0], "height": size[1]})
    page.set_default_timeout(30_000)
    first = next(iter(LESSONS))
    page.goto(f"{server}/?lesson={first}&step=1", timeout=60_000)
    page.locator(".st-key-lesson_step").wait_for(timeout=60_000)
    assert page.locator(".st-key-knob_popover").count()  # the knobs, behind their button on the panel's line
    page.get_by_role("button", name="Run", exact=True).click()  # the page is live from now on
    for slug, lesson in LESSONS.items():
        if slug != first:  # chosen as a teacher would: its run starts by itself
            page.locator(".st-key-lesson_pick").click()
            page.get_by_role("option", name=f"lesson: {lesson.preset}", exact=True).click()
            page.locator(".st-key-lesson_step", has_text=f"{lesson.preset} · step 1 of").wait_for(timeout=30_000)
            _check_step(page, slug, 1, size, done=False)  # at once: no other lesson's run under its first step
        _wait_done(page)
        for k in range(1, lesson.n_steps + 1):
            if k > 1:
                # the pointer leaves where the lesson's option was (over the knobs' Settings button, whose tooltip
                # then lies over Next step), as a teacher's hand does on its way to Next step
                page.mouse.move(0, size[1] - 1)
                page.get_by_role("button", name="Next step").click()
            _check_step(page, slug, k, size)
    page.close()


# Three short runs (1500 instances) and a page switch: about a minute on a loaded machine, so in the slow tier too;
# make test has their AppTest twins (tests/test_dashboard_present.py).
@pytest.mark.slow
def test_a_steps_change_a_link_to_the_sweep_and_the_way_back_to_the_lesson(browser, server):  # noqa: F811
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.set_default_timeout(30_000)
    # "Set the trusted sample to 0 and run again": one click, and on the live page its run starts by itself
    page.goto(f"{server}/?lesson=unknown-noise&step=4&n_instances=1500", timeout=60_000)
    page.get_by_role("button", name="Run", exact=True).click()
    _wait_done(page)
    page.get_by_role("button", name="Set the trusted sample to 0").click()
    page.get_by_role("button", name="Next step").click()
    box = page.locator(".st-key-lesson_step", has_text="step 5 of 5")
    box.filter(has_text="The cardinality band, the identified set, is").wait_for(timeout=120_000)
    assert not page.locator(".st-key-lesson_stale").count()
    _check_step(page, "unknown-noise", 5, (1280, 720))
    # "Then the Sweep page": its link, in presentation mode
    page.goto(f"{server}/?lesson=why-beta-matters&step=2", timeout=60_000)
    page.get_by_role("link", name="Open the Sweep page").click()
    page.wait_for_url(re.compile(r"/sweep"), timeout=30_000)
    # settings the text does not hold (no noise under a lesson on what the noise does): flagged, their run not drawn;
    # the way back puts the lesson's noise back and its run starts by itself
    page.goto(f"{server}/?lesson=concept-growth&step=2&noise=none&n_instances=1500&schedule=growth%40750",
              timeout=60_000)
    flag = page.locator(".st-key-lesson_stale")
    flag.filter(has_text="label noise none (the lesson's: U[0.2, 0.4] per label)").wait_for(timeout=60_000)
    page.get_by_role("button", name="Run", exact=True).click()
    _wait_done(page)
    assert flag.count() and not page.locator(".js-plotly-plot").count(), "the run is drawn under the lesson"
    page.get_by_role("button", name="Back to the lesson's settings").click()
    page.locator(".st-key-panel_cardinality .js-plotly-plot").wait_for(timeout=120_000)
    _wait_done(page)
    assert not flag.count()
    assert "observed cardinality (noisy labels)" in _legend(page, "cardinality")
    _check_step(page, "concept-growth", 2, (1280, 720))
    page.close()
