"""The knob row in headless Chromium (issue 38 item 2): after a preset and one Run, a knob moved in the row draws
the new settings' run with no Run click; the row fits a 1280 x 720 screen above the panels. In presentation mode
the knobs are behind a button on the panel chooser's line (the screen's height is the panel's): opened there, they
fit the screen, and a lesson's step that asks for a change is done with them.

The AppTest twin (tests/test_knob_row.py) checks what each knob sets; here the page is clicked and typed into as a
visitor does (a slider's thumb moved with the keyboard)."""

from __future__ import annotations

import re

import pytest

from dashboard.labels import label_of
from tests.test_dashboard_browser import (  # noqa: F401
    OBSERVE_NEW_PLOT, _open, _shot, _wait_status, browser, server)

pytestmark = pytest.mark.browser

#: JavaScript: the knob row's box, each knob's box and its label's lines, and the first panel's top.
ROW_BOXES = """
() => {
  const row = document.querySelector('.st-key-knob_row');
  if (!row) return null;
  const rect = e => { const r = e.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
  const knobs = [...row.querySelectorAll('[data-testid="stColumn"]')].map(c => {
    const label = c.querySelector('[data-testid="stWidgetLabel"] p, [data-testid="stCaptionContainer"] p');
    const lh = label ? parseFloat(getComputedStyle(label).lineHeight) : 0;
    return {box: rect(c), label: label ? label.innerText : '',
            lines: label && lh ? Math.round(label.getBoundingClientRect().height / lh) : 0};
  });
  const panel = document.querySelector('[class*="st-key-panel_"]');
  return {row: rect(row), knobs, panel_top: panel ? panel.getBoundingClientRect().top : null,
          view: {width: window.innerWidth, height: window.innerHeight}};
}
"""


def _thumb(page, label: str):
    """The knob row's slider (a thumb of it) named ``label``."""
    return page.locator(".st-key-knob_row").get_by_role("slider", name=label)


def _new_plot_after(page, press) -> None:
    """Call ``press()`` (a knob moved) and wait until the cardinality panel is drawn by another run."""
    page.evaluate(OBSERVE_NEW_PLOT)
    press()
    page.wait_for_function("() => window.__ncldNewPlot !== null", timeout=120_000)


# Slow tier (make test-slow): 16-26 s of make test's browser worker; make test keeps its AppTest twin
# (tests/test_knob_row.py::test_a_knob_moved_after_run_starts_its_run_without_a_click).
@pytest.mark.slow
def test_a_knob_moved_after_a_preset_and_one_run_draws_its_run_without_a_click(browser, server):  # noqa: F811
    page = _open(browser, server, height=1000)
    page.set_viewport_size({"width": 1280, "height": 720})
    page.get_by_role("radio", name="why beta matters", exact=True).click()
    page.wait_for_url(re.compile(r"beta=1"), timeout=30_000)
    page.get_by_role("button", name="Run", exact=True).click()
    _wait_status(page, r"^done · chunk", 300)
    beta = _thumb(page, "label fit weight")
    assert beta.get_attribute("aria-valuetext") == "1.00"  # the preset's β, on the row
    _new_plot_after(page, lambda: (beta.focus(), beta.press("Home")))
    page.get_by_text(re.compile(rf"This run: .*{re.escape(label_of('beta'))} 0\b")).wait_for(timeout=60_000)
    _wait_status(page, r"^done · chunk", 300)
    assert re.search(r"beta=0(\.0)?(&|$)", page.url), page.url  # the link follows the row
    assert page.get_by_text("settings have changed").count() == 0
    # the sidebar's box shows the row's value: one setting, two views
    side = page.locator('section[data-testid="stSidebar"]')
    assert side.get_by_label(label_of("beta"), exact=True).input_value() == "0"
    page.close()


def _inside(box, view) -> bool:
    return box["left"] >= -1 and box["right"] <= view["width"] + 1 and box["top"] >= -1 and box["bottom"] <= view["height"] + 1


