"""Guards in a real browser: a run that cannot start is refused next to its control and recovers, and an upload
that would break the solve is refused with its column and row named.

The same paths are covered by AppTest in ``tests/test_dashboard_app.py``; here they are clicked in Chromium at
820 x 1000 (the narrow layout), with screenshots in ``tests/artifacts/``.
"""

from __future__ import annotations

import urllib.parse

import numpy as np
import pytest

from ncld_core.config import RunConfig
from tests.test_dashboard_browser import ARTIFACTS, DATA_DIR, _open, _wait_status, browser, server  # noqa: F401

pytestmark = pytest.mark.browser


def _errors(page) -> list[str]:
    return [t.strip() for t in page.locator(".stAlert").all_inner_texts() if t.strip()]


def _run_enabled(page) -> bool:
    return page.get_by_role("button", name="Run", exact=True).is_enabled()


# In the slow tier (.ci/run runs it after make test; about 17 s of a make test worker): make test keeps its twin
# without a browser, the same enron link refused before Run (tests/test_dashboard_app.py:
# test_a_schedule_the_datasets_pools_cannot_hold_is_flagged_before_run); the recovery is checked here only.
@pytest.mark.slow
def test_a_run_that_cannot_start_is_refused_next_to_its_control_and_recovers(browser, server, tmp_path):  # noqa: F811
    if not (DATA_DIR / "enron.arff").is_file():
        pytest.skip(f"enron.arff not found in {DATA_DIR}")
    # enron has 196 single-label instances: growth at 800 in chunks of 200 cannot be built (issue 17's example)
    cfg = RunConfig(dataset="enron", chunk_size=200, schedule="growth@800")
    page = _open(browser, f"{server}/?{urllib.parse.urlencode(cfg.to_query_params())}", height=1000)
    page.set_viewport_size({"width": 820, "height": 1000})
    schedule_box = page.locator(".stAlert", has_text="needs at least 800 single-label")
    schedule_box.first.wait_for(timeout=30_000)
    assert "196 single-label" in schedule_box.first.inner_text()
    assert not _run_enabled(page)
    assert not page.get_by_role("button", name="Stop", exact=True).is_enabled()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "guard_schedule_820.png"))

    # the visitor moves the change to where the pools hold it: the refusal goes, Run works, the run ends
    fixed = RunConfig(dataset="enron", chunk_size=200, schedule="growth@150", n_instances=600)
    page.goto(f"{server}/?{urllib.parse.urlencode(fixed.to_query_params())}")
    page.get_by_role("button", name="Run", exact=True).wait_for(timeout=60_000)
    page.wait_for_function("() => ![...document.querySelectorAll('.stAlert')].some(e => "
                           "e.innerText.includes('single-label instances'))", timeout=30_000)
    assert _run_enabled(page)
    page.get_by_role("button", name="Run", exact=True).click()
    final = _wait_status(page, r"^(done|stopped|failed) ·", 300)
    assert final.startswith("done · chunk 3/3"), final
    page.close()


def _arff(value_row: int) -> bytes:
    rng = np.random.default_rng(0)
    lines = ["@relation 'tiny: -C 3'", *[f"@attribute l{j} {{0,1}}" for j in range(3)],
             *[f"@attribute x{j} numeric" for j in range(3)], "@data"]
    for i in range(300):
        x = rng.normal(size=3)
        if i == value_row - 1:
            x[2] = 1e308  # finite, but no solve survives it
        lines.append(",".join(str(int(v > 0)) for v in x) + "," + ",".join(repr(float(v)) for v in x))
    return "\n".join(lines).encode()


# In the slow tier too (16-17 s of a make test worker with this module's server start): make test keeps its twin
# without a browser, the same refusal at load (tests/test_dashboard_app.py:
# test_upload_with_values_that_break_the_solve_is_refused_at_load); the page at 820 px is checked here only.
@pytest.mark.slow
def test_an_upload_that_would_break_the_solve_is_refused_with_column_and_row(browser, server, tmp_path):  # noqa: F811
    page = _open(browser, f"{server}/?dataset=upload", height=1000)
    page.set_viewport_size({"width": 820, "height": 1000})
    upload = page.locator(".st-key-w_upload_arff input[type=file]")
    upload.wait_for(state="attached", timeout=30_000)
    path = tmp_path / "huge_value.arff"
    path.write_bytes(_arff(value_row=151))
    upload.set_input_files(str(path))
    box = page.locator(".stAlert", has_text="data row 151")
    # the parse is a job of the server's queue: said by the page's next run after it ends (a fresh server's first
    # parse took 20-37 s here under a load of 20 on 2 cores, before and after that change)
    box.first.wait_for(timeout=90_000)
    text = box.first.inner_text()
    assert "feature 'x2'" in text and "1e+308" in text, text
    # the Live run page says why Run is disabled, with the same reason (once this script run has drawn it)
    page.locator(".stAlert", has_text="Run is disabled").filter(has_text="data row 151").first.wait_for(timeout=30_000)
    assert "arff_bytes" not in " ".join(_errors(page))  # the control's words, not the parameter's
    assert not _run_enabled(page)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "guard_upload_820.png"))
    page.close()
