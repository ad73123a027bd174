"""Local feature graph of a chunk: k-nearest neighbours and reconstruction weights (Eq. Re).

For every instance ``x_n`` of a chunk the weights ``s_n`` over its ``K`` nearest
neighbours solve the simplex-constrained least squares of Eq. (Re)::

    min_s || x_n - sum_m s_m x_m ||^2   s.t.  s >= 0,  sum_m s_m = 1.

Because ``sum_m s_m = 1`` the residual is ``sum_m s_m (x_n - x_m)``, so the
problem is the quadratic program ``min_s s^T C_n s`` on the probability simplex
with the local Gram matrix ``C_n[m, k] = (x_n - x_m) . (x_n - x_k)``.  Every
``C_n`` comes from the chunk's Gram matrix ``G = X X^T`` alone, so sparse,
high-dimensional ``X`` is touched once (one sparse product) and never densified.

``C_n`` is singular when the neighbourhood is rank deficient (``K`` larger than
the local dimension, or duplicated rows); the minimiser is then not unique.  As in
locally linear embedding we add ``reg * trace(C_n) / K`` to the diagonal, which
selects the minimiser of smallest norm in the limit and spreads the weight evenly
over exact duplicates.  The regularised problem is strictly convex and is solved
*exactly*: an active-set method on the simplex (batched over all rows) whose
result satisfies the Karush-Kuhn-Tucker conditions to ``tol``, relative to the
scale of ``C_n``.  Rows where the active set does not settle fall back to
accelerated projected gradient followed by the same exact polish.

>>> import numpy as np
>>> X = np.array([[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0], [0.0, 5.0]])
>>> S = reconstruction_weights(X, n_neighbors=2)
>>> S.toarray()[0].round(6).tolist()     # x_0 is the midpoint of x_1 and x_2
[0.0, 0.5, 0.5, 0.0]
>>> np.allclose(S.sum(axis=1), 1.0)
True
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = [
    "gram_matrix",
    "use_dense_gram",
    "nearest_neighbors",
    "local_gram",
    "simplex_qp",
    "reconstruction_weights",
    "kkt_residual",
]


#: The cost model that picks the product for a sparse ``X`` (N, d) in :func:`gram_matrix`, in units of one
#: dense multiply-add of BLAS: the sparse product costs about this much per pair of non-zeros sharing a
#: column (``sum_j c_j^2``, ``c_j`` the non-zeros of column j) ...
SPARSE_COST_PER_PAIR = 125.0
#: ... and this much per cell of the N x N result; the dense one costs N * N * d.
SPARSE_COST_PER_CELL = 170.0
#: A dense copy of ``X`` is made only up to this many cells (32 MB).
DENSE_GRAM_CELLS = 1 << 22


def use_dense_gram(X) -> bool:
    """Whether :func:`gram_matrix` multiplies the sparse ``X`` as a dense array (BLAS): when the dense
    product's N * N * d multiply-adds cost less than the sparse product's estimated work. Few columns
    or many non-zeros per column go dense (enron, langlog, tmc2007_500), wide text stays sparse (rcv1subset5,
    arts, health), and so do very sparse sets (medical, corel16k001). ``make bench`` times both products on
    the shared datasets and says whether the rule picked the faster one (``docs/performance.md``, 5d).

    >>> import scipy.sparse as sp
    >>> use_dense_gram(sp.random(500, 1000, density=0.1, random_state=0, format="csr"))
    True
    >>> use_dense_gram(sp.random(500, 40000, density=0.002, random_state=0, format="csr"))
    False
    """
    n, d = X.shape
    if n * d > DENSE_GRAM_CELLS:
        return False
    per_column = np.asarray(X.getnnz(axis=0), dtype=np.float64)  # any sparse format (CSR, CSC, COO)
    sparse_work = SPARSE_COST_PER_PAIR * float(per_column @ per_column) + SPARSE_COST_PER_CELL * n * n
    return float(n) * n * d <= sparse_work


def gram_matrix(X) -> np.ndarray:
    """``X X^T`` as a dense float64 (N, N) array; a sparse ``X`` as a dense or a sparse product, whichever
    :func:`use_dense_gram` expects to be cheaper (the two agree to rounding).

    >>> import scipy.sparse as sp
    >>> X = sp.random(50, 30, density=0.2, random_state=0, format="csr")
    >>> bool(np.allclose(gram_matrix(X), (X @ X.T).toarray()))
    True
    """
    if sp.issparse(X):
        X = X.astype(np.float64, copy=False)  # integer data would overflow in its own type
        if use_dense_gram(X):
            D = X.toarray()
            return D @ D.T
        return (X @ X.T).toarray()
    return X @ X.T


def nearest_neighbors(gram: np.ndarray, n_neighbors: int) -> np.ndarray:
    """Indices (N, K) of the ``K`` nearest other instances by Euclidean distance.

    Distances come from the Gram matrix, ``|x_n - x_m|^2 = G_nn + G_mm - 2 G_nm``;
    ties are broken by the smaller index so the graph is deterministic.
    """
    n = gram.shape[0]
    if not 1 <= n_neighbors < n:
        raise ValueError(
            f"n_neighbors must be in [1, chunk size - 1]: a chunk of {n} instances "
            f"cannot give each instance {n_neighbors} neighbours"
        )
    sq = np.diag(gram)
    dist = sq[:, None] + sq[None, :] - 2.0 * gram
    np.fill_diagonal(dist, np.inf)
    if n_neighbors < n - 1:
        part = np.argpartition(dist, n_neighbors - 1, axis=1)[:, :n_neighbors]
        # argpartition leaves ties at the boundary arbitrary-but-fixed; re-sort the
        # selected block by (distance, index) so the order is well defined.
        d_sel = np.take_along_axis(dist, part, axis=1)
        order = np.lexsort((part, d_sel), axis=1)
        return np.take_along_axis(part, order, axis=1)
    idx = np.argsort(dist, axis=1, kind="stable")
    return idx[:, :n_neighbors]


def local_gram(gram: np.ndarray, neighbors: np.ndarray) -> np.ndarray:
    """Stack of ``C_n[m, k] = (x_n - x_m).(x_n - x_k)``, shape (N, K, K), from ``G`` alone."""
    rows = np.arange(gram.shape[0])[:, None]
    g_nn = np.diag(gram)[:, None, None]
    g_nm = gram[rows, neighbors]  # (N, K)
    g_mk = gram[neighbors[:, :, None], neighbors[:, None, :]]  # (N, K, K)
    C = g_nn - g_nm[:, :, None] - g_nm[:, None, :] + g_mk
    return 0.5 * (C + np.swapaxes(C, 1, 2))


def _project_simplex(V: np.ndarray) -> np.ndarray:
    """Euclidean projection of each row of ``V`` onto the probability simplex (sort based)."""
    k = V.shape[1]
    U = -np.sort(-V, axis=1)
    css = np.cumsum(U, axis=1) - 1.0
    ind = np.arange(1, k + 1)
    cond = U - css / ind > 0
    rho = k - 1 - np.argmax(cond[:, ::-1], axis=1)
    theta = css[np.arange(V.shape[0]), rho] / (rho + 1)
    return np.maximum(V - theta[:, None], 0.0)


def _solve_on_support(C: np.ndarray, support: np.ndarray) -> np.ndarray:
    """Minimiser of ``s^T C s`` with ``sum s = 1`` and ``s = 0`` off ``support`` (batched).

    KKT of the equality-constrained problem: ``C_PP s_P = mu 1``; so
    ``s_P = C_PP^{-1} 1 / (1^T C_PP^{-1} 1)``.  Off-support rows/columns are
    replaced by the identity so one batched solve serves every pattern.
    """
    mask = support.astype(np.float64)
    M = C * (mask[:, :, None] * mask[:, None, :])
    idx = np.arange(C.shape[1])
    M[:, idx, idx] += 1.0 - mask
    z = np.linalg.solve(M, mask[:, :, None])[:, :, 0]
    return z / z.sum(axis=1, keepdims=True)


def kkt_residual(C: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Largest KKT violation per row for ``min s^T C s`` on the simplex, relative to ``C``'s scale.

    At the optimum the gradient ``g = C s`` equals ``mu = s^T C s`` on the support
    and is ``>= mu`` elsewhere; ``s`` is feasible.  Returns ``max`` of primal
    infeasibility and those violations divided by ``max(trace(C)/K, tiny)``.
    """
    g = np.einsum("nij,nj->ni", C, s)
    mu = np.einsum("ni,ni->n", g, s)[:, None]
    scale = np.maximum(np.trace(C, axis1=1, axis2=2) / C.shape[1], 1e-300)[:, None]
    on = s > 0
    stat = np.where(on, np.abs(g - mu), np.maximum(mu - g, 0.0)) / scale
    infeas = np.maximum(np.abs(s.sum(axis=1) - 1.0), np.maximum(-s, 0.0).max(axis=1))
    return np.maximum(stat.max(axis=1), infeas)


