"""The label cardinality of a chunk from its noisy labels: unbiased estimate, interval, prevalences.

Under class-conditional flips (Eq. NR) the observed label ``y_tj`` in {0, 1} has
``E[y_tj | g_tj] = rho_-^j + g_tj (1 - rho_+^j - rho_-^j)``, so::

    c_t = sum_j (y_tj - rho_-^j) / (1 - rho_+^j - rho_-^j)

is an unbiased estimate of the instance's true cardinality ``sum_j g_tj`` (the
moment identity, per instance, unclipped).  Its chunk mean ``LCard_hat`` is unbiased
for the chunk's true cardinality, and ``p_j = (f_j - rho_-^j) / (1 - rho_+^j - rho_-^j)``
(``f_j`` the observed frequency) for each label's clean prevalence.

The paper's Eq. (card) weighs the observed positives with importance weights clipped
at 0 and a ``P_D`` fitted on the very chunk; that estimate is biased upwards
(measured in ``docs/drift.md``, ``python -m benchmarks.drift``) and is kept,
as :func:`ncld_core.model.importance.instance_cardinality`, for comparison only.

Standard error: given the chunk's true labels, the flips are independent across
instances and labels, so the error ``LCard_hat - LCard`` has variance
``(1/N) sum_j [p_j rho_+^j (1 - rho_+^j) + (1 - p_j) rho_-^j (1 - rho_-^j)] / d_j^2``
with ``d_j = 1 - rho_+^j - rho_-^j`` (``p_j`` clipped to [0, 1] in this plug-in).
The 95 % interval ``LCard_hat +- 1.96 se`` is for the chunk's own true cardinality
(the line the dashboard draws); its coverage is tested in ``tests/test_cardinality.py``.

With estimated rates (:mod:`ncld_core.model.flip_rates`) each rate is known only to lie in an
interval, and ``rho_+`` often only below an upper bound: ``rate_intervals`` turns the interval
into the set of cardinalities consistent with any rates in those intervals and clean prevalences
in [0, 1] (partial identification), widened by the sampling error.  The point estimate is then
the plug-in of the estimated rates, each prevalence cut to [0, 1] (biased where the rates are
not identified; measured in ``docs/flip-rates.md``).

A trusted sample (rows whose clean labels are known, ``trusted=``) turns the estimate into a
regression estimate (the survey sampler's GREG): the trusted rows' clean cardinality ``g`` is
regressed on their moment estimate ``c`` (with the estimated rates), and the chunk's estimate
is ``g_bar + b (c_bar_chunk - c_bar_trusted)``.  It needs no assumption on the rates (a wrong
rate changes the slope, not the unbiasedness), only that the chunk is drawn like the trusted rows;
its standard error is the regression's prediction error of a mean of ``N``, and the interval uses
Student's t on the trusted rows' degrees of freedom.  That regression, ``E[g | c]``, carries the trusted
rows' own label distribution: after a change of the label distribution it pulls the estimate back to the
old one (issue 39: after a concept growth its interval missed the new cardinality).  What stays the same
across such a change is the noise: the trusted rows' flip counts, per label, measure the annotators.
The interval that holds whatever the label distribution does is the per-label moment estimate's at
the rates the trusted rows count, with their uncertainty in it
(:func:`ncld_core.model.counted_rates.counted_estimate`, given ``counts=``), cut to the identified set:
wider than the regression's.  So, given the counts, the regression is taken only from at least
:data:`MIN_TRUSTED` trusted rows (effective count, their weights) drawn after the chunk the model's
detector last fired in (``FlipRateEstimator.after_change`` weighs the older ones 0):

* fewer (the chunks after a firing): the counted interval; its estimate the regression of the rows
  before the firing where the interval holds it (a false alarm keeps the precise value), else the counted
  one;
* enough, and the chunk's mean moment estimate agrees with theirs (within :data:`SHIFT_Z` standard
  errors, :func:`shifted`) and their clean cardinalities did not change along the order they were drawn in
  (:func:`changed_along`): the regression;
* enough, and one of the two fails (a change the detector has not seen yet, or chance): the chunk is drawn
  like them or not, so the interval spans both the regression's and the counted one, the estimate the
  regression's.

Its coverage after the changes of the presets and of the drift benchmark's streams:
``docs/change-coverage.md`` (``python -m benchmarks.change_coverage``).  With fewer than
:data:`MIN_TRUSTED` trusted rows (the first chunks of a 1 % sample) and rates not identified, the
estimate is the trusted rows' mean clean cardinality (unbiased, no rate assumption; kept inside
the interval) and the interval stays the identified set: too few rows for a confidence interval.
(The plug-in these chunks had before is biased wherever the rates are not identified; it was most
of the 1 % sample's bias on medical and langlog, ``docs/flip-rates.md``.)

Every interval is well formed: the estimate and both ends are cut to ``[0, q]`` the same way,
and the interval always holds the reported estimate (a chunk with fewer observed positives than
``rho_-`` implies has a negative unclipped estimate: reported as 0 with the interval ``[0, ...]``).

>>> import numpy as np
>>> Y = np.array([[1, 0], [1, 1], [0, 0], [1, 0]])
>>> est = moment_cardinality(Y, rho_pos=[0.1, 0.1], rho_neg=[0.2, 0.2])
>>> est.per_instance.round(4).tolist()     # (1-0.2)/0.7 + (0-0.2)/0.7, ...
[0.8571, 2.2857, -0.5714, 0.8571]
>>> round(est.estimate, 4), est.prevalence.round(4).tolist()
(0.8571, [0.7857, 0.0714])
>>> bool(est.low < est.estimate < est.high), est.point_identified
(True, True)
>>> few = moment_cardinality(np.zeros((50, 3)), rho_pos=0.1, rho_neg=0.2)   # fewer positives than rho_- implies
>>> round(float(few.per_instance.mean()), 3), few.estimate, few.low, few.high
(-0.857, 0.0, 0.0, 0.0)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from .counted_rates import counted_estimate
from .flip_rates import MIN_TRUSTED  # fewest trusted rows a regression estimate is made from

__all__ = ["CHANGE_LEVEL", "CardinalityEstimate", "MIN_TRUSTED", "SHIFT_Z", "changed_along", "moment_cardinality",
           "regression_estimate", "shifted"]


@dataclass(frozen=True)
class CardinalityEstimate:
    """One chunk's cardinality estimate (see the module doc)."""

    estimate: float  # LCard_hat: the mean of per_instance (given rates), cut to [0, q]; see the module doc
    se: float  # standard error of estimate - (the chunk's true cardinality)
    low: float  # interval: confidence (rates given, or a trusted sample) or identified set +- sampling error
    high: float
    per_instance: np.ndarray  # (N,) c_t, unbiased per instance with the right rates (what the detectors read)
    prevalence: np.ndarray  # (q,) clean prevalence per label, unclipped
    point_identified: bool  # False when the interval comes from rate bounds
    n_trusted: int = 0  # trusted rows behind the estimate (regression, or the mean of too few; 0: none used)


