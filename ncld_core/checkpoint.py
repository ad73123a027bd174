"""Checkpoints of models and runs: a versioned ``.npz`` with a JSON header, never pickle.

A checkpoint is one zip archive in NumPy's ``.npz`` layout.  Arrays are stored as ``.npy``
members; everything else (parameters, scalars, the per-chunk history, nested objects) goes
into a JSON document stored in the member ``__meta__``; a scipy CSR matrix is its shape (in the
JSON) and its three arrays.  Nothing from the file is executed or unpickled: objects are rebuilt
only from a fixed list of ncld classes, by setting their attributes, and only after every attribute
has been checked; an attribute a class keeps in another form (a River model as its weights) is rebuilt
by the class from those checked values.  This module knows no class's state: each class declares its
own (``saved_state``, :mod:`ncld_core.saved_state`).

Reading a file is bounded and checked before anything large is allocated:

* only a regular file is read: a directory, a FIFO or a device (``/dev/zero``) is refused before any read,
  as is an archive that names a member twice (which of the two is meant?);
* only the members the header refers to are read; each one's size in the zip directory must
  equal what its ``.npy`` header and the checkpoint header declare (dtype and shape), before
  its data is read; the arrays read together stay under ``max_bytes`` (:data:`MAX_ARRAY_BYTES`),
  compressed members under :data:`MAX_DEFLATED_BYTES` (what they declare once decompressed);
* the JSON header is at most :data:`MAX_HEADER_BYTES` and nested at most :data:`MAX_DEPTH` deep;
* a CSR matrix's index arrays must describe a matrix of its shape (``indptr`` starting at 0, never
  decreasing, ending at the number of stored values; every column index within the columns), before
  scipy sees them;
* every object's attributes are checked against what its class saves (:func:`saved_state_of`: the
  class's ``saved_state`` declaration, next to its code): only its
  parameters and known fitted attributes, of the right types and matching shapes, nothing that
  would hide a method; every array's values finite and within the ranges declared with the class's
  attributes (:class:`~ncld_core.saved_state.ValueRange`: counts and sums of squares >= 0, flip rates in
  [0, 1), the hidden weights in [-1, 1], ...), a model's decision function finite; the parameters' values go
  through the class's own validation (``check_params()``, or its constructor).  A class registered without
  a declaration (a new detector in ``DETECTORS``, the peers of ``BASELINES``) keeps any attribute of plain
  values (every array finite) or ncld objects, and a fitted estimator's decision function must be finite;
* any failure is a :class:`CheckpointError` (a ``ValueError``) naming the file and what is wrong.

The header records the format version (:data:`VERSION`) and the ncld version that wrote it.
A file of an older format is upgraded, one format at a time on the decoded state before the checks,
by the hooks of the classes whose state changed (``SavedState.upgrades``, next to their code) and by
:data:`MIGRATIONS` for what this module writes itself (a run's extra data).  Files are written
atomically (:func:`ncld_core.files.atomic_writer`: temporary file, fsync, rename; the temporary is
removed on any error or interrupt).

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
>>> model.n_hidden = "lots"     # a file saying so is refused by the model's own validation
>>> save_checkpoint(model, path)
>>> load_checkpoint(path)
Traceback (most recent call last):
...
ncld_core.checkpoint.CheckpointError: checkpoint ...model.npz: its ELMNCLD: n_hidden must be an integer, got 'lots'
"""

from __future__ import annotations

import ast
import functools
import inspect
import json
import math
import os
import stat
import struct
import zipfile
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from . import __version__ as NCLD_VERSION
from .files import atomic_writer, file_kind
from .validation import MAX_NESTING, nesting_depth  # the one nesting scan of every JSON and TOML read
from .eval.baselines import BASELINES, baseline_class
from .eval.metrics import MetricAccumulator
from .eval.references import AllNegative, NoisyPrior
from .eval.runner import ChunkResult, RunState
from .model.detector import DETECTORS
from .model.elm import RandomHiddenLayer
from .model.elm_ncld import ELMNCLD
from .model.flip_rates import FlipRateEstimator
from .model.record import ModelChunkRecord
from .model.statistics import SufficientStatistics
from .saved_state import (
    FINITE,
    INT,
    NPY_KINDS,
    PLAIN,
    REAL,
    SavedState,
    Spec,
    StoredObject,
    StoredRecord,
    dict_of,
    is_int,
    optional,
    probe_decision,
)

__all__ = [
    "save_checkpoint", "load_checkpoint", "save_run", "load_run", "checkpointable", "CheckpointError",
    "FORMAT", "VERSION", "OLDEST_READABLE", "MIGRATIONS", "saved_state_of",
    "MAX_HEADER_BYTES", "MAX_DEPTH", "MAX_ARRAY_BYTES", "MAX_DEFLATED_BYTES",
]

