"""Chunk-API plumbing shared by the paper's baselines (OSML-ELM, ELM-CDLL, FALT, SALT, PAML, MCIC, MW)
and the River peer.

:class:`ChunkBaseline` gives every baseline the contract of the core model
(:class:`~ncld_core.model.elm_ncld.ELMNCLD`):

* ``partial_fit(X, Y)`` learns one chunk; the first call initialises;
* ``fit(X, Y)`` forgets everything and learns ``(X, Y)`` as one chunk;
* ``decision_function(X)`` gives real scores (N, q), ``> 0`` meaning relevant;
* ``predict(X)`` is ``decision_function(X) > 0``, in the label values and dtype of the fitted ``Y``;
* it is a scikit-learn classifier (:class:`~ncld_core.sklearn_compat.ChunkClassifier`:
  ``get_params`` / ``set_params`` / ``clone``, tags, ``score``, a 1-D binary target).

Input goes through :func:`~ncld_core.validation.check_XY` (dense or CSR ``X``,
labels in {0, 1} or {-1, +1}); parameters are checked before anything else.
Learning works on a *copy* of the fitted state and commits it only at the end,
so any error (bad input, bad parameter) leaves the model exactly as it was.

A subclass lists its fitted attributes in ``_state_names`` and implements
``_validate_params``, ``_start`` (the state before the first chunk),
``_learn`` (one chunk) and ``_decision`` (scores of checked ``X``); its own
inspection methods check their input with ``_check_X``.

:class:`OnlineLinearModel` adds what the instance-by-instance linear methods
(FALT, SALT, PAML) share: ``q`` scoring columns and one threshold column in one
weight matrix ``weights_`` (d, q+1) with ``bias_`` (q+1,), and a row iterator that
keeps CSR rows sparse (indices and values, never a densified chunk).

>>> import numpy as np
>>> rows = list(iter_rows(np.array([[0.0, 2.0]])))
>>> rows[0][0] is None, rows[0][1].tolist()
(True, [0.0, 2.0])
>>> import scipy.sparse as sp
>>> [(i.tolist(), v.tolist()) for i, v in iter_rows(sp.csr_matrix([[0.0, 2.0], [3.0, 0.0]]))]
[([1], [2.0]), ([0], [3.0])]
"""

from __future__ import annotations

import copy

import numpy as np
import scipy.sparse as sp

from ...validation import check_in_range
from ...sklearn_compat import ChunkClassifier

__all__ = ["ChunkBaseline", "HiddenLayerBaseline", "OnlineLinearModel", "iter_rows", "canonical_csr", "as_csr"]


def canonical_csr(X):
    """``X`` unchanged if dense; a CSR matrix without duplicate entries otherwise (copied if needed)."""
    if sp.issparse(X) and not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def as_csr(X) -> sp.csr_matrix:
    """``X`` (dense or any sparse format) as a canonical CSR matrix: one code path for both kinds of input."""
    return canonical_csr(X.tocsr() if sp.issparse(X) else sp.csr_matrix(X))


def iter_rows(X):
    """Yield ``(indices, values)`` per row: ``indices`` is None for dense rows (values = the row)."""
    if sp.issparse(X):
        indptr, indices, data = X.indptr, X.indices, X.data
        for i in range(X.shape[0]):
            a, b = indptr[i], indptr[i + 1]
            yield indices[a:b], data[a:b]
    else:
        for i in range(X.shape[0]):
            yield None, X[i]


