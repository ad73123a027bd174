"""Tests of ncld_core.stream.synthetic: the generator's truth is what it claims to be.

Statistical checks use fixed seeds. Tolerances: 4 standard deviations for
exact binomial / Bernoulli statements; for cardinalities, 3 standard errors of
the realised mean plus 0.03 for the Monte-Carlo error of the offsets (solved on
a 50 000-instance reference sample, whose own standard error is below 0.01).
"""

from __future__ import annotations

import numpy as np
import pytest

from ncld_core.stream import ChangePoint, Stream
from ncld_core.stream.schedule import DriftSchedule
from ncld_core.stream.synthetic import make_synthetic_stream, solve_offset

Z = 4.0
BIAS = 0.03


def card_ok(Y, target):
    card = Y.sum(axis=1)
    se = card.std(ddof=1) / np.sqrt(card.size)
    return abs(card.mean() - target) <= 3 * se + BIAS, card.mean(), se


@pytest.fixture(scope="module")
def drift_stream():
    return make_synthetic_stream(
        30_000, schedule="growth@10000, reduction@20000", low_cardinality=1.0, high_cardinality=3.0, random_state=11
    )


@pytest.fixture(scope="module")
def plain_stream():
    return make_synthetic_stream(30_000, cardinality=2.0, random_state=3)


def test_returns_stream_with_everything(plain_stream):
    s = plain_stream
    assert isinstance(s, Stream)
    assert s.X.shape == (30_000, 20) and s.Y_true.shape == s.Y_noisy.shape == s.P_true.shape == (30_000, 10)
    assert s.Y_true.dtype == s.Y_noisy.dtype == np.int8
    assert s.label_names == tuple(f"label_{j}" for j in range(10))
    assert s.change_points == ()
    assert np.all((s.rho_pos >= 0.2) & (s.rho_pos <= 0.4) & (s.rho_neg >= 0.2) & (s.rho_neg <= 0.4))
    assert set(s.meta["offsets"]) == {"constant"} and s.meta["config"]["cardinality"] == 2.0


def test_deterministic_per_seed():
    kw = dict(n_instances=3000, schedule="reduction@1000", random_state=42)
    a, b = make_synthetic_stream(**kw), make_synthetic_stream(**kw)
    for attr in ("X", "Y_true", "Y_noisy", "P_true", "rho_pos", "rho_neg"):
        np.testing.assert_array_equal(getattr(a, attr), getattr(b, attr))
    assert a.meta == b.meta and a.change_points == b.change_points
    c = make_synthetic_stream(**{**kw, "random_state": 43})
    assert not np.array_equal(a.X, c.X) and not np.array_equal(a.Y_true, c.Y_true)
    g = make_synthetic_stream(**{**kw, "random_state": np.random.default_rng(42)})
    h = make_synthetic_stream(**{**kw, "random_state": np.random.default_rng(42)})
    np.testing.assert_array_equal(g.Y_noisy, h.Y_noisy)


def test_noise_choice_does_not_change_the_truth():
    # Each step has its own random stream: the clean data do not depend on the noise option.
    a = make_synthetic_stream(2000, flip_rates=None, random_state=5)
    b = make_synthetic_stream(2000, flip_rates="paper", random_state=5)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.Y_true, b.Y_true)
    np.testing.assert_array_equal(a.Y_noisy, a.Y_true)
    assert a.rho_pos.tolist() == [0.0] * 10


def test_cardinality_hits_target_without_schedule(plain_stream):
    ok, mean, se = card_ok(plain_stream.Y_true, 2.0)
    assert ok, f"true cardinality {mean:.4f} (SE {se:.4f}), target 2.0"
    # The expected cardinality given x, too.
    ok, mean, se = card_ok(plain_stream.P_true, 2.0)
    assert ok, f"E[sum P] {mean:.4f} (SE {se:.4f}), target 2.0"


@pytest.mark.parametrize("target", [0.5, 4.5])
def test_cardinality_other_targets(target):
    s = make_synthetic_stream(20_000, n_labels=6, cardinality=target, flip_rates=None, random_state=8)
    ok, mean, se = card_ok(s.Y_true, target)
    assert ok, f"true cardinality {mean:.4f} (SE {se:.4f}), target {target}"


