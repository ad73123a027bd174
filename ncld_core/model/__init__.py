"""The model: ELM-NCLD and its parts.

* :mod:`~ncld_core.model.elm` -- the random hidden layer (Eq. ELM);
* :mod:`~ncld_core.model.graph` -- the chunk's feature graph (Eq. Re);
* :mod:`~ncld_core.model.probability` -- the noisy-label probability ``P_D``;
* :mod:`~ncld_core.model.importance` -- importance weights and the ranking matrix (Eq. RL_New);
* :mod:`~ncld_core.model.flip_rates` -- online flip-rate estimation;
* :mod:`~ncld_core.model.cardinality` -- the noise-corrected cardinality (Eq. card);
* :mod:`~ncld_core.model.counted_rates` -- the cardinality at the flip rates a trusted sample counts;
* :mod:`~ncld_core.model.detector` -- drift detectors (Eq. Hfd and others);
* :mod:`~ncld_core.model.chunk_cache` -- per-chunk work shared between models;
* :mod:`~ncld_core.model.chunk_terms` -- :class:`ChunkTerms`, what one chunk contributes to the model;
* :mod:`~ncld_core.model.elm_ncld` -- :class:`ELMNCLD`, the sufficient statistics and their solve;
* :mod:`~ncld_core.model.record` -- :class:`ModelChunkRecord`, what the model records per chunk.
"""

from .elm_ncld import ELMNCLD
from .record import HISTORY_COLUMNS, ModelChunkRecord, MonitorResult

__all__ = ["ELMNCLD", "HISTORY_COLUMNS", "ModelChunkRecord", "MonitorResult"]
