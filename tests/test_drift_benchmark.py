"""benchmarks/drift.py under the noise families (issue 25, item 6): the cells, the oracle, the scores, the report."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from ncld_core.model.detector import DETECTORS
from ncld_core.stream.noise_families import NOISE_FAMILIES

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _drift():
    spec = importlib.util.spec_from_file_location("benchmarks.drift", BENCHMARKS / "drift.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_family_cell_runs_the_detectors_without_the_model_and_ELMNCLD_estimating_beside(data_dir):
    drift = _drift()
    cell = drift.stream_cell(("emotions", "stationary", 0, 50, "missing"))  # 593 instances: 11 chunks of 50
    assert cell["family"] == "missing" and cell["n_chunks"] == 11 == len(cell["rows"])
    assert set(cell["fired"]) == set(DETECTORS) - {"paper"}  # the paper's test needs the model's P_D
    assert set(cell["fired_estimating"]) == set(DETECTORS)  # rates estimated: every detector, acting or monitor
    assert set(cell["seconds_detectors"]) == set(cell["fired"]) and cell["seconds_model"] == 0
    assert all("est_hat" in r for r in cell["rows"]) and cell["changes"] == [] == cell["oracle"]


def test_the_oracle_sees_a_cardinality_jump_of_two_at_once_and_the_shift_of_the_generator(data_dir):
    drift = _drift()
    for kind in ("regimes 1<->3", "shift"):
        cell = drift.stream_cell(("synthetic", kind, 0, 250, "paper", False))
        assert cell["changes"] and len(cell["oracle"]) == len(cell["changes"])
        assert all(d == 0 for d in cell["oracle"]), (kind, cell["oracle"])


def _cell(family, kind, fired, changes=(), oracle=(), n_chunks=20, estimating=None):
    rows = [{"chunk": i, "true": 2.0, "observed": 2.5, "lcard_hat": 2.0, "lcard_se": 0.1, "lcard_low": 1.8,
             "lcard_high": 2.2, "lcard_paper": np.nan, "est_hat": 1.9, "est_low": 1.0, "est_high": 2.1}
            for i in range(n_chunks)]
    return {"source": "synthetic", "kind": kind, "seed": 0, "chunk": 100, "family": family, "n_chunks": n_chunks,
            "changes": list(changes), "oracle": list(oracle), "fired": fired,
            "fired_estimating": estimating or {}, "rows": rows, "seconds_model": 0.0, "seconds_moment": 0.01,
            "seconds_detectors": {name: 0.001 for name in fired}}


def test_score_counts_changes_found_within_the_oracle_delay_plus_one():
    drift = _drift()
    # changes at 4, 8, 12; oracle delays 0, 1, None (beyond its segment); firings at 5 (delay 1: within 0 + 1),
    # 11 (delay 3: not within 1 + 1) and 17 (the change at 12 is left out: the oracle cannot find it either)
    cell = _cell("paper", "shift", {"labels": [5, 11, 17]}, changes=[4, 8, 12], oracle=[0, 1, None])
    row = drift.score([cell]).iloc[0]
    assert (row["reachable"], row["within_oracle"], row["oracle_sum"]) == (2, 1, 1.0)
    assert (row["within_one"], row["false_alarms"]) == (1, 0)  # 17 detects the change at 12, late
    rates = drift._rates(drift.score([cell]))
    assert rates["within oracle + 1"] == 0.5 and rates["reachable"] == pytest.approx(2 / 3)
    assert np.isnan(rates["within change-point oracle + 1"])  # a cell saved before that oracle: not counted
    # the oracle told only the change point: delays 2, 3, None; 5 (delay 1) and 11 (delay 3) are within them + 1
    cell["oracle_unknown"] = [2, 3, None]
    rates = drift._rates(drift.score([cell]))
    assert rates["within change-point oracle + 1"] == 1.0 and rates["mean change-point oracle delay"] == 2.5
    assert rates["reachable, change point told"] == pytest.approx(2 / 3)


def test_the_report_states_the_targets_per_family_and_names_the_best_measuring_detector():
    drift = _drift()
    names = [n for n in DETECTORS if n != "paper"]
    cells = []
    for family in NOISE_FAMILIES:
        quiet = {n: ([3, 9] if n == "welch" else []) for n in names}
        estimating = {n: ([2, 5, 7] if n == "welch" else [6]) for n in DETECTORS}
        cells.append(_cell(family, "stationary", quiet, estimating=estimating))
        found = {n: ([4, 9, 12] if n.startswith("adaptive") else [4]) for n in names}
        cells.append(_cell(family, "shift", found, changes=[4, 8, 12], oracle=[0, 0, 1]))
    card = [{"source": "synthetic", "family": f, "chunk": 500, "true": 2.0, "draw_means": [0.01, -0.01, 0.0],
             "covered": [True] * 19 + [False], "width": 0.7, "chunks": 20} for f in NOISE_FAMILIES]
    text = drift.report(cells, card, drift.score(cells), drift.score_estimating(cells), seeds=[0], card_draws=3,
                        wall=1.0, command="python -m benchmarks.drift (test)", workers=1)
    assert "## Targets (issue 25)" in text and "oracle delay" in text
    for family in NOISE_FAMILIES:
        assert f"### Noise `{family}`" in text and f"### Rates told, noise `{family}`" in text
    # welch fires 3 times in 19 stationary chunks with the rates estimated (0.16): over the target
    assert "`welch` (over the false-alarm target" in text
    # the adaptive combinations find all three changes in time, the others one: the best is one of them
    best = text.split("Which detector measures best")[1].split("`")[1]
    assert best.startswith("adaptive+"), best
    assert "always held the truth" not in text
