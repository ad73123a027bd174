"""Class-conditional label flip noise, per label (Eq. NR of the paper).

For every label ``j`` the observed label ``y_j`` is the true label ``g_j``,
flipped independently of everything else with a probability that depends only
on the true value (Eq. NR)::

    rho_pos[j] = P(y_j = -1 | g_j = +1)      (a relevant label is lost)
    rho_neg[j] = P(y_j = +1 | g_j = -1)      (an irrelevant label is added)
    rho_pos[j] + rho_neg[j] < 1

The paper's protocol (Section IV, NOTES.md section 5) draws both rates of every
label from U[0.2, 0.4] and flips the ground truth *after* the stream has been
ordered; :func:`draw_flip_rates` and :func:`apply_label_noise` implement the two
steps, :func:`parse_flip_rates` reads rates given by a user (a pair, a table,
a CSV file).

>>> import numpy as np
>>> rho_pos, rho_neg = draw_flip_rates(3, random_state=0)
>>> bool(np.all((rho_pos >= 0.2) & (rho_pos <= 0.4)))
True
>>> Y = np.zeros((4, 3), dtype=np.int8)
>>> int(apply_label_noise(Y, 0.0, 0.0, random_state=0).sum())   # no noise, no flips
0
>>> float(apply_label_noise(Y, 0.0, 0.999, random_state=0).mean())   # nearly every 0 becomes 1
1.0
>>> parse_flip_rates({"rho_pos": [0.1, 0.2], "rho_neg": 0.3}, 2)
(array([0.1, 0.2]), array([0.3, 0.3]))
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ncld_core.validation import check_flip_rates, check_in_range, check_Y, describe_label
from ncld_core.stream.noise_families import NOISE_FAMILIES, draw_family_rates
from ncld_core.stream.seeding import as_generator
from ncld_core.stream.stream import noise_factors

__all__ = [
    "PAPER_FLIP_RANGE",
    "draw_flip_rates",
    "parse_flip_rates",
    "resolve_flip_rates",
    "apply_label_noise",
    "check_noise_changes_have_noise",
    "noisy_labels",
]

#: The range both rates of every label are drawn from in the paper (Section IV).
PAPER_FLIP_RANGE = (0.2, 0.4)

# Rows of uniforms drawn at once by apply_label_noise: bounds the temporary memory
# on large benchmarks (bookmarks: 87856 x 208) without changing the result, since
# consecutive calls of Generator.random produce the same numbers as one big call.
_NOISE_BLOCK_ENTRIES = 1 << 22


def draw_flip_rates(n_labels: int, low: float = 0.2, high: float = 0.4, *, random_state=None):
    """Draw per-label flip rates ``rho_pos, rho_neg ~ U[low, high]`` independently (Section IV).

    Parameters
    ----------
    n_labels : int
        Number of labels ``q`` (>= 1).
    low, high : float
        Range of the uniform distribution, ``0 <= low <= high < 1``. The paper
        uses ``[0.2, 0.4]``. ``high >= 0.5`` is allowed, but every drawn pair must
        still satisfy ``rho_pos + rho_neg < 1`` (Eq. NR), otherwise an error is raised.
    random_state : None, int or numpy.random.Generator

    Returns
    -------
    rho_pos, rho_neg : float ndarray, shape (n_labels,)

    Raises
    ------
    ValueError
        On a bad parameter, or when a drawn pair violates Eq. (NR).

    Examples
    --------
    >>> p, n = draw_flip_rates(2, 0.1, 0.1)
    >>> p.tolist(), n.tolist()
    ([0.1, 0.1], [0.1, 0.1])
    >>> draw_flip_rates(2, 0.6, 0.7)
    Traceback (most recent call last):
    ...
    ValueError: flip rate range [0.6, 0.7]: every drawn pair would have rho_pos + rho_neg >= 1 (Eq. NR needs < 1); use low < 0.5
    """
    check_in_range(n_labels, "n_labels", 1, np.inf, integer=True)
    check_in_range(low, "low", 0, 1, high_open=True)
    check_in_range(high, "high", 0, 1, high_open=True)
    if low > high:
        raise ValueError(f"low must be <= high, got low={low} and high={high}")
    if 2 * low >= 1:
        # Fails for every draw: say so instead of a random-looking error.
        raise ValueError(
            f"flip rate range [{low:g}, {high:g}]: every drawn pair would have rho_pos + rho_neg >= 1 "
            "(Eq. NR needs < 1); use low < 0.5"
        )
    rng = as_generator(random_state)
    rho_pos = rng.uniform(low, high, size=n_labels)
    rho_neg = rng.uniform(low, high, size=n_labels)
    # Rounding can push uniform(low, high) onto high only by an ulp; clip keeps [low, high].
    rho_pos = np.clip(rho_pos, low, high)
    rho_neg = np.clip(rho_neg, low, high)
    return check_flip_rates(
        rho_pos, rho_neg, n_labels, source=f"flip rates drawn from U[{low:g}, {high:g}] (lower high below 0.5)"
    )


def _rates_from_frame(df: pd.DataFrame, n_labels: int, label_names, source: str):
    missing = [c for c in ("rho_pos", "rho_neg") if c not in df.columns]
    if missing:
        raise ValueError(
            f"{source}: missing column(s) {', '.join(missing)}; expected columns rho_pos, rho_neg "
            f"(and optionally label), found {', '.join(map(str, df.columns)) or 'none'}"
        )
    if "label" in df.columns and label_names is not None and len(label_names) > 0:
        # Reorder the table to the dataset's label order, by name.
        labels = [str(v).strip() for v in df["label"]]
        dup = sorted({v for v in labels if labels.count(v) > 1})
        if dup:
            raise ValueError(f"{source}: label {dup[0]!r} appears more than once")
        wanted = [str(v) for v in label_names]
        absent = [v for v in wanted if v not in labels]
        if absent:
            raise ValueError(
                f"{source}: no rates for label {absent[0]!r}"
                + (f" (and {len(absent) - 1} more)" if len(absent) > 1 else "")
            )
        extra = [v for v in labels if v not in set(wanted)]
        if extra:
            raise ValueError(f"{source}: label {extra[0]!r} is not a label of this dataset")
        df = df.set_index(pd.Index(labels)).loc[wanted]
    elif "label" in df.columns and label_names is None:
        label_names = [str(v) for v in df["label"]]
    if len(df) != n_labels:
        raise ValueError(f"{source}: {len(df)} rows of rates but there are {n_labels} labels")
    cols = []
    for col in ("rho_pos", "rho_neg"):
        values = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=np.float64)
        bad = np.flatnonzero(np.isnan(values))
        if bad.size:
            j = int(bad[0])
            raise ValueError(
                f"{source}: column {col} of {describe_label(j, label_names)} is not a number: {df[col].iloc[j]!r}"
            )
        cols.append(values)
    return check_flip_rates(cols[0], cols[1], n_labels, label_names=label_names, source=source)


def parse_flip_rates(spec, n_labels: int, label_names=None):
    """Read per-label flip rates (Eq. NR) from one of several user-facing forms.

    Parameters
    ----------
    spec : one of
        - a number ``r``: ``rho_pos = rho_neg = r`` for every label;
        - a pair ``(rho_pos, rho_neg)`` of numbers, the same for every label;
        - an array of shape ``(n_labels, 2)``: one row ``(rho_pos, rho_neg)`` per label;
        - a dict ``{"rho_pos": ..., "rho_neg": ...}`` of numbers or length-``q`` sequences
          (an optional ``"label"`` entry works as the DataFrame's label column);
        - a ``pandas.DataFrame`` with columns ``rho_pos`` and ``rho_neg``, optionally
          ``label``; with a label column and ``label_names`` the rows are matched by name;
        - a path (``str`` or ``os.PathLike``) to a CSV file holding such a table.
    n_labels : int
        Number of labels ``q``.
    label_names : sequence of str, optional
        The dataset's label names: used to reorder a table with a ``label`` column
        and to name the offending label in error messages.

    Returns
    -------
    rho_pos, rho_neg : float ndarray, shape (n_labels,)

    Raises
    ------
    ValueError
        Wrong number of rates, missing column, unreadable file, a rate outside
        [0, 1) or a label with ``rho_pos + rho_neg >= 1`` (the label is named).

    Examples
    --------
    >>> parse_flip_rates((0.1, 0.3), 2)
    (array([0.1, 0.1]), array([0.3, 0.3]))
    >>> parse_flip_rates([[0.1, 0.2], [0.3, 0.4]], 2)
    (array([0.1, 0.3]), array([0.2, 0.4]))
    >>> parse_flip_rates([[0.5, 0.6]], 1, label_names=["music"])
    Traceback (most recent call last):
    ...
    ValueError: flip rates: rho_pos + rho_neg must be < 1 for every label (Eq. NR), but label 0 ('music') has 0.5 + 0.6
    """
    check_in_range(n_labels, "n_labels", 1, np.inf, integer=True)
    if label_names is not None:
        label_names = [str(v) for v in label_names]
        if len(label_names) == 0:
            label_names = None
        elif len(label_names) != n_labels:
            raise ValueError(f"label_names has {len(label_names)} names but there are {n_labels} labels")

    if isinstance(spec, (str, os.PathLike)):
        import io

        from ncld_core.data.paths import read_file
        from ncld_core.validation import MAX_TEXT_BYTES, decode_text

        path = os.fspath(spec)
        where = f"flip rates file {path!r}"
        # a regular file within the bound, UTF-8 (a byte-order mark accepted): each refusal names the file
        text = decode_text(read_file(Path(path), "flip rates file", max_bytes=MAX_TEXT_BYTES), where)
        try:
            df = pd.read_csv(io.StringIO(text), skipinitialspace=True)
        except Exception as exc:  # pandas raises several types for malformed files
            raise ValueError(f"{where} could not be read as CSV: {exc}") from None
        df.columns = [str(c).strip() for c in df.columns]
        return _rates_from_frame(df, n_labels, label_names, source=f"flip rates file {path!r}")

    if isinstance(spec, pd.DataFrame):
        return _rates_from_frame(spec, n_labels, label_names, source="flip rates table")

    if isinstance(spec, Mapping):
        unknown = sorted(set(map(str, spec)) - {"rho_pos", "rho_neg", "label"})
        if unknown:
            raise ValueError(
                f"flip rates: unknown key {unknown[0]!r}; expected 'rho_pos', 'rho_neg' (and optionally 'label')"
            )
        missing = [k for k in ("rho_pos", "rho_neg") if k not in spec]
        if missing:
            raise ValueError(f"flip rates: missing key {missing[0]!r}; expected 'rho_pos' and 'rho_neg'")
        if "label" in spec:
            return _rates_from_frame(pd.DataFrame(dict(spec)), n_labels, label_names, source="flip rates")
        return check_flip_rates(spec["rho_pos"], spec["rho_neg"], n_labels, label_names=label_names)

    if isinstance(spec, numbers.Real) and not isinstance(spec, bool):
        return check_flip_rates(spec, spec, n_labels, label_names=label_names)

    if isinstance(spec, (Sequence, np.ndarray)) and not isinstance(spec, (bytes, str)):
        try:
            arr = np.asarray(spec, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"flip rates must be numbers, got {spec!r}") from None
        if arr.shape == (2,):
            return check_flip_rates(arr[0], arr[1], n_labels, label_names=label_names)
        if arr.ndim == 2 and arr.shape[1] == 2:
            if arr.shape[0] != n_labels:
                raise ValueError(
                    f"flip rates: {arr.shape[0]} rows of (rho_pos, rho_neg) but there are {n_labels} labels"
                )
            return check_flip_rates(arr[:, 0], arr[:, 1], n_labels, label_names=label_names)
        raise ValueError(
            f"flip rates array must be a pair (rho_pos, rho_neg) or have shape ({n_labels}, 2), got shape {arr.shape}"
        )

    raise ValueError(
        "flip rates must be a number, a pair, a (q, 2) array, a dict with rho_pos/rho_neg, "
        f"a DataFrame or a CSV path; got {type(spec).__name__}"
    )


def _is_number_pair(value) -> bool:
    """A tuple, list or 1-D array of exactly two numbers."""
    if isinstance(value, np.ndarray):
        return value.shape == (2,) and np.issubdtype(value.dtype, np.number)
    return (
        isinstance(value, (tuple, list))
        and len(value) == 2
        and all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in value)
    )


def resolve_flip_rates(flip_rates, n_labels: int, label_names=None, *, random_state=None):
    """Turn the ``flip_rates`` option of the stream builders into ``(rho_pos, rho_neg)``.

    ``None`` means no noise (zeros); ``"paper"`` means each rate ~ U[0.2, 0.4]
    (Section IV); another family name of :data:`~ncld_core.stream.noise_families.NOISE_FAMILIES`
    (``"missing"``, ``"mixed"``) draws from that family; two numbers ``(low, high)`` (tuple, list or array) are a *range*
    to draw from (:func:`draw_flip_rates`), so that a configuration read back
    from JSON means the same; anything else is an explicit spec for
    :func:`parse_flip_rates` (a number, a ``(q, 2)`` array, a dict, a DataFrame,
    a CSV path). Explicit rates equal for every label are therefore given as
    ``{"rho_pos": a, "rho_neg": b}``, not as a pair.

    Returns
    -------
    rho_pos, rho_neg : float ndarray, shape (n_labels,)
    mode : str
        ``"none"``, ``"drawn"`` or ``"explicit"``, for the stream's metadata.

    >>> p, n, mode = resolve_flip_rates(None, 2)
    >>> p.tolist(), n.tolist(), mode
    ([0.0, 0.0], [0.0, 0.0], 'none')
    """
    if flip_rates is None:
        return np.zeros(n_labels), np.zeros(n_labels), "none"
    if isinstance(flip_rates, str) and flip_rates.strip().lower() == "paper":
        return (*draw_flip_rates(n_labels, *PAPER_FLIP_RANGE, random_state=random_state), "drawn")
    if isinstance(flip_rates, str) and flip_rates.strip().lower() in NOISE_FAMILIES:
        family = flip_rates.strip().lower()
        return (*draw_family_rates(family, n_labels, random_state=random_state), "drawn")
    if _is_number_pair(flip_rates):
        low, high = (float(v) for v in flip_rates)
        return (*draw_flip_rates(n_labels, low, high, random_state=random_state), "drawn")
    return (*parse_flip_rates(flip_rates, n_labels, label_names=label_names), "explicit")


def check_noise_changes_have_noise(changes) -> None:
    """A noise change scales the stream's flip rates: on a stream without noise it would change nothing, and is
    a ValueError.

    >>> from ncld_core.stream.stream import NoiseChange
    >>> check_noise_changes_have_noise([NoiseChange(30, 1.5)])
    Traceback (most recent call last):
    ...
    ValueError: schedule: a noise change ('noise@30x1.5') multiplies the stream's flip rates, and this stream has no noise: choose a noise first
    """
    changes = tuple(changes)
    if changes:
        first = changes[0]
        raise ValueError(f"schedule: a noise change ('noise@{first.position}x{first.factor:g}') multiplies the "
                         "stream's flip rates, and this stream has no noise: choose a noise first")


def apply_label_noise(Y_true, rho_pos, rho_neg, *, random_state=None, changes=()) -> np.ndarray:
    """Flip every entry of ``Y_true`` independently with the class-conditional rates of Eq. (NR).

    Entry ``(t, j)`` with ``g = 1`` becomes 0 with probability ``rho_pos[j]``;
    with ``g = 0`` it becomes 1 with probability ``rho_neg[j]``. One uniform
    number is drawn per entry, row by row, so the result depends only on the
    seed and on ``Y_true`` as ordered (the paper injects noise after ordering).

    Parameters
    ----------
    Y_true : array-like (n, q) in {0, 1} or {-1, +1}
    rho_pos, rho_neg : float or array-like (q,)
    random_state : None, int or numpy.random.Generator
    changes : iterable of :class:`~ncld_core.stream.stream.NoiseChange`
        Noise changes of a drift schedule (``DriftSchedule.noise_changes``): from each one's position on, both
        rates of every label are multiplied by its factor (:func:`~ncld_core.stream.stream.noise_factors`). The
        uniforms drawn are the same with or without them, so the rows before the first change are flipped
        exactly as without, and a larger factor only adds flips. Rates a factor takes past Eq. (NR) are a
        ValueError naming the change.

    Returns
    -------
    Y_noisy : int8 ndarray (n, q) in {0, 1}

    Examples
    --------
    >>> import numpy as np
    >>> Y = np.ones((3, 2), dtype=np.int8)
    >>> apply_label_noise(Y, [0.0, 0.999999], 0.0, random_state=1).tolist()
    [[1, 0], [1, 0], [1, 0]]
    >>> from ncld_core.stream.stream import NoiseChange
    >>> apply_label_noise(Y, [0.0, 0.999999], 0.0, random_state=1, changes=[NoiseChange(2, 0.0)]).tolist()
    [[1, 0], [1, 0], [1, 1]]
    >>> apply_label_noise(Y, 0.3, 0.3, changes=[NoiseChange(2, 2.0)])
    Traceback (most recent call last):
    ...
    ValueError: noise change 'noise@2x2' (the flip rates times 2): rho_pos + rho_neg must be < 1 for every label (Eq. NR), but label 0 has 0.6 + 0.6
    """
    Y = check_Y(Y_true, name="Y_true")
    n, q = Y.shape
    rho_pos, rho_neg = check_flip_rates(rho_pos, rho_neg, n_labels=q)
    changes = tuple(changes)
    for change in changes:
        check_flip_rates(rho_pos * change.factor, rho_neg * change.factor, n_labels=q,
                         source=f"noise change 'noise@{change.position}x{change.factor:g}' (the flip rates times "
                                f"{change.factor:g})")
    factors = noise_factors(n, changes) if changes else None
    rng = as_generator(random_state)
    out = np.empty_like(Y)
    rows = max(1, _NOISE_BLOCK_ENTRIES // q)
    for start in range(0, n, rows):
        block = Y[start : start + rows]
        u = rng.random(block.shape)
        # The flip probability of an entry is picked by its true value (Eq. NR).
        rate = np.where(block == 1, rho_pos, rho_neg)
        if factors is not None:
            rate = rate * factors[start : start + rows, None]
        out[start : start + rows] = block ^ (u < rate)
    return out


def noisy_labels(Y_true, flip_rates, label_names, *, rates_random_state=None, noise_random_state=None, changes=()):
    """The observed labels of a stream builder: ``flip_rates`` resolved (:func:`resolve_flip_rates`, drawn from
    ``rates_random_state``), then each entry flipped by :func:`apply_label_noise` (from ``noise_random_state``),
    with the schedule's noise ``changes``; a noise change on a stream without noise is a ValueError
    (:func:`check_noise_changes_have_noise`).

    Returns ``(Y_noisy, rho_pos, rho_neg, mode)``: the noisy labels (int8; without noise a copy of ``Y_true``) and
    what :func:`resolve_flip_rates` returns.

    >>> import numpy as np
    >>> Y_noisy, rho_pos, rho_neg, mode = noisy_labels(np.ones((2, 2), dtype=np.int8), None, ("a", "b"))
    >>> Y_noisy.tolist(), mode
    ([[1, 1], [1, 1]], 'none')
    """
    Y_true = np.asarray(Y_true)
    rho_pos, rho_neg, mode = resolve_flip_rates(flip_rates, Y_true.shape[1], label_names,
                                                random_state=rates_random_state)
    if mode == "none":
        check_noise_changes_have_noise(changes)
        return Y_true.copy(), rho_pos, rho_neg, mode
    return (apply_label_noise(Y_true, rho_pos, rho_neg, random_state=noise_random_state, changes=changes),
            rho_pos, rho_neg, mode)
