"""FALT and SALT: adaptive label thresholding for online multi-label classification.

T. Zhai, H. Tang, H. Wang, "Adaptive label thresholding methods for online
multi-label classification", arXiv:2112.02301 (2021) (the paper's [Joint] reference).

The published framework (as its abstract states it): the online classifier has a
*scoring* model and a *thresholding* model, both linear and learned together in
one online optimisation problem, with a multi-label loss that measures how well
the classifier separates the relevant labels of an instance from its irrelevant
ones; FALT is the first-order algorithm, SALT the second-order one, both with
closed-form updates.  Only that description could be consulted here, so the
loss and the updates below are **a reconstruction**; every choice is listed.

Model.  Scores ``f_j(x) = w_j . x + b_j`` (j = 1..q) and an instance-dependent
threshold ``t(x) = w_0 . x + b_0``; label ``j`` is predicted relevant when
``m_j(x) = f_j(x) - t(x) > 0``.  ``decision_function`` returns ``m``.
Write ``theta = (W, w_0)`` and ``x~ = (x, 1)`` (the bias as a constant feature).

Loss (reconstruction).  For an instance with observed labels ``y_j`` in {-1, +1},
relevant set ``R`` and irrelevant set ``S``, the two hinges of the worst-placed
labels relative to the threshold are ``l_R = [1 - min_{r in R} m_r(x)]_+`` and
``l_S = [1 + max_{s in S} m_s(x)]_+`` (0 when the set is empty), and::

    loss="sum" (default):  l = l_R + l_S
    loss="max":            l = max(l_R, l_S) = max_j [1 - y_j m_j(x)]_+

Both are convex in ``theta`` and 0 exactly when the threshold separates ``R``
from ``S`` with margin 1 on both sides.  The subgradient has ``-x~`` in column
``r*`` (argmin over ``R``) and ``+x~`` in the threshold column for an active
``l_R``; ``+x~`` in column ``s*`` (argmax over ``S``) and ``-x~`` in the threshold
column for an active ``l_S``; in every case ``||g||^2 = 2 ||x~||^2``.

* "sum": when both hinges are active the threshold parts cancel and the step is a
  pure ranking step (``r*`` up, ``s*`` down); the threshold moves only when one
  side is already right.
* "max": only the larger hinge is used (a tie goes to the relevant side), so every
  step moves the threshold together with one label: down when a relevant label is
  too low, up when an irrelevant label is too high.

Either way the threshold follows a stream whose scores all drift (tested).

FALT (first-order).  A passive-aggressive (PA-I) step on the loss linearised at
the current ``theta`` (the closed-form solution of
``min 1/2 ||theta - theta_t||^2 + C xi  s.t.  l_t + g . (theta - theta_t) <= xi``)::

    theta <- theta - tau g,      tau = min(C, l / ||g||^2)

SALT (second-order).  An adaptive-regularisation (AROW-style, Crammer et al. 2009)
step on the same loss, with a confidence matrix ``Sigma`` (initially ``a I``)::

    v = g^T Sigma g,   alpha = l / (v + r),   theta <- theta - alpha Sigma g,
    Sigma^-1 <- Sigma^-1 + D(g g^T) / r

where ``D`` keeps only part of the rank-one precision update so that ``Sigma``
stays tractable: ``covariance="full"`` keeps one (d+1) x (d+1) block per column
(the block-diagonal part of ``g g^T``; Sherman-Morrison per block,
``Sigma_c <- Sigma_c - Sigma_c x~ x~^T Sigma_c / (r + x~^T Sigma_c x~)`` for each
column ``c`` in the step), ``covariance="diag"`` keeps the diagonal
(``sigma <- sigma - sigma^2 g^2 / (r + sigma g^2)`` entry by entry).
``covariance="auto"`` uses the full blocks while ``(q+1)(d+1)^2`` stays below
``max_full_entries`` and the **diagonal approximation for high-dimensional d**
(e.g. enron, rcv1subset5), the usual practice for AROW on text.

Reconstruction choices, plainly:

* the loss above, hinges with margin 1 on the worst relevant and worst irrelevant
  label against the learned threshold, summed by default; labels in {-1, +1}; ties
  between labels go to the lowest index.  The two forms behave differently under
  the paper's heavy label noise (one run each, enron / rcv1subset5, HL):
  "sum" FALT 0.34 / 0.18, SALT 0.67 / 0.97 (with "sum" under noise both hinges are
  nearly always active, the threshold stays put, and SALT's per-column confidences
  let the label biases drift up); "max" FALT 0.56 / 0.52, SALT 0.32 / 0.47.  On
  noise-free enron "sum" is the better one (HL 0.083 for both, against 0.26 / 0.13);
* FALT's step is PA-I on the linearised loss with ``C = 1``; SALT's is AROW with
  ``r = 1``, ``a = 1`` and the diagonal / block-diagonal confidence described above;
  the paper's own parameter values were not available;
* weights start at 0, so before any update every score and threshold is 0 and
  nothing is predicted;
* raw features (no scaling), bias through a constant feature (``fit_intercept``);
* instances are learned one by one in the order of the chunk; a CSR row is used
  through its indices and values only (O(nnz q) per instance, the chunk is never
  densified).

None of this handles label noise: the observed labels are learned as they are.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(600, 5)); Y = (X[:, :3] > 0.5).astype(int)
>>> falt = FALT()
>>> for start in range(0, 600, 200):
...     falt = falt.partial_fit(X[start:start + 200], Y[start:start + 200])
>>> falt.decision_function(X[:2]).shape, falt.threshold(X[:2]).shape
((2, 3), (2,))
>>> salt = SALT().fit(X, Y)
>>> salt.covariance_mode_, salt.predict(X[:1]).dtype
('full', dtype('int64'))
"""

