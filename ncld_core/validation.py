"""Input checks shared by every public entry point.

Each check raises a ``ValueError`` that names the offending parameter, so a
caller (the API, the command line or the dashboard) can show it as it is.
"""

from __future__ import annotations

import datetime
import math
import numbers
import re
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["check_X", "check_dtype", "check_feature_values", "MAX_FEATURE", "check_random_state", "check_Y",
           "label_matrix", "check_XY", "check_flip_rates", "check_in_range", "shown_value", "Range", "InputTypeError",
           "MAX_NESTING", "MAX_TEXT_BYTES", "NestingError", "nesting_depth", "parse_json", "parse_toml", "decode_text"]


class InputTypeError(ValueError, TypeError):
    """Input that is not numbers at all (e.g. a dict in ``X``).

    A ``ValueError`` like every input error here, and a ``TypeError`` as numpy's own
    conversion raises (what scikit-learn's estimator checks expect).
    """


#: Largest feature magnitude a model accepts: beyond it the squared distances of the graph
#: (Eq. Re) and the hidden layer's Gram matrices overflow float64 and the solve fails.
MAX_FEATURE = 1e100


#: Values in an object array that numpy would turn into numbers silently, yet are no numbers to learn from.
_NOT_NUMBERS = (str, bytes, np.datetime64, np.timedelta64, datetime.date, datetime.time, datetime.timedelta)


def _first_refused(raw: np.ndarray):
    """``(row, column, value)`` of the first str / bytes / date / duration in an object array, or None."""
    flat = raw.reshape(-1)
    for k, value in enumerate(flat):
        if isinstance(value, _NOT_NUMBERS):
            if raw.ndim == 2:
                return (*divmod(k, raw.shape[1]), value)
            return (k, None, value)
    return None


def check_dtype(raw: np.ndarray, name: str, given=None) -> None:
    """The one dtype check of features and labels alike (:func:`check_X`, :func:`label_matrix`, so
    :func:`check_Y`): a ValueError naming ``name`` for values that are not numbers, though numpy would
    convert them.

    * strings and bytes, numeric ones too (``'2.5'``, ``'1'``): a column read as text is a mistake to fix at
      its source (e.g. a CSV read without ``dtype``), not a number to guess; in an object array as well;
    * dates and durations (``datetime64`` / ``timedelta64``, or such values in an object array): numpy
      would count days or seconds since 1970;
    * complex numbers.

    ``raw``: ``np.asarray`` of the input; ``given``: the input itself (numpy turns the numbers beside a
    string into strings: the message shows the values as given). Numbers in an object array pass.

    >>> check_dtype(np.array([["0", "1"]]), "Y")
    Traceback (most recent call last):
    ...
    ValueError: Y must be numeric: found the string '0' at row 0, column 0; strings are refused, numeric ones too (convert the data to numbers explicitly)
    >>> check_dtype(np.array(["2024-01-01"], dtype="datetime64[D]"), "X")
    Traceback (most recent call last):
    ...
    ValueError: X must be numeric: found dates (dtype datetime64[D]); dates and durations are refused (convert them to numbers explicitly)
    """
    if np.iscomplexobj(raw):
        raise ValueError(f"{name}: Complex data not supported")
    if raw.dtype.kind in "mM":
        what = "dates" if raw.dtype.kind == "M" else "durations"
        raise ValueError(f"{name} must be numeric: found {what} (dtype {raw.dtype}); dates and durations are "
                         "refused (convert them to numbers explicitly)")
    if raw.dtype.kind in "USa":
        try:  # the values as given (numpy turned the numbers among them into strings too)
            original = np.asarray(given, dtype=object)
        except (TypeError, ValueError):
            original = None
        hit = _first_refused(original if original is not None and original.shape == raw.shape else raw.astype(object))
    elif raw.dtype == object:
        hit = _first_refused(raw)
    else:
        return
    if hit is None:
        return
    row, col, value = hit
    where = f"row {row}" if col is None else f"row {row}, column {col}"
    if isinstance(value, (str, bytes)):
        raise ValueError(f"{name} must be numeric: found the string {value!r} at {where}; strings are refused, "
                         "numeric ones too (convert the data to numbers explicitly)")
    what = "duration" if isinstance(value, (np.timedelta64, datetime.timedelta)) else "date"
    raise ValueError(f"{name} must be numeric: found the {what} {shown_value(value)} at {where}; dates and "
                     "durations are refused (convert them to numbers explicitly)")


