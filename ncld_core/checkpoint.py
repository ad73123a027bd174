"""Checkpoints of models and runs: a versioned ``.npz`` with a JSON header, never pickle.

A checkpoint is one zip archive in NumPy's ``.npz`` layout.  Arrays are stored as ``.npy``
members; everything else (parameters, scalars, the per-chunk history, nested objects) goes
into a JSON document stored in the member ``__meta__``.  Nothing from the file is executed
or unpickled: objects are rebuilt only from a fixed list of ncld classes, by setting their
attributes, and only after every attribute has been checked.

Reading a file is bounded and checked before anything large is allocated:

* only a regular file is read: a directory, a FIFO or a device (``/dev/zero``) is refused before any read,
  as is an archive that names a member twice (which of the two is meant?);
* only the members the header refers to are read; each one's size in the zip directory must
  equal what its ``.npy`` header and the checkpoint header declare (dtype and shape), before
  its data is read; the arrays read together stay under ``max_bytes`` (:data:`MAX_ARRAY_BYTES`),
  compressed members under :data:`MAX_DEFLATED_BYTES` (what they declare once decompressed);
* the JSON header is at most :data:`MAX_HEADER_BYTES` and nested at most :data:`MAX_DEPTH` deep;
* every object's attributes are checked against its class (:data:`SCHEMAS`): only its
  parameters and known fitted attributes, of the right types and matching shapes, nothing that
  would hide a method; every array's values finite and within the ranges declared with the class's
  attributes (:class:`_Range`: counts and sums of squares >= 0, flip rates in [0, 1), the hidden weights in
  [-1, 1], ...), a model's decision function finite; the parameters' values go through the class's own
  validation (``check_params()``, or its constructor);
* any failure is a :class:`CheckpointError` (a ``ValueError``) naming the file and what is wrong.

The header records the format version (:data:`VERSION`) and the ncld version that wrote it.
A file of an older format is upgraded by :data:`MIGRATIONS` (one function per version,
on the decoded state, before the checks); that is the one place where ncld knows about old
checkpoints.  Files are written atomically (:func:`ncld_core.files.atomic_writer`: temporary
file, fsync, rename; the temporary is removed on any error or interrupt).

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
import inspect
import json
import math
import os
import re
import stat
import struct
import zipfile
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from . import __version__ as NCLD_VERSION
from .files import atomic_writer
from .eval.metrics import MetricAccumulator
from .eval.references import AllNegative, NoisyPrior
from .eval.runner import ChunkResult, RunState
from .model.capacity import alpha_grid, start_alpha
from .model.detector import (
    DETECTORS,
    AdaptiveWindowDetector,
    CombinedDetector,
    GLRDetector,
    HoeffdingCardinalityDetector,
    LabelDistributionDetector,
    AdaptiveSequentialLabelDetector,
    SequentialCombinedDetector,
    SequentialLabelDetector,
    WelchDetector,
)
from .model.elm import RandomHiddenLayer
from .model.elm_ncld import ELMNCLD
from .model.flip_rates import FlipRateEstimator
from .model.record import ModelChunkRecord
from .model.statistics import SufficientStatistics

__all__ = [
    "save_checkpoint", "load_checkpoint", "save_run", "load_run", "checkpointable", "CheckpointError",
    "FORMAT", "VERSION", "OLDEST_READABLE", "MIGRATIONS", "SCHEMAS",
    "MAX_HEADER_BYTES", "MAX_DEPTH", "MAX_ARRAY_BYTES", "MAX_DEFLATED_BYTES",
]

FORMAT = "ncld-checkpoint"
#: The format written.  1: models kept ``K_`` / ``B_*_``.  2: their sums as ``statistics_``
#: (ncld_core.model.statistics).  3: the header lists every array's dtype and shape and records
#: the ncld version; the state is checked against :data:`SCHEMAS` on reading.  4: the flip-rate estimator
#: has rate intervals and a trusted sample (issue 25).  5: the model has the parameter ``shrinkage``.
VERSION = 5
#: The oldest format :data:`MIGRATIONS` can upgrade.
OLDEST_READABLE = 2
#: Why older formats cannot be read.
_UNREADABLE = {
    1: "format 1 kept only K = a I + sum H'RH, from which the sums of format 2 (H'H and E'E apart) "
       "cannot be recovered; rerun the stream to make a new checkpoint",
}

#: The JSON header's size bound (bytes) and nesting bound (``[`` / ``{`` levels); a model is about
#: 10 levels deep, a run 14.
MAX_HEADER_BYTES = 64 * 1024**2
MAX_DEPTH = 64
#: Default bound of the arrays read from one file, in bytes (``load_checkpoint(max_bytes=)``).
MAX_ARRAY_BYTES = 8 * 1024**3
#: Bound of what the compressed (deflated) members of one file may declare, in bytes: ncld writes
#: none, and a small compressed file must not expand into a large allocation.
MAX_DEFLATED_BYTES = 64 * 1024**2
_NPY_HEADER_MAX = 4096  # the .npy header of one array (NumPy writes ~120 bytes)
_NPY_KINDS = "biufcUS"  # booleans, numbers and fixed-width text; never objects, records, void
_META = "__meta__"
_READ_BLOCK = 1 << 20


class CheckpointError(ValueError):
    """A checkpoint that cannot be read or written: the message names the file and what is wrong."""


def _classes() -> dict:
    return {
        cls.__name__: cls
        for cls in (ELMNCLD, SufficientStatistics, RandomHiddenLayer, *DETECTORS.values(), FlipRateEstimator,
                    MetricAccumulator, AllNegative, NoisyPrior)
    }


def checkpointable(obj) -> bool:
    """Whether ``obj`` is of a class a checkpoint can hold."""
    return type(obj).__name__ in _classes() and type(obj) is _classes()[type(obj).__name__]


# ---------------------------------------------------------------------------------------- schemas
@dataclass(frozen=True)
class _Range:
    """The values an array (or a number) may hold: finite (unless ``infinite``) and within ``[low, high]``,
    each end open or closed.  Declared next to what a class saves (:data:`SCHEMAS`)."""

    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False
    infinite: bool = False  # +-inf allowed (within the bounds), NaN never

    @property
    def what(self) -> str:
        ends = ["> -inf"] if self.low == -math.inf and self.low_open else []
        if self.low > -math.inf and self.high < math.inf:
            ends.append(f"in {'(' if self.low_open else '['}{self.low:g}, {self.high:g}{')' if self.high_open else ']'}")
        elif self.low > -math.inf:
            ends.append(f"{'>' if self.low_open else '>='} {self.low:g}")
        elif self.high < math.inf:
            ends.append(f"{'<' if self.high_open else '<='} {self.high:g}")
        return " and ".join(["finite" if not self.infinite else "not NaN", *ends])

    def refused(self, values: np.ndarray) -> np.ndarray:
        """A boolean mask of the values outside the range."""
        v = np.asarray(values)
        if v.dtype.kind in "biu":
            v = v.astype(np.float64)
        elif v.dtype.kind != "f":  # text (no range), complex (finite parts)
            return ~np.isfinite(v) if v.dtype.kind == "c" else np.zeros(v.shape, dtype=bool)
        with np.errstate(invalid="ignore"):
            bad = np.isnan(v) if self.infinite else ~np.isfinite(v)
            bad |= (v <= self.low) if self.low_open else (v < self.low)
            bad |= (v >= self.high) if self.high_open else (v > self.high)
        return bad

    def error(self, values: np.ndarray) -> str | None:
        """Why ``values`` are refused (the first value outside the range and where), or None."""
        bad = self.refused(values)
        if not bad.any():
            return None
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        value = np.asarray(values)[where].item()
        at = f" at {where[0] if len(where) == 1 else where}" if where else ""
        return f"holds {value!r}{at} ({int(bad.sum())} of {bad.size} values refused); its values must be {self.what}"


#: Any finite value; >= 0 (counts, sums of squares); > 0; a proportion in [0, 1]; a flip rate in [0, 1).
FINITE = _Range()
NONNEGATIVE = _Range(low=0.0)
POSITIVE = _Range(low=0.0, low_open=True)
PROPORTION = _Range(low=0.0, high=1.0)
RATE = _Range(low=0.0, high=1.0, high_open=True)


@dataclass(frozen=True)
class _Spec:
    """What one stored value must be: a description for the message, a test of its type and shape, and
    ``values``: a check of its values once the test passed, giving ``(where inside it, the array, why)`` of
    the first value refused, or None."""

    what: str
    test: Callable[[object], bool]
    values: Callable[[object], tuple | None] | None = None

    def refusal(self, value) -> tuple | None:
        return None if self.values is None else self.values(value)


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_real(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_KIND_NAMES = {"f": "float", "i": "integer", "b": "boolean", "fi": "numeric", _NPY_KINDS: ""}

INT = _Spec("an integer", _is_int)
COUNT = _Spec("an integer >= 1", lambda v: _is_int(v) and v >= 1)
REAL = _Spec("a number", _is_real)
STR = _Spec("a string", lambda v: isinstance(v, str))
SCALAR = _Spec("a number, string, boolean or None", lambda v: v is None or isinstance(v, (bool, int, float, str)))


def _real(rng: _Range = FINITE, kind: Callable[[object], bool] = _is_real) -> _Spec:
    """A number (of ``kind``) within ``rng``."""
    def values(v):
        why = rng.error(np.float64(v))
        return None if why is None else ("", None, why)

    return _Spec("a number" if kind is _is_real else "an integer", kind, values)


def _array(ndim: int, kinds: str = "f", rng: _Range | None = FINITE, *, columns: tuple | None = None,
           diagonal: _Range | None = None) -> _Spec:
    """An array of ``ndim`` dimensions, of dtype kinds ``kinds``, whose values are within ``rng`` (None: text,
    no range); ``columns``: a range per column instead (a 2-D array of that many columns); ``diagonal``: a
    range for the diagonal of a square array besides (a sum of squares' diagonal is >= 0)."""
    name = _KIND_NAMES.get(kinds, kinds)

    def test(v):
        return (isinstance(v, np.ndarray) and v.ndim == ndim and v.dtype.kind in kinds
                and (columns is None or v.shape[1:] == (len(columns),))
                and (diagonal is None or v.shape == v.shape[:1] * 2))

    def values(v):
        if columns is not None:
            for j, r in enumerate(columns):
                why = r.error(v[:, j])
                if why:
                    return (f"[:, {j}]", v, why)
        elif rng is not None:
            why = rng.error(v)
            if why:
                return ("", v, why)
        if diagonal is not None:
            why = diagonal.error(np.diagonal(v))
            if why:
                return (" (its diagonal)", v, why)
        return None

    shape = "" if columns is None else f" of {len(columns)} columns"
    square = "" if diagonal is None else " square"
    return _Spec(f"a {ndim}-D{square} {name + ' ' if name else ''}array{shape}", test, values)


def _optional(spec: _Spec) -> _Spec:
    return _Spec(f"None or {spec.what}", lambda v: v is None or spec.test(v),
                 lambda v: None if v is None else spec.refusal(v))


def _first_refusal(items) -> tuple | None:
    """The first refusal of ``(subpath, spec, value)`` items, its subpath prefixed."""
    for sub, spec, value in items:
        found = spec.refusal(value)
        if found is not None:
            return (sub + found[0], *found[1:])
    return None


def _either(*specs: _Spec) -> _Spec:
    return _Spec(" or ".join(s.what for s in specs), lambda v: any(s.test(v) for s in specs),
                 lambda v: next(s for s in specs if s.test(v)).refusal(v))


def _instance(*classes) -> _Spec:
    return _Spec("a " + " or ".join(c.__name__ for c in classes), lambda v: type(v) in classes)


def _list_of(spec: _Spec, length: int | None = None) -> _Spec:
    size = "" if length is None else f"{length} "
    return _Spec(f"a list of {size}({spec.what})",
                 lambda v: isinstance(v, list) and (length is None or len(v) == length) and all(map(spec.test, v)),
                 lambda v: _first_refusal((f"[{i}]", spec, x) for i, x in enumerate(v)))


def _dict_of(spec: _Spec) -> _Spec:
    return _Spec(f"a dict of ({spec.what})", lambda v: isinstance(v, dict) and all(map(spec.test, v.values())),
                 lambda v: _first_refusal((f"[{k!r}]", spec, x) for k, x in v.items()))


def _tuple_of(*specs: _Spec) -> _Spec:
    """A list of ``len(specs)`` values, each its spec's."""
    return _Spec(f"a list ({'; '.join(s.what for s in specs)})",
                 lambda v: isinstance(v, list) and len(v) == len(specs) and all(s.test(x) for s, x in zip(specs, v)),
                 lambda v: _first_refusal((f"[{i}]", s, x) for i, (s, x) in enumerate(zip(specs, v))))


def _one_of(*values: str) -> _Spec:
    return _Spec(f"one of {', '.join(map(repr, values))}", lambda v: isinstance(v, str) and v in values)


def _is_plain(v) -> bool:
    if v is None or isinstance(v, (bool, int, float, str, np.ndarray)):
        return True
    if isinstance(v, list):
        return all(map(_is_plain, v))
    if isinstance(v, dict):
        return all(map(_is_plain, v.values()))
    return False


def _plain_refusal(v, where: str = "") -> tuple | None:
    """The first array of a plain value with a non-finite value."""
    if isinstance(v, np.ndarray):
        why = FINITE.error(v)
        return None if why is None else (where, v, why)
    items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
    for k, x in items:
        found = _plain_refusal(x, f"{where}[{k!r}]")
        if found is not None:
            return found
    return None


#: Numbers, strings, arrays and lists / dicts of them: no objects; every array finite.
PLAIN = _Spec("numbers, strings and arrays (no objects)", _is_plain, _plain_refusal)
_FLOATS = _array(1)
_COUNTS = _array(1, rng=NONNEGATIVE)
_WEIGHTS = _Range(low=-1.0, high=1.0)
_DETECTOR = _instance(*DETECTORS.values())


@dataclass(frozen=True)
class _Schema:
    """What a checkpoint may hold of one class's instance (besides its parameters).

    ``state``: always present; ``fitted``: present together once the object is fitted, or none of
    them; ``optional``: may be absent.  ``params``: type specs of some parameters (their values
    are checked by the class itself).  ``check``: consistency of the whole state (shapes), an
    error message or None.  ``smoke``: public reads that must work on the rebuilt object.
    """

    state: dict = field(default_factory=dict)
    fitted: dict = field(default_factory=dict)
    optional: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    check: Callable[[dict], str | None] | None = None
    smoke: Callable[[object], object] | None = None


def _shape_error(name: str, value, shape: tuple) -> str | None:
    if value is not None and value.shape != shape:
        return f"{name} has shape {value.shape}, expected {shape}"
    return None


def _first_error(*errors) -> str | None:
    return next((e for e in errors if e), None)


def _check_elmncld(s: dict) -> str | None:
    if "statistics_" not in s:
        return None
    hidden, d, q = s["hidden_"], s["n_features_in_"], s["n_labels_"]
    if not hasattr(hidden, "weights_"):
        return "hidden_ is not fitted"
    L = hidden.n_hidden
    errors = [
        None if hidden.n_features_in_ == d else f"hidden_ was fitted on {hidden.n_features_in_} features, "
                                                f"the model on {d}",
        _shape_error("coef_", s["coef_"], (L, q)),
        _shape_error("psi_", s["psi_"], (L, q)),
        _shape_error("statistics_.HtY", s["statistics_"].HtY, (L, q)),
        _shape_error("chunk_statistics_.HtY", s["chunk_statistics_"].HtY, (L, q)),
        *(_shape_error(f"_records[{i}].prevalence_hat", np.asarray(r.prevalence_hat), (q,))
          for i, r in enumerate(s["_records"]) if r.prevalence_hat is not None),
        *(_shape_error(f"_rates[{i}]", r, (q,)) for i, pair in enumerate(s["_rates"]) for r in pair),
    ]
    estimator = s["flip_rate_estimator_"]
    if estimator is not None and hasattr(estimator, "rho_pos_"):
        errors.append(_shape_error("flip_rate_estimator_.rho_pos_", estimator.rho_pos_, (q,)))
    if s["_binary_classes"] is not None:
        errors.append(_shape_error("_binary_classes", s["_binary_classes"], (2,)))
        errors.append(None if q == 1 else f"a binary model has 1 label, not {q}")
    grid, losses = s["alpha_grid_"], s["alpha_losses_"]
    if grid is not None and losses is not None:
        errors.append(_shape_error("alpha_losses_", losses, grid.shape))
    return _first_error(*errors)


def _smoke_elmncld(model):
    if model.is_fitted:
        # a probe of zeros and ones: finite values in, finite margins out (a coefficient of 1e308 is finite, but
        # what it predicts is not)
        probe = np.vstack([np.zeros(model.n_features_in_), np.ones(model.n_features_in_)])
        with np.errstate(over="ignore", invalid="ignore"):
            margins = model.decision_function(probe)
        if not np.isfinite(margins).all():
            raise ValueError(f"its decision function is not finite on a probe of zeros and ones ({margins.ravel()[:4]})")
        model.decide(margins)
        return model.history_, model.flip_rates_history_, model.last_record_
    return None


def _check_hidden(s: dict) -> str | None:
    if "weights_" not in s:
        return None
    d, L = s["n_features_in_"], s["n_hidden"]
    standard = s["mode_"] == "standard"
    if standard != ("mean_" in s and "scale_" in s):
        return "mean_ and scale_ are kept exactly when mode_ is 'standard'"
    return _first_error(_shape_error("weights_", s["weights_"], (d, L)), _shape_error("bias_", s["bias_"], (L,)),
                        *(_shape_error(k, s[k], (d,)) for k in ("mean_", "scale_") if standard))


def _check_statistics(s: dict) -> str | None:
    L, q = s["HtY"].shape
    return _first_error(_shape_error("HtH", s["HtH"], (L, L)), _shape_error("EtE", s["EtE"], (L, L)),
                        _shape_error("HtA", s["HtA"], (L, q)))


def _check_rates(s: dict) -> str | None:
    if "rho_pos_" not in s:
        return None
    (q,) = s["rho_pos_"].shape
    names = ["low_positives_", "anchor_sum_", "rho_neg_",
             *(k for k in ("rho_pos_low_", "rho_pos_high_", "rho_neg_low_", "rho_neg_high_") if k in s)]
    n_trusted = s["trusted_Y_"].shape[0] if "trusted_Y_" in s else 0
    return _first_error(*(_shape_error(k, s[k], (q,)) for k in names),
                        *((_shape_error("trusted_counts_", s["trusted_counts_"], (4, q)),
                           _shape_error("trusted_Y_", s["trusted_Y_"], (n_trusted, q)),
                           _shape_error("trusted_cardinality_", s.get("trusted_cardinality_"), (n_trusted,)),
                           _shape_error("trusted_weight_", s.get("trusted_weight_"), (n_trusted,)))
                          if "trusted_counts_" in s else ()),
                        *(_shape_error(k, s[k], (q, 2)) for k in ("mix_rates_", "mix_weights_") if k in s),
                        None if "hist_" not in s or s["hist_"].shape[0] == q else "hist_ has a row per label")


#: A window of chunk summaries: rows (instances, mean, sum of squared deviations).
_WINDOW = _array(2, columns=(NONNEGATIVE, FINITE, NONNEGATIVE))
#: The label tests' reference: instances and positives per chunk.
_LABELS_STATE = {"sizes_": _array(1, rng=NONNEGATIVE), "counts_": _optional(_array(2, rng=NONNEGATIVE))}
#: The label test's pooled within-chunk scatter (absent from files written before it: the test restarts it),
#: a sum of squares (its diagonal >= 0), and its degrees of freedom.
_LABELS_SCATTER = {"scatter_": _optional(_array(2, diagonal=NONNEGATIVE)), "scatter_df_": _real(NONNEGATIVE)}


def _check_labels_detector(s: dict) -> str | None:
    counts = s["counts_"]
    if counts is not None and counts.shape[0] != s["sizes_"].shape[0]:
        return f"counts_ has {counts.shape[0]} rows for {s['sizes_'].shape[0]} chunk sizes"
    return None


def _check_prior(s: dict) -> str | None:
    if "n_labels_" not in s:
        return None
    q = s["n_labels_"]
    return _first_error(_shape_error("counts_", s.get("counts_"), (q,)), _shape_error("prior_", s.get("prior_"), (q,)))


_REFERENCE_FITTED = {"n_features_in_": COUNT, "n_labels_": COUNT, "n_seen_": _real(NONNEGATIVE, _is_int),
                     "_binary_classes": _optional(_array(1, _NPY_KINDS))}
#: What scikit-learn's contract added to every fitted model (the fitted Y's label values, the fitted
#: DataFrame's column names); absent from files written before it, whose models predict 0/1 int8.
_INPUTS_OPTIONAL = {"_label_values": _optional(_array(1, _NPY_KINDS)), "_feature_names": _optional(_list_of(STR))}

#: Per class, what a checkpoint may set on its instances (see :class:`_Schema`).
SCHEMAS = {
    ELMNCLD: _Schema(
        params={"random_state": _optional(INT), "scaling": STR},
        fitted={
            "hidden_": _instance(RandomHiddenLayer),
            "n_features_in_": COUNT,
            "n_labels_": COUNT,
            "_binary_classes": _optional(_array(1, _NPY_KINDS)),
            "_records": _list_of(_instance(ModelChunkRecord)),
            "_rates": _list_of(_list_of(_array(1, rng=RATE), 2)),  # each chunk's (rho_+, rho_-)
            "flip_rate_estimator_": _optional(_instance(FlipRateEstimator)),
            "detector_": _DETECTOR,
            "monitors_": _dict_of(_DETECTOR),
            "statistics_": _instance(SufficientStatistics),
            "chunk_statistics_": _instance(SufficientStatistics),
            "coef_": _array(2),
            "psi_": _array(2),
            "decision_state_": _optional(_dict_of(PLAIN)),
            "alpha_": _real(POSITIVE),
            # the grid's discounted losses (the "rank" criterion's are negative gains): +inf where a ridge is not
            # admissible (capacity.prequential_losses), never NaN or -inf
            "alpha_losses_": _optional(_array(1, rng=_Range(low=-math.inf, low_open=True, infinite=True))),
            "alpha_grid_": _optional(_array(1, rng=POSITIVE)),
        },
        optional=dict(_INPUTS_OPTIONAL),
        check=_check_elmncld,
        smoke=_smoke_elmncld,
    ),
    RandomHiddenLayer: _Schema(
        params={"n_hidden": COUNT, "scaling": STR, "random_state": _optional(INT)},
        # W and b are drawn uniform in [-1, 1] (ncld_core.model.elm)
        fitted={"n_features_in_": COUNT, "weights_": _array(2, rng=_WEIGHTS), "bias_": _array(1, rng=_WEIGHTS),
                "mode_": _one_of("l2", "standard", "none")},  # RandomHiddenLayer.fit resolves "auto"
        optional={"mean_": _FLOATS, "scale_": _array(1, rng=POSITIVE)},
        check=_check_hidden,
    ),
    SufficientStatistics: _Schema(
        # H'H and E'E are sums of squares: their diagonals are >= 0
        params={**{k: _array(2, diagonal=NONNEGATIVE) for k in ("HtH", "EtE")}, "HtY": _array(2), "HtA": _array(2)},
        check=_check_statistics),
    HoeffdingCardinalityDetector: _Schema(state={"previous_": _optional(_real())}),
    WelchDetector: _Schema(state={"previous_": _optional(_tuple_of(_real(NONNEGATIVE), _real(), _real(NONNEGATIVE)))}),
    AdaptiveWindowDetector: _Schema(state={"window_": _WINDOW}),
    LabelDistributionDetector: _Schema(state=dict(_LABELS_STATE), optional=_LABELS_SCATTER,
                                       check=_check_labels_detector),
    SequentialLabelDetector: _Schema(state=dict(_LABELS_STATE), optional=_LABELS_SCATTER,
                                     check=_check_labels_detector),
    CombinedDetector: _Schema(state={"cardinality_": _instance(AdaptiveWindowDetector),
                                     "labels_": _instance(LabelDistributionDetector)}),
    GLRDetector: _Schema(state={"window_": _WINDOW}),
    AdaptiveSequentialLabelDetector: _Schema(state={"cardinality_": _instance(AdaptiveWindowDetector),
                                                    "labels_": _instance(SequentialLabelDetector)}),
    SequentialCombinedDetector: _Schema(state={"cardinality_": _instance(GLRDetector),
                                               "labels_": _instance(SequentialLabelDetector)}),
    FlipRateEstimator: _Schema(
        # counts and sums of bounds in [0, 1] are >= 0; rates in [0, 1); the mixture's rates and weights in [0, 1]
        fitted={"low_positives_": _COUNTS, "low_count_": _real(NONNEGATIVE), "anchor_sum_": _COUNTS,
                "anchor_weight_": _real(NONNEGATIVE), "n_chunks_": _real(NONNEGATIVE, _is_int),
                "rho_neg_": _array(1, rng=RATE), "rho_pos_": _array(1, rng=RATE)},
        optional={"hist_": _array(2, rng=NONNEGATIVE), "mix_rates_": _array(2, rng=PROPORTION),
                  "mix_weights_": _array(2, rng=PROPORTION),  # negative_anchor="mixture"
                  # format 4 (absent from older files until their next chunk): rate intervals, trusted sample
                  **dict.fromkeys(("rho_pos_low_", "rho_pos_high_", "rho_neg_low_", "rho_neg_high_"),
                                  _array(1, rng=RATE)),
                  "trusted_counts_": _array(2, rng=NONNEGATIVE), "trusted_Y_": _array(2, "i", rng=PROPORTION),
                  "trusted_cardinality_": _COUNTS, "trusted_weight_": _COUNTS},
        check=_check_rates,
    ),
    MetricAccumulator: _Schema(state={"_stats": _optional(_dict_of(PLAIN))},
                               smoke=lambda acc: acc.cumulative() if acc.n_instances else None),
    AllNegative: _Schema(fitted=dict(_REFERENCE_FITTED), optional=dict(_INPUTS_OPTIONAL)),
    NoisyPrior: _Schema(fitted={**_REFERENCE_FITTED, "counts_": _array(1, "i", rng=NONNEGATIVE),
                                "prior_": _array(1, rng=PROPORTION)},
                        optional=dict(_INPUTS_OPTIONAL),
                        check=_check_prior),
}


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
    if type(value) is ModelChunkRecord:
        return {"__record__": "ModelChunkRecord", "fields": _encode(asdict(value), arrays, seen, path)}
    if checkpointable(value):
        return {"__object__": type(value).__name__, "state": _encode(vars(value), arrays, seen, path)}
    raise ValueError(
        f"cannot checkpoint {type(value).__name__} at {path}: only ncld models, references, "
        "numbers, strings, arrays, lists and dicts (e.g. give probability_model by name)"
    )


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
                    or not all(_is_int(n) and n >= 0 for n in shape):
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


# JSON strings (skipped whole) or a bracket: the only tokens that change the nesting depth
_DEPTH_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)


