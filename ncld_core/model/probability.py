"""Per-chunk models of the noisy class probability ``P_D(y = +1 | x)`` (NOTES §3).

The importance weights of Prop. 2 need ``P_D(y_tj | x_t)``; the paper fits "an
ELM on the current chunk" and takes its "sigmoid output".  Each model here is
refitted on every chunk (so it follows drift) from the chunk's hidden-layer
output ``H`` and observed labels, and returns an (N, q) array of probabilities.

* ``"logistic"``: per-label L2-regularised logistic regression on
  ``[H, 1]``, fitted by batched Newton steps for all labels at once.  Chosen by
  measurement (``docs/defaults.md``, ``python -m benchmarks.choose_defaults``):
  the smallest error against the true ``P_D`` on the synthetic generator and a
  paper's drift test (``detector="paper"``) whose false alarms stay near ``delta``
  (docs/defaults.md, section 1).  ``P_D`` enters the importance weights of the
  ranking term and the paper's Eq. (card) estimate (``lcard_paper``), which is
  biased upwards on sparse real label sets with every model here (weights clipped
  at 0, ``P_D`` smoothed towards the chunk mean where it should sit at ``rho_-``;
  measured in docs/drift.md).  The model's ``lcard_hat`` does not use ``P_D``: it is
  the moment estimate of :mod:`ncld_core.model.cardinality`.
  It fits on the first 20 hidden nodes (``n_components``): its cost does not grow with
  ``L`` (docs/capacity.md, ``python -m benchmarks.capacity``).  It was the default at L = 20.
* ``"logistic-pca"``: the same on the first 20 principal directions of the chunk's ``H``.
* ``"sigmoid"``: the paper's literal reading, ``sigmoid(H Beta)`` with ``Beta``
  the ridge ELM fit of targets in {-1, +1}; squeezed towards 1/2 and poorly
  calibrated.
* ``"knn"`` (default of :class:`~ncld_core.model.ELMNCLD` since L = 300): the mean observed
  label over the instance's graph neighbours (itself excluded), shrunk towards the chunk's
  label frequency.  Its cost does not depend on ``L``; at L = 200 it gave a higher AP than
  "logistic" on the shared datasets (docs/capacity.md).
* ``"prior"``: the chunk's label frequency, the same for every instance.

Any object with a ``predict_proba(H, Y01, neighbors) -> (N, q)`` method can be
passed instead of a name.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> H = rng.uniform(size=(200, 3)); Y = (H[:, :1] > 0.5).astype(np.int8)
>>> P = make_probability_model("logistic").predict_proba(H, Y, None)
>>> P.shape, bool(P[Y[:, 0] == 1].mean() > P[Y[:, 0] == 0].mean())
((200, 1), True)
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

__all__ = [
    "DEFAULT_PROBABILITY_MODEL",
    "LogisticProbability",
    "ProjectedLogisticProbability",
    "SigmoidELMProbability",
    "NeighbourProbability",
    "PriorProbability",
    "make_probability_model",
    "PROBABILITY_MODELS",
]

#: The model :class:`~ncld_core.model.ELMNCLD` uses unless told (``docs/capacity.md``).
DEFAULT_PROBABILITY_MODEL = "knn"


def _with_intercept(H: np.ndarray) -> np.ndarray:
    return np.hstack([H, np.ones((H.shape[0], 1))])


class LogisticProbability:
    """Per-label logistic regression on ``[H_p, 1]``; all labels solved together by Newton.

    Minimises, per label, ``sum_t log(1 + exp(-y_t theta.h_t)) + |theta - theta_0|^2 / (2C)``
    where ``theta_0`` is zero but for the intercept, the log-odds of the chunk's
    label frequency smoothed by half an instance.  Anchoring the intercept there
    (rather than leaving it free) keeps labels with no positive in the chunk
    finite, so Newton converges quadratically: ``max_iter`` steps or until the
    largest step is below ``tol``.

    ``H_p`` is ``H`` reduced to ``n_components`` columns (None: all of ``H``), so the cost
    stays O(N p^2 q + q p^3) per chunk whatever ``L`` (with all ``L + 1`` columns it is
    O(N L^2 q + q L^3) and the ``N x (L+1)^2`` outer products alone take 1 GB at L = 500):

    * ``projection="first"``: the first ``n_components`` hidden nodes.  They are a random
      ELM layer of their own (the nodes are drawn independently), so at any ``L`` this is
      the model fitted at ``L = n_components``, and for ``L <= n_components`` it is the
      full fit, unchanged.
    * ``projection="pca"``: the chunk's ``H`` (centred) projected on its first
      ``n_components`` principal directions, found by a randomised range finder
      (``n_components + 5`` probes, one power iteration; fixed seed).
    """

    def __init__(self, C: float = 10.0, max_iter: int = 25, tol: float = 1e-8, n_components: int | None = 20,
                 projection: str = "first"):
        self.C = C
        self.max_iter = max_iter
        self.tol = tol
        self.n_components = n_components
        self.projection = projection

    def reduce(self, H) -> np.ndarray:
        """``H_p``: ``H`` reduced to at most ``n_components`` columns (see the class doc)."""
        H = np.asarray(H, dtype=np.float64)
        k = self.n_components
        if k is None or H.shape[1] <= k:
            return H
        if self.projection == "first":
            return H[:, :k]
        if self.projection != "pca":
            raise ValueError(f"projection must be 'first' or 'pca', got {self.projection!r}")
        Hc = H - H.mean(axis=0)
        probes = np.random.default_rng(0).standard_normal((H.shape[1], min(k + 5, H.shape[1])))
        Q, _ = np.linalg.qr(Hc @ probes)
        Q, _ = np.linalg.qr(Hc @ (Hc.T @ Q))  # one power iteration
        U, s, _ = np.linalg.svd(Q.T @ Hc, full_matrices=False)
        return Q @ (U[:, :k] * s[:k])  # principal component scores (N, k): an orthonormal projection

    def predict_proba(self, H, Y01, neighbors=None) -> np.ndarray:
        Z = _with_intercept(self.reduce(H))  # (N, p)
        n, p = Z.shape
        Y = np.asarray(Y01, dtype=np.float64)
        q = Y.shape[1]
        freq = (Y.sum(axis=0) + 0.5) / (n + 1.0)
        theta0 = np.zeros((p, q))
        theta0[-1] = np.log(freq / (1 - freq))
        theta = theta0.copy()
        ZZ = (Z[:, :, None] * Z[:, None, :]).reshape(n, p * p)
        penalty = 1.0 / self.C
        for _ in range(self.max_iter):
            P = expit(Z @ theta)
            grad = Z.T @ (P - Y) + penalty * (theta - theta0)  # (p, q)
            V = P * (1.0 - P)  # (N, q)
            hess = (V.T @ ZZ).reshape(q, p, p) + penalty * np.eye(p)
            step = np.linalg.solve(hess, grad.T[:, :, None])[:, :, 0].T
            theta -= step
            if np.max(np.abs(step)) < self.tol:
                break
        return expit(Z @ theta)


class ProjectedLogisticProbability(LogisticProbability):
    """:class:`LogisticProbability` on the first ``n_components`` principal directions of ``H``."""

    def __init__(self, C: float = 10.0, max_iter: int = 25, tol: float = 1e-8, n_components: int | None = 20,
                 projection: str = "pca"):
        super().__init__(C, max_iter, tol, n_components, projection)


class SigmoidELMProbability:
    """The paper's reading: ``sigmoid(H Beta)``, ``Beta`` the ridge fit of {-1, +1} targets."""

    def __init__(self, alpha: float = 1.0):
        self.alpha = alpha

    def predict_proba(self, H, Y01, neighbors=None) -> np.ndarray:
        Y_pm = 2.0 * np.asarray(Y01, dtype=np.float64) - 1.0
        K = H.T @ H + self.alpha * np.eye(H.shape[1])
        beta = np.linalg.solve(K, H.T @ Y_pm)
        return expit(H @ beta)


