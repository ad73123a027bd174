"""ncld_core.eval.sweep: the beta x gamma grid, checked against one full prequential run per point."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from ncld_core.config import RunConfig
from ncld_core.eval.runner import PrequentialRunner
from ncld_core.eval.sweep import (
    PAPER_GAMMAS,
    best_point,
    default_betas,
    geometric_mean,
    sweep,
)

SMALL = dict(n_instances=1200, chunk_size=150, n_features=6, n_labels=5, n_neighbors=6, n_hidden=12)


@pytest.fixture(scope="module")
def drifting():
    cfg = RunConfig(**SMALL, schedule="growth@450, reduction@900", delta=0.3)
    return cfg, cfg.build_stream()


def test_paper_gamma_grid():
    assert PAPER_GAMMAS == (0.0, 2**-8, 2**-7, 2**-6, 2**-5, 2**-4, 2**-3)


@pytest.mark.parametrize("decision", ["paper", "f1-bounded", "topk"])
@pytest.mark.parametrize("model", ["ELM-O", "ELM-I", "ELM-II"])
def test_fast_path_equals_one_run_per_point(drifting, model, decision):
    cfg, stream = drifting
    cfg = dataclasses.replace(cfg, decision=decision)
    betas, gammas = [0.0, 0.18, 0.55, 1.0], [0.0, 2**-6, 2**-3]
    fast = sweep(cfg, betas, gammas, stream=stream, model=model)
    slow = sweep(cfg, betas, gammas, stream=stream, model=model, method="runner")
    assert fast.attrs["firings"] == slow.attrs["firings"]
    if model != "ELM-O":
        assert fast.attrs["firings"], "the test stream should make the detector fire"
    cols = [c for c in fast.columns if c not in ("beta", "gamma")]
    np.testing.assert_allclose(fast[cols].to_numpy(), slow[cols].to_numpy(), rtol=0, atol=1e-9)


def test_matches_the_runner_directly():
    cfg = RunConfig(**SMALL, models=["ELM-II"], beta=0.3, gamma=2**-5)  # the default decision rule
    stream = cfg.build_stream()
    df = sweep(cfg, [0.3], [2**-5], stream=stream)
    runner = PrequentialRunner(["ELM-II"], cfg.chunk_size, model_params=cfg.model_params())
    summary = runner.run(stream).summary().loc["ELM-II"]
    row = df.iloc[0]
    for key in ("hamming_loss", "micro_f1", "average_precision"):
        assert row[key] == pytest.approx(summary[key], abs=1e-12)
    assert row["gm"] == pytest.approx(math.sqrt((1 - summary["hamming_loss"]) * summary["micro_f1"]))


@pytest.mark.parametrize("model_rates", ["ignore", "estimate"])
def test_sweep_tells_the_model_the_rates_as_the_config_says(model_rates):
    # The sweep once gave the true rates whatever model_rates said.
    cfg = RunConfig(**SMALL, models=["ELM-O"], beta=0.3, gamma=2**-5, model_rates=model_rates)
    stream = cfg.build_stream()
    df = sweep(cfg, [0.3], [2**-5], stream=stream)
    assert df.attrs["method"] == ("runner" if model_rates == "estimate" else "fast")
    summary = cfg.runner().run(stream).summary().loc["ELM-O"]
    assert df.iloc[0]["micro_f1"] == pytest.approx(summary["micro_f1"], abs=1e-9)
    assert df.iloc[0]["hamming_loss"] == pytest.approx(summary["hamming_loss"], abs=1e-9)
    known = sweep(dataclasses.replace(cfg, model_rates="known"), [0.3], [2**-5], stream=stream)
    assert known.iloc[0]["average_precision"] != df.iloc[0]["average_precision"]


def test_grid_is_sorted_deduplicated_and_complete():
    cfg = RunConfig(**SMALL)
    df = sweep(cfg, [1.0, 0.2, 0.2], [2**-4, 0], model="ELM-O")
    assert df[["beta", "gamma"]].values.tolist() == [[0.2, 0.0], [0.2, 2**-4], [1.0, 0.0], [1.0, 2**-4]]
    assert df.attrs["model"] == "ELM-O" and df.attrs["chunks"] == 8 and df.attrs["method"] == "fast"
    assert df["gm"].tolist() == pytest.approx(geometric_mean(df["hamming_loss"], df["micro_f1"]).tolist())


def test_progress_reaches_the_total():
    cfg = RunConfig(**SMALL)
    calls = []
    sweep(cfg, [0.5], [0.0], progress=lambda done, total: calls.append((done, total)))
    assert calls[-1] == (8, 8) and [c[0] for c in calls] == list(range(1, 9))
    calls.clear()
    sweep(cfg, [0.5, 1.0], [0.0], progress=lambda done, total: calls.append((done, total)), method="runner")
    assert calls == [(1, 2), (2, 2)]


def test_defaults_to_first_sweepable_model():
    cfg = RunConfig(**SMALL, models=["ELM (plain)", "ELM-I"])
    assert sweep(cfg, [0.5], [0.0]).attrs["model"] == "ELM-I"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(betas=[1.5], gammas=[0]), r"betas: every value must be in \[0.0, 1.0\]"),
        (dict(betas=[0.5], gammas=[-1]), r"gammas: every value must be in \[0.0, inf\]"),
        (dict(betas=[], gammas=[0]), "betas: give at least one value"),
        (dict(betas=[0.5], gammas="x"), "gammas must be a list of numbers"),
        (dict(betas=[0.5], gammas=[0], model="ELM (plain)"), "the sweep needs an ELM-NCLD variant"),
        (dict(betas=[0.5], gammas=[0], model="nope"), "known variants"),
        (dict(betas=[0.5], gammas=[0], method="grid"), "method must be one of"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        sweep(RunConfig(**SMALL), **kwargs)


def test_invalid_config_is_refused():
    with pytest.raises(ValueError, match="n_neighbors"):
        sweep(RunConfig(n_instances=600, chunk_size=10, n_neighbors=10), [0.5], [0.0])


def test_single_chunk_stream_is_refused():
    cfg = RunConfig(**{**SMALL, "n_instances": 150})
    with pytest.raises(ValueError, match="single chunk|at least two chunks"):
        sweep(cfg, [0.5], [0.0])


def test_best_point_and_beta_grid():
    df = pd.DataFrame({"beta": [0.1, 0.2, 0.3], "gamma": [0.0, 0.0, 0.0], "gm": [0.5, 0.7, 0.7]})
    assert best_point(df)["beta"] == 0.2  # first of the ties
    with pytest.raises(ValueError, match="no rows"):
        best_point(df.iloc[:0])
    assert default_betas() == [round(0.05 * k, 9) for k in range(1, 20)]
    assert default_betas(0.3, 0.8, 0.05)[-1] == 0.8 and len(default_betas(0.3, 0.8, 0.05)) == 11
    with pytest.raises(ValueError, match="step must be > 0"):
        default_betas(0, 1, 0)


def test_the_fast_path_solves_each_label_at_its_own_ridge_as_the_forward_model_does(drifting, monkeypatch):
    """No control selects loss="forward" (RunConfig has no loss); with "auto" made to mean it, the sweep's fast path
    (one reduction per beta, ncld_core.model.ridge) gives the runner's numbers, and they differ from backward's."""
    import ncld_core.model.elm_ncld as elm_ncld

    cfg, stream = drifting
    betas, gammas = [0.18, 0.55], [0.0, 2**-5]
    backward = sweep(cfg, betas, gammas, stream=stream)
    monkeypatch.setattr(elm_ncld, "resolve_loss",
                        lambda loss, estimated, trusted=False: "paper" if estimated else "forward")
    fast = sweep(cfg, betas, gammas, stream=stream)
    slow = sweep(cfg, betas, gammas, stream=stream, method="runner")
    cols = [c for c in fast.columns if c not in ("beta", "gamma")]
    np.testing.assert_allclose(fast[cols].to_numpy(), slow[cols].to_numpy(), rtol=0, atol=1e-9)
    assert np.abs(fast["average_precision"].to_numpy() - backward["average_precision"].to_numpy()).max() > 1e-3


@pytest.mark.parametrize("method", ["fast", "runner"])
def test_a_sweep_job_steps_as_its_runner_says_and_ends_with_the_sweeps_table(drifting, method):
    """The dashboard's job (SweepJob's runner, advanced step by step in a process of its own) yields as many steps
    as it announces (per chunk on the fast path, per grid point with one run each), its last carrying the very
    table :func:`sweep` computes."""
    from ncld_core.eval.sweep import SweepJob

    cfg, stream = drifting
    job = SweepJob(cfg, "ELM-I", (0.2, 0.7), (0.0, 2**-6), method=method)
    runner = job.runner()
    steps = list(runner.iter_run(stream))
    assert len(steps) == runner.n_steps(stream) == (4 if method == "runner" else stream.n_chunks(cfg.chunk_size))
    assert [s.done for s in steps] == list(range(1, len(steps) + 1)) and {s.total for s in steps} == {len(steps)}
    assert all(s.table is None for s in steps[:-1]) and steps[-1].n_points == 4
    # each step says the time since the sweep began, so the page can say the time left at its pace
    seconds = [s.seconds for s in steps]
    assert seconds == sorted(seconds) and seconds[0] > 0 and steps[-1].remaining_s == 0.0
    assert steps[0].remaining_s == pytest.approx(seconds[0] * (len(steps) - 1))
    assert steps[-1].one_by_one == (method == "runner") and runner.model_names == ["ELM-I"]
    expected = sweep(cfg, [0.2, 0.7], [0.0, 2**-6], stream=stream, model="ELM-I", method=method)
    got = steps[-1].table
    pd.testing.assert_frame_equal(got, expected)
    assert {k: v for k, v in got.attrs.items() if k != "seconds"} == \
        {k: v for k, v in expected.attrs.items() if k != "seconds"}
    # a job's identity: its grid, variant and configuration (a run's never has the "sweep" entry)
    assert job.to_dict()["sweep"] == {"variant": "ELM-I", "betas": [0.2, 0.7], "gammas": [0.0, 2**-6],
                                      "method": method}
    assert SweepJob(cfg, "ELM-I", (0.2,), (0.0,)).to_dict() != job.to_dict()


def test_a_sweep_jobs_bad_grid_fails_at_its_first_step(drifting):
    from ncld_core.eval.sweep import SweepJob

    cfg, stream = drifting
    with pytest.raises(ValueError, match="betas: every value must be in"):
        next(SweepJob(cfg, "ELM-O", (1.5,), (0.0,)).runner().iter_run(stream))


def test_the_sweep_pages_range_covers_every_measured_ratio_of_its_benchmark():
    """SWEEP_SPREAD, the range said before a server has measured sweeps of its own, holds every measured /
    estimated ratio of docs/sweep-estimate.md (``python -m benchmarks.sweep_estimate``): a new measurement outside
    it fails here until the constant follows it."""
    import re
    from pathlib import Path

    from ncld_core.eval.sweep import SWEEP_SPREAD, seconds_range
    from ncld_core.model.chunk_time import TimeCalibration

    doc = (Path(__file__).resolve().parents[1] / "docs" / "sweep-estimate.md").read_text(encoding="utf-8")
    ratios = [float(m) for m in re.findall(r"\|\s*([0-9.]+)\s*\|\n", doc)]
    assert len(ratios) >= 4, "the report's table"
    assert SWEEP_SPREAD[0] <= min(ratios) and max(ratios) <= SWEEP_SPREAD[1], (ratios, SWEEP_SPREAD)
    # a server's own sweeps replace it once it has measured two
    calibration = TimeCalibration(seed_flops_per_s=1e9)
    assert seconds_range(10.0, calibration) == pytest.approx((10.0 * SWEEP_SPREAD[0], 10.0 * SWEEP_SPREAD[1]))
    assert calibration.observe_seconds(12.0, 10.0) and not calibration.observe_seconds(0.0, 10.0)
    assert calibration.spread() is None
    calibration.observe_seconds(18.0, 10.0)
    assert calibration.spread() == pytest.approx((1.2, 1.8)) and seconds_range(10.0, calibration) == pytest.approx((12.0, 18.0))
