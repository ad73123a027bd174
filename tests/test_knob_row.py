"""The knob row above the Live run's panels (issue 38 item 2): what each knob shows and sets, without Streamlit, and
the row and the sidebar as two views of the same settings in AppTest (the link follows both; after Run a knob
starts its run by itself; presentation mode draws the row)."""

from __future__ import annotations

import doctest

import pytest

from dashboard import knob_row
from dashboard.controls import wkey
from dashboard.knob_row import NONE, PAPER, change_changes, change_knob, knob_key, noise_changes, noise_value
from ncld_core.config import PRESETS, RunConfig
from tests.apptest import open_app


def test_doctests():
    assert doctest.testmod(knob_row).failed == 0


# --------------------------------------------------------------------------- without Streamlit
def test_the_noise_knob_is_the_range_of_the_rates_and_both_ends_at_zero_is_no_noise():
    assert noise_value(RunConfig(noise="range", rho_low=0.25, rho_high=0.35)) == (0.25, 0.35)
    assert noise_value(RunConfig(noise="none", rho_low=0.25, rho_high=0.35)) == (0.0, 0.0)
    # a box holding what the knob cannot show (its error is said under the knob): held to the knob's range
    assert noise_value(RunConfig(noise="range", rho_low=0.3, rho_high=0.7)) == (0.3, knob_row.RATE_MAX)
    assert noise_value(RunConfig(noise="range", rho_low=None, rho_high=0.3)) == (RunConfig().rho_low, 0.3)
    # a table or a family: the knob offers the kinds of noise instead
    assert noise_value(RunConfig(noise="missing")) is None and noise_value(RunConfig(noise="table")) is None
    assert noise_changes((0.0, 0.0)) == {"noise": "none"}
    assert noise_changes((0.1, 0.30000000000000004)) == {"noise": "range", "rho_low": 0.1, "rho_high": 0.3}
    assert noise_changes("mixed") == {"noise": "mixed"}


def test_the_change_knob_places_the_schedules_points_on_the_chunks_starts():
    none = change_knob(RunConfig(), None)  # synthetic: 5000 instances in chunks of 250
    assert none.choose_kind and none.options == (NONE, "growth", "reduction", "shift")
    assert none.places == tuple(range(250, 5000, 250))
    assert change_changes(none, "shift") == {"schedule": "shift@2500"}  # placed mid-stream
    assert change_changes(none, NONE) == {"schedule": ""}

    one = change_knob(RunConfig(schedule="reduction@1234", chunk_size=500), None)
    assert one.kinds == ("reduction",) and one.value == 1234
    assert one.options == (NONE, 500, 1000, 1234, 1500, 2000, 2500, 3000, 3500, 4000, 4500)  # its own place kept
    assert change_changes(one, 3000) == {"schedule": "reduction@3000"}
    assert change_changes(one, NONE) == {"schedule": ""}

    paper = change_knob(RunConfig(schedule="growth", chunk_size=1000), None)  # the paper's form: its own option
    assert paper.options[:3] == (NONE, PAPER, 1000) and paper.value == PAPER
    assert change_changes(paper, PAPER) == {"schedule": "growth"}

    two = change_knob(RunConfig(schedule="growth@1000, reduction@4000", chunk_size=1000), None)
    assert two.value == (1000, 4000) and two.options == (1000, 2000, 3000, 4000)
    assert change_changes(two, (2000, 3000)) == {"schedule": "growth@2000, reduction@3000"}

    many = change_knob(RunConfig(schedule="growth@1000, shift@2000, reduction@3000"), None)
    assert many.note and "sidebar" in many.note
    assert change_knob(RunConfig(schedule="growth@", chunk_size=250), None).note  # unreadable: said, no knob


def test_the_change_knob_offers_at_most_max_positions_places_on_a_long_stream():
    knob = change_knob(RunConfig(dataset="big", chunk_size=10, schedule="growth@12345"), 100_000)
    assert len(knob.options) <= knob_row.MAX_POSITIONS + 2 and 12345 in knob.options and knob.value == 12345
    assert knob.options[1] == 10  # the first chunk's start after the first
    # a stream length past its bound (its error is said under its box): still at most MAX_POSITIONS places, at once
    assert len(change_knob(RunConfig(n_instances=10**13), None).places) <= knob_row.MAX_POSITIONS
    # the dataset's length unknown, or a chunk size that no stream holds twice: said, not a knob
    assert change_knob(RunConfig(dataset="big", schedule="growth@500"), None).note
    assert change_knob(RunConfig(chunk_size=5000), None).note