def _json_depth(text: bytes, limit: int) -> int:
    """The nesting depth of the JSON ``text``, counted without recursion; stops past ``limit``."""
    depth = deepest = 0
    for match in _DEPTH_TOKENS.finditer(text):
        token = match.group()
        if token in (b"[", b"{"):
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        elif token in (b"]", b"}"):
            depth -= 1
    return deepest


def _parse_header(archive: _Archive) -> dict:
    if f"{_META}.npy" not in archive.zf.namelist():
        raise CheckpointError(f"{archive.path} is not an ncld checkpoint (no header)")
    member = archive.member(_META)
    if member.dtype != np.uint8 or len(member.shape) != 1:
        raise archive.error("its header is not a byte string")
    if member.nbytes > MAX_HEADER_BYTES:
        raise archive.error(f"its header has {member.nbytes} bytes; at most {MAX_HEADER_BYTES} are read")
    text = archive.read(member).tobytes()
    if _json_depth(text, MAX_DEPTH) > MAX_DEPTH:
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
    if not _is_int(version):
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
@dataclass
class _Stored:
    """An object as the file holds it: its class name and attributes, before migration and checks."""

    cls: str
    state: dict


@dataclass
class _StoredRecord:
    cls: str
    fields: dict


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
            return _Stored(value["__object__"], state)
        if set(value) == {"__record__", "fields"} and value["__record__"] == "ModelChunkRecord":
            fields = _decode(value["fields"], arrays, where)
            if not isinstance(fields, dict):
                raise CheckpointError(f"{where or 'its object'}: a chunk record is not a dict")
            return _StoredRecord(value["__record__"], fields)
        raise CheckpointError(f"{where or 'its object'}: an unreadable entry")
    if isinstance(value, list):
        raise CheckpointError(f"{where or 'its object'}: an unreadable entry")
    return value


