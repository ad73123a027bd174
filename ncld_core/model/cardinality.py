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

With estimated rates, ``rho_-`` is only bounded above where a label has no anchor
instances (``docs/flip-rates.md``): ``rho_bounds`` turns the interval into the set
of cardinalities consistent with any rates in ``[0, upper]`` and clean prevalences in
[0, 1] (partial identification), widened by the sampling error; the point estimate is
then the sum of the plug-in prevalences cut to [0, 1], biased (measured in ``docs/drift.md``).

>>> import numpy as np
>>> Y = np.array([[1, 0], [1, 1], [0, 0], [1, 0]])
>>> est = moment_cardinality(Y, rho_pos=[0.1, 0.1], rho_neg=[0.2, 0.2])
>>> est.per_instance.round(4).tolist()     # (1-0.2)/0.7 + (0-0.2)/0.7, ...
[0.8571, 2.2857, -0.5714, 0.8571]
>>> round(est.estimate, 4), est.prevalence.round(4).tolist()
(0.8571, [0.7857, 0.0714])
>>> bool(est.low < est.estimate < est.high), est.point_identified
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

__all__ = ["CardinalityEstimate", "moment_cardinality"]


@dataclass(frozen=True)
class CardinalityEstimate:
    """One chunk's cardinality estimate (see the module doc)."""

    estimate: float  # LCard_hat, the mean of per_instance
    se: float  # standard error of estimate - (the chunk's true cardinality)
    low: float  # interval: confidence (rates given) or identified set +- sampling error (rate bounds)
    high: float
    per_instance: np.ndarray  # (N,) c_t, unbiased per instance
    prevalence: np.ndarray  # (q,) clean prevalence per label, unclipped
    point_identified: bool  # False when the interval comes from rate bounds


def _check_rates(rho_pos, rho_neg, q):
    rho_pos = np.broadcast_to(np.asarray(rho_pos, dtype=np.float64), (q,))
    rho_neg = np.broadcast_to(np.asarray(rho_neg, dtype=np.float64), (q,))
    denom = 1.0 - rho_pos - rho_neg
    if np.any(denom <= 0) or np.any(rho_pos < 0) or np.any(rho_neg < 0):
        raise ValueError("flip rates must be >= 0 with rho_pos + rho_neg < 1 for every label")
    return rho_pos, rho_neg, denom


def moment_cardinality(Y01, rho_pos, rho_neg, *, level: float = 0.95, rho_bounds=None) -> CardinalityEstimate:
    """Unbiased chunk cardinality from observed labels ``Y01`` (N, q) in {0, 1} and per-label rates.

    ``rho_bounds=(upper_pos, upper_neg)``: the rates are only known to lie in
    ``[0, upper]``; ``low``/``high`` then bound every cardinality those rates allow,
    widened by the sampling error, ``estimate`` sums the prevalences cut to [0, 1],
    and ``point_identified`` is False.
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
    estimate = float(per_instance.mean())
    if rho_bounds is None:
        # A cardinality lies in [0, q]: cutting the interval there loses no coverage.
        low, high = max(estimate - z * se, 0.0), min(estimate + z * se, float(q))
        return CardinalityEstimate(estimate, se, low, high, per_instance, prevalence, True)
    up_pos, up_neg, _ = _check_rates(*rho_bounds, q)
    # (f - a) / (1 - b - a) is monotone in each rate separately: the extremes over the box are at
    # corners; a clean prevalence lies in [0, 1], so each label's range is cut there before summing.
    corners = np.stack([(freq - a) / (1.0 - b - a) for a in (np.zeros(q), up_neg) for b in (np.zeros(q), up_pos)])
    low = max(float(np.clip(corners.min(axis=0), 0.0, 1.0).sum()) - z * se, 0.0)
    high = min(float(np.clip(corners.max(axis=0), 0.0, 1.0).sum()) + z * se, float(q))
    # Not identified: the plug-in of the estimated rates, each prevalence cut to [0, 1] (which moves
    # every label's estimate towards the truth, itself in [0, 1]); biased, see docs/drift.md.
    estimate = float(np.clip(prevalence, 0.0, 1.0).sum())
    return CardinalityEstimate(estimate, se, low, high, per_instance, prevalence, False)

