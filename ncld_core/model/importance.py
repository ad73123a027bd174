"""Importance weights, the importance-weighted ranking matrix and the paper's cardinality estimate.

For label ``j`` of instance ``t`` with observed ``y_tj`` in {-1, +1} and the noisy
class probability ``P_D(y_tj | x_t)`` (Liu & Tao 2016, the paper's Prop. 2)::

    w_tj = (P_D(y_tj | x_t) - rho_{-y_tj}) / ((1 - rho_+^j - rho_-^j) P_D(y_tj | x_t))

where ``rho_{-y}`` is ``rho_-^j`` for ``y = +1`` and ``rho_+^j`` for ``y = -1``.  It is
the ratio ``P_{D_G}(y|x) / P_D(y|x)`` of the clean to the noisy posterior, so it is
>= 0 for the true ``P_D``; an estimated ``P_D`` below ``rho`` would make it
negative, and it is clipped at 0.

The ranking term of Eq. (RL_New) with ``f(x) = -x`` equals ``2 Tr(A^T O)``
(NOTES §3) with::

    A_tj = w_tj * sum_k w_tk (y_tk - y_tj) / 2

and the paper's label cardinality of Eq. (card) is, per instance,
``LCard_hat(x_t) = sum_j [y_tj = +1] w_tj``.  The paper calls it unbiased; with
weights clipped at 0 and ``P_D`` fitted on the same chunk it is not (measured in
``docs/drift.md``): the unbiased estimate is :mod:`ncld_core.model.cardinality`.

>>> import numpy as np
>>> Y = np.array([[1, -1]])
>>> W = importance_weights(Y, np.array([[0.8, 0.8]]), rho_pos=[0.1, 0.1], rho_neg=[0.2, 0.2])
>>> W.round(4).tolist()        # (0.8-0.2)/(0.7*0.8), (0.2-0.1)/(0.7*0.2)
[[1.0714, 0.7143]]
>>> ranking_matrix(Y, W).round(4).tolist()
[[-0.7653, 0.7653]]
"""

from __future__ import annotations

import numpy as np

__all__ = ["importance_weights", "ranking_matrix", "instance_cardinality"]

_EPS = 1e-6


def importance_weights(Y_pm, P_pos, rho_pos, rho_neg) -> np.ndarray:
    """Weights ``w_tj`` (N, q) for labels ``Y_pm`` in {-1, +1} and ``P_pos = P_D(y=+1|x)``.

    Probabilities are clipped to ``[1e-6, 1 - 1e-6]`` and weights at 0 (see module doc).
    """
    Y_pm = np.asarray(Y_pm)
    P_pos = np.clip(np.asarray(P_pos, dtype=np.float64), _EPS, 1.0 - _EPS)
    rho_pos = np.asarray(rho_pos, dtype=np.float64)
    rho_neg = np.asarray(rho_neg, dtype=np.float64)
    positive = Y_pm > 0
    P_obs = np.where(positive, P_pos, 1.0 - P_pos)
    rho_other = np.where(positive, rho_neg, rho_pos)
    W = (P_obs - rho_other) / ((1.0 - rho_pos - rho_neg) * P_obs)
    return np.maximum(W, 0.0)


def ranking_matrix(Y_pm, W) -> np.ndarray:
    """``A`` (N, q) of Eq. (N3): ``A_tj = w_tj sum_k w_tk (y_tk - y_tj) / 2``, in O(N q)."""
    Y_pm = np.asarray(Y_pm, dtype=np.float64)
    wy = (W * Y_pm).sum(axis=1, keepdims=True)
    wsum = W.sum(axis=1, keepdims=True)
    return 0.5 * W * (wy - Y_pm * wsum)


def instance_cardinality(Y_pm, W) -> np.ndarray:
    """Per-instance cardinality of Eq. (card), ``sum_j [y_tj = +1] w_tj``, shape (N,) (biased: see module doc)."""
    return np.where(np.asarray(Y_pm) > 0, W, 0.0).sum(axis=1)