FORMAT = "ncld-checkpoint"
#: The format written.  1: models kept ``K_`` / ``B_*_``.  2: their sums as ``statistics_``
#: (ncld_core.model.statistics).  3: the header lists every array's dtype and shape and records
#: the ncld version; the state is checked against what its class saves on reading.  4: the flip-rate estimator
#: has rate intervals and a trusted sample (issue 25).  5: the model has the parameter ``shrinkage``.  6: CSR
#: matrices (the windowed kNN peers) are stored, and River models (as their weights).
VERSION = 6
#: The oldest format that can be upgraded (by the classes' hooks and :data:`MIGRATIONS`).
OLDEST_READABLE = 2
#: Why older formats cannot be read.
_UNREADABLE = {
    1: "format 1 kept only K = a I + sum H'RH, from which the sums of format 2 (H'H and E'E apart) "
       "cannot be recovered; rerun the stream to make a new checkpoint",
}

#: The JSON header's size bound (bytes) and nesting bound (``[`` / ``{`` levels); a model is about
#: 10 levels deep, a run 14.
MAX_HEADER_BYTES = 64 * 1024**2
MAX_DEPTH = MAX_NESTING  # the one bound of every JSON and TOML read (ncld_core.validation)
#: Default bound of the arrays read from one file, in bytes (``load_checkpoint(max_bytes=)``).
MAX_ARRAY_BYTES = 8 * 1024**3
#: Bound of what the compressed (deflated) members of one file may declare, in bytes: ncld writes
#: none, and a small compressed file must not expand into a large allocation.
MAX_DEFLATED_BYTES = 64 * 1024**2
_NPY_HEADER_MAX = 4096  # the .npy header of one array (NumPy writes ~120 bytes)
_NPY_KINDS = NPY_KINDS  # booleans, numbers and fixed-width text; never objects, records, void
_META = "__meta__"
_READ_BLOCK = 1 << 20


class CheckpointError(ValueError):
    """A checkpoint that cannot be read or written: the message names the file and what is wrong."""


@functools.lru_cache(maxsize=1)
def _peer_classes() -> tuple:
    """The classes of :data:`~ncld_core.eval.baselines.BASELINES` (the paper's baselines and peers) whose
    modules import here; what each saves is derived (:func:`saved_state_of`)."""
    classes = []
    for name in BASELINES:
        try:
            classes.append(baseline_class(name))
        except ValueError:  # an optional dependency missing: its runs cannot be made here either
            pass
    return tuple(classes)


def _classes() -> dict:
    return {
        cls.__name__: cls
        for cls in (ELMNCLD, SufficientStatistics, RandomHiddenLayer, *DETECTORS.values(), FlipRateEstimator,
                    MetricAccumulator, AllNegative, NoisyPrior, *_peer_classes())
    }


def checkpointable(obj) -> bool:
    """Whether ``obj`` is of a class a checkpoint can hold."""
    return type(obj).__name__ in _classes() and type(obj) is _classes()[type(obj).__name__]


# ---------------------------------------------------------------------------------------- saved states
def _is_saved_value(v) -> bool:
    """Numbers, strings, arrays, CSR matrices, ncld objects, and lists / dicts of them."""
    if isinstance(v, (list, tuple)):
        return all(map(_is_saved_value, v))
    if isinstance(v, dict):
        return all(map(_is_saved_value, v.values()))
    return PLAIN.test(v) or checkpointable(v)


#: What a class that declares no ``saved_state`` may keep: any attribute (none hiding a method) of
#: plain values (every array finite), CSR matrices or ncld objects (each checked by its own class); once
#: fitted, its decision function must be finite on a probe.
_UNDECLARED = SavedState(others=Spec("numbers, strings, arrays, ncld objects, or lists / dicts of them",
                                     _is_saved_value, PLAIN.values), smoke=probe_decision)


def saved_state_of(cls) -> SavedState:
    """What a checkpoint may hold of an instance of ``cls``: the class's own ``saved_state`` declaration
    (:class:`~ncld_core.saved_state.SavedState`), else any attribute of plain values or ncld objects (a class
    registered without a declaration: a new detector of :data:`~ncld_core.model.detector.DETECTORS`, a peer)."""
    declared = getattr(cls, "saved_state", None)
    return declared if isinstance(declared, SavedState) else _UNDECLARED


def _specs(schema: SavedState) -> dict:
    """Every named attribute's spec."""
    return {**schema.params, **schema.state, **schema.fitted, **schema.optional}


def _param_names(cls) -> list[str]:
    """The ``__init__`` parameters a checkpoint stores (a parameter that is a property is derived)."""
    names = []
    for name, p in inspect.signature(cls.__init__).parameters.items():
        if name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            if not isinstance(inspect.getattr_static(cls, name, None), property):
                names.append(name)
    return names