def _join(where: str, key: str) -> str:
    return f"{where}[{key!r}]"


def _walk(node, visit) -> None:
    """Call ``visit`` on every stored object and record of a decoded tree, parents first."""
    if isinstance(node, (_Stored, _StoredRecord)):
        visit(node)
        for value in (node.state if isinstance(node, _Stored) else node.fields).values():
            _walk(value, visit)
    elif isinstance(node, dict):
        for value in node.values():
            _walk(value, visit)
    elif isinstance(node, list):
        for value in node:
            _walk(value, visit)


# ---------------------------------------------------------------------------------------- migration
def _upgrade_elmncld_2(state: dict) -> None:
    """Format 2 models may predate attributes that a model now always has: the values the model
    behaved as having then."""
    state.setdefault("detector", "paper")  # before detectors had names: the paper's Eq. (Hfd)
    state.setdefault("monitors", [])
    state.setdefault("decision", "paper")  # before decision rules: threshold 0
    state.setdefault("loss", "paper")  # before loss choices: the noisy labels were the targets
    state.setdefault("flip_rates", "auto")  # before estimated rates: given ones, or "auto" with none given
    state.setdefault("n_threads", "auto")  # before thread budgets: the process's BLAS pools as they were
    if "statistics_" not in state:
        return
    state.setdefault("monitors_", {})
    state.setdefault("decision_state_", None)
    state.setdefault("flip_rate_estimator_", None)
    state.setdefault("_rates", [])
    state.setdefault("_binary_classes", None)
    if "alpha_" not in state:  # before the ridge was chosen online: the parameter
        alpha = state.get("alpha")
        try:
            grid = alpha_grid(alpha)
        except ValueError:
            grid = None  # refused by the model's own check afterwards
        state["alpha_"] = start_alpha(grid) if grid is not None else alpha
        state.setdefault("alpha_losses_", None)
        state.setdefault("alpha_grid_", None if grid is None else np.asarray(grid, dtype=float))
    rows = state.pop("_history", [])
    rows = rows if isinstance(rows, list) else []
    for row in rows:
        if isinstance(row, dict):
            row.setdefault("alpha", math.nan)  # not recorded before the ridge was chosen online
    # Format 2 kept the history as rows, with the newest chunk's prevalences and estimated rates beside
    # them; format 3 keeps one record per chunk, each with its own.
    records = [_StoredRecord("ModelChunkRecord", dict(row)) for row in rows if isinstance(row, dict)]
    prevalence = state.pop("_prevalence", None)
    if records:
        rates = state.get("_rates") if state.get("flip_rate_estimator_") is not None else None
        records[-1].fields.update(
            prevalence_hat=None if prevalence is None else [float(v) for v in np.ravel(prevalence)],
            rho_pos_est=[float(v) for v in np.ravel(rates[-1][0])] if rates else None,
            rho_neg_est=[float(v) for v in np.ravel(rates[-1][1])] if rates else None)
    state["_records"] = records