from __future__ import annotations

import numpy as np

from ...validation import check_in_range
from ._base import OnlineLinearModel, iter_rows

__all__ = ["FALT", "SALT", "threshold_loss"]


def threshold_loss(m, y01, form="sum"):
    """The reconstructed loss on margins ``m = f - t`` (q,): ``(loss, steps)``.

    ``steps`` lists ``(column, coefficient)`` of the subgradient on ``x~``; column
    ``q`` is the threshold model.

    >>> m = np.array([0.5, -2.0, 0.2]); y = np.array([1, 0, 0])
    >>> threshold_loss(m, y, "sum")     # l_R = 1 - 0.5 at r* = 0, l_S = 1 + 0.2 at s* = 2
    (1.7, ((0, -1.0), (2, 1.0)))
    >>> threshold_loss(m, y, "max")     # the larger hinge: s* = 2 down, the threshold up
    (1.2, ((2, 1.0), (3, -1.0)))
    >>> threshold_loss(np.zeros(3), np.array([1, 1, 1]), "sum")   # no irrelevant label
    (1.0, ((0, -1.0), (3, 1.0)))
    """
    q = m.shape[0]
    rel = y01 > 0
    l_rel = l_irr = 0.0
    if rel.any():
        cand = np.flatnonzero(rel)
        r = int(cand[np.argmin(m[cand])])
        l_rel = max(0.0, 1.0 - float(m[r]))
    if not rel.all():
        cand = np.flatnonzero(~rel)
        s = int(cand[np.argmax(m[cand])])
        l_irr = max(0.0, 1.0 + float(m[s]))
    if form == "max" and l_rel > 0 and l_irr > 0:
        if l_rel >= l_irr:
            l_irr = 0.0
        else:
            l_rel = 0.0
    if l_rel > 0 and l_irr > 0:
        return l_rel + l_irr, ((r, -1.0), (s, 1.0))
    if l_rel > 0:
        return l_rel, ((r, -1.0), (q, 1.0))
    if l_irr > 0:
        return l_irr, ((s, 1.0), (q, -1.0))
    return 0.0, ()


def _check_loss(loss):
    if loss not in ("sum", "max"):
        raise ValueError(f"loss must be 'sum' or 'max', got {loss!r}")


class FALT(OnlineLinearModel):
    """First-order adaptive label thresholding (PA-I step on the joint scoring/threshold loss).

    Parameters
    ----------
    C : float > 0, default 1.0
        Aggressiveness: the largest step ``tau``.
    loss : {"sum", "max"}, default "sum"
        How the worst relevant and worst irrelevant hinges combine (module docstring).
    fit_intercept : bool, default True
        Learn biases ``b_j`` and ``b_0`` (through a constant feature 1).

    Attributes
    ----------
    weights_ : ndarray (d, q+1)
        Columns 0..q-1 score the labels, column q is the threshold model.
    bias_ : ndarray (q+1,)
    coef_, intercept_, threshold_coef_, threshold_intercept_ : views of the above
    n_features_in_, n_labels_, n_seen_ : int
    """

    def __init__(self, C=1.0, loss="sum", fit_intercept=True):
        self.C = C
        self.loss = loss
        self.fit_intercept = fit_intercept

    def _validate_params(self):
        self._check_C()
        _check_loss(self.loss)
        self._check_common()

    def _learn(self, state, X, Y01, first):
        W, b = state["weights_"], state["bias_"]
        q = Y01.shape[1]
        C, one = float(self.C), 1.0 if self.fit_intercept else 0.0
        for t, (idx, x) in enumerate(iter_rows(X)):
            raw = (x @ (W if idx is None else W[idx])) + b
            loss, cols = threshold_loss(raw[:q] - raw[q], Y01[t], self.loss)
            if loss <= 0.0:
                continue
            sq = float(x @ x) + one
            if sq <= 0.0:
                continue
            tau = min(C, loss / (2.0 * sq))
            for col, c in cols:  # the subgradient's two columns
                if idx is None:
                    W[:, col] -= tau * c * x
                else:
                    W[idx, col] -= tau * c * x
                b[col] -= tau * c * one
        return state