# ---------------------------------------------------------------------------------------- writing
def _encode(value, arrays: dict, seen: dict, path: str):
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in _NPY_KINDS:
            raise ValueError(f"cannot checkpoint an array of dtype {value.dtype} at {path} (object or record array)")
        key, _ = seen.get(id(value), (None, None))
        if key is None:  # an array held in several places (the variants' shared hidden weights) is stored once
            key = f"a{len(arrays)}"
            seen[id(value)] = (key, value)  # kept referenced: its id is not reused while encoding
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
        return {"__list__": [_encode(v, arrays, seen, f"{path}[{i}]") for i, v in enumerate(value)]}
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise ValueError(f"cannot checkpoint a dict with non-string keys at {path}")
        return {"__dict__": {k: _encode(v, arrays, seen, f"{path}.{k}") for k, v in value.items()}}
    if type(value) is sp.csr_matrix:  # its shape and its three arrays, checked against each other on reading
        return {"__csr__": {"shape": [int(n) for n in value.shape],
                            **{k: _encode(getattr(value, k), arrays, seen, f"{path}.{k}") for k in _CSR_ARRAYS}}}
    if type(value) is ModelChunkRecord:
        return {"__record__": "ModelChunkRecord", "fields": _encode(asdict(value), arrays, seen, path)}
    if checkpointable(value):
        return {"__object__": type(value).__name__, "state": _encode(_saved_form(value), arrays, seen, path)}
    raise ValueError(
        f"cannot checkpoint {type(value).__name__} at {path}: only ncld models, references, "
        "numbers, strings, arrays, CSR matrices, lists and dicts (e.g. give probability_model by name)"
    )


def _saved_form(obj) -> dict:
    """``obj``'s attributes as a file keeps them: an attribute its class keeps in another form
    (:func:`~ncld_core.saved_state.stored_as`) in that form."""
    state = dict(vars(obj))
    for name, spec in _specs(saved_state_of(type(obj))).items():
        if spec.save is not None and name in state:
            state[name] = spec.save(state[name])
    return state


def _write_member(archive: zipfile.ZipFile, name: str, array: np.ndarray) -> None:
    with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
        np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)


def save_checkpoint(obj, path, *, extra: dict | None = None) -> None:
    """Write ``obj`` (an ncld model/reference, or a dict of them) and ``extra`` to ``path`` atomically.

    A value that cannot be stored is a ``ValueError`` before anything is written; a failure or an
    interrupt while writing leaves ``path`` as it was and no temporary file.
    """
    arrays: dict = {}
    seen: dict = {}
    meta = {
        "format": FORMAT,
        "version": VERSION,
        "ncld": NCLD_VERSION,
        "payload": _encode(obj, arrays, seen, "obj"),
        "extra": _encode(extra or {}, arrays, seen, "extra"),
    }
    meta["arrays"] = {key: [a.dtype.str, list(a.shape)] for key, a in arrays.items()}
    header = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    try:
        with atomic_writer(path) as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
            _write_member(archive, _META, header)
            for key, array in arrays.items():
                _write_member(archive, key, array)
    except OSError as exc:
        raise CheckpointError(f"cannot write checkpoint {path}: {exc.strerror or exc}") from None


# ---------------------------------------------------------------------------------------- reading
@dataclass
class _Member:
    name: str
    info: zipfile.ZipInfo
    dtype: np.dtype
    shape: tuple
    fortran: bool
    offset: int  # bytes before the data (the .npy magic and header)

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize


