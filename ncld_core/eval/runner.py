"""Prequential (test-then-train) evaluation of several models on one stream.

The stream is cut into chunks of ``chunk_size``.  The first chunk initialises
every model (``D_0``); each later chunk is first scored with the models as they
stand, against the *ground truth*, then learned from its *noisy* labels
(NOTES §5).  All models see the identical chunks in one pass.  The oracle variants
(:data:`~ncld_core.eval.variants.ORACLES`, e.g. "ELM-O (clean labels)") learn the ground truth
instead: a reference of what the noise costs, never something the learner has.

:meth:`PrequentialRunner.iter_run` yields one :class:`ChunkResult` per chunk as
soon as it is done, so a caller can draw live; :meth:`PrequentialRunner.run`
collects them into a :class:`RunResult` (per-chunk table, summary, CSV/JSON).

>>> import numpy as np
>>> from ncld_core.stream.stream import Stream
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(600, 4)); Y = (X[:, :2] > 0).astype(np.int8)
>>> result = PrequentialRunner(["ELM-O", "all-negative"], chunk_size=200).run(
...     Stream(X=X, Y_true=Y, Y_noisy=Y, name="toy"))
>>> result.summary().index.tolist()
['ELM-O', 'all-negative']
>>> int(result.records["chunk"].max()), bool(result.summary().loc["ELM-O", "micro_f1"] > 0.6)
(2, True)
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..files import json_default, write_atomic
from ..model.chunk_cache import ChunkCache
from ..model.elm_ncld import ELMNCLD
from ..model.record import ModelChunkRecord
from ..stream.stream import Stream
from ..threads import check_n_threads
from ..threads import limit as limit_threads
from ..threads import resolve as resolve_threads
from .drift_eval import change_chunks, detection_report
from .metrics import GREATER_IS_BETTER, MetricAccumulator
from .variants import ORACLES, REFERENCES, make_model

#: What the ELM-NCLD variants of a run are told about the flip rates (see PrequentialRunner).
RATE_MODES = ("known", "estimate", "ignore")

__all__ = ["PrequentialRunner", "ChunkResult", "RunResult", "RunState", "write_atomic"]


@dataclass
class ChunkResult:
    """What one chunk produced, for every model."""

    chunk: int
    start: int
    stop: int
    true_cardinality: float
    observed_cardinality: float
    is_change: bool  # a true change point falls in this chunk
    metrics: dict = field(default_factory=dict)  # model -> chunk metrics (empty for chunk 0)
    cumulative: dict = field(default_factory=dict)  # model -> cumulative metrics
    diagnostics: dict[str, ModelChunkRecord] = field(default_factory=dict)  # model -> model.last_record_ (ELM-NCLD)
    # model -> seconds to score and learn; what the ELM variants share (ChunkCache) is charged to the first
    seconds: dict = field(default_factory=dict)
    # model -> cumulative metrics of the models computed beside the run (PrequentialRunner's ``beside``): kept
    # apart from the run's own records, which never name them
    beside: dict = field(default_factory=dict)

    def rows(self) -> list[dict]:
        """Long-format rows, one per model."""
        out = []
        for name in self.seconds:
            row = {
                "chunk": self.chunk,
                "start": self.start,
                "stop": self.stop,
                "model": name,
                "true_cardinality": self.true_cardinality,
                "observed_cardinality": self.observed_cardinality,
                "is_change": self.is_change,
                "seconds": self.seconds[name],
            }
            row.update(self.metrics.get(name, {}))
            row.update({f"cum_{k}": v for k, v in self.cumulative.get(name, {}).items()})
            record = self.diagnostics.get(name)
            if record is not None:  # per-label estimates stay in the record, not in the flat rows
                row.update({f"diag_{k}": v for k, v in record.row().items()
                            if k not in ("chunk", "n_instances", "seconds", "observed_cardinality")})
            out.append(row)
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "ChunkResult":
        """Inverse of :func:`dataclasses.asdict` (run checkpoints; also their older flat records)."""
        data = dict(data)
        data["diagnostics"] = {name: ModelChunkRecord.from_dict(r) for name, r in data.get("diagnostics", {}).items()}
        return cls(**data)


@dataclass
class RunState:
    """Where a run stands: its models, metric accumulators and the next chunk to process."""

    models: dict
    accumulators: dict
    next_chunk: int = 0


class RunResult:
    """Per-chunk records of a finished (or stopped) run, with summaries and exports."""

    def __init__(self, chunks: list[ChunkResult], stream: Stream, chunk_size: int, config: dict | None = None,
                 n_chunks: int | None = None):
        self.chunks = chunks
        #: Chunks of the whole stream (a stopped run has fewer in :attr:`chunks`).
        self.n_chunks = stream.n_chunks(chunk_size) if n_chunks is None else int(n_chunks)
        self.stream_name = stream.name
        self.chunk_size = chunk_size
        self.change_points = [(cp.position, cp.kind) for cp in stream.change_points]
        #: The stream's sentence on source instances it leaves out (None when it uses them all).
        self.coverage_note = stream.coverage_note()
        self.n_left_out = stream.n_left_out
        self.config = dict(config or {})
        self.records = pd.DataFrame([row for c in chunks for row in c.rows()])

    @property
    def complete(self) -> bool:
        return len(self.chunks) >= self.n_chunks

    @property
    def status(self) -> str:
        """"complete (n chunks)" or "stopped at chunk k of n" (k chunks were processed)."""
        if self.complete:
            return f"complete ({self.n_chunks} chunks)"
        return f"stopped at chunk {len(self.chunks)} of {self.n_chunks}"

    def records_csv(self) -> str:
        """The per-chunk records as CSV; a stopped run's first line says where it stopped (a ``#`` comment)."""
        text = self.records.to_csv(index=False)
        return text if self.complete else f"# {self.status}\n{text}"

    @property
    def models(self) -> list[str]:
        return list(self.chunks[0].seconds) if self.chunks else []

    def summary(self) -> pd.DataFrame:
        """Cumulative metrics per model at the end of the run, plus drift scores."""
        if not self.chunks:
            return pd.DataFrame()
        last = self.chunks[-1].cumulative
        n_chunks = len(self.chunks)
        truth = change_chunks([p for p, _ in self.change_points], self.chunk_size)
        rows = {}
        for name in self.models:
            row = dict(last.get(name, {}))
            row["seconds"] = float(self.records.loc[self.records["model"] == name, "seconds"].sum())
            fired = [c.chunk for c in self.chunks if name in c.diagnostics and c.diagnostics[name].fired]
            if name not in REFERENCES:
                rep = detection_report(fired, truth, n_chunks)
                row.update(
                    firings=len(fired),
                    detected=rep["detected"],
                    missed=rep["missed"],
                    false_alarms=rep["false_alarms"],
                    mean_delay=rep["mean_delay"],
                )
            rows[name] = row
        return pd.DataFrame.from_dict(rows, orient="index")

    def noise_cost(self, metric: str = "average_precision", *, oracle: str = "ELM-O (clean labels)",
                   plain: str = "ELM (plain)", corrected: str = "ELM-O") -> dict | None:
        """What the label noise cost and what the noise correction won back, in ``metric``.

        ``cost``: the oracle (trained on the ground truth) minus the plain ELM on the noisy
        labels; ``recovered``: the corrected variant minus the plain ELM; ``share``:
        ``recovered / cost`` (None when the noise cost nothing). The metric's direction is
        respected (for a loss, lower is better). None when one of the three is not in the run.
        """
        summary = self.summary()
        if summary.empty or not {oracle, plain, corrected} <= set(summary.index) or metric not in summary:
            return None
        sign = 1.0 if GREATER_IS_BETTER.get(metric, True) else -1.0
        top, low, mid = (sign * float(summary.loc[m, metric]) for m in (oracle, plain, corrected))
        cost, recovered = top - low, mid - low
        return {"metric": metric, "oracle": oracle, "plain": plain, "corrected": corrected,
                "cost": cost, "recovered": recovered, "share": recovered / cost if cost > 0 else None}

    def to_csv(self, path):
        write_atomic(path, self.records_csv())

    def to_json(self, path):
        write_atomic(path, self.summary_json())

    def summary_json(self) -> str:
        """The JSON summary document (what :meth:`to_json` writes) as text."""
        summary = self.summary()
        doc = {
            "stream": self.stream_name,
            "chunk_size": self.chunk_size,
            "chunks": len(self.chunks),
            "n_chunks": self.n_chunks,
            "status": self.status,
            "change_points": [{"position": p, "kind": k} for p, k in self.change_points],
            "n_left_out": self.n_left_out,
            "coverage_note": self.coverage_note,
            "config": self.config,
            "summary": json.loads(summary.to_json(orient="index")),
        }
        return json.dumps(doc, indent=2, default=json_default)


