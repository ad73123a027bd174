"""Ridge regressions that share a Gram matrix but not a ridge: one per label.

``loss="forward"`` (:mod:`ncld_core.model.noisy_targets`) solves, for every label ``j``, the normal
equations ``(G + a_j I) phi_j = b_j`` with one ``G`` (the data part of ``K``, NOTES §2) and its own
ridge ``a_j``.  One reduction serves every label: ``G = Q T Q^T`` with ``T`` tridiagonal
(LAPACK ``sytrd``), then

    phi_j = Q (T + a_j I)^{-1} Q^T b_j,

each ``(T + a_j I)`` solved in O(L) (``ptsv``, positive definite tridiagonal).  ``G + a_j I`` and
``T + a_j I`` have the same eigenvalues, so the extreme eigenvalues of ``T`` (``stebz``) give every
label's condition number and the positive-definiteness check.  Measured (``docs/noise-gap.md``, the
per-chunk times on enron): a chunk with ``loss="forward"`` costs what one with the shared ridge does.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> A = rng.standard_normal((50, 6)); G = A.T @ A; b = rng.standard_normal((6, 2))
>>> (phi,), (low, high) = solve_per_label_ridge(G, np.array([0.5, 20.0]), b)
>>> direct = [np.linalg.solve(G + a * np.eye(6), b[:, j]) for j, a in enumerate([0.5, 20.0])]
>>> bool(np.allclose(phi, np.column_stack(direct))), bool(np.isclose(low, np.linalg.eigvalsh(G)[0]))
(True, True)
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve, eigvalsh_tridiagonal, lapack

__all__ = ["solve_ridge", "solve_per_label_ridge", "tridiagonal_extremes"]


def tridiagonal_extremes(diagonal, off_diagonal) -> tuple[float, float]:
    """The smallest and largest eigenvalue of the symmetric tridiagonal matrix (``stebz``)."""
    n = len(diagonal)
    if n == 1:
        return float(diagonal[0]), float(diagonal[0])
    low = eigvalsh_tridiagonal(diagonal, off_diagonal, select="i", select_range=(0, 0), check_finite=False)[0]
    high = eigvalsh_tridiagonal(diagonal, off_diagonal, select="i", select_range=(n - 1, n - 1),
                                check_finite=False)[0]
    return float(low), float(high)


def solve_ridge(G, ridge, *rhs, check=None):
    """``(G + a I)^{-1} b`` for each right-hand side ``b`` (L, q) of ``rhs``: ``ridge`` a number (one ``a`` for
    every label: one Cholesky solve) or one per label (:func:`solve_per_label_ridge`).  The model and the sweep both
    solve through it, so both take the same path for the same ridge.

    Returns ``(solutions, extremes)``: ``extremes`` the smallest and largest eigenvalue of ``G`` (with a number
    for ``ridge``, only when ``check`` is given: they cost an eigendecomposition; else None).  ``check(lam_min,
    lam_max)``, if given, is called before solving, to raise when ``G + a I`` is not positive definite.

    >>> import numpy as np
    >>> G = np.array([[2.0, 1.0], [1.0, 3.0]]); b = np.eye(2)
    >>> (one,), _ = solve_ridge(G, 0.5, b)
    >>> (each,), _ = solve_ridge(G, np.array([0.5, 0.5]), b)
    >>> bool(np.allclose(one, each)), bool(np.allclose((G + 0.5 * np.eye(2)) @ one, b))
    (True, True)
    """
    if np.ndim(ridge) != 0:  # (a single-entry array: the same for every label)
        ridge = np.broadcast_to(np.asarray(ridge, dtype=np.float64), (np.shape(rhs[0])[1],))
        return solve_per_label_ridge(G, ridge, *rhs, check=check)
    G = np.asarray(G, dtype=np.float64)
    extremes = None
    if check is not None:
        eig = np.linalg.eigvalsh(G)
        extremes = (float(eig[0]), float(eig[-1]))
        check(*extremes)
    K = G + float(ridge) * np.eye(G.shape[0])
    q = [np.shape(b)[1] for b in rhs]
    B = np.hstack([np.asarray(b, dtype=np.float64) for b in rhs])
    try:  # K is symmetric positive definite: Cholesky, half LU's work for the factor
        sol = cho_solve(cho_factor(K, lower=True, check_finite=False), B, check_finite=False)
    except np.linalg.LinAlgError:  # not positive definite (without a check to refuse it): LU, as before
        sol = np.linalg.solve(K, B)
    return tuple(np.split(sol, np.cumsum(q)[:-1], axis=1)), extremes


def solve_per_label_ridge(G, ridge, *rhs, check=None):
    """``phi[:, j] = (G + ridge[j] I)^{-1} b[:, j]`` for each right-hand side ``b`` (L, q) of ``rhs``.

    ``G`` (L, L) symmetric; ``ridge`` (q,).  Returns ``(solutions, (lam_min, lam_max))``: one (L, q) array
    per ``b`` and the extreme eigenvalues of ``G``.  ``check(lam_min, lam_max)``, if given, is called before
    solving (to raise when some ``G + ridge[j] I`` is not positive definite); without it such a label
    raises ``numpy.linalg.LinAlgError``.
    """
    G = np.asarray(G, dtype=np.float64)
    ridge = np.asarray(ridge, dtype=np.float64)
    n = G.shape[0]
    if G.shape != (n, n) or ridge.ndim != 1:
        raise ValueError(f"G must be square and ridge one value per label; got {G.shape} and {ridge.shape}")
    for b in rhs:
        if np.shape(b) != (n, ridge.shape[0]):
            raise ValueError(f"each right-hand side must be (L, q) = {(n, ridge.shape[0])}; got {np.shape(b)}")
    packed, diagonal, off, tau, info = lapack.dsytrd(G, lower=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"sytrd failed (info {info})")
    extremes = tridiagonal_extremes(diagonal, off)
    if check is not None:
        check(*extremes)
    q = ridge.shape[0]
    B = np.hstack([np.asarray(b, dtype=np.float64) for b in rhs])  # (L, q * len(rhs))
    reflectors = packed[1:, :n - 1]  # Q = H(1) ... H(n-1), applied to rows 2..n (LAPACK ormtr, lower)
    lwork = max(1, 64 * B.shape[1], int(lapack.dormqr("L", "T", reflectors, tau, B[1:], -1)[1][0])) if n > 1 else 1
    R = B.copy()
    if n > 1:
        R[1:], _, info = lapack.dormqr("L", "T", reflectors, tau, B[1:], lwork)
        if info != 0:
            raise np.linalg.LinAlgError(f"ormqr failed (info {info})")
    X = np.empty_like(R)
    columns = np.arange(len(rhs)) * q
    if n == 1:  # (ptsv's wrapper refuses an empty off-diagonal)
        divisor = np.tile(diagonal[0] + ridge, len(rhs))
        if np.any(divisor <= 0):
            raise np.linalg.LinAlgError("label: G + ridge I is not positive definite")
        return tuple((R / divisor)[:, k * q:(k + 1) * q] for k in range(len(rhs))), extremes
    for j in range(q):
        _, _, x, info = lapack.dptsv(diagonal + ridge[j], off, R[:, columns + j])
        if info != 0:
            raise np.linalg.LinAlgError(f"label {j}: G + ridge I is not positive definite")
        X[:, columns + j] = x
    out = X.copy()
    if n > 1:
        out[1:], _, info = lapack.dormqr("L", "N", reflectors, tau, X[1:], lwork)
        if info != 0:
            raise np.linalg.LinAlgError(f"ormqr failed (info {info})")
    return tuple(out[:, k * q:(k + 1) * q] for k in range(len(rhs))), extremes
