"""Online estimates of the per-label flip rates ``rho_+`` and ``rho_-`` from the noisy stream alone.

ELM-NCLD needs the flip rates of Eq. (NR), ``rho_+^j = P(y_j = -1 | g_j = +1)`` and
``rho_-^j = P(y_j = +1 | g_j = -1)``; the paper assumes them known and names
estimating them as future work.  This module estimates them chunk by chunk.

``rho_-`` (false positives): the low-score anchor
-------------------------------------------------
Under class-conditional noise an instance whose clean label is negative is observed
positive with probability ``rho_-``, whatever its features.  So the observed positive
rate of any set of clean negatives estimates ``rho_-`` without bias.  Per label, the
estimator takes the ``anchor_fraction`` of the chunk's instances that are *least*
likely positive and counts their observed positives:

.. math:: \\hat\\rho_-^j = \\frac{\\sum_{chunks} \\#\\{t \\in B_j : y_{tj} = +1\\}}{\\sum_{chunks} |B_j|},

``B_j`` the bottom ``anchor_fraction`` of the chunk by a score that must not have seen
the instance's own label, or its noise would leak in (an in-sample fit ranks the
flipped positives high, and the bottom then holds too few positives):

* from the second chunk on, the model's *prequential* scores ``O = H Phi`` of the
  chunk, computed before the chunk is learnt (what the model predicts for it);
* on the first chunk, which has no model yet, the number of observed positives among
  the instance's ``n_neighbors`` nearest neighbours (its own label excluded).

The two counts are sufficient statistics, summed over chunks.  Clean positives that
slip into ``B_j`` bias the estimate up by their share times ``1 - rho_+ - rho_-``.
This is the anchor-point idea of Liu & Tao (2016) and Menon et al. (2015) with a
whole low-score set in place of the single minimum of a fitted ``P(y|x)``: per-chunk
anchors ``min_t P_D(y=1|x_t)`` come out far too low, because a model fitted on 500
noisy labels spreads its predictions.  The earlier neighbourhood binomial mixture
(:func:`binomial_mixture_em`, ``negative_anchor="mixture"``) merges its two
components on features whose neighbourhoods are not label-pure and then returns
the observed positive rate, ``rho_- + pi (1 - rho_+ - rho_-)`` for a label of clean
frequency ``pi``: too high by an amount that grows with the label's frequency.
``python -m benchmarks.flip_rates`` measures all three (docs/flip-rates.md).

``rho_+`` (missed positives): an upper bound, not a value
----------------------------------------------------------
``rho_+`` is pinned down only by instances whose clean label is positive *with
certainty* (Liu & Tao's anchor points), which sparse label sets hardly have.  What holds
without them is a bound: for the true ``P_D``, ``max_x P_D(y=1|x) <= 1 - rho_+``, so
``1 - max P_D`` is an *upper bound* of ``rho_+``; the estimator takes it at a robust
quantile (``1 -`` the ``1 - quantile`` quantile of the model's ``P_D`` over the chunk,
averaged over chunks), clipped at ``max_rate``.  On a rare label ``P_D`` never nears 1
and the bound says little.  The rates are **not tied**: ``rho_+`` lives in
``[0, upper bound]`` whatever ``rho_-`` is (``positive_cap=True`` restores the earlier cap
``rho_+ <= rho_-``, which assumed symmetric noise and failed under missing labels,
issue 25).  Its point value is the centre of that interval, the value whose worst error
over it is least.

What each estimate rests on, and what the estimator reports
-----------------------------------------------------------
* ``rho_-``: clean negatives exist among the low scores (holds broadly: most labels are
  absent from most instances; fails in part on frequent labels, whose low scores still hold
  clean positives, which bias the estimate *up*, docs/flip-rates.md).  Since the sets' clean
  positives can only add, the anchor proportion bounds ``rho_-`` from above: the interval is
  ``[0, Wilson upper limit]``, narrow where ``rho_-`` is small (missing labels), wide under
  the paper's heavy noise.
* ``rho_+``: only the bound above (needs nothing but a ``P_D`` close to the true one);
  a value needs near-certain positives, which the noisy labels cannot show to exist.
* Per label, ``rho_pos_low_``/``rho_pos_high_`` and ``rho_neg_low_``/``rho_neg_high_``
  bound each rate, and ``rho_pos_identified_`` / ``rho_neg_identified_`` say whether the
  data pin it down: the interval is at most ``identified_width`` wide.  Without a trusted
  sample ``rho_+`` is, in general, not identified; the cardinality interval
  (:func:`ncld_core.model.cardinality.moment_cardinality`) is then built from these bounds:
  wide rather than wrong.

A trusted sample
----------------
Rows whose clean labels are revealed (``updated(..., trusted=mask, Y_trusted=...)``)
give direct, unbiased counts of flips: per label, the clean positives observed negative
(``rho_+``) and the clean negatives observed positive (``rho_-``), summed over chunks.  Most labels
have few trusted positives, so each label's counts make a Beta posterior under a prior pooled across
labels (:func:`pooled_posterior`, empirical Bayes): a handful of rows cannot swing a rate (two trusted
positives, none missed, no longer read as ``rho_+`` near 0).  The trusted rows that fall in a label's
low-score anchor set also measure the set's share ``c_j`` of clean positives (the anchor's bias above:
a pooled posterior again, since most labels have few of them; its prior mean proportional to the label's clean
prevalence among the trusted rows, since a common label's set holds more), and the anchor proportion ``a_j`` is
corrected before it is pooled::

    a_j = c_j (1 - rho_+^j) + (1 - c_j) rho_-^j   =>   rho_-^j = (a_j - c_j (1 - rho_+^j)) / (1 - c_j),

``rho_+^j`` the trusted posterior mean; its variance (the anchor's, ``c_j``'s and ``rho_+^j``'s) by the delta
method.  Only once the sets held as many trusted places as :data:`MIN_TRUSTED` rows give on average (a few rows on
few labels would read one clean positive as a large share), and not for the mixture anchor
(``docs/rates-unknown.md`` measures the error left at each trusted share).  The posterior is pooled with
the anchor evidence (:func:`pool_intervals`): each rate's interval is the
intersection of the two (or the trusted one alone where they disagree: then the anchor's
assumption failed), its value the precision-weighted mean of the posterior mean and the
anchor value (``rho_+``'s centre counted as uniform over its bounds) where the trusted interval is
the narrower, else the anchor value, kept inside the interval.  The trusted rows themselves (observed
labels and clean cardinality, at most ``max_trusted_rows``, the newest) are kept for the
cardinality's regression estimate (:func:`~ncld_core.model.cardinality.moment_cardinality`,
``trusted=``).

All rates and bounds are clipped to ``[0, max_rate]`` (``max_rate < 1/2`` keeps
``rho_+ + rho_- < 1``, the condition of Eq. (NR)'s inverse).  A detected drift changes the
label distribution, not the annotators' noise: the estimates are kept, the accumulated anchor
counts (and the trusted rows' counts in the anchor sets) are down-weighted by ``drift_decay`` (newer
chunks count more; a drift acted on), the trusted flip counts are kept and the trusted rows drawn before
it weigh nothing in the cardinality's regression from then on (:meth:`FlipRateEstimator.after_change`;
any firing, acted on or not).

>>> import numpy as np
>>> from ncld_core.stream.synthetic import make_synthetic_stream
>>> from ncld_core.model.graph import gram_matrix, nearest_neighbors
>>> s = make_synthetic_stream(3000, random_state=0)  # 20 features, 10 labels
>>> est = FlipRateEstimator()
>>> for start in range(0, 3000, 500):
...     X, Y = s.X[start:start + 500], s.Y_noisy[start:start + 500]
...     P = np.full(Y.shape, 0.5)  # a stand-in for the model's P_D(y=1|x)
...     scores = s.P_true[start:start + 500]  # a stand-in for the model's prequential scores
...     est = est.updated(P, Y, nearest_neighbors(gram_matrix(X), 10), scores=scores)
>>> bool(np.abs(est.rho_neg_ - s.rho_neg).mean() < 0.05), est.n_chunks_
(True, 6)
"""

