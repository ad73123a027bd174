"""OSML-ELM: the online sequential multi-label ELM of Venkatesan, Er et al.

R. Venkatesan, M. J. Er, M. Dave, M. Pratama, S. Wu, "A novel online multi-label
classifier for high-speed streaming data applications", Evolving Systems 8 (2017)
303-315 (the paper's [ELM] reference).

The method is an online sequential ELM (OS-ELM, Liang et al. 2006) whose outputs
are the ``q`` labels in bipolar form: the target of chunk ``i`` is
``T_i = 2 Y_i - 1`` in {-1, +1}, the hidden layer is a random sigmoid layer
``H_i = sigmoid(X_i W + b)`` (:class:`~ncld_core.model.elm.RandomHiddenLayer`), and the
output weights ``beta`` are updated by recursive least squares, chunk by chunk::

    initialisation (chunk 0):  P_0 = (alpha I + H_0^T H_0)^-1,    beta_0 = P_0 H_0^T T_0
    chunk i >= 1:              P_i = P_{i-1} - P_{i-1} H_i^T (I_N + H_i P_{i-1} H_i^T)^-1 H_i P_{i-1}
                               beta_i = beta_{i-1} + P_i H_i^T (T_i - H_i beta_{i-1})

so that ``P_i = (alpha I + sum_k H_k^T H_k)^-1`` and ``beta_i = P_i sum_k H_k^T T_k``:
exactly the batch (ridge) ELM on every chunk seen.  The label scores are
``O = H beta`` and a label is predicted relevant when its score is above 0, the
midpoint of the bipolar targets.

Reconstruction choices (where the published description leaves room):

* **Threshold 0.**  The paper thresholds the raw bipolar outputs; its authors'
  public MATLAB demo predicts ``output > 0`` with targets in {-1, +1}.  We use 0.
* **Ridge term ``alpha``.**  Published OS-ELM has none (``P_0 = (H_0^T H_0)^-1``,
  the demo uses a pseudo-inverse).  We keep a small ridge, ``alpha = 1e-3`` by
  default, so that ``P_0`` exists when ``H_0^T H_0`` is (nearly) singular; it is a
  numerical safeguard, not a tuned regulariser.  ``alpha`` must be > 0.
* **Hidden nodes.**  ``L = 20``, our choice: the ELM-NCLD paper states ``L = 20`` for
  its own method only, and the same ``L`` makes the ELM methods differ only in how
  they fit ``beta``.  The authors' public demo (``online_multilabel.m``) uses 200 nodes
  on yeast, with input weights from U[-1, 1] and hidden biases from U[0, 1]; ours are
  :class:`~ncld_core.model.elm.RandomHiddenLayer`'s.  Sigmoid activation as published.
* **Input scaling** is the project's :class:`~ncld_core.model.elm.RandomHiddenLayer`
  ("auto": rows L2-normalised for sparse input, columns standardised on the first
  chunk for dense input), the same map ELM-NCLD uses, so the ELM methods differ
  only in how they fit ``beta``.
* The published update inverts the N x N matrix ``I_N + H_i P H_i^T``; we apply the
  same update through the push-through identity
  ``P H^T (I_N + H P H^T)^-1 = (I_L + P H^T H)^-1 P H^T``, i.e.
  ``P_i = (I_L + P_{i-1} H_i^T H_i)^-1 P_{i-1}``: identical ``P_i`` and ``beta_i``
  (up to rounding) at O(N L^2 + L^3) instead of O(N^3) per chunk.

No noise handling: the method learns the observed (noisy) labels as they are.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(300, 5)); Y = (X[:, :3] > 0).astype(int)
>>> model = OSMLELM(scaling="l2", random_state=0)   # a stateless input scaling
>>> for start in range(0, 300, 100):
...     model = model.partial_fit(X[start:start + 100], Y[start:start + 100])
>>> model.predict(X[:2]).shape, model.n_seen_
((2, 3), 300)
>>> batch = OSMLELM(scaling="l2", random_state=0).fit(X, Y)   # one chunk: the batch solution
>>> bool(np.allclose(model.coef_, batch.coef_))
True
"""

from __future__ import annotations

import numpy as np

from ...validation import check_in_range
from ...model.elm import RandomHiddenLayer
from ._base import HiddenLayerBaseline

__all__ = ["OSMLELM"]


class OSMLELM(HiddenLayerBaseline):
    """Online sequential multi-label ELM (OS-ELM on bipolar targets, threshold 0).

    Parameters
    ----------
    n_hidden : int, default 20
        ``L``, random sigmoid hidden nodes.
    alpha : float > 0, default 1e-3
        Ridge term of ``P_0`` (a numerical safeguard; published OS-ELM has none).
    scaling : {"auto", "l2", "standard", "none"}, default "auto"
        Input scaling of the hidden layer (see :class:`~ncld_core.model.elm.RandomHiddenLayer`).
    random_state : int or None
        Seed of the hidden layer.

    Attributes
    ----------
    coef_ : ndarray (L, q)
        Output weights ``beta``.
    P_ : ndarray (L, L)
        ``(alpha I + sum H^T H)^-1``.
    hidden_ : RandomHiddenLayer
    n_features_in_, n_labels_, n_seen_ : int
    """

    _state_names = ("hidden_", "P_", "coef_", "n_features_in_", "n_labels_", "n_seen_")

    def __init__(self, n_hidden=20, alpha=1e-3, scaling="auto", random_state=None):
        self.n_hidden = n_hidden
        self.alpha = alpha
        self.scaling = scaling
        self.random_state = random_state

    def _validate_params(self):
        check_in_range(self.n_hidden, "n_hidden", 1, 100_000, integer=True)
        check_in_range(self.alpha, "alpha", 0, np.inf, low_open=True, high_open=True)
        if self.scaling not in ("auto", "l2", "standard", "none"):
            raise ValueError(f"scaling must be 'auto', 'l2', 'standard' or 'none', got {self.scaling!r}")

    def _start(self, X, Y01):
        return {"hidden_": RandomHiddenLayer(self.n_hidden, self.scaling, self.random_state).fit(X)}

    def _learn(self, state, X, Y01, first):
        H = state["hidden_"].transform(X)
        T = 2.0 * Y01 - 1.0
        if first:
            K = self.alpha * np.eye(self.n_hidden) + H.T @ H
            P = np.linalg.inv(K)
            beta = P @ (H.T @ T)
        else:
            P, beta = state["P_"], state["coef_"]
            # P - P H^T (I_N + H P H^T)^-1 H P  ==  (I_L + P H^T H)^-1 P  (push-through identity)
            P = np.linalg.solve(np.eye(self.n_hidden) + P @ (H.T @ H), P)
            beta = beta + P @ (H.T @ (T - H @ beta))
        state["P_"] = 0.5 * (P + P.T)
        state["coef_"] = beta
        return state
