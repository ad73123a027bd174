"""Flip rates from the agreement of nearest neighbours' noisy labels (high-order consensus, streaming).

The idea of HOC (Zhu, Song & Liu, ICML 2021, "Clusterability as an alternative to anchor points when
learning with noisy labels"), for one binary label at a time. **Assumption (2-NN clusterability):** an
instance and its two nearest neighbours share their clean label, and each observed label is flipped
independently given its clean one (class-conditional noise, Eq. NR):
``P(y = +1 | g = +1) = 1 - rho_+ =: a`` and ``P(y = +1 | g = -1) = rho_- =: b``.  With ``p`` the share of
clean positives, the observed labels of an instance ``t`` and its neighbours ``u, v`` (in {0, 1}) have the
moments

.. math::  m_1 = E[y_t] = p a + (1-p) b,\\quad m_2 = E[y_t y_u] = p a^2 + (1-p) b^2,\\quad
           m_3 = E[y_t y_u y_v] = p a^3 + (1-p) b^3 .

``a`` and ``b`` are the two roots of ``z^2 - s z + r`` for which ``m_{k+2} = s m_{k+1} - r m_k`` (``m_0 = 1``):

.. math::  s = \\frac{m_3 - m_1 m_2}{m_2 - m_1^2},\\qquad r = s m_1 - m_2,\\qquad
           a, b = \\tfrac{1}{2}\\left(s \\pm \\sqrt{s^2 - 4 r}\\right),\\qquad p = \\frac{m_1 - b}{a - b} .

The moments are sums over the stream (:class:`NeighbourMoments`, sufficient statistics, summed chunk by
chunk with the neighbours found within each chunk).  **The assumption is tested on the data**: the fourth
moment with a third neighbour ``w`` must follow the same recurrence, ``m_4 = s m_3 - r m_2``; a label whose
observed ``m_4`` departs from it by more than ``z`` standard errors, whose neighbours' labels do not agree more
than chance (``m_2 - m_1^2`` within ``z`` standard errors of 0), or whose solution is not a pair of rates
``0 <= b < a <= 1`` with ``0 < p < 1`` (up to :data:`RATE_SLACK`), is reported as *not identified* (``identified_`` False) and its rates
are NaN: the caller falls back to the assumption-free bounds (:mod:`ncld_core.model.flip_rates`).  Where the
neighbours' clean labels disagree the moments mix the two classes and ``a`` comes out too low (``rho_+`` too
high): the fourth-moment check catches part of it, not all; ``python -m benchmarks.rate_estimators`` measures
it against the known rates (docs/rate-estimators.md).

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> g = np.repeat(rng.random(40000) < 0.3, 4)            # clusters of four sharing a clean label
>>> y = np.where(g, rng.random(g.size) < 0.75, rng.random(g.size) < 0.1).astype(float)[:, None]
>>> idx = np.arange(g.size); base = idx - idx % 4
>>> nbrs = np.stack([base + (idx % 4 + k) % 4 for k in (1, 2, 3)], axis=1)   # the other three of the cluster
>>> m = NeighbourMoments().updated(y, nbrs)
>>> [round(float(v), 2) for v in (m.rho_pos_[0], m.rho_neg_[0], m.prior_[0])], bool(m.identified_[0])
([0.25, 0.1, 0.3], True)
>>> shuffled = NeighbourMoments().updated(y, rng.permutation(nbrs))   # neighbours that share nothing
>>> bool(shuffled.identified_[0]), bool(np.isnan(shuffled.rho_pos_[0]))
(False, True)
"""

from __future__ import annotations

import copy

import numpy as np

from ..validation import check_in_range

__all__ = ["NeighbourMoments", "solve_moments", "RATE_SLACK"]

#: A solved rate this far below 0 still counts (sampling error around a rate of 0, as missing labels have for
#: ``rho_-``), clipped to 0.
RATE_SLACK = 0.02


def solve_moments(m1, m2, m3):
    """``(a, b, p)`` of the two-point mixture whose first three moments are ``m1, m2, m3`` (arrays, per label):
    ``a = 1 - rho_+`` and ``b = rho_-`` (the module docstring); NaN where no real solution with ``a > b`` exists.

    >>> [round(float(v), 3) for v in solve_moments(0.3 * 0.8 + 0.7 * 0.1, 0.3 * 0.64 + 0.7 * 0.01,
    ...                                               0.3 * 0.512 + 0.7 * 0.001)]
    [0.8, 0.1, 0.3]
    """
    m1, m2, m3 = (np.asarray(v, dtype=np.float64) for v in (m1, m2, m3))
    with np.errstate(divide="ignore", invalid="ignore"):
        s = (m3 - m1 * m2) / (m2 - m1**2)
        r = s * m1 - m2
        root = np.sqrt(s**2 - 4.0 * r)  # NaN where the discriminant is negative
        a, b = (s + root) / 2.0, (s - root) / 2.0
        p = (m1 - b) / (a - b)
    bad = ~np.isfinite(a) | ~np.isfinite(b) | (a <= b)
    return tuple(np.where(bad, np.nan, v) for v in (a, b, p))