def _check_rates(rho_pos, rho_neg, q):
    rho_pos = np.broadcast_to(np.asarray(rho_pos, dtype=np.float64), (q,))
    rho_neg = np.broadcast_to(np.asarray(rho_neg, dtype=np.float64), (q,))
    denom = 1.0 - rho_pos - rho_neg
    if np.any(denom <= 0) or np.any(rho_pos < 0) or np.any(rho_neg < 0):
        raise ValueError("flip rates must be >= 0 with rho_pos + rho_neg < 1 for every label")
    return rho_pos, rho_neg, denom


def _well_formed(estimate, se, low, high, q, *rest, **kw) -> CardinalityEstimate:
    """The estimate and its interval cut to [0, q] the same way, the interval widened to hold the estimate."""
    estimate = float(np.clip(estimate, 0.0, q))
    low = min(float(np.clip(low, 0.0, q)), estimate)
    high = max(float(np.clip(high, 0.0, q)), estimate)
    return CardinalityEstimate(estimate, se, low, high, *rest, **kw)


def _row_weights(x, weight):
    """``(w, total, n_eff)`` of the trusted rows ``x``: their weights (1 each without ``weight``), the weights'
    sum and Kish's effective number of rows ``total^2 / sum w^2``."""
    w = np.ones_like(x) if weight is None else np.asarray(weight, dtype=np.float64)
    total = w.sum()
    return w, total, total**2 / float((w**2).sum())


