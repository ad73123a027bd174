"""The cardinality interval after a change of the label distribution, flip rates unknown (issue 39, item 3).

Statistical tests with fixed seeds; each states its tolerance.  The full measurement (the presets and the drift
benchmark's planted changes, every noise family): ``python -m benchmarks.change_coverage``
(``docs/change-coverage.md``).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ncld_core.config import PRESETS
from ncld_core.eval.drift_eval import change_chunks
from ncld_core.model.cardinality import changed_along, moment_cardinality, regression_estimate
from ncld_core.model.counted_rates import counted_estimate
from ncld_core.model.flip_rates import FlipRateEstimator
from ncld_core.stream.noise_families import draw_family_rates


def _draw(rng, n, cardinality, rho_pos, rho_neg):
    q = rho_pos.size
    G = (rng.random((n, q)) < cardinality / q).astype(float)
    flips = rng.random(G.shape)
    return G, np.where(G == 1, flips >= rho_pos, flips < rho_neg).astype(float)


def test_the_counted_rates_interval_covers_after_a_reduction_where_the_regression_misses():
    # 400 draws: per draw the paper's rates (each ~ U[0.2, 0.4] per label, 10 labels), 60 trusted rows drawn at
    # cardinality 3, then a chunk of 250 at cardinality 1 (a reduction).  The counted-rates interval rests on the
    # rates alone: its coverage of the chunk's true cardinality is in the 90-99 % band (binomial s.e. over 400
    # independent draws 1.1 %; measured 94.0 %).  The trusted rows' regression, which carries their cardinality
    # of 3, holds the truth in under half of the draws (measured: none): what the counted estimate replaces after
    # a change.
    rng = np.random.default_rng(39)
    counted, regression = [], []
    for draw in range(400):
        rho_pos, rho_neg = draw_family_rates("paper", 10, random_state=[draw, 3])
        G_tr, Y_tr = _draw(rng, 60, 3.0, rho_pos, rho_neg)
        G, Y = _draw(rng, 250, 1.0, rho_pos, rho_neg)
        truth = G.sum(axis=1).mean()
        counts = np.stack([G_tr.sum(0), (G_tr * (1 - Y_tr)).sum(0), (1 - G_tr).sum(0), ((1 - G_tr) * Y_tr).sum(0)])
        _, _, low, high = counted_estimate(Y, counts)
        counted.append(low <= truth <= high)
        c = lambda Y: ((Y - 0.3) / 0.4).sum(axis=1)  # the moment estimate at the rates' mean  # noqa: E731
        _, _, low, high = regression_estimate(c(Y), c(Y_tr), G_tr.sum(axis=1))
        regression.append(low <= truth <= high)
    assert 0.90 <= np.mean(counted) <= 0.99, np.mean(counted)
    assert np.mean(regression) < 0.5, np.mean(regression)


def _undetected_change(before: float, after: float, draws: int = 300):
    """Per draw (the paper's rates on 40 labels): 30 trusted rows at cardinality ``before``, then 20 at ``after``
    with no firing between, and a chunk of 50 at ``after``; whether the model's interval (plug-in rates 0.3, the
    trusted rows' counts) holds the chunk's true cardinality, and whether :func:`changed_along` fired."""
    rng = np.random.default_rng(39)
    q, box = 40, (np.zeros(40), np.full(40, 0.45), np.zeros(40), np.full(40, 0.45))
    covered, fired = [], []
    for draw in range(draws):
        rho_pos, rho_neg = draw_family_rates("paper", q, random_state=[draw, 5])
        G_old, Y_old = _draw(rng, 30, before, rho_pos, rho_neg)
        G_new, Y_new = _draw(rng, 20, after, rho_pos, rho_neg)
        G, Y = _draw(rng, 50, after, rho_pos, rho_neg)
        G_tr, Y_tr = np.vstack([G_old, G_new]), np.vstack([Y_old, Y_new])
        counts = np.stack([G_tr.sum(0), (G_tr * (1 - Y_tr)).sum(0), (1 - G_tr).sum(0), ((1 - G_tr) * Y_tr).sum(0)])
        e = moment_cardinality(Y, 0.3, 0.3, rate_intervals=box, trusted=(Y_tr, G_tr.sum(1), np.ones(50)), counts=counts)
        covered.append(e.low <= G.sum(axis=1).mean() <= e.high)
        fired.append(changed_along(G_tr.sum(axis=1)))
    return np.mean(covered), np.mean(fired)


def test_a_change_along_the_trusted_rows_with_no_firing_widens_the_interval_to_hold_the_truth():
    # The detector has not fired (the drift benchmark's langlog and medical streams: 10 chunks late, or never), so
    # the trusted rows drawn before the change still make the regression.  300 draws each (binomial s.e. of a
    # coverage near 0.9: 1.7 points); the bar, 85 %, is 3 of them below the band's 90 %.  Before changed_along
    # (the regression alone, the chunk's noisy labels too noisy for `shifted`): reduction 13 %, growth 21 %.
    # Measured: reduction 90.0 %, growth 95.7 %.
    for before, after in ((3.0, 1.0), (1.0, 3.0)):
        covered, _ = _undetected_change(before, after)
        assert covered >= 0.85, (before, after, covered)
    # With no change the test fires at its level (5 %; measured 2.0 %) and the interval stays the regression's
    # (measured coverage 94.3 %, as before changed_along); bars: 2 s.e. of 300 draws above 5 %, and the 90-99 % band.
    covered, fired = _undetected_change(2.0, 2.0)
    assert fired <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / 300), fired
    assert 0.90 <= covered <= 0.99, covered


def test_a_detected_change_weighs_the_older_trusted_rows_to_nothing_and_keeps_the_flip_counts():
    rng = np.random.default_rng(0)
    n, q = 60, 4
    Y = (rng.random((n, q)) < 0.4).astype(float)
    G = Y.copy()
    G[:5, 0] = 1 - G[:5, 0]  # five flips of label 0
    nbrs = np.tile(np.arange(1, 6), (n, 1)) % n
    est = FlipRateEstimator()
    for _ in range(2):
        est = est.updated(np.full((n, q), 0.5), Y, nbrs, trusted=np.ones(n, bool), Y_trusted=G)
    after = est.after_change()
    assert after.trusted_weight_.tolist() == [0.0] * (2 * n)
    assert np.array_equal(after.trusted_counts_, est.trusted_counts_)
    assert est.trusted_weight_.tolist() == [1.0] * (2 * n)  # the estimator it came from is unchanged


def _after_change(name: str, seed: int, fraction: float):
    """(true cardinality, low, high) of ELM-O's records in the chunks from the preset's change on, rates estimated."""
    cfg = dataclasses.replace(PRESETS[name], model_rates="estimate", trusted_fraction=fraction, seed=seed,
                              shuffle_seed=seed, references=False, models=["ELM-O"])
    stream = cfg.build_stream()
    chunks = cfg.runner().run(stream).chunks
    first = change_chunks([cp.position for cp in stream.change_points], cfg.chunk_size)[0]
    return [(c.true_cardinality, c.diagnostics["ELM-O"].lcard_low, c.diagnostics["ELM-O"].lcard_high)
            for c in chunks if c.chunk >= first]


@pytest.mark.slow  # 24 runs of the presets: over 20 s on a shared machine
def test_the_presets_interval_holds_the_truth_after_the_change_with_2_percent_trusted():
    # Issue 39: with 2 % of the rows trusted, the 95 % interval should hold the true cardinality in 90-99 % of the
    # chunks after the change.  Seeds 0-7 of the growth and reduction presets (10 chunks after the change each) and
    # of the label-shift preset (5 each).  A stream's chunks share its trusted rows, so they are covered or missed
    # together: the spread of 20 seeds' coverages gives a s.e. over 8 seeds of 5 points on the reduction (1 on the
    # growth, 3 on the shift); the bar, 85 %, is 2 of them below the nominal 95 %.  Before (the regression
    # restarted by nothing, the calibration estimate after a shift), seeds 0-3: growth 80 %, reduction 38 %.
    # Measured on seeds 0-7: growth 100 %, reduction 93.8 %, shift 95 % (seeds 0-19: 100 %, 94 %, 97 %).
    for name in ("concept growth", "concept reduction", "label shift"):
        rows = [r for seed in range(8) for r in _after_change(name, seed, 0.02)]
        covered = np.mean([low <= t <= high for t, low, high in rows])
        assert covered >= 0.85, (name, covered)


def test_without_trusted_rows_the_identified_set_holds_the_truth_after_the_change():
    for name in ("concept growth", "concept reduction"):
        rows = [r for seed in range(3) for r in _after_change(name, seed, 0.0)]
        assert all(low <= t <= high for t, low, high in rows), name
