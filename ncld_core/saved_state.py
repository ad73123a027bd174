"""What an object saves, declared by its class: the vocabulary of saved-state declarations.

A class whose instances a checkpoint holds says what their state may be: a :class:`SavedState`
whose entries are :class:`Spec` s (a type test and a check of the values), e.g. a detector keeping
a window of chunk summaries::

    saved_state = SavedState(state={"window_": array(2, columns=(NONNEGATIVE, FINITE, NONNEGATIVE))})

Values are checked against a :class:`ValueRange`: finite unless declared otherwise, within bounds
(counts and sums of squares ``NONNEGATIVE``, flip rates ``RATE`` in [0, 1), ...).  A spec's ``values``
check names the first value refused, where it is, and the range, for the reader's message
(:mod:`ncld_core.checkpoint` adds the file and the zip member).  This module imports nothing of ncld:
every layer may declare its state with it.

Beside numbers, strings, lists, dicts and arrays a file holds scipy CSR matrices (:func:`csr`: their values
checked as an array's).  An attribute of any other type is kept in a form of these and rebuilt on loading
(:func:`stored_as`); a class whose saved state changed from one checkpoint format to the next upgrades the
older files' state itself (``SavedState.upgrades``, on the :class:`StoredObject` s the file decodes to).

>>> spec = array(1, rng=RATE)
>>> spec.test(np.array([0.1, 0.2])), spec.refusal(np.array([0.1, 1.5]))[2]
(True, 'holds 1.5 at 1 (1 of 2 values refused); its values must be finite and in [0, 1)')
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import scipy.sparse as sp

__all__ = [
    "ValueRange", "FINITE", "NONNEGATIVE", "POSITIVE", "PROPORTION", "RATE", "Spec", "SavedState",
    "INT", "COUNT", "REAL", "STR", "SCALAR", "PLAIN", "NPY_KINDS",
    "is_int", "is_real", "number", "array", "optional", "either", "instance_of", "list_of", "dict_of", "tuple_of",
    "one_of", "fields_of", "csr", "stored_as", "shape_error", "first_error", "FITTED_INPUTS", "StoredObject",
    "StoredRecord", "probe_decision",
]

#: The dtype kinds a saved array may have: booleans, numbers and fixed-width text; never objects, records, void.
NPY_KINDS = "biufcUS"


@dataclass(frozen=True)
class ValueRange:
    """The values an array (or a number) may hold: finite (unless ``infinite``) and within ``[low, high]``,
    each end open or closed."""

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
FINITE = ValueRange()
NONNEGATIVE = ValueRange(low=0.0)
POSITIVE = ValueRange(low=0.0, low_open=True)
PROPORTION = ValueRange(low=0.0, high=1.0)
RATE = ValueRange(low=0.0, high=1.0, high_open=True)


@dataclass(frozen=True)
class Spec:
    """What one stored value must be: a description for the message, a test of its type and shape, and
    ``values``: a check of its values once the test passed, giving ``(where inside it, the array, why)`` of
    the first value refused, or None."""

    what: str
    test: Callable[[object], bool]
    values: Callable[[object], tuple | None] | None = None
    #: A value kept in another form (:func:`stored_as`): ``save(value)`` is what the file holds (what ``test``
    #: and ``values`` check), ``load(obj, stored)`` the value again.
    save: Callable[[object], object] | None = None
    load: Callable[[object, object], object] | None = None

    def refusal(self, value) -> tuple | None:
        return None if self.values is None else self.values(value)


def is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def is_real(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_KIND_NAMES = {"f": "float", "i": "integer", "b": "boolean", "fi": "numeric", NPY_KINDS: ""}

INT = Spec("an integer", is_int)
COUNT = Spec("an integer >= 1", lambda v: is_int(v) and v >= 1)
REAL = Spec("a number", is_real)
STR = Spec("a string", lambda v: isinstance(v, str))
SCALAR = Spec("a number, string, boolean or None", lambda v: v is None or isinstance(v, (bool, int, float, str)))


def number(rng: ValueRange = FINITE, *, integer: bool = False) -> Spec:
    """A number (an integer with ``integer``) within ``rng``."""
    def values(v):
        why = rng.error(np.float64(v))
        return None if why is None else ("", None, why)

    return Spec("an integer" if integer else "a number", is_int if integer else is_real, values)


def array(ndim: int, kinds: str = "f", rng: ValueRange | None = FINITE, *, columns: tuple | None = None,
           diagonal: ValueRange | None = None) -> Spec:
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
    return Spec(f"a {ndim}-D{square} {name + ' ' if name else ''}array{shape}", test, values)


def optional(spec: Spec) -> Spec:
    return Spec(f"None or {spec.what}", lambda v: v is None or spec.test(v),
                 lambda v: None if v is None else spec.refusal(v))


def _first_refusal(items) -> tuple | None:
    """The first refusal of ``(subpath, spec, value)`` items, its subpath prefixed."""
    for sub, spec, value in items:
        found = spec.refusal(value)
        if found is not None:
            return (sub + found[0], *found[1:])
    return None


def either(*specs: Spec) -> Spec:
    return Spec(" or ".join(s.what for s in specs), lambda v: any(s.test(v) for s in specs),
                 lambda v: next(s for s in specs if s.test(v)).refusal(v))


def instance_of(*classes) -> Spec:
    return Spec("a " + " or ".join(c.__name__ for c in classes), lambda v: type(v) in classes)


def list_of(spec: Spec, length: int | None = None) -> Spec:
    size = "" if length is None else f"{length} "
    return Spec(f"a list of {size}({spec.what})",
                 lambda v: isinstance(v, list) and (length is None or len(v) == length) and all(map(spec.test, v)),
                 lambda v: _first_refusal((f"[{i}]", spec, x) for i, x in enumerate(v)))


def dict_of(spec: Spec) -> Spec:
    return Spec(f"a dict of ({spec.what})", lambda v: isinstance(v, dict) and all(map(spec.test, v.values())),
                 lambda v: _first_refusal((f"[{k!r}]", spec, x) for k, x in v.items()))


def tuple_of(*specs: Spec) -> Spec:
    """A list of ``len(specs)`` values, each its spec's."""
    return Spec(f"a list ({'; '.join(s.what for s in specs)})",
                 lambda v: isinstance(v, list) and len(v) == len(specs) and all(s.test(x) for s, x in zip(specs, v)),
                 lambda v: _first_refusal((f"[{i}]", s, x) for i, (s, x) in enumerate(zip(specs, v))))