def check_feature_values(X, *, source: str = "X", feature_names=None, data_rows: bool = False,
                         learning: bool = True) -> None:
    """Refuse features no model can learn from, naming where: the one check of the API (:func:`check_X`),
    the command line (through the stream builder) and the dashboard's upload
    (:func:`ncld_core.data.check_features`).

    * a value with ``|x| > MAX_FEATURE`` (finite, but its square overflows);
    * with ``learning`` and at least 2 rows: every feature constant, so the instances cannot be told
      apart (no graph, no hidden-layer signal).

    ``X``: a finite float ndarray or sparse matrix.  Places are named ``row r, column c`` (0-based), or with
    ``feature_names`` and ``data_rows`` as ``feature 'name', data row r`` (1-based, as in a file).

    >>> check_feature_values(np.array([[0.0, 1.0], [2.0, 1e308]]))
    Traceback (most recent call last):
    ...
    ValueError: X: value 1e+308 at row 1, column 1 is too large (|x| must stay below 1e+100; its square overflows the solve)
    >>> check_feature_values(np.ones((3, 2)))
    Traceback (most recent call last):
    ...
    ValueError: X: every feature is constant (columns 0, 1, rows 0 to 2): the instances cannot be told apart
    """
    if sp.issparse(X):
        coo = X.tocoo()
        big = np.flatnonzero(np.abs(coo.data) > MAX_FEATURE)
        rows, cols, vals = coo.row[big], coo.col[big], coo.data[big]
    else:
        A = np.asarray(X)
        rows, cols = np.nonzero(np.abs(A) > MAX_FEATURE)
        vals = A[rows, cols]
    n, d = X.shape

    def column(c):
        return f"feature {feature_names[c]!r}" if feature_names is not None else f"column {c}"

    def row(r):
        return f"data row {r + 1}" if data_rows else f"row {r}"

    if vals.size:
        k = np.lexsort((cols, rows))[0]
        place = (f"{column(cols[k])}, {row(rows[k])}: value {vals[k]:g}" if feature_names is not None
                 else f"value {vals[k]:g} at {row(rows[k])}, {column(cols[k])}")
        raise ValueError(f"{source}: {place} is too large (|x| must stay below {MAX_FEATURE:g}; "
                         "its square overflows the solve)")
    if learning and n >= 2:
        lo = X.min(axis=0).toarray().ravel() if sp.issparse(X) else np.min(X, axis=0)
        hi = X.max(axis=0).toarray().ravel() if sp.issparse(X) else np.max(X, axis=0)
        if np.all(lo == hi):
            shown = list(feature_names[:5]) if feature_names is not None else list(range(min(d, 5)))
            what = ", ".join(repr(v) if feature_names is not None else str(v) for v in shown)
            what = ("" if feature_names is not None else "columns " if d > 1 else "column ") + what
            what += ", ..." if d > 5 else ""
            rows_shown = f"rows 1 to {n}" if data_rows else f"rows 0 to {n - 1}"
            raise ValueError(f"{source}: every feature is constant ({what}, {rows_shown}): "
                             "the instances cannot be told apart")


