"""Metrics against scikit-learn, hand-computed conventions, and the accumulator."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import metrics as skm

from ncld_core.eval import metrics as M
from ncld_core.eval.metrics import METRICS, MetricAccumulator, evaluate

KEYS = [key for key, _, _ in METRICS]


def random_case(seed, n=60, q=7, density=0.25, tie_levels=None, empty_rows=True):
    """Random truth/scores with empty-truth rows and (optionally) heavy ties."""
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, q)) < density).astype(np.int8)
    if empty_rows:
        Y[rng.choice(n, size=n // 5, replace=False)] = 0
        if q > 1:
            Y[rng.choice(n, size=n // 10, replace=False)] = 1  # all-relevant rows too
    S = rng.standard_normal((n, q))
    if tie_levels is not None:
        S = np.round(S * tie_levels) / tie_levels  # few distinct values -> many ties
        S[: n // 6] = 0.0  # whole rows of ties, at the threshold
    return Y, S


CASES = [
    dict(seed=0),
    dict(seed=1, tie_levels=1),
    dict(seed=2, tie_levels=2, q=12, density=0.1),
    dict(seed=3, n=200, q=3, density=0.6),
    dict(seed=4, n=40, q=25, density=0.05, tie_levels=1),
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("zd", [0.0, 1.0])
def test_bipartition_metrics_match_sklearn(case, zd):
    Y, S = random_case(**case)
    P = (S > 0).astype(np.int8)
    assert M.hamming_loss(Y, P) == pytest.approx(skm.hamming_loss(Y, P), abs=1e-12)
    assert M.subset_accuracy(Y, P) == pytest.approx(skm.accuracy_score(Y, P), abs=1e-12)
    for ours, average in ((M.micro_f1, "micro"), (M.macro_f1, "macro"), (M.example_f1, "samples")):
        expected = skm.f1_score(Y, P, average=average, zero_division=zd)
        assert ours(Y, P, zero_division=zd) == pytest.approx(expected, abs=1e-12), average


@pytest.mark.parametrize("case", CASES)
def test_ranking_metrics_match_sklearn(case):
    Y, S = random_case(**case)
    assert M.average_precision(Y, S) == pytest.approx(
        skm.label_ranking_average_precision_score(Y, S), abs=1e-12
    )
    assert M.ranking_loss(Y, S) == pytest.approx(skm.label_ranking_loss(Y, S), abs=1e-12)
    # coverage: sklearn's coverage_error - 1 on rows with a relevant label, 0 on the others
    has = Y.any(axis=1)
    expected = has.mean() * (skm.coverage_error(Y[has], S[has]) - 1)
    assert M.coverage(Y, S) == pytest.approx(expected, abs=1e-12)


def test_f1_zero_division_convention_is_visible():
    # label 1 and row 1 have no true and no predicted positive
    Y = np.array([[1, 0], [0, 0]])
    P = np.array([[0, 0], [0, 0]])
    assert M.macro_f1(Y, P) == 0.5 and M.macro_f1(Y, P, zero_division=0) == 0.0
    assert M.example_f1(Y, P) == 0.5 and M.example_f1(Y, P, zero_division=0) == 0.0
    assert M.micro_f1(Y, P) == 0.0
    assert M.micro_f1(np.zeros((2, 2)), P) == 1.0
    assert M.micro_f1(np.zeros((2, 2)), P, zero_division=0) == 0.0
    with pytest.raises(ValueError, match="zero_division"):
        M.macro_f1(Y, P, zero_division=2)


def test_single_label_q1():
    rng = np.random.default_rng(5)
    y = (rng.random(50) < 0.4).astype(np.int8)
    s = np.round(rng.standard_normal(50), 1)
    Y, S = y[:, None], s[:, None]
    p = (s > 0).astype(np.int8)
    m = evaluate(Y, S)
    assert m["hamming_loss"] == pytest.approx(skm.hamming_loss(y, p))
    assert m["subset_accuracy"] == pytest.approx(skm.accuracy_score(y, p))
    for key, average in (("micro_f1", "micro"), ("macro_f1", "macro")):
        assert m[key] == pytest.approx(skm.f1_score(y, p, labels=[1], average=average, zero_division=1))
    # one label: per instance F1 is 1 when right (incl. both empty, zero_division=1), 0 when wrong
    assert m["example_f1"] == pytest.approx(np.mean(y == p))
    assert m["average_precision"] == pytest.approx(skm.label_ranking_average_precision_score(Y, S))
    assert m["average_precision"] == 1.0  # a single label is always ranked first
    assert m["ranking_loss"] == 0.0 and m["one_error"] == 0.0 and m["coverage"] == 0.0
    # 1-D inputs are read as one label
    assert evaluate(y, s) == m


def test_one_error_by_hand():
    Y = np.array([[1, 0, 0], [0, 1, 0], [1, 0, 1], [0, 1, 1], [0, 0, 0], [1, 1, 1]])
    S = np.array(
        [
            [3.0, 2.0, 1.0],  # top = label 0, relevant -> 0
            [3.0, 2.0, 1.0],  # top = label 0, irrelevant -> 1
            [2.0, 2.0, 1.0],  # tie at the top with irrelevant label 1 -> 1 (pessimistic)
            [0.0, 5.0, 5.0],  # tie at the top, both relevant -> 0
            [1.0, 2.0, 3.0],  # no relevant label -> 0 (ranking does not matter)
            [1.0, 1.0, 1.0],  # all relevant -> 0
        ]
    )
    assert M.one_error(Y, S) == pytest.approx(2 / 6)
    assert M.one_error(Y[:1], S[:1]) == 0.0
    assert M.one_error(Y[2:3], S[2:3]) == 1.0


def test_coverage_by_hand():
    Y = np.array([[1, 0, 0, 0], [0, 0, 0, 1], [1, 0, 1, 0], [0, 0, 0, 0], [0, 1, 0, 0]])
    S = np.array(
        [
            [4.0, 3.0, 2.0, 1.0],  # relevant first -> 0
            [4.0, 3.0, 2.0, 1.0],  # relevant last -> 3
            [4.0, 3.0, 2.0, 1.0],  # relevant at depths 1 and 3 -> 2
            [4.0, 3.0, 2.0, 1.0],  # none relevant -> 0
            [1.0, 1.0, 0.0, 1.0],  # tied with two others at the top -> worst rank 3 -> 2
        ]
    )
    assert M.coverage(Y, S) == pytest.approx((0 + 3 + 2 + 0 + 2) / 5)
    assert M.coverage(Y[1:2], S[1:2]) == 3.0


def test_ranking_with_all_ties_and_empty_rows():
    Y = np.array([[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0]])
    S = -np.ones((3, 4))
    m = evaluate(Y, S)
    assert m["average_precision"] == pytest.approx((1 / 4 + 2 / 4 + 1.0) / 3)
    assert m["ranking_loss"] == pytest.approx(2 / 3)
    assert m["one_error"] == pytest.approx(2 / 3)
    assert m["coverage"] == pytest.approx(2 * 3 / 3)


def test_evaluate_keys_default_prediction_and_explicit_prediction():
    Y, S = random_case(6)
    m = evaluate(Y, S)
    assert list(m) == KEYS and all(isinstance(v, float) for v in m.values())
    P = (S > 0).astype(np.int8)
    assert evaluate(Y, S, P) == m
    assert m["hamming_loss"] == M.hamming_loss(Y, P)
    assert m["macro_f1"] == M.macro_f1(Y, P)
    # an explicit prediction changes only the bipartition metrics
    m2 = evaluate(Y, S, np.zeros_like(P))
    assert m2["hamming_loss"] == pytest.approx(Y.mean())
    for key in ("average_precision", "ranking_loss", "one_error", "coverage"):
        assert m2[key] == m[key]
    # booleans, sparse truth and sparse scores are accepted
    assert evaluate(Y.astype(bool), sp.csr_matrix(S), P.astype(bool)) == m
    assert evaluate(sp.csr_matrix(Y), S) == m


def test_metrics_table():
    assert len(METRICS) == 9 and len(set(KEYS)) == 9
    better = {key: g for key, _, g in METRICS}
    assert better["hamming_loss"] is False and better["coverage"] is False
    assert better["average_precision"] is True and better["micro_f1"] is True
    # a perfect prediction is optimal for every metric in the stated direction
    Y, _ = random_case(7, empty_rows=False)
    perfect = evaluate(Y, np.where(Y == 1, 1.0, -1.0))
    worst = evaluate(Y, np.where(Y == 1, -1.0, 1.0))
    for key, _, greater in METRICS:
        assert (perfect[key] >= worst[key]) if greater else (perfect[key] <= worst[key]), key


@pytest.mark.parametrize("seed", range(4))
def test_accumulator_equals_metrics_of_concatenation(seed):
    rng = np.random.default_rng(100 + seed)
    Y, S = random_case(seed, n=300, q=9, tie_levels=2 if seed % 2 else None)
    P = (rng.random(Y.shape) < 0.3).astype(np.int8) if seed == 3 else None
    cuts = np.sort(rng.choice(np.arange(1, 300), size=rng.integers(1, 12), replace=False))
    bounds = list(zip(np.r_[0, cuts], np.r_[cuts, 300]))
    zd = 0.0 if seed == 2 else 1.0
    acc = MetricAccumulator(zero_division=zd)
    for lo, hi in bounds:
        chunk = acc.update(Y[lo:hi], S[lo:hi], None if P is None else P[lo:hi])
        assert chunk == evaluate(Y[lo:hi], S[lo:hi], None if P is None else P[lo:hi], zero_division=zd)
    full = evaluate(Y, S, P, zero_division=zd)
    cum = acc.cumulative()
    assert acc.n_instances == 300 and list(cum) == KEYS
    for key in KEYS:
        assert abs(cum[key] - full[key]) <= 1e-12, key
    # macro-F1 of the concatenation is not the mean of chunk macro-F1s: counts are pooled
    acc.reset()
    assert acc.n_instances == 0
    with pytest.raises(ValueError, match="no chunk"):
        acc.cumulative()
    acc.update(Y[:10], S[:10])
    assert acc.cumulative() == evaluate(Y[:10], S[:10])


def test_accumulator_pools_counts_not_chunk_averages():
    acc = MetricAccumulator()
    acc.update([[1, 0]], [[1.0, -1.0]])  # macro-F1 of chunk = 1 (label 1: nothing to find)
    acc.update([[0, 1]], [[-1.0, -1.0]])  # label 1 missed; label 0 nothing to find
    # pooled: label 0 tp=1 -> 1, label 1 fn=1 -> 0
    assert acc.cumulative()["macro_f1"] == 0.5
    assert acc.cumulative()["micro_f1"] == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="3 labels but earlier chunks had 2"):
        acc.update([[0, 1, 0]], [[0.0, 0.0, 0.0]])


def test_large_input_blocked_computation_matches_sklearn():
    rng = np.random.default_rng(8)
    n, q = 20000, 100
    Y = (rng.random((n, q)) < 0.05).astype(np.int8)
    S = np.round(rng.standard_normal((n, q)), 1)
    m = evaluate(Y, S)
    idx = rng.choice(n, 500, replace=False)
    assert np.isfinite(list(m.values())).all()
    # spot-check the blocked computation against sklearn on a subsample
    assert M.average_precision(Y[idx], S[idx]) == pytest.approx(
        skm.label_ranking_average_precision_score(Y[idx], S[idx]), abs=1e-12
    )
    assert m["ranking_loss"] == pytest.approx(skm.label_ranking_loss(Y, S), abs=1e-12)


@pytest.mark.parametrize(
    "args, match",
    [
        (([[0, 2]], [[0.0, 0.0]]), "Y_true must hold labels in {0, 1}; found 2"),
        (([[0, -1]], [[0.0, 0.0]]), "Y_true must hold labels in {0, 1}; found -1"),
        (([[0, np.nan]], [[0.0, 0.0]]), "Y_true must hold labels in {0, 1}; found nan"),
        (([[0, 1]], [[0.0, 0.0, 1.0]]), r"scores has shape \(1, 3\) but Y_true has shape \(1, 2\)"),
        (([[0, 1]], [[0.0, np.inf]]), r"scores contains NaN or infinity \(first at row 0, column 1\)"),
        (([[0, 1]], [["a", "b"]]), "scores must be numeric"),
        (([[0, 1]], [[0.0, 1.0]], [[0, 0.5]]), "Y_pred must hold labels in {0, 1}; found 0.5"),
        (([[0, 1]], [[0.0, 1.0]], [[0, 1], [1, 0]]), r"Y_pred has shape \(2, 2\) but Y_true"),
        ((np.zeros((0, 2)), np.zeros((0, 2))), "Y_true is empty"),
        ((np.zeros((2, 2, 2)), np.zeros((2, 2, 2))), "Y_true must be 2-D"),
    ],
)
def test_bad_input_names_the_argument(args, match):
    with pytest.raises(ValueError, match=match):
        evaluate(*args)
    with pytest.raises(ValueError, match=match):
        MetricAccumulator().update(*args)


def test_single_metric_functions_validate():
    with pytest.raises(ValueError, match="Y_pred has shape"):
        M.hamming_loss([[0, 1]], [[0, 1, 1]])
    with pytest.raises(ValueError, match="scores contains NaN"):
        M.average_precision([[0, 1]], [[np.nan, 1.0]])
    with pytest.raises(ValueError, match="Y_true must hold labels"):
        M.coverage([[3, 1]], [[0.0, 1.0]])
