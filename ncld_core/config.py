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

import collections
import dataclasses
import json
import math
import numbers
from dataclasses import dataclass, field

from .validation import MAX_TEXT_BYTES, NestingError, Range, check_flip_rates, decode_text, parse_json, parse_toml, shown_value
from .stream.noise_families import NOISE_FAMILIES
from .eval.glance import GLANCE_MODELS
from .eval.runner import RATE_MODES, PrequentialRunner
from .eval.variants import ELM_VARIANTS, ORACLES
from .model.elm_ncld import ELMNCLD, PARAM_RANGES

__all__ = ["RunConfig", "BesidePlan", "errors_text", "StreamSpec", "ModelParams", "MODEL_PARAMS", "STREAM_FIELDS", "PRESETS", "MAX_INSTANCES",
           "SYNTHETIC_BUDGET_BYTES", "MAX_LINK_VALUE_CHARS"]

#: Length of the synthetic stream when ``n_instances`` is not given.
SYNTHETIC_DEFAULT_LENGTH = 5000
#: The longest stream a configuration may ask for (a dataset's own size bounds it further).
MAX_INSTANCES = 1_000_000
#: The memory the synthetic generator's arrays may take (``ncld_core.stream.synthetic.synthetic_bytes``):
#: its sizes (length, features, labels) are bounded together, not only one by one.
SYNTHETIC_BUDGET_BYTES = 512 * 1024**2

#: The longest value a link may give one parameter, in characters, refused before it is parsed. The longest a
#: real link carries is its pinned run (``baseline=``, every setting as JSON) with two flip-rate tables of 1,000
#: labels (the most a configuration has) at full precision: about 45,000 characters.
MAX_LINK_VALUE_CHARS = 64 * 1024

_DEFAULTS = ELMNCLD()

#: Allowed values of the stream's numeric fields (the model's own are ``PARAM_RANGES``).
_SEED = Range(0, 2**32 - 1, integer=True)
_STREAM_RANGES = {
    "n_instances": Range(2, MAX_INSTANCES, integer=True),
    "shuffle_seed": _SEED,
    "n_features": Range(1, 100_000, integer=True),
    "n_labels": Range(1, 1000, integer=True),
    "label_correlation": Range(0, 1),
    # a trusted sample: the share of each chunk whose clean labels are revealed (a small part: at most half)
    "trusted_fraction": Range(0, 0.5),
}
_RATE = Range(0, 1, high_open=True)


def _is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


#: What each non-numeric field must hold (the numeric ones are checked by their ``Range``): a check
#: and the message. A configuration read from a link or a TOML file can hold anything.
_KINDS = {
    "dataset": (lambda v: isinstance(v, str) and bool(v.strip()), "dataset must be a dataset name"),
    "schedule": (lambda v: isinstance(v, str), "schedule must be text such as 'growth@2500' (empty: none)"),
    "rho_pos": (lambda v: isinstance(v, list) and all(map(_is_number, v)), "rho_pos must be a list of numbers"),
    "rho_neg": (lambda v: isinstance(v, list) and all(map(_is_number, v)), "rho_neg must be a list of numbers"),
    "references": (lambda v: isinstance(v, bool), "references must be true or false"),
    "models": (lambda v: isinstance(v, list) and all(isinstance(m, str) for m in v),
               "models must be a list of model names"),
}


def _kind_errors(obj, names) -> dict:
    return {k: msg for k, (ok, msg) in _KINDS.items() if k in names and not ok(getattr(obj, k))}


def _cached(obj, name: str, make):
    """``make()`` computed once per (frozen) object, kept in its ``__dict__`` (not a field)."""
    try:
        return obj.__dict__[name]
    except KeyError:
        value = obj.__dict__[name] = make()
        return value


def errors_text(errors: dict) -> str:
    """One line of :meth:`RunConfig.errors`' messages, each led by its field unless it names it already.

    >>> errors_text({"seed": "seed must be in [0, 9], got -1", "rho_high": "at least rho_low"})
    'seed must be in [0, 9], got -1; rho_high: at least rho_low'
    """
    return "; ".join(v if str(v).startswith(str(k)) else f"{k}: {v}" for k, v in errors.items())


