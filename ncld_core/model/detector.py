"""Drift detectors on a chunk's label signal: the paper's test and tests with valid statistics.

Every detector reads a :class:`ChunkSignal` (the per-instance unbiased cardinality of
:mod:`ncld_core.model.cardinality`, the paper's Eq. (card) estimate, the observed label counts)
and returns a :class:`DetectorResult`.  ``delta`` is the tolerated probability of a
false alarm per chunk.

* ``"paper"`` (:class:`HoeffdingCardinalityDetector`): Eq. (Hfd) as published: adjacent
  chunks' Eq. (card) estimates, fired when ``|LCard_hat(D_i) - LCard_hat(D_{i-1})| > eps_i``
  with ``eps_i = R_i sqrt(ln(2/delta) / (2 N_i))`` and ``R_i`` the range of the
  per-instance estimates.  A one-sample range bound used for a two-sample difference.
* ``"welch"`` (:class:`WelchDetector`): Welch's two-sample t-test between adjacent chunks'
  per-instance unbiased cardinalities (variance-aware).
* ``"adaptive"`` (:class:`AdaptiveWindowDetector`): an adaptive window over chunk
  summaries, in the manner of ADWIN: the chunks since the last change are kept, and the
  newest 1, 2, 4, 8, 16 chunks are each tested against the older rest (Welch,
  Bonferroni over the splits).  A change missed at one chunk is still in the window
  at the next, against a reference that has not moved, so it is caught later.
  River's ``ADWIN`` does this per instance, but its state is a Rust object that can be
  neither copied (the model's updates are all-or-nothing) nor checkpointed without
  pickle; ``benchmarks/drift.py`` runs River's ADWIN, KSWIN and PageHinkley beside it.
* ``"labels"`` (:class:`LabelDistributionDetector`): the chunk's observed positives against
  the pooled reference window, per label (exact conditional test, Bonferroni over labels)
  and, when the signal carries the chunk's label co-occurrences, all labels at once
  (Hotelling's T^2), Bonferroni over the two.  With fixed flip rates an observed prevalence
  moves exactly when the clean one does, so this catches changes that keep the cardinality
  (``shift@``); a shift moves several labels a little each (scaled by ``1 - rho_+ - rho_-``),
  which the smallest per-label p-value alone mostly missed (tests/test_detectors.py).
* ``"adaptive+labels"`` (:class:`CombinedDetector`): either of the two, each at ``delta/2``.
* ``"glr"`` (:class:`GLRDetector`): the sequential generalized likelihood ratio for a change
  of the mean cardinality at any place in the window (:mod:`ncld_core.model.glr`), its
  threshold the simulated null quantile: a false alarm has probability ``delta`` at every
  chunk, so the mean time between false alarms is ``1 / delta`` chunks.
* ``"labels-glr"`` (:class:`SequentialLabelDetector`): the label test at every dyadic place
  of a change (the newest 1, 2, 4, 8, 16 chunks against the older rest; Bonferroni).
* ``"glr+labels"`` (:class:`SequentialCombinedDetector`): either of the two, each at ``delta/2``.
* ``"adaptive+labels-glr"`` (:class:`AdaptiveSequentialLabelDetector`): the adaptive window or the
  sequential label test, each at ``delta/2``.

Rates cannot fake a change: the label tests read observed counts only, and the tests of the
mean read the moment cardinality only at fixed (told) rates; a model that estimates its rates
gives them the observed cardinality (:class:`ChunkSignal`).

The p-value tests report ``statistic = -log10(p)`` with ``p`` Bonferroni-adjusted and
``threshold = -log10(delta)``; the paper's test reports ``|Delta LCard|`` and ``eps_i``.

>>> import numpy as np
>>> det = HoeffdingCardinalityDetector(delta=0.05)
>>> det.update(np.array([1.0, 1.0, 2.0, 1.0])).fired      # first chunk: nothing to compare
False
>>> r = det.update(np.array([3.0, 3.0, 4.0, 3.0]))
>>> r.fired, round(r.difference, 3), round(r.threshold, 3)
(True, 2.0, 0.679)
>>> rng = np.random.default_rng(0)
>>> chunk = lambda mean: ChunkSignal.from_cardinality(rng.normal(mean, 1.0, size=200))
>>> adaptive = make_detector("adaptive", delta=0.01)
>>> [adaptive.update(chunk(m)).fired for m in (2, 2, 2, 2, 2.5, 2.5)]
[False, False, False, False, True, False]
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr, stdtr
from scipy.stats import f as fdist
from scipy.stats import hypergeom

from ..saved_state import (
    FINITE,
    NONNEGATIVE,
    SavedState,
    array,
    instance_of,
    number,
    optional,
    tuple_of,
)
from ..validation import check_in_range
from .glr import glr_p_value, glr_threshold, split_z

__all__ = [
    "ChunkSignal",
    "DetectorResult",
    "GRAM_MAX_LABELS",
    "HoeffdingCardinalityDetector",
    "WelchDetector",
    "AdaptiveWindowDetector",
    "LabelDistributionDetector",
    "CombinedDetector",
    "GLRDetector",
    "SequentialLabelDetector",
    "SequentialCombinedDetector",
    "AdaptiveSequentialLabelDetector",
    "DETECTORS",
    "make_detector",
]

_NAN = float("nan")
#: The joint label test (:class:`LabelDistributionDetector`) runs up to this many labels (a q x q system per
#: chunk); beyond, the per-label test alone.
GRAM_MAX_LABELS = 256
#: A window of chunk summaries as saved (:mod:`ncld_core.saved_state`): rows (instances, mean, sum of squared
#: deviations), the first and last >= 0.
_WINDOW = array(2, columns=(NONNEGATIVE, FINITE, NONNEGATIVE))


@dataclass(frozen=True)
class ChunkSignal:
    """What a detector sees of one chunk."""

    # (N,) the per-instance cardinality the tests of the mean read: one whose chunk mean moves only when the clean
    # labels' does.  ELMNCLD passes the moment cardinality (ncld_core.model.cardinality, unbiased) at told, fixed
    # rates, and the observed cardinality when it estimates the rates (estimates that move would fake drift).
    unbiased: np.ndarray
    paper: np.ndarray  # (N,) per-instance Eq. (card) with clipped importance weights
    label_counts: np.ndarray  # (q,) observed positives per label
    # (q, q) observed co-occurrences Y'Y of the chunk (its diagonal: label_counts), or None: lets the
    # per-label test pool the evidence of all labels with their correlation (LabelDistributionDetector)
    label_gram: np.ndarray | None = None

    @property
    def n(self) -> int:
        return len(self.unbiased)

    @classmethod
    def from_cardinality(cls, values, label_counts=None) -> "ChunkSignal":
        """A signal whose unbiased and paper cardinalities are both ``values`` (tests, references)."""
        values = np.asarray(values, dtype=np.float64)
        counts = np.zeros(0) if label_counts is None else np.asarray(label_counts, dtype=np.float64)
        return cls(values, values, counts)

    @classmethod
    def from_labels(cls, Y01, unbiased=None, paper=None) -> "ChunkSignal":
        """The signal of observed labels ``Y01`` (N, q) in {0, 1}: counts and co-occurrences (the gram
        only up to :data:`GRAM_MAX_LABELS` labels); the cardinalities default to the observed ones."""
        Y = np.asarray(Y01, dtype=np.float64)
        observed = Y.sum(axis=1)
        gram = Y.T @ Y if Y.shape[1] <= GRAM_MAX_LABELS else None
        return cls(observed if unbiased is None else np.asarray(unbiased, dtype=np.float64),
                   observed if paper is None else np.asarray(paper, dtype=np.float64), Y.sum(axis=0), gram)


@dataclass(frozen=True)
class DetectorResult:
    statistic: float  # compared with threshold: fired = statistic > threshold
    threshold: float
    fired: bool
    estimate: float = _NAN  # the chunk mean of the cardinality the detector watches
    p_value: float = _NAN  # Bonferroni-adjusted p-value (the p-value tests)
    difference: float = _NAN  # |LCard_hat(D_i) - LCard_hat(D_{i-1})| (paper)
    range: float = _NAN  # R_i (paper)
    change_age: int = 0  # chunks since the change the firing locates (0: this chunk)


def _as_signal(signal) -> ChunkSignal:
    return signal if isinstance(signal, ChunkSignal) else ChunkSignal.from_cardinality(signal)


def _p_result(p_adj: float, delta: float, estimate: float, change_age: int = 0) -> DetectorResult:
    p_adj = min(max(p_adj, 1e-300), 1.0)
    return DetectorResult(
        statistic=-math.log10(p_adj), threshold=-math.log10(delta), fired=bool(p_adj < delta),
        estimate=estimate, p_value=p_adj, change_age=change_age,
    )


def _welch_p(n1, m1, v1, n2, m2, v2):
    """Two-sided Welch p-values for arrays of summaries (sample variances ``v``)."""
    s1, s2 = v1 / n1, v2 / n2
    se2 = s1 + s2
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(m1 - m2) / np.sqrt(se2)
        df = se2**2 / (s1**2 / np.maximum(n1 - 1, 1) + s2**2 / np.maximum(n2 - 1, 1))
    p = 2.0 * stdtr(np.where(np.isfinite(df), df, 1.0), -t)  # the t distribution's two tails
    # Both sides constant: equal means are no evidence, different means are certain.
    p = np.where(se2 > 0, p, np.where(m1 == m2, 1.0, 0.0))
    return np.nan_to_num(p, nan=1.0)


class HoeffdingCardinalityDetector:
    """``"paper"``: adjacent chunks' Eq. (card) estimates against the Hoeffding bound (Eq. Hfd)."""

    name = "paper"
    #: What a checkpoint keeps besides ``delta`` (:mod:`ncld_core.saved_state`).
    saved_state = SavedState(state={"previous_": optional(number())})

    def __init__(self, delta: float = 0.05):
        check_in_range(delta, "delta", 0, 1, low_open=True, high_open=True)
        self.delta = delta
        self.previous_ = None

    def threshold(self, value_range: float, n: int) -> float:
        return value_range * math.sqrt(math.log(2.0 / self.delta) / (2.0 * n))

    def peek(self, signal) -> DetectorResult:
        """The result for a chunk without recording it (lets a caller validate first)."""
        per_instance = _as_signal(signal).paper
        estimate = float(np.mean(per_instance))
        value_range = float(np.max(per_instance) - np.min(per_instance))
        eps = self.threshold(value_range, len(per_instance))
        if self.previous_ is None:
            return DetectorResult(_NAN, eps, False, estimate, range=value_range)
        diff = abs(estimate - self.previous_)
        return DetectorResult(diff, eps, bool(diff > eps), estimate, difference=diff, range=value_range)

    def record(self, result: DetectorResult) -> None:
        """Keep a peeked chunk's estimate as the one the next chunk is compared with."""
        self.previous_ = result.estimate

    def update(self, signal) -> DetectorResult:
        """:meth:`peek`, then :meth:`record`."""
        result = self.peek(signal)
        self.record(result)
        return result


