"""Capacity: the ridge chosen online (alpha="auto"), P_D fitted on a projection of H, the memory budget."""

from __future__ import annotations

import numpy as np
import pytest

from ncld_core.checkpoint import load_checkpoint, save_checkpoint
from ncld_core.model import ELMNCLD, capacity, cost
from ncld_core.model.capacity import (
    ALPHA_GRID,
    alpha_grid,
    prequential_ap_losses,
    prequential_losses,
)
from ncld_core.model.cost import estimate_cost
from ncld_core.model.elm import RandomHiddenLayer
from ncld_core.model.graph import reconstruction_weights
from ncld_core.model.probability import LogisticProbability, make_probability_model
from ncld_core.stream.synthetic import make_synthetic_stream

RATES = dict(rho_pos=0.2, rho_neg=0.3)


@pytest.fixture(scope="module")
def stream():
    return make_synthetic_stream(n_instances=2000, n_features=10, n_labels=6, flip_rates=(0.2, 0.4), random_state=3)


def chunks(s, size=250):
    return [(s.X[a:b], s.Y_noisy[a:b]) for a, b in s.chunk_bounds(size)]


def run(model, s, size=250):
    for X, Y in chunks(s, size):
        model.partial_fit(X, Y)
    return model


# ---------------------------------------------------------------- alpha="auto"
def test_auto_picks_from_the_grid_and_records_it(stream):
    model = run(ELMNCLD(n_hidden=40, alpha="auto", n_neighbors=10, random_state=0, **RATES), stream)
    used = model.history_["alpha"].to_numpy()
    assert set(used) <= set(ALPHA_GRID)
    assert used[0] == capacity.ALPHA_START
    assert model.alpha_ == used[-1]
    assert model.alpha_losses_.shape == (len(ALPHA_GRID),)
    assert model.alpha_ == ALPHA_GRID[int(np.argmin(model.alpha_losses_))]
    # K_ holds exactly the chosen ridge: K_ - alpha_ I is the data part, the same for any alpha sequence
    fixed = run(ELMNCLD(n_hidden=40, alpha=1.0, n_neighbors=10, random_state=0, **RATES), stream)
    np.testing.assert_allclose(model.K_ - model.alpha_ * np.eye(40), fixed.K_ - np.eye(40), rtol=1e-10, atol=1e-9)
    # and the coefficients are the solution at alpha_
    np.testing.assert_allclose(model.coef_, np.linalg.solve(model.K_, model.B_score_ - model.B_rank_), rtol=1e-8)


def test_a_one_value_grid_is_the_fixed_alpha_model(stream):
    fixed = run(ELMNCLD(n_hidden=30, alpha=2.5, n_neighbors=10, random_state=1, **RATES), stream)
    grid = run(ELMNCLD(n_hidden=30, alpha=[2.5], n_neighbors=10, random_state=1, **RATES), stream)
    assert np.array_equal(fixed.K_, grid.K_)
    assert np.array_equal(fixed.coef_, grid.coef_)
    assert list(grid.history_["alpha"]) == [2.5] * len(fixed.history_)
    assert list(fixed.history_["alpha"]) == [2.5] * len(fixed.history_)


def test_fit_with_auto_matches_a_one_value_grid_and_chooses_from_the_grid(stream):
    X, Y = stream.X[:1000], stream.Y_noisy[:1000]
    fixed = ELMNCLD(n_hidden=30, alpha=2.5, n_neighbors=10, random_state=1, **RATES).fit(X, Y, chunk_size=250)
    grid = ELMNCLD(n_hidden=30, alpha=(2.5,), n_neighbors=10, random_state=1, **RATES).fit(X, Y, chunk_size=250)
    assert np.array_equal(fixed.coef_, grid.coef_)
    auto = ELMNCLD(n_hidden=30, alpha="auto", n_neighbors=10, random_state=1, **RATES).fit(X, Y, chunk_size=250)
    assert auto.alpha_ in ALPHA_GRID
    np.testing.assert_allclose(auto.K_ - auto.alpha_ * np.eye(30), fixed.K_ - 2.5 * np.eye(30), atol=1e-9)