@dataclass(frozen=True)
class StreamSpec:
    """What defines a stream and how it is cut: dataset or synthetic settings, noise, drift schedule,
    chunk size and the stream's seed. Plain values only; frozen, so the parsed schedule is kept."""

    dataset: str = "synthetic"
    n_instances: int | None = None  # None: the whole dataset (synthetic: SYNTHETIC_DEFAULT_LENGTH)
    chunk_size: int = 250
    shuffle_seed: int = 0
    # synthetic generator
    n_features: int = 20
    n_labels: int = 10
    cardinality: float = 2.0
    label_correlation: float = 0.5
    # noise: "none", "range" (drawn per label from [rho_low, rho_high]), "table", or a noise family
    # of ncld_core.stream.noise_families.NOISE_FAMILIES ("missing", "mixed"; "paper" = range 0.2-0.4)
    noise: str = "range"
    rho_low: float = 0.2
    rho_high: float = 0.4
    rho_pos: list = field(default_factory=list)
    rho_neg: list = field(default_factory=list)
    # drift schedule, e.g. "growth@2500, reduction@4000"; "" for none; "growth" = paper's single switch
    schedule: str = ""
    # a trusted sample: each row's clean labels are revealed with this probability (0: none); the variants
    # that estimate the rates use them (ncld_core.model.flip_rates, ncld_core.model.cardinality)
    trusted_fraction: float = 0.0

    @property
    def drift_schedule(self):
        """The parsed :attr:`schedule` (a ``DriftSchedule``, None for none), parsed once per object;
        an unreadable schedule raises its ``ValueError`` each time it is asked for."""
        from .stream.schedule import as_schedule

        def parse():
            try:
                return as_schedule(self.schedule, optional=True), None
            except (ValueError, TypeError) as exc:
                return None, str(exc)

        parsed, error = _cached(self, "_parsed_schedule", parse)
        if error is not None:
            raise ValueError(error)
        return parsed

    def length(self, n_available: int | None = None) -> int | None:
        """Instances in the stream (None when the dataset's size is not known)."""
        return self.n_instances or (n_available if self.dataset != "synthetic" else SYNTHETIC_DEFAULT_LENGTH)

    def noise_bound(self) -> float | None:
        """The largest ``rho_pos + rho_neg`` a label of this stream can have: ``2 rho_high`` for a range, the noise
        family's ``max_sum``, the table's largest sum, 0 without noise; None when the rates are not readable. A noise
        change's factor ``f`` of the drift schedule must keep ``f`` times it below 1 (Eq. NR), for every seed.

        >>> StreamSpec(rho_high=0.4).noise_bound(), StreamSpec(noise="missing").noise_bound()
        (0.8, 0.35)
        """
        if self.noise == "none":
            return 0.0
        if self.noise == "range":
            return 2.0 * float(self.rho_high) if _is_number(self.rho_high) else None
        if self.noise in NOISE_FAMILIES:
            return float(NOISE_FAMILIES[self.noise].max_sum)
        try:
            pos, neg = check_flip_rates(self.rho_pos, self.rho_neg, source="flip-rate table")
        except ValueError:
            return None
        return float((pos + neg).max()) if pos.size else None

    def _noise_change_error(self, sched) -> str | None:
        """What is wrong with the schedule's noise changes for this stream's noise (None: nothing)."""
        if sched is None or not sched.noise_changes:
            return None
        first = sched.noise_changes[0]
        text = f"noise@{first.position}x{first.factor:g}"
        if self.noise == "none":
            return (f"a noise change ({text!r}) multiplies the stream's flip rates, and this stream has no noise: "
                    "choose a noise first")
        bound = self.noise_bound()
        if not bound:
            return None
        for change in sched.noise_changes:
            if change.factor * bound >= 1:
                return (f"noise change 'noise@{change.position}x{change.factor:g}' would give flip rates with "
                        f"rho_pos + rho_neg up to {change.factor * bound:.3g} (Eq. NR needs < 1): with this noise a "
                        f"factor must stay below {1 / bound:.4g}")
        return None

    def flip_rates_spec(self):
        if self.noise == "none":
            return None
        if self.noise == "range":
            return (self.rho_low, self.rho_high)
        if self.noise in NOISE_FAMILIES:
            return self.noise
        return {"rho_pos": list(self.rho_pos), "rho_neg": list(self.rho_neg)}

    def errors(self, n_available: int | None = None, n_labels_available: int | None = None,
               Y_true=None) -> dict:
        """``{field: message}`` for every invalid stream field (``"rates"`` for the rate table);
        arguments as in :meth:`RunConfig.errors`."""
        err = {}

        def need(cond, key, msg):
            if not cond and key not in err:
                err[key] = msg

        def check(key, allowed):
            msg = allowed.error(getattr(self, key), key)
            if msg:
                err[key] = msg
            return msg is None

        err.update(_kind_errors(self, STREAM_FIELDS))
        if check("chunk_size", Range(-math.inf, math.inf, integer=True)):
            need(self.chunk_size >= 2, "chunk_size", "chunk size must be at least 2")
        if self.n_instances is not None and check("n_instances", _STREAM_RANGES["n_instances"]):
            if n_available is not None:
                need(self.n_instances <= n_available, "n_instances",
                     f"the dataset has only {n_available} instances")
        check("shuffle_seed", _STREAM_RANGES["shuffle_seed"])
        check("trusted_fraction", _STREAM_RANGES["trusted_fraction"])
        if self.dataset == "synthetic":
            sizes_ok = check("n_features", _STREAM_RANGES["n_features"])
            if check("n_labels", _STREAM_RANGES["n_labels"]):
                check("cardinality", Range(0, self.n_labels, low_open=True, high_open=True))
            else:
                sizes_ok = False
            check("label_correlation", _STREAM_RANGES["label_correlation"])
            if sizes_ok and "n_instances" not in err:
                self._synthetic_budget(err)
        if self.noise not in ("none", "range", "table", *NOISE_FAMILIES):
            err["noise"] = f"noise must be 'none', 'range', 'table' or a noise family ({', '.join(NOISE_FAMILIES)})"
        elif self.noise == "range":
            if check("rho_low", _RATE) and check("rho_high", _RATE):
                need(self.rho_low <= self.rho_high, "rho_high", "rho_high must be at least rho_low")
                need(2 * self.rho_high < 1, "rho_high",
                     f"rho_pos + rho_neg can reach {2 * self.rho_high:g}: keep rho_high below 0.5")
        elif self.noise == "table":
            n_labels = n_labels_available or (self.n_labels if self.dataset == "synthetic" else None)
            try:
                check_flip_rates(self.rho_pos, self.rho_neg, n_labels, source="flip-rate table")
            except ValueError as exc:
                err["rates"] = str(exc)
                err.pop("rho_pos", None)  # the table's message names the label and the value: said once
                err.pop("rho_neg", None)
        has_schedule = "schedule" not in err and bool(self.schedule.strip())
        if self.dataset == "synthetic" and has_schedule and "n_labels" not in err and self.n_labels <= 3:
            err["schedule"] = "a drift schedule on the synthetic stream needs more than 3 labels (its multi-label regime has cardinality 3)"
        length = self.length(n_available)
        # a shorter last chunk counts (medical: 978 instances in chunks of 500 is 500 + 478)
        if length is not None and "chunk_size" not in err and "n_instances" not in err and length <= self.chunk_size:
            if length < 3:  # no chunk size of at least 2 leaves a second chunk: the length is what to change
                err["n_instances" if self.n_instances is not None else "chunk_size"] = (
                    f"the stream ({length} instances) must hold at least two chunks (the first only initialises) of "
                    "at least 2 instances: make it at least 3 instances long")
            else:
                err["chunk_size"] = (f"the stream ({length} instances) must hold at least two chunks (the first only "
                                     f"initialises): make the chunk size smaller than {length}")
        if "schedule" not in err:
            try:
                sched = self.drift_schedule
                if sched is not None and length is not None:
                    sched.validate(length)
            except ValueError as exc:
                err["schedule"] = str(exc)
            else:
                if not {"noise", "rho_low", "rho_high", "rates"} & set(err):
                    noise_error = self._noise_change_error(sched)
                    if noise_error:
                        err["schedule"] = noise_error
        if (Y_true is not None and self.dataset != "synthetic" and has_schedule
                and not {"schedule", "n_instances", "chunk_size"} & set(err)):
            from .stream.schedule import reorder_for_schedule

            try:  # the pools only: the order drawn here is thrown away
                reorder_for_schedule(Y_true, self.drift_schedule, self.n_instances, random_state=0)
            except ValueError as exc:
                err["schedule"] = str(exc)
        return err

    def _synthetic_budget(self, err: dict):
        """The generator's arrays past :data:`SYNTHETIC_BUDGET_BYTES`: said on the size that weighs most."""
        from .stream.synthetic import REFERENCE_SIZE, synthetic_bytes

        n = self.length()
        need = synthetic_bytes(n, self.n_features, self.n_labels)
        if need <= SYNTHETIC_BUDGET_BYTES:
            return
        if self.n_instances is not None and n > REFERENCE_SIZE:
            key = "n_instances"
        else:
            key = "n_features" if self.n_features >= 2 * self.n_labels else "n_labels"
        mib = 1024**2
        err[key] = (f"the synthetic stream needs about {need / mib:,.0f} MB of arrays ({n} instances x "
                    f"{self.n_features} features, {self.n_labels} labels), past the budget of "
                    f"{SYNTHETIC_BUDGET_BYTES / mib:,.0f} MB: lower the stream length, the features or the labels")

    def check(self, **kwargs) -> "StreamSpec":
        """Raise a ValueError listing every invalid stream field (arguments of :meth:`errors`)."""
        err = StreamSpec.errors(self, **kwargs)
        if err:
            raise ValueError(errors_text(err))
        return self

    def build_stream(self, dataset=None):
        """The stream this specification describes.

        ``dataset``: a loaded :class:`~ncld_core.data.Dataset` (e.g. an upload);
        by default the registry dataset named by ``self.dataset`` is loaded.
        """
        StreamSpec.check(self)
        if self.dataset == "synthetic" and dataset is None:
            from .stream.synthetic import make_synthetic_stream

            return make_synthetic_stream(
                n_instances=self.n_instances or SYNTHETIC_DEFAULT_LENGTH,
                n_features=self.n_features,
                n_labels=self.n_labels,
                cardinality=self.cardinality,
                label_correlation=self.label_correlation,
                schedule=self.drift_schedule,
                flip_rates=self.flip_rates_spec(),
                random_state=self.shuffle_seed,
                trusted_fraction=self.trusted_fraction,
            )
        from .data import check_features

        if dataset is None:  # a name listed in the data folders, never a path (ncld_core.data.resolve_dataset)
            from .data import load_dataset

            dataset = load_dataset(self.dataset, paths=False)
        # the dashboard's upload check, for every entry (command line, library): names feature and row
        check_features(dataset, f"dataset {dataset.name!r}")
        StreamSpec.check(self, n_available=dataset.n_instances, n_labels_available=dataset.n_labels)
        from .stream.builder import build_stream

        return build_stream(
            dataset.X,
            dataset.Y,
            name=dataset.name,
            label_names=dataset.label_names,
            flip_rates=self.flip_rates_spec(),
            schedule=self.drift_schedule,
            n_instances=self.n_instances,
            random_state=self.shuffle_seed,
            trusted_fraction=self.trusted_fraction,
        )