class NeighbourProbability:
    """Mean observed label over the graph neighbours, shrunk towards the chunk frequency.

    ``P_tj = (m * f_j + sum_{n in N(t)} y_nj) / (m + K)`` with ``f_j`` the chunk's
    frequency of label ``j`` and ``m`` the shrinkage (pseudo-count).
    """

    def __init__(self, shrinkage: float = 2.0):
        self.shrinkage = shrinkage

    def predict_proba(self, H, Y01, neighbors=None) -> np.ndarray:
        if neighbors is None:
            raise ValueError("probability model 'knn' needs the chunk's neighbour graph")
        Y = np.asarray(Y01, dtype=np.float64)
        freq = Y.mean(axis=0)
        counts = Y[neighbors].sum(axis=1)  # (N, q)
        return (self.shrinkage * freq + counts) / (self.shrinkage + neighbors.shape[1])


class PriorProbability:
    """The chunk's label frequency for every instance (ignores ``x``)."""

    def predict_proba(self, H, Y01, neighbors=None) -> np.ndarray:
        Y = np.asarray(Y01, dtype=np.float64)
        return np.broadcast_to(Y.mean(axis=0), Y.shape).copy()


PROBABILITY_MODELS = {
    "logistic": LogisticProbability,
    "logistic-pca": ProjectedLogisticProbability,
    "sigmoid": SigmoidELMProbability,
    "knn": NeighbourProbability,
    "prior": PriorProbability,
}


def make_probability_model(spec):
    """A probability model from a name in :data:`PROBABILITY_MODELS` or an object with ``predict_proba``."""
    if isinstance(spec, str):
        try:
            return PROBABILITY_MODELS[spec]()
        except KeyError:
            names = ", ".join(repr(k) for k in PROBABILITY_MODELS)
            raise ValueError(f"probability_model must be one of {names} or an object; got {spec!r}") from None
    if not callable(getattr(spec, "predict_proba", None)):
        raise ValueError("probability_model must be a name or have a predict_proba(H, Y01, neighbors) method")
    return spec
