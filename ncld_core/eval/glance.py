"""A run at one glance: what the label noise costs and how much of it the correction wins back, where the drift
was found against where it happened, and whether the cardinality band held the truth: numbers only, each read
from the run's records (:class:`~ncld_core.eval.runner.ChunkResult`), for the chunks received so far.

The noise cost needs two models beside the learner (:data:`GLANCE_MODELS`): the clean-label oracle (ELM-O
trained on the ground truth, which the learner never has) and its twin that ignores the noise (ELM-O told rates
0 on the noisy labels). Its cost is ``oracle - ignoring`` in cumulative micro-F1, and the learner wins back
``(learner - ignoring) / cost`` of it (the share of ``docs/noise-gap.md``). They come from the run's records when
the run selected them, else from :attr:`ChunkResult.beside` (computed beside the run,
``PrequentialRunner(beside=...)``, never drawn as the run's own).

>>> from ncld_core.eval.runner import ChunkResult
>>> from ncld_core.model.record import HISTORY_COLUMNS, ModelChunkRecord
>>> def rec(fired, low, high):
...     return ModelChunkRecord.from_dict({**dict.fromkeys(HISTORY_COLUMNS, 0.0), "detector": "paper", "action": "none",
...                                        "fired": fired, "lcard_low": low, "lcard_high": high})
>>> chunks = [ChunkResult(0, 0, 10, 1.0, 1.2, False, diagnostics={"ELM-O": rec(False, 0.8, 1.2)}),
...           ChunkResult(1, 10, 20, 1.5, 1.6, True, cumulative={"ELM-O": {"micro_f1": 0.6}},
...                       diagnostics={"ELM-O": rec(True, 0.9, 1.1)},
...                       beside={ORACLE: {"micro_f1": 0.7}, IGNORING: {"micro_f1": 0.5}})]
>>> g = glance(chunks, learner="ELM-O", change_positions=[12], chunk_size=10)
>>> round(g.cost, 3), round(g.won_back, 3), g.happened, g.found, g.detected, g.band_inside, g.band_chunks
(0.2, 0.5, (1,), (1,), 1, 1, 2)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .cardinality_eval import interval_report
from .drift_eval import change_chunks, detection_report
from .variants import IGNORING_VARIANT, ORACLES

__all__ = ["ORACLE", "IGNORING", "GLANCE_MODELS", "GLANCE_METRIC", "Glance", "glance", "score_of"]

#: The clean-label oracle the noise cost is measured from.
ORACLE = next(iter(ORACLES))
#: The twin of ELM-O that ignores the noise: the noise cost's low end.
IGNORING = IGNORING_VARIANT
#: The models a glance needs beside the learner, in the order a summary names them.
GLANCE_MODELS = (ORACLE, IGNORING)
#: The metric the noise cost is measured in (cumulative, over the chunks scored so far).
GLANCE_METRIC = "micro_f1"


@dataclass(frozen=True)
class Glance:
    """A run's summary after its newest chunk (``chunks``: chunks received, ``scored``: those scored; chunk 0
    only initialises).

    Noise: ``oracle``, ``ignoring`` and ``learner_score`` (``learner``'s), cumulative :data:`GLANCE_METRIC`, None
    where that model has no record; ``cost = oracle - ignoring``; ``won_back = (learner_score - ignoring) /
    cost``, None unless the noise cost something (``cost > 0``).

    Drift: ``planted`` (the chunks of every true change of the stream), ``happened`` (those among the chunks
    received), ``found`` (the chunks where ``learner``'s acting detector fired), and of
    :func:`~ncld_core.eval.drift_eval.detection_report` over the chunks received: ``detected``, ``missed``,
    ``false_alarms``, ``delays`` (chunks from each detected change to its firing).

    Band: ``band_inside`` of ``band_chunks`` chunks where ``learner``'s cardinality band held the true
    cardinality; ``band_kind`` what its newest band is: ``"interval"`` (a 95 % interval: rates given, or a trusted
    sample) or ``"identified set"`` (rates estimated from the noisy labels alone: the set their bounds allow).
    """

    chunks: int
    scored: int
    learner: str | None
    oracle: float | None = None
    ignoring: float | None = None
    learner_score: float | None = None
    planted: tuple[int, ...] = ()
    happened: tuple[int, ...] = ()
    found: tuple[int, ...] = ()
    detected: int = 0
    missed: int = 0
    false_alarms: int = 0
    delays: tuple[int, ...] = ()
    band_inside: int = 0
    band_chunks: int = 0
    band_kind: str = "interval"

    @property
    def cost(self) -> float | None:
        """``oracle - ignoring``, None when either is missing."""
        if self.oracle is None or self.ignoring is None:
            return None
        return self.oracle - self.ignoring

    @property
    def won_back(self) -> float | None:
        """The share of :attr:`cost` the learner wins back; None when the noise cost nothing (or a score is
        missing)."""
        cost = self.cost
        if cost is None or self.learner_score is None or not cost > 0:
            return None
        return (self.learner_score - self.ignoring) / cost


def score_of(chunk, model: str, metric: str = GLANCE_METRIC) -> float | None:
    """``model``'s cumulative ``metric`` after ``chunk``: from the run's records, else from the models computed
    beside it; None when neither has it (or it is not a finite number)."""
    for part in (chunk.cumulative, getattr(chunk, "beside", None) or {}):
        value = (part.get(model) or {}).get(metric)
        if value is not None and math.isfinite(float(value)):
            return float(value)
    return None


def glance(chunks, *, learner: str | None, change_positions=(), chunk_size: int) -> Glance:
    """The :class:`Glance` of a run's ``chunks`` so far (:class:`~ncld_core.eval.runner.ChunkResult`, in order):
    ``learner`` the model it speaks for (None: none acts; then only the noise cost and the true changes),
    ``change_positions`` the instances of the stream's true changes, ``chunk_size`` the run's."""
    chunks = list(chunks)
    planted = tuple(sorted(set(change_chunks(change_positions, chunk_size))))
    n = len(chunks)
    if not n:
        return Glance(chunks=0, scored=0, learner=learner, planted=planted)
    last = chunks[-1]
    scored = sum(1 for c in chunks if c.metrics)
    oracle, ignoring = (score_of(last, m) for m in GLANCE_MODELS)
    learner_score = None if learner is None else score_of(last, learner)
    records = [] if learner is None else [(c, c.diagnostics[learner]) for c in chunks if learner in c.diagnostics]
    found = tuple(c.chunk for c, r in records if r.fired)
    newest = last.chunk + 1  # chunks reached: a change beyond them cannot be found or missed yet
    report = detection_report(found, planted, newest)
    band = interval_report([c.true_cardinality for c, _ in records], [r.lcard_low for _, r in records],
                           [r.lcard_high for _, r in records])
    return Glance(
        chunks=n, scored=scored, learner=learner, oracle=oracle, ignoring=ignoring, learner_score=learner_score,
        planted=planted, happened=tuple(c for c in planted if c < newest), found=found,
        detected=report["detected"] if records else 0, missed=report["missed"] if records else 0,
        false_alarms=report["false_alarms"], delays=tuple(report["delays"]),
        band_inside=band["inside"], band_chunks=band["n"],
        band_kind="identified set" if records and not records[-1][1].lcard_identified else "interval")