from __future__ import annotations

import copy

import numpy as np
from scipy.special import gammaln, ndtri, xlogy

from ..saved_state import NONNEGATIVE, PROPORTION, RATE, SavedState, array, first_error, number, shape_error
from ..validation import check_dtype, check_in_range

__all__ = ["FlipRateEstimator", "MIN_TRUSTED", "TRUSTED_COUNTS", "binomial_mixture_em", "check_trusted",
           "estimate_errors", "pool_intervals", "pooled_posterior", "pooled_prior", "wilson_interval"]


def binomial_mixture_em(hist, *, start=None, n_components: int = 2, n_iter: int = 200, tol: float = 1e-6):
    """Fit a mixture of ``n_components`` binomials ``Bin(n, p_k)`` to count histograms, one per row.

    Parameters
    ----------
    hist : array (q, n + 1)
        ``hist[j, c]``: (weighted) number of neighbourhoods with ``c`` observed positives.
    start : tuple (p, w) of arrays (q, n_components), optional
        Warm start; default rates from half the mean rate to 0.8, equal weights.
    n_components : int >= 2
    n_iter, tol : EM iterations and the largest change of a rate that stops them.  The online
        estimator warm-starts every chunk, so its iterations accumulate over the stream.

    Returns
    -------
    p, w : arrays (q, n_components)
        Rates and weights, ordered by rate (``p[:, 0]`` the lowest).

    >>> import numpy as np
    >>> from scipy.stats import binom
    >>> c = np.arange(6)
    >>> hist = 8000 * (0.7 * binom.pmf(c, 5, 0.2) + 0.3 * binom.pmf(c, 5, 0.9))
    >>> p, w = binomial_mixture_em(hist[None, :])
    >>> p.round(3).tolist(), w.round(3).tolist()
    ([[0.2, 0.9]], [[0.7, 0.3]])
    """
    hist = np.asarray(hist, dtype=np.float64)
    q, n1 = hist.shape
    trials = n1 - 1
    counts = np.arange(n1)
    c = counts.astype(np.float64)
    log_choose = gammaln(trials + 1) - gammaln(c + 1) - gammaln(trials - c + 1)  # fixed: outside the loop
    total = np.maximum(hist.sum(axis=1), 1e-300)
    mean_rate = (hist @ counts) / (total * max(trials, 1))
    k = int(n_components)
    if start is None:
        frac = np.linspace(0.0, 1.0, k)
        p = (1.0 - frac) * (0.5 * mean_rate[:, None]) + frac * 0.8
        w = np.full((q, k), 1.0 / k)
    else:
        p, w = (np.array(v, dtype=np.float64) for v in start)
    eps = 1e-9
    for _ in range(n_iter):
        p = np.clip(p, eps, 1.0 - eps)
        w = np.clip(w, eps, 1.0)
        pk = p[..., None]
        log_l = np.log(w)[..., None] + log_choose + xlogy(c, pk) + xlogy(trials - c, 1.0 - pk)  # (q, k, n+1)
        log_l -= log_l.max(axis=1, keepdims=True)
        resp = np.exp(log_l)
        resp /= resp.sum(axis=1, keepdims=True)
        mass = resp * hist[:, None, :]  # (q, k, n+1)
        comp = mass.sum(axis=2)
        new_w = comp / total[:, None]
        new_p = (mass @ counts) / np.maximum(comp * max(trials, 1), 1e-300)
        # An empty component keeps its rate (nothing to learn it from).
        new_p = np.where(comp > 1e-12, new_p, p)
        done = np.max(np.abs(new_p - p)) < tol
        p, w = new_p, new_w
        if done:
            break
    order = np.argsort(p, axis=1)
    return np.take_along_axis(p, order, axis=1), np.take_along_axis(w, order, axis=1)


NEGATIVE_ANCHORS = ("low-score", "mixture")
#: The trusted counts' rows in :attr:`FlipRateEstimator.trusted_counts_`.
TRUSTED_COUNTS = ("clean positives", "clean positives observed negative", "clean negatives",
                  "clean negatives observed positive")


