"""The beta x gamma sensitivity sweep (the paper's Section IV "Parameter Sensitivity").

For every pair ``(beta, gamma)`` of a grid, one ELM-NCLD variant is run
prequentially on the same stream and scored by the geometric mean the paper
uses, ``GM = sqrt((1 - HL) * micro-F1)`` of the cumulative metrics.

Running the whole stream once per grid point is slow (the per-chunk noisy
probability model dominates the cost and does not depend on beta or gamma).
The default ``method="fast"`` uses that the model is linear in its sufficient
statistics (NOTES §2)::

    K(b)        = a I + sum_i [ b H_i^T H_i + (1-b) E_i^T E_i ],   E_i = H_i - S_i H_i
    B(b, g)     = b sum_i H_i^T Y_i  -  g sum_i H_i^T A_i
    Phi(b, g)   = K(b)^-1 B(b, g)

and that the drift firings (Eq. card, Eq. Hfd) depend on neither beta nor gamma.
One probe model learns the stream (graph and ``P_D`` built once per chunk); its
per-chunk terms ``H^T H, E^T E, H^T Y, H^T A``
(:attr:`~ncld_core.model.ELMNCLD.chunk_statistics_`) are summed by the model's own
step (:func:`~ncld_core.model.statistics.accumulate`, with the variant's strategy at
the chunks where the probe fired); every grid point then costs one L x L solve per chunk,
and predicts by the run's decision rule (``decision``) with its own running state, as the model would.  ``method="runner"`` runs the
:class:`~ncld_core.eval.runner.PrequentialRunner` once per grid point instead (the
reference the fast path is tested against).

>>> from ncld_core.config import RunConfig
>>> cfg = RunConfig(n_instances=600, chunk_size=200, n_features=5, n_labels=4, models=["ELM-O"])
>>> df = sweep(cfg, betas=[0.2, 1.0], gammas=[0.0, 2**-6])
>>> df[["beta", "gamma"]].values.tolist()
[[0.2, 0.0], [0.2, 0.015625], [1.0, 0.0], [1.0, 0.015625]]
>>> bool(((df["gm"] >= 0) & (df["gm"] <= 1)).all())
True
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
import pandas as pd

from ..model.decision import decide, update_state
from ..model.noisy_targets import noisy_scale, ridge_scale
from ..model.ridge import solve_ridge
from ..model.statistics import accumulate, drift_action
from ..threads import check_n_threads, limit as limit_threads, resolve as resolve_threads
from .metrics import MetricAccumulator
from .runner import told_rates
from .variants import ELM_VARIANTS, VARIANT_STRATEGY, make_model

__all__ = ["sweep", "iter_sweep", "SweepStep", "SweepJob", "SweepRunner", "sweep_runs", "DEFAULT_BETA_RANGE", "best_point", "geometric_mean", "PAPER_GAMMAS",
           "default_betas", "SWEEPABLE", "SWEEP_SPREAD", "seconds_range"]

#: gamma in {0, 2^-8, ..., 2^-3}, the paper's grid.
PAPER_GAMMAS = (0.0,) + tuple(2.0**-k for k in range(8, 2, -1))

#: Variants whose beta and gamma are free parameters (ELM (plain) fixes beta = 1, gamma = 0).
SWEEPABLE = tuple(VARIANT_STRATEGY)

_METHODS = ("fast", "runner")


#: The β grid the sweep offers first: (start, stop, step).
DEFAULT_BETA_RANGE = (0.05, 0.95, 0.05)


def default_betas(start: float = DEFAULT_BETA_RANGE[0], stop: float = DEFAULT_BETA_RANGE[1],
                  step: float = DEFAULT_BETA_RANGE[2]) -> list[float]:
    """An evenly spaced beta grid, rounded to 1e-9 (``[0.05, 0.1, ..., 0.95]`` by default).

    >>> default_betas(0.3, 0.8, 0.25)
    [0.3, 0.55, 0.8]
    """
    for name, v in (("start", start), ("stop", stop), ("step", step)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"{name} must be a finite number, got {v!r}")
    if step <= 0:
        raise ValueError(f"step must be > 0, got {step}")
    if stop < start:
        raise ValueError(f"stop ({stop}) must be at least start ({start})")
    n = int(math.floor((stop - start) / step + 1e-9)) + 1
    return [round(start + k * step, 9) for k in range(n)]


def sweep_runs(config, n_betas: int, n_gammas: int, n_labels: int, chunk_flops: float) -> float:
    """What a sweep costs, in runs of one variant (``chunk_flops``: that variant's work per chunk,
    :class:`~ncld_core.model.cost.CostEstimate`): with estimated rates one run per grid point; with given rates
    one probe run plus, per chunk and β, one solve of ``K`` for every γ's right-hand sides and the scores of
    every γ (:func:`_sweep_fast`).

    >>> from ncld_core.config import RunConfig
    >>> sweep_runs(RunConfig(model_rates="estimate"), 4, 2, 10, 1e9), sweep_runs(RunConfig(), 1, 1, 10, 1e12) < 1.01
    (8, True)
    """
    if config.model_rates == "estimate":
        return n_betas * n_gammas
    L, N, width = int(config.n_hidden), int(config.chunk_size), n_labels * n_gammas  # every γ's q columns at once
    solve = L**3 / 3 + 2 * L**2 * width + 2 * N * L * width  # Cholesky, its two triangular solves, the scores
    return 1 + n_betas * solve / max(chunk_flops, 1.0)


#: Measured / estimated seconds of whole sweeps, the least and the largest over the cases of
#: ``python -m benchmarks.sweep_estimate`` (docs/sweep-estimate.md): the range said before a server has measured
#: sweeps of its own.
SWEEP_SPREAD = (0.6, 1.5)


def seconds_range(estimate_s: float, calibration=None) -> tuple[float, float]:
    """The range a sweep estimated at ``estimate_s`` seconds is said to take: scaled by the least and the largest
    measured / estimated ratio of the sweeps ``calibration`` (a
    :class:`~ncld_core.model.chunk_time.TimeCalibration` fed whole sweeps) has seen, or by :data:`SWEEP_SPREAD`
    before it has seen two.

    >>> seconds_range(20.0)
    (12.0, 30.0)
    """
    low, high = (calibration.spread() if calibration is not None else None) or SWEEP_SPREAD
    return estimate_s * low, estimate_s * high


def geometric_mean(hamming_loss, micro_f1):
    """The paper's ``GM = sqrt((1 - HL) * F1)`` (works on scalars and arrays).

    >>> round(float(geometric_mean(0.1, 0.4)), 4)
    0.6
    """
    return np.sqrt(np.clip((1.0 - np.asarray(hamming_loss, dtype=float)) * np.asarray(micro_f1, dtype=float), 0, None))


def _check_grid(values, name: str, low: float, high: float) -> list[float]:
    try:
        vals = [float(v) for v in values]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a list of numbers, got {values!r}") from None
    if not vals:
        raise ValueError(f"{name}: give at least one value")
    for v in vals:
        if not math.isfinite(v) or v < low or v > high:
            raise ValueError(f"{name}: every value must be in [{low}, {high}], got {v!r}")
    return sorted(set(vals))


def _choose_model(config, model) -> str:
    if model is None:
        model = next((m for m in config.models if m in SWEEPABLE), "ELM-O")
    if model not in SWEEPABLE:
        known = ", ".join(ELM_VARIANTS)
        raise ValueError(
            f"the sweep needs an ELM-NCLD variant ({', '.join(SWEEPABLE)}), got {model!r}"
            + ("" if model in ELM_VARIANTS else f"; known variants: {known}")
        )
    return model


def sweep(config, betas, gammas=PAPER_GAMMAS, progress=None, *, stream=None, model=None,
          method: str = "fast", client=None) -> pd.DataFrame:
    """GM (and the other cumulative metrics) of one variant over a beta x gamma grid.

    Parameters
    ----------
    config : RunConfig
        The stream, chunk size and the other model parameters (alpha, L, K, delta, seed).
    betas : iterable of float in [0, 1]
    gammas : iterable of float >= 0, default the paper's ``{0, 2^-8, ..., 2^-3}``
    progress : callable ``(done, total)``, optional
        Called as the sweep advances (per chunk for ``"fast"``, per grid point for ``"runner"``).
    stream : Stream, optional
        An already built stream (e.g. from an upload); default ``config.build_stream()``.
    model : {"ELM-O", "ELM-I", "ELM-II"}, optional
        Default: the first of these in ``config.models``, else ELM-O.
    method : {"fast", "runner"}
        The variants are told the flip rates as ``config.model_rates`` says; with
        "estimate" the sweep always runs ``"runner"`` (``df.attrs["method"]`` says which ran).
    client : distributed.Client, optional
        Compute on this Dask cluster (``ncld_core.eval.dask_backend``): with ``"runner"`` each grid point is a
        task; with ``"fast"`` the betas are cut into one block per worker thread, each block a task that runs
        the fast path on its betas (the probe is repeated per block; every grid point's numbers are the same
        as here, as each point is computed from the probe and its own state alone). Progress then counts
        finished tasks.

    Returns
    -------
    pandas.DataFrame
        One row per ``(beta, gamma)`` sorted by beta then gamma, columns ``beta, gamma,
        gm`` and every cumulative metric of :func:`~ncld_core.eval.metrics.evaluate`.
        ``df.attrs`` holds ``model``, ``stream``, ``chunks``, ``firings`` (chunk
        indices where the detector fired), ``method`` and ``seconds``.
    """
    if client is None:  # here, step by step
        for step in iter_sweep(config, betas, gammas, stream=stream, model=model, method=method):
            if progress is not None:
                progress(step.done, step.total)
        return step.table
    betas, gammas, model, stream, method = _prepare(config, betas, gammas, stream, model, method)
    t0 = time.perf_counter()
    if method == "runner":
        rows, firings, n_chunks = _sweep_runner(config, stream, model, betas, gammas, progress, client)
    else:
        rows, firings, n_chunks = _sweep_fast_blocks(config, stream, model, betas, gammas, progress, client)
    return _table(rows, model, stream, n_chunks, firings, method, t0)


def _prepare(config, betas, gammas, stream, model, method):
    """The sweep's arguments checked: ``(betas, gammas, model, stream, method)`` (the method actually run)."""
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    betas = _check_grid(betas, "betas", 0.0, 1.0)
    gammas = _check_grid(gammas, "gammas", 0.0, math.inf)
    model = _choose_model(config, model)
    if stream is None:
        stream = config.build_stream()
    config.check(n_available=stream.n_instances, n_labels_available=stream.n_labels)
    return betas, gammas, model, stream, _method(config, method)


