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

Targets
-------
* ``Y`` 2-D (N, q), labels in {0, 1} or {-1, +1}: a multi-label problem, the models' own use.
  ``decision_function`` gives (N, q) scores, ``predict`` int8 (N, q) in {0, 1}, and
  ``classes_`` is ``arange(q)``, the label indices (as scikit-learn's multi-label
  classifiers, e.g. ``MLPClassifier`` or ``OneVsRestClassifier``, report it).
* ``y`` 1-D with two classes (numbers or strings): a binary problem, learnt as one label
  column whose relevant class is ``classes_[1]`` (the larger).  ``decision_function`` gives
  (N,) scores, ``> 0`` meaning ``classes_[1]``, and ``predict`` the class values (N,).  A 1-D
  target with more than two classes is refused ("Only binary classification is supported"):
  give it as a label matrix (``sklearn.preprocessing.LabelBinarizer``) to learn each class
  as a label.  A 1-D target holding one class is refused unless ``partial_fit`` is told
  both ``classes``.

``score(X, Y)`` is scikit-learn's default for multi-output classifiers, the **subset
accuracy** (``accuracy_score``: the fraction of instances whose whole label set is
predicted exactly; plain accuracy for a 1-D target); ``Y`` may be in {0, 1} or {-1, +1}.
It is strict: with many labels it is near 0 even for a good model, so to tune a
multi-label model pass a label-wise scorer, e.g. ``GridSearchCV(..., scoring="f1_micro")``.
Other scikit-learn metrics compare ``predict`` (0/1) with ``Y`` as given: give them
``Y`` in {0, 1}.

:func:`expected_failed_checks` lists the checks of
``sklearn.utils.estimator_checks.check_estimator`` a model does not meet, each with its
reason; every other check passes (``tests/test_sklearn_river.py``).

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
>>> sorted(expected_failed_checks(ELMNCLD(decision="paper")))  # threshold 0: predict = decision_function > 0
['check_classifiers_multilabel_output_format_predict', 'check_n_features_in_after_fitting']
>>> sorted(set(expected_failed_checks(model)) - set(expected_failed_checks(ELMNCLD(decision="paper"))))
['check_classifier_multioutput', 'check_classifiers_train']
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, MultiOutputMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.multiclass import type_of_target

from ._validation import check_Y

__all__ = ["ChunkClassifier", "expected_failed_checks", "COMMON_EXPECTED_FAILURES"]

#: Checks of ``check_estimator`` no model of the project meets, with the reason.
COMMON_EXPECTED_FAILURES = {
    "check_n_features_in_after_fitting": (
        "a feature count other than the fitted one is refused with a ValueError in the project's "
        "wording ('X has 1 features but the model was initialised with 4', catalogued in "
        "docs/bad-inputs.md), not scikit-learn's 'X has 1 features, but ... is expecting 4 features "
        "as input'; n_features_in_ itself is set by fit and partial_fit. (The check's partial_fit of "
        "10 instances is also below ELMNCLD's n_neighbors + 1 = 21 chunk minimum.)"
    ),
    "check_classifiers_multilabel_output_format_predict": (
        "predict on a label matrix returns int8 in {0, 1} whatever the dtype of Y (the models' "
        "documented contract, relied on by the runner and the metrics); the check wants the dtype "
        "of y_train (int64). Shape and values are as the check expects"
    ),
}


def expected_failed_checks(estimator) -> dict[str, str]:
    """The ``check_estimator`` checks ``estimator`` does not meet: ``{check name: reason}``.

    For ``check_estimator(est, expected_failed_checks=expected_failed_checks(est))`` and for
    ``parametrize_with_checks(..., expected_failed_checks=expected_failed_checks)``.
    """
    extra = getattr(estimator, "_more_expected_failed_checks", None)
    return {**COMMON_EXPECTED_FAILURES, **(extra() if callable(extra) else {})}


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

    def _more_expected_failed_checks(self) -> dict[str, str]:
        """Checks this model does not meet beyond :data:`COMMON_EXPECTED_FAILURES`, with reasons."""
        return {}

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
    def decide(self, scores) -> np.ndarray:
        """Predictions int8 in {0, 1} from ``decision_function`` scores: here ``scores > 0``
        (a model with its own decision rule overrides this)."""
        return (np.asarray(scores) > 0).astype(np.int8)

    def predict(self, X) -> np.ndarray:
        """Relevant labels, ``decide(decision_function(X))`` (``> 0`` unless the model has its own
        rule), as int8 (N, q) in {0, 1}.

        After a 1-D binary target: the class values (N,), ``classes_[1]`` where the label is predicted.
        """
        P = self.decide(self.decision_function(X))
        binary = getattr(self, "_binary_classes", None)
        return P if binary is None else binary[P]

    def score(self, X, y, sample_weight=None) -> float:
        """Subset accuracy: the fraction of instances whose label set is predicted exactly.

        scikit-learn's default for multi-output classifiers (``accuracy_score`` on the label
        matrix); plain accuracy after a 1-D target.  ``y`` may be in {0, 1} or {-1, +1}.
        """
        from sklearn.metrics import accuracy_score

        pred = self.predict(X)
        if getattr(self, "_binary_classes", None) is None:
            y = check_Y(y, n_labels=self.n_labels_)
        return float(accuracy_score(y, pred, sample_weight=sample_weight))
