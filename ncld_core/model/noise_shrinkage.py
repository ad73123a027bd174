"""Shrinking what the label flips add to the output weights, across labels (``ELMNCLD(shrinkage=...)``).

Told the rates, the backward targets are unbiased for the clean labels, but their flips are noise
the solve fits too.  Label ``j``'s weights solve ``K_j phi_j = beta H^T t_j - gamma (H^T A)_j``
(Eq. Gra0, NOTES §2), ``K_j = a_j I + G`` with ``G`` the data part and ``a_j`` the label's ridge (one
for all labels, or ``alpha / d_j^2`` with ``loss="forward"``), targets on the {-1, +1} scale.  The
flips add ``2 e_j`` to ``t_j``, of mean 0 and variance ``s_j^2``, drawn independently per instance and
per label (Eq. NR).  Their part of ``phi_j``, ``2 beta K_j^{-1} H^T e_j``, adds to the fitted values'
Gram ``Phi^T H^T H Phi`` the diagonal ``s_j^2 c_j`` in expectation, with::

    c_j = 4 beta^2 tr((K_j^{-1} H^T H)^2) = 4 beta^2 r_j^T (Q o Q) r_j

(``G = U diag(mu) U^T``, ``Q = U^T H^T H U``, ``r_j = 1 / (mu + a_j)``, ``o`` the elementwise product:
one ``eigh`` for every ridge; with one ridge for all labels, one Cholesky solve ``A = K^{-1} H^T H`` and
``tr(A^2) = sum(A o A^T)``).  The ranking term ``gamma H^T A`` also reads the noisy labels; it is left out of
the noise (``gamma`` is 0.005 by default).  Whitened by ``w_j = s_j sqrt(c_j)``, the flips weigh the same in every
direction of the label space, whereas the clean signal of labels that co-occur lies in a few.  With
``W^{-1} Phi^T H^T H Phi W^{-1} = V diag(lam) V^T``, each direction is shrunk by the factor

    f_i = max(0, 1 - tau / lam_i)

(``tau = 1``: the Wiener factor ``signal / (signal + noise)`` of the direction), and
``Phi' = Phi W^{-1} V diag(f) V^T W``.  Labels without flip noise (``s_j = 0``) are left as they
are.  What each label's targets carry (:func:`flip_noise_variance`), ``p_j`` the clean prevalence:

* backward targets ``(y - rho_-) / d`` (also what ``"forward"`` regresses, at its own ridges),
  ``d = 1 - rho_+ - rho_-``: ``s_j^2 = (p_j rho_+ (1 - rho_+) + (1 - p_j) rho_- (1 - rho_-)) / d^2``;
* the paper's (the noisy labels): the same without ``/ d^2``.

With rates 0 nothing is shrunk: the clean labels' own randomness is not this noise.  Not the default:
measured in ``docs/noise-gap.md`` (``python -m benchmarks.noise_gap``).

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> H = rng.normal(size=(400, 20)); HtH = H.T @ H
>>> signal = np.outer(rng.normal(size=20), np.ones(30)) * 0.1      # 30 labels, one direction
>>> noise = 2 * H.T @ rng.normal(0, 0.8, size=(400, 30))           # the flips' part of H^T T
>>> coef = signal + np.linalg.solve(HtH + 1.0 * np.eye(20), noise)   # G = H^T H, ridge 1
>>> shrunk = shrink_output(coef, HtH, HtH, 1.0, 1.0, np.full(30, 0.8 ** 2), 1.0)
>>> round(float(np.linalg.norm(shrunk - signal) / np.linalg.norm(coef - signal)), 2)   # the error left
0.55
>>> bool(np.array_equal(shrink_output(coef, HtH, HtH, 1.0, 1.0, np.zeros(30), 1.0), coef))   # no flips: as it was
True
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve

__all__ = ["SHRINKABLE_LOSSES", "flip_noise_variance", "shrink_output"]

#: The losses whose targets' flip noise :func:`flip_noise_variance` knows.
SHRINKABLE_LOSSES = ("backward", "forward", "paper")


def flip_noise_variance(loss: str, rho_pos, rho_neg, prevalence) -> np.ndarray:
    """``s_j^2`` (q,): the variance the flips add to label ``j``'s targets on the 0/1 scale (module doc)."""
    if loss not in SHRINKABLE_LOSSES:
        raise ValueError(f"shrinkage: loss {loss!r} has no flip-noise form; use one of {SHRINKABLE_LOSSES}")
    rho_pos, rho_neg = np.asarray(rho_pos, dtype=np.float64), np.asarray(rho_neg, dtype=np.float64)
    p = np.clip(np.asarray(prevalence, dtype=np.float64), 0.0, 1.0)
    var = p * rho_pos * (1.0 - rho_pos) + (1.0 - p) * rho_neg * (1.0 - rho_neg)
    if loss in ("backward", "forward"):
        var = var / np.maximum(1.0 - rho_pos - rho_neg, 1e-3) ** 2
    return var


def shrink_output(coef, HtH, G, ridge, beta: float, noise_var, strength: float) -> np.ndarray:
    """``Phi'`` (L, q): ``coef``, solved with the data part ``G`` and ``ridge`` (a number or one per label), with
    each whitened direction of its fitted values shrunk by ``max(0, 1 - strength / lam)`` (module doc);
    ``coef`` itself where nothing is noisy or ``strength`` is 0."""
    coef = np.asarray(coef, dtype=np.float64)
    q = coef.shape[1]
    noise_var = np.broadcast_to(np.asarray(noise_var, dtype=np.float64), (q,))
    noisy = np.flatnonzero(noise_var > 1e-12)
    if strength <= 0 or len(noisy) == 0:
        return coef
    ridge = np.broadcast_to(np.asarray(ridge, dtype=np.float64), (q,))[noisy]
    if np.all(ridge == ridge[0]):  # one ridge: one Cholesky solve, tr(A^2) = sum(A * A^T)
        A = cho_solve(cho_factor(G + ridge[0] * np.eye(len(G)), check_finite=False), HtH, check_finite=False)
        c = np.full(len(noisy), 4.0 * beta**2 * float(np.sum(A * A.T)))
    else:  # one eigh for every ridge
        mu, U = np.linalg.eigh(G)
        Q2 = (U.T @ HtH @ U) ** 2
        R = 1.0 / (mu[:, None] + ridge[None, :])  # (L, labels): r_j
        c = 4.0 * beta**2 * np.einsum("ij,ik,kj->j", R, Q2, R)
    w = np.sqrt(noise_var[noisy] * c)
    part = coef[:, noisy] / w
    lam, V = np.linalg.eigh(part.T @ HtH @ part)
    f = np.clip(1.0 - strength / np.maximum(lam, 1e-300), 0.0, 1.0)
    out = coef.copy()
    out[:, noisy] = ((part @ V) * f) @ V.T * w
    return out
