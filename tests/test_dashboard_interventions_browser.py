"""An intervention in a real browser (issue 38, done-when): "labels grow now" pressed mid-run is drawn on the panels,
the page goes on from its chunk (never back to chunk 0), and the run's link, opened in a fresh page and run, gives the
same records (the per-chunk CSV, all but the seconds).

Its own server, whose finished runs are kept for a millisecond only: the link's run is computed again, not replayed."""

from __future__ import annotations

import io
import re
import time
import urllib.parse
from pathlib import Path

import pandas as pd
import pytest

from dashboard.serve import serve
from ncld_core.config import RunConfig
from tests.test_dashboard_browser import ARTIFACTS, DATA_DIR, _need_chromium, _status, _wait_status, \
    browser  # noqa: F401 (its browser, on this module's server)

pytestmark = pytest.mark.browser

#: Forty chunks, the change of regime a growth can follow at chunk 2. Its hidden nodes pace each chunk (about a quarter
#: of a second here): the press acts about two seconds after chunk 4 is drawn (the row of buttons is redrawn once a
#: second), and a faster run could end before it (commit 7cb8b24 measured it).
CFG = RunConfig(n_instances=12000, chunk_size=300, n_features=20, n_labels=6, n_neighbors=5, n_hidden=700,
                models=["ELM-O"], schedule="reduction@600", seed=3838)
N = CFG.n_instances // CFG.chunk_size

# JavaScript: after it is called, every chunk count the cardinality graph is drawn with (its data-chunk), and the
# time it is out of the page, in window.__ncldSeen.
OBSERVE_CHUNKS = """
() => {
  window.__ncldSeen = {chunks: [], gone: 0, since: null, events: []};
  const note = () => {
    const gd = document.querySelector('.st-key-panel_cardinality .js-plotly-plot');
    const seen = window.__ncldSeen;
    const state = gd ? (gd.dataset.chunk || 'nochunk') : 'absent';
    const last = seen.events[seen.events.length - 1];
    if (!last || last[1] !== state) seen.events.push([Math.round(performance.now()), state]);
    if (gd && gd.dataset.chunk) {
      seen.chunks.push(Number(gd.dataset.chunk));
      if (seen.since !== null) { seen.gone += performance.now() - seen.since; seen.since = null; }
    } else if (seen.since === null) seen.since = performance.now();
  };
  new MutationObserver(note).observe(document.body, {subtree: true, childList: true, attributes: true,
                                                     attributeFilter: ['data-chunk']});
  note();
}
"""


@pytest.fixture(scope="module")
def server():
    _need_chromium()
    pytest.importorskip("playwright.sync_api")
    env = {"NCLD_RUN_CACHE_TTL_S": "0.001", **({"NCLD_DATA_DIR": str(DATA_DIR)} if DATA_DIR.is_dir() else {})}
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with open(ARTIFACTS / "streamlit_server_interventions.log", "w") as log:
        try:
            with serve(env=env, log=log) as url:
                yield url
        except RuntimeError as exc:
            pytest.fail(f"{exc}; see {ARTIFACTS / 'streamlit_server_interventions.log'}")


def _page(browser, url):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1600}, accept_downloads=True)  # a session of its own
    page = ctx.new_page()
    page.set_default_timeout(30_000)
    page.goto(url, timeout=60_000)
    page.get_by_role("button", name="Run", exact=True).wait_for(timeout=60_000)
    return ctx, page


def _records(page) -> pd.DataFrame:
    """The run's per-chunk CSV, downloaded as a visitor would, without its timings."""
    button = page.get_by_role("button", name="Per-chunk CSV")
    button.wait_for(timeout=60_000)
    with page.expect_download(timeout=60_000) as dl:
        button.click()
    text = Path(dl.value.path()).read_text(encoding="utf-8")
    assert not text.startswith("#"), text[:80]  # a complete run
    return pd.read_csv(io.StringIO(text)).drop(columns=["seconds"])


# In the slow tier: two runs of 40 chunks in niced processes, about a minute on two shared cores.
@pytest.mark.slow
def test_labels_grow_now_mid_run_is_drawn_and_its_link_reproduces_the_records(browser, server):
    ctx, page = _page(browser, f"{server}/?{urllib.parse.urlencode(CFG.to_query_params())}")
    page.get_by_role("button", name="Run", exact=True).click()
    _wait_status(page, rf"running · chunk ([4-9]|1\d)/{N}", 120)  # by 19: the press acts some 8 chunks later
    page.locator(".st-key-panel_cardinality .js-plotly-plot[data-chunk]").wait_for(timeout=60_000)
    page.evaluate(OBSERVE_CHUNKS)
    page.get_by_role("button", name="labels grow now").click()
    page.wait_for_url(re.compile(r"schedule=reduction%40600%2C\+growth%40\d+"), timeout=60_000)
    k = int(re.search(r"growth%40(\d+)", page.url).group(1)) // CFG.chunk_size
    assert 4 <= k < N
    page.get_by_text(re.compile(rf"labels grow now.*chunk {k}\)")).wait_for(timeout=60_000)
    # the change is drawn on the panels: the kind over its line in (b), a diamond in (d)'s row of true changes
    card = page.locator(".st-key-panel_cardinality .js-plotly-plot")
    card.locator(".annotation-text", has_text="growth").wait_for(timeout=60_000)
    assert "growth" in " ".join(page.locator(".st-key-panel_timeline .js-plotly-plot text").all_text_contents())
    done = _wait_status(page, rf"^done · chunk {N}/{N}", 300)
    seen = page.evaluate("window.__ncldSeen")
    # never back to chunk 0: from the press on, each drawing shows at least as many chunks as the one before
    drawn = seen["chunks"]
    assert drawn and all(b >= a for a, b in zip(drawn, drawn[1:])), (k, seen["events"])
    # its graph is updated in place: never out of the page after the press (an owner of its own emptied it then)
    assert seen["gone"] == 0 and seen["since"] is None, seen["events"]
    print(f"\nintervention at chunk {k}: {len(seen['chunks'])} drawings of the cardinality graph, none out of the "
          f"page; {done}")
    first = _records(page)
    assert sorted(first["chunk"].unique()) == list(range(N))

    ctx2, fresh = _page(browser, page.url)  # the run's link, in a fresh session
    assert fresh.get_by_role("button", name="labels grow now").count() == 0  # a link starts nothing
    fresh.get_by_role("button", name="Run", exact=True).click()
    _wait_status(fresh, rf"^done · chunk {N}/{N}", 300)
    assert "replayed" not in fresh.locator("[data-testid='stCaptionContainer']").all_inner_texts().__str__()
    second = _records(fresh)
    pd.testing.assert_frame_equal(first, second)
    assert _status(page).startswith("done")
    ctx.close()
    ctx2.close()