class _Archive:
    """The zip archive of a checkpoint, read member by member within the bounds."""

    def __init__(self, path: Path, zf: zipfile.ZipFile, file_size: int, max_bytes: int):
        self.path, self.zf, self.file_size = path, zf, file_size
        self.budget, self.deflated_budget = max_bytes, MAX_DEFLATED_BYTES
        seen = set()
        for name in zf.namelist():  # zipfile would read the last of two members of one name: which is meant?
            if name in seen:
                raise self.error(f"member {name} appears twice in the archive; a checkpoint names each member once")
            seen.add(name)

    def error(self, message: str) -> CheckpointError:
        return CheckpointError(f"checkpoint {self.path}: {message}")

    def member(self, key: str) -> _Member:
        """The member of array ``key``: its zip entry and .npy header, checked against each other."""
        try:
            info = self.zf.getinfo(f"{key}.npy")
        except KeyError:
            raise self.error(f"array {key!r} is missing") from None
        if info.compress_type == zipfile.ZIP_STORED:
            if info.compress_size != info.file_size or info.header_offset + info.file_size > self.file_size:
                raise self.error(f"member {info.filename} declares {info.file_size} bytes the file does not hold")
        elif info.compress_type == zipfile.ZIP_DEFLATED:
            if info.file_size > self.deflated_budget:
                raise self.error(f"compressed member {info.filename} declares {info.file_size} bytes once "
                                 f"expanded; at most {MAX_DEFLATED_BYTES} are read from compressed members")
            self.deflated_budget -= info.file_size
        else:
            raise self.error(f"member {info.filename} uses an unsupported compression (zip method "
                             f"{info.compress_type}); ncld writes uncompressed members")
        with self.zf.open(info) as fp:
            dtype, shape, fortran, offset = self._npy_header(fp, info.filename)
        found = _Member(key, info, dtype, shape, fortran, offset)
        if offset + found.nbytes != info.file_size:
            raise self.error(f"member {info.filename} holds {info.file_size - offset} bytes of data but its "
                             f"header declares {found.nbytes} ({dtype.str} {shape})")
        return found

    def _npy_header(self, fp, name: str):
        magic = fp.read(8)
        if len(magic) != 8 or magic[:6] != b"\x93NUMPY" or magic[6] not in (1, 2, 3):
            raise self.error(f"member {name} is not a .npy array")
        width = 2 if magic[6] == 1 else 4
        raw = fp.read(width)
        if len(raw) != width:
            raise self.error(f"member {name} is truncated")
        (size,) = struct.unpack("<H" if width == 2 else "<I", raw)
        if size > _NPY_HEADER_MAX:
            raise self.error(f"member {name} has a .npy header of {size} bytes (at most {_NPY_HEADER_MAX})")
        text = fp.read(size)
        try:
            d = ast.literal_eval(text.decode("utf-8" if magic[6] == 3 else "latin1"))
            descr, fortran, shape = d["descr"], d["fortran_order"], d["shape"]
            if set(d) != {"descr", "fortran_order", "shape"} or not isinstance(descr, str) \
                    or not isinstance(fortran, bool) or not isinstance(shape, tuple) or len(shape) > 32 \
                    or not all(is_int(n) and n >= 0 for n in shape):
                raise ValueError
            dtype = np.dtype(descr)
        except (ValueError, TypeError, SyntaxError, KeyError, MemoryError, RecursionError, UnicodeDecodeError):
            raise self.error(f"member {name} has an unreadable .npy header") from None
        if dtype.kind not in _NPY_KINDS or dtype.itemsize == 0 or dtype.fields is not None:
            raise self.error(f"member {name} holds {dtype} values; a checkpoint holds only numbers and text")
        return dtype, shape, fortran, 8 + width + size

    def reserve(self, members) -> None:
        """Refuse the members if together they pass the array budget (before any is read)."""
        total = sum(m.nbytes for m in members)
        if total > self.budget:
            raise self.error(f"its arrays declare {total} bytes; at most {self.budget} are read "
                             "(load_checkpoint(max_bytes=...))")

    def read(self, member: _Member) -> np.ndarray:
        """The member's array, read in blocks into memory allocated for exactly its declared size."""
        buffer = np.empty(member.nbytes, dtype=np.uint8)
        with self.zf.open(member.info) as fp:
            fp.read(member.offset)
            done = 0
            while done < member.nbytes:
                block = fp.read(min(_READ_BLOCK, member.nbytes - done))
                if not block:
                    raise self.error(f"member {member.info.filename} is truncated")
                buffer[done:done + len(block)] = np.frombuffer(block, dtype=np.uint8)
                done += len(block)
            if fp.read(1):  # also makes zipfile check the CRC of the whole member
                raise self.error(f"member {member.info.filename} is longer than declared")
        return buffer.view(member.dtype).reshape(member.shape, order="F" if member.fortran else "C")


def _parse_header(archive: _Archive) -> dict:
    if f"{_META}.npy" not in archive.zf.namelist():
        raise CheckpointError(f"{archive.path} is not an ncld checkpoint (no header)")
    member = archive.member(_META)
    if member.dtype != np.uint8 or len(member.shape) != 1:
        raise archive.error("its header is not a byte string")
    if member.nbytes > MAX_HEADER_BYTES:
        raise archive.error(f"its header has {member.nbytes} bytes; at most {MAX_HEADER_BYTES} are read")
    text = archive.read(member).tobytes()
    if nesting_depth(text, MAX_DEPTH) > MAX_DEPTH:
        raise archive.error(f"its header is nested more than {MAX_DEPTH} levels deep")
    try:
        meta = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise archive.error("its header is corrupt") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{archive.path} is not an ncld checkpoint")
    return meta


def _check_version(meta: dict, path: Path) -> int:
    version = meta.get("version")
    if not is_int(version):
        raise CheckpointError(f"checkpoint {path} has no readable format version ({version!r})")
    if OLDEST_READABLE <= version <= VERSION:
        return version
    writer = meta.get("ncld")
    by = f"ncld {writer}" if isinstance(writer, str) and len(writer) < 40 else "an ncld that did not record its version"
    message = (f"{path}: checkpoint format {version} written by {by}; this ncld {NCLD_VERSION} "
               f"reads formats {OLDEST_READABLE}-{VERSION}")
    if version > VERSION:
        message += "; upgrade ncld to read it"
    elif version in _UNREADABLE:
        message += f": {_UNREADABLE[version]}"
    raise CheckpointError(message)


