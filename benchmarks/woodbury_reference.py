"""Paper-literal ELM-NCLD: the sequential update of Eq. (Update) and Eq. (Z_Update), N x N inverses included.

This is the *reference* the benchmark compares :class:`ncld_core.model.ELMNCLD` against
(``python -m benchmarks``; NOTES §2).  It does exactly the paper's arithmetic per chunk
``D_{i+1}`` (Section III-C, Algorithm 1)::

    R    = b I + (1-b) (S^T S - S^T - S)                        dense N x N, as the paper writes it
    M    = b Y - g A
    P'   = P - P H^T (R^-1 + H P H^T)^-1 H P                    two N x N inverses (Woodbury)
    Phi' = Phi - P' (H^T R H Phi - H^T M)
    Z'   = Z - P' (H^T R H Z - g H^T A)                         Psi = Phi + Z

initialised on ``D_0`` by ``P_0 = (a I + H_0^T R_0 H_0)^-1``, ``Phi_0 = P_0 H_0^T M_0`` and
``Z_0 = g P_0 H_0^T A_0``.  Drift adaptation follows Section III-D: "retrain" re-initialises
``P, Phi, Z`` on the current chunk, "adjust" sets ``Phi := Phi + Z`` and ``Z := 0`` before the
update.

The paper's ``R`` drops a ``(1-b) I`` term (NOTES §1), so this computes the same model as
``ELMNCLD(hessian="paper")`` and needs ``b > 1/2`` (the paper's 0.55): then
``R = (2b-1) I + (1-b)(I-S)^T(I-S)`` is positive definite and ``R^-1`` exists.

Everything the two implementations share is taken from :mod:`ncld_core` so that the speed
ratio compares equal work: the hidden layer (:class:`~ncld_core.model.elm.RandomHiddenLayer`, or the
fitted ``model.hidden_``), the graph weights ``S`` (:func:`~ncld_core.model.graph.reconstruction_weights`),
the probability model, the importance weights and ``A`` (:mod:`ncld_core.model.importance`) and the
drift detector.  ``tests/test_woodbury_reference.py`` checks ``coef_`` against ``ELMNCLD``.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(300, 5)); Y = (X[:, :3] > 0).astype(np.int8)
>>> ref = WoodburyELMNCLD(random_state=0)
>>> for start in range(0, 300, 100):
...     ref = ref.partial_fit(X[start:start + 100], Y[start:start + 100])
>>> ref.coef_.shape, ref.decision_function(X[:2]).shape
((300, 3), (2, 3))
"""

from __future__ import annotations

import time

import numpy as np

from ncld_core.validation import check_flip_rates, check_XY
from ncld_core.model import ELMNCLD
from ncld_core.model.detector import HoeffdingCardinalityDetector
from ncld_core.model.elm import RandomHiddenLayer
from ncld_core.model.graph import reconstruction_weights
from ncld_core.model.importance import (
    importance_weights,
    instance_cardinality,
    ranking_matrix,
)
from ncld_core.model.probability import make_probability_model

__all__ = ["WoodburyELMNCLD", "PAPER_PARAMS"]

#: The paper's published optimum (Section IV): the reference needs beta > 1/2 (and the model compared with it
#: ``loss="paper"``: the reference regresses the noisy labels, as the paper does).
PAPER_PARAMS = {"alpha": 1.0, "beta": 0.55, "gamma": 2.0**-6}

# The reference's other defaults follow the model's, so the two compute the same thing.
_MODEL_DEFAULTS = ELMNCLD()

#: ELMNCLD parameters the reference understands (everything else must be left at the model's default).
_SHARED = (
    "n_hidden",
    "alpha",
    "beta",
    "gamma",
    "delta",
    "n_neighbors",
    "strategy",
    "rho_pos",
    "rho_neg",
    "probability_model",
    "scaling",
    "graph_reg",
    "random_state",
)


