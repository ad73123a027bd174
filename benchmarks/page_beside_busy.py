"""A new page's answer beside busy processes, by where they sit: ``python -m benchmarks.page_beside_busy``.

Starts the dashboard on 127.0.0.1, opens the link a classroom's visitor 6 opens (``benchmarks.classroom``)
in Chromium, and times from opening it until the frame that draws the Run button (timed in the page), for
``--pages`` fresh pages per case. The cases, taking turns ``--rounds`` times (each meets the same moments of
the machine):

- ``idle``: nothing else computes;
- ``same-session``: two processes spin at niceness 10 in this command's session, as run processes did
  before ``dashboard.serving.priority``;
- ``own-group``: two processes spin, each having called ``dashboard.serving.priority.lower_priority(10)`` (a session
  of its own whose scheduling group is at niceness 10), as run processes do now.

Prints the median answer (s) per case and round; ``docs/deploy.md`` (section 5) quotes a run of it.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.classroom import CHROMIUM, CHROMIUM_ARGS, heavy_config, link, open_page
from dashboard.serve import ROOT, serve

SPIN = {
    "same-session": "import os\nos.nice(10)\nwhile True:\n    pass\n",
    "own-group": "from dashboard.serving.priority import lower_priority\nlower_priority(10)\nwhile True:\n    pass\n",
}
CASES = ("idle", "same-session", "own-group")


def answers(browser, url: str, pages: int) -> list[float]:
    """Seconds until the Run button was drawn, one fresh page each."""
    out = []
    for _ in range(pages):
        page, answer = open_page(browser, url, time.monotonic() + 60)
        page.context.close()
        out.append(answer)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=6, help="pages per case and round (default 6)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of the three cases (default 2)")
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} is not installed (apt-get install chromium)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    medians = {case: [] for case in CASES}
    with serve() as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, timeout=60_000)
        target = link(url, heavy_config(5))
        answers(browser, target, 1)  # the server's first page imports the app: not counted
        for _ in range(args.rounds):
            for case in CASES:
                spinners = [subprocess.Popen([sys.executable, "-c", SPIN[case]], cwd=ROOT)
                            for _ in range(2 if case in SPIN else 0)]
                try:
                    time.sleep(1.0 if spinners else 0)
                    medians[case].append(statistics.median(answers(browser, target, args.pages)))
                finally:
                    for s in spinners:
                        s.kill()
                        s.wait(timeout=10)
        browser.close()
    print(f"median seconds until Run is drawn, {args.pages} pages per case and round, {args.rounds} rounds")
    for case in CASES:
        print(f"{case:>13}: " + ", ".join(f"{m:.2f}" for m in medians[case]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
