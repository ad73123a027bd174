"""make bench's section 8 (benchmarks/performance/knobs.py): the page's frames made into the knob-to-plot, per-chunk
and stream-ready figures (no browser), and the benchmark itself on a tiny setting in Chromium (its section written).

Correctness only: no time is asserted against a bound (the benchmark reports them; docs/performance.md)."""

from __future__ import annotations

import math

import pytest

from benchmarks.performance import knobs

DONE_LINE = ("done · chunk 3/3 · median update 20 ms · median compute 60 ms · first plot after 0.40 s "
             "(stream ready in {ready} s)")


def _frames():
    """Run "a" (clicked at 0) drawn over three chunks, then a knob moved at 2000 whose run "b" is drawn; ms."""
    a, b = ["a", None], ["b", None]
    g = lambda tok, k: [[tok[0], k]] * 4  # noqa: E731 - all four graphs at chunk k of run tok
    return [
        [0, "Ready: press Run.", [None] * 4],
        [50, "starting · building the stream and the models…", [None] * 4],
        [200, "running · chunk 0/3", [None] * 4],
        [400, "running · chunk 1/3", [None] * 4],
        [520, "running · chunk 1/3", g(a, 1)],
        [700, "running · chunk 2/3", g(a, 1)],
        [760, "running · chunk 2/3", g(a, 2)],
        [900, "running · chunk 3/3", g(a, 2)],
        [950, "running · chunk 3/3", g(a, 3)],
        [1000, DONE_LINE.format(ready="0.25"), g(a, 3)],
        # the knob: the old run's graphs and line stay until the new run answers
        [2100, DONE_LINE.format(ready="0.25"), g(a, 3)],
        [2300, "running · chunk 0/3", g(a, 3)],
        [2500, "running · chunk 1/3", g(a, 3)],
        [2600, "running · chunk 1/3", [["b", 1], None, None, None]],  # one graph drawn first
        [2650, "running · chunk 1/3", g(b, 1)],
        [2900, "running · chunk 3/3", g(b, 1)],  # chunks 2 and 3 drawn together
        [2980, "running · chunk 3/3", g(b, 3)],
        [3000, DONE_LINE.format(ready="0.05"), g(b, 3)],
    ]


MOVES = [{"kind": "Run", "value": None, "t": 0, "old": []},
         {"kind": "β", "value": 0.2, "t": 2000, "old": ["a"]}]


def test_a_knob_move_is_timed_to_the_first_graph_its_new_run_draws():
    run, moved = knobs.analyse(_frames(), MOVES)["runs"]
    assert run["first_plot_s"] == pytest.approx(0.52) and run["answer_s"] == pytest.approx(0.05)
    assert moved["kind"] == "β" and moved["first_plot_s"] == pytest.approx(0.6)  # 2600 - 2000: the first graph
    assert moved["all_plots_s"] == pytest.approx(0.65)  # all four
    assert moved["answer_s"] == pytest.approx(0.3) and moved["chunk1_said_s"] == pytest.approx(0.5)
    # per chunk, from the line naming it to every graph showing it (chunk 1 mounts the graphs: not counted);
    # chunk 2, never named by the line, is not timed; chunk 3: 2980 - 2900
    assert run["draw_ms"] == [60, 50] and moved["draw_ms"] == [80]
    # between redraws of all four graphs, per chunk: a redraw of two chunks counts half its interval for each
    assert run["interval_ms"] == [240.0, 190.0] and moved["interval_ms"] == [165.0]
    assert (run["stream_ready_s"], moved["stream_ready_s"]) == (0.25, 0.05)
    assert moved["compute_ms"] == 60 and moved["chunks"] == 3


def test_a_move_whose_run_draws_nothing_is_counted_missed():
    frames = _frames()[:11]  # the knob moved at 2000, and nothing after
    res = knobs.analyse(frames, MOVES)
    assert res["runs"][1]["first_plot_s"] is None and res["runs"][1]["draw_ms"] == []
    s = knobs.summary(res)
    assert s["moves"] == 1 and s["missed"] == 1 and s["knob_first_plot_s"]["n"] == 0
    assert any("drew no new plot" in line for line in knobs.render({**res, "summary": s, "notes": [], "wall_s": 9,
                                                                     "budget_s": 120, "viewport": "1400 x 1000"}))