class WoodburyELMNCLD:
    """ELM-NCLD updated chunk by chunk with the paper's Woodbury recursion (see module doc).

    Parameters are those of :class:`ncld_core.model.ELMNCLD` (with the paper's published
    ``alpha=1, beta=0.55, gamma=2^-6`` as defaults); ``hidden`` optionally supplies an
    already fitted :class:`~ncld_core.model.elm.RandomHiddenLayer` (e.g. ``model.hidden_``) instead
    of drawing one from ``random_state`` on the first chunk.

    Attributes
    ----------
    coef_ : ndarray (L, q)            ``Phi``
    P_ : ndarray (L, L)               ``P = K^-1``
    Z_ : ndarray (L, q)               ``Z = Psi - Phi``
    psi_ : ndarray (L, q)             ``Psi = Phi + Z``
    actions_ : list of str            per chunk: init | none | detected | retrain | adjust
    last_seconds_ : dict              time of the last chunk: ``shared`` (hidden layer, graph,
                                      probabilities, weights, detector), ``woodbury`` (R, the N x N
                                      inverses and the updates of P, Phi, Z) and ``total``
    """

    def __init__(
        self,
        n_hidden=_MODEL_DEFAULTS.n_hidden,
        alpha=PAPER_PARAMS["alpha"],
        beta=PAPER_PARAMS["beta"],
        gamma=PAPER_PARAMS["gamma"],
        delta=_MODEL_DEFAULTS.delta,
        n_neighbors=_MODEL_DEFAULTS.n_neighbors,
        strategy="none",
        rho_pos=0.0,
        rho_neg=0.0,
        probability_model=_MODEL_DEFAULTS.probability_model,
        scaling=_MODEL_DEFAULTS.scaling,
        graph_reg=_MODEL_DEFAULTS.graph_reg,
        random_state=None,
        hidden=None,
    ):
        if not beta > 0.5:
            raise ValueError(
                f"the paper's R = b I + (1-b)(S^T S - S^T - S) is only invertible for beta > 1/2, got {beta}"
            )
        if strategy not in ("none", "retrain", "adjust"):
            raise ValueError(f"strategy must be 'none', 'retrain' or 'adjust', got {strategy!r}")
        self.n_hidden = n_hidden
        self.alpha = alpha
        self.beta = beta
        self.gamma = gamma
        self.delta = delta
        self.n_neighbors = n_neighbors
        self.strategy = strategy
        self.rho_pos = rho_pos
        self.rho_neg = rho_neg
        self.probability_model = probability_model
        self.scaling = scaling
        self.graph_reg = graph_reg
        self.random_state = random_state
        self.hidden = hidden
        self.P_ = None

    @classmethod
    def from_model(cls, model, *, hidden=None):
        """A reference with the same parameters as ``model`` (an ``ELMNCLD`` with ``hessian="paper"``)."""
        params = model.get_params()
        if params.get("hessian") != "paper":
            raise ValueError("the Woodbury reference reproduces ELMNCLD(hessian='paper') only")
        if params.get("loss", "paper") != "paper":
            raise ValueError("the Woodbury reference reproduces the paper's loss only: ELMNCLD(loss='paper')")
        if hidden is None and getattr(model, "hidden_", None) is not None:
            hidden = model.hidden_
        return cls(**{k: params[k] for k in _SHARED if k in params}, hidden=hidden)

    @property
    def is_fitted(self) -> bool:
        return self.P_ is not None

    # ---------------------------------------------------------------- one chunk
    def _chunk_terms(self, X, Y01):
        """What the paper computes before the update: H, S, A, M and the detector's input."""
        hidden = self.hidden_
        Xs = hidden.scale(X)
        H = hidden.transform(Xs, scaled=True)
        S, nbrs, _ = reconstruction_weights(Xs, self.n_neighbors, reg=self.graph_reg, return_neighbors=True)
        P_noisy = self._prob_model.predict_proba(H, Y01, nbrs)
        Y_pm = 2.0 * Y01 - 1.0
        W = importance_weights(Y_pm, P_noisy, self._rho_pos, self._rho_neg)
        A = ranking_matrix(Y_pm, W)
        return H, S, Y_pm, A, instance_cardinality(Y_pm, W)

    def _initialise(self, H, R, M, A):
        """Algorithm 1, line 2: ``P_0 = (a I + H^T R H)^-1``, ``Phi_0 = P_0 H^T M``, ``Z_0 = g P_0 H^T A``."""
        L = H.shape[1]
        P = np.linalg.inv(self.alpha * np.eye(L) + H.T @ R @ H)
        self.P_ = P
        self.coef_ = P @ (H.T @ M)
        self.Z_ = self.gamma * (P @ (H.T @ A))

    def _woodbury(self, H, R, M, A):
        """Eq. (Update) and Eq. (Z_Update), literally."""
        P, Phi, Z = self.P_, self.coef_, self.Z_
        R_inv = np.linalg.inv(R)  # N x N
        PHt = P @ H.T  # L x N
        P_new = P - PHt @ np.linalg.inv(R_inv + H @ PHt) @ (H @ P)  # N x N inverse
        HtRH = H.T @ R @ H
        HtM = H.T @ M
        self.P_ = P_new
        self.coef_ = Phi - P_new @ (HtRH @ Phi - HtM)
        self.Z_ = Z - P_new @ (HtRH @ Z - self.gamma * (H.T @ A))

    def partial_fit(self, X, Y):
        """Learn one chunk; the first call initialises the model on ``D_0``."""
        t0 = time.perf_counter()
        first = not self.is_fitted
        X, Y01 = check_XY(
            X,
            Y,
            n_features=None if first else self.n_features_in_,
            n_labels=None if first else self.n_labels_,
        )
        Y01 = np.asarray(Y01, dtype=np.float64)
        if first:
            self._rho_pos, self._rho_neg = check_flip_rates(self.rho_pos, self.rho_neg, n_labels=Y01.shape[1])
            self._prob_model = make_probability_model(self.probability_model)
            self.hidden_ = (
                self.hidden
                if self.hidden is not None
                else RandomHiddenLayer(self.n_hidden, self.scaling, self.random_state).fit(X)
            )
            self.detector_ = HoeffdingCardinalityDetector(self.delta)
            self.n_features_in_, self.n_labels_ = X.shape[1], Y01.shape[1]
            self.actions_ = []
        H, S, Y_pm, A, card = self._chunk_terms(X, Y01)
        fired = self.detector_.update(card).fired
        t1 = time.perf_counter()

        n = H.shape[0]
        b = self.beta
        Sd = S.toarray()
        R = b * np.eye(n) + (1.0 - b) * (Sd.T @ Sd - Sd.T - Sd)  # the paper's R, dense N x N
        M = b * Y_pm - self.gamma * A
        if first:
            action = "init"
            self._initialise(H, R, M, A)
        elif fired and self.strategy == "retrain":
            action = "retrain"
            self._initialise(H, R, M, A)
        else:
            if fired and self.strategy == "adjust":
                action = "adjust"
                self.coef_ = self.coef_ + self.Z_  # Phi_{i-1} := Psi_{i-1}
                self.Z_ = np.zeros_like(self.Z_)
            else:
                action = "detected" if fired else "none"
            self._woodbury(H, R, M, A)
        self.actions_.append(action)
        t2 = time.perf_counter()
        self.last_seconds_ = {"shared": t1 - t0, "woodbury": t2 - t1, "total": t2 - t0}
        return self

    @property
    def psi_(self) -> np.ndarray:
        return self.coef_ + self.Z_

    def decision_function(self, X) -> np.ndarray:
        """Label scores ``O = H Phi``."""
        if not self.is_fitted:
            raise ValueError("WoodburyELMNCLD is not fitted yet: call partial_fit first")
        return self.hidden_.transform(X) @ self.coef_

    def predict(self, X) -> np.ndarray:
        return (self.decision_function(X) > 0).astype(np.int8)
