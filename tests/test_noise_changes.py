"""A change of the label noise in the drift schedule (``noise@3000x1.5``; issue 38 item 3): parsed and printed back,
refused by name, applied from its point on for every noise family, the rates told unchanged.

Statistical checks use fixed seeds and a tolerance of 4 binomial standard deviations (summed over entries of
different rates), as tests/test_noise.py does.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ncld_core.config import RunConfig
from ncld_core.eval.runner import told_rates
from ncld_core.stream.builder import build_stream
from ncld_core.stream.noise_families import NOISE_FAMILIES, draw_family_rates
from ncld_core.stream.schedule import MAX_SCHEDULE_POINTS, DriftSchedule
from ncld_core.stream.stream import NoiseChange
from ncld_core.stream.synthetic import make_synthetic_stream

Z = 4.0


# --------------------------------------------------------------------------- the schedule's noise kind
def test_a_noise_change_parses_prints_back_and_sits_apart_from_the_label_changes():
    s = DriftSchedule.parse("reduction@1000, noise@chunk:10x1.5, growth@3000, NOISE@4000 x 0", chunk_size=250)
    assert str(s) == "reduction@1000, noise@2500x1.5, growth@3000, noise@4000x0"
    assert DriftSchedule.parse(str(s)) == s
    assert s.positions == (1000, 3000) and [(p.position, p.kind) for p in s] == [(1000, "reduction"), (3000, "growth")]
    assert s.noise_changes == (NoiseChange(2500, 1.5), NoiseChange(4000, 0.0))
    assert [s.noise_factor_at(t) for t in (0, 2499, 2500, 3999, 4000)] == [1.0, 1.0, 1.5, 1.5, 0.0]
    # a noise change at the instance of a change of the labels: the labels' first in the text
    assert str(DriftSchedule.parse("reduction@100, noise@3000x2, growth@3000")) == \
        "reduction@100, growth@3000, noise@3000x2"
    only = DriftSchedule.parse("noise@50x0.5")
    assert only.points == () and not only.is_paper and only.initial_regime == "mixed"
    assert only and len(only) == 0  # a schedule of noise changes only is a schedule (len: the labels' changes)
    assert DriftSchedule.parse("growth, noise@50x2").at(70) == DriftSchedule.parse("noise@50x2, growth@70")


@pytest.mark.parametrize("text, match", [
    ("noise@3000", "needs its factor"),
    ("noise", "needs a position and a factor"),
    ("noise@3000x-1", "factor must be a number in \\[0, 10\\]"),
    ("noise@3000x11", "factor must be a number in \\[0, 10\\]"),
    ("noise@3000xnan", "factor must be a number in \\[0, 10\\]"),
    ("noise@3000xabc", "cannot parse drift point 1"),
    ("growth@600x2", "only a noise change takes a factor"),
    ("noise@900x2, noise@900x1", "strictly increasing: point 2 \\('noise@900x1'\\) is not after point 1"),
    ("growth@900, noise@600x2", "must be increasing: point 2 \\('noise@600x2'\\) is before point 1"),
    ("noise@0x2", "must be > 0"),
])
def test_a_bad_noise_change_is_refused_by_name(text, match):
    with pytest.raises(ValueError, match=match):
        DriftSchedule.parse(text)


def test_noise_changes_count_in_the_schedules_bound():
    text = ", ".join(f"noise@{10 * (k + 1)}x1" for k in range(MAX_SCHEDULE_POINTS + 1))
    with pytest.raises(ValueError, match=f"at most {MAX_SCHEDULE_POINTS} change points"):
        DriftSchedule.parse(text)
    with pytest.raises(ValueError, match=f"at most {MAX_SCHEDULE_POINTS} change points"):
        DriftSchedule([(10 * (k + 1), "noise", 1.0) for k in range(MAX_SCHEDULE_POINTS + 1)])
    assert len(DriftSchedule.parse(", ".join(f"noise@{10 * (k + 1)}x1" for k in range(MAX_SCHEDULE_POINTS))
                                   ).noise_changes) == MAX_SCHEDULE_POINTS


def test_the_configuration_refuses_a_noise_change_the_noise_cannot_take():
    assert RunConfig(schedule="noise@2500x1.2").errors() == {}  # 0.4 + 0.4 times 1.2 < 1
    err = RunConfig(schedule="noise@2500x1.25").errors()
    assert "rho_pos + rho_neg up to 1" in err["schedule"] and "below 1.25" in err["schedule"], err
    assert "no noise" in RunConfig(schedule="noise@2500x0.5", noise="none").errors()["schedule"]
    assert RunConfig(schedule="noise@2500x2.5", noise="missing").errors() == {}  # 0.35 x 2.5 < 1
    assert "schedule" in RunConfig(schedule="noise@2500x3", noise="missing").errors()
    assert "beyond the stream" in RunConfig(schedule="noise@6000x0.5").errors()["schedule"]
    table = RunConfig(noise="table", rho_pos=[0.1] * 10, rho_neg=[0.3] * 10, schedule="noise@2500x2.4")
    assert table.errors() == {} and "schedule" in dataclasses.replace(table, schedule="noise@2500x2.5").errors()


def test_every_family_declares_a_true_bound_of_its_rates():
    for name, family in NOISE_FAMILIES.items():
        for q in (1, 14, 200):
            pos, neg = draw_family_rates(name, q, random_state=q)
            assert (pos + neg).max() <= family.max_sum, (name, q)


# --------------------------------------------------------------------------- the noise change in a stream
def single_and_multi_label_data(n_single=700, n_multi=700, q=6, d=5, seed=0):
    """``(X, Y)``: ``n_single`` single-label rows and ``n_multi`` rows of 2 to q-1 labels, shuffled."""
    rng = np.random.default_rng(seed)
    Y = np.zeros((n_single + n_multi, q), dtype=np.int8)
    Y[np.arange(n_single), rng.integers(0, q, n_single)] = 1
    for i in range(n_single, n_single + n_multi):
        Y[i, rng.choice(q, size=rng.integers(2, q), replace=False)] = 1
    X = rng.normal(size=(Y.shape[0], d)) + Y[:, :d] * 0.5
    perm = rng.permutation(Y.shape[0])
    return X[perm], Y[perm]


def _flip_check(Y_true, Y_noisy, rates, value):
    """(ok, measured, expected, sd) of the flips of the entries whose true value is ``value``: the flip count
    against the sum of their rates (``rates``: per label), within Z standard deviations."""
    mask = Y_true == value
    p = np.broadcast_to(rates, Y_true.shape)[mask]
    flips = int((Y_noisy[mask] != value).sum())
    expected, sd = float(p.sum()), float(np.sqrt((p * (1 - p)).sum()))
    return abs(flips - expected) <= Z * sd, flips / mask.sum(), expected / mask.sum(), sd / mask.sum()


@pytest.mark.parametrize("family", list(NOISE_FAMILIES))
@pytest.mark.parametrize("factor", [1.2, 0.5, 0.0])
def test_a_noise_change_moves_the_flip_rates_from_its_point_on_for_every_family(family, factor):
    """The stream before the point is the stream without the change; after it each label's flips follow its rates
    times the factor (seed 7, 8,000 instances of 10 labels after the point; 4 standard deviations)."""
    n, at = 16_000, 8_000
    plain = make_synthetic_stream(n, flip_rates=family, random_state=7)
    moved = make_synthetic_stream(n, flip_rates=family, schedule=f"noise@{at}x{factor:g}", random_state=7)
    assert moved.noise_changes == (NoiseChange(at, factor),)
    np.testing.assert_array_equal(moved.Y_true, plain.Y_true)
    np.testing.assert_array_equal(moved.Y_noisy[:at], plain.Y_noisy[:at])
    # what the models are told stays the configured rates: the noise moved under them
    for a, b in zip(told_rates("known", moved), told_rates("known", plain)):
        np.testing.assert_array_equal(a, b)
    for value, rates in ((1, moved.rho_pos), (0, moved.rho_neg)):
        ok, measured, expected, sd = _flip_check(moved.Y_true[at:], moved.Y_noisy[at:], factor * rates, value)
        assert ok, (family, factor, value, measured, expected, sd)
        before_ok, *_ = _flip_check(moved.Y_true[:at], moved.Y_noisy[:at], rates, value)
        assert before_ok
    if factor == 0:
        np.testing.assert_array_equal(moved.Y_noisy[at:], moved.Y_true[at:])


def test_a_noise_change_on_real_data_and_on_a_stream_without_noise():
    X, Y = single_and_multi_label_data()
    plain = build_stream(X, Y, name="toy", flip_rates="missing", schedule="reduction@300", random_state=3)
    moved = build_stream(X, Y, name="toy", flip_rates="missing", schedule="reduction@300, noise@500x2",
                         random_state=3)
    np.testing.assert_array_equal(moved.Y_noisy[:500], plain.Y_noisy[:500])
    assert moved.noise_changes == (NoiseChange(500, 2.0),) and moved.change_points == plain.change_points
    assert (moved.Y_noisy[500:] != moved.Y_true[500:]).sum() > (plain.Y_noisy[500:] != plain.Y_true[500:]).sum()
    with pytest.raises(ValueError, match="this stream has no noise"):
        build_stream(X, Y, name="toy", schedule="noise@500x2", random_state=3)
    with pytest.raises(ValueError, match="this stream has no noise"):
        make_synthetic_stream(1000, flip_rates=None, schedule="noise@500x2")
    with pytest.raises(ValueError, match="noise change 'noise@500x3' \\(the flip rates times 3\\)"):
        build_stream(X, Y, name="toy", flip_rates=(0.2, 0.4), schedule="noise@500x3", random_state=3)


def test_the_observed_cardinality_records_follow_the_noise_the_estimate_told_the_old_rates_does_not():
    """A run's records: the observed cardinality of each chunk after the point is what the scaled rates give (4
    standard deviations of the chunk's flips), while the model told the configured rates (its moment estimate)
    leaves the true cardinality: the noise moved under it."""
    cfg = RunConfig(n_instances=4000, chunk_size=250, schedule="noise@2000x1.2", models=["ELM-O"], references=False,
                    n_hidden=20)
    stream = cfg.build_stream()
    chunks = list(cfg.runner().iter_run(stream))
    for c in chunks:
        factor = 1.2 if c.start >= 2000 else 1.0
        Y = stream.Y_true[c.start:c.stop]
        p_obs = np.where(Y == 1, 1 - factor * stream.rho_pos, factor * stream.rho_neg)
        expected = float(p_obs.sum(axis=1).mean())
        sd = float(np.sqrt((p_obs * (1 - p_obs)).sum())) / Y.shape[0]
        assert abs(c.observed_cardinality - expected) <= Z * sd, (c.chunk, c.observed_cardinality, expected, sd)
    err_before = np.mean([abs(c.diagnostics["ELM-O"].lcard_hat - c.true_cardinality) for c in chunks[1:8]])
    err_after = np.mean([abs(c.diagnostics["ELM-O"].lcard_hat - c.true_cardinality) for c in chunks[8:]])
    assert err_after > 3 * err_before, (err_before, err_after)


def test_the_estimates_errors_are_measured_against_the_rates_in_force():
    """Panel (e)'s truth after a noise change: the stream's rates times the factor of the chunk's instances."""
    from types import SimpleNamespace as NS

    from ncld_core.model.flip_rates import estimate_errors

    rho_pos, rho_neg = np.array([0.2, 0.1]), np.array([0.1, 0.3])
    record = NS(estimates_rates=True, rho_pos_est=[0.4, 0.2], rho_neg_est=[0.2, 0.6])  # twice the rates
    chunks = [NS(chunk=k, start=100 * k, stop=100 * (k + 1), diagnostics={"m": record}) for k in range(4)]
    over, per_label = estimate_errors(chunks, "m", rho_pos, rho_neg, noise_changes=[NoiseChange(200, 2.0)])
    np.testing.assert_allclose(over["mae_rho_pos"], [0.15, 0.15, 0.0, 0.0])
    np.testing.assert_allclose(per_label["rho_neg true"], [0.2, 0.6])
    over, _ = estimate_errors(chunks, "m", rho_pos, rho_neg, noise_changes=[NoiseChange(250, 2.0)])
    np.testing.assert_allclose(over["mae_rho_pos"], [0.15, 0.15, 0.075, 0.0])  # chunk 2: half of it at x2
