"""Tests of the ``shift`` drift point: parsing, the frequency-pairing involution, builder and synthetic streams.

A shift swaps the ground-truth label columns (labels paired by frequency: most
frequent with least frequent, ...) from its position on; a second shift swaps
them back. Per-instance cardinality is unchanged, X is untouched, noise comes
after.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ncld_core.stream import ChangePoint
from ncld_core.stream.builder import build_stream
from ncld_core.stream.schedule import (
    KINDS,
    DriftSchedule,
    apply_label_shifts,
    reorder_for_schedule,
    shift_permutation,
)
from ncld_core.stream.synthetic import make_synthetic_stream

Z = 4.0


# --------------------------------------------------------------------------- parsing
class TestParse:
    def test_kinds(self):
        assert set(KINDS) == {"growth", "reduction", "shift"}

    def test_shift_between_growth_and_reduction(self):
        s = DriftSchedule.parse("growth@600, Shift @ 900; reduction@1500")
        assert s.points == (ChangePoint(600, "growth"), ChangePoint(900, "shift"), ChangePoint(1500, "reduction"))
        assert str(s) == "growth@600, shift@900, reduction@1500" and DriftSchedule.parse(str(s)) == s
        assert s.initial_regime == "single"
        assert s.shift_positions == (900,)
        assert s.regime_points == (ChangePoint(600, "growth"), ChangePoint(1500, "reduction"))
        # A shift does not cut a segment nor flip the regime.
        assert s.segments(2000) == [(0, 600, "single"), (600, 1500, "multi"), (1500, 2000, "single")]

    def test_shift_first_does_not_set_the_regime(self):
        s = DriftSchedule.parse("shift@100, reduction@300, shift@400, growth@500")
        assert s.initial_regime == "multi"
        assert s.segments(600) == [(0, 300, "multi"), (300, 500, "single"), (500, 600, "multi")]

    def test_shifts_only(self):
        s = DriftSchedule.parse("shift@1000, shift@2000")
        assert s.kinds == ("shift", "shift") and s.positions == (1000, 2000)
        assert s.regime_points == () and s.initial_regime == "mixed"
        assert s.segments(3000) == [(0, 3000, "mixed")]
        assert not s.is_paper and s.change_points == s.points

    def test_chunks(self):
        assert DriftSchedule.parse("shift@chunk:3, growth@chunk:4", chunk_size=100).positions == (300, 400)
        s = DriftSchedule.from_chunks([(2, "shift"), (5, "reduction"), (6, "shift")], 50)
        assert str(s) == "shift@100, reduction@250, shift@300"
        with pytest.raises(ValueError, match="pass chunk_size"):
            DriftSchedule.parse("shift@chunk:3")
        with pytest.raises(ValueError, match=r"first \(bare chunk indices alternate; give \(chunk, 'shift'\) pairs"):
            DriftSchedule.from_chunks([1, 2], 10, first="shift")

    @pytest.mark.parametrize(
        "text, match",
        [
            ("shift", r"drift point 1 \('shift'\): a shift needs a position .*no paper form"),
            ("growth@5, shift", r"drift point 2 \('shift'\): a shift needs a position"),
            ("shift@0", "must be > 0"),
            ("shift@-4", "must be > 0"),
            ("shift@10, shift@10", "strictly increasing"),
            ("growth@10, shift@5", "strictly increasing: point 2 \\('shift@5'\\) is not after point 1"),
            ("shift@7, growth@7", "strictly increasing"),
            ("growth, shift@10", "only allowed as the single point"),
            ("shifts@10", "cannot parse drift point 1"),
            ("shift@1.5", "cannot parse"),
            (
                "growth@10, shift@20, growth@30",
                r"point 3 \('growth@30'\) is a growth right after a growth \(point 1, 'growth@10'; "
                r"the shifts in between keep the regime\).*already multi-label",
            ),
        ],
    )
    def test_parse_errors(self, text, match):
        with pytest.raises(ValueError, match=match):
            DriftSchedule.parse(text)

    def test_constructor_and_paper_errors(self):
        with pytest.raises(ValueError, match="drift point 1: a shift needs a position"):
            DriftSchedule([(None, "shift")])
        with pytest.raises(ValueError, match="paper schedule: a shift needs a position"):
            DriftSchedule.paper("shift")
        with pytest.raises(ValueError, match="integer instance index"):
            DriftSchedule([(5.0, "shift")])
        with pytest.raises(ValueError, match="'shift@1500' lies beyond the stream of 1200"):
            DriftSchedule.parse("growth@600, shift@1500").validate(1200)

    @settings(max_examples=60, deadline=None)
    @given(
        gaps=st.lists(st.integers(min_value=1, max_value=5000), min_size=1, max_size=8),
        shift_mask=st.lists(st.booleans(), min_size=8, max_size=8),
        first=st.sampled_from(["growth", "reduction"]),
    )
    def test_round_trip_and_regimes_property(self, gaps, shift_mask, first):
        positions = np.cumsum(gaps).tolist()
        kinds, regime_kind = [], first
        for k in range(len(positions)):
            if shift_mask[k]:
                kinds.append("shift")
            else:
                kinds.append(regime_kind)
                regime_kind = "reduction" if regime_kind == "growth" else "growth"
        s = DriftSchedule(list(zip(positions, kinds)))
        assert DriftSchedule.parse(str(s)) == s
        n = positions[-1] + 1
        segs = s.segments(n)
        n_regime = sum(k != "shift" for k in kinds)
        assert len(segs) == n_regime + 1
        assert [a for a, _, _ in segs[1:]] == [p for p, k in zip(positions, kinds) if k != "shift"]
        regimes = [r for _, _, r in segs]
        if n_regime:
            assert regimes[0] == ("single" if first == "growth" else "multi")
            assert all(a != b for a, b in zip(regimes, regimes[1:]))
        else:
            assert regimes == ["mixed"]


# --------------------------------------------------------------------------- the involution
def labels_with_counts(counts, n, seed=0):
    """A (n, q) 0/1 matrix whose column j has exactly counts[j] ones, at random rows."""
    rng = np.random.default_rng(seed)
    Y = np.zeros((n, len(counts)), dtype=np.int8)
    for j, c in enumerate(counts):
        Y[rng.choice(n, size=c, replace=False), j] = 1
    return Y


class TestPermutation:
    def test_pairs_by_frequency(self):
        # counts 3, 25, 40, 10, 17: by frequency 2 > 1 > 4 > 3 > 0, so 2<->0, 1<->3, 4 stays.
        Y = labels_with_counts([3, 25, 40, 10, 17], 60)
        assert shift_permutation(Y).tolist() == [2, 3, 0, 1, 4]
        # Even q: 40 with 3, 25 with 10.
        assert shift_permutation(Y[:, :4]).tolist() == [2, 3, 0, 1]
        # {-1, +1} labels are read as {0, 1}.
        assert shift_permutation(2 * Y.astype(int) - 1).tolist() == [2, 3, 0, 1, 4]
        assert shift_permutation(Y[:, :1]).tolist() == [0]

    @settings(max_examples=80, deadline=None)
    @given(st.integers(1, 12), st.integers(1, 40), st.integers(0, 10_000))
    def test_involution_most_with_least_property(self, q, n, seed):
        Y = (np.random.default_rng(seed).random((n, q)) < 0.3).astype(np.int8)
        perm = shift_permutation(Y)
        assert sorted(perm.tolist()) == list(range(q))
        np.testing.assert_array_equal(perm[perm], np.arange(q))
        # The k-th most frequent label is paired with a label as frequent as the k-th least frequent.
        counts = Y.sum(axis=0)
        desc = np.sort(counts)[::-1]
        by_rank = np.argsort(-counts, kind="stable")
        for k in range(q):
            assert counts[perm[by_rank[k]]] == desc[q - 1 - k]

    def test_apply_toggles_and_keeps_cardinality(self):
        Y = labels_with_counts([3, 25, 40, 10, 17], 60, seed=1)
        perm = shift_permutation(Y)
        cps = (ChangePoint(10, "growth"), ChangePoint(20, "shift"), ChangePoint(35, "reduction"), ChangePoint(45, "shift"))
        out = apply_label_shifts(Y, cps)
        assert out.dtype == Y.dtype and out.shape == Y.shape and out is not Y
        np.testing.assert_array_equal(out.sum(axis=1), Y.sum(axis=1))  # every instance keeps its cardinality
        np.testing.assert_array_equal(out[:20], Y[:20])
        np.testing.assert_array_equal(out[20:45], Y[20:45][:, perm])
        np.testing.assert_array_equal(out[45:], Y[45:])  # the second shift undoes the first
        # Same with the schedule itself and an explicit permutation.
        s = DriftSchedule(cps)
        np.testing.assert_array_equal(apply_label_shifts(Y, s, perm), out)
        # Prevalences after the shift are those of the paired labels.
        full = apply_label_shifts(Y, [ChangePoint(0, "shift")])
        np.testing.assert_array_equal(full.sum(axis=0), Y.sum(axis=0)[perm])
        # No shift: a plain copy; growth / reduction points are ignored.
        np.testing.assert_array_equal(apply_label_shifts(Y, cps[:1]), Y)

    def test_apply_errors(self):
        Y = np.zeros((4, 3), dtype=np.int8)
        cps = [ChangePoint(1, "shift")]
        with pytest.raises(ValueError, match="involution"):
            apply_label_shifts(Y, cps, [1, 2, 0])
        with pytest.raises(ValueError, match=r"permutation of range\(3\)"):
            apply_label_shifts(Y, cps, [0, 1])
        with pytest.raises(ValueError, match=r"permutation of range\(3\)"):
            apply_label_shifts(Y, cps, [0, 0, 1])
        with pytest.raises(ValueError, match="2-D"):
            apply_label_shifts(Y[0], cps)
        with pytest.raises(ValueError, match="position must be an integer >= 0"):
            apply_label_shifts(Y, [(None, "shift")])


# --------------------------------------------------------------------------- reorder_for_schedule
def hand_made_Y():
    """30 single-label-pool rows and 20 multi-label rows (as in test_schedule)."""
    rows = []
    for i in range(50):
        if i % 5 in (1, 3):
            rows.append([1, 1, i % 2, 0])
        elif i % 10 == 0:
            rows.append([0, 0, 0, 0])
        else:
            rows.append([0, 0, 0, 1])
    return np.array(rows, dtype=np.int8)


class TestReorder:
    def test_shifts_only_order_like_no_schedule(self):
        Y = hand_made_Y()
        order, cps = reorder_for_schedule(Y, "shift@10, shift@30", random_state=3)
        np.testing.assert_array_equal(order, np.random.default_rng(3).permutation(50))
        assert cps == (ChangePoint(10, "shift"), ChangePoint(30, "shift"))
        order, _ = reorder_for_schedule(Y, "shift@10", n_instances=20, shuffle=False)
        np.testing.assert_array_equal(order, np.arange(20))
        with pytest.raises(ValueError, match="'shift@20' lies beyond the stream of 20"):
            reorder_for_schedule(Y, "shift@20", n_instances=20)
        with pytest.raises(ValueError, match="'shift@60' lies beyond the stream of 50"):
            reorder_for_schedule(Y, "shift@60")

    def test_shift_does_not_cut_the_pools(self):
        Y = hand_made_Y()
        order, cps = reorder_for_schedule(Y, "growth@10, shift@15, reduction@25", n_instances=40, random_state=0)
        assert [c.kind for c in cps] == ["growth", "shift", "reduction"]
        card = Y[order].sum(axis=1)
        assert np.all(card[:10] <= 1) and np.all(card[10:25] >= 2) and np.all(card[25:] <= 1)
        same, _ = reorder_for_schedule(Y, "growth@10, reduction@25", n_instances=40, random_state=0)
        np.testing.assert_array_equal(order, same)

    def test_open_ended_last_segment_with_a_trailing_shift(self):
        Y = hand_made_Y()
        order, cps = reorder_for_schedule(Y, "growth@10, shift@25", random_state=1)
        assert order.size == 30 and cps[-1] == ChangePoint(25, "shift")  # 10 single + all 20 multi
        assert np.all(Y[order[10:]].sum(axis=1) >= 2)
        with pytest.raises(ValueError, match="needs at least 10 single-label and 31 multi-label instances, but the dataset has 30"):
            reorder_for_schedule(Y, "growth@10, shift@40")


# --------------------------------------------------------------------------- build_stream
COUNTS = [3, 25, 40, 10, 17]
PERM = [2, 3, 0, 1, 4]  # from COUNTS, see TestPermutation.test_pairs_by_frequency


def indexed(n=60, seed=0):
    Y = labels_with_counts(COUNTS, n, seed=seed)
    X = np.column_stack([np.arange(n, dtype=float), np.random.default_rng(seed).standard_normal((n, 2))])
    return X, Y


class TestBuildStream:
    def test_shift_swaps_columns_from_its_position(self):
        X, Y = indexed()
        s = build_stream(X, Y, name="toy", schedule="shift@25", shuffle=False)
        assert s.change_points == (ChangePoint(25, "shift"),)
        assert s.meta["label_shift_permutation"] == PERM and s.meta["schedule"] == "shift@25"
        np.testing.assert_array_equal(s.X, X)  # X untouched, order kept
        np.testing.assert_array_equal(s.Y_true[:25], Y[:25])
        np.testing.assert_array_equal(s.Y_true[25:], Y[25:, PERM])
        np.testing.assert_array_equal(s.Y_true.sum(axis=1), Y.sum(axis=1))
        # Before the shift label 2 is the most frequent; after it, column 2 holds the rarest label.
        np.testing.assert_array_equal(s.Y_true[25:].sum(axis=0), Y[25:].sum(axis=0)[PERM])

    def test_pairing_uses_the_whole_dataset(self):
        # Whole dataset: counts 15, 25, 10 -> 1 <-> 2, 0 stays. Its first 20 rows alone
        # (counts 15, 5, 10) would pair 0 <-> 1 instead.
        Y = np.zeros((40, 3), dtype=np.int8)
        Y[:15, 0] = 1
        Y[:5, 1] = Y[20:, 1] = 1
        Y[10:20, 2] = 1
        X = np.arange(40.0)[:, None]
        s = build_stream(X, Y, name="t", schedule="shift@10", n_instances=20, shuffle=False)
        assert s.meta["label_shift_permutation"] == [0, 2, 1]
        np.testing.assert_array_equal(s.Y_true[10:], Y[10:20][:, [0, 2, 1]])

    def test_shift_only_stream_is_the_plain_stream_with_columns_swapped(self):
        X, Y = indexed(n=200, seed=4)
        plain = build_stream(X, Y, name="plain", random_state=7)
        s = build_stream(X, Y, name="shift", schedule="shift@50, shift@120", random_state=7)
        np.testing.assert_array_equal(s.X, plain.X)  # same random order as without a schedule
        perm = shift_permutation(Y)
        assert s.meta["label_shift_permutation"] == perm.tolist()
        np.testing.assert_array_equal(s.Y_true[:50], plain.Y_true[:50])
        np.testing.assert_array_equal(s.Y_true[50:120], plain.Y_true[50:120][:, perm])
        np.testing.assert_array_equal(s.Y_true[120:], plain.Y_true[120:])  # two shifts restore
        np.testing.assert_array_equal(s.Y_true.sum(axis=1), plain.Y_true.sum(axis=1))
        assert "label_shift_permutation" not in plain.meta

    def test_shift_with_growth_and_reduction(self):
        X, _ = indexed(n=200, seed=2)
        Y = labels_with_counts([30, 90, 140, 60, 100], 200, seed=2)  # enough multi-label rows
        s = build_stream(X, Y, name="mix", schedule="growth@20, shift@30, reduction@40", n_instances=70, random_state=1)
        assert s.change_points == (ChangePoint(20, "growth"), ChangePoint(30, "shift"), ChangePoint(40, "reduction"))
        card = s.Y_true.sum(axis=1)
        assert np.all(card[:20] <= 1) and np.all(card[20:40] >= 2) and np.all(card[40:] <= 1)
        idx = s.X[:, 0].astype(int)
        perm = shift_permutation(Y)  # the whole dataset's frequencies
        np.testing.assert_array_equal(s.Y_true[:30], Y[idx[:30]])
        np.testing.assert_array_equal(s.Y_true[30:], Y[idx[30:]][:, perm])
        # The order is the one of the same schedule without the shift.
        t = build_stream(X, Y, name="mix", schedule="growth@20, reduction@40", n_instances=70, random_state=1)
        np.testing.assert_array_equal(s.X, t.X)

    def test_noise_after_the_shift_stays_with_the_columns(self):
        X, Y = indexed(n=300, seed=3)
        rates = {"rho_pos": [0.0] * 5, "rho_neg": [0.4, 0.0, 0.0, 0.0, 0.0]}
        s = build_stream(X, Y, name="n", schedule="shift@100", flip_rates=rates, random_state=5)
        # Only column 0 is corrupted, before and after the shift.
        np.testing.assert_array_equal(s.Y_noisy[:, 1:], s.Y_true[:, 1:])
        assert np.any(s.Y_noisy[100:, 0] != s.Y_true[100:, 0])
        # The noise is drawn on the shifted truth: same as building from it without a schedule.
        again = build_stream(s.X, s.Y_true, name="n", flip_rates=rates, shuffle=False, random_state=5)
        np.testing.assert_array_equal(again.Y_noisy, s.Y_noisy)

    def test_errors(self):
        X, Y = indexed()
        with pytest.raises(ValueError, match="no paper form"):
            build_stream(X, Y, name="t", schedule="shift")
        with pytest.raises(ValueError, match="'shift@60' lies beyond the stream of 60"):
            build_stream(X, Y, name="t", schedule="shift@60")


# --------------------------------------------------------------------------- make_synthetic_stream
KW = dict(n_features=5, n_labels=6, label_skew=1.5, reference_size=5000)


class TestSynthetic:
    def test_shift_only_is_the_plain_stream_with_columns_swapped(self):
        n = 4000
        plain = make_synthetic_stream(n, random_state=3, **KW)
        s = make_synthetic_stream(n, schedule="shift@1500, shift@3000", random_state=3, **KW)
        perm = shift_permutation(plain.Y_true)
        assert s.change_points == (ChangePoint(1500, "shift"), ChangePoint(3000, "shift"))
        assert s.meta["label_shift_permutation"] == perm.tolist()
        assert s.meta["segments"] == [[0, n, "constant"]] and set(s.meta["offsets"]) == {"constant"}
        np.testing.assert_array_equal(s.X, plain.X)
        for A, B in ((s.Y_true, plain.Y_true), (s.P_true, plain.P_true)):
            np.testing.assert_array_equal(A[:1500], B[:1500])
            np.testing.assert_array_equal(A[1500:3000], B[1500:3000][:, perm])
            np.testing.assert_array_equal(A[3000:], B[3000:])
        np.testing.assert_array_equal(s.Y_true.sum(axis=1), plain.Y_true.sum(axis=1))

    def test_prevalences_change_and_are_swapped(self):
        n, k = 20_000, 10_000
        s = make_synthetic_stream(n, schedule=f"shift@{k}", flip_rates=None, random_state=8, **KW)
        perm = np.array(s.meta["label_shift_permutation"])
        before, after = s.Y_true[:k].mean(axis=0), s.Y_true[k:].mean(axis=0)
        # The most frequent label of the first half becomes (about) as rare as the rarest was.
        top, bottom = before.argmax(), before.argmin()
        assert perm[top] == bottom
        assert after[top] < before[top] - 0.3, (before, after)
        # Each column's prevalence after is the paired label's prevalence before (stationary X).
        sd = np.sqrt(before * (1 - before) / k + after[perm] * (1 - after[perm]) / (n - k))
        assert np.all(np.abs(after - before[perm]) <= Z * sd + 1e-12)
        # The cardinality does not move.
        card = s.Y_true.sum(axis=1)
        se = np.sqrt(card[:k].var() / k + card[k:].var() / (n - k))
        assert abs(card[:k].mean() - card[k:].mean()) <= Z * se
        # P_true follows the labels: per-column means of Y and P agree after the shift.
        P = s.P_true[k:]
        sd = np.sqrt((P * (1 - P)).sum(axis=0)) / (n - k)
        assert np.all(np.abs(s.Y_true[k:].mean(axis=0) - P.mean(axis=0)) <= Z * sd)

    def test_shift_inside_a_regime(self):
        n = 3000
        g = make_synthetic_stream(n, schedule="growth@1000", random_state=2, **KW)
        s = make_synthetic_stream(n, schedule="growth@1000, shift@1800", random_state=2, **KW)
        assert s.meta["segments"] == [[0, 1000, "single"], [1000, n, "multi"]] == g.meta["segments"]
        assert s.meta["offsets"] == g.meta["offsets"]
        perm = shift_permutation(g.Y_true)
        np.testing.assert_array_equal(s.Y_true[:1800], g.Y_true[:1800])
        np.testing.assert_array_equal(s.Y_true[1800:], g.Y_true[1800:][:, perm])
        assert s.change_points == (ChangePoint(1000, "growth"), ChangePoint(1800, "shift"))

    def test_noise_stays_with_the_columns(self):
        rates = {"rho_pos": [0.0] * 6, "rho_neg": [0.0, 0.0, 0.0, 0.0, 0.0, 0.4]}
        s = make_synthetic_stream(2000, schedule="shift@700", flip_rates=rates, random_state=1, **KW)
        np.testing.assert_array_equal(s.Y_noisy[:, :5], s.Y_true[:, :5])
        assert np.any(s.Y_noisy[700:, 5] != s.Y_true[700:, 5])

    def test_shift_only_needs_no_multi_label_regime(self):
        # With 3 labels the default high_cardinality (3) is out of range: only a growth/reduction needs it.
        s = make_synthetic_stream(500, n_labels=3, cardinality=1.2, schedule="shift@200", reference_size=2000)
        assert s.change_points == (ChangePoint(200, "shift"),)
        with pytest.raises(ValueError, match="high_cardinality must be in"):
            make_synthetic_stream(500, n_labels=3, schedule="growth@200, shift@300", reference_size=2000)

    def test_meta_config_reproduces_the_shift_stream(self):
        import json

        a = make_synthetic_stream(1500, schedule="reduction@500, shift@900", random_state=9, **KW)
        b = make_synthetic_stream(**json.loads(json.dumps(a.meta["config"])))
        np.testing.assert_array_equal(a.Y_true, b.Y_true)
        np.testing.assert_array_equal(a.Y_noisy, b.Y_noisy)
        assert a.change_points == b.change_points and a.meta == b.meta

    @pytest.mark.parametrize(
        "schedule, match",
        [
            ("shift", "no paper form"),
            ("shift@600", "schedule: drift point 'shift@600' lies beyond the stream of 500"),
            ("growth@100, shift@200, growth@300", "shifts in between keep the regime"),
        ],
    )
    def test_errors(self, schedule, match):
        with pytest.raises(ValueError, match=match):
            make_synthetic_stream(500, schedule=schedule, reference_size=2000)