def check_X(X, *, name: str = "X", n_features: int | None = None, owner: str = "the model",
            learning: bool = False):
    """Return ``X`` as a float64 ndarray or CSR matrix, finite, 2-D, non-empty, numbers only.

    Strings, dates and durations are refused (numeric strings too: :func:`check_dtype`); so are the values of
    :func:`check_feature_values`
    (``|x| > MAX_FEATURE``, and with ``learning`` a chunk whose features are all constant).
    ``n_features``: the count the model was fitted with (``owner`` names the model in the message,
    worded as scikit-learn's ``validate_data``).

    >>> check_X([[1, 2], [3, 4]]).dtype
    dtype('float64')
    >>> check_X([[1.0, float("nan")]])
    Traceback (most recent call last):
    ...
    ValueError: X contains NaN or infinity (first at row 0, column 1)
    >>> check_X([[1.0, "2.5"]])
    Traceback (most recent call last):
    ...
    ValueError: X must be numeric: found the string '2.5' at row 0, column 1; strings are refused, numeric ones too (convert the data to numbers explicitly)
    """
    if sp.issparse(X):
        if np.issubdtype(X.dtype, np.complexfloating):
            raise ValueError(f"{name}: Complex data not supported")
        if X.dtype.kind not in "biuf":
            raise ValueError(f"{name} must be numeric: a sparse matrix of dtype {X.dtype}")
        X = sp.csr_matrix(X, dtype=np.float64)
        values = X.data
    else:
        try:
            raw = np.asarray(X)
        except (TypeError, ValueError) as exc:  # e.g. ragged rows
            raise ValueError(f"{name} must be numeric: {exc}") from None
        check_dtype(raw, name, X)
        try:
            X = np.asarray(raw, dtype=np.float64)
        except TypeError as exc:  # e.g. a dict among the values
            raise InputTypeError(f"{name} must be numeric: {exc}") from None
        except ValueError as exc:
            raise ValueError(f"{name} must be numeric: {exc}") from None
        values = X
    if X.ndim != 2:
        hint = (": Reshape your data with X.reshape(-1, 1) for one feature or X.reshape(1, -1) for one instance"
                if X.ndim == 1 else "")
        raise ValueError(f"{name} must be 2-D (instances x features), got {X.ndim}-D{hint}")
    if X.shape[0] == 0:
        raise ValueError(f"{name} is empty: a chunk needs at least one instance")
    if X.shape[1] == 0:
        raise ValueError(f"{name} has no features: 0 feature(s) (shape={X.shape}) while a minimum of 1 is required.")
    if not np.all(np.isfinite(values)):
        if sp.issparse(X):
            bad = np.flatnonzero(~np.isfinite(X.data))[0]
            row = int(np.searchsorted(X.indptr, bad, side="right") - 1)
            col = int(X.indices[bad])
        else:
            row, col = (int(v) for v in np.argwhere(~np.isfinite(X))[0])
        raise ValueError(f"{name} contains NaN or infinity (first at row {row}, column {col})")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"{name} has {X.shape[1]} features, but {owner} is expecting {n_features} features as input")
    check_feature_values(X, source=name, learning=learning)
    return X


def label_matrix(Y, name: str = "Y") -> np.ndarray:
    """``Y`` as a 2-D numeric array (instances x labels; a 1-D one as a column), its dtype kept when numeric,
    or a ValueError naming it. The shape checks every label input shares (:func:`check_Y`, the metrics);
    its values' type is checked as features' are (:func:`check_dtype`: no strings, not even ``'0'`` /
    ``'1'``, no dates or durations).

    >>> label_matrix([1, 0, 1]).shape
    (3, 1)
    >>> label_matrix([["1", "0"]])
    Traceback (most recent call last):
    ...
    ValueError: Y must be numeric: found the string '1' at row 0, column 0; strings are refused, numeric ones too (convert the data to numbers explicitly)
    """
    if sp.issparse(Y):
        Y = Y.toarray()
    try:
        A = np.asarray(Y)
    except (TypeError, ValueError) as exc:  # e.g. ragged rows
        raise ValueError(f"{name} must be numeric: {exc}") from None
    check_dtype(A, name, Y)
    if A.dtype.kind not in "biuf":
        try:
            A = np.asarray(A, dtype=np.float64)
        except (TypeError, ValueError) as exc:  # e.g. a dict among the values
            raise ValueError(f"{name} must be numeric: {exc}") from None
    if A.ndim == 1:
        A = A[:, None]
    if A.ndim != 2:
        raise ValueError(f"{name} must be 2-D (instances x labels), got {A.ndim}-D")
    if A.shape[0] == 0 or A.shape[1] == 0:
        raise ValueError(f"{name} is empty")
    return A


def check_Y(Y, *, name: str = "Y", n_labels: int | None = None) -> np.ndarray:
    """Return labels as an int8 array in {0, 1}; accepts {0, 1} or {-1, +1}.

    >>> check_Y([[1, -1], [-1, 1]]).tolist()
    [[1, 0], [0, 1]]
    >>> check_Y([[0, 2]])
    Traceback (most recent call last):
    ...
    ValueError: Y must hold labels in {0, 1} or {-1, +1}; found 2
    """
    Y = label_matrix(Y, name).astype(np.float64, copy=False)
    if not np.all(np.isfinite(Y)):
        raise ValueError(f"{name} contains NaN or infinity")
    values = np.unique(Y)
    if np.all(np.isin(values, (0.0, 1.0))):
        out = Y.astype(np.int8)
    elif np.all(np.isin(values, (-1.0, 1.0))):
        out = (Y > 0).astype(np.int8)
    else:
        stray = [v for v in values if v not in (-1.0, 0.0, 1.0)]
        shown = stray[0] if stray else "both -1 and 0"
        if isinstance(shown, float) and shown.is_integer():
            shown = int(shown)
        raise ValueError(f"{name} must hold labels in {{0, 1}} or {{-1, +1}}; found {shown}")
    if n_labels is not None and out.shape[1] != n_labels:
        raise ValueError(f"{name} has {out.shape[1]} labels but the model was initialised with {n_labels}")
    return out


