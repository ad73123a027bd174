"""A River peer: binary relevance of online logistic regressions.

River (Montiel et al., "River: machine learning for streaming data in Python", JMLR 22
(2021)) is the reference library for learning one instance at a time.  This peer is what
a River user would write for the task: one :class:`river.linear_model.LogisticRegression`
per label (through :class:`river.multioutput.PerOutputClassifier`), each trained with
``learn_one`` on every instance, in stream order::

    p_j(x) = sigmoid(w_j . x + b_j),   one SGD step on the log loss per instance and label
    decision_j(x) = p_j(x) - 1/2       (> 0 exactly when River's ``predict_one`` says True)

Choices (stated plainly)
------------------------
* River's defaults: plain SGD with learning rate ``0.01`` (``learning_rate``), intercept
  learning rate 0.01, no regularisation (``l2 = 0``), weights starting at zero.  No feature
  scaling: features are used raw, like the other baselines.
* Features are passed as dicts ``{column index: value}`` of the row's *non-zero* entries
  (sparse rows are never densified).  Zero features contribute nothing to the prediction or
  to the gradient, so this equals feeding the full row when ``l2 = 0``; with ``l2 > 0`` River
  only decays the weights of the features present in ``x``.
* A chunk is predicted with the models as they stood before it, then learnt instance by
  instance in order.  There is no randomness.
* River is an optional dependency (``pip install river``); it is imported on first use.

No flip rates are used: each model learns the observed (noisy) labels.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(600, 4)); Y = (X[:, :2] > 0).astype(int)
>>> model = RiverBinaryRelevance().partial_fit(X[:300], Y[:300]).partial_fit(X[300:500], Y[300:500])
>>> bool((model.predict(X[500:]) == Y[500:]).mean() > 0.9)
True
"""

from __future__ import annotations

import importlib.util
import math

import numpy as np

from ...saved_state import COUNT, FITTED_INPUTS, NONNEGATIVE, NPY_KINDS, REAL, SavedState, array, number, optional, \
    probe_decision, stored_as
from ...validation import check_in_range
from ._base import ChunkBaseline, as_csr
from .river_state import LOGISTIC_WEIGHTS, logistic_weights, logistic_weights_error, set_logistic_weights

__all__ = ["RiverBinaryRelevance", "row_dicts", "import_river"]

if importlib.util.find_spec("river") is None:  # keep the doctests runnable without River
    __doc__ = __doc__.split("Examples\n--------")[0] + "(Examples need River.)\n"


def import_river():
    """River's ``linear_model``, ``multioutput`` and ``optim`` modules, imported on first use (River is
    optional); without River a ``ValueError`` saying how to install it."""
    try:
        from river import linear_model, multioutput, optim
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ValueError(
            f"the River peer needs the optional dependency River ({exc}); install it with "
            "`pip install river` or `pip install ncld[river]`"
        ) from None
    return linear_model, multioutput, optim


def row_dicts(X):
    """Rows of a (dense or sparse) matrix as River feature dicts of their non-zero entries.

    >>> row_dicts(np.array([[0.0, 2.0], [1.5, 0.0]]))
    [{1: 2.0}, {0: 1.5}]
    """
    X = as_csr(X)
    indptr, indices, data = X.indptr, X.indices.tolist(), X.data.tolist()
    out = []
    for i in range(X.shape[0]):
        lo, hi = indptr[i], indptr[i + 1]
        out.append({c: v for c, v in zip(indices[lo:hi], data[lo:hi]) if v != 0.0})
    return out


class RiverBinaryRelevance(ChunkBaseline):
    """One River ``LogisticRegression`` per label, learning instance by instance.

    ``partial_fit`` learns a chunk instance by instance, in order; ``decision_function`` is
    ``P(relevant | x) - 1/2`` (N, q), and ``predict`` gives the labels with probability
    above 1/2, as int8 in {0, 1}.

    Parameters
    ----------
    learning_rate : float, default 0.01
        Step size of River's SGD optimiser (River's default).
    l2 : float, default 0.0
        River's L2 penalty (River's default).

    Attributes
    ----------
    model_ : river.multioutput.PerOutputClassifier
        The per-label models, keyed by label index.
    n_seen_ : int
        Instances learnt so far.
    """

    _state_names = ("model_", "n_features_in_", "n_labels_", "n_seen_")

    def __init__(self, learning_rate=0.01, l2=0.0):
        self.learning_rate = learning_rate
        self.l2 = l2

    def _validate_params(self):
        check_in_range(self.learning_rate, "learning_rate", 0, math.inf, low_open=True, high_open=True)
        check_in_range(self.l2, "l2", 0, math.inf, high_open=True)

    def _new_model(self, q):
        linear_model, multioutput, optim = import_river()
        template = linear_model.LogisticRegression(optimizer=optim.SGD(self.learning_rate), l2=self.l2)
        model = multioutput.PerOutputClassifier(template)
        for j in range(q):  # create every label's model now, in label order
            model[j]
        return model

    def _start(self, X, Y01):
        return {"model_": self._new_model(Y01.shape[1])}

    def _learn(self, state, X, Y01, first):
        """Learn the chunk instance by instance, in order (``learn_one`` of every label's model)."""
        model = state["model_"]
        for x, y in zip(row_dicts(X), Y01.astype(bool).tolist()):
            model.learn_one(x, dict(enumerate(y)))
        return state

    def predict_proba(self, X) -> np.ndarray:
        """``P(label relevant | x)`` (N, q) from each label's logistic regression.

        After a 1-D binary target: (N, 2), the probabilities of ``classes_[0]`` and ``classes_[1]``.
        """
        P = self._proba(self._check_X(X))
        return P if getattr(self, "_binary_classes", None) is None else np.column_stack([1.0 - P[:, 0], P[:, 0]])

    def _proba(self, X) -> np.ndarray:
        q = self.n_labels_
        models = [self.model_[j] for j in range(q)]
        out = np.empty((X.shape[0], q))
        for i, x in enumerate(row_dicts(X)):
            for j, m in enumerate(models):
                out[i, j] = m.predict_proba_one(x)[True]
        return out

    def _decision(self, X) -> np.ndarray:
        """``P(relevant | x) - 1/2`` (N, q)."""
        return self._proba(X) - 0.5


def _rebuilt(peer, stored: dict):
    """The peer's River model made afresh from its parameters, with the stored weights."""
    model = peer._new_model(peer.n_labels_)
    set_logistic_weights([model[j] for j in range(peer.n_labels_)], stored)
    return model


#: What a checkpoint keeps (:mod:`ncld_core.saved_state`): the River model as its per-label weights (never the
#: River object; :mod:`~ncld_core.eval.baselines.river_state`), rebuilt from the parameters on loading.
RiverBinaryRelevance.saved_state = SavedState(
    params={"learning_rate": REAL, "l2": REAL},
    fitted={"model_": stored_as(LOGISTIC_WEIGHTS, lambda m: logistic_weights([m[j] for j in sorted(m.keys())]),
                                _rebuilt),
            "n_features_in_": COUNT, "n_labels_": COUNT, "n_seen_": number(NONNEGATIVE, integer=True),
            "_binary_classes": optional(array(1, NPY_KINDS))},
    optional=dict(FITTED_INPUTS),
    check=lambda s: None if "model_" not in s else logistic_weights_error(
        s["model_"], n_labels=s["n_labels_"], n_features=s["n_features_in_"], chain=False),
    smoke=probe_decision,
)
