"""MCIC, MW and the River peer: learning, their distinctive mechanisms, sparse = dense, bad input.

The synthetic stream: 5 Gaussian blobs in 10 dimensions (centres ~ N(0, 3^2), spread 0.5),
blob ``b`` carries labels ``{b, b+1 mod 5}`` (label density 0.4).  On it the trivial
predictors reach micro-F1 0 (all-negative), 0.57 (all-positive) and about 0.44 (coin flips);
every baseline must reach 0.9 on fresh data after 2000 instances in chunks of 200.
"""

from __future__ import annotations

import copy
import importlib.util

import numpy as np
import pytest
import scipy.sparse as sp

from ncld_core.eval.baselines import make_baseline
from ncld_core.eval.baselines.mcic import MCIC, top_h_decision
from ncld_core.eval.baselines.mw import MW
from ncld_core.eval.baselines.river_peer import RiverBinaryRelevance, row_dicts

HAS_RIVER = importlib.util.find_spec("river") is not None
needs_river = pytest.mark.skipif(
    not HAS_RIVER, reason="River is an optional dependency and is not installed (pip install river)"
)

F1_BOUND = 0.9  # all-negative 0, all-positive 0.57, coin flips ~0.44


def blob_stream(n=2500, d=10, n_blobs=5, spread=0.5, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=3.0, size=(n_blobs, d))
    labels = np.zeros((n_blobs, n_blobs), dtype=np.int8)
    for b in range(n_blobs):
        labels[b, b] = labels[b, (b + 1) % n_blobs] = 1
    member = rng.integers(0, n_blobs, size=n)
    return centres[member] + spread * rng.normal(size=(n, d)), labels[member]


def micro_f1(Y, P):
    Y, P = np.asarray(Y, dtype=bool), np.asarray(P, dtype=bool)
    denom = Y.sum() + P.sum()
    return 2.0 * (Y & P).sum() / denom if denom else 0.0


def learn_in_chunks(model, X, Y, size=200):
    for start in range(0, X.shape[0], size):
        model.partial_fit(X[start:start + size], Y[start:start + size])
    return model


def sparsify(X, seed=0, frac=0.5):
    """Zero a fraction of the entries, so that CSR and dense differ in storage."""
    X = X.copy()
    X[np.random.default_rng(seed).random(X.shape) < frac] = 0.0
    return X


FACTORIES = {
    "MCIC": MCIC,
    "MW": MW,
    "River": pytest.param(RiverBinaryRelevance, marks=needs_river),
}


# --------------------------------------------------------------------------- (a) learning
@pytest.mark.parametrize("factory", list(FACTORIES.values()), ids=list(FACTORIES))
def test_learns_a_separable_stream(factory):
    X, Y = blob_stream()
    model = learn_in_chunks(factory(), X[:2000], Y[:2000])
    P = model.predict(X[2000:])
    assert P.dtype == np.int8 and P.shape == Y[2000:].shape
    np.testing.assert_array_equal(P, (model.decision_function(X[2000:]) > 0).astype(np.int8))
    assert micro_f1(Y[2000:], P) >= F1_BOUND


@pytest.mark.parametrize("factory", list(FACTORIES.values()), ids=list(FACTORIES))
def test_fit_equals_a_fresh_stream_and_params_roundtrip(factory):
    X, Y = blob_stream(n=600, seed=1)
    online = learn_in_chunks(factory(), X[:400], Y[:400], size=400)
    refit = learn_in_chunks(factory(), X[:200], Y[:200]).fit(X[:400], Y[:400])
    np.testing.assert_array_equal(online.decision_function(X[400:]), refit.decision_function(X[400:]))
    params = online.get_params()
    assert type(online)(**params).get_params() == params


def test_registry_builds_these_baselines():
    assert isinstance(make_baseline("MCIC"), MCIC)
    assert isinstance(make_baseline("MW"), MW)
    if HAS_RIVER:
        assert isinstance(make_baseline("River BR-LR"), RiverBinaryRelevance)


