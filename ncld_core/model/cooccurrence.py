"""Flip rates from label co-occurrence and small-loss sample selection (streaming).

The idea of Li, Xia, Zhang, Zhan, Ge & Liu (NeurIPS 2022, "Estimating noise transition matrix with label
correlations for noisy multi-label learning"), made streaming, for one binary label ``k`` at a time with the
help of a *partner* label ``j``.  Write ``y`` for a clean label and ``y~`` for the observed one.  **Assumptions:**
(i) class-conditional noise flipped independently across labels (Eq. NR): given its clean label ``y_k``, the
observed ``y~_k`` is independent of everything else, in particular of ``y~_j``; (ii) the rows the caller
*selects* for label ``k`` (the small-loss rows: those the model fits best, :func:`small_loss_selection`) carry
its clean label, and among them the partner's observed label depends on ``y_k`` as it does in the whole stream;
(iii) the partner's observed label depends on ``y_k`` at all (the labels co-occur).  Then with
``r_b = P(y~_j = 1 | y_k = b)`` (counted on the selected rows) and ``P(y~_j = 1 | y~_k = e)`` (counted on every
row), (i) gives ``P(y~_j = 1 | y~_k = e) = w_e r_1 + (1 - w_e) r_0`` with ``w_e = P(y_k = 1 | y~_k = e)``, so

.. math::  w_e = \\frac{P(\\tilde y_j = 1 \\mid \\tilde y_k = e) - r_0}{r_1 - r_0},\\qquad
           \\pi = w_1 m + w_0 (1 - m),\\qquad \\rho_+ = 1 - \\frac{w_1 m}{\\pi},\\qquad
           \\rho_- = \\frac{(1 - w_1) m}{1 - \\pi},

``m = P(y~_k = 1)`` and ``pi = P(y_k = 1)``: the mismatch between the noisy and the clean co-occurrence
identifies the rates, the 2 x 2 system ``P(y~_j, y~_k) = R diag(1 - pi, pi) T_k`` with ``R = P(y~_j | y_k)``
inverted; its determinant is ``r_1 - r_0``.  Each partner whose ``r_1 - r_0`` is more than ``z`` standard
errors from 0 gives ``(w_0, w_1)``; they are pooled with weights ``z_j^2``.

The counts are sums over the stream (:class:`CooccurrenceRates`, sufficient statistics: ``q x q`` pair counts, no
stored rows).  **The assumption is tested on the data** where it can be: a label with no partner passing the
determinant's test (iii fails: nothing co-occurs enough to tell), too few selected rows of either class, or a solution
that is not a pair of rates in ``[0, max_rate]`` with ``0 < pi < 1`` (up to :data:`RATE_SLACK`), is *not identified*
(``identified_`` False, rates NaN): a caller then has only the assumption-free bounds
(:mod:`ncld_core.model.flip_rates`). No model uses this estimator yet.  Assumption (ii) cannot be checked without
clean labels: where the selected rows are not clean (their noisy labels flipped) or not representative, the rates come
out biased and the checks pass; ``python -m benchmarks.rate_estimators`` measures it against the known rates
(docs/rate-estimators.md).

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> g1 = rng.random(40000) < 0.3                                   # label 1's clean label
>>> g0 = np.where(g1, rng.random(g1.size) < 0.8, rng.random(g1.size) < 0.1)   # label 0 co-occurs with it
>>> G = np.stack([g0, g1], axis=1)
>>> Y = np.where(G, rng.random(G.shape) < 0.75, rng.random(G.shape) < 0.1)    # rho_+ 0.25, rho_- 0.1
>>> sel = rng.random(G.shape) < 0.2                               # rows whose clean label is known
>>> est = CooccurrenceRates().updated(Y, sel, clean=G)
>>> [round(float(v), 2) for v in (est.rho_pos_[1], est.rho_neg_[1], est.prior_[1])], bool(est.identified_[1])
([0.25, 0.1, 0.3], True)
>>> G[:, 0] = Y[:, 0] = rng.random(g1.size) < 0.3                   # a partner unrelated to label 1
>>> alone = CooccurrenceRates().updated(Y, sel, clean=G)
>>> bool(alone.identified_[1]), bool(np.isnan(alone.rho_pos_[1]))
(False, True)
"""

from __future__ import annotations

import copy

import numpy as np

from ..validation import check_in_range

__all__ = ["CooccurrenceRates", "small_loss_selection", "RATE_SLACK"]

