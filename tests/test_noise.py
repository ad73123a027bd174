"""Tests of ncld_core.stream.noise: Eq. (NR) flip noise, drawing and parsing flip rates.

Statistical checks use fixed seeds and a binomial tolerance of 4 standard
deviations (a correct implementation fails such a check with probability
about 6e-5 per comparison, and the seeds are fixed, so the tests are stable).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ncld_core.stream.noise import (
    PAPER_FLIP_RANGE,
    apply_label_noise,
    draw_flip_rates,
    parse_flip_rates,
    resolve_flip_rates,
)

Z = 4.0  # tolerance in binomial standard deviations


def _binomial_ok(successes, trials, p):
    """|observed frequency - p| within Z binomial standard deviations."""
    freq = successes / trials
    sd = np.sqrt(p * (1 - p) / trials)
    return abs(freq - p) <= Z * sd + 1e-12, freq, sd


# --------------------------------------------------------------------------- apply_label_noise
# Distinct rho_pos / rho_neg per label, so swapping them or mixing labels is caught.
RHO_POS = np.array([0.05, 0.20, 0.35, 0.10])
RHO_NEG = np.array([0.30, 0.10, 0.02, 0.45])


@pytest.fixture(scope="module")
def noisy_data():
    rng = np.random.default_rng(12345)
    Y = (rng.random((200_000, 4)) < [0.3, 0.5, 0.1, 0.7]).astype(np.int8)
    return Y, apply_label_noise(Y, RHO_POS, RHO_NEG, random_state=7)


class TestApplyLabelNoise:
    rho_pos = RHO_POS
    rho_neg = RHO_NEG

    def test_flip_frequencies_match_rates_per_label(self, noisy_data):
        Y, Yn = noisy_data
        for j in range(Y.shape[1]):
            pos = Y[:, j] == 1
            neg = ~pos
            ok, freq, sd = _binomial_ok(np.sum(Yn[pos, j] == 0), pos.sum(), self.rho_pos[j])
            assert ok, f"label {j}: P(y=0|g=1) = {freq:.4f}, expected {self.rho_pos[j]} +- {Z * sd:.4f}"
            ok, freq, sd = _binomial_ok(np.sum(Yn[neg, j] == 1), neg.sum(), self.rho_neg[j])
            assert ok, f"label {j}: P(y=1|g=0) = {freq:.4f}, expected {self.rho_neg[j]} +- {Z * sd:.4f}"

    def test_flips_are_independent_across_labels(self, noisy_data):
        # Eq. (NR) flips each entry independently: the joint flip frequency of two
        # labels among entries where both are negative is the product of the rates.
        Y, Yn = noisy_data
        both_neg = (Y[:, 0] == 0) & (Y[:, 3] == 0)
        flips = Yn[both_neg][:, [0, 3]] == 1
        p = self.rho_neg[0] * self.rho_neg[3]
        ok, freq, sd = _binomial_ok(np.sum(flips[:, 0] & flips[:, 1]), both_neg.sum(), p)
        assert ok, f"joint flip frequency {freq:.4f}, expected {p:.4f} +- {Z * sd:.4f}"

    def test_output_is_int8_binary_and_same_shape(self, noisy_data):
        Y, Yn = noisy_data
        assert Yn.dtype == np.int8 and Yn.shape == Y.shape
        assert set(np.unique(Yn).tolist()) <= {0, 1}

    def test_deterministic_per_seed(self):
        Y = (np.random.default_rng(0).random((500, 6)) < 0.3).astype(np.int8)
        a = apply_label_noise(Y, 0.3, 0.2, random_state=11)
        b = apply_label_noise(Y, 0.3, 0.2, random_state=11)
        c = apply_label_noise(Y, 0.3, 0.2, random_state=12)
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, c)
        d = apply_label_noise(Y, 0.3, 0.2, random_state=np.random.default_rng(11))
        np.testing.assert_array_equal(a, d)

    def test_blocking_does_not_change_result(self, monkeypatch):
        # Memory blocking must give exactly the numbers of a single draw.
        import ncld_core.stream.noise as noise

        Y = (np.random.default_rng(1).random((1000, 7)) < 0.4).astype(np.int8)
        ref = apply_label_noise(Y, 0.25, 0.3, random_state=3)
        monkeypatch.setattr(noise, "_NOISE_BLOCK_ENTRIES", 50)
        np.testing.assert_array_equal(apply_label_noise(Y, 0.25, 0.3, random_state=3), ref)

    def test_zero_rates_leave_labels_unchanged_and_accepts_pm1(self):
        Y = np.array([[1, -1], [-1, 1]])
        out = apply_label_noise(Y, 0.0, 0.0, random_state=0)
        assert out.tolist() == [[1, 0], [0, 1]]

    def test_invalid_rates_rejected(self):
        Y = np.zeros((3, 2), dtype=np.int8)
        with pytest.raises(ValueError, match="rho_pos \\+ rho_neg must be < 1"):
            apply_label_noise(Y, [0.5, 0.1], [0.5, 0.1])
        with pytest.raises(ValueError, match="3 rates but there are 2 labels"):
            apply_label_noise(Y, [0.1, 0.1, 0.1], 0.1)


# --------------------------------------------------------------------------- draw_flip_rates
class TestDrawFlipRates:
    def test_range_shape_and_determinism(self):
        p, n = draw_flip_rates(50, random_state=3)
        assert p.shape == n.shape == (50,)
        lo, hi = PAPER_FLIP_RANGE
        assert np.all((p >= lo) & (p <= hi)) and np.all((n >= lo) & (n <= hi))
        p2, n2 = draw_flip_rates(50, random_state=3)
        np.testing.assert_array_equal(p, p2)
        np.testing.assert_array_equal(n, n2)
        assert not np.array_equal(p, n)  # the two rates are drawn independently

    def test_uniform_mean(self):
        # Mean of U[0.2, 0.4] is 0.3, sd 0.2/sqrt(12); 20000 draws -> SE 4.1e-4.
        p, n = draw_flip_rates(20_000, random_state=0)
        se = 0.2 / np.sqrt(12) / np.sqrt(p.size)
        assert abs(p.mean() - 0.3) < Z * se
        assert abs(n.mean() - 0.3) < Z * se
        # Not degenerate: spread of a uniform, not a constant.
        assert abs(p.std() - 0.2 / np.sqrt(12)) < 0.002

    @pytest.mark.parametrize(
        "kwargs, match",
        [
            (dict(n_labels=0), "n_labels"),
            (dict(n_labels=3, low=0.4, high=0.2), "low must be <= high"),
            (dict(n_labels=3, low=-0.1), "low must be in"),
            (dict(n_labels=3, low=0.1, high=1.0), "high must be in"),
            (dict(n_labels=3, low=0.5, high=0.6), "use low < 0.5"),
        ],
    )
    def test_parameter_errors(self, kwargs, match):
        with pytest.raises(ValueError, match=match):
            draw_flip_rates(**kwargs)

    def test_drawn_pair_violating_nr_names_the_label(self):
        with pytest.raises(ValueError, match=r"rho_pos \+ rho_neg must be < 1.*label \d+"):
            draw_flip_rates(200, 0.3, 0.9, random_state=0)

    def test_high_above_half_allowed_when_pairs_are_fine(self):
        p, n = draw_flip_rates(1, 0.1, 0.6, random_state=0)
        assert p[0] + n[0] < 1


# --------------------------------------------------------------------------- parse_flip_rates
class TestParseFlipRates:
    def test_scalar_and_pair(self):
        p, n = parse_flip_rates(0.25, 3)
        assert p.tolist() == n.tolist() == [0.25] * 3
        p, n = parse_flip_rates((0.1, 0.3), 3)
        assert p.tolist() == [0.1] * 3 and n.tolist() == [0.3] * 3

    def test_q_by_2_array(self):
        p, n = parse_flip_rates(np.array([[0.1, 0.2], [0.3, 0.4], [0.0, 0.5]]), 3)
        assert p.tolist() == [0.1, 0.3, 0.0] and n.tolist() == [0.2, 0.4, 0.5]

    def test_two_by_two_is_per_label_not_pair(self):
        p, n = parse_flip_rates([[0.1, 0.2], [0.3, 0.4]], 2)
        assert p.tolist() == [0.1, 0.3] and n.tolist() == [0.2, 0.4]

    def test_dict(self):
        p, n = parse_flip_rates({"rho_pos": [0.1, 0.2], "rho_neg": 0.3}, 2)
        assert p.tolist() == [0.1, 0.2] and n.tolist() == [0.3, 0.3]

    def test_dict_with_labels_reorders(self):
        spec = {"label": ["b", "a"], "rho_pos": [0.1, 0.2], "rho_neg": [0.3, 0.4]}
        p, n = parse_flip_rates(spec, 2, label_names=["a", "b"])
        assert p.tolist() == [0.2, 0.1] and n.tolist() == [0.4, 0.3]

    def test_dataframe_in_order_and_by_label(self):
        df = pd.DataFrame({"label": ["x", "y", "z"], "rho_pos": [0.1, 0.2, 0.3], "rho_neg": [0.05, 0.15, 0.25]})
        p, n = parse_flip_rates(df, 3)
        assert p.tolist() == [0.1, 0.2, 0.3]
        p, n = parse_flip_rates(df, 3, label_names=["z", "x", "y"])
        assert p.tolist() == [0.3, 0.1, 0.2] and n.tolist() == [0.25, 0.05, 0.15]
        p, n = parse_flip_rates(df[["rho_pos", "rho_neg"]], 3, label_names=["z", "x", "y"])
        assert p.tolist() == [0.1, 0.2, 0.3]  # no label column: table order

    def test_csv_file(self, tmp_path):
        path = tmp_path / "rates.csv"
        path.write_text("label, rho_pos, rho_neg\nsports,0.2,0.3\nmusic,0.25,0.35\n")
        p, n = parse_flip_rates(path, 2, label_names=["music", "sports"])
        assert p.tolist() == [0.25, 0.2] and n.tolist() == [0.35, 0.3]
        p, n = parse_flip_rates(str(path), 2)
        assert p.tolist() == [0.2, 0.25]

    def test_csv_without_label_column(self, tmp_path):
        path = tmp_path / "rates.csv"
        pd.DataFrame({"rho_pos": [0.1, 0.2], "rho_neg": [0.2, 0.1]}).to_csv(path, index=False)
        p, n = parse_flip_rates(path, 2)
        assert p.tolist() == [0.1, 0.2] and n.tolist() == [0.2, 0.1]

    @pytest.mark.parametrize(
        "spec, match",
        [
            ([[0.1, 0.2]] * 3, "3 rows of \\(rho_pos, rho_neg\\) but there are 2 labels"),
            ({"rho_pos": [0.1, 0.2, 0.3], "rho_neg": 0.1}, "rho_pos has 3 rates but there are 2 labels"),
            ({"rho_pos": 0.1}, "missing key 'rho_neg'"),
            ({"rho_pos": 0.1, "rho_neq": 0.1}, "unknown key 'rho_neq'"),
            (pd.DataFrame({"rho_pos": [0.1, 0.1]}), "missing column\\(s\\) rho_neg"),
            (pd.DataFrame({"rho_pos": [0.1], "rho_neg": [0.1]}), "1 rows of rates but there are 2 labels"),
            ((0.1, 0.2, 0.3), "got shape \\(3,\\)"),
            ((0.1, float("nan")), "rho_neg of label 0 .*must be in \\[0, 1\\)"),
            ((-0.1, 0.2), "rho_pos of label 0 .*must be in \\[0, 1\\)"),
            ({"rho_pos": [0.1, 0.7], "rho_neg": [0.1, 0.3]}, "label 1 \\('b'\\) has 0.7 \\+ 0.3"),
            (object(), "flip rates must be"),
        ],
    )
    def test_errors(self, spec, match):
        with pytest.raises(ValueError, match=match):
            parse_flip_rates(spec, 2, label_names=["a", "b"])

    def test_csv_errors_name_label_and_file(self, tmp_path):
        bad = tmp_path / "bad.csv"
        bad.write_text("label,rho_pos,rho_neg\nsports,0.6,0.5\nmusic,0.1,0.1\n")
        with pytest.raises(ValueError, match="bad.csv.*'sports'.*0.6 \\+ 0.5"):
            parse_flip_rates(bad, 2, label_names=["sports", "music"])
        text = tmp_path / "text.csv"
        text.write_text("label,rho_pos,rho_neg\nsports,0.1,high\nmusic,0.1,0.1\n")
        with pytest.raises(ValueError, match="rho_neg of label 0 \\('sports'\\) is not a number"):
            parse_flip_rates(text, 2)
        with pytest.raises(ValueError, match="no rates for label 'news'"):
            parse_flip_rates(text, 2, label_names=["sports", "news"])
        with pytest.raises(ValueError, match="^flip rates file: no such file: .*missing.csv$"):
            parse_flip_rates(tmp_path / "missing.csv", 2)
        # a folder "did not exist" (issue 41 item 11): it is named for what it is, and never read
        with pytest.raises(ValueError, match=f"^flip rates file: not a regular file: {tmp_path}$"):
            parse_flip_rates(tmp_path, 2)
        latin = tmp_path / "latin.csv"
        latin.write_bytes(b"label,rho_pos,rho_neg\ncaf\xe9,0.1,0.1\n")
        with pytest.raises(ValueError, match=r"latin.csv'?: not UTF-8 text: byte 0xe9 at line 2, column 4"):
            parse_flip_rates(latin, 1)

    def test_label_names_count_checked(self):
        with pytest.raises(ValueError, match="label_names has 1 names"):
            parse_flip_rates(0.1, 2, label_names=["a"])


# --------------------------------------------------------------------------- resolve_flip_rates
def test_resolve_flip_rates_modes():
    p, n, mode = resolve_flip_rates(None, 3)
    assert mode == "none" and p.tolist() == n.tolist() == [0.0] * 3
    p, n, mode = resolve_flip_rates("paper", 3, random_state=0)
    assert mode == "drawn" and np.all((p >= 0.2) & (p <= 0.4))
    p, n, mode = resolve_flip_rates((0.05, 0.1), 3, random_state=0)
    assert mode == "drawn" and np.all((p >= 0.05) & (p <= 0.1) & (n >= 0.05) & (n <= 0.1))
    # A list read back from JSON means the same range as the tuple.
    q, m, _ = resolve_flip_rates([0.05, 0.1], 3, random_state=0)
    assert q.tolist() == p.tolist() and m.tolist() == n.tolist()
    p, n, mode = resolve_flip_rates({"rho_pos": 0.05, "rho_neg": 0.1}, 3)
    assert mode == "explicit" and p.tolist() == [0.05] * 3 and n.tolist() == [0.1] * 3
    p, n, mode = resolve_flip_rates([[0.1, 0.2]] * 3, 3)
    assert mode == "explicit" and n.tolist() == [0.2] * 3


# --- noise families ---------------------------------------------------------------------------------

from ncld_core.stream.noise_families import NOISE_FAMILIES, draw_family_rates  # noqa: E402


@pytest.mark.parametrize("family", sorted(NOISE_FAMILIES))
def test_every_family_draws_valid_rates_reproducibly(family):
    p1, n1 = draw_family_rates(family, 200, random_state=3)
    p2, n2 = draw_family_rates(family, 200, random_state=3)
    np.testing.assert_array_equal(p1, p2)
    np.testing.assert_array_equal(n1, n2)
    assert p1.shape == n1.shape == (200,)
    assert np.all(p1 + n1 < 1) and np.all(p1 >= 0) and np.all(n1 >= 0)


def test_missing_family_loses_far_more_than_it_adds_and_scales_with_labels():
    p, n = draw_family_rates("missing", 2000, random_state=0)
    assert 0.19 < p.mean() < 0.21
    assert n.max() <= 0.05 * 14 / 2000 + 1e-12
    p14, n14 = draw_family_rates("missing", 14, random_state=0)
    assert n14.min() >= 0.01 and n14.max() <= 0.05


def test_mixed_family_mixes_both_kinds():
    p, n = draw_family_rates("mixed", 1000, random_state=0)
    paper_like = n >= 0.2
    assert 0.4 < paper_like.mean() < 0.6          # about half the labels each way
    assert np.all(n[~paper_like] <= 0.05)


def test_family_names_flow_through_streams_and_configs():
    from ncld_core.config import RunConfig
    from ncld_core.stream.noise import resolve_flip_rates

    p, n, mode = resolve_flip_rates("missing", 5, random_state=1)
    assert mode == "drawn" and np.all(n <= 0.05)
    cfg = RunConfig(noise="missing")
    assert cfg.errors() == {}
    assert "noise family" in RunConfig(noise="gaussian").errors()["noise"]
    stream = RunConfig(noise="missing", n_instances=600).build_stream()
    assert np.all(stream.rho_neg <= 0.05) and np.all(stream.rho_pos >= 0.1)
    assert RunConfig.from_query_params(cfg.to_query_params()) == cfg
