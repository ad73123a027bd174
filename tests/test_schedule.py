"""Tests of ncld_core.stream.schedule (drift schedules, reordering real data) and ncld_core.stream.builder."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from ncld_core.stream import ChangePoint, Stream
from ncld_core.stream.builder import build_stream
from ncld_core.stream.schedule import DriftSchedule, reorder_for_schedule


# --------------------------------------------------------------------------- DriftSchedule
class TestDriftSchedule:
    def test_parse_and_str(self):
        s = DriftSchedule.parse("  Growth@600 ;reduction @ 1500 ")
        assert s.points == (ChangePoint(600, "growth"), ChangePoint(1500, "reduction"))
        assert str(s) == "growth@600, reduction@1500"
        assert DriftSchedule.parse(str(s)) == s
        assert s.initial_regime == "single"
        assert DriftSchedule.parse("reduction@10").initial_regime == "multi"

    @settings(max_examples=60, deadline=None)
    @given(
        gaps=st.lists(st.integers(min_value=1, max_value=10_000), min_size=1, max_size=6),
        first=st.sampled_from(["growth", "reduction"]),
    )
    def test_round_trip_property(self, gaps, first):
        positions = np.cumsum(gaps).tolist()
        s = DriftSchedule.from_chunks(positions, 1, first=first)
        back = DriftSchedule.parse(str(s))
        assert back == s and back.positions == tuple(positions)
        kinds = back.kinds
        assert all(a != b for a, b in zip(kinds, kinds[1:]))

    def test_chunk_positions(self):
        assert DriftSchedule.from_chunks([(3, "growth"), (7, "reduction")], 500).positions == (1500, 3500)
        assert DriftSchedule.from_chunks([2, 5, 9], 100, first="growth").kinds == ("growth", "reduction", "growth")
        s = DriftSchedule.parse("growth@chunk:3, reduction@chunk:4", chunk_size=250)
        assert s.positions == (750, 1000)
        with pytest.raises(ValueError, match="pass chunk_size"):
            DriftSchedule.parse("growth@chunk:3")
        with pytest.raises(ValueError, match="chunk index must be an integer >= 1"):
            DriftSchedule.from_chunks([(0, "growth")], 500)

    def test_alternation_error_says_why(self):
        with pytest.raises(ValueError, match="must alternate.*growth right after a growth.*already multi-label"):
            DriftSchedule.parse("growth@600, growth@900")
        with pytest.raises(ValueError, match="reduction right after a reduction.*already single-label"):
            DriftSchedule([(5, "reduction"), (9, "reduction")])

    @pytest.mark.parametrize(
        "text, match",
        [
            ("growth@600, reduction@600", "strictly increasing"),
            ("reduction@900, growth@600", "strictly increasing"),
            ("growth@0", "must be > 0"),
            ("growth@-3", "must be > 0"),
            ("grow@10", "cannot parse drift point 1"),
            ("growth@10, , reduction@20", "cannot parse drift point 2"),
            ("growth@1.5", "cannot parse"),
            ("", "empty"),
            ("growth, reduction@20", "only allowed as the single point"),
        ],
    )
    def test_parse_errors(self, text, match):
        with pytest.raises(ValueError, match=match):
            DriftSchedule.parse(text)

    def test_constructor_errors(self):
        with pytest.raises(ValueError, match="at least one point"):
            DriftSchedule([])
        with pytest.raises(ValueError, match="kind must be 'growth', 'reduction', 'shift' or 'noise', got 'drift'"):
            DriftSchedule([(5, "drift")])
        with pytest.raises(ValueError, match="integer instance index"):
            DriftSchedule([(5.0, "growth")])

    def test_validate_beyond_stream(self):
        s = DriftSchedule.parse("growth@600, reduction@1500")
        assert s.validate(1501) is s
        with pytest.raises(ValueError, match="'reduction@1500' lies beyond the stream of 1500 instances"):
            s.validate(1500)
        with pytest.raises(ValueError, match="beyond the stream of 400"):
            s.validate(400)

    def test_segments(self):
        s = DriftSchedule.parse("reduction@3, growth@5")
        assert s.segments(8) == [(0, 3, "multi"), (3, 5, "single"), (5, 8, "multi")]

    def test_paper_form(self):
        s = DriftSchedule.paper("growth")
        assert s.is_paper and str(s) == "growth" and DriftSchedule.parse("growth") == s
        with pytest.raises(ValueError, match="no position yet"):
            s.change_points
        assert s.at(10).change_points == (ChangePoint(10, "growth"),)


# --------------------------------------------------------------------------- reorder_for_schedule
def hand_made_Y():
    """30 single-label-pool rows (5 with no label) and 20 multi-label rows, interleaved."""
    rows = []
    for i in range(50):
        if i % 5 in (1, 3):  # 20 multi-label rows, cardinality 2 or 3
            rows.append([1, 1, i % 2, 0])
        elif i % 10 == 0:  # 5 rows with no label: single-label pool
            rows.append([0, 0, 0, 0])
        else:  # 25 rows with exactly one label
            rows.append([0, 0, 0, 1])
    return np.array(rows, dtype=np.int8)


class TestReorder:
    def test_segments_have_right_class_and_no_duplicates(self):
        Y = hand_made_Y()
        order, cps = reorder_for_schedule(Y, "growth@10, reduction@25", n_instances=40, random_state=0)
        assert cps == (ChangePoint(10, "growth"), ChangePoint(25, "reduction"))
        assert order.shape == (40,) and len(set(order.tolist())) == 40
        card = Y[order].sum(axis=1)
        assert np.all(card[:10] <= 1) and np.all(card[10:25] >= 2) and np.all(card[25:] <= 1)

    def test_zero_label_instances_are_in_single_pool(self):
        Y = hand_made_Y()
        order, _ = reorder_for_schedule(Y, DriftSchedule.paper("growth"), random_state=0)
        first = Y[order[:30]].sum(axis=1)
        assert np.sum(first == 0) == 5 and np.all(first <= 1)

    def test_deterministic_and_shuffled(self):
        Y = hand_made_Y()
        a, _ = reorder_for_schedule(Y, "growth@10", n_instances=30, random_state=4)
        b, _ = reorder_for_schedule(Y, "growth@10", n_instances=30, random_state=4)
        c, _ = reorder_for_schedule(Y, "growth@10", n_instances=30, random_state=5)
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, c)
        single = np.flatnonzero(Y.sum(axis=1) <= 1)
        assert not np.array_equal(a[:10], single[:10])  # not the dataset's order

    def test_no_shuffle_keeps_dataset_order_within_pools(self):
        Y = hand_made_Y()
        order, _ = reorder_for_schedule(Y, "reduction@5", n_instances=15, shuffle=False)
        multi = np.flatnonzero(Y.sum(axis=1) >= 2)
        single = np.flatnonzero(Y.sum(axis=1) <= 1)
        np.testing.assert_array_equal(order, np.concatenate([multi[:5], single[:10]]))

    def test_open_ended_last_segment_takes_the_rest_of_its_pool(self):
        Y = hand_made_Y()
        order, cps = reorder_for_schedule(Y, "growth@10, reduction@25", random_state=1)
        # 15 multi-label used in the middle, the last single-label segment gets 30 - 10 = 20.
        assert order.size == 45 and len(set(order.tolist())) == 45
        assert cps[-1].position == 25

    def test_paper_positions(self):
        Y = hand_made_Y()
        order, cps = reorder_for_schedule(Y, DriftSchedule.paper("growth"), random_state=0)
        assert cps == (ChangePoint(30, "growth"),)
        assert sorted(order.tolist()) == list(range(50))  # every instance exactly once
        order, cps = reorder_for_schedule(Y, "reduction", random_state=0)
        assert cps == (ChangePoint(20, "reduction"),)
        card = Y[order].sum(axis=1)
        assert np.all(card[:20] >= 2) and np.all(card[20:] <= 1)

    def test_paper_form_truncated_keeps_proportions(self):
        Y = hand_made_Y()
        order, cps = reorder_for_schedule(Y, "growth", n_instances=25, random_state=0)
        assert cps == (ChangePoint(15, "growth"),)  # 25 * 30 / 50
        card = Y[order].sum(axis=1)
        assert order.size == 25 and np.all(card[:15] <= 1) and np.all(card[15:] >= 2)

    def test_impossible_pool_error_gives_counts(self):
        multi_only = np.ones((8, 3), dtype=np.int8)
        with pytest.raises(ValueError, match="0 single-label .* and 8 multi-label"):
            reorder_for_schedule(multi_only, "growth")
        with pytest.raises(ValueError, match="needs 3 single-label and 5 multi-label.*0 single-label"):
            reorder_for_schedule(multi_only, "growth@3", n_instances=8)
        Y = hand_made_Y()
        with pytest.raises(ValueError, match="needs 35 single-label and 10 multi-label instances, but the dataset has 30 single-label"):
            reorder_for_schedule(Y, "reduction@10", n_instances=45)
        with pytest.raises(ValueError, match="needs at least 31 single-label and 1 multi-label instances, but the dataset has 30"):
            reorder_for_schedule(Y, "growth@31")
        with pytest.raises(ValueError, match="needs at least 11 single-label and 21 multi-label"):
            reorder_for_schedule(Y, "growth@10, reduction@31")

    def test_position_beyond_requested_length(self):
        with pytest.raises(ValueError, match="lies beyond the stream of 20"):
            reorder_for_schedule(hand_made_Y(), "growth@20", n_instances=20)


# --------------------------------------------------------------------------- build_stream
def indexed_dataset(n=60, q=4, seed=0):
    """X whose column 0 is the row index, so rows can be traced after reordering."""
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, q)) < 0.35).astype(np.int8)
    X = np.column_stack([np.arange(n, dtype=float), rng.standard_normal((n, 3))])
    return X, Y


class TestBuildStream:
    def test_sparse_stays_sparse_and_rows_stay_aligned(self):
        X, Y = indexed_dataset()
        Xs = sp.csr_matrix(X)
        s = build_stream(Xs, Y, name="toy", flip_rates="paper", random_state=2)
        assert isinstance(s, Stream) and s.is_sparse and sp.isspmatrix_csr(s.X)
        idx = s.X[:, 0].toarray().ravel().astype(int)
        assert sorted(idx.tolist()) == list(range(60)) and not np.array_equal(idx, np.arange(60))
        np.testing.assert_array_equal(s.Y_true, Y[idx])
        np.testing.assert_array_equal(s.X.toarray(), X[idx])

    def test_truncation_and_no_shuffle(self):
        X, Y = indexed_dataset()
        s = build_stream(X, Y, name="toy", n_instances=25, random_state=0)
        idx = s.X[:, 0].astype(int)
        assert s.n_instances == 25 and len(set(idx.tolist())) == 25
        s = build_stream(X, Y, name="toy", n_instances=25, shuffle=False)
        np.testing.assert_array_equal(s.X, X[:25])
        with pytest.raises(ValueError, match="n_instances=61 exceeds the 60 instances"):
            build_stream(X, Y, name="toy", n_instances=61)

    def test_schedule_gives_change_points(self):
        X, Y = indexed_dataset(n=200)
        s = build_stream(X, Y, name="toy_drift", schedule="growth@20, reduction@40", n_instances=80, random_state=1)
        assert s.change_points == (ChangePoint(20, "growth"), ChangePoint(40, "reduction"))
        card = s.Y_true.sum(axis=1)
        assert np.all(card[:20] <= 1) and np.all(card[20:40] >= 2) and np.all(card[40:] <= 1)
        assert s.meta["schedule"] == "growth@20, reduction@40"
        p = build_stream(X, Y, name="toy_a", schedule=DriftSchedule.paper("growth"))
        n_single = int(np.sum(Y.sum(axis=1) <= 1))
        assert p.change_points == (ChangePoint(n_single, "growth"),) and p.n_instances == 200
        assert build_stream(X, Y, name="toy", schedule="none").change_points == ()
        # the generator reads a schedule the same way (it once refused "none")
        from ncld_core.stream.synthetic import make_synthetic_stream

        assert make_synthetic_stream(200, schedule="none", random_state=0).change_points == ()
        assert make_synthetic_stream(200, schedule=" ", random_state=0).change_points == ()

    def test_noise_is_applied_after_ordering(self):
        X, Y = indexed_dataset(n=300)
        a = build_stream(X, Y, name="a", flip_rates="paper", random_state=5)
        # The same ordered stream, built without reordering: identical rates and flips.
        b = build_stream(a.X, a.Y_true, name="b", flip_rates="paper", shuffle=False, random_state=5)
        np.testing.assert_array_equal(a.rho_pos, b.rho_pos)
        np.testing.assert_array_equal(a.Y_noisy, b.Y_noisy)
        # Noise drawn on the dataset's order and then permuted would differ.
        c = build_stream(X, Y, name="c", flip_rates="paper", shuffle=False, random_state=5)
        idx = a.X[:, 0].astype(int)
        assert not np.array_equal(c.Y_noisy[idx], a.Y_noisy)

    def test_noise_modes(self):
        X, Y = indexed_dataset(n=400, q=3)
        clean = build_stream(X, Y, name="clean")
        np.testing.assert_array_equal(clean.Y_noisy, clean.Y_true)
        assert clean.rho_pos.tolist() == clean.rho_neg.tolist() == [0.0] * 3
        paper = build_stream(X, Y, name="noisy", flip_rates="paper")
        assert np.all((paper.rho_pos >= 0.2) & (paper.rho_pos <= 0.4))
        assert not np.array_equal(paper.Y_noisy, paper.Y_true)
        ranged = build_stream(X, Y, name="noisy", flip_rates=(0.01, 0.02))
        assert np.all((ranged.rho_neg >= 0.01) & (ranged.rho_neg <= 0.02))
        explicit = build_stream(X, Y, name="noisy", flip_rates={"rho_pos": 0.0, "rho_neg": [0.0, 0.0, 0.9]})
        assert explicit.rho_neg.tolist() == [0.0, 0.0, 0.9]
        np.testing.assert_array_equal(explicit.Y_noisy[:, :2], explicit.Y_true[:, :2])

    def test_deterministic_and_label_names(self):
        X, Y = indexed_dataset()
        a = build_stream(X, Y, name="t", flip_rates="paper", random_state=9)
        b = build_stream(X, Y, name="t", flip_rates="paper", random_state=9)
        np.testing.assert_array_equal(a.X, b.X)
        np.testing.assert_array_equal(a.Y_noisy, b.Y_noisy)
        assert a.label_names == ("label_0", "label_1", "label_2", "label_3")
        c = build_stream(X, Y, name="t", label_names=list("abcd"))
        assert c.label_names == ("a", "b", "c", "d")

    def test_errors(self):
        X, Y = indexed_dataset()
        with pytest.raises(ValueError, match="X has 59 instances but Y_true has 60"):
            build_stream(X[:59], Y, name="t")
        with pytest.raises(ValueError, match="label_names has 2 names"):
            build_stream(X, Y, name="t", label_names=["a", "b"])
        with pytest.raises(ValueError, match="name must be a non-empty string"):
            build_stream(X, Y, name="")
        with pytest.raises(ValueError, match="schedule must be"):
            build_stream(X, Y, name="t", schedule=5)


def test_schedule_is_hashable_and_picklable():
    import pickle

    s = DriftSchedule.parse("growth@600, reduction@1500")
    assert pickle.loads(pickle.dumps(s)) == s
    assert len({s, DriftSchedule.parse("growth@600,reduction@1500")}) == 1
    assert repr(s) == "DriftSchedule('growth@600, reduction@1500')"


# ------------------------------------------------------------------ nothing left out silently
def _pools(n_single=30, n_multi=10, q=4, seed=0):
    rng = np.random.default_rng(seed)
    Y = np.zeros((n_single + n_multi, q), dtype=np.int8)
    Y[np.arange(n_single), rng.integers(0, q, n_single)] = 1
    Y[n_single:, :2] = 1
    return rng.normal(size=(len(Y), 3)), Y


def test_schedule_reports_every_instance_it_leaves_out():
    X, Y = _pools()
    # growth@5: 5 single-label instances, then every multi-label one; 25 single-label ones unused.
    s = build_stream(X, Y, name="toy", schedule="growth@5", random_state=0)
    assert s.n_instances == 15 and s.n_left_out == 25
    assert s.meta["left_out"] == {"single-label": 25, "multi-label": 0}
    assert s.coverage_note() == ("uses 15 of the 40 instances of its source: the schedule 'growth@5' "
                                 "leaves out 25 single-label ones")


def test_stream_using_its_whole_source_has_no_note():
    X, Y = _pools()
    s = build_stream(X, Y, name="toy", random_state=0)
    assert s.n_left_out == 0 and s.coverage_note() is None
    cut = build_stream(X, Y, name="toy", n_instances=32, random_state=0)
    assert cut.n_left_out == 8 and sum(cut.meta["left_out"].values()) == 8
    assert cut.coverage_note().startswith("uses 32 of the 40") and "n_instances leaves out" in cut.coverage_note()


def test_run_summary_and_cli_report_left_out_instances(tmp_path, capsys):
    from ncld_core.cli import format_summary
    from ncld_core.config import RunConfig
    from ncld_core.eval.runner import RunResult

    X, Y = _pools()
    s = build_stream(X, Y, name="toy", schedule="growth@5", random_state=0)
    cfg = RunConfig(models=("all-negative",), chunk_size=5)
    result = RunResult(list(cfg.runner().iter_run(s)), s, 5, config=cfg.to_dict())
    assert "note: the stream uses 15 of the 40 instances" in format_summary(result)
    import json
    doc = json.loads(result.summary_json())
    assert doc["n_left_out"] == 25 and "25 single-label" in doc["coverage_note"]


def _alternating(n: int, step: int = 10) -> str:
    return ", ".join(f"{'growth' if i % 2 == 0 else 'reduction'}@{step * (i + 1)}" for i in range(n))


def test_a_schedule_has_at_most_max_points_counted_before_parsing(monkeypatch):
    """Issue 41 item 1: a link's schedule of 5,000 points held the server; the bound is counted on the text
    before any parsing (the module's regular expressions are not used), for text and pairs alike."""
    import ncld_core.stream.schedule as schedule
    from ncld_core.stream.schedule import MAX_SCHEDULE_POINTS

    assert len(DriftSchedule.parse(_alternating(MAX_SCHEDULE_POINTS))) == MAX_SCHEDULE_POINTS
    message = rf"^a drift schedule has at most {MAX_SCHEDULE_POINTS} change points, got 5,000$"
    with pytest.raises(ValueError, match=message):
        DriftSchedule([(10 * (i + 1), "growth" if i % 2 == 0 else "reduction") for i in range(5000)])
    with pytest.raises(ValueError, match=message):
        DriftSchedule.from_chunks(range(1, 5001), 10, first="growth")

    class NoRegex:
        def __getattr__(self, name):
            raise AssertionError(f"re.{name} used before the points were counted")

    monkeypatch.setattr(schedule, "re", NoRegex())
    with pytest.raises(ValueError, match=message):
        DriftSchedule.parse(_alternating(5000))
    with pytest.raises(ValueError, match=rf"got {MAX_SCHEDULE_POINTS + 1}$"):
        DriftSchedule.parse("growth@1;" * MAX_SCHEDULE_POINTS + "x")


def test_the_schedule_bound_is_the_configs_and_the_command_lines(capsys):
    from ncld_core.cli import main
    from ncld_core.config import RunConfig
    from ncld_core.stream.schedule import MAX_SCHEDULE_POINTS

    too_many = _alternating(MAX_SCHEDULE_POINTS + 1)
    assert RunConfig(n_instances=100_000, schedule=too_many).errors()["schedule"] == (
        f"a drift schedule has at most {MAX_SCHEDULE_POINTS} change points, got {MAX_SCHEDULE_POINTS + 1}")
    assert RunConfig(n_instances=100_000, schedule=_alternating(MAX_SCHEDULE_POINTS)).errors() == {}
    assert main(["run", "--schedule", too_many, "--n-instances", "100000", "--quiet"]) == 2
    assert f"error: schedule: a drift schedule has at most {MAX_SCHEDULE_POINTS}" in capsys.readouterr().err