class WelchDetector:
    """``"welch"``: Welch's t-test between adjacent chunks' per-instance unbiased cardinalities."""

    name = "welch"
    saved_state = SavedState(state={"previous_": optional(tuple_of(number(NONNEGATIVE), number(), number(NONNEGATIVE)))})

    def __init__(self, delta: float = 0.05):
        check_in_range(delta, "delta", 0, 1, low_open=True, high_open=True)
        self.delta = delta
        self.previous_ = None  # (n, mean, sample variance)

    def update(self, signal) -> DetectorResult:
        x = _as_signal(signal).unbiased
        current = (len(x), float(x.mean()), float(x.var(ddof=1)) if len(x) > 1 else 0.0)
        previous, self.previous_ = self.previous_, current
        if previous is None:
            return DetectorResult(_NAN, -math.log10(self.delta), False, current[1])
        p = float(_welch_p(*(np.float64(v) for v in previous), *(np.float64(v) for v in current)))
        return _p_result(p, self.delta, current[1])


class AdaptiveWindowDetector:
    """``"adaptive"``: the newest 1, 2, 4, ... chunks against the rest of the window (Welch, Bonferroni).

    The window holds per-chunk summaries (size, mean, sum of squared deviations) of the
    per-instance unbiased cardinality since the last detected change, at most
    ``max_window`` chunks.  On a firing the chunks before the located change are dropped.
    """

    name = "adaptive"
    saved_state = SavedState(state={"window_": _WINDOW})

    def __init__(self, delta: float = 0.05, max_window: int = 32):
        check_in_range(delta, "delta", 0, 1, low_open=True, high_open=True)
        check_in_range(max_window, "max_window", 2, 10_000, integer=True)
        self.delta = delta
        self.max_window = max_window
        self.window_ = np.zeros((0, 3))  # rows: n, mean, sum of squared deviations

    def update(self, signal) -> DetectorResult:
        window = _with_chunk(self.window_, signal, self.max_window)
        mean = float(window[-1, 1])  # this chunk's mean
        n_chunks = window.shape[0]
        sizes = [k for k in (1, 2, 4, 8, 16, 32, 64, 128) if k < n_chunks]
        if not sizes:
            self.window_ = window
            return DetectorResult(_NAN, -math.log10(self.delta), False, mean)
        newer = [_pool(window[-k:]) for k in sizes]
        older = [_pool(window[:-k]) for k in sizes]
        p = _welch_p(*(np.array(v) for v in zip(*older)), *(np.array(v) for v in zip(*newer)))
        best = int(np.argmin(p))
        result = _p_result(float(p[best]) * len(sizes), self.delta, mean, change_age=sizes[best] - 1)
        self.window_ = window[-sizes[best]:] if result.fired else window
        return result

    def restart(self, keep: int) -> None:
        """Keep the newest ``keep`` chunks (a combined detector fired on its other part)."""
        self.window_ = self.window_[-keep:]


