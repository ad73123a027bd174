"""The Live run's worker without the page (dashboard/serving/live_run.py): a run delivers the core's chunks, in its
own process or in a thread; Stop takes effect at once and keeps what was received; failures are a status;
a run nobody shows pauses, resumes when shown, and is stopped when abandoned."""

from __future__ import annotations

import doctest
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from dashboard.serving import live_run
from dashboard.serving.live_run import LiveRun
from ncld_core.config import RunConfig

SMALL = RunConfig(n_instances=600, chunk_size=200, n_features=5, n_labels=4, n_neighbors=5, models=["ELM-O", "ELM-II"],
                  schedule="growth@300")
#: 30 chunks of about a tenth of a second each (several on a loaded machine): long enough to stop in the middle.
SLOW = RunConfig(n_instances=9000, chunk_size=300, n_features=20, n_labels=6, n_neighbors=5, n_hidden=600,
                 models=["ELM-O"], references=False)
MODES = [pytest.param(True, id="process"), pytest.param(False, id="thread")]


def _until(predicate, timeout: float, step: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def _watch(run: LiveRun, timeout: float) -> list[int]:
    """Show the run (as the page does) until it ends; the chunk counts seen at each wake-up."""
    seen, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        chunks, status = run.wait(seen[-1] if seen else 0, timeout=0.1)
        seen.append(len(chunks))
        if status != "running":
            return seen
    pytest.fail(f"the run did not end within {timeout} s: {run.status}, {len(run.chunks)} chunks")


def _cumulative(chunks) -> np.ndarray:
    """Every cumulative metric of every model and chunk, in a fixed order."""
    return np.array([v for c in chunks for m in sorted(c.cumulative) for _, v in sorted(c.cumulative[m].items())],
                    dtype=float)


def test_doctests():
    assert doctest.testmod(live_run).failed == 0


def test_it_imports_without_streamlit():
    code = "import sys, dashboard.serving.live_run, dashboard.panels; sys.exit('streamlit' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], cwd=str(live_run.__file__).rsplit("/dashboard/", 1)[0],
                          timeout=120).returncode == 0


@pytest.mark.parametrize("use_process", MODES)
def test_a_run_delivers_the_cores_chunks_one_by_one_to_the_end(use_process):
    run = LiveRun(SMALL, use_process=use_process)
    assert run.status == "starting" and run.active and not run.chunks
    assert run.begin() is True
    assert run.begin() is False  # one caller begins it
    assert run.mode == ("process" if use_process else "thread")
    assert run.n_chunks == 3 and run.change_points == [(300, "growth")]
    assert run.models == ["ELM-O", "ELM-II", "all-negative", "noisy-prior"]
    seen = _watch(run, timeout=120)
    assert run.status == "done" and not run.active and run.error is None
    assert seen == sorted(seen) and seen[-1] == 3
    expected = list(SMALL.runner().iter_run(SMALL.build_stream()))
    assert [c.chunk for c in run.chunks] == [0, 1, 2]
    # the same records as the core's own run
    np.testing.assert_allclose(_cumulative(run.chunks), _cumulative(expected), rtol=1e-9, atol=1e-12)
    assert len(run.compute_ms) == 3 and all(ms > 0 for ms in run.compute_ms)
    assert run.result().complete and run.result().status == "complete (3 chunks)"
    # no redraw measured yet: the update time is left out, never "nan"
    assert run.status_text().startswith("done · chunk 3/3 · median compute ") and "nan" not in run.status_text()
    run.note_drawn(0.05)
    assert run.status_text().startswith("done · chunk 3/3 · median update 50 ms · median compute ")
    assert run.update_ms == [50.0] and run.first_plot_s > 0
    assert run.timings()["update_ms"] == [50.0]
    record = run.record()
    assert record["status"] == "done" and len(record["chunks"]) == 3 and record["compare_id"] is None
    assert run.join(timeout=10)


