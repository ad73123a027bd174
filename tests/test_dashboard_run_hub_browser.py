"""Two visitors pressing Run on the same settings see one computation: the second page follows the first's run
("following"), a third visitor later gets it replayed ("replayed"), and all three show the same results."""

from __future__ import annotations

import re
import time
import urllib.parse

import pytest

from ncld_core.config import RunConfig
from tests.test_dashboard_browser import _status, _table, _wait_status, browser, server  # noqa: F401

pytestmark = pytest.mark.browser

#: Fifty chunks of a few tenths of a second: the first run is still computing when the second page presses Run
#: (with fourteen, a fast CI machine had finished it before the second click arrived, and the page replayed it).
CFG = RunConfig(n_instances=15000, chunk_size=300, n_features=20, n_labels=6, n_neighbors=5, n_hidden=400,
                models=["ELM-O"], references=False, seed=4242)
N_CHUNKS = CFG.n_instances // CFG.chunk_size


def _visitor(browser, server):  # noqa: F811
    ctx = browser.new_context(viewport={"width": 1400, "height": 1600})  # a session of its own
    page = ctx.new_page()
    page.set_default_timeout(30_000)
    page.goto(f"{server}/?{urllib.parse.urlencode(CFG.to_query_params())}", timeout=60_000)
    page.get_by_role("button", name="Run", exact=True).wait_for(timeout=60_000)
    return ctx, page


def _caption(page) -> str:
    return page.locator("[data-testid='stCaptionContainer']").filter(has_text="This run:").first.inner_text()


# In the slow tier (.ci/run runs it after make test): 25-32 s of a make test worker; make test keeps following a run
# (the websocket visitors of test_dashboard_queue_browser.py) and replaying one (test_dashboard_app.py's AppTest).
@pytest.mark.slow
def test_two_pages_pressing_run_on_one_preset_compute_it_once(browser, server):  # noqa: F811
    (ca, a), (cb, b) = _visitor(browser, server), _visitor(browser, server)
    a.get_by_role("button", name="Run", exact=True).click()
    _wait_status(a, rf"running · chunk [1-9]\d*/{N_CHUNKS}", 120)
    b.get_by_role("button", name="Run", exact=True).click()
    deadline = time.monotonic() + 60
    while "following" not in _caption(b) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _caption(b).startswith("following: this run is being computed for another visitor too"), _caption(b)
    assert "following" not in _caption(a) and "replayed" not in _caption(a)
    done_a = _wait_status(a, rf"^done · chunk {N_CHUNKS}/{N_CHUNKS}", 300)
    done_b = _wait_status(b, rf"^done · chunk {N_CHUNKS}/{N_CHUNKS}", 120)
    # one computation: the same measured chunk times on both pages (their medians are in the status line)
    median = re.compile(r"median compute (\d+) ms")
    assert median.search(done_a).group(1) == median.search(done_b).group(1)
    assert _table(a, "panel_summary") == _table(b, "panel_summary")
    assert _caption(b).startswith("followed: computed once, for another visitor and this page"), _caption(b)

    cc, c = _visitor(browser, server)  # a third visitor, later
    c.get_by_role("button", name="Run", exact=True).click()
    _wait_status(c, rf"^done · chunk {N_CHUNKS}/{N_CHUNKS}", 60)
    assert _caption(c).startswith("replayed: computed for an earlier visitor"), _caption(c)
    assert _table(c, "panel_summary") == _table(a, "panel_summary")
    for ctx in (ca, cb, cc):
        ctx.close()
