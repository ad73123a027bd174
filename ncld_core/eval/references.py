"""Trivial references reported next to every model in every run.

They use the same chunk API as the project's models (scikit-learn style):
``partial_fit(X, Y)`` per chunk, ``fit(X, Y)`` from scratch,
``decision_function(X)`` -> (n, q) float, ``predict(X)`` -> (n, q) labels where
``decision_function(X) > 0``, in the label values and dtype of the fitted ``Y``. ``X`` may be dense or
scipy.sparse; ``Y`` may be in {0, 1} or {-1, +1}. Parameters are set in
``__init__``; fitted attributes end with an underscore.

* :class:`AllNegative` -- predict no label at all. Its Hamming loss is the
  label density, which on sparse multi-label data is already small: a model
  must beat it to show it predicts anything useful.
* :class:`NoisyPrior` -- rank labels by their frequency in the *observed*
  (noisy) labels, and predict the labels more frequent than ``threshold``. It
  is what a learner gets from the label marginals alone, ignoring ``x``; the
  ranking metrics of a model should beat it.

>>> import numpy as np
>>> X = np.zeros((4, 3)); Y = np.array([[1, 0], [1, 0], [1, 1], [0, 0]])
>>> NoisyPrior().fit(X, Y).predict(X[:1]).tolist()
[[1, 0]]
>>> AllNegative().fit(X, Y).predict(X[:1]).tolist()
[[0, 0]]
"""

from __future__ import annotations

import numpy as np

from ..saved_state import COUNT, FITTED_INPUTS, NONNEGATIVE, NPY_KINDS, PROPORTION, SavedState, array, first_error, \
    number, optional, shape_error
from ..validation import check_in_range
from ..sklearn_compat import ChunkClassifier

__all__ = ["AllNegative", "NoisyPrior"]


