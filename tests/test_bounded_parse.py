"""Uploads are parsed in a child process whose memory is capped (ncld_core.data.bounded_parse)."""

from __future__ import annotations

import numpy as np
import pytest

from ncld_core.data import load_arff_bytes
from ncld_core.data.bounded_parse import load_arff_bytes_bounded
from ncld_core.fork_server import process_context

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
