"""The random hidden layer of an extreme learning machine (Eq. ELM).

``H = sigmoid(X_s W + b)`` with ``W`` (d, L) and ``b`` (L,) drawn once,
uniformly in [-1, 1], and never trained.  ``X_s`` is ``X`` scaled so that
``x . w`` stays in the sigmoid's responsive range whatever the raw feature
scale:

* sparse ``X`` (text counts, binary bag of words): each row divided by its
  Euclidean norm (stateless, keeps sparsity);
* dense ``X``: columns standardised with the mean and deviation of the
  *first* chunk, then divided by ``sqrt(d)``.

The scaling is frozen after the first chunk on purpose: the model's
sufficient statistics (NOTES §2) sum ``H_i^T R_i H_i`` over all chunks, which
is only the batch solution if every chunk went through the same feature map.

>>> import numpy as np
>>> layer = RandomHiddenLayer(n_hidden=4, random_state=0).fit(np.eye(3))
>>> H = layer.transform(np.eye(3))
>>> H.shape, bool(((H > 0) & (H < 1)).all())
((3, 4), True)
"""

from __future__ import annotations

import threading
import weakref

import numpy as np
import scipy.sparse as sp
from scipy.special import expit

from ..saved_state import COUNT, INT, POSITIVE, STR, SavedState, ValueRange, array, first_error, one_of, optional, \
    shape_error
from ..validation import check_random_state

__all__ = ["RandomHiddenLayer"]

# (seed, d, L) -> W, while a layer holds it; the bias by the same key. The ELM variants of a run share a
# seed: one draw of W (d x L: 113 MB for rcv1subset5 at L = 300) instead of one per variant.
_SHARED_WEIGHTS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_SHARED_BIAS: dict = {}
_SHARED_LOCK = threading.Lock()  # threads of one process (the dashboard's workers) draw a key once


def _uniform(random_state, d: int, n_hidden: int):
    rng = np.random.default_rng(random_state)
    return rng.uniform(-1.0, 1.0, size=(d, n_hidden)), rng.uniform(-1.0, 1.0, size=n_hidden)


def _forget_bias(key, ident: int) -> None:
    # runs when a shared W is freed (in whichever thread frees it: no lock); a newer W's bias is kept
    held = _SHARED_BIAS.get(key)
    if held is not None and held[0] == ident:
        _SHARED_BIAS.pop(key, None)


def _draw(random_state, d: int, n_hidden: int):
    """``W`` (d, L) and ``b`` (L,) uniform in [-1, 1] from ``random_state``; for an integer seed, the
    arrays already drawn for that seed and shape (read-only) while a layer still holds them."""
    if not isinstance(random_state, (int, np.integer)) or isinstance(random_state, bool):
        return _uniform(random_state, d, n_hidden)
    key = (int(random_state), d, n_hidden)
    with _SHARED_LOCK:
        weights, held = _SHARED_WEIGHTS.get(key), _SHARED_BIAS.get(key)
        if weights is not None and held is not None and held[0] == id(weights):
            return weights, held[1]
        weights, bias = _uniform(random_state, d, n_hidden)
        weights.flags.writeable = False
        bias.flags.writeable = False
        _SHARED_WEIGHTS[key] = weights
        _SHARED_BIAS[key] = (id(weights), bias)
        weakref.finalize(weights, _forget_bias, key, id(weights))
    return weights, bias


class RandomHiddenLayer:
    """Random sigmoid feature map ``x -> sigmoid(scale(x) W + b)`` (Eq. ELM).

    Parameters
    ----------
    n_hidden : int
        ``L``, the number of hidden nodes.
    scaling : {"auto", "l2", "standard", "none"}
        "auto" is "l2" for sparse input and "standard" for dense input.
    random_state : None, int in [0, 2**32 - 1], numpy RandomState or Generator
        Layers fitted with the same integer seed and shape share ``weights_`` and ``bias_`` (read-only).
    """

    def __init__(self, n_hidden: int = 20, scaling: str = "auto", random_state=None):
        self.n_hidden = n_hidden
        self.scaling = scaling
        self.random_state = random_state

    def fit(self, X):
        """Draw ``W`` and ``b`` for ``X``'s feature count and freeze the scaling."""
        if self.scaling not in ("auto", "l2", "standard", "none"):
            raise ValueError(f"scaling must be 'auto', 'l2', 'standard' or 'none', got {self.scaling!r}")
        check_random_state(self.random_state)  # 'abc': a ValueError naming random_state, not numpy's TypeError
        d = X.shape[1]
        self.n_features_in_ = d
        self.weights_, self.bias_ = _draw(self.random_state, d, self.n_hidden)
        mode = self.scaling
        if mode == "auto":
            mode = "l2" if sp.issparse(X) else "standard"
        if mode == "standard" and sp.issparse(X):
            raise ValueError("scaling='standard' would densify sparse X; use 'l2' or 'none'")
        self.mode_ = mode
        if mode == "standard":
            mean = X.mean(axis=0)
            std = X.std(axis=0)
            self.mean_ = mean
            self.scale_ = np.where(std > 0, std, 1.0) * np.sqrt(d)
        return self

    def scale(self, X):
        """``X`` as the hidden layer sees it (also used for the feature graph)."""
        if self.mode_ == "l2":
            if sp.issparse(X):
                norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
                inv = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
                return sp.diags(inv) @ X
            norms = np.linalg.norm(X, axis=1, keepdims=True)
            return np.divide(X, norms, out=np.zeros_like(X), where=norms > 0)
        if self.mode_ == "standard":
            return (X - self.mean_) / self.scale_
        return X

    def transform(self, X, *, scaled: bool = False) -> np.ndarray:
        """``H`` (N, L); pass ``scaled=True`` when ``X`` already went through :meth:`scale`."""
        Xs = X if scaled else self.scale(X)
        return expit(np.asarray(Xs @ self.weights_) + self.bias_)


def _check_saved(s: dict) -> str | None:
    """A saved layer's shapes agree with its parameters (and its scaling's arrays with its mode)."""
    if "weights_" not in s:
        return None
    d, L = s["n_features_in_"], s["n_hidden"]
    standard = s["mode_"] == "standard"
    if standard != ("mean_" in s and "scale_" in s):
        return "mean_ and scale_ are kept exactly when mode_ is 'standard'"
    return first_error(shape_error("weights_", s["weights_"], (d, L)), shape_error("bias_", s["bias_"], (L,)),
                       *(shape_error(k, s[k], (d,)) for k in ("mean_", "scale_") if standard))


_DRAWN = ValueRange(low=-1.0, high=1.0)
#: What a checkpoint keeps (:mod:`ncld_core.saved_state`): ``W`` and ``b`` as drawn, uniform in [-1, 1]; the mode
#: ``fit`` resolved "auto" to; the standard scaling's mean and (positive) scale.
RandomHiddenLayer.saved_state = SavedState(
    params={"n_hidden": COUNT, "scaling": STR, "random_state": optional(INT)},
    fitted={"n_features_in_": COUNT, "weights_": array(2, rng=_DRAWN), "bias_": array(1, rng=_DRAWN),
            "mode_": one_of("l2", "standard", "none")},
    optional={"mean_": array(1), "scale_": array(1, rng=POSITIVE)},
    check=_check_saved,
)