def _with_chunk(window, signal, max_window: int):
    """``window`` (rows: n, mean, sum of squared deviations of the per-instance unbiased cardinality) with the
    chunk of ``signal`` appended, the oldest rows dropped beyond ``max_window``."""
    x = _as_signal(signal).unbiased
    mean = float(x.mean())
    row = np.array([[len(x), mean, float(((x - mean) ** 2).sum())]])
    return np.vstack([window, row])[-max_window:]


def _pool(rows):
    """(n, mean, sample variance) of the union of chunks given as rows (n, mean, SS)."""
    n = rows[:, 0].sum()
    mean = (rows[:, 0] * rows[:, 1]).sum() / n
    ss = rows[:, 2].sum() + (rows[:, 0] * (rows[:, 1] - mean) ** 2).sum()
    return n, mean, ss / max(n - 1, 1)


class LabelDistributionDetector:
    """``"labels"``: each label's observed positives in the chunk against the pooled reference window.

    Per label, the chunk's count given the pooled count is hypergeometric when nothing
    changed (Fisher's exact conditional test); the smallest two-sided p-value is
    Bonferroni-adjusted over the labels that vary.  With the chunks' co-occurrences, all labels
    at once too (Hotelling's T^2 with the pooled within-chunk covariance of the window: a
    shift between chunks leaves it, and a window's thousands of instances estimate the rare
    labels' small variances that one chunk under-estimates, which made the one-chunk form
    fire on 35 % of stationary chunks under missing-label noise).  The reference holds the
    chunks since the last firing, at most ``max_window``.  Observed counts only: no flip rate
    enters, so rate estimates that move cannot fake a change.

    ``splits``: the newest ``k`` chunks tested against the older rest, for each ``k`` (Bonferroni over
    them); ``(1,)`` here, the newest chunk against the window.
    """

    name = "labels"
    splits: tuple = (1,)
    #: The reference (instances and positives per chunk, >= 0); the pooled within-chunk scatter, a sum of squares
    #: (its diagonal >= 0) and its degrees of freedom, absent from files written before it (the test restarts it).
    saved_state = SavedState(
        state={"sizes_": array(1, rng=NONNEGATIVE), "counts_": optional(array(2, rng=NONNEGATIVE))},
        optional={"scatter_": optional(array(2, diagonal=NONNEGATIVE)), "scatter_df_": number(NONNEGATIVE)},
        check=lambda s: None if s["counts_"] is None or s["counts_"].shape[0] == s["sizes_"].shape[0] else
        f"counts_ has {s['counts_'].shape[0]} rows for {s['sizes_'].shape[0]} chunk sizes")

    def __init__(self, delta: float = 0.05, max_window: int = 32):
        check_in_range(delta, "delta", 0, 1, low_open=True, high_open=True)
        check_in_range(max_window, "max_window", 1, 10_000, integer=True)
        self.delta = delta
        self.max_window = max_window
        self.sizes_ = np.zeros(0)  # instances per reference chunk
        self.counts_ = None  # (chunks, q) positives per reference chunk
        self.scatter_ = None  # (q, q) summed within-chunk scatter Y'Y - c c'/n since the last firing, or None
        self.scatter_df_ = 0.0  # its degrees of freedom: instances minus chunks

    def update(self, signal) -> DetectorResult:
        signal = _as_signal(signal)
        n, counts = signal.n, np.asarray(signal.label_counts, dtype=np.float64)
        estimate = float(signal.unbiased.mean())
        gram = signal.label_gram
        scatter = None if gram is None else np.asarray(gram, dtype=np.float64) - np.outer(counts, counts) / max(n, 1)
        old_scatter = getattr(self, "scatter_", None)  # absent from checkpoints written before it
        if self.counts_ is None or len(self.sizes_) == 0 or self.counts_.shape[1] != len(counts):
            self.sizes_, self.counts_ = np.array([float(n)]), counts[None, :]
            self.scatter_, self.scatter_df_ = scatter, float(n - 1)
            return DetectorResult(_NAN, -math.log10(self.delta), False, estimate)
        sizes, window = np.append(self.sizes_, float(n)), np.vstack([self.counts_, counts])
        pooled = None if scatter is None or old_scatter is None or old_scatter.shape != scatter.shape \
            else old_scatter + scatter
        df = getattr(self, "scatter_df_", 0.0) + n - 1
        ks = [k for k in self.splits if k < len(sizes)]
        total, positives = sizes.sum(), window.sum(axis=0)
        testable = (positives > 0) & (positives < total)
        basis = _covariance_basis(pooled, df, testable)
        ps = []
        for k in ks:
            n_new, c_new = sizes[-k:].sum(), window[-k:].sum(axis=0)
            p_any = _per_label_p(c_new, n_new, positives - c_new, total - n_new, testable)
            joint = _joint_p(basis, c_new, n_new, positives - c_new, total - n_new, df)
            # Bonferroni over the two tests: the smallest label's and all labels' together (a shift moves
            # several labels a little each, up and down, which the smallest p-value alone misses)
            ps.append(p_any if joint is None else 2.0 * min(p_any, joint))
        best = int(np.argmin(ps))
        result = _p_result(ps[best] * len(ks), self.delta, estimate, change_age=ks[best] - 1)
        if result.fired:
            keep = ks[best]
            self.sizes_, self.counts_ = sizes[-keep:], window[-keep:]
            self.scatter_, self.scatter_df_ = scatter, float(n - 1)
        else:
            self.sizes_, self.counts_ = sizes[-self.max_window:], window[-self.max_window:]
            # without a stored scatter (a checkpoint from before it) the pooling starts from this chunk
            self.scatter_, self.scatter_df_ = (pooled, float(df)) if pooled is not None else (scatter, float(n - 1))
        return result

    def restart(self, keep: int) -> None:
        """Keep the newest ``keep`` chunks as the reference (a combined detector fired on its other part)."""
        self.sizes_, self.counts_ = self.sizes_[-keep:], self.counts_[-keep:]


