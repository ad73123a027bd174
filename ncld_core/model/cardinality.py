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
rate changes the slope, not the unbiasedness), only that the trusted rows are drawn at random
from the stream; its standard error is the regression's prediction error of a mean of ``N``,
and the interval uses Student's t on the trusted rows' degrees of freedom.  That regression, ``E[g | c]``, carries the
trusted rows' own label distribution: after a change of the label distribution it pulls the estimate
back to the old one (issue 39: after a concept growth its interval missed the new cardinality).  So when the chunk's
mean moment estimate differs from the trusted rows' by more than :data:`SHIFT_Z` standard errors the
estimate is the calibration (inverse regression) estimate instead, :func:`calibration_estimate`: ``c``
regressed on ``g``, ``E[c | g]`` being the noise process alone, the same before and after the change
(:func:`trusted_estimate` chooses).  With fewer than
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

__all__ = ["CALIBRATION_MIN_ROWS", "CardinalityEstimate", "MIN_TRUSTED", "SHIFT_Z", "calibration_estimate",
           "moment_cardinality", "regression_estimate", "trusted_estimate"]


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


#: Fewest trusted rows a regression estimate is made from (below: the estimate without them).  With 4-5
#: rows the fitted slope swung the estimate by half the cardinality on the small datasets (docs/flip-rates.md).
MIN_TRUSTED = 8


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


def calibration_estimate(c_chunk, c_trusted, g_trusted, weight=None, *, level: float = 0.95):
    """The calibration (inverse regression) estimate of a chunk's mean clean cardinality from trusted rows.

    The trusted rows' moment estimates ``c`` are regressed on their clean cardinalities ``g``,
    ``c = a + k g + e``: under class-conditional flips ``E[c | g]`` is the noise process alone (``E[y | g] =
    rho_- + g (1 - rho_+ - rho_-)`` per label), the same before and after the label distribution changes,
    whereas :func:`regression_estimate`'s ``E[g | c]`` carries the trusted rows' own label distribution and
    after a change pulls the estimate back to it (issue 39: after a concept growth its interval missed the
    new cardinality).  The chunk's estimate is
    ``(c_bar - a) / k``, its standard error by the delta method: ``s sqrt(1/N + 1/n_eff + (est - g_w)^2 /
    S_gg) / k``, Student's t on ``n_eff - 2`` degrees of freedom.  Where ``k`` is not clearly positive (its
    lower 95 % limit at most 0.1: the trusted rows span too few cardinalities, or the rates are far off),
    the ratio is unstable and :func:`regression_estimate` is returned instead.

    Arguments and return value as :func:`regression_estimate`.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> g = rng.poisson(2.0, 300).astype(float); c = 0.5 * g + rng.normal(0, 0.3, 300)     # trusted: mean 2
    >>> g_new = rng.poisson(3.0, 500).astype(float); c_new = 0.5 * g_new + rng.normal(0, 0.3, 500)  # mean 3
    >>> est, se, lo, hi = calibration_estimate(c_new, c, g)
    >>> bool(lo < g_new.mean() < hi), round(est, 2), round(float(g_new.mean()), 2)
    (True, 2.94, 2.86)
    """
    from scipy.stats import t as student

    x = np.asarray(c_trusted, dtype=np.float64)
    g = np.asarray(g_trusted, dtype=np.float64)
    w, total, n_eff = _row_weights(x, weight)
    gw, xw = float((w * g).sum() / total), float((w * x).sum() / total)
    dg = g - gw
    sgg = float((w * dg**2).sum())
    dof = max(n_eff - 2.0, 1.0)
    t_q = float(student.ppf(0.5 + level / 2.0, dof))
    if sgg <= 1e-12 * max(total, 1.0):
        return regression_estimate(c_chunk, c_trusted, g_trusted, weight, level=level)
    slope = float((w * dg * (x - xw)).sum() / sgg)
    resid = x - xw - slope * dg
    s2 = float((w * resid**2).sum() / total) * n_eff / dof
    slope_se = float(np.sqrt(s2 * float((w**2 * dg**2).sum()) / sgg**2))
    if slope - t_q * slope_se <= 0.1:
        return regression_estimate(c_chunk, c_trusted, g_trusted, weight, level=level)
    estimate = gw + (float(np.mean(c_chunk)) - xw) / slope
    lever = float((w**2).sum() / total**2) + (estimate - gw) ** 2 * float((w**2 * dg**2).sum()) / sgg**2
    se = float(np.sqrt(s2 * (lever + 1.0 / len(c_chunk)))) / slope
    half = t_q * se
    return estimate, se, estimate - half, estimate + half


