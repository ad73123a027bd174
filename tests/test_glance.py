"""The run at one glance (issue 38 item 4), in the core: the models computed beside a run (the clean-label oracle and
the twin ignoring the noise; PrequentialRunner(beside=...), RunConfig.beside_plan) and the glance's numbers against
the run's records (ncld_core/eval/glance.py). The page's strip: tests/test_dashboard_glance.py.

Every run here is seeded: the records, and so every number compared, are exact (no tolerance but float equality
where the same arithmetic is done twice)."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from ncld_core.checkpoint import CheckpointError, load_run, save_run
from ncld_core.config import RunConfig
from ncld_core.eval.glance import GLANCE_MODELS, IGNORING, ORACLE, Glance, glance
from ncld_core.eval.runner import PrequentialRunner, RunResult

#: A short synthetic stream with a planted concept growth in chunk 4 (of 8), noisy labels, the three variants.
CFG = RunConfig(n_instances=1600, chunk_size=200, n_features=8, n_labels=5, n_hidden=40, n_neighbors=10,
                schedule="growth@800", models=["ELM-O", "ELM-I", "ELM-II"], seed=3)


@pytest.fixture(scope="module")
def stream():
    return CFG.build_stream()


@pytest.fixture(scope="module")
def beside_run(stream):
    """The run with the glance's models computed beside it, and the same run with them selected."""
    plan = CFG.beside_plan(stream)
    beside = list(CFG.runner(beside=plan.models).iter_run(stream))
    selected = list(dataclasses.replace(CFG, models=[*CFG.models, *GLANCE_MODELS]).runner().iter_run(stream))
    return plan, beside, selected


# --------------------------------------------------------------------------- computed beside the run
def test_the_models_beside_a_run_leave_its_records_as_they_were(stream, beside_run):
    plan, beside, _ = beside_run
    assert plan.models == GLANCE_MODELS and plan.missing == {}
    alone = CFG.runner().run(stream)
    runner = CFG.runner(beside=plan.models)
    assert runner.model_names == alone.models == ["ELM-O", "ELM-I", "ELM-II", "all-negative", "noisy-prior"]
    for c, a in zip(beside, alone.chunks):
        assert set(c.metrics) <= set(alone.models) and set(c.seconds) == set(alone.models)
        assert c.metrics == a.metrics and c.cumulative == a.cumulative and set(c.diagnostics) == set(a.diagnostics)
    # every record but the times, NaN equal to NaN (a ridge chosen online is NaN when given)
    records = RunResult(beside, stream, CFG.chunk_size).records
    timeless = [c for c in records.columns if "seconds" not in c]
    pd.testing.assert_frame_equal(records[timeless], alone.records[timeless])
    assert beside[0].beside == {}  # chunk 0 only initialises: nothing scored
    assert all(set(c.beside) == set(GLANCE_MODELS) for c in beside[1:])


def test_a_model_beside_the_run_scores_as_it_does_when_selected(beside_run):
    _, beside, selected = beside_run
    for c, s in zip(beside[1:], selected[1:]):
        for name in GLANCE_MODELS:
            assert c.beside[name] == s.cumulative[name]


def test_a_selected_model_is_not_computed_again_beside(stream):
    cfg = dataclasses.replace(CFG, models=["ELM-O", ORACLE])
    plan = cfg.beside_plan(stream)
    assert plan.models == (IGNORING,)
    runner = cfg.runner(beside=(ORACLE, IGNORING))
    assert runner.beside == [IGNORING]
    with pytest.raises(ValueError, match="beside"):
        PrequentialRunner(["ELM-O"], beside="ELM-O (clean labels)")


def test_the_plan_says_why_it_computes_nothing_beside(stream, monkeypatch):
    from ncld_core import limits

    plan = CFG.beside_plan(stream, budget_bytes=1024)
    assert plan.models == () and plan.missing == dict.fromkeys(GLANCE_MODELS, "past the memory budget")
    # the budget is the run's (NCLD_RUN_MEMORY_BYTES): the run itself fits, the run with the two beside it does not
    cost = CFG.run_cost()
    monkeypatch.setattr(limits, "LIMITS", limits.Limits(run_memory_bytes=cost.memory_bytes))
    assert CFG.budget_error(cost) is None
    assert CFG.beside_plan(stream).missing == dict.fromkeys(GLANCE_MODELS, "past the memory budget")
    clean = dataclasses.replace(CFG, noise="none")
    assert clean.beside_plan(clean.build_stream()).missing == dict.fromkeys(GLANCE_MODELS,
                                                                            "no label noise in this stream")