def test_the_rank_criterion_estimates_the_clean_ordering_from_noisy_labels(stream, monkeypatch):
    """The corrected criterion is unbiased for the clean pairwise ordering: on 2000 instances it is within
    0.03 of the same criterion computed with the true posterior (sd of the difference ~0.01), and both prefer
    the moderate ridge to the heavy one; the uncorrected noisy AP is not an estimate of anything clean."""
    monkeypatch.setattr(capacity, "AP_SAMPLE", 10_000)  # score every instance
    model = run(ELMNCLD(n_hidden=60, alpha=1.0, n_neighbors=10, random_state=0, **RATES), stream)
    s = make_synthetic_stream(n_instances=4000, n_features=10, n_labels=6, flip_rates=(0.2, 0.4), random_state=3)
    X, Yn, P = s.X[2000:], s.Y_noisy[2000:], s.P_true[2000:]
    H = model.hidden_output(X)
    lam, V = np.linalg.eigh(model.K_ - np.eye(60))
    B = model.B_score_ - model.B_rank_
    grid = (1.0, 1e4)
    est = prequential_ap_losses(lam, V, B, H, Yn, grid, criterion="rank", rho_pos=s.rho_pos, rho_neg=s.rho_neg)
    clean = prequential_ap_losses(lam, V, B, H, P, grid, criterion="rank")  # E[T | x] in place of T
    np.testing.assert_allclose(est, clean, atol=0.03)
    assert np.argmin(est) == np.argmin(clean) == 0
    # without the correction (rates 0) the level is off (by about the factor 1 - rho_pos - rho_neg)
    raw = prequential_ap_losses(lam, V, B, H, Yn, grid, criterion="rank")
    assert np.abs(raw - clean).max() > 0.05 > 0.03 > np.abs(est - clean).max()


def test_closed_form_squared_loss_matches_the_scores(stream):
    rng = np.random.default_rng(0)
    L, q, n = 12, 4, 80
    G = rng.normal(size=(L, L))
    G = G @ G.T
    lam, V = np.linalg.eigh(G)
    B = rng.normal(size=(L, q))
    H = rng.random((n, L))
    Y = np.where(rng.random((n, q)) < 0.3, 1.0, -1.0)
    w = rng.random(q) + 0.5
    got = prequential_losses(lam, V, B, H.T @ H, H.T @ Y, n, w, (0.5, 3.0))
    for value, a in zip(got, (0.5, 3.0)):
        O = H @ np.linalg.solve(G + a * np.eye(L), B)
        assert value == pytest.approx(((O - Y) ** 2 * w).sum() / (n * w.sum()), rel=1e-10)


@pytest.mark.parametrize("bad", ["big", -1.0, 0.0, [], [1.0, -2.0], [1.0, float("nan")], [True], float("inf")])
def test_bad_alpha_is_refused(bad, stream):
    X, Y = chunks(stream)[0]
    with pytest.raises(ValueError, match="alpha"):
        ELMNCLD(alpha=bad, n_neighbors=10).partial_fit(X, Y)


def test_auto_is_all_or_nothing_on_error(stream):
    (X0, Y0), (X1, Y1), (X2, Y2) = chunks(stream)[:3]
    model = ELMNCLD(n_hidden=30, alpha="auto", n_neighbors=10, random_state=0, **RATES)
    model.partial_fit(X0, Y0).partial_fit(X1, Y1)
    before = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in vars(model).items()
              if k in ("coef_", "psi_", "alpha_", "alpha_losses_")}
    stats_before = model.statistics_
    n_hist = len(model.history_)
    with pytest.raises(ValueError, match="noisy_proba"):
        model.partial_fit(X2, Y2, noisy_proba=np.full(Y2.shape, 2.0))
    with pytest.raises(ValueError):
        model.partial_fit(X2[:, :3], Y2)
    for k, v in before.items():
        assert np.array_equal(getattr(model, k), v), k
    assert model.statistics_ is stats_before
    assert len(model.history_) == n_hist
    # and it goes on exactly as an untouched twin
    twin = ELMNCLD(n_hidden=30, alpha="auto", n_neighbors=10, random_state=0, **RATES)
    twin.partial_fit(X0, Y0).partial_fit(X1, Y1).partial_fit(X2, Y2)
    model.partial_fit(X2, Y2)
    assert np.array_equal(model.coef_, twin.coef_)


