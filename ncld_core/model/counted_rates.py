"""A chunk's clean cardinality from its noisy labels and the flip rates the trusted rows count.

The trusted rows (rows whose clean labels are revealed, :mod:`ncld_core.model.flip_rates`) count, per label,
the clean positives observed negative and the clean negatives observed positive: direct evidence of the flip
rates ``rho_+^j``, ``rho_-^j``.  The rates describe the annotators, not the labels: they stay when the label
distribution changes (a concept growth, reduction or shift), so these counts, summed over the whole stream,
stay valid after a change, whereas the trusted rows' own labels describe the distribution they were drawn
from.  Per label the clean prevalence of the chunk is then estimated as in
:func:`~ncld_core.model.cardinality.moment_cardinality`::

    p_j = (f_j - a_j) / (1 - a_j - b_j),        estimate = sum_j p_j

``f_j`` the chunk's observed frequency of label ``j`` and ``a_j``, ``b_j`` the posterior means of ``rho_-^j``,
``rho_+^j`` given the counts, under a prior pooled across labels
(:func:`~ncld_core.model.flip_rates.pooled_posterior`: most labels have few trusted positives).  The sum
is not cut per label (each ``p_j`` is unbiased where its rates are right; the estimate is cut to ``[0, q]``
by the caller).

Its standard error has two parts:

* the chunk's own flips, given its clean labels (as in ``moment_cardinality``):
  ``sum_j [p_j b_j (1 - b_j) + (1 - p_j) a_j (1 - a_j)] / (N d_j^2)``, ``d_j = 1 - a_j - b_j``;
* the rates' uncertainty, by the delta method: ``dp_j / da_j = -(1 - p_j) / d_j``, ``dp_j / db_j = p_j / d_j``,
  and each rate's posterior variance, with two terms the posterior alone leaves out.  The prior is estimated
  from the same counts, and a posterior that treats it as known is too sure of the labels it pulls in:
  Morris's (1983) term ``2 / (k - 3) B_j^2 (r_j - m)^2`` is added (``k`` labels with counts, ``B_j = s / (s +
  n_j)`` the weight of the prior mean ``m`` in the label's posterior mean, ``s`` the prior's strength, ``n_j``
  the label's counted rows, ``r_j`` its raw proportion).  And every posterior mean leans on the same ``m``,
  so two labels' errors share ``B_i B_j var(m)``, ``var(m) = m (1 - m) / sum n``: on many labels this shared
  part dominates (a common error of 0.01 in ``rho_-`` moves the cardinality of 150 rare labels by about
  150 x 0.01 / d).

The interval is ``estimate +- z se`` (normal: the rates' part is a sum over labels and the chunk's part over
its rows).  It assumes only what the whole project does (class-conditional flips, the same over the stream)
and that the trusted rows are a random sample of the stream's rows at the time they were drawn; nothing about
the label distribution, so it holds after a change in the chunk after it.  It is wider than the trusted rows'
regression estimate (:func:`~ncld_core.model.cardinality.regression_estimate`), which also uses that the
chunk is drawn like the trusted rows and is the better one while nothing has changed.

>>> import numpy as np
>>> from ncld_core.model.cardinality import regression_estimate
>>> rng = np.random.default_rng(0)
>>> q, rho_pos, rho_neg = 5, np.full(5, 0.3), np.full(5, 0.2)
>>> def draw(n, prevalence):                                  # clean labels and their noisy observation
...     G = (rng.random((n, q)) < prevalence).astype(float)
...     flips = rng.random(G.shape)
...     return G, np.where(G == 1, flips >= rho_pos, flips < rho_neg).astype(float)
>>> G_tr, Y_tr = draw(400, 0.4)                               # 400 trusted rows, cardinality 2
>>> G, Y = draw(500, 0.1)                                     # a chunk after a reduction: cardinality 0.5
>>> counts = np.stack([G_tr.sum(0), (G_tr * (1 - Y_tr)).sum(0), (1 - G_tr).sum(0), ((1 - G_tr) * Y_tr).sum(0)])
>>> est, se, lo, hi = counted_estimate(Y, counts)
>>> bool(lo <= G.sum(1).mean() <= hi)
True
>>> c = lambda Y: ((Y - 0.25) / 0.5).sum(1)                   # moment estimates at rates a little off
>>> _, _, lo, hi = regression_estimate(c(Y), c(Y_tr), G_tr.sum(1))   # pulled back to the trusted rows' 2
>>> bool(lo <= G.sum(1).mean() <= hi)
False
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri

from .flip_rates import pooled_posterior, pooled_prior

__all__ = ["counted_estimate"]


def _rate_variance(successes, trials, derivative) -> tuple[np.ndarray, float]:
    """``(posterior means, variance of sum_j derivative_j * rate_j)`` of one rate's counts: the pooled posterior's
    variances, Morris's term for the estimated prior and the prior mean's covariance between labels (module doc)."""
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    mean, _, _, var = pooled_posterior(k, n)
    m, strength = pooled_prior(k, n)
    lean = strength / (strength + n)  # each label's posterior mean leans on m with this weight
    seen = n > 0
    raw = np.where(seen, k / np.maximum(n, 1.0), m)
    var = var + 2.0 / max(int(seen.sum()) - 3, 1) * lean**2 * (raw - m) ** 2
    var_m = m * (1.0 - m) / max(float(n.sum()), 1.0)
    shared = float((derivative * lean).sum()) ** 2 - float(((derivative * lean) ** 2).sum())
    return mean, float((derivative**2 * var).sum()) + var_m * shared


def counted_estimate(Y01, counts, *, level: float = 0.95):
    """The chunk's mean clean cardinality from its observed labels ``Y01`` (N, q) in {0, 1} and the trusted
    rows' flip counts ``counts`` (4, q), the rows of
    :data:`~ncld_core.model.flip_rates.TRUSTED_COUNTS` (clean positives, of them observed negative, clean
    negatives, of them observed positive).  Returns ``(estimate, se, low, high)`` (not cut to [0, q]);
    the module doc says what it rests on."""
    Y = np.asarray(Y01, dtype=np.float64)
    positives, missed, negatives, added = np.asarray(counts, dtype=np.float64)
    n_rows = Y.shape[0]
    freq = Y.mean(axis=0)
    # The rates first at their posterior means, for p (the derivatives need it), then their variances.
    a = pooled_posterior(added, negatives)[0]
    b = pooled_posterior(missed, positives)[0]
    d = np.maximum(1.0 - a - b, 1e-3)
    prevalence = (freq - a) / d
    p = np.clip(prevalence, 0.0, 1.0)
    _, var_a = _rate_variance(added, negatives, -(1.0 - p) / d)
    _, var_b = _rate_variance(missed, positives, p / d)
    flips = float(((p * b * (1 - b) + (1 - p) * a * (1 - a)) / d**2).sum()) / n_rows
    se = float(np.sqrt(flips + var_a + var_b))
    estimate = float(prevalence.sum())
    half = float(ndtri(0.5 + level / 2.0)) * se
    return estimate, se, estimate - half, estimate + half