class SALT(OnlineLinearModel):
    """Second-order adaptive label thresholding (AROW-style step on the joint loss).

    Parameters
    ----------
    r : float > 0, default 1.0
        Regularisation of the confidence update (AROW's ``r``).
    a : float > 0, default 1.0
        Initial confidence ``Sigma = a I``.
    covariance : {"auto", "full", "diag"}, default "auto"
        Block-diagonal full confidence per column, or its diagonal; "auto" picks
        "full" while ``(q+1)(d+1)^2 <= max_full_entries``.
    max_full_entries : int, default 4_000_000
    loss : {"sum", "max"}, default "sum"
        As :class:`FALT`.
    fit_intercept : bool, default True

    Attributes
    ----------
    weights_, bias_ : as :class:`FALT`
    sigma_ : ndarray
        "full": (q+1, d+1, d+1) (the last row/column is the bias);
        "diag": (d+1, q+1) variances (the last row is the bias).
    covariance_mode_ : str
        "full" or "diag".
    """

    _state_names = OnlineLinearModel._state_names + ("sigma_", "covariance_mode_")

    def __init__(self, r=1.0, a=1.0, covariance="auto", max_full_entries=4_000_000, loss="sum",
                 fit_intercept=True):
        self.r = r
        self.a = a
        self.loss = loss
        self.covariance = covariance
        self.max_full_entries = max_full_entries
        self.fit_intercept = fit_intercept

    def _validate_params(self):
        check_in_range(self.r, "r", 0, np.inf, low_open=True, high_open=True)
        check_in_range(self.a, "a", 0, np.inf, low_open=True, high_open=True)
        check_in_range(self.max_full_entries, "max_full_entries", 0, np.inf, integer=True)
        if self.covariance not in ("auto", "full", "diag"):
            raise ValueError(f"covariance must be 'auto', 'full' or 'diag', got {self.covariance!r}")
        _check_loss(self.loss)
        self._check_common()

    def _start(self, X, Y01):
        state = super()._start(X, Y01)
        d, q = X.shape[1], Y01.shape[1]
        mode = self.covariance
        if mode == "auto":
            mode = "full" if (q + 1) * (d + 1) ** 2 <= self.max_full_entries else "diag"
        if mode == "full":
            sigma = np.repeat(self.a * np.eye(d + 1)[None], q + 1, axis=0)
        else:
            sigma = np.full((d + 1, q + 1), float(self.a))
        state.update(sigma_=sigma, covariance_mode_=mode)
        return state

    def _learn(self, state, X, Y01, first):
        if state["covariance_mode_"] == "full":
            self._learn_full(state, X, Y01)
        else:
            self._learn_diag(state, X, Y01)
        return state

    def _learn_diag(self, state, X, Y01):
        W, b, V = state["weights_"], state["bias_"], state["sigma_"]
        q, d = Y01.shape[1], W.shape[0]
        r, one = float(self.r), 1.0 if self.fit_intercept else 0.0
        for t, (idx, x) in enumerate(iter_rows(X)):
            raw = (x @ (W if idx is None else W[idx])) + b
            loss, cols = threshold_loss(raw[:q] - raw[q], Y01[t], self.loss)
            if loss <= 0.0:
                continue
            x2 = x * x
            Vx = V[:d] if idx is None else V[idx]  # variances on the row's features
            v = sum(c * c * (float(x2 @ Vx[:, col]) + one * V[d, col]) for col, c in cols)
            alpha = loss / (v + r)
            for col, c in cols:
                var = Vx[:, col]
                step = alpha * c * var * x
                new_var = var - (var * var * c * c * x2) / (r + var * c * c * x2)
                bvar = V[d, col]
                if idx is None:
                    W[:, col] -= step
                    V[:d, col] = new_var
                else:
                    W[idx, col] -= step
                    V[idx, col] = new_var
                if one:
                    b[col] -= alpha * c * bvar
                    V[d, col] = bvar - (bvar * bvar * c * c) / (r + bvar * c * c)

    def _learn_full(self, state, X, Y01):
        W, b, S = state["weights_"], state["bias_"], state["sigma_"]
        q, d = Y01.shape[1], W.shape[0]
        r, one = float(self.r), 1.0 if self.fit_intercept else 0.0
        xt = np.empty(d + 1)
        for t, (idx, x) in enumerate(iter_rows(X)):
            if idx is None:
                xt[:d] = x
            else:
                xt[:d] = 0.0
                xt[idx] = x
            xt[d] = one
            raw = xt[:d] @ W + b
            loss, cols = threshold_loss(raw[:q] - raw[q], Y01[t], self.loss)
            if loss <= 0.0:
                continue
            Sx = {col: S[col] @ xt for col, _ in cols}
            xSx = {col: float(xt @ Sx[col]) for col, _ in cols}
            v = sum(c * c * xSx[col] for col, c in cols)
            alpha = loss / (v + r)
            for col, c in cols:
                step = alpha * c * Sx[col]
                W[:, col] -= step[:d]
                b[col] -= step[d]
                S[col] -= np.outer(Sx[col], Sx[col]) * (c * c / (r + c * c * xSx[col]))
