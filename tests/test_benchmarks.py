"""The benchmark scripts: their datasets come from the registry's suites, and their smallest runs work.

Each script sets one BLAS thread for its process when imported (``benchmarks/_env.py``); :func:`script`
imports it with this session's environment restored, as ``tests/test_benchmark_doctests.py`` does.
"""

from __future__ import annotations

import ast
import importlib
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from ncld_core.data import catalog

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def script(name: str):
    saved = dict(os.environ)
    try:
        return importlib.import_module(f"benchmarks.{name}")
    finally:
        os.environ.clear()
        os.environ.update(saved)


# ----------------------------------------------------------------------------- suites
@pytest.fixture
def registry_with_a_new_benchmark_dataset(tmp_path, monkeypatch):
    """The repository's registry plus one entry tagged ``suites = ["benchmark"]`` (not one of the paper's),
    in place of the real one."""
    text = catalog.REGISTRY_PATH.read_text(encoding="utf-8")
    text += '\n[datasets.newset]\narff = "newset.arff"\nsuites = ["benchmark"]\n'
    path = tmp_path / "registry.toml"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(catalog, "REGISTRY_PATH", path)
    return path


def test_suite_lists_the_tagged_datasets_in_registry_order():
    paper = catalog.suite("paper")
    assert paper == ["medical", "langlog", "enron", "corel16k001", "rcv1subset5", "arts", "health", "tmc2007_500"]
    assert catalog.suite("paper-drift") == ["rcv1subset5", "arts", "tmc2007_500"]
    # "paper" is the paper's datasets: exactly the entries that carry the paper's Table I name
    assert paper == [k for k, e in catalog.registry().items() if e.get("paper_name")]
    # every benchmark's full run holds them all today; a dataset of one's own joins it alone
    assert catalog.suite("benchmark") == paper


