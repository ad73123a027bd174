"""The README's picture of the live page: ``python -m benchmarks.screenshot`` (``make screenshot``).

Starts the dashboard (``dashboard.serve``), opens it in headless Chromium at 1400 x 1000, presses Run on
the embedded default (the synthetic stream) and, when the status says the run is done, saves
``docs/figures/live-page.png``. Needs Debian's Chromium at ``/usr/bin/chromium`` and the ``test`` extra
(playwright).
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

from dashboard.serve import ROOT, serve

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
OUT = ROOT / "docs" / "figures" / "live-page.png"


def take(out: Path = OUT, *, width: int = 1400, height: int = 1000, timeout_s: float = 300.0) -> Path:
    """Run the default configuration in a real browser and save the page's first screen to ``out``."""
    from playwright.sync_api import sync_playwright

    with serve() as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, timeout=60_000)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(url, timeout=60_000)
            page.get_by_role("button", name="Run", exact=True).wait_for(timeout=60_000)
            page.get_by_role("button", name="Run", exact=True).click()
            deadline = time.monotonic() + timeout_s
            while not re.search(r"^done", page.locator(".st-key-run_status").inner_text(timeout=30_000)):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the run did not finish within {timeout_s:.0f} s")
                time.sleep(0.5)
            time.sleep(1.0)  # plotly.js draws the last chunk asynchronously
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out))
        finally:
            browser.close()
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    print(f"wrote {take(args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