def check_XY(X, Y, *, n_features=None, n_labels=None, owner: str = "the model", learning: bool = True):
    """Check a chunk to learn: ``X`` and ``Y`` valid and with the same number of rows (``learning``: the
    constant-features check of :func:`check_feature_values` applies)."""
    X = check_X(X, n_features=n_features, owner=owner, learning=learning)
    Y = check_Y(Y, n_labels=n_labels)
    if X.shape[0] != Y.shape[0]:
        raise ValueError(f"X has {X.shape[0]} instances but Y has {Y.shape[0]}")
    return X, Y


def check_random_state(value, name: str = "random_state"):
    """``value`` if it can seed the models' generators, else a ValueError naming ``name``.

    scikit-learn's ``check_random_state`` semantics: None, an integer in [0, 2**32 - 1] or a
    ``numpy.random.RandomState``; a ``numpy.random.Generator`` is accepted too (the project draws with
    them).  Returned unchanged: the model draws from it when it is fitted.

    >>> check_random_state(7)
    7
    >>> check_random_state("abc")
    Traceback (most recent call last):
    ...
    ValueError: random_state must be None, an integer in [0, 2**32 - 1], a numpy RandomState or a numpy Generator; got 'abc'
    """
    if value is None or isinstance(value, (np.random.RandomState, np.random.Generator)):
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)) and 0 <= value < 2**32:
        return value
    raise ValueError(f"{name} must be None, an integer in [0, 2**32 - 1], a numpy RandomState or a numpy "
                     f"Generator; got {value!r}")


def check_in_range(value, name, low, high, *, low_open=False, high_open=False, integer=False):
    """Check a scalar parameter lies in a (half-)open or closed interval.

    >>> check_in_range(0.5, "beta", 0, 1)
    0.5
    >>> check_in_range(2, "beta", 0, 1)
    Traceback (most recent call last):
    ...
    ValueError: beta must be in [0, 1], got 2
    """
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind):
        what = "an integer" if integer else "a number"
        raise ValueError(f"{name} must be {what}, got {shown_value(value)}")
    lo, hi = "(" if low_open else "[", ")" if high_open else "]"
    # An integer parameter is finite as it is (one past 2**64 is no numpy number: no np.isfinite); a real one
    # becomes a float, which an integer past 1e308 cannot (a link's 3000 digits read as inf: the range says
    # what was meant)
    finite = True
    if not integer:
        try:
            finite = math.isfinite(float(value))
        except OverflowError:
            finite = False
    if not finite:
        raise ValueError(f"{name} must be a finite number in {lo}{low}, {high}{hi}, got {shown_value(value)}")
    too_low = value <= low if low_open else value < low
    too_high = value >= high if high_open else value > high
    if too_low or too_high:
        raise ValueError(f"{name} must be in {lo}{low}, {high}{hi}, got {shown_value(value)}")
    return value


def shown_value(value, limit: int = 40) -> str:
    """``repr(value)`` for a message, cut to about ``limit`` characters (a link or a flag can carry thousands
    of digits).

    >>> shown_value(2.5), shown_value(10**60)
    ('2.5', '10000000000000000000… (61 digits)')
    """
    try:
        text = repr(value)
    except ValueError:  # (Python refuses to print an integer of more than 4300 digits)
        return "an integer of more than 4300 digits"
    if len(text) <= limit:
        return text
    return f"{text[:20]}… ({len(text)} {'digits' if isinstance(value, numbers.Integral) else 'characters'})"


@dataclass(frozen=True)
class Range:
    """The allowed values of one scalar parameter, declared once and checked by :func:`check_in_range`.

    The model checks its parameters with :meth:`check`; a run configuration asks :meth:`error`
    for the same message to show beside the control.

    >>> Range(1, 100_000, integer=True).error(0, "n_hidden")
    'n_hidden must be in [1, 100000], got 0'
    """

    low: float
    high: float
    low_open: bool = False
    high_open: bool = False
    integer: bool = False

    def check(self, value, name: str):
        return check_in_range(value, name, self.low, self.high, low_open=self.low_open,
                              high_open=self.high_open, integer=self.integer)

    def error(self, value, name: str) -> str | None:
        """The message :meth:`check` would raise, or None when ``value`` is allowed."""
        try:
            self.check(value, name)
        except ValueError as exc:
            return str(exc)
        return None


