"""A River peer: a classifier chain of online logistic regressions (River's ``ClassifierChain``).

River (Montiel et al., JMLR 22 (2021)); classifier chains: J. Read, B. Pfahringer, G. Holmes,
E. Frank, "Classifier chains for multi-label classification", Machine Learning 85 (2011).
This is what a River user would write for the task when labels depend on each other::

    river.multioutput.ClassifierChain(river.linear_model.LogisticRegression(), order=labels)

learnt with ``learn_one`` on every instance, in stream order.  Label ``j``'s model sees the
features and, as extra features, the probabilities that the models of labels ``0..j-1``
give the same instance (River 0.26 chains *probabilities*, both when learning and when
predicting)::

    p_j(x) = sigmoid(w_j . x + sum_{l<j} v_jl p_l(x) + b_j)
    per instance, label by label: p_j with the current model, then one SGD step on the log loss
    decision_j(x) = p_j(x) - 1/2

Engines
-------
* ``engine="numpy"`` (default): the same arithmetic as River, vectorised -- feature weights
  ``coef_`` (d, q), chain weights ``chain_coef_`` (q, q, strictly lower triangular) and
  ``intercept_`` (q,).  Per instance the chain recursion is q small dot products and the
  update is one outer product; River's clipped sigmoid (0 / 1 beyond |z| > 30) and River's
  log-loss gradient (with its |z| > 18 branches) are reproduced.  The tests check that it
  gives River's probabilities (to 1e-9) on a stream fed to River's own ``ClassifierChain``.
  It does not need River and is ~10-25x faster (River's ``ClassifierChain`` costs about
  7 ms per instance on corel16k001, q = 153, which would add ~25 min to docs/results.md).
* ``engine="river"``: River's own ``ClassifierChain`` object (``model_``), fed as
  :mod:`~ncld_core.eval.baselines.river_peer` feeds River (same feature dicts, same import).

Choices (stated plainly)
------------------------
* River's defaults: SGD with learning rate 0.01 (``learning_rate``), intercept learning rate
  0.01, no regularisation, weights starting at zero, no feature scaling.  The chain order is
  the label order of the data set (River's default: the order labels first appear).
* Features are the row's non-zero entries (as the River BR peer), so sparse rows are never
  densified; zero features change neither prediction nor gradient.
* A chunk is predicted with the chain as it stood before it, then learnt instance by
  instance in order.  No randomness.

No flip rates are used: each model learns the observed (noisy) labels.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(600, 4)); Y = np.c_[X[:, 0] > 0, (X[:, 0] > 0) & (X[:, 1] > 0)].astype(int)
>>> model = RiverClassifierChain().partial_fit(X[:300], Y[:300]).partial_fit(X[300:500], Y[300:500])
>>> model.coef_.shape, model.chain_coef_.shape, model.chain_coef_[0].tolist()   # label 0 has no predecessor
((4, 2), (2, 2), [0.0, 0.0])
>>> P = model.predict_proba(X[500:])
>>> bool(P.min() >= 0 and P.max() <= 1), bool((model.predict(X[500:]) == Y[500:]).mean() > 0.85)
(True, True)
"""

from __future__ import annotations

import math

import numpy as np

from ...saved_state import COUNT, FITTED_INPUTS, NONNEGATIVE, NPY_KINDS, REAL, STR, SavedState, array, first_error, \
    number, optional, probe_decision, shape_error, stored_as
from ...validation import check_in_range
from ._base import ChunkBaseline, as_csr
from .river_peer import import_river, row_dicts
from .river_state import LOGISTIC_WEIGHTS, logistic_weights, logistic_weights_error, set_logistic_weights

__all__ = ["RiverClassifierChain"]

#: River's intercept learning rate (``LogisticRegression(intercept_lr=0.01)``, its default).
INTERCEPT_LR = 0.01


def _sigmoid(z):
    """River's ``utils.math.sigmoid``: 0 below -30, 1 above 30 (vectorised)."""
    with np.errstate(over="ignore"):
        p = 1.0 / (1.0 + np.exp(-z))
    return np.where(z < -30, 0.0, np.where(z > 30, 1.0, p))