def test_the_trusted_sample_knob_keeps_the_settings_share():
    shares, shown = knob_row.trusted_options(RunConfig(trusted_fraction=0.03))
    assert shown == 0.03 and 0.03 in shares and list(shares) == sorted(shares) and 0.0 in shares
    assert knob_row.trusted_options(RunConfig(trusted_fraction=0.9))[1] == 0.0  # out of range: its error says so


# --------------------------------------------------------------------------- the row and the sidebar (AppTest)
def _small(at):
    for name, value in (("n_instances", 600), ("chunk_size", 200), ("n_features", 5), ("n_labels", 4)):
        at.number_input(key=wkey(name, at.session_state)).set_value(value)
    at.run()


def test_each_knob_sets_the_config_the_sidebar_and_the_link():
    at = open_app()
    ss = at.session_state
    at.slider(key=knob_key("beta", ss)).set_value(0.6).run()
    at.select_slider(key=knob_key("trusted", ss)).set_value(0.05).run()
    at.selectbox(key=knob_key("model_rates", ss)).set_value("estimate").run()
    at.slider(key=knob_key("noise", ss)).set_value((0.1, 0.3)).run()
    at.selectbox(key=knob_key("change_kind", ss)).set_value("growth").run()
    at.select_slider(key=knob_key("change", ss)).set_value(1000).run()
    assert not at.exception, [e.value for e in at.exception]
    want = RunConfig(beta=0.6, trusted_fraction=0.05, model_rates="estimate", rho_low=0.1, rho_high=0.3,
                     schedule="growth@1000")
    assert at.session_state["ctx"].cfg == want
    assert RunConfig.from_query_params(at.query_params) == want  # the link carries every knob
    assert at.query_params["schedule"] == "growth@1000"  # in the schedule's notation
    # the sidebar's controls show the same values
    assert at.number_input(key=wkey("beta", ss)).value == 0.6
    assert at.number_input(key=wkey("trusted_fraction", ss)).value == 0.05
    assert at.selectbox(key=wkey("model_rates", ss)).value == "estimate"
    assert (at.number_input(key=wkey("rho_low", ss)).value, at.number_input(key=wkey("rho_high", ss)).value) == (0.1, 0.3)
    assert [n.value for n in at.number_input if n.key and n.key.startswith("w_sched_pos_")] == [1000]
    # both ends at 0: no noise, in the sidebar too; moved up again: a range
    at.slider(key=knob_key("noise", ss)).set_value((0.0, 0.0)).run()
    assert at.radio(key=wkey("noise", ss)).value == "none" and at.query_params["noise"] == "none"
    at.slider(key=knob_key("noise", ss)).set_value((0.0, 0.2)).run()
    assert at.session_state["ctx"].cfg.noise == "range" and at.session_state["ctx"].cfg.rho_high == 0.2
    # the change point removed from the row: no schedule, and the row offers a kind again
    at.select_slider(key=knob_key("change", ss)).set_value(NONE).run()
    assert "schedule" not in at.query_params and at.selectbox(key=knob_key("change_kind", ss)).value == NONE
    assert not [n for n in at.number_input if n.key and n.key.startswith("w_sched_pos_")]


def _pair(at):
    return next(s for s in at.select_slider if s.key.startswith(knob_key("change_pair", at.session_state)))


def test_two_change_points_are_one_slider_with_two_thumbs():
    at = open_app({"schedule": "growth@1000, reduction@3000"})
    assert _pair(at).value == (1000, 3000)
    _pair(at).set_value((1500, 2500)).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["ctx"].cfg.schedule == at.query_params["schedule"] == "growth@1500, reduction@2500"
    assert [n.value for n in at.number_input if n.key and n.key.startswith("w_sched_pos_")] == [1500, 2500]
    [n for n in at.number_input if n.key and n.key.startswith("w_sched_pos_")][-1].set_value(4000.0).run()
    assert _pair(at).value == (1500, 4000)  # the sidebar moves the thumb