def describe_label(j: int, label_names=None) -> str:
    """How messages name label ``j``: ``label 3``, or ``label 3 ('news')`` when its name is known."""
    if label_names is not None and len(label_names) > j:
        return f"label {j} ({label_names[j]!r})"
    return f"label {j}"


def check_flip_rates(rho_pos, rho_neg, n_labels: int | None = None, *, label_names=None,
                     source: str = "flip rates"):
    """Validate per-label flip rates (Eq. NR): each in [0, 1), ``rho_pos + rho_neg < 1``.

    The one flip-rate check: the model, the stream builders and the run configuration all
    call it. Scalars (and length-1 sequences) are broadcast to ``n_labels``; messages start
    with ``source`` and name the offending label (with its name when ``label_names`` are given).

    >>> p, n = check_flip_rates(0.2, [0.1, 0.3], n_labels=2)
    >>> p.tolist(), n.tolist()
    ([0.2, 0.2], [0.1, 0.3])
    >>> check_flip_rates(0.6, 0.5, n_labels=1)
    Traceback (most recent call last):
    ...
    ValueError: flip rates: rho_pos + rho_neg must be < 1 for every label (Eq. NR), but label 0 has 0.6 + 0.5
    """
    out = []
    for name, rho in (("rho_pos", rho_pos), ("rho_neg", rho_neg)):
        try:
            arr = np.atleast_1d(np.asarray(rho, dtype=np.float64))
        except (TypeError, ValueError):
            raise ValueError(f"{source}: {name} must be a number or a sequence of numbers, got {rho!r}") from None
        if arr.ndim != 1:
            raise ValueError(f"{source}: {name} must be a scalar or 1-D, got shape {arr.shape}")
        if n_labels is not None:
            if arr.size == 1:
                arr = np.full(n_labels, arr[0])
            elif arr.size != n_labels:
                raise ValueError(f"{source}: {name} has {arr.size} rates but there are {n_labels} labels")
        bad = np.flatnonzero(~np.isfinite(arr) | (arr < 0) | (arr >= 1))
        if bad.size:
            j = int(bad[0])
            raise ValueError(f"{source}: {name} of {describe_label(j, label_names)} must be in [0, 1), got {arr[j]:g}")
        out.append(arr)
    pos, neg = out
    if pos.size != neg.size and pos.size != 1 and neg.size != 1:
        raise ValueError(f"{source}: rho_pos has {pos.size} rates but rho_neg has {neg.size}")
    pos, neg = np.broadcast_arrays(pos, neg)
    bad = np.flatnonzero(pos + neg >= 1)
    if bad.size:
        j = int(bad[0])
        raise ValueError(
            f"{source}: rho_pos + rho_neg must be < 1 for every label (Eq. NR), "
            f"but {describe_label(j, label_names)} has {pos[j]:g} + {neg[j]:g}"
        )
    return pos.copy(), neg.copy()


# --------------------------------------------------------------------------- text formats read from users
#: The deepest nesting (``[`` / ``{`` inside each other, or TOML tables inside tables) any JSON or TOML text read
#: from a user may have: a run configuration is 2 deep, a checkpoint's header about 14. Python's JSON and TOML
#: parsers recurse once per level (or more), so a text thousands deep would end in a RecursionError.
MAX_NESTING = 64
#: The largest text file read from a user (a run configuration, a flip-rate table), in bytes: a configuration with
#: two flip-rate tables of 1,000 labels (the most a configuration has) takes about 45 KB.
MAX_TEXT_BYTES = 1024**2

# A JSON string (skipped whole, an unterminated one to the end) or a bracket: the only tokens that change the depth.
_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.S)
_JSON_TOKENS_BYTES = re.compile(rb'"(?:[^"\\]|\\.)*"?|[\[\]{}]', re.S)
# TOML: strings of its four kinds and comments are skipped whole; brackets remain (a table header is one level).
# A multi-line string's content may hold escapes ("basic" ones) and one or two quotes, so its closing run is 3-5
# quotes long (the first ones the content's).
_TOML_TOKENS = re.compile(r'"""(?:[^"\\]|\\[\s\S]|"{1,2}(?!"))*(?:"{3,5}|$)|\'\'\'(?:[^\']|\'{1,2}(?!\'))*(?:\'{3,5}|$)'
                          r'|"(?:[^"\\\n]|\\.)*"?|\'[^\'\n]*\'?|#[^\n]*|[\[\]{}]')