#: ``|z|`` of the chunk's mean moment estimate against the trusted rows' beyond which :func:`trusted_estimate`
#: takes the calibration estimate: the chunk's labels no longer look like the trusted rows'.
SHIFT_Z = 2.0
#: Fewest trusted rows (effective count) the calibration estimate is taken from: its ratio is unstable on
#: fewer, and moved the estimate where nothing changed (measured in the commit that added it).
CALIBRATION_MIN_ROWS = 30


def trusted_estimate(c_chunk, c_trusted, g_trusted, weight=None, *, level: float = 0.95):
    """The chunk's mean clean cardinality from trusted rows: :func:`regression_estimate` (the more precise)
    while the chunk's mean moment estimate agrees with the trusted rows' (``|z| <= SHIFT_Z``) or there are
    fewer than :data:`CALIBRATION_MIN_ROWS` of them, else :func:`calibration_estimate` (valid after a change
    of the label distribution, which the regression pulls back to the trusted rows' own).  Arguments and
    return value as :func:`regression_estimate`.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> g = rng.poisson(2.0, 300).astype(float); c = 0.5 * g + rng.normal(0, 0.3, 300)
    >>> g_new = rng.poisson(3.0, 500).astype(float); c_new = 0.5 * g_new + rng.normal(0, 0.3, 500)
    >>> trusted_estimate(c_new, c, g) == calibration_estimate(c_new, c, g)        # shifted: calibration
    True
    >>> trusted_estimate(c[:150], c[150:], g[150:]) == regression_estimate(c[:150], c[150:], g[150:])
    True
    """
    x = np.asarray(c_trusted, dtype=np.float64)
    w, total, n_eff = _row_weights(x, weight)
    xw = float((w * x).sum() / total)
    var = float((w * (x - xw) ** 2).sum() / total)
    c = np.asarray(c_chunk, dtype=np.float64)
    se = np.sqrt(var / max(n_eff, 1.0) + float(np.var(c)) / max(c.size, 1))
    shifted = n_eff >= CALIBRATION_MIN_ROWS and se > 0 and abs(float(c.mean()) - xw) > SHIFT_Z * se
    return (calibration_estimate if shifted else regression_estimate)(c_chunk, c_trusted, g_trusted, weight,
                                                                      level=level)


def moment_cardinality(Y01, rho_pos, rho_neg, *, level: float = 0.95, rho_bounds=None, rate_intervals=None,
                       identified: bool = False, trusted=None) -> CardinalityEstimate:
    """Unbiased chunk cardinality from observed labels ``Y01`` (N, q) in {0, 1} and per-label rates.

    ``rate_intervals=(pos_low, pos_high, neg_low, neg_high)``: the rates are only known to lie in these
    per-label intervals; ``low``/``high`` then bound every cardinality those rates allow, widened by the
    sampling error, and ``point_identified`` is ``identified`` (the caller's word that every interval is
    narrow: then the estimate is the plug-in mean, else the sum of the prevalences cut to [0, 1]).
    ``rho_bounds=(upper_pos, upper_neg)`` is the same with lower bounds 0.
    ``trusted=(observed labels (n, q), clean cardinality (n,), weight (n,) or None)``: trusted rows; from
    :data:`MIN_TRUSTED` of them on, the regression estimate of the module doc (``point_identified`` True,
    ``n_trusted`` their count); fewer, with rates not identified: their mean inside the identified set.

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
    if trusted is not None:
        Y_tr, g_tr = np.asarray(trusted[0], dtype=np.float64), np.asarray(trusted[1], dtype=np.float64)
        weight = trusted[2] if len(trusted) > 2 else None
        if Y_tr.ndim != 2 or Y_tr.shape[1] != q or g_tr.shape != (Y_tr.shape[0],):
            raise ValueError(f"trusted: expected observed labels (n, {q}) and n clean cardinalities, got "
                             f"{Y_tr.shape} and {g_tr.shape}")
        if weight is not None and not float(np.sum(weight)) > 0:
            trusted = None  # every row weighed down to nothing (drift_decay=0): as without them
    if trusted is not None and Y_tr.shape[0] >= MIN_TRUSTED:
        c_tr = ((Y_tr - rho_neg) / denom).sum(axis=1)
        estimate, se_t, low, high = trusted_estimate(per_instance, c_tr, g_tr, weight, level=level)
        return _well_formed(estimate, se_t, low, high, q, *rest, True, n_trusted=int(Y_tr.shape[0]))
    if rho_bounds is None and rate_intervals is None:
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