def regression_estimate(c_chunk, c_trusted, g_trusted, weight=None, *, level: float = 0.95):
    """The regression (GREG) estimate of a chunk's mean clean cardinality from trusted rows.

    ``c_chunk`` (N,): the chunk's per-instance moment estimates; ``c_trusted``, ``g_trusted`` (n,): the
    trusted rows' moment estimates and clean cardinalities; ``weight`` (n,): their weights (default 1).
    Returns ``(estimate, se, low, high)`` (not cut to [0, q]); the interval is Student's t on
    ``n_eff - 2`` degrees of freedom (``n_eff`` the weights' effective count).

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> g = rng.poisson(2.0, 400).astype(float); c = 0.5 * g + rng.normal(0, 0.3, 400)   # c: a biased proxy
    >>> est, se, lo, hi = regression_estimate(c[:300], c[300:], g[300:])
    >>> bool(lo < g[:300].mean() < hi), round(est, 2), round(float(g[:300].mean()), 2)
    (True, 2.09, 2.14)
    """
    from scipy.stats import t as student

    x = np.asarray(c_trusted, dtype=np.float64)
    g = np.asarray(g_trusted, dtype=np.float64)
    w, total, n_eff = _row_weights(x, weight)
    xw, gw = float((w * x).sum() / total), float((w * g).sum() / total)
    dx = x - xw
    sxx = float((w * dx**2).sum())
    slope = float((w * dx * (g - gw)).sum() / sxx) if sxx > 1e-12 * max(total, 1.0) else 0.0
    resid = g - gw - slope * dx
    dof = max(n_eff - 2.0, 1.0)
    s2 = float((w * resid**2).sum() / total) * n_eff / dof
    xbar = float(np.mean(c_chunk))
    lever = float((w**2).sum() / total**2)
    if sxx > 1e-12 * max(total, 1.0):
        lever += (xbar - xw) ** 2 * float((w**2 * dx**2).sum()) / sxx**2
    se = float(np.sqrt(s2 * (lever + 1.0 / len(c_chunk))))
    estimate = gw + slope * (xbar - xw)
    half = float(student.ppf(0.5 + level / 2.0, dof)) * se
    return estimate, se, estimate - half, estimate + half


#: ``|z|`` of the chunk's mean moment estimate against the trusted rows' beyond which :func:`shifted` says the
#: chunk's labels no longer look like the trusted rows'.
SHIFT_Z = 2.0


def shifted(c_chunk, c_trusted, weight=None) -> bool:
    """Whether the chunk's mean moment estimate ``c_chunk`` (N,) is more than :data:`SHIFT_Z` standard errors
    from the trusted rows' ``c_trusted`` (n,) (weighted) mean: the chunk is not drawn like the trusted rows.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> trusted_rows = rng.normal(2.0, 1.0, 100)
    >>> shifted(rng.normal(2.0, 1.0, 500), trusted_rows), shifted(rng.normal(3.0, 1.0, 500), trusted_rows)
    (False, True)
    """
    x = np.asarray(c_trusted, dtype=np.float64)
    w, total, n_eff = _row_weights(x, weight)
    xw = float((w * x).sum() / total)
    var = float((w * (x - xw) ** 2).sum() / total)
    c = np.asarray(c_chunk, dtype=np.float64)
    se = np.sqrt(var / max(n_eff, 1.0) + float(np.var(c)) / max(c.size, 1))
    return bool(se > 0 and abs(float(c.mean()) - xw) > SHIFT_Z * se)


#: Level of :func:`changed_along`'s test (two-sided, Bonferroni over the split points).
CHANGE_LEVEL = 0.05


