"""benchmarks/targets.py: the issue-16 verdicts in docs/results.md are computed, and can say "missed"."""

import doctest

import pandas as pd

import benchmarks.targets as T


def _cells(f1_default, ap_default, hl_default):
    rows = []
    for i, stream in enumerate(T.PAPER_PUBLISHED):
        for seed in (0, 1):
            for method, h, f, a in [("ELM-O", hl_default, f1_default, ap_default), ("peer", 0.05, 0.30, 0.40),
                                    ("all-negative", 0.04, 0.0, 0.1), ("paper", 0.06, 0.2, 0.3)]:
                rows.append(dict(stream=stream, setting="noisy", seed=seed, method=method, hamming_loss=h,
                                 micro_f1=f, average_precision=a))
    return pd.DataFrame(rows)


class _Res:
    def __init__(self, ranks):
        self.mean_ranks = pd.Series(ranks)
        self.significant = True


def test_doctests():
    assert doctest.testmod(T).failed == 0


def test_targets_met_and_missed_are_both_reported():
    good = T.targets_markdown(_cells(0.5, 0.6, 0.06), "ELM-O", ["peer"], ["ELM-O"],
                              {"micro_f1": _Res({"ELM-O": 1.0, "peer": 2.0})})
    assert "on both on 8 of 8" in good and "— **met**" in good
    assert "at most 1.50" in good  # 0.06 / 0.04
    bad = T.targets_markdown(_cells(0.2, 0.6, 0.10), "ELM-O", ["peer"], ["ELM-O"], {})
    assert "on micro-F1 on 0 of 8" in bad and bad.count("**missed**") >= 2  # F1 lost, HL 2.5x all-negative


def test_published_comparison_counts_metrics():
    pub = T.published_rows(_cells(0.99, 0.99, 0.0), ["ELM-O"])
    assert len(pub) == 8 and (pub["ELM-O: better on"] == 3).all()
    pub = T.published_rows(_cells(0.0, 0.0, 0.99), ["ELM-O"])
    assert (pub["ELM-O: better on"] == 0).all()


def test_ranks_leave_out_the_variants_and_hl_below_all_negative_is_judged_where_possible():
    cells = _cells(0.5, 0.6, 0.06)
    # a variant of the model that ranks first is not a peer; a peer below all-negative HL on one stream
    extra = cells[cells["method"] == "ELM-O"].assign(method="ELM-II", micro_f1=0.9)
    peer_low = (cells["method"] == "peer") & (cells["stream"] == "enron")
    cells.loc[peer_low, "hamming_loss"] = 0.03
    cells = pd.concat([cells, extra], ignore_index=True)
    md = T.targets_markdown(cells, "ELM-O", ["peer"], ["ELM-O"], {})
    assert "among ELM-O and the peers (1 = best; target: ELM-O strictly the best on both) — **met**" in md
    assert "wherever some method is (1 of 8 datasets: enron): ELM-O is on 0 of 1 — **missed**" in md
    assert "peer gets HL 0.0300 with F1 0.3000, ELM-O HL 0.0600 with F1 0.5000" in md
    assert "has the lower F1" in md
    ranks, left_out = T.peer_mean_ranks(cells, "ELM-O", ["peer"], "micro_f1")
    assert list(ranks.index) == ["ELM-O", "peer"] and ranks["ELM-O"] == 1.0 and left_out == []


def test_a_tie_or_a_missing_peer_is_not_hidden():
    cells = _cells(0.30, 0.40, 0.06)  # ties the peer on F1 and AP everywhere
    md = T.targets_markdown(cells, "ELM-O", ["peer"], ["ELM-O"], {})
    assert "strictly the best on both) — **missed**" in md
    # a peer without cells on one dataset is left out of the ranking and named, never the dataset
    cells = _cells(0.5, 0.6, 0.06)
    cells = pd.concat([cells, cells[(cells["method"] == "peer") & (cells["stream"] != "enron")]
                       .assign(method="partial", micro_f1=0.99, average_precision=0.99)], ignore_index=True)
    ranks, left_out = T.peer_mean_ranks(cells, "ELM-O", ["peer", "partial"], "micro_f1")
    assert left_out == ["partial"] and "partial" not in ranks
    md = T.targets_markdown(cells, "ELM-O", ["peer", "partial"], ["ELM-O"], {})
    assert "Left out of the ranking (no cell on some dataset): partial." in md
    # no peer at all: said, not a crash
    md = T.targets_markdown(_cells(0.5, 0.6, 0.06), "ELM-O", [], ["ELM-O"], {})
    assert "no peer with cells on every dataset to rank against" in md