#: A solved rate this far below 0 still counts (sampling error around a rate of 0), clipped to 0.
RATE_SLACK = 0.02


def small_loss_selection(Y01, proba, keep=0.5):
    """The small-loss rows per label: a bool (N, q) array, True for the ``keep`` share of the rows with observed
    label 1 whose ``proba`` is highest and the same share of the rows with observed label 0 whose ``proba`` is
    lowest (the squared loss ``(proba - y)^2`` smallest, per observed class so that a rare class keeps rows).

    ``proba`` (N, q) is a model's probability of an observed 1, fitted on the noisy labels (the rows it fits with
    small loss are taken as clean: assumption (ii) of the module docstring).

    >>> small_loss_selection(np.array([[1], [1], [0], [0]]), np.array([[0.9], [0.2], [0.1], [0.6]])).ravel().tolist()
    [True, False, True, False]
    """
    check_in_range(keep, "keep", 0, 1, low_open=True)
    Y = np.asarray(Y01, dtype=np.float64)
    P = np.asarray(proba, dtype=np.float64)
    if Y.ndim != 2 or P.shape != Y.shape:
        raise ValueError(f"proba must have the labels' shape {Y.shape}, got {P.shape}")
    loss = (P - Y) ** 2
    selected = np.zeros(Y.shape, dtype=bool)
    for cls in (0.0, 1.0):
        mask = Y == cls
        n_keep = np.ceil(keep * mask.sum(axis=0)).astype(int)  # per label
        order = np.argsort(np.where(mask, loss, np.inf), axis=0, kind="stable")
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.arange(Y.shape[0])[:, None], axis=0)
        selected |= mask & (rank < n_keep)
    return selected