def test_a_checkpoint_keeps_what_was_computed_beside(stream, tmp_path):
    runner = CFG.runner(beside=GLANCE_MODELS)
    chunks = []
    for chunk in runner.iter_run(stream):
        chunks.append(chunk)
        if len(chunks) == 3:
            break
    save_run(tmp_path / "run.npz", runner.state_, chunks, config=CFG.to_dict(), chunk_size=CFG.chunk_size)
    _, loaded, _, _ = load_run(tmp_path / "run.npz")
    assert [c.beside for c in loaded] == [c.beside for c in chunks] and loaded[2].beside
    bad = dataclasses.replace(chunks[2], beside={ORACLE: {"micro_f1": "high"}})
    save_run(tmp_path / "bad.npz", runner.state_, [*chunks[:2], bad], config=CFG.to_dict(), chunk_size=200)
    with pytest.raises(CheckpointError, match="chunk 2: beside"):
        load_run(tmp_path / "bad.npz")


# --------------------------------------------------------------------------- the glance's numbers
def test_the_glance_reads_its_numbers_from_the_records(beside_run):
    _, chunks, _ = beside_run
    g = glance(chunks, learner="ELM-O", change_positions=[800], chunk_size=200)
    last = chunks[-1]
    oracle, ignoring = last.beside[ORACLE]["micro_f1"], last.beside[IGNORING]["micro_f1"]
    learner = last.cumulative["ELM-O"]["micro_f1"]
    assert (g.oracle, g.ignoring, g.learner_score) == (oracle, ignoring, learner)
    assert g.cost == oracle - ignoring and g.cost > 0.02  # the noise costs something on this stream
    assert g.won_back == pytest.approx((learner - ignoring) / (oracle - ignoring), abs=1e-12)
    assert (g.chunks, g.scored, g.planted, g.happened) == (8, 7, (4,), (4,))
    fired = tuple(c.chunk for c in chunks if c.diagnostics["ELM-O"].fired)
    assert g.found == fired
    inside = sum(r.lcard_low <= c.true_cardinality <= r.lcard_high
                 for c in chunks for r in [c.diagnostics["ELM-O"]])
    assert (g.band_inside, g.band_chunks, g.band_kind) == (inside, 8, "interval")


def test_the_glance_follows_the_chunks_received(beside_run):
    """Live: after 3 chunks the planted change (chunk 4) has not happened yet and cannot have been missed."""
    _, chunks, _ = beside_run
    g = glance(chunks[:3], learner="ELM-O", change_positions=[800], chunk_size=200)
    assert (g.chunks, g.planted, g.happened, g.missed) == (3, (4,), (), 0)
    assert g.oracle == chunks[2].beside[ORACLE]["micro_f1"]
    assert glance([], learner="ELM-O", change_positions=[800], chunk_size=200) == Glance(0, 0, "ELM-O", planted=(4,))


def test_the_selected_oracle_is_read_from_the_run_itself(beside_run):
    _, _, selected = beside_run
    g = glance(selected, learner="ELM-O", chunk_size=200)
    assert g.oracle == selected[-1].cumulative[ORACLE]["micro_f1"] and g.planted == ()


def test_the_oracle_shares_the_chunks_features_and_learns_as_with_its_own(stream, monkeypatch):
    """The clean-label oracle takes the noisy cache's H and graph (ChunkCache.for_labels): the records are those it
    made with a cache of its own, and each chunk's feature graph is computed once instead of twice."""
    from ncld_core.model import chunk_cache, elm_ncld

    graphs = []
    original = elm_ncld.reconstruction_weights
    monkeypatch.setattr(elm_ncld, "reconstruction_weights", lambda *a, **k: graphs.append(1) or original(*a, **k))
    cfg = dataclasses.replace(CFG, models=["ELM-O", ORACLE])
    shared = cfg.runner().run(stream)
    n_shared = len(graphs)
    monkeypatch.setattr(chunk_cache, "FEATURE_ENTRIES", frozenset())  # nothing shared: a cache of its own
    own = cfg.runner().run(stream)
    assert n_shared == stream.n_chunks(CFG.chunk_size) and len(graphs) - n_shared == 2 * n_shared
    timeless = [c for c in own.records.columns if "seconds" not in c]
    pd.testing.assert_frame_equal(shared.records[timeless], own.records[timeless])
