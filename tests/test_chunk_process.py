"""A run advanced in a process of its own (dashboard.serving.chunk_process): same chunks, Stop, errors,
and no deadlock of the caller's BLAS while its other threads multiply matrices."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ncld_core.config import RunConfig
from dashboard.serving.chunk_process import ChunkProcess, advance, process_context
from dashboard.serving.priority import autogroups_on

needs_fork_server = pytest.mark.skipif(process_context() is None, reason="this platform has no fork server")


def _config(**kw):
    base = dict(n_instances=400, chunk_size=100, n_features=5, n_labels=6, n_neighbors=4, models=["ELM-O", "ELM-II"],
                schedule="growth@200")
    return RunConfig(**{**base, **kw})


@needs_fork_server
def test_the_process_yields_the_chunks_of_the_run_in_this_process():
    cfg = _config()
    here = list(cfg.runner().iter_run(cfg.build_stream()))
    with ChunkProcess(cfg.runner(), cfg.build_stream()) as proc:
        answers = [proc.next() for _ in range(len(here) + 1)]
    assert [kind for kind, _, _ in answers] == ["chunk"] * len(here) + ["done"]
    for mine, (_, theirs, seconds) in zip(here, answers):
        assert seconds >= 0
        assert theirs.chunk == mine.chunk and theirs.is_change == mine.is_change
        assert theirs.true_cardinality == mine.true_cardinality
        assert theirs.metrics == mine.metrics and theirs.cumulative == mine.cumulative
        assert set(theirs.seconds) == set(mine.seconds) == {"ELM-O", "ELM-II", "all-negative", "noisy-prior"}
    assert any(r.metrics for r in here)  # chunks after the first are scored


def test_the_page_script_run_again_by_a_child_process_draws_nothing(monkeypatch):
    """Streamlit runs dashboard/app.py as __main__, and a process the fork server starts (a run's, an upload
    parse's) runs its parent's __main__ file again, as __mp_main__: it drew the whole page without a server
    before each run's first chunk (about 500 warning lines in the server's log per run, 0.4 s). Under that name
    the file must draw nothing, and not even import Streamlit."""
    import runpy
    from pathlib import Path

    import streamlit

    app = Path(__file__).resolve().parents[1] / "dashboard" / "app.py"
    called = []
    for name in ("set_page_config", "navigation", "sidebar"):
        monkeypatch.setattr(streamlit, name, lambda *a, _n=name, **k: called.append(_n))
    with monkeypatch.context() as m:  # Streamlit unloaded while the child's run of the file happens
        for k in [k for k in sys.modules if k == "streamlit" or k.startswith("streamlit.")]:
            m.delitem(sys.modules, k)
        runpy.run_path(str(app), run_name="__mp_main__")
        assert called == [] and "streamlit" not in sys.modules
    # run as __main__ (as Streamlit does), the same file draws the page: the guard is what spares the child
    with pytest.raises(Exception):  # noqa: B017 - the stubs return None: drawing gets past set_page_config only
        runpy.run_path(str(app), run_name="__main__")
    assert called[0] == "set_page_config"


@needs_fork_server
def test_a_killed_process_answers_an_error_and_closes():
    cfg = _config(n_instances=2000, chunk_size=1000, n_hidden=1500)
    proc = ChunkProcess(cfg.runner(), cfg.build_stream())
    assert proc.next()[0] == "chunk" and proc.is_alive()
    proc.kill()
    kind, message, _ = proc.next()
    assert kind == "error" and "ended unexpectedly" in message and "exit code -9" in message
    proc.close()
    assert not proc.is_alive()


def test_advance_reports_the_end_and_errors_without_raising():
    def failing(exc):
        yield 1
        raise exc

    gen = failing(ValueError("chunk_size: too large"))
    assert advance(gen)[:2] == ("chunk", 1)
    assert advance(gen) == ("error", "chunk_size: too large", 0.0)
    gen = failing(KeyError("x"))
    next(gen)
    assert advance(gen) == ("error", "KeyError: 'x'", 0.0)
    assert advance(iter([])) == ("done", None, 0.0)


def test_a_platform_without_a_fork_server_gets_a_clear_error(monkeypatch):
    from dashboard.serving import chunk_process

    monkeypatch.setattr(chunk_process, "process_context", lambda: None)
    with pytest.raises(ValueError, match="context: this platform has no fork server"):
        ChunkProcess(None, None)


# Threads multiplying matrices large enough for OpenBLAS to use its thread pool until the main thread, starting run
# processes one after another, has started two and two seconds have passed (at most four seconds: a hung main
# thread must not keep them burning the cores); prints "finished" when every thread is done. (A bound in processes and time, not a count of products:
# the old count took as much CPU as make test's other worker could spare.)
_HARNESS = textwrap.dedent("""
    import multiprocessing, sys, threading, time
    import numpy as np
    from ncld_core.config import RunConfig
    from dashboard.serving.chunk_process import ChunkProcess

    context = multiprocessing.get_context(sys.argv[1]) if sys.argv[1] == "fork" else None
    cfg = RunConfig(n_instances=60, chunk_size=20, n_features=3, n_labels=4, n_neighbors=3, models=["ELM-O"],
                    references=False)
    stream = cfg.build_stream()

    def multiply(seed):
        rng = np.random.default_rng(seed)
        a, b = rng.standard_normal((50_000, 8)), rng.standard_normal((6, 8))
        cap = time.monotonic() + 4.0  # when forking hangs the main thread, the products end anyway (CPU of make test)
        while not stop.is_set() and time.monotonic() < cap:
            (a @ b.T).sum()

    stop = threading.Event()
    threads = [threading.Thread(target=multiply, args=(i,), daemon=True) for i in range(4)]
    for t in threads:
        t.start()
    started = 0
    end = time.monotonic() + 2.0
    while started < 2 or time.monotonic() < end:
        with ChunkProcess(cfg.runner(), stream, context=context) as proc:
            assert proc.next()[0] == "chunk"
        started += 1
    stop.set()
    for t in threads:
        t.join()
    print("finished", started, flush=True)