def _array_keys(node, found: set) -> set:
    """The array keys a decoded JSON tree refers to (depth already bounded)."""
    if isinstance(node, dict):
        if set(node) == {"__array__"} and isinstance(node["__array__"], str):
            found.add(node["__array__"])
        else:
            for value in node.values():
                _array_keys(value, found)
    elif isinstance(node, list):
        for value in node:
            _array_keys(value, found)
    return found


def _read_arrays(archive: _Archive, meta: dict, version: int) -> dict:
    keys = sorted(_array_keys([meta.get("payload"), meta.get("extra")], set()))
    if _META in keys:
        raise archive.error("its header refers to itself as an array")
    declared = meta.get("arrays") if version >= 3 else None
    if version >= 3 and not isinstance(declared, dict):
        raise archive.error("its header lists no arrays")
    members = []
    for key in keys:
        member = archive.member(key)
        if declared is not None:
            expected = declared.get(key)
            if not (isinstance(expected, list) and len(expected) == 2 and isinstance(expected[0], str)
                    and isinstance(expected[1], list) and tuple(expected[1]) == member.shape
                    and expected[0] == member.dtype.str):
                raise archive.error(f"array {key!r} is stored as {member.dtype.str} {member.shape} but the "
                                    f"header declares {expected!r}")
        members.append(member)
    archive.reserve(members)
    return {m.name: archive.read(m) for m in members}


# ---------------------------------------------------------------------------------------- decoding
#: The arrays a CSR matrix is stored as, besides its shape.
_CSR_ARRAYS = ("data", "indices", "indptr")


@dataclass
class _StoredCSR:
    """A CSR matrix as the file holds it, before its parts are checked against each other."""

    shape: object
    parts: dict


def _decode(value, arrays: dict, where: str):
    if isinstance(value, dict):
        if len(value) == 1 and "__array__" in value:
            key = value["__array__"]
            if not isinstance(key, str) or key not in arrays:
                raise CheckpointError(f"{where or 'its object'}: an unreadable array reference")
            return arrays[key]
        if len(value) == 1 and isinstance(value.get("__list__"), list):
            return [_decode(v, arrays, f"{where}[{i}]") for i, v in enumerate(value["__list__"])]
        if len(value) == 1 and isinstance(value.get("__dict__"), dict):
            return {k: _decode(v, arrays, _join(where, k)) for k, v in value["__dict__"].items()}
        if set(value) == {"__object__", "state"} and isinstance(value["__object__"], str):
            state = _decode(value["state"], arrays, where)
            if not isinstance(state, dict):
                raise CheckpointError(f"{where or 'its object'}: the state of a {value['__object__']} is not a dict")
            return StoredObject(value["__object__"], state)
        if set(value) == {"__record__", "fields"} and value["__record__"] == "ModelChunkRecord":
            fields = _decode(value["fields"], arrays, where)
            if not isinstance(fields, dict):
                raise CheckpointError(f"{where or 'its object'}: a chunk record is not a dict")
            return StoredRecord(value["__record__"], fields)
        if len(value) == 1 and isinstance(value.get("__csr__"), dict):
            parts = value["__csr__"]
            if set(parts) != {"shape", *_CSR_ARRAYS}:
                raise CheckpointError(f"{where or 'its object'}: a CSR matrix is not its shape, "
                                      f"{', '.join(_CSR_ARRAYS)}")
            return _StoredCSR(parts["shape"], {k: _decode(parts[k], arrays, f"{where}.{k}") for k in _CSR_ARRAYS})
        raise CheckpointError(f"{where or 'its object'}: an unreadable entry")
    if isinstance(value, list):
        raise CheckpointError(f"{where or 'its object'}: an unreadable entry")
    return value


def _join(where: str, key: str) -> str:
    return f"{where}[{key!r}]"


def _walk(node, visit) -> None:
    """Call ``visit`` on every stored object and record of a decoded tree, parents first."""
    if isinstance(node, (StoredObject, StoredRecord)):
        visit(node)
        for value in (node.state if isinstance(node, StoredObject) else node.fields).values():
            _walk(value, visit)
    elif isinstance(node, dict):
        for value in node.values():
            _walk(value, visit)
    elif isinstance(node, list):
        for value in node:
            _walk(value, visit)


# ---------------------------------------------------------------------------------------- migration
def _upgrade_run_2(payload, extra):
    """Format 2 -> 3 of a run's extra data: its chunks' records did not hold the ridge."""
    chunks = extra.get("chunks") if isinstance(extra, dict) else None
    for chunk in chunks if isinstance(chunks, list) else []:
        records = chunk.get("diagnostics") if isinstance(chunk, dict) else None
        for record in records.values() if isinstance(records, dict) else []:
            if isinstance(record, dict):
                record.setdefault("alpha", math.nan)  # runs saved before the ridge was recorded
    return payload, extra


