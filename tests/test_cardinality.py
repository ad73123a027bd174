"""The moment estimate of the chunk cardinality: unbiasedness and coverage (statistical, fixed seeds)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ttest_1samp

from ncld_core.model import ELMNCLD
from ncld_core.model.cardinality import moment_cardinality
from ncld_core.stream.noise import apply_label_noise, draw_flip_rates
from ncld_core.stream.synthetic import make_synthetic_stream

CHUNK = 250


@pytest.fixture(scope="module")
def draws():
    """The synthetic generator's true labels (known truth), 120 independent noise draws, chunks of 250."""
    Y = make_synthetic_stream(n_instances=10 * CHUNK, flip_rates=None, random_state=0).Y_true
    true = Y.reshape(10, CHUNK, -1).sum(axis=2).mean(axis=1)
    out = []
    for draw in range(120):
        rho_pos, rho_neg = draw_flip_rates(Y.shape[1], random_state=[draw, 1])
        noisy = apply_label_noise(Y, rho_pos, rho_neg, random_state=[draw, 2])
        out.append([moment_cardinality(noisy[c * CHUNK:(c + 1) * CHUNK], rho_pos, rho_neg) for c in range(10)])
    return true, out


def test_moment_estimate_is_unbiased(draws):
    true, out = draws
    per_draw = np.array([np.mean([e.estimate for e in est]) for est in out]) - true.mean()
    # No bias at the 1 % level, and the 99 % bound on it is tight (< 2 % of the cardinality).
    assert ttest_1samp(per_draw, 0.0).pvalue > 0.01
    half_width = 2.6 * per_draw.std(ddof=1) / np.sqrt(len(per_draw))
    assert abs(per_draw.mean()) + half_width < 0.02 * true.mean()


def test_interval_covers_the_chunk_cardinality_95_percent(draws):
    true, out = draws
    covered = np.array([[e.low <= t <= e.high for e, t in zip(est, true)] for est in out]).ravel()
    # 1200 chunks: the coverage is 0.95 within 3 binomial standard errors (0.019).
    assert abs(covered.mean() - 0.95) < 3 * np.sqrt(0.95 * 0.05 / covered.size)


def test_prevalences_are_unbiased_per_label(draws):
    true, out = draws
    Y = make_synthetic_stream(n_instances=10 * CHUNK, flip_rates=None, random_state=0).Y_true
    truth = Y[:CHUNK].mean(axis=0)
    errors = np.array([est[0].prevalence - truth for est in out])  # (draws, q)
    se = errors.std(axis=0, ddof=1) / np.sqrt(len(errors))
    assert np.all(np.abs(errors.mean(axis=0)) < 4 * se)
    assert abs(errors.sum(axis=1).mean()) < 4 * errors.sum(axis=1).std(ddof=1) / np.sqrt(len(errors))


def test_noise_free_estimate_is_exact_and_rates_bounds_widen_the_interval():
    rng = np.random.default_rng(0)
    Y = (rng.random((300, 6)) < 0.3).astype(np.int8)
    exact = moment_cardinality(Y, 0.0, 0.0)
    assert exact.estimate == pytest.approx(Y.sum(axis=1).mean()) and exact.se == 0.0
    rho_pos, rho_neg = np.full(6, 0.2), np.full(6, 0.25)
    noisy = apply_label_noise(Y, rho_pos, rho_neg, random_state=1)
    point = moment_cardinality(noisy, rho_pos, rho_neg)
    bounded = moment_cardinality(noisy, rho_pos, rho_neg, rho_bounds=(rho_pos, rho_neg))
    assert point.point_identified and not bounded.point_identified
    assert bounded.low <= point.low and bounded.high > point.high
    # rates anywhere in [0, upper] give a cardinality inside the identified interval
    for a, b in [(0.0, 0.0), (0.1, 0.05), (0.2, 0.25)]:
        inner = moment_cardinality(noisy, a, b).estimate
        assert bounded.low <= inner <= bounded.high


@pytest.mark.parametrize("rates", [(0.6, 0.5), (-0.1, 0.2), (0.2, 1.0)])
def test_bad_rates_are_refused(rates):
    with pytest.raises(ValueError, match="flip rates"):
        moment_cardinality(np.zeros((5, 2)), *rates)


def test_model_records_the_estimate_its_interval_and_the_papers():
    s = make_synthetic_stream(n_instances=3000, random_state=4)
    model = ELMNCLD(rho_pos=s.rho_pos, rho_neg=s.rho_neg, random_state=0)
    for start, stop in s.chunk_bounds(500):
        model.partial_fit(s.X[start:stop], s.Y_noisy[start:stop])
    h = model.history_
    assert (h["lcard_low"] < h["lcard_hat"]).all() and (h["lcard_hat"] < h["lcard_high"]).all()
    assert np.allclose(h["lcard_high"] - h["lcard_hat"], 1.959964 * h["lcard_se"], rtol=1e-5)
    # the paper's clipped, in-sample estimate sits above the moment estimate on this stream
    assert (h["lcard_paper"] > h["lcard_hat"]).mean() > 0.8
    assert len(model.last_record_.prevalence_hat) == s.n_labels


