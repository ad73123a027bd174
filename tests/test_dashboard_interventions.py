"""Interventions during a run (issue 38 item 3) on the Live run page: what each button would append and why it is
disabled (plain functions), and in Streamlit's AppTest a press mid-run that appends the change to the settings and
the link and goes on from its chunk (the finished run against its link's: the browser test)."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace as NS

from streamlit.testing.v1 import AppTest

from dashboard import interventions as I
from dashboard.serving.live_run import same_records
from ncld_core.config import RunConfig
from ncld_core.stream.schedule import MAX_SCHEDULE_POINTS

APP = Path(__file__).resolve().parents[1] / "dashboard" / "app.py"


def _run(cfg, chunks: int, *, active=True, n=5000, change_points=()):
    return NS(cfg=cfg, active=active, chunks=[None] * chunks, chunk_size=cfg.chunk_size,
              stream=NS(n_instances=n), change_points=list(change_points))


def _options(cfg, chunks, **kw):
    run = _run(cfg, chunks, **{k: v for k, v in kw.items() if k in ("active", "n", "change_points")})
    return I.reasons(run, cfg, same=kw.get("same", True))


def test_each_button_appends_its_change_at_the_next_chunk_or_says_why_it_cannot():
    default = RunConfig()  # no schedule: no regime to grow or shrink from
    got = _options(default, 4)
    assert got["grow"][0] is None and "no single-/multi-label regime" in got["grow"][1]
    assert got["shrink"][0] is None and "no single-/multi-label regime" in got["shrink"][1]
    assert got["shift"][0].schedule == "shift@1000"  # chunk 4 of 250
    assert got["noise_up"][0].schedule == "noise@1000x1.2"  # rates up to 0.4 + 0.4: at most x1.2 (Eq. NR)
    assert got["noise_down"][0].schedule == "noise@1000x0.5"
    reduced = RunConfig(schedule="reduction@1000")
    got = _options(reduced, 6)
    assert got["grow"][0].schedule == "reduction@1000, growth@1500"
    assert "already single-label" in got["shrink"][1]
    # noise at its bound here: up refused with the reason, down goes on to clean labels
    up = RunConfig(schedule="noise@1000x1.2")
    got = _options(up, 6)
    assert got["noise_up"][0] is None and "at its largest here (noise ×1.2)" in got["noise_up"][1]
    assert got["noise_down"][0].schedule == "noise@1000x1.2, noise@1500x0.7"
    clean = RunConfig(schedule="noise@1000x0")
    assert "already clean" in _options(clean, 6)["noise_down"][1]
    # the same chunk pressed twice: the noise change there is replaced, not doubled
    assert _options(RunConfig(schedule="noise@1500x0.5"), 6)["noise_down"][0].schedule == "noise@1500x0"
    assert "no noise" in _options(RunConfig(noise="none"), 4)["noise_up"][1]
    missing = _options(RunConfig(noise="missing"), 4)
    assert missing["noise_up"][0].schedule == "noise@1000x1.5"  # 0.35 at most: room to 2.85


def test_every_button_is_disabled_when_the_run_ended_the_schedule_is_full_or_no_chunk_is_left():
    cfg = RunConfig()
    for kw, said in (({"active": False}, "only while a run streams"), ({"same": False}, "not this run's")):
        assert all(new is None and said in why for new, why in _options(cfg, 4, **kw).values())
    assert all("no chunk is left" in why for _, why in _options(cfg, 20).values())  # 20 chunks of 250: the end
    full = RunConfig(schedule=", ".join(f"shift@{k + 1}" for k in range(MAX_SCHEDULE_POINTS)))
    got = _options(full, 4)
    assert all(f"at most {MAX_SCHEDULE_POINTS} change points" in got[k][1] for k in ("shift", "noise_up"))


def test_the_papers_unpositioned_change_is_placed_where_the_running_stream_has_it():
    cfg = RunConfig(dataset="synthetic", schedule="reduction")  # the generator puts it in the middle
    assert "being built" in I.candidate(cfg, I.INTERVENTIONS[0], 3000)[1]
    new, why = I.candidate(cfg, I.INTERVENTIONS[0], 3000, change_points=[(2500, "reduction")])
    assert why is None and new.schedule == "reduction@2500, growth@3000"


# --------------------------------------------------------------------------- the page (AppTest)
#: About 60 chunks of a tenth of a second or more: a run to press a button in.
LONG = dict(n_instances="18000", chunk_size="300", n_features="20", n_labels="6", n_hidden="400",
            models='["ELM-O"]', schedule="reduction@600", seed="17")


def _until_chunks(at, k: int, timeout: float = 120):
    """Wait until the page's run has ``k`` chunks (read as they arrive), then rerun the page once; the run."""
    at.run()  # the run begins in the page's live part
    run = at.session_state["run"]
    deadline = time.monotonic() + timeout
    while len(run.chunks) < k and run.active and time.monotonic() < deadline:
        time.sleep(0.01)
    at.run()
    return run