#: ``{version: upgrade}`` of what this module writes itself (a run's extra data, :func:`save_run`): each turns
#: the decoded ``(payload, extra)`` of that format into the next format's.  The objects' states are upgraded by
#: their classes (``SavedState.upgrades``).
MIGRATIONS = {2: _upgrade_run_2}


def _migrate(payload, extra, version: int):
    """A file of format ``version`` upgraded, one format at a time, to :data:`VERSION`: at each, every stored
    object by its class's hook of that format (parents first), then :data:`MIGRATIONS`' entry."""
    for v in range(version, VERSION):
        def visit(node):
            cls = _classes().get(node.cls) if isinstance(node, StoredObject) else None
            upgrade = saved_state_of(cls).upgrades.get(v) if cls is not None else None
            if upgrade is None:
                return
            try:
                upgrade(node.state)
            except (AttributeError, KeyError, IndexError, TypeError, ValueError) as exc:
                raise CheckpointError(f"its {node.cls} of format {v} cannot be upgraded "
                                      f"({type(exc).__name__}: {exc})") from None

        _walk([payload, extra], visit)
        if v in MIGRATIONS:
            payload, extra = MIGRATIONS[v](payload, extra)
    return payload, extra


# ---------------------------------------------------------------------------------------- building
def _describe(value) -> str:
    if isinstance(value, np.ndarray):
        return f"a {value.dtype} array of shape {value.shape}"
    if isinstance(value, (StoredObject, StoredRecord)):
        return f"a {value.cls}"
    if isinstance(value, sp.csr_matrix):
        return f"a {value.dtype} CSR matrix of shape {value.shape}"
    if isinstance(value, (bool, int, float, str)) or value is None:
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "..."
    return f"a {type(value).__name__}"


def _member_of(array, members: dict) -> str:
    """`` (member a3.npy)``: the zip member ``array`` was read from, for a message; empty if none."""
    key = members.get(id(array)) if array is not None else None
    return "" if key is None else f" (member {key}.npy)"


def _check_state(cls, state: dict, where: str, members: dict) -> None:
    schema = saved_state_of(cls)
    params = _param_names(cls)
    known = {*params, *schema.state, *schema.fitted, *schema.optional}
    others = {name: schema.others for name in state if name not in known and schema.others is not None}

    def fail(message):
        raise CheckpointError(f"{where}: {message}")

    for name in state:
        if name.startswith("__") or inspect.getattr_static(cls, name, None) is not None:
            fail(f"the attribute {name!r} would hide {cls.__name__}.{name}")
        if name not in known and name not in others:
            fail(f"{name!r} is not a parameter or fitted attribute of {cls.__name__}")
    missing = [n for n in (*params, *schema.state) if n not in state]
    fitted = [n for n in schema.fitted if n in state]
    if fitted and len(fitted) < len(schema.fitted):
        missing += [n for n in schema.fitted if n not in state]
    if missing:
        fail(f"missing {', '.join(missing)}")
    for name, spec in {**_specs(schema), **others}.items():
        if name in state and not spec.test(state[name]):
            fail(f"{name} must be {spec.what}; got {_describe(state[name])}")
        refused = spec.refusal(state[name]) if name in state else None
        if refused is not None:
            sub, found, why = refused
            fail(f"{name}{sub}{_member_of(found, members)} {why}")
    if schema.check is not None:
        try:
            message = schema.check(state)
        except (AttributeError, KeyError, IndexError, TypeError, ValueError) as exc:
            message = f"inconsistent state ({type(exc).__name__}: {exc})"
        if message:
            fail(message)


def _check_params(obj, cls, where: str) -> None:
    """The class's own parameter validation: ``check_params()`` where it has one, else its constructor."""
    try:
        if hasattr(obj, "check_params"):
            obj.check_params()
        else:
            cls(**{name: vars(obj)[name] for name in _param_names(cls)})
    except (ValueError, TypeError) as exc:
        raise CheckpointError(f"{where}: {exc}") from None