def _method(config, method: str) -> str:
    # Estimated rates rank each chunk by the model's own prequential scores, which depend on
    # beta and gamma: the fast path's shared firings and weights would be wrong.
    return "runner" if config.model_rates == "estimate" else method


def _table(rows, model, stream, n_chunks, firings, method, t0) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    df.insert(2, "gm", geometric_mean(df["hamming_loss"], df["micro_f1"]))
    df = df.sort_values(["beta", "gamma"], kind="stable").reset_index(drop=True)
    df.attrs.update(
        model=model, stream=stream.name, chunks=n_chunks, firings=firings, method=method,
        seconds=time.perf_counter() - t0,
    )
    return df


@dataclasses.dataclass(frozen=True)
class SweepStep:
    """How far a sweep computed step by step (:func:`iter_sweep`) has come: ``done`` of ``total`` steps, each a
    grid point when ``one_by_one`` (one run per point), else a chunk that every one of the ``n_points`` grid
    points advances through together; ``table`` is :func:`sweep`'s table on the last step (None before); ``seconds``
    the time since the sweep began (its stream given).

    >>> SweepStep(2, 8, 8, True, seconds=3.0).remaining_s, SweepStep(0, 8, 8, True).remaining_s is None
    (9.0, True)
    """

    done: int
    total: int
    n_points: int
    one_by_one: bool
    table: pd.DataFrame | None = None
    seconds: float = 0.0

    @property
    def remaining_s(self) -> float | None:
        """Seconds left at the pace so far (the steps are of equal work: grid points, or chunks of one stream);
        None before the first step."""
        if self.done <= 0 or self.seconds <= 0:
            return None
        return self.seconds / self.done * max(self.total - self.done, 0)


