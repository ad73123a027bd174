"""Runs and sweeps on a Dask cluster (ncld_core.eval.dask_backend, dashboard.serving.dask_run): the same records
and numbers as the local path, Stop at once, and clear messages when the setting is on but dask is missing."""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import psutil
import pytest

from dashboard.serving import dask_run
from dashboard.serving.dask_run import SCHEDULER_ENV, DaskChunkRun
from dashboard.serving.live_run import LiveRun
from ncld_core.config import RunConfig
from ncld_core.eval import dask_backend
from ncld_core.eval.dask_backend import as_finished
from ncld_core.eval.sweep import sweep
from tests.marked_runner import MarkedRunner

distributed = pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[1]


def _config(**kw):
    base = dict(n_instances=400, chunk_size=100, n_features=5, n_labels=6, n_neighbors=4, n_hidden=40,
                models=["ELM-O", "ELM-II"],
                schedule="growth@200")
    return RunConfig(**{**base, **kw})


@pytest.fixture(scope="module")
def cluster():
    """A small in-process cluster: two single-threaded workers (fast to start, no pickling to other processes)."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None,
                                  silence_logs=40) as lc:
        yield lc


@pytest.fixture(scope="module")
def client(cluster):
    with distributed.Client(cluster, set_as_default=False) as c:
        yield c


@pytest.fixture(scope="module")
def process_cluster():
    """One worker in a process of its own, as a deployment has: nothing shared with this process (the runner
    and stream are serialised; the actor's handle finds no worker here). The worker imports this checkout."""
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), old) if p)
    try:
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                      silence_logs=40) as lc:
            yield lc
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


@pytest.fixture
def configured(process_cluster, monkeypatch):
    """The setting on, pointing at a cluster of processes; the server's shared client closed afterwards."""
    monkeypatch.setenv(SCHEDULER_ENV, process_cluster.scheduler_address)
    yield process_cluster.scheduler_address
    dask_run.shared_client(process_cluster.scheduler_address).close()


def _is_nan(v):
    return isinstance(v, float) and math.isnan(v)


def _same_chunks(theirs, mine):
    assert len(theirs) == len(mine) > 1
    for a, b in zip(theirs, mine):
        assert (a.chunk, a.start, a.stop, a.is_change) == (b.chunk, b.start, b.stop, b.is_change)
        assert a.true_cardinality == b.true_cardinality and a.observed_cardinality == b.observed_cardinality
        assert a.metrics == b.metrics and a.cumulative == b.cumulative  # exact: same numbers
        assert a.diagnostics.keys() == b.diagnostics.keys()
        for name in a.diagnostics:
            ra, rb = a.diagnostics[name].to_dict(), b.diagnostics[name].to_dict()
            assert ra.keys() == rb.keys()
            for key in ra.keys() - {"seconds"}:  # timings differ; every computed value is the same
                assert ra[key] == rb[key] or (_is_nan(ra[key]) and _is_nan(rb[key])), key
        assert set(a.seconds) == set(b.seconds)


def test_the_actor_yields_the_chunks_of_the_local_run(client):
    cfg = _config()
    here = list(cfg.runner().iter_run(cfg.build_stream()))
    with DaskChunkRun(cfg.runner(), cfg.build_stream(), client=client) as run:
        answers = [run.next() for _ in range(len(here) + 1)]
        assert not run.is_alive()  # ended with "done"
    assert [kind for kind, _, _ in answers] == ["chunk"] * len(here) + ["done"]
    assert all(seconds > 0 for _, _, seconds in answers[:-1])
    _same_chunks([value for _, value, _ in answers[:-1]], here)


class _FailingRunner:
    """A runner whose first chunk raises a ValueError, as a run with a bad input does."""

    def iter_run(self, stream):
        raise ValueError(f"chunk_size: too large for {stream}")
        yield


def test_the_actor_reports_a_bad_run_as_an_error_message(client):
    with DaskChunkRun(_FailingRunner(), "the stream", client=client) as run:
        answer = run.next()
        assert not run.is_alive()
    assert answer == ("error", "chunk_size: too large for the stream", 0.0)


class _SlowRunner:
    """A runner whose chunks take ``seconds`` each (Stop must not wait for one)."""

    def __init__(self, seconds):
        self.seconds = seconds

    def iter_run(self, stream):
        while True:
            time.sleep(self.seconds)
            yield stream


def test_kill_ends_a_waiting_next_at_once(client):
    run = DaskChunkRun(_SlowRunner(1.5), "chunk", client=client)
    answers = []
    waiter = threading.Thread(target=lambda: answers.append(run.next()))
    waiter.start()
    time.sleep(0.3)
    t0 = time.perf_counter()
    run.kill()
    waiter.join(timeout=5)
    assert not waiter.is_alive() and time.perf_counter() - t0 < 1.0  # before the chunk would have ended
    assert answers == [("error", "the run was stopped", 0.0)]
    assert not run.is_alive()
    assert run.next() == ("error", "the run was stopped", 0.0)


