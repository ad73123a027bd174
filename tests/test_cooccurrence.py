import numpy as np
import pytest

from ncld_core.model.cooccurrence import CooccurrenceRates, small_loss_selection

RHO_POS, RHO_NEG = np.array([0.3, 0.2, 0.25]), np.array([0.1, 0.05, 0.3])


def correlated_stream(n, rng, partner_related=True):
    """Three labels: label 0 drives 1 and 2 (unless ``partner_related`` is False: then all independent); the
    observed labels flipped with RHO_POS / RHO_NEG independently (Eq. NR)."""
    g0 = rng.random(n) < 0.3
    if partner_related:
        g1 = np.where(g0, rng.random(n) < 0.7, rng.random(n) < 0.1)
        g2 = np.where(g0, rng.random(n) < 0.2, rng.random(n) < 0.6)
    else:
        g1, g2 = rng.random(n) < 0.25, rng.random(n) < 0.45
    G = np.stack([g0, g1, g2], axis=1).astype(float)
    Y = np.where(G == 1, rng.random(G.shape) >= RHO_POS, rng.random(G.shape) < RHO_NEG).astype(float)
    return G, Y


def test_rates_within_tolerance_when_the_selected_rows_are_clean_and_random():
    # Assumptions (i)-(iii) hold: the selected rows are a random half of those whose noisy label is the clean
    # one (independent flips make them a random sample of each clean class). 200 000 rows in 20 chunks, seed 0:
    # every rate within 0.03 of the truth, the prior within 0.02.
    rng = np.random.default_rng(0)
    est = CooccurrenceRates()
    priors = []
    for _ in range(20):
        G, Y = correlated_stream(10_000, rng)
        est = est.updated(Y, (rng.random(Y.shape) < 0.5) & (Y == G))   # clean defaults to the observed labels
        priors.append(G.mean(axis=0))
    assert est.identified_.all()
    np.testing.assert_allclose(est.rho_pos_, RHO_POS, atol=0.03)
    np.testing.assert_allclose(est.rho_neg_, RHO_NEG, atol=0.03)
    np.testing.assert_allclose(est.prior_, np.mean(priors, axis=0), atol=0.02)
    assert (est.partners_ >= 1).all() and (est.strength_ > est.z).all()


def test_not_identified_when_no_label_co_occurs_with_another():
    # Assumption (iii) broken: the three labels independent, so no partner's noisy label depends on a label's
    # clean one; the determinant's test fails for every label (seed 0, 200 000 rows) and the rates are NaN.
    rng = np.random.default_rng(0)
    G, Y = correlated_stream(200_000, rng, partner_related=False)
    est = CooccurrenceRates().updated(Y, (rng.random(Y.shape) < 0.5) & (Y == G))
    assert not est.identified_.any()
    assert np.isnan(est.rho_pos_).all() and np.isnan(est.rho_neg_).all() and np.isnan(est.prior_).all()
    assert (est.partners_ == 0).all()


def test_counts_summed_by_chunk_equal_one_pass_and_drift_down_weights():
    rng = np.random.default_rng(1)
    G, Y = correlated_stream(3000, rng)
    sel = rng.random(Y.shape) < 0.5
    whole = CooccurrenceRates().updated(Y, sel, clean=G)
    chunked = CooccurrenceRates()
    for start in range(0, 3000, 1000):
        chunked = chunked.updated(Y[start:start + 1000], sel[start:start + 1000], clean=G[start:start + 1000])
    np.testing.assert_allclose(chunked.pairs_, whole.pairs_)
    np.testing.assert_allclose(chunked.selected_pairs_, whole.selected_pairs_)
    np.testing.assert_allclose(chunked.rho_pos_, whole.rho_pos_, equal_nan=True)
    decayed = whole.after_drift()
    np.testing.assert_allclose(decayed.pairs_, whole.pairs_ * 0.5)
    np.testing.assert_allclose(decayed.rho_pos_, whole.rho_pos_, equal_nan=True)   # ratios unchanged


def test_small_loss_selection_keeps_a_share_of_each_observed_class():
    Y = np.array([[1], [1], [1], [1], [0], [0]])
    P = np.array([[0.9], [0.1], [0.6], [0.8], [0.7], [0.2]])
    assert small_loss_selection(Y, P, keep=0.5).ravel().tolist() == [True, False, False, True, False, True]


@pytest.mark.parametrize("kwargs, name", [({"z": 0}, "z"), ({"min_selected": 0}, "min_selected"),
                                          ({"max_rate": 0.5}, "max_rate"), ({"drift_decay": 2}, "drift_decay")])
def test_bad_parameters_name_themselves(kwargs, name):
    with pytest.raises(ValueError, match=name):
        CooccurrenceRates(**kwargs).updated(np.zeros((4, 2)), np.zeros((4, 2), dtype=bool))


def test_bad_inputs_raise_value_errors():
    Y = np.zeros((4, 2))
    with pytest.raises(ValueError, match="selected"):
        CooccurrenceRates().updated(Y, np.zeros((4, 3), dtype=bool))
    with pytest.raises(ValueError, match="clean"):
        CooccurrenceRates().updated(Y, np.zeros((4, 2), dtype=bool), clean=np.full((4, 2), 2.0))
    with pytest.raises(ValueError, match="keep"):
        small_loss_selection(Y, Y, keep=0)
    with pytest.raises(ValueError, match="proba"):
        small_loss_selection(Y, np.zeros((4, 3)))


def test_rate_benchmark_cell_measures_cooccurrence_and_its_assumption(monkeypatch):
    from benchmarks import rate_estimators

    monkeypatch.setattr(rate_estimators, "LENGTH", 1500)
    row = rate_estimators.cell((rate_estimators.SYNTHETIC, "missing"))
    assert row["co_labels"] == 10 and 0 <= row["co_identified"] <= 10 and 0 < row["purity"] <= 1
    assert len(row["co_errors_pos"]) == row["co_identified"] and 0 <= row["every_identified"] <= 10
    text = rate_estimators.report([row], [], 1.0)
    assert "## Label co-occurrence with small-loss selection" in text
    assert f"| {row['co_identified']} of 10" in text.split("## Label co-occurrence")[1]
