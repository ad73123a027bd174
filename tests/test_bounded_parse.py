"""Uploads are parsed in a child process whose memory is capped (dashboard.serving.bounded_parse)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from ncld_core.data import load_arff_bytes
from dashboard.serving.bounded_parse import load_arff_bytes_bounded, parse_folder_prefix, remove_orphaned_folders
from dashboard.serving.fork_server import process_context

ROOT = Path(__file__).resolve().parents[1]

needs_fork_server = pytest.mark.skipif(process_context() is None, reason="this platform has no fork server")


def _sparse_arff(n_rows: int, n_features: int = 200, per_row: int = 40, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    head = ["@relation 'big: -C 3'"] + [f"@attribute y{j} {{0,1}}" for j in range(3)]
    head += [f"@attribute x{j} numeric" for j in range(n_features)] + ["@data"]
    rows = []
    for _ in range(n_rows):
        cols = np.sort(rng.choice(n_features, per_row, replace=False))
        labels = [f"{j} 1" for j in range(3) if rng.random() < 0.4]
        rows.append("{" + ",".join(labels + [f"{3 + c} {rng.random():.3f}" for c in cols]) + "}")
    return ("\n".join(head + rows) + "\n").encode()


@needs_fork_server
def test_the_child_gives_what_the_in_process_parse_gives():
    arff = _sparse_arff(300)
    here, there = load_arff_bytes(arff, name="big"), load_arff_bytes_bounded(arff, name="big")
    assert (here.X != there.X).nnz == 0 and there.X.shape == here.X.shape
    np.testing.assert_array_equal(here.Y, there.Y)
    assert here.label_names == there.label_names and here.feature_names == there.feature_names


@pytest.fixture(scope="module")
def larger_arff() -> bytes:
    return _sparse_arff(20000)  # 7.5 MB of text, far more to parse


@needs_fork_server
def test_a_file_needing_more_memory_than_the_limit_is_refused_by_name(larger_arff):
    with pytest.raises(ValueError, match=r"arff_bytes \(big\): the file needs more than 64 MB of memory to parse"):
        load_arff_bytes_bounded(larger_arff, name="big", memory_bytes=64 * 1024**2)
    assert load_arff_bytes_bounded(larger_arff, name="big").n_instances == 20000  # the default limit lets it through


@needs_fork_server
def test_a_parse_past_its_time_is_stopped_and_refused(larger_arff):
    arff = larger_arff
    with pytest.raises(ValueError, match=r"parsing took longer than 0.05 s"):
        load_arff_bytes_bounded(arff, name="big", timeout_s=0.05)


def test_bad_input_keeps_its_message():
    with pytest.raises(ValueError, match="malformed|no attributes|@data"):
        load_arff_bytes_bounded(b"@relation r\n@attribute x numeric\n", name="r")


# ---------------------------------------------------------------- the parse's temporary folders
_PARSE_IN_A_SERVER = """
import sys, threading, time
from pathlib import Path
from dashboard.serving.bounded_parse import load_arff_bytes_bounded
arff = Path(sys.argv[1]).read_bytes()
threading.Thread(target=load_arff_bytes_bounded, args=(arff,), kwargs={"name": "big"}, daemon=True).start()
print("parsing", flush=True)
if sys.argv[2] == "exit":  # an orderly end in the middle of the parse
    while not list(Path(sys.argv[3]).glob("ncld-parse-*/in.arff")):
        time.sleep(0.05)
    sys.exit(0)
time.sleep(600)
"""


def _parse_folders(tmp: Path) -> list[Path]:
    return sorted(tmp.glob("ncld-parse-*"))


def _server_parsing(tmp: Path, arff: bytes, how: str) -> subprocess.Popen:
    """A process parsing ``arff`` with its temporary folder ``tmp`` (``how``: "wait" for a kill, "exit" mid-parse)."""
    source = tmp / "input"
    source.mkdir(exist_ok=True)
    (source / "big.arff").write_bytes(arff)
    env = {**os.environ, "TMPDIR": str(tmp)}
    return subprocess.Popen([sys.executable, "-c", _PARSE_IN_A_SERVER, str(source / "big.arff"), how, str(tmp)],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)


def _wait_for(condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@needs_fork_server
def test_a_server_killed_mid_parse_leaves_a_folder_the_next_start_removes(tmp_path, larger_arff):
    server = _server_parsing(tmp_path, larger_arff, "wait")
    try:
        _wait_for(lambda: any((f / "in.arff").is_file() for f in _parse_folders(tmp_path)))
        left = _parse_folders(tmp_path)
        assert left[0].name.startswith(parse_folder_prefix(server.pid))  # named for the process that made it
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=30)
    assert _parse_folders(tmp_path) == left  # kill -9: nothing ran to remove it
    # another server on the same machine, running: its folder is not touched
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        live = tmp_path / f"{parse_folder_prefix(other.pid)}abc"
        live.mkdir()
        (live / "in.arff").write_bytes(b"x")
        # the next start: its first parse (a fresh process) removes the dead server's folder, not the live one's
        env = {**os.environ, "TMPDIR": str(tmp_path)}
        small = "from dashboard.serving.bounded_parse import load_arff_bytes_bounded as f; " \
                "f(b'@relation \"r: -C 1\"\\n@attribute y {0,1}\\n@attribute x numeric\\n@data\\n1,2\\n', name='r')"
        subprocess.run([sys.executable, "-c", small], cwd=ROOT, env=env, check=True, timeout=120)
        assert _parse_folders(tmp_path) == [live]
    finally:
        other.kill()
        other.wait()
    assert remove_orphaned_folders(tmp_path) == [live]  # its server gone: removed too
    assert _parse_folders(tmp_path) == []


@needs_fork_server
def test_an_orderly_end_mid_parse_removes_the_server_s_folder(tmp_path, larger_arff):
    server = _server_parsing(tmp_path, larger_arff, "exit")
    assert server.wait(timeout=60) == 0
    assert _parse_folders(tmp_path) == []


def test_the_dashboard_s_start_up_removes_a_dead_server_s_folders(tmp_path, monkeypatch):
    from dashboard import data

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    orphan = tmp_path / f"{parse_folder_prefix(dead.pid).rsplit('-', 2)[0]}-1-xyz"  # its pid, any start time
    orphan.mkdir()
    (orphan / "in.arff").write_bytes(b"@relation r\n")
    mine = tmp_path / f"{parse_folder_prefix()}abc"  # this process's own, under way
    mine.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    data.warm_up.clear()
    try:
        data.warm_up()
    finally:
        data.warm_up.clear()
    assert _parse_folders(tmp_path) == [mine]