def test_checkpoint_round_trips_the_alpha_state(tmp_path, stream):
    parts = chunks(stream)
    model = ELMNCLD(n_hidden=30, alpha="auto", n_neighbors=10, random_state=0, **RATES)
    for X, Y in parts[:4]:
        model.partial_fit(X, Y)
    save_checkpoint(model, tmp_path / "m.npz")
    again = load_checkpoint(tmp_path / "m.npz")
    for k in ("alpha_", "alpha_losses_", "alpha_grid_"):
        assert np.array_equal(getattr(again, k), getattr(model, k)), k
    for X, Y in parts[4:]:
        model.partial_fit(X, Y)
        again.partial_fit(X, Y)
    assert np.array_equal(model.coef_, again.coef_)
    assert list(model.history_["alpha"]) == list(again.history_["alpha"])


# ---------------------------------------------------------------- P_D on a projection of H
def _pd_error(model, L, seed=5, n_chunks=4):
    s = make_synthetic_stream(n_instances=n_chunks * 500, flip_rates=(0.2, 0.4), random_state=seed)
    P_D = (1 - s.rho_pos) * s.P_true + s.rho_neg * (1 - s.P_true)
    layer = RandomHiddenLayer(L, random_state=seed).fit(s.X[:500])
    err = []
    for a, b in s.chunk_bounds(500):
        Xs = layer.scale(s.X[a:b])
        nbrs = reconstruction_weights(Xs, 20, return_neighbors=True)[1]
        P = model.predict_proba(layer.transform(Xs, scaled=True), s.Y_noisy[a:b], nbrs)
        err.append(np.abs(P - P_D[a:b]).mean())
    return float(np.mean(err))


def test_projected_logistic_is_calibrated_at_large_L():
    """Mean |P_hat - P_D| against the generator's truth; tolerance 0.075 (measured ~0.068 at L = 20 and 200;
    the prior, which ignores x, is at ~0.087)."""
    prior = _pd_error(make_probability_model("prior"), 200)
    for L in (20, 200, 500):
        err = _pd_error(make_probability_model("logistic"), L)
        assert err < 0.075, (L, err)
        assert err < prior - 0.01
    assert _pd_error(make_probability_model("logistic-pca"), 200) < 0.085


def test_projected_logistic_is_the_full_fit_when_L_is_small():
    rng = np.random.default_rng(0)
    H = rng.random((120, 15))
    Y = (rng.random((120, 3)) < 0.3).astype(np.int8)
    full = LogisticProbability(n_components=None).predict_proba(H, Y)
    assert np.array_equal(LogisticProbability().predict_proba(H, Y), full)
    wide = rng.random((120, 500))  # the default fits on the first 20 nodes, whatever L
    assert np.array_equal(LogisticProbability().predict_proba(wide, Y),
                          LogisticProbability(n_components=None).predict_proba(wide[:, :20], Y))


