"""The server's runs without Streamlit (dashboard/serving/run_hub.py): a FIFO queue with a limit on the runs computing
at once and the place in line of each, one run per session, a closed session's run stopped and its slot freed
within seconds, and a run computed once (followed while it computes, replayed once finished, recomputed for
a new code version)."""

from __future__ import annotations

import dataclasses
import doctest
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import psutil
import pytest

from dashboard.serving import run_hub
from dashboard.serving.fork_server import process_context
from dashboard.serving.run_hub import PARSE, RunHub, ordinal, queue_text
from ncld_core.config import RunConfig
from dashboard.serving.limits import Limits

TINY = RunConfig(n_instances=60, chunk_size=20, n_features=3, n_labels=4, n_neighbors=3, models=["ELM-O"],
                 references=False)


def _cfg(seed: int) -> RunConfig:
    return RunConfig(**{**TINY.to_dict(), "seed": seed})


def _slow(seed: int) -> RunConfig:
    """30 chunks of about a tenth of a second each (more on a loaded machine): still running when stopped."""
    return RunConfig(n_instances=9000, chunk_size=300, n_features=20, n_labels=6, n_neighbors=5, n_hidden=600,
                     models=["ELM-O"], references=False, seed=seed)


def _watch(run, timeout: float = 120) -> str:
    """Show the run as a page does until it ends (a run still starting, begun by the hub's watchdog, is waited
    for too)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        _, status = run.wait(len(run.chunks), timeout=0.2)
        if status not in ("starting", "running"):
            return status
    pytest.fail(f"the run did not end within {timeout} s")


def _until(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def _cumulative(chunks) -> np.ndarray:
    return np.array([v for c in chunks for m in sorted(c.cumulative) for _, v in sorted(c.cumulative[m].items())])


def test_doctests():
    assert doctest.testmod(run_hub).failed == 0


def test_ordinals():
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101)] == \
        ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"]


def test_the_queue_admits_in_arrival_order_and_says_each_place():
    hub = RunHub(Limits(max_concurrent_runs=2), use_process=False, watch_s=0)
    runs = [hub.start(s, cfg)[0] for s, cfg in zip("abcd", [_slow(1), _slow(2), _cfg(3), _cfg(4)])]
    assert [r.queue_position() for r in runs] == [0, 0, 1, 2]
    assert [hub.position_of(s) for s in "abcd"] == [0, 0, 1, 2]
    assert (hub.running, hub.waiting) == (2, 2)
    assert runs[0].begin() and runs[1].begin()
    assert runs[2].begin() is False and runs[2].status == "starting"  # queued: not started
    hub.detach("a")  # a's visitor leaves: its run stops, c moves up, d is first in line
    assert runs[0].status == "stopped"
    assert [r.queue_position() for r in runs[1:]] == [0, 0, 1]
    assert runs[2].begin() is True
    runs[1].stop()  # b ends (Stop): at the next look its slot goes to d
    assert runs[3].queue_position() == 0 and hub.waiting == 0
    assert runs[3].begin() and _watch(runs[3]) == "done"
    for r in runs:
        r.stop()


def test_one_run_per_session():
    hub = RunHub(Limits(max_concurrent_runs=4), use_process=False, watch_s=0)
    first, _ = hub.start("a", _cfg(1))
    assert first.begin()
    second, role = hub.start("a", _cfg(2))  # the same visitor presses Run again, with other settings
    assert role == "computing" and second is not first
    assert first.status == "stopped"  # its first run is stopped, not left computing beside the second
    assert hub.running == 1 and hub.position_of("a") == 0
    second.stop()


def test_a_closed_session_frees_its_slot_within_seconds():
    alive = {"a", "b"}
    grace = Limits().session_grace_s
    hub = RunHub(Limits(max_concurrent_runs=1), use_process=False, watch_s=0.2, session_alive=lambda s: s in alive)
    a, _ = hub.start("a", dataclasses.replace(_slow(0), n_instances=60000))  # still running after the grace
    b, _ = hub.start("b", _cfg(3))
    a.begin()  # (the hub's watchdog may have begun it already: it begins the jobs it admits)
    assert _until(lambda: a.status == "running", timeout=10) and b.queue_position() == 1
    alive.discard("a")  # a's browser goes away (its Streamlit session ends)
    t0 = time.monotonic()
    assert _until(lambda: b.queue_position() == 0, timeout=grace + 5)
    assert grace <= time.monotonic() - t0 < grace + 3
    assert a.status == "stopped" and a.join(30)
    b.begin()  # (the hub's watchdog may have begun it already: it begins the jobs it admits)
    assert _watch(b) == "done"


def test_a_session_whose_connection_drops_and_comes_back_keeps_its_run():
    """A page's websocket that drops reconnects to its session within a second or two (measured in Chromium:
    under 1 s); until the session has been gone ``session_grace_s`` its run and place are kept."""
    alive, now = {"a", "b"}, [0.0]
    limits = Limits(max_concurrent_runs=1, session_grace_s=3.0)
    hub = RunHub(limits, use_process=False, watch_s=0, session_alive=lambda s: s in alive, clock=lambda: now[0])
    a, _ = hub.start("a", dataclasses.replace(_slow(0), n_instances=60000))
    b, _ = hub.start("b", _cfg(3))
    assert a.begin() and b.queue_position() == 1
    alive.discard("a")
    for t in (0.0, 1.0, 2.9):  # a blip: gone under the grace
        now[0] = t
        hub.reap()
        assert a.active and b.queue_position() == 1
    alive.add("a")  # reconnected: the clock of its absence starts again next time
    now[0] = 10.0
    hub.reap()
    alive.discard("a")
    now[0] = 12.0
    hub.reap()
    assert a.active and b.queue_position() == 1
    now[0] = 15.0  # gone for the whole grace: given up
    hub.reap()
    assert a.status == "stopped" and b.queue_position() == 0
    assert a.join(30)


@pytest.mark.parametrize("lane", ["run", "parse"])
def test_a_gone_session_given_up_while_its_job_is_being_begun_never_deadlocks(lane):
    """A reap gives up a gone session's job (stopping it) while another thread begins that job (the hub's admit
    thread, or the page's script): neither waits for the other for ever. The reap asks ``session_alive`` inside
    the hub; that is where this test lets the beginning thread reach the job first."""
    state = {"gone": False, "job": None, "began": None}
    asking, began, reaped = threading.Event(), threading.Event(), threading.Event()

    def begin():
        state["began"] = state["job"].begin()
        began.set()

    def session_alive(session_id):
        if not state["gone"]:
            return True
        threading.Thread(target=begin, daemon=True).start()
        assert asking.wait(10)  # the beginning thread asks the hub for the job's place now
        return False

    hub = RunHub(Limits(max_concurrent_runs=1, session_grace_s=0.0, upload_grace_s=0.0), use_process=False,
                 watch_s=0, session_alive=session_alive)
    if lane == "run":
        state["job"], _ = hub.start("a", _cfg(5))
    else:
        state["job"], _ = hub.parse("a", SMALL_ARFF, None, "toy")
    line = state["job"].waiting

    def waiting():
        asking.set()
        return line()

    state["job"].waiting = waiting
    state["gone"] = True
    reaper = threading.Thread(target=lambda: (hub.reap(), hub.reap(), reaped.set()), daemon=True)
    reaper.start()
    assert reaped.wait(10), "the reap never returned: it waits for the job, which waits for the hub"
    assert began.wait(10), "the job's begin never returned"
    assert state["began"] is False and state["job"].status == "stopped" and state["job"].mode is None
    assert hub.held("a") is None and hub.held("a", PARSE) is None and hub.running == 0


def test_a_run_is_computed_once_followed_then_replayed_with_identical_records():
    hub = RunHub(Limits(max_concurrent_runs=2), use_process=False, watch_s=0)
    first, role1 = hub.start("a", TINY)
    second, role2 = hub.start("b", TINY)  # pressed at the same time on the same preset
    assert (role1, role2) == ("computing", "following") and second is first
    assert first.begin() and second.begin() is False
    assert _watch(first) == "done" and _watch(second) == "done"
    hub.reap()
    third, role3 = hub.start("c", TINY)  # later, a third visitor
    assert role3 == "replayed" and third is not first and third.status == "done"
    assert hub.computations == 1 and hub.kept == 1
    np.testing.assert_array_equal(_cumulative(third.chunks), _cumulative(first.chunks))
    assert third.token != first.token and third.stream is first.stream
    # the same records as the core's own run: nothing else was replayed
    expected = list(TINY.runner().iter_run(TINY.build_stream()))
    np.testing.assert_allclose(_cumulative(third.chunks), _cumulative(expected), rtol=1e-9, atol=1e-12)


def test_a_finished_run_whose_session_left_before_a_reap_is_still_replayed():
    """The visitor's browser goes away after the run finished but before the hub kept it: the next visitor of the
    same settings gets the replay, not a new computation."""
    alive = {"a", "b"}
    hub = RunHub(Limits(max_concurrent_runs=1), use_process=False, watch_s=0, session_alive=lambda s: s in alive)
    first, _ = hub.start("a", TINY)
    assert first.begin() and _watch(first) == "done"
    alive.discard("a")
    second, role = hub.start("b", TINY)  # its reap detaches "a" first
    assert role == "replayed" and second.status == "done" and hub.computations == 1
    np.testing.assert_array_equal(_cumulative(second.chunks), _cumulative(first.chunks))


def test_a_visitor_leaving_a_followed_run_leaves_it_to_the_others():
    hub = RunHub(Limits(max_concurrent_runs=1), use_process=False, watch_s=0)
    run, _ = hub.start("a", TINY)
    hub.start("b", TINY)
    hub.start("c", TINY)
    assert [hub.others_watching(s) for s in "abc"] == [2, 2, 2] and hub.others_watching("nobody") == 0
    hub.detach("a")
    assert run.active  # b and c still follow it
    assert hub.others_watching("b") == 1 and hub.others_watching("a") == 0
    hub.detach("c")
    assert hub.others_watching("b") == 0  # what b's page says: the visitor it was started for has left
    assert run.begin() and _watch(run) == "done"


def test_two_visitors_pressing_run_at_once_from_threads_compute_once():
    hub = RunHub(Limits(max_concurrent_runs=2), use_process=False, watch_s=0)
    barrier, got = threading.Barrier(6), {}

    def press(session):
        barrier.wait()
        got[session] = hub.start(session, TINY)

    threads = [threading.Thread(target=press, args=(f"s{i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    roles = sorted(role for _, role in got.values())
    assert roles == ["computing"] + ["following"] * 5 and hub.computations == 1
    assert len({id(run) for run, _ in got.values()}) == 1
    run = next(iter(got.values()))[0]
    assert run.begin() and _watch(run) == "done"


def test_a_new_code_version_recomputes_and_kept_runs_are_bounded_in_number_and_age():
    version, now = ["v1"], [0.0]
    hub = RunHub(Limits(run_cache_entries=2, run_cache_ttl_s=100), use_process=False, watch_s=0,
                 fingerprint=lambda: version[0], clock=lambda: now[0])

    def finish(session, cfg):
        run, role = hub.start(session, cfg)
        if role == "computing":
            assert run.begin() and _watch(run) == "done"
            hub.reap()
        return role

    assert finish("a", TINY) == "computing"
    assert finish("a", TINY) == "replayed"
    version[0] = "v2"  # the code changed: the old run is not replayed
    assert finish("a", TINY) == "computing" and hub.computations == 2
    assert finish("a", _cfg(5)) == "computing"
    assert finish("a", _cfg(6)) == "computing"
    assert hub.kept == 2  # the oldest of three went
    assert finish("a", _cfg(6)) == "replayed"
    now[0] = 101.0  # past the age limit
    assert finish("a", _cfg(6)) == "computing" and hub.computations == 5


def test_the_hub_gives_each_run_its_share_of_blas_threads():
    from ncld_core.config import RunConfig
    from dashboard.serving.limits import Limits
    from ncld_core.threads import threads_for

    hub = RunHub(Limits(max_concurrent_runs=2), session_alive=lambda _: True, use_process=False)
    small, _ = hub.start("a", RunConfig(n_instances=400, chunk_size=200, n_hidden=50))
    large, _ = hub.start("b", RunConfig(n_instances=400, chunk_size=200, n_hidden=2000))
    try:
        assert small.n_threads == 1
        assert large.n_threads == threads_for(n_hidden=2000, concurrent_runs=2)
    finally:
        hub.detach("a")
        hub.detach("b")


def test_the_hub_gives_each_run_the_servers_niceness():
    from ncld_core.config import RunConfig
    from dashboard.serving.limits import Limits

    for niceness in (0, 12):
        hub = RunHub(Limits(run_niceness=niceness), session_alive=lambda _: True, use_process=False)
        run, _ = hub.start("a", RunConfig(n_instances=400, chunk_size=200, seed=niceness))
        try:
            assert run.niceness == niceness
        finally:
            hub.detach("a")


# --------------------------------------------------------------------------- sweeps: jobs of the same hub
def _sweep(n_betas: int = 2, *, estimate: bool = False, slow: bool = False):
    """A sweep asked of the hub: ``estimate``: every grid point a run of its own (progress per grid point);
    ``slow``: each point a run of 4 chunks like :func:`_slow`'s (still running when stopped)."""
    from ncld_core.eval.sweep import SweepJob

    cfg = dataclasses.replace(_slow(0), n_instances=1200) if slow else TINY
    if estimate:
        cfg = dataclasses.replace(cfg, model_rates="estimate")
    return SweepJob(cfg, "ELM-O", tuple(round(0.1 * (i + 1), 3) for i in range(n_betas)), (0.0,))


