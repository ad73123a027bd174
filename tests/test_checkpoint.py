"""Checkpoints: bit-identical resume, refusal of corrupt or foreign files, no pickle."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pandas as pd
import pytest

from ncld_core.checkpoint import (
    FORMAT,
    VERSION,
    load_checkpoint,
    load_run,
    save_checkpoint,
    save_run,
)
from ncld_core.cli import main
from ncld_core.config import RunConfig
from ncld_core.eval.runner import RunResult
from ncld_core.model import ELMNCLD

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
    with pytest.raises(ValueError, match="format version 99"):
        load_checkpoint(path, expected=ELMNCLD)
    _rewrite_meta(path, lambda m: m.update(version=VERSION, payload={"__object__": "Popen", "state": {"__dict__": {}}}))
    with pytest.raises(ValueError, match="unknown class 'Popen'"):
        load_checkpoint(path, expected=ELMNCLD)
    _rewrite_meta(path, lambda m: m.update(format="other"))
    with pytest.raises(ValueError, match="not an ncld checkpoint"):
        load_checkpoint(path)


def test_pickled_arrays_are_never_loaded(tmp_path):
    path = tmp_path / "evil.npz"
    meta = {"format": FORMAT, "version": VERSION, "payload": {"__array__": "a0"}, "extra": {"__dict__": {}}}
    np.savez(path, __meta__=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
             a0=np.array([object()], dtype=object))
    with pytest.raises(ValueError, match="corrupt or not an ncld checkpoint"):
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
                                "rho_pos_est": list(r.rho_pos_est), "rho_neg_est": list(r.rho_neg_est)}
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