class NeighbourMoments:
    """Per-label flip rates from the moments of nearest neighbours' noisy labels (see the module docstring).

    Parameters
    ----------
    z : float in (0, 10], default 3.0
        Standard errors within which the fourth moment must follow the fitted recurrence, and beyond which the
        neighbours' agreement must exceed chance, for a label's rates to count as identified.
    max_rate : float in (0, 0.5), default 0.49
        A rate above it (or below 0) counts as not identified (Eq. NR's inverse needs ``rho_+ + rho_- < 1``).
    drift_decay : float in [0, 1], default 0.5
        Factor applied to the sums by :meth:`after_drift` (newer chunks count more after a change).

    Attributes
    ----------
    sums_ : array (5, q)
        Summed over the chunks: the rows counted, and the sums of ``y_t``, ``y_t y_u``, ``y_t y_u y_v`` and
        ``y_t y_u y_v y_w`` (``u, v, w`` the row's three nearest neighbours in its chunk).
    rho_pos_, rho_neg_, prior_ : arrays (q,)
        The rates and the clean positive share the moments give (NaN where not identified).
    identified_ : bool array (q,)
        Whether the label's moments passed the checks.
    """

    def __init__(self, z=3.0, max_rate=0.49, drift_decay=0.5):
        self.z = z
        self.max_rate = max_rate
        self.drift_decay = drift_decay

    def _validate(self):
        check_in_range(self.z, "z", 0, 10, low_open=True)
        check_in_range(self.max_rate, "max_rate", 0, 0.5, low_open=True, high_open=True)
        check_in_range(self.drift_decay, "drift_decay", 0, 1)

    def updated(self, Y01, neighbors) -> "NeighbourMoments":
        """A copy with one chunk added: ``Y01`` (N, q) observed labels in {0, 1}; ``neighbors`` (N, >= 3) each
        row's nearest neighbours in the chunk (not itself), nearest first."""
        self._validate()
        Y = np.asarray(Y01, dtype=np.float64)
        nbrs = np.asarray(neighbors)
        if Y.ndim != 2 or not np.isin(Y, (0.0, 1.0)).all():
            raise ValueError(f"Y01 must be a 2-d array of 0/1 labels, got shape {Y.shape}")
        if nbrs.ndim != 2 or nbrs.shape[0] != Y.shape[0] or nbrs.shape[1] < 3:
            raise ValueError(f"neighbors must have shape ({Y.shape[0]}, m >= 3), got {nbrs.shape}")
        if nbrs.min(initial=0) < 0 or nbrs.max(initial=0) >= Y.shape[0]:
            raise ValueError(f"neighbors must index the chunk's {Y.shape[0]} rows")
        u, v, w = (Y[nbrs[:, k]] for k in range(3))
        tu = Y * u
        # m_2 from both nearest pairs (t, u) and (t, v): twice the pairs, the same expectation.
        chunk = np.stack([np.full(Y.shape[1], float(Y.shape[0])), Y.sum(axis=0), ((tu + Y * v) / 2.0).sum(axis=0),
                          (tu * v).sum(axis=0), (tu * v * w).sum(axis=0)])
        new = copy.deepcopy(self)
        old = getattr(self, "sums_", None)
        if old is not None and old.shape != chunk.shape:
            raise ValueError(f"the estimator was fitted on {old.shape[1]} labels, this chunk has {chunk.shape[1]}")
        new.sums_ = chunk if old is None else old + chunk
        new._solve()
        return new

    def after_drift(self) -> "NeighbourMoments":
        """A copy whose sums are down-weighted by ``drift_decay``."""
        new = copy.deepcopy(self)
        if getattr(new, "sums_", None) is not None:
            new.sums_ = new.sums_ * self.drift_decay
            new._solve()
        return new

    def _solve(self):
        n, s1, s2, s3, s4 = self.sums_
        with np.errstate(divide="ignore", invalid="ignore"):
            m1, m2, m3, m4 = s1 / n, s2 / n, s3 / n, s4 / n
            a, b, p = solve_moments(m1, m2, m3)
            s, r = a + b, a * b
            # The checks' standard errors: each moment is a mean of 0/1 products (binomial), m_1^2 by the delta
            # method; the rows are not independent (neighbours share rows), so the errors are optimistic.
            se2 = np.sqrt(m2 * (1 - m2) / n + 4 * m1**2 * m1 * (1 - m1) / n)
            agree = (m2 - m1**2) > self.z * se2
            fourth = np.abs(m4 - (s * m3 - r * m2)) <= self.z * np.sqrt(np.maximum(m4 * (1 - m4), 1.0 / n) / n)
        rho_pos, rho_neg = 1.0 - a, b
        top, slack = self.max_rate, RATE_SLACK
        ok = (agree & fourth & np.isfinite(a) & (rho_pos >= -slack) & (rho_pos <= top) & (rho_neg >= -slack)
              & (rho_neg <= top) & (p > 0) & (p < 1))
        self.identified_ = ok
        self.rho_pos_ = np.where(ok, np.clip(rho_pos, 0.0, top), np.nan)
        self.rho_neg_ = np.where(ok, np.clip(rho_neg, 0.0, top), np.nan)
        self.prior_ = np.where(ok, p, np.nan)
