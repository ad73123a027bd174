"""The comparison grid (benchmarks.grid): Dask vs sequential, one file per cell, resume after a kill,
corrupt files, failures, the Table II/IV formatting and the Friedman/Nemenyi statistics.

The Dask tests share one LocalCluster of two worker *processes* (one thread each):
processes are what the command uses, they check that cells and results pickle and
that workers find the code on their own; startup is a few seconds (more on a loaded
machine), paid once per module.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarks.grid import (
    Cell,
    cd_diagram,
    changed_sources,
    code_fingerprint,
    format_table,
    friedman_test,
    make_cells,
    results_table,
    run_cell,
    run_grid,
)

pytestmark = pytest.mark.timeout(120)

REPO = Path(__file__).resolve().parents[1]
METHODS = ("ELM-O", "ELM-II", "ELM (plain)")
SMALL = dict(n_instances=600, n_features=8, n_labels=5)
TIMING = ["seconds", "cell_seconds", "finished_at"]


def small_cells(seeds=2, settings=("noisy", "growth")):
    return make_cells("synthetic", seeds, settings, METHODS, chunk_size=200, **SMALL)


def without_timing(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=TIMING).sort_values(["key", "method"]).reset_index(drop=True)


def cell_files(out: Path) -> set[str]:
    return {p.stem for p in out.glob("*.json")}


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as c:
        yield c


# ----------------------------------------------------------------------------- cells
def test_cell_keys_are_stable_and_safe():
    a = Cell("synthetic", "growth", 3, METHODS, 200, options=SMALL)
    b = Cell("synthetic", "growth", 3, tuple(reversed(METHODS)), 200, options=SMALL)
    assert a.key == b.key  # the method order does not change the results
    assert re.fullmatch(r"[A-Za-z0-9._-]+", a.key) and a.key.startswith("synthetic__growth__seed3__")
    assert Cell("synthetic", "growth", 3, METHODS[:2], 200, options=SMALL).key != a.key
    assert Cell("medical", "reduction").stream == "medical_d"
    assert Cell.from_dict(json.loads(json.dumps(a.to_dict()))) == a
    # the same key in another process
    code = ("from benchmarks.grid import Cell; print(Cell('synthetic', 'growth', 3, "
            f"{METHODS!r}, 200, options={SMALL!r}).key)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert out.stdout.strip() == a.key, out.stderr
    with pytest.raises(ValueError, match="setting"):
        Cell("medical", "sideways")
    with pytest.raises(ValueError, match="not settable"):
        Cell("medical", options={"schedule": "growth"})


# ----------------------------------------------------------------------------- grid
def test_dask_grid_matches_sequential_run(client, tmp_path):
    cells = small_cells()
    dask_df = run_grid(cells, tmp_path / "dask", scheduler=client, progress=False)
    seq_df = run_grid(cells, tmp_path / "seq", scheduler="sequential", progress=False)
    assert sorted(dask_df.attrs["computed"]) == sorted(c.key for c in cells)
    pd.testing.assert_frame_equal(without_timing(dask_df), without_timing(seq_df), check_exact=True)
    # one file per cell, no error files
    assert cell_files(tmp_path / "dask") == {c.key for c in cells}
    assert not (tmp_path / "dask" / "errors").exists() or not any((tmp_path / "dask" / "errors").iterdir())
    # every method of every cell, with the references
    assert set(dask_df["method"]) == {*METHODS, "all-negative", "noisy-prior"}
    assert dask_df["code_current"].all()  # made by the sources now on disk
    assert len(dask_df) == len(cells) * 5
    # a cell's summary is exactly what the runner gives for its configuration
    cell = cells[-1]
    cfg = cell.config()
    direct = cfg.runner().run(cfg.build_stream()).summary()
    row = dask_df[dask_df["key"] == cell.key].set_index("method")
    for m in direct.index:
        for metric in ("hamming_loss", "micro_f1", "average_precision"):
            assert row.loc[m, metric] == pytest.approx(direct.loc[m, metric], abs=1e-12)
    # nothing left to do: a second call only loads
    again = run_grid(cells, tmp_path / "dask", scheduler=client, progress=False)
    assert again.attrs["computed"] == [] and len(again.attrs["loaded"]) == len(cells)
    pd.testing.assert_frame_equal(again, dask_df, check_exact=True)


# In the slow tier (13 s of a make test worker: a Dask job in a process of its own, killed): make test keeps the
# resume from cell files (test_corrupt_cell_file_is_recomputed_with_a_warning) and the Dask grid's equality.
@pytest.mark.slow
def test_killed_grid_resumes_only_missing_cells(client, tmp_path):
    cells = small_cells(seeds=3)
    out = tmp_path / "killed"
    script = tmp_path / "grid_job.py"
    script.write_text(textwrap.dedent(f"""
        from benchmarks.grid import make_cells, run_grid
        if __name__ == "__main__":
            cells = make_cells("synthetic", 3, ("noisy", "growth"), {METHODS!r}, chunk_size=200, **{SMALL!r})
            run_grid(cells, {str(out)!r}, scheduler="local", n_workers=1, progress=False)
    """))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen([sys.executable, str(script)], cwd=REPO, start_new_session=True, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 90
        while not cell_files(out):
            if proc.poll() is not None:
                pytest.fail(f"the grid subprocess ended early: {proc.stderr.read().decode()[-2000:]}")
            if time.monotonic() > deadline:
                pytest.fail("no cell file appeared within 90 s")
            time.sleep(0.02)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the job and its Dask worker processes
        proc.wait(timeout=30)
        proc.stderr.close()
    done = cell_files(out)
    assert 0 < len(done) < len(cells), "the kill came too late to test a resume"

    resumed = run_grid(cells, out, scheduler=client, progress=False)
    assert set(resumed.attrs["loaded"]) == done
    assert set(resumed.attrs["computed"]) == {c.key for c in cells} - done
    assert cell_files(out) == {c.key for c in cells}

    uninterrupted = run_grid(cells, tmp_path / "whole", scheduler="sequential", progress=False)
    pd.testing.assert_frame_equal(without_timing(resumed), without_timing(uninterrupted), check_exact=True)


def test_corrupt_cell_file_is_recomputed_with_a_warning(tmp_path):
    cells = small_cells(seeds=1)
    first = run_grid(cells, tmp_path, scheduler="sequential", progress=False)
    bad = tmp_path / f"{cells[0].key}.json"
    bad.write_text('{"key": "' + cells[0].key + '", "status": "ok", "summ')  # cut short
    with pytest.warns(UserWarning, match="corrupt cell file"):
        second = run_grid(cells, tmp_path, scheduler="sequential", progress=False)
    assert second.attrs["computed"] == [cells[0].key]
    assert second.attrs["loaded"] == [c.key for c in cells[1:]]
    json.loads(bad.read_text())  # rewritten, valid
    assert (tmp_path / f"{bad.name}.corrupt").is_file()  # the bad file is kept aside
    pd.testing.assert_frame_equal(without_timing(first), without_timing(second), check_exact=True)


def test_a_failing_cell_is_recorded_and_the_others_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("NCLD_DATA_DIR", str(tmp_path / "empty"))
    (tmp_path / "empty").mkdir()
    cells = small_cells(seeds=1, settings=("noisy",)) + [Cell("no_such_dataset", "noisy", 0, METHODS)]
    with pytest.warns(UserWarning, match="failed"):
        df = run_grid(cells, tmp_path / "out", scheduler="sequential", progress=False)
    bad = cells[-1].key
    assert list(df.attrs["errors"]) == [bad] and "no_such_dataset" in df.attrs["errors"][bad]
    assert (tmp_path / "out" / "errors" / f"{bad}.json").is_file()
    assert df.attrs["computed"] == [cells[0].key] and set(df["key"]) == {cells[0].key}
    # the error is retried by the next call (and fails again here)
    with pytest.warns(UserWarning, match="failed"):
        again = run_grid(cells, tmp_path / "out", scheduler="sequential", progress=False)
    assert again.attrs["loaded"] == [cells[0].key] and list(again.attrs["errors"]) == [bad]


def test_a_stream_the_builder_refuses_is_skipped_and_recorded(tmp_path, monkeypatch):
    from ncld_core.config import RunConfig

    def refuse(self, dataset=None):
        raise ValueError("schedule 'growth' needs single-label instances; the dataset has none")

    monkeypatch.setattr(RunConfig, "build_stream", refuse)
    cell = small_cells(seeds=1, settings=("growth",))[0]
    rec = run_cell(cell)
    assert rec["status"] == "skipped" and "single-label" in rec["reason"]
    df = run_grid([cell], tmp_path, scheduler="sequential", progress=False)
    assert df.empty and list(df.attrs["skipped"]) == [cell.key] and df.attrs["errors"] == {}
    assert cell_files(tmp_path) == {cell.key}  # recorded: not tried again
    assert run_grid([cell], tmp_path, scheduler="sequential", progress=False).attrs["loaded"] == [cell.key]


def test_changed_sources_names_the_files_that_moved():
    rec = run_cell(small_cells(seeds=1, settings=("noisy",))[0])
    assert "eval/runner.py" in rec["code_digests"] and changed_sources(rec) == []
    assert code_fingerprint(list(rec["code_digests"])) == rec["code"]
    stale = dict(rec, code_digests=dict(rec["code_digests"], **{"eval/runner.py": "0" * 40}))
    assert changed_sources(stale) == ["eval/runner.py"] and changed_sources({"key": "x"}) is None


# ----------------------------------------------------------------------------- tables
def hand_frame(seeds=(0, 1)):
    # stream d1: HL A 0.10 < C 0.15 < B 0.20; F1 B 0.5 > C 0.4 > A 0.3; AP A = B = 0.6 > C 0.5
    means = {"A": (0.10, 0.3, 0.6), "B": (0.20, 0.5, 0.6), "C": (0.15, 0.4, 0.5)}
    rows = []
    for seed in seeds:
        jitter = 0.01 * (seed - 0.5) if len(seeds) > 1 else 0.0
        for m, (hl, f1, ap) in means.items():
            rows.append(dict(dataset="d1", setting="noisy", stream="d1", seed=seed, method=m,
                             hamming_loss=hl + jitter, micro_f1=f1 + jitter, average_precision=ap))
    return pd.DataFrame(rows)


def test_table_marks_best_bold_and_second_underlined():
    table = results_table(hand_frame(), decimals=4)
    assert list(table.columns) == ["A", "B", "C"]
    hl, f1, ap = (table.loc[("d1", k)] for k in ("HL ↓", "F1 ↑", "AP ↑"))
    # HL: lower is better
    assert hl["A"] == "**0.1000 ± 0.0071**" and hl["C"] == "<u>0.1500 ± 0.0071</u>"
    assert hl["B"] == "0.2000 ± 0.0071"
    assert f1["B"].startswith("**0.5000") and f1["C"].startswith("<u>0.4000") and not f1["A"].startswith(("*", "<"))
    # ties share the mark; the next value is second
    assert ap["A"] == ap["B"] == "**0.6000 ± 0.0000**" and ap["C"] == "<u>0.5000 ± 0.0000</u>"
    md = format_table(hand_frame())
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in md.splitlines()]
    assert cells[0] == ["Dataset", "Metric", "A", "B", "C"]
    assert [c[0] + c[-1] for c in cells[1]] == [":-", ":-", "-:", "-:", "-:"]  # names left, numbers right
    assert cells[2] == ["d1", "HL ↓", "**0.1000 ± 0.0071**", "0.2000 ± 0.0071", "<u>0.1500 ± 0.0071</u>"]
    assert [r[0] for r in cells[2:]] == ["d1", "", ""]  # the dataset named on its first row only
    # one seed: no "± std"; a missing method is a dash
    single = results_table(hand_frame(seeds=(0,)))
    assert single.loc[("d1", "HL ↓"), "A"] == "**0.1000**" and single.loc[("d1", "HL ↓"), "C"] == "<u>0.1500</u>"
    table_c = results_table(pd.concat([hand_frame(), hand_frame().assign(stream="d2", dataset="d2")
                                       .query("method != 'C'")]))
    assert table_c.loc[("d2", "HL ↓"), "C"] == "—"


def test_md_table_writes_cells_as_given():
    from benchmarks.common import md_table

    md = md_table(["a", "b"], [["0.5000", "**1**"], [r"x \| y", None]], "lr")
    lines = md.splitlines()
    cells = [[c.strip() for c in line.strip("|").split(" | ")] for line in lines]
    assert cells[0] == ["a", "b"] and cells[2:] == [["0.5000", "**1**"], [r"x \| y", ""]]  # numbers not reformatted
    assert lines[1].replace("-", "") == "|:|:|" and not md.endswith("\n")  # left, right
    assert set(md_table(["a"], [["1.10"]]).splitlines()[1]) == {"|", "-"}  # no align: no colons


def test_friedman_and_cd_diagram_from_autorank(tmp_path):
    rows = []
    rng = np.random.default_rng(0)
    for d in range(6):
        for i, m in enumerate(["A", "B", "C", "D"]):
            rows.append(dict(dataset=f"d{d}", setting="noisy", stream=f"d{d}", seed=0, method=m,
                             hamming_loss=0.1 + 0.01 * i + 0.001 * rng.random(),
                             micro_f1=0.5 - 0.05 * i + 0.001 * rng.random(), average_precision=0.5))
    df = pd.DataFrame(rows)
    hl = friedman_test(df, "hamming_loss")
    assert hl.chi2 == pytest.approx(18.0)  # perfectly consistent ranks, N = 6, k = 4
    assert hl.pvalue < 0.05 and hl.significant and hl.cd > 0 and hl.chi2 > hl.chi2_critical
    assert list(hl.mean_ranks.index) == ["A", "B", "C", "D"]  # lower HL is better
    f1 = friedman_test(df, "micro_f1")
    assert list(f1.mean_ranks.index) == ["A", "B", "C", "D"] and f1.mean_ranks["A"] == 1.0
    png = cd_diagram(hl, tmp_path / "cd.png", title="HL")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="at least 5 datasets"):
        friedman_test(df[df["stream"].isin(["d0", "d1"])], "hamming_loss")


def test_compare_runs_every_baseline_by_default_and_states_its_source():
    # Issue 5: every baseline (River included when installed) is in the default comparison, and the
    # report says for each where its mechanism and defaults come from.
    import os

    saved = dict(os.environ)
    try:  # the script sets one BLAS thread for its process (benchmarks/_env.py): not for this session's
        from benchmarks.compare import BASELINE_SOURCES, choose_methods
    finally:
        os.environ.clear()
        os.environ.update(saved)
    from ncld_core.eval.baselines import BASELINES
    from ncld_core.eval.variants import ELM_VARIANTS, ORACLES

    methods, notes = choose_methods(None, set())
    available = [b for b in BASELINES if not any(n.startswith(f"{b}:") for n in notes)]
    # the ELM variants (the twin ignoring the noise among them) and the clean-label oracle: the noise cost's ends
    assert methods == list(ELM_VARIANTS) + list(ORACLES) + available
    assert set(BASELINE_SOURCES) == set(BASELINES)
    methods, notes = choose_methods(None, {"River BR-LR"})
    assert "River BR-LR" not in methods and any("River BR-LR" in n for n in notes)


def test_map_parallel_keeps_the_order_and_raises(client):
    import math

    from benchmarks.parallel import as_finished, map_parallel

    items = [4.0, 9.0, 16.0, 25.0]
    # on the module's Dask cluster (test_benchmarks.py starts a local one through map_calls)
    assert map_parallel(math.sqrt, items, client=client) == [2.0, 3.0, 4.0, 5.0]
    assert map_parallel(math.sqrt, items, n_workers=1) == [2.0, 3.0, 4.0, 5.0]  # in this process
    with pytest.raises(ValueError, match="math domain error"):
        map_parallel(math.sqrt, [1.0, -1.0], n_workers=1)
    got = dict(as_finished(math.sqrt, [1.0, -1.0], return_errors=True))
    assert got[0] == 1.0 and isinstance(got[1], ValueError)