def test_a_sweep_waits_in_line_behind_a_run_and_the_hub_begins_it_when_its_slot_frees():
    """One queue for runs and sweeps: a sweep asked while the only slot computes a run is 1st in line; when the run
    ends, the hub's watchdog begins the sweep itself (nobody calls begin), and its steps come per grid point."""
    hub = RunHub(Limits(max_concurrent_runs=1), use_process=False, watch_s=0.1)
    run, _ = hub.start("a", _slow(1))
    sweep, role = hub.start("b", _sweep(3, estimate=True))
    assert role == "computing" and run.begin()
    assert sweep.queue_position() == 1 and hub.position_of("b") == 1 and hub.waiting == 1
    time.sleep(0.5)
    assert sweep.status == "starting" and not sweep.chunks  # waiting: not begun by the watchdog
    hub.detach("a")  # the run's page pressed Stop: its slot frees
    assert _until(lambda: sweep.status != "starting", timeout=5), "the hub did not begin the sweep"
    assert _watch(sweep) == "done"
    steps = sweep.chunks
    assert [(s.done, s.total) for s in steps] == [(1, 3), (2, 3), (3, 3)] and sweep.n_chunks == 3
    table = steps[-1].table
    assert len(table) == 3 and table["gm"].between(0, 1).all()
    assert hub.computations == 2