def iter_sweep(config, betas, gammas=PAPER_GAMMAS, *, stream=None, model=None, method: str = "fast"):
    """:func:`sweep` (without a cluster) one step at a time: yields a :class:`SweepStep` per grid point (one run
    per point: estimated rates, or ``method="runner"``) or per chunk (the fast path); the last step carries the
    table. Bad arguments raise at the first step, as :func:`sweep` raises them.

    >>> from ncld_core.config import RunConfig
    >>> cfg = RunConfig(n_instances=600, chunk_size=200, n_features=5, n_labels=4, models=["ELM-O"])
    >>> steps = list(iter_sweep(cfg, [0.2, 1.0], [0.0], method="runner"))
    >>> [(s.done, s.total, s.table is None) for s in steps]
    [(1, 2, True), (2, 2, False)]
    """
    betas, gammas, model, stream, method = _prepare(config, betas, gammas, stream, model, method)
    t0 = time.perf_counter()
    n_points = len(betas) * len(gammas)
    if method == "runner":
        points = [(b, g) for b in betas for g in gammas]
        answers = []
        for point in points:
            answers.append(_runner_point(point, config, stream, model))
            if len(answers) < len(points):
                yield SweepStep(len(answers), len(points), n_points, True, seconds=time.perf_counter() - t0)
        rows = [row for row, _, _ in answers]
        _, firings, n_chunks = answers[-1]
        total = len(points)
    else:
        steps = _sweep_fast_steps(config, stream, model, betas, gammas)
        total = None
        while True:
            try:
                done, total = next(steps)
            except StopIteration as end:
                rows, firings, n_chunks = end.value
                break
            if done < total:
                yield SweepStep(done, total, n_points, False, seconds=time.perf_counter() - t0)
    yield SweepStep(total, total, n_points, method == "runner",
                    _table(rows, model, stream, n_chunks, firings, method, t0), seconds=time.perf_counter() - t0)