def _projected_gradient(C: np.ndarray, s: np.ndarray, iters: int) -> np.ndarray:
    """Accelerated projected gradient (FISTA) on the simplex; used to find a support."""
    lip = np.linalg.eigvalsh(C)[:, -1]
    step = 1.0 / np.maximum(2.0 * lip, 1e-300)
    y, t = s.copy(), 1.0
    for _ in range(iters):
        grad = 2.0 * np.einsum("nij,nj->ni", C, y)
        s_new = _project_simplex(y - step[:, None] * grad)
        t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        y = s_new + ((t - 1.0) / t_new) * (s_new - s)
        s, t = s_new, t_new
    return s


def simplex_qp(C: np.ndarray, *, tol: float = 1e-9, max_iter: int | None = None) -> np.ndarray:
    """Exact minimiser of ``s^T C_n s`` over the simplex for each PD ``C_n`` in a (N, K, K) stack.

    Active set: start from the full support; in the first three rounds drop every
    negative weight at once (block pivoting, fewer rounds), then only the most negative one, which cannot cycle between block
    drops; when no weight is negative add the index that most violates
    ``(C s)_i >= mu``; stop when the KKT residual (see :func:`kkt_residual`) is
    below ``tol``.
    """
    n, k, _ = C.shape
    if max_iter is None:
        max_iter = 4 * k + 10
    support = np.ones((n, k), dtype=bool)
    s = np.zeros((n, k))
    todo = np.arange(n)
    for it in range(max_iter):
        if todo.size == 0:
            break
        Ct, sup = C[todo], support[todo]
        st = _solve_on_support(Ct, sup)
        neg = (st < 0) & sup
        has_neg = neg.any(axis=1)
        rows_neg = np.flatnonzero(has_neg)
        if it < 3:  # block pivoting: drop every negative weight
            sup[neg] = False
        else:  # then single drops of the most negative weight
            drop = np.argmin(np.where(neg, st, np.inf), axis=1)
            sup[rows_neg, drop[rows_neg]] = False
        # feasible rows: check dual feasibility off the support
        feas = ~has_neg
        st_f = np.where(sup, np.maximum(st, 0.0), 0.0)
        g = np.einsum("nij,nj->ni", Ct, st_f)
        mu = np.einsum("ni,ni->n", g, st_f)[:, None]
        scale = np.maximum(np.trace(Ct, axis1=1, axis2=2) / k, 1e-300)[:, None]
        viol = np.where(sup, 0.0, (mu - g) / scale)
        add = np.argmax(viol, axis=1)
        needs_add = feas & (viol[np.arange(todo.size), add] > tol)
        rows_add = np.flatnonzero(needs_add)
        sup[rows_add, add[rows_add]] = True
        support[todo] = sup
        done = feas & ~needs_add
        s[todo[done]] = st_f[done]
        todo = todo[~done]
    if todo.size:
        # Rare: the active set cycled. Find the support by projected gradient, then polish.
        Ct = C[todo]
        st = _projected_gradient(Ct, np.full((todo.size, k), 1.0 / k), iters=2000)
        sup = st > 1e-12 * st.max(axis=1, keepdims=True)
        polished = _solve_on_support(Ct, sup)
        ok = (polished >= 0).all(axis=1) & (kkt_residual(Ct, polished) <= tol)
        s[todo] = np.where(ok[:, None], polished, st)
    return s