def test_estimated_rates_give_an_identified_interval_not_a_point():
    s = make_synthetic_stream(n_instances=3000, random_state=5)
    model = ELMNCLD(random_state=0)  # no rates: estimated online
    truth = []
    for start, stop in s.chunk_bounds(500):
        model.partial_fit(s.X[start:stop], s.Y_noisy[start:stop])
        truth.append(s.Y_true[start:stop].sum(axis=1).mean())
    h = model.history_
    width = h["lcard_high"] - h["lcard_low"]
    assert (width > 2 * 1.96 * h["lcard_se"]).all()  # wider than the sampling error alone
    assert ((h["lcard_low"] <= truth) & (truth <= h["lcard_high"])).all()


def test_interval_report_scores_the_band_against_the_truth():
    from ncld_core.eval.cardinality_eval import interval_report

    r = interval_report([1.0, 2.0, 4.0], [0.0, 2.5, None], [2.0, 3.0, 5.0], [1.5, 2.5, 4.0], [None, None, None])
    assert (r["n"], r["inside"]) == (2, 1)  # the third chunk has no band
    assert r["width"] == pytest.approx(1.25) and r["truth"] == pytest.approx(1.5)
    assert r["mean_error"] == pytest.approx(0.5) and r["paper_error"] is None
    assert interval_report([1.0], [None], [None])["n"] == 0
    with pytest.raises(ValueError, match="per chunk"):
        interval_report([1.0, 2.0], [0.0], [1.0])


def _assert_well_formed(est, q):
    assert 0.0 <= est.low <= est.estimate <= est.high <= q, (est.low, est.estimate, est.high)


def test_intervals_are_always_well_formed():
    # Issue 25: a chunk with fewer observed positives than rho_- implies gave lcard_hat = -0.525 and the
    # interval [0, -0.409]. Now every path cuts the estimate and both ends to [0, q] the same way.
    rng = np.random.default_rng(3)
    q = 6
    for trial in range(300):
        n = int(rng.integers(5, 200))
        density = rng.uniform(0.0, 0.6)
        Y = (rng.random((n, q)) < density).astype(np.int8)
        rho_pos, rho_neg = rng.uniform(0, 0.45, q), rng.uniform(0, 0.45, q)
        _assert_well_formed(moment_cardinality(Y, rho_pos, rho_neg), q)
        _assert_well_formed(moment_cardinality(Y, rho_pos, rho_neg, rho_bounds=(rho_pos, rho_neg)), q)
        lo = rng.uniform(0, 1, q)
        intervals = (lo * rho_pos, rho_pos, lo * rho_neg, rho_neg)
        for identified in (False, True):
            _assert_well_formed(moment_cardinality(Y, rho_pos, rho_neg, rate_intervals=intervals,
                                                   identified=identified), q)
        G = (rng.random((8, q)) < 0.3).astype(float)
        Y_trusted = (rng.random((8, q)) < density).astype(float)
        _assert_well_formed(moment_cardinality(Y, rho_pos, rho_neg, trusted=(Y_trusted, G.sum(axis=1), None)), q)
    # the case: no positives at all under rho_- = 0.2
    few = moment_cardinality(np.zeros((40, 3)), 0.1, 0.2)
    assert few.per_instance.mean() < 0 and (few.low, few.estimate, few.high) == (0.0, 0.0, 0.0)


def test_rate_intervals_hold_every_cardinality_their_rates_allow():
    rng = np.random.default_rng(4)
    Y = (rng.random((400, 5)) < 0.3).astype(np.int8)
    intervals = (np.full(5, 0.05), np.full(5, 0.3), np.full(5, 0.0), np.full(5, 0.1))
    box = moment_cardinality(Y, 0.15, 0.05, rate_intervals=intervals)
    assert not box.point_identified and box.n_trusted == 0
    for a in (0.05, 0.2, 0.3):
        for b in (0.0, 0.05, 0.1):
            assert box.low <= moment_cardinality(Y, a, b).estimate <= box.high


