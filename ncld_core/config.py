"""One run's configuration: dataset, noise, drift schedule, models and their parameters.

:class:`RunConfig` is what the command line reads from flags or TOML, what the
dashboard's controls edit and put in the URL, and what a report records.
:meth:`RunConfig.errors` checks every field and returns ``{field: message}`` so
each message can be shown next to its control; :meth:`RunConfig.build_stream`
and :meth:`RunConfig.runner` turn it into a stream and a runner.

>>> cfg = RunConfig(schedule="growth@2500", beta=0.3)
>>> cfg.errors()
{}
>>> RunConfig.from_query_params(cfg.to_query_params()) == cfg
True
>>> RunConfig(rho_low=0.6, rho_high=0.7, chunk_size=1).errors()
{'chunk_size': 'chunk size must be at least 2', 'rho_high': 'rho_pos + rho_neg can reach 1.4: keep rho_high below 0.5'}
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field

import numpy as np

from .model import ELMNCLD
from .runner import RATE_MODES, PrequentialRunner
from .variants import ELM_VARIANTS, ORACLES

__all__ = ["RunConfig", "MODEL_PARAMS", "PRESETS"]

#: Error keys of the fields that define the stream (checked by :meth:`RunConfig.build_stream`).
STREAM_ERRORS = frozenset({"dataset", "n_instances", "shuffle_seed", "n_features", "n_labels", "cardinality",
                           "label_correlation", "noise", "rho_low", "rho_high", "rates", "schedule"})

#: ELMNCLD parameters a run configuration carries.
MODEL_PARAMS = ("beta", "gamma", "delta", "alpha", "n_hidden", "n_neighbors", "detector", "monitors")
#: Length of the synthetic stream when ``n_instances`` is not given.
SYNTHETIC_DEFAULT_LENGTH = 5000

_DEFAULTS = ELMNCLD()


@dataclass(eq=True)
class RunConfig:
    """Everything that defines a run; plain values only, so it serialises to TOML, JSON and URLs."""

    dataset: str = "synthetic"
    n_instances: int | None = None  # None: the whole dataset (synthetic: SYNTHETIC_DEFAULT_LENGTH)
    chunk_size: int = 250
    shuffle_seed: int = 0
    # synthetic generator
    n_features: int = 20
    n_labels: int = 10
    cardinality: float = 2.0
    label_correlation: float = 0.5
    # noise: "none", "range" (drawn per label from [rho_low, rho_high]) or "table"
    noise: str = "range"
    rho_low: float = 0.2
    rho_high: float = 0.4
    rho_pos: list = field(default_factory=list)
    rho_neg: list = field(default_factory=list)
    # drift schedule, e.g. "growth@2500, reduction@4000"; "" for none; "growth" = paper's single switch
    schedule: str = ""
    # what the ELM-NCLD variants are told about the noise: "known" (the stream's true rates,
    # the paper's setting), "estimate" (nothing: estimated online) or "ignore" (rates 0)
    model_rates: str = "known"
    # models
    models: list = field(default_factory=lambda: ["ELM-O", "ELM-I", "ELM-II"])
    references: bool = True
    beta: float = _DEFAULTS.beta
    gamma: float = _DEFAULTS.gamma
    delta: float = _DEFAULTS.delta
    # the drift test the variants act on, and others recorded beside it (ncld_core.detector.DETECTORS)
    detector: str = _DEFAULTS.detector
    monitors: list = field(default_factory=list)
    alpha: float = _DEFAULTS.alpha
    n_hidden: int = _DEFAULTS.n_hidden
    n_neighbors: int = _DEFAULTS.n_neighbors
    seed: int = 0

    # ------------------------------------------------------------ validation
    def errors(self, n_available: int | None = None, n_labels_available: int | None = None,
               Y_true=None) -> dict:
        """``{field: message}`` for every invalid field (empty when the run can start).

        ``n_available`` / ``n_labels_available``: the chosen dataset's size and label
        count when known, to check the stream length, schedule and rate table.
        ``Y_true``: the chosen (real) dataset's labels, to check that its single- and
        multi-label pools hold what the drift schedule asks for.
        """
        err = {}

        def need(cond, key, msg):
            if not cond and key not in err:
                err[key] = msg

        def number(key, low, high, *, integer=False, low_open=False, high_open=False):
            v = getattr(self, key)
            kind = int if integer else (int, float)
            if isinstance(v, bool) or not isinstance(v, kind) or (isinstance(v, float) and not math.isfinite(v)):
                err[key] = f"{key} must be {'an integer' if integer else 'a number'}"
                return False
            ok_low = v > low if low_open else v >= low
            ok_high = v < high if high_open else v <= high
            if not (ok_low and ok_high):
                lo, hi = ("(" if low_open else "["), (")" if high_open else "]")
                err[key] = f"{key} must be in {lo}{low}, {high}{hi}"
                return False
            return True

        if number("chunk_size", -math.inf, math.inf, integer=True):
            need(self.chunk_size >= 2, "chunk_size", "chunk size must be at least 2")
        if self.n_instances is not None and number("n_instances", 2, math.inf, integer=True):
            if n_available is not None:
                need(self.n_instances <= n_available, "n_instances",
                     f"the dataset has only {n_available} instances")
        number("shuffle_seed", 0, 2**32 - 1, integer=True)
        number("seed", 0, 2**32 - 1, integer=True)
        if self.dataset == "synthetic":
            number("n_features", 1, 100_000, integer=True)
            if number("n_labels", 1, 1000, integer=True):
                number("cardinality", 0, self.n_labels, low_open=True, high_open=True)
            number("label_correlation", 0, 1)
        if self.noise not in ("none", "range", "table"):
            err["noise"] = "noise must be 'none', 'range' or 'table'"
        elif self.noise == "range":
            if number("rho_low", 0, 1, high_open=True) and number("rho_high", 0, 1, high_open=True):
                need(self.rho_low <= self.rho_high, "rho_high", "rho_high must be at least rho_low")
                need(2 * self.rho_high < 1, "rho_high",
                     f"rho_pos + rho_neg can reach {2 * self.rho_high:g}: keep rho_high below 0.5")
        elif self.noise == "table":
            msg = _table_error(self.rho_pos, self.rho_neg, n_labels_available or
                               (self.n_labels if self.dataset == "synthetic" else None))
            if msg:
                err["rates"] = msg
        if self.dataset == "synthetic" and self.schedule.strip() and "n_labels" not in err and self.n_labels <= 3:
            err["schedule"] = "a drift schedule on the synthetic stream needs more than 3 labels (its multi-label regime has cardinality 3)"
        length = self.n_instances or (n_available if self.dataset != "synthetic" else SYNTHETIC_DEFAULT_LENGTH)
        if length is not None and "chunk_size" not in err and "n_instances" not in err and length < 2 * self.chunk_size:
            err["chunk_size"] = f"the stream ({length} instances) must hold at least two chunks: the first only initialises"
        if self.schedule.strip() and "schedule" not in err:
            from .schedule import DriftSchedule

            try:
                sched = DriftSchedule.parse(self.schedule)
                length = self.n_instances or (n_available if self.dataset != "synthetic" else SYNTHETIC_DEFAULT_LENGTH)
                if length is not None and not sched.is_paper:
                    sched.validate(length)
            except ValueError as exc:
                err["schedule"] = str(exc)
        if (Y_true is not None and self.dataset != "synthetic" and self.schedule.strip()
                and not {"schedule", "n_instances", "chunk_size"} & set(err)):
            from .schedule import reorder_for_schedule

            try:  # the pools only: the order drawn here is thrown away
                reorder_for_schedule(Y_true, self.schedule.strip(), self.n_instances, random_state=0)
            except ValueError as exc:
                err["schedule"] = str(exc)
        if self.model_rates not in RATE_MODES:
            err["model_rates"] = f"model_rates must be one of {', '.join(RATE_MODES)}"
        if not self.models and not self.references:
            err["models"] = "choose at least one model"
        from .baselines import BASELINES

        unknown = [m for m in self.models if m not in ELM_VARIANTS and m not in ORACLES and m not in BASELINES]
        if unknown:
            err["models"] = f"unknown model(s): {', '.join(unknown)}"
        number("beta", 0, 1)
        number("gamma", 0, math.inf, high_open=True)
        number("delta", 0, 1, low_open=True, high_open=True)
        if isinstance(self.alpha, (str, list, tuple)):  # chosen online (ncld_core.capacity): "auto" or a grid
            from .capacity import alpha_grid

            try:
                alpha_grid(self.alpha)
            except ValueError as exc:
                err["alpha"] = str(exc)
        else:
            number("alpha", 0, math.inf, low_open=True, high_open=True)
        from .detector import DETECTORS

        if self.detector not in DETECTORS:
            err["detector"] = f"detector must be one of {', '.join(DETECTORS)}"
        if not isinstance(self.monitors, list) or any(m not in DETECTORS for m in self.monitors):
            err["monitors"] = f"monitors must be a list of detector names from {', '.join(DETECTORS)}"
        number("n_hidden", 1, 10_000, integer=True)
        if number("n_neighbors", 1, 10_000, integer=True) and "chunk_size" not in err:
            need(self.n_neighbors + 1 <= self.chunk_size, "n_neighbors",
                 f"n_neighbors must be below the chunk size ({self.chunk_size})")
        return err

    def check(self, *, stream_only: bool = False, **kwargs) -> "RunConfig":
        """Raise a ValueError listing every invalid field (``stream_only``: those that define the stream)."""
        err = self.errors(**kwargs)
        if stream_only:
            err = {k: v for k, v in err.items() if k in STREAM_ERRORS}
        if err:
            raise ValueError("; ".join(f"{k}: {v}" for k, v in err.items()))
        return self

    # ------------------------------------------------------------ build
    def model_params(self) -> dict:
        params = {k: getattr(self, k) for k in MODEL_PARAMS} | {"random_state": self.seed}
        params["monitors"] = tuple(params["monitors"])
        return params

    def flip_rates_spec(self):
        if self.noise == "none":
            return None
        if self.noise == "range":
            return (self.rho_low, self.rho_high)
        return {"rho_pos": list(self.rho_pos), "rho_neg": list(self.rho_neg)}

    def build_stream(self, dataset=None):
        """The stream this configuration describes.

        ``dataset``: a loaded :class:`~ncld_core.datasets.Dataset` (e.g. an upload);
        by default the registry dataset named by ``self.dataset`` is loaded.
        """
        self.check(stream_only=True)
        if self.dataset == "synthetic" and dataset is None:
            from .synthetic import make_synthetic_stream

            return make_synthetic_stream(
                n_instances=self.n_instances or SYNTHETIC_DEFAULT_LENGTH,
                n_features=self.n_features,
                n_labels=self.n_labels,
                cardinality=self.cardinality,
                label_correlation=self.label_correlation,
                schedule=self.schedule.strip() or None,
                flip_rates=self.flip_rates_spec(),
                random_state=self.shuffle_seed,
            )
        if dataset is None:
            from .datasets import load_dataset

            dataset = load_dataset(self.dataset)
        self.check(stream_only=True, n_available=dataset.n_instances, n_labels_available=dataset.n_labels)
        from .builder import build_stream

        return build_stream(
            dataset.X,
            dataset.Y,
            name=dataset.name,
            label_names=dataset.label_names,
            flip_rates=self.flip_rates_spec(),
            schedule=self.schedule.strip() or None,
            n_instances=self.n_instances,
            random_state=self.shuffle_seed,
        )

    def runner(self) -> PrequentialRunner:
        return PrequentialRunner(
            list(self.models), self.chunk_size, model_params=self.model_params(), references=self.references,
            flip_rates=self.model_rates,
        )

    # ------------------------------------------------------------ serialisation
    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "RunConfig":
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"unknown configuration key(s): {', '.join(unknown)}")
        return cls(**data)

    def to_query_params(self) -> dict:
        """Only fields that differ from the defaults, as strings (for ``st.query_params``)."""
        default = type(self)()
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value != getattr(default, f.name):
                out[f.name] = json.dumps(value) if isinstance(value, (list, bool)) or value is None else str(value)
        return out

    @classmethod
    def from_query_params(cls, params) -> "RunConfig":
        """Inverse of :meth:`to_query_params`; unknown keys are ignored, bad values raise ValueError."""
        default = cls()
        kw = {}
        for f in dataclasses.fields(cls):
            if f.name not in params:
                continue
            raw = params[f.name]
            current = getattr(default, f.name)
            try:
                if isinstance(current, (list, bool)) or current is None or raw in ("null", "true", "false") or raw.startswith("["):
                    kw[f.name] = json.loads(raw)
                elif isinstance(current, int):
                    kw[f.name] = int(raw)
                elif isinstance(current, float):
                    kw[f.name] = float(raw)
                else:
                    kw[f.name] = str(raw)
            except (ValueError, TypeError, json.JSONDecodeError):
                raise ValueError(f"{f.name}: cannot read {raw!r} from the link") from None
        return cls(**kw)

    def to_toml(self) -> str:
        lines = []
        for key, value in self.to_dict().items():
            if value is None:
                continue
            lines.append(f"{key} = {_toml_value(value)}")
        return "\n".join(lines) + "\n"

    @classmethod
    def from_toml(cls, text: str) -> "RunConfig":
        import tomllib

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"configuration file is not valid TOML: {exc}") from None
        return cls.from_dict(data.get("run", data))


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} to TOML")


def _table_error(rho_pos, rho_neg, n_labels) -> str | None:
    try:
        pos = np.asarray(rho_pos, dtype=float)
        neg = np.asarray(rho_neg, dtype=float)
    except (TypeError, ValueError):
        return "flip rates must be numbers"
    if pos.shape != neg.shape or pos.ndim != 1:
        return "give one rho_pos and one rho_neg per label"
    if n_labels is not None and pos.size != n_labels:
        return f"the table has {pos.size} labels but the dataset has {n_labels}"
    bad = np.flatnonzero(~np.isfinite(pos) | ~np.isfinite(neg) | (pos < 0) | (neg < 0) | (pos >= 1) | (neg >= 1))
    if bad.size:
        return f"label {bad[0]}: rates must be in [0, 1)"
    bad = np.flatnonzero(pos + neg >= 1)
    if bad.size:
        j = bad[0]
        return f"label {j}: rho_pos + rho_neg = {pos[j] + neg[j]:g} must be < 1"
    return None


#: Ready-made configurations for demos (the dashboard's presets). What each one shows is
#: stated in dashboard/teaching.py::PRESET_NOTES and asserted by tests/test_presets.py.
#: The presets keep the paper's L = 20 hidden nodes (the model's default is 300 since docs/capacity.md):
#: their notes (dashboard/teaching.py::PRESET_NOTES, tests/test_presets.py) were measured there.
_PRESET_L = 20

PRESETS = {
    # beta, gamma: the sweep's best point on this stream (tests/test_presets.py), where the
    # correction has something to show; at the defaults ELM-O does not beat the plain ELM.
    "clean vs noisy": RunConfig(noise="range", rho_low=0.2, rho_high=0.4, beta=0.55, gamma=2**-5,
                                models=["ELM-O (clean labels)", "ELM-O", "ELM (plain)"], n_hidden=_PRESET_L),
    "concept growth": RunConfig(schedule="growth@2500", models=["ELM-O", "ELM-I", "ELM-II"], n_hidden=_PRESET_L),
    "concept reduction": RunConfig(schedule="reduction@2500", models=["ELM-O", "ELM-I", "ELM-II"],
                                   n_hidden=_PRESET_L),
    "why beta matters": RunConfig(beta=1.0, gamma=0.0, models=["ELM-O", "ELM (plain)"], n_hidden=_PRESET_L),
    "unknown noise: estimate the rates": RunConfig(model_rates="estimate", models=["ELM-O"], n_hidden=_PRESET_L),
}
