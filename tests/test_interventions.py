"""Interventions during a run (issue 38 item 3), the core's part: a change appended to a drift schedule at a point
(``append_change``) leaves the stream, and a run's records, before that point exactly as they were; where it could
not, it is refused and says why.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ncld_core.config import RunConfig
from ncld_core.stream.builder import build_stream
from ncld_core.stream.schedule import append_change
from ncld_core.stream.synthetic import make_synthetic_stream
from tests.test_noise_changes import single_and_multi_label_data


# --------------------------------------------------------------------------- a change appended at a point
def _same_before(a, b, at):
    for name in ("X", "Y_true", "Y_noisy", "P_true", "trusted"):
        x, y = getattr(a, name), getattr(b, name)
        if x is None:
            assert y is None, name
            continue
        np.testing.assert_array_equal(x[:at], y[:at], err_msg=name)
    np.testing.assert_array_equal(a.rho_pos, b.rho_pos)
    np.testing.assert_array_equal(a.rho_neg, b.rho_neg)
    assert [c for c in a.change_points if c.position < at] == [c for c in b.change_points if c.position < at]


APPENDED = [  # (schedule before, instance, kind, factor)
    ("reduction@300", 600, "growth", None),
    ("growth@300", 600, "reduction", None),
    ("growth@300, shift@450", 600, "reduction", None),
    ("reduction@300, shift@450", 600, "shift", None),
    ("", 500, "shift", None),
    ("", 500, "noise", 0.5),
    ("reduction@300, noise@400x0.5", 600, "noise", 1.2),
    ("reduction@300, noise@600x0.5", 600, "noise", 1.2),  # the one at that instance replaced
]


@pytest.mark.parametrize("before, at, kind, factor", APPENDED)
@pytest.mark.parametrize("n_instances", [None, 1000])
def test_a_change_appended_to_a_real_datasets_schedule_keeps_the_stream_before_it(before, at, kind, factor,
                                                                                  n_instances):
    X, Y = single_and_multi_label_data()
    after = append_change(before or None, at, kind, factor)
    kw = dict(name="toy", flip_rates="paper", n_instances=n_instances, random_state=5, trusted_fraction=0.05)
    a = build_stream(X, Y, schedule=before or None, **kw)
    b = build_stream(X, Y, schedule=after, **kw)
    _same_before(a, b, at)
    assert str(after) != before


@pytest.mark.parametrize("before, at, kind, factor", APPENDED)
def test_a_change_appended_to_the_synthetic_streams_schedule_keeps_the_stream_before_it(before, at, kind, factor):
    after = append_change(before or None, at, kind, factor)
    kw = dict(flip_rates=(0.1, 0.3), random_state=5, trusted_fraction=0.05)
    _same_before(make_synthetic_stream(1000, schedule=before or None, **kw),
                 make_synthetic_stream(1000, schedule=after, **kw), at)


@pytest.mark.parametrize("seed", [1, 4])
def test_a_regime_change_after_a_shift_keeps_the_synthetic_shifts_pairing(seed):
    """Seeds where pairing the labels by the whole stream's frequencies (the code before) moved with a reduction
    appended after the shift, and so changed the stream between the shift and the reduction."""
    before = make_synthetic_stream(5000, schedule="growth@1500, shift@3000", random_state=seed)
    after = make_synthetic_stream(5000, schedule="growth@1500, shift@3000, reduction@4000", random_state=seed)
    assert after.meta["label_shift_permutation"] == before.meta["label_shift_permutation"]
    _same_before(before, after, 4000)


def test_the_records_before_an_appended_change_are_the_runs_without_it():
    """The run is a pure function of its settings, and the settings with a change appended at a chunk's first
    instance give the same records (every metric and estimate; not the seconds) for every chunk before it."""
    base = RunConfig(n_instances=3000, chunk_size=250, schedule="reduction@750", models=["ELM-O", "ELM-II"],
                     n_hidden=20, monitors=["labels"])
    at = 1500  # chunk 6
    rows = {}
    for name, schedule in (("before", base.schedule), ("after", str(append_change(base.schedule, at, "growth"))),
                           ("noise", str(append_change(base.schedule, at, "noise", 0.5)))):
        cfg = dataclasses.replace(base, schedule=schedule)
        records = cfg.runner().run(cfg.build_stream()).records.drop(columns=["seconds"])
        rows[name] = records
    for name in ("after", "noise"):
        head = rows[name][rows[name]["chunk"] < 6].reset_index(drop=True)
        expected = rows["before"][rows["before"]["chunk"] < 6].reset_index(drop=True)
        assert head.equals(expected), name
        assert not rows[name].equals(rows["before"]), name  # and the change does change what follows


@pytest.mark.parametrize("before, at, kind, match", [
    ("", 500, "growth", "no single-/multi-label regime"),
    ("growth@300", 600, "growth", "already multi-label"),
    ("reduction@300", 600, "reduction", "already single-label"),
    ("reduction@900", 600, "growth", "no single-/multi-label regime"),
    ("reduction@300, growth@900", 600, "shift", None),  # a shift may come before a planned change
    ("reduction@300, growth@900", 600, "growth", "would no longer alternate"),
    ("reduction@300, shift@600", 600, "growth", "a change of the labels is there already"),
    ("growth", 600, "shift", "no position yet"),
])
def test_an_append_that_would_change_the_stream_before_it_is_refused(before, at, kind, match):
    if match is None:
        assert str(append_change(before, at, kind)) == "reduction@300, shift@600, growth@900"
        return
    with pytest.raises(ValueError, match=match):
        append_change(before or None, at, kind)
