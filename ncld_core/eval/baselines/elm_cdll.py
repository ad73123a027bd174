"""ELM-CDLL: ELM label scoring plus label ranking with the fixed threshold 0 (a reconstruction).

The ELM-NCLD paper compares against ELM-CDLL, its reference [RELM]: an online
ELM multi-label classifier that "integrates the label ranking information and
the label scoring information", where the ranking term gives a good order of the
labels and the scoring term makes the fixed threshold 0 reasonable.  The paper
gives no equations for it; this module **reconstructs it from that description**
as ELM-NCLD's objective (Eq. N3) without the feature-graph term and with the
plain, unweighted ranking loss of Eq. (RL) (``f(x) = -x``), i.e. ELM-NCLD with
``beta = 1`` and every importance weight equal to 1::

    min_Phi  sum_i 1/2 ||H_i Phi - Y_i||^2 + gamma Tr(A_i^T H_i Phi) + alpha/2 ||Phi||^2,
    A_tj = sum_k (y_tk - y_tj) / 2          (labels in {-1, +1}; NOTES §3 with w = 1)

Its exact solution after chunks ``0..i`` comes from running sufficient statistics::

    K = alpha I + sum_i H_i^T H_i,     B = sum_i H_i^T (Y_i - gamma A_i),     Phi = K^-1 B

(one L x L solve per chunk; it is the batch solution on all chunks seen).  The
scores are ``O = H Phi``; a label is relevant when its score is > 0.

What the unweighted ranking term does (worth knowing when reading results):
with ``s_t = sum_k y_tk``, ``A_t = (s_t - q y_t) / 2``, so
``Y - gamma A = (1 + gamma q / 2) Y - (gamma / 2) s 1^T``.  The fitted scores are
therefore ``(1 + gamma q/2) O_ridge(x) - (gamma/2) s_hat(x) 1^T`` where ``s_hat`` is
the ridge prediction of ``s``: a common positive factor and a *per-instance*
offset.  The order of the labels of an instance (and so average precision,
ranking loss, one-error, coverage) is exactly that of the plain ridge ELM; only
the bipartition at 0 moves (more labels predicted when the predicted cardinality
is below ``q/2``).  The ranking term changes rankings only through non-uniform
weights, as in ELM-NCLD.

Reconstruction choices:

* the objective above (ELM-NCLD with ``beta = 1``, unit weights, no graph, no drift
  detection), bipolar targets, threshold 0;
* ``L = 20`` and ``alpha = 1`` (the ELM-NCLD paper's setting for the ELM methods);
  ``gamma = 2^-6``, the ranking weight the ELM-NCLD paper reports as its optimum
  (at ``beta = 1`` the paper's Hessian and the exact one coincide, NOTES §1);
* the project's :class:`~ncld_core.model.elm.RandomHiddenLayer` and its input scaling.

No noise handling: the observed labels are used as they are.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(300, 5)); Y = (X[:, :3] > 0).astype(int)
>>> model = ELMCDLL(random_state=0)
>>> for start in range(0, 300, 100):
...     model = model.partial_fit(X[start:start + 100], Y[start:start + 100])
>>> model.predict(X[:2]).shape
(2, 3)
>>> ridge = ELMCDLL(gamma=0.0, random_state=0).fit(X, Y)   # gamma = 0: the ridge ELM
>>> H = ridge.hidden_output(X)
>>> bool(np.allclose(ridge.coef_, np.linalg.solve(np.eye(20) + H.T @ H, H.T @ (2 * Y - 1))))
True
"""

from __future__ import annotations

import numpy as np

from ...validation import check_in_range
from ...model.elm import RandomHiddenLayer
from ...model.importance import ranking_matrix
from ._base import HiddenLayerBaseline

__all__ = ["ELMCDLL", "unit_ranking_matrix"]


def unit_ranking_matrix(Y_pm) -> np.ndarray:
    """``A_tj = sum_k (y_tk - y_tj) / 2`` for labels in {-1, +1} (all weights 1).

    >>> unit_ranking_matrix(np.array([[1, -1, -1]])).tolist()
    [[-2.0, 1.0, 1.0]]
    """
    Y_pm = np.asarray(Y_pm, dtype=np.float64)
    return ranking_matrix(Y_pm, np.ones_like(Y_pm))


class ELMCDLL(HiddenLayerBaseline):
    """ELM scoring + unweighted label ranking, threshold 0 (reconstruction of [RELM]).

    Parameters
    ----------
    n_hidden : int, default 20
        ``L``, random sigmoid hidden nodes.
    alpha : float > 0, default 1.0
        Ridge penalty on ``Phi``.
    gamma : float >= 0, default 2**-6
        Weight of the ranking term.
    scaling : {"auto", "l2", "standard", "none"}, default "auto"
        Input scaling of the hidden layer.
    random_state : int or None
        Seed of the hidden layer.

    Attributes
    ----------
    coef_ : ndarray (L, q)
        ``Phi``.
    K_ : ndarray (L, L), B_ : ndarray (L, q)
        Sufficient statistics.
    hidden_ : RandomHiddenLayer
    n_features_in_, n_labels_, n_seen_ : int
    """

    _state_names = ("hidden_", "K_", "B_", "coef_", "n_features_in_", "n_labels_", "n_seen_")

    def __init__(self, n_hidden=20, alpha=1.0, gamma=2.0**-6, scaling="auto", random_state=None):
        self.n_hidden = n_hidden
        self.alpha = alpha
        self.gamma = gamma
        self.scaling = scaling
        self.random_state = random_state

    def _validate_params(self):
        check_in_range(self.n_hidden, "n_hidden", 1, 100_000, integer=True)
        check_in_range(self.alpha, "alpha", 0, np.inf, low_open=True, high_open=True)
        check_in_range(self.gamma, "gamma", 0, np.inf, high_open=True)
        if self.scaling not in ("auto", "l2", "standard", "none"):
            raise ValueError(f"scaling must be 'auto', 'l2', 'standard' or 'none', got {self.scaling!r}")

    def _start(self, X, Y01):
        L, q = self.n_hidden, Y01.shape[1]
        return {
            "hidden_": RandomHiddenLayer(L, self.scaling, self.random_state).fit(X),
            "K_": self.alpha * np.eye(L),
            "B_": np.zeros((L, q)),
        }

    def _learn(self, state, X, Y01, first):
        H = state["hidden_"].transform(X)
        Y_pm = 2.0 * Y01 - 1.0
        A = unit_ranking_matrix(Y_pm)
        state["K_"] = state["K_"] + H.T @ H
        state["B_"] = state["B_"] + H.T @ (Y_pm - self.gamma * A)
        state["coef_"] = np.linalg.solve(state["K_"], state["B_"])
        return state
