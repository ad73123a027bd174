"""MLSAMPkNN: multi-label punitive kNN with a self-adjusting memory (a reconstruction).

M. Roseberry, B. Krawczyk, A. Cano, "Multi-label punitive kNN with self-adjusting memory for
drifting data streams", ACM Transactions on Knowledge Discovery from Data 13(6) (2019),
doi:10.1145/3363573.  The paper names the method MLSAMPkNN (the issue calls it MLSAkNN; the
authors' MLSAkNN is the variant without punitive removal).

**This is a reconstruction.**  The full text was not available here; the mechanism and the
defaults were read from the abstract and from the authors' public MOA implementation
(github.com/canoalberto/MLSAMPkNN, ``MLSAMPkNN.java``, GPL -- read, not copied), then
re-expressed chunk-wise and vectorised.  Details marked *(ours)* are our choices.

The method
----------
A window of recent labelled instances; a query is labelled by its ``k`` nearest window
members (Euclidean distance on min-max-normalised features)::

    score_j(x) = #{neighbours with label j} / k',   k' = min(k, window size)
    decision_j(x) = score_j(x) - 1/2

* **Punitive removal.**  When a labelled instance arrives, each of its ``k`` neighbours in the
  window is charged the number of labels on which it disagrees with the instance (its Hamming
  error); a member whose accumulated charge exceeds ``penalty * q`` is removed.
* **Self-adjusting memory** (the SAM-kNN idea of Losing et al. 2016, multi-label): candidate
  sizes ``n, floor(n r), floor(n r^2), ...`` (``r`` = ``reduction``; generated while the last
  one is >= ``2 * min_window``), each the *most recent* instances of the window, are scored by
  their interleaved test-then-train accuracy -- every member predicted by the kNN over the
  members of the same candidate that precede it (vote >= 1/2, nothing predicted without
  predecessors) -- and the window is cut to the best one (the largest on ties).  The metric is
  subset accuracy (the authors' default) or the Hamming score (``metric``).
* The window holds at most ``max_window`` instances (the oldest go first).

Defaults (from the authors' MOA code): ``k = 3``, ``max_window = 1000``, ``min_window = 50``,
``penalty = 1``, ``reduction = 0.5``, ``metric = "subset_accuracy"``.

Reconstruction choices *(ours)*
-------------------------------
* **Chunks.**  The published method works instance by instance.  Here a chunk is predicted
  with the window as it stood before it; learning the chunk then (1) charges the neighbours
  each chunk instance has in the *pre-chunk* window (the ones that predicted it), (2) removes
  the members over the penalty, (3) appends the chunk and keeps the ``max_window`` most recent,
  (4) adjusts the size once.  Instance by instance, new instances would also be charged by
  later instances of the same chunk and the size would be adjusted after every instance.
* **Interleaved accuracies are recomputed** on the current window at each adjustment (the
  authors keep incremental prediction histories; they agree unless members were removed or the
  ranges changed in between).
* **Ranges.**  Min-max ranges are the running ranges of every instance learnt (starting from
  0, as the MOA code's zero-initialised arrays); a feature with zero range is ignored.
  Distances use the ranges as of the last learnt chunk (the MOA code stores each distance with
  the ranges at the time it was computed).
* **Ties.**  With an even ``k'`` a vote of exactly 1/2 is *not* predicted here (decision 0; the
  authors predict ``vote >= 1/2``); with the default ``k = 3`` this happens only while the
  window holds two instances.  Ties in distance go to the more recent instance.
* **Cost.**  Per chunk: distances chunk x window and window x window (one sparse product each),
  and the candidate evaluations (about 1.3 window^2 entries partitioned); bounded by
  ``max_window``, so the peer runs at thousands of instances per second on every shared data
  set.

No flip rates are used: the window holds, and the penalties count, the observed (noisy)
labels -- punitive removal is the method's own robustness to noise.  Its scores are the
``k = 3`` votes (four values), so many labels tie in a ranking: on a synthetic stream with
flip rates 0.2 / 0.3 and 5 labels (tests/test_peers.py, seed 0) its prequential AP is 0.71,
below the noisy-prior reference (0.76); with rates 0.1 / 0.1 and 8 labels it is 0.66 against 0.60.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(1400, 2)); Y = np.c_[X[:, 0] > 0, X[:, 1] > 0].astype(int)
>>> Y[1000:] = 1 - Y[1000:]                              # an abrupt change at instance 1000
>>> model = MLSAMPkNN()
>>> sizes = []
>>> for start in range(0, 1400, 200):
...     sizes.append(model.partial_fit(X[start:start + 200], Y[start:start + 200]).n_window_)
>>> sizes[4] > 500, sizes[5] < sizes[4]                 # grows, then shrinks after the change
(True, True)
>>> bool((model.predict(X[:100]) == 1 - Y[:100]).mean() > 0.9)   # the new concept
True
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...validation import check_in_range
from ._base import ChunkBaseline
from ._knn import as_csr, nearest, sq_distances

__all__ = ["MLSAMPkNN", "interleaved_accuracy"]

METRICS = ("subset_accuracy", "hamming_score")


def interleaved_accuracy(d2: np.ndarray, Y: np.ndarray, k: int, metric: str) -> float:
    """Interleaved test-then-train accuracy of a kNN over a sequence (oldest first).

    ``d2`` (m, m) distances between the members, ``Y`` (m, q) their labels: member ``t`` is
    predicted by the ``min(k, t)`` nearest of members ``0..t-1`` (a label when at least half of
    them have it; nothing for ``t = 0``).

    >>> d2 = np.array([[0, 1, 4], [1, 0, 1], [4, 1, 0]], dtype=float)
    >>> Y = np.array([[1, 0], [1, 0], [0, 1]])
    >>> interleaved_accuracy(d2, Y, 1, "subset_accuracy"), interleaved_accuracy(d2, Y, 1, "hamming_score")
    (0.3333333333333333, 0.5)
    """
    m = d2.shape[0]
    if m == 0:
        return 0.0
    masked = np.where(np.tri(m, m, -1, dtype=bool), d2, np.inf)  # only earlier members
    near = nearest(masked, k)
    k_eff = np.minimum(np.arange(m), near.shape[1])
    valid = np.arange(near.shape[1])[None, :] < k_eff[:, None]
    counts = (Y[near] * valid[:, :, None]).sum(axis=1)
    pred = (2 * counts >= k_eff[:, None]) & (k_eff[:, None] > 0)
    right = pred == Y.astype(bool)
    if metric == "subset_accuracy":
        return float(right.all(axis=1).mean())
    return float(right.mean())


class MLSAMPkNN(ChunkBaseline):
    """Punitive multi-label kNN with a self-adjusting window (reconstruction; module docstring).

    ``decision_function`` is the neighbours' vote minus 1/2 (N, q); ``predict_proba`` the vote
    (the fraction of the ``k`` neighbours with the label); ``predict`` the labels above 1/2.

    Parameters
    ----------
    k : int, default 3
        Neighbours.
    max_window : int, default 1000
        Most instances kept.
    min_window : int, default 50
        Candidate window sizes are generated down to about ``2 * min_window``.
    penalty : float >= 0, default 1.0
        A member is removed once its accumulated Hamming errors exceed ``penalty * q``.
    reduction : float in (0, 1), default 0.5
        Ratio between successive candidate window sizes.
    metric : {"subset_accuracy", "hamming_score"}, default "subset_accuracy"
        Interleaved accuracy that picks the window size.

    Attributes
    ----------
    errors_ : ndarray (window size,)
        Accumulated Hamming errors of each member (oldest first).
    n_window_ : int
        Members in the window.
    n_punished_, n_cut_ : int
        Members removed so far by the penalty / by the size adjustment (and the cap).
    n_seen_ : int
    """

    _state_names = ("_X", "_Y", "errors_", "_xmin", "_xmax", "n_punished_", "n_cut_",
                    "n_features_in_", "n_labels_", "n_seen_")

    def __init__(self, k=3, max_window=1000, min_window=50, penalty=1.0, reduction=0.5,
                 metric="subset_accuracy"):
        self.k = k
        self.max_window = max_window
        self.min_window = min_window
        self.penalty = penalty
        self.reduction = reduction
        self.metric = metric

    def _validate_params(self):
        check_in_range(self.k, "k", 1, 10**4, integer=True)
        check_in_range(self.max_window, "max_window", 1, 10**5, integer=True)
        check_in_range(self.min_window, "min_window", 1, 10**5, integer=True)
        check_in_range(self.penalty, "penalty", 0, np.inf, high_open=True)
        check_in_range(self.reduction, "reduction", 0, 1, low_open=True, high_open=True)
        if self.metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}, got {self.metric!r}")

    def _get_state(self) -> dict:
        # No copy needed: ``_learn`` builds new arrays, never changing these in place.
        return {name: getattr(self, name) for name in self._state_names}

    def _start(self, X, Y01):
        d, q = X.shape[1], Y01.shape[1]
        return {"_X": sp.csr_matrix((0, d)), "_Y": np.zeros((0, q), dtype=np.int8), "errors_": np.zeros(0),
                "_xmin": np.zeros(d), "_xmax": np.zeros(d), "n_punished_": 0, "n_cut_": 0}

    @staticmethod
    def _scaled(X, xmin, xmax) -> sp.csr_matrix:
        span = xmax - xmin
        scale = np.divide(1.0, span, out=np.zeros_like(span), where=span > 0)
        return (as_csr(X) @ sp.diags(scale)).tocsr()

    def _candidates(self, n: int) -> list[int]:
        if n < 2 * self.min_window:
            return [n]
        sizes = [n]
        while sizes[-1] >= 2 * self.min_window:
            sizes.append(int(sizes[-1] * self.reduction))
        return sizes

    def _learn(self, state, X, Y01, first):
        X = as_csr(X)
        Y01 = Y01.astype(np.int8)
        Xw, Yw, errors = state["_X"], state["_Y"], state["errors_"]
        xmin, xmax = state["_xmin"], state["_xmax"]
        q = Y01.shape[1]
        # (1) punish the neighbours that predicted the chunk (pre-chunk window and ranges)
        if Xw.shape[0]:
            near = nearest(sq_distances(self._scaled(X, xmin, xmax), self._scaled(Xw, xmin, xmax)), self.k)
            wrong = (Yw[near] != Y01[:, None, :]).sum(axis=2)
            errors = errors + np.bincount(near.ravel(), weights=wrong.ravel(), minlength=Xw.shape[0])
            keep = errors <= self.penalty * q
            # (2) remove the members over the penalty
            state["n_punished_"] += int((~keep).sum())
            Xw, Yw, errors = Xw[keep], Yw[keep], errors[keep]
        # (3) append the chunk, keep the max_window most recent
        xmin = np.minimum(xmin, np.asarray(X.min(axis=0).todense()).ravel())
        xmax = np.maximum(xmax, np.asarray(X.max(axis=0).todense()).ravel())
        Xw = sp.vstack([Xw, X], format="csr")
        Yw = np.concatenate([Yw, Y01])
        errors = np.concatenate([errors, np.zeros(X.shape[0])])
        cut = max(0, Xw.shape[0] - self.max_window)
        # (4) self-adjusting size: the most recent candidate with the best interleaved accuracy
        n = Xw.shape[0] - cut
        sizes = self._candidates(n)
        if len(sizes) > 1:
            S = self._scaled(Xw[cut:], xmin, xmax)
            d2 = sq_distances(S, S)
            scores = [interleaved_accuracy(d2[n - m:, n - m:], Yw[cut + n - m:], self.k, self.metric)
                      for m in sizes]
            cut += n - sizes[int(np.argmax(scores))]
        state["n_cut_"] += cut
        state.update(_X=Xw[cut:], _Y=Yw[cut:], errors_=errors[cut:], _xmin=xmin, _xmax=xmax)
        return state

    @property
    def n_window_(self) -> int:
        self._check_fitted()
        return int(self._X.shape[0])

    def _vote(self, X) -> np.ndarray:
        n = self._X.shape[0]
        if n == 0:  # every member was punished away
            return np.zeros((X.shape[0], self.n_labels_))
        near = nearest(sq_distances(self._scaled(X, self._xmin, self._xmax),
                                    self._scaled(self._X, self._xmin, self._xmax)), self.k)
        return self._Y[near].mean(axis=1)

    def predict_proba(self, X) -> np.ndarray:
        """The neighbours' vote as a Laplace estimate (N, q): ``(c + 1) / (k' + 2)`` for ``c`` of the
        ``k' = min(k, window size)`` nearest members holding the label.

        Strictly inside (0, 1) (a raw vote of 0 or 1 out of 3 neighbours is no certainty), above 1/2
        exactly where the vote is (where :meth:`predict` predicts), in the order of the vote.
        After a 1-D binary target: (N, 2), for ``classes_[0]`` and ``classes_[1]``.
        """
        X = self._check_X(X)
        k = min(self.k, self._X.shape[0])
        P = (self._vote(X) * k + 1.0) / (k + 2.0)
        return self._proba_out(P if getattr(self, "_binary_classes", None) is None else P[:, 0])

    def _decision(self, X) -> np.ndarray:
        """Vote minus 1/2 (N, q)."""
        return self._vote(X) - 0.5
