"""Thread budgets (ncld_core/threads.py): the policy, the process budget, and the runner applying it per chunk."""

from __future__ import annotations

import pytest

from ncld_core.config import RunConfig
from ncld_core.eval.runner import PrequentialRunner
from ncld_core.threads import THREADED_FROM, current_blas_threads, resolve, set_budget, threads_for


def test_policy_one_thread_for_small_models_cores_per_run_for_large():
    assert threads_for(n_hidden=300, cores=8) == 1
    assert threads_for(n_hidden=THREADED_FROM, cores=8) == 8
    assert threads_for(n_hidden=4000, cores=8, concurrent_runs=3) == 2
    assert threads_for(n_hidden=4000, cores=2, concurrent_runs=5) == 1


def test_budget_overrides_auto_and_integers_override_budget():
    try:
        set_budget(3)
        assert resolve("auto", n_hidden=300) == 3 and resolve(2) == 2
        set_budget(None)
        assert resolve("auto", n_hidden=300) == 1
    finally:
        set_budget(None)


@pytest.mark.parametrize("bad", [0, -1, 1.5, "two", True])
def test_bad_thread_counts_are_refused_naming_the_parameter(bad):
    with pytest.raises(ValueError, match="n_threads"):
        PrequentialRunner(["ELM-O"], n_threads=bad)
    with pytest.raises(ValueError, match="n_threads"):
        set_budget(bad)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_the_runner_limits_blas_threads_during_each_chunk_and_restores_them(n_threads):
    before = current_blas_threads()
    cfg = RunConfig(n_instances=600, chunk_size=200, models=("ELM-O",), references=False, n_hidden=30)
    runner = PrequentialRunner(list(cfg.models), cfg.chunk_size, model_params=cfg.model_params(),
                               references=False, n_threads=n_threads)
    seen = []
    chunks = list(runner.iter_run(cfg.build_stream(), on_scores=lambda *a: seen.append(current_blas_threads())))
    assert len(chunks) == 3 and seen == [n_threads, n_threads]
    assert current_blas_threads() == before  # not held across the yield, nor after the run


def test_results_do_not_depend_on_the_thread_count():
    cfg = RunConfig(n_instances=600, chunk_size=200, models=("ELM-O",), n_hidden=30)
    stream = cfg.build_stream()
    runs = []
    for n in (1, 2):
        runner = PrequentialRunner(list(cfg.models), cfg.chunk_size, model_params=cfg.model_params(),
                                   references=False, n_threads=n)
        runs.append([c.cumulative.get("ELM-O") for c in runner.iter_run(stream)])
    assert runs[0] == runs[1]


def test_a_models_n_threads_limits_its_own_methods():
    from ncld_core.threads import limited

    class Probe:
        n_hidden = 300

        def __init__(self, n_threads):
            self.n_threads = n_threads

        @limited
        def threads_inside(self):
            return current_blas_threads()

    before = current_blas_threads()
    assert Probe(1).threads_inside() == 1 and Probe(2).threads_inside() == 2
    assert Probe("auto").threads_inside() == 1  # 300 hidden nodes: one thread
    assert current_blas_threads() == before


def test_elmncld_validates_n_threads_by_name():
    import numpy as np

    from ncld_core.model import ELMNCLD

    X, Y = np.random.default_rng(0).normal(size=(60, 4)), np.eye(60, 3, dtype=int)
    with pytest.raises(ValueError, match="n_threads"):
        ELMNCLD(n_hidden=20, n_neighbors=5, n_threads=0).partial_fit(X, Y)
    model = ELMNCLD(n_hidden=20, n_neighbors=5, n_threads=1, random_state=0).partial_fit(X, Y)
    same = ELMNCLD(n_hidden=20, n_neighbors=5, n_threads=2, random_state=0).partial_fit(X, Y)
    assert np.array_equal(model.ranking_scores(X), same.ranking_scores(X))


def test_the_bench_section_judges_the_issue_targets_from_its_numbers():
    from benchmarks import threads as bench

    def case(idle, one_busy, two_busy):
        return {str(k): {"1": v[0], "2": v[1], "auto": v[2], "auto_threads": 1}
                for k, v in enumerate((idle, one_busy, two_busy))}

    good = {"cores": 2, "datasets": {"rcv1subset5": case((100, 80, 100), (70, 30, 70), (50, 20, 50))}}
    rows = bench.target_rows(good)
    assert [r[2] for r in rows] == ["**met**", "**met**"] and rows[0][1].startswith("0.70")
    slow = {"cores": 2, "datasets": {"rcv1subset5": case((100, 80, 100), (40, 30, 40), (50, 70, 50))}}
    rows = bench.target_rows(slow)
    assert rows[0][2].startswith("**missed") and rows[1][2] == "**missed: 1.40x**" and "2 busy" in rows[1][1]
    assert "| rcv1subset5 | 1 | 40 | 30 | 40 (1) | 1.00 | 0.40 |" in bench.render(slow)
    assert bench.target_rows(None)[0][2] == "not measured"
    # "auto" resolved to 1, also timed as "1": the setting is judged by both columns' chunks pooled, not by the
    # gap between two columns of the same setting (timing noise: 0.74 in one make bench)
    noisy = {"cores": 2, "datasets": {"enron": case((100, 80, 100), (60, 25, 45), (50, 20, 50))}}
    assert bench.target_rows(noisy)[0][2] == "**missed: 1.33x**"
    noisy["datasets"]["enron"]["1"]["setting"] = 52.0
    assert bench.target_rows(noisy)[0] == ["threads: the setting within 1.25x of the best thread count, each load "
                                           "case", "worst 1.00x (enron, 0 busy)", "**met**"]
    assert "| enron | 1 | 60 | 25 | 45 (1) | 1.00 | 0.52 |" in bench.render(noisy)


def test_auto_inside_a_runner_limit_follows_it():
    from ncld_core.threads import limit

    with limit(2):
        assert resolve("auto", n_hidden=300) == 2  # the enclosing limit, not the policy's 1
        with limit("auto"):
            assert current_blas_threads() == 2
    assert resolve("auto", n_hidden=300) == 1


def test_a_limit_entered_in_another_thread_does_not_leak_into_this_one():
    import threading

    from ncld_core.threads import limit

    entered, leave = threading.Event(), threading.Event()

    def other():
        with limit(2):
            entered.set()
            leave.wait(10)

    t = threading.Thread(target=other)
    t.start()
    try:
        entered.wait(10)
        assert resolve("auto", n_hidden=300) == 1  # the other thread's limit is not this thread's scope
    finally:
        leave.set()
        t.join(10)