def wilson_interval(successes, trials, level: float = 0.95):
    """Wilson score interval of a binomial proportion, elementwise; ``[0, 1]`` where ``trials == 0``.

    >>> lo, hi = wilson_interval(np.array([0.0, 5.0]), np.array([20.0, 10.0]))
    >>> lo.round(3).tolist(), hi.round(3).tolist()
    ([0.0, 0.237], [0.161, 0.763])
    """
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    z = float(ndtri(0.5 + level / 2.0))
    safe = np.maximum(n, 1e-12)
    p = np.where(n > 0, k / safe, 0.5)
    denom = 1.0 + z * z / safe
    centre = (p + z * z / (2 * safe)) / denom
    half = z * np.sqrt(np.maximum(p * (1 - p) / safe + z * z / (4 * safe * safe), 0.0)) / denom
    lo = np.where(n > 0, np.clip(centre - half, 0.0, 1.0), 0.0)
    hi = np.where(n > 0, np.clip(centre + half, 0.0, 1.0), 1.0)
    return lo, hi


def pool_intervals(anchor, trusted, anchor_var, trusted_var):
    """Pool a rate's anchor evidence with a trusted sample's, per label.

    ``anchor``, ``trusted``: ``(value, low, high)`` arrays; ``anchor_var``, ``trusted_var``: the values'
    variances.  The interval is the intersection of the two, or the trusted one where they do not meet
    (the anchor's assumption failed there); the value is their precision-weighted mean where the trusted
    interval is the narrower (the trusted value where the intervals do not meet, else the anchor's), kept
    inside the interval.

    >>> v, lo, hi = pool_intervals((np.array([0.3, 0.3]), np.array([0.0, 0.25]), np.array([0.4, 0.35])),
    ...                            (np.array([0.2, 0.1]), np.array([0.15, 0.05]), np.array([0.25, 0.15])),
    ...                            np.array([0.01, 0.01]), np.array([0.01, 0.01]))
    >>> v.round(3).tolist(), lo.tolist(), hi.tolist()
    ([0.25, 0.1], [0.15, 0.05], [0.25, 0.15])
    """
    a_val, a_lo, a_hi = anchor
    t_val, t_lo, t_hi = trusted
    lo, hi = np.maximum(a_lo, t_lo), np.minimum(a_hi, t_hi)
    disjoint = lo > hi
    lo, hi = np.where(disjoint, t_lo, lo), np.where(disjoint, t_hi, hi)
    wa, wt = 1.0 / np.maximum(anchor_var, 1e-12), 1.0 / np.maximum(trusted_var, 1e-12)
    # A handful of trusted rows (a rare label's few positives) only narrows the interval: their proportion
    # moves the value once their interval is the narrower one (else per-label noise moved the rates).
    pooled = np.where((t_hi - t_lo) < (a_hi - a_lo), (wa * a_val + wt * t_val) / (wa + wt), a_val)
    value = np.where(disjoint, t_val, pooled)
    return np.clip(value, lo, hi), lo, hi


#: The least spread (standard deviation) of a rate across labels the pooled prior assumes: a prior never claims
#: that labels share their rate more exactly than this.
PRIOR_MIN_SD = 0.03

#: Fewest trusted rows a statistic is made from on their own: the cardinality's regression
#: (:mod:`ncld_core.model.cardinality`; fewer rows swing its fitted slope, docs/flip-rates.md) and the anchor's
#: correction (:meth:`FlipRateEstimator._corrected_anchor`, as many anchor places as these rows give: on few
#: labels a few rows read one clean positive as a large share of the sets).
MIN_TRUSTED = 8


def pooled_prior(successes, trials, scale=None) -> tuple:
    """``(m, s)``: the prior ``Beta(s m, s (1 - m))`` that :func:`pooled_posterior` pools across labels (its mean
    ``m`` the labels' pooled proportion, its strength ``s`` from their spread; see there).

    ``scale`` (optional, per label, ``>= 0``): a covariate the proportion is taken proportional to. The prior mean
    is then ``m_j = r scale_j`` per label (an array), ``r = (sum k + 1) / (sum n scale + 2)``, and the spread is
    the labels' proportions around their own ``m_j``; ``scale`` of ones is the plain pool, and so is a scale that
    is 0 on every label with trials.

    >>> m, s = pooled_prior(np.array([30.0, 29.0]), np.array([100.0, 100.0]))
    >>> round(m, 3), bool(s > 50)
    (0.297, True)
    >>> m, s = pooled_prior(np.array([2.0, 20.0]), np.array([100.0, 100.0]), scale=np.array([0.05, 0.5]))
    >>> [round(float(v), 3) for v in m]
    [0.02, 0.202]
    """
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    total_n = float(n.sum())
    if scale is None:
        m = (float(k.sum()) + 1.0) / (total_n + 2.0)
    else:
        x = np.asarray(scale, dtype=np.float64)
        if x.shape != k.shape or np.any(~np.isfinite(x)) or np.any(x < 0):
            raise ValueError(f"scale must be finite, >= 0 and of the counts' shape {k.shape}")
        if float((n * x).sum()) <= 0.0:  # no label with trials has any scale: nothing to scale by
            return pooled_prior(k, n)
        m = np.clip((float(k.sum()) + 1.0) / (float((n * x).sum()) + 2.0) * x, 1e-6, 1.0 - 1e-6)
    m_label = np.broadcast_to(m, k.shape)
    seen = n > 0
    if seen.sum() >= 2:
        p = k[seen] / n[seen]
        w = n[seen] / n[seen].sum()
        ms = m_label[seen]
        spread = float(np.sum(w * (p - ms) ** 2)) - float(np.sum(w * ms * (1 - ms) / n[seen]))
    else:
        spread = 0.0
    # One strength for every label, at the labels' (trial-weighted) mean proportion.
    mean = float(np.sum(n * m_label) / total_n) if total_n > 0 else float(np.mean(m_label))
    var = max(spread, PRIOR_MIN_SD ** 2) + mean * (1.0 - mean) / max(total_n, 1.0)
    return m, max(mean * (1.0 - mean) / var - 1.0, 1e-3)