class SequentialLabelDetector(LabelDistributionDetector):
    """``"labels-glr"``: the label test at every dyadic change place: the newest 1, 2, 4, 8, 16 chunks against
    the older rest of the window (Bonferroni over the places, a documented bound on the false alarms).

    A shift too small for one chunk is not folded into the reference as :class:`LabelDistributionDetector`
    folds it: the chunks after it pile up against a reference that has not moved, so it is found later.
    """

    name = "labels-glr"
    splits = (1, 2, 4, 8, 16)


def _per_label_p(counts, n, c_ref, n_ref, testable) -> float:
    """Smallest per-label two-sided p-value of the newest part against the reference, Bonferroni over labels."""
    total, positives = n_ref + n, c_ref + counts
    p = np.ones_like(counts)
    # The exact test costs a sum over the support per label: it is run where the normal
    # approximation could be poor (few expected positives or negatives) or where it says the
    # label may matter (|z| > 2); elsewhere the label's p > 0.04 cannot decide a firing.
    pooled = positives / total
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (counts / n - c_ref / n_ref) / np.sqrt(pooled * (1 - pooled) * (1 / n + 1 / n_ref))
    expected = np.minimum(pooled, 1 - pooled) * min(n, n_ref)
    exact = testable & ((expected < 10) | (np.abs(z) > 2))
    approx = testable & ~exact
    p[approx] = 2.0 * ndtr(-np.abs(z[approx]))
    if exact.any():
        M, K, x = int(round(total)), np.round(positives[exact]), np.round(counts[exact])
        two_sided = 2.0 * np.minimum(hypergeom.cdf(x, M, K, int(round(n))), hypergeom.sf(x - 1, M, K, int(round(n))))
        p[exact] = np.minimum(two_sided, 1.0)
    m = max(int(testable.sum()), 1)
    return min(float(p.min(initial=1.0)) * m, 1.0)  # no labels: p = 1