def test_the_same_sweep_is_computed_once_followed_then_replayed():
    hub = RunHub(Limits(max_concurrent_runs=2), use_process=False, watch_s=0)
    first, role = hub.start("a", _sweep(2))
    assert role == "computing" and first.begin()
    second, role = hub.start("b", _sweep(2))
    assert role == "following" and second is first
    other, role = hub.start("c", _sweep(3))  # another grid: another sweep
    assert role == "computing" and other is not first
    assert _watch(first) == "done"
    hub.reap()
    replay, role = hub.start("d", _sweep(2))
    assert role == "replayed" and replay.status == "done"
    assert replay.chunks[-1].table.equals(first.chunks[-1].table)
    # a run of the sweep's own configuration is not the sweep
    _, role = hub.start("e", TINY)
    assert role == "computing"
    assert hub.computations == 3


def test_stop_ends_a_sweeps_process_within_a_second():
    """The sweep is computed in a process of its own (not the server's): Stop kills it mid-grid-point."""
    hub = RunHub(Limits(max_concurrent_runs=1), use_process=True, watch_s=0)
    sweep, _ = hub.start("a", _sweep(8, estimate=True, slow=True))
    assert sweep.begin() and sweep.mode == "process"
    assert _until(lambda: sweep.wait(0, timeout=0.2)[0], timeout=120), "no grid point came"
    assert sweep.status == "running" and sweep.process_alive
    t0 = time.monotonic()
    hub.detach("a", job=sweep)
    assert _until(lambda: not sweep.process_alive, timeout=1.0), "the sweep's process outlived Stop by 1 s"
    assert time.monotonic() - t0 < 1.0 and sweep.status == "stopped"
    assert sweep.join(5) and len(sweep.chunks) < 8


