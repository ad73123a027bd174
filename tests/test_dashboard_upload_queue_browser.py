"""An upload's parse waits in the server's one line in a real browser (Chromium): a server computing one job at a
time is busy with a visitor's run; a second visitor's upload says its place on the Datasets & stream page, Cancel
ends it, Read it queues it again, and once the run is stopped the page shows the parsed file with no click (the
status is a fragment that reruns the page when the parse ends)."""

from __future__ import annotations

import re
import time
import urllib.parse

import numpy as np
import pytest

from dashboard.serve import serve
from ncld_core.config import RunConfig
from tests.test_dashboard_browser import ARTIFACTS, _need_chromium, _wait_status, browser  # noqa: F401
from tests.test_dashboard_queue_browser import LONG

# The run that holds the slot until its visitor stops it: 1,000 chunks (about 30 s idle), so it cannot end before
# the upload's page has opened, queued, been cancelled and queued again (LONG's 50 chunks took 1.5 s)
HOLDING = RunConfig(**{**LONG.to_dict(), "n_instances": 300_000})

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server():
    """This module's server: one job (run, sweep or upload parse) computed at a time."""
    _need_chromium()
    pytest.importorskip("playwright.sync_api")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with open(ARTIFACTS / "streamlit_server_upload_queue.log", "w") as log:
        with serve(env={"NCLD_MAX_CONCURRENT_RUNS": "1"}, log=log) as url:
            yield url


def _arff() -> bytes:
    rng = np.random.default_rng(2)
    lines = ["@relation 'queued: -C 3'", *[f"@attribute l{j} {{0,1}}" for j in range(3)],
             *[f"@attribute x{j} numeric" for j in range(3)], "@data"]
    for _ in range(300):
        x = rng.normal(size=3)
        lines.append(",".join(str(int(v > 0)) for v in x) + "," + ",".join(f"{v:.4f}" for v in x))
    return "\n".join(lines).encode()


def _wait_text(page, pattern: str, timeout_s: float, *, gone: bool = False) -> str:
    """Wait until the page's text matches ``pattern`` (regex; ``gone``: until it no longer does); the text."""
    deadline = time.monotonic() + timeout_s
    text = ""
    while time.monotonic() < deadline:
        text = page.locator("body").inner_text()
        if bool(re.search(pattern, text)) != gone:
            return text
        time.sleep(0.2)
    raise AssertionError(f"the page {'still' if gone else 'never'} matched {pattern!r} after {timeout_s} s")


# In the slow tier: a run, two browser sessions and a parse (90-150 s on this machine under a load of 16-20)
@pytest.mark.slow
def test_an_upload_waits_in_line_is_cancelled_and_is_read_when_the_slot_frees(browser, server, tmp_path):  # noqa: F811
    runner = browser.new_context(viewport={"width": 1400, "height": 1200})
    a = runner.new_page()
    a.goto(f"{server}/?{urllib.parse.urlencode(HOLDING.to_query_params())}", timeout=60_000)
    a.get_by_role("button", name="Run", exact=True).click(timeout=60_000)
    _wait_status(a, r"running · chunk [1-9]", 120)  # the server's one slot is taken

    uploader = browser.new_context(viewport={"width": 1400, "height": 1200})
    b = uploader.new_page()
    b.set_default_timeout(30_000)
    b.goto(f"{server}/data?dataset=upload", timeout=60_000)
    path = tmp_path / "queued.arff"
    path.write_bytes(_arff())
    b.locator(".st-key-w_upload_arff input[type=file]").set_input_files(str(path))
    main = b.locator("[data-testid=stMain]")
    main.get_by_text("waiting: 1st in line", exact=False).wait_for(timeout=60_000)
    text = main.inner_text()
    assert ("the server computes 1 job (runs, sweeps, upload parses) at once; this parse starts when one ends"
            in text), text
    b.get_by_text("waiting: 1st in line", exact=False).first.wait_for()  # (the sidebar says it too)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    b.screenshot(path=str(ARTIFACTS / "upload_waiting.png"))

    b.locator(".st-key-upload_cancel_data button").first.click()  # (a fragment rerun may leave a stale copy)
    _wait_text(b, "Reading this upload was cancelled", 30)
    _wait_text(b, "1st in line", 30, gone=True)  # (the page's last run removes the status it drew before)

    b.locator(".st-key-upload_read button").first.click()
    main.get_by_text("waiting: 1st in line", exact=False).wait_for(timeout=30_000)
    a.get_by_role("button", name="Stop", exact=True).click()  # the run's visitor stops it: the slot frees
    # read with no click on b's page: the hub begins the parse, the status fragment reruns the page once it ends
    _wait_text(b, r"queued: 300 instances, 3 features, 3 labels", 60)
    _wait_text(b, "1st in line", 30, gone=True)
    b.screenshot(path=str(ARTIFACTS / "upload_read.png"))
    for ctx in (runner, uploader):
        ctx.close()