def _upgrade_2_to_3(payload, extra):
    """Format 2 -> 3: the state as format 3 holds it (format 3 changed the header, not the state)."""
    def visit(node):
        if isinstance(node, _Stored) and node.cls == "ELMNCLD":
            _upgrade_elmncld_2(node.state)

    _walk(payload, visit)
    chunks = extra.get("chunks") if isinstance(extra, dict) else None
    for chunk in chunks if isinstance(chunks, list) else []:
        records = chunk.get("diagnostics") if isinstance(chunk, dict) else None
        for record in records.values() if isinstance(records, dict) else []:
            if isinstance(record, dict):
                record.setdefault("alpha", math.nan)  # runs saved before the ridge was recorded
    return payload, extra


def _upgrade_3_to_4(payload, extra):
    """Format 3 -> 4: a flip-rate estimator gets the parameters it behaved as having (95 % intervals, no
    trusted rows); its rate intervals are made at its next chunk."""
    def visit(node):
        if isinstance(node, _Stored) and node.cls == "FlipRateEstimator":
            for name, value in (("level", 0.95), ("identified_width", 0.1), ("max_trusted_rows", 20000)):
                node.state.setdefault(name, value)

    _walk(payload, visit)
    return payload, extra


def _upgrade_4_to_5(payload, extra):
    """Format 4 -> 5: a model gets ``shrinkage=0``, the solve it was written with (nothing shrunk)."""
    def visit(node):
        if isinstance(node, _Stored) and node.cls == "ELMNCLD":
            node.state.setdefault("shrinkage", 0.0)

    _walk(payload, visit)
    return payload, extra


