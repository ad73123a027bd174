"""PAML-I and PAML-II: online passive-aggressive multi-label classification.

T. Zhai, H. Wang, "Online passive-aggressive multilabel classification
algorithms", IEEE Transactions on Neural Networks and Learning Systems 34(12)
(2023) 10116-10129 (the paper's [MOPAL] reference).

The published method (as its abstract states it): a family of online multi-label
classifiers whose updates are the closed-form solutions of a constrained
optimisation problem per round (passive-aggressive, Crammer et al. 2006), with
label correlation modelled explicitly in that problem and a label thresholding
function that is also learned online.  Only that description could be consulted
here, so the losses and updates below are **a reconstruction**; every choice is
listed.

Model.  Linear scores ``f_j(x) = w_j . x + b_j`` and a linear threshold
``t(x) = w_0 . x + b_0``; ``decision_function`` is ``f(x) - t(x)`` (> 0: relevant).
``x~ = (x, 1)`` carries the biases.

1. Ranking step (the joint multi-label hinge over label pairs: the "label
   correlation" of the PA problem).  With ``r* = argmin_{r in R} f_r`` and
   ``s* = argmax_{s in S} f_s`` (observed relevant / irrelevant sets, both
   non-empty)::

       l = [1 - (f_r*(x) - f_s*(x))]_+
       PA-I:   min 1/2 ||W - W_t||^2 + C xi,    s.t.  f_r*(x) - f_s*(x) >= 1 - xi, xi >= 0
       PA-II:  min 1/2 ||W - W_t||^2 + C xi^2,  s.t.  f_r*(x) - f_s*(x) >= 1 - xi
       w_r* += tau x~,   w_s* -= tau x~,
       tau_I = min(C, l / ||g||^2),   tau_II = l / (||g||^2 + 1/(2C)),   ||g||^2 = 2 ||x~||^2

   (the constraint's gradient has ``+x~`` and ``-x~`` in two columns, hence the 2).
   An instance with no relevant or no irrelevant label has no pair and no ranking step.

2. Threshold step (PA regression of the threshold model, after step 1).  The
   threshold of this instance is right when it separates the updated scores with
   margin: ``t(x)`` in ``I = [max_S f + 1/2, min_R f - 1/2]``, the middle of the
   ranking margin, non-empty exactly when the ranking hinge is 0 (the midpoint of
   ``max_S f`` and ``min_R f`` when it is empty; ``[max f + 1/2, inf)`` if ``R`` is
   empty, ``(-inf, min f - 1/2]`` if ``S`` is empty).  The loss is the
   distance to ``I`` (an epsilon-insensitive regression loss: passive inside ``I``)::

       l_t = dist(t(x), I),   w_0 += sign(I - t(x)) tau_t x~,
       tau_t,I = min(C, l_t / ||x~||^2),   tau_t,II = l_t / (||x~||^2 + 1/(2C))

Reconstruction choices, plainly:

* the joint pairwise hinge on the worst pair (not per-label binary models), so
  ``||g||^2 = 2 ||x~||^2`` in the ranking step; the plain PA formulas
  ``min(C, l / ||x~||^2)`` and ``l / (||x~||^2 + 1/(2C))`` hold for the threshold step;
* a threshold learned separately, by PA regression towards the separating interval
  ``I`` (half the ranking margin on each side), in the spirit of threshold learning by
  regression (Elisseeff & Weston 2001); a midpoint target without the interval
  (epsilon = 0) tracked the last instance too closely (micro-F1 about 0.80
  instead of 0.90-0.93 on the separable streams of the tests);
* ``C = 1`` for both variants (the paper's values were not available);
* weights start at 0; raw features, bias via a constant feature; instances in
  chunk order, CSR rows kept sparse (O(nnz q) per instance).

No noise handling: the observed labels are learned as they are.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(600, 5)); Y = (X[:, :3] > 0.5).astype(int)
>>> model = PAMLI(C=1.0)
>>> for start in range(0, 600, 200):
...     model = model.partial_fit(X[start:start + 200], Y[start:start + 200])
>>> model.predict(X[:2]).shape
(2, 3)
>>> PAMLII().fit(X, Y).decision_function(X[:1]).shape
(1, 3)
"""

from __future__ import annotations

import numpy as np

from ._base import OnlineLinearModel, iter_rows

__all__ = ["PAMLI", "PAMLII", "pa_step", "threshold_interval"]


