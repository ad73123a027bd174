"""ncld_core.model.cost: the analytic estimate of a chunk's memory and work."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from ncld_core.model import ELMNCLD
from ncld_core.model.cost import (
    MEMORY_BUDGET_BYTES,
    estimate_cost,
    estimate_for,
    extrapolate,
    largest_hidden_within,
    machine_flops,
    simplex_rounds,
)
from ncld_core.model.probability import LogisticProbability

BASE = dict(chunk_size=250, n_features=1001, n_labels=53, n_neighbors=10, n_models=3)


def test_the_p_d_fit_dominates_and_grows_with_l_squared():
    small, big = estimate_cost(n_hidden=100, **BASE), estimate_cost(n_hidden=500, **BASE)
    assert big.largest == "P_D fit: N x (L+1)^2 outer products"
    assert big.terms[big.largest] == 250 * 501**2 * 8
    ratio = big.terms[big.largest] / small.terms[small.largest]
    assert ratio == pytest.approx((501 / 101) ** 2)
    assert big.flops > 20 * small.flops
    # without the P_D fit the (L+1)^2 terms are gone
    no_fit = estimate_cost(n_hidden=500, fits_proba=False, **BASE)
    assert no_fit.memory_bytes < big.memory_bytes / 5 and not any("P_D" in t for t in no_fit.terms)


def test_the_graph_dominates_for_large_chunks_and_small_l():
    est = estimate_cost(chunk_size=20_000, n_hidden=10, n_features=50, n_labels=5, n_neighbors=10)
    assert est.largest == "graph: Gram N x N"
    assert est.memory_bytes > MEMORY_BUDGET_BYTES  # 20000^2 floats = 3.2 GB


def test_largest_hidden_within_the_budget_is_the_boundary():
    L = largest_hidden_within(MEMORY_BUDGET_BYTES, **BASE)
    assert estimate_cost(n_hidden=L, **BASE).memory_bytes <= MEMORY_BUDGET_BYTES
    assert estimate_cost(n_hidden=L + 1, **BASE).memory_bytes > MEMORY_BUDGET_BYTES
    assert 700 < L < 900  # N x (L+1)^2 x 8 bytes = 2 GiB at L ~ 820
    assert largest_hidden_within(1, **BASE) == 0


def test_chunks_counted_and_time_extrapolated():
    est = estimate_cost(n_hidden=20, n_instances=1702, **BASE)
    assert est.n_chunks == 7  # 6 full chunks of 250 and a short one
    assert est.seconds_total(1e9) == pytest.approx(7 * est.seconds_per_chunk(1e9))
    assert extrapolate([2.0, 4.0, 3.0], 10) == pytest.approx(3.0 * 7)
    with pytest.raises(ValueError):
        extrapolate([], 10)
    assert machine_flops(size=64, repeats=1) > 1e6


def test_the_estimate_bounds_what_numpy_allocates_for_one_chunk():
    """Against tracemalloc's peak of a real partial_fit (NumPy reports its allocations to it)."""
    rng = np.random.default_rng(0)
    N, d, q, L = 120, 30, 8, 60
    X, Y = rng.standard_normal((2 * N, d)), (rng.random((2 * N, q)) < 0.3).astype(int)
    full = LogisticProbability(n_components=None)  # the logistic P_D on all L + 1 columns: the largest array
    model = ELMNCLD(n_hidden=L, n_neighbors=5, rho_pos=np.full(q, 0.2), rho_neg=np.full(q, 0.1), random_state=0,
                    probability_model=full)
    model.partial_fit(X[:N], Y[:N])
    tracemalloc.start()
    try:
        model.partial_fit(X[N:], Y[N:])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    est = estimate_cost(chunk_size=N, n_hidden=L, n_features=d, n_labels=q, n_neighbors=5, n_models=1,
                        probability_model=full)
    assert 0.5 * est.memory_bytes <= peak <= 1.5 * est.memory_bytes, (peak, est.terms)


def test_estimate_for_counts_the_configs_elm_variants():
    from ncld_core.config import RunConfig
    from ncld_core.eval.variants import ELM_VARIANTS, ORACLES

    names = [*ELM_VARIANTS, *ORACLES]
    three = estimate_for(RunConfig(), n_features=20, n_labels=10, n_instances=5000, elm_names=names)
    assert three.n_models == 3 and three.n_chunks == 20
    assert not any("P_D" in t for t in three.terms)  # the default P_D ("knn") fits nothing on H
    plain = estimate_for(RunConfig(models=["ELM (plain)"]), n_features=20, n_labels=10, elm_names=names)
    assert plain.n_models == 1 and not any("P_D" in t for t in plain.terms)  # rates 0: no P_D fit


@pytest.mark.parametrize("k", [20, 100])
def test_the_graph_term_counts_the_active_set_rounds_the_graph_takes(monkeypatch, k):
    """The estimate counts ``simplex_rounds(K)`` K x K solves per instance (one, before: 10x below a measured chunk
    at K = 200, found by a visitor); the graph's own solver must take about that many on the generator."""
    import ncld_core.model.graph as graph
    from ncld_core.config import RunConfig

    solved = []
    real = graph._solve_on_support
    monkeypatch.setattr(graph, "_solve_on_support", lambda C, support: solved.append(C.shape[0]) or real(C, support))
    cfg = RunConfig(n_instances=500, chunk_size=250, n_neighbors=k, models=["ELM-O"], references=False)
    cfg.runner().run(cfg.build_stream())
    per_instance = sum(solved) / 500
    assert 0.4 * simplex_rounds(k) <= per_instance <= 1.5 * simplex_rounds(k), (per_instance, simplex_rounds(k))
    # and the estimate grows with them: K = 200 costs far more than K = 20 (the K^3 solves, not the Gram)
    args = dict(chunk_size=250, n_hidden=300, n_features=20, n_labels=10, n_models=3, fits_proba=False)
    assert estimate_cost(n_neighbors=200, **args).flops > 50 * estimate_cost(n_neighbors=20, **args).flops
