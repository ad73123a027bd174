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

Feature and label names are fixed by the first instance (or frame) learnt, in its order (the
model's input and label dimensions are fixed then); later a feature absent from ``x`` is 0
(River's sparse dicts) and a label absent from ``y`` is False, while a feature or label not
seen in that first instance is ignored.  The wrapped ``model`` is
never changed: learning happens on a copy, :attr:`model_` (``sklearn.base.clone``).

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
"""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd

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
        Instances buffered by ``learn_one`` before they are learnt as one chunk; at least
        ``n_neighbors + 1`` for a model with a feature graph (ELM-NCLD).  250 is the project's
        default chunk size (:class:`~ncld_core.config.RunConfig`).

    Attributes
    ----------
    model_ : the learning copy of ``model`` (None before the first chunk).
    features_ : list, labels_ : list
        Feature and label names, fixed by the first instance learnt (None before).
    n_chunks_ : int
        Chunks learnt; ``n_buffered_`` instances wait in the buffer.
    """

    def __init__(self, model=None, chunk_size: int = 250):
        self.model = model
        self.chunk_size = chunk_size
        if isinstance(chunk_size, bool) or not isinstance(chunk_size, numbers.Integral) or chunk_size < 1:
            raise ValueError(f"chunk_size must be an integer >= 1, got {chunk_size!r}")
        need = getattr(self._template(), "n_neighbors", None)
        if isinstance(need, numbers.Integral) and chunk_size < need + 1:
            raise ValueError(f"chunk_size must be at least n_neighbors + 1 = {need + 1} for this model, "
                             f"got {chunk_size}")
        self.model_ = None
        self.features_ = None
        self.labels_ = None
        self.n_chunks_ = 0
        self._buffer_x: list[np.ndarray] = []
        self._buffer_y: list[np.ndarray] = []

    def _template(self):
        if self.model is None:
            from .model.elm_ncld import ELMNCLD

            return ELMNCLD()
        return self.model

    @property
    def n_buffered_(self) -> int:
        return len(self._buffer_x)

    # ------------------------------------------------------------------ conversion
    def _fix_names(self, features, labels) -> None:
        if self.features_ is None:
            self.features_ = list(features)
            self._feature_index = {f: i for i, f in enumerate(self.features_)}
        if self.labels_ is None:
            self.labels_ = list(labels)

    def _row(self, x: dict) -> np.ndarray:
        row = np.zeros(len(self.features_))
        index = self._feature_index
        for name, value in x.items():
            i = index.get(name)
            if i is not None:
                row[i] = value
        return row

    def _label_row(self, y: dict) -> np.ndarray:
        return np.array([bool(y.get(label, False)) for label in self.labels_], dtype=np.int8)

    def _frame(self, X: pd.DataFrame) -> np.ndarray:
        return X.reindex(columns=self.features_, fill_value=0.0).to_numpy(dtype=np.float64)

    # ------------------------------------------------------------------ learning
    def _learn_chunk(self, X: np.ndarray, Y: np.ndarray) -> None:
        if self.model_ is None:
            from sklearn.base import clone

            learner = clone(self._template(), safe=False)
            learner.partial_fit(X, Y)
            self.model_ = learner  # set only once the first chunk succeeded
        else:
            self.model_.partial_fit(X, Y)
        self.n_chunks_ += 1

    def learn_one(self, x: dict, y: dict) -> None:
        """Buffer ``(x, y)``; learn the buffer as one chunk once it holds ``chunk_size`` instances."""
        self._fix_names(x, y)
        self._buffer_x.append(self._row(x))
        self._buffer_y.append(self._label_row(y))
        if len(self._buffer_x) >= self.chunk_size:
            self._learn_chunk(np.vstack(self._buffer_x), np.vstack(self._buffer_y))
            self._buffer_x, self._buffer_y = [], []  # emptied once learnt (kept if learning failed)

    def learn_many(self, X: pd.DataFrame, Y: pd.DataFrame) -> None:
        """Learn the frame ``(X, Y)`` as one chunk (labels: bool or 0/1 columns); the buffer is untouched."""
        self._fix_names(X.columns, Y.columns)
        Ym = Y.reindex(columns=self.labels_, fill_value=False).fillna(False).to_numpy().astype(bool)
        self._learn_chunk(self._frame(X), Ym.astype(np.int8))

    # ------------------------------------------------------------------ prediction
    def predict_one(self, x: dict, **kwargs) -> dict:
        """``{label: bool}``; all False before the first chunk is learnt."""
        if self.labels_ is None:
            return {}
        if self.model_ is None:
            return {label: False for label in self.labels_}
        P = self.model_.predict(self._row(x)[None, :])
        return {label: bool(v) for label, v in zip(self.labels_, np.asarray(P)[0])}

    def predict_many(self, X: pd.DataFrame) -> pd.DataFrame:
        """A DataFrame of bools, one column per label (all False before the first chunk)."""
        if self.labels_ is None:
            return pd.DataFrame(index=X.index)
        if self.model_ is None:
            return pd.DataFrame(False, index=X.index, columns=self.labels_)
        P = np.asarray(self.model_.predict(self._frame(X))).astype(bool)
        return pd.DataFrame(P, index=X.index, columns=self.labels_)