""")


def _harness(method: str, timeout: float) -> str | None:
    """The harness's output, or None when it had not finished after ``timeout`` seconds (then killed)."""
    # OpenBLAS's own thread pool is what deadlocks: never limited to one thread by the caller's environment
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    try:
        done = subprocess.run([sys.executable, "-c", _HARNESS, method], capture_output=True, text=True,
                              timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@needs_fork_server
def test_run_processes_started_while_other_threads_multiply_matrices_do_not_deadlock_them():
    """The dashboard's bug: ten visitors pressing Run at once left eight in 'starting' forever, their script
    threads waiting inside a matrix product of the stream build (py-spy). Forking the multithreaded server
    while other threads ran OpenBLAS deadlocked OpenBLAS; the fork server never forks the caller."""
    out = _harness("forkserver", timeout=240)
    assert out is not None and out.startswith("finished"), "the threads' matrix products never finished"
    assert int(out.split()[1]) >= 2


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork on this platform")
def test_the_harness_catches_the_deadlock_of_forking_the_caller():
    """The same harness with the caller forked (what the dashboard did before): the threads hang (this checks
    the test above can fail). np.show_config names OpenBLAS here; another BLAS may not hang."""
    if "openblas" not in str(np.show_config(mode="dicts")).lower():
        pytest.skip("the deadlock is OpenBLAS's")
    # A race: most tries hang, one in several finishes first (seen here); three tries, one hang suffices.
    outcomes = []
    for _ in range(3):
        # 8 s: the harness finishes in 2-3 s when nothing hangs (its threads stop after two processes and 2 s)
        outcomes.append(_harness("fork", timeout=8))
        if outcomes[-1] is None:
            break
    assert outcomes[-1] is None, f"forking the caller never hung in {len(outcomes)} tries: {outcomes}"


@needs_fork_server
@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="no process priorities on this platform")
def test_the_process_computes_at_the_niceness_asked_and_a_bad_one_is_named():
    cfg = _config(n_instances=200, schedule="")
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    with ChunkProcess(cfg.runner(), cfg.build_stream(), niceness=7) as proc:
        assert proc.next()[0] == "chunk"  # the niceness is set before the first chunk
        pid = proc.process.pid
        assert os.getpriority(os.PRIO_PROCESS, pid) == min(19, mine + 7)
        if autogroups_on():  # niceness counts only within an autogroup, so the run has its own
            assert os.getsid(pid) == pid != os.getsid(0)
            with open(f"/proc/{pid}/autogroup") as group:
                assert group.read().split()[-1] == "7"
    with ChunkProcess(cfg.runner(), cfg.build_stream()) as proc:
        assert proc.next()[0] == "chunk"
        assert os.getpriority(os.PRIO_PROCESS, proc.process.pid) == mine  # 0: the caller's
        assert os.getsid(proc.process.pid) == os.getsid(0)  # and the caller's session
    for bad in (-1, 20, 2.5, True):
        with pytest.raises(ValueError, match="^niceness must be an integer in"):
            ChunkProcess(cfg.runner(), cfg.build_stream(), niceness=bad)


