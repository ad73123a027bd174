"""ML-kNN over a sliding window: Zhang & Zhou's multi-label kNN refitted on the recent instances.

M.-L. Zhang, Z.-H. Zhou, "ML-KNN: A lazy learning approach to multi-label learning",
Pattern Recognition 40(7) (2007) 2038-2048.

The method
----------
For a training set ``T`` of ``m`` instances, ``k`` neighbours and smoothing ``s``:

* prior, per label ``j``:  ``P(H1_j) = (s + #{i in T: y_ij = 1}) / (2 s + m)``;
* for every ``i in T``, ``C_ij`` = how many of its ``k`` nearest neighbours in ``T`` (itself
  excluded) have label ``j``; ``c_j[r]`` / ``c'_j[r]`` count the instances with / without
  label ``j`` whose ``C_ij = r`` (``r = 0..k``);
* likelihoods:  ``P(E_r | H1_j) = (s + c_j[r]) / (s (k + 1) + sum_r c_j[r])``, and likewise
  ``P(E_r | H0_j)`` from ``c'_j``;
* a test instance ``x`` with ``C_xj`` of its ``k`` nearest neighbours in ``T`` labelled ``j``
  scores the posterior ::

      P(H1_j | E_{C_xj}) = P(H1_j) P(E_C | H1_j) / (P(H1_j) P(E_C | H1_j) + P(H0_j) P(E_C | H0_j))

  and ``j`` is predicted when it exceeds 1/2 (``decision_function`` is the posterior - 1/2).

Streaming use: ``T`` is the **sliding window** of the ``window`` most recent instances;
every ``partial_fit`` appends the chunk, drops the oldest instances beyond ``window`` and
recomputes the prior and the counts on the window -- exactly a batch ML-kNN fitted on the
window (the tests compare it with scikit-multilearn's ``MLkNN``).  A chunk is predicted
with the window as it stood before it.

Choices (stated plainly)
------------------------
* ``window = 1000``, ``k = 10``, ``s = 1`` (Laplace smoothing, the paper's ``s``; ``k = 10``
  is the paper's recommended value).  Cost per chunk: distances window x window and
  chunk x window, by one sparse product each (O(window^2) memory: 8 MB at 1000).
* Euclidean distance on the raw features (as scikit-multilearn's ``MLkNN`` does through
  scikit-learn's ``NearestNeighbors``); ties in distance go to the more recent instance.
* While the window holds fewer than ``k + 1`` instances, training counts and prediction use
  ``k' = window size - 1`` neighbours (``k' + 1`` count cells; with one instance, the
  posterior is the prior); from ``k + 1`` instances on this is the paper's method.
* scikit-multilearn's ``MLkNN`` (0.2.0) is installed but broken with scikit-learn >= 1.0: it
  calls ``NearestNeighbors(self.k)`` with a positional argument, which scikit-learn now
  refuses (``TypeError: NearestNeighbors.__init__() takes 1 positional argument but 2 were
  given``).  Hence this vectorised implementation (numpy, brute force on the window).

No flip rates are used: the window holds the observed (noisy) labels.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(900, 2)); Y = np.c_[X[:, 0] > 0, X[:, 1] > 1.0].astype(int)
>>> model = WindowMLkNN(window=300, k=10)
>>> for start in range(0, 800, 200):
...     model = model.partial_fit(X[start:start + 200], Y[start:start + 200])
>>> model.n_window_, model.prior_.shape, model.likelihood_pos_.shape
(300, (2,), (2, 11))
>>> P = model.predict_proba(X[800:])
>>> bool(P.min() >= 0 and P.max() <= 1), bool((model.predict(X[800:]) == Y[800:]).mean() > 0.9)
(True, True)
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...validation import check_in_range
from ._base import ChunkBaseline
from ._knn import as_csr, nearest, row_sq_norms, sq_distances

__all__ = ["WindowMLkNN", "mlknn_tables"]


def mlknn_tables(neighbour_counts: np.ndarray, Y: np.ndarray, k: int, s: float):
    """Prior (q,) and likelihood tables (q, k+1) for ``H1`` and ``H0`` from the training counts.

    ``neighbour_counts[i, j]`` = ``C_ij`` (how many of instance ``i``'s ``k`` neighbours have
    label ``j``), ``Y`` the (m, q) labels in {0, 1}.

    >>> prior, pos, neg = mlknn_tables(np.array([[1], [0], [1]]), np.array([[1], [0], [0]]), k=1, s=1.0)
    >>> prior.tolist(), pos.tolist(), neg.tolist()
    ([0.4], [[0.3333333333333333, 0.6666666666666666]], [[0.5, 0.5]])
    """
    m, q = Y.shape
    prior = (s + Y.sum(axis=0)) / (2.0 * s + m)
    pos_counts = np.zeros((q, k + 1))
    neg_counts = np.zeros((q, k + 1))
    labels = np.broadcast_to(np.arange(q), (m, q))
    is_pos = Y.astype(bool)
    np.add.at(pos_counts, (labels[is_pos], neighbour_counts[is_pos]), 1.0)
    np.add.at(neg_counts, (labels[~is_pos], neighbour_counts[~is_pos]), 1.0)
    pos = (s + pos_counts) / (s * (k + 1) + pos_counts.sum(axis=1, keepdims=True))
    neg = (s + neg_counts) / (s * (k + 1) + neg_counts.sum(axis=1, keepdims=True))
    return prior, pos, neg


class WindowMLkNN(ChunkBaseline):
    """ML-kNN (Zhang & Zhou 2007) refitted on a sliding window of the most recent instances.

    ``decision_function`` is the posterior ``P(label | neighbour counts)`` minus 1/2 (N, q);
    ``predict_proba`` the posterior; ``predict`` the labels with posterior above 1/2.

    Parameters
    ----------
    window : int, default 1000
        Instances kept (the most recent).
    k : int, default 10
        Neighbours.
    s : float > 0, default 1.0
        Smoothing of the prior and likelihood estimates (1 = Laplace).

    Attributes
    ----------
    prior_ : ndarray (q,)
        ``P(H1_j)`` on the window.
    likelihood_pos_, likelihood_neg_ : ndarray (q, k'+1)
        ``P(E_r | H1_j)``, ``P(E_r | H0_j)`` for ``r = 0..k'`` neighbours with the label.
    n_window_ : int
        Instances in the window.
    n_seen_ : int
        Instances learnt so far.
    """

    _state_names = ("_X", "_Y", "_sq", "prior_", "likelihood_pos_", "likelihood_neg_",
                    "n_features_in_", "n_labels_", "n_seen_")

    def __init__(self, window=1000, k=10, s=1.0):
        self.window = window
        self.k = k
        self.s = s

    def _validate_params(self):
        check_in_range(self.window, "window", 1, 10**6, integer=True)
        check_in_range(self.k, "k", 1, 10**4, integer=True)
        check_in_range(self.s, "s", 0, np.inf, low_open=True, high_open=True)

    def _get_state(self) -> dict:
        # No copy needed: ``_learn`` builds new arrays, never changing these in place.
        return {name: getattr(self, name) for name in self._state_names}

    def _start(self, X, Y01):
        q = Y01.shape[1]
        return {"_X": sp.csr_matrix((0, X.shape[1])), "_Y": np.zeros((0, q), dtype=np.int8), "_sq": np.zeros(0)}

    def _learn(self, state, X, Y01, first):
        X = as_csr(X)
        Xw = sp.vstack([state["_X"], X], format="csr")[-self.window:]
        Yw = np.concatenate([state["_Y"], Y01.astype(np.int8)])[-self.window:]
        sq = np.concatenate([state["_sq"], row_sq_norms(X)])[-self.window:]
        m = Xw.shape[0]
        k = min(self.k, m - 1)
        d2 = sq_distances(Xw, Xw, sq, sq)
        np.fill_diagonal(d2, np.inf)  # an instance is not its own neighbour
        counts = Yw[nearest(d2, k)].sum(axis=1, dtype=np.int64) if k > 0 else np.zeros(Yw.shape, np.int64)
        prior, pos, neg = mlknn_tables(counts, Yw, k, float(self.s))
        state.update(_X=Xw, _Y=Yw, _sq=sq, prior_=prior, likelihood_pos_=pos, likelihood_neg_=neg)
        return state

    @property
    def n_window_(self) -> int:
        self._check_fitted()
        return int(self._X.shape[0])

    def _posterior(self, X) -> np.ndarray:
        X = as_csr(X)
        k = self.likelihood_pos_.shape[1] - 1  # k, or k' = window size - 1 while the window is smaller
        near = nearest(sq_distances(X, self._X, b_sq=self._sq), k)
        counts = self._Y[near].sum(axis=1, dtype=np.int64)
        labels = np.arange(self.n_labels_)
        p1 = self.prior_ * self.likelihood_pos_[labels, counts]
        p0 = (1.0 - self.prior_) * self.likelihood_neg_[labels, counts]
        return p1 / (p1 + p0)

    def predict_proba(self, X) -> np.ndarray:
        """Posterior ``P(label relevant | neighbour counts)`` (N, q).

        After a 1-D binary target: (N, 2), the probabilities of ``classes_[0]`` and ``classes_[1]``.
        """
        P = self._posterior(self._check_X(X))
        return P if getattr(self, "_binary_classes", None) is None else np.column_stack([1.0 - P[:, 0], P[:, 0]])

    def _decision(self, X) -> np.ndarray:
        """Posterior minus 1/2 (N, q)."""
        return self._posterior(X) - 0.5
