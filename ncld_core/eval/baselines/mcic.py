"""MCIC: multi-label classification via incremental clustering (Nguyen et al., 2019).

T. T. Nguyen, M. T. Dang, A. V. Luong, A. W.-C. Liew, T. Liang, J. McCall,
"Multi-label classification via incremental clustering on an evolving data stream",
Pattern Recognition 95 (2019) 96-113, doi:10.1016/j.patcog.2019.06.001.

The method as implemented
-------------------------
A DenStream-style weighted clustering of the stream, learnt one instance at a time.
A micro-cluster ``c`` keeps, with ``f(dt) = 2^(-lambda dt)`` the decay over ``dt``
timestamps since its last edit::

    CF1 = sum_i f x_i,   CF2 = sum_i f x_i^2,   w = sum_i f          (faded, per feature)
    centre = CF1 / w,    radius = max_feature sqrt(CF2 / w - centre^2)
    n = number of instances,  label_count = sum_i y_i  (not faded),  P = label_count / n

Time advances by one timestamp every ``speed`` instances.  Clusters are either
*potential* (p, "mature") or *outlier* (o).  Each instance ``(x, y)``:

1. try the p-cluster nearest to ``x`` by ``||x - centre|| - radius``: merge if its
   radius after the merge stays ``<= epsilon``;
2. else the nearest o-cluster likewise; a merged o-cluster whose weight exceeds
   ``beta_mu`` becomes a p-cluster;
3. else ``x`` starts a new o-cluster (``w = 1``, radius 0);
4. while the timestamp is a multiple of ``T_p = round(ln(beta_mu / (beta_mu - 1)) / lambda) + 1``,
   p-clusters with faded weight ``< beta_mu`` and o-clusters created at ``t0`` with faded
   weight ``< xi(t) = (2^(-lambda (t - t0 + T_p)) - 1) / (2^(-lambda T_p) - 1)`` are removed.

Prediction: the ``K`` p-clusters nearest to ``x`` (Euclidean distance to the centre; the
o-clusters only while no p-cluster exists) give the label scores
``s = sum_k w_k P_k / sum_k w_k`` (``w_k`` faded weights now), and the ``h`` labels with
the largest scores are predicted.  ``h`` follows the observed label cardinality with a
Hoeffding test: over the ``t`` instances since the last change of ``h``, with ``z`` their
mean number of (observed) labels and ``L_t`` the number of distinct labels among them,
``h := round(z)`` (and the counts restart) when ``|z - h| / L_t > sqrt(ln(1/delta) / (2 t))``.

Number of clusters: each instance adds weight 1, so the total faded weight is at most
``speed / (1 - 2^-lambda)`` (629 with the defaults).  A p-cluster weighed at least
``beta_mu`` at its last check, at most ``T_p`` timestamps ago, so there are at most
``629 * 2^(lambda T_p) / beta_mu`` (629) of them; an o-cluster that is not fed dies at the
first pruning after its creation, so about ``(T_p + 1) * speed`` (500) of them live at once.
Measured with the defaults: at most about 310 clusters on enron, arts, corel16k001 and
medical.  ``max_clusters`` adds a hard cap (see below).

Reconstruction choices (stated plainly)
---------------------------------------
* The paper's full text was not at hand; the algorithmic details and the default
  parameters come from the authors' public MATLAB release of MCIC (read, not copied):
  ``epsilon = 0.495``, ``lambda = 0.25``, ``beta_mu = 2``, 100 instances per timestamp,
  ``K = 3``, ``delta = 0.1``, initial ``h = 5``, ``T_p`` with the natural logarithm
  (= 4 timestamps with these values).  The paper's abstract matches this design
  (decay, "mature" clusters for prediction, Hoeffding-controlled number of labels).
* The release computes the centre as ``f * CF1 / w``, which shrinks stale centres towards
  the origin; here the centre is ``CF1 / w`` (fading cancels in the ratio).
* Label statistics ``P = label_count / n`` are undecayed counts, as in the release; only
  the cluster weights that combine the ``K`` clusters decay.
* Features are used raw (no scaling), as in the release; ``epsilon`` is in feature units.
  Consequences worth knowing: on binary bag-of-words features two different instances
  rarely merge (a feature that differs gives a spread near 0.5 > ``epsilon``), while on
  small tf-idf values (rcv1subset5) everything merges into one cluster, whose label
  frequencies are then the prediction for every instance.
* Chunk protocol: a chunk is predicted with the model as it stood before the chunk, then
  learnt instance by instance in order (the release predicts each instance just before
  learning it).
* ``decision_function`` returns ``s - tau`` with ``tau`` halfway between the ``h``-th and
  ``(h+1)``-th largest score of the row, so ``> 0`` is exactly the method's top-``h``
  prediction and the ranking (for AP) is the ranking of ``s``.  Ties are broken by label
  index (a tied label inside the top ``h`` gets ``+1e-12``, outside ``-1e-12``).  Ties
  between clusters are broken by list order (creation, or promotion for p-clusters).
* ``max_clusters`` (not in the paper): when a new o-cluster would exceed it, the o-cluster
  with the smallest faded weight is dropped (the lightest p-cluster if there is no
  o-cluster).  With the defaults the decay keeps the count well below 1000, so the cap
  only guards memory: the model stores ``2 * capacity * d`` float64 (CF1 and CF2, dense).
* Dense and sparse inputs follow one code path (rows as CSR), so they give identical models.

No flip rates are used: the method learns from the observed (noisy) labels as published.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> centres = rng.normal(scale=3.0, size=(3, 10))
>>> member = rng.integers(0, 3, size=1200)
>>> X = centres[member] + 0.5 * rng.normal(size=(1200, 10))
>>> Y = np.eye(3, dtype=int)[member]                  # one label per blob
>>> model = MCIC()
>>> for start in range(0, 1000, 200):
...     model = model.partial_fit(X[start:start + 200], Y[start:start + 200])
>>> model.h_, bool((model.predict(X[1000:]) == Y[1000:]).mean() > 0.95)
(1, True)
>>> model.n_potential_ > 3, model.n_clusters_ <= model.max_clusters
(True, True)
"""