class ChunkBaseline(ChunkClassifier):
    """Base class: validation, copy-then-commit state, the chunk API (a scikit-learn classifier)."""

    #: fitted attributes (public ones with a trailing underscore, private working ones with a
    #: leading underscore) that make up the model's state
    _state_names: tuple[str, ...] = ()

    # -- to implement -----------------------------------------------------------
    def _validate_params(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _start(self, X, Y01) -> dict:  # pragma: no cover - abstract
        """The state before the first chunk (``X`` may be used, e.g. for the hidden layer)."""
        raise NotImplementedError

    def _learn(self, state: dict, X, Y01: np.ndarray, first: bool) -> dict:  # pragma: no cover
        """Learn one chunk; ``state`` is a private copy the method may change in place."""
        raise NotImplementedError

    def _decision(self, X) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def check_params(self) -> None:
        """Refuse a parameter outside its allowed values (ValueError naming it), as ``partial_fit`` would
        (checkpoints call it on load)."""
        self._validate_params()

    # -- state -----------------------------------------------------------------------
    @property
    def is_fitted(self) -> bool:
        return getattr(self, "n_features_in_", None) is not None

    def _get_state(self) -> dict:
        return {name: copy.deepcopy(getattr(self, name)) for name in self._state_names}

    def _set_state(self, state: dict) -> None:
        for name in self._state_names:
            setattr(self, name, state[name])

    def _reset(self) -> None:
        for name in self._state_names:
            if name in vars(self):
                delattr(self, name)

    # -- public API ------------------------------------------------------------------
    def partial_fit(self, X, Y, *, classes=None):
        """Learn one chunk (the first call initialises); on any error the model is unchanged.

        ``classes``: only for a 1-D target whose first chunk holds one class (both classes).
        """
        self._validate_params()
        fitted = self.is_fitted
        X, Y01, inputs = self._learning_chunk(X, Y, classes, reset=False)
        X = canonical_csr(X)
        state = self._get_state() if fitted else self._new_state(X, Y01)
        state = self._learn(state, X, Y01, not fitted)
        state["n_seen_"] = state["n_seen_"] + X.shape[0]
        self._set_state(state)
        self._commit_inputs(inputs)
        return self

    def fit(self, X, Y):
        """Forget everything, then learn ``(X, Y)`` as one chunk (unchanged on error)."""
        self._validate_params()
        X, Y01, inputs = self._learning_chunk(X, Y, reset=True)
        X = canonical_csr(X)
        state = self._learn(self._new_state(X, Y01), X, Y01, True)
        state["n_seen_"] = X.shape[0]
        self._reset()
        self._set_state(state)
        self._commit_inputs(inputs)
        return self

    def _new_state(self, X, Y01) -> dict:
        state = self._start(X, Y01)
        state.update(n_features_in_=int(X.shape[1]), n_labels_=int(Y01.shape[1]), n_seen_=0)
        return state

    def _check_fitted(self) -> None:
        if not self.is_fitted:
            raise self._not_fitted()

    def _check_X(self, X):
        """``X`` checked against the fitted model (dense, or canonical CSR)."""
        return canonical_csr(self._fitted_X(X))

    def decision_function(self, X) -> np.ndarray:
        """Real scores (N, q); ``> 0`` means relevant ((N,) after a 1-D target)."""
        return self._scores_out(self._decision(self._check_X(X)))


class HiddenLayerBaseline(ChunkBaseline):
    """A baseline scoring with linear output weights ``coef_`` (L, q) on a random hidden layer ``hidden_``
    (an ELM: ELM-CDLL, OSML-ELM)."""

    def hidden_output(self, X) -> np.ndarray:
        """The hidden-layer output ``H`` (N, L) of ``X``."""
        X = self._fitted_X(X)  # first: an unfitted model has no hidden_
        return self.hidden_.transform(X)

    def _decision(self, X):
        return self.hidden_.transform(X) @ self.coef_


class OnlineLinearModel(ChunkBaseline):
    """Linear scores ``f_j(x) = x . w_j + b_j`` (j < q) and a linear threshold ``t(x) = x . w_q + b_q``.

    ``weights_`` is (d, q+1) and ``bias_`` (q+1,): column ``q`` is the threshold
    model. ``decision_function`` is ``f(x) - t(x)``. With ``fit_intercept=False``
    the biases stay 0 (the augmented input ``x~ = (x, 1)`` becomes ``x``).
    """

    _state_names = ("weights_", "bias_", "n_features_in_", "n_labels_", "n_seen_")

    def _check_common(self):
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise ValueError(f"fit_intercept must be True or False, got {self.fit_intercept!r}")

    def _check_C(self):
        check_in_range(self.C, "C", 0, np.inf, low_open=True, high_open=True)

    def _start(self, X, Y01) -> dict:
        d, q = X.shape[1], Y01.shape[1]
        return {"weights_": np.zeros((d, q + 1)), "bias_": np.zeros(q + 1)}

    @property
    def coef_(self) -> np.ndarray:
        """Scoring weights (d, q)."""
        self._check_fitted()
        return self.weights_[:, :-1]

    @property
    def intercept_(self) -> np.ndarray:
        """Scoring biases (q,)."""
        self._check_fitted()
        return self.bias_[:-1]

    @property
    def threshold_coef_(self) -> np.ndarray:
        """Threshold-model weights (d,)."""
        self._check_fitted()
        return self.weights_[:, -1]

    @property
    def threshold_intercept_(self) -> float:
        """Threshold-model bias."""
        self._check_fitted()
        return float(self.bias_[-1])

    def _raw(self, X) -> np.ndarray:
        return np.asarray(X @ self.weights_) + self.bias_

    def scores(self, X) -> np.ndarray:
        """Label scores ``f(x)`` (N, q) before the threshold is subtracted."""
        X = self._check_X(X)
        return self._raw(X)[:, :-1]

    def threshold(self, X) -> np.ndarray:
        """The learned instance-dependent threshold ``t(x)`` (N,)."""
        X = self._check_X(X)
        return self._raw(X)[:, -1]

    def _decision(self, X) -> np.ndarray:
        raw = self._raw(X)
        return raw[:, :-1] - raw[:, -1:]