def told_rates(mode: str, stream: Stream):
    """The ``(rho_pos, rho_neg)`` the ELM-NCLD variants are given under ``mode`` (see :data:`RATE_MODES`).

    "known": the stream's true rates (rates 0 on a noise-free stream); "ignore": rates 0;
    "estimate": None (the variants estimate them).
    """
    if mode == "estimate":
        return None
    if mode == "known" and stream.rho_pos is not None:
        return stream.rho_pos, stream.rho_neg
    return np.zeros(stream.n_labels), np.zeros(stream.n_labels)


class PrequentialRunner:
    """Test-then-train several models on the identical stream.

    Parameters
    ----------
    models : list of str or dict name -> estimator
        Variant names (see :mod:`ncld_core.eval.variants`) or ready estimators with the
        chunk API (``partial_fit``, ``decision_function``, ``predict``; ``ranking_scores`` and ``decide`` when
        the model has them).
    chunk_size : int
        ``N``, instances per chunk (>= 2).
    model_params : dict
        ELMNCLD parameters for the named variants.
    references : bool
        Add the trivial references (all-negative, noisy-prior) to every run.
    flip_rates : {"known", "estimate", "ignore"}, default "known"
        What the named ELM-NCLD variants are told about the noise (:func:`told_rates`):
        the stream's true rates (the paper's setting), nothing (they estimate the rates
        online, :mod:`ncld_core.model.flip_rates`), or rates 0 (noise ignored).
    n_threads : "auto" or int, default "auto"
        BLAS/OpenMP threads for each chunk's work (:mod:`ncld_core.threads`): ``"auto"`` is the process's
        budget (:func:`~ncld_core.threads.set_budget`: the command line's ``--threads``, the dashboard's
        run processes), else one thread per run below ``THREADED_FROM`` hidden nodes. An execution
        setting, not part of the run's configuration: the records do not depend on it.
    beside : sequence of str, default ()
        Variant names computed beside the run (e.g. :data:`ncld_core.eval.glance.GLANCE_MODELS`, what a summary
        of the run compares it with): scored and learned on the same chunks as ``models``, sharing their
        per-chunk work, but only their cumulative metrics are kept, in :attr:`ChunkResult.beside`; the run's
        records, :attr:`model_names` and summary are those of ``models`` alone. A name already in ``models``
        is not computed twice (its records are the run's).
    """

    def __init__(self, models, chunk_size: int = 500, *, model_params=None, references=False,
                 flip_rates="known", n_threads="auto", beside=()):
        if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 2:
            raise ValueError(f"chunk_size must be an integer >= 2, got {chunk_size!r}")
        if not models:
            raise ValueError("models: give at least one model")
        self.models = models
        self.chunk_size = int(chunk_size)
        self.model_params = dict(model_params or {})
        self.references = references
        if flip_rates not in RATE_MODES:
            raise ValueError(f"flip_rates must be one of {RATE_MODES}, got {flip_rates!r}")
        self.flip_rates = flip_rates
        self.n_threads = check_n_threads(n_threads)
        if isinstance(beside, str) or not all(isinstance(b, str) for b in beside):
            raise ValueError(f"beside must be a sequence of variant names, got {beside!r}")
        self.beside = [b for b in dict.fromkeys(beside) if b not in self.model_names]

    def threads(self, models: dict) -> int:
        """The BLAS threads a chunk of this run gets (:func:`ncld_core.threads.resolve` of the largest
        hidden layer among ``models``)."""
        n_hidden = max((int(getattr(m, "n_hidden", 0) or 0) for m in models.values()), default=0)
        return resolve_threads(self.n_threads, n_hidden=n_hidden)

    @property
    def model_names(self) -> list[str]:
        """The models a run reports, in its order (the references last, when added).

        >>> PrequentialRunner(["ELM-O", "ELM-II"], references=True).model_names
        ['ELM-O', 'ELM-II', 'all-negative', 'noisy-prior']
        """
        names = list(self.models)
        if self.references:
            names += [name for name in REFERENCES if name not in names]
        return names

    def n_steps(self, stream: Stream) -> int:
        """The items :meth:`iter_run` yields on ``stream``: its chunks."""
        return stream.n_chunks(self.chunk_size)

    def _build(self, stream: Stream) -> dict:
        rates = told_rates(self.flip_rates, stream)
        if isinstance(self.models, dict):
            built = dict(self.models)
        else:
            built = {name: make_model(name, rates=rates, **self.model_params) for name in self.models}
        if self.references:
            for name in REFERENCES:
                built.setdefault(name, make_model(name))
        for name in self.beside:
            built[name] = make_model(name, rates=rates, **self.model_params)
        min_chunk = max(getattr(m, "n_neighbors", 0) + 1 for m in built.values())
        if stream.n_instances < min_chunk:
            raise ValueError(f"the stream has {stream.n_instances} instances, fewer than one chunk needs")
        if self.chunk_size < min_chunk:
            raise ValueError(
                f"chunk_size={self.chunk_size} is smaller than n_neighbors + 1 = {min_chunk} of the models"
            )
        return built

    def start(self, stream: Stream) -> RunState:
        """Fresh models and accumulators for ``stream``."""
        models = self._build(stream)
        return RunState(models, {name: MetricAccumulator() for name in models})

    def iter_run(self, stream: Stream, *, stop_event=None, state: RunState | None = None, on_scores=None):
        """Yield a :class:`ChunkResult` per chunk; stops early when ``stop_event.is_set()``.

        ``state`` resumes a run (see :func:`~ncld_core.checkpoint.load_run`): chunks before
        ``state.next_chunk`` are skipped.  :attr:`state_` always holds the current state.
        ``on_scores(name, model, scores, result)`` is called for each model on each scored chunk
        (every chunk but the first), after ``decision_function`` and before the model learns the
        chunk: what the records do not keep, from the model as it predicted (e.g. other decision
        rules on the same state).  ``result`` is the chunk's :class:`ChunkResult` so far (its
        ``start`` / ``stop`` locate the chunk in ``stream``); the call's time is not in ``seconds``.
        """
        state = self.start(stream) if state is None else state
        self.state_ = state
        models, acc = state.models, state.accumulators
        change_at = set(change_chunks([cp.position for cp in stream.change_points], self.chunk_size))
        for index, (start, stop) in enumerate(stream.chunk_bounds(self.chunk_size)):
            if index < state.next_chunk:
                continue
            if stop_event is not None and stop_event.is_set():
                return
            X = stream.X[start:stop]
            Y_true, Y_noisy = stream.Y_true[start:stop], stream.Y_noisy[start:stop]
            result = ChunkResult(
                chunk=index,
                start=start,
                stop=stop,
                true_cardinality=float(Y_true.sum(axis=1).mean()),
                observed_cardinality=float(Y_noisy.sum(axis=1).mean()),
                is_change=index in change_at,
            )
            cache = ChunkCache(X, Y_noisy)  # the ELM variants share H, the graph and P_D of the chunk
            trusted = None if stream.trusted is None else stream.trusted[start:stop]
            with limit_threads(self.threads(models)):  # per chunk: never held across the yield
                self._learn_chunk(index, models, acc, result, X, Y_true, Y_noisy, cache, on_scores, trusted)
            self._set_beside_apart(result)
            state.next_chunk = index + 1
            yield result

    def _learn_chunk(self, index, models, acc, result, X, Y_true, Y_noisy, cache, on_scores, trusted=None):
        """Test-then-train every model on one chunk, filling ``result``; ``trusted`` (the chunk's rows of the
        stream's trusted sample) reveals those rows' clean labels to the ELM-NCLD models learning noisy ones."""
        revealed = {} if trusted is None or not trusted.any() else {"trusted": trusted, "Y_trusted": Y_true[trusted]}
        clean_cache = None
        for name, model in models.items():
            oracle = isinstance(name, str) and name in ORACLES
            Y_learn = Y_true if oracle else Y_noisy
            if oracle and clean_cache is None:  # the same features: H and the graph are computed once
                clean_cache = cache.for_labels(Y_true)
            t0 = time.perf_counter()
            if index > 0:
                # The scores labels are ranked by (ELM-NCLD: H Phi; its decision_function is the rule's margin);
                # an ELM-NCLD model scores with the cache it then learns with: the chunk's H is computed once.
                ranking = getattr(model, "ranking_scores", None)
                if isinstance(model, ELMNCLD):
                    scores = ranking(X, cache=clean_cache if oracle else cache)
                else:
                    scores = ranking(X) if ranking is not None else model.decision_function(X)
                decide = getattr(model, "decide", None)  # the model's decision rule; else threshold 0
                pred = decide(scores) if decide is not None else (scores > 0).astype(np.int8)
                result.metrics[name] = acc[name].update(Y_true, scores, pred)
                result.cumulative[name] = acc[name].cumulative()
                if on_scores is not None:
                    t_hook = time.perf_counter()
                    on_scores(name, model, scores, result)
                    t0 += time.perf_counter() - t_hook
            # A short final chunk too small for the graph is scored but not learned.
            if X.shape[0] >= getattr(model, "n_neighbors", 0) + 1:
                if isinstance(model, ELMNCLD):
                    model.partial_fit(X, Y_learn, cache=clean_cache if oracle else cache,
                                      **({} if oracle else revealed))
                else:
                    model.partial_fit(X, Y_learn)
                record = getattr(model, "last_record_", None)
                if record is not None:
                    result.diagnostics[name] = record
            result.seconds[name] = time.perf_counter() - t0

    def _set_beside_apart(self, result: ChunkResult) -> None:
        """Move the models computed beside the run out of ``result``'s records, keeping their cumulative metrics
        in ``result.beside`` (none for chunk 0, which only initialises)."""
        for name in self.beside:
            for part in (result.metrics, result.diagnostics, result.seconds):
                part.pop(name, None)
            cumulative = result.cumulative.pop(name, None)
            if cumulative is not None:
                result.beside[name] = cumulative

    def run(self, stream: Stream, *, progress=None, stop_event=None, config=None) -> RunResult:
        """Run to the end (or until stopped) and collect a :class:`RunResult`.

        ``progress`` is called with each :class:`ChunkResult` (e.g. to advance a bar).
        """
        chunks = []
        for chunk in self.iter_run(stream, stop_event=stop_event):
            chunks.append(chunk)
            if progress is not None:
                progress(chunk)
        return RunResult(chunks, stream, self.chunk_size, config=config)