def test_a_pages_stop_detaches_only_its_own_job():
    """A session holds one job: the sweep page's Stop (``job=``) leaves a run its session started since alone."""
    hub = RunHub(Limits(max_concurrent_runs=2), use_process=False, watch_s=0)
    sweep, _ = hub.start("a", _sweep(2))
    run, _ = hub.start("a", _cfg(5))  # the same session's Run: the sweep is given up
    assert sweep.status == "stopped" and hub.held("a") is run
    hub.detach("a", job=sweep)
    assert hub.held("a") is run and run.status == "starting"
    hub.detach("a", job=run)
    assert hub.held("a") is None and run.status == "stopped"


# ---------------------------------------------------------------- upload parses: jobs of the same hub
def _arff(n_rows: int, seed: int = 0) -> bytes:
    """A sparse MEKA ARFF of ``n_rows`` rows (3 labels, 200 features): 20000 rows take about a second to parse."""
    rng = np.random.default_rng(seed)
    head = ["@relation 'toy: -C 3'"] + [f"@attribute y{j} {{0,1}}" for j in range(3)]
    head += [f"@attribute x{j} numeric" for j in range(200)] + ["@data"]
    rows = []
    for _ in range(n_rows):
        cols = np.sort(rng.choice(200, 40, replace=False))
        labels = [f"{j} 1" for j in range(3) if rng.random() < 0.4]
        rows.append("{" + ",".join(labels + [f"{3 + c} {rng.random():.3f}" for c in cols]) + "}")
    return ("\n".join(head + rows) + "\n").encode()