def _log_gradient(y01, raw):
    """River's ``optim.losses.Log.gradient`` (y in {0, 1}, raw the logit), vectorised."""
    y = 2.0 * y01 - 1.0
    z = raw * y
    with np.errstate(over="ignore"):
        mid = -y / (np.exp(z) + 1.0)
        high = np.exp(-np.maximum(z, 18.0)) * -y
    return np.where(z > 18.0, high, np.where(z < -18.0, -y, mid))


def _label_key(j: int):
    return ("label", j)  # never equal to a feature key (column indices)


class RiverClassifierChain(ChunkBaseline):
    """River's classifier chain of logistic regressions, learning instance by instance.

    ``decision_function`` is ``P(relevant | x, earlier labels' probabilities) - 1/2`` (N, q);
    ``predict_proba`` the chain's probabilities; ``predict`` the labels above 1/2.

    Parameters
    ----------
    learning_rate : float, default 0.01
        Step size of River's SGD optimiser (River's default).
    engine : {"numpy", "river"}, default "numpy"
        ``"numpy"``: River's arithmetic, vectorised (no River needed); ``"river"``: River's
        ``ClassifierChain`` object itself (needs River; slow on many labels).

    Attributes
    ----------
    coef_ : ndarray (d, q) or None
        Feature weights (numpy engine).
    chain_coef_ : ndarray (q, q) or None
        ``chain_coef_[j, l]``: weight of label ``l``'s probability in label ``j``'s model (l < j).
    intercept_ : ndarray (q,) or None
    model_ : river.multioutput.ClassifierChain or None
        River's chain (river engine).
    n_seen_ : int
    """

    _state_names = ("coef_", "chain_coef_", "intercept_", "model_", "n_features_in_", "n_labels_", "n_seen_")

    def __init__(self, learning_rate=0.01, engine="numpy"):
        self.learning_rate = learning_rate
        self.engine = engine

    def _validate_params(self):
        check_in_range(self.learning_rate, "learning_rate", 0, math.inf, low_open=True, high_open=True)
        if self.engine not in ("numpy", "river"):
            raise ValueError(f"engine must be 'numpy' or 'river', got {self.engine!r}")

    def _new_chain(self, q):
        """River's chain of ``q`` untrained logistic regressions (river engine)."""
        linear_model, multioutput, optim = import_river()
        order = [_label_key(j) for j in range(q)]
        template = linear_model.LogisticRegression(optimizer=optim.SGD(self.learning_rate))
        return multioutput.ClassifierChain(template, order=order)

    def _start(self, X, Y01):
        d, q = X.shape[1], Y01.shape[1]
        if self.engine == "river":
            return {"model_": self._new_chain(q), "coef_": None, "chain_coef_": None, "intercept_": None}
        return {"coef_": np.zeros((d, q)), "chain_coef_": np.zeros((q, q)), "intercept_": np.zeros(q),
                "model_": None}

    def _learn(self, state, X, Y01, first):
        if state["model_"] is not None:  # the engine the model was started with
            model, q = state["model_"], Y01.shape[1]
            keys = [_label_key(j) for j in range(q)]
            for x, y in zip(row_dicts(X), Y01.astype(bool).tolist()):
                model.learn_one(x, dict(zip(keys, y)))
            return state
        X = as_csr(X)
        W, V, b = state["coef_"], state["chain_coef_"], state["intercept_"]
        q = W.shape[1]
        lr = float(self.learning_rate)
        lower = np.tril(np.ones((q, q), dtype=bool), -1)
        Yf = Y01.astype(np.float64)
        raw, p = np.empty(q), np.empty(q)
        indptr, indices, data = X.indptr, X.indices, X.data
        for i in range(X.shape[0]):
            idx, val = indices[indptr[i]:indptr[i + 1]], data[indptr[i]:indptr[i + 1]]
            base = val @ W[idx] + b if idx.size else b.copy()
            for j in range(q):  # the chain: label j sees the probabilities of labels < j
                z = base[j] + (V[j, :j] @ p[:j] if j else 0.0)
                raw[j] = z
                p[j] = 0.0 if z < -30 else (1.0 if z > 30 else 1.0 / (1.0 + math.exp(-z)))
            g = _log_gradient(Yf[i], raw)
            if idx.size:
                W[idx] -= lr * np.outer(val, g)
            V -= lr * np.where(lower, np.outer(g, p), 0.0)
            b -= INTERCEPT_LR * g
        return state

    def _proba(self, X) -> np.ndarray:
        q = self.n_labels_
        if self.model_ is not None:  # the engine the model was started with
            keys = [_label_key(j) for j in range(q)]
            out = np.empty((X.shape[0], q))
            for i, x in enumerate(row_dicts(X)):
                pred = self.model_.predict_proba_one(x)
                out[i] = [pred[key][True] for key in keys]
            return out
        X = as_csr(X)
        base = np.asarray(X @ self.coef_) + self.intercept_
        P = np.empty_like(base)
        for j in range(q):
            P[:, j] = _sigmoid(base[:, j] + P[:, :j] @ self.chain_coef_[j, :j])
        return P

    def predict_proba(self, X) -> np.ndarray:
        """The chain's ``P(label relevant | x)`` (N, q).

        After a 1-D binary target: (N, 2), the probabilities of ``classes_[0]`` and ``classes_[1]``.
        """
        P = self._proba(self._check_X(X))
        return P if getattr(self, "_binary_classes", None) is None else np.column_stack([1.0 - P[:, 0], P[:, 0]])

    def _decision(self, X) -> np.ndarray:
        """``P(relevant | x) - 1/2`` (N, q)."""
        return self._proba(X) - 0.5


