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

Cost of a configuration (:func:`estimate_cost`)
-----------------------------------------------
Bytes and floating-point operations of one chunk's ``partial_fit`` (plus the prediction
of the chunk), from the shapes alone: ``L = n_hidden``, ``N = chunk_size``,
``q = n_labels``, ``d = n_features``.  The largest terms are the chunk's dense Gram
matrix of the feature graph (``8 N^2`` bytes), the logistic ``P_D`` model's
``N x (p+1)^2`` outer products (``p = min(L, n_components)``), the hidden layer's
``d x L`` weights and the ``L x L`` statistics.  ``ELMNCLD`` refuses (``ValueError``
naming ``n_hidden``, the chunk size, the labels and features) any chunk whose estimate
passes :data:`MEMORY_BUDGET_BYTES`, before any work.  The seconds are a rough guide
(``flops / FLOPS_PER_SECOND`` on one core), not a promise.

>>> cost = estimate_cost(n_hidden=200, chunk_size=500, n_labels=53, n_features=1001)
>>> cost.bytes < 50 * 2**20, cost.flops > 0
(True, True)
>>> estimate_cost(n_hidden=20_000, chunk_size=500, n_labels=53, n_features=1001).fits
False
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

__all__ = [
    "ALPHA_GRID",
    "ALPHA_START",
    "ALPHA_DISCOUNT",
    "MEMORY_BUDGET_BYTES",
    "FLOPS_PER_SECOND",
    "CostEstimate",
    "alpha_grid",
    "label_weights",
    "prequential_losses",
    "prequential_ap_losses",
    "alpha_criterion",
    "AP_SAMPLE",
    "estimate_cost",
    "check_budget",
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
#: Refuse a chunk whose estimated working memory passes this many bytes (2 GiB).
MEMORY_BUDGET_BYTES = 2 * 2**30
#: Rough sustained rate of the small dense products here, on one core (for the seconds estimate).
FLOPS_PER_SECOND = 2.0e9
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

    AP is the label-ranking average precision (:func:`ncld_core.metrics.average_precision`)
    of the scores ``H Phi(a)`` against the chunk's *observed* labels ``Y01``, on
    :data:`AP_SAMPLE` instances (an even stride).  With per-label flip rates that do not
    depend on ``x``, ``P(y_j = 1 | x) = c_j P(g_j = 1 | x) + rho_-^j`` is increasing in the
    clean posterior, so the noisy labels rank scores the way the clean ones would label by
    label; across labels with different rates they do not, and no correction is applied.
    Cost O(n L^2 + len(grid) n L q) for ``n`` scored instances.
    """
    from .metrics import _ranking_rows

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
    ap = _ranking_rows(np.tile(Ys, (len(ok), 1)), S)[0].reshape(len(ok), -1).mean(axis=1)
    out[ok] = 1.0 - ap
    return out


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


@dataclass(frozen=True)
class CostEstimate:
    """Estimated working memory and work of one chunk (see :func:`estimate_cost`)."""

    bytes: int
    flops: float
    seconds: float
    budget_bytes: int
    terms: dict

    @property
    def fits(self) -> bool:
        return self.bytes <= self.budget_bytes

    def __iter__(self):  # (bytes, flops, seconds), as a tuple
        return iter((self.bytes, self.flops, self.seconds))


def _components(probability_model) -> int | None:
    """Columns of ``H`` the probability model fits on: -1 for all, None for no fit on ``H``."""
    from .probability import PROBABILITY_MODELS, LogisticProbability

    model = probability_model
    if isinstance(model, str):
        cls = PROBABILITY_MODELS.get(model)
        model = cls() if cls is not None else None
    if not isinstance(model, LogisticProbability):
        return None
    return -1 if model.n_components is None else int(model.n_components)


def estimate_cost(n_hidden, chunk_size, n_labels, n_features, *, n_neighbors=20, probability_model="logistic",
                  alpha="auto", nnz_per_row=None, budget_bytes=None) -> CostEstimate:
    """Bytes and flops of one chunk of ``partial_fit`` (+ its prediction) at these shapes.

    ``nnz_per_row``: non-zeros per row of sparse ``X`` (default: dense, ``n_features``).
    ``budget_bytes`` defaults to :data:`MEMORY_BUDGET_BYTES`.  Returns a :class:`CostEstimate`
    (unpacks as ``bytes, flops, seconds``; ``.terms`` holds the parts).  Shapes are checked
    (positive integers), nothing is allocated.
    """
    from ._validation import check_in_range

    for value, name in ((n_hidden, "n_hidden"), (chunk_size, "chunk_size"), (n_labels, "n_labels"),
                        (n_features, "n_features"), (n_neighbors, "n_neighbors")):
        check_in_range(value, name, 1, math.inf, integer=True, high_open=True)
    L, N, q, d, k = (int(v) for v in (n_hidden, chunk_size, n_labels, n_features, n_neighbors))
    nnz = d if nnz_per_row is None else max(1.0, float(nnz_per_row))
    f8 = 8
    comps = _components(probability_model)
    p = None if comps is None else (L if comps < 0 else min(L, comps)) + 1
    auto = not isinstance(alpha, numbers.Real) or isinstance(alpha, bool)
    n_grid = 1 if not auto else len(alpha_grid(alpha))
    mem = {
        "input chunk (scaled copy)": 2 * N * nnz * (f8 if nnz_per_row is None else 12),
        "hidden weights d x L": d * L * f8,
        "H, S H, E (N x L)": 3 * N * L * f8,
        "graph Gram matrix N x N": N * N * f8 + N * N * f8,  # the Gram matrix and its distances
        "local graph systems N x k x k": N * k * k * f8,
        "L x L statistics (K, H^T H, E^T E, eigenvectors)": 6 * L * L * f8,
        "L x q statistics": 6 * L * q * f8,
        "N x q labels, weights, scores": 6 * N * q * f8,
    }
    flops = {
        "hidden layer": 2.0 * N * nnz * L,
        "graph": 2.0 * N * N * nnz + N * k**3,
        "H^T R H": 4.0 * N * L * L + 2.0 * N * k * L,
        "solve": L**3 / 3.0 + 4.0 * L * L * q + 4.0 * L**3,
        "prediction and H^T Y": 4.0 * N * L * q,
    }
    if auto:
        flops["alpha selection"] = 5.0 * L**3 + 4.0 * L * L * q + n_grid * 2.0 * L * L
    if p is not None:
        iters = 10
        mem["logistic P_D: N x p^2 outer products + q x p x p Hessians"] = (N * p * p + 2 * q * p * p) * f8
        flops["logistic P_D"] = iters * (2.0 * N * p * p * q + q * p**3 / 3.0 + 4.0 * N * p * q) + 2.0 * N * L * p
    total_bytes = int(sum(mem.values()))
    total_flops = float(sum(flops.values()))
    budget = MEMORY_BUDGET_BYTES if budget_bytes is None else int(budget_bytes)
    return CostEstimate(total_bytes, total_flops, total_flops / FLOPS_PER_SECOND, budget,
                        {"bytes": mem, "flops": flops})


def _fmt_bytes(b: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if b < 1024 or unit == "TiB":
            return f"{b:.1f} {unit}" if unit != "B" else f"{int(b)} B"
        b /= 1024.0
    return f"{b:.1f} TiB"


def check_budget(n_hidden, chunk_size, n_labels, n_features, **kwargs) -> CostEstimate:
    """:func:`estimate_cost`, raising ValueError (naming the parameters) when it passes the budget."""
    cost = estimate_cost(n_hidden, chunk_size, n_labels, n_features, **kwargs)
    if not cost.fits:
        big = max(cost.terms["bytes"].items(), key=lambda kv: kv[1])
        raise ValueError(
            f"n_hidden={n_hidden}, chunk_size={chunk_size}, n_labels={n_labels}, n_features={n_features}: "
            f"one chunk needs an estimated {_fmt_bytes(cost.bytes)} of memory, over the budget of "
            f"{_fmt_bytes(cost.budget_bytes)} (largest part: {big[0]}, {_fmt_bytes(big[1])}); "
            "use fewer hidden nodes (n_hidden) or smaller chunks"
        )
    return cost
