"""The prequential runner and the paper's protocol end to end."""

from __future__ import annotations

import threading
import time

import numpy as np
import pandas as pd
import pytest

from ncld_core.config import RunConfig
from ncld_core.eval.drift_eval import detection_report
from ncld_core.eval.metrics import evaluate
from ncld_core.eval.references import AllNegative
from ncld_core.eval.runner import PrequentialRunner, RunResult
from ncld_core.stream.synthetic import make_synthetic_stream


class Spy(AllNegative):
    """Records the order of calls, to check test-then-train."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def partial_fit(self, X, Y):
        self.calls.append(("fit", X.shape[0], float(np.asarray(X).sum())))
        return super().partial_fit(X, Y)

    def decision_function(self, X):
        self.calls.append(("score", X.shape[0], float(np.asarray(X).sum())))
        return super().decision_function(X)


def small_stream(n=530, seed=0):
    return make_synthetic_stream(n_instances=n, n_features=5, n_labels=4, cardinality=1.5,
                                 random_state=seed, reference_size=2000)


def test_test_then_train_order_and_identical_chunks():
    stream = small_stream()
    a, b = Spy(), Spy()
    chunks = list(PrequentialRunner({"a": a, "b": b}, chunk_size=100).iter_run(stream))
    assert len(chunks) == 6
    # chunk 0 only learned; every later chunk scored before it is learned
    assert a.calls[0][0] == "fit"
    pairs = a.calls[1:]
    assert [c[0] for c in pairs] == ["score", "fit"] * 5
    for score, fit in zip(pairs[::2], pairs[1::2]):
        assert score[1:] == fit[1:]
    assert a.calls == b.calls  # both models saw the identical chunks
    assert chunks[-1].stop == 530 and chunks[-1].start == 500


def test_metrics_are_against_the_ground_truth_and_cumulative_is_exact():
    stream = small_stream(seed=1)
    result = PrequentialRunner(["ELM-O"], chunk_size=100, model_params={"n_neighbors": 5, "random_state": 0}).run(stream)
    rows = result.records[result.records["model"] == "ELM-O"].set_index("chunk")
    # recompute: a fresh model, same protocol, by hand
    from ncld_core.eval.variants import make_model

    model = make_model("ELM-O", rates=(stream.rho_pos, stream.rho_neg), n_neighbors=5, random_state=0)
    scores, truth, preds = [], [], []
    for i, (s, e) in enumerate(stream.chunk_bounds(100)):
        if i:
            sc = model.ranking_scores(stream.X[s:e])  # what the runner ranks by
            pred = model.predict(stream.X[s:e])  # the model's decision rule, as the runner applies it
            assert rows.loc[i, "micro_f1"] == pytest.approx(evaluate(stream.Y_true[s:e], sc, pred)["micro_f1"])
            scores.append(sc)
            preds.append(pred)
            truth.append(stream.Y_true[s:e])
        model.partial_fit(stream.X[s:e], stream.Y_noisy[s:e])
    whole = evaluate(np.vstack(truth), np.vstack(scores), np.vstack(preds))
    for key, value in whole.items():
        assert rows.loc[5, f"cum_{key}"] == pytest.approx(value, rel=1e-10, abs=1e-12)


def test_stop_event_ends_the_run_and_keeps_finished_chunks():
    stream = small_stream()
    stop = threading.Event()
    seen = []

    def progress(chunk):
        seen.append(chunk.chunk)
        if chunk.chunk == 2:
            stop.set()

    result = PrequentialRunner(["ELM-O"], chunk_size=100, model_params={"n_neighbors": 5}).run(
        stream, progress=progress, stop_event=stop)
    assert seen == [0, 1, 2]
    assert result.records["chunk"].max() == 2


def test_stopped_run_does_not_count_unreached_changes_as_missed():
    # A change in chunk 4, the run stopped after chunk 2: the change is not missed (yet), in the
    # summary (downloads) and in the dashboard's live table alike.
    stream = make_synthetic_stream(n_instances=600, n_features=5, n_labels=4, cardinality=1.5, random_state=0,
                                   reference_size=2000, schedule="growth@450")
    stop = threading.Event()
    runner = PrequentialRunner(["ELM-O"], chunk_size=100, model_params={"n_neighbors": 5})
    result = runner.run(stream, progress=lambda c: c.chunk == 2 and stop.set(), stop_event=stop)
    assert len(result.chunks) == 3
    assert result.summary().loc["ELM-O", "missed"] == 0
    full = runner.run(stream)
    fired = [c.chunk for c in full.chunks if c.diagnostics["ELM-O"].fired]
    assert full.summary().loc["ELM-O", "missed"] == (0 if any(c >= 4 for c in fired) else 1)


def test_short_final_chunk_is_scored_not_learned():
    stream = small_stream(n=505)
    result = PrequentialRunner(["ELM-O"], chunk_size=100, model_params={"n_neighbors": 10}).run(stream)
    last = result.chunks[-1]
    assert last.stop - last.start == 5
    assert "ELM-O" in last.metrics and "ELM-O" not in last.diagnostics


def test_on_scores_sees_each_models_scores_before_it_learns_the_chunk():
    stream = small_stream()
    a, b = Spy(), Spy()
    seen = []

    def hook(name, model, scores, result):
        # the model has scored this chunk and not learned it yet
        assert model.calls[-1] == ("score", result.stop - result.start,
                                   float(np.asarray(stream.X[result.start:result.stop]).sum()))
        seen.append((result.chunk, name, scores.shape))
        time.sleep(0.05)  # not charged to the model

    chunks = list(PrequentialRunner({"a": a, "b": b}, chunk_size=100).iter_run(stream, on_scores=hook))
    assert seen == [(c, m, (c_.stop - c_.start, 4)) for c, c_ in enumerate(chunks) if c > 0 for m in ("a", "b")]
    assert all(s < 0.05 for c in chunks[1:] for s in c.seconds.values())


def test_bad_runner_arguments():
    with pytest.raises(ValueError, match="chunk_size must be an integer >= 2"):
        PrequentialRunner(["ELM-O"], chunk_size=1)
    with pytest.raises(ValueError, match="at least one model"):
        PrequentialRunner([], chunk_size=10)
    with pytest.raises(ValueError, match="unknown model"):
        PrequentialRunner(["ELM-X"], chunk_size=50).run(small_stream())
    with pytest.raises(ValueError, match="n_neighbors \\+ 1"):
        PrequentialRunner(["ELM-O"], chunk_size=8).run(small_stream())


def test_exports_are_complete_and_atomic(tmp_path):
    result = RunConfig(n_instances=600, chunk_size=200, schedule="growth@300").runner().run(
        RunConfig(n_instances=600, chunk_size=200, schedule="growth@300").build_stream())
    result.to_csv(tmp_path / "chunks.csv")
    result.to_json(tmp_path / "summary.json")
    frame = pd.read_csv(tmp_path / "chunks.csv")
    assert set(frame["model"]) == {"ELM-O", "ELM-I", "ELM-II", "all-negative", "noisy-prior"}
    assert len(frame) == 3 * 5
    import json

    doc = json.loads((tmp_path / "summary.json").read_text())
    assert doc["change_points"] == [{"position": 300, "kind": "growth"}]
    assert set(doc["summary"]) == set(frame["model"])
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp files left


def test_detection_report_counts():
    rep = detection_report([1, 4, 9], [4, 8], n_chunks=12)
    assert rep["delays"] == [0, 1] and rep["false_alarms"] == 1 and rep["missed"] == 0
    rep = detection_report([], [4], n_chunks=12)
    assert rep["missed"] == 1 and np.isnan(rep["mean_delay"])


def test_growth_on_synthetic_is_detected_near_the_change():
    cfg = RunConfig(n_instances=4000, chunk_size=250, schedule="growth@2000", models=["ELM-I"])
    result = cfg.runner().run(cfg.build_stream())
    summary = result.summary()
    assert summary.loc["ELM-I", "detected"] == 1
    assert summary.loc["ELM-I", "mean_delay"] <= 1
    est = result.records[result.records["model"] == "ELM-I"]
    # the unbiased estimate follows the true cardinality across the change
    before = est[est["chunk"] < 8]
    after = est[est["chunk"] > 8]
    assert after["diag_lcard_hat"].mean() - before["diag_lcard_hat"].mean() > 1.0
    # ... and much more closely than the observed (noisy) cardinality does
    estimate_error = abs(after["diag_lcard_hat"].mean() - after["true_cardinality"].mean())
    observed_error = abs(after["observed_cardinality"].mean() - after["true_cardinality"].mean())
    assert estimate_error < 0.5 * observed_error


# ------------------------------------------------------------------ real datasets
def _paper_run(dataset, models, seed=0, chunk_size=500, schedule=""):
    cfg = RunConfig(dataset=dataset, chunk_size=chunk_size, noise="range", rho_low=0.2, rho_high=0.4,
                    models=models, schedule=schedule, shuffle_seed=seed, seed=seed)
    stream = cfg.build_stream()
    return stream, cfg.runner().run(stream)


@pytest.mark.datasets
@pytest.mark.parametrize("dataset", ["enron", "medical"])
def test_elm_ncld_beats_plain_online_elm(data_dir, dataset):
    """Issue 3: ELM-NCLD's micro-F1 and AP beat plain online ELM (beta=1, gamma=0), 3 seeds."""
    chunk = 500 if dataset == "enron" else 250
    wins = []
    for seed in range(3):
        _, result = _paper_run(dataset, ["ELM-O", "ELM (plain)"], seed=seed, chunk_size=chunk)
        s = result.summary()
        wins.append((s.loc["ELM-O", "micro_f1"] - s.loc["ELM (plain)", "micro_f1"],
                     s.loc["ELM-O", "average_precision"] - s.loc["ELM (plain)", "average_precision"]))
    wins = np.array(wins)
    assert (wins > 0).all(), wins