def sweep_steps(config, stream, betas, gammas, method: str = "fast") -> int:
    """How many steps :func:`iter_sweep` yields for this grid on ``stream``: its grid points when each is a run of
    its own, else its chunks."""
    if _method(config, method) == "runner":
        return len(set(betas)) * len(set(gammas))
    return stream.n_chunks(int(config.chunk_size))


@dataclasses.dataclass(frozen=True)
class SweepJob:
    """A sweep asked of the dashboard's run hub (``dashboard.serving.run_hub``), in place of a run's configuration: the
    sweep's ``config`` (its stream and model parameters; its own beta and gamma unused), the ``variant`` and the
    grid. :meth:`to_dict` is its identity (a run's configuration never has its ``"sweep"`` entry), :meth:`runner`
    what the job's process advances (:class:`SweepRunner`)."""

    config: object
    variant: str
    betas: tuple
    gammas: tuple
    method: str = "fast"

    @property
    def dataset(self) -> str:
        return self.config.dataset

    @property
    def chunk_size(self) -> int:
        return self.config.chunk_size

    @property
    def n_hidden(self) -> int:
        return self.config.n_hidden

    @property
    def n_points(self) -> int:
        return len(set(self.betas)) * len(set(self.gammas))

    def to_dict(self) -> dict:
        return {**self.config.to_dict(), "sweep": {"variant": self.variant, "betas": list(self.betas),
                                                   "gammas": list(self.gammas), "method": self.method}}

    def build_stream(self):
        return self.config.build_stream()

    def runner(self) -> "SweepRunner":
        return SweepRunner(self)


class SweepRunner:
    """The runner of a :class:`SweepJob`: :meth:`iter_run` yields :func:`iter_sweep`'s steps, each computed on
    ``n_threads`` BLAS threads (:mod:`ncld_core.threads`; the limit is never held across a yield), so the
    dashboard's job machinery (``dashboard.serving.live_run``, ``dashboard.serving.chunk_process``) advances a
    sweep as it advances a run's chunks."""

    def __init__(self, job: SweepJob, n_threads="auto"):
        self.job = job
        self.n_threads = check_n_threads(n_threads)

    @property
    def model_names(self) -> list[str]:
        return [self.job.variant]

    def n_steps(self, stream) -> int:
        """The steps :meth:`iter_run` yields on ``stream``."""
        job = self.job
        return sweep_steps(job.config, stream, job.betas, job.gammas, job.method)

    def iter_run(self, stream):
        job = self.job
        steps = iter_sweep(job.config, list(job.betas), list(job.gammas), stream=stream, model=job.variant,
                           method=job.method)
        n_threads = resolve_threads(self.n_threads, n_hidden=int(job.config.n_hidden))
        while True:
            with limit_threads(n_threads):
                try:
                    step = next(steps)
                except StopIteration:
                    return
            yield step