class NestingError(ValueError):
    """A JSON or TOML text nested deeper than :data:`MAX_NESTING` (a ``ValueError`` naming the input)."""


def nesting_depth(text: str | bytes, limit: int = MAX_NESTING, *, toml: bool = False) -> int:
    """How deep ``text``'s brackets nest (JSON, or TOML with ``toml``), counted by one scan without recursion;
    the count stops once past ``limit``. Brackets inside strings (and TOML comments) do not count.

    >>> nesting_depth('{"a": [1, [2]], "b": "[[["}'), nesting_depth("[" * 5000, 64)
    (3, 65)
    """
    if isinstance(text, bytes):
        tokens, opening, closing = _JSON_TOKENS_BYTES, (b"[", b"{"), (b"]", b"}")
    else:
        tokens, opening, closing = (_TOML_TOKENS if toml else _JSON_TOKENS), ("[", "{"), ("]", "}")
    depth = deepest = 0
    for match in tokens.finditer(text):
        token = match.group()
        if token in opening:
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        elif token in closing:
            depth -= 1
    return deepest


def _object_depth(value) -> int:
    """How deep dicts and lists nest in a parsed value (TOML's dotted keys nest without brackets); no recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            depth += 1
            deepest = max(deepest, depth)
            if deepest > MAX_NESTING:
                break
            stack.extend((v, depth) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def _too_deep(source: str) -> NestingError:
    return NestingError(f"{source}: nested more than {MAX_NESTING} levels deep (brackets or tables inside each "
                        "other); a run configuration needs 2")


def parse_json(text: str, source: str):
    """``json.loads(text)``, once its nesting is within :data:`MAX_NESTING` (else a :class:`NestingError` naming
    ``source``): the one JSON reader of what a user sends (a link's values, its pinned run). Other errors are
    ``json.JSONDecodeError`` (a ValueError).

    >>> parse_json("[1, 2]", "models")
    [1, 2]
    >>> parse_json("[" * 1200, "dataset")
    Traceback (most recent call last):
    ...
    ncld_core.validation.NestingError: dataset: nested more than 64 levels deep (brackets or tables inside each other); a run configuration needs 2
    """
    import json

    if nesting_depth(text) > MAX_NESTING:
        raise _too_deep(source)
    try:
        return json.loads(text)
    except RecursionError:  # (not reached within the bound: kept so that no text can end in one)
        raise _too_deep(source) from None


def decode_text(data: bytes, source: str) -> str:
    """``data`` as UTF-8 text (a leading byte-order mark dropped), else a ValueError naming ``source`` and the
    line and column of the first byte that is not UTF-8.

    >>> decode_text(b"\\xef\\xbb\\xbfbeta = 0.3", "run.toml")
    'beta = 0.3'
    >>> decode_text(b'beta = 0.3\\ndataset = "caf\\xe9"', "run.toml")
    Traceback (most recent call last):
    ...
    ValueError: run.toml: not UTF-8 text: byte 0xe9 at line 2, column 15 (save the file as UTF-8)
    """
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ValueError(f"{source}: not UTF-8 text: byte 0x{data[exc.start]:02x} at line {line}, column {column} "
                         "(save the file as UTF-8)") from None


def parse_toml(text: str, source: str) -> dict:
    """``tomllib.loads(text)`` within :data:`MAX_NESTING` (a leading byte-order mark dropped): the one TOML reader
    of what a user sends. Every error is a ValueError naming ``source`` (and the line, for a syntax error).

    >>> parse_toml("[run]\\nbeta = 0.3", "run.toml")
    {'run': {'beta': 0.3}}
    >>> parse_toml("beta = = 1", "run.toml")
    Traceback (most recent call last):
    ...
    ValueError: run.toml is not valid TOML: Invalid value (at line 1, column 8)
    """
    import tomllib

    text = text.removeprefix("\ufeff")
    if nesting_depth(text, toml=True) > MAX_NESTING:
        raise _too_deep(source)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{source} is not valid TOML: {exc}") from None
    except RecursionError:  # (a form the scan does not count; not known to exist)
        raise _too_deep(source) from None
    if _object_depth(data) > MAX_NESTING:  # dotted keys ([a.b.c...] headers) nest without brackets
        raise _too_deep(source)
    return data