class _Reference(ChunkClassifier):
    """Shared chunk API: validation, feature/label counts, predict; a scikit-learn classifier
    (:class:`~ncld_core.sklearn_compat.ChunkClassifier`) whose score is poor by design."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True  # it ignores x: no accuracy threshold applies
        return tags

    # -- fitting ---------------------------------------------------------------
    @property
    def is_fitted(self) -> bool:
        return hasattr(self, "n_features_in_")

    def _is_fitted(self) -> bool:
        return self.is_fitted

    def _reset(self) -> None:
        for attr in [a for a in vars(self) if a.endswith("_") and not a.startswith("_")]:
            delattr(self, attr)
        for attr in ("_feature_names", "_label_values", "_binary_classes"):
            vars(self).pop(attr, None)

    def _validate_params(self) -> None:
        pass

    def check_params(self) -> None:
        """Refuse a parameter outside its allowed values (ValueError naming it), as ``partial_fit`` would."""
        self._validate_params()

    def partial_fit(self, X, Y, *, classes=None):
        """Update with one chunk of instances and their observed labels.

        ``classes``: only for a 1-D target whose first chunk holds one class (both classes).
        """
        self._validate_params()
        # X is ignored: a chunk of constant features is no problem for a reference.
        X, Y, inputs = self._learning_chunk(X, Y, classes, reset=False, learning=False)
        if inputs is not None:
            self._commit_inputs(inputs)
            self.n_labels_ = int(Y.shape[1])
            self.n_seen_ = 0
            self._start(Y.shape[1])
        self._update(Y)
        self.n_seen_ += int(Y.shape[0])
        return self

    def fit(self, X, Y):
        """Forget everything, then ``partial_fit(X, Y)``."""
        self._validate_params()
        self._learning_chunk(X, Y, reset=True, learning=False)  # bad input is refused before anything is forgotten
        self._reset()
        return self.partial_fit(X, Y)

    # -- prediction ------------------------------------------------------------
    def _check_predict_X(self, X):
        self._validate_params()
        return self._fitted_X(X)

    def decision_function(self, X) -> np.ndarray:
        """Decision values, shape (n, q): > 0 means the label is predicted ((n,) after a 1-D target).

        :meth:`predict` gives the predicted labels in {0, 1}, shape (n, q), int8.
        """
        X = self._check_predict_X(X)
        return self._scores_out(np.tile(self._row(), (X.shape[0], 1)))

    # -- to implement ------------------------------------------------------------
    def _start(self, n_labels: int) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _update(self, Y: np.ndarray) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _row(self) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


class AllNegative(_Reference):
    """Predict no label for any instance: ``decision_function`` is -1 everywhere.

    What it tells a reader: the Hamming loss of predicting nothing equals the
    label density (mean fraction of relevant labels per instance), which is
    small on sparse multi-label data, so a low Hamming loss alone means little.
    Its F1 scores are 0 except where there is nothing to find (see the
    ``zero_division`` convention of :mod:`ncld_core.eval.metrics`), and since every
    label ties, its ranking metrics are the worst tie values: average precision
    ``|Y_i| / q`` per instance with relevant labels, ranking loss 1 and
    one-error 1 on instances with both relevant and irrelevant labels.

    Fitted attributes: ``n_features_in_``, ``n_labels_``, ``n_seen_``
    (instances seen).

    >>> import numpy as np
    >>> model = AllNegative().partial_fit(np.ones((2, 3)), [[1, -1], [-1, -1]])
    >>> model.decision_function(np.ones((1, 3))).tolist(), model.predict(np.ones((1, 3))).tolist()  # Y's values
    ([[-1.0, -1.0]], [[-1, -1]])
    >>> model.n_features_in_, model.n_labels_, model.n_seen_
    (3, 2, 2)
    """

    def __init__(self):
        pass

    def _start(self, n_labels: int) -> None:
        pass

    def _update(self, Y: np.ndarray) -> None:
        pass

    def _row(self) -> np.ndarray:
        return np.full(self.n_labels_, -1.0)


class NoisyPrior(_Reference):
    """Score every label by its observed (noisy) frequency, the same for every instance.

    ``prior_[j]`` is the fraction of instances seen so far (over all chunks)
    whose *observed* label ``j`` is positive; ``decision_function`` is
    ``prior_ - threshold`` for every instance, so it ranks labels by prior, and
    ``predict`` gives the labels with ``prior_ > threshold``.

    What it tells a reader: how far one gets from the label marginals alone,
    without looking at ``x`` -- and, as it learns from noisy labels, how label
    noise shifts those marginals (with flip rates ``rho_pos``, ``rho_neg`` the
    observed frequency is ``(1 - rho_pos) p + rho_neg (1 - p)``). A model's
    ranking metrics (average precision, one-error, coverage) should beat it.

    Parameters
    ----------
    threshold : float in [0, 1], default 0.5
        A label is predicted when its observed frequency exceeds it.

    Fitted attributes: ``prior_`` (q,), ``counts_`` (q,) positive counts,
    ``n_seen_``, ``n_features_in_``, ``n_labels_``.

    >>> import numpy as np
    >>> model = NoisyPrior(threshold=0.5)
    >>> model = model.partial_fit(np.zeros((2, 1)), [[1, 0, 0], [1, 1, 0]])
    >>> model = model.partial_fit(np.zeros((2, 1)), [[1, 1, 0], [0, 1, 1]])
    >>> model.prior_.tolist()
    [0.75, 0.75, 0.25]
    >>> model.decision_function(np.zeros((1, 1))).tolist(), model.predict(np.zeros((1, 1))).tolist()
    ([[0.25, 0.25, -0.25]], [[1, 1, 0]])
    """

    def __init__(self, threshold: float = 0.5):
        self.threshold = threshold

    def _validate_params(self) -> None:
        check_in_range(self.threshold, "threshold", 0, 1)

    def _start(self, n_labels: int) -> None:
        self.counts_ = np.zeros(n_labels, dtype=np.int64)

    def _update(self, Y: np.ndarray) -> None:
        self.counts_ += np.count_nonzero(Y, axis=0)
        self.prior_ = self.counts_ / (self.n_seen_ + Y.shape[0])

    def _row(self) -> np.ndarray:
        return self.prior_ - float(self.threshold)


#: What a checkpoint keeps of a fitted reference (:mod:`ncld_core.saved_state`).
_FITTED = {"n_features_in_": COUNT, "n_labels_": COUNT, "n_seen_": number(NONNEGATIVE, integer=True),
           "_binary_classes": optional(array(1, NPY_KINDS))}


def _check_prior(s: dict) -> str | None:
    if "n_labels_" not in s:
        return None
    q = s["n_labels_"]
    return first_error(shape_error("counts_", s.get("counts_"), (q,)), shape_error("prior_", s.get("prior_"), (q,)))


AllNegative.saved_state = SavedState(fitted=dict(_FITTED), optional=dict(FITTED_INPUTS))
#: Its counts (>= 0) and prior (a proportion) besides.
NoisyPrior.saved_state = SavedState(fitted={**_FITTED, "counts_": array(1, "i", rng=NONNEGATIVE),
                                            "prior_": array(1, rng=PROPORTION)},
                                    optional=dict(FITTED_INPUTS), check=_check_prior)