@pytest.mark.parametrize("use_process", MODES)
def test_stop_in_the_middle_returns_at_once_and_keeps_every_chunk_received(use_process):
    run = LiveRun(SLOW, use_process=use_process)
    run.begin()
    assert _until(lambda: len(run.wait(0, timeout=0.1)[0]) >= 2, timeout=120), run.status
    t0 = time.perf_counter()
    run.stop()
    stop_s = time.perf_counter() - t0
    assert stop_s < 0.5, stop_s  # never waits for the chunk being computed
    assert run.status == "stopped" and not run.active
    kept = len(run.chunks)
    assert 2 <= kept < run.n_chunks
    if use_process:  # the chunk being computed is killed with its process
        assert _until(lambda: not run.process_alive, timeout=1.0)
    assert run.join(timeout=60)  # a thread finishes its chunk, then drops it
    time.sleep(0.5)
    assert len(run.chunks) == kept and run.status == "stopped"
    assert run.result().status == f"stopped at chunk {kept} of {run.n_chunks}"
    assert run.status_text().startswith(f"stopped · chunk {kept}/{run.n_chunks}")


def test_stop_before_the_stream_is_built_ends_the_run_at_once():
    built = []

    def slow_build():
        time.sleep(0.5)
        built.append(True)
        return SMALL.build_stream()

    run = LiveRun(SMALL, build_stream=slow_build, use_process=True)
    starter = threading.Thread(target=run.begin)
    starter.start()
    time.sleep(0.1)
    run.stop()
    assert run.status == "stopped"
    starter.join(timeout=30)
    assert built and run.status == "stopped" and not run.chunks and not run.process_alive


@pytest.mark.parametrize("exc, message", [
    (ValueError("schedule: the stream cannot be built (test)"), "schedule: the stream cannot be built (test)"),
    (RuntimeError("boom"), "RuntimeError: boom"),
])
def test_a_stream_that_cannot_be_built_is_an_error_status_not_an_exception(exc, message):
    def failing():
        raise exc

    run = LiveRun(SMALL, build_stream=failing)
    assert run.begin() is True
    assert run.status == "error" and run.error == message and not run.chunks
    assert run.wait(0, timeout=0.1) == ([], "error")
    assert run.begin() is False


@pytest.mark.parametrize("use_process", MODES)
def test_a_chunk_that_fails_is_an_error_status_and_the_chunks_before_it_are_kept(use_process):
    stream = SMALL.build_stream()
    stream.X[450, 0] = np.nan  # chunk 2 cannot be learnt
    run = LiveRun(SMALL, build_stream=lambda: stream, use_process=use_process)
    run.begin()
    _watch(run, timeout=120)
    assert run.status == "error" and len(run.chunks) == 2
    assert run.error and "Traceback" not in run.error
    assert run.status_text().startswith("failed · chunk 2/3")


def test_a_run_nobody_shows_pauses_and_resumes_when_shown():
    run = LiveRun(SLOW, use_process=True, idle_s=0.3)
    run.begin()
    # nobody waits on it: after the chunk in progress it asks for no new one
    assert _until(lambda: run.paused, timeout=120), (run.status, len(run.chunks))
    paused = len(run.chunks)
    time.sleep(1.0)
    assert run.paused and run.status == "running" and len(run.chunks) == paused < run.n_chunks
    # shown again: it goes on
    assert _until(lambda: len(run.wait(paused, timeout=0.1)[0]) > paused, timeout=120)
    run.stop()
    assert run.join(timeout=30)


def test_a_run_left_alone_is_stopped():
    run = LiveRun(SLOW, use_process=True, idle_s=0.2, abandon_s=1.0)
    run.begin()
    assert _until(lambda: run.status == "stopped", timeout=30), run.status
    assert len(run.chunks) < run.n_chunks
    assert run.join(timeout=30) and _until(lambda: not run.process_alive, timeout=10)


# --------------------------------------------------------------------------- an intervention's run (issue 38 item 3)
INTERVENED = RunConfig(n_instances=2000, chunk_size=200, n_features=5, n_labels=4, n_neighbors=5, n_hidden=20,
                       models=["ELM-O"], schedule="reduction@400")


