"""Checkpoints: bit-identical resume, refusal of corrupt or foreign files, no pickle."""

from __future__ import annotations

import io
import json
import re
import struct
import tracemalloc
import zipfile
import zlib
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from ncld_core.checkpoint import (
    FORMAT,
    VERSION,
    CheckpointError,
    load_checkpoint,
    load_run,
    save_checkpoint,
    save_run,
)
from ncld_core.cli import main
from ncld_core.config import RunConfig
from ncld_core.eval.runner import RunResult
from ncld_core.model import ELMNCLD
from ncld_core.eval.baselines import BASELINES
from ncld_core.model.detector import DETECTORS
from ncld_core.saved_state import NONNEGATIVE, PLAIN, SavedState, array, dict_of, number

CFG = RunConfig(n_instances=1500, chunk_size=150, schedule="growth@750", models=["ELM-O", "ELM-I", "ELM-II"])
TIMING = ["seconds", "diag_seconds"]


def _records(chunks, stream):
    frame = RunResult(chunks, stream, CFG.chunk_size).records
    return frame.drop(columns=[c for c in TIMING if c in frame.columns])


def test_resumed_run_is_bit_identical(tmp_path):
    stream = CFG.build_stream()
    full = list(CFG.runner().iter_run(stream))

    runner = CFG.runner()
    first = []
    for chunk in runner.iter_run(stream):
        first.append(chunk)
        if chunk.chunk == 4:
            break
    save_run(tmp_path / "run.npz", runner.state_, first, config=CFG.to_dict(), chunk_size=CFG.chunk_size)
    del runner

    state, chunks, config, _ = load_run(tmp_path / "run.npz")
    cfg = RunConfig.from_dict(config)
    assert cfg == CFG and state.next_chunk == 5
    rest = list(cfg.runner().iter_run(cfg.build_stream(), state=state))
    assert [c.chunk for c in rest] == list(range(5, 10))
    pd.testing.assert_frame_equal(_records(chunks + rest, stream), _records(full, stream), check_exact=True)


def test_model_round_trip_is_exact(tmp_path):
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(200, 6)), (rng.random((200, 4)) < 0.3).astype(int)
    model = ELMNCLD(n_neighbors=5, rho_pos=[0.1, 0.2, 0.1, 0.3], rho_neg=0.2, random_state=0)
    model.partial_fit(X[:100], Y[:100])
    save_checkpoint(model, tmp_path / "m.npz")
    again = load_checkpoint(tmp_path / "m.npz", expected=ELMNCLD)
    assert again.get_params().keys() == model.get_params().keys()
    model.partial_fit(X[100:], Y[100:])
    again.partial_fit(X[100:], Y[100:])
    assert np.array_equal(model.coef_, again.coef_)
    pd.testing.assert_frame_equal(model.history_.drop(columns="seconds"), again.history_.drop(columns="seconds"))


def test_cli_checkpoint_and_resume(tmp_path, capsys):
    ck = tmp_path / "run.npz"
    assert main(["run", "--n-instances", "900", "--chunk-size", "150", "--quiet", "--checkpoint", str(ck),
                 "--checkpoint-every", "2", "--out", str(tmp_path / "a")]) == 0
    state, chunks, _, _ = load_run(ck)
    assert state.next_chunk == 6 and len(chunks) == 6
    # resuming a finished run is a no-op that reproduces the same summary
    assert main(["resume", str(ck), "--quiet", "--out", str(tmp_path / "b")]) == 0
    a = json.loads((tmp_path / "a" / "summary.json").read_text())["summary"]
    b = json.loads((tmp_path / "b" / "summary.json").read_text())["summary"]
    assert {k: {m: v for m, v in row.items() if m != "seconds"} for k, row in a.items()} == \
           {k: {m: v for m, v in row.items() if m != "seconds"} for k, row in b.items()}


@pytest.mark.parametrize("damage", ["truncate", "garbage", "flip"])
def test_corrupt_checkpoint_is_refused(tmp_path, damage):
    path = tmp_path / "m.npz"
    model = ELMNCLD(n_neighbors=3, random_state=0).partial_fit(np.eye(8), np.eye(8)[:, :2])
    save_checkpoint(model, path)
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(b"not a checkpoint at all")
    else:  # one flipped byte inside an array member: the zip CRC catches it
        with zipfile.ZipFile(path) as z:
            info = [i for i in z.infolist() if i.filename != "__meta__.npy"][0]
        off = info.header_offset + 30 + len(info.filename) + 100
        path.write_bytes(data[:off] + bytes([data[off] ^ 0xFF]) + data[off + 1:])
    with pytest.raises(ValueError, match="corrupt|not an ncld checkpoint"):
        load_checkpoint(path, expected=ELMNCLD)


def _rewrite_meta(path, change):
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays["__meta__"].tobytes())
    change(meta)
    arrays["__meta__"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez(path, **arrays)


def test_version_mismatch_and_foreign_classes_are_refused(tmp_path):
    path = tmp_path / "m.npz"
    save_checkpoint(ELMNCLD(n_neighbors=3, random_state=0).partial_fit(np.eye(8), np.eye(8)[:, :2]), path)
    _rewrite_meta(path, lambda m: m.update(version=99))
    with pytest.raises(CheckpointError, match="checkpoint format 99 written by ncld"):
        load_checkpoint(path, expected=ELMNCLD)
    _rewrite_meta(path, lambda m: m.update(version=VERSION, payload={"__object__": "Popen", "state": {"__dict__": {}}}))
    with pytest.raises(ValueError, match="unknown class 'Popen'"):
        load_checkpoint(path, expected=ELMNCLD)
    _rewrite_meta(path, lambda m: m.update(format="other"))
    with pytest.raises(ValueError, match="not an ncld checkpoint"):
        load_checkpoint(path)


def test_pickled_arrays_are_never_loaded(tmp_path):
    path = tmp_path / "evil.npz"
    meta = {"format": FORMAT, "version": VERSION, "payload": {"__array__": "a0"}, "extra": {"__dict__": {}},
            "arrays": {"a0": ["|O", [1]]}}
    np.savez(path, __meta__=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
             a0=np.array([object()], dtype=object), allow_pickle=True)
    with pytest.raises(CheckpointError, match="holds object values; a checkpoint holds only numbers and text"):
        load_checkpoint(path)


def test_unserialisable_state_is_a_clear_error(tmp_path):
    class Custom:
        def predict_proba(self, H, Y, n):
            return np.full(Y.shape, 0.5)

    model = ELMNCLD(n_neighbors=3, probability_model=Custom(), random_state=0)
    model.partial_fit(np.eye(8), np.eye(8)[:, :2])
    with pytest.raises(ValueError, match="cannot checkpoint Custom"):
        save_checkpoint(model, tmp_path / "m.npz")
    assert not list(tmp_path.iterdir())
    with pytest.raises(ValueError, match="does not exist"):
        load_checkpoint(tmp_path / "missing.npz")


def test_saved_run_keeps_typed_records_and_reads_the_older_flat_form(tmp_path):
    from dataclasses import asdict

    from ncld_core.checkpoint import save_checkpoint
    from ncld_core.model.record import ModelChunkRecord

    cfg = RunConfig(n_instances=600, chunk_size=150, models=["ELM-O"], model_rates="estimate", monitors=["welch"])
    runner = cfg.runner()
    chunks = list(runner.iter_run(cfg.build_stream()))
    save_run(tmp_path / "run.npz", runner.state_, chunks, config=cfg.to_dict(), chunk_size=cfg.chunk_size)
    _, loaded, _, _ = load_run(tmp_path / "run.npz")
    record = loaded[-1].diagnostics["ELM-O"]
    assert isinstance(record, ModelChunkRecord) and record == chunks[-1].diagnostics["ELM-O"]
    assert record.monitors["welch"] == chunks[-1].diagnostics["ELM-O"].monitors["welch"]

    # a run saved before the record was typed: each record a flat dict (history row + per-label lists)
    def flat(c):
        d = asdict(c)
        d["diagnostics"] = {m: {**r.row(), "prevalence_hat": list(r.prevalence_hat),
                                "rho_pos_est": list(r.rho_pos_est), "rho_neg_est": list(r.rho_neg_est),
                                # (the rates' intervals, issue 25, as lists too)
                                **{k: list(getattr(r, k)) for k in ("rho_pos_low", "rho_pos_high", "rho_neg_low",
                                                                    "rho_neg_high")}}
                            for m, r in c.diagnostics.items()}
        return d

    save_checkpoint({"models": runner.state_.models, "accumulators": runner.state_.accumulators},
                    tmp_path / "old.npz", extra={"next_chunk": 4, "config": cfg.to_dict(), "chunk_size": 150,
                                                 "chunks": [flat(c) for c in chunks]})
    _, old, _, _ = load_run(tmp_path / "old.npz")

    def text(cs):  # NaN-aware comparison (the first chunk's statistic is NaN)
        return json.dumps([{m: asdict(r) for m, r in c.diagnostics.items()} for c in cs])

    assert all(isinstance(r, ModelChunkRecord) for c in old for r in c.diagnostics.values())
    assert text(old) == text(chunks)


# ------------------------------------------------------------------ crafted files (issues 22.7, 23.2)
# Each attack is built in tmp_path; the memory a load allocates is measured with tracemalloc (NumPy
# reports its array buffers to it). Bound: 50 MB, for files that asked for 256 MiB to 1 GiB.
PEAK_BOUND = 50 * 2**20


def _small_model():
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(40, 4)), (rng.random((40, 3)) < 0.4).astype(int)
    return ELMNCLD(n_hidden=20, n_neighbors=5, random_state=0).partial_fit(X, Y), X


