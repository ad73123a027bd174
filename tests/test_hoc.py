

def test_the_benchmark_cell_measures_the_assumption_on_a_stream(monkeypatch):
    from benchmarks import rate_estimators

    monkeypatch.setattr(rate_estimators, "LENGTH", 1000)
    row = rate_estimators.cell((rate_estimators.SYNTHETIC, "paper"))
    assert row["labels"] == 10 and 0 <= row["identified"] <= 10 and 0 < row["cluster"] < 1
    text = rate_estimators.report([row], [], 1.0)
    assert "| synthetic | paper" in text and f"{row['identified']} of 10" in text