def _covariance_basis(scatter, df, testable):
    """Eigen-decomposition of the pooled within-chunk label covariance over the testable labels:
    ``(labels, values, vectors)`` with the kept (non-null) directions, or None."""
    if scatter is None or df < 2:
        return None
    idx = np.flatnonzero(testable)
    if len(idx) < 2:
        return None
    values, vectors = np.linalg.eigh(scatter[np.ix_(idx, idx)] / df)
    keep = values > 1e-9 * max(values.max(), 1e-300)
    if not keep.any():
        return None
    return idx, values[keep], vectors[:, keep]


def _joint_p(basis, counts, n, c_ref, n_ref, df) -> float | None:
    """p-value of all testable labels' prevalences at once (Hotelling's T^2, F form): the newest part's mean
    label vector against the reference's, with the pooled within-chunk covariance (``df`` degrees of freedom).

    Under no change both means estimate the same vector, the difference has covariance
    ``(1/n + 1/n_ref) Sigma``, and ``T^2 (df - r + 1) / (r df)`` is about F(r, df - r + 1), ``r`` the rank of
    the estimated covariance.  None without a basis (no co-occurrences, fewer than 2 testable labels).
    """
    if basis is None:
        return None
    idx, values, vectors = basis
    r = len(values)
    if df - r + 1 < 2:
        return None
    diff = vectors.T @ (counts[idx] / n - c_ref[idx] / n_ref)
    t2 = float((diff**2 / values).sum()) / (1.0 / n + 1.0 / n_ref)
    return float(fdist.sf(t2 * (df - r + 1) / (r * df), r, df - r + 1))