def best_point(df: pd.DataFrame) -> dict:
    """The grid row with the highest GM (first one on ties), as a dict.

    >>> best_point(pd.DataFrame({"beta": [0.1, 0.2], "gamma": [0, 0], "gm": [0.5, 0.7]}))["beta"]
    0.2
    """
    if df.empty:
        raise ValueError("the sweep has no rows")
    return df.loc[df["gm"].idxmax()].to_dict()


# --------------------------------------------------------------------------- runner (reference)
def _runner_point(point, config, stream, model):
    """One grid point run by the PrequentialRunner: ``(row, firings, n_chunks)``."""
    b, g = point
    cfg = dataclasses.replace(config, beta=b, gamma=g, models=[model], references=False)
    result = cfg.runner().run(stream)
    last = result.chunks[-1].cumulative.get(model)
    if last is None:
        raise ValueError("the stream has a single chunk: nothing is scored (make the chunk size smaller)")
    firings = [c.chunk for c in result.chunks if model in c.diagnostics and c.diagnostics[model].fired]
    return {"beta": b, "gamma": g, **last}, firings, len(result.chunks)


def _sweep_runner(config, stream, model, betas, gammas, progress, client=None):
    """One run per grid point: here in order, or each a task on ``client``'s workers."""
    from .dask_backend import as_finished

    points = [(b, g) for b in betas for g in gammas]
    answers = [None] * len(points)
    if client is not None:
        stream = client.scatter(stream, hash=False)  # sent to the cluster once, not once per task
    for done, (i, answer) in enumerate(as_finished(_runner_point, points, client, args=(config, stream, model)), 1):
        answers[i] = answer
        if progress is not None:
            progress(done, len(points))
    rows = [row for row, _, _ in answers]
    _, firings, n_chunks = answers[-1]
    return rows, firings, n_chunks


def _fast_block(block, config, stream, model, gammas):
    """The fast path on some of the betas (a task of a sweep on a cluster)."""
    return _sweep_fast(config, stream, model, block, gammas, None)


def _sweep_fast_blocks(config, stream, model, betas, gammas, progress, client):
    """The fast path with the betas cut into one block per worker thread of ``client``, each block a task."""
    from .dask_backend import as_finished

    n_blocks = max(1, min(len(betas), sum(client.nthreads().values())))
    blocks = [list(part) for part in np.array_split(np.asarray(betas), n_blocks)]
    blocks = [[float(b) for b in block] for block in blocks]
    answers = [None] * n_blocks
    stream_ref = client.scatter(stream, hash=False)
    for done, (i, answer) in enumerate(as_finished(_fast_block, blocks, client,
                                                   args=(config, stream_ref, model, gammas)), 1):
        answers[i] = answer
        if progress is not None:
            progress(done, n_blocks)
    rows = [row for block_rows, _, _ in answers for row in block_rows]
    _, firings, n_chunks = answers[0]  # the probe's firings: the same in every block
    return rows, firings, n_chunks


# --------------------------------------------------------------------------- fast path
def _sweep_fast(config, stream, model, betas, gammas, progress):
    steps = _sweep_fast_steps(config, stream, model, betas, gammas)
    while True:
        try:
            done, total = next(steps)
        except StopIteration as end:
            return end.value
        if progress is not None:
            progress(done, total)


