"""River's binary relevance of logistic regressions, fed instance by instance (the online reference).

``river.multioutput.PerOutputClassifier`` keeps one ``river.linear_model.LogisticRegression``
per label (binary relevance).  Each instance is first scored with ``predict_proba_one`` and
then learned with ``learn_one`` (test-then-train), features as a ``{column: value}`` dict of
the row's non-zeros, labels as ``{label index: bool}``.  River's defaults are used
(SGD, learning rate 0.01, no feature scaling): the benchmark measures speed, not accuracy.

>>> import numpy as np, scipy.sparse as sp
>>> X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0]])); Y = np.array([[1, 0], [0, 1]])
>>> br = RiverBinaryRelevance(); P = br.process_chunk(X, Y)
>>> P.shape
(2, 2)
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["RiverBinaryRelevance", "rows_as_dicts"]


def rows_as_dicts(X) -> list[dict]:
    """Rows of ``X`` (CSR or dense) as ``{column index: value}`` dicts of the non-zeros."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        indptr, indices, data = X.indptr, X.indices.tolist(), X.data.tolist()
        return [dict(zip(indices[a:b], data[a:b])) for a, b in zip(indptr[:-1], indptr[1:])]
    X = np.asarray(X)
    return [{j: v for j, v in enumerate(row.tolist()) if v != 0.0} for row in X]


class RiverBinaryRelevance:
    """One River ``LogisticRegression`` per label, learned online, instance by instance."""

    def __init__(self, classifier=None):
        from river import linear_model, multioutput

        self.model = multioutput.PerOutputClassifier(
            classifier if classifier is not None else linear_model.LogisticRegression()
        )

    def process_chunk(self, X, Y) -> np.ndarray:
        """Test-then-train over the chunk's instances; returns ``P(y=1|x)`` predicted before learning.

        Conversion of the rows to dicts is included (it is part of feeding River).
        """
        rows = rows_as_dicts(X)
        Y = np.asarray(Y)
        n, q = Y.shape
        labels = list(range(q))
        out = np.zeros((n, q))
        model = self.model
        for t, x in enumerate(rows):
            proba = model.predict_proba_one(x)
            for j, p in proba.items():
                out[t, j] = p.get(True, 0.0)
            model.learn_one(x, dict(zip(labels, (Y[t] > 0).tolist())))
        return out
