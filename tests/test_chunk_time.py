"""The time estimate's speed is re-measured from the runs' own chunk times (ncld_core.model.chunk_time).

Issue 24 item 5: one timing of a matrix product taken under load set the speed for the server's life, and
enron was estimated at 2.6 s per chunk against 0.18 s measured. The calibration replaces it with the
rates finished runs imply; on three datasets, each estimated from the other two's runs (leave one out),
the estimate is within a factor of 2 of the run's measured median chunk time.
"""

from __future__ import annotations

import os
import statistics
import time

import pytest

from dashboard.checks import settings_cost
from ncld_core.config import RunConfig
from ncld_core.data import load_dataset
from ncld_core.model.chunk_time import TimeCalibration, measured_chunk_seconds
from ncld_core.model.cost import estimate_cost

ENRON = dict(chunk_size=250, n_hidden=300, n_features=1001, n_labels=53, n_neighbors=10, n_models=3)


def test_a_rate_measured_under_load_is_replaced_by_the_runs_measured_times():
    cost = estimate_cost(**ENRON)
    cal = TimeCalibration(seed_flops_per_s=cost.flops / 10.0)  # far too slow: the situation
    measured = [1.5, 0.18, 0.2, 0.17, 0.19]
    assert cal.seconds_per_chunk(cost) > 14 * 0.18
    assert cal.observe(cost, measured)
    assert cal.seconds_per_chunk(cost) == pytest.approx(statistics.median(measured[1:]), rel=1e-9)
    assert cal.n_runs == 1


def test_the_rate_is_the_median_of_the_last_runs_so_one_odd_run_moves_it_little():
    cost = estimate_cost(**ENRON)
    cal = TimeCalibration(seed_flops_per_s=1e9, window=3)
    for t in (0.2, 0.2, 5.0):  # the last under heavy load
        cal.observe(cost, [0.0, t, t])
    assert cal.seconds_per_chunk(cost) == pytest.approx(0.2, rel=1e-9)
    for t in (0.4, 0.4):  # the machine got slower for good: the window forgets the old runs
        cal.observe(cost, [0.0, t, t])
    assert cal.seconds_per_chunk(cost) == pytest.approx(0.4, rel=1e-9)


def test_runs_that_imply_nothing_leave_the_rate_alone():
    cost = estimate_cost(**ENRON)
    cal = TimeCalibration(seed_flops_per_s=2e9)
    assert not cal.observe(cost, [])
    assert not cal.observe(cost, [0.0, 0.0])
    assert cal.n_runs == 0 and cal.scale() == 1.0
    assert cal.seconds_per_chunk(cost) == cost.seconds_per_chunk(2e9)
    assert measured_chunk_seconds([3.0]) == measured_chunk_seconds([1.0, 3.0]) == 3.0  # chunk 0 alone counts


@pytest.mark.parametrize("kwargs", [dict(window=0), dict(seed_flops_per_s=0.0), dict(seed_flops_per_s=-1.0)])
def test_bad_settings_are_refused_by_name(kwargs):
    name = next(iter(kwargs))
    with pytest.raises(ValueError, match=name):
        TimeCalibration(**kwargs)


def _measure(name: str, n_chunks: int = 6):
    """The dashboard's cost estimate of ``name`` at the default settings and its measured chunk times."""
    ds = load_dataset(name, paths=False)
    cfg = RunConfig(dataset=name, n_instances=min(250 * n_chunks, ds.n_instances))
    cost = settings_cost(cfg, ds.n_features, ds.n_labels, ds.n_instances)
    stream = cfg.stream.build_stream(dataset=ds)
    times, t0 = [], time.perf_counter()
    for _ in cfg.runner().iter_run(stream):
        now = time.perf_counter()
        times.append(now - t0)
        t0 = now
    return cost, times


@pytest.mark.datasets
@pytest.mark.slow  # measured times: alone (make test-slow), not beside the parallel suite, which doubled them
def test_estimate_within_2x_of_the_measured_median_on_three_datasets(data_dir):
    # On a machine with more than twice as many runnable processes as cores the chunk times themselves vary by
    # more than 2x from chunk to chunk (measured: enron 0.54-2.02 s at a load of 11 on 2 cores), and the Python
    # around the products slows down more than the products: no estimate can promise 2x there.
    # Under `make test` the other pytest worker keeps a core busy; then emotions measured 2.1x its estimate
    # (load 3 on 2 cores). The check is for a machine where this test has its core: run the file alone.
    load = os.getloadavg()[0]
    if load > (os.cpu_count() or 1):
        pytest.skip(f"the machine is busy (load {load:.1f} on {os.cpu_count()} cores): chunk times say nothing")
    names = ("emotions", "enron", "medical")
    runs = {}
    for _ in range(2):  # two rounds, interleaved: a burst of load from elsewhere hits every dataset alike
        for name in names:
            cost, times = _measure(name)
            runs[name] = (cost, runs.get(name, (cost, []))[1] + times[1:])
    for name in names:
        cal = TimeCalibration(seed_flops_per_s=1e7)  # an absurd seed: only the other runs can make it right
        for other in names:
            if other != name:
                assert cal.observe(*runs[other])
        cost, times = runs[name]
        measured = statistics.median(times)
        estimate = cal.seconds_per_chunk(cost)
        assert measured / 2 <= estimate <= 2 * measured, (name, estimate, measured)