def pooled_posterior(successes, trials, level: float = 0.95, scale=None):
    """Per label, the Beta posterior of a proportion under a prior pooled across labels (empirical Bayes).

    The prior ``Beta(s m, s (1 - m))`` (:func:`pooled_prior`) has the labels' pooled proportion
    ``m = (sum k + 1) / (sum n + 2)`` as its mean and as its variance the spread of the labels' proportions
    beyond their binomial noise (method of moments, at least :data:`PRIOR_MIN_SD` squared) plus the
    uncertainty of ``m`` itself (``m (1 - m) / sum n``): few counts in all make a weak prior, many labels that
    agree a strong one.  A label with a handful of counts (2 positives, none missed) is then pulled to what the
    other labels show instead of to 0.

    With ``scale`` (:func:`pooled_prior`) the prior's mean is proportional to a per-label covariate: a label
    with few counts is pulled to what the other labels show at its scale.

    Returns ``(mean, low, high, var)``: the posterior mean, its equal-tailed ``level`` interval and variance,
    arrays of the labels' shape; a label with no trials gets the prior.

    >>> m, lo, hi, v = pooled_posterior(np.array([0.0, 30.0, 29.0]), np.array([2.0, 100.0, 100.0]))
    >>> bool(0.2 < m[0] < 0.31), bool(lo[0] < 0.29 < hi[0]), bool(abs(m[1] - 0.3) < 0.01)
    (True, True, True)
    """
    from scipy.stats import beta as beta_dist

    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    m, strength = pooled_prior(k, n, scale)
    a, b = strength * m + k, strength * (1.0 - m) + (n - k)
    tail = (1.0 - level) / 2.0
    mean = a / (a + b)
    post_var = a * b / ((a + b) ** 2 * (a + b + 1.0))
    return mean, beta_dist.ppf(tail, a, b), beta_dist.ppf(1.0 - tail, a, b), post_var


def _proportion_var(successes, trials):
    """Variance of a proportion, from the add-one smoothed rate (infinite with no trials)."""
    n = np.asarray(trials, dtype=np.float64)
    p = (np.asarray(successes, dtype=np.float64) + 1.0) / (n + 2.0)
    return np.where(n > 0, p * (1 - p) / np.maximum(n, 1e-12), np.inf)