def _build(node, where: str, members: dict, checked: bool = False):
    """Objects from a decoded (and migrated) tree, each checked before it is made.

    ``members``: ``{id(array): member key}`` of the arrays read, to name them in messages.  An array in an
    object's state is checked by the object's schema (``checked``); any other array must be finite.
    """
    if isinstance(node, StoredObject):
        cls = _classes().get(node.cls)
        if cls is None:
            raise CheckpointError(f"it names an unknown class {node.cls!r} (only ncld classes are rebuilt)")
        state = {name: _build(value, _join(where, name), members, True) for name, value in node.state.items()}
        label = f"the {cls.__name__} at {where}" if where else f"its {cls.__name__}"
        _check_state(cls, state, label, members)
        obj = cls.__new__(cls)
        obj.__dict__.update(state)
        _check_params(obj, cls, label)
        schema = saved_state_of(cls)
        for name, spec in _specs(schema).items():
            if spec.load is not None and name in state:
                try:
                    setattr(obj, name, spec.load(obj, state[name]))
                except (ValueError, TypeError, KeyError, IndexError) as exc:
                    raise CheckpointError(f"{label}: {name} cannot be rebuilt: {exc}") from None
        if schema.smoke is not None:
            try:
                schema.smoke(obj)
            except Exception as exc:  # noqa: BLE001 - whatever a malformed state breaks, the file is refused
                raise CheckpointError(f"{label} does not work as loaded: "
                                      f"{type(exc).__name__}: {exc}") from None
        return obj
    if isinstance(node, _StoredCSR):
        return _csr(node, where, members, checked)
    if isinstance(node, StoredRecord):
        try:
            return ModelChunkRecord.from_dict(_build(node.fields, where, members))
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise CheckpointError(f"a chunk record at {where}: {exc}") from None
    if isinstance(node, dict):
        return {k: _build(v, _join(where, k), members, checked) for k, v in node.items()}
    if isinstance(node, list):
        return [_build(v, f"{where}[{i}]", members, checked) for i, v in enumerate(node)]
    if isinstance(node, np.ndarray) and not checked:
        why = FINITE.error(node)
        if why is not None:
            raise CheckpointError(f"the array at {where or 'its top'}{_member_of(node, members)} {why}")
    return node


def _csr(node: _StoredCSR, where: str, members: dict, checked: bool) -> sp.csr_matrix:
    """The CSR matrix of a stored one whose parts describe a matrix of its shape (else a CheckpointError naming
    the part): scipy's index routines trust them.  Its values are checked by the spec of the attribute holding
    it (``checked``), else as finite."""
    shape, data, indices, indptr = node.shape, *(node.parts[k] for k in _CSR_ARRAYS)
    label = f"the CSR matrix at {where or 'its top'}"

    def fail(message, array=None):
        raise CheckpointError(f"{label}: {message}{_member_of(array, members)}")

    if not (isinstance(shape, list) and len(shape) == 2 and all(is_int(n) and 0 <= n < 2**62 for n in shape)):
        fail(f"its shape must be two counts; got {_describe(shape)}")
    rows, columns = shape
    for name, value, kinds in (("data", data, "biuf"), ("indices", indices, "iu"), ("indptr", indptr, "iu")):
        if not (isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in kinds):
            fail(f"its {name} must be a 1-D {'numeric' if name == 'data' else 'integer'} array; got "
                 f"{_describe(value)}")
    if indptr.shape != (rows + 1,):
        fail(f"its indptr has {indptr.size} entries for {rows} rows (rows + 1 expected)", indptr)
    if indptr[0] != 0:
        fail(f"its indptr must start at 0 and never decrease; it starts at {indptr[0]}", indptr)
    falls = np.diff(indptr) < 0
    if falls.any():
        at = int(np.argmax(falls)) + 1
        fail(f"its indptr must start at 0 and never decrease; it falls from {indptr[at - 1]} to {indptr[at]} at {at}",
             indptr)
    if not indptr[-1] == indices.size == data.size:
        fail(f"its indptr ends at {indptr[-1]} for {indices.size} indices and {data.size} values", indptr)
    outside = (indices < 0) | (indices >= columns)
    if outside.any():
        at = int(np.argmax(outside))
        fail(f"its indices hold {indices[at]} at {at}, outside its {columns} columns", indices)
    if not checked:
        why = FINITE.error(data)
        if why is not None:
            fail(f"its data {why}", data)
    matrix = sp.csr_matrix((data, indices, indptr), shape=(rows, columns), copy=False)
    if id(data) in members:  # scipy holds a view of it: messages about its values name the member too
        members[id(matrix.data)] = members[id(data)]
    return matrix