def test_the_targets_are_judged_on_the_moves_not_on_the_first_run():
    res = knobs.analyse(_frames(), MOVES, draws=[[500, 510], [511, 519], [740, 755], [2580, 2640]])
    assert res["plotly_ms"] == [19, 15, 60]  # three redraws: plotly.js's own time for each
    res.update(summary=knobs.summary(res), notes=[], wall_s=10.0, budget_s=120.0, viewport="1400 x 1000")
    s = res["summary"]
    assert s["knob_first_plot_s"]["n"] == 1 and s["knob_first_plot_s"]["p95"] == pytest.approx(0.6)
    assert s["draw_ms"]["n"] == 3 and s["draw_ms"]["p50"] == 60
    assert s["stream_ready_s"]["p95"] == 0.25  # the first Run's line counts: the page's first stream
    assert s["plotly_ms"]["p50"] == 19
    assert [row[2] for row in knobs.target_rows(res)] == ["**met**"] * 3
    text = "\n".join(knobs.render(res, "`make bench`"))
    assert "## 8. Exploring the default stream" in text and "`make bench`" in text
    assert "| β " in text  # the per-run table names the knob
    slow = [[t, text.replace("ready in 0.25", "ready in 0.45"), g] for t, text, g in _frames()]
    res = knobs.analyse(slow, MOVES)
    res.update(summary=knobs.summary(res))
    assert [row[2] for row in knobs.target_rows(res)][2] == "**missed: +0.15 s over the target (1.50x)**"


def test_a_benchmark_not_run_says_so_in_every_target():
    for res in (None, {"error": "/usr/bin/chromium is not installed"}):
        rows = knobs.target_rows(res)
        assert len(rows) == 3 and all(r[2] == "not measured in this run" for r in rows)
    assert "chromium is not installed" in "\n".join(knobs.render({"error": "/usr/bin/chromium is not installed"}))


def test_the_number_of_moves_is_checked():
    for bad in (0, knobs.MAX_CHANGES + 1, 2.5):
        with pytest.raises(ValueError, match="n_changes"):
            knobs.bench_knobs(bad)


def test_every_knob_value_is_new_and_in_its_range():
    """Each kind's values differ from one another and from the default (every move computes a run)."""
    from ncld_core.config import RunConfig

    default = RunConfig()
    for kind, _label, value_of in knobs.KNOBS:
        values = [value_of(r) for r in range(math.ceil(knobs.MAX_CHANGES / len(knobs.KNOBS)))]
        assert len(set(values)) == len(values), kind
        for v in values:
            if v is None:
                continue
            cfg = {"noise level (rho high)": dict(rho_high=v), "β": dict(beta=v),
                   "change point": dict(schedule=f"growth@{v}"), "trusted share": dict(trusted_fraction=v)}[kind]
            assert RunConfig(**cfg) != default and not RunConfig(**cfg).errors(), (kind, v)


@pytest.mark.browser
# Slow tier (make test-slow): 91 s of a make test worker; make bench runs the whole benchmark.
@pytest.mark.slow
def test_the_benchmark_runs_two_moves_in_chromium_and_writes_its_section(tmp_path):
    """The benchmark's own code on a tiny setting: the default page, Run, two knob moves (noise level, β), its
    section written with every figure measured (not a timing test: no bound on the times)."""
    from tests.test_dashboard_browser import _need_chromium

    _need_chromium()
    pytest.importorskip("playwright.sync_api")
    out = tmp_path / "knobs.md"
    assert knobs.main(["--changes", "2", "--budget", "240", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "## 8. Exploring the default stream in the browser" in text
    assert "`python -m benchmarks.performance knobs --changes 2`" in text
    rows = [line for line in text.splitlines() if line.startswith("| default stream:")]
    assert len(rows) == 3 and not any("not measured" in r for r in rows[:2]), text
    # the stream's readiness is on a finished run's status line: a run ends within the bound on an idle machine,
    # not always on a loaded one (the section then says which run it did not see done)
    assert "not measured" not in rows[2] or "not seen done in time" in text, text
    # the Run click and the moves made (a loaded machine may leave no time for the second within the budget, or
    # for a run to end before the next move: the section then says so), each drawing its first plot
    per_run = [line for line in text.splitlines() if line.startswith(("| Run ", "| noise level", "| β "))]
    assert per_run[0].startswith("| Run ") and per_run[1].startswith("| noise level"), text
    assert len(per_run) == 3 or "stopped after 1 of 2 moves" in text, text
    for line in per_run:
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[4] != "–", line


def test_a_move_during_a_run_is_timed_from_the_new_runs_own_lines():
    """The old run still computing when the knob moves: its status lines are not the new run's."""
    g = lambda tok, k: [[tok, k]] * 4  # noqa: E731
    frames = [[1900, "running · chunk 2/3", g("a", 2)],
              [2100, "running · chunk 2/3 · computing chunk 3: 1 s", g("a", 2)],  # the old run's line, still
              [2300, "running · chunk 0/3", g("a", 2)],
              [2500, "running · chunk 1/3", g("a", 2)],
              [2600, "running · chunk 1/3", g("b", 1)],
              [2800, "running · chunk 2/3", g("b", 1)],
              [2850, "running · chunk 2/3", g("b", 2)]]
    run = knobs.analyse(frames, [{"kind": "β", "value": 0.3, "t": 2000, "old": ["a"]}])["runs"][0]
    assert (run["answer_s"], run["chunk1_said_s"], run["first_plot_s"]) == pytest.approx((0.3, 0.5, 0.6))
    assert run["draw_ms"] == [50]  # chunk 2 of the new run: 2850 - 2800 (not the old run's line at 2100)