def _sweep_fast_steps(config, stream, model, betas, gammas):
    """The fast path, yielding ``(done, total)`` after each chunk; returns ``(rows, firings, n_chunks)``."""
    params = config.model_params()
    rates = told_rates(config.model_rates, stream)  # never None here: "estimate" takes the runner path
    # One probe learns the stream; its per-chunk sufficient statistics (which depend on neither beta
    # nor gamma) and its firings are accumulated here by the model's own step for the variant's
    # strategy.  Any beta in (0, 1) makes it compute the graph term E^T E.
    probe = make_model("ELM-O", rates=rates, **{**params, "beta": 0.5})
    strategy = VARIANT_STRATEGY[model]
    alpha, L, hessian = float(config.alpha), int(config.n_hidden), probe.hessian
    # the model's ridge: a number, or one per label (loss="forward": alpha / d_j^2, ncld_core.model.ridge)
    ridge = alpha * ridge_scale(probe.loss_in_use(), *rates)
    rule = probe.decision  # every grid point predicts by the run's decision rule, with its own state
    rho_pos, rho_neg = (np.broadcast_to(np.asarray(r, dtype=float), (stream.n_labels,)) for r in rates)
    nb, ng = len(betas), len(gammas)
    bounds = list(stream.chunk_bounds(config.chunk_size))
    min_learn = int(config.n_neighbors) + 1
    if bounds[0][1] - bounds[0][0] < min_learn:
        raise ValueError(f"the first chunk has fewer than n_neighbors + 1 = {min_learn} instances")
    if len(bounds) < 2:
        raise ValueError("the stream has a single chunk: nothing is scored (make the chunk size smaller)")
    acc = [[MetricAccumulator() for _ in range(ng)] for _ in range(nb)]
    states = [[None] * ng for _ in range(nb)]  # each grid point's decision state (ncld_core.model.decision)
    sums = None  # the variant's SufficientStatistics since its last reset
    coefs = None  # (nb, L, ng * q)
    firings = []
    q = stream.n_labels
    g_vec = np.asarray(gammas)
    for index, (start, stop) in enumerate(bounds):
        X = stream.X[start:stop]
        if index > 0:
            H = probe.hidden_output(X)
            Y_true = stream.Y_true[start:stop]
            for bi in range(nb):
                scores = H @ coefs[bi]  # (N, ng * q)
                for gi in range(ng):
                    s = scores[:, gi * q:(gi + 1) * q]
                    acc[bi][gi].update(Y_true, s, decide(rule, states[bi][gi], noisy_scale(probe.loss_in_use(), s, rho_pos, rho_neg)))
        if stop - start >= min_learn:
            Y_noisy = stream.Y_noisy[start:stop]
            probe.partial_fit(X, Y_noisy)
            record = probe.last_record_
            fired = record.fired
            if fired:
                firings.append(index)
            action = drift_action(fired, strategy, first=sums is None)
            sums = accumulate(sums, probe.chunk_statistics_, action)
            old_coefs = coefs
            # Right-hand sides of every gamma side by side: b HtY - g HtA, (L, ng * q).
            rhs_rank = (sums.HtA[:, None, :] * g_vec[None, :, None]).reshape(L, ng * q)
            coefs = np.empty((nb, L, ng * q))
            for bi, b in enumerate(betas):
                rhs = np.tile(sums.B_score(b), (1, ng)) - rhs_rank
                # every gamma's block of q labels at the labels' ridges (one number: the same for all)
                per_block = ridge if np.ndim(ridge) == 0 else np.tile(np.broadcast_to(ridge, (q,)), ng)
                (coefs[bi],), _ = solve_ridge(sums.K(0.0, b, hessian), per_block, rhs)
            # As the model does: the state reads the prequential scores, or the new model's after a reset.
            fresh = action in ("init", "retrain", "adjust")
            H = probe.hidden_output(X)
            for bi in range(nb):
                scores = H @ (coefs[bi] if fresh else old_coefs[bi])
                for gi in range(ng):
                    states[bi][gi] = update_state(
                        None if fresh else states[bi][gi],
                        noisy_scale(probe.loss_in_use(), scores[:, gi * q:(gi + 1) * q], rho_pos, rho_neg), Y_noisy, rho_pos, rho_neg,
                        cardinality=record.lcard_hat, prevalence=record.prevalence_hat,
                        calibrate=False)  # predictions only: the calibration does not change their sign
        yield index + 1, len(bounds)
    rows = []
    for bi, b in enumerate(betas):
        for gi, g in enumerate(gammas):
            rows.append({"beta": b, "gamma": g, **acc[bi][gi].cumulative()})
    return rows, firings, len(bounds)
