"""Multi-label metrics, always computed against the ground truth ``Y_true``.

The learner only ever sees the noisy labels; every number reported by the lab
compares its output with the *clean* labels. Inputs:

* ``Y_true`` -- (n, q) array in {0, 1}, the ground truth;
* ``scores`` -- (n, q) finite real decision values, higher = more relevant;
* ``Y_pred`` -- (n, q) array in {0, 1}; by default ``scores > 0`` (the paper's
  fixed threshold 0).

Conventions (all chosen to agree with scikit-learn where it has the metric):

* **F1 zero division** (``zero_division``, default ``1.0``): a label (macro-F1),
  an instance (example-F1) or the whole chunk (micro-F1) with no true *and* no
  predicted positive has F1 equal to ``zero_division``; with 1.0 "correctly
  predicting nothing" is perfect, as in Mulan. This is scikit-learn's
  ``f1_score(..., zero_division=zero_division)``, which we match for 0.0 and 1.0.
* **Ties in scores** are pessimistic everywhere, as in scikit-learn: the rank of
  a label is the number of labels scoring *at least* as high, so a label tied
  with an irrelevant one is ranked after it.
* **Instances with no relevant label** are "perfectly ranked" for every ranking
  metric (scikit-learn's rule: the ranking does not matter): average precision
  1, ranking loss 0, one-error 0, coverage 0. Instances whose labels are all
  relevant come out perfect from the formulas themselves.
* **average_precision** is label-ranking average precision (Zhang & Zhou 2014),
  identical to ``sklearn.metrics.label_ranking_average_precision_score``.
* **ranking_loss** is ``sklearn.metrics.label_ranking_loss``: the fraction of
  (relevant, irrelevant) pairs with the irrelevant label scored >= the relevant.
* **one_error**: fraction of instances whose top-ranked label is irrelevant;
  if several labels tie for the top score, it is an error as soon as one of them
  is irrelevant (pessimistic ties, as above).
* **coverage** follows Zhang & Zhou: how far down the ranking one must go to
  cover all relevant labels, *minus one* (so a perfect ranking with one relevant
  label scores 0). Per instance it equals scikit-learn's ``coverage_error``
  minus 1 for instances with a relevant label, and 0 otherwise. It is not
  normalised by ``q``.

Every metric is an average over instances, labels or matrix entries of
integer counts or per-instance values, so :class:`MetricAccumulator` can keep
sufficient statistics and report the metric on the concatenation of all chunks
exactly (up to floating-point summation order).

>>> import numpy as np
>>> Y_true = np.array([[1, 0, 0], [0, 1, 1], [0, 0, 0]])
>>> scores = np.array([[0.9, -0.2, 0.1], [0.3, 0.8, -0.5], [-1.0, -2.0, -0.3]])
>>> m = evaluate(Y_true, scores)            # Y_pred = scores > 0
>>> round(m["hamming_loss"], 4), round(m["micro_f1"], 4), m["subset_accuracy"]
(0.3333, 0.5714, 0.3333333333333333)
>>> round(m["average_precision"], 4), round(m["ranking_loss"], 4), m["coverage"]
(0.9444, 0.1667, 0.6666666666666666)
>>> acc = MetricAccumulator()
>>> _ = acc.update(Y_true[:2], scores[:2]); _ = acc.update(Y_true[2:], scores[2:])
>>> acc.cumulative() == m
True
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from ..saved_state import PLAIN, SavedState, dict_of, optional
from ..validation import label_matrix

__all__ = [
    "METRICS",
    "GREATER_IS_BETTER",
    "MetricAccumulator",
    "evaluate",
    "hamming_loss",
    "micro_f1",
    "macro_f1",
    "example_f1",
    "subset_accuracy",
    "average_precision",
    "ranking_loss",
    "one_error",
    "coverage",
]

#: (key, human-readable name, greater_is_better) for every metric of :func:`evaluate`.
METRICS: tuple[tuple[str, str, bool], ...] = (
    ("hamming_loss", "Hamming loss", False),
    ("micro_f1", "Micro-F1", True),
    ("macro_f1", "Macro-F1", True),
    ("example_f1", "Example-based F1", True),
    ("subset_accuracy", "Subset accuracy", True),
    ("average_precision", "Average precision", True),
    ("ranking_loss", "Ranking loss", False),
    ("one_error", "One-error", False),
    ("coverage", "Coverage", False),
)

#: metric key -> whether greater is better (from :data:`METRICS`).
GREATER_IS_BETTER: dict[str, bool] = {key: better for key, _, better in METRICS}

# Rows of the (n, q) ranking computation handled at once: bounds memory to a few
# arrays of ~1M entries whatever n is (a loop over blocks, not over instances).
_BLOCK_ENTRIES = 1 << 20


# --------------------------------------------------------------------------- checks


def _check_binary(Y, name: str) -> np.ndarray:
    """Return ``Y`` as a 2-D int8 array in {0, 1} or raise a ValueError naming it."""
    A = label_matrix(Y, name)
    if A.dtype.kind != "b":
        ok = (A == 0) | (A == 1)
        if not ok.all():
            bad = A[~ok][0]
            if isinstance(bad, np.floating) and float(bad).is_integer():
                bad = int(bad)
            raise ValueError(f"{name} must hold labels in {{0, 1}}; found {bad}")
    return A.astype(np.int8, copy=False)


def _check_scores(scores, shape: tuple[int, int]) -> np.ndarray:
    if sp.issparse(scores):
        scores = scores.toarray()
    try:
        S = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"scores must be numeric: {exc}") from None
    if S.ndim == 1:
        S = S[:, None]
    if S.shape != shape:
        raise ValueError(f"scores has shape {S.shape} but Y_true has shape {shape}")
    finite = np.isfinite(S)
    if not finite.all():
        row, col = (int(v) for v in np.argwhere(~finite)[0])
        raise ValueError(f"scores contains NaN or infinity (first at row {row}, column {col})")
    return S


def _check_pred(Y_pred, shape: tuple[int, int]) -> np.ndarray:
    P = _check_binary(Y_pred, "Y_pred")
    if P.shape != shape:
        raise ValueError(f"Y_pred has shape {P.shape} but Y_true has shape {shape}")
    return P


def _check_zero_division(zero_division) -> float:
    if (
        isinstance(zero_division, bool)
        or not isinstance(zero_division, numbers.Real)
        or not 0.0 <= zero_division <= 1.0
    ):
        raise ValueError(f"zero_division must be a number in [0, 1], got {zero_division!r}")
    return float(zero_division)


def _check_true_pred(Y_true, Y_pred):
    T = _check_binary(Y_true, "Y_true")
    return T, _check_pred(Y_pred, T.shape)


def _check_true_scores(Y_true, scores):
    T = _check_binary(Y_true, "Y_true")
    return T, _check_scores(scores, T.shape)


# ------------------------------------------------------------------ per-row kernels


def _f1(num: np.ndarray | float, den: np.ndarray | float, zero_division: float):
    """``num / den`` with ``zero_division`` where ``den == 0`` (num is 2 tp)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.full(np.broadcast(num, den).shape, zero_division, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _example_f1_rows(T: np.ndarray, P: np.ndarray, zero_division: float) -> np.ndarray:
    inter = np.count_nonzero(T & P, axis=1)
    den = np.count_nonzero(T, axis=1) + np.count_nonzero(P, axis=1)
    return _f1(2 * inter, den, zero_division)


def _ranking_rows(T: np.ndarray, S: np.ndarray):
    """Per-instance (average precision, ranking loss, one-error, coverage).

    Vectorised over rows: each row is sorted once (ascending, stable) and tie
    groups are found from equal neighbours; for every label we get
    ``all_ge`` = #labels scoring >= it and ``rel_ge`` = #relevant labels
    scoring >= it, from which the four metrics follow.
    """
    n, q = S.shape
    ap = np.empty(n)
    rl = np.empty(n)
    oe = np.empty(n, dtype=np.int64)
    cov = np.empty(n, dtype=np.int64)
    block = max(1, _BLOCK_ENTRIES // q)
    pos = np.arange(q)
    for lo in range(0, n, block):
        hi = min(lo + block, n)
        order = np.argsort(S[lo:hi], axis=1, kind="stable")
        s = np.take_along_axis(S[lo:hi], order, axis=1)
        y = np.take_along_axis(T[lo:hi], order, axis=1).astype(bool)
        start = np.ones(s.shape, dtype=bool)
        start[:, 1:] = s[:, 1:] != s[:, :-1]
        # first sorted position of each tie group = #labels scoring strictly lower
        lower = np.maximum.accumulate(np.where(start, pos, 0), axis=1)
        all_ge = q - lower
        crel = np.cumsum(y, axis=1, dtype=np.int64)
        nrel = crel[:, -1]
        rel_lower = np.take_along_axis(crel - y, lower, axis=1)
        rel_ge = nrel[:, None] - rel_lower
        has = nrel > 0
        safe = np.where(has, nrel, 1)
        # average precision: mean over relevant j of rel_ge / all_ge
        prec = np.where(y, rel_ge / all_ge, 0.0)
        ap[lo:hi] = np.where(has, prec.sum(axis=1) / safe, 1.0)
        # ranking loss: (relevant, irrelevant) pairs with irrelevant scored >= relevant
        bad_pairs = np.where(y, all_ge - rel_ge, 0).sum(axis=1)
        pairs = nrel * (q - nrel)
        rl[lo:hi] = np.where(pairs > 0, bad_pairs / np.where(pairs > 0, pairs, 1), 0.0)
        # one-error: an irrelevant label in the top tie group
        oe[lo:hi] = has & (all_ge[:, -1] > rel_ge[:, -1])
        # coverage (Zhang & Zhou): worst rank of a relevant label, minus one
        cov[lo:hi] = np.where(has, np.where(y, all_ge, 0).max(axis=1) - 1, 0)
    return ap, rl, oe, cov


# ------------------------------------------------------------ sufficient statistics

_SUM_KEYS = ("example_f1", "average_precision", "ranking_loss", "one_error", "coverage")


def _stats(T: np.ndarray, S: np.ndarray, P: np.ndarray, zero_division: float) -> dict:
    """Sufficient statistics of one chunk (inputs already checked)."""
    tp = np.count_nonzero(T & P, axis=0).astype(np.int64)
    n_true = np.count_nonzero(T, axis=0).astype(np.int64)
    n_pred = np.count_nonzero(P, axis=0).astype(np.int64)
    ap, rl, oe, cov = _ranking_rows(T, S)
    return {
        "n": T.shape[0],
        "q": T.shape[1],
        "tp": tp,
        "fp": n_pred - tp,
        "fn": n_true - tp,
        "mismatches": int(np.count_nonzero(T != P)),
        "exact": int(np.count_nonzero((T == P).all(axis=1))),
        "example_f1": float(_example_f1_rows(T, P, zero_division).sum()),
        "average_precision": float(ap.sum()),
        "ranking_loss": float(rl.sum()),
        "one_error": int(oe.sum()),
        "coverage": int(cov.sum()),
    }


def _from_stats(st: dict, zero_division: float) -> dict[str, float]:
    n, q = st["n"], st["q"]
    tp, fp, fn = st["tp"], st["fp"], st["fn"]
    out = {
        "hamming_loss": st["mismatches"] / (n * q),
        "micro_f1": float(_f1(2 * tp.sum(), 2 * tp.sum() + fp.sum() + fn.sum(), zero_division)),
        "macro_f1": float(_f1(2 * tp, 2 * tp + fp + fn, zero_division).mean()),
        "example_f1": st["example_f1"] / n,
        "subset_accuracy": st["exact"] / n,
    }
    for key in _SUM_KEYS[1:]:
        out[key] = st[key] / n
    return {key: float(out[key]) for key, _, _ in METRICS}


# ---------------------------------------------------------------------- public API


def hamming_loss(Y_true, Y_pred) -> float:
    """Fraction of (instance, label) entries predicted wrongly.

    >>> hamming_loss([[1, 0], [0, 0]], [[1, 1], [0, 0]])
    0.25
    """
    T, P = _check_true_pred(Y_true, Y_pred)
    return float(np.count_nonzero(T != P) / T.size)


def micro_f1(Y_true, Y_pred, *, zero_division: float = 1.0) -> float:
    """F1 of the pooled counts ``2 TP / (2 TP + FP + FN)`` over all labels.

    ``zero_division`` when there is no true and no predicted positive at all.

    >>> micro_f1([[1, 0], [0, 1]], [[1, 1], [0, 0]])
    0.5
    >>> micro_f1([[0, 0]], [[0, 0]]), micro_f1([[0, 0]], [[0, 0]], zero_division=0)
    (1.0, 0.0)
    """
    zd = _check_zero_division(zero_division)
    T, P = _check_true_pred(Y_true, Y_pred)
    tp = np.count_nonzero(T & P)
    return float(_f1(2 * tp, np.count_nonzero(T) + np.count_nonzero(P), zd))


def macro_f1(Y_true, Y_pred, *, zero_division: float = 1.0) -> float:
    """Unweighted mean over labels of the per-label F1.

    A label with no true and no predicted positive has F1 ``zero_division``.

    >>> macro_f1([[1, 0], [0, 0]], [[1, 0], [1, 0]])  # label 0: 2/3, label 1: 1
    0.8333333333333333
    """
    zd = _check_zero_division(zero_division)
    T, P = _check_true_pred(Y_true, Y_pred)
    tp = np.count_nonzero(T & P, axis=0)
    den = np.count_nonzero(T, axis=0) + np.count_nonzero(P, axis=0)
    return float(_f1(2 * tp, den, zd).mean())


def example_f1(Y_true, Y_pred, *, zero_division: float = 1.0) -> float:
    """Mean over instances of ``2 |Y ∩ Ŷ| / (|Y| + |Ŷ|)`` (sklearn's ``average="samples"``).

    An instance with empty truth and empty prediction scores ``zero_division``.

    >>> example_f1([[1, 1], [0, 0]], [[1, 0], [0, 0]])
    0.8333333333333333
    """
    zd = _check_zero_division(zero_division)
    T, P = _check_true_pred(Y_true, Y_pred)
    return float(_example_f1_rows(T, P, zd).mean())


def subset_accuracy(Y_true, Y_pred) -> float:
    """Fraction of instances whose whole label set is predicted exactly.

    >>> subset_accuracy([[1, 0], [0, 1]], [[1, 0], [1, 1]])
    0.5
    """
    T, P = _check_true_pred(Y_true, Y_pred)
    return float(np.count_nonzero((T == P).all(axis=1)) / T.shape[0])


def average_precision(Y_true, scores) -> float:
    """Label-ranking average precision (sklearn's LRAP; 1 for instances without relevant label).

    For each relevant label, the fraction of labels ranked at or above it that
    are relevant; averaged over relevant labels, then over instances.

    >>> average_precision([[1, 0, 1]], [[0.9, 0.5, 0.1]])  # (1/1 + 2/3) / 2
    0.8333333333333333
    """
    T, S = _check_true_scores(Y_true, scores)
    return float(_ranking_rows(T, S)[0].mean())


def ranking_loss(Y_true, scores) -> float:
    """Mean fraction of (relevant, irrelevant) pairs ordered wrongly (ties count as wrong).

    >>> ranking_loss([[1, 0, 1]], [[0.9, 0.5, 0.1]])
    0.5
    """
    T, S = _check_true_scores(Y_true, scores)
    return float(_ranking_rows(T, S)[1].mean())


def one_error(Y_true, scores) -> float:
    """Fraction of instances whose top-scored label is irrelevant (any irrelevant label tied at the top counts).

    Instances with no relevant label count as correct.

    >>> one_error([[1, 0], [0, 1], [1, 0], [0, 0]], [[2, 1], [2, 1], [1, 1], [0, 5]])
    0.5
    """
    T, S = _check_true_scores(Y_true, scores)
    return float(_ranking_rows(T, S)[2].mean())


def coverage(Y_true, scores) -> float:
    """Zhang & Zhou's coverage: depth of the lowest-ranked relevant label, minus one.

    Equals ``sklearn.metrics.coverage_error - 1`` on instances with a relevant
    label; instances without one contribute 0. Ties take the worst rank.

    >>> # ranks of the last relevant label: 3 and 2; third row has none -> (2 + 1 + 0) / 3
    >>> coverage([[1, 0, 1], [0, 1, 0], [0, 0, 0]], [[0.9, 0.5, 0.1], [3, 2, 1], [1, 2, 3]])
    1.0
    """
    T, S = _check_true_scores(Y_true, scores)
    return float(_ranking_rows(T, S)[3].mean())


def evaluate(Y_true, scores, Y_pred=None, *, zero_division: float = 1.0) -> dict[str, float]:
    """All metrics of :data:`METRICS` on one batch; ``Y_pred`` defaults to ``scores > 0``.

    >>> sorted(evaluate([[1, 0]], [[1.0, -1.0]]).items())[:3]
    [('average_precision', 1.0), ('coverage', 0.0), ('example_f1', 1.0)]
    """
    zd = _check_zero_division(zero_division)
    T, S = _check_true_scores(Y_true, scores)
    P = (S > 0).astype(np.int8) if Y_pred is None else _check_pred(Y_pred, T.shape)
    return _from_stats(_stats(T, S, P, zd), zd)


class MetricAccumulator:
    """Evaluate chunk by chunk and keep the metrics of everything seen so far.

    :meth:`update` returns the chunk's metrics; :meth:`cumulative` returns the
    metrics of the concatenation of all chunks since the last :meth:`reset` --
    exactly, because the accumulator keeps sufficient statistics (per-label
    TP/FP/FN, error counts, sums of per-instance values) rather than averaging
    chunk averages.

    >>> acc = MetricAccumulator()
    >>> acc.update([[1, 0]], [[0.5, -0.5]])["hamming_loss"]
    0.0
    >>> acc.update([[1, 0]], [[-0.5, 0.5]])["hamming_loss"]
    1.0
    >>> acc.cumulative()["hamming_loss"], acc.n_instances
    (0.5, 2)
    """

    def __init__(self, zero_division: float = 1.0):
        self.zero_division = _check_zero_division(zero_division)
        self.reset()

    def reset(self) -> None:
        """Forget every chunk seen."""
        self._stats: dict | None = None

    @property
    def n_instances(self) -> int:
        """Number of instances accumulated so far."""
        return 0 if self._stats is None else int(self._stats["n"])

    def update(self, Y_true, scores, Y_pred=None) -> dict[str, float]:
        """Add a chunk; return its own metrics (``Y_pred`` defaults to ``scores > 0``)."""
        T, S = _check_true_scores(Y_true, scores)
        if self._stats is not None and T.shape[1] != self._stats["q"]:
            raise ValueError(
                f"Y_true has {T.shape[1]} labels but earlier chunks had {self._stats['q']}"
            )
        P = (S > 0).astype(np.int8) if Y_pred is None else _check_pred(Y_pred, T.shape)
        st = _stats(T, S, P, self.zero_division)
        if self._stats is None:
            self._stats = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in st.items()}
        else:
            for key, value in st.items():
                if key != "q":
                    self._stats[key] = self._stats[key] + value
        return _from_stats(st, self.zero_division)

    def cumulative(self) -> dict[str, float]:
        """Metrics on the concatenation of all chunks since the last reset."""
        if self._stats is None:
            raise ValueError("MetricAccumulator has seen no chunk yet: call update first")
        return _from_stats(self._stats, self.zero_division)


#: What a checkpoint keeps (:mod:`ncld_core.saved_state`): the sufficient statistics (finite arrays); a loaded
#: accumulator must give its cumulative metrics.
MetricAccumulator.saved_state = SavedState(state={"_stats": optional(dict_of(PLAIN))},
                                           smoke=lambda acc: acc.cumulative() if acc.n_instances else None)
