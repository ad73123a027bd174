"""Eq. (Re)'s graph weights: the batched active-set solver meets its KKT tolerance (the README's claim)."""

import numpy as np
import pytest
from scipy.optimize import minimize

from ncld_core.model.elm import RandomHiddenLayer
from ncld_core.model.graph import (
    gram_matrix,
    kkt_residual,
    local_gram,
    nearest_neighbors,
    simplex_qp,
)
from ncld_core.stream.synthetic import make_synthetic_stream

K = 20  # the package default n_neighbors


def _local_grams(X, k=K, reg=1e-6):
    """The regularised local Gram matrices reconstruction_weights solves, from a chunk scaled as the model does."""
    Xs = RandomHiddenLayer(20, "auto", 0).fit(X).scale(X)
    G = gram_matrix(Xs)
    C = local_gram(G, nearest_neighbors(G, k))
    tr = np.trace(C, axis1=1, axis2=2) / k
    tr = np.where(tr > 0, tr, 1.0)
    C[:, np.arange(k), np.arange(k)] += (reg * tr)[:, None]
    return C


def _check(C, rows=15):
    W = simplex_qp(C, tol=1e-9)
    assert kkt_residual(C, W).max() <= 1e-9
    assert np.allclose(W.sum(axis=1), 1.0) and (W >= 0).all()
    # An independent solver (SLSQP) finds no lower objective on a sample of rows.
    for n in np.random.default_rng(0).choice(len(C), rows, replace=False):
        c = C[n]
        res = minimize(lambda s: s @ c @ s, np.full(K, 1 / K), jac=lambda s: 2 * c @ s, method="SLSQP",
                       bounds=[(0, None)] * K, constraints=[{"type": "eq", "fun": lambda s: s.sum() - 1}],
                       options={"ftol": 1e-14, "maxiter": 500})
        scale = np.trace(c) / K
        assert W[n] @ c @ W[n] <= res.fun + 1e-8 * scale


def test_kkt_on_synthetic_chunks():
    s = make_synthetic_stream(1500, random_state=0)
    for start in range(0, 1500, 500):
        _check(_local_grams(s.X[start:start + 500]))


@pytest.mark.parametrize("name", ["medical", "enron", "rcv1subset5"])
def test_kkt_on_real_sparse_chunks(data_dir, name):
    from ncld_core.data import load_dataset

    X = load_dataset(name).X
    _check(_local_grams(X[:500]))


def test_gram_matrix_dense_and_sparse_products_agree_and_are_float64():
    import scipy.sparse as sp

    from ncld_core.model.graph import use_dense_gram

    narrow = sp.random(200, 300, density=0.2, random_state=1, format="csr")  # many pairs per column: dense
    wide = sp.random(200, 30000, density=0.001, random_state=2, format="csr")  # wide text: sparse
    assert use_dense_gram(narrow) and not use_dense_gram(wide)
    for X in (narrow, wide):
        G = gram_matrix(X)
        assert G.dtype == np.float64
        np.testing.assert_allclose(G, (X @ X.T).toarray(), rtol=1e-12, atol=1e-12)
    for fmt in ("csc", "coo"):  # the choice reads column counts in any sparse format
        other = narrow.asformat(fmt)
        assert use_dense_gram(other)
        np.testing.assert_allclose(gram_matrix(other), (narrow @ narrow.T).toarray(), rtol=1e-12, atol=1e-12)
    counts = sp.csr_matrix((np.full(6, 100, dtype=np.int8), [0, 1, 0, 1, 0, 1], [0, 2, 4, 6]), shape=(3, 2))
    assert use_dense_gram(counts)
    G = gram_matrix(counts)  # int8 data: no overflow in the product
    assert G.dtype == np.float64 and G[0, 0] == 20000.0