@dataclass(frozen=True)
class ModelParams:
    """The :class:`~ncld_core.model.elm_ncld.ELMNCLD` parameters a run sets (the model's defaults)."""

    beta: float = _DEFAULTS.beta
    gamma: float = _DEFAULTS.gamma
    delta: float = _DEFAULTS.delta
    # the drift test the variants act on, and others recorded beside it (ncld_core.model.detector.DETECTORS)
    detector: str = _DEFAULTS.detector
    monitors: list = field(default_factory=list)
    # how the variants turn scores into labels (ncld_core.model.decision.DECISIONS); "paper" = threshold 0
    decision: str = _DEFAULTS.decision
    alpha: float = _DEFAULTS.alpha
    n_hidden: int = _DEFAULTS.n_hidden
    n_neighbors: int = _DEFAULTS.n_neighbors


#: Fields of :class:`StreamSpec`: what defines the stream (the rest only defines the models).
STREAM_FIELDS = tuple(f.name for f in dataclasses.fields(StreamSpec))
#: ELMNCLD parameters a run configuration carries (fields of :class:`ModelParams`).
MODEL_PARAMS = tuple(f.name for f in dataclasses.fields(ModelParams))


@dataclass(frozen=True)
class BesidePlan:
    """The models a run computes beside its own for its summary (``models``, :meth:`RunConfig.beside_plan`), and
    those it does not, each with the reason (``missing``: name -> reason)."""

    models: tuple
    missing: dict