def changed_along(g_trusted, weight=None) -> bool:
    """Whether the trusted rows' clean cardinalities ``g_trusted`` (n,), in the order they were drawn, changed
    along it: for every split, the newest ``k`` rows' mean against the older ones', in standard errors of the
    rows' common spread; beyond the Bonferroni bound of :data:`CHANGE_LEVEL` over the ``n - 1`` splits at any
    split, they were not drawn from one label distribution.  Rows of weight 0 are left out.

    The clean labels vary far less than the noisy moment estimates :func:`shifted` compares, so a change the
    chunk's noisy labels cannot show (a few labels more per row among many noisy ones) shows here.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> same, grown = rng.poisson(1.0, 12).astype(float), np.r_[np.ones(9), [3.0, 2.0, 3.0]]
    >>> changed_along(same), changed_along(grown)
    (False, True)
    """
    g = np.asarray(g_trusted, dtype=np.float64)
    if weight is not None:
        g = g[np.asarray(weight, dtype=np.float64) > 0]
    n = g.size
    spread = float(g.std(ddof=1)) if n > 2 else 0.0
    if n < 3 or not spread > 0:
        return False
    k = np.arange(1, n)
    tail = np.cumsum(g[::-1])[:-1]  # the newest k rows' sums
    diff = tail / k - (g.sum() - tail) / (n - k)
    z = np.abs(diff) / (spread * np.sqrt(1.0 / k + 1.0 / (n - k)))
    return bool(z.max() > -ndtri(CHANGE_LEVEL / (2.0 * (n - 1))))


