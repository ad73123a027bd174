"""Every preset's "what you will see" (dashboard/teaching.py::PRESET_NOTES) asserted on the preset's run.

Fixed seeds (the presets' own); the tolerances are the words of the sentences ("about 0.05",
"within 0.03", ...). When a number moves out of them, change the preset or the sentence.
"""

from __future__ import annotations

import numpy as np
import pytest

from dashboard.teaching import METRICS, PRESET_NOTES, SWEEP, noise_cost_text
from ncld_core.config import PRESETS, RunConfig
from ncld_core.eval.sweep import PAPER_GAMMAS, best_point, default_betas, sweep
from ncld_core.model.flip_rates import estimate_errors


def _run(name):
    cfg = PRESETS[name]
    stream = cfg.build_stream()
    result = cfg.runner().run(stream)
    return cfg, stream, result


def _f1(result, model):
    rec = result.records[result.records["model"] == model].set_index("chunk")
    return rec["micro_f1"]


def test_every_preset_has_a_note_and_nothing_else():
    assert set(PRESET_NOTES) == set(PRESETS)


def test_clean_vs_noisy():
    cfg, _, result = _run("clean vs noisy")
    assert "ELM-O (clean labels)" in cfg.models  # a real clean-label reference
    s = result.summary()
    cost = result.noise_cost("average_precision")
    # "the noise costs the plain ELM about 0.05 and ELM-O's correction wins back about a quarter of it"
    assert 0.03 < cost["cost"] < 0.07, cost
    assert 0.15 < cost["share"] < 0.40, cost
    assert s.loc["ELM-O (clean labels)", "average_precision"] > s.loc["ELM-O", "average_precision"] \
        > s.loc["ELM (plain)", "average_precision"]
    # "micro-F1 hides the cost: ... all three reach about the same F1"
    f1 = s.loc[["ELM-O (clean labels)", "ELM-O", "ELM (plain)"], "micro_f1"]
    assert f1.max() - f1.min() < 0.03, f1
    assert "recovers" in noise_cost_text(cost) and f"{cost['cost']:.3f}" in noise_cost_text(cost)


def test_the_oracle_learns_the_ground_truth():
    # On a noise-free stream the oracle and ELM-O learn the same labels: identical predictions.
    cfg = RunConfig(noise="none", n_instances=1000, models=["ELM-O (clean labels)", "ELM-O"], references=False)
    s = cfg.runner().run(cfg.build_stream()).summary()
    assert s.loc["ELM-O (clean labels)", "micro_f1"] == s.loc["ELM-O", "micro_f1"]
    # With noise they differ (it is not fed the noisy labels).
    cfg = RunConfig(n_instances=1000, models=["ELM-O (clean labels)", "ELM-O"], references=False)
    s = cfg.runner().run(cfg.build_stream()).summary()
    assert s.loc["ELM-O (clean labels)", "average_precision"] != s.loc["ELM-O", "average_precision"]


def test_concept_growth():
    _, _, result = _run("concept growth")
    hat = {c.chunk: c.diagnostics["ELM-O"].lcard_hat for c in result.chunks}
    assert 0.7 < hat[9] < 1.4 and 2.5 < hat[10] < 3.5, (hat[9], hat[10])  # "from about 1 to about 3"
    s = result.summary()
    for m in ("ELM-O", "ELM-I", "ELM-II"):  # "fires in chunk 10, with no false alarm"
        assert (s.loc[m, "detected"], s.loc[m, "false_alarms"], s.loc[m, "mean_delay"]) == (1, 0, 0), m
    f1 = {m: _f1(result, m) for m in ("ELM-O", "ELM-I", "ELM-II")}
    assert (f1["ELM-I"].loc[11:] >= 0.45).all()  # "micro-F1 about 0.5 from chunk 11"
    assert (f1["ELM-I"].loc[11:] > f1["ELM-O"].loc[11:]).all()
    assert (f1["ELM-II"].loc[11:13] <= f1["ELM-O"].loc[11:13]).all()  # "no faster than ELM-O"
    assert s.loc["ELM-II", "micro_f1"] < s.loc["ELM-O", "micro_f1"]  # "and ends below it"
    assert "ELM-II no faster than ELM-O" in METRICS.text


def test_concept_reduction():
    _, _, result = _run("concept reduction")
    s = result.summary()
    for m in ("ELM-O", "ELM-I", "ELM-II"):
        assert (s.loc[m, "detected"], s.loc[m, "mean_delay"]) == (1, 0), m
    three = s.loc[["ELM-O", "ELM-I", "ELM-II"]]
    assert three["hamming_loss"].idxmin() == "ELM-I" and three["micro_f1"].idxmin() == "ELM-I"
    f1 = {m: _f1(result, m) for m in ("ELM-O", "ELM-I", "ELM-II")}
    assert (f1["ELM-I"].loc[11:] < np.minimum(f1["ELM-O"].loc[11:], f1["ELM-II"].loc[11:])).all()


def test_unknown_noise_estimate_the_rates():
    _, stream, result = _run("unknown noise: estimate the rates")
    over_time, _ = estimate_errors(result.chunks, "ELM-O", stream.rho_pos, stream.rho_neg)
    last = over_time.iloc[-1]
    assert last["mae_rho_neg"] < 0.03 and last["mae_rho_pos"] < 0.04, last
    rows = [(c.true_cardinality, c.diagnostics["ELM-O"]) for c in result.chunks]
    width = np.mean([d.lcard_high - d.lcard_low for _, d in rows])
    assert 5 < width < 7, width  # "about 6 labels per instance"
    assert all(d.lcard_low <= t <= d.lcard_high for t, d in rows)  # "in every chunk"


@pytest.fixture(scope="module")
def default_sweep():
    cfg = PRESETS["why beta matters"]
    base = RunConfig()
    betas = sorted(set(default_betas()) | {base.beta, cfg.beta})
    gammas = sorted(set(PAPER_GAMMAS) | {base.gamma, cfg.gamma})
    return sweep(cfg, betas, gammas, model="ELM-O"), base


def test_why_beta_matters(default_sweep):
    _, _, result = _run("why beta matters")
    s = result.summary()
    metrics = ["hamming_loss", "micro_f1", "average_precision"]
    assert s.loc["ELM-O", metrics].tolist() == s.loc["ELM (plain)", metrics].tolist()  # "identical metrics"
    df, base = default_sweep
    best = best_point(df)
    assert (best["beta"], best["gamma"]) == (0.6, 2**-5), best
    at_default = df[(df["beta"] == base.beta) & (df["gamma"] == base.gamma)]["gm"].iloc[0]
    assert 0.03 < best["gm"] - at_default < 0.08  # "GM about 0.05 above the defaults"


def test_sweep_text(default_sweep):
    # SWEEP.text: "best grid point is β = 0.6, γ = 2⁻⁵ (GM 0.675, flat from β 0.55 to 0.75),
    # against 0.619 at the defaults"
    df, base = default_sweep
    best = best_point(df)
    assert round(best["gm"], 3) == 0.675
    at_default = df[(df["beta"] == base.beta) & (df["gamma"] == base.gamma)]["gm"].iloc[0]
    assert round(at_default, 3) == 0.619
    flat = df[(df["gamma"] == 2**-5) & df["beta"].between(0.549, 0.751)]["gm"]
    assert len(flat) == 5 and flat.max() - flat.min() < 0.002
    assert "0.675" in SWEEP.text and "0.619" in SWEEP.text
    assert "sits lower here" not in SWEEP.text