class GLRDetector:
    """``"glr"``: the generalized likelihood ratio for a change in the mean cardinality (:mod:`ncld_core.model.glr`).

    The window holds per-chunk summaries (size, mean, sum of squared deviations) of the
    per-instance cardinality since the last detected change, at most ``max_window`` chunks; every
    place of a change in it is tested (the newest ``j`` chunks against the older rest, ``j = 1 .. m-1``)
    and the largest ``|z|`` is compared with its simulated null quantile at ``1 - delta`` for
    this window length: a false alarm at each chunk has probability ``delta`` (mean time between
    false alarms ``1 / delta`` chunks).  On a firing the chunks before the located change are dropped.
    """

    name = "glr"
    saved_state = SavedState(state={"window_": _WINDOW})

    def __init__(self, delta: float = 0.05, max_window: int = 32):
        check_in_range(delta, "delta", 0, 1, low_open=True, high_open=True)
        check_in_range(max_window, "max_window", 2, 256, integer=True)
        self.delta = delta
        self.max_window = max_window
        self.window_ = np.zeros((0, 3))  # rows: n, mean, sum of squared deviations

    def update(self, signal) -> DetectorResult:
        window = _with_chunk(self.window_, signal, self.max_window)
        mean = float(window[-1, 1])  # this chunk's mean
        m = window.shape[0]
        if m < 2:
            self.window_ = window
            return DetectorResult(_NAN, glr_threshold(self.delta, 2, self.max_window), False, mean)
        z = np.abs(split_z(window[:, 0], window[:, 1], window[:, 2]))
        best = int(np.argmax(z))
        statistic = float(z[best])
        threshold = glr_threshold(self.delta, m, self.max_window)
        p = glr_p_value(statistic, m, self.max_window)
        fired = bool(statistic > threshold)
        self.window_ = window[-(best + 1):] if fired else window
        return DetectorResult(statistic, threshold, fired, mean, p_value=p, change_age=best)

    def restart(self, keep: int) -> None:
        """Keep the newest ``keep`` chunks (a combined detector fired on its other part)."""
        self.window_ = self.window_[-keep:]


