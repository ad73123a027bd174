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

``rho_+`` (missed positives): capped anchor
-------------------------------------------
``rho_+`` is pinned down only by instances whose clean label is positive *with
certainty*, which sparse label sets hardly have.  For the true ``P_D``,
``max_x P_D(y=1|x) <= 1 - rho_+``, so ``1 - max P_D`` is an *upper bound* of ``rho_+``;
the estimator takes it at a robust quantile (``1 -`` the ``1 - quantile`` quantile of the
model's ``P_D`` over the chunk, averaged over chunks).  On a rare label the bound is
loose (``P_D`` never nears 1) and reaches ``max_rate``; an overstated ``rho_+``
shrinks ``1 - rho_+ - rho_-`` in the importance weights and inflates every error of
``rho_-``.  With ``positive_cap=True`` (default) ``rho_+`` is therefore also capped at
``rho_-``: where the data cannot bound it, the noise is taken as symmetric.

Both estimates are clipped to ``[0, max_rate]`` (``max_rate < 1/2`` keeps
``rho_+ + rho_- < 1``, the condition of Eq. (NR)'s inverse).  A detected drift
changes the label distribution, not the annotators' noise: the estimates are kept,
the accumulated counts are down-weighted by ``drift_decay``, so that newer chunks
count more.

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
from scipy.special import gammaln, xlogy

from ..validation import check_in_range

__all__ = ["FlipRateEstimator", "binomial_mixture_em", "estimate_errors"]


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
    quantile : float in (0, 0.5), default 0.01
        ``rho_+`` bound of a chunk: ``1 -`` the ``(1 - quantile)`` quantile of ``P_D``.
    positive_cap : bool, default True
        Cap ``rho_+`` at ``rho_-`` (symmetric noise where the bound says nothing).
    negative_anchor : {"low-score", "mixture"}, default "low-score"
        ``"mixture"``: the low rate of a two-binomial mixture fitted to the counts of
        observed positives in each instance's neighbourhood (the previous estimator, kept
        for comparison; see :func:`binomial_mixture_em`).
    max_rate : float in (0, 0.5), default 0.49
        Upper clip of both rates.
    drift_decay : float in [0, 1], default 0.5
        Factor applied to the accumulated counts by :meth:`after_drift`.

    Attributes
    ----------
    rho_pos_, rho_neg_ : arrays (q,)
        The current estimates.
    low_positives_, low_count_ : array (q,), float
        Observed positives in the anchor sets and the sets' total size (summed over chunks).
    n_chunks_ : int
        Chunks seen.
    """

    def __init__(self, anchor_fraction=0.3, n_neighbors=10, quantile=0.01, positive_cap=True,
                 negative_anchor="low-score", max_rate=0.49, drift_decay=0.5):
        self.anchor_fraction = anchor_fraction
        self.n_neighbors = n_neighbors
        self.quantile = quantile
        self.positive_cap = positive_cap
        self.negative_anchor = negative_anchor
        self.max_rate = max_rate
        self.drift_decay = drift_decay

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

    # ------------------------------------------------------------------ one chunk
    def updated(self, P, Y01, neighbors, scores=None) -> "FlipRateEstimator":
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
        new = copy.deepcopy(self)
        # A graph with fewer neighbours than n_neighbors: use all it has.
        new._learn(P, Y, nbrs[:, : self.n_neighbors], scores)
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
            rho_neg = self.mix_rates_[:, 0]
        else:
            rho_neg = self.low_positives_ / self.low_count_
        self.rho_neg_ = np.clip(rho_neg, 0.0, self.max_rate)
        # --- rho_+: the bound 1 - max P_D (a robust quantile), averaged over chunks, capped.
        self.anchor_sum_ = self.anchor_sum_ + (1.0 - np.quantile(P, 1.0 - self.quantile, axis=0))
        self.anchor_weight_ += 1.0
        rho_pos = self.anchor_sum_ / self.anchor_weight_
        if self.positive_cap:
            rho_pos = np.minimum(rho_pos, self.rho_neg_)
        self.rho_pos_ = np.clip(rho_pos, 0.0, self.max_rate)
        self.n_chunks_ += 1

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

    def after_drift(self) -> "FlipRateEstimator":
        """A copy with the accumulated counts down-weighted by ``drift_decay`` (estimates kept)."""
        new = copy.deepcopy(self)
        if getattr(new, "low_count_", None) is not None:
            new.low_positives_ = new.low_positives_ * self.drift_decay
            new.low_count_ = new.low_count_ * self.drift_decay
            new.anchor_sum_ = new.anchor_sum_ * self.drift_decay
            new.anchor_weight_ = new.anchor_weight_ * self.drift_decay
            if getattr(new, "hist_", None) is not None:
                new.hist_ = new.hist_ * self.drift_decay
        return new


def estimate_errors(chunks, model: str, rho_pos=None, rho_neg=None):
    """Estimated rates of ``model`` over a run, against the truth when known.

    Parameters
    ----------
    chunks : list of :class:`~ncld_core.eval.runner.ChunkResult`
    model : str
        A variant that estimated its rates (its records hold ``rho_pos_est`` / ``rho_neg_est``).
    rho_pos, rho_neg : arrays (q,), optional
        The stream's true rates.

    Returns
    -------
    over_time : DataFrame
        One row per chunk: ``chunk``, the mean estimates and, with the truth, ``mae_rho_pos``,
        ``mae_rho_neg`` (mean absolute error over labels).
    per_label : DataFrame
        The newest estimates per label (with the truth and the absolute errors when known).
    """
    import pandas as pd

    rows, last = [], None
    for c in chunks:
        record = c.diagnostics.get(model)
        if record is None or not record.estimates_rates:
            continue
        pos, neg = np.asarray(record.rho_pos_est), np.asarray(record.rho_neg_est)
        row = {"chunk": c.chunk, "mean_rho_pos": pos.mean(), "mean_rho_neg": neg.mean()}
        if rho_pos is not None:
            row["mae_rho_pos"] = float(np.abs(pos - rho_pos).mean())
            row["mae_rho_neg"] = float(np.abs(neg - rho_neg).mean())
        rows.append(row)
        last = (pos, neg)
    over_time = pd.DataFrame(rows)
    if last is None:
        return over_time, pd.DataFrame()
    per_label = pd.DataFrame({"label": np.arange(last[0].size), "rho_pos estimated": last[0],
                              "rho_neg estimated": last[1]})
    if rho_pos is not None:
        per_label["rho_pos true"], per_label["rho_neg true"] = rho_pos, rho_neg
        per_label["|error| rho_pos"] = np.abs(last[0] - rho_pos)
        per_label["|error| rho_neg"] = np.abs(last[1] - rho_neg)
    return over_time, per_label