# ---------------------------------------------------------------- the memory budget
def test_estimate_cost_grows_with_L_only_through_the_probability_model_it_fits():
    shapes = dict(chunk_size=500, n_labels=53, n_features=1001, n_neighbors=20)
    small = estimate_cost(n_hidden=20, probability_model="knn", **shapes)
    big = estimate_cost(n_hidden=500, probability_model="knn", **shapes)
    assert big.memory_bytes > small.memory_bytes and big.flops > small.flops
    # the all-nodes logistic fit holds N x (L+1)^2 doubles; the default logistic fits on 20 columns
    full = estimate_cost(n_hidden=500, probability_model=LogisticProbability(n_components=None), **shapes)
    twenty = estimate_cost(n_hidden=500, probability_model="logistic", **shapes)
    assert full.terms["P_D fit: N x (L+1)^2 outer products"] == 500 * 501**2 * 8
    assert twenty.terms["P_D fit: N x (L+1)^2 outer products"] == 500 * 21**2 * 8
    assert "P_D fit: N x (L+1)^2 outer products" not in big.terms  # knn fits nothing on H


@pytest.mark.parametrize("kwargs", [dict(n_hidden=20_000), dict(chunk_size=20_000)])
def test_over_budget_is_refused_before_any_work(kwargs, monkeypatch):
    rng = np.random.default_rng(0)
    n = kwargs.get("chunk_size", 60)
    X, Y = rng.random((n, 5)), (rng.random((n, 3)) < 0.3).astype(np.int8)
    model = ELMNCLD(n_hidden=kwargs.get("n_hidden", 10), n_neighbors=5, random_state=0)
    calls = []
    monkeypatch.setattr(RandomHiddenLayer, "fit", lambda *a, **k: calls.append(1))
    with pytest.raises(ValueError) as err:
        model.partial_fit(X, Y)
    msg = str(err.value)
    for name in ("n_hidden=", "chunk_size=", "n_labels=", "n_features=", "budget"):
        assert name in msg
    assert calls == [] and not model.is_fitted
    with pytest.raises(ValueError, match="n_hidden="):
        model.fit(X, Y)


def test_the_budget_is_the_module_constant(monkeypatch, stream):
    X, Y = chunks(stream)[0]
    ELMNCLD(n_hidden=50, n_neighbors=10).partial_fit(X, Y)  # well within the default budget
    monkeypatch.setattr(cost, "MEMORY_BUDGET_BYTES", 10_000)
    with pytest.raises(ValueError, match="n_hidden=50"):
        ELMNCLD(n_hidden=50, n_neighbors=10).partial_fit(X, Y)


def test_alpha_grid_spec():
    assert alpha_grid(2.0) is None
    assert alpha_grid("auto") == ALPHA_GRID
    assert alpha_grid((3, 1, 3)) == (1.0, 3.0)


@pytest.mark.parametrize(("n_features", "advice"), [
    (1_500_000, r"lower both the hidden nodes and the chunk size: with chunks of (\d+), at most (\d+) hidden nodes fit"),
    (20_000_000, r"this data's 20,000,000 features leave no room for a hidden layer"),
])
def test_wide_data_past_the_budget_is_advised_what_helps(n_features, advice):
    """Wide data (an upload of 1.5 M sparse attributes): no hidden layer fits beside the chunk's features, and the
    page had said 'lower the chunk size' under L. The advice names both and sizes them by the same estimate."""
    import re

    from dashboard import checks
    from ncld_core.config import RunConfig

    cfg = RunConfig(chunk_size=250)
    cost = checks.estimate_for(cfg, n_features=n_features, n_labels=3, n_instances=600, elm_names=["ELM-O"])
    field, message = checks.over_budget(cfg, cost, n_features, 3)
    found = re.search(advice, message)
    assert field == "n_hidden" and found, message
    if found.groups():  # the proposal fits: that chunk size and that many nodes are within the budget
        chunk, nodes = map(int, found.groups())
        smaller = checks.estimate_for(RunConfig(chunk_size=chunk, n_hidden=nodes), n_features=n_features,
                                      n_labels=3, n_instances=600, elm_names=["ELM-O"])
        assert smaller.memory_bytes <= checks.MEMORY_BUDGET_BYTES and nodes >= checks.MIN_HIDDEN_ADVISED