@dataclass(frozen=True)
class RunConfig(ModelParams, StreamSpec):
    """Everything that defines a run: the :class:`StreamSpec` fields, the :class:`ModelParams`
    fields and the run's own (below), each declared once; plain values only, so it serialises to
    TOML, JSON and URLs. :attr:`stream` and :attr:`model` give the two parts on their own."""

    # what the ELM-NCLD variants are told about the noise: "known" (the stream's true rates,
    # the paper's setting), "estimate" (nothing: estimated online) or "ignore" (rates 0)
    model_rates: str = "known"
    # models
    models: list = field(default_factory=lambda: ["ELM-O", "ELM-I", "ELM-II"])
    references: bool = True
    seed: int = 0  # the models' random_state

    @property
    def stream(self) -> StreamSpec:
        """The stream part (built once; it shares this configuration's parsed schedule)."""
        return _cached(self, "_stream", lambda: StreamSpec(**{k: getattr(self, k) for k in STREAM_FIELDS}))

    @property
    def drift_schedule(self):
        return self.stream.drift_schedule

    @property
    def model(self) -> ModelParams:
        """The model part."""
        return ModelParams(**{k: getattr(self, k) for k in MODEL_PARAMS})

    # ------------------------------------------------------------ validation
    def errors(self, n_available: int | None = None, n_labels_available: int | None = None,
               Y_true=None) -> dict:
        """``{field: message}`` for every invalid field (empty when the run can start).

        ``n_available`` / ``n_labels_available``: the chosen dataset's size and label
        count when known, to check the stream length, schedule and rate table.
        ``Y_true``: the chosen (real) dataset's labels, to check that its single- and
        multi-label pools hold what the drift schedule asks for.
        Range messages are the model's own (``PARAM_RANGES``).
        """
        err = self.stream.errors(n_available, n_labels_available, Y_true)
        err.update(_kind_errors(self, ("references", "models")))
        msg = _SEED.error(self.seed, "seed")
        if msg:
            err["seed"] = msg
        if self.model_rates not in RATE_MODES:
            err["model_rates"] = f"model_rates must be one of {', '.join(RATE_MODES)}"
        if "models" not in err:
            from .eval.baselines import BASELINES

            if not self.models:  # the trivial references alone are no run (PrequentialRunner refuses them)
                err["models"] = "choose at least one model"
            unknown = [m for m in self.models if m not in ELM_VARIANTS and m not in ORACLES and m not in BASELINES]
            if unknown:
                unknown = list(dict.fromkeys(unknown))  # each name once, the first few said (a list can be long)
                named = ", ".join(shown_value(m) if len(m) > 40 else m for m in unknown[:5])
                more = f" and {len(unknown) - 5:,} more" if len(unknown) > 5 else ""
                err["models"] = f"unknown model(s): {named}{more}"
        for name in MODEL_PARAMS:
            if name == "alpha" and isinstance(self.alpha, (str, list, tuple)):  # chosen online: "auto" or a grid
                from .model.capacity import alpha_grid

                try:
                    alpha_grid(self.alpha)
                except ValueError as exc:
                    err["alpha"] = str(exc)
                continue
            msg = PARAM_RANGES[name].error(getattr(self, name), name) if name in PARAM_RANGES else None
            if msg:
                err[name] = msg
        from .model.detector import DETECTORS

        if not isinstance(self.detector, str) or self.detector not in DETECTORS:
            err["detector"] = f"detector must be one of {', '.join(DETECTORS)}"
        from .model.decision import DECISIONS

        if not isinstance(self.decision, str) or self.decision not in DECISIONS:
            err["decision"] = f"decision must be one of {', '.join(DECISIONS)}"
        msg = self._monitors_error(DETECTORS)
        if msg:
            err["monitors"] = msg
        if "n_neighbors" not in err and "chunk_size" not in err and self.n_neighbors + 1 > self.chunk_size:
            err["n_neighbors"] = f"n_neighbors must be below the chunk size ({self.chunk_size})"
        self._too_short_for_k(err, n_available)
        return err

    def _too_short_for_k(self, err: dict, n_available: int | None):
        """A stream too short for two chunks of more than ``n_neighbors`` instances: no chunk size fixes it, so
        the message says to lengthen the stream or lower K instead of suggesting a chunk size K refuses."""
        length = self.length(n_available)
        k = self.n_neighbors
        if (not isinstance(length, int) or length < _STREAM_RANGES["n_instances"].low  # its range's message says it
                or "n_neighbors" in err or not isinstance(k, int) or isinstance(k, bool)
                or length >= k + 2 or not {"chunk_size", "n_instances"} & set(err)):
            return
        err.pop("chunk_size", None)
        err["n_instances" if self.n_instances is not None else "n_neighbors"] = (
            f"the stream ({length} instances) is too short for n_neighbors = {k}: two chunks (the first only "
            f"initialises), each of more than {k} instances but the last, need at least {k + 2} instances; make the "
            "stream longer or n_neighbors smaller")

    def _monitors_error(self, detectors) -> str | None:
        """What is wrong with :attr:`monitors`: not detector names, the acting detector, a name twice."""
        if not isinstance(self.monitors, list) or any(not isinstance(m, str) or m not in detectors
                                                      for m in self.monitors):
            return f"monitors must be a list of detector names from {', '.join(detectors)}"
        if self.detector in self.monitors:
            return f"monitors must not repeat the acting detector {self.detector!r} (it is recorded already)"
        twice = sorted(m for m, n in collections.Counter(self.monitors).items() if n > 1)  # (linear: a list can be long)
        if twice:
            return f"monitors must name each detector once ({', '.join(map(repr, twice))} more than once)"
        return None

    def check(self, *, stream_only: bool = False, **kwargs) -> "RunConfig":
        """Raise a ValueError listing every invalid field (``stream_only``: those that define the stream)."""
        err = self.stream.errors(**kwargs) if stream_only else self.errors(**kwargs)
        if err:
            raise ValueError(errors_text(err))
        return self

    # ------------------------------------------------------------ build
    def model_params(self) -> dict:
        params = dataclasses.asdict(self.model) | {"random_state": self.seed}
        params["monitors"] = tuple(params["monitors"])
        return params

    def build_stream(self, dataset=None):
        """The stream this configuration describes (:meth:`StreamSpec.build_stream`), once the whole run's
        memory is within the budget (:meth:`check_budget`, before the stream's arrays are made)."""
        if dataset is None and self.dataset != "synthetic":
            from .data import load_dataset

            dataset = load_dataset(self.dataset, paths=False)
        self.stream.check(**({} if dataset is None else
                             {"n_available": dataset.n_instances, "n_labels_available": dataset.n_labels}))
        self.check_budget(dataset=dataset)
        return self.stream.build_stream(dataset)

    # ------------------------------------------------------------ budget
    def run_cost(self, *, dataset=None, n_features: int | None = None, n_labels: int | None = None,
                 n_available: int | None = None, sweep_points: int = 0, features_bytes: int | None = None):
        """The whole run's memory (:class:`~ncld_core.model.cost.RunCost`): its stream, one chunk of every
        ELM-NCLD variant and a sweep of ``sweep_points`` points, from the sizes alone. The data's sizes come
        from ``dataset`` (a loaded :class:`~ncld_core.data.Dataset`), else from the arguments (``features_bytes``:
        what the stream's features take, when sparse), else (synthetic data) from this configuration; None when
        they are unknown."""
        from .model.cost import estimate_for, estimate_run

        if dataset is not None:
            n_features, n_labels, n_available = dataset.n_features, dataset.n_labels, dataset.n_instances
            X = dataset.X
            if hasattr(X, "indptr"):  # sparse: what the data takes, scaled to the stream's length
                stored = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
                length = self.n_instances or n_available
                features_bytes = int(stored * length / max(n_available, 1))
        elif self.dataset == "synthetic":
            n_features = self.n_features if n_features is None else n_features
            n_labels = self.n_labels if n_labels is None else n_labels
        length = self.stream.length(n_available)
        if n_features is None or n_labels is None or length is None:
            return None
        chunk = estimate_for(self, n_features=n_features, n_labels=n_labels, n_instances=length,
                             elm_names=[*ELM_VARIANTS, *ORACLES])
        return estimate_run(chunk, n_instances=length, n_features=n_features, n_labels=n_labels,
                            features_bytes=features_bytes, sweep_points=sweep_points, n_hidden=self.n_hidden)

    def budget_error(self, cost, budget_bytes: int | None = None):
        """``(field, message)`` when ``cost`` (:meth:`run_cost`) is past ``budget_bytes`` (default the
        server's ``run_memory_bytes``, :mod:`ncld_core.limits`), else None; the field is the setting to lower."""
        from .limits import LIMITS

        budget = LIMITS.run_memory_bytes if budget_bytes is None else budget_bytes
        if cost is None or cost.memory_bytes <= budget:
            return None
        largest = cost.largest
        if largest.startswith("stream: features") and self.dataset == "synthetic" and self.n_features > 100:
            field_, hint = "n_features", "fewer features (n_features) or a shorter stream (n_instances)"
        elif largest.startswith("stream"):
            field_, hint = "n_instances", "a shorter stream (n_instances)"
        elif largest.startswith("sweep"):
            field_, hint = "n_hidden", "fewer grid points or fewer hidden nodes (n_hidden)"
        elif "L" in cost.chunk.largest.split(":")[-1]:
            field_, hint = "n_hidden", "fewer hidden nodes (n_hidden)"
        else:
            field_, hint = "chunk_size", "smaller chunks (chunk_size)"
        def size(b):
            return f"{b / 1024**3:.1f} GB" if b >= 1024**3 else f"{b / 1024**2:.0f} MB"

        return field_, (f"the run needs an estimated {size(cost.memory_bytes)} of memory (largest part: "
                        f"{largest}, {size(cost.terms[largest])}), past the budget of {size(budget)}: use {hint}")

    def check_budget(self, *, budget_bytes: int | None = None, **kwargs):
        """The run's :meth:`run_cost` (arguments as there), or a ValueError naming the setting to lower when it
        is past the budget; nothing is allocated.

        >>> RunConfig(n_instances=1_000_000, n_features=20_000, n_labels=10).check_budget()
        Traceback (most recent call last):
        ...
        ValueError: n_features: the run needs an estimated 149.3 GB of memory (largest part: stream: features n x d, 149.0 GB), past the budget of 2.0 GB: use fewer features (n_features) or a shorter stream (n_instances)
        """
        cost = self.run_cost(**kwargs)
        refusal = self.budget_error(cost, budget_bytes)
        if refusal:
            raise ValueError(f"{refusal[0]}: {refusal[1]}")
        return cost

    def runner(self, *, beside=()) -> PrequentialRunner:
        """The run's runner; ``beside``: variant names computed beside its models (:meth:`beside_plan`), kept apart
        from its records (``PrequentialRunner(beside=...)``)."""
        return PrequentialRunner(
            list(self.models), self.chunk_size, model_params=self.model_params(), references=self.references,
            flip_rates=self.model_rates, beside=tuple(beside),
        )

    def beside_plan(self, stream, *, budget_bytes: int | None = None) -> "BesidePlan":
        """Which models a run of this configuration on ``stream`` (built from it) computes beside its own for its
        one-glance summary (:mod:`ncld_core.eval.glance`): the :data:`~ncld_core.eval.glance.GLANCE_MODELS` it does
        not select, unless the stream has no label noise (its noisy labels are its true ones: there is no cost to
        measure) or the whole run with them would be past the memory budget (``budget_bytes``, default
        ``run_memory_bytes`` of :mod:`ncld_core.limits`; :meth:`budget_error`). All or none: the noise cost needs
        both.

        >>> cfg = RunConfig(n_instances=200, chunk_size=50, n_neighbors=5, models=["ELM-O (clean labels)", "ELM-O"])
        >>> cfg.beside_plan(cfg.build_stream()).models
        ('ELM-O (noise ignored)',)
        >>> plan = cfg.beside_plan(cfg.build_stream(), budget_bytes=1)
        >>> plan.models, plan.missing
        ((), {'ELM-O (noise ignored)': 'past the memory budget'})
        """
        import numpy as np

        wanted = tuple(m for m in GLANCE_MODELS if m not in self.models)
        if not wanted:
            return BesidePlan((), {})
        if np.array_equal(stream.Y_true, stream.Y_noisy):
            return BesidePlan((), dict.fromkeys(wanted, "no label noise in this stream"))
        X = stream.X
        stored = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes if hasattr(X, "indptr") else None
        cost = dataclasses.replace(self, models=[*self.models, *wanted]).run_cost(
            n_features=stream.n_features, n_labels=stream.n_labels, n_available=stream.n_instances,
            features_bytes=stored)
        if self.budget_error(cost, budget_bytes) is not None:
            return BesidePlan((), dict.fromkeys(wanted, "past the memory budget"))
        return BesidePlan(wanted, {})

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
            if isinstance(raw, str) and len(raw) > MAX_LINK_VALUE_CHARS:  # refused before any parsing
                raise ValueError(f"{f.name}: the link's value has {len(raw):,} characters, past the bound of "
                                 f"{MAX_LINK_VALUE_CHARS:,}")
            try:
                if isinstance(current, (list, bool)) or current is None or raw in ("null", "true", "false") or raw.startswith("["):
                    kw[f.name] = parse_json(raw, f.name)
                elif isinstance(current, int):
                    kw[f.name] = int(raw)
                elif isinstance(current, float):
                    kw[f.name] = float(raw)
                else:
                    kw[f.name] = str(raw)
            except NestingError:
                raise
            except (ValueError, TypeError, AttributeError):
                raise ValueError(f"{f.name}: cannot read {shown_value(raw, 80)} from the link") from None
        return cls(**kw)

    def to_toml(self) -> str:
        lines = []
        for key, value in self.to_dict().items():
            if value is None:
                continue
            lines.append(f"{key} = {_toml_value(value)}")
        return "\n".join(lines) + "\n"

    @classmethod
    def from_toml(cls, text: str, source: str = "configuration file") -> "RunConfig":
        """The configuration a TOML text gives: its fields at the top level, or all of them in a ``[run]`` table.

        Every error is a ValueError naming ``source``: a text that does not parse or nests too deep
        (:func:`ncld_core.validation.parse_toml`), a ``run`` that is not a table, a key beside the ``[run]``
        table (it would be ignored), an unknown key.

        >>> RunConfig.from_toml("beta = 0.9\\n[run]\\nchunk_size = 300", "run.toml")
        Traceback (most recent call last):
        ...
        ValueError: run.toml: beta outside the [run] table: put it under [run] (or leave out the [run] header)
        """
        data = parse_toml(text, source)
        if "run" in data:
            run = data["run"]
            if not isinstance(run, dict):
                raise ValueError(f"{source}: 'run' must be a table ([run]) of configuration keys, got "
                                 f"{shown_value(run)}")
            outside = sorted(set(data) - {"run"})
            if outside:
                keys = ", ".join(outside)
                raise ValueError(f"{source}: {keys} outside the [run] table: put {'it' if len(outside) == 1 else 'them'} "
                                 "under [run] (or leave out the [run] header)")
            data = run
        try:
            return cls.from_dict(data)
        except ValueError as exc:
            raise ValueError(f"{source}: {exc}") from None

    @classmethod
    def read_toml(cls, path, param: str = "config") -> "RunConfig":
        """The configuration in the TOML file ``path`` (:meth:`from_toml`), read only if it is a regular file of at
        most :data:`ncld_core.validation.MAX_TEXT_BYTES`; UTF-8, a byte-order mark accepted. Every error is a ValueError naming
        ``param`` and the file."""
        from .data.paths import as_path, read_file

        path = as_path(path, param)
        source = f"{param} {path}"
        return cls.from_toml(decode_text(read_file(path, param, max_bytes=MAX_TEXT_BYTES), source), source)


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