# A "server": a run process whose chunk takes minutes (the runner sleeps), its pid printed once it computes.
_SLOW_RUNNER = textwrap.dedent("""
    import time

    class SlowRunner:
        def iter_run(self, stream):
            print("computing", flush=True)
            time.sleep(120)
            yield None
""")
_SERVER = textwrap.dedent("""
    from slow_runner import SlowRunner
    from dashboard.serving.chunk_process import ChunkProcess

    proc = ChunkProcess(SlowRunner(), None)
    print(proc.process.pid, flush=True)
    proc.next()  # blocks for the chunk: the test kills this process meanwhile
""")


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"  # a zombie has ended
    except FileNotFoundError:
        return True


@needs_fork_server
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_run_process_ends_when_the_server_is_killed_in_the_middle_of_a_chunk(tmp_path):
    import signal
    import time

    (tmp_path / "slow_runner.py").write_text(_SLOW_RUNNER)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    server = subprocess.Popen([sys.executable, "-c", _SERVER], stdout=subprocess.PIPE, text=True, env=env)
    child = None

    import queue
    import threading

    lines = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in server.stdout], daemon=True).start()

    def line(timeout=60.0) -> str:  # a hung server fails the test, not make test's time
        try:
            return lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no line from the server in {timeout:g} s") from None

    try:
        child = int(line())
        assert line().strip() == "computing"  # the child is in its chunk
        assert not _gone(child)
        server.kill()  # SIGKILL: nothing of the server's runs
        server.wait(timeout=10)
        deadline = time.monotonic() + 15
        while not _gone(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _gone(child), "the run process outlived its server by 15 s (its chunk takes 120 s)"
    finally:
        server.kill()
        if child is not None and not _gone(child):
            os.kill(child, signal.SIGKILL)


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "polling"])
def test_end_with_ends_the_process_when_the_watched_one_ends(pidfd):
    """Both ways of waiting (a pid file descriptor; looking every POLL_S where there is none): the process
    ends with code 1 soon after the one it watches, not before, and says so on stderr."""
    from dashboard.serving.fork_server import end_with

    with pytest.raises(ValueError, match="^pid: a process cannot wait for its own end"):
        end_with(os.getpid())
    script = textwrap.dedent(f"""
        import os, subprocess, sys, time
        from dashboard.serving import fork_server
        if not {pidfd} and hasattr(os, "pidfd_open"):
            del os.pidfd_open  # a platform without it
        elif {pidfd}:  # the pid file descriptor is the way waited on (not the polling fallback)
            opened = os.pidfd_open
            def pidfd_open(pid, *args):
                print("pidfd", flush=True)
                return opened(pid, *args)
            os.pidfd_open = pidfd_open
        fork_server.POLL_S = 0.1
        watched = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.8)"])
        fork_server.end_with(watched.pid)
        time.sleep(0.3)
        print("alive while it runs", flush=True)
        watched.wait()
        time.sleep(3)
        print("outlived it", flush=True)
    """)
    if pidfd and not hasattr(os, "pidfd_open"):
        pytest.skip("no pidfd_open on this platform")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    lines = [line for line in done.stdout.split("\n") if line]
    assert lines == (["pidfd"] if pidfd else []) + ["alive while it runs"], done
    assert done.returncode == 1 and "ended; process" in done.stderr, done