# ---------------------------------------------------------------- what Stop does on Dask (docs/deploy.md, section 2)
def _marks(mark: Path) -> list[tuple[int, float]]:
    return [(int(p), float(t)) for p, t in (line.split() for line in mark.read_text().splitlines())]


def _until(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _actors(client) -> int:
    """Actors held by the cluster's workers."""
    return sum(client.run(lambda dask_worker: len(dask_worker.state.actors)).values())


def _stop_mid_chunk(client, mark: Path, chunk_s: float):
    """A run whose chunks take ``chunk_s``, asked for its first chunk and stopped once that chunk is under way on the
    worker: ``(run, its answer, seconds kill() took, the chunk's process id, the time it started)``."""
    run = DaskChunkRun(MarkedRunner(chunk_s, mark), "chunk", client=client)
    answers = []
    waiter = threading.Thread(target=lambda: answers.append(run.next()))
    waiter.start()
    assert _until(mark.is_file, 300), "the chunk did not start"  # (a cold worker imports and forks first)
    (pid, started), = _marks(mark)
    t0 = time.perf_counter()
    run.kill()
    kill_s = time.perf_counter() - t0
    waiter.join(timeout=5)
    assert not waiter.is_alive()
    return run, answers[0], kill_s, pid, started


@pytest.fixture(scope="module")
def worker_processes():
    """One worker in a process of its own, not daemonic (``distributed.worker.daemon``: False, what a deployment sets
    with ``DASK_DISTRIBUTED__WORKER__DAEMON=False``): it may start processes, as the run's actor does."""
    import dask

    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), old) if p)
    try:
        with dask.config.set({"distributed.worker.daemon": False}):  # read as the worker process starts
            lc = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                          silence_logs=40)
        with lc:
            yield lc
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


@pytest.fixture(scope="module")
def one_worker():
    """One single-threaded worker in this process: its one actor thread computes every run's calls in turn."""
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None,
                                  silence_logs=40) as lc:
        yield lc


@pytest.mark.parametrize("where", ["one_worker", "worker_processes"])
def test_stop_ends_the_workers_chunk_at_once_and_a_new_run_starts_at_once(where, request, tmp_path):
    """Where the worker may start processes, the actor computes in one of its own: Stop returns at once, the chunk
    under way (a minute long) is ended by killing that process, the actor is released, the stopped run starts no
    other chunk, and a new run on the same worker (one actor thread) gets its first chunk without waiting for the
    stopped one. Bounds: 1 s for kill() (it returned in well under 0.1 s here), 10 s for the process, the actor and
    the new run's first chunk (a minute without the interruption)."""
    cluster = request.getfixturevalue(where)
    with distributed.Client(cluster, set_as_default=False) as client:
        mark = tmp_path / "chunks"
        run, answer, kill_s, pid, _ = _stop_mid_chunk(client, mark, chunk_s=60.0)
        assert answer == ("error", "the run was stopped", 0.0) and kill_s < 1.0
        assert run.next() == ("error", "the run was stopped", 0.0)  # nothing is delivered after the Stop
        worker_pids = set(client.run(os.getpid).values())
        assert pid not in worker_pids and pid != os.getpid()  # the chunk was computed in a process of its own
        assert _until(lambda: _gone(pid) and _actors(client) == 0, timeout=10), "the chunk or the actor outlived Stop"
        t0 = time.monotonic()
        cfg = _config()
        with DaskChunkRun(cfg.runner(), cfg.build_stream(), client=client) as new:
            kind, _, _ = new.next()
        assert kind == "chunk" and time.monotonic() - t0 < 10.0
        assert len(_marks(mark)) == 1  # the stopped run started no second chunk


def test_on_a_daemonic_worker_stop_frees_the_run_at_once_and_the_worker_ends_its_one_chunk(process_cluster, tmp_path):
    """A daemonic worker (the default of ``dask worker``'s nanny) may start no process: the actor computes in the
    worker's actor thread, and Stop cannot end the chunk under way. Stop still returns at once and nothing is
    delivered after it; the worker finishes that one chunk (no other), then releases the actor, and a new run on
    the same worker gets its first chunk once that chunk has ended: the bound is one chunk. Measured here with 3 s
    chunks: the new run's first chunk came after the stopped chunk's end and within 10 s of the Stop."""
    chunk_s = 3.0
    with distributed.Client(process_cluster, set_as_default=False) as client:
        mark = tmp_path / "chunks"
        run, answer, kill_s, pid, started = _stop_mid_chunk(client, mark, chunk_s)
        stopped_at = time.time()
        assert answer == ("error", "the run was stopped", 0.0) and kill_s < 1.0
        assert pid in set(client.run(os.getpid).values())  # the worker's own thread computes it
        cfg = _config()
        with DaskChunkRun(cfg.runner(), cfg.build_stream(), client=client) as new:
            kind, _, _ = new.next()
            assert new.chunk_pid() is None
        came = time.time()
        assert kind == "chunk" and started + chunk_s <= came < stopped_at + chunk_s + 10.0
        assert _until(lambda: _actors(client) == 1, timeout=10)  # the stopped run's actor released (the new one's kept
        # until its handle goes)
        assert len(_marks(mark)) == 1  # the worker finished the chunk under way and started no other


