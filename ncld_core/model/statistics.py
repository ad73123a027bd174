"""The sufficient statistics of ELM-NCLD and the one step that accumulates them.

NOTES §2: the model is linear in four per-chunk terms that depend on neither
``beta`` nor ``gamma`` nor ``alpha``::

    HtH = H^T H,   EtE = E^T E  (E = H - S H),   HtY = H^T Y,   HtA = H^T A

(``Y`` the observed labels in {-1, +1}, ``A`` the importance-weighted ranking matrix of
Eq. RL_New).  Summed over the chunks since the last reset they give the normal
equations ``K Phi = B_score - B_rank`` of Eq. (Gra0) for any parameters::

    K       = a I + b HtH + (1-b) EtE          (hessian="exact", NOTES §1)
    K       = a I + (2b-1) HtH + (1-b) EtE     (hessian="paper": the published Eq. Gra)
    B_score = b HtY,       B_rank = g HtA

A drift acted on changes the sums (:func:`accumulate`): ELM-I ("retrain") restarts them
from the current chunk, ELM-II ("adjust") drops the ranking term ``HtA`` (the paper's
``Phi_{i-1} := Psi_{i-1}``) and keeps the rest.  :class:`~ncld_core.model.ELMNCLD`
learns through exactly this step, and so does the beta x gamma sweep
(:mod:`ncld_core.eval.sweep`), which solves the same sums for a grid of parameters.

>>> import numpy as np
>>> H = np.array([[1.0, 0.0], [0.0, 2.0]]); Y = np.array([[1.0], [-1.0]])
>>> chunk = SufficientStatistics(H.T @ H, np.zeros((2, 2)), H.T @ Y, np.zeros((2, 1)))
>>> total = accumulate(None, chunk, "init")
>>> total = accumulate(total, chunk, "none")
>>> total.K(alpha=1.0, beta=1.0).tolist()
[[3.0, 0.0], [0.0, 9.0]]
>>> total.B_score(beta=0.5).ravel().tolist()
[1.0, -2.0]
>>> drift_action(fired=True, strategy="adjust", first=False)
'adjust'
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..saved_state import NONNEGATIVE, SavedState, array, first_error, shape_error

__all__ = ["SufficientStatistics", "accumulate", "drift_action", "ACTIONS"]

#: What a chunk does to the sums: the first chunk, no firing, a firing not acted on, ELM-I, ELM-II.
ACTIONS = ("init", "none", "detected", "retrain", "adjust")


@dataclass(frozen=True, eq=False)
class SufficientStatistics:
    """``H^T H``, ``E^T E`` (L, L) and ``H^T Y``, ``H^T A`` (L, q): one chunk's terms or their sum."""

    HtH: np.ndarray
    EtE: np.ndarray
    HtY: np.ndarray
    HtA: np.ndarray

    def __add__(self, other: "SufficientStatistics") -> "SufficientStatistics":
        return SufficientStatistics(self.HtH + other.HtH, self.EtE + other.EtE,
                                    self.HtY + other.HtY, self.HtA + other.HtA)

    def without_ranking(self) -> "SufficientStatistics":
        """The sums with the ranking term dropped (ELM-II's adjustment)."""
        return SufficientStatistics(self.HtH, self.EtE, self.HtY, np.zeros_like(self.HtA))

    def K(self, alpha: float, beta: float, hessian: str = "exact") -> np.ndarray:
        """``a I + sum H^T R H`` with the exact ``R`` (NOTES §1) or the paper's published one."""
        graph_weight = beta if hessian == "exact" else 2.0 * beta - 1.0
        return alpha * np.eye(self.HtH.shape[0]) + graph_weight * self.HtH + (1.0 - beta) * self.EtE

    def B_score(self, beta: float) -> np.ndarray:
        return beta * self.HtY

    def B_rank(self, gamma: float) -> np.ndarray:
        return gamma * self.HtA


def drift_action(fired: bool, strategy: str, first: bool) -> str:
    """The :data:`ACTIONS` entry of a chunk: ``init`` first, then what ``strategy`` does with a firing."""
    if first:
        return "init"
    if not fired:
        return "none"
    return {"none": "detected", "retrain": "retrain", "adjust": "adjust"}[strategy]


def accumulate(total: SufficientStatistics | None, chunk: SufficientStatistics, action: str) -> SufficientStatistics:
    """The sums after learning ``chunk`` with ``action`` (:func:`drift_action`); ``total`` is not changed."""
    if action not in ACTIONS:
        raise ValueError(f"action must be one of {ACTIONS}, got {action!r}")
    if total is None or action in ("init", "retrain"):
        return chunk
    if action == "adjust":
        return total.without_ranking() + chunk
    return total + chunk


def _check_saved(s: dict) -> str | None:
    L, q = s["HtY"].shape
    return first_error(shape_error("HtH", s["HtH"], (L, L)), shape_error("EtE", s["EtE"], (L, L)),
                       shape_error("HtA", s["HtA"], (L, q)))


#: What a checkpoint keeps (:mod:`ncld_core.saved_state`): the four sums; H'H and E'E are sums of squares (their
#: diagonals >= 0).
SufficientStatistics.saved_state = SavedState(
    params={**{k: array(2, diagonal=NONNEGATIVE) for k in ("HtH", "EtE")}, "HtY": array(2), "HtA": array(2)},
    check=_check_saved)
