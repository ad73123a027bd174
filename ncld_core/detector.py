"""Drift detection on the unbiased label cardinality (Eq. card, Eq. Hfd).

Chunk ``i`` is flagged when ``|LCard_hat(D_i) - LCard_hat(D_{i-1})| > eps_i`` with the
Hoeffding threshold::

    eps_i = R_i sqrt(ln(2 / delta) / (2 N_i)),   R_i = max_t LCard_hat(x_t) - min_t LCard_hat(x_t)

(the paper's Prop. 4; ``R_i`` is the observed range of the per-instance
estimates, standing in for the unknown bounds).  ``delta`` is the tolerated
probability of a false alarm per comparison under Hoeffding's assumptions.

>>> import numpy as np
>>> det = HoeffdingCardinalityDetector(delta=0.05)
>>> det.update(np.array([1.0, 1.0, 2.0, 1.0])).fired      # first chunk: nothing to compare
False
>>> r = det.update(np.array([3.0, 3.0, 4.0, 3.0]))
>>> r.fired, round(r.difference, 3), round(r.threshold, 3)
(True, 2.0, 0.679)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validation import check_in_range

__all__ = ["HoeffdingCardinalityDetector", "DetectorResult"]


@dataclass(frozen=True)
class DetectorResult:
    estimate: float  # LCard_hat(D_i)
    range: float  # R_i
    threshold: float  # eps_i
    difference: float  # |LCard_hat(D_i) - LCard_hat(D_{i-1})|, NaN for the first chunk
    fired: bool


class HoeffdingCardinalityDetector:
    """Compare adjacent chunks' unbiased cardinality against the Hoeffding bound (Eq. Hfd)."""

    def __init__(self, delta: float = 0.05):
        check_in_range(delta, "delta", 0, 1, low_open=True, high_open=True)
        self.delta = delta
        self.previous_ = None

    def threshold(self, value_range: float, n: int) -> float:
        return value_range * math.sqrt(math.log(2.0 / self.delta) / (2.0 * n))

    def peek(self, per_instance: np.ndarray) -> DetectorResult:
        """The result for a chunk without recording it (lets a caller validate first)."""
        estimate = float(np.mean(per_instance))
        value_range = float(np.max(per_instance) - np.min(per_instance))
        eps = self.threshold(value_range, len(per_instance))
        if self.previous_ is None:
            return DetectorResult(estimate, value_range, eps, float("nan"), False)
        diff = abs(estimate - self.previous_)
        return DetectorResult(estimate, value_range, eps, diff, diff > eps)

    def record(self, result: DetectorResult) -> None:
        """Keep a peeked chunk's estimate as the one the next chunk is compared with."""
        self.previous_ = result.estimate

    def update(self, per_instance: np.ndarray) -> DetectorResult:
        """:meth:`peek`, then :meth:`record`."""
        result = self.peek(per_instance)
        self.record(result)
        return result
