"""The README's pictures of the live page: ``python -m benchmarks.screenshot`` (``make screenshot``).

Starts the dashboard (``dashboard.serve``), opens it in headless Chromium at 1400 x 1000, presses Run on
the embedded default (the synthetic stream) and, when the status says the run is done, saves
``docs/figures/live-page.png``. With ``--presentation`` it then switches to presentation mode and saves
every panel, stepped through with Next, at each screen size presentation mode promises
(:data:`PRESENTATION_SIZES`): ``docs/figures/presentation-<width>x<height>-<letter>.png``. Needs Debian's
Chromium at ``/usr/bin/chromium`` and the ``test`` extra (playwright).
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from dashboard import panels
from dashboard.serve import ROOT, serve

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
FIGURES = ROOT / "docs" / "figures"
OUT = FIGURES / "live-page.png"
#: The screens presentation mode is laid out for (width, height in CSS px).
PRESENTATION_SIZES = ((1280, 720), (1024, 768), (820, 768))

#: JavaScript: true once the shown panel's graph (if it has one) is drawn at its width.
DRAWN = """(panel) => { const box = document.querySelector('.st-key-panel_' + panel);
  if (!box) return false;
  const gd = box.querySelector('.js-plotly-plot');
  if (!gd) return box.innerText.trim().length > 0;
  return gd._fullLayout && Math.abs(gd._fullLayout.width - gd.clientWidth) <= 1; }"""


def _wait_done(page, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not re.search(r"^done", page.locator(".st-key-run_status").inner_text(timeout=30_000)):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the run did not finish within {timeout_s:.0f} s")
        time.sleep(0.5)


def _open_and_run(browser, url: str, width: int, height: int, timeout_s: float, query: str = ""):
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(url + query, timeout=60_000)
    page.get_by_role("button", name="Run", exact=True).wait_for(timeout=60_000)
    page.get_by_role("button", name="Run", exact=True).click()
    _wait_done(page, timeout_s)
    time.sleep(1.0)  # plotly.js draws the last chunk asynchronously
    return page


#: JavaScript: the keys of the panels and their parts on the page.
SHOWN = """() => [...document.querySelectorAll('[class*="st-key-panel_"]')]
  .map(e => [...e.classList].find(c => c.startsWith('st-key-panel_'))).join(' ')"""


def _shown_panels(page) -> list[str]:
    """The keys of the panels on the page (their tables' boxes left out)."""
    keys = {p.key for p in panels.PANELS}
    return [k.removeprefix("st-key-panel_") for k in page.evaluate(SHOWN).split()
            if k.removeprefix("st-key-panel_") in keys]


def present(page, panel: str) -> None:
    """In presentation mode: step with Next until ``panel`` is the one shown and drawn.

    One click per panel, and the next click only once the panel after it is the only one on the page: a rerun's
    layout can take the shown panel away before it draws the next one (the choice of variants sits above one of
    them), and a click in that gap stepped twice (seen on a loaded machine)."""
    keys = [p.key for p in panels.PANELS]
    one = f"() => ({SHOWN})().split(' ').filter(k => k && !k.endsWith('_table')).length === 1"
    try:  # the page may still be leaving the page of all panels
        page.wait_for_function(one, timeout=30_000)
    except Exception as e:  # noqa: BLE001 - say what the page shows
        raise AssertionError(f"presentation mode shows {page.evaluate(SHOWN)!r}, not one panel") from e
    for _ in range(len(keys)):
        shown = _shown_panels(page)
        if shown == [panel]:
            break
        if len(shown) != 1:
            raise AssertionError(f"presentation mode shows {page.evaluate(SHOWN)!r}, not one panel")
        after = keys[(keys.index(shown[0]) + 1) % len(keys)]
        page.get_by_role("button", name="Next", exact=True).click()
        try:
            page.wait_for_function(f"(after) => ({SHOWN})().split(' ').filter(k => !k.endsWith('_table'))"
                                   f".join(' ') === 'st-key-panel_' + after", arg=after, timeout=30_000)
        except Exception as e:  # noqa: BLE001 - say what the page shows instead
            raise AssertionError(f"Next from panel {shown[0]!r} did not show {after!r} alone within 30 s; "
                                 f"on the page: {page.evaluate(SHOWN)!r}") from e
    try:
        page.wait_for_function(DRAWN, arg=panel, timeout=60_000)
    except Exception as e:  # noqa: BLE001 - say which panel, and what the page shows
        sizes = page.evaluate("""(panel) => [...document.querySelectorAll('.st-key-panel_' + panel + ' .js-plotly-plot')]
            .map(gd => [gd._fullLayout ? gd._fullLayout.width : null, gd.clientWidth])""", panel)
        raise AssertionError(f"panel {panel!r} not drawn within 60 s (graph widths drawn, shown: {sizes}); "
                             f"on the page: {page.evaluate(SHOWN)!r}") from e
    time.sleep(0.5)


def take(out: Path = OUT, *, width: int = 1400, height: int = 1000, timeout_s: float = 300.0) -> Path:
    """Run the default configuration in a real browser and save the page's first screen to ``out``."""
    from playwright.sync_api import sync_playwright

    with serve() as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, timeout=60_000)
        try:
            page = _open_and_run(browser, url, width, height, timeout_s)
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out))
        finally:
            browser.close()
    return out


def take_presentation(folder: Path = FIGURES, *, sizes=PRESENTATION_SIZES, timeout_s: float = 300.0) -> list[Path]:
    """Every panel in presentation mode at each of ``sizes``, as the viewport shows it (no scrolling)."""
    from playwright.sync_api import sync_playwright

    written = []
    with serve() as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, timeout=60_000)
        try:
            for width, height in sizes:
                page = _open_and_run(browser, url, width, height, timeout_s)
                page.get_by_text("Presentation mode").click()
                page.get_by_role("button", name="Next", exact=True).wait_for(timeout=60_000)
                for i, panel in enumerate(panels.PANELS):
                    present(page, panel.key)
                    path = folder / f"presentation-{width}x{height}-{panels.letter(i)}.png"
                    path.parent.mkdir(parents=True, exist_ok=True)
                    page.screenshot(path=str(path))
                    written.append(path)
                page.close()
        finally:
            browser.close()
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--presentation", action="store_true",
                        help="instead: every panel in presentation mode at 1280x720, 1024x768 and 820x768")
    args = parser.parse_args(argv)
    if args.presentation:
        for path in take_presentation(args.out.parent):
            print(f"wrote {path}")
        return 0
    print(f"wrote {take(args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
