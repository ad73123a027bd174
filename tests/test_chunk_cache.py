"""The per-chunk cache the runner shares between ELM variants: same results, less work."""

from __future__ import annotations

import numpy as np
import pytest

from ncld_core.eval.runner import PrequentialRunner
from ncld_core.eval.variants import ORACLES, make_model
from ncld_core.model import ELMNCLD
from ncld_core.model.chunk_cache import ChunkCache
from ncld_core.stream.synthetic import make_synthetic_stream

VARIANTS = ("ELM-O", "ELM-I", "ELM-II", "ELM (plain)", "ELM-O (clean labels)")


def stream(schedule=None, seed=0):
    return make_synthetic_stream(n_instances=1600, n_features=8, n_labels=5, random_state=seed,
                                 schedule=schedule)


def learn_alone(model, s, chunk=200, *, clean=False):
    """The model fed chunk by chunk without a cache (what the runner did before sharing)."""
    for start in range(0, s.n_instances, chunk):
        X, Y = s.X[start:start + chunk], (s.Y_true if clean else s.Y_noisy)[start:start + chunk]
        if X.shape[0] > model.n_neighbors:
            model.partial_fit(X, Y)
    return model


@pytest.mark.parametrize("mode", ["known", "estimate", "ignore"])
def test_runner_with_shared_cache_equals_each_model_alone(mode):
    s = stream(schedule="growth")
    runner = PrequentialRunner(list(VARIANTS), 200, model_params={"random_state": 3}, flip_rates=mode)
    runner.run(s)
    rates = {"known": (s.rho_pos, s.rho_neg), "ignore": (np.zeros(5), np.zeros(5)), "estimate": None}[mode]
    for name in VARIANTS:
        alone = learn_alone(make_model(name, rates=rates, random_state=3), s, clean=name in ORACLES)
        shared = runner.state_.models[name]
        np.testing.assert_array_equal(shared.coef_, alone.coef_, err_msg=name)
        np.testing.assert_array_equal(shared.K_, alone.K_, err_msg=name)
        assert shared.history_["action"].tolist() == alone.history_["action"].tolist(), name


def test_models_with_other_settings_do_not_share_what_differs():
    s = stream()
    X, Y = s.X[:300], s.Y_noisy[:300]
    settings = [dict(n_neighbors=5), dict(n_neighbors=9), dict(graph_reg=0.1), dict(random_state=8),
                dict(probability_model="knn")]
    cache = ChunkCache(X, Y)
    with_cache = [ELMNCLD(rho_pos=0.2, rho_neg=0.3, **{"random_state": 1, **kw}).partial_fit(X, Y, cache=cache)
                  for kw in settings]
    for kw, shared in zip(settings, with_cache):
        alone = ELMNCLD(rho_pos=0.2, rho_neg=0.3, **{"random_state": 1, **kw}).partial_fit(X, Y)
        np.testing.assert_array_equal(shared.coef_, alone.coef_, err_msg=str(kw))
    # The random_state=1 models share H; graphs differ with n_neighbors and graph_reg, P_D with the model.
    assert cache.misses > cache.hits >= 1


def test_cache_counts_hits_between_identical_variants():
    s = stream()
    X, Y = s.X[:300], s.Y_noisy[:300]
    cache = ChunkCache(X, Y)
    ELMNCLD(random_state=0, rho_pos=0.2, rho_neg=0.2).partial_fit(X, Y, cache=cache)
    misses = cache.misses
    ELMNCLD(random_state=0, rho_pos=0.3, rho_neg=0.1, gamma=0.1).partial_fit(X, Y, cache=cache)
    assert cache.misses == misses and cache.hits == misses  # everything reused, nothing recomputed


