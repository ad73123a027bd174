"""What one ELM-NCLD model recorded about one chunk it learnt: a typed, frozen record.

:class:`ModelChunkRecord` is made by :meth:`ELMNCLD.partial_fit <ncld_core.model.elm_ncld.ELMNCLD.partial_fit>`
(``model.last_record_``), carried per model in the runner's
:class:`~ncld_core.eval.runner.ChunkResult` and read by attribute by the dashboard, the benchmarks
and the command line. Its scalar fields are the columns of ``ELMNCLD.history_``
(:data:`HISTORY_COLUMNS`, derived from the fields). The model keeps its history as these records
(``history_`` is their rows, made when read). :meth:`ModelChunkRecord.row` is the flat form (a
history row, the ``diag_*`` columns of the CSV); :meth:`ModelChunkRecord.to_dict` the nested plain
form (checkpoints); :meth:`ModelChunkRecord.from_dict` reads either back.

>>> r = ModelChunkRecord.from_dict({**dict.fromkeys(HISTORY_COLUMNS, 0.0), "detector": "paper", "action": "init",
...                                 "fired": False, "welch_statistic": 1.0, "welch_threshold": 2.0, "welch_fired": False})
>>> r.monitors["welch"].threshold, r.acting.fired
(2.0, False)
>>> ModelChunkRecord.from_dict(r.to_dict()) == r == ModelChunkRecord.from_dict(r.row())
True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["ModelChunkRecord", "MonitorResult", "HISTORY_COLUMNS"]


@dataclass(frozen=True)
class MonitorResult:
    """One drift detector's verdict on the chunk: fired when ``statistic > threshold``."""

    statistic: float
    threshold: float
    fired: bool


_MONITOR_FIELDS = tuple(f.name for f in dataclasses.fields(MonitorResult))


@dataclass(frozen=True)
class ModelChunkRecord:
    """One model's record of one chunk it learnt."""

    chunk: int  # 0 for the initialisation chunk D_0
    n_instances: int
    observed_cardinality: float  # mean number of observed (noisy) positives per instance
    lcard_hat: float  # moment estimate of the true cardinality: unbiased with the right rates (model.cardinality)
    lcard_se: float  # its standard error
    lcard_low: float  # 95 % interval (rates given, or a trusted sample) or identified set +- sampling error
    lcard_high: float
    lcard_paper: float  # the paper's Eq. (card): clipped weights, in-sample P_D; biased upwards
    detector: str  # name of the acting detector (ncld_core.model.detector)
    statistic: float  # its statistic: -log10(adjusted p), or |Delta LCard_paper| for "paper"
    threshold: float  # fired when statistic > threshold: -log10(delta), or eps_i (Eq. Hfd)
    fired: bool
    action: str  # init | none | detected | retrain | adjust
    mean_weight: float  # mean importance weight w_tj over the chunk
    k_condition: float  # condition number of K after the update
    alpha: float  # the ridge of K after the update (chosen online with alpha="auto": ncld_core.model.capacity;
    #               loss="forward": the mean of the labels' ridges, ncld_core.model.ridge)
    rho_pos_mean: float  # mean over labels of the rho_+ used (given or estimated)
    rho_neg_mean: float  # mean over labels of the rho_- used
    seconds: float
    # what the data pin down (history columns; runs saved before them read the defaults):
    rates_identified: float = 1.0  # share of labels whose two rates are identified (1 when the rates are given)
    lcard_identified: bool = True  # False: the lcard interval is the identified set of rate bounds, wide
    n_trusted: int = 0  # trusted rows (clean labels revealed) seen so far, used by the rates and the cardinality
    # per label (not history columns): clean prevalence estimates, and the rates estimated (None when given)
    prevalence_hat: tuple | None = None
    rho_pos_est: tuple | None = None
    rho_neg_est: tuple | None = None
    # per label, with estimated rates: the interval each rate is known to lie in (ncld_core.model.flip_rates)
    rho_pos_low: tuple | None = None
    rho_pos_high: tuple | None = None
    rho_neg_low: tuple | None = None
    rho_neg_high: tuple | None = None
    #: the compared detectors (``monitors``), by name, in the order they were asked for
    monitors: Mapping[str, MonitorResult] = field(default_factory=dict)

    @property
    def acting(self) -> MonitorResult:
        """The acting detector's verdict (:attr:`detector`)."""
        return MonitorResult(self.statistic, self.threshold, self.fired)

    @property
    def estimates_rates(self) -> bool:
        """Whether the model estimated its flip rates on this chunk."""
        return self.rho_pos_est is not None

    def row(self) -> dict:
        """The flat form: :data:`HISTORY_COLUMNS`, then ``<monitor>_statistic/_threshold/_fired``."""
        out = {name: getattr(self, name) for name in HISTORY_COLUMNS}
        for name, result in self.monitors.items():
            out.update({f"{name}_{f}": getattr(result, f) for f in _MONITOR_FIELDS})
        return out

    def to_dict(self) -> dict:
        """The nested plain form (:func:`dataclasses.asdict`): every field, the per-label ones as tuples
        of floats (or None), ``monitors`` as ``{name: {"statistic", "threshold", "fired"}}``."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping) -> "ModelChunkRecord":
        """A record from :meth:`to_dict` or from :meth:`row` (plus the per-label fields; runs saved
        before the record was typed hold the flat form)."""
        data = dict(data)
        kw = {name: data.pop(name, _LATER[name]) if name in _LATER else data.pop(name)  # runs saved before them
              for name in HISTORY_COLUMNS}
        for name in _PER_LABEL:
            value = data.pop(name, None)
            kw[name] = None if value is None else tuple(float(v) for v in value)
        monitors = data.pop("monitors", None)
        if monitors is None:  # the flat form: <name>_statistic, <name>_threshold, <name>_fired
            tail = "_" + _MONITOR_FIELDS[0]
            names = [k[: -len(tail)] for k in data if k.endswith(tail)]
            monitors = {n: {f: data.pop(f"{n}_{f}") for f in _MONITOR_FIELDS} for n in names}
        if data:
            raise ValueError(f"a chunk record has unknown field(s): {', '.join(sorted(data))}")
        kw["monitors"] = {n: m if isinstance(m, MonitorResult) else MonitorResult(**m) for n, m in monitors.items()}
        return cls(**kw)


_PER_LABEL = ("prevalence_hat", "rho_pos_est", "rho_neg_est", "rho_pos_low", "rho_pos_high", "rho_neg_low",
              "rho_neg_high")
#: Fields added after runs were saved: what a record read from such a run holds.
_LATER = {"alpha": float("nan"), "rates_identified": float("nan"), "lcard_identified": True, "n_trusted": 0}
#: Columns of ``ELMNCLD.history_``, one row per chunk learnt: the record's scalar fields (then
#: the monitors' columns).
HISTORY_COLUMNS = tuple(f.name for f in dataclasses.fields(ModelChunkRecord) if f.name not in (*_PER_LABEL, "monitors"))
