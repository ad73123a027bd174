"""A server that computes one run at a time: a second visitor's run waits in line, the page says its place,
and it starts by itself when the first ends (a class on one server, NCLD_MAX_CONCURRENT_RUNS)."""

from __future__ import annotations

import urllib.parse

import pytest

from dashboard.serve import serve
from ncld_core.config import RunConfig
from tests.test_dashboard_browser import ARTIFACTS, _need_chromium, _status, _wait_status, browser  # noqa: F401

pytestmark = pytest.mark.browser

#: About twenty chunks of a few tenths of a second each; two seeds: two distinct runs (no replay).
LONG = RunConfig(n_instances=6000, chunk_size=300, n_features=20, n_labels=6, n_neighbors=5, n_hidden=400,
                 models=["ELM-O"], references=False)


@pytest.fixture(scope="module")
def server():
    """This module's server (it overrides the browser module's ``server``; its ``browser`` fixture then opens
    Chromium for this one): one run computed at a time."""
    _need_chromium()
    pytest.importorskip("playwright.sync_api")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with open(ARTIFACTS / "streamlit_server_queue.log", "w") as log:
        with serve(env={"NCLD_MAX_CONCURRENT_RUNS": "1"}, log=log) as url:
            yield url


def _visitor(browser, url, seed):  # noqa: F811
    ctx = browser.new_context(viewport={"width": 1400, "height": 1200})  # a session of its own
    page = ctx.new_page()
    page.set_default_timeout(30_000)
    cfg = RunConfig(**{**LONG.to_dict(), "seed": seed})
    page.goto(f"{url}/?{urllib.parse.urlencode(cfg.to_query_params())}", timeout=60_000)
    page.get_by_role("button", name="Run", exact=True).wait_for(timeout=60_000)
    return ctx, page


def test_the_second_run_waits_in_line_says_so_and_starts_when_the_first_ends(browser, server):  # noqa: F811
    (ca, a), (cb, b) = _visitor(browser, server, 11), _visitor(browser, server, 12)
    a.get_by_role("button", name="Run", exact=True).click()
    _wait_status(a, r"running · chunk [1-9]\d*/20", 120)
    b.get_by_role("button", name="Run", exact=True).click()
    waiting = _wait_status(b, r"^waiting: 1st in line", 30)
    assert "the server computes 1 run at once; this one starts when a run ends" in waiting, waiting
    assert _status(a).startswith("running"), "the first run goes on while the second waits"
    _wait_status(a, r"^done · chunk 20/20", 300)
    _wait_status(b, r"^(running · chunk [2-9]|running · chunk \d\d|done) ", 60)  # started by itself: no second click
    for ctx in (ca, cb):
        ctx.close()