def load_checkpoint(path, *, with_extra: bool = False, expected: type | None = None,
                    max_bytes: int = MAX_ARRAY_BYTES):
    """Read a checkpoint written by :func:`save_checkpoint` (or an older format, upgraded).

    ``expected`` (a class): the checkpoint must hold an instance of it.  ``max_bytes``: bound of
    the arrays read.  Anything wrong with the file is a :class:`CheckpointError` (a ``ValueError``).
    """
    path = Path(path)
    try:
        with _open_regular(path) as fh:
            file_size = fh.seek(0, 2)
            fh.seek(0)
            with zipfile.ZipFile(fh) as zf:
                archive = _Archive(path, zf, file_size, max_bytes)
                meta = _parse_header(archive)
                version = _check_version(meta, path)
                arrays = _read_arrays(archive, meta, version)
    except CheckpointError:
        raise
    except FileNotFoundError:
        raise CheckpointError(f"checkpoint {path} does not exist") from None
    except (IsADirectoryError, PermissionError) as exc:
        raise CheckpointError(f"cannot read checkpoint {path}: {exc.strerror}") from None
    except (OSError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, TypeError, KeyError,
            struct.error, zlib.error, NotImplementedError, RuntimeError, OverflowError, MemoryError) as exc:
        # RuntimeError: an encrypted member; NotImplementedError: an unknown zip feature
        # (a checkpoint is a zip archive: "not a zip file" says nothing to a user)
        why = ("cut short, or not a checkpoint at all" if isinstance(exc, (zipfile.BadZipFile, EOFError))
               else "reading it needs more memory than there is" if isinstance(exc, MemoryError)
               else str(exc) or type(exc).__name__)
        raise CheckpointError(f"checkpoint {path} is corrupt or not an ncld checkpoint ({why})") from None
    if "payload" not in meta:
        raise CheckpointError(f"checkpoint {path} is incomplete (no payload)")
    try:
        payload = _decode(meta["payload"], arrays, "")
        extra = _decode(meta.get("extra", {"__dict__": {}}), arrays, "extra")
        payload, extra = _migrate(payload, extra, version)
        members = {id(array): key for key, array in arrays.items()}
        obj = _build(payload, "", members)
        extra = _build(extra, "extra", members)
    except CheckpointError as exc:
        raise CheckpointError(f"checkpoint {path}: {exc}") from None
    if not isinstance(extra, dict):
        raise CheckpointError(f"checkpoint {path}: its extra data is not a dict")
    if expected is not None and not isinstance(obj, expected):
        raise CheckpointError(f"{path} holds a {type(obj).__name__}, not an {expected.__name__}")
    return (obj, extra) if with_extra else obj


def _open_regular(path: Path):
    """``path`` opened for binary reading if it is a regular file (a symbolic link to one is followed), else a
    :class:`CheckpointError`: a directory, a FIFO or a device (``/dev/zero``) has no size to bound a read by
    and may never end.  Opened without blocking (a FIFO without a writer), then checked on the open file."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = file_kind(mode)
            raise CheckpointError(f"checkpoint {path} is {kind}, not a regular file; a checkpoint is a file "
                                  "ncld wrote")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


# ---------------------------------------------------------------------------------------- runs
#: What a run checkpoint's models may be (RunState.models).
def _run_models() -> tuple:
    """What a run checkpoint's models may be (RunState.models): the model, the references, the peers."""
    return (ELMNCLD, AllNegative, NoisyPrior, *_peer_classes())


_METRICS = dict_of(dict_of(optional(REAL)))
#: The fields of a saved ChunkResult (dataclasses.asdict) and what they must be.
_CHUNK_FIELDS = {"chunk": INT, "start": INT, "stop": INT, "true_cardinality": REAL, "observed_cardinality": REAL,
                 "is_change": Spec("True or False", lambda v: isinstance(v, bool)), "metrics": _METRICS,
                 "cumulative": _METRICS, "diagnostics": dict_of(Spec("a dict", lambda v: isinstance(v, dict))),
                 "seconds": dict_of(REAL), "beside": _METRICS}


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
    """Read :func:`save_run`'s checkpoint: ``(state, chunks, config, chunk_size)``; a bad one is a
    :class:`CheckpointError`."""
    payload, extra = load_checkpoint(path, with_extra=True)

    def fail(message):
        raise CheckpointError(f"{path} is not a run checkpoint ({message})")

    if not isinstance(payload, dict) or set(payload) != {"models", "accumulators"}:
        fail("it holds no models and accumulators")
    models, accumulators = payload["models"], payload["accumulators"]
    if not isinstance(models, dict) or not models or not all(type(m) in _run_models() for m in models.values()):
        fail("its models are not ncld models")
    if not isinstance(accumulators, dict) or set(accumulators) != set(models) \
            or not all(type(a) is MetricAccumulator for a in accumulators.values()):
        fail("it does not hold one metric accumulator per model")
    next_chunk, chunks = extra.get("next_chunk"), extra.get("chunks")
    chunk_size, config = extra.get("chunk_size"), extra.get("config", {})
    if not is_int(next_chunk) or not isinstance(chunks, list) or len(chunks) != next_chunk:
        fail(f"next_chunk {next_chunk!r} does not count its chunks")
    if not isinstance(config, dict) or not (chunk_size is None or (is_int(chunk_size) and chunk_size >= 1)):
        fail("its configuration is not readable")
    for i, chunk in enumerate(chunks):
        if not isinstance(chunk, dict):
            fail(f"chunk {i} is not a record")
        for name, spec in _CHUNK_FIELDS.items():
            if name in chunk and not spec.test(chunk[name]):
                fail(f"chunk {i}: {name} must be {spec.what}; got {_describe(chunk[name])}")
    try:
        chunks = [ChunkResult.from_dict(c) for c in chunks]
        for chunk in chunks:
            chunk.rows()
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        fail(f"a chunk record is unreadable: {exc}")
    return RunState(models, accumulators, next_chunk), chunks, config, chunk_size