@pytest.mark.datasets
def test_growth_on_arts_and_reduction_on_rcv1_run_end_to_end(data_dir):
    for dataset, kind in [("arts", "growth"), ("rcv1subset5", "reduction")]:
        stream, result = _paper_run(dataset, ["ELM-O", "ELM-I", "ELM-II"], schedule=kind)
        assert len(stream.change_points) == 1
        cp = stream.change_points[0]
        assert cp.kind == kind
        card = stream.Y_true.sum(axis=1)
        before, after = card[:cp.position], card[cp.position:]
        if kind == "growth":
            assert before.max() <= 1 and after.min() >= 2
        else:
            assert before.min() >= 2 and after.max() <= 1
        assert result.change_points == [(cp.position, kind)]
        assert result.records["chunk"].max() == (stream.n_instances - 1) // 500
        assert np.isfinite(result.summary().loc["ELM-II", "micro_f1"])


def test_a_stopped_runs_exports_say_where_it_stopped():
    import json as _json

    from ncld_core.stream.synthetic import make_synthetic_stream

    stream = make_synthetic_stream(1000, n_features=4, n_labels=3, random_state=0)
    runner = PrequentialRunner(["ELM-O"], 200, model_params={"n_neighbors": 5})
    chunks = [c for _, c in zip(range(3), runner.iter_run(stream))]
    stopped = RunResult(chunks, stream, 200)
    assert stopped.status == "stopped at chunk 3 of 5" and not stopped.complete
    assert stopped.records_csv().startswith("# stopped at chunk 3 of 5\n")
    doc = _json.loads(stopped.summary_json())
    assert doc["status"] == "stopped at chunk 3 of 5" and doc["n_chunks"] == 5
    done = runner.run(stream)
    assert done.status == "complete (5 chunks)" and not done.records_csv().startswith("#")


