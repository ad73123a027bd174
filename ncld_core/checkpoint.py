"""Checkpoints of models and runs: a versioned ``.npz`` with a JSON header, never pickle.

A checkpoint is one ``.npz`` archive.  Arrays are stored as arrays; everything
else (parameters, scalars, the per-chunk history, nested objects) goes into a
JSON document stored in the member ``__meta__``.  Loading uses
``numpy.load(allow_pickle=False)`` and rebuilds objects only from a fixed list
of ncld classes, by setting their attributes: nothing from the file is executed
or unpickled.  Files are written atomically (temporary file, fsync, rename), so
a crash leaves either the old checkpoint or the new one.

>>> import numpy as np, tempfile, os
>>> from ncld_core.model.elm_ncld import ELMNCLD
>>> rng = np.random.default_rng(0)
>>> X, Y = rng.normal(size=(60, 4)), (rng.random((60, 3)) < 0.4).astype(int)
>>> model = ELMNCLD(n_neighbors=5, random_state=0).partial_fit(X, Y)
>>> path = os.path.join(tempfile.mkdtemp(), "model.npz")
>>> save_checkpoint(model, path)
>>> again = load_checkpoint(path)
>>> bool(np.array_equal(again.decision_function(X), model.decision_function(X)))
True
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import asdict
from pathlib import Path

import numpy as np

from .files import write_atomic
from .eval.metrics import MetricAccumulator
from .eval.references import AllNegative, NoisyPrior
from .eval.runner import ChunkResult, RunState
from .model.detector import DETECTORS
from .model.elm import RandomHiddenLayer
from .model.elm_ncld import ELMNCLD
from .model.flip_rates import FlipRateEstimator
from .model.record import ModelChunkRecord
from .model.statistics import SufficientStatistics

__all__ = ["save_checkpoint", "load_checkpoint", "save_run", "load_run", "FORMAT", "VERSION", "checkpointable"]

FORMAT = "ncld-checkpoint"
#: 2: models keep their sums as ``statistics_`` (ncld_core.model.statistics), not ``K_`` / ``B_*_``.
VERSION = 2
_META = "__meta__"


def _classes() -> dict:
    return {
        cls.__name__: cls
        for cls in (ELMNCLD, SufficientStatistics, RandomHiddenLayer, *DETECTORS.values(), FlipRateEstimator, MetricAccumulator,
                    AllNegative, NoisyPrior)
    }


def checkpointable(obj) -> bool:
    """Whether ``obj`` is of a class a checkpoint can hold."""
    return type(obj).__name__ in _classes() and type(obj) is _classes()[type(obj).__name__]


def _encode(value, arrays: dict, path: str):
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            raise ValueError(f"cannot checkpoint an object array at {path}")
        key = f"a{len(arrays)}"
        arrays[key] = value
        return {"__array__": key}
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if value is None or isinstance(value, (int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return {"__list__": [_encode(v, arrays, f"{path}[{i}]") for i, v in enumerate(value)]}
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise ValueError(f"cannot checkpoint a dict with non-string keys at {path}")
        return {"__dict__": {k: _encode(v, arrays, f"{path}.{k}") for k, v in value.items()}}
    if isinstance(value, ModelChunkRecord):  # a model's history: read back by from_dict
        return {"__record__": _encode(value.to_dict(), arrays, path)}
    if checkpointable(value):
        return {"__object__": type(value).__name__, "state": _encode(vars(value), arrays, path)}
    raise ValueError(
        f"cannot checkpoint {type(value).__name__} at {path}: only ncld models, references, "
        "numbers, strings, arrays, lists and dicts (e.g. give probability_model by name)"
    )


def _decode(value, arrays):
    if isinstance(value, dict):
        if "__array__" in value:
            return arrays[value["__array__"]]
        if "__list__" in value:
            return [_decode(v, arrays) for v in value["__list__"]]
        if "__dict__" in value:
            return {k: _decode(v, arrays) for k, v in value["__dict__"].items()}
        if "__record__" in value:
            return ModelChunkRecord.from_dict(_decode(value["__record__"], arrays))
        if "__object__" in value:
            cls = _classes().get(value["__object__"])
            if cls is None:
                raise ValueError(f"checkpoint names an unknown class {value['__object__']!r}")
            obj = cls.__new__(cls)
            obj.__dict__.update(_decode(value["state"], arrays))
            return obj
        raise ValueError("checkpoint holds an unreadable entry")
    return value


def save_checkpoint(obj, path, *, extra: dict | None = None) -> None:
    """Write ``obj`` (an ncld model/reference, or a dict of them) and ``extra`` to ``path`` atomically."""
    arrays: dict = {}
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "payload": _encode(obj, arrays, "obj"),
        "extra": _encode(extra or {}, arrays, "extra"),
    }
    buffer = io.BytesIO()
    header = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    np.savez(buffer, **{_META: header}, **arrays)
    write_atomic(path, buffer.getvalue())


def load_checkpoint(path, *, with_extra: bool = False, expected: type | None = None):
    """Read a checkpoint written by :func:`save_checkpoint`; a bad file is a clear ``ValueError``.

    ``expected`` (a class): the checkpoint must hold an instance of it, else a ``ValueError``.
    """
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as archive:
            if _META not in archive.files:
                raise ValueError(f"{path} is not an ncld checkpoint (no header)")
            arrays = {name: archive[name] for name in archive.files}
    except FileNotFoundError:
        raise ValueError(f"checkpoint {path} does not exist") from None
    except (OSError, zipfile.BadZipFile, EOFError, KeyError) as exc:
        raise ValueError(f"checkpoint {path} is corrupt or not an ncld checkpoint ({exc})") from None
    except ValueError as exc:
        if "ncld checkpoint" in str(exc):
            raise
        raise ValueError(f"checkpoint {path} is corrupt or not an ncld checkpoint ({exc})") from None
    try:
        meta = json.loads(arrays.pop(_META).tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError(f"checkpoint {path} has a corrupt header") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"{path} is not an ncld checkpoint")
    if meta.get("version") != VERSION:
        raise ValueError(
            f"checkpoint {path} has format version {meta.get('version')!r}; this ncld reads version {VERSION}"
        )
    try:
        obj = _decode(meta["payload"], arrays)
        extra = _decode(meta.get("extra", {}), arrays)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"checkpoint {path} is incomplete ({exc})") from None
    if expected is not None and not isinstance(obj, expected):
        raise ValueError(f"{path} holds a {type(obj).__name__}, not an {expected.__name__}")
    return (obj, extra) if with_extra else obj


def save_run(path, state: RunState, chunks: list, *, config: dict | None = None, chunk_size: int | None = None):
    """Checkpoint a run (models, accumulators, position, the chunks done) to ``path`` atomically."""
    save_checkpoint(
        {"models": state.models, "accumulators": state.accumulators},
        path,
        extra={
            "next_chunk": state.next_chunk,
            "config": config or {},
            "chunk_size": chunk_size,
            "chunks": [asdict(c) for c in chunks],
        },
    )


def load_run(path):
    """Read :func:`save_run`'s checkpoint: ``(state, chunks, config, chunk_size)``."""
    payload, extra = load_checkpoint(path, with_extra=True)
    try:
        state = RunState(payload["models"], payload["accumulators"], int(extra["next_chunk"]))
        chunks = [ChunkResult.from_dict(c) for c in extra["chunks"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path} is not a run checkpoint ({exc})") from None
    return state, chunks, extra.get("config", {}), extra.get("chunk_size")