def test_labels_grow_now_mid_run_appends_the_growth_to_the_settings_and_the_link_and_keeps_the_chunks_before_it(
        monkeypatch):
    monkeypatch.setenv("NCLD_DASHBOARD_THREADS", "1")  # computed beside the page, not in a niced process
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params.update(LONG)
    at.run()
    assert not at.exception
    # before Run: no run, no buttons
    assert not [b for b in at.button if b.key and b.key.startswith("intervene_")]
    at.button(key="run_button").click()
    old = _until_chunks(at, 4)
    assert old.active, "the run ended before the press: make LONG longer"
    buttons = {b.key: b for b in at.button if b.key and b.key.startswith("intervene_")}
    assert set(buttons) == {f"intervene_{it.key}" for it in I.INTERVENTIONS}
    assert buttons["intervene_shrink"].disabled and "already single-label" in buttons["intervene_shrink"].help
    buttons["intervene_grow"].click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    new = at.session_state["run"]
    k = new.shown_before
    assert k >= 4 and new is not old and new.cfg.schedule == f"reduction@600, growth@{300 * k}"
    cfg = at.session_state["ctx"].cfg
    assert cfg == new.cfg and at.query_params["schedule"] == new.cfg.schedule  # the link carries it
    assert RunConfig.from_query_params(dict(at.query_params)) == new.cfg
    assert [c.chunk for c in new.chunks[:k]] == list(range(k))  # goes on from the change, not from chunk 0
    assert (300 * k, "growth") in new.change_points  # marked at once
    assert any(f"labels grow now" in c.value and f"chunk {k}" in c.value for c in at.caption)
    # the sidebar's schedule rows show the new point
    kinds = [s.value for s in at.selectbox if s.key and s.key.startswith("w_sched_kind_")]
    assert kinds == ["reduction", "growth"]
    # the run goes on (its chunks before the change recomputed, then new ones); Stop ends it as any run
    deadline = time.monotonic() + 120
    while new.recomputed < min(2, k) and new.active and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not new.prefix_differed and all(same_records(a, b) for a, b in zip(new.chunks[:new.recomputed],
                                                                               old.chunks[:new.recomputed]))
    at.button(key="stop_button").click()
    at.run()
    assert not new.active and all(b.disabled for b in at.button if b.key and b.key.startswith("intervene_"))
    # (the finished run's records against the link's, recomputed: tests/test_dashboard_interventions_browser.py)


def test_the_sidebar_shows_a_noise_change_as_a_row_with_its_factor_and_reads_it_back():
    from tests.apptest import open_app

    at = open_app({"schedule": "reduction@1000, noise@2500x1.5", "noise": "missing"}, timeout=90)
    assert at.session_state["ctx"].cfg.schedule == "reduction@1000, noise@2500x1.5" and at.session_state["ctx"].ok
    kinds = [s.value for s in at.selectbox if s.key and s.key.startswith("w_sched_kind_")]
    factors = [n for n in at.number_input if n.key and n.key.startswith("w_sched_factor_")]
    assert kinds == ["reduction", "noise"] and [f.value for f in factors] == [1.5]
    factors[0].set_value(3.0).run()  # 0.35 x 3 >= 1: refused under the schedule
    assert any("would give flip rates with drop rate + add rate up to 1.05" in e.value.replace("\\", "")
               for e in at.error), [e.value for e in at.error]
    [n for n in at.number_input if n.key and n.key.startswith("w_sched_factor_")][0].set_value(0.0).run()
    assert at.session_state["ctx"].cfg.schedule == "reduction@1000, noise@2500x0" and at.session_state["ctx"].ok
    assert at.query_params["schedule"] == "reduction@1000, noise@2500x0"
