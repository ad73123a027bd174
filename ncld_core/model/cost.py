"""What one chunk of ELM-NCLD costs, before it runs: memory of its arrays and floating-point work.

An analytic estimate from the shapes alone (no data is touched), for a dashboard to show before
Run and to refuse settings past a budget.  It counts the arrays the update of one chunk holds at
once (the model's per-chunk terms, :class:`~ncld_core.model.chunk_terms.ChunkTerms`, and the logistic ``P_D`` fit of
:class:`~ncld_core.model.probability.LogisticProbability`), with ``N`` the chunk size, ``L`` the
hidden nodes, ``p = L + 1``, ``q`` the labels, ``d`` the features and ``K`` the neighbours:

* the logistic ``P_D`` fit: the per-instance outer products ``N x p^2`` (the largest array by far
  once ``L`` is in the hundreds) and the per-label Hessians, their sum and the solve's copy,
  ``3 x q x p^2``;
* the chunk's feature graph: the ``N x N`` Gram matrix and the ``N x K x K`` local Grams;
* the hidden outputs ``N x L`` and ``[H, 1]``; the chunk's features as dense ``N x d`` (an upper
  bound for sparse data);
* per ELM-NCLD variant, the ``L x L`` statistics (the chunk's and the running sums, ``K`` and its
  Cholesky factor) and the ``L x q`` right-hand sides.

It is an upper bound of what NumPy allocates for these arrays (float64), not of the process: the
interpreter, the loaded dataset and the figures come on top.  The floating-point count uses the
dense shapes and :data:`NEWTON_ITERATIONS` Newton steps; divided by a measured rate
(:func:`machine_flops`) it gives a time that is right within a factor of a few -- a first measured
chunk (:func:`extrapolate`) replaces it as soon as there is one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np

from .probability import DEFAULT_PROBABILITY_MODEL

__all__ = ["CostEstimate", "RunCost", "estimate_cost", "estimate_run", "check_budget", "proba_columns", "estimate_for", "largest_hidden_within", "machine_flops", "extrapolate",
           "MEMORY_BUDGET_BYTES", "NEWTON_ITERATIONS", "EFFICIENCY", "OVERHEAD_S", "GRAPH_EFFICIENCY", "simplex_rounds"]

#: The budget a dashboard refuses settings past: the estimated arrays of one chunk.
MEMORY_BUDGET_BYTES = 2 * 1024**3
#: Newton steps assumed for the logistic P_D fit (it stops at ``max_iter`` = 25 or earlier; ~8 is typical).
NEWTON_ITERATIONS = 8
_F8 = 8  # bytes per float64
#: Share of the matrix-product rate (:func:`machine_flops`) the update reaches: the P_D fit streams its
#: N x (L+1)^2 array through memory, far below the rate of a cache-resident product.  Measured on a
#: 2-core machine (enron L=500 N=250: 1.96 s of products, 13-18 s measured; medical L=200 N=100: 0.11 s
#: of products, 0.75-1.6 s measured), so an estimate is right within a factor of about 2.
EFFICIENCY = 0.12
#: Fixed seconds per variant and chunk (Python, the detectors, the metrics) where the products are small.
OVERHEAD_S = 0.03
#: Share of the product rate the graph's batched ``K x K`` solves reach (:func:`ncld_core.model.graph.simplex_qp`;
#: measured 0.05-0.08 at K = 100-200 on the generator).  The graph's work enters :attr:`CostEstimate.flops`
#: weighted by ``EFFICIENCY / GRAPH_EFFICIENCY``, so that ``flops / (EFFICIENCY x rate)`` is its time too.
GRAPH_EFFICIENCY = 0.06


def simplex_rounds(n_neighbors: int) -> float:
    """Active-set solves per instance of the graph's simplex QP (:func:`ncld_core.model.graph.simplex_qp`) at
    ``K = n_neighbors``: measured 1.6, 7.6, 10.9, 16.4 and 30.5 at K = 5, 20, 50, 100 and 200 on the generator
    (chunks of 250; about half on enron), so ``4 + 0.13 K`` (above the measured below K = 20, where the graph's
    share of a chunk is small).  Counting one solve (before) put the estimate 10x below the measured chunk at
    K = 200.

    >>> simplex_rounds(200)
    30.0
    """
    return 4.0 + 0.13 * float(n_neighbors)


@dataclass(frozen=True)
class CostEstimate:
    """Memory (bytes) of the arrays one chunk's update holds at once, and its floating-point work."""

    memory_bytes: int
    flops: float
    n_chunks: int | None
    terms: dict = field(default_factory=dict)  # array name -> bytes
    n_models: int = 1  # ELM-NCLD variants sharing the chunk

    @property
    def largest(self) -> str:
        """The term that dominates the memory (its name, as in :attr:`terms`)."""
        return max(self.terms, key=self.terms.get)

    def seconds_per_chunk(self, flops_per_s: float) -> float:
        """Expected seconds of one chunk at a matrix-product rate of ``flops_per_s`` (see :data:`EFFICIENCY`)."""
        return OVERHEAD_S * max(self.n_models, 1) + self.flops / (EFFICIENCY * flops_per_s)

    def seconds_total(self, flops_per_s: float) -> float | None:
        return None if self.n_chunks is None else self.n_chunks * self.seconds_per_chunk(flops_per_s)

    def one_model(self) -> "CostEstimate":
        """An even share of the chunk's work per variant (:attr:`n_models` of them; memory unchanged): below one
        variant alone, whose run would also pay the steps the variants share (the hidden layer, the graph)."""
        return replace(self, flops=self.flops / max(self.n_models, 1), n_models=1)