class FlipRateEstimator:
    """Per-label online estimates of ``rho_+`` and ``rho_-`` (see the module docstring for the math).

    Parameters
    ----------
    anchor_fraction : float in (0, 1), default 0.3
        Share of each chunk, per label, taken as the low-score anchor set of ``rho_-``.
        Larger sets have less sampling noise and more clean positives;
        ``python -m benchmarks.flip_rates`` compares 0.2 and 0.3.
    n_neighbors : int, default 10
        Neighbours counted for the first chunk's ranking (and in the mixture's histogram):
        the first ``n_neighbors`` columns of the neighbour array handed to :meth:`updated`,
        or all of them when it has fewer.
    quantile : float in (0, 0.5), default 0.05
        ``rho_+`` bound of a chunk: ``1 -`` the ``(1 - quantile)`` quantile of ``P_D``.  A fitted ``P_D``
        scatters above the true one: at 0.01 the bound fell below the true ``rho_+`` on 23 % of the
        generator's labels under the paper's noise, at 0.05 on none (``docs/flip-rates.md``).
    positive_cap : bool, default False
        Cap ``rho_+`` at ``rho_-`` (assumes symmetric noise where the bound says nothing; the estimator
        before issue 25, kept for comparison: wrong under missing labels).
    negative_anchor : {"low-score", "mixture"}, default "low-score"
        ``"mixture"``: the low rate of a two-binomial mixture fitted to the counts of
        observed positives in each instance's neighbourhood (the previous estimator, kept
        for comparison; see :func:`binomial_mixture_em`).
    max_rate : float in (0, 0.5), default 0.49
        Upper clip of both rates.
    drift_decay : float in [0, 1], default 0.5
        Factor applied to the accumulated anchor counts by :meth:`after_drift`.
    level : float in (0, 1), default 0.95
        Confidence level of the rates' intervals.
    identified_width : float in (0, 1), default 0.1
        A rate counts as identified on a label when its interval is at most this wide.
    max_trusted_rows : int, default 20000
        Trusted rows kept for the cardinality (the newest); their flip counts are all kept.

    Attributes
    ----------
    rho_pos_, rho_neg_ : arrays (q,)
        The current estimates.
    rho_pos_low_, rho_pos_high_, rho_neg_low_, rho_neg_high_ : arrays (q,)
        Per-label intervals of the rates (bounds that hold, see the module docstring).
    low_positives_, low_count_ : array (q,), float
        Observed positives in the anchor sets and the sets' total size (summed over chunks).
    trusted_counts_ : array (4, q) or None
        Per label, summed over the trusted rows seen: :data:`TRUSTED_COUNTS`.
    anchor_trusted_ : array (2, q) or None
        Per label, the trusted rows that fell in its anchor sets and the clean positives among them (the sets'
        clean-positive share, which corrects the anchor's ``rho_-``; decayed with the anchor counts).
    trusted_Y_, trusted_cardinality_, trusted_weight_ : arrays or None
        The trusted rows kept: observed labels (n, q) int8, clean cardinality (n,), weight (n,)
        (1; 0 for the rows up to the chunk a change was detected in, :meth:`after_change`).
    n_chunks_ : int
        Chunks seen.
    """

    def __init__(self, anchor_fraction=0.3, n_neighbors=10, quantile=0.05, positive_cap=False,
                 negative_anchor="low-score", max_rate=0.49, drift_decay=0.5, level=0.95, identified_width=0.1,
                 max_trusted_rows=20000):
        self.anchor_fraction = anchor_fraction
        self.n_neighbors = n_neighbors
        self.quantile = quantile
        self.positive_cap = positive_cap
        self.negative_anchor = negative_anchor
        self.max_rate = max_rate
        self.drift_decay = drift_decay
        self.level = level
        self.identified_width = identified_width
        self.max_trusted_rows = max_trusted_rows

    def check_params(self) -> None:
        """Refuse a parameter outside its allowed values (ValueError naming it), as :meth:`updated` would."""
        self._validate()

    def _validate(self):
        check_in_range(self.anchor_fraction, "anchor_fraction", 0, 1, low_open=True, high_open=True)
        check_in_range(self.n_neighbors, "n_neighbors", 1, 100_000, integer=True)
        check_in_range(self.quantile, "quantile", 0, 0.5, low_open=True, high_open=True)
        if not isinstance(self.positive_cap, (bool, np.bool_)):
            raise ValueError(f"positive_cap must be True or False, got {self.positive_cap!r}")
        if self.negative_anchor not in NEGATIVE_ANCHORS:
            raise ValueError(f"negative_anchor must be one of {NEGATIVE_ANCHORS}, got {self.negative_anchor!r}")
        check_in_range(self.max_rate, "max_rate", 0, 0.5, low_open=True, high_open=True)
        check_in_range(self.drift_decay, "drift_decay", 0, 1)
        check_in_range(self.level, "level", 0, 1, low_open=True, high_open=True)
        check_in_range(self.identified_width, "identified_width", 0, 1, low_open=True, high_open=True)
        check_in_range(self.max_trusted_rows, "max_trusted_rows", 0, 10**8, integer=True)

    # ------------------------------------------------------------------ what the data pin down
    @property
    def rho_pos_identified_(self) -> np.ndarray:
        """Per label: whether ``rho_+`` is pinned down (its interval at most ``identified_width`` wide)."""
        return (self.rho_pos_high_ - self.rho_pos_low_) <= self.identified_width

    @property
    def rho_neg_identified_(self) -> np.ndarray:
        """Per label: whether ``rho_-`` is pinned down (its interval at most ``identified_width`` wide)."""
        return (self.rho_neg_high_ - self.rho_neg_low_) <= self.identified_width

    @property
    def identified_(self) -> np.ndarray:
        """Per label: both rates identified."""
        return self.rho_pos_identified_ & self.rho_neg_identified_

    @property
    def rate_intervals_(self) -> tuple:
        """``(pos_low, pos_high, neg_low, neg_high)``, what :func:`moment_cardinality` takes as ``rate_intervals``."""
        return self.rho_pos_low_, self.rho_pos_high_, self.rho_neg_low_, self.rho_neg_high_

    @property
    def n_trusted_(self) -> int:
        """Trusted rows seen (all chunks)."""
        counts = getattr(self, "trusted_counts_", None)
        return 0 if counts is None else int(round(counts[0, 0] + counts[2, 0]))

    def trusted_sample(self):
        """The kept trusted rows as ``(observed labels, clean cardinality, weight)``, or None without any."""
        if getattr(self, "trusted_Y_", None) is None or self.trusted_Y_.shape[0] == 0:
            return None
        return self.trusted_Y_, self.trusted_cardinality_, self.trusted_weight_

    # ------------------------------------------------------------------ one chunk
    def updated(self, P, Y01, neighbors, scores=None, *, trusted=None, Y_trusted=None) -> "FlipRateEstimator":
        """A copy updated with one chunk; ``self`` is left unchanged (so a failing chunk changes nothing).

        Parameters
        ----------
        P : array (N, q)
            The noisy class probability ``P_D(y=1|x)`` of the chunk's instances.
        Y01 : array (N, q) in {0, 1}
            Observed labels.
        neighbors : int array (N, >= 1)
            Each row's nearest neighbours in the chunk (not itself), nearest first.
        scores : array (N, q), optional
            Scores of the chunk that did not see its labels (the model's prequential
            ``decision_function``); the low-score anchor set is their bottom
            ``anchor_fraction``.  Without them the rows are ranked by their neighbours'
            observed positives.
        trusted : bool array (N,), optional
            The chunk's rows whose clean labels are known (a trusted sample).
        Y_trusted : array (trusted.sum(), q) in {0, 1}, optional
            Their clean labels, in row order.
        """
        self._validate()
        P = np.asarray(P, dtype=np.float64)
        Y = np.asarray(Y01, dtype=np.float64)
        nbrs = np.asarray(neighbors)
        if P.shape != Y.shape:
            raise ValueError(f"P must have the shape of Y01 {Y.shape}, got {P.shape}")
        if nbrs.ndim != 2 or nbrs.shape[0] != Y.shape[0] or nbrs.shape[1] < 1:
            raise ValueError(f"neighbors must have shape ({Y.shape[0]}, m >= 1), got {nbrs.shape}")
        if scores is not None:
            scores = np.asarray(scores, dtype=np.float64)
            if scores.shape != Y.shape:
                raise ValueError(f"scores must have the shape of Y01 {Y.shape}, got {scores.shape}")
            if not np.all(np.isfinite(scores)):
                raise ValueError("scores must be finite")
        trusted, G = check_trusted(trusted, Y_trusted, Y.shape)
        new = copy.deepcopy(self)
        # A graph with fewer neighbours than n_neighbors: use all it has.
        anchor_sets = new._learn(P, Y, nbrs[:, : self.n_neighbors], scores)
        new._learn_trusted(Y, trusted, G, anchor_sets)
        new._combine()
        return new

    def _learn(self, P, Y, nbrs, scores):
        n, q = Y.shape
        first = getattr(self, "low_count_", None) is None
        if first:
            self.low_positives_ = np.zeros(q)
            self.low_count_ = 0.0
            self.anchor_sum_ = np.zeros(q)
            self.anchor_weight_ = 0.0
            self.n_chunks_ = 0
        elif self.low_positives_.shape != (q,):
            raise ValueError(f"the estimator was fitted on {self.low_positives_.shape[0]} labels, this chunk has {q}")
        neighbour_positives = Y[nbrs].sum(axis=1)  # (N, q), the row's own label excluded
        # --- rho_-: observed positive rate of the low-score anchor sets.
        ranking = neighbour_positives if scores is None else scores
        k = max(1, int(np.ceil(self.anchor_fraction * n)))
        low = np.argpartition(ranking, k - 1, axis=0)[:k]  # (k, q): the k lowest rows per label
        self.low_positives_ = self.low_positives_ + np.take_along_axis(Y, low, axis=0).sum(axis=0)
        self.low_count_ = self.low_count_ + k
        if self.negative_anchor == "mixture":
            self._update_mixture(Y, neighbour_positives, nbrs.shape[1], first)
        # --- rho_+: the bound 1 - max P_D (a robust quantile), averaged over chunks.
        self.anchor_sum_ = self.anchor_sum_ + (1.0 - np.quantile(P, 1.0 - self.quantile, axis=0))
        self.anchor_weight_ += 1.0
        self.n_chunks_ += 1
        return low

    def _learn_trusted(self, Y, trusted, G, anchor_sets):
        """Add the chunk's trusted rows: their flip counts, the clean positives of those in the anchor sets
        (``anchor_sets``: the (k, q) rows of each label's set, :meth:`_learn`) and (the newest
        ``max_trusted_rows``) the rows."""
        if trusted is None or not trusted.any():
            return
        n, q = Y.shape
        in_set = np.zeros((n, q), dtype=bool)
        np.put_along_axis(in_set, anchor_sets, True, axis=0)
        in_set = in_set[trusted]
        if getattr(self, "anchor_trusted_", None) is None:
            self.anchor_trusted_ = np.zeros((2, q))
        self.anchor_trusted_ = self.anchor_trusted_ + np.stack([in_set.sum(axis=0), (in_set * G).sum(axis=0)])
        if getattr(self, "trusted_counts_", None) is None:
            self.trusted_counts_ = np.zeros((4, q))
            self.trusted_Y_ = np.zeros((0, q), dtype=np.int8)
            self.trusted_cardinality_ = np.zeros(0)
            self.trusted_weight_ = np.zeros(0)
        observed = Y[trusted]
        self.trusted_counts_ = self.trusted_counts_ + np.stack([
            G.sum(axis=0), (G * (1 - observed)).sum(axis=0), (1 - G).sum(axis=0), ((1 - G) * observed).sum(axis=0)])
        keep = self.max_trusted_rows
        self.trusted_Y_ = np.vstack([self.trusted_Y_, observed.astype(np.int8)])[-keep:] if keep else self.trusted_Y_
        self.trusted_cardinality_ = np.concatenate([self.trusted_cardinality_, G.sum(axis=1)])[-keep:] if keep \
            else self.trusted_cardinality_
        self.trusted_weight_ = np.concatenate([self.trusted_weight_, np.ones(G.shape[0])])[-keep:] if keep \
            else self.trusted_weight_

    def _combine(self):
        """The rates and their intervals from the anchor evidence and, when there is one, the trusted sample."""
        top = self.max_rate
        # rho_-: the anchor proportion and its Wilson interval.
        if self.negative_anchor == "mixture":
            neg = self.mix_rates_[:, 0]
        else:
            neg = self.low_positives_ / self.low_count_
        # The anchor sets' clean positives can only raise the proportion: it bounds rho_- from above (its
        # Wilson upper limit); below, nothing but 0 holds without knowing how clean the sets are.
        _, neg_hi = wilson_interval(self.low_positives_, np.full_like(self.low_positives_, self.low_count_),
                                    self.level)
        neg = np.clip(neg, 0.0, top)
        neg_lo, neg_hi = np.zeros_like(neg), np.clip(np.maximum(neg_hi, neg), 0.0, top)
        # rho_+: only the bound 1 - max P_D holds; the value is the centre of [0, bound] (or, capped, <= rho_-).
        bound = np.clip(self.anchor_sum_ / self.anchor_weight_, 0.0, top)
        pos_lo, pos_hi = np.zeros_like(bound), bound
        pos = np.minimum(bound, neg) if self.positive_cap else bound / 2.0
        counts = getattr(self, "trusted_counts_", None)
        if counts is not None:
            positives, missed, negatives, added = counts
            # The trusted counts' posterior per label under a prior pooled across labels (pooled_posterior): a
            # handful of rows on a rare label moves its rate toward what they show only as far as they weigh
            # against the other labels' counts (their raw proportion and Wilson interval swung it, issue 39).
            t_pos, t_pos_lo, t_pos_hi, v_pos = pooled_posterior(missed, positives, self.level)
            t_neg, t_neg_lo, t_neg_hi, v_neg = pooled_posterior(added, negatives, self.level)
            neg, neg_var = self._corrected_anchor(neg, _proportion_var(self.low_positives_, self.low_count_),
                                                  t_pos, v_pos)
            # The anchor values' variances: rho_+'s centre is uniform over [0, bound]; rho_-'s a proportion.
            pos, pos_lo, pos_hi = pool_intervals((pos, pos_lo, pos_hi), (t_pos, t_pos_lo, t_pos_hi),
                                                 bound**2 / 12.0, v_pos)
            neg, neg_lo, neg_hi = pool_intervals((neg, neg_lo, neg_hi), (t_neg, t_neg_lo, t_neg_hi),
                                                 neg_var, v_neg)
        # max_rate < 1/2 keeps rho_+ + rho_- < 1 (Eq. NR's inverse) for every value in the intervals.
        self.rho_pos_, self.rho_pos_low_, self.rho_pos_high_ = (np.clip(v, 0.0, top) for v in (pos, pos_lo, pos_hi))
        self.rho_neg_, self.rho_neg_low_, self.rho_neg_high_ = (np.clip(v, 0.0, top) for v in (neg, neg_lo, neg_hi))

    def _corrected_anchor(self, anchor, anchor_var, rho_pos, rho_pos_var):
        """``(rho_-, its variance)`` of the anchor proportion ``anchor`` (variance ``anchor_var``) with the clean
        positives its sets hold, as the trusted rows in them measure (a posterior of their share ``c`` pooled in
        proportion to the label's clean prevalence among the trusted rows), taken out at ``rho_pos`` (variance
        ``rho_pos_var``; module docstring), the variance by the delta method.  The prevalence is every trusted
        row's (not decayed at a drift as the sets' counts are): a scale for the pool, not a per-label estimate.
        Unchanged with the mixture or before the sets held as many trusted places as :data:`MIN_TRUSTED` rows
        give on average (``anchor_fraction`` of them per label)."""
        counts = getattr(self, "anchor_trusted_", None)
        if (counts is None or self.negative_anchor == "mixture"
                or counts[0].sum() < MIN_TRUSTED * self.anchor_fraction * counts.shape[1]):
            return anchor, anchor_var
        # A set's clean positives grow with the label's prevalence: pooled in proportion to it (the trusted rows'
        # pooled posterior), a common label's share is not pulled down to the rare labels' (issue 39).
        positives, _, negatives, _ = self.trusted_counts_
        prevalence = pooled_posterior(positives, positives + negatives, self.level)[0]
        share, _, _, share_var = pooled_posterior(counts[1], counts[0], self.level, scale=prevalence)
        observed_if_positive = 1.0 - rho_pos
        clean_negatives = np.maximum(1.0 - share, 1e-6)
        corrected = np.clip((anchor - share * observed_if_positive) / clean_negatives, 0.0, self.max_rate)
        variance = (anchor_var / clean_negatives**2
                    + share_var * ((anchor - observed_if_positive) / clean_negatives**2) ** 2
                    + rho_pos_var * (share / clean_negatives) ** 2)
        return corrected, variance

    def _update_mixture(self, Y, neighbour_positives, m, first):
        q = Y.shape[1]
        if first:
            self.hist_ = np.zeros((q, m + 2))
        elif self.hist_.shape[1] != m + 2:
            raise ValueError(f"neighbors: the mixture was fitted with {self.hist_.shape[1] - 2} neighbours, got {m}")
        counts = (neighbour_positives + Y).astype(np.int64)  # (N, q) in 0..m+1
        offsets = np.arange(q) * (m + 2)
        self.hist_ = self.hist_ + np.bincount((counts + offsets).ravel(), minlength=q * (m + 2)).reshape(q, m + 2)
        start = None if first else (self.mix_rates_, self.mix_weights_)
        self.mix_rates_, self.mix_weights_ = binomial_mixture_em(self.hist_, start=start)

    def after_change(self) -> "FlipRateEstimator":
        """A copy whose kept trusted rows weigh nothing in the cardinality's regression from now on: they were
        drawn before a detected change of the label distribution, or in the chunk it was detected in
        (:mod:`ncld_core.model.cardinality`).  The flip counts, which measure the annotators, are kept."""
        new = copy.deepcopy(self)
        if getattr(new, "trusted_weight_", None) is not None:
            new.trusted_weight_ = np.zeros_like(new.trusted_weight_)
        return new

    def after_drift(self) -> "FlipRateEstimator":
        """A copy with the accumulated anchor counts down-weighted by ``drift_decay`` (estimates kept; the
        trusted rows are :meth:`after_change`'s)."""
        new = copy.deepcopy(self)
        if getattr(new, "low_count_", None) is not None:
            new.low_positives_ = new.low_positives_ * self.drift_decay
            new.low_count_ = new.low_count_ * self.drift_decay
            new.anchor_sum_ = new.anchor_sum_ * self.drift_decay
            new.anchor_weight_ = new.anchor_weight_ * self.drift_decay
            if getattr(new, "anchor_trusted_", None) is not None:
                new.anchor_trusted_ = new.anchor_trusted_ * self.drift_decay
            if getattr(new, "hist_", None) is not None:
                new.hist_ = new.hist_ * self.drift_decay
        return new


