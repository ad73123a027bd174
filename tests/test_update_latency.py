"""The browser tests' per-chunk update latency (tests/test_dashboard_browser.py: chunk_update_latency), on
frames made up here: no browser needed."""

from __future__ import annotations


def test_the_update_latency_counts_chunks_said_by_a_run_already_done():
    """A short stream computes faster than the page draws: its later chunks' status lines say "done · chunk k/n"
    (tests/test_dashboard_browser.py measured no update on emotions and medical while it counted "running" only)."""
    from tests.test_dashboard_browser import chunk_update_latency

    frames = [(0, "running · chunk 0/3", [None] * 4, None), (100, "running · chunk 1/3", [None] * 4, None),
              (400, "running · chunk 1/3", [1, 1, 1, 1], None), (450, "done · chunk 2/3", [1, 1, 1, 1], None),
              (500, "done · chunk 2/3", [2, 2, 2, 2], None), (520, "done · chunk 3/3", [2, 2, 2, 2], None),
              (600, "done · chunk 3/3", [3, 3, 2, 3], None), (610, "done · chunk 3/3", [3, 3, 3, 3], None)]
    res = chunk_update_latency(frames)
    assert res["chunks_measured"] == 2 and res["first_draw_ms"] == 300
    assert res["median_ms"] == 70.0 and res["p90_ms"] == 90.0  # chunk 2: 500 - 450; chunk 3: 610 - 520


def test_a_chunk_drawn_before_its_status_line_said_it_is_not_measured():
    """After a run ends the page reruns: its status line is empty while the last chunks are drawn, and says
    "done · chunk n/n" after (seen on emotions): no negative latency, that chunk is not measured."""
    from tests.test_dashboard_browser import chunk_update_latency

    frames = [(0, "running · chunk 1/3", [None] * 4, None), (300, "running · chunk 1/3", [1, 1, 1, 1], None),
              (350, "", [1, 1, 1, 1], None), (700, "", [3, 3, 3, 3], None),
              (900, "done · chunk 3/3", [3, 3, 3, 3], None)]
    res = chunk_update_latency(frames)
    assert res["chunks_measured"] == 0 and res["median_ms"] is None and res["first_draw_ms"] == 300