SMALL_ARFF = _arff(50)
needs_fork_server = pytest.mark.skipif(process_context() is None, reason="this platform has no fork server")


@pytest.fixture(scope="module")
def big_arff() -> bytes:
    return _arff(60000)  # a few seconds to parse: still parsing when cancelled


def _parse_folders(folder) -> list:
    return sorted(Path(folder).glob("ncld-parse-*"))


def _process_gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@needs_fork_server
def test_an_upload_parse_waits_in_line_and_the_hub_begins_it_when_a_slot_frees():
    """One queue for runs and parses: a parse asked while the only slot computes a run is 1st in line (said as a
    run's place is) and does not start; when the run ends the hub's watchdog begins it, and it parses to the end
    with nobody polling it (no begin, no wait)."""
    hub = RunHub(Limits(max_concurrent_runs=1), use_process=True, watch_s=0.1)
    run, _ = hub.start("a", _slow(1))
    assert run.begin()
    job, role = hub.parse("b", SMALL_ARFF, None, "toy")
    assert role == "computing" and job.queue_position() == 1 and hub.position_of("b", PARSE) == 1
    assert hub.waiting == 1 and hub.held("b") is None  # b's run lane holds nothing: the parse is in its own
    assert queue_text(job.queue_position(), 1, "parse").startswith("waiting: 1st in line")
    time.sleep(0.5)
    assert job.status == "starting" and job.pid is None  # waiting: no process started
    hub.detach("a")  # the run's page pressed Stop: its slot frees
    assert _until(lambda: job.status == "done", timeout=60), (job.status, job.error)
    assert job.mode == "process" and job.dataset.n_instances == 50 and job.dataset.source == "upload"
    hub.reap()
    assert hub.running == 0 and hub.held("b", PARSE) is job  # out of the line, kept until b collects it
    hub.detach("b", job=job)
    assert hub.held("b", PARSE) is None and hub.parses == 1