def test_chunk_records_are_typed_and_carry_the_history_row():
    import dataclasses

    from ncld_core.config import RunConfig
    from ncld_core.model.record import HISTORY_COLUMNS, ModelChunkRecord, MonitorResult

    names = [f.name for f in dataclasses.fields(ModelChunkRecord)]
    assert names == [*HISTORY_COLUMNS, "prevalence_hat", "rho_pos_est", "rho_neg_est", "rho_pos_low", "rho_pos_high",
                     "rho_neg_low", "rho_neg_high", "monitors"]
    cfg = RunConfig(n_instances=600, chunk_size=150, models=["ELM-O"], monitors=["welch", "paper"])
    runner = cfg.runner()
    result = runner.run(cfg.build_stream())
    model = runner.state_.models["ELM-O"]
    last = result.chunks[-1].diagnostics["ELM-O"]
    assert isinstance(last, ModelChunkRecord) and last == model.last_record_
    assert list(last.monitors) == ["welch", "paper"] and all(isinstance(m, MonitorResult) for m in last.monitors.values())
    assert last.acting == MonitorResult(last.statistic, last.threshold, last.fired)
    assert last.detector == cfg.detector and isinstance(last.fired, bool) and last.chunk == 3
    assert len(last.prevalence_hat) == 10 and last.rho_pos_est is None and not last.estimates_rates
    assert model.history_.iloc[-1].to_dict() == pytest.approx(last.row())  # history_ stays the DataFrame of rows
    assert list(model.history_.columns) == [*HISTORY_COLUMNS, "welch_statistic", "welch_threshold", "welch_fired",
                                            "paper_statistic", "paper_threshold", "paper_fired"]
    assert {"diag_lcard_hat", "diag_welch_fired", "diag_action"} <= set(result.records.columns)
    with pytest.raises(dataclasses.FrozenInstanceError):
        last.fired = True
    assert "all-negative" not in result.chunks[-1].diagnostics  # references record nothing
