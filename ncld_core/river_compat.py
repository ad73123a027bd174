"""ELM-NCLD, or any chunk model of the project, as a River multi-label classifier.

River (``pip install river``) learns one instance at a time from dicts; the project's models
learn chunks (``partial_fit(X, Y)``).  :class:`RiverMultiLabelClassifier` is a
:class:`river.base.MultiLabelClassifier` that bridges the two, so a model runs in
``river.evaluate.progressive_val_score`` with River's multi-label metrics, beside River's own
multi-label learners:

* ``learn_one(x, y)`` buffers the instance; once ``chunk_size`` are buffered they are learnt
  as one chunk (``partial_fit``) and the buffer empties;
* ``predict_one(x)`` gives ``{label: bool}`` from the model as of the last chunk learnt, all
  False before the first chunk (and ``{}`` before any label name is known);
* ``learn_many(X, Y)`` learns the DataFrames as one chunk directly (the buffer is left as it
  is), ``predict_many(X)`` gives a DataFrame of bools.

Feature and label names are fixed when the **first chunk** is learnt, since that is when the
model draws its input layer: ELM-NCLD's (and the ELM baselines') input weights are random and
fixed, one row per feature, and its sums and flip rates are kept per label, so a feature or label
arriving later has no weights and no history to join.  They are the ``features`` / ``labels``
declared up front, or else every name seen in the instances of that first chunk (in order of first
appearance).  After that, a feature absent from ``x`` is 0 (River's sparse dicts) and a label absent
from ``y`` is False, while a feature or label **never seen before is refused** with a ``ValueError``
naming it (declare the full vocabulary with ``features=`` / ``labels=`` for a stream whose features
appear over time); nothing is dropped silently.  The wrapped ``model`` is never changed: learning
happens on a copy, :attr:`model_` (``sklearn.base.clone``).

Examples
--------
Progressive validation (predict, then learn, instance by instance) on a noisy synthetic
stream, ELM-NCLD beside River's classifier chain of logistic regressions:

>>> from river import evaluate, linear_model, metrics, multioutput, stream
>>> from ncld_core.model.elm_ncld import ELMNCLD
>>> from ncld_core.stream.synthetic import make_synthetic_stream
>>> s = make_synthetic_stream(n_instances=1500, n_features=8, n_labels=4, random_state=0)
>>> def data():
...     return stream.iter_array(s.X, s.Y_noisy.astype(bool), feature_names=[f"f{i}" for i in range(8)],
...                              target_names=[f"label{j}" for j in range(4)])
>>> elm = RiverMultiLabelClassifier(ELMNCLD(random_state=0), chunk_size=250)
>>> f1 = evaluate.progressive_val_score(data(), elm, metrics.multioutput.MicroAverage(metrics.F1()))
>>> chain = multioutput.ClassifierChain(linear_model.LogisticRegression(), order=[f"label{j}" for j in range(4)])
>>> f1_chain = evaluate.progressive_val_score(data(), chain, metrics.multioutput.MicroAverage(metrics.F1()))
>>> elm.n_chunks_, len(elm.features_), elm.labels_[:2]
(6, 8, ['label0', 'label1'])
>>> 0 < f1.get() < 1 and 0 < f1_chain.get() < 1
True
>>> elm.predict_one({"f0": 1.0, "f9": 2.0})
Traceback (most recent call last):
...
ValueError: x has feature 'f9', which the model has never seen: its input layer was drawn for the 8 features of its first chunk (an ELM's input weights are fixed); declare every feature up front with RiverMultiLabelClassifier(features=[...])
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

from .validation import check_dtype

try:
    from river import base as river_base
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        f"ncld_core.river_compat needs River ({exc}): pip install river (or pip install 'ncld[river]')"
    ) from None

__all__ = ["RiverMultiLabelClassifier"]


class RiverMultiLabelClassifier(river_base.MultiLabelClassifier):
    """A chunk model (``partial_fit`` / ``predict`` on label matrices) as a River multi-label classifier.

    Parameters
    ----------
    model : chunk model, default None
        Unfitted template, e.g. :class:`~ncld_core.model.elm_ncld.ELMNCLD` (the default, with its default
        parameters) or a baseline of :mod:`ncld_core.eval.baselines`; it is copied, never changed.
    chunk_size : int, default 250
        Instances buffered by ``learn_one`` before they are learnt as one chunk; at least 2 for a model
        with a feature graph (ELM-NCLD).  250 is the project's default chunk size
        (:class:`~ncld_core.config.RunConfig`).
    features, labels : list of names, default None
        The full feature / label vocabulary, in the model's column order; None: the names seen in the
        first chunk's instances.  A name outside it is refused (module docstring).

    Attributes
    ----------
    model_ : the learning copy of ``model`` (None before the first chunk).
    features_ : list, labels_ : list
        Feature and label names, fixed when the first chunk is learnt (before: the names seen so far,
        None before any).
    n_chunks_ : int
        Chunks learnt; ``n_buffered_`` instances wait in the buffer.
    """

    def __init__(self, model=None, chunk_size: int = 250, features=None, labels=None):
        self.model = model
        self.chunk_size = chunk_size
        self.features = features
        self.labels = labels
        if isinstance(chunk_size, bool) or not isinstance(chunk_size, numbers.Integral) or chunk_size < 1:
            raise ValueError(f"chunk_size must be an integer >= 1, got {chunk_size!r}")
        if getattr(self._template(), "n_neighbors", None) is not None and chunk_size < 2:
            raise ValueError(f"chunk_size must be at least 2 for a model with a feature graph (each instance "
                             f"needs a neighbour), got {chunk_size}")
        self._declared = {}
        for name, names in (("features", features), ("labels", labels)):
            if names is not None:
                names = list(names)
                if len(set(names)) != len(names):
                    raise ValueError(f"{name}: names must be distinct, got {names!r}")
                if not names:
                    raise ValueError(f"{name}: give at least one name, or None")
            self._declared[name] = names
        self.model_ = None
        self.features_ = None if features is None else list(features)
        self.labels_ = None if labels is None else list(labels)
        self.n_chunks_ = 0
        self._buffer: list[tuple[dict, dict]] = []

    def _template(self):
        if self.model is None:
            from .model.elm_ncld import ELMNCLD

            return ELMNCLD()
        return self.model

    @property
    def n_buffered_(self) -> int:
        return len(self._buffer)

    # ------------------------------------------------------------------ names
    def _known(self, kind: str, names) -> list | None:
        """The names after ``names`` are met: a name the model cannot take is refused; before the first
        chunk an undeclared new one is added (the caller stores the list: nothing changes on error)."""
        current = self.features_ if kind == "feature" else self.labels_
        fixed = self.model_ is not None or self._declared["features" if kind == "feature" else "labels"] is not None
        current = [] if current is None else list(current)
        seen = set(current)
        for name in names:
            if name in seen:
                continue
            if fixed:
                what = "x" if kind == "feature" else "y"
                why = (f"its input layer was drawn for the {len(current)} features of its first chunk (an ELM's "
                       "input weights are fixed)" if kind == "feature" else
                       f"it learns the {len(current)} labels of its first chunk (its sums and flip rates are per label)")
                if self.model_ is None:
                    why = f"it is not among the declared {kind}s"
                raise ValueError(f"{what} has {kind} {name!r}, which the model has never seen: {why}; declare every "
                                 f"{kind} up front with RiverMultiLabelClassifier({kind}s=[...])")
            current.append(name)
            seen.add(name)
        return current

    def _matrix(self, xs, features=None) -> np.ndarray:
        """The feature dicts as rows (columns: ``features``, default ``features_``), their values checked as
        every X is (:func:`~ncld_core.validation.check_dtype`: no strings, dates or durations)."""
        raw = np.array([[x.get(name, 0.0) for name in features or self.features_] for x in xs], dtype=object)
        check_dtype(raw, "x")
        return raw.astype(np.float64)

    def _label_matrix(self, ys, labels=None) -> np.ndarray:
        raw = np.array([[y.get(label, False) for label in labels or self.labels_] for y in ys], dtype=object)
        check_dtype(raw, "y")  # a label "0" is a string (bool("0") is True), refused as in every Y
        return raw.astype(bool).astype(np.int8)

    def _frame(self, X: pd.DataFrame) -> np.ndarray:
        raw = X.reindex(columns=self.features_, fill_value=0.0).to_numpy()
        check_dtype(raw, "X")
        return raw.astype(np.float64)

    # ------------------------------------------------------------------ learning
    def _learn_chunk(self, X: np.ndarray, Y: np.ndarray) -> None:
        if self.model_ is None:
            from sklearn.base import clone

            learner = clone(self._template(), safe=False)
            learner.partial_fit(X, Y)
            self.model_ = learner  # set only once the first chunk succeeded: the names are fixed from here
        else:
            self.model_.partial_fit(X, Y)
        self.n_chunks_ += 1

    def learn_one(self, x: dict, y: dict) -> None:
        """Buffer ``(x, y)``; learn the buffer as one chunk once it holds ``chunk_size`` instances. Values that
        are no numbers (strings, dates) are refused here, before the buffer ("column": the feature's or label's
        place in ``features_`` / ``labels_``)."""
        features, labels = self._known("feature", x), self._known("label", y)
        self._matrix([x], features), self._label_matrix([y], labels)
        self.features_, self.labels_ = features, labels
        self._buffer.append((dict(x), dict(y)))
        if len(self._buffer) >= self.chunk_size:
            xs, ys = zip(*self._buffer)
            self._learn_chunk(self._matrix(xs), self._label_matrix(ys))
            self._buffer = []  # emptied once learnt (kept if learning failed)

    def learn_many(self, X: pd.DataFrame, Y: pd.DataFrame) -> None:
        """Learn the frame ``(X, Y)`` as one chunk (labels: bool or 0/1 columns); the buffer is untouched."""
        features, labels = self._known("feature", X.columns), self._known("label", Y.columns)
        self.features_, self.labels_ = features, labels
        Ym = Y.reindex(columns=self.labels_, fill_value=False).fillna(False).to_numpy()
        check_dtype(Ym, "Y")  # as every Y: no strings (they would all be True), dates or durations
        self._learn_chunk(self._frame(X), Ym.astype(bool).astype(np.int8))

    # ------------------------------------------------------------------ prediction
    def _check_features(self, names) -> None:
        if self.model_ is not None or self._declared["features"] is not None:
            self._known("feature", names)

    def predict_one(self, x: dict, **kwargs) -> dict:
        """``{label: bool}``; all False before the first chunk is learnt."""
        self._check_features(x)
        if self.labels_ is None:
            return {}
        if self.model_ is None:
            return {label: False for label in self.labels_}
        P = self.model_.predict(self._matrix([x]))
        return {label: bool(v) for label, v in zip(self.labels_, np.asarray(P)[0])}

    def predict_many(self, X: pd.DataFrame) -> pd.DataFrame:
        """A DataFrame of bools, one column per label (all False before the first chunk)."""
        self._check_features(X.columns)
        if self.labels_ is None:
            return pd.DataFrame(index=X.index)
        if self.model_ is None:
            return pd.DataFrame(False, index=X.index, columns=self.labels_)
        P = np.asarray(self.model_.predict(self._frame(X))).astype(bool)
        return pd.DataFrame(P, index=X.index, columns=self.labels_)
