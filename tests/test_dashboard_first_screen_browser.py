"""The Live run's first screen at 1280 x 720 (issue 38 item 4), in Chromium: at most :data:`MAX_PROSE_WORDS` words of
prose before and after Run, and after Run the one-glance strip and panel (a)'s graph whole above the fold, the strip
saying the numbers of the run's records.

**Prose** is the text of the page's markdown, heading and caption elements (``st.markdown``, ``st.caption``, the
text of ``st.info``, the panels' headings, in the sidebar too) that lies on the screen, counted word by word by each
word's own box (a paragraph cut by the fold counts only its words above it). Not prose: widget labels (buttons,
toggles, inputs, expander titles, help tooltips), the navigation's page links, the figures' text, and numbers: a
word is a run of non-space characters holding a letter, and a unit after a number (s, ms, MB, GB, %) is part of
that number.

The knob row (issue 38 item 2) will sit above the panels, at most :data:`KNOB_ROW_PX` tall. Until the page has it
(an element whose key starts with ``knob``), the fold is checked that much higher, so that the strip and panel (a)
still fit once it is there.
"""

from __future__ import annotations

import re
import time

import pytest

from dashboard.glance import run_strip
from ncld_core.config import RunConfig
from ncld_core.eval.glance import GLANCE_MODELS
from tests.test_dashboard_browser import ARTIFACTS, _open, _wait_status, browser, server  # noqa: F401

pytestmark = pytest.mark.browser

WIDTH, HEIGHT = 1280, 720
MAX_PROSE_WORDS = 60
#: The most the knob row above the panels may take (issue 38 item 2), its gap included.
KNOB_ROW_PX = 90
#: Units that belong to the number before them.
UNITS = {"s", "ms", "MB", "GB", "%"}

# JavaScript: every word of the page's prose elements whose box is on the screen (see the module's description).
PROSE_WORDS = r"""() => {
  const H = window.innerHeight, W = window.innerWidth;
  const kinds = '[data-testid="stMarkdownContainer"], [data-testid="stCaptionContainer"], [data-testid="stHeading"]';
  const notProse = '[data-testid="stWidgetLabel"], [data-testid="stTooltipContent"], [role="tooltip"], summary, '
                 + 'button, label, nav, [data-testid*="Nav"]';
  const words = [], range = document.createRange();
  for (const el of document.querySelectorAll(kinds)) {
    if (el.closest(notProse) || (el.parentElement && el.parentElement.closest(kinds))) continue;
    const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walk.nextNode(); node; node = walk.nextNode()) {
      for (const m of node.data.matchAll(/\S+/g)) {
        range.setStart(node, m.index); range.setEnd(node, m.index + m[0].length);
        const r = range.getBoundingClientRect();
        if (r.width > 0 && r.height > 0 && r.top < H && r.bottom > 0 && r.left < W && r.right > 0) words.push(m[0]);
      }
    }
  }
  return words;
}"""


def prose(page) -> list[str]:
    """The prose words on the screen (see the module's description)."""
    words = page.evaluate(PROSE_WORDS)
    return [w for i, w in enumerate(words)
            if re.search(r"[^\W\d_]", w) and not (w.strip("(),;·") in UNITS and i and re.search(r"\d", words[i - 1]))]


def _fold(page) -> float:
    """The screen's bottom, less the knob row's room while the page has no knob row."""
    has_row = page.locator('[class*="st-key-knob"]').count() > 0
    return HEIGHT - (0 if has_row else KNOB_ROW_PX)


def test_the_prose_rule_counts_words_not_numbers_units_or_labels():
    words = ["done", "·", "chunk", "20/20", "·", "median", "update", "51", "ms", "(stream", "ready", "in", "1.66", "s)",
             "47", "%", "won", "back", "by", "ELM-O"]
    page = type("Page", (), {"evaluate": lambda self, script: words})()
    assert prose(page) == ["done", "chunk", "median", "update", "(stream", "ready", "in", "won", "back", "by", "ELM-O"]


# In the slow tier (.ci/run runs it after make test; 25 s of a make test worker with this module's server start):
# make test keeps its twin without a browser,
# tests/test_first_screen.py (the explanations are help, the strip's place says what to press, panel (a)'s legend
# one row on a wide graph).
@pytest.mark.slow
def test_first_screen_is_numbers_first_and_the_strip_and_panel_a_are_whole(browser, server):  # noqa: F811
    page = _open(browser, server, height=HEIGHT)
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    page.locator(".st-key-glance_strip").get_by_text("Press Run").wait_for(timeout=30_000)
    page.locator(".st-key-run_estimate").wait_for(timeout=30_000)
    time.sleep(1.0)  # the sidebar's last controls
    before = prose(page)
    page.get_by_role("button", name="Run", exact=True).click()
    final = _wait_status(page, r"^(done|stopped|failed) ·", 300)
    assert final.startswith("done"), final
    page.mouse.move(WIDTH - 5, HEIGHT - 5)  # no tooltip over the page
    strip = page.locator(".st-key-glance_strip")
    strip.get_by_text("won back").wait_for(timeout=30_000)
    n = RunConfig().stream.length() // RunConfig().chunk_size
    page.wait_for_function(  # panel (a) drawn at the last chunk (each graph says how many chunks it shows)
        "(n) => { const g = document.querySelector('.st-key-panel_metrics .js-plotly-plot');"
        " return g && g.dataset.chunk === String(n); }", arg=n, timeout=30_000)
    time.sleep(0.5)
    page.screenshot(path=str(ARTIFACTS / "first_screen_1280x720.png"))
    after = prose(page)
    print(f"\nprose words on the first screen: {len(before)} before Run, {len(after)} after")
    assert len(before) <= MAX_PROSE_WORDS, (len(before), " ".join(before))
    assert len(after) <= MAX_PROSE_WORDS, (len(after), " ".join(after))

    # after Run: the strip and panel (a)'s graph (its legend included) are whole on the first screen
    fold = _fold(page)
    boxes = {"strip": strip.bounding_box(),
             "panel (a)": page.locator(".st-key-panel_metrics .js-plotly-plot").bounding_box()}
    for what, box in boxes.items():
        assert box is not None and box["height"] > 0, what
        assert 0 <= box["y"] and box["y"] + box["height"] <= fold, (what, box, fold)
    assert boxes["strip"]["y"] < boxes["panel (a)"]["y"]
    print("boxes (y, bottom):", {k: (round(b["y"]), round(b["y"] + b["height"])) for k, b in boxes.items()}, "fold", fold)

    # the strip says the numbers of the run's records: the same run, computed here (seeded), with the models beside it
    cfg = RunConfig()
    stream = cfg.build_stream()
    plan = cfg.beside_plan(stream)
    assert plan.models == GLANCE_MODELS
    runner = cfg.runner(beside=plan.models)
    chunks = list(runner.iter_run(stream))
    run = type("Run", (), dict(models=runner.model_names, chunk_size=cfg.chunk_size, change_points=[],
                               beside_missing={}))()
    expected = run_strip(run, chunks).replace("**", "").split("  \n")
    shown = [line.strip() for line in strip.inner_text().splitlines() if line.strip()]
    assert shown == expected, (shown, expected)
    page.close()