class CooccurrenceRates:
    """Per-label flip rates from the co-occurrence of noisy and selected-clean labels (the module docstring).

    Parameters
    ----------
    z : float in (0, 10], default 3.0
        Standard errors by which a partner's ``r_1 - r_0`` must differ from 0 for it to count.
    min_selected : int >= 1, default 20
        Selected rows of each class a label needs before it can be identified.
    max_rate : float in (0, 0.5), default 0.49
        A rate above it (or below 0) counts as not identified (Eq. NR's inverse needs ``rho_+ + rho_- < 1``).
    drift_decay : float in [0, 1], default 0.5
        Factor applied to the counts by :meth:`after_drift` (newer chunks count more after a change).

    Attributes
    ----------
    n_ : float
        The rows counted.
    pairs_ : array (q, q)
        ``sum y~_j y~_k`` over the rows (the diagonal: ``sum y~_k``).
    selected_pairs_ : array (2, q, q)
        ``[b, j, k]``: ``sum y~_j`` over the rows selected for ``k`` with clean label ``y_k = b``.
    selected_ : array (2, q)
        ``[b, k]``: the rows selected for ``k`` with clean label ``b``.
    rho_pos_, rho_neg_, prior_ : arrays (q,)
        The rates and the clean positive share (NaN where not identified).
    strength_ : array (q,)
        The best partner's ``|r_1 - r_0|`` in standard errors (0 where no partner).
    partners_ : int array (q,)
        The partners that passed the test and were pooled.
    identified_ : bool array (q,)
        Whether the label passed the checks.
    """

    def __init__(self, z=3.0, min_selected=20, max_rate=0.49, drift_decay=0.5):
        self.z = z
        self.min_selected = min_selected
        self.max_rate = max_rate
        self.drift_decay = drift_decay

    def _validate(self):
        check_in_range(self.z, "z", 0, 10, low_open=True)
        check_in_range(self.min_selected, "min_selected", 1, np.inf, integer=True)
        check_in_range(self.max_rate, "max_rate", 0, 0.5, low_open=True, high_open=True)
        check_in_range(self.drift_decay, "drift_decay", 0, 1)

    def updated(self, Y01, selected, clean=None) -> "CooccurrenceRates":
        """A copy with one chunk added: ``Y01`` (N, q) observed labels in {0, 1}; ``selected`` (N, q) bool, the
        rows taken as clean for each label (:func:`small_loss_selection`); ``clean`` (N, q) their labels in
        {0, 1} (default: the observed ones, as small-loss selection takes them)."""
        self._validate()
        Y = np.asarray(Y01, dtype=np.float64)
        if Y.ndim != 2 or not np.isin(Y, (0.0, 1.0)).all():
            raise ValueError(f"Y01 must be a 2-d array of 0/1 labels, got shape {Y.shape}")
        S = np.asarray(selected)
        if S.shape != Y.shape or S.dtype != bool:
            raise ValueError(f"selected must be a bool array of shape {Y.shape}, got {S.dtype} {S.shape}")
        C = Y if clean is None else np.asarray(clean, dtype=np.float64)
        if C.shape != Y.shape or not np.isin(C, (0.0, 1.0)).all():
            raise ValueError(f"clean must be an array of 0/1 labels of shape {Y.shape}")
        old = getattr(self, "pairs_", None)
        if old is not None and old.shape[0] != Y.shape[1]:
            raise ValueError(f"the estimator was fitted on {old.shape[0]} labels, this chunk has {Y.shape[1]}")
        pos, neg = S * C, S * (1.0 - C)
        chunk = (float(Y.shape[0]), Y.T @ Y, np.stack([Y.T @ neg, Y.T @ pos]), np.stack([neg.sum(0), pos.sum(0)]))
        new = copy.deepcopy(self)
        if old is None:
            new.n_, new.pairs_, new.selected_pairs_, new.selected_ = chunk
        else:
            new.n_, new.pairs_ = self.n_ + chunk[0], self.pairs_ + chunk[1]
            new.selected_pairs_, new.selected_ = self.selected_pairs_ + chunk[2], self.selected_ + chunk[3]
        new._solve()
        return new

    def after_drift(self) -> "CooccurrenceRates":
        """A copy whose counts are down-weighted by ``drift_decay``."""
        new = copy.deepcopy(self)
        if getattr(new, "pairs_", None) is not None:
            d = self.drift_decay
            new.n_, new.pairs_ = new.n_ * d, new.pairs_ * d
            new.selected_pairs_, new.selected_ = new.selected_pairs_ * d, new.selected_ * d
            new._solve()
        return new

    def _solve(self):
        n, pairs = self.n_, self.pairs_
        q = pairs.shape[0]
        noisy = np.diag(pairs)  # sum y~_k
        with np.errstate(divide="ignore", invalid="ignore"):
            # [j, k]: r_b = P(y~_j = 1 | y_k = b) on the rows selected for k
            r0 = self.selected_pairs_[0] / self.selected_[0][None, :]
            r1 = self.selected_pairs_[1] / self.selected_[1][None, :]
            se = np.sqrt(r0 * (1 - r0) / self.selected_[0][None, :] + r1 * (1 - r1) / self.selected_[1][None, :])
            strength = np.abs(r1 - r0) / np.maximum(se, 1e-12)
            strength[~np.isfinite(strength)] = 0.0
            strength[np.arange(q), np.arange(q)] = 0.0  # a label is not its own partner
            # P(y~_j = 1 | y~_k = e), e = 1 and 0, on every row
            given1 = pairs / noisy[None, :]
            given0 = (noisy[:, None] - pairs) / (n - noisy)[None, :]
            w1, w0 = (given1 - r0) / (r1 - r0), (given0 - r0) / (r1 - r0)
        usable = strength > self.z
        weight = np.where(usable, strength**2, 0.0)
        total = weight.sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            w1 = (np.where(usable, w1, 0.0) * weight).sum(axis=0) / total
            w0 = (np.where(usable, w0, 0.0) * weight).sum(axis=0) / total
            m = noisy / n
            prior = w1 * m + w0 * (1 - m)
            rho_pos = 1.0 - w1 * m / prior
            rho_neg = (1.0 - w1) * m / (1.0 - prior)
        top, slack = self.max_rate, RATE_SLACK
        enough = (self.selected_ >= self.min_selected).all(axis=0)
        ok = (enough & (total > 0) & np.isfinite(rho_pos) & np.isfinite(rho_neg) & (rho_pos >= -slack)
              & (rho_pos <= top) & (rho_neg >= -slack) & (rho_neg <= top) & (prior > 0) & (prior < 1))
        self.strength_ = strength.max(axis=0) if q > 1 else np.zeros(q)
        self.partners_ = usable.sum(axis=0)
        self.identified_ = ok
        self.rho_pos_ = np.where(ok, np.clip(rho_pos, 0.0, top), np.nan)
        self.rho_neg_ = np.where(ok, np.clip(rho_neg, 0.0, top), np.nan)
        self.prior_ = np.where(ok, prior, np.nan)