def proba_columns(probability_model, n_hidden: int) -> int | None:
    """Columns of ``H`` the ``P_D`` model fits a logistic regression on (None: no fit on ``H``, e.g.
    "knn"): the logistic models fit on at most ``n_components`` (:mod:`ncld_core.model.probability`)."""
    from .probability import PROBABILITY_MODELS, LogisticProbability

    model = probability_model
    if isinstance(model, str):
        cls = PROBABILITY_MODELS.get(model)
        model = cls() if cls is not None else None
    if not isinstance(model, LogisticProbability):
        return None
    return int(n_hidden) if model.n_components is None else min(int(n_hidden), int(model.n_components))


def estimate_cost(*, chunk_size: int, n_hidden: int, n_features: int, n_labels: int, n_neighbors: int,
                  n_models: int = 1, fits_proba: bool = True, n_instances: int | None = None,
                  probability_model="logistic-full") -> CostEstimate:
    """The cost of one chunk of ``n_models`` ELM-NCLD variants sharing the chunk's ``H``, graph and ``P_D``.

    ``fits_proba``: whether ``P_D`` is fitted at all (not when every model is told rates 0 with
    beta = 1); ``probability_model``: which (:func:`proba_columns`; "logistic-full" = a logistic
    fit on all ``L + 1`` columns, the upper bound); ``n_instances`` gives :attr:`CostEstimate.n_chunks`.
    """
    N, L, q, d, K = (int(v) for v in (chunk_size, n_hidden, n_labels, n_features, n_neighbors))
    m = max(int(n_models), 0)
    columns = L if probability_model == "logistic-full" else proba_columns(probability_model, L)
    fits_proba = fits_proba and columns is not None
    p = (L if columns is None else columns) + 1
    terms = {
        "features N x d": N * d * _F8,
        "hidden weights d x L (one draw, shared by the variants)": d * L * _F8,
        "hidden outputs N x (L+1), twice": 2 * N * p * _F8,
        "graph: Gram N x N": N * N * _F8,
        "graph: local Grams N x K^2": N * K * K * _F8,
        "statistics L x L per variant": m * (6 * L * L + 4 * L * q) * _F8 + 2 * L * L * _F8,
    }
    # H, Gram; the local solves: simplex_rounds(K) solves of K x K per instance, at the graph's efficiency
    graph = N * simplex_rounds(K) * (2.0 * K**3 / 3.0 + 6.0 * K * K) * (EFFICIENCY / GRAPH_EFFICIENCY)
    flops = 2.0 * N * d * L + 2.0 * N * N * d + graph
    flops += 4.0 * N * L * L + m * (L**3 / 3.0 + 4.0 * N * L * q + 2.0 * L * L * q)  # statistics, solve, scores
    if fits_proba:
        terms["P_D fit: N x (L+1)^2 outer products"] = N * p * p * _F8
        terms["P_D fit: q x (L+1)^2 Hessians"] = 3 * q * p * p * _F8
        flops += N * p * p + NEWTON_ITERATIONS * (2.0 * q * N * p * p + q * (2.0 * p**3 / 3.0) + 4.0 * N * p * q)
    n_chunks = None if n_instances is None else -(-int(n_instances) // N)
    return CostEstimate(memory_bytes=int(sum(terms.values())), flops=float(flops), n_chunks=n_chunks, terms=terms,
                        n_models=m)


def estimate_for(cfg, *, n_features: int, n_labels: int, n_instances: int | None = None,
                 elm_names=()) -> CostEstimate:
    """:func:`estimate_cost` of a :class:`~ncld_core.config.RunConfig`'s ELM-NCLD variants on data of
    ``n_features`` x ``n_labels``: its models named in ``elm_names`` (the variants and the oracle, from
    :mod:`ncld_core.eval.variants`, a layer above this one); the baselines' own costs are not counted."""
    elm = [m for m in cfg.models if m in set(elm_names)]
    # P_D is fitted unless every variant is told rates 0 (ELM (plain), "ignore", or a noise-free stream)
    told_nonzero = cfg.model_rates == "estimate" or (cfg.model_rates == "known" and cfg.noise != "none")
    fits = any(m != "ELM (plain)" for m in elm) and told_nonzero
    return estimate_cost(chunk_size=cfg.chunk_size, n_hidden=cfg.n_hidden, n_features=n_features, n_labels=n_labels,
                         n_neighbors=cfg.n_neighbors, n_models=len(elm), fits_proba=fits, n_instances=n_instances,
                         probability_model=DEFAULT_PROBABILITY_MODEL)


@dataclass(frozen=True)
class RunCost:
    """Memory (bytes) a whole run holds at once: its stream, one chunk's arrays (every variant's) and its
    sweep; ``terms`` names each part, ``chunk`` is the per-chunk estimate it includes."""

    memory_bytes: int
    terms: dict
    chunk: CostEstimate

    @property
    def largest(self) -> str:
        return max(self.terms, key=self.terms.get)


def estimate_run(chunk: CostEstimate, *, n_instances: int, n_features: int, n_labels: int,
                 features_bytes: int | None = None, sweep_points: int = 0, n_hidden: int = 0) -> RunCost:
    """The whole run's memory: the stream's arrays (its features ``n x d``, dense float64 unless
    ``features_bytes`` gives what the data takes; its true and noisy labels ``2 x n x q``, counted as
    float64, an upper bound), the chunk's arrays (``chunk``, every variant) and, for a sweep of
    ``sweep_points`` (beta, gamma) pairs, one ``L x L`` system and ``L x q`` solution per point.

    >>> chunk = estimate_cost(chunk_size=500, n_hidden=300, n_features=20, n_labels=10, n_neighbors=20)
    >>> run = estimate_run(chunk, n_instances=100_000_000, n_features=20, n_labels=10)
    >>> run.largest, run.memory_bytes > 2**34
    ('stream: features n x d', True)
    """
    n, d, q, L = int(n_instances), int(n_features), int(n_labels), int(n_hidden)
    terms = {
        "stream: features n x d": n * d * _F8 if features_bytes is None else int(features_bytes),
        "stream: true and noisy labels 2 x n x q": 2 * n * q * _F8,
        "one chunk's arrays (every variant)": chunk.memory_bytes,
    }
    if sweep_points:
        terms["sweep: an L x L system per (beta, gamma) point"] = int(sweep_points) * (L * L + L * q) * _F8
    return RunCost(memory_bytes=int(sum(terms.values())), terms=terms, chunk=chunk)


def _fmt_bytes(b: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if b < 1024 or unit == "GiB":
            return f"{b:.1f} {unit}" if unit != "B" else f"{int(b)} B"
        b /= 1024.0
    return f"{b:.1f} GiB"


def check_budget(*, budget_bytes: float | None = None, **kwargs) -> CostEstimate:
    """:func:`estimate_cost` of ``kwargs``, a ValueError naming the parameters when its memory passes
    ``budget_bytes`` (default :data:`MEMORY_BUDGET_BYTES`; :meth:`ELMNCLD.partial_fit <ncld_core.model.ELMNCLD.partial_fit>` checks it first).

    >>> check_budget(chunk_size=500, n_hidden=300, n_features=1001, n_labels=53, n_neighbors=20).memory_bytes < 2**30
    True
    """
    budget_bytes = MEMORY_BUDGET_BYTES if budget_bytes is None else budget_bytes
    cost = estimate_cost(**kwargs)
    if cost.memory_bytes > budget_bytes:
        names = ", ".join(f"{k}={kwargs[k]}" for k in ("n_hidden", "chunk_size", "n_labels", "n_features")
                          if k in kwargs)
        raise ValueError(
            f"{names}: one chunk needs an estimated {_fmt_bytes(cost.memory_bytes)} of memory, over the budget "
            f"of {_fmt_bytes(budget_bytes)} (largest part: {cost.largest}, {_fmt_bytes(cost.terms[cost.largest])}); "
            "use fewer hidden nodes (n_hidden) or smaller chunks")
    return cost


def largest_hidden_within(budget_bytes: float, **kwargs) -> int:
    """The largest ``n_hidden`` whose :func:`estimate_cost` stays within ``budget_bytes`` (0 if none does)."""
    kwargs.pop("n_hidden", None)
    lo, hi = 0, 1
    while estimate_cost(n_hidden=hi, **kwargs).memory_bytes <= budget_bytes and hi < 10**6:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if estimate_cost(n_hidden=mid, **kwargs).memory_bytes <= budget_bytes:
            lo = mid
        else:
            hi = mid
    return lo


def machine_flops(size: int = 256, repeats: int = 3) -> float:
    """Floating-point operations per second of this process: the best of a few ``size``-square products."""
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((size, size)), rng.standard_normal((size, size))
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        A @ B
        best = min(best, time.perf_counter() - t0)
    return 2.0 * size**3 / max(best, 1e-9)


def extrapolate(chunk_seconds, n_chunks: int) -> float:
    """Seconds left for the remaining chunks, from the measured ones (their median)."""
    done = list(chunk_seconds)
    if not done:
        raise ValueError("extrapolate needs at least one measured chunk")
    return float(np.median(done)) * max(n_chunks - len(done), 0)