from __future__ import annotations

import copy
import math

import numpy as np

from ...validation import check_in_range
from ._base import ChunkBaseline, as_csr, iter_rows

__all__ = ["MCIC"]

_H_INIT = 5  # initial number of predicted labels in the authors' release
_TIE = 1e-12


def top_h_decision(scores: np.ndarray, h: int) -> np.ndarray:
    """Shift each row of ``scores`` so that exactly its ``h`` largest entries are > 0.

    The order within a row is kept (ties broken by column index).

    >>> D = top_h_decision(np.array([[0.2, 0.9, 0.5, 0.5]]), 2)
    >>> (D > 0).astype(int).tolist(), D[0, :2].round(2).tolist()
    ([[0, 1, 1, 0]], [-0.3, 0.4])
    """
    n, q = scores.shape
    h = int(min(max(h, 0), q))
    order = np.argsort(-scores, axis=1, kind="stable")
    srt = np.take_along_axis(scores, order, axis=1)
    if h == 0:
        tau = srt[:, 0] + 0.5
    elif h == q:
        tau = srt[:, -1] - 0.5
    else:
        tau = 0.5 * (srt[:, h - 1] + srt[:, h])
    out = scores - tau[:, None]
    top = np.zeros((n, q), dtype=bool)
    np.put_along_axis(top, order[:, :h], True, axis=1)
    out[top & (out <= 0)] = _TIE
    out[~top & (out >= 0)] = -_TIE
    return out