def test_plain_elm_needs_no_probability_model_and_no_graph():
    class Exploding:
        def predict_proba(self, H, Y01, neighbors):
            raise AssertionError("P_D computed for a model that cannot use it")

    s = stream()
    X, Y = s.X[:300], s.Y_noisy[:300]
    plain = ELMNCLD(beta=1.0, gamma=0.0, rho_pos=0.0, rho_neg=0.0, probability_model=Exploding(), random_state=0)
    plain.partial_fit(X, Y)
    reference = ELMNCLD(beta=1.0, gamma=0.0, rho_pos=0.0, rho_neg=0.0, random_state=0).partial_fit(X, Y)
    np.testing.assert_array_equal(plain.coef_, reference.coef_)
    # With rates the probability model is needed again.
    with pytest.raises(AssertionError, match="P_D computed"):
        ELMNCLD(beta=1.0, rho_pos=0.1, rho_neg=0.1, probability_model=Exploding()).partial_fit(X, Y)


def test_noisy_proba_is_validated_even_when_the_rates_make_it_unused():
    s = stream()
    X, Y = s.X[:300], s.Y_noisy[:300]
    plain = ELMNCLD(beta=1.0, gamma=0.0, rho_pos=0.0, rho_neg=0.0, random_state=0)
    with pytest.raises(ValueError, match="noisy_proba has shape"):
        plain.partial_fit(X, Y, noisy_proba=np.full((3, 3), 0.5))
    with pytest.raises(ValueError, match="noisy_proba must hold probabilities"):
        plain.partial_fit(X, Y, noisy_proba=np.full(Y.shape, 1.5))
    assert not plain.is_fitted


def test_a_cache_for_another_chunk_is_refused_and_changes_nothing():
    s = stream()
    model = ELMNCLD(random_state=0).partial_fit(s.X[:300], s.Y_noisy[:300])
    before = model.coef_.copy()
    X, Y = s.X[300:600], s.Y_noisy[300:600]
    with pytest.raises(ValueError, match="cache"):
        model.partial_fit(X, Y, cache=ChunkCache(X.copy(), Y))
    np.testing.assert_array_equal(model.coef_, before)


def test_cached_arrays_are_read_only():
    X, Y = np.zeros((3, 2)), np.zeros((3, 1))
    cache = ChunkCache(X, Y)
    H = cache.get(("H", 0), lambda: np.ones((3, 2)))
    S, nbrs = cache.get(("graph", 0), lambda: (np.eye(3), np.zeros((3, 1), dtype=int)))
    for arr in (H, S, nbrs):
        with pytest.raises(ValueError, match="read-only"):
            arr[0, 0] = 5


@pytest.mark.parametrize("sparse", [False, True])
def test_scoring_a_chunk_shares_its_hidden_output_with_learning_it(sparse):
    """The runner scores each model with the cache it then learns with: one H per chunk, the same scores."""
    import scipy.sparse as sp

    s = stream()
    X0, Y0 = s.X[:200], s.Y_noisy[:200]
    X, Y = (sp.csr_matrix(s.X[200:400]) if sparse else s.X[200:400]), s.Y_noisy[200:400]
    if sparse:
        X0 = sp.csr_matrix(X0)
    models = [ELMNCLD(random_state=0, rho_pos=0.2, rho_neg=0.2, **kw).partial_fit(X0, Y0)
              for kw in ({}, {"gamma": 0.1}, {"strategy": "retrain"})]
    cache = ChunkCache(X, Y)
    for model in models:
        np.testing.assert_array_equal(model.ranking_scores(X, cache=cache), model.ranking_scores(X))
    assert (cache.misses, cache.hits) == (1, 2)  # one hidden output for the three models
    alone = ELMNCLD(random_state=0, rho_pos=0.2, rho_neg=0.2).partial_fit(X0, Y0).partial_fit(X, Y)
    computed, get = [], cache.get

    def recording_get(key, compute):
        return get(key, lambda: computed.append(key[0]) or compute())

    cache.get = recording_get
    models[0].partial_fit(X, Y, cache=cache)  # learning reads the H scoring computed
    assert computed and "H" not in computed, computed  # the graph and the rest computed, H read
    np.testing.assert_array_equal(models[0].coef_, alone.coef_)
    with pytest.raises(ValueError, match="another chunk"):
        models[0].ranking_scores(X.copy(), cache=cache)