def test_the_trusted_regression_estimate_is_unbiased_and_covers_whatever_the_rates():
    # Clean labels of the generator, noise of the 'missing' family; the model's rates are wrong on purpose
    # (rho_+ told 0: the moment estimate is biased low by about 20 %). 40 trusted rows per draw, drawn
    # from the same distribution; the chunk's true cardinality is inside the 95 % interval in 90-99 % of
    # 400 draws (binomial s.e. 1.1 %), and the mean error is within 3 s.e. of 0.
    from ncld_core.stream.noise_families import draw_family_rates

    Y = make_synthetic_stream(n_instances=20_000, flip_rates=None, random_state=1).Y_true
    rho_pos, rho_neg = draw_family_rates("missing", Y.shape[1], random_state=0)
    rng = np.random.default_rng(5)
    errors, inside, biased = [], [], []
    for draw in range(400):
        rows = rng.choice(Y.shape[0], CHUNK + 40, replace=False)
        noisy = apply_label_noise(Y[rows], rho_pos, rho_neg, random_state=[draw, 7])
        chunk, trusted = slice(0, CHUNK), slice(CHUNK, None)
        truth = Y[rows][chunk].sum(axis=1).mean()
        est = moment_cardinality(noisy[chunk], 0.0, rho_neg,
                                 trusted=(noisy[trusted], Y[rows][trusted].sum(axis=1), None))
        plain = moment_cardinality(noisy[chunk], 0.0, rho_neg)
        assert est.point_identified and est.n_trusted == 40
        errors.append(est.estimate - truth)
        biased.append(plain.estimate - truth)
        inside.append(est.low <= truth <= est.high)
    errors = np.array(errors)
    assert 0.90 <= np.mean(inside) <= 0.99, np.mean(inside)
    assert abs(errors.mean()) < 3 * errors.std(ddof=1) / np.sqrt(len(errors))
    assert np.mean(biased) < -0.15 * Y.sum(axis=1).mean()  # what the trusted rows correct


def test_too_few_trusted_rows_for_the_regression_give_an_unbiased_mean_inside_the_identified_set():
    # The paper's noise on the generator's clean labels; the rates only bounded ([0, 0.45] each: not identified).
    # Five trusted rows per draw (a 1 % sample of a chunk of 500): below MIN_TRUSTED, so no regression; the
    # estimate is their mean clean cardinality, kept in the identified set, whose interval holds the chunk's truth
    # in every draw. Over 400 draws the mean error is within 3 s.e. of 0, while the plug-in of wrong rates inside
    # the bounds without the rows (each prevalence cut to [0, 1]) is biased by more than 10 % of the cardinality.
    from ncld_core.model.cardinality import MIN_TRUSTED

    Y = make_synthetic_stream(n_instances=20_000, flip_rates=None, random_state=2).Y_true
    q = Y.shape[1]
    rho_pos, rho_neg = draw_flip_rates(q, random_state=3)
    bounds = (np.zeros(q), np.full(q, 0.45), np.zeros(q), np.full(q, 0.45))
    rng = np.random.default_rng(11)
    n_rows = 5
    assert n_rows < MIN_TRUSTED
    errors, plug_in, inside = [], [], []
    for draw in range(400):
        rows = rng.choice(Y.shape[0], CHUNK + n_rows, replace=False)
        noisy = apply_label_noise(Y[rows], rho_pos, rho_neg, random_state=[draw, 9])
        chunk, trusted = slice(0, CHUNK), slice(CHUNK, None)
        truth = Y[rows][chunk].sum(axis=1).mean()
        rates = (0.225, 0.2)  # an estimator's values inside the bounds, not the truth (both ~ U[0.2, 0.4])
        est = moment_cardinality(noisy[chunk], *rates, rate_intervals=bounds,
                                 trusted=(noisy[trusted], Y[rows][trusted].sum(axis=1), None))
        without = moment_cardinality(noisy[chunk], *rates, rate_intervals=bounds)
        assert not est.point_identified and est.n_trusted == n_rows
        assert (est.low, est.high) == (without.low, without.high)  # the interval: the identified set
        errors.append(est.estimate - truth)
        plug_in.append(without.estimate - truth)
        inside.append(est.low <= truth <= est.high)
    errors = np.array(errors)
    assert np.mean(inside) == 1.0
    assert abs(errors.mean()) < 3 * errors.std(ddof=1) / np.sqrt(len(errors)), errors.mean()
    assert abs(np.mean(plug_in)) > 0.10 * Y.sum(axis=1).mean(), np.mean(plug_in)


def test_a_few_trusted_rows_are_checked_and_rows_weighed_to_nothing_count_as_none():
    Y = np.eye(3)[[0, 1, 2, 0, 0]]
    bounds = (0, 0.3, 0, 0.3)
    rows = (np.array([[1, 0, 0], [0, 1, 1]]), np.array([1.0, 2.0]))
    without = moment_cardinality(Y, 0.1, 0.1, rate_intervals=bounds)
    gone = moment_cardinality(Y, 0.1, 0.1, rate_intervals=bounds, trusted=(*rows, np.zeros(2)))  # drift_decay=0
    assert (gone.estimate, gone.low, gone.high, gone.n_trusted) == (without.estimate, without.low, without.high, 0)
    with pytest.raises(ValueError, match="^trusted: expected observed labels"):
        moment_cardinality(Y, 0.1, 0.1, rate_intervals=bounds, trusted=(rows[0][:, :2], rows[1]))