def _peak_bytes(load):
    """Peak traced memory while ``load()`` runs (a CheckpointError is returned, not raised)."""
    tracemalloc.start()
    try:
        try:
            outcome = load()
        except CheckpointError as exc:
            outcome = exc
        return tracemalloc.get_traced_memory()[1], outcome
    finally:
        tracemalloc.stop()


def _members(path) -> list:
    """The (name, method, raw bytes, crc, size) of each member of a stored (uncompressed) archive."""
    with zipfile.ZipFile(path) as z:
        return [(i.filename, zipfile.ZIP_STORED, z.read(i), i.CRC, i.file_size) for i in z.infolist()]


def _write_zip(path, members) -> None:
    """A zip of ``members`` (name, method, raw bytes as stored, crc, declared size), written by hand so a
    member may be deflated data we built, or declare what it does not hold."""
    out, directory = bytearray(), bytearray()
    for name, method, raw, crc, size in members:
        name_b = name.encode()
        fields = struct.pack("<HHHHHIII", 20, 0, method, 0, 0, crc, len(raw), size)
        directory += b"PK\x01\x02" + struct.pack("<H", 20) + fields + struct.pack("<HHHHHII", len(name_b), 0, 0, 0, 0,
                                                                                  0, len(out)) + name_b
        out += b"PK\x03\x04" + fields + struct.pack("<HH", len(name_b), 0) + name_b + raw
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(members), len(members), len(directory), len(out), 0)
    Path(path).write_bytes(bytes(out + directory + end))


def _npy_header(shape, dtype="<f8") -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": dtype, "fortran_order": False, "shape": shape})
    return buffer.getvalue()


def test_an_unused_member_is_never_read(tmp_path):
    # The testers' file: 3.77 MB, a valid checkpoint plus members the format does not use, one of
    # which declares a 1 GiB array. Every member used to be read: 1 GiB allocated, then an error.
    model, X = _small_model()
    save_checkpoint(model, tmp_path / "m.npz")
    pad = _npy_header((460_000,)) + bytes(8 * 460_000)
    bomb = _npy_header((2**27,)) + bytes(64)
    _write_zip(tmp_path / "crafted.npz", _members(tmp_path / "m.npz") + [
        ("pad.npy", zipfile.ZIP_STORED, pad, zlib.crc32(pad), len(pad)),
        ("bomb.npy", zipfile.ZIP_STORED, bomb, zlib.crc32(bomb), len(bomb))])
    assert 3.5e6 < (tmp_path / "crafted.npz").stat().st_size < 4e6
    peak, again = _peak_bytes(lambda: load_checkpoint(tmp_path / "crafted.npz"))
    assert peak < PEAK_BOUND, peak
    assert np.array_equal(again.decision_function(X), model.decision_function(X))


def test_a_member_declaring_more_than_it_holds_is_refused_before_reading(tmp_path):
    model, _ = _small_model()
    save_checkpoint(model, tmp_path / "m.npz")
    members = _members(tmp_path / "m.npz")
    name, *_ = next(m for m in members if m[0] != "__meta__.npy")
    bomb = _npy_header((2**27,)) + bytes(64)  # the .npy header claims 1 GiB; the member holds 64 bytes
    members = [m if m[0] != name else (name, zipfile.ZIP_STORED, bomb, zlib.crc32(bomb), len(bomb)) for m in members]
    _write_zip(tmp_path / "crafted.npz", members)
    peak, error = _peak_bytes(lambda: load_checkpoint(tmp_path / "crafted.npz"))
    assert peak < PEAK_BOUND, peak
    assert isinstance(error, CheckpointError)
    assert "holds 64 bytes of data but its header declares 1073741824" in str(error)