def _check_saved(s: dict) -> str | None:
    """The saved per-label arrays have one entry (row) per label, the trusted sample one row per trusted row."""
    if "rho_pos_" not in s:
        return None
    (q,) = s["rho_pos_"].shape
    names = ["low_positives_", "anchor_sum_", "rho_neg_",
             *(k for k in ("rho_pos_low_", "rho_pos_high_", "rho_neg_low_", "rho_neg_high_") if k in s)]
    n_trusted = s["trusted_Y_"].shape[0] if "trusted_Y_" in s else 0
    anchored = s.get("anchor_trusted_")
    anchored_error = shape_error("anchor_trusted_", anchored, (2, q)) or (
        "anchor_trusted_ counts more clean positives than rows"
        if anchored is not None and np.any(anchored[1] > anchored[0]) else None)
    return first_error(*(shape_error(k, s[k], (q,)) for k in names), anchored_error,
                        *((shape_error("trusted_counts_", s["trusted_counts_"], (4, q)),
                           shape_error("trusted_Y_", s["trusted_Y_"], (n_trusted, q)),
                           shape_error("trusted_cardinality_", s.get("trusted_cardinality_"), (n_trusted,)),
                           shape_error("trusted_weight_", s.get("trusted_weight_"), (n_trusted,)))
                          if "trusted_counts_" in s else ()),
                        *(shape_error(k, s[k], (q, 2)) for k in ("mix_rates_", "mix_weights_") if k in s),
                        None if "hist_" not in s or s["hist_"].shape[0] == q else "hist_ has a row per label")


