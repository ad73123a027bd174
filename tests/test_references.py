"""The trivial references: AllNegative and NoisyPrior."""

import numpy as np
import pytest
import scipy.sparse as sp

from ncld_core.eval.metrics import evaluate
from ncld_core.eval.references import AllNegative, NoisyPrior


def data(seed=0, n=200, d=5, q=6):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    dens = np.linspace(0.05, 0.8, q)
    Y = (rng.random((n, q)) < dens).astype(np.int8)
    return X, Y


def test_noisy_prior_equals_column_means_over_all_chunks():
    X, Y = data()
    model = NoisyPrior()
    for lo, hi in [(0, 7), (7, 90), (90, 91), (91, 200)]:
        model.partial_fit(X[lo:hi], Y[lo:hi])
        np.testing.assert_allclose(model.prior_, Y[:hi].mean(axis=0), rtol=0, atol=1e-15)
        assert model.n_seen_ == hi
    np.testing.assert_array_equal(model.counts_, Y.sum(axis=0))
    D = model.decision_function(X[:4])
    assert D.shape == (4, Y.shape[1])
    np.testing.assert_allclose(D, np.tile(Y.mean(axis=0) - 0.5, (4, 1)), atol=1e-15)
    P = model.predict(X[:4])
    assert P.dtype == np.int8
    np.testing.assert_array_equal(P, np.tile(Y.mean(axis=0) > 0.5, (4, 1)))
    assert model.n_features_in_ == 5 and model.n_labels_ == 6


def test_noisy_prior_threshold_fit_resets_and_pm1_labels():
    X, Y = data(1)
    model = NoisyPrior(threshold=0.2).partial_fit(X, Y)
    np.testing.assert_array_equal(model.predict(X[:1])[0], Y.mean(axis=0) > 0.2)
    # fit forgets previous chunks; {-1, +1} labels and sparse X are accepted
    model.fit(sp.csr_matrix(X[:50]), 2 * Y[:50] - 1)
    np.testing.assert_allclose(model.prior_, Y[:50].mean(axis=0))
    assert model.n_seen_ == 50
    assert model.get_params() == {"threshold": 0.2}
    assert repr(model.set_params(threshold=0.9)) == "NoisyPrior(threshold=0.9)"
    # it ranks labels by prior: its AP is that of the prior ranking for every instance
    m = evaluate(Y, model.decision_function(X))
    assert m["average_precision"] == pytest.approx(evaluate(Y, np.tile(Y.mean(axis=0), (len(Y), 1)))["average_precision"])


def test_all_negative_predicts_nothing_and_hl_is_label_density():
    X, Y = data(2)
    model = AllNegative()
    model.partial_fit(X[:100], Y[:100]).partial_fit(X[100:], Y[100:])
    P = model.predict(X)
    assert P.dtype == np.int8 and P.shape == Y.shape and not P.any()
    D = model.decision_function(X)
    assert (D == -1.0).all()
    m = evaluate(Y, D)
    assert m["hamming_loss"] == pytest.approx(Y.mean(), abs=1e-15)
    assert m["micro_f1"] == 0.0
    # all labels tie: AP = |Y_i| / q on rows with a relevant label, 1 on empty rows
    n_rel = Y.sum(axis=1)
    expected_ap = np.where(n_rel > 0, n_rel / Y.shape[1], 1.0).mean()
    assert m["average_precision"] == pytest.approx(expected_ap)
    assert model.n_features_in_ == 5 and model.n_labels_ == 6 and model.n_seen_ == 200


@pytest.mark.parametrize("cls", [AllNegative, NoisyPrior])
def test_bad_input(cls):
    X, Y = data(3)
    model = cls()
    with pytest.raises(ValueError, match="not fitted"):
        model.predict(X)
    with pytest.raises(ValueError, match="not fitted"):
        model.decision_function(X)
    with pytest.raises(ValueError, match="X has 10 instances but Y has 9"):
        model.partial_fit(X[:10], Y[:9])
    with pytest.raises(ValueError, match="Y must hold labels"):
        model.partial_fit(X[:2], [[0, 2, 0, 0, 0, 0]] * 2)
    with pytest.raises(ValueError, match="X contains NaN"):
        model.partial_fit(np.full((2, 5), np.nan), Y[:2])
    model.partial_fit(X[:10], Y[:10])
    with pytest.raises(ValueError, match="X has 4 features"):
        model.partial_fit(X[:10, :4], Y[:10])
    with pytest.raises(ValueError, match="X has 4 features"):
        model.predict(X[:10, :4])
    with pytest.raises(ValueError, match="Y has 5 labels"):
        model.partial_fit(X[:10], Y[:10, :5])
    # failed updates left the state alone
    assert model.n_seen_ == 10


def test_noisy_prior_bad_threshold():
    X, Y = data(4)
    with pytest.raises(ValueError, match="threshold must be in"):
        NoisyPrior(threshold=1.5).fit(X, Y)
    with pytest.raises(ValueError, match="threshold must be a number"):
        NoisyPrior(threshold="high").partial_fit(X, Y)
    with pytest.raises(ValueError, match="no parameter"):
        NoisyPrior().set_params(alpha=1)
