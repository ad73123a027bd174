"""The generalized likelihood ratio (GLR) for a change in the mean of a window of chunks.

A window holds ``m`` chunks since the last detected change.  The change, if any, lies between
two of them: the newest ``j`` chunks against the older ``m - j``, ``j = 1 .. m-1``.  Each split
gives a two-sample z statistic with the chunks' pooled within-chunk variance (a mean shift
does not inflate it); the GLR for a change of unknown place and size in a Gaussian mean is
``max_j z_j^2 / 2``, so the test statistic is ``max_j |z_j|``.

Calibration (a stated false-alarm rate): under no change the chunk means are independent and,
standardized, about N(0, 1) (the central limit over a chunk's instances), so the null
distribution of ``max_j |z_j|`` depends on the window length ``m`` alone (equal chunks).  It is
simulated once, :data:`SIMULATIONS` windows of iid N(0, 1) chunk means with a fixed seed, and the threshold at a window of
``m`` chunks is its ``1 - delta`` quantile: the probability of a false alarm at every chunk is
``delta``, whatever the window, so the expected false alarms per stationary chunk are ``delta``
and the mean time between false alarms (ARL0) is ``1 / delta`` chunks.  Where fewer than
:data:`TAIL_COUNT` simulated windows exceed the statistic the p-value is Bonferroni's bound over
the ``m - 1`` splits (never below the true p-value).

>>> import numpy as np
>>> round(glr_threshold(0.05, 2), 1)      # one split: the two-sided normal quantile, 1.96
2.0
>>> glr_threshold(0.05, 16) > glr_threshold(0.05, 4) > glr_threshold(0.05, 2)   # more splits, higher bar
True
>>> n, means = np.full(6, 100.0), np.array([2.0, 2.0, 2.0, 2.0, 2.5, 2.5])
>>> z = split_z(n, means, np.full(6, 99.0))  # per-instance variance 1
>>> int(np.argmax(np.abs(z))) + 1           # the newest 2 chunks against the rest
2
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import ndtr, ndtri

__all__ = ["SIMULATIONS", "TAIL_COUNT", "null_maxima", "split_z", "glr_p_value", "glr_threshold"]

#: Simulated null windows (fixed seed: the thresholds are the same on every run).  A 0.975 quantile of
#: max |z| is then known to about +-0.015 (one standard error; the one-split case: 2.229 for the exact 2.241).
SIMULATIONS = 100_000
#: Below this tail probability (50 simulated exceedances) the p-value is Bonferroni's bound over the splits.
TAIL_COUNT = 50
_SEED = 20_251_126
_BLOCK = 10_000
#: The tail probabilities at which the null quantiles are kept (interpolated between, in log p).
_TAILS = np.logspace(0.0, np.log10(TAIL_COUNT / SIMULATIONS), 160)


@lru_cache(maxsize=8)
def null_maxima(max_window: int) -> np.ndarray:
    """``(max_window + 1, len(_TAILS))``: per window length ``m``, the null quantiles of ``max_j |z_j|`` at the
    tail probabilities ``_TAILS`` (rows m < 2: zeros).  Simulated once per process (about a second)."""
    rng = np.random.default_rng(_SEED)
    maxima = np.zeros((SIMULATIONS, max_window + 1), dtype=np.float32)
    for a in range(0, SIMULATIONS, _BLOCK):
        e = rng.standard_normal((_BLOCK, max_window))
        for m in range(2, max_window + 1):
            window = e[:, :m]
            total = window.sum(axis=1, keepdims=True)
            newest = np.cumsum(window[:, ::-1], axis=1)[:, :m - 1]  # sums of the newest j = 1 .. m-1
            j = np.arange(1, m)
            z = (newest / j - (total - newest) / (m - j)) / np.sqrt(1.0 / j + 1.0 / (m - j))
            maxima[a:a + _BLOCK, m] = np.abs(z).max(axis=1)
    table = np.quantile(maxima, 1.0 - _TAILS, axis=0).T.astype(np.float64)
    table[:2] = 0.0
    return table


def split_z(n, mean, ss) -> np.ndarray:
    """z of the newest ``j`` chunks against the older ones, ``j = 1 .. m-1``, for chunk sizes ``n``,
    means ``mean`` and within-chunk sums of squared deviations ``ss`` (oldest first)."""
    n, mean, ss = (np.asarray(v, dtype=np.float64) for v in (n, mean, ss))
    m = len(n)
    if m < 2:
        return np.zeros(0)
    df = n.sum() - m
    var = ss.sum() / df if df > 0 else 0.0  # pooled within-chunk variance: a shift between chunks leaves it
    sums = n * mean
    n_new = np.cumsum(n[::-1])[:m - 1]
    s_new = np.cumsum(sums[::-1])[:m - 1]
    n_old, s_old = n.sum() - n_new, sums.sum() - s_new
    diff = s_new / n_new - s_old / n_old
    se = np.sqrt(var * (1.0 / n_new + 1.0 / n_old))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, diff / se, np.where(diff == 0, 0.0, np.inf * np.sign(diff)))
    return z


def glr_p_value(statistic: float, m: int, max_window: int = 32) -> float:
    """P(max_j |z_j| >= statistic) under no change, for a window of ``m`` chunks (2 <= m <= max_window)."""
    quantiles = null_maxima(max_window)[m]  # increasing as the tail probability falls
    if statistic > quantiles[-1]:
        return float(min(1.0, (m - 1) * 2.0 * ndtr(-statistic)))
    if statistic <= quantiles[0]:
        return 1.0
    return float(10 ** np.interp(statistic, quantiles, np.log10(_TAILS)))


def glr_threshold(delta: float, m: int, max_window: int = 32) -> float:
    """The bar ``max_j |z_j|`` must pass for a false alarm of probability ``delta`` at a window of ``m`` chunks."""
    if delta < _TAILS[-1]:  # beyond what the simulation resolves: Bonferroni, as the p-value
        return float(-ndtri(delta / (2.0 * (m - 1))))
    quantiles = null_maxima(max_window)[m]
    return float(np.interp(np.log10(delta), np.log10(_TAILS[::-1]), quantiles[::-1]))