def _saved_chain(chain):
    """River's chain as its labels' weights (:mod:`~ncld_core.eval.baselines.river_state`); None with the numpy
    engine."""
    return None if chain is None else logistic_weights([chain[key] for key in chain.order])


def _rebuilt_chain(peer, stored):
    """The peer's River chain made afresh from its parameters, with the stored weights (None stays None)."""
    if stored is None:
        return None
    q = peer.n_labels_
    chain = peer._new_chain(q)
    set_logistic_weights([chain[_label_key(j)] for j in range(q)], stored)
    return chain


def _check_saved(s: dict) -> str | None:
    """The state of one engine: the numpy engine's weights of their shapes, or River's chain, never both."""
    if "n_labels_" not in s:
        return None
    d, q = s["n_features_in_"], s["n_labels_"]
    arrays = [s[k] for k in ("coef_", "chain_coef_", "intercept_")]
    if s["model_"] is not None:
        return first_error(None if all(a is None for a in arrays) else "a River chain (model_) and numpy weights",
                           logistic_weights_error(s["model_"], n_labels=q, n_features=d, chain=True))
    if any(a is None for a in arrays):
        return "neither a River chain (model_) nor all numpy weights (coef_, chain_coef_, intercept_)"
    return first_error(shape_error("coef_", s["coef_"], (d, q)), shape_error("chain_coef_", s["chain_coef_"], (q, q)),
                       shape_error("intercept_", s["intercept_"], (q,)))


#: What a checkpoint keeps (:mod:`ncld_core.saved_state`): the numpy engine's weights, or River's chain as its
#: labels' weights (never the River object), rebuilt from the parameters on loading.
RiverClassifierChain.saved_state = SavedState(
    params={"learning_rate": REAL, "engine": STR},
    fitted={"coef_": optional(array(2)), "chain_coef_": optional(array(2)), "intercept_": optional(array(1)),
            "model_": stored_as(optional(LOGISTIC_WEIGHTS), _saved_chain, _rebuilt_chain),
            "n_features_in_": COUNT, "n_labels_": COUNT, "n_seen_": number(NONNEGATIVE, integer=True),
            "_binary_classes": optional(array(1, NPY_KINDS))},
    optional=dict(FITTED_INPUTS),
    check=_check_saved,
    smoke=probe_decision,
)