def test_cardinality_follows_the_schedule(drift_stream):
    s = drift_stream
    assert s.change_points == (ChangePoint(10_000, "growth"), ChangePoint(20_000, "reduction"))
    for (a, b), target in zip([(0, 10_000), (10_000, 20_000), (20_000, 30_000)], [1.0, 3.0, 1.0]):
        ok, mean, se = card_ok(s.Y_true[a:b], target)
        assert ok, f"segment [{a}, {b}): true cardinality {mean:.4f} (SE {se:.4f}), target {target}"
    assert s.meta["offsets"]["single"] < s.meta["offsets"]["multi"]
    assert s.meta["segments"] == [[0, 10_000, "single"], [10_000, 20_000, "multi"], [20_000, 30_000, "single"]]


def test_drift_changes_labels_not_features(drift_stream):
    X = drift_stream.X
    before, after = X[:10_000], X[10_000:20_000]
    se = np.sqrt(before.var(axis=0) / len(before) + after.var(axis=0) / len(after))
    assert np.all(np.abs(before.mean(axis=0) - after.mean(axis=0)) <= Z * se)


def test_paper_form_schedule_changes_in_the_middle():
    s = make_synthetic_stream(1000, schedule=DriftSchedule.paper("reduction"), random_state=0)
    assert s.change_points == (ChangePoint(500, "reduction"),)
    assert s.P_true[:500].sum(axis=1).mean() > s.P_true[500:].sum(axis=1).mean() + 1.0


def test_labels_drawn_from_P_true(plain_stream):
    Y, P = plain_stream.Y_true.astype(float), plain_stream.P_true
    n = len(Y)
    # Per label: mean of Y vs mean of P, Bernoulli variance given P.
    sd = np.sqrt((P * (1 - P)).sum(axis=0)) / n
    assert np.all(np.abs(Y.mean(axis=0) - P.mean(axis=0)) <= Z * sd)
    # Calibration: within deciles of P (all labels pooled), Y's frequency matches P.
    p, y = P.ravel(), Y.ravel()
    bins = np.quantile(p, np.linspace(0, 1, 11))
    which = np.clip(np.searchsorted(bins, p, side="right") - 1, 0, 9)
    for k in range(10):
        m = which == k
        sd = np.sqrt((p[m] * (1 - p[m])).sum()) / m.sum()
        assert abs(y[m].mean() - p[m].mean()) <= Z * sd, f"decile {k}"


def test_labels_conditionally_independent_given_x(plain_stream):
    # The assumption behind Eq. (card): residuals Y - P of two labels are uncorrelated.
    R = plain_stream.Y_true - plain_stream.P_true
    V = plain_stream.P_true * (1 - plain_stream.P_true)
    n, q = R.shape
    for i in range(q):
        for j in range(i + 1, q):
            sd = np.sqrt((V[:, i] * V[:, j]).sum()) / n
            assert abs((R[:, i] * R[:, j]).mean()) <= Z * sd, f"labels {i}, {j}"


def test_noisy_labels_follow_flip_rates(plain_stream):
    s = plain_stream
    for j in range(s.n_labels):
        g, y = s.Y_true[:, j], s.Y_noisy[:, j]
        for truth, flipped, rho in ((1, 0, s.rho_pos[j]), (0, 1, s.rho_neg[j])):
            m = g == truth
            freq = np.mean(y[m] == flipped)
            sd = np.sqrt(rho * (1 - rho) / m.sum())
            assert abs(freq - rho) <= Z * sd, f"label {j}, g={truth}: {freq:.4f} vs {rho:.4f}"


def test_explicit_flip_rates():
    s = make_synthetic_stream(500, n_labels=3, flip_rates={"rho_pos": [0.0, 0.1, 0.2], "rho_neg": 0.05})
    assert s.rho_pos.tolist() == [0.0, 0.1, 0.2] and s.rho_neg.tolist() == [0.05] * 3
    assert np.all(s.Y_noisy[s.Y_true[:, 0] == 1, 0] == 1)  # rho_pos = 0: no positive lost


def mean_pairwise_correlation(Y):
    C = np.corrcoef(Y.T.astype(float))
    return C[np.triu_indices_from(C, k=1)].mean()


