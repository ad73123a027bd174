"""The paper-literal Woodbury reference computes the same model as ELMNCLD(hessian="paper").

The benchmark (``python -m benchmarks``) reports the speed ratio between the two; these checks
make sure that ratio compares equal work: same Phi (and Psi = Phi + Z) after several chunks,
for every drift strategy, on small chunks so the test is fast.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from benchmarks.woodbury_reference import PAPER_PARAMS, WoodburyELMNCLD
from ncld_core.model import ELMNCLD
from ncld_core.stream.noise import apply_label_noise, draw_flip_rates

RTOL = 1e-6


def _stream(n=720, d=12, q=5, seed=0, sparse=False):
    """Gaussian clusters with label probabilities from a linear score, noise as in the paper."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, 2.0, size=(6, d))
    X = centres[rng.integers(0, 6, size=n)] + rng.standard_normal((n, d))
    # a change of the label distribution half way, so the drift detector has something to see
    offset = np.where(np.arange(n) < n // 2, -1.5, 0.5)[:, None]
    logits = X @ rng.normal(size=(d, q)) / np.sqrt(d) + offset
    Y_true = (rng.random((n, q)) < 1.0 / (1.0 + np.exp(-logits))).astype(np.int8)
    rho_pos, rho_neg = draw_flip_rates(q, random_state=seed + 1)
    Y = apply_label_noise(Y_true, rho_pos, rho_neg, random_state=seed + 2)
    if sparse:
        X = sp.csr_matrix(np.where(np.abs(X) > 1.0, np.abs(X), 0.0))
    return X, Y, rho_pos, rho_neg


def _assert_close(actual, expected, what):
    scale = np.max(np.abs(expected))
    err = np.max(np.abs(actual - expected))
    assert err <= RTOL * scale, f"{what}: max abs difference {err:.3g} > {RTOL} x {scale:.3g}"


def _run_both(X, Y, rho_pos, rho_neg, chunk, **params):
    model = ELMNCLD(hessian="paper", loss="paper", detector="paper", rho_pos=rho_pos, rho_neg=rho_neg, random_state=3, **PAPER_PARAMS,
                    **params)
    ref = None
    for start in range(0, X.shape[0] - chunk + 1, chunk):
        Xc, Yc = X[start : start + chunk], Y[start : start + chunk]
        if ref is not None:
            _assert_close(ref.decision_function(Xc), model.ranking_scores(Xc), "scores before the update")
        model.partial_fit(Xc, Yc)
        if ref is None:
            ref = WoodburyELMNCLD.from_model(model)  # shares model.hidden_
        ref.partial_fit(Xc, Yc)
        _assert_close(ref.coef_, model.coef_, f"Phi after chunk {len(ref.actions_) - 1}")
        _assert_close(ref.psi_, model.psi_, f"Psi after chunk {len(ref.actions_) - 1}")
    return model, ref


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_phi_equals_paper_hessian_model(sparse):
    X, Y, rho_pos, rho_neg = _stream(sparse=sparse)
    model, ref = _run_both(X, Y, rho_pos, rho_neg, chunk=80)
    assert len(ref.actions_) == 9
    assert list(model.history_["action"]) == ref.actions_


@pytest.mark.parametrize("strategy", ["retrain", "adjust"])
def test_drift_strategies_match(strategy):
    X, Y, rho_pos, rho_neg = _stream(seed=4)
    # a permissive detector so that both the firing and the quiet branch are exercised
    model, ref = _run_both(X, Y, rho_pos, rho_neg, chunk=80, strategy=strategy, delta=0.9)
    assert strategy in ref.actions_
    assert list(model.history_["action"]) == ref.actions_


def test_own_hidden_layer_is_the_models():
    """Without ``hidden=``, the reference draws the same layer from ``random_state``."""
    X, Y, rho_pos, rho_neg = _stream(n=240)
    model = ELMNCLD(hessian="paper", loss="paper", detector="paper", rho_pos=rho_pos, rho_neg=rho_neg, random_state=7, **PAPER_PARAMS)
    ref = WoodburyELMNCLD(rho_pos=rho_pos, rho_neg=rho_neg, random_state=7, **PAPER_PARAMS)
    for start in range(0, 240, 80):
        model.partial_fit(X[start : start + 80], Y[start : start + 80])
        ref.partial_fit(X[start : start + 80], Y[start : start + 80])
    _assert_close(ref.coef_, model.coef_, "Phi")


def test_refuses_beta_at_most_half():
    with pytest.raises(ValueError, match="beta > 1/2"):
        WoodburyELMNCLD(beta=0.5)
    with pytest.raises(ValueError, match="hessian='paper'"):
        WoodburyELMNCLD.from_model(ELMNCLD(beta=0.55))