#: ``{version: upgrade}``: each turns the decoded ``(payload, extra)`` of that format into the next
#: format's; a file of format ``v`` goes through ``MIGRATIONS[v]``, ``MIGRATIONS[v + 1]``, ...
MIGRATIONS = {2: _upgrade_2_to_3, 3: _upgrade_3_to_4, 4: _upgrade_4_to_5}


# ---------------------------------------------------------------------------------------- building
def _describe(value) -> str:
    if isinstance(value, np.ndarray):
        return f"a {value.dtype} array of shape {value.shape}"
    if isinstance(value, (_Stored, _StoredRecord)):
        return f"a {value.cls}"
    if isinstance(value, (bool, int, float, str)) or value is None:
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "..."
    return f"a {type(value).__name__}"


def _member_of(array, members: dict) -> str:
    """`` (member a3.npy)``: the zip member ``array`` was read from, for a message; empty if none."""
    key = members.get(id(array)) if array is not None else None
    return "" if key is None else f" (member {key}.npy)"


def _check_state(cls, state: dict, where: str, members: dict) -> None:
    schema = SCHEMAS[cls]
    params = _param_names(cls)
    known = {*params, *schema.state, *schema.fitted, *schema.optional}

    def fail(message):
        raise CheckpointError(f"{where}: {message}")

    for name in state:
        if name.startswith("__") or inspect.getattr_static(cls, name, None) is not None:
            fail(f"the attribute {name!r} would hide {cls.__name__}.{name}")
        if name not in known:
            fail(f"{name!r} is not a parameter or fitted attribute of {cls.__name__}")
    missing = [n for n in (*params, *schema.state) if n not in state]
    fitted = [n for n in schema.fitted if n in state]
    if fitted and len(fitted) < len(schema.fitted):
        missing += [n for n in schema.fitted if n not in state]
    if missing:
        fail(f"missing {', '.join(missing)}")
    for name, spec in {**schema.params, **schema.state, **schema.fitted, **schema.optional}.items():
        if name in state and not spec.test(state[name]):
            fail(f"{name} must be {spec.what}; got {_describe(state[name])}")
        refused = spec.refusal(state[name]) if name in state else None
        if refused is not None:
            sub, array, why = refused
            fail(f"{name}{sub}{_member_of(array, members)} {why}")
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
    if isinstance(node, _Stored):
        cls = _classes().get(node.cls)
        if cls is None:
            raise CheckpointError(f"it names an unknown class {node.cls!r} (only ncld classes are rebuilt)")
        state = {name: _build(value, _join(where, name), members, True) for name, value in node.state.items()}
        label = f"the {cls.__name__} at {where}" if where else f"its {cls.__name__}"
        _check_state(cls, state, label, members)
        obj = cls.__new__(cls)
        obj.__dict__.update(state)
        _check_params(obj, cls, label)
        schema = SCHEMAS[cls]
        if schema.smoke is not None:
            try:
                schema.smoke(obj)
            except Exception as exc:  # noqa: BLE001 - whatever a malformed state breaks, the file is refused
                raise CheckpointError(f"{label} does not work as loaded: "
                                      f"{type(exc).__name__}: {exc}") from None
        return obj
    if isinstance(node, _StoredRecord):
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
        for v in range(version, VERSION):
            payload, extra = MIGRATIONS[v](payload, extra)
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