def test_label_correlation_controls_co_occurrence():
    r = {
        c: mean_pairwise_correlation(
            make_synthetic_stream(20_000, label_correlation=c, flip_rates=None, random_state=1).Y_true
        )
        for c in (0.0, 0.5, 1.0)
    }
    # Measured with this seed: about 0.0, 0.15, 0.30.
    assert abs(r[0.0]) < 0.05
    assert r[0.0] + 0.05 < r[0.5] < r[1.0] - 0.05
    assert r[1.0] - r[0.0] > 0.15


def test_feature_neighbours_share_labels():
    # Cluster structure and smooth P(g|x): a k-NN graph on features is informative.
    s = make_synthetic_stream(1500, flip_rates=None, random_state=2)
    X, P = s.X, s.P_true
    sq = (X**2).sum(axis=1)
    D = sq[:, None] + sq[None, :] - 2 * X @ X.T
    np.fill_diagonal(D, np.inf)
    nn = D.argmin(axis=1)
    rand = np.random.default_rng(0).permutation(len(X))
    near = np.abs(P - P[nn]).mean()
    far = np.abs(P - P[rand]).mean()
    assert near < 0.75 * far, (near, far)


def test_solve_offset_is_exact():
    logits = np.random.default_rng(0).normal(size=(1000, 5))
    for target in (0.1, 2.5, 4.9):
        b = solve_offset(logits, target)
        assert abs((1 / (1 + np.exp(-(logits + b)))).sum(axis=1).mean() - target) < 1e-8
    with pytest.raises(ValueError, match="target cardinality"):
        solve_offset(logits, 5.0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(n_instances=1), "n_instances must be in"),
        (dict(n_instances=10.5), "n_instances must be an integer"),
        (dict(n_features=0), "n_features"),
        (dict(n_labels=0), "n_labels"),
        (dict(cardinality=0), "cardinality must be in \\(0, 10\\)"),
        (dict(cardinality=10), "cardinality must be in \\(0, 10\\)"),
        (dict(label_correlation=1.5), "label_correlation"),
        (dict(label_correlation=-0.1), "label_correlation"),
        (dict(schedule="growth@600"), "schedule: drift point 'growth@600' lies beyond the stream of 500"),
        (dict(schedule="growth@100, growth@200"), "must alternate"),
        (dict(schedule=5), "schedule must be"),
        (dict(schedule="growth@100", low_cardinality=3.0, high_cardinality=2.0), "low_cardinality must be < high"),
        (dict(schedule="growth@100", high_cardinality=10.0), "high_cardinality must be in"),
        (dict(schedule="growth@100", low_cardinality=0.0), "low_cardinality must be in"),
        (dict(flip_rates=(0.6, 0.7)), "use low < 0.5"),
        (dict(flip_rates=[[0.1, 0.1]] * 3), "3 rows"),
        (dict(n_clusters=0), "n_clusters"),
        (dict(signal=-1.0), "signal"),
        (dict(reference_size=10), "reference_size"),
        (dict(name=""), "name"),
    ],
)
def test_parameter_errors(kwargs, match):
    kwargs = {"n_instances": 500, **kwargs}
    with pytest.raises(ValueError, match=match):
        make_synthetic_stream(**kwargs)


def test_meta_config_reproduces_the_stream():
    # The configuration stored in meta is JSON-friendly and complete: passing it back
    # gives the same stream (used to save and reload a lab session).
    import json

    a = make_synthetic_stream(1500, n_labels=5, schedule="growth@500", flip_rates=(0.1, 0.2), random_state=9)
    config = json.loads(json.dumps(a.meta["config"]))
    b = make_synthetic_stream(**config)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.Y_noisy, b.Y_noisy)
    np.testing.assert_array_equal(a.rho_pos, b.rho_pos)
    assert a.change_points == b.change_points


@pytest.mark.parametrize("q, target", [(10, 2.0), (10, 0.01), (10, 9.99), (100, 0.3), (100, 99.5), (3, 1e-4)])
def test_solve_offset_agrees_with_brents_method_in_the_tails(q, target):
    """Newton on the log scale (solve_offset) finds the root Brent's method did, to 1e-9, tails included."""
    from scipy.optimize import brentq
    from scipy.special import expit

    logits = np.random.default_rng(q).normal(0, 2.5, size=(2000, q))
    span = float(np.abs(logits).max()) + 40
    reference = brentq(lambda b: expit(logits + b).sum(axis=1).mean() - target, -span, span, xtol=1e-12,
                       rtol=1e-14, maxiter=500)
    assert abs(solve_offset(logits, target) - reference) < 1e-9