# --------------------------------------------------------------------------- (b) MCIC
def test_mcic_cluster_statistics_match_a_hand_computation():
    # speed=2: the timestamp advances at instances 2 and 4; decay=1 halves weights per timestamp;
    # T_p = round(ln 2 / 1) + 1 = 2, so pruning runs while the timestamp is 0 or 2.
    model = MCIC(speed=2, decay=1.0, beta_mu=2.0)
    assert model.t_p_ == 2
    X = np.array([[0.0, 0.0], [0.1, 0.0], [0.0, 0.1], [0.1, 0.1]])
    Y = np.array([[1, 0], [1, 1], [0, 1], [1, 0]])
    model.partial_fit(X[:1], Y[:1])
    assert (model.n_outlier_, model.n_potential_) == (1, 0)
    model.partial_fit(X[1:3], Y[1:3])  # merged (radius 0.047 <= 0.495); weight 2.5 > 2: promoted
    assert (model.n_outlier_, model.n_potential_) == (0, 1)
    model.partial_fit(X[3:], Y[3:])

    # By hand: x1 at t=0; x2 at t=1 (fade 1/2); x3 at t=1 (no fade); x4 at t=2 (fade 1/2).
    cf1 = 0.5 * (0.5 * X[0] + X[1] + X[2]) + X[3]
    cf2 = 0.5 * (0.5 * X[0] ** 2 + X[1] ** 2 + X[2] ** 2) + X[3] ** 2
    w = 0.5 * (0.5 * 1 + 1 + 1) + 1  # 2.25
    c = model.clusters()
    assert c["kind"].tolist() == ["p"]
    np.testing.assert_allclose(c["weight"], [w])
    np.testing.assert_allclose(c["center"], [cf1 / w])
    np.testing.assert_allclose(c["radius"], [np.sqrt(np.max(cf2 / w - (cf1 / w) ** 2))])
    assert c["n"].tolist() == [4]
    np.testing.assert_array_equal(c["label_count"], [Y.sum(axis=0)])  # undecayed counts (3, 2)
    # One cluster: the scores are its label frequencies; h followed the cardinality down to 1.
    np.testing.assert_allclose(model.label_scores([[5.0, 5.0]]), [[0.75, 0.5]])
    assert model.h_ == 1
    assert model.predict([[5.0, 5.0]]).tolist() == [[1, 0]]


