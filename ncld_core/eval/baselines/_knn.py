"""Brute-force nearest neighbours for the windowed kNN peers (ML-kNN, MLSAMPkNN).

Rows are CSR (dense input is converted once, so dense and sparse input follow one code
path); squared Euclidean distances come from one sparse product
``||a||^2 - 2 a.b + ||b||^2`` (clipped at 0), and the ``k`` nearest columns of each row
from ``argpartition`` followed by a stable sort of the ``k`` candidates on
``(distance, -column)``: among equal distances the *later* column (the more recent
instance of a window) wins, whatever the batch the row came in.

>>> import numpy as np
>>> A = as_csr(np.array([[0.0, 0.0], [3.0, 4.0]]))
>>> sq_distances(A, A).tolist()
[[0.0, 25.0], [25.0, 0.0]]
>>> nearest(np.array([[1.0, 0.0, 1.0, 2.0]]), 2).tolist()   # 0.0, then of the tied 1.0s the later column
[[1, 2]]
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._base import as_csr

__all__ = ["as_csr", "row_sq_norms", "sq_distances", "nearest"]


def row_sq_norms(X: sp.csr_matrix) -> np.ndarray:
    """Squared L2 norm of each row of a CSR matrix."""
    return np.asarray(X.multiply(X).sum(axis=1)).ravel()


def sq_distances(A: sp.csr_matrix, B: sp.csr_matrix, a_sq=None, b_sq=None) -> np.ndarray:
    """Squared Euclidean distances (len(A), len(B)) between the rows of two CSR matrices."""
    prod = A @ B.T
    prod = prod.toarray() if sp.issparse(prod) else np.asarray(prod)
    a_sq = row_sq_norms(A) if a_sq is None else a_sq
    b_sq = row_sq_norms(B) if b_sq is None else b_sq
    d2 = a_sq[:, None] - 2.0 * prod + b_sq[None, :]
    np.maximum(d2, 0.0, out=d2)
    return d2


def nearest(d2: np.ndarray, k: int) -> np.ndarray:
    """Column indices (n, k) of the ``k`` smallest entries of each row, nearest first.

    Ties (equal distances) go to the larger column index.  Entries equal to ``inf`` are
    never returned unless a row has fewer than ``k`` finite entries (callers mask with inf
    and size ``k`` so this does not happen).
    """
    n, m = d2.shape
    k = int(min(k, m))
    if k == 0:
        return np.zeros((n, 0), dtype=np.int64)
    # Every column strictly nearer than the k-th smallest distance is taken; the rest of the k come
    # from the columns *at* that distance, the latest first (a reversed cumulative count).
    kth = np.partition(d2, k - 1, axis=1)[:, k - 1 : k]
    below = d2 < kth
    at = d2 == kth
    need = k - below.sum(axis=1, keepdims=True)
    from_right = np.cumsum(at[:, ::-1], axis=1)[:, ::-1]  # columns at the k-th distance from here on
    chosen = below | (at & (from_right <= need))
    cols = np.nonzero(chosen)[1].reshape(n, k)  # ascending column order within each row
    dist = np.take_along_axis(d2, cols, axis=1)
    order = np.lexsort((-cols, dist), axis=-1)
    return np.take_along_axis(cols, order, axis=1)
