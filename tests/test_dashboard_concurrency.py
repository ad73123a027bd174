"""Ten visitors at once: ten browser contexts on one dashboard server, each running its own stream.

Each context gets its own correct results (equal to the core run on the same
configuration), none errors, the server stays up; the wall time is recorded in
tests/artifacts/dashboard_concurrency.json.
"""

from __future__ import annotations

import json
import time
import urllib.parse
import urllib.request

import pytest

from ncld_core.config import RunConfig
from tests.test_dashboard_browser import (ARTIFACTS, _server_error_lines, _server_log, _status, _table,  # noqa: F401
                                          browser, server)

pytestmark = pytest.mark.browser

N_USERS = 10


def _config(user: int) -> RunConfig:
    # every visitor a different stream: seed, drift point and model
    return RunConfig(n_instances=1500, chunk_size=150, n_features=8, n_labels=6, shuffle_seed=user, seed=user,
                     schedule=f"growth@{600 + 150 * (user % 4)}", models=["ELM-O" if user % 2 else "ELM-II"],
                     references=False)


#: Per visitor: whether its page's renderer crashed, and the last errors its console or script reported.
SEEN: dict[int, dict] = {}


def _watch_page(page, user: int) -> None:
    seen = SEEN[user] = {"crashed": False, "errors": [], "sockets": [], "navigated": []}
    t0 = time.monotonic()

    def at() -> str:
        return f"{time.monotonic() - t0:.1f} s"

    def socket(ws) -> None:  # the page's websockets: when each opened and closed, how many frames it received
        entry = {"opened": at(), "received": 0}
        seen["sockets"].append(entry)
        ws.on("framereceived", lambda _frame: entry.update(received=entry["received"] + 1))
        ws.on("close", lambda _ws: entry.update(closed=at()))
        ws.on("socketerror", lambda err: entry.update(error=f"{at()}: {err}"[:120]))

    page.on("crash", lambda _page: seen.update(crashed=at()))
    page.on("pageerror", lambda exc: seen["errors"].append(f"{at()} pageerror: {exc}"[:200]))
    page.on("console", lambda msg: msg.type in ("error", "warning") and seen["errors"].append(
        f"{at()} console {msg.type}: {msg.text}"[:200]))
    page.on("framenavigated", lambda frame: frame == page.main_frame and seen["navigated"].append(at()))
    page.on("websocket", socket)


def _stuck(page, user: int, *, screenshot: bool) -> str:
    """What a visitor whose run never ended sees: the page's text (its start), a screenshot in the artifacts (the
    first few stuck pages': each may take seconds, and the message must come before pytest's timeout), and whether
    its renderer crashed or its console reported errors (a failure in CI then says where it stopped)."""
    seen = SEEN.get(user, {})
    try:
        text = page.evaluate("(document.querySelector('[data-testid=stMain]') || document.body).innerText"
                             ".replace(/\\s+/g, ' ').slice(0, 500)")
        text = f"status boxes {page.locator('.st-key-run_status').count()}, {text}"
        if screenshot:
            page.screenshot(path=str(ARTIFACTS / f"dashboard_concurrency.user{user}.png"), timeout=10_000)
    except Exception as exc:  # noqa: BLE001 - a crashed or frozen page: said as such
        text = f"(page unreadable: {type(exc).__name__}: {str(exc)[:200]})"
    errors = seen.get("errors", [])
    shown = errors if len(errors) <= 6 else errors[:3] + ["..."] + errors[-3:]
    return (f"user {user}: crashed={seen.get('crashed')}, navigated at {seen.get('navigated')}, "
            f"sockets={seen.get('sockets')}, {len(errors)} errors and warnings ({shown}), text: {text!r}")


def _server_errors() -> str:
    return f"; server log: {len(_server_log())} lines, last errors: {_server_error_lines()[-8:]}"


@pytest.mark.slow
def test_ten_concurrent_visitors_get_their_own_results(browser, server):  # noqa: F811
    expected = {}
    for user in range(N_USERS):
        cfg = _config(user)
        summary = cfg.runner().run(cfg.build_stream()).summary()
        expected[user] = (cfg.models[0], f"{summary.iloc[0]['micro_f1']:.4f}")

    contexts, pages = [], []
    t0 = time.perf_counter()
    for user in range(N_USERS):
        ctx = browser.new_context(viewport={"width": 1400, "height": 1600})
        contexts.append(ctx)
        url = f"{server}/?{urllib.parse.urlencode(_config(user).to_query_params())}"
        page = ctx.new_page()
        _watch_page(page, user)
        page.set_default_timeout(30_000)
        page.goto(url, timeout=60_000)
        page.get_by_role("button", name="Run", exact=True).wait_for(timeout=60_000)
        pages.append(page)
    for page in pages:  # start all runs before waiting for any
        page.get_by_role("button", name="Run", exact=True).click()
    deadline = time.monotonic() + 420  # inside pytest's 600 s, so a slow run fails with the statuses below
    pending = set(range(N_USERS))
    statuses, last = {}, {}
    while pending and time.monotonic() < deadline:
        for user in sorted(pending):
            text = last[user] = _status(pages[user], missing_ok=True)
            if text.startswith(("done", "stopped", "failed")):
                statuses[user] = text
                pending.discard(user)
        time.sleep(0.5)
    elapsed = time.perf_counter() - t0
    stuck = [_stuck(pages[user], user, screenshot=i < 3) for i, user in enumerate(sorted(pending))]
    assert not pending, (f"still running after 420 s: {sorted(pending)}; last seen: {last}; "
                         + "; ".join(stuck) + _server_errors())

    for user, page in enumerate(pages):
        assert statuses[user].startswith("done · chunk 10/10"), (user, statuses[user])
        rows = _table(page, "panel_summary")
        header, body = rows[0], rows[1:]
        assert len(body) == 1, body
        name, f1 = expected[user]
        assert body[0][0] == name
        assert body[0][header.index("Micro-F1")] == f1, (user, body[0], f1)
        assert page.locator(".stException").count() == 0
    with urllib.request.urlopen(f"{server}/_stcore/health", timeout=5) as r:
        assert r.read().strip() == b"ok"
    for ctx in contexts:
        ctx.close()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    report = {"visitors": N_USERS, "seconds_open_to_all_done": round(elapsed, 2),
              "stream": "synthetic 1500 x 8, 6 labels, chunks of 150, one model each"}
    (ARTIFACTS / "dashboard_concurrency.json").write_text(json.dumps(report, indent=2))
    print(f"\n{N_USERS} concurrent visitors: all done in {elapsed:.1f} s")