def test_mcic_cluster_count_stays_bounded():
    rng = np.random.default_rng(0)
    X = 3.0 * rng.normal(size=(3000, 10))  # far-apart points: nearly every one opens an o-cluster
    Y = (rng.random((3000, 4)) < 0.3).astype(np.int8)
    model, capped = MCIC(), MCIC(max_clusters=50)
    counts, capped_counts = [], []
    for start in range(0, 3000, 200):
        model.partial_fit(X[start:start + 200], Y[start:start + 200])
        capped.partial_fit(X[start:start + 200], Y[start:start + 200])
        counts.append(model.n_clusters_)
        capped_counts.append(capped.n_clusters_)
    # An o-cluster that is not fed dies at the first pruning after its creation, so at most
    # (T_p + 1) * speed of them live at once; the count does not grow with the stream.
    assert max(counts) <= (model.t_p_ + 1) * model.speed
    assert max(counts[len(counts) // 2:]) <= max(counts[: len(counts) // 2]) + model.speed
    assert max(capped_counts) == 50
    assert capped._w.shape[0] <= 50  # storage never grows past the cap


def test_top_h_decision_predicts_exactly_h_labels_and_keeps_the_order():
    rng = np.random.default_rng(0)
    S = rng.integers(0, 4, size=(50, 6)) / 4.0  # many ties
    for h in range(7):
        D = top_h_decision(S, h)
        assert ((D > 0).sum(axis=1) == h).all()
        # strictly larger score => strictly larger decision
        i, a, b = np.nonzero(S[:, :, None] > S[:, None, :])
        assert (D[i, a] > D[i, b]).all()


# --------------------------------------------------------------------------- (b) MW
def test_mw_windows_hold_the_latest_positives_and_negatives():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(700, 3))
    Y = (rng.random((700, 3)) < [0.05, 0.5, 0.9]).astype(np.int8)  # rare, even, frequent
    model = MW(n_pos=30, n_neg=70, k=5)
    for start in range(0, 700, 100):
        model.partial_fit(X[start:start + 100], Y[start:start + 100])
        seen = start + 100
        for j in range(3):
            pos = np.flatnonzero(Y[:seen, j] == 1)[-30:]
            neg = np.flatnonzero(Y[:seen, j] == 0)[-70:]
            np.testing.assert_array_equal(model.positive_windows_[j], pos)
            np.testing.assert_array_equal(model.negative_windows_[j], neg)
    # Full windows have the stated sizes.
    assert [len(p) for p in model.positive_windows_][1:] == [30, 30]
    assert [len(n) for n in model.negative_windows_][:2] == [70, 70]
    # The rare label's positive window reaches much further back than its negative window.
    assert model.positive_windows_[0][0] < model.negative_windows_[0][0] - 300
    # Each held instance is stored once, with its features.
    held = np.unique(np.concatenate(model.positive_windows_ + model.negative_windows_))
    np.testing.assert_array_equal(model._store_ids, held)
    np.testing.assert_array_equal(model._store.toarray(), X[held])


def test_mw_follows_a_flipped_concept_within_a_window():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(1400, 2))
    Y = np.c_[X[:, 0] > 0, X[:, 1] > 0].astype(np.int8)
    flip = 1000
    Y[flip:, 0] = 1 - Y[flip:, 0]  # label 0's concept flips; label 1 unchanged
    X_test = rng.normal(size=(400, 2))
    old = np.c_[X_test[:, 0] > 0, X_test[:, 1] > 0].astype(np.int8)
    new = old.copy()
    new[:, 0] = 1 - new[:, 0]

    model = learn_in_chunks(MW(n_pos=50, n_neg=50, k=5), X[:flip], Y[:flip], size=100)
    assert (model.predict(X_test) == old).mean(axis=0).min() >= 0.9

    # Both windows of label 0 hold only new-concept instances once 50 new positives and 50 new
    # negatives have arrived: that is the window's length in instances.
    after = Y[flip:, 0]
    refresh = max(np.flatnonzero(after == 1)[49], np.flatnonzero(after == 0)[49]) + 1
    assert refresh <= 150
    model.partial_fit(X[flip:flip + refresh - 1], Y[flip:flip + refresh - 1])
    oldest = min(model.positive_windows_[0][0], model.negative_windows_[0][0])
    assert oldest < flip  # one instance short: an old-concept example is still held
    model.partial_fit(X[flip + refresh - 1:flip + refresh], Y[flip + refresh - 1:flip + refresh])
    assert min(model.positive_windows_[0][0], model.negative_windows_[0][0]) >= flip
    accuracy = (model.predict(X_test) == new).mean(axis=0)
    assert accuracy[0] >= 0.9 and accuracy[1] >= 0.9


# --------------------------------------------------------------------------- (b) River peer
@needs_river
def test_river_peer_equals_separate_river_models_fed_by_hand():
    from river import linear_model

    rng = np.random.default_rng(2)
    X = sparsify(rng.normal(size=(300, 6)), seed=2, frac=0.4)
    Y = (X[:, :3] + 0.3 * rng.normal(size=(300, 3)) > 0).astype(np.int8)
    peer = learn_in_chunks(RiverBinaryRelevance(), sp.csr_matrix(X[:250]), Y[:250], size=100)

    by_hand = [linear_model.LogisticRegression() for _ in range(3)]
    for i in range(250):
        x = {c: float(X[i, c]) for c in range(6) if X[i, c] != 0.0}
        for j, m in enumerate(by_hand):
            m.learn_one(x, bool(Y[i, j]))
    expected = np.array(
        [[m.predict_proba_one({c: float(v) for c, v in enumerate(row) if v != 0.0})[True] for m in by_hand]
         for row in X[250:]]
    )
    np.testing.assert_array_equal(peer.predict_proba(X[250:]), expected)
    np.testing.assert_array_equal(peer.decision_function(X[250:]), expected - 0.5)
    for j, m in enumerate(by_hand):
        assert peer.model_[j].weights == m.weights
    assert peer.n_seen_ == 250


def test_row_dicts_skip_zeros_and_never_densify():
    X = sp.csr_matrix(np.array([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]]))
    X.data[0] = 0.0  # an explicitly stored zero is dropped too
    assert row_dicts(X) == [{}, {0: 2.0, 2: 3.0}]