def _assert_row_fits(page, where: str) -> dict:
    found = page.evaluate(ROW_BOXES)
    assert found is not None, where
    if not _inside(found["row"], found["view"]):
        _shot(page, f"knob_row_{where}.png")
    assert _inside(found["row"], found["view"]), (where, found)
    assert found["panel_top"] is not None and found["row"]["bottom"] <= found["panel_top"] + 1, (where, found)  # above
    tops = {round(k["box"]["top"]) for k in found["knobs"]}
    assert len(found["knobs"]) == 5 and max(tops) - min(tops) <= 2, (where, found["knobs"])  # side by side: one line
    assert all(1 <= k["lines"] <= 2 for k in found["knobs"]), (where, found["knobs"])  # no label past 2 lines
    return found


def _open_knobs(page, where: str):
    """Presentation mode: the knobs' button is on the panel chooser's line; opened, every knob is on the screen."""
    button = page.locator(".st-key-knob_popover button").first
    nav, box = page.locator(".st-key-present_panel").bounding_box(), button.bounding_box()
    assert abs(box["y"] - nav["y"]) < 20 and box["height"] < 60, (where, nav, box)  # one line, beside the chooser
    button.click()
    page.get_by_role("slider", name="trusted sample").wait_for(timeout=30_000)
    view = page.viewport_size
    for knob in page.locator(".st-key-knob_row [data-testid='stElementContainer']:has([data-testid='stWidgetLabel'])").all():
        b = knob.bounding_box()
        assert _inside({"left": b["x"], "right": b["x"] + b["width"], "top": b["y"], "bottom": b["y"] + b["height"]},
                       view), (where, b, view)


# Slow tier (make test-slow): 39 s of a make test worker, beside the first screen's fit at 1280 x 720
# (tests/test_dashboard_first_screen_browser.py, slow too); make test keeps tests/test_first_screen.py's checks.
@pytest.mark.slow
def test_the_row_fits_1280x720_above_the_panels_and_serves_a_lessons_step_in_presentation(browser, server):  # noqa: F811
    # two change points: the longest label the change knob has
    page = _open(browser, f"{server}/?n_instances=1500&schedule=growth%40500%2C%20reduction%401000", height=720)
    page.set_viewport_size({"width": 1280, "height": 720})
    page.get_by_role("button", name="Run", exact=True).click()
    _wait_status(page, r"^done · chunk 6/6", 120)
    _assert_row_fits(page, "normal")
    page.get_by_text("Presentation mode").click()
    page.get_by_role("button", name="Next", exact=True).wait_for(timeout=30_000)
    assert not page.locator(".st-key-knob_row").first.is_visible()  # the panel keeps the screen's height
    _open_knobs(page, "presentation")
    page.close()

    # the unknown-noise lesson's step 4 asks to set the trusted sample to 0: the row does it, the sidebar hidden
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.set_default_timeout(30_000)
    page.goto(f"{server}/?lesson=unknown-noise&step=4", timeout=60_000)
    page.locator(".st-key-lesson_step", has_text="Set the trusted sample to 0").wait_for(timeout=60_000)
    from playwright.sync_api import expect

    expect(page.locator('section[data-testid="stSidebar"]')).to_be_hidden(timeout=30_000)
    page.get_by_role("button", name="Run", exact=True).click()
    _wait_status(page, r"^done · ", 300)
    _open_knobs(page, "lesson")
    trusted = _thumb(page, "trusted sample")
    assert trusted.get_attribute("aria-valuetext") == "2.0%"
    _new_plot_after(page, lambda: (trusted.focus(), trusted.press("Home")))
    page.wait_for_url(lambda url: "trusted_fraction" not in url and "lesson=unknown-noise" in url, timeout=30_000)
    _wait_status(page, r"^done · ", 300)
    assert trusted.get_attribute("aria-valuetext") == "0.0%"
    page.close()
