"""Issue 25, items 3, 4, 6: detection that rates cannot fake, the sequential tests and their calibration, the
oracle delay, false alarms under every noise family (fixed seeds, stated tolerances)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ncld_core.eval.drift_eval import oracle_delay, oracle_noncentrality
from ncld_core.model import ELMNCLD
from ncld_core.model.cardinality import moment_cardinality
from ncld_core.model.detector import DETECTORS, ChunkSignal, make_detector
from ncld_core.model.glr import glr_p_value, glr_threshold
from ncld_core.stream.noise_families import NOISE_FAMILIES, draw_family_rates


def _bound(delta, n):
    """delta plus three binomial standard errors: a calibrated test exceeds it with probability ~0.1 %."""
    return delta + 3 * math.sqrt(delta * (1 - delta) / n)


def _flip(G, rho_pos, rho_neg, rng):
    U = rng.random(G.shape)
    return np.where(G == 1, U >= rho_pos, U < rho_neg).astype(np.int8)


# ----------------------------------------------------------------------------- the GLR and its calibration
def test_one_split_threshold_is_the_normal_quantile_and_p_values_match_thresholds():
    assert glr_threshold(0.05, 2) == pytest.approx(1.96, abs=0.04)  # simulated: one standard error ~0.015
    assert glr_threshold(0.025, 2) == pytest.approx(2.241, abs=0.04)
    for m in (2, 5, 17, 32):
        for delta in (0.05, 0.025, 0.01):
            assert glr_p_value(glr_threshold(delta, m), m) == pytest.approx(delta, rel=0.02)
    assert glr_threshold(1e-6, 8) == pytest.approx(-__import__("scipy.special").special.ndtri(1e-6 / 14), rel=1e-9)


@pytest.mark.parametrize("name", ["glr", "labels-glr", "glr+labels"])
def test_the_sequential_tests_keep_their_false_alarm_rate_on_long_stationary_streams(name):
    """delta is the probability of a false alarm at every chunk: the mean time between false alarms is 1/delta."""
    rng = np.random.default_rng(11)
    prevalence = np.array([0.5, 0.4, 0.3, 0.25, 0.2, 0.15, 0.1, 0.05])
    rho_pos, rho_neg = np.full(8, 0.25), np.full(8, 0.3)
    det, fired = make_detector(name, 0.05), []
    for _ in range(600):
        Y = _flip((rng.random((200, 8)) < prevalence).astype(np.int8), rho_pos, rho_neg, rng)
        fired.append(det.update(ChunkSignal.from_labels(Y, moment_cardinality(Y, rho_pos, rho_neg).per_instance)).fired)
    rate = np.mean(fired[1:])
    assert rate <= _bound(0.05, 599), rate
    if name == "glr":  # calibrated, not merely conservative
        assert rate >= 0.05 - 3 * math.sqrt(0.05 * 0.95 / 599), rate


def test_the_glr_catches_a_change_too_small_for_one_chunk_before_the_adjacent_test_does():
    """A shift of 0.2 sd per instance in chunks of 100 (z = 1.4 for one chunk against one): the window's
    newest chunks pile up against an unmoved reference."""
    found = {"glr": [], "welch": []}
    for seed in range(40):
        rng = np.random.default_rng([seed, 3])
        dets = {k: make_detector(k, 0.05) for k in found}
        first = {k: None for k in found}
        for i in range(24):
            x = rng.normal(2.0 + (0.2 if i >= 8 else 0.0), 1.0, size=100)
            for k, d in dets.items():
                if d.update(ChunkSignal.from_cardinality(x)).fired and i >= 8 and first[k] is None:
                    first[k] = i - 8
        for k in found:
            found[k].append(first[k] is not None and first[k] <= 8)
    assert np.mean(found["glr"]) >= 0.8, found  # measured 0.9 (welch 0.55)
    assert np.mean(found["glr"]) > np.mean(found["welch"]) + 0.2, found


def test_the_sequential_label_test_finds_a_shift_the_one_split_test_folds_into_its_reference():
    """A small label shift at constant cardinality (two labels trade 0.03 of prevalence)."""
    base = np.array([0.3, 0.3, 0.2, 0.2, 0.1, 0.1])
    shifted = base + np.array([0.03, -0.03, 0, 0, 0, 0])
    found = {"labels": 0, "labels-glr": 0}
    for seed in range(30):
        rng = np.random.default_rng([seed, 5])
        dets = {k: make_detector(k, 0.05) for k in found}
        hit = {k: False for k in found}
        for i in range(20):
            G = (rng.random((300, 6)) < (shifted if i >= 8 else base)).astype(np.int8)
            for k, d in dets.items():
                if d.update(ChunkSignal.from_labels(G)).fired and i >= 8:
                    hit[k] = True
        for k in found:
            found[k] += hit[k]
    assert found["labels-glr"] >= found["labels"] + 5, found


# ----------------------------------------------------------------------------- the label test's covariance
def _sparse_missing_label_chunks(seed, n_chunks, n=200, q=60):
    """Sparse, correlated labels (a latent topic per instance) under missing-label noise: the case where one
    chunk's covariance under-estimates the rare labels' variances."""
    rng = np.random.default_rng([seed, 9])
    topics = (rng.random((6, q)) < 0.08).astype(float) * rng.uniform(0.2, 0.7, (6, q)) + 0.004
    rho_pos, rho_neg = draw_family_rates("missing", q, random_state=[seed, 1])
    for _ in range(n_chunks):
        t = rng.integers(0, 6, size=n)
        G = (rng.random((n, q)) < topics[t]).astype(np.int8)
        yield _flip(G, rho_pos, rho_neg, rng)


@pytest.mark.parametrize("name", ["labels", "labels-glr", "adaptive+labels", "glr+labels"])
def test_the_joint_label_test_holds_its_rate_on_sparse_labels_under_missing_label_noise(name):
    fired, chunks = 0, 0
    for seed in range(4):
        det = make_detector(name, 0.05)
        flags = [det.update(ChunkSignal.from_labels(Y)).fired for Y in _sparse_missing_label_chunks(seed, 60)]
        fired, chunks = fired + sum(flags[1:]), chunks + len(flags) - 1
    assert fired / chunks <= _bound(0.05, chunks), (fired, chunks)


# ----------------------------------------------------------------------------- rates cannot fake a change
def _xy(rng, n, q=6):
    X = rng.normal(size=(n, 5))
    logits = X[:, :q % 5 + 1].sum(axis=1, keepdims=True) * 0.5 + rng.normal(size=(n, q)) - 1.0
    return X, (logits > 0).astype(np.int8)


def test_with_rates_estimated_the_tests_of_the_mean_read_the_observed_cardinality():
    rng = np.random.default_rng(0)
    X, Y = _xy(rng, 600)
    model = ELMNCLD(n_hidden=30, n_neighbors=5, random_state=0, monitors=("glr",))
    told = ELMNCLD(n_hidden=30, n_neighbors=5, random_state=0, rho_pos=np.full(6, 0.2), rho_neg=np.full(6, 0.1),
                   monitors=("glr",))
    for a in range(0, 600, 200):
        model.partial_fit(X[a:a + 200], Y[a:a + 200])
        told.partial_fit(X[a:a + 200], Y[a:a + 200])
    observed = [Y[a:a + 200].sum(axis=1).mean() for a in range(0, 600, 200)]
    assert np.allclose(model.monitors_["glr"].window_[:, 1], observed)
    assert np.allclose(model.detector_.cardinality_.window_[:, 1], observed)
    moment = [moment_cardinality(Y[a:a + 200], np.full(6, 0.2), np.full(6, 0.1)).per_instance.mean()
              for a in range(0, 600, 200)]
    assert np.allclose(told.monitors_["glr"].window_[:, 1], moment)  # rates told: the moment cardinality
    assert not np.allclose(moment, observed)


@pytest.mark.parametrize("family", list(NOISE_FAMILIES))
def test_rates_estimated_the_default_keeps_false_alarms_below_the_target_under_every_family(family):
    """ELMNCLD() on stationary synthetic streams of each noise family (issue 25: <= 0.05 per stationary chunk)."""
    from ncld_core.stream.synthetic import make_synthetic_stream

    fired, chunks = 0, 0
    for seed in range(3):
        stream = make_synthetic_stream(n_instances=20 * 250, flip_rates=family, random_state=seed)
        model = ELMNCLD(random_state=seed)
        for a, b in stream.chunk_bounds(250):
            model.partial_fit(stream.X[a:b], stream.Y_noisy[a:b])
        flags = model.history_["fired"].tolist()
        fired, chunks = fired + sum(flags[1:]), chunks + len(flags) - 1
    assert fired / chunks <= _bound(0.05, chunks), (family, fired, chunks)


# about 40 s a family on corel16k001 but the paper's (4 s): those two in the slow tier (make test-slow, in CI)
@pytest.mark.parametrize("family", [f if f == "paper" else pytest.param(f, marks=pytest.mark.slow)
                                    for f in NOISE_FAMILIES])
def test_rates_told_every_detector_holds_its_rate_on_a_sparse_dataset_under_every_family(family, data_dir):
    """corel16k001 (153 labels), shuffled, chunks of 500: the label test fired on 35 % of these chunks under
    missing-label noise before its covariance was pooled over the window."""
    from ncld_core.data import load_dataset
    from ncld_core.stream.builder import build_stream

    d = load_dataset("corel16k001")
    names = [n for n in DETECTORS if n != "paper"]
    fired, chunks = dict.fromkeys(names, 0), 0
    for seed in range(2):
        stream = build_stream(d.X, d.Y, name="corel16k001", flip_rates=family, n_instances=13_500, random_state=seed)
        dets = {n: make_detector(n, 0.05) for n in names}
        for i, (a, b) in enumerate(stream.chunk_bounds(500)):
            Y = stream.Y_noisy[a:b]
            signal = ChunkSignal.from_labels(Y, moment_cardinality(Y, stream.rho_pos, stream.rho_neg).per_instance)
            for n, det in dets.items():
                fired[n] += det.update(signal).fired and i > 0
            chunks += i > 0
    assert all(f / chunks <= _bound(0.05, chunks) for f in fired.values()), (fired, chunks)


# ----------------------------------------------------------------------------- the oracle delay
def _one_label_change():
    """One noiseless label from 0.3 to 0.4 (3000 instances before and after) and its zero flip rates."""
    pre = np.zeros((3000, 1), dtype=int)
    pre[:900] = 1
    post = np.zeros((3000, 1), dtype=int)
    post[:1200] = 1
    return pre, post, np.zeros(1)


def test_the_oracle_delay_of_one_label_is_the_closed_form():
    """One noiseless label from 0.3 to 0.4: lambda_d^2 = 0.1^2 / (p(1-p)) / (1/(d N) + 1/n_ref), with p the
    pooled prevalence; the oracle needs lambda_d >= z_0.95 + z_0.9."""
    pre, post, zero = _one_label_change()
    ncp = oracle_noncentrality(pre, post, zero, zero)
    pooled = 2100 / 6000
    sampling = (0.21 * 3000 + 0.24 * 3000) / 5998 / (pooled * (1 - pooled)) * (2 / 3000)
    assert ncp == pytest.approx(0.01 / (pooled * (1 - pooled)) - sampling, rel=1e-9)
    need = (1.6448536 + 1.2815516) ** 2
    expected = next(d for d in range(1, 100) if ncp / (1 / (d * 50) + 1 / 3000) >= need) - 1
    assert oracle_delay(pre, post, zero, zero, chunk=50, max_chunks=100) == expected
    assert oracle_delay(pre, post, zero, zero, chunk=50, max_chunks=expected) is None  # beyond the segment


def test_the_oracle_that_does_not_know_the_direction_uses_the_chi_square_test_and_is_slower_with_more_labels():
    """One label: the chi-square test on 1 direction is the two-sided z-test, power
    ``P(chi2_1(lambda^2) > z_0.975^2)``; the same change among 20 unmoved labels needs more chunks (20 directions
    to search), while the oracle told the direction does not care."""
    import scipy.stats

    pre, post, zero = _one_label_change()
    ncp = oracle_noncentrality(pre, post, zero, zero)
    critical = scipy.stats.chi2.isf(0.05, 1)
    expected = next(d for d in range(1, 100)
                    if scipy.stats.ncx2.sf(critical, 1, ncp / (1 / (d * 50) + 1 / 3000)) >= 0.9) - 1
    assert oracle_delay(pre, post, zero, zero, chunk=50, max_chunks=100, direction="unknown") == expected
    assert expected > oracle_delay(pre, post, zero, zero, chunk=50, max_chunks=100)  # one-sided, told: sooner
    rng = np.random.default_rng(5)
    quiet = (rng.random((3000, 20)) < 0.2).astype(int)
    wide_pre, wide_post = np.hstack([pre, quiet]), np.hstack([post, (rng.random((3000, 20)) < 0.2).astype(int)])
    rates = np.zeros(21)
    wide = oracle_delay(wide_pre, wide_post, rates, rates, chunk=50, max_chunks=100, direction="unknown")
    assert wide > expected
    assert oracle_delay(wide_pre, wide_post, rates, rates, chunk=50, max_chunks=100) <= expected
    with pytest.raises(ValueError, match="direction"):
        oracle_delay(pre, post, zero, zero, chunk=50, max_chunks=10, direction="sideways")


def test_the_oracle_sees_no_change_between_samples_of_one_distribution():
    rng = np.random.default_rng(3)
    p = np.array([0.4, 0.2, 0.1, 0.05])
    delays = [oracle_delay((rng.random((1000, 4)) < p), (rng.random((1000, 4)) < p), np.full(4, 0.2),
                           np.full(4, 0.2), chunk=100, max_chunks=10) for _ in range(20)]
    assert sum(d is not None for d in delays) <= 2, delays
