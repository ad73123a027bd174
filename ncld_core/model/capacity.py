"""Capacity of ELM-NCLD: the ridge chosen online from the stream, and the cost of a configuration.

Ridge chosen online (``ELMNCLD(alpha="auto")`` or ``alpha=<sequence of values>``)
---------------------------------------------------------------------------------
The model is kept as ``K = a I + G`` with ``G = sum_i H_i^T R_i H_i`` the data part
(NOTES §2).  ``K`` and ``G`` share eigenvectors: from one ``eigh(K) = V diag(mu) V^T``
per chunk (O(L^3), in place of the ``eigvalsh`` the condition number already needed),
``G = V diag(lam) V^T`` with ``lam = mu - a`` and, for *every* ``a'`` of a grid,

    Phi(a') = V diag(1 / (lam + a')) V^T (B_score - B_rank).

Prequential selection: before a chunk is learnt, the model of each grid value scores it
(:func:`prequential_ap_losses`, on :data:`AP_SAMPLE` instances of the chunk):

* ``alpha="auto"`` (= ``"auto-rank"``, also a given grid): a noise-corrected ranking gain.
  ``T_tj = (y_tj - rho_-^j) / (1 - rho_+^j - rho_-^j)`` (labels in {0, 1}) has
  ``E[T_tj | x_t] = P(g_tj = 1 | x_t)`` under the class-conditional noise of Eq. (NR), and the
  criterion ``sum_j T_tj (2 r_tj - q + 1)`` (``r_tj`` = labels scored below ``j``) is linear
  in ``T``, so it is an unbiased estimate of the clean ``sum_{j,k} (g_j - g_k) [o_j > o_k]``:
  how well the scores order the true labels of the instance (rates given or estimated).
* ``"auto-ap"``: ``1 - AP`` against the observed (noisy) labels, uncorrected;
* ``"auto-mse"``: the squared loss against the observed labels (in {-1, +1}), in closed form
  from ``H^T H`` and ``H^T Y`` of the chunk (:func:`prequential_losses`, O(L^3 + L^2 q) for
  the whole grid), noise-corrected label weights below.

Under this much label noise the squared loss is smallest for heavy shrinkage (alpha 10^3 and
more at L = 200) and the noisy AP also leans to large values; both cost AP against the
ground truth, the corrected ranking criterion does not (``docs/capacity.md``,
``python -m benchmarks.capacity``).  The losses are summed
over chunks with a discount (:data:`ALPHA_DISCOUNT` per chunk, so the choice follows the
growth of ``G`` and drift) and the value with the smallest sum is used to solve after
the chunk is learnt; ``history_["alpha"]`` records it.  Before any chunk has been scored
(the initialisation chunk, and after a retrain) the value in use is kept; the first is
:data:`ALPHA_START` (or the middle of a given grid).

Noise correction of the squared loss: with flip rates ``rho_+^j, rho_-^j`` the observed label has
``E[y | x] = c_j E[g | x] + (rho_-^j - rho_+^j)``, ``c_j = 1 - rho_+^j - rho_-^j``, so
``(y - rho_-^j + rho_+^j) / c_j`` is an unbiased target for the clean label.  Mapping the
scores through the same affine map, the squared loss against that target is the noisy
squared loss divided by ``c_j^2`` plus a constant: label ``j`` is weighted by
``1 / c_j^2`` (the rates in use, given or estimated; ``c_j`` floored at 0.05).  It only
changes how labels are weighed against each other; with rates 0 it is the plain loss.

The memory and time of a configuration are estimated in :mod:`ncld_core.model.cost`.

>>> alpha_grid(1.8) is None, alpha_grid("auto") == ALPHA_GRID, alpha_criterion("auto-mse")
(True, True, 'mse')
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = [
    "ALPHA_GRID",
    "ALPHA_START",
    "ALPHA_DISCOUNT",
    "alpha_grid",
    "label_weights",
    "prequential_losses",
    "prequential_ap_losses",
    "alpha_criterion",
    "AP_SAMPLE",
    "start_alpha",
]

#: The grid of ``alpha="auto"``: 10^-1 ... 10^4 in half decades (11 values).
ALPHA_GRID = tuple(float(round(10.0 ** (e / 2.0), 6)) for e in range(-2, 9))
#: The names ``alpha`` accepts for an online choice and the criterion each scores grid values by.
ALPHA_MODES = {"auto": "rank", "auto-rank": "rank", "auto-ap": "ap", "auto-mse": "mse"}
#: The value used before any chunk has been scored (``alpha="auto"``).
ALPHA_START = 1.0
#: Per-chunk discount of the accumulated prequential losses (effective memory ~ 1 / (1 - 0.8) = 5 chunks).
ALPHA_DISCOUNT = 0.8
#: Instances of a chunk (an even stride through it) on which the AP criterion scores every grid value.
AP_SAMPLE = 125
_C_FLOOR = 0.05


def alpha_grid(alpha):
    """The grid of an ``alpha`` parameter: None for a fixed number, else a sorted tuple of floats.

    ``"auto"`` is :data:`ALPHA_GRID`; a sequence of positive finite numbers is its own grid.
    Raises ValueError naming ``alpha`` otherwise.

    >>> alpha_grid(1.8) is None, alpha_grid([4, 1]), len(alpha_grid("auto"))
    (True, (1.0, 4.0), 11)
    """
    if isinstance(alpha, str):
        if alpha not in ALPHA_MODES:
            modes = ", ".join(repr(m) for m in ALPHA_MODES)
            raise ValueError(f"alpha must be a positive number, one of {modes} or a list of positive numbers; "
                             f"got {alpha!r}")
        return ALPHA_GRID
    if isinstance(alpha, numbers.Real) and not isinstance(alpha, bool):
        if not (math.isfinite(alpha) and alpha > 0):
            raise ValueError(f"alpha must be in (0, inf), got {alpha!r}")
        return None
    try:
        values = [v for v in alpha]
    except TypeError:
        raise ValueError(f"alpha must be a positive number, 'auto' or a list of positive numbers; "
                         f"got {alpha!r}") from None
    if not values:
        raise ValueError("alpha: an empty grid; give at least one value")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (math.isfinite(v) and v > 0):
            raise ValueError(f"alpha: every grid value must be a positive finite number; got {v!r}")
    return tuple(sorted({float(v) for v in values}))


def alpha_criterion(alpha) -> str:
    """How grid values are scored: :data:`ALPHA_MODES` for a name, ``"rank"`` for a given grid."""
    return ALPHA_MODES.get(alpha, "rank") if isinstance(alpha, str) else "rank"


def prequential_ap_losses(eigvals, eigvecs, B, H, Y01, grid, *, criterion="ap", rho_pos=None,
                          rho_neg=None) -> np.ndarray:
    """``1 - AP`` on a new chunk of the model of every ``alpha`` in ``grid`` (the ``"auto"`` criterion).

    AP is the label-ranking average precision (as :func:`ncld_core.eval.metrics.average_precision`, ties by label order)
    of the scores ``H Phi(a)`` against the chunk's *observed* labels ``Y01``, on
    :data:`AP_SAMPLE` instances (an even stride).  With per-label flip rates that do not
    depend on ``x``, ``P(y_j = 1 | x) = c_j P(g_j = 1 | x) + rho_-^j`` is increasing in the
    clean posterior, so the noisy labels rank scores the way the clean ones would label by
    label; across labels with different rates they do not, and no correction is applied.
    Cost O(n L^2 + len(grid) n L q) for ``n`` scored instances.
    """
    stride = max(1, H.shape[0] // AP_SAMPLE)
    Hs, Ys = H[::stride], np.asarray(Y01[::stride])
    M = Hs @ eigvecs
    C = eigvecs.T @ B
    out = np.full(len(grid), np.inf)
    ok = [i for i, a in enumerate(grid) if np.all(eigvals + a > 0)]
    if not ok:
        return out
    S = np.vstack([(M / (eigvals + grid[i])) @ C for i in ok])
    if criterion == "rank":
        # Noise-corrected ranking: T = (y - rho_-) / (1 - rho_+ - rho_-) has E[T | x] = P(g = 1 | x), so
        # sum_j T_j (2 r_j - q + 1) (r_j = labels ranked below j) is unbiased for the clean
        # sum over label pairs of (g_j - g_k) [o_j > o_k]: the better the clean ranking, the larger.
        q = Ys.shape[1]
        rp = np.broadcast_to(np.asarray(0.0 if rho_pos is None else rho_pos, dtype=float), (q,))
        rn = np.broadcast_to(np.asarray(0.0 if rho_neg is None else rho_neg, dtype=float), (q,))
        T = (Ys - rn) / np.maximum(1.0 - rp - rn, _C_FLOOR)
        order = np.argsort(S, axis=1)
        ranks = np.empty_like(order)
        np.put_along_axis(ranks, order, np.arange(q)[None, :], axis=1)
        ranks = ranks.reshape(len(ok), T.shape[0], q)
        gain = (2.0 * np.einsum("anq,nq->a", ranks, T) - (q - 1) * T.sum()) / (T.shape[0] * max(q * (q - 1), 1))
        out[ok] = -gain
        return out
    out[ok] = 1.0 - _mean_row_ap(np.tile(Ys, (len(ok), 1)), S).reshape(len(ok), -1).mean(axis=1)
    return out


def _mean_row_ap(Y, S) -> np.ndarray:
    """Per row: the label-ranking average precision of scores ``S`` against ``Y`` (0/1), ties broken by
    label order; a row without a relevant label counts 1 (it cannot be ranked wrong)."""
    order = np.argsort(-S, axis=1, kind="stable")
    hits = np.take_along_axis(np.asarray(Y, dtype=np.float64), order, axis=1)
    precision = np.cumsum(hits, axis=1) / np.arange(1, S.shape[1] + 1)
    n_rel = hits.sum(axis=1)
    return np.where(n_rel > 0, (precision * hits).sum(axis=1) / np.maximum(n_rel, 1), 1.0)


def start_alpha(grid) -> float:
    """The value in use before any chunk was scored: :data:`ALPHA_START` for the default grid,
    else the grid's middle value (the lower middle for an even count)."""
    if tuple(grid) == ALPHA_GRID:
        return ALPHA_START
    return float(grid[(len(grid) - 1) // 2])


def label_weights(rho_pos, rho_neg, n_labels: int) -> np.ndarray:
    """``1 / c_j^2`` with ``c_j = 1 - rho_+^j - rho_-^j`` floored at 0.05 (module doc)."""
    rp = np.broadcast_to(np.asarray(0.0 if rho_pos is None else rho_pos, dtype=float), (n_labels,))
    rn = np.broadcast_to(np.asarray(0.0 if rho_neg is None else rho_neg, dtype=float), (n_labels,))
    c = np.maximum(1.0 - rp - rn, _C_FLOOR)
    return 1.0 / c**2


def prequential_losses(eigvals, eigvecs, B, HtH, HtY, n, weights, grid) -> np.ndarray:
    """Weighted mean squared loss, on a new chunk, of the model of every ``alpha`` in ``grid``.

    ``eigvals, eigvecs``: the data part ``G = V diag(lam) V^T`` of the model before the chunk;
    ``B = B_score - B_rank`` (L, q); ``HtH = H^T H`` (L, L) and ``HtY = H^T Y`` (L, q) of the
    chunk with ``Y`` in {-1, +1}; ``n`` its instances; ``weights`` (q,) per label.
    Returns (len(grid),): ``sum_tj w_j (o_tj(a) - y_tj)^2 / (n sum_j w_j)``; ``inf`` where
    ``lam + a`` is not positive (an indefinite ``G``, ``hessian="paper"``).
    """
    V = eigvecs
    C = V.T @ B  # (L, q)
    A = V.T @ HtH @ V  # (L, L)
    R = V.T @ HtY  # (L, q)
    w = np.asarray(weights, dtype=float)
    Q = A * ((C * w) @ C.T)
    r = (C * R * w).sum(axis=1)
    const = n * w.sum()  # sum_tj w_j y_tj^2 with y in {-1, +1}
    out = np.empty(len(grid))
    for i, a in enumerate(grid):
        den = eigvals + a
        if np.any(den <= 0):
            out[i] = np.inf
            continue
        d = 1.0 / den
        out[i] = (d @ Q @ d - 2.0 * d @ r + const) / const
    return out