# --------------------------------------------------------------------------- (c) sparse = dense
@pytest.mark.parametrize("factory", list(FACTORIES.values()), ids=list(FACTORIES))
def test_sparse_and_dense_inputs_agree(factory):
    X, Y = blob_stream(n=900, seed=3)
    X = sparsify(X, seed=3)
    dense = learn_in_chunks(factory(), X[:800], Y[:800])
    sparse = learn_in_chunks(factory(), sp.csr_matrix(X[:800]), Y[:800])
    S_dense = dense.decision_function(X[800:])
    np.testing.assert_array_equal(S_dense, sparse.decision_function(sp.csr_matrix(X[800:])))
    np.testing.assert_array_equal(S_dense, dense.decision_function(sp.csc_matrix(X[800:])))
    np.testing.assert_array_equal(dense.predict(X[800:]), sparse.predict(sp.csr_matrix(X[800:])))


# --------------------------------------------------------------------------- (d) bad input
def _state(model):
    """Everything a model has learnt, as plain comparable values."""
    out = {}
    for key, value in vars(model).items():
        if key == "model_" and value is not None:  # River models: their weights and intercepts
            out[key] = [(dict(m.weights), m.intercept) for _, m in sorted(value.items())]
        elif isinstance(value, list):
            out[key] = [np.array(v, copy=True) for v in value]
        elif sp.issparse(value):
            out[key] = value.toarray()
        else:
            out[key] = copy.deepcopy(value)
    return out


def _assert_same_state(a, b):
    assert a.keys() == b.keys()
    for key in a:
        x, y = a[key], b[key]
        if isinstance(x, list) and x and isinstance(x[0], np.ndarray):
            assert len(x) == len(y) and all(np.array_equal(u, v) for u, v in zip(x, y)), key
        elif isinstance(x, np.ndarray):
            assert np.array_equal(x, y), key
        else:
            assert x == y, key


BAD_INPUTS = [
    (lambda X, Y: (X[:, :-1], Y), "features"),
    (lambda X, Y: (np.where(np.arange(X.size).reshape(X.shape) == 7, np.nan, X), Y), "NaN"),
    (lambda X, Y: (X, Y[:-1]), "instances"),
    (lambda X, Y: (X, Y[:, :-1]), "labels"),
    (lambda X, Y: (X, np.where(Y == 1, 2, 0)), "labels in"),
]


@pytest.mark.parametrize("factory", list(FACTORIES.values()), ids=list(FACTORIES))
def test_bad_input_raises_and_leaves_the_state_unchanged(factory):
    X, Y = blob_stream(n=500, seed=4)
    model = factory()
    with pytest.raises(ValueError, match="not fitted"):
        model.predict(X[:5])
    with pytest.raises(ValueError, match="not fitted"):
        model.decision_function(X[:5])
    learn_in_chunks(model, X[:400], Y[:400])
    before, scores = _state(model), model.decision_function(X[400:])
    for corrupt, message in BAD_INPUTS:
        bad_X, bad_Y = corrupt(X[400:], Y[400:])
        with pytest.raises(ValueError, match=message):
            model.partial_fit(bad_X, bad_Y)
        _assert_same_state(before, _state(model))
    with pytest.raises(ValueError, match="features"):
        model.decision_function(X[400:, :-1])
    with pytest.raises(ValueError, match="NaN"):
        model.predict(np.full((2, X.shape[1]), np.nan))
    _assert_same_state(before, _state(model))
    np.testing.assert_array_equal(model.decision_function(X[400:]), scores)


@pytest.mark.parametrize(
    "factory, params, message",
    [
        (MCIC, {"epsilon": -1.0}, "epsilon"),
        (MCIC, {"beta_mu": 1.0}, "beta_mu"),
        (MCIC, {"speed": 0}, "speed"),
        (MW, {"n_pos": 0}, "n_pos"),
        (MW, {"k": 2.5}, "k"),
        pytest.param(RiverBinaryRelevance, {"learning_rate": 0.0}, "learning_rate", marks=needs_river),
    ],
)
def test_bad_parameters_are_named(factory, params, message):
    X, Y = blob_stream(n=50)
    with pytest.raises(ValueError, match=message):
        factory(**params).partial_fit(X, Y)