def reconstruction_weights(
    X,
    n_neighbors: int = 10,
    *,
    reg: float = 1e-6,
    tol: float = 1e-9,
    gram: np.ndarray | None = None,
    return_neighbors: bool = False,
):
    """Sparse (N, N) CSR matrix ``S`` of Eq. (Re) for one chunk.

    Parameters
    ----------
    X : ndarray or sparse matrix, shape (N, d)
        The chunk's (scaled) features.
    n_neighbors : int
        ``K``, neighbours per instance; must be ``< N``.
    reg : float
        Relative Tikhonov term ``reg * trace(C_n) / K`` added to each local Gram
        (see the module docstring); 0 solves Eq. (Re) as written, which is
        only well posed for full-rank neighbourhoods.
    tol : float
        KKT tolerance of the per-row solve, relative to ``trace(C_n) / K``.
    gram : ndarray, optional
        A precomputed ``X X^T``.
    return_neighbors : bool
        Also return the (N, K) neighbour indices and the (N, K) weights.
    """
    G = gram_matrix(X) if gram is None else gram
    n = G.shape[0]
    nbrs = nearest_neighbors(G, n_neighbors)
    C = local_gram(G, nbrs)
    tr = np.trace(C, axis1=1, axis2=2) / n_neighbors
    # An instance whose neighbours all coincide with it (tr == 0) gets uniform weights.
    tr = np.where(tr > 0, tr, 1.0)
    idx = np.arange(n_neighbors)
    C[:, idx, idx] += (reg * tr)[:, None]
    W = simplex_qp(C, tol=tol)
    S = sp.csr_matrix(
        (W.ravel(), nbrs.ravel(), np.arange(0, n * n_neighbors + 1, n_neighbors)),
        shape=(n, n),
    )
    if return_neighbors:
        return S, nbrs, W
    return S