def threshold_interval(f, rel, has_rel=None, has_irr=None):
    """Thresholds that separate the scores ``f`` of relevant (``rel``) and irrelevant labels with margin.

    ``[max_S f + 1/2, min_R f - 1/2]`` (non-empty exactly when the ranking hinge
    holds), else the midpoint of ``min_R f`` and ``max_S f``; one-sided when ``R``
    or ``S`` is empty.

    >>> threshold_interval(np.array([3.0, -1.0, 0.5]), np.array([True, False, False]))
    (1.0, 2.5)
    >>> threshold_interval(np.array([0.2, 0.0]), np.array([True, False]))
    (0.1, 0.1)
    >>> threshold_interval(np.array([0.2, 0.0]), np.array([False, False]))
    (0.7, inf)
    """
    has_rel = bool(rel.any()) if has_rel is None else has_rel
    has_irr = (not bool(rel.all())) if has_irr is None else has_irr
    if has_rel and has_irr:
        top_irr, low_rel = float(f[~rel].max()), float(f[rel].min())
        lo, hi = top_irr + 0.5, low_rel - 0.5
        if lo > hi:
            lo = hi = 0.5 * (top_irr + low_rel)
        return lo, hi
    if has_rel:
        return -np.inf, float(f.min()) - 0.5
    return float(f.max()) + 0.5, np.inf


def pa_step(loss: float, sq_norm: float, C: float, variant: str) -> float:
    """Passive-aggressive step size: PA-I ``min(C, l/||g||^2)``, PA-II ``l/(||g||^2 + 1/(2C))``.

    >>> pa_step(3.0, 2.0, 1.0, "I"), pa_step(3.0, 2.0, 1.0, "II")
    (1.0, 1.2)
    """
    if loss <= 0.0:
        return 0.0
    if variant == "I":
        return min(C, loss / sq_norm) if sq_norm > 0 else C
    return loss / (sq_norm + 1.0 / (2.0 * C))


class _PAML(OnlineLinearModel):
    _variant = "I"

    def __init__(self, C=1.0, fit_intercept=True):
        self.C = C
        self.fit_intercept = fit_intercept

    def _validate_params(self):
        self._check_C()
        self._check_common()

    def _learn(self, state, X, Y01, first):
        W, b = state["weights_"], state["bias_"]
        q = Y01.shape[1]
        C, one, variant = float(self.C), 1.0 if self.fit_intercept else 0.0, self._variant
        for t, (idx, x) in enumerate(iter_rows(X)):
            raw = (x @ (W if idx is None else W[idx])) + b
            f = raw[:q].copy()
            rel = Y01[t] > 0
            has_rel, has_irr = bool(rel.any()), not bool(rel.all())
            sq = float(x @ x) + one
            # 1. ranking step on the worst (relevant, irrelevant) pair
            if has_rel and has_irr:
                cand_r, cand_s = np.flatnonzero(rel), np.flatnonzero(~rel)
                r = int(cand_r[np.argmin(f[cand_r])])
                s = int(cand_s[np.argmax(f[cand_s])])
                loss = max(0.0, 1.0 - (f[r] - f[s]))
                tau = pa_step(loss, 2.0 * sq, C, variant)
                if tau > 0.0:
                    if idx is None:
                        W[:, r] += tau * x
                        W[:, s] -= tau * x
                    else:
                        W[idx, r] += tau * x
                        W[idx, s] -= tau * x
                    b[r] += tau * one
                    b[s] -= tau * one
                    f[r] += tau * sq
                    f[s] -= tau * sq
            # 2. threshold step: PA regression towards the separating threshold
            lo, hi = threshold_interval(f, rel, has_rel, has_irr)
            thr = raw[q]
            diff = lo - thr if thr < lo else (hi - thr if thr > hi else 0.0)
            tau_t = pa_step(abs(diff), sq, C, variant)
            if tau_t > 0.0:
                step = np.copysign(tau_t, diff)
                if idx is None:
                    W[:, q] += step * x
                else:
                    W[idx, q] += step * x
                b[q] += step * one
        return state


class PAMLI(_PAML):
    """PAML-I: passive-aggressive multi-label classifier with the PA-I (hinge, bounded) step.

    Parameters
    ----------
    C : float > 0, default 1.0
        Aggressiveness: the largest step.
    fit_intercept : bool, default True

    Attributes
    ----------
    weights_ : ndarray (d, q+1)
        Columns 0..q-1 score the labels, column q is the threshold model.
    bias_ : ndarray (q+1,)
    coef_, intercept_, threshold_coef_, threshold_intercept_ : views of the above
    n_features_in_, n_labels_, n_seen_ : int
    """

    _variant = "I"


class PAMLII(_PAML):
    """PAML-II: passive-aggressive multi-label classifier with the PA-II (squared slack) step.

    Parameters and attributes as :class:`PAMLI`.
    """

    _variant = "II"