def one_of(*values: str) -> Spec:
    return Spec(f"one of {', '.join(map(repr, values))}", lambda v: isinstance(v, str) and v in values)


def fields_of(**specs: Spec) -> Spec:
    """A dict of exactly these keys, each its spec's.

    >>> spec = fields_of(n=INT, rates=array(1, rng=RATE))
    >>> spec.test({"n": 1, "rates": np.zeros(2)}), spec.test({"n": 1}), spec.refusal({"n": 1, "rates": np.ones(2)})[0]
    (True, False, "['rates']")
    """
    return Spec(f"a dict ({'; '.join(f'{k}: {s.what}' for k, s in specs.items())})",
                 lambda v: isinstance(v, dict) and set(v) == set(specs) and all(s.test(v[k]) for k, s in specs.items()),
                 lambda v: _first_refusal((f"[{k!r}]", s, v[k]) for k, s in specs.items()))


def csr(rng: ValueRange = FINITE) -> Spec:
    """A scipy CSR matrix (``scipy.sparse.csr_matrix``) whose stored values are within ``rng``.  Its structure
    (index arrays within its shape) is checked by every read of a file, whatever the spec
    (:mod:`ncld_core.checkpoint`)."""
    def values(v):
        why = rng.error(v.data)
        return None if why is None else (" (its data)", v.data, why)

    return Spec("a CSR matrix", lambda v: type(v) is sp.csr_matrix, values)


def stored_as(spec: Spec, save: Callable[[object], object], load: Callable[[object, object], object]) -> Spec:
    """An attribute a file keeps as ``save(value)`` -- numbers, strings, arrays, lists and dicts, checked by
    ``spec`` -- and rebuilt on loading by ``load(obj, stored)``, ``obj`` the object made of the other
    attributes with its parameters checked (never by executing anything from the file).  A ValueError of
    ``load`` refuses the file.

    >>> spec = stored_as(list_of(STR), save=lambda v: sorted(v), load=lambda obj, v: set(v))
    >>> spec.save({"b", "a"}), spec.load(None, ["a", "b"]) == {"a", "b"}, spec.what
    (['a', 'b'], True, 'a list of (a string)')
    """
    return Spec(spec.what, spec.test, spec.values, save=save, load=load)


