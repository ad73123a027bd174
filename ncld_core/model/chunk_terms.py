"""What one chunk contributes to ELM-NCLD: its sufficient statistics and what was computed beside them.

:class:`~ncld_core.model.elm_ncld.ELMNCLD` computes a :class:`ChunkTerms` once per chunk (hidden layer,
graph, ``P_D``, importance weights, cardinality) before it changes anything; ``partial_fit`` and ``fit``
then read it by field: the sums take :attr:`ChunkTerms.sufficient` (:mod:`ncld_core.model.statistics`),
the detectors :attr:`~ChunkTerms.signal`, the ridge selection ``H`` and the labels, the decision state
the cardinality, the chunk's record (:mod:`ncld_core.model.record`) the diagnostics.

>>> import numpy as np
>>> from ncld_core.model.cardinality import moment_cardinality
>>> from ncld_core.model.detector import ChunkSignal
>>> from ncld_core.model.statistics import SufficientStatistics
>>> H, Y01 = np.ones((3, 2)), np.array([[1], [0], [1]])
>>> Y = 2.0 * Y01 - 1.0
>>> card = moment_cardinality(Y01, [0.0], [0.0])
>>> terms = ChunkTerms(SufficientStatistics(H.T @ H, np.zeros((2, 2)), H.T @ Y, np.zeros((2, 1))), H, Y01,
...                    rho_pos=np.zeros(1), rho_neg=np.zeros(1), estimator=None, cardinality=card,
...                    signal=ChunkSignal(card.per_instance, Y01[:, 0] * 1.0, Y01.sum(axis=0)),
...                    observed_cardinality=2 / 3, mean_weight=1.0)
>>> terms.n_instances, terms.sufficient.HtY.ravel().tolist(), round(terms.cardinality.estimate, 3)
(3, [1.0, 1.0], 0.667)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .cardinality import CardinalityEstimate
from .detector import ChunkSignal
from .flip_rates import FlipRateEstimator
from .statistics import SufficientStatistics

__all__ = ["ChunkTerms"]


@dataclass(frozen=True, eq=False)
class ChunkTerms:
    """One chunk's contribution to the model (N instances, L hidden nodes, q labels).

    Attributes
    ----------
    sufficient : SufficientStatistics
        ``H^T H``, ``E^T E``, ``H^T Y``, ``H^T A`` of the chunk (NOTES §2): what it adds to the sums.
    H : ndarray (N, L)
        The hidden-layer output (Eq. ELM).
    Y01 : ndarray (N, q)
        The observed (noisy) labels in {0, 1}.
    rho_pos, rho_neg : ndarray (q,)
        The flip rates used for the chunk (Eq. NR): given, or estimated with this chunk.
    estimator : FlipRateEstimator or None
        The rate estimator after this chunk (a new object: the model's is unchanged until it commits);
        None when the rates are given.
    cardinality : CardinalityEstimate
        The chunk's noise-corrected cardinality and prevalences (moment form of Eq. card).
    signal : ChunkSignal
        What the drift detectors read (Eq. Hfd and the others of :mod:`ncld_core.model.detector`).
    observed_cardinality : float
        Mean number of observed positives per instance.
    mean_weight : float
        Mean importance weight ``w_tj`` over the chunk (Eq. RL_New; 1 when no weighting is needed).
    """

    sufficient: SufficientStatistics
    H: np.ndarray
    Y01: np.ndarray
    rho_pos: np.ndarray
    rho_neg: np.ndarray
    estimator: FlipRateEstimator | None
    cardinality: CardinalityEstimate
    signal: ChunkSignal
    observed_cardinality: float
    mean_weight: float

    @property
    def n_instances(self) -> int:
        """``N``, the chunk's instances."""
        return self.H.shape[0]