#: What a path that is not a regular file is, by its ``stat.S_IFMT`` type.
_FILE_KINDS = {stat.S_IFDIR: "a directory", stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFCHR: "a character device",
               stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}


def _open_regular(path: Path):
    """``path`` opened for binary reading if it is a regular file (a symbolic link to one is followed), else a
    :class:`CheckpointError`: a directory, a FIFO or a device (``/dev/zero``) has no size to bound a read by
    and may never end.  Opened without blocking (a FIFO without a writer), then checked on the open file."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = _FILE_KINDS.get(stat.S_IFMT(mode), "not a regular file")
            raise CheckpointError(f"checkpoint {path} is {kind}, not a regular file; a checkpoint is a file "
                                  "ncld wrote")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


# ---------------------------------------------------------------------------------------- runs
#: What a run checkpoint's models may be (RunState.models).
_RUN_MODELS = (ELMNCLD, AllNegative, NoisyPrior)
_METRICS = _dict_of(_dict_of(_optional(REAL)))
#: The fields of a saved ChunkResult (dataclasses.asdict) and what they must be.
_CHUNK_FIELDS = {"chunk": INT, "start": INT, "stop": INT, "true_cardinality": REAL, "observed_cardinality": REAL,
                 "is_change": _Spec("True or False", lambda v: isinstance(v, bool)), "metrics": _METRICS,
                 "cumulative": _METRICS, "diagnostics": _dict_of(_Spec("a dict", lambda v: isinstance(v, dict))),
                 "seconds": _dict_of(REAL)}


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
    if not isinstance(models, dict) or not models or not all(type(m) in _RUN_MODELS for m in models.values()):
        fail("its models are not ncld models")
    if not isinstance(accumulators, dict) or set(accumulators) != set(models) \
            or not all(type(a) is MetricAccumulator for a in accumulators.values()):
        fail("it does not hold one metric accumulator per model")
    next_chunk, chunks = extra.get("next_chunk"), extra.get("chunks")
    chunk_size, config = extra.get("chunk_size"), extra.get("config", {})
    if not _is_int(next_chunk) or not isinstance(chunks, list) or len(chunks) != next_chunk:
        fail(f"next_chunk {next_chunk!r} does not count its chunks")
    if not isinstance(config, dict) or not (chunk_size is None or (_is_int(chunk_size) and chunk_size >= 1)):
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