def test_the_sidebar_and_a_preset_move_the_knobs():
    at = open_app()
    ss = at.session_state
    at.number_input(key=wkey("beta", ss)).set_value(0.8).run()
    assert at.slider(key=knob_key("beta", ss)).value == 0.8
    at.radio(key=wkey("noise", ss)).set_value("missing").run()
    assert at.selectbox(key=knob_key("noise_kind", ss)).value == "missing"
    at.selectbox(key=knob_key("noise_kind", ss)).set_value("range").run()  # back to a range from the row
    assert at.radio(key=wkey("noise", ss)).value == "range" and at.slider(key=knob_key("noise", ss)).value == (0.2, 0.4)
    at.button_group(key="preset_pick").set_value("unknown noise: estimate the rates").run()
    preset = PRESETS["unknown noise: estimate the rates"]
    assert knob_key("trusted", ss).endswith(f"_{ss['editor_ver']}")  # drawn afresh under the preset's keys
    assert at.select_slider(key=knob_key("trusted", ss)).value == preset.trusted_fraction
    assert at.selectbox(key=knob_key("model_rates", ss)).value == "estimate"
    assert at.slider(key=knob_key("beta", ss)).value == preset.beta
    at.button_group(key="preset_pick").set_value("concept growth").run()
    assert at.select_slider(key=knob_key("change", ss)).value == 2500


def test_a_value_the_knob_cannot_hold_is_said_under_it():
    at = open_app()
    ss = at.session_state
    at.number_input(key=wkey("beta", ss)).set_value(1.5).run()
    assert at.slider(key=knob_key("beta", ss)).value == 1.0  # held to its range, the setting left as typed
    assert ss["ctx"].cfg.beta == 1.5 and at.button(key="run_button").disabled
    said = [e.value for e in at.error if "1.5" in e.value.replace("\\", "")]
    assert len(said) == 2, said  # under the sidebar's box and under the knob
    at.slider(key=knob_key("beta", ss)).set_value(0.4).run()  # the knob fixes it
    assert ss["ctx"].cfg.beta == 0.4 and not at.button(key="run_button").disabled


def test_a_knob_moved_after_run_starts_its_run_without_a_click():
    at = open_app()
    _small(at)
    at.button(key="run_button").click().run()
    first = at.session_state["run"]
    assert first.status == "done"
    at.select_slider(key=knob_key("trusted", at.session_state)).set_value(0.1).run()  # no click
    assert not at.exception, [e.value for e in at.exception]
    run = at.session_state["run"]
    assert run is not first and run.cfg.trusted_fraction == 0.1 and run.status == "done"
    assert run.cfg == at.session_state["ctx"].cfg


@pytest.mark.parametrize("lesson", ["unknown-noise"])
def test_presentation_mode_draws_the_row_and_the_lessons_change_is_reachable(lesson):
    """The unknown-noise lesson's step 4 says "Set the trusted sample to 0 and run again": with the sidebar hidden,
    the trusted-sample knob (behind the panel chooser's Settings button) does it."""
    at = open_app({"lesson": lesson, "step": "4"})
    ss = at.session_state
    assert ss["presenting"] and at.select_slider(key=knob_key("trusted", ss)).value == 0.02
    at.select_slider(key=knob_key("trusted", ss)).set_value(0.0).run()
    assert ss["ctx"].cfg.trusted_fraction == 0.0 and "trusted_fraction" not in at.query_params
    assert at.query_params["lesson"] == lesson


def test_a_knob_the_page_no_longer_shows_moves_nothing():
    """A rerun the browser sends before it has drawn the last script run (the live part's poll, under load) still
    carries the knobs it showed: the change knob's kind choice, gone once "Add a change point" made a change point
    (the knob is then its place). Streamlit keeps that widget's callback and sees its value as new, so the callback
    came with "none" and took the added change point away (benchmarks/performance/knobs.py then found no
    "at instance (change 1)" box)."""
    at = open_app()
    ss = at.session_state
    stale = at.selectbox(key=knob_key("change_kind", ss))._widget_state  # as the browser holds it: "none"
    at.button(key=f"sched_add_{ss['editor_ver']}").click().run()
    assert ss["ctx"].cfg.schedule == "growth"
    states = at._tree.get_widget_states()
    states.widgets.append(stale)
    at._run(states)
    assert not at.exception, [e.value for e in at.exception]
    assert ss["ctx"].cfg.schedule == "growth"
    assert [n.key for n in at.number_input if n.key and n.key.startswith("w_sched_pos_")]
