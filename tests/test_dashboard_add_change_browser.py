"""The sidebar's "Add a change point" on a live page in headless Chromium, the browser slow to take in the script
run the click made (as under load: ``make bench`` section 8 lost the change point in 1 run of 3).

The browser's link to the server is routed through the test (Playwright's ``route_web_socket``): the end of the
click's script run (``script_finished``, and what follows it) is held back 1.5 s, while the run it started polls
(its fragment's ``run_every``). The browser's polls then still carry the knob row's choice of a change's kind
("none"), which the page no longer shows; the added change point must stay. (The AppTest twin,
tests/test_knob_row.py, sends that stale value itself.)"""

from __future__ import annotations

import pytest

from tests.test_dashboard_browser import _wait_status, browser, server  # noqa: F401

pytestmark = pytest.mark.browser

#: How long the end of the click's script run is held back, s (the run's fragment polls every 0.2 s).
HOLD_S = 1.5


# In the slow tier (.ci/run runs it after make test; about 23 s of make test's browser worker): make test keeps its
# AppTest twin (tests/test_knob_row.py: test_a_knob_the_page_no_longer_shows_moves_nothing), which sends the stale
# value itself.
@pytest.mark.slow
def test_a_change_point_added_on_a_live_page_stays_when_the_browser_is_slow(browser, server):  # noqa: F811
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(30_000)
    link = {"hold": False, "held": [], "client": None}

    def route(ws):
        upstream = ws.connect_to_server()
        link["client"] = ws

        def from_server(message):
            if link["held"]:  # in order: everything after a held message waits too
                link["held"].append(message)
                return
            if link["hold"] and isinstance(message, bytes):
                msg = ForwardMsg()
                msg.ParseFromString(message)
                if msg.WhichOneof("type") == "script_finished":
                    link["held"].append(message)
                    return
            ws.send(message)

        upstream.on_message(from_server)
        ws.on_message(upstream.send)

    page.route_web_socket("**/_stcore/stream", route)
    page.goto(server, timeout=60_000)
    page.get_by_role("button", name="Run", exact=True).click(timeout=60_000)
    _wait_status(page, r"^done · chunk", 180)
    side = page.locator('[data-testid="stSidebar"]')
    link["hold"] = True
    side.get_by_role("button", name="Add a change point").click()
    page.wait_for_timeout(HOLD_S * 1000)
    assert link["held"], "the click's script run did not end within the hold (the test held nothing back)"
    link["hold"] = False
    held, link["held"] = link["held"], []
    for message in held:
        link["client"].send(message)
    _wait_status(page, r"^done · chunk", 180)  # the change point's run
    side.get_by_label("at instance (change 1)", exact=True).wait_for(timeout=10_000)
    assert "schedule=growth" in page.url
    page.close()