def moment_cardinality(Y01, rho_pos, rho_neg, *, level: float = 0.95, rho_bounds=None, rate_intervals=None,
                       identified: bool = False, trusted=None, counts=None) -> CardinalityEstimate:
    """Unbiased chunk cardinality from observed labels ``Y01`` (N, q) in {0, 1} and per-label rates.

    ``rate_intervals=(pos_low, pos_high, neg_low, neg_high)``: the rates are only known to lie in these
    per-label intervals; ``low``/``high`` then bound every cardinality those rates allow, widened by the
    sampling error, and ``point_identified`` is ``identified`` (the caller's word that every interval is
    narrow: then the estimate is the plug-in mean, else the sum of the prevalences cut to [0, 1]).
    ``rho_bounds=(upper_pos, upper_neg)`` is the same with lower bounds 0.
    ``trusted=(observed labels (n, q), clean cardinality (n,), weight (n,) or None)``: trusted rows; from
    :data:`MIN_TRUSTED` of them on, the regression estimate of the module doc (``point_identified`` True,
    ``n_trusted`` their count); fewer, with rates not identified: their mean inside the identified set.
    ``counts`` (4, q): their flip counts (:attr:`~ncld_core.model.flip_rates.FlipRateEstimator.trusted_counts_`);
    with them the regression alone needs :data:`MIN_TRUSTED` rows of weight (effective count) that have not
    :func:`changed_along` and a chunk that has not :func:`shifted`, else the counted-rates interval enters
    (module doc; ``n_trusted``: the rows counted).

    >>> few_rows = (np.array([[1, 0], [0, 1]]), np.array([1.0, 2.0]))   # two trusted rows: clean cardinality 1, 2
    >>> e = moment_cardinality(np.eye(2)[[0, 1, 0, 0]], 0.1, 0.1, rate_intervals=(0, 0.3, 0, 0.3), trusted=few_rows)
    >>> e.estimate, e.point_identified, e.n_trusted, bool(e.low <= 1.5 <= e.high)
    (1.5, False, 2, True)
    """
    Y = np.asarray(Y01, dtype=np.float64)
    n, q = Y.shape
    rho_pos, rho_neg, denom = _check_rates(rho_pos, rho_neg, q)
    per_instance = ((Y - rho_neg) / denom).sum(axis=1)
    freq = Y.mean(axis=0)
    prevalence = (freq - rho_neg) / denom
    p = np.clip(prevalence, 0.0, 1.0)
    noise_var = (p * rho_pos * (1 - rho_pos) + (1 - p) * rho_neg * (1 - rho_neg)) / denom**2
    se = float(np.sqrt(noise_var.sum() / n))
    z = float(ndtri(0.5 + level / 2.0))
    rest = (per_instance, prevalence)
    rows = None  # the trusted rows' moment estimates and clean cardinalities, when there are enough of them
    if trusted is not None:
        Y_tr, g_tr = np.asarray(trusted[0], dtype=np.float64), np.asarray(trusted[1], dtype=np.float64)
        weight = trusted[2] if len(trusted) > 2 else None
        if Y_tr.ndim != 2 or Y_tr.shape[1] != q or g_tr.shape != (Y_tr.shape[0],):
            raise ValueError(f"trusted: expected observed labels (n, {q}) and n clean cardinalities, got "
                             f"{Y_tr.shape} and {g_tr.shape}")
        weighed_out = weight is not None and not float(np.sum(weight)) > 0  # after a detected change
        if Y_tr.shape[0] >= MIN_TRUSTED and (counts is not None or not weighed_out):
            rows = ((Y_tr - rho_neg) / denom).sum(axis=1), g_tr
        if weighed_out:
            trusted = None  # every row weighed down to nothing: as without them (but for the counted estimate)
    counted_rows = 0 if counts is None else int(round(float(counts[0][0] + counts[2][0])))
    greg = stale = None
    if rows is not None:
        fresh = trusted is not None and _row_weights(rows[0], weight)[2] >= MIN_TRUSTED
        if fresh or counts is None:
            greg = regression_estimate(per_instance, *rows, weight, level=level)
            if counts is None or not (shifted(per_instance, rows[0], weight) or changed_along(rows[1], weight)):
                return _well_formed(*greg, q, *rest, True, n_trusted=int(Y_tr.shape[0]))
        else:  # rows drawn before a detected change: their regression, the precise value it was, only as a guide
            stale = regression_estimate(per_instance, *rows, level=level)[0]
    counted = counted_estimate(Y, counts, level=level) if counted_rows >= MIN_TRUSTED else None
    if rho_bounds is None and rate_intervals is None:
        if counted is not None:
            return _well_formed(*counted, q, *rest, True, n_trusted=counted_rows)
        estimate = float(per_instance.mean())
        return _well_formed(estimate, se, estimate - z * se, estimate + z * se, q, *rest, True)
    if rate_intervals is None:
        up_pos, up_neg, _ = _check_rates(*rho_bounds, q)
        rate_intervals = (np.zeros(q), up_pos, np.zeros(q), up_neg)
    pos_lo, pos_hi, neg_lo, neg_hi = (np.broadcast_to(np.asarray(v, dtype=np.float64), (q,)) for v in rate_intervals)
    _check_rates(pos_hi, neg_hi, q)
    _check_rates(pos_lo, neg_lo, q)
    # (f - a) / (1 - b - a) is monotone in each rate separately: the extremes over the box are at
    # corners; a clean prevalence lies in [0, 1], so each label's range is cut there before summing.
    corners = np.stack([(freq - a) / (1.0 - b - a) for a in (neg_lo, neg_hi) for b in (pos_lo, pos_hi)])
    low = float(np.clip(corners.min(axis=0), 0.0, 1.0).sum()) - z * se
    high = float(np.clip(corners.max(axis=0), 0.0, 1.0).sum()) + z * se
    if counted is not None:
        # The counted-rates interval inside the identified set (which rests on the rates' bounds, not on values
        # from few counts); where the two do not meet, the set alone.
        estimate, se_c, low_c, high_c = counted
        if low_c <= high and high_c >= low:
            low, high = max(low, low_c), min(high, high_c)
        if greg is not None:
            # The chunk's labels moved away from the trusted rows', or theirs changed along their order, with no
            # firing: the chunk is drawn like them (the regression holds) or not (the counted interval holds); the
            # interval holds both, the estimate is the regression's, the more precise.
            estimate, se_c = greg[0], greg[1]
            low, high = min(low, greg[2]), max(high, greg[3])
        elif stale is not None and low <= stale <= high:
            # After a firing, the regression of the rows before it where the counted interval still allows it (a
            # false alarm keeps its precise value; few counted rows on many labels give a wild counted value);
            # where it does not, the labels have moved, and the counted value is the one that follows them.
            estimate = stale
        return _well_formed(float(np.clip(estimate, low, high)), se_c, low, high, q, *rest, True,
                            n_trusted=counted_rows)
    # Identified: the plug-in mean, unbiased.  Not: the plug-in with each prevalence cut to [0, 1] (which
    # moves every label's estimate towards the truth, itself in [0, 1]); biased, see docs/flip-rates.md.
    # Too few trusted rows for the regression still give an unbiased mean; the identified set holds the truth,
    # so cutting the mean to it only brings it closer.
    n_few = 0 if trusted is None or identified else int(g_tr.shape[0])
    if n_few:
        estimate = float(np.clip(np.average(g_tr, weights=weight), low, high))
    else:
        estimate = float(per_instance.mean()) if identified else float(p.sum())
    return _well_formed(estimate, se, low, high, q, *rest, bool(identified), n_trusted=n_few)
