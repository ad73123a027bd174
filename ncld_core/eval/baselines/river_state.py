"""River's logistic regressions in a checkpoint: their weights, never the River objects.

A River ``LogisticRegression`` as the River peers make it (:mod:`~ncld_core.eval.baselines.river_peer`,
:mod:`~ncld_core.eval.baselines.river_chain`: plain SGD, a constant learning rate, the log loss, all
fixed by the peer's parameters) holds as its state only its weights (a dict from feature to weight, in
the order the features were first seen), its intercept and its optimiser's step count.  A checkpoint keeps
those of the per-label models, as :data:`LOGISTIC_WEIGHTS` says (:func:`logistic_weights`), and the
peer rebuilds its River model from them: freshly made from its parameters, the weights set
(:func:`set_logistic_weights`).  Nothing of River is pickled or unpickled.

A feature is a column index ``c >= 0``, or, in a classifier chain, the probability of an earlier label
``l``, stored as ``-1 - l`` (:func:`feature_code`).

>>> import numpy as np
>>> from ncld_core.eval.baselines.river_peer import RiverBinaryRelevance
>>> X = np.array([[0.0, 1.0], [2.0, 0.0], [1.0, 1.0]]); Y = np.array([[1, 0], [0, 1], [1, 1]])
>>> peer = RiverBinaryRelevance().partial_fit(X, Y)
>>> saved = logistic_weights([peer.model_[j] for j in range(2)])
>>> saved["keys"][0].tolist(), saved["steps"].tolist()       # label 0 saw column 1, then column 0
([1, 0], [3, 3])
>>> logistic_weights_error(saved, n_labels=2, n_features=1, chain=False)
"model_['keys'][0] holds 1 at 0: a column of the 1 features is in [0, 1)"
"""

from __future__ import annotations

import numpy as np

from ...saved_state import NONNEGATIVE, array, fields_of, list_of

__all__ = ["LOGISTIC_WEIGHTS", "feature_code", "logistic_weights", "set_logistic_weights", "logistic_weights_error"]

#: The per-label logistic regressions of a River model as a checkpoint keeps them: per label its features
#: (integer codes, :func:`feature_code`) and their weights, in the order River holds them; per label its
#: intercept and its optimiser's step count (>= 0).
LOGISTIC_WEIGHTS = fields_of(keys=list_of(array(1, "i")), weights=list_of(array(1)), intercepts=array(1),
                             steps=array(1, "i", rng=NONNEGATIVE))


def feature_code(key) -> int:
    """The integer a feature of a River model is stored as: its column ``c``, or ``-1 - l`` for a chain's
    ``("label", l)``; a ValueError for any other feature."""
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool) and key >= 0:
        return int(key)
    if isinstance(key, tuple) and len(key) == 2 and key[0] == "label" and isinstance(key[1], int) and key[1] >= 0:
        return -1 - key[1]
    raise ValueError(f"a River model's feature {key!r} is neither a column index nor a chained label")


def _feature(code: int):
    return code if code >= 0 else ("label", -1 - code)


def logistic_weights(models: list) -> dict:
    """The stored form (:data:`LOGISTIC_WEIGHTS`) of River logistic regressions, one per label in order."""
    keys, weights = [], []
    for model in models:
        w = model.weights  # a dict, in River's order
        keys.append(np.array([feature_code(k) for k in w], dtype=np.int64))
        weights.append(np.array(list(w.values()), dtype=np.float64))
    return {"keys": keys, "weights": weights,
            "intercepts": np.array([float(m.intercept) for m in models], dtype=np.float64),
            "steps": np.array([int(m.optimizer.n_iterations) for m in models], dtype=np.int64)}


def logistic_weights_error(stored: dict, *, n_labels: int, n_features: int, chain: bool,
                           name: str = "model_") -> str | None:
    """Why ``stored`` (checked against :data:`LOGISTIC_WEIGHTS`; the attribute ``name``) cannot be the models of
    ``n_labels`` labels over ``n_features`` columns: one entry per label, as many weights as features, each
    feature once, a column within the columns and (``chain``) label ``j`` fed only the labels before it; None
    if it can."""
    keys, weights = stored["keys"], stored["weights"]
    for part in ("keys", "weights", "intercepts", "steps"):
        if len(stored[part]) != n_labels:
            return f"{name}['{part}'] has {len(stored[part])} entries for {n_labels} labels"
    for j, (k, w) in enumerate(zip(keys, weights)):
        at_j = f"{name}['keys'][{j}]"
        if k.shape != w.shape:
            return f"{at_j} has {k.size} features for {w.size} weights"
        low = -j if chain else 0
        outside = (k < low) | (k >= n_features)
        if outside.any():
            at = int(np.argmax(outside))
            allowed = f"a column of the {n_features} features is in [0, {n_features})"
            if chain:
                allowed += f", an earlier label's probability in [{low}, -1]" if j else ", no label before it"
            return f"{at_j} holds {k[at]} at {at}: {allowed}"
        if np.unique(k).size != k.size:
            return f"{at_j} names a feature twice"
    return None


def set_logistic_weights(models: list, stored: dict) -> None:
    """Set the stored weights, intercepts and step counts on freshly made River logistic regressions."""
    from river import utils  # River is optional; the peers that call this have imported it

    for model, keys, weights, intercept, steps in zip(models, stored["keys"], stored["weights"],
                                                      stored["intercepts"], stored["steps"]):
        model._weights = utils.VectorDict({_feature(c): v for c, v in zip(keys.tolist(), weights.tolist())})
        model.intercept = float(intercept)
        model.optimizer.n_iterations = int(steps)