class MCIC(ChunkBaseline):
    """Multi-label classification via incremental (DenStream-style) clustering.

    ``partial_fit`` learns a chunk instance by instance, in order; ``decision_function``
    gives scores (N, q) whose positive entries are the top-``h`` labels of each row, and
    ``predict`` the ``h`` highest-scoring labels of each instance, in the label values of the fitted ``Y``.

    Parameters
    ----------
    epsilon : float, default 0.495
        Radius threshold: ``x`` joins a cluster only if its radius stays ``<= epsilon``.
    decay : float, default 0.25
        ``lambda``: weights fade by ``2^-lambda`` per timestamp.
    beta_mu : float > 1, default 2.0
        Weight above which an o-cluster becomes a p-cluster (and below which a p-cluster dies).
    speed : int, default 100
        Instances per timestamp.
    k : int, default 3
        ``K``, nearest p-clusters combined for a prediction.
    delta : float in (0, 1), default 0.1
        Confidence of the Hoeffding test that adapts ``h``.
    max_clusters : int, default 1000
        Hard cap on the number of clusters (an addition; see the module docstring).

    Attributes
    ----------
    h_ : int
        Current number of predicted labels per instance.
    n_clusters_, n_potential_, n_outlier_ : int
        Live clusters (all, p and o).
    timestamp_ : int
        Current timestamp; ``n_seen_`` instances learnt so far.
    """

    _state_names = (
        "_cf1", "_cf2", "_w", "_csq", "_rad", "_n", "_lab", "_last", "_created", "_serial", "_alive", "_isp",
        "_hi", "_next_serial", "timestamp_", "h_", "_h_n", "_h_sum", "_h_mark",
        "n_features_in_", "n_labels_", "n_seen_",
    )

    def __init__(self, epsilon=0.495, decay=0.25, beta_mu=2.0, speed=100, k=3, delta=0.1,
                 max_clusters=1000):
        self.epsilon = epsilon
        self.decay = decay
        self.beta_mu = beta_mu
        self.speed = speed
        self.k = k
        self.delta = delta
        self.max_clusters = max_clusters

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Every instance gets its top-h labels (h >= 1 once a label was seen): on a 1-D binary
        # target (one label) the positive class is predicted everywhere, so scikit-learn's
        # accuracy threshold on a binary problem cannot hold.
        tags.classifier_tags.poor_score = True
        return tags

    # ------------------------------------------------------------------ helpers
    def _validate_params(self):
        check_in_range(self.epsilon, "epsilon", 0, math.inf, high_open=True)
        check_in_range(self.decay, "decay", 0, math.inf, low_open=True, high_open=True)
        check_in_range(self.beta_mu, "beta_mu", 1, math.inf, low_open=True, high_open=True)
        check_in_range(self.speed, "speed", 1, 10**9, integer=True)
        check_in_range(self.k, "k", 1, 10**6, integer=True)
        check_in_range(self.delta, "delta", 0, 1, low_open=True, high_open=True)
        check_in_range(self.max_clusters, "max_clusters", 1, 10**7, integer=True)

    @property
    def t_p_(self) -> int:
        """``T_p``: timestamps between two pruning passes (the release's formula)."""
        x = math.log(self.beta_mu / (self.beta_mu - 1.0)) / self.decay
        return int(math.floor(x + 0.5)) + 1

    def _start(self, X, Y01):
        d, q = X.shape[1], Y01.shape[1]
        cap = min(16, self.max_clusters)
        return {
            "_cf1": np.zeros((cap, d)),
            "_cf2": np.zeros((cap, d)),
            "_w": np.zeros(cap),
            "_csq": np.zeros(cap),  # ||CF1||^2
            "_rad": np.zeros(cap),
            "_n": np.zeros(cap, dtype=np.int64),
            "_lab": np.zeros((cap, q)),
            "_last": np.zeros(cap, dtype=np.int64),
            "_created": np.zeros(cap, dtype=np.int64),
            "_serial": np.zeros(cap, dtype=np.int64),
            "_alive": np.zeros(cap, dtype=bool),
            "_isp": np.zeros(cap, dtype=bool),
            "_hi": 0,  # slots in use are [0, _hi)
            "_next_serial": 0,
            "timestamp_": 0,
            "h_": _H_INIT,
            "_h_n": 0,
            "_h_sum": 0.0,
            "_h_mark": np.zeros(q, dtype=bool),
        }

    def _grow(self):
        cap = self._w.shape[0]
        new = min(2 * cap, self.max_clusters)
        if new <= cap:
            new = cap + 1
        for name in ("_cf1", "_cf2", "_lab"):
            old = getattr(self, name)
            arr = np.zeros((new, old.shape[1]), dtype=old.dtype)
            arr[:cap] = old
            setattr(self, name, arr)
        for name in ("_w", "_csq", "_rad", "_n", "_last", "_created", "_serial", "_alive", "_isp"):
            old = getattr(self, name)
            arr = np.zeros(new, dtype=old.dtype)
            arr[:cap] = old
            setattr(self, name, arr)

    def _faded_weight(self, slots=slice(None)):
        return self._w[slots] * np.exp2(-self.decay * (self.timestamp_ - self._last[slots]))

    def _nearest(self, score, mask):
        """Slot with the smallest ``score`` among ``mask``; ties by list order (serial)."""
        if not mask.any():
            return -1
        s = np.where(mask, score, np.inf)
        cand = np.flatnonzero(s == s.min())
        return int(cand[np.argmin(self._serial[cand])]) if cand.size > 1 else int(cand[0])

    def _trial(self, slot, idx, vals):
        f = math.exp2(-self.decay * (self.timestamp_ - self._last[slot]))
        old_on_x = self._cf1[slot, idx]
        cf1 = f * self._cf1[slot]
        cf1[idx] += vals
        cf2 = f * self._cf2[slot]
        cf2[idx] += vals * vals
        w = f * self._w[slot] + 1.0
        var = cf2 / w - (cf1 / w) ** 2
        # ||f CF1 + x||^2 in O(nnz(x)) (no length-d dot product per instance)
        csq = f * f * self._csq[slot] + 2.0 * f * float(old_on_x @ vals) + float(vals @ vals)
        return cf1, cf2, w, math.sqrt(max(float(var.max()), 0.0)), csq

    def _commit(self, slot, trial, y):
        cf1, cf2, w, radius, csq = trial
        self._cf1[slot], self._cf2[slot], self._w[slot] = cf1, cf2, w
        self._csq[slot] = max(csq, 0.0)
        self._rad[slot] = radius
        self._n[slot] += 1
        self._lab[slot] += y
        self._last[slot] = self.timestamp_

    def _new_cluster(self, idx, vals, y):
        alive = self._alive[: self._hi]
        if int(alive.sum()) >= self.max_clusters:
            pool = alive & ~self._isp[: self._hi]
            if not pool.any():
                pool = alive
            self._alive[self._nearest(self._faded_weight(slice(0, self._hi)), pool)] = False
        free = np.flatnonzero(~self._alive[: self._hi])
        if free.size:
            slot = int(free[0])
        else:
            if self._hi == self._w.shape[0]:
                self._grow()
            slot = self._hi
            self._hi += 1
        self._cf1[slot] = 0.0
        self._cf1[slot, idx] = vals
        self._cf2[slot] = 0.0
        self._cf2[slot, idx] = vals * vals
        self._w[slot] = 1.0
        self._csq[slot] = vals @ vals
        self._rad[slot] = 0.0
        self._n[slot] = 1
        self._lab[slot] = y
        self._last[slot] = self._created[slot] = self.timestamp_
        self._serial[slot] = self._next_serial
        self._next_serial += 1
        self._alive[slot], self._isp[slot] = True, False

    def _update_h(self, y):
        self._h_n += 1
        self._h_mark |= y.astype(bool)
        self._h_sum += float(y.sum())
        n_labels_seen = int(self._h_mark.sum())
        if n_labels_seen == 0:
            return
        z = self._h_sum / self._h_n
        eps = math.sqrt(math.log(1.0 / self.delta) / (2.0 * self._h_n))
        if abs(z - self.h_) / n_labels_seen > eps:
            self.h_ = int(math.floor(z + 0.5))
            self._h_n, self._h_sum = 0, 0.0
            self._h_mark[:] = False

    def _prune(self):
        hi = self._hi
        alive, isp = self._alive[:hi], self._isp[:hi]
        w = self._faded_weight(slice(0, hi))
        t_p = self.t_p_
        xi = (np.exp2(-self.decay * (self.timestamp_ - self._created[:hi] + t_p)) - 1.0) / (
            math.exp2(-self.decay * t_p) - 1.0
        )
        dead = alive & ((isp & (w < self.beta_mu)) | (~isp & (w < xi)))
        self._alive[:hi] &= ~dead

    def _learn_one(self, idx, vals, y, position):
        """Learn one instance, the ``position``-th of the stream (1-based)."""
        if position % self.speed == 0:
            self.timestamp_ += 1
        self._update_h(y)
        hi = self._hi
        alive = self._alive[:hi]
        merged = False
        if alive.any():
            dots = self._cf1[:hi, idx] @ vals
            w = self._w[:hi]
            with np.errstate(divide="ignore", invalid="ignore"):
                d2 = vals @ vals - 2.0 * dots / w + self._csq[:hi] / (w * w)
            dist = np.sqrt(np.maximum(np.where(alive, d2, np.inf), 0.0)) - self._rad[:hi]
            isp = self._isp[:hi]
            slot = self._nearest(dist, alive & isp)
            if slot >= 0:
                trial = self._trial(slot, idx, vals)
                if trial[3] <= self.epsilon:
                    self._commit(slot, trial, y)
                    merged = True
            if not merged:
                slot = self._nearest(dist, alive & ~isp)
                if slot >= 0:
                    trial = self._trial(slot, idx, vals)
                    if trial[3] <= self.epsilon:
                        self._commit(slot, trial, y)
                        merged = True
                        if self._w[slot] > self.beta_mu:  # o-cluster becomes a p-cluster
                            self._isp[slot] = True
                            self._serial[slot] = self._next_serial
                            self._next_serial += 1
        if not merged:
            self._new_cluster(idx, vals, y)
        if self.timestamp_ % self.t_p_ == 0:
            self._prune()

    def _learn(self, state, X, Y01, first):
        """Learn the chunk instance by instance, in order, on a working copy of the model carrying ``state``."""
        work = copy.copy(self)
        vars(work).update(state)
        Yf = Y01.astype(np.float64)
        for i, (idx, vals) in enumerate(iter_rows(as_csr(X))):
            work._learn_one(idx, vals, Yf[i], state["n_seen_"] + i + 1)
        return {name: getattr(work, name) for name in self._state_names}

    # ------------------------------------------------------------------ public API
    def label_scores(self, X) -> np.ndarray:
        """``s`` (N, q): weighted label frequencies of the ``K`` nearest mature clusters."""
        return self._label_scores(self._check_X(X))

    def _label_scores(self, X) -> np.ndarray:
        X = as_csr(X)
        hi = self._hi
        alive = self._alive[:hi]
        pool = alive & self._isp[:hi]
        if not pool.any():
            pool = alive
        slots = np.flatnonzero(pool)
        n, q = X.shape[0], self.n_labels_
        if slots.size == 0:
            return np.zeros((n, q))
        slots = slots[np.argsort(self._serial[slots], kind="stable")]  # list order for ties
        w = self._w[slots]
        xsq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
        dots = np.asarray(X @ self._cf1[slots].T) / w
        d2 = xsq[:, None] - 2.0 * dots + (self._csq[slots] / (w * w))[None, :]
        kk = min(self.k, slots.size)
        near = np.argsort(np.maximum(d2, 0.0), axis=1, kind="stable")[:, :kk]
        weight = self._faded_weight(slots)
        P = self._lab[slots] / self._n[slots][:, None]
        wk = weight[near]  # (n, kk)
        return np.einsum("nk,nkq->nq", wk, P[near]) / wk.sum(axis=1, keepdims=True)

    def _decision(self, X) -> np.ndarray:
        """Scores (N, q) whose positive entries are the top-``h`` labels of each row."""
        return top_h_decision(self._label_scores(X), self.h_)

    # ------------------------------------------------------------------ inspection
    @property
    def n_clusters_(self) -> int:
        self._check_fitted()
        return int(self._alive[: self._hi].sum())

    @property
    def n_potential_(self) -> int:
        self._check_fitted()
        return int((self._alive & self._isp)[: self._hi].sum())

    @property
    def n_outlier_(self) -> int:
        return self.n_clusters_ - self.n_potential_

    def clusters(self) -> dict:
        """Live clusters in list order: kind ('p'/'o'), centre, radius, faded weight, n, label counts."""
        self._check_fitted()
        slots = np.flatnonzero(self._alive[: self._hi])
        slots = slots[np.lexsort((self._serial[slots], ~self._isp[slots]))]
        return {
            "kind": np.where(self._isp[slots], "p", "o"),
            "center": self._cf1[slots] / self._w[slots][:, None],
            "radius": self._rad[slots].copy(),
            "weight": self._faded_weight(slots),
            "n": self._n[slots].copy(),
            "label_count": self._lab[slots].copy(),
            "created": self._created[slots].copy(),
            "last_edit": self._last[slots].copy(),
        }
