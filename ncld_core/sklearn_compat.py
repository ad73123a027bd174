"""scikit-learn conventions shared by ELM-NCLD, the baselines and the references.

:class:`ChunkClassifier` is the base class of every model of the project
(:class:`~ncld_core.model.elm_ncld.ELMNCLD`, :class:`~ncld_core.eval.baselines._base.ChunkBaseline`,
the references of :mod:`ncld_core.eval.references`).  It makes a chunk model a scikit-learn
estimator:

* ``BaseEstimator``: the parameters are the ``__init__`` arguments, stored unchanged
  (``get_params``, ``set_params``, ``clone``, the repr).  ``set_params`` refuses an unknown
  name with a ``ValueError`` naming it, before anything changes;
* ``ClassifierMixin`` and ``MultiOutputMixin``: ``is_classifier`` is true and the models
  take a label matrix (``tags.target_tags.multi_output``);
* tags: sparse ``X`` is accepted; multi-label targets are; multiclass 1-D targets are not
  (``tags.classifier_tags.multi_class = False``, see below);
* ``fit`` forgets everything learnt before, ``partial_fit`` continues (the first call
  initialises); an unfitted model raises ``NotFittedError`` (a ``ValueError``).

Inputs
------
``X`` goes through :func:`ncld_core.validation.check_X` (numbers only: strings are refused,
numeric ones too; finite; ``|x| <= MAX_FEATURE``; a chunk to learn whose features are all constant
is refused), then scikit-learn's ``validate_data``: ``fit`` and the first ``partial_fit`` set
``n_features_in_`` and, for a DataFrame with string column names, ``feature_names_in_``; later calls
refuse another feature count ("X has 1 features, but ELMNCLD is expecting 4 features as input") and
a DataFrame whose columns differ from or are ordered unlike the fitted names.

Targets
-------
* ``Y`` 2-D (N, q), labels in {0, 1} or {-1, +1}: a multi-label problem, the models' own use.
  ``decision_function`` gives (N, q) scores, ``> 0`` exactly where a label is predicted;
  ``predict`` gives (N, q) labels in the values and dtype of the ``Y`` the model was first
  fitted on (0/1, or -1/+1 when that ``Y`` held -1; an int64 ``Y`` gives int64 predictions);
  ``classes_`` is ``arange(q)``, the label indices (as scikit-learn's multi-label classifiers,
  e.g. ``MLPClassifier`` or ``OneVsRestClassifier``, report it).
* ``y`` 1-D with two classes (numbers or strings): a binary problem, learnt as one label
  column whose relevant class is ``classes_[1]`` (the larger).  ``decision_function`` gives
  (N,) scores, ``> 0`` meaning ``classes_[1]``, and ``predict`` the class values (N,).  A 1-D
  target with more than two classes is refused ("Only binary classification is supported"):
  give it as a label matrix (``sklearn.preprocessing.LabelBinarizer``) to learn each class
  as a label.  A 1-D target holding one class is refused unless ``partial_fit`` is told
  both ``classes``.

``predict_proba`` (ELM-NCLD and the models with probabilities): (N, q) probabilities of each
label, ``>= 1/2`` exactly where ``predict`` predicts it ((N, 2) ``[P(classes_[0]), P(classes_[1])]``
after a 1-D target); what they mean is each model's own (ELM-NCLD: a noise-corrected,
rule-weighted probability, see its ``predict_proba``).

``score(X, Y)`` is scikit-learn's default for multi-output classifiers, the **subset
accuracy** (``accuracy_score``: the fraction of instances whose whole label set is
predicted exactly; plain accuracy for a 1-D target); ``Y`` may be in {0, 1} or {-1, +1}.
It is strict: with many labels it is near 0 even for a good model, so to tune a
multi-label model pass a label-wise scorer, e.g. ``GridSearchCV(..., scoring="f1_micro")``.

``sklearn.utils.estimator_checks.check_estimator`` passes for every model at its defaults,
with no expected failure (``tests/test_sklearn_river.py``).

>>> import numpy as np
>>> from sklearn.base import clone, is_classifier
>>> from ncld_core.model.elm_ncld import ELMNCLD
>>> model = ELMNCLD(beta=0.5, random_state=0)
>>> is_classifier(model), clone(model).get_params() == model.get_params()
(True, True)
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(60, 4)); y = np.where(X[:, 0] > 0, "yes", "no")
>>> binary = ELMNCLD(n_hidden=20, n_neighbors=5, random_state=0).fit(X, y)  # a 1-D target: binary
>>> binary.classes_.tolist(), binary.predict(X[:3]).tolist() == y[:3].tolist()
(['no', 'yes'], True)
>>> Y = np.c_[X[:, 0] > 0, X[:, 1] > 0].astype(np.int64)
>>> multi = ELMNCLD(n_hidden=20, n_neighbors=5, random_state=0).fit(X, Y)
>>> multi.predict(X[:2]).dtype, bool(np.all((multi.decision_function(X) > 0) == multi.predict(X)))
(dtype('int64'), True)
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, MultiOutputMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import validate_data

from .validation import check_X, check_XY, check_Y

__all__ = ["ChunkClassifier", "feature_names_of", "label_values_of"]

class _NameReader(BaseEstimator):
    """A bare estimator for :func:`feature_names_of` to read names into (the model itself changes only
    once a chunk is learnt)."""


def feature_names_of(X):
    """``X``'s feature names as scikit-learn reads them (a DataFrame's string column names, as an object
    array), or None: ``validate_data(reset=True)`` on a scratch estimator.

    >>> import pandas as pd
    >>> feature_names_of(pd.DataFrame({"a": [1.0], "b": [2.0]})).tolist(), feature_names_of([[1.0, 2.0]])
    (['a', 'b'], None)
    """
    reader = _NameReader()
    validate_data(reader, X, reset=True, skip_check_array=True)
    return getattr(reader, "feature_names_in_", None)


def label_values_of(Y) -> np.ndarray:
    """``[negative, positive]`` of a label matrix in its own dtype: ``[0, 1]``, or ``[-1, 1]`` when it
    holds a -1 (``[False, True]`` for bool); ``predict`` returns its labels in them.

    >>> label_values_of(np.array([[1, -1]], dtype=np.int8)).tolist(), label_values_of([[0.0, 1.0]]).dtype
    ([-1, 1], dtype('float64'))
    """
    values = Y.data if sp.issparse(Y) else np.asarray(Y)
    dtype = values.dtype if values.dtype.kind in "biuf" else np.dtype(np.int64)
    negative = -1 if dtype.kind in "if" and np.any(values == -1) else 0
    return np.array([negative, 1], dtype=dtype)


def _ndim(Y) -> int:
    if sp.issparse(Y):
        return 2
    try:
        return np.asarray(Y).ndim
    except (TypeError, ValueError):  # ragged rows: check_Y reports them
        return 2


class ChunkClassifier(ClassifierMixin, MultiOutputMixin, BaseEstimator):
    """Base class: scikit-learn estimator API around a chunk model (module docstring).

    A subclass provides ``is_fitted`` (property), ``n_labels_`` once fitted, and calls
    :meth:`_targets` on the ``Y`` given to ``fit`` / ``partial_fit`` (then stores the
    returned classes in ``_binary_classes`` with the rest of its state) and
    :meth:`_scores_out` on the (N, q) scores it returns from ``decision_function``.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True  # dense or any scipy.sparse format
        tags.target_tags.single_output = True  # a 1-D binary target
        tags.target_tags.multi_output = True  # a label matrix (N, q)
        tags.classifier_tags.multi_label = True
        tags.classifier_tags.multi_class = False  # a 1-D multiclass target is refused
        return tags

    def __sklearn_is_fitted__(self) -> bool:
        return bool(self.is_fitted)

    def set_params(self, **params):
        """Set parameters by name (nested ``a__b`` as scikit-learn); an unknown name is a ValueError."""
        valid = self.get_params(deep=False)
        for key in params:
            top = key.split("__", 1)[0]
            if top not in valid:
                name = type(self).__name__
                raise ValueError(f"invalid parameter {key!r} for {name}: {name} has no parameter {top!r}; "
                                 f"valid: {sorted(valid)}")
        return super().set_params(**params)

    def _not_fitted(self) -> NotFittedError:
        return NotFittedError(f"this {type(self).__name__} is not fitted yet: call partial_fit or fit first")

    # ------------------------------------------------------------------ inputs
    def _learning_chunk(self, X, Y, classes=None, *, reset: bool, learning: bool = True):
        """``(X, Y01, meta)``: a chunk to learn, checked (``X`` by ``check_X``, its feature names by
        ``validate_data`` against the fitted ones) and, for a first chunk (``reset``: ``fit``), what to
        store with the model once it is learnt (:meth:`_commit_inputs`; None for a later chunk).
        ``learning``: refuse a chunk whose features are all constant (not for a model ignoring ``X``)."""
        Y, binary = self._targets(Y, classes, reset=reset)
        first = reset or not self.is_fitted
        X_checked, Y01 = check_XY(X, Y, n_features=None if first else self.n_features_in_,
                                  n_labels=None if first else self.n_labels_, owner=type(self).__name__,
                                  learning=learning)
        if not first:
            validate_data(self, X, reset=False, skip_check_array=True)
            return X_checked, Y01, None
        meta = {"binary": binary, "values": None if binary is not None else label_values_of(Y),
                "names": feature_names_of(X), "n_features": int(X_checked.shape[1])}
        return X_checked, Y01, meta

    def _commit_inputs(self, meta) -> None:
        """Store what :meth:`_learning_chunk` read from a first chunk (nothing for a later chunk)."""
        if meta is None:
            return
        self._binary_classes = meta["binary"]
        self._label_values = meta["values"]
        names = meta["names"]
        self._feature_names = None if names is None else [str(v) for v in names]
        self.n_features_in_ = meta["n_features"]

    def _fitted_X(self, X):
        """``X`` for a fitted model (predictions): ``check_X`` against ``n_features_in_`` and
        its feature names against ``feature_names_in_`` (scikit-learn's ``validate_data(reset=False)``)."""
        if not self.is_fitted:
            raise self._not_fitted()
        checked = check_X(X, n_features=self.n_features_in_, owner=type(self).__name__)
        validate_data(self, X, reset=False, skip_check_array=True)
        return checked

    @property
    def feature_names_in_(self) -> np.ndarray:
        """The string column names of the DataFrame the model was first fitted on (object array);
        absent (AttributeError) for a model fitted on arrays.  Kept as a list of str so that a
        checkpoint (no object arrays) holds it."""
        names = vars(self).get("_feature_names")
        if names is None:
            raise AttributeError(f"{type(self).__name__} has no feature_names_in_: it was fitted on X "
                                 "without string column names")
        return np.asarray(names, dtype=object)

    # ------------------------------------------------------------------ targets
    def _targets(self, Y, classes=None, *, reset: bool):
        """``(Y for check_Y, binary classes or None)``: a label matrix passes unchanged; a 1-D
        binary target becomes one column (1 for ``classes[1]``) with its two classes.

        ``reset``: ``fit`` (the target kind is decided again) rather than a continuing ``partial_fit``.
        """
        name = type(self).__name__
        if Y is None:
            raise ValueError(f"{name} requires y to be passed, but the target y is None")
        fitted = not reset and self.is_fitted
        binary = getattr(self, "_binary_classes", None) if fitted else None
        ndim = _ndim(Y)
        if binary is None and (ndim != 1 or fitted):
            # A label matrix (the models' own use); or a 1-D y for a model fitted on one: one column.
            if classes is not None and ndim == 2:
                q = np.shape(Y)[1]
                if not np.array_equal(np.unique(np.asarray(classes)), np.arange(q)):
                    raise ValueError(f"classes: with a label matrix the classes are its columns 0..{q - 1}; "
                                     f"got {np.asarray(classes).tolist()!r}")
            return Y, None
        y = np.asarray(Y)
        if y.ndim == 2 and y.shape[1] == 1:  # a column vector for a model fitted on a 1-D target
            y = y[:, 0]
        if y.ndim != 1:
            raise ValueError(f"y: this {name} was fitted on a 1-D binary target; got shape {y.shape}")
        kind = type_of_target(y, input_name="y")  # NaN / infinity raise here
        if kind not in ("binary", "multiclass"):
            raise ValueError(f"Unknown label type: {kind!r}. {name} takes a 1-D target with two classes or "
                             "a label matrix (N, q) in {0, 1} or {-1, +1}")
        if binary is not None:
            known = binary
            if classes is not None and not np.array_equal(np.unique(np.asarray(classes)), known):
                raise ValueError(f"classes: {np.asarray(classes).tolist()!r} differ from classes_ "
                                 f"{known.tolist()!r} of the first partial_fit")
        else:
            known = np.unique(y if classes is None else np.asarray(classes))
            if known.dtype == object and all(isinstance(v, str) for v in known):
                known = known.astype(str)  # class names as a string array: checkpoints hold no objects
            if known.size > 2 or kind == "multiclass":
                raise ValueError(
                    "Only binary classification is supported. The type of the target is multiclass. "
                    f"{name} is a multi-label classifier: give the classes as a label matrix (N, k) in "
                    "{0, 1} (sklearn.preprocessing.LabelBinarizer) to learn each as a label")
            if known.size < 2:
                shown = f" ({known[0]!r})" if known.size else ""
                raise ValueError(f"y holds {known.size} class{shown}: a 1-D target needs two classes; "
                                 "when a first chunk holds one, pass both to partial_fit(..., classes=)")
        unseen = np.setdiff1d(np.unique(y), known)
        if unseen.size:
            raise ValueError(f"y holds {unseen.tolist()!r}, not among the classes {known.tolist()!r}")
        return (y == known[1]).astype(np.int8)[:, None], known

    @property
    def classes_(self) -> np.ndarray:
        """The two classes of a 1-D target; the label indices ``arange(q)`` for a label matrix."""
        if not self.is_fitted:
            raise self._not_fitted()
        binary = getattr(self, "_binary_classes", None)
        return np.arange(self.n_labels_) if binary is None else binary

    def _scores_out(self, D: np.ndarray) -> np.ndarray:
        """(N, q) scores as returned: (N,) after a 1-D binary target."""
        return D if getattr(self, "_binary_classes", None) is None else D[:, 0]

    # ------------------------------------------------------------------ predictions
    def ranking_scores(self, X) -> np.ndarray:
        """The scores labels are ranked by (the runner's ranking metrics) and :meth:`decide` reads: here
        ``decision_function(X)`` (a model with its own decision rule overrides both)."""
        return self.decision_function(X)

    def decide(self, scores) -> np.ndarray:
        """Predictions int8 in {0, 1} from :meth:`ranking_scores`: here ``scores > 0``."""
        return (np.asarray(scores) > 0).astype(np.int8)

    def _proba_out(self, P: np.ndarray) -> np.ndarray:
        """(N, q) probabilities of relevance as returned: (N, 2) ``[1 - p, p]`` after a 1-D target."""
        if getattr(self, "_binary_classes", None) is None:
            return P
        return np.column_stack([1.0 - P, P])

    def _labels_out(self, P: np.ndarray) -> np.ndarray:
        """0/1 predictions as returned: the classes after a 1-D target, else the fitted ``Y``'s label values."""
        binary = getattr(self, "_binary_classes", None)
        if binary is not None:
            return binary[P]
        values = getattr(self, "_label_values", None)
        return P if values is None else values[P]  # None: a checkpoint from before label values were kept

    def predict(self, X) -> np.ndarray:
        """Relevant labels, ``decide(ranking_scores(X))`` (``decision_function(X) > 0``), (N, q) in
        the label values and dtype of the fitted ``Y`` (0/1 or -1/+1).

        After a 1-D binary target: the class values (N,), ``classes_[1]`` where the label is predicted.
        """
        return self._labels_out(self.decide(self.ranking_scores(X)))

    def score(self, X, y, sample_weight=None) -> float:
        """Subset accuracy: the fraction of instances whose label set is predicted exactly.

        scikit-learn's default for multi-output classifiers (``accuracy_score`` on the label
        matrix); plain accuracy after a 1-D target.  ``y`` may be in {0, 1} or {-1, +1}.
        """
        from sklearn.metrics import accuracy_score

        if getattr(self, "_binary_classes", None) is not None:
            return float(accuracy_score(y, self.predict(X), sample_weight=sample_weight))
        pred = self.decide(self.ranking_scores(X))
        y = check_Y(y, n_labels=self.n_labels_)
        return float(accuracy_score(y, pred, sample_weight=sample_weight))
