"""ncld_core.eval.compare: coinciding curves within a tolerance, settings that differ, final scores."""

from __future__ import annotations

import doctest
import math

import pytest

from ncld_core.config import RunConfig
from ncld_core.eval import compare
from ncld_core.eval.compare import coincide, coinciding_groups, differing_settings, rescale_chunks, run_scores


def test_doctests():
    assert doctest.testmod(compare).failed == 0


def test_coincide_within_tolerance_only():
    a = [0.5, 0.25, None]
    assert coincide(a, [0.5 + 1e-12, 0.25 - 1e-12, float("nan")])
    assert not coincide(a, [0.5 + 1e-4, 0.25, None])  # visible on a plot: not the same curve
    assert not coincide(a, [0.5, 0.25, 0.1])  # a value against a gap
    assert not coincide(a, a[:2])  # lengths differ
    assert coincide([0.0], [5e-10]) and not coincide([0.0], [1e-6])  # absolute tolerance near 0
    assert coincide([1e6], [1e6 + 0.05]) and not coincide([1e6], [1e6 + 1.0])  # relative tolerance
    assert not coincide([True, 1.0], [False, 1.0])  # flags must be equal, not "close"
    assert coincide([1.0], [1.1], rtol=0.2)


def test_groups_keep_order_and_reference_the_first_member():
    groups = coinciding_groups({"a": [1.0, 2.0], "b": [3.0, 4.0], "c": [1.0, 2.0 + 1e-12], "d": [3.0, 4.0]})
    assert groups == [["a", "c"], ["b", "d"]]
    # a chain of near-equal series is not merged through its middle member
    chain = coinciding_groups({"x": [0.0], "y": [0.6], "z": [1.2]}, atol=0.7, rtol=0)
    assert chain == [["x", "y"], ["z"]]
    assert coinciding_groups({}) == []


def test_differing_settings():
    a = RunConfig().to_dict()
    b = RunConfig(beta=0.3, models=["ELM-O"]).to_dict()
    c = RunConfig(beta=0.3).to_dict()
    assert sorted(differing_settings([a, b, c])) == ["beta", "models"]
    assert differing_settings([a, a]) == []
    assert differing_settings([{"x": 1}, {"x": 1, "y": 2}]) == ["y"]


def test_rescale_chunks_places_each_chunk_at_its_middle():
    assert rescale_chunks([0, 3], from_size=250, to_size=250) == [0, 3]
    # chunk 1 of size 500 holds instances 500..999, the middle of chunks 2 and 3 of size 250
    assert rescale_chunks([1], from_size=500, to_size=250) == [2.5]
    assert rescale_chunks([2, 3], from_size=250, to_size=500) == [0.75, 1.25]


@pytest.fixture(scope="module")
def run():
    cfg = RunConfig(n_instances=800, chunk_size=200, n_features=5, n_labels=4, n_neighbors=5,
                    schedule="growth@400", delta=0.5, models=["ELM-O", "ELM-I", "OSML-ELM"])
    stream = cfg.build_stream()
    return cfg, stream, list(cfg.runner().iter_run(stream))


def test_run_scores_are_the_last_cumulative_metrics_and_the_detection_report(run):
    cfg, stream, chunks = run
    cps = [(c.position, c.kind) for c in stream.change_points]
    rows = {r["model"]: r for r in run_scores(chunks, list(chunks[0].seconds), cps, cfg.chunk_size)}
    assert list(rows) == ["ELM-O", "ELM-I", "OSML-ELM", "all-negative", "noisy-prior"]
    last = chunks[-1].cumulative
    for name, row in rows.items():
        assert row["micro-F1"] == pytest.approx(last[name]["micro_f1"])
        assert row["Hamming loss"] == pytest.approx(last[name]["hamming_loss"])
    fired = [c.chunk for c in chunks if c.diagnostics["ELM-O"].fired]
    assert rows["ELM-O"]["firings"] == len(fired)
    assert rows["ELM-O"]["detected"] + rows["ELM-O"]["missed"] == 1  # one change (chunk 2) reached
    assert math.isnan(rows["OSML-ELM"]["detected"]) and math.isnan(rows["all-negative"]["firings"])


def test_a_seeded_run_is_reproduced_and_its_copies_coincide(run):
    cfg, _, chunks = run
    again = list(cfg.runner().iter_run(cfg.build_stream()))

    def curves(cs, name):
        return [c.cumulative.get(name, {}).get("average_precision") for c in cs]

    for name in ("ELM-O", "ELM-I", "OSML-ELM"):
        assert coincide(curves(chunks, name), curves(again, name)), name
    other = list(RunConfig(**{**cfg.to_dict(), "seed": 1}).runner().iter_run(cfg.build_stream()))
    assert not coincide(curves(chunks, "ELM-O"), curves(other, "ELM-O"))  # another model seed: another curve