def test_the_same_upload_is_parsed_once_and_its_result_stays_until_collected():
    """Sessions uploading the same file (name and bytes) follow one parse; another name is another parse; the
    session's run is left alone (a run and a parse are two lanes); an ended parse leaves the line but stays with
    its sessions, so one arriving late gets it without a parse; a failure is kept the same way (not re-parsed at
    every rerun of the page)."""
    hub = RunHub(Limits(max_concurrent_runs=1), use_process=False, watch_s=0)
    run, _ = hub.start("a", TINY)
    job, role = hub.parse("a", SMALL_ARFF, None, "toy")
    assert role == "computing" and hub.held("a") is run and run.status == "starting"
    assert hub.parse("a", SMALL_ARFF, None, "toy")[0] is job  # asked again by the same page: the same job
    same, role = hub.parse("b", SMALL_ARFF, None, "toy")
    assert same is job and role == "following" and hub.others_watching("b", PARSE) == 1
    renamed, role = hub.parse("c", SMALL_ARFF, None, "toy2")
    assert renamed is not job and role == "computing" and renamed.queue_position() == 2
    run.stop()
    assert job.begin() and job.wait(60) == "done"
    hub.reap()
    assert hub.position_of("c", PARSE) == 0 and renamed.begin()  # the ended parse holds no slot
    late, role = hub.parse("d", SMALL_ARFF, None, "toy")
    assert late is job and late.dataset is job.dataset and hub.parses == 2
    for session in "abd":
        hub.detach(session, job=job)
    hub.reap()
    again, role = hub.parse("e", SMALL_ARFF, None, "toy")  # nobody holds it any more: parsed again
    assert again is not job and role == "computing" and hub.parses == 3
    bad, _ = hub.parse("f", b"@relation r\n@data\n", None, "bad")
    assert renamed.wait(60) == "done" and again.begin() and again.wait(60) == "done"
    hub.reap()
    assert bad.begin() and bad.wait(60) == "error" and "malformed ARFF" in bad.error
    hub.reap()
    assert hub.parse("f", b"@relation r\n@data\n", None, "bad")[0] is bad and hub.parses == 4


def test_a_gone_sessions_parse_is_given_up_when_its_upload_would_be():
    """A page gone longer than the runs' grace keeps its parse (Streamlit keeps its session and file as long as
    ``upload_grace_s``: back by then, it collects the parse); gone that long, the parse is stopped."""
    alive, now = {"a"}, [0.0]
    hub = RunHub(Limits(max_concurrent_runs=1, session_grace_s=3.0, upload_grace_s=120.0), use_process=False,
                 watch_s=0, session_alive=lambda s: s in alive, clock=lambda: now[0])
    run, _ = hub.start("a", _slow(3))
    job, _ = hub.parse("a", SMALL_ARFF, None, "toy")
    alive.clear()
    hub.reap()
    now[0] = 60.0
    hub.reap()
    assert run.status == "stopped" and job.status == "starting" and hub.held("a", PARSE) is job
    now[0] = 120.0
    hub.reap()
    assert job.status == "stopped" and hub.held("a", PARSE) is None and hub.waiting == hub.running == 0


@needs_fork_server
def test_a_cancelled_parse_leaves_no_process_and_no_folder_within_a_second(big_arff, tmp_path, monkeypatch):
    """Cancel while the child parses: the child is killed and the temporary folder removed within 1 s, the slot
    freed, nothing parsed kept."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    hub = RunHub(Limits(max_concurrent_runs=1), use_process=True, watch_s=0)
    job, _ = hub.parse("a", big_arff, None, "big")
    assert job.begin() and job.mode == "process"
    assert _until(lambda: job.process_alive and any((f / "in.arff").is_file() for f in _parse_folders(tmp_path)),
                  timeout=30), "the parse's child did not start"
    pid = job.pid
    t0 = time.monotonic()
    hub.detach("a", job=job)  # the page's Cancel
    assert job.status == "stopped" and hub.running == 0
    assert _until(lambda: _process_gone(pid) and not _parse_folders(tmp_path), timeout=1.0), \
        "the parse's process or folder outlived Cancel by 1 s"
    assert time.monotonic() - t0 < 1.0
    assert job.join(5) and job.dataset is None and job.status == "stopped"


def test_a_queued_parse_cancelled_never_starts():
    hub = RunHub(Limits(max_concurrent_runs=1), use_process=False, watch_s=0)
    run, _ = hub.start("a", _slow(2))
    job, _ = hub.parse("b", SMALL_ARFF, None, "toy")
    hub.detach("b", job=job)
    run.stop()
    hub.reap()
    assert job.status == "stopped" and job.begin() is False and job.mode is None and hub.waiting == 0