def _upgrade_saved_3(state: dict) -> None:
    """Checkpoint format 3 -> 4: the parameters the estimator behaved as having (95 % intervals, no trusted rows);
    its rate intervals are made at its next chunk."""
    for name, value in (("level", 0.95), ("identified_width", 0.1), ("max_trusted_rows", 20000)):
        state.setdefault(name, value)


_COUNTS = array(1, rng=NONNEGATIVE)
#: What a checkpoint keeps (:mod:`ncld_core.saved_state`) besides the parameters: counts and sums of bounds in
#: [0, 1] (>= 0), rates in [0, 1), the mixture's rates and weights in [0, 1]; the files of checkpoint format 3
#: upgraded.
FlipRateEstimator.saved_state = SavedState(
    fitted={"low_positives_": _COUNTS, "low_count_": number(NONNEGATIVE), "anchor_sum_": _COUNTS,
            "anchor_weight_": number(NONNEGATIVE), "n_chunks_": number(NONNEGATIVE, integer=True),
            "rho_neg_": array(1, rng=RATE), "rho_pos_": array(1, rng=RATE)},
    optional={"hist_": array(2, rng=NONNEGATIVE), "mix_rates_": array(2, rng=PROPORTION),
              "mix_weights_": array(2, rng=PROPORTION),  # negative_anchor="mixture"
              # format 4 (absent from older files until their next chunk): rate intervals, trusted sample
              **dict.fromkeys(("rho_pos_low_", "rho_pos_high_", "rho_neg_low_", "rho_neg_high_"), array(1, rng=RATE)),
              "trusted_counts_": array(2, rng=NONNEGATIVE), "trusted_Y_": array(2, "i", rng=PROPORTION),
              "trusted_cardinality_": _COUNTS, "trusted_weight_": _COUNTS,
              "anchor_trusted_": array(2, rng=NONNEGATIVE)},  # absent from files saved before it
    check=_check_saved,
    upgrades={3: _upgrade_saved_3},
)