def test_a_run_shown_from_another_goes_on_from_the_change_and_recomputes_the_chunks_before_it():
    """An intervention at chunk 5: the new run shows the old run's five chunks at once (before its stream is built:
    the page never goes back to chunk 0), recomputes them, finds each the same (all but the seconds), and ends
    with the records of its own settings computed from the start."""
    import dataclasses

    from ncld_core.stream.schedule import append_change

    old = LiveRun(INTERVENED, use_process=False)
    assert old.begin()
    _watch(old, 120)
    changed = dataclasses.replace(INTERVENED, schedule=str(append_change(INTERVENED.schedule, 1000, "growth")))
    new = LiveRun(changed, use_process=False, shown_from=(old, 5))
    assert [c.chunk for c in new.chunks] == [0, 1, 2, 3, 4] and new.chunks[4] is old.chunks[4]
    assert new.status_text() == "starting · chunk 5/10 · building the stream with the change"
    assert new.change_points == [(400, "reduction"), (1000, "growth")]  # the new change drawn at once
    assert new.begin()
    seen = _watch(new, 120)
    assert min(seen) >= 5  # never fewer chunks than those shown
    assert new.status == "done" and new.recomputed == new.shown_before == 5 and not new.prefix_differed
    assert all(live_run.same_records(a, b) for a, b in zip(new.chunks[:5], old.chunks[:5]))
    assert all(a is not b for a, b in zip(new.chunks[:5], old.chunks[:5]))  # every record this run's own
    fresh = LiveRun(changed, use_process=False)
    assert fresh.begin()
    _watch(fresh, 120)
    assert all(live_run.same_records(a, b) for a, b in zip(new.chunks, fresh.chunks)) and len(new.chunks) == 10
    assert not live_run.same_records(new.chunks[6], old.chunks[6])  # the change changed what follows


def test_chunks_shown_from_a_run_of_other_records_give_way_to_the_runs_own():
    import dataclasses

    old = LiveRun(dataclasses.replace(INTERVENED, seed=9), use_process=False)
    assert old.begin()
    _watch(old, 120)
    new = LiveRun(INTERVENED, use_process=False, shown_from=(old, 4))
    assert new.begin()
    _watch(new, 120)
    assert new.prefix_differed and new.status == "done" and len(new.chunks) == 10
    fresh = LiveRun(INTERVENED, use_process=False)
    assert fresh.begin()
    _watch(fresh, 120)
    assert all(live_run.same_records(a, b) for a, b in zip(new.chunks, fresh.chunks))


def test_a_shown_run_that_cannot_start_keeps_none_of_the_chunks_it_showed():
    old = LiveRun(INTERVENED, use_process=False)
    assert old.begin()
    _watch(old, 120)

    def fail():
        raise ValueError("no stream")

    new = LiveRun(INTERVENED, use_process=False, shown_from=(old, 3), build_stream=fail)
    assert len(new.chunks) == 3
    new.begin()
    assert new.status == "error" and new.chunks == [] and new.stream is None


def test_same_records_holds_a_rerun_equal_up_to_blas_sums_and_tells_a_real_difference():
    class Chunk:
        def __init__(self, **row):
            self.row = row

        def rows(self):
            return [dict(self.row)]

    base = dict(model="ELM-O", seconds=0.1, micro_f1=0.5, diag_k_condition=3091.4166781422355, fired=False,
                lcard=float("nan"), regimes=[1, 2])
    rerun = {**base, "seconds": 0.3, "diag_k_condition": 3091.4166781419913}  # (measured: BLAS threads 1 vs 2)
    assert live_run.same_records(Chunk(**base), Chunk(**rerun))
    for key, value in (("micro_f1", 0.5000001), ("fired", True), ("regimes", [1, 3]), ("lcard", 1.0),
                       ("model", "ELM-I")):
        assert not live_run.same_records(Chunk(**base), Chunk(**{**base, key: value})), key