def test_suite_refuses_an_unknown_suite_and_a_bad_tag(tmp_path):
    with pytest.raises(ValueError, match=r"name: no suite 'papers' in the registry; suites: benchmark, paper, paper-drift"):
        catalog.suite("papers")
    bad = tmp_path / "bad.toml"
    bad.write_text('[datasets.x]\narff = "x.arff"\nsuites = "paper"\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"\[datasets.x\] suites must be a list of names"):
        catalog.suite("paper", bad)


def test_one_registry_line_adds_a_dataset_to_every_benchmark(registry_with_a_new_benchmark_dataset):
    common = script("common")
    assert catalog.suite("benchmark")[-1] == "newset"
    assert "newset" not in catalog.suite("paper")  # the paper's suite stays the paper's datasets
    assert common.benchmark_datasets()[-1] == "newset"
    assert "newset" not in common.paper_drift_datasets()
    drift = script("drift")
    assert "newset" in drift.all_datasets()  # drift runs every registered dataset
    assert script("choose_defaults").protocol(quick=False)["datasets"][-1] == "newset"
    assert script("choose_defaults").protocol(quick=True)["datasets"] == ("medical", "langlog", "enron")


def _literals(tree, names, at_least: int):
    """Literal lists / tuples / sets in ``tree`` naming ``at_least`` or more of ``names``."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            found = {e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in names}
            if len(found) >= at_least:
                yield node.lineno, sorted(found)


def _dataset_literals(tree, names):
    """Literals naming four or more of the datasets ``names`` (a quick run's two or three may)."""
    return _literals(tree, names, 4)


def test_no_benchmark_lists_the_paper_datasets_itself():
    """Every benchmark takes the suite from the registry (so the line above reaches it)."""
    names = set(catalog.registry())
    offenders = {p.name: hits for p in sorted(BENCHMARKS.rglob("*.py"))
                 for hits in [list(_dataset_literals(ast.parse(p.read_text(encoding="utf-8")), names))] if hits}
    assert offenders == {}
    # the check itself can fail
    assert list(_dataset_literals(ast.parse('X = ("medical", "enron", "arts", "health")'), names))


# ----------------------------------------------------------------------------- the one parallel runner
def test_map_calls_runs_several_functions_in_one_map():
    import math

    from benchmarks.parallel import map_calls

    calls = [(math.sqrt, 16.0), (abs, -3), (math.sqrt, 4.0)]
    assert map_calls(calls, n_workers=1) == [4.0, 3, 2.0]
    assert map_calls(calls, n_workers=2) == [4.0, 3, 2.0]  # on a local Dask cluster


def test_no_benchmark_starts_an_executor_of_its_own():
    """benchmarks/parallel.py is the one way to run work in parallel (a local Dask cluster)."""
    for path in sorted(BENCHMARKS.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for other in ("ProcessPoolExecutor", "ThreadPoolExecutor", "multiprocessing", "joblib"):
            assert other not in text, f"{path.name} uses {other}"


# ----------------------------------------------------------------------------- decisions
def test_decisions_cuts_the_streams_with_max_instances(data_dir, tmp_path):
    decisions = script("decisions")
    out = tmp_path / "decisions.md"
    assert decisions.main(["--datasets", "medical", "--seeds", "1", "--max-instances", "600", "--workers", "1",
                           "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "Streams are cut to their first 600 instances after shuffling" in text
    assert "| medical (600) " in text  # the dataset longer than the cut is marked with its length
    rows = decisions.run_stream(("medical", 0, 600))
    assert {r["n_instances"] for r in rows} == {600}
    assert [r["rule"] for r in rows] == decisions.RULES
    whole = decisions.run_stream(("medical", 0, None))
    assert {r["n_instances"] for r in whole} == {978}


def test_decisions_scores_each_rule_as_the_model_deciding_by_it(data_dir):
    """A rule's row is what ELM-O with ``decision=rule`` predicts in the runner, to the last bit: the scores reach
    the rule on the scale of the decision state (with the default loss not the ranking scores' own)."""
    from benchmarks.grid import Cell
    from ncld_core.config import RunConfig

    decisions = script("decisions")
    rows = {r["rule"]: r for r in decisions.run_stream(("medical", 0, 600))}
    cell = Cell("medical", "noisy", 0, methods=("ELM-O",), references=False, options={"n_instances": 600}).config()
    for rule in ("paper", "f1-bounded", "topk"):
        cfg = RunConfig(**{**cell.to_dict(), "decision": rule})
        s = cfg.runner().run(cfg.build_stream()).summary()
        assert (rows[rule]["f1"], rows[rule]["hl"]) == (s.loc["ELM-O", "micro_f1"], s.loc["ELM-O", "hamming_loss"]), rule


# ----------------------------------------------------------------------------- the scripts' smallest runs
def test_drift_verdict_splits_the_missed_classes_by_their_interval():
    """A class below the detection target is called missed with its interval too only when the Wilson interval
    of its count stays below the target; a class at the target is not listed."""
    drift = script("drift")
    scores = pd.DataFrame([{"cls": "clear", "within_oracle": 60, "reachable": 100},
                           {"cls": "few", "within_oracle": 7, "reachable": 9},
                           {"cls": "met", "within_oracle": 19, "reachable": 20}])
    text = drift._class_misses(scores, ["clear", "few", "met"])
    significant, noise = text.split("; within the measurement's noise")
    assert "clear 60/100, 95 % interval 50-69 %" in significant and "few" not in significant
    assert "few 7/9, 95 % interval" in noise and "met" not in text


def test_drift_stream_cell_records_every_learnt_chunk_and_detector(data_dir):
    drift = script("drift")
    cell = drift.stream_cell(("emotions", "stationary", 0, 50))  # 593 instances: 11 chunks of 50
    assert cell["n_chunks"] == 11 == len(cell["rows"]) and cell["changes"] == []
    assert [r["chunk"] for r in cell["rows"]] == list(range(11))
    assert set(cell["fired"]) == {*drift.DETECTORS, *drift.RIVER}
    # the 95 % interval of the moment estimate holds the true cardinality (fails with prob. < 1e-2 at 9 of 11)
    assert sum(r["lcard_low"] <= r["true"] <= r["lcard_high"] for r in cell["rows"]) >= 9
    assert all("est_hat" in r for r in cell["rows"])  # stationary: the rates-estimating model learnt beside
    assert cell["seconds_model"] > 0


def test_flip_rates_stream_cell_scores_every_method_on_every_chunk(monkeypatch):
    flip_rates = script("flip_rates")
    monkeypatch.setattr(flip_rates, "CHUNK", 250)
    monkeypatch.setattr(flip_rates, "SYNTHETIC_LENGTH", 1500)
    cell = flip_rates.stream_cell((flip_rates.SYNTHETIC, "missing", 0))
    chunks = pd.DataFrame(cell["chunks"])
    assert set(chunks.method) == set(flip_rates.METHODS) | {flip_rates.ZERO}
    assert (chunks.groupby("method").chunk.nunique() == 6).all()
    trusted = chunks[chunks.chunk == 5].set_index("method").n_trusted
    # nested trusted samples: more rows for a larger fraction, none without one
    assert trusted[flip_rates.ESTIMATED] == 0 < trusted[flip_rates.trusted_name(0.01)] \
        <= trusted[flip_rates.trusted_name(0.05)]
    rates = pd.DataFrame(cell["rates"]).set_index("method")
    # under missing labels the capped estimator's rho_+ collapses onto rho_-; the untied one does not
    assert rates.loc[flip_rates.CAPPED, "mean_rho_pos"] < 0.1 < rates.loc[flip_rates.ESTIMATED, "mean_rho_pos"]
    scores = flip_rates.cardinality_scores(chunks)
    assert set(scores.columns) >= {"coverage", "width", "bias", "bias_se", "identified"}
    text = flip_rates.report(chunks, pd.DataFrame(cell["rates"]), pd.DataFrame(), seeds_syn=[0], seeds_real={},
                             datasets=[], wall=1.0)
    assert "### Noise family `missing`" in text and "### Against the targets" in text
    # the second pass runs the 1 % trusted model alone: it learns as it does beside the others
    one = flip_rates.trusted_name(flip_rates.TRUSTED_TARGET)
    alone = flip_rates.stream_cell((flip_rates.SYNTHETIC, "missing", 0, (one,)))
    alone_chunks = pd.DataFrame(alone["chunks"])
    assert set(alone_chunks.method) == {one} and [r["method"] for r in alone["rates"]] == [one]
    beside = chunks[chunks.method == one].reset_index(drop=True)
    for column in ("hat", "low", "high", "n_trusted"):
        np.testing.assert_allclose(alone_chunks[column], beside[column], rtol=1e-9, err_msg=column)
    with pytest.raises(ValueError, match="methods"):
        flip_rates.stream_cell((flip_rates.SYNTHETIC, "missing", 0, ("no such method",)))
    # a second-pass seed of that model alone: section 1 counts it, the comparisons between methods do not
    extra = alone_chunks.assign(seed=1, hat=alone_chunks.hat + 50.0, low=alone_chunks.low + 40.0,
                                high=alone_chunks.high + 60.0, seconds=alone_chunks.seconds + 9.0)
    extra_rates = pd.DataFrame(alone["rates"]).assign(seed=1, micro_f1=0.0)
    text2 = flip_rates.report(pd.concat([chunks, extra]), pd.concat([pd.DataFrame(cell["rates"]), extra_rates]),
                              pd.DataFrame(), seeds_syn=[0, 1], seeds_real={}, datasets=[], wall=1.0,
                              first_seeds={flip_rates.SYNTHETIC: 1})
    assert "run the 1 % trusted model alone" in text2
    section3 = lambda t: t.split("## 3.")[1].split("## 4.")[0]  # noqa: E731
    assert section3(text2) == section3(text)  # micro-F1 0 on the extra seed changes nothing there
    narrowing = lambda t: t.split("### How the interval narrows")[1].split("## 2.")[0]  # noqa: E731
    section4 = lambda t: t.split("## 4.")[1].split("## Reading")[0]  # noqa: E731
    assert narrowing(text2) == narrowing(text) and section4(text2) == section4(text)  # nor width, nor seconds
    saved_before = flip_rates.report(pd.concat([chunks, extra]), pd.DataFrame(cell["rates"]), pd.DataFrame(),
                                     seeds_syn=[0, 1], seeds_real={}, datasets=[], wall=1.0,
                                     first_seeds={flip_rates.SYNTHETIC: 1}, second_alone=False)
    assert "model alone" not in saved_before  # data whose second pass ran every method does not say otherwise
    # a source the first pass does not name keeps its rows
    assert len(flip_rates._first_pass(extra, {"other": 1})) == len(extra)
    section1 = lambda t: t.split("## 1.")[1].split("### Against")[0]  # noqa: E731
    assert section1(text2) != section1(text)  # the 1 % trusted column's bias takes the extra seed
    # the reading names the told model's largest bias against its seeds' standard error, not the largest bias
    cells = pd.DataFrame({"dataset": ["a", "b"], "family": "paper", "bias": [0.10, 0.02], "bias_se": [0.05, 0.004],
                          "n_seeds": [3, 40]})
    assert flip_rates._largest_z(cells) == "b/paper, +2.0 % ± 0.4 over 40 seeds"
    assert flip_rates._largest_z(cells.assign(bias_se=np.nan)) == "no cell of two seeds"
    assert flip_rates._largest_z(cells.assign(bias_se=[0.05, 0.0])).startswith("b/paper")  # no spread: the largest


def test_flip_rates_gives_the_datasets_of_few_chunks_more_seeds(data_dir):
    flip_rates = script("flip_rates")
    seeds = flip_rates.seeds_per_dataset(["medical", "enron", "arts"])  # 978, 1702, 7484 instances
    assert seeds == {"medical": 12, "enron": 6, "arts": flip_rates.SEEDS_REAL}
    for name, n in seeds.items():  # every cell gets at least MIN_CHUNKS chunks
        n_chunks = -(-{"medical": 978, "enron": 1702, "arts": 7484}[name] // flip_rates.CHUNK)
        assert n * n_chunks >= flip_rates.MIN_CHUNKS
    assert flip_rates.seeds_text(seeds).endswith("medical 12, enron 6")
    assert flip_rates.seeds_text(seeds).startswith(f"seeds 0-{flip_rates.SEEDS_REAL - 1}; more")
    assert flip_rates.seeds_text({"medical": 12}).startswith(f"seeds 0-{flip_rates.SEEDS_REAL - 1}; more")
    assert flip_rates.seeds_text({"medical": 1, "enron": 1}) == "seed 0"
    assert flip_rates.seeds_per_dataset(["medical"], quick=True) == {"medical": 1}


def test_flip_rates_adds_seeds_where_the_bias_is_coarse_and_judges_each_miss_by_its_interval():
    """The second pass gives a source the seeds its spread between seeds needs for the target standard error; a
    miss is called significant only when its 95 % interval is outside the target too."""
    flip_rates = script("flip_rates")
    one = flip_rates.trusted_name(flip_rates.TRUSTED_TARGET)
    rows = []
    # (source, bias, spread between seeds): a clear miss, a miss within the noise, a met target; the seeds' errors
    # alternate around the bias
    for name, bias, spread in (("clear", 0.20, 0.005), ("noisy", 0.08, 0.15), ("fine", 0.0, 0.005)):
        for family in ("paper", "missing"):
            for seed in range(4):
                err = bias + spread * (-1) ** seed
                rows += [{"dataset": name, "family": family, "seed": seed, "method": one, "chunk": c, "truth": 2.0,
                          "hat": 2.0 * (1 + err), "low": 2.01 if seed == c == 0 else 1.9, "high": 2.1 + 4 * abs(err),
                          "identified": True, "seconds": 0.0} for c in range(3)]  # coverage 11/12: in the band
    chunks = pd.DataFrame(rows)
    loose = {"coverage_se": 1.0}  # the bias's rule alone (the coverage's is checked below)
    seeds = flip_rates.seeds_for_precision(chunks, {"clear": 4, "noisy": 4, "fine": 4}, **loose)
    g = chunks[chunks.dataset == "noisy"]
    var = (g.hat / 2.0 - 1).groupby([g.family, g.seed]).mean().groupby(level=0).var(ddof=1).mean()
    dof = 2 * (4 - 1)  # two families of four seeds: the variance's 90 % upper bound on 6 degrees of freedom
    upper = var * dof / scipy.stats.chi2.ppf(0.10, dof)
    assert seeds["noisy"] == min(flip_rates.MAX_SEEDS, int(np.ceil(upper / flip_rates.TARGET_SE ** 2))) > 4
    assert flip_rates.seeds_for_precision(chunks, {"noisy": 4}, target_se=0.5, **loose)["noisy"] == 4  # fine enough
    assert seeds["clear"] == seeds["fine"] == 4  # never fewer than the first pass
    # the coverage's rule: seed 0 covers 2 of its 3 chunks, the others all: the spread of the seeds' coverages
    per_seed = pd.Series([2 / 3, 1.0, 1.0, 1.0])
    upper = per_seed.var(ddof=1) * dof / scipy.stats.chi2.ppf(0.10, dof)
    coverage_seeds = flip_rates.seeds_for_precision(chunks, {"fine": 4}, target_se=1.0, coverage_se=0.1)
    assert coverage_seeds["fine"] == int(np.ceil(upper / 0.1 ** 2)) > 4
    # seeds that all covered every chunk: no spread, yet a seed missing all its chunks 5 % of the time is not ruled
    # out, so the seeds that variance needs
    all_covered = chunks.assign(low=1.0, high=3.0)
    floor = flip_rates.COVERAGE_VARIANCE_FLOOR
    needed = int(np.ceil(floor / 0.05 ** 2))
    assert flip_rates.seeds_for_precision(all_covered, {"fine": 4}, target_se=1.0, coverage_se=0.05)["fine"] == \
        needed and 4 < needed < flip_rates.MAX_SEEDS  # the floor's count, below the cap
    # at the report's own precision the floor asks more than the cap: every source runs MAX_SEEDS
    assert flip_rates.seeds_for_precision(all_covered, {"fine": 4}, target_se=1.0)["fine"] == flip_rates.MAX_SEEDS
    scores = flip_rates.cardinality_scores(chunks)
    significant, noise, by_design = flip_rates._misses(scores[scores.family == "paper"], one,
                                                       bias=flip_rates.BIAS_TRUSTED)
    assert [m.split(" ")[0] for m in significant] == ["clear"] and [m.split(" ")[0] for m in noise] == ["noisy"]
    assert by_design == [] and "s.e. over 4 seeds; 95 % interval" in noise[0]
    text = flip_rates.added_seeds_text(seeds, {"clear": 4, "noisy": 4, "fine": 4})
    assert text.endswith(f"noisy {seeds['noisy']}.") and "clear" not in text
    # a stream's chunks are covered or missed together (they share its trusted rows): coverage is judged over the
    # seeds too, so one unlucky seed of two is no significant miss, though its 100 chunks alone would say so
    rows = [{"dataset": "clustered", "family": "paper", "seed": seed, "method": one, "chunk": c, "truth": 2.0,
             "hat": 2.0, "low": 1.9 if seed == 0 or c < 30 else 2.05, "high": 2.1, "identified": True,
             "seconds": 0.0} for seed in (0, 1) for c in range(100)]
    r = flip_rates.cardinality_scores(pd.DataFrame(rows)).iloc[0]
    assert r.coverage == 0.65 and flip_rates.wilson_interval(r.covered, r.n)[1] < 0.9  # chunks alone: a miss
    significant, noise, _ = flip_rates._misses(flip_rates.cardinality_scores(pd.DataFrame(rows)), one)
    assert significant == [] and noise[0].startswith("clustered (coverage 65.0 % (below the band; 95 % interval")


def test_flip_rates_anchor_cell_ranks_every_full_chunk_after_the_first(data_dir):
    flip_rates = script("flip_rates")
    rows = flip_rates.anchor_cell(("enron", 0))  # 1702 instances: chunks 1 and 2 ranked
    assert {(r["ranking"], r["fraction"]) for r in rows} == {
        (k, f) for k in (flip_rates.ANCHOR_MODEL, flip_rates.ANCHOR_CLEAN) for f in flip_rates.ANCHOR_FRACTIONS}
    share = {(r["ranking"], r["fraction"]): r["clean_share_frequent"] for r in rows}
    for f in flip_rates.ANCHOR_FRACTIONS:  # the ranker fitted to the clean labels finds cleaner anchors
        assert share[(flip_rates.ANCHOR_CLEAN, f)] <= share[(flip_rates.ANCHOR_MODEL, f)]


def _family_literals(tree):
    """Literals naming two or more noise families other than "paper" (which also names the paper's forms)."""
    from ncld_core.stream.noise_families import NOISE_FAMILIES

    return _literals(tree, set(NOISE_FAMILIES) - {"paper"}, 2)


def test_no_benchmark_lists_the_noise_families_itself():
    """Every benchmark takes the noise families from their registry, so a new family is one entry there."""
    offenders = {p.name: hits for p in sorted(BENCHMARKS.rglob("*.py"))
                 for hits in [list(_family_literals(ast.parse(p.read_text(encoding="utf-8"))))] if hits}
    assert offenders == {}
    assert list(_family_literals(ast.parse('FAMILIES = ("paper", "missing", "mixed")')))  # the check can fail


def test_choose_defaults_probability_task_knows_the_oracle_exactly():
    choose_defaults = script("choose_defaults")
    task = {"kind": "synthetic_probability", "seed": 0, "n_chunks": 3, "params": choose_defaults.current_defaults()}
    rows = {r["model"]: r for r in choose_defaults._dispatch(task)}
    assert set(rows) == {*choose_defaults.PROB_MODELS, "oracle"}
    assert rows["oracle"]["pd_mae"] == 0.0 and rows["oracle"]["w_mae"] == 0.0
    assert all(rows[m]["pd_mae"] > 0 for m in choose_defaults.PROB_MODELS)
    assert choose_defaults.protocol(False)["datasets"] == tuple(catalog.suite("benchmark"))


def test_capacity_runs_its_settings_side_by_side(data_dir):
    capacity = script("capacity")
    names = ("L20 a1.8 logistic (old)", "L20 auto knn")
    rows = capacity.run_stream(("medical", 0, names))
    assert [r["setting"] for r in rows] == list(names)
    assert all(0 < r["average_precision"] <= 1 for r in rows)
    assert rows[0]["alpha_median"] == 1.8 and rows[1]["alpha_median"] in capacity.ALPHA_GRID


def test_compare_writes_a_report_for_one_small_cell(data_dir, tmp_path):
    compare = script("compare")
    doc = tmp_path / "results.md"
    code = compare.main(["--datasets", "emotions", "--seeds", "1", "--settings", "noisy", "--methods", "ELM-O",
                         "--scheduler", "sequential", "--no-progress", "--out", str(tmp_path / "cells"),
                         "--doc", str(doc)])
    assert code == 0
    text = doc.read_text(encoding="utf-8")
    assert "## Table II: noisy streams" in text and "| emotions" in text
    assert "no Friedman test" in text  # one dataset: the test needs five


def test_performance_report_has_every_section(data_dir, tmp_path):
    """The sections that take seconds, run tiny (the memory one in its own process, as make bench runs it);
    the throughput ones stand in as not measured."""
    from benchmarks.performance import loading, memory, profiling, protocol, scaling, render
    from benchmarks.performance.dashboard import dashboard_timing
    from benchmarks.performance.machine import machine_facts

    cfg = protocol.Config(quick=True, n_timed=1, river_timed=1, sizes=(250,), size_timed=1, dims=(100,),
                          dim_timed=1, memory_milestones=(1_000, 2_000), memory_budget_s=60.0, profile_chunks=1)
    not_run = {"error": "not run in this test"}
    sections = {"tiny": {"wall_s": 1.0, "others_pct": 0.0, "loadavg_1min_end": 0.0}}
    res = {
        "date": "today", "config": dict(vars(cfg)), "machine": machine_facts(), "loadavg_1min_start": 0.0,
        "throughput": {n: not_run for n in protocol.THROUGHPUT_DATASETS},
        "river": {n: not_run for n in protocol.RIVER_DATASETS},
        # the chunk-size section runs the paper's model beside the Woodbury reference (make bench once failed there)
        "sizes": scaling.bench_sizes(cfg), "dims": scaling.bench_dims(cfg), "memory": memory.bench_memory(cfg),
        "dashboard": dashboard_timing(tmp_path / "absent.json"),
        "load": loading.bench_load(["medical"]), "gram": loading.bench_gram(["medical"], sizes=(250,)),
        "profile": profiling.profile_partial_fit("medical", cfg), "wall_s": 1.0,
        "contention": {"sections": sections, "others_cpu_s": 0.0, "own_cpu_s": 1.0, "available_cpu_s": 2.0},
    }
    assert [p["instances"] for p in res["memory"]["points"]] == [1_000, 2_000]
    assert "error" not in res["sizes"], res["sizes"]
    assert [r["N"] for r in res["sizes"]["rows"]] == [250] and res["sizes"]["rows"][0]["ref_s"] > 0
    text = render(res)
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings == ["## Machine", "## Targets (from the issue)", "## 1. Throughput of the full per-chunk update "
                        "(N = 500)", "## 2. Against the references", "## 3. How the cost grows",
                        "## 4. Resident memory", "## 5. Dashboard", "## 6. Profile of `partial_fit`",
                        "## Threads under load (`python -m benchmarks.threads`)",
                        "## 8. Exploring the default stream in the browser (issue 38 item 8)", "## How to reproduce"]
    assert "### 5c. Loading a dataset" in text and "### 5d. The kNN graph's Gram product" in text
    assert "not measured: not run in this test" in text
    # section 8 (a browser's) not in this result: its three targets and its section say so
    assert text.count("| default stream:") == 3 and "Not measured in this run." in text


def test_noise_gap_writes_every_section_for_one_small_stream(data_dir, tmp_path):
    noise_gap = script("noise_gap")
    doc = tmp_path / "noise-gap.md"
    code = noise_gap.main(["--datasets", "emotions", "--seeds", "1", "--families", "paper", "--workers", "1",
                           "--candidates", noise_gap.DEFAULT, "paper's loss (noisy targets)", "--no-timing",
                           "--no-presets", "--doc", str(doc)])
    assert code == 0
    text = doc.read_text(encoding="utf-8")
    for heading in ("## Done when (issue 26)", "## Which loss", "## The gap per dataset", "## The limit",
                    "## The ceiling", "## Time"):
        assert heading in text, heading
    assert "| emotions" in text and "equivalent clean fraction" in text
    assert "AP cost recovered >= 50 % on (shared)" in text and "Chosen with hindsight per dataset" in text
    # the ranking-loss bound read on the same curve: what it asks for beside what the noisy labels are worth
    assert "1.5x the oracle's: clean fraction it takes" in text and "equivalent clean fraction by ranking loss" in text
    assert re.search(r"On \d+ of \d+ shared datasets the bound asks", text)
    # the learning curve's full fraction is the oracle itself: the same stream, the same model
    curve = noise_gap.run_curve(("emotions", "paper", 0))
    gap = noise_gap.run_gap(("emotions", "paper", 0, (noise_gap.DEFAULT,)))
    oracle = next(r for r in gap if r["model"] == noise_gap.ORACLE)
    assert curve[0]["fraction"] == 1.0
    assert abs(curve[0]["average_precision"] - oracle["average_precision"]) < 1e-12


def test_the_noise_gaps_ceiling_picks_the_best_variant_per_dataset_and_counts_the_targets():
    """Two datasets, two variants: each dataset's best is the other variant; the counts follow the shares."""
    import pandas as pd

    noise_gap = script("noise_gap")
    O, I = noise_gap.ORACLE, noise_gap.IGNORING
    rows = []
    for d, (a_ap, b_ap, a_rl, b_rl) in {"one": (0.7, 0.5, 0.12, 0.30), "two": (0.45, 0.62, 0.30, 0.14)}.items():
        for seed in (0, 1):  # the section averages the seeds
            for model, ap, rl in ((O, 0.8, 0.1), (I, 0.4, 0.3), ("a", a_ap, a_rl), ("b", b_ap, b_rl)):
                rows.append({"dataset": d, "family": "paper", "seed": seed, "model": model, "average_precision": ap,
                             "micro_f1": 0.5, "ranking_loss": rl})
    rows.append({**rows[-1], "dataset": "synthetic"})  # the generator is not a shared dataset: not counted
    text = "\n".join(noise_gap.ceiling_section(pd.DataFrame(rows), "paper"))
    assert re.search(r"\| one\s+\|\s+75 %\s+\| a\s+\|\s+1\.20\s+\| a\s+\|\s+75 %", text)
    assert re.search(r"\| two\s+\|\s+55 %\s+\| b\s+\|\s+1\.40\s+\| b\s+\|\s+12 %", text)
    assert "AP gap recovered >= 50 % on **2 of 2**" in text and "oracle's on **2 of 2**" in text
    assert "One variant for all: a reaches 50 % on 1 of 2." in text
    assert "synthetic" not in text


def test_noise_gap_runs_a_preset_with_each_loss_and_tabulates_it():
    import pandas as pd

    noise_gap = script("noise_gap")
    from ncld_core.config import PRESETS

    rows = noise_gap.run_preset("concept growth")
    assert {(r["variant"], r["loss"]) for r in rows} == {
        (v, loss) for v in ("ELM-O", "ELM-I") for loss in noise_gap.PRESET_LOSSES}
    assert all(r["from_chunk"] == 10 for r in rows)  # growth at instance 2500, chunks of 250
    assert all(0 <= r["micro_f1_after"] <= 1 and 0 < r["average_precision"] <= 1 for r in rows)
    assert {r["decision"] for r in rows} == {PRESETS["concept growth"].decision}
    other = noise_gap.run_preset(("concept growth", "topk"))
    assert {r["decision"] for r in other} == {"topk"} and other[0]["micro_f1"] != rows[0]["micro_f1"]
    calls = [arg for _, arg in noise_gap.preset_calls()]
    assert ("concept growth", PRESETS["concept growth"].decision) in calls
    assert ("concept growth", "f1-bounded") in calls and not any(n.startswith("unknown noise") for n, _ in calls)
    text = "\n".join(noise_gap.preset_section(pd.DataFrame(rows + other)))
    assert "| concept growth" in text and "`topk`, backward: micro-F1" in text


@pytest.mark.parametrize("name", ["capacity", "choose_defaults", "clean_vs_noisy", "compare", "decisions", "drift",
                                  "flip_rates", "noise_gap", "performance"])
def test_every_benchmark_answers_help(name, capsys):
    with pytest.raises(SystemExit) as stop:
        script(name).main(["--help"])
    assert stop.value.code == 0 and "usage: python -m" in capsys.readouterr().out


def test_clean_vs_noisy_reports_a_preset_at_its_rule_and_every_rule(tmp_path):
    """benchmarks.clean_vs_noisy (issue 39): a preset with its noise and with clean labels, its variants at its own
    rule (the runner's numbers, checked inside run_preset) and at every rule, with the verdict per variant."""
    clean_vs_noisy = script("clean_vs_noisy")
    out = tmp_path / "clean.md"
    assert clean_vs_noisy.main(["--presets", "why beta matters", "--seeds", "1", "--workers", "1", "--out",
                                str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert re.search(r"\| why beta matters +\| ELM-O +\| paper +\| 0\.\d{3} → 0\.\d{3}", text)
    assert "| `f1-bounded` " in text and "Seeds 0;" in text
    assert "Clean labels score at least as well as noisy ones on every preset at its own rule." in text
    with pytest.raises(SystemExit):
        clean_vs_noisy.main(["--presets", "no such preset"])


def test_make_bench_entry_point_answers_help():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "benchmarks", "--help"], capture_output=True, text=True, timeout=120,
                         cwd=BENCHMARKS.parent)
    assert out.returncode == 0 and "--quick" in out.stdout, out.stderr[-500:]


def test_the_told_models_rho_neg_is_off_by_the_anchors_sampling_error():
    """benchmarks.rates_unknown's TOLD_SAMPLED: each label's rho_- off by N(0, rho(1 - rho) / (anchor_fraction n)),
    the labels' draws independent, cut to [0, max_rate], the stream's labels untouched. 2000 labels at rho_- 0.3,
    1000 instances: the spread is 0.0265 (anchor_fraction 0.3), the mean size 0.0211 with a standard error of
    0.0004; tolerance 0.002."""
    import dataclasses

    from ncld_core.model.flip_rates import FlipRateEstimator

    rates_unknown = script("rates_unknown")

    @dataclasses.dataclass
    class Stream:
        Y_noisy: np.ndarray
        rho_neg: np.ndarray
        n_instances: int

    q, n, rho = 2000, 1000, 0.3
    stream = Stream(np.zeros((1, q)), np.full(q, rho), n)
    told, error = rates_unknown.sampled_rho_neg(stream, seed=0, name="enron/paper")
    spread = np.sqrt(rho * (1 - rho) / (0.3 * n))
    assert np.isclose(error["rho_neg_abs_error"], spread * np.sqrt(2 / np.pi), atol=0.002)
    assert abs(error["rho_neg_error"]) < 0.002 and np.isclose(np.std(told.rho_neg - rho), spread, rtol=0.1)
    assert told.Y_noisy is stream.Y_noisy and np.all(stream.rho_neg == rho)
    again, _ = rates_unknown.sampled_rho_neg(stream, seed=0, name="enron/paper")
    assert np.array_equal(again.rho_neg, told.rho_neg)  # seeded: the same stream gets the same draw
    other, _ = rates_unknown.sampled_rho_neg(stream, seed=0, name="enron/mixed")
    assert not np.allclose(other.rho_neg, told.rho_neg)  # another stream of the same seed: another draw
    # cut to [0, max_rate]: labels at rho_- 0 are never told a negative rate, nor labels at the bound a larger one
    top = FlipRateEstimator().max_rate
    edges = Stream(np.zeros((1, 2 * q)), np.r_[np.zeros(q), np.full(q, top)], 50)
    cut, _ = rates_unknown.sampled_rho_neg(edges, seed=0, name="edges")
    assert np.all(cut.rho_neg[:q] == 0.0) and cut.rho_neg[q:].max() == top and cut.rho_neg[q:].min() < top


def test_threads_benchmark_builds_its_chunks(data_dir):
    """The stream the threads section of make bench times (it once failed on an import, caught by make bench)."""
    from benchmarks.threads import CHUNK, rates_by_setting, stream_chunks

    stream, chunks = stream_chunks("medical", 2)
    assert len(chunks) == 2 and chunks[0][0].shape[0] == CHUNK  # medical: 978 instances, 500 + 478
    assert sum(X.shape[0] for X, _ in chunks) == sum(Y.shape[0] for _, Y in chunks) == stream.X.shape[0] == 978
    assert stream.Y_noisy.shape[1] == stream.rho_pos.size == 45
    # every setting is timed on as many chunks, the short stream's chunks taken again
    rates = rates_by_setting(stream, chunks, [1, "auto"], samples=3)
    assert set(rates) == {1, "auto"} and all(np.isfinite(r) and r > 0 for r in rates.values()), rates


def by_model(df, name):
    """The scores of the model ``name`` in a rates_unknown benchmark's rows."""
    return tuple(df.set_index("model").loc[name, ["micro_f1", "hamming_loss", "average_precision"]])


def test_rates_unknown_runs_every_model_and_states_each_target(monkeypatch, tmp_path):
    """benchmarks.rates_unknown (issue 39): one stream per model side by side; the targets are computed from the
    rows (a model below ignoring the noise is counted), and the report names every model."""
    import ncld_core.eval.runner as runner_module

    rates_unknown = script("rates_unknown")
    told_calls = []  # what each run's models are told, in the order of the runs

    def recorded(mode, stream):
        rates = runner_module_told_rates(mode, stream)
        told_calls.append((rates, stream.rho_pos, stream.rho_neg))
        return rates

    runner_module_told_rates = runner_module.told_rates
    monkeypatch.setattr(runner_module, "told_rates", recorded)
    rows = rates_unknown.run_cell(("synthetic", "paper", 0, 1000))
    df = pd.DataFrame(rows)
    names = [rates_unknown.TOLD, rates_unknown.IGNORING,
             *(rates_unknown.estimated_name(f) for f in rates_unknown.FRACTIONS)]
    off = [rates_unknown.told_off_name(o) for o in rates_unknown.TOLD_OFF]
    told = [rates_unknown.TOLD_SAMPLED, rates_unknown.TOLD_PAPER_LOSS, rates_unknown.TOLD_ESTIMATES,
            rates_unknown.TOLD_ESTIMATES_PAPER_LOSS, rates_unknown.TOLD_RHO_POS_ESTIMATES, rates_unknown.TOLD_FORWARD,
            rates_unknown.ONE_PAPER_LOSS]
    assert list(df.model) == names + off + told and (df.n_instances == 1000).all()
    assert df.micro_f1.between(0, 1).all() and (df.chunk_seconds > 0).all()
    rows = {r[0]: r for r in rates_unknown.targets(df)}
    below = next(v for k, v in rows.items() if k.startswith("1 % trusted never below"))
    one = df.set_index("model").micro_f1
    # the loss each stream's 1 % trusted model chose: flips (the paper's noise) keep the forward loss
    assert df.set_index("model").loss[rates_unknown.estimated_name(0.01)] == "forward"
    chose = next(v for k, v in rows.items() if k.startswith("reference: the loss 1 % trusted learnt with"))
    assert chose[1] == "paper 0 of 1 streams the paper's", chose
    means = next(v for k, v in rows.items() if k.startswith("reference: mean micro-F1 over the streams"))
    assert means[1] == f"paper {one[names[3]]:.3f} against {one[rates_unknown.ONE_PAPER_LOSS]:.3f}", means
    assert not any(r[0].startswith("reference: the loss") for r in rates_unknown.targets(df.drop(columns="loss")))
    assert below[2] == ("missed" if one[names[3]] < one[rates_unknown.IGNORING] else "met")
    forward = next(r for r in rates_unknown.targets(df.assign(dataset="enron"))  # read as a shared dataset's
                   if r[0].startswith("reference: 1 % trusted within"))
    near = one[rates_unknown.TOLD_FORWARD] - one[names[3]] <= rates_unknown.WITHIN_TOLD
    assert forward[1].startswith(f"paper {int(near)} of 1") and forward[2] == "measured", forward
    told_below = next(v for k, v in rows.items() if k.startswith("reference: the model told the rates, below"))
    assert told_below[1].startswith("1 of 1" if one[rates_unknown.TOLD] < one[rates_unknown.IGNORING] else "0 of 1")
    lower = df.assign(micro_f1=np.where(df.model == rates_unknown.TOLD, 0.0, df.micro_f1))  # the reference's fall
    assert next(v for k, v in {r[0]: r for r in rates_unknown.targets(lower)}.items()
                if k.startswith("reference: the model told the rates, below"))[1].startswith("1 of 1 cells below")
    both = df.assign(micro_f1=np.where(df.model.isin([rates_unknown.TOLD, names[3]]), 0.0, df.micro_f1))
    assert next(v for k, v in {r[0]: r for r in rates_unknown.targets(both)}.items()  # the cells they share
                if k.startswith("reference: the model told the rates, below"))[1].endswith(
        "1 of the 1 cells where 1 % trusted is below")
    worse = df.assign(micro_f1=np.where(df.model == names[3], 0.0, df.micro_f1))  # a collapse must be seen
    assert next(v for k, v in {r[0]: r for r in rates_unknown.targets(worse)}.items()
                if k.startswith("1 % trusted never below"))[2] == "missed"
    # over seeds: a gap every seed shows is called beyond the seeds' noise, one they split is not
    ignoring = df.set_index("model").micro_f1[rates_unknown.IGNORING]
    # t statistics over 4 seeds: 31 (called); 1.0 (not); 2.7, between the one-sided and the two-sided 95 % critical
    # values on 3 degrees of freedom (2.35, 3.18): not called, the interval is two-sided
    for step, called in ((0.001, "1 of 1 (by chance alone about 0.0): paper/synthetic -0.02"), (0.03, "0 of 1"),
                         (0.0115, "0 of 1")):
        seeds = pd.concat([df.assign(seed=k, micro_f1=np.where(df.model == names[3], ignoring - 0.02 + step * (k - 1.5),
                                                               df.micro_f1)) for k in range(4)])
        gap = next(r for r in rates_unknown.targets(seeds)
                   if r[0].startswith("reference: 1 % trusted below ignoring the noise beyond the seeds' noise"))
        assert gap[1].startswith(called) and gap[2] == "measured", gap
    text = rates_unknown.report(df, command="python -m benchmarks.rates_unknown", seconds=1.0, max_instances=1000,
                                workers=1)
    assert all(n in text for n in names + off + told) and "## Targets" in text
    # --load writes the report from saved rows, stamped with the run that measured them
    saved = tmp_path / "rows.csv"
    df.to_csv(saved, index=False)
    (tmp_path / "rows.csv.json").write_text('{"command": "python -m benchmarks.rates_unknown --seeds 1", "date": '
                                           '"2026-01-02 03:04 UTC", "revision": "abc1234", "seconds": 12.0, '
                                           '"workers": 1, "max_instances": 1000}')
    assert rates_unknown.main(["--load", str(saved), "--doc", str(tmp_path / "doc.md")]) == 0
    loaded = (tmp_path / "doc.md").read_text()
    assert loaded.startswith("# Rates nobody told") and "on 2026-01-02 03:04 UTC at abc1234 in 12 s" in loaded
    assert "written from its saved rows" in loaded and loaded.split("\n", 3)[3] == (text + "\n").split("\n", 3)[3]
    # the loss is the only difference: the told model with it regresses other targets, so it scores otherwise
    assert by_model(df, rates_unknown.TOLD_PAPER_LOSS) != by_model(df, rates_unknown.TOLD)
    assert by_model(df, rates_unknown.TOLD_FORWARD) != by_model(df, rates_unknown.TOLD)
    # 1 %: the same rows, another loss (this stream's first chunk holds trusted rows, so 1 % learns with the forward
    # loss; a stream whose first chunk held none would learn with the paper's and score the same)
    assert df.set_index("model").loc[names[3], "trusted_rows"] > 0
    assert by_model(df, rates_unknown.ONE_PAPER_LOSS) != by_model(df, names[3])
    assert df.set_index("model").loc[rates_unknown.ONE_PAPER_LOSS, "trusted_rows"] == \
        df.set_index("model").loc[names[3], "trusted_rows"]
    # told the 1 % model's last rates, both of them: what the models are told is that far from the truth, as the
    # 1 % model's own last record is (its row), and they score otherwise than told the truth
    assert len(told_calls) == len(df)
    true_pos, true_neg = told_calls[0][0]
    (told_pos, told_neg), _, _ = told_calls[list(df.model).index(rates_unknown.TOLD_ESTIMATES)]
    (again_pos, again_neg), _, _ = told_calls[list(df.model).index(rates_unknown.TOLD_ESTIMATES_PAPER_LOSS)]
    assert np.array_equal(again_pos, told_pos) and np.array_equal(again_neg, told_neg)  # the same rates, other loss
    assert by_model(df, rates_unknown.TOLD_ESTIMATES_PAPER_LOSS) != by_model(df, rates_unknown.TOLD_ESTIMATES)
    (pos_only, neg_true), _, _ = told_calls[list(df.model).index(rates_unknown.TOLD_RHO_POS_ESTIMATES)]
    assert np.array_equal(pos_only, told_pos) and np.array_equal(neg_true, true_neg)  # rho+ estimated, rho- true
    est = df.set_index("model")
    for rate, given, true in (("rho_pos", told_pos, true_pos), ("rho_neg", told_neg, true_neg)):
        assert np.isclose(np.mean(given - true), est.loc[names[3], f"{rate}_error"])
        assert np.isclose(np.mean(np.abs(given - true)), est.loc[names[3], f"{rate}_abs_error"])
        assert np.any(given != true)
    assert by_model(df, rates_unknown.TOLD_ESTIMATES) != by_model(df, rates_unknown.TOLD)
    # the sampled draw moves rho_- only
    (sampled_pos, sampled_neg), _, _ = told_calls[list(df.model).index(rates_unknown.TOLD_SAMPLED)]
    assert np.array_equal(sampled_pos, true_pos) and np.any(sampled_neg != true_neg)
    drawn = est.loc[rates_unknown.TOLD_SAMPLED]
    assert np.isclose(drawn.rho_neg_abs_error, np.mean(np.abs(sampled_neg - true_neg)))
    # what the trusted sample had to go on: nested samples (more rows with a larger share), rate errors only where
    # the model estimated its rates, and each in the report's table
    by = df.set_index("model")
    assert by.loc[rates_unknown.TOLD, "trusted_rows"] == 0 and np.isnan(by.loc[rates_unknown.TOLD, "rho_pos_error"])
    trusted = [by.loc[rates_unknown.estimated_name(f), "trusted_rows"] for f in rates_unknown.FRACTIONS]
    assert trusted[0] == 0 and trusted == sorted(trusted) and trusted[-1] > trusted[1] > 0, trusted
    est = by.filter(like="no rates", axis=0)
    assert est.rho_pos_error.between(-0.4, 0.4).all() and (est.rho_pos_abs_error >= est.rho_pos_error.abs()).all()
    section = text.split("## What 1 % trusted had to go on")[1].split("## How far")[0]
    row = next(line for line in section.splitlines() if line.startswith("| synthetic"))
    assert f"{by.loc[rates_unknown.estimated_name(0.01), 'rho_pos_error']:+.3f}" in row, row
    # the model told the rates with rho_- shifted was told them (it decides otherwise), and the report shows it
    # beside the told model and 1 % trusted, under every noise family
    assert all(by.loc[n, "micro_f1"] != by.loc[rates_unknown.TOLD, "micro_f1"] for n in off)
    section = text.split("## How far the model told the rates stands from reach")[1]
    row = next(line for line in section.splitlines() if line.startswith("| synthetic"))
    assert all(f"{by.loc[n, 'micro_f1']:.3f}" in row for n in [rates_unknown.TOLD, *off]), row
    missing = pd.DataFrame(rates_unknown.run_cell(("synthetic", "missing", 0, 1000))).set_index("model")
    assert set(off) <= set(missing.index) and missing.loc[off[0], "micro_f1"] != missing.loc[rates_unknown.TOLD,
                                                                                             "micro_f1"]


def test_a_sections_own_cpu_counts_the_processes_it_started_in_sessions_of_their_own(tmp_path):
    """make bench's warning names other processes' CPU: a section's dashboard server, its run processes (which call
    os.setsid) and its browser are its own. A child starts a grandchild in a session of its own that spins 1 s of CPU
    and is not reaped before the section ends: OwnCPU counts it, the finished-children count does not."""
    import subprocess
    import sys
    import time

    from benchmarks.performance.machine import OwnCPU, cpu_seconds

    done = tmp_path / "done"
    spin = ("import os, time\nos.setsid()\nwhile time.process_time() < 1.0:\n    pass\n"
            f"open({str(done)!r}, 'w').close()\n")
    child = f"import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', {spin!r}]).wait()\ntime.sleep(3.0)\n"
    _, before = cpu_seconds()
    with OwnCPU(every_s=0.05) as own:
        proc = subprocess.Popen([sys.executable, "-c", child])
        deadline = time.monotonic() + 60
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    _, after = cpu_seconds()  # the child sleeps still: nothing of the grandchild is reaped into this process yet
    proc.wait()
    assert done.exists()
    assert own.seconds >= 0.8, own.seconds
    assert after - before < 0.5, after - before


def test_change_coverage_cells_mark_the_chunks_after_a_change_and_report_the_targets(data_dir):
    cc = script("change_coverage")
    preset = cc.preset_cell(("label shift", 0, cc.TRUSTED))  # chunks of 500, the shift at 2500: chunk 5
    assert {r["model"] for r in preset} == {"ELM-O", "ELM-I", "ELM-II"}
    assert [r["since"] for r in preset if r["model"] == "ELM-O"] == [-1] * 5 + list(range(5))
    drift = [r for f in (cc.TRUSTED, 0.0) for r in cc.drift_cell(("emotions", "shift", "missing", 0, f))]
    assert [r["after"] for r in drift][:5] == [False] * 4 + [True]  # shifts every 4 chunks of 25
    df = pd.DataFrame(preset + drift)
    rows = cc.targets(df)
    assert [r[0].split(":")[0] for r in rows] == ["2 % trusted", "2 % trusted", "no trusted rows"]
    text = cc.report(df, command="python -m benchmarks.change_coverage --quick", seconds=1.0, workers=1)
    assert "## Targets" in text and "label shift" in text and "emotions" in text
    # a cell outside the band is named, with its chunks and whether its Wilson interval reaches the band
    cells = pd.DataFrame({"kind": ["a", "b", "c"], "family": ["paper"] * 3, "hits": [200, 80, 93],
                          "chunks": [200, 100, 100], "coverage": [1.0, 0.8, 0.93], "ci_low": [0.98, 0.71, 0.86],
                          "ci_high": [1.0, 0.87, 0.97]})
    assert cc.outside_band(cells, ["kind", "family"]) == (
        "; outside: a / paper over: 200 of 200 chunks, 100.0 % (98-100), its interval reaches the band; "
        "b / paper under: 80 of 100 chunks, 80.0 % (71-87), clear of the band")
