"""A per-chunk memo shared by the models that learn the same chunk.

The ELM-NCLD variants of one run (ELM-O, ELM-I, ELM-II, plain ELM) draw the same hidden layer
(same ``random_state``, ``n_hidden`` and first chunk), so each chunk's hidden output ``H``, its
feature graph (Eq. Re) and the noisy class probability ``P_D`` are the same for all of them; only
the rates, ``beta``, ``gamma`` and the drift strategy differ.  The runner makes one
:class:`ChunkCache` per chunk and hands it to every model's ``partial_fit``; each entry is keyed
by everything it depends on (the hidden layer's :attr:`~ncld_core.model.elm.RandomHiddenLayer.fingerprint`,
``n_neighbors``, ``graph_reg``, the probability model), so a model with other settings computes
its own.  Cached arrays are read-only: a model that wrote into one would change the others'.

>>> import numpy as np
>>> X, Y = np.zeros((3, 2)), np.zeros((3, 1))
>>> cache = ChunkCache(X, Y)
>>> calls = []
>>> cache.get(("twice",), lambda: calls.append(1) or np.ones(2)).tolist()
[1.0, 1.0]
>>> cache.get(("twice",), lambda: calls.append(1) or np.ones(2)).tolist(), len(calls), cache.hits
([1.0, 1.0], 1, 1)
>>> cache.check(X.copy(), Y)
Traceback (most recent call last):
...
ValueError: cache: this ChunkCache was made for another chunk (pass the arrays it was made with)

A model learning the same chunk's features with other labels (the clean-label oracle learns the ground truth)
takes :meth:`ChunkCache.for_labels`: the entries that depend on the features alone (:data:`FEATURE_ENTRIES`) are
computed once for both.

>>> clean = cache.for_labels(np.ones((3, 1)))
>>> clean.get(("H", 0), lambda: np.zeros(2)) is cache.get(("H", 0), lambda: np.ones(2))
True
>>> clean.get(("P_D", 0), lambda: np.zeros(2)).tolist(), cache.get(("P_D", 0), lambda: np.ones(2)).tolist()
([0.0, 0.0], [1.0, 1.0])
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["ChunkCache", "FEATURE_ENTRIES"]

#: The entries (the first element of their key) that depend on the chunk's features alone, not its labels
#: (``ncld_core.model.elm_ncld``: the hidden output, the feature graph, and their Gram matrices): shared by the
#: caches of one chunk made for other labels (:meth:`ChunkCache.for_labels`).
FEATURE_ENTRIES = frozenset({"H", "graph", "HtH", "EtE"})


def _freeze(value):
    if isinstance(value, np.ndarray):
        value.setflags(write=False)
    elif sp.issparse(value):
        for name in ("data", "indices", "indptr"):
            arr = getattr(value, name, None)
            if isinstance(arr, np.ndarray):
                arr.setflags(write=False)
    elif isinstance(value, tuple):
        for v in value:
            _freeze(v)
    return value


class ChunkCache:
    """Memo of per-chunk computations for the chunk ``(X, Y)`` (see the module docstring).

    Parameters
    ----------
    X, Y : the chunk's features and observed labels, exactly the objects passed to ``partial_fit``.

    Attributes
    ----------
    hits, misses : int
        Lookups answered from the memo and computed.
    """

    def __init__(self, X, Y):
        self._X, self._Y = X, Y
        self._store: dict = {}
        self._features: dict = {}  # the FEATURE_ENTRIES, shared with the caches for_labels makes
        self._layers: list = []
        self.hits = 0
        self.misses = 0

    def for_labels(self, Y) -> "ChunkCache":
        """A cache of this chunk's features for the labels ``Y``: it shares this cache's layers and the entries of
        :data:`FEATURE_ENTRIES` (each computed once for both), and keeps its own of the others."""
        other = ChunkCache(self._X, Y)
        other._features, other._layers = self._features, self._layers
        return other

    def layer_key(self, hidden) -> int:
        """A key for ``hidden`` (a fitted RandomHiddenLayer): equal layers share it.

        Compared by content (weights, bias, scaling); layers drawn from one seed share their arrays
        (``ncld_core.model.elm``), which is checked first.
        """
        def state(layer):
            return [layer.mode_, layer.weights_, layer.bias_, getattr(layer, "mean_", None),
                    getattr(layer, "scale_", None)]

        mine = state(hidden)
        for index, other in enumerate(self._layers):
            if mine[0] == other[0] and all(
                a is b or (a is not None and b is not None and np.array_equal(a, b))
                for a, b in zip(mine[1:], other[1:])
            ):
                return index
        self._layers.append(mine)
        return len(self._layers) - 1

    def check(self, X, Y=None) -> None:
        """Raise ValueError unless ``X`` (and ``Y``, when given: scoring a chunk has no labels) are the very
        objects the cache was made for."""
        if X is not self._X or (Y is not None and Y is not self._Y):
            raise ValueError("cache: this ChunkCache was made for another chunk (pass the arrays it was made with)")

    def get(self, key, compute):
        """The value stored under ``key``, computing (and freezing) it with ``compute()`` the first time."""
        store = self._features if isinstance(key, tuple) and key and key[0] in FEATURE_ENTRIES else self._store
        if key in store:
            self.hits += 1
            return store[key]
        self.misses += 1
        value = _freeze(compute())
        store[key] = value
        return value