#: Ready-made configurations for demos (the dashboard's presets). What each one shows is
#: stated in dashboard/teaching.py::PRESET_NOTES and asserted by tests/test_presets.py.
#: The presets keep the paper's L = 20 hidden nodes (the model's default is 300 since docs/capacity.md):
#: their notes (dashboard/teaching.py::PRESET_NOTES, tests/test_presets.py) were measured there.
_PRESET_L = 20

PRESETS = {
    # beta, gamma: the sweep's best point on this stream (tests/test_presets.py), where the
    # correction has something to show; at the defaults ELM-O does not beat the plain ELM.
    # decision="paper": these presets' notes (dashboard/teaching.py) were measured with the paper's
    # threshold 0; under the noise-aware default their F1 statements no longer hold as worded. The
    # dashboard shows it (its "Decision rule" control) and the link carries it.
    "clean vs noisy": RunConfig(noise="range", rho_low=0.2, rho_high=0.4, beta=0.55, gamma=2**-5,
                                models=["ELM-O (clean labels)", "ELM-O", "ELM (plain)"], n_hidden=_PRESET_L, decision="paper"),
    "concept growth": RunConfig(schedule="growth@2500", models=["ELM-O", "ELM-I", "ELM-II"], n_hidden=_PRESET_L, decision="paper"),
    "concept reduction": RunConfig(schedule="reduction@2500", models=["ELM-O", "ELM-I", "ELM-II"],
                                   n_hidden=_PRESET_L, decision="paper"),
    # a shift keeps the cardinality: the cardinality test (compared) cannot see it, the acting one can
    # chunks of 500: in chunks of 250 the label test (covariance pooled over its window, calibrated on sparse
    # labels) found this shift within two chunks on 4 of 8 stream seeds; in chunks of 500 in its first chunk on 7
    "label shift": RunConfig(schedule="shift@2500", chunk_size=500, models=["ELM-O", "ELM-I", "ELM-II"],
                             monitors=["adaptive"], n_hidden=_PRESET_L, decision="paper"),
    "why beta matters": RunConfig(beta=1.0, gamma=0.0, models=["ELM-O", "ELM (plain)"], n_hidden=_PRESET_L, decision="paper"),
    # missing labels, the noise people have; 2 % of each chunk checked by hand (tests/test_presets.py runs it
    # with and without them)
    "unknown noise: estimate the rates": RunConfig(model_rates="estimate", noise="missing", trusted_fraction=0.02,
                                                   models=["ELM-O"], n_hidden=_PRESET_L),
}