class CombinedDetector:
    """``"adaptive+labels"``: fires when the adaptive window or the label test does, each at ``delta / 2``."""

    name = "adaptive+labels"
    parts: tuple = (AdaptiveWindowDetector, LabelDistributionDetector)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.saved_state = _parts_state(cls.parts)

    def __init__(self, delta: float = 0.05, max_window: int = 32):
        check_in_range(delta, "delta", 0, 1, low_open=True, high_open=True)
        self.max_window = max_window
        cardinality, labels = self.parts
        self.cardinality_ = cardinality(delta / 2.0, max_window)
        self.labels_ = labels(delta / 2.0, max_window)
        self.delta = delta

    @property
    def delta(self) -> float:
        return 2.0 * self.cardinality_.delta

    @delta.setter
    def delta(self, value: float) -> None:
        self.cardinality_.delta = self.labels_.delta = value / 2.0

    def update(self, signal) -> DetectorResult:
        a = self.cardinality_.update(signal)
        b = self.labels_.update(signal)
        if math.isnan(a.p_value) and math.isnan(b.p_value):
            return DetectorResult(_NAN, -math.log10(self.delta), False, a.estimate)
        pa, pb = np.nan_to_num(a.p_value, nan=1.0), np.nan_to_num(b.p_value, nan=1.0)
        located = a if pa <= pb else b
        result = _p_result(2.0 * min(pa, pb), self.delta, a.estimate, change_age=located.change_age)
        if result.fired:  # both parts restart from the chunk that fired
            if not a.fired:
                self.cardinality_.restart(1)
            if not b.fired:
                self.labels_.restart(1)
        return result


def _parts_state(parts) -> SavedState:
    """A combined detector's saved state: its two parts, of the classes ``parts``."""
    return SavedState(state={"cardinality_": instance_of(parts[0]), "labels_": instance_of(parts[1])})


CombinedDetector.saved_state = _parts_state(CombinedDetector.parts)


class AdaptiveSequentialLabelDetector(CombinedDetector):
    """``"adaptive+labels-glr"``: the adaptive window on the cardinality or the label test at every dyadic change
    place, each at ``delta / 2``."""

    name = "adaptive+labels-glr"
    parts = (AdaptiveWindowDetector, SequentialLabelDetector)


class SequentialCombinedDetector(CombinedDetector):
    """``"glr+labels"``: the GLR on the cardinality or the label test at every dyadic change place, each at
    ``delta / 2``: the sequential tests of both the mean cardinality and the prevalence vector."""

    name = "glr+labels"
    parts = (GLRDetector, SequentialLabelDetector)


#: Detector names accepted by :func:`make_detector` and ``ELMNCLD(detector=...)``.  A class's ``saved_state``
#: (:mod:`ncld_core.saved_state`) says what a checkpoint keeps of it besides ``delta``; a class without one
#: keeps any attribute of plain values (finite arrays) or ncld objects.
DETECTORS = {
    "paper": HoeffdingCardinalityDetector,
    "welch": WelchDetector,
    "adaptive": AdaptiveWindowDetector,
    "labels": LabelDistributionDetector,
    "adaptive+labels": CombinedDetector,
    "glr": GLRDetector,
    "labels-glr": SequentialLabelDetector,
    "glr+labels": SequentialCombinedDetector,
    "adaptive+labels-glr": AdaptiveSequentialLabelDetector,
}


def make_detector(name: str, delta: float = 0.05):
    """A fresh detector by name (see :data:`DETECTORS`); an unknown name is a ValueError listing the names."""
    if not isinstance(name, str) or name not in DETECTORS:
        names = ", ".join(repr(k) for k in DETECTORS)
        raise ValueError(f"detector must be one of {names}; got {name!r}")
    return DETECTORS[name](delta)