def test_a_compression_bomb_is_refused_by_its_declared_size(tmp_path):
    # 256 MiB of zeros deflated to 0.25 MB, as the array the header refers to (dtype and shape agree).
    model, _ = _small_model()
    save_checkpoint(model, tmp_path / "m.npz")
    members = _members(tmp_path / "m.npz")
    meta = json.loads(np.lib.format.read_array(io.BytesIO(members[0][2])).tobytes())
    name = next(m[0] for m in members if m[0] != "__meta__.npy")
    n = 2**25
    meta["arrays"][name[:-4]] = ["<f8", [n]]
    header = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, header)
    members[0] = ("__meta__.npy", zipfile.ZIP_STORED, buffer.getvalue(), zlib.crc32(buffer.getvalue()),
                  len(buffer.getvalue()))
    head, block = _npy_header((n,)), bytes(2**20)
    first = zlib.compressobj(9, zlib.DEFLATED, -15)
    data = first.compress(head) + first.flush(zlib.Z_FULL_FLUSH)
    zero = zlib.compressobj(9, zlib.DEFLATED, -15)
    one = zero.compress(block) + zero.flush(zlib.Z_FULL_FLUSH)  # independent blocks: repeatable
    data += one * (8 * n // len(block)) + zlib.compressobj(9, zlib.DEFLATED, -15).flush()
    crc = zlib.crc32(head)
    for _ in range(8 * n // len(block)):
        crc = zlib.crc32(block, crc)
    members = [m if m[0] != name else (name, zipfile.ZIP_DEFLATED, data, crc, len(head) + 8 * n) for m in members]
    _write_zip(tmp_path / "bomb.npz", members)
    assert (tmp_path / "bomb.npz").stat().st_size < 1e6
    with zipfile.ZipFile(tmp_path / "bomb.npz") as z:  # a genuine archive: it does expand to 256 MiB
        with z.open(name) as member:
            assert len(member.read(len(head) + 2**20)) == len(head) + 2**20
    peak, error = _peak_bytes(lambda: load_checkpoint(tmp_path / "bomb.npz"))
    assert peak < PEAK_BOUND, peak
    assert isinstance(error, CheckpointError) and f"declares {len(head) + 8 * n} bytes once expanded" in str(error)


def test_the_arrays_read_have_a_total_bound(tmp_path):
    model, _ = _small_model()
    save_checkpoint(model, tmp_path / "m.npz")
    with pytest.raises(CheckpointError, match=r"its arrays declare \d+ bytes; at most 1000 are read"):
        load_checkpoint(tmp_path / "m.npz", max_bytes=1000)


def _with_header(path, text: bytes) -> None:
    np.savez(path, __meta__=np.frombuffer(text, dtype=np.uint8))


def test_a_deeply_nested_header_is_a_named_error_not_a_recursion_error(tmp_path, capsys):
    path = tmp_path / "deep.npz"
    depth = 100_000
    _with_header(path, b'{"format": "ncld-checkpoint", "version": 3, "payload": ' + b"[" * depth + b"]" * depth + b"}")
    with pytest.raises(CheckpointError, match="its header is nested more than 64 levels deep"):
        load_checkpoint(path)
    # brackets inside strings do not count
    _with_header(path, json.dumps({"format": "ncld-checkpoint", "version": 3, "payload": "[" * 500,
                                   "arrays": {}}).encode())
    assert load_checkpoint(path) == "[" * 500
    _with_header(path, b'{"format": "ncld-checkpoint", "version": 3, "payload": ' + b"[" * depth + b"]" * depth + b"}")
    assert main(["resume", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: checkpoint ") and "nested more than 64" in err
    assert "Traceback" not in err and err.count("\n") == 1


def test_an_oversized_header_is_refused_before_it_is_read(tmp_path, monkeypatch):
    import ncld_core.checkpoint as checkpoint

    model, _ = _small_model()
    save_checkpoint(model, tmp_path / "m.npz")
    monkeypatch.setattr(checkpoint, "MAX_HEADER_BYTES", 100)
    with pytest.raises(CheckpointError, match=r"its header has \d+ bytes; at most 100 are read"):
        load_checkpoint(tmp_path / "m.npz")


def _rewrite_state(path, change) -> None:
    """Apply ``change`` to the JSON state of the checkpoint's top object (arrays kept)."""
    _rewrite_meta(path, lambda meta: change(meta["payload"]["state"]["__dict__"], meta))


@pytest.mark.parametrize("attack, message", [
    (lambda s, m: s.update(n_hidden="lots"), "n_hidden must be"),
    (lambda s, m: s.update(beta=7.0), r"beta must be in \[0, 1\], got 7.0"),
    (lambda s, m: s.update(strategy="rm -rf"), "strategy must be one of"),
    (lambda s, m: s.update(decision_function=1), "the attribute 'decision_function' would hide ELMNCLD.decision_function"),
    (lambda s, m: s.update(history_={"__list__": []}), "would hide ELMNCLD.history_"),
    (lambda s, m: s.update(__class__="x"), "would hide ELMNCLD.__class__"),
    (lambda s, m: s.update(surprise=1), "'surprise' is not a parameter or fitted attribute of ELMNCLD"),
    (lambda s, m: s.pop("coef_"), "missing coef_"),
    (lambda s, m: s.pop("alpha"), "missing alpha"),
    (lambda s, m: s.update(coef_="weights"), "coef_ must be a 2-D float array; got 'weights'"),
    (lambda s, m: s.update(coef_=s["statistics_"]["state"]["__dict__"]["HtH"]), r"coef_ has shape \(20, 20\), "
                                                                                  r"expected \(20, 3\)"),
    (lambda s, m: s.update(n_labels_=4), r"has shape \(20, 3\), expected \(20, 4\)"),
    (lambda s, m: s["hidden_"]["state"]["__dict__"].update(mode_="exec"), "mode_ must be one of 'l2', 'standard'"),
    (lambda s, m: s["detector_"]["state"]["__dict__"].update(max_window=-1), "max_window must be"),
    (lambda s, m: s.update(decision_state_={"__dict__": {"n_chunks": "x"}}), "does not work as loaded"),
    (lambda s, m: s.update(flip_rate_estimator_={"__object__": "FlipRateEstimator",
                                                 "state": {"__dict__": {"quantile": 3}}}), "missing anchor_fraction"),
])
def test_loaded_attributes_are_checked_against_the_class(tmp_path, attack, message):
    model, X = _small_model()
    path = tmp_path / "m.npz"
    save_checkpoint(model, path)
    _rewrite_state(path, attack)
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(path)


def test_the_format_and_ncld_versions_are_stored_and_a_newer_format_is_refused_by_name(tmp_path):
    import ncld_core

    model, _ = _small_model()
    path = tmp_path / "m.npz"
    save_checkpoint(model, path)
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(z["__meta__"].tobytes())
    assert meta["version"] == VERSION == 6 and meta["ncld"] == ncld_core.__version__
    _rewrite_meta(path, lambda m: m.update(version=7, ncld="0.3"))
    with pytest.raises(CheckpointError, match=rf"checkpoint format 7 written by ncld 0.3; this ncld "
                                              rf"{ncld_core.__version__} reads formats 2-6"):
        load_checkpoint(path)
    _rewrite_meta(path, lambda m: (m.update(version=1), m.pop("ncld")))
    with pytest.raises(CheckpointError, match="checkpoint format 1 written by an ncld that did not record its "
                                              "version; .* cannot be recovered"):
        load_checkpoint(path)


@pytest.mark.parametrize("damage", ["not a zip", "empty zip", "no header", "header not JSON", "header not a dict",
                                    "array missing", "array of another shape", "array of another dtype",
                                    "unreadable npy header", "bzip2 member", "entry unreadable", "state not a dict"])
def test_every_bad_file_is_one_named_error_and_resume_prints_it(tmp_path, damage, capsys):
    model, _ = _small_model()
    path = tmp_path / "m.npz"
    save_checkpoint(model, path)
    members = _members(path)
    array = next(m for m in members if m[0] != "__meta__.npy")
    if damage == "not a zip":
        path.write_bytes(b"PK\x03\x04" + bytes(100))
    elif damage == "empty zip":
        _write_zip(path, [])
    elif damage == "no header":
        _write_zip(path, [array])
    elif damage in ("header not JSON", "header not a dict"):
        _with_header(path, b"{{{" if damage == "header not JSON" else b"[1, 2]")
    elif damage == "array missing":
        _write_zip(path, [members[0]])
    elif damage in ("array of another shape", "array of another dtype"):
        with zipfile.ZipFile(path) as z:
            value = np.lib.format.read_array(z.open(array[0]))
        value = value.ravel() if damage == "array of another shape" else value.astype(np.float32)
        buffer = io.BytesIO()
        np.lib.format.write_array(buffer, value)
        raw = buffer.getvalue()
        _write_zip(path, [members[0], (array[0], zipfile.ZIP_STORED, raw, zlib.crc32(raw), len(raw))])
    elif damage == "unreadable npy header":
        raw = b"\x93NUMPY\x01\x00" + struct.pack("<H", 16) + b"{'descr': os.sys"
        _write_zip(path, [members[0], (array[0], zipfile.ZIP_STORED, raw, zlib.crc32(raw), len(raw))])
    elif damage == "bzip2 member":
        _write_zip(path, [members[0], (array[0], zipfile.ZIP_BZIP2, array[2], array[3], array[4])])
    elif damage == "entry unreadable":
        _rewrite_meta(path, lambda m: m["payload"]["state"]["__dict__"].update(coef_={"__eval__": "1"}))
    else:
        _rewrite_meta(path, lambda m: m["payload"].update(state=[1]))
    with pytest.raises(CheckpointError) as caught:
        load_checkpoint(path)
    assert isinstance(caught.value, ValueError) and str(path) in str(caught.value)
    assert main(["resume", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err


# ------------------------------------------------------------------ old formats, through MIGRATIONS
def write_format_2(obj, path, *, extra=None, drop=(), history_drop=()) -> None:
    """Write ``obj`` as format 2 did: the header without an arrays table or ncld version, every array
    its own member, the state as ``vars``; without the model attributes ``drop`` and the history
    columns ``history_drop``, which format 2 files written before them lacked."""
    arrays = {}

    def encode(value):
        if isinstance(value, np.ndarray):
            arrays[f"a{len(arrays)}"] = value
            return {"__array__": f"a{len(arrays) - 1}"}
        if isinstance(value, (np.integer, np.floating, np.bool_)):
            return value.item()
        if isinstance(value, (list, tuple)):
            return {"__list__": [encode(v) for v in value]}
        if isinstance(value, dict):
            return {"__dict__": {k: encode(v) for k, v in value.items()}}
        if hasattr(value, "__dict__"):
            state = dict(vars(value))
            if isinstance(value, ELMNCLD):
                state = {k: v for k, v in state.items() if k not in drop}
                if "_records" in state:  # format 2 kept rows, and the newest chunk's prevalences beside them
                    records = state.pop("_records")
                    state["_history"] = [r.row() for r in records]
                    if records and records[-1].prevalence_hat is not None:
                        state["_prevalence"] = np.asarray(records[-1].prevalence_hat)
                if "_history" in state:
                    state["_history"] = [{k: v for k, v in row.items() if k not in history_drop}
                                         for row in state["_history"]]
            return {"__object__": type(value).__name__, "state": encode(state)}
        return value

    meta = {"format": FORMAT, "version": 2, "payload": encode(obj), "extra": encode(extra or {})}
    np.savez(path, __meta__=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8), **arrays)


#: What format 2 models written before the decision rules, the online ridge and the monitors lacked.
FORMAT_2_MISSING = ("decision", "decision_state_", "alpha_", "alpha_losses_", "alpha_grid_", "monitors", "monitors_",
                    "loss")


def test_a_format_2_checkpoint_loads_through_migration_and_continues_exactly(tmp_path):
    rng = np.random.default_rng(3)
    X, Y = rng.normal(size=(300, 6)), (rng.random((300, 4)) < 0.3).astype(int)
    # a format 2 model regressed the noisy labels (loss="paper"): the migration reads a missing loss so
    model = ELMNCLD(n_neighbors=5, rho_pos=0.1, rho_neg=0.2, detector="paper", decision="paper", loss="paper",
                    random_state=0)
    model.partial_fit(X[:100], Y[:100])
    model.partial_fit(X[100:200], Y[100:200])
    # history rows did not record the ridge either
    write_format_2(model, tmp_path / "old.npz", drop=FORMAT_2_MISSING, history_drop=("alpha",))
    with zipfile.ZipFile(tmp_path / "old.npz") as z:
        meta = json.loads(np.lib.format.read_array(z.open("__meta__.npy")).tobytes())
    assert meta["version"] == 2 and "arrays" not in meta and "decision" not in meta["payload"]["state"]["__dict__"]

    old = load_checkpoint(tmp_path / "old.npz", expected=ELMNCLD)
    assert (old.decision, old.detector, tuple(old.monitors), old.monitors_, old.loss) == ("paper", "paper", (), {}, "paper")
    assert old.alpha_ == model.alpha and old.decision_state_ is None
    np.testing.assert_array_equal(old.predict(X[200:]), (old.decision_function(X[200:]) > 0).astype(np.int8))
    np.testing.assert_array_equal(old.predict(X[200:]), model.predict(X[200:]))
    assert np.isnan(old.history_["alpha"]).all() and np.isnan(old.last_record_.alpha)
    model.partial_fit(X[200:], Y[200:])
    old.partial_fit(X[200:], Y[200:])
    assert np.array_equal(old.coef_, model.coef_)
    # and it is written back in the current format
    save_checkpoint(old, tmp_path / "new.npz")
    assert np.array_equal(load_checkpoint(tmp_path / "new.npz").coef_, model.coef_)


def test_a_format_4_checkpoint_loads_without_shrinkage_and_continues_exactly(tmp_path):
    """Format 4 had no ``shrinkage``: the migration gives the model the solve it was written with (0)."""
    rng = np.random.default_rng(4)
    X, Y = rng.normal(size=(300, 6)), (rng.random((300, 4)) < 0.3).astype(int)
    model = ELMNCLD(n_neighbors=5, rho_pos=0.1, rho_neg=0.2, random_state=0)
    model.partial_fit(X[:100], Y[:100]).partial_fit(X[100:200], Y[100:200])
    path = tmp_path / "old.npz"
    save_checkpoint(model, path)
    _rewrite_meta(path, lambda m: (m.update(version=4), m["payload"]["state"]["__dict__"].pop("shrinkage")))
    with pytest.raises(CheckpointError, match="missing shrinkage"):  # as format 5, the parameter is missing
        _rewrite_meta(path, lambda m: m.update(version=5)) or load_checkpoint(path)
    _rewrite_meta(path, lambda m: m.update(version=4))
    old = load_checkpoint(path, expected=ELMNCLD)
    assert old.shrinkage == 0.0
    model.partial_fit(X[200:], Y[200:])
    old.partial_fit(X[200:], Y[200:])
    assert np.array_equal(old.coef_, model.coef_)


def test_a_format_3_estimator_is_upgraded_by_its_class_and_continues_exactly(tmp_path):
    """Format 3 estimators had neither the interval parameters nor the intervals and trusted sample: the
    FlipRateEstimator's own upgrade hook gives it the parameters it behaved as having."""
    rng = np.random.default_rng(11)
    X, Y = rng.normal(size=(300, 6)), (rng.random((300, 4)) < 0.3).astype(int)
    model = ELMNCLD(n_hidden=20, n_neighbors=5, random_state=0).partial_fit(X[:100], Y[:100])
    model.partial_fit(X[100:200], Y[100:200])
    path = tmp_path / "old.npz"
    save_checkpoint(model, path)
    format_4 = ("level", "identified_width", "max_trusted_rows", "rho_pos_low_", "rho_pos_high_", "rho_neg_low_",
                "rho_neg_high_")

    def as_format_3(meta):
        estimator = meta["payload"]["state"]["__dict__"]["flip_rate_estimator_"]["state"]["__dict__"]
        for name in format_4:
            estimator.pop(name)
        meta.update(version=3)

    _rewrite_meta(path, as_format_3)
    old = load_checkpoint(path, expected=ELMNCLD)
    est = old.flip_rate_estimator_
    assert (est.level, est.identified_width, est.max_trusted_rows) == (0.95, 0.1, 20000)
    assert not hasattr(est, "rho_pos_low_")
    model.partial_fit(X[200:], Y[200:])
    old.partial_fit(X[200:], Y[200:])
    np.testing.assert_array_equal(old.flip_rate_estimator_.rho_pos_, model.flip_rate_estimator_.rho_pos_)
    np.testing.assert_array_equal(old.coef_, model.coef_)


def test_the_model_and_the_estimator_declare_their_own_saved_state():
    """checkpoint.py knows no class's state: ELMNCLD and FlipRateEstimator declare theirs (with the upgrades of
    their old formats) next to their code, and no attribute of theirs is named in checkpoint.py."""
    import ncld_core.checkpoint as checkpoint
    from ncld_core.model.flip_rates import FlipRateEstimator
    from ncld_core.saved_state import SavedState

    assert not hasattr(checkpoint, "SCHEMAS")
    assert isinstance(ELMNCLD.saved_state, SavedState) and set(ELMNCLD.saved_state.upgrades) == {2, 4}
    assert isinstance(FlipRateEstimator.saved_state, SavedState) and set(FlipRateEstimator.saved_state.upgrades) == {3}
    source = Path(checkpoint.__file__).read_text()
    for cls in (ELMNCLD, FlipRateEstimator):
        declared = cls.saved_state
        named = [n for n in {*declared.state, *declared.fitted, *declared.optional} if f'"{n}"' in source]
        assert not named, f"checkpoint.py names {cls.__name__}'s attributes {named}"


def test_a_format_2_run_loads_through_migration(tmp_path):
    cfg = RunConfig(n_instances=600, chunk_size=150, models=["ELM-O"])
    runner = cfg.runner()
    chunks = list(runner.iter_run(cfg.build_stream()))
    records = [asdict(c) for c in chunks]
    for r in records:
        for d in r["diagnostics"].values():
            d.pop("alpha")
    write_format_2({"models": runner.state_.models, "accumulators": runner.state_.accumulators},
                   tmp_path / "old.npz", drop=("decision", "decision_state_"),
                   extra={"next_chunk": 4, "config": cfg.to_dict(), "chunk_size": 150, "chunks": records})
    state, loaded, config, size = load_run(tmp_path / "old.npz")
    assert state.next_chunk == 4 and size == 150 and RunConfig.from_dict(config) == cfg
    assert state.models["ELM-O"].decision == "paper"
    assert all(np.isnan(c.diagnostics["ELM-O"].alpha) for c in loaded)
    assert json.dumps([c.metrics for c in loaded]) == json.dumps([c.metrics for c in chunks])


def test_the_saved_states_cover_every_attribute_a_model_has(tmp_path):
    """The classes' saved_state declarations name every attribute of the checkpointable classes in each
    configuration (a new attribute must be added there, with an upgrade hook for the files without it); each
    round-trips."""
    import inspect

    from ncld_core.checkpoint import saved_state_of
    from ncld_core.eval.metrics import MetricAccumulator
    from ncld_core.model.detector import DETECTORS
    from ncld_core.eval.references import AllNegative, NoisyPrior
    from ncld_core.model.elm import RandomHiddenLayer
    from ncld_core.model.flip_rates import FlipRateEstimator
    from ncld_core.model.statistics import SufficientStatistics

    rng = np.random.default_rng(1)
    X, Y = rng.normal(size=(120, 5)), (rng.random((120, 3)) < 0.3).astype(int)
    fitted = [
        ELMNCLD(n_hidden=20, n_neighbors=5, random_state=0),
        ELMNCLD(n_hidden=20, n_neighbors=5, random_state=0, monitors=("paper", "welch", "adaptive", "labels", "glr",
                                                                          "labels-glr", "glr+labels",
                                                                          "adaptive+labels-glr")),
        ELMNCLD(n_hidden=20, n_neighbors=5, random_state=0, rho_pos=0.1, alpha="auto", scaling="l2"),
        ELMNCLD(n_hidden=20, n_neighbors=5, random_state=0, flip_rates=FlipRateEstimator(negative_anchor="mixture")),
        NoisyPrior(), AllNegative(),
    ]
    for model in fitted:
        model.partial_fit(X[:60], Y[:60])
        model.partial_fit(X[60:], Y[60:])
    fitted += [ELMNCLD(n_hidden=20, n_neighbors=5, random_state=0).fit(X, Y[:, 0]), ELMNCLD(), NoisyPrior(),
               MetricAccumulator(), ELMNCLD(n_hidden=20, n_neighbors=5, random_state=0).fit(X, Y, chunk_size=60)]
    acc = MetricAccumulator()
    acc.update(Y[:10], rng.normal(size=(10, 3)))
    fitted.append(acc)

    def objects(value, out):
        if saved_state_of(type(value)).others is None:
            out.append(value)
            for v in vars(value).values():
                objects(v, out)
        elif isinstance(value, (list, tuple)):
            for v in value:
                objects(v, out)
        elif isinstance(value, dict):
            for v in value.values():
                objects(v, out)
        return out

    seen = set()
    for i, model in enumerate(fitted):
        for obj in objects(model, []):
            schema = saved_state_of(type(obj))
            assert schema.others is None, f"{type(obj).__name__} declares no saved_state"
            known = {*schema.state, *schema.fitted, *schema.optional, *schema.params}
            params = {p for p in inspect.signature(type(obj).__init__).parameters if p != "self"}
            unknown = set(vars(obj)) - known - params
            assert not unknown, f"{type(obj).__name__}: add {sorted(unknown)} to its saved_state (and an upgrade hook)"
            seen.add(type(obj))
        save_checkpoint(model, tmp_path / f"{i}.npz")
        again = load_checkpoint(tmp_path / f"{i}.npz")
        assert type(again) is type(model) and set(vars(again)) == set(vars(model))
    assert seen == set(DETECTORS.values()) | {ELMNCLD, FlipRateEstimator, RandomHiddenLayer, SufficientStatistics,
                                              MetricAccumulator, AllNegative, NoisyPrior}


def test_an_array_held_by_several_models_is_stored_once(tmp_path):
    cfg = RunConfig(n_instances=600, chunk_size=150, models=["ELM-O", "ELM-I", "ELM-II"])
    runner = cfg.runner()
    chunks = list(runner.iter_run(cfg.build_stream()))
    models = runner.state_.models
    assert models["ELM-O"].hidden_.weights_ is models["ELM-I"].hidden_.weights_  # the run's shared draw
    save_run(tmp_path / "run.npz", runner.state_, chunks, config=cfg.to_dict(), chunk_size=cfg.chunk_size)
    with np.load(tmp_path / "run.npz", allow_pickle=False) as z:
        meta = json.loads(z["__meta__"].tobytes())
    shape = list(models["ELM-O"].hidden_.weights_.shape)
    assert sum(1 for _, s in meta["arrays"].values() if s == shape) == 1
    state, *_ = load_run(tmp_path / "run.npz")
    assert state.models["ELM-O"].hidden_.weights_ is state.models["ELM-II"].hidden_.weights_
    np.testing.assert_array_equal(state.models["ELM-I"].hidden_.weights_, models["ELM-I"].hidden_.weights_)


# ------------------------------------------------------------------ temporary files
def test_a_save_interrupted_midway_leaves_no_temporary_file_and_the_old_checkpoint(tmp_path, monkeypatch):
    model, X = _small_model()
    path = tmp_path / "m.npz"
    save_checkpoint(model, path)
    before = path.read_bytes()
    written = []
    original = np.lib.format.write_array

    def killed(fp, array, **kw):
        if len(written) == 2:  # the header and the first array are written, then the user presses Ctrl-C
            fp.write(b"half an array")
            raise KeyboardInterrupt
        original(fp, array, **kw)
        written.append(array.shape)

    monkeypatch.setattr(np.lib.format, "write_array", killed)
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint(model, path)
    assert len(written) == 2 and sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]
    assert path.read_bytes() == before

    def disk_full(fp, array, **kw):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(np.lib.format, "write_array", disk_full)
    with pytest.raises(CheckpointError, match="cannot write checkpoint .*No space left"):
        save_checkpoint(model, path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]
    assert np.array_equal(load_checkpoint(path).decision_function(X), model.decision_function(X))


def test_temporaries_left_by_a_killed_save_are_removed_by_the_next_save(tmp_path):
    import os
    import time

    from ncld_core.files import STALE_TEMP_SECONDS

    model, _ = _small_model()
    stale, fresh = tmp_path / ".m.npz.k1ll3d_x.tmp", tmp_path / ".m.npz.running1.tmp"
    other, mine = tmp_path / ".other.npz.k1ll3d_x.tmp", tmp_path / "notes.tmp"
    for p in (stale, fresh, other, mine):
        p.write_bytes(bytes(1000))
    old = time.time() - STALE_TEMP_SECONDS - 60
    for p in (stale, other, mine):
        os.utime(p, (old, old))
    save_checkpoint(model, tmp_path / "m.npz")
    # only the old temporary of this very path goes: a fresh one may be a save in progress
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["m.npz", fresh.name, other.name, mine.name])


def test_a_run_checkpoint_is_checked_as_a_run(tmp_path, capsys):
    cfg = RunConfig(n_instances=300, chunk_size=150, models=["ELM-O"])
    runner = cfg.runner()
    chunks = list(runner.iter_run(cfg.build_stream()))
    path = tmp_path / "run.npz"

    def save(**change):
        save_run(path, runner.state_, chunks, config=cfg.to_dict(), chunk_size=cfg.chunk_size)
        _rewrite_meta(path, lambda m: m["extra"]["__dict__"].update(change))

    save(config={"__dict__": {"schedule": 7}})  # RunConfig.check() meets it with an AttributeError
    assert main(["resume", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: checkpoint {path}: its run configuration cannot be run") and "Traceback" not in err
    save(next_chunk=5)
    with pytest.raises(CheckpointError, match="next_chunk 5 does not count its chunks"):
        load_run(path)
    save(chunks={"__list__": [{"__dict__": {"chunk": 0}}, {"__dict__": {"chunk": 1}}]})
    with pytest.raises(CheckpointError, match="a chunk record is unreadable"):
        load_run(path)
    save_checkpoint({"models": {"ELM-O": runner.state_.accumulators["ELM-O"]}, "accumulators": {}}, path,
                    extra={"next_chunk": 0, "chunks": []})
    with pytest.raises(CheckpointError, match="its models are not ncld models"):
        load_run(path)


# ------------------------------------------------------------------ values and files refused (issue 41, items 4, 5)
def _rewrite_arrays(path, change) -> dict:
    """Rewrite the checkpoint's array members through ``change(key, array) -> array`` (same dtype and shape; the
    header kept); returns ``{attribute path: member key}`` of the arrays."""
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays["__meta__"].tobytes())
    where = {}

    def walk(node, at):
        if isinstance(node, dict):
            if set(node) == {"__array__"}:
                where.setdefault(at, node["__array__"])
            for k, v in node.items():
                walk(v, at if k in ("__dict__", "__list__", "state", "__object__") else f"{at}.{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{at}[{i}]")

    walk(meta["payload"], "")
    np.savez(path, **{k: (v if k == "__meta__" else change(k, v)) for k, v in arrays.items()})
    return where


def _fitted_with_rates(tmp_path):
    rng = np.random.default_rng(2)
    X, Y = rng.normal(size=(80, 4)), (rng.random((80, 3)) < 0.4).astype(int)
    model = ELMNCLD(n_hidden=20, n_neighbors=5, rho_pos=0.1, rho_neg=0.2, random_state=0)
    model.partial_fit(X[:40], Y[:40]).partial_fit(X[40:], Y[40:])
    path = tmp_path / "m.npz"
    save_checkpoint(model, path)
    return path


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf, 1e308])
def test_a_checkpoint_whose_float_arrays_are_all_non_finite_or_huge_is_refused(tmp_path, value, capsys):
    # The file: every float array set to one value. It loaded; decision_function gave NaN / inf.
    path = _fitted_with_rates(tmp_path)
    _rewrite_arrays(path, lambda k, a: np.full_like(a, value) if a.dtype.kind == "f" else a)
    with pytest.raises(CheckpointError) as caught:
        load_checkpoint(path)
    message = str(caught.value)
    assert message.startswith(f"checkpoint {path}: ") and re.search(r"\(member a\d+\.npy\) holds ", message), message
    assert "its values must be finite" in message
    assert main(["resume", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: checkpoint ") and "Traceback" not in err


def test_one_nan_in_the_hidden_weights_is_refused_naming_the_member_and_the_entry(tmp_path):
    path = _fitted_with_rates(tmp_path)
    key = None

    def one_nan(k, a):
        if a.ndim == 2 and a.shape == (4, 20):  # W (d, L)
            a = a.copy()
            a[1, 2] = np.nan
        return a

    where = _rewrite_arrays(path, one_nan)
    key = where[".hidden_.weights_"]
    with pytest.raises(CheckpointError, match=rf"the RandomHiddenLayer at \['hidden_'\]: weights_ \(member {key}\.npy\) "
                                              r"holds nan at \(1, 2\) \(1 of 80 values refused\); its values must be "
                                              r"finite and in \[-1, 1\]"):
        load_checkpoint(path)


@pytest.mark.parametrize("target, value, message", [
    (".coef_", 1e308, r"its ELMNCLD does not work as loaded: ValueError: its decision function is not finite"),
    ("._rates[0][1]", 1.5, r"its ELMNCLD: _rates\[0\]\[1\] \(member a\d+\.npy\) holds 1.5 at 0 \(3 of 3 values "
                           r"refused\); its values must be finite and in \[0, 1\)"),
    (".statistics_.HtH", -1.0, r"HtH \(its diagonal\) \(member a\d+\.npy\) holds -1.0 at 0 .*must be finite and >= 0"),
    # the default detector's window of chunk summaries (instances, mean, sum of squares) and label counts
    (".detector_.cardinality_.window_", -5.0, r"\['detector_'\]\['cardinality_'\]: window_\[:, 0\] \(member a\d+\.npy\) "
                                              r"holds -5.0 at 0 .*must be finite and >= 0"),
    (".detector_.labels_.counts_", -1.0, r"counts_ \(member a\d+\.npy\) holds -1.0 at \(0, 0\) .*must be finite and >= 0"),
    (".decision_state_.prevalence", np.nan, r"decision_state_\['prevalence'\] \(member a\d+\.npy\) holds nan at 0"),
])
def test_an_array_outside_its_declared_range_is_refused(tmp_path, target, value, message):
    path = _fitted_with_rates(tmp_path)
    key = _rewrite_arrays(path, lambda k, a: a)[target]
    _rewrite_arrays(path, lambda k, a: np.full_like(a, value) if k == key else a)
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(path)


def test_a_flip_rate_estimate_outside_0_1_is_refused(tmp_path):
    rng = np.random.default_rng(5)
    X, Y = rng.normal(size=(80, 4)), (rng.random((80, 3)) < 0.4).astype(int)
    model = ELMNCLD(n_hidden=20, n_neighbors=5, random_state=0).partial_fit(X[:40], Y[:40]).partial_fit(X[40:], Y[40:])
    assert model.flip_rate_estimator_ is not None
    path = tmp_path / "m.npz"
    save_checkpoint(model, path)
    key = _rewrite_arrays(path, lambda k, a: a)[".flip_rate_estimator_.rho_pos_"]
    _rewrite_arrays(path, lambda k, a: np.full_like(a, 1e308) if k == key else a)
    with pytest.raises(CheckpointError, match=rf"FlipRateEstimator at \['flip_rate_estimator_'\]: rho_pos_ \(member "
                                              rf"{key}\.npy\) holds 1e\+308 at 0 .*in \[0, 1\)"):
        load_checkpoint(path)


def test_a_duplicate_member_is_refused(tmp_path):
    # zipfile reads the later of two members of one name: a file could show one array to a reader and another to ncld
    model, _ = _small_model()
    path = tmp_path / "m.npz"
    save_checkpoint(model, path)
    members = _members(path)
    name, method, raw, crc, size = members[1]
    other = np.lib.format.read_array(io.BytesIO(raw)) * 0
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, other)
    twin = buffer.getvalue()
    _write_zip(path, members + [(name, method, twin, zlib.crc32(twin), len(twin))])
    with zipfile.ZipFile(path) as z:
        assert z.namelist().count(name) == 2
    with pytest.raises(CheckpointError, match=rf"checkpoint {re.escape(str(path))}: member {name} appears twice"):
        load_checkpoint(path)


def test_a_directory_is_refused_as_not_a_regular_file(tmp_path):
    with pytest.raises(CheckpointError, match=rf"checkpoint {re.escape(str(tmp_path))} is a directory, not a regular "
                                              "file"):
        load_checkpoint(tmp_path)


def _resume_in_a_child(path, tmp_path):
    """``ncld resume path`` in a child process capped at 2 GiB of address space and 60 s: a read without bound
    ends in the child (out of memory, or killed) instead of taking the machine."""
    import os
    import resource
    import subprocess
    import sys

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))

    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    try:
        return subprocess.run([sys.executable, "-m", "ncld_core", "resume", str(path), "--quiet"], cwd=tmp_path,
                              preexec_fn=cap, capture_output=True, text=True, timeout=60, env=env)
    except subprocess.TimeoutExpired:
        pytest.fail(f"ncld resume {path} still ran after 60 s (a read that never ends)")


@pytest.mark.parametrize("kind", ["/dev/zero", "fifo"])
def test_a_device_or_fifo_is_refused_before_any_read(tmp_path, kind):
    # /dev/zero grew ncld resume to 23.8 GB until the kernel killed it; a FIFO without a writer blocked for ever
    import os

    if kind == "fifo":
        path = tmp_path / "run.npz"
        os.mkfifo(path)
        what = "a FIFO (named pipe)"
    else:
        path, what = Path("/dev/zero"), "a character device"
    done = _resume_in_a_child(path, tmp_path)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr == f"error: checkpoint {path} is {what}, not a regular file; a checkpoint is a file ncld wrote\n"
    with pytest.raises(CheckpointError, match=f"is {re.escape(what)}, not a regular file"):
        load_checkpoint(path)


def test_a_failure_without_a_message_still_names_its_reason(tmp_path, monkeypatch):
    # under a 3 GB limit /dev/zero ended in "...corrupt or not an ncld checkpoint ()": a MemoryError has no text
    model, _ = _small_model()
    save_checkpoint(model, tmp_path / "m.npz")

    def no_memory(*args, **kwargs):
        raise MemoryError()

    monkeypatch.setattr(zipfile, "ZipFile", no_memory)
    with pytest.raises(CheckpointError, match=r"corrupt or not an ncld checkpoint \(reading it needs more memory "
                                              r"than there is\)"):
        load_checkpoint(tmp_path / "m.npz")


# ------------------------------------------------------------------ every detector, every model (issue 40, item 4)
def _continues_exactly(model, tmp_path, X, Y, chunks=3, size=60):
    """``model`` fitted on ``chunks`` chunks, saved and loaded: the copy learns the next chunk as the model does."""
    for i in range(chunks):
        model.partial_fit(X[i * size:(i + 1) * size], Y[i * size:(i + 1) * size])
    path = tmp_path / f"{id(model)}.npz"
    save_checkpoint(model, path)
    again = load_checkpoint(path)
    assert type(again) is type(model) and set(vars(again)) == set(vars(model))
    rest = slice(chunks * size, (chunks + 1) * size)
    np.testing.assert_array_equal(again.decision_function(X[rest]), model.decision_function(X[rest]))
    model.partial_fit(X[rest], Y[rest])
    again.partial_fit(X[rest], Y[rest])
    return model, again


def _every_model() -> dict:
    """A model per DETECTORS entry, per VARIANTS entry (the ELM-NCLD variants, the oracle, the references) and
    per peer of BASELINES, and the River classifier chain on River's own engine."""
    from ncld_core.eval.baselines import make_baseline
    from ncld_core.eval.variants import VARIANTS, make_model

    return {**{f"detector {name}": ELMNCLD(n_hidden=20, n_neighbors=5, detector=name, random_state=0)
               for name in DETECTORS},
            **{name: make_model(name, n_hidden=20, n_neighbors=5, random_state=0) for name in VARIANTS},
            **{name: make_baseline(name, random_state=0) for name in BASELINES},
            "River CC-LR (river engine)": make_baseline("River CC-LR", engine="river")}


def test_every_detector_variant_and_peer_round_trips_in_one_checkpoint(tmp_path):
    """No exemption: every model a run can hold is saved after three chunks and loaded; the copy decides as the
    model does on the next chunk and learns it as the model does."""
    rng = np.random.default_rng(6)
    X, Y = rng.normal(size=(240, 5)), (rng.random((240, 3)) < 0.35).astype(int)
    models = _every_model()
    for model in models.values():
        for i in range(3):
            model.partial_fit(X[i * 60:(i + 1) * 60], Y[i * 60:(i + 1) * 60])
    save_checkpoint(models, tmp_path / "all.npz")
    loaded = load_checkpoint(tmp_path / "all.npz")
    assert set(loaded) == set(models)
    rest = slice(180, 240)
    for name, model in models.items():
        again = loaded[name]
        assert type(again) is type(model) and set(vars(again)) == set(vars(model)), name
        np.testing.assert_array_equal(again.decision_function(X[rest]), model.decision_function(X[rest]), err_msg=name)
        np.testing.assert_array_equal(again.predict(X[rest]), model.predict(X[rest]), err_msg=name)
        model.partial_fit(X[rest], Y[rest])
        again.partial_fit(X[rest], Y[rest])
        np.testing.assert_array_equal(again.decision_function(X), model.decision_function(X), err_msg=name)
        if isinstance(model, ELMNCLD):
            assert type(again.detector_) is type(model.detector_)
            pd.testing.assert_frame_equal(again.history_.drop(columns="seconds"), model.history_.drop(columns="seconds"))


@pytest.mark.parametrize("matrix", [sp.csr_matrix(np.array([[0.0, 2.5, 0.0], [0.0, 0.0, 0.0], [-1.0, 0.0, 4.0]])),
                                    sp.csr_matrix((0, 7)), sp.csr_matrix((np.ones(2), np.array([3, 0], dtype=np.int64),
                                                                         np.array([0, 1, 2], dtype=np.int64)), shape=(2, 4))])
def test_a_csr_matrix_is_stored_as_its_shape_and_three_arrays(tmp_path, matrix):
    path = tmp_path / "m.npz"
    save_checkpoint({"window": matrix}, path)
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(z["__meta__"].tobytes())
    assert set(meta["payload"]["__dict__"]["window"]["__csr__"]) == {"shape", "data", "indices", "indptr"}
    again = load_checkpoint(path)["window"]
    assert type(again) is sp.csr_matrix and again.shape == matrix.shape
    for part in ("data", "indices", "indptr"):
        np.testing.assert_array_equal(getattr(again, part), getattr(matrix, part))


def _saved_window(tmp_path):
    """An MW peer (its instances kept as a CSR matrix ``_store``) saved after three chunks; its path and its
    store's shape."""
    from ncld_core.eval.baselines import make_baseline

    rng = np.random.default_rng(10)
    X, Y = rng.normal(size=(180, 5)), (rng.random((180, 3)) < 0.35).astype(int)
    peer = make_baseline("MW", n_pos=10, n_neg=10, k=3)
    for i in range(3):
        peer.partial_fit(X[i * 60:(i + 1) * 60], Y[i * 60:(i + 1) * 60])
    path = tmp_path / "mw.npz"
    save_checkpoint(peer, path)
    return path, peer._store.shape


def _falls(a):
    a = a.copy()
    a[1] = a[2] + 1  # above the next entry
    return a


@pytest.mark.parametrize("part, change, message", [
    ("indices", lambda a: np.where(np.arange(a.size) == 2, 5, a),
     r"the CSR matrix at \['_store'\]: its indices hold 5 at 2, outside its 5 columns \(member a\d+\.npy\)"),
    ("indices", lambda a: np.where(np.arange(a.size) == 0, -1, a), r"its indices hold -1 at 0, outside its 5 columns"),
    ("indptr", _falls, r"the CSR matrix at \['_store'\]: its indptr must start at 0 and never decrease; it falls from "
                       r"(\d+) to (\d+) at 2 \(member a\d+\.npy\)"),
    ("indptr", lambda a: a + 1, r"its indptr must start at 0 and never decrease; it starts at 1 \(member"),
    ("indptr", lambda a: np.where(np.arange(a.size) == a.size - 1, a[-1] - 1, a), r"its indptr ends at \d+ for \d+ "
                                                                                  r"indices and \d+ values"),
    ("data", lambda a: np.where(np.arange(a.size) == 3, np.nan, a),
     r"its MW: _store \(its data\) \(member a\d+\.npy\) holds nan at 3 \(1 of \d+ values refused\); its values must "
     r"be finite"),
    ("data", lambda a: np.full_like(a, np.inf), r"_store \(its data\) \(member a\d+\.npy\) holds inf at 0"),
])
def test_a_csr_matrix_whose_parts_disagree_or_hold_non_finite_values_is_refused(tmp_path, part, change, message):
    path, _ = _saved_window(tmp_path)
    key = _rewrite_arrays(path, lambda k, a: a)[f"._store.__csr__.{part}"]
    _rewrite_arrays(path, lambda k, a: change(a).astype(a.dtype) if k == key else a)
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(path)


@pytest.mark.parametrize("change, message", [
    (lambda c: c.update(shape=[c["shape"][0], 2]), r"its indices hold [2-4] at \d+, outside its 2 columns"),
    (lambda c: c.update(shape=[c["shape"][0] + 1, 5]), r"its indptr has \d+ entries for \d+ rows \(rows \+ 1 expected\)"),
    (lambda c: c.update(shape=["x", 5]), r"its shape must be two counts; got 'x'|its shape must be two counts; got a list"),
    (lambda c: c.update(shape=[-1, 5]), r"its shape must be two counts"),
    (lambda c: c.pop("indptr"), r"a CSR matrix is not its shape, data, indices, indptr"),
    (lambda c: c.update(indices=c["data"]), r"its indices must be a 1-D integer array; got a float64 array"),
])
def test_a_csr_matrix_of_another_shape_or_parts_is_refused_by_name(tmp_path, change, message):
    path, _ = _saved_window(tmp_path)
    _rewrite_meta(path, lambda m: change(m["payload"]["state"]["__dict__"]["_store"]["__csr__"]))
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(path)


def _saved_river(tmp_path, name="River BR-LR", **params):
    from ncld_core.eval.baselines import make_baseline

    rng = np.random.default_rng(12)
    X, Y = rng.normal(size=(120, 5)), (rng.random((120, 3)) < 0.35).astype(int)
    path = tmp_path / "river.npz"
    save_checkpoint(make_baseline(name, **params).partial_fit(X[:60], Y[:60]).partial_fit(X[60:], Y[60:]), path)
    return path


def test_a_river_model_is_stored_as_its_weights_never_as_an_object(tmp_path):
    path = _saved_river(tmp_path)
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(z["__meta__"].tobytes())
    stored = meta["payload"]["state"]["__dict__"]["model_"]["__dict__"]
    assert set(stored) == {"keys", "weights", "intercepts", "steps"} and "__object__" not in json.dumps(stored)
    assert len(stored["keys"]["__list__"]) == 3  # a model per label


@pytest.mark.parametrize("target, change, message", [
    (".model_.weights[1]", lambda a: np.where(np.arange(a.size) == 2, np.nan, a),
     r"its RiverBinaryRelevance: model_\['weights'\]\[1\] \(member a\d+\.npy\) holds nan at 2"),
    (".model_.intercepts", lambda a: np.full_like(a, np.inf), r"model_\['intercepts'\] \(member a\d+\.npy\) holds inf"),
    (".model_.steps", lambda a: a - 10**6, r"model_\['steps'\] \(member a\d+\.npy\) holds -\d+ at 0 .*>= 0"),
    (".model_.keys[0]", lambda a: np.where(np.arange(a.size) == 1, 7, a),
     r"its RiverBinaryRelevance: model_\['keys'\]\[0\] holds 7 at 1: a column of the 5 features is in \[0, 5\)"),
    (".model_.keys[2]", lambda a: np.zeros_like(a), r"model_\['keys'\]\[2\] names a feature twice"),
])
def test_a_river_model_with_weights_out_of_place_or_range_is_refused(tmp_path, target, change, message):
    path = _saved_river(tmp_path)
    key = _rewrite_arrays(path, lambda k, a: a)[target]
    _rewrite_arrays(path, lambda k, a: change(a).astype(a.dtype) if k == key else a)
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(path)


@pytest.mark.parametrize("change, message", [
    (lambda s: s["model_"]["__dict__"]["keys"]["__list__"].pop(), r"model_\['keys'\] has 2 entries for 3 labels"),
    (lambda s: s["model_"]["__dict__"].pop("steps"), r"model_ must be a dict \(keys: "),
    (lambda s: s.update(model_={"__object__": "PerOutputClassifier", "state": {"__dict__": {}}}),
     r"unknown class 'PerOutputClassifier'"),
])
def test_a_river_model_of_another_shape_is_refused(tmp_path, change, message):
    path = _saved_river(tmp_path)
    _rewrite_state(path, lambda s, m: change(s))
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(path)


def test_a_river_chain_feeds_each_label_only_the_labels_before_it(tmp_path):
    path = _saved_river(tmp_path, "River CC-LR", engine="river")
    keys = _rewrite_arrays(path, lambda k, a: a)
    first, last = keys[".model_.keys[0]"], keys[".model_.keys[2]"]
    with np.load(path, allow_pickle=False) as z:
        assert z[first].min() >= 0 and sorted(z[last][z[last] < 0]) == [-2, -1]  # label 2 is fed labels 0 and 1
    _rewrite_arrays(path, lambda k, a: np.where(np.arange(a.size) == 0, -1, a) if k == first else a)
    with pytest.raises(CheckpointError, match=r"its RiverClassifierChain: model_\['keys'\]\[0\] holds -1 at 0: a column of the 5 "
                                              r"features is in \[0, 5\), no label before it"):
        load_checkpoint(path)
    path = _saved_river(tmp_path, "River CC-LR", engine="river")
    _rewrite_arrays(path, lambda k, a: np.where(a == -2, -3, a) if k == last else a)
    with pytest.raises(CheckpointError, match=r"model_\['keys'\]\[2\] holds -3 at \d+: .*an earlier label's probability in "
                                              r"\[-2, -1\]"):
        load_checkpoint(path)


def test_every_model_of_a_run_resumes_bit_identically(tmp_path):
    """Every entry of VARIANTS (the ELM-NCLD variants, the oracle, the references) and every peer a checkpoint
    holds, in one run, saved midway."""
    from ncld_core.eval.variants import VARIANTS

    models = [*VARIANTS, *BASELINES]
    cfg = RunConfig(n_instances=900, chunk_size=150, schedule="growth@450", models=models)
    stream = cfg.build_stream()
    full = list(cfg.runner().iter_run(stream))
    runner, first = cfg.runner(), []
    for chunk in runner.iter_run(stream):
        first.append(chunk)
        if chunk.chunk == 2:
            break
    save_run(tmp_path / "run.npz", runner.state_, first, config=cfg.to_dict(), chunk_size=cfg.chunk_size)
    state, chunks, config, _ = load_run(tmp_path / "run.npz")
    assert set(state.models) == set(models)
    rest = list(RunConfig.from_dict(config).runner().iter_run(stream, state=state))
    frame = lambda cs: RunResult(cs, stream, cfg.chunk_size).records.drop(columns=TIMING, errors="ignore")
    pd.testing.assert_frame_equal(frame(chunks + rest), frame(full), check_exact=True)


class _Toy:
    """A drift detector added as docs/architecture.md says: this class and its DETECTORS entry, nothing else.

    Its state: a count, the chunk means seen (an array) and a dict of plain values; no ``saved_state``."""

    name = "toy"

    def __init__(self, delta: float = 0.05):
        from ncld_core.validation import check_in_range

        check_in_range(delta, "delta", 0, 1, low_open=True, high_open=True)
        self.delta = delta
        self.seen = 0
        self.means_ = np.zeros(0)
        self.notes_ = {"last": None}

    def update(self, signal):
        from ncld_core.model.detector import DetectorResult

        mean = float(np.mean(signal.unbiased))
        self.seen += 1
        self.means_ = np.append(self.means_, mean)
        self.notes_ = {"last": mean, "spread": float(np.ptp(self.means_))}
        fired = bool(len(self.means_) > 1 and abs(mean - self.means_[:-1].mean()) > 0.3)
        return DetectorResult(abs(mean - self.means_[0]), 0.3, fired, mean)


def test_a_detector_registered_in_detectors_alone_round_trips(tmp_path, monkeypatch):
    # On main: saved, then "KeyError: <class ...>" on loading (checkpoint.SCHEMAS had no entry for it).
    from ncld_core.model import detector as detector_module

    monkeypatch.setitem(detector_module.DETECTORS, "toy", _Toy)
    rng = np.random.default_rng(7)
    X, Y = rng.normal(size=(240, 5)), (rng.random((240, 3)) < 0.35).astype(int)
    model, again = _continues_exactly(ELMNCLD(n_hidden=20, n_neighbors=5, detector="toy", monitors=("toy",),
                                              random_state=0), tmp_path, X, Y)
    for det, twin in ((model.detector_, again.detector_), (model.monitors_["toy"], again.monitors_["toy"])):
        assert type(twin) is _Toy and twin.seen == det.seen == 4 and twin.notes_ == det.notes_
        np.testing.assert_array_equal(twin.means_, det.means_)
    np.testing.assert_array_equal(again.coef_, model.coef_)

    # and its values are checked as any array is: finite; its parameters by its own constructor
    path = tmp_path / "toy.npz"
    save_checkpoint(model, path)
    key = _rewrite_arrays(path, lambda k, a: a)[".detector_.means_"]
    _rewrite_arrays(path, lambda k, a: np.where(np.arange(a.size) == 1, np.nan, a) if k == key else a)
    with pytest.raises(CheckpointError, match=rf"the _Toy at \['detector_'\]: means_ \(member {key}\.npy\) holds nan "
                                              r"at 1"):
        load_checkpoint(path)
    save_checkpoint(model, path)
    _rewrite_state(path, lambda s, m: s["detector_"]["state"]["__dict__"].update(delta=7.0))
    with pytest.raises(CheckpointError, match=r"the _Toy at \['detector_'\]: delta must be in \(0, 1\), got 7.0"):
        load_checkpoint(path)
    save_checkpoint(model, path)
    _rewrite_state(path, lambda s, m: s["detector_"]["state"]["__dict__"].update(update=1))
    with pytest.raises(CheckpointError, match="would hide _Toy.update"):
        load_checkpoint(path)


class _ToyCounting(_Toy):
    """The toy detector once its count became ``count_`` (in checkpoint format 4 it was ``seen``): it declares its
    saved state and upgrades the older files itself."""

    name = "toy-counting"
    saved_state = SavedState(state={"count_": number(NONNEGATIVE, integer=True), "means_": array(1),
                                    "notes_": dict_of(PLAIN)},
                             upgrades={4: lambda s: s.__setitem__("count_", s.pop("seen"))})

    def __init__(self, delta: float = 0.05):
        super().__init__(delta)
        self.count_ = self.__dict__.pop("seen")

    def update(self, signal):
        self.seen = self.count_
        result = super().update(signal)
        self.count_ = self.__dict__.pop("seen")
        return result


def test_a_class_upgrades_its_own_old_files(tmp_path, monkeypatch):
    """An old file's state is upgraded by its class's hook (``SavedState.upgrades``), with nothing in
    checkpoint.py: a detector renamed an attribute; a format 4 file naming it the old way still loads."""
    from ncld_core.model import detector as detector_module

    monkeypatch.setitem(detector_module.DETECTORS, "toy-counting", _ToyCounting)
    rng = np.random.default_rng(7)
    X, Y = rng.normal(size=(240, 5)), (rng.random((240, 3)) < 0.35).astype(int)
    model = ELMNCLD(n_hidden=20, n_neighbors=5, detector="toy-counting", random_state=0)
    model.partial_fit(X[:60], Y[:60]).partial_fit(X[60:120], Y[60:120])
    path = tmp_path / "old.npz"
    save_checkpoint(model, path)

    def renamed_back(meta):
        state = meta["payload"]["state"]["__dict__"]["detector_"]["state"]["__dict__"]
        state["seen"] = state.pop("count_")

    _rewrite_meta(path, renamed_back)
    with pytest.raises(CheckpointError, match="'seen' is not a parameter or fitted attribute of _ToyCounting"):
        load_checkpoint(path)  # the current format: no upgrade
    _rewrite_meta(path, lambda m: m.update(version=4))
    again = load_checkpoint(path)
    assert again.detector_.count_ == model.detector_.count_ == 2 and "seen" not in vars(again.detector_)
    model.partial_fit(X[120:180], Y[120:180])
    again.partial_fit(X[120:180], Y[120:180])
    np.testing.assert_array_equal(again.coef_, model.coef_)
    assert again.detector_.count_ == 3


@pytest.mark.parametrize("name, param, value, message", [
    ("FALT", "C", -1.0, r"its FALT: C must be in \(0, inf\), got -1.0"),
    ("MW", "k", 0, r"its MW: k must be"),
    ("River CC-LR", "engine", "torch", r"its RiverClassifierChain: engine must be 'numpy' or 'river', got 'torch'"),
])
def test_a_peer_with_a_parameter_out_of_range_is_refused_on_loading(tmp_path, name, param, value, message):
    # On main the peers' constructors check nothing: such a file loaded, and failed at the next chunk.
    from ncld_core.eval.baselines import make_baseline

    rng = np.random.default_rng(9)
    X, Y = rng.normal(size=(60, 5)), (rng.random((60, 3)) < 0.35).astype(int)
    path = tmp_path / "peer.npz"
    save_checkpoint(make_baseline(name).partial_fit(X, Y), path)
    _rewrite_state(path, lambda s, m: s.update({param: value}))
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(path)


@pytest.mark.parametrize("name, target, value, message", [
    ("FALT", ".weights_", np.nan, r"its FALT: weights_ \(member a\d+\.npy\) holds nan at \(0, 0\)"),
    ("OSML-ELM", ".coef_", 1e308, r"its OSMLELM does not work as loaded: ValueError: its decision function is not "
                                  r"finite"),
    ("MCIC", "._w", np.inf, r"its MCIC: _w \(member a\d+\.npy\) holds inf"),
])
def test_a_peer_with_non_finite_state_is_refused(tmp_path, name, target, value, message):
    from ncld_core.eval.baselines import make_baseline

    rng = np.random.default_rng(9)
    X, Y = rng.normal(size=(120, 5)), (rng.random((120, 3)) < 0.35).astype(int)
    path = tmp_path / "peer.npz"
    save_checkpoint(make_baseline(name, random_state=0).partial_fit(X[:60], Y[:60]).partial_fit(X[60:], Y[60:]), path)
    key = _rewrite_arrays(path, lambda k, a: a)[target]
    _rewrite_arrays(path, lambda k, a: np.full_like(a, value) if k == key else a)
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(path)