def test_a_dashboard_run_on_the_cluster_gives_the_records_of_the_local_run(configured, monkeypatch):
    cfg = _config()

    def finish(run):
        assert run.begin()
        deadline = time.monotonic() + 60
        while run.wait(len(run.chunks), timeout=1.0)[1] == "running":
            assert time.monotonic() < deadline
        return run

    on_cluster = finish(LiveRun(cfg))
    monkeypatch.delenv(SCHEDULER_ENV)
    local = finish(LiveRun(cfg, use_process=False))
    assert on_cluster.mode == "dask" and local.mode == "thread"
    assert on_cluster.status == local.status == "done", on_cluster.error
    _same_chunks(on_cluster.chunks, local.chunks)
    pd.testing.assert_frame_equal(on_cluster.result().summary().drop(columns="seconds"),
                                  local.result().summary().drop(columns="seconds"), check_exact=True)


def test_stop_ends_a_dashboard_run_on_the_cluster(configured):
    run = LiveRun(_config(n_instances=3000, chunk_size=100))
    assert run.begin() and run.mode == "dask"
    run.wait(0, timeout=30)
    run.stop()
    assert run.join(timeout=5)
    kept = len(run.chunks)
    assert run.status == "stopped" and 0 < kept < 30 and not run.process_alive
    time.sleep(0.3)
    assert len(run.chunks) == kept  # nothing arrives after Stop


@pytest.mark.parametrize("method", ["fast", "runner"])
def test_a_sweep_on_the_cluster_gives_the_local_numbers(client, method):
    cfg = _config(models=["ELM-II"], n_instances=300)
    stream = cfg.build_stream()
    betas, gammas = [0.2, 0.5, 0.8], [0.0, 2**-6]
    calls = []
    local = sweep(cfg, betas, gammas, stream=stream, method=method)
    remote = sweep(cfg, betas, gammas, stream=stream, method=method, client=client,
                   progress=lambda done, total: calls.append((done, total)))
    pd.testing.assert_frame_equal(remote, local, check_exact=True)
    assert remote.attrs["firings"] == local.attrs["firings"] and remote.attrs["chunks"] == local.attrs["chunks"]
    assert remote.attrs["method"] == method
    total = 6 if method == "runner" else 2  # one task per grid point, or one block of betas per worker thread
    assert calls == [(k, total) for k in range(1, total + 1)]


def test_as_finished_gives_every_result_on_the_cluster_and_here(client):
    assert sorted(as_finished(abs, [-1, 2, -3], client)) == [(0, 1), (1, 2), (2, 3)]
    assert list(as_finished(abs, [-1, 2, -3])) == [(0, 1), (1, 2), (2, 3)]


def test_the_benchmarks_share_the_cluster_handling():
    from benchmarks import parallel

    assert parallel.as_finished is dask_backend.as_finished and parallel.dask_client is dask_backend.dask_client


def test_no_setting_means_the_local_path(monkeypatch):
    monkeypatch.delenv(SCHEDULER_ENV, raising=False)
    assert dask_run.scheduler_address() is None and dask_run.configured_client() is None
    monkeypatch.setenv(SCHEDULER_ENV, "  ")
    assert dask_run.scheduler_address() is None
    run = LiveRun(_config(), use_process=False)
    run.begin()
    assert run.mode == "thread"
    run.stop()


def test_the_setting_without_dask_is_a_clear_message(monkeypatch):
    monkeypatch.setenv(SCHEDULER_ENV, "tcp://127.0.0.1:1")
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed now fails
    with pytest.raises(ValueError, match=f"{SCHEDULER_ENV} is set, but dask.distributed is not installed"):
        dask_run.configured_client()
    run = LiveRun(_config())
    run.begin()
    assert run.status == "error" and "dask.distributed is not installed" in run.error


def test_a_scheduler_nobody_runs_is_a_clear_message(monkeypatch):
    monkeypatch.setenv(SCHEDULER_ENV, "tcp://127.0.0.1:1")
    monkeypatch.setattr(dask_run, "CONNECT_TIMEOUT_S", 0.5)
    with pytest.raises(ValueError, match=f"{SCHEDULER_ENV}: no Dask scheduler answers"):
        dask_run.configured_client()