def check_trusted(trusted, Y_trusted, shape):
    """``(mask, clean labels)`` of a chunk's trusted rows, checked (ValueError naming the parameter), or
    ``(None, None)`` without any.  ``shape``: the chunk's label matrix ``(N, q)``; ``Y_trusted`` holds the
    clean labels of the marked rows in row order, in {0, 1} or {-1, +1}.

    >>> m, G = check_trusted([True, False, True], [[1, 0], [-1, 1]], (3, 2))
    >>> m.tolist(), G.tolist()
    ([True, False, True], [[1.0, 0.0], [0.0, 1.0]])
    >>> check_trusted([True, False, True], [[1, 0]], (3, 2))
    Traceback (most recent call last):
    ...
    ValueError: Y_trusted must hold the clean labels of the 2 trusted rows, shape (2, 2); got (1, 2)
    """
    if trusted is None:
        if Y_trusted is not None:
            raise ValueError("Y_trusted was given without trusted (the mask of the rows it labels)")
        return None, None
    mask = np.asarray(trusted)
    n, q = shape
    if mask.dtype != bool or mask.shape != (n,):
        raise ValueError(f"trusted must be a boolean mask of the chunk's {n} rows; got dtype {mask.dtype}, "
                         f"shape {mask.shape}")
    if Y_trusted is None:
        raise ValueError("trusted was given without Y_trusted (the clean labels of the marked rows)")
    try:
        raw = np.asarray(Y_trusted)
    except (TypeError, ValueError) as exc:  # e.g. ragged rows
        raise ValueError(f"Y_trusted must be numeric: {exc}") from None
    check_dtype(raw, "Y_trusted", Y_trusted)  # the one dtype check of labels and features
    try:
        G = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"Y_trusted must be numeric: {exc}") from None
    k = int(mask.sum())
    if G.ndim == 1 and q == 1:
        G = G[:, None]
    if G.shape != (k, q):
        raise ValueError(f"Y_trusted must hold the clean labels of the {k} trusted rows, shape ({k}, {q}); "
                         f"got {G.shape}")
    if G.size and not np.all(np.isin(G, (-1.0, 0.0, 1.0))):
        raise ValueError("Y_trusted must hold labels in {0, 1} or {-1, +1}")
    return mask, (G > 0).astype(np.float64)


def estimate_errors(chunks, model: str, rho_pos=None, rho_neg=None, noise_changes=()):
    """Estimated rates of ``model`` over a run, against the truth when known.

    Parameters
    ----------
    chunks : list of :class:`~ncld_core.eval.runner.ChunkResult`
    model : str
        A variant that estimated its rates (its records hold ``rho_pos_est`` / ``rho_neg_est``).
    rho_pos, rho_neg : arrays (q,), optional
        The stream's true rates.
    noise_changes : iterable of :class:`~ncld_core.stream.stream.NoiseChange`
        The stream's noise changes: a chunk's true rates are ``rho_pos`` / ``rho_neg`` times the mean factor of
        its instances (:func:`~ncld_core.stream.stream.noise_factors`).

    Returns
    -------
    over_time : DataFrame
        One row per chunk: ``chunk``, the mean estimates and, with the truth, ``mae_rho_pos``,
        ``mae_rho_neg`` (mean absolute error over labels).
    per_label : DataFrame
        The newest estimates per label (with the truth and the absolute errors when known).
    """
    import pandas as pd

    from ..stream.stream import noise_factors

    changes = tuple(noise_changes)

    def factor(c) -> float:
        if not changes:
            return 1.0
        return float(noise_factors(c.stop, changes)[c.start:c.stop].mean())

    rows, last = [], None
    for c in chunks:
        record = c.diagnostics.get(model)
        if record is None or not record.estimates_rates:
            continue
        pos, neg = np.asarray(record.rho_pos_est), np.asarray(record.rho_neg_est)
        row = {"chunk": c.chunk, "mean_rho_pos": pos.mean(), "mean_rho_neg": neg.mean()}
        f = factor(c)
        if rho_pos is not None:
            row["mae_rho_pos"] = float(np.abs(pos - f * np.asarray(rho_pos)).mean())
            row["mae_rho_neg"] = float(np.abs(neg - f * np.asarray(rho_neg)).mean())
        rows.append(row)
        last = (pos, neg, f)
    over_time = pd.DataFrame(rows)
    if last is None:
        return over_time, pd.DataFrame()
    per_label = pd.DataFrame({"label": np.arange(last[0].size), "rho_pos estimated": last[0],
                              "rho_neg estimated": last[1]})
    if rho_pos is not None:
        true_pos, true_neg = last[2] * np.asarray(rho_pos), last[2] * np.asarray(rho_neg)
        per_label["rho_pos true"], per_label["rho_neg true"] = true_pos, true_neg
        per_label["|error| rho_pos"] = np.abs(last[0] - true_pos)
        per_label["|error| rho_neg"] = np.abs(last[1] - true_neg)
    return over_time, per_label