def _is_plain(v) -> bool:
    if v is None or isinstance(v, (bool, int, float, str, np.ndarray)) or type(v) is sp.csr_matrix:
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
    if type(v) is sp.csr_matrix:
        why = FINITE.error(v.data)
        return None if why is None else (f"{where} (its data)", v.data, why)
    items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
    for k, x in items:
        found = _plain_refusal(x, f"{where}[{k!r}]")
        if found is not None:
            return found
    return None


#: Numbers, strings, arrays, CSR matrices and lists / dicts of them: no objects; every array's values finite.
PLAIN = Spec("numbers, strings and arrays (no objects)", _is_plain, _plain_refusal)


@dataclass(frozen=True)
class SavedState:
    """What a checkpoint may hold of one class's instance (besides its parameters): a class declares it as
    its ``saved_state`` attribute (:func:`ncld_core.checkpoint.saved_state_of`).

    ``state``: always present; ``fitted``: present together once the object is fitted, or none of
    them; ``optional``: may be absent.  ``params``: type specs of some parameters (their values
    are checked by the class itself).  ``check``: consistency of the whole state (shapes), an
    error message or None.  ``smoke``: public reads that must work on the rebuilt object
    (:func:`probe_decision`: its decision function finite).
    ``others``: the spec of any attribute not named (None: an attribute not named is refused).
    ``upgrades``: ``{format: upgrade(state)}``, each turning in place the state a file of that checkpoint
    format (:data:`ncld_core.checkpoint.VERSION`) holds into the next format's, before any check; the
    state is as the file decodes: arrays, plain values, :class:`StoredObject` / :class:`StoredRecord`.
    """

    state: dict = field(default_factory=dict)
    fitted: dict = field(default_factory=dict)
    optional: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    check: Callable[[dict], str | None] | None = None
    smoke: Callable[[object], object] | None = None
    others: Spec | None = None
    upgrades: dict = field(default_factory=dict)


@dataclass
class StoredObject:
    """An object as a file holds it, before it is upgraded, checked and made: its class's name and its
    attributes (decoded: arrays, plain values, stored objects and records)."""

    cls: str
    state: dict


@dataclass
class StoredRecord:
    """A record as a file holds it (e.g. a ``ModelChunkRecord``): its class's name and its fields."""

    cls: str
    fields: dict


def probe_decision(obj):
    """The decision function of a fitted estimator (``n_features_in_``, ``decision_function``) on a probe of
    zeros and ones, which must be finite (a coefficient of 1e308 is finite, what it predicts is not), else a
    ValueError; None for an object that is not a fitted estimator.

    >>> class Twice:
    ...     n_features_in_ = 2
    ...     def __init__(self, w): self.w = w
    ...     def decision_function(self, X): return X @ self.w
    >>> probe_decision(Twice(np.array([1.0, 2.0]))).tolist()
    [0.0, 3.0]
    >>> probe_decision(Twice(np.array([1e308, 1e308])))
    Traceback (most recent call last):
    ...
    ValueError: its decision function is not finite on a probe of zeros and ones ([ 0. inf])
    """
    d = getattr(obj, "n_features_in_", None)
    if not is_int(d) or d < 1 or not callable(getattr(obj, "decision_function", None)):
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        scores = np.asarray(obj.decision_function(np.vstack([np.zeros(d), np.ones(d)])), dtype=float)
    if not np.isfinite(scores).all():
        raise ValueError(f"its decision function is not finite on a probe of zeros and ones ({scores.ravel()[:4]})")
    return scores


def shape_error(name: str, value, shape: tuple) -> str | None:
    """A message if ``value`` (an array or None) does not have ``shape``."""
    if value is not None and value.shape != shape:
        return f"{name} has shape {value.shape}, expected {shape}"
    return None


def first_error(*errors) -> str | None:
    """The first message of ``errors`` that is not None."""
    return next((e for e in errors if e), None)


#: What scikit-learn's contract (:mod:`ncld_core.sklearn_compat`) adds to every fitted model: the fitted Y's
#: label values and the fitted DataFrame's column names; absent from files written before it, whose models
#: predict 0/1 int8.
FITTED_INPUTS = {"_label_values": optional(array(1, NPY_KINDS)), "_feature_names": optional(list_of(STR))}
