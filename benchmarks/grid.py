"""The comparison grid: methods x datasets x seeds x settings, run side by side on Dask.

A *cell* is one stream -- ``(dataset, setting, seed)`` -- on which **all** methods run
side by side in one :class:`~ncld_core.eval.runner.PrequentialRunner` pass (one
:class:`~ncld_core.config.RunConfig`), so every method sees the identical chunks,
flip rates and flips (NOTES §6: "compare methods only side by side, in one run, on
the same streams").  The settings are the paper's (NOTES §5):

* ``"noisy"``: random order, per-label ``rho_pos, rho_neg ~ U[0.2, 0.4]`` (Table II);
* ``"growth"``: single-label instances first, then multi-label ones (stream ``NAME_a``);
* ``"reduction"``: the reverse (stream ``NAME_d``); noise after ordering (Table IV).

A seed sets the stream order, the drawn rates, the flips and the models' hidden layers.

:func:`run_grid` runs the cells that have no result file yet on a Dask cluster (a
:class:`~distributed.LocalCluster` of worker processes, or an existing scheduler),
and stores each finished cell as one JSON file in ``out_dir`` (written atomically),
so an interrupted grid resumes where it stopped.  Workers load the data themselves
from ``NCLD_DATA_DIR`` (the client's value is passed along); only the small cell
description goes out and only the summary comes back.

:func:`results_table` / :func:`format_table` shape the long table like the paper's
Table II / IV (``mean ± std`` over seeds, best **bold**, second <u>underlined</u>);
:func:`friedman_test` and :func:`cd_diagram` give the Friedman test and the Nemenyi
critical-difference diagram (autorank) from per-dataset mean ranks.

>>> cell = Cell("medical", "growth", seed=1)
>>> cell.stream, cell.key.startswith("medical__growth__seed1__")
('medical_a', True)
>>> Cell.from_dict(cell.to_dict()) == cell
True
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import functools
import hashlib
import io
import json
import math
import os
import platform
import re
import time
import traceback
import uuid
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.common import md_table, write_atomic
from benchmarks.parallel import as_finished, dask_client
from ncld_core.code_version import code_fingerprint, combine_digests, file_digest, source_files
from ncld_core.files import json_default

__all__ = [
    "Cell",
    "make_cells",
    "run_cell",
    "run_grid",
    "code_fingerprint",
    "changed_sources",
    "loaded_sources",
    "load_grid",
    "SETTINGS",
    "METRICS",
    "DEFAULT_METHODS",
    "order_methods",
    "stream_order",
    "summarize",
    "results_table",
    "format_table",
    "friedman_test",
    "FriedmanResult",
    "cd_diagram",
]

#: setting -> (RunConfig.schedule, stream-name suffix)
SETTINGS = {"noisy": ("", ""), "growth": ("growth", "_a"), "reduction": ("reduction", "_d")}

#: metric column -> (short name, lower is better)
METRICS = {
    "hamming_loss": ("HL", True),
    "micro_f1": ("F1", False),
    "average_precision": ("AP", False),
}

#: The ELM variants every cell runs by default (the references come with ``references=True``).
DEFAULT_METHODS = ("ELM-O", "ELM-I", "ELM-II", "ELM (plain)")

# RunConfig fields a Cell sets itself (not allowed in ``options``).
_CELL_FIELDS = ("dataset", "schedule", "seed", "shuffle_seed", "models", "references", "chunk_size")
_SAFE = re.compile(r"[^A-Za-z0-9.-]+")


# ---------------------------------------------------------------------------
# Cells
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Cell:
    """One stream of the grid, on which all ``methods`` run side by side.

    ``options`` holds further :class:`~ncld_core.config.RunConfig` fields as sorted
    ``(name, value)`` pairs (e.g. ``n_instances`` and ``n_labels`` of the synthetic
    dataset, or model parameters); pass a dict, it is normalised.
    """

    dataset: str
    setting: str = "noisy"
    seed: int = 0
    methods: tuple = DEFAULT_METHODS
    chunk_size: int = 500
    references: bool = True
    options: tuple = ()

    def __post_init__(self):
        if not isinstance(self.dataset, str) or not self.dataset.strip():
            raise ValueError(f"dataset must be a non-empty string, got {self.dataset!r}")
        if self.setting not in SETTINGS:
            raise ValueError(f"setting must be one of {', '.join(SETTINGS)}, got {self.setting!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        object.__setattr__(self, "seed", int(self.seed))
        methods = (self.methods,) if isinstance(self.methods, str) else tuple(self.methods)
        object.__setattr__(self, "methods", methods)
        opts = dict(self.options)
        from ncld_core.config import RunConfig

        fields = {f.name for f in dataclasses.fields(RunConfig)}
        bad = sorted(k for k in opts if k not in fields or k in _CELL_FIELDS)
        if bad:
            raise ValueError(f"options: not settable per cell: {', '.join(bad)}")
        opts = {k: (tuple(v) if isinstance(v, list) else v) for k, v in opts.items()}
        object.__setattr__(self, "options", tuple(sorted(opts.items())))

    @property
    def stream(self) -> str:
        """The stream's display name: ``medical``, ``arts_a`` (growth), ``arts_d`` (reduction)."""
        return self.dataset + SETTINGS[self.setting][1]

    def config(self):
        """The :class:`~ncld_core.config.RunConfig` of this cell (paper protocol, NOTES §5)."""
        from ncld_core.config import RunConfig

        kw = dict(noise="range", rho_low=0.2, rho_high=0.4)
        kw.update({k: (list(v) if isinstance(v, tuple) else v) for k, v in self.options})
        return RunConfig(
            dataset=self.dataset,
            chunk_size=int(self.chunk_size),
            schedule=SETTINGS[self.setting][0],
            models=list(self.methods),
            references=bool(self.references),
            shuffle_seed=self.seed,
            seed=self.seed,
            **kw,
        )

    @functools.cached_property
    def key(self) -> str:
        """Stable, filesystem-safe id: ``DATASET__SETTING__seedN__HASH``.

        The hash covers the whole run configuration (methods as a set, model
        parameters, noise, chunk size), so a cell run with other methods or
        parameters never reuses a stored result.
        """
        cfg = self.config().to_dict()
        cfg["models"] = sorted(cfg["models"])
        digest = hashlib.sha1(json.dumps(cfg, sort_keys=True, default=str).encode()).hexdigest()[:10]
        name = _SAFE.sub("_", self.dataset).strip("_") or "dataset"
        return f"{name}__{self.setting}__seed{self.seed}__{digest}"

    def to_dict(self) -> dict:
        return {
            "dataset": self.dataset,
            "setting": self.setting,
            "seed": self.seed,
            "methods": list(self.methods),
            "chunk_size": self.chunk_size,
            "references": self.references,
            "options": {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.options},
        }

    @classmethod
    def from_dict(cls, data: dict) -> "Cell":
        data = dict(data)
        data["methods"] = tuple(data.get("methods", DEFAULT_METHODS))
        data["options"] = tuple(sorted(dict(data.get("options", {})).items()))
        return cls(**data)


def make_cells(datasets, seeds, settings=("noisy",), methods=DEFAULT_METHODS, *, chunk_size=500,
               references=True, **options) -> list[Cell]:
    """The cells of a grid: every ``dataset x setting x seed`` (``seeds``: an int n = seeds 0..n-1)."""
    if isinstance(datasets, str):
        datasets = [datasets]
    if isinstance(settings, str):
        settings = [settings]
    seeds = range(seeds) if isinstance(seeds, int) else seeds
    return [
        Cell(d, s, seed, tuple(methods), chunk_size, references, tuple(sorted(options.items())))
        for s in settings
        for d in datasets
        for seed in seeds
    ]


# ---------------------------------------------------------------------------
# One cell (runs on a worker)
# ---------------------------------------------------------------------------
@functools.lru_cache(maxsize=2)
def _load_dataset(name: str, data_dir: str | None):
    from ncld_core.data import load_dataset

    return load_dataset(name)


def loaded_sources() -> tuple[str, ...]:
    """The ``ncld_core`` source files a cell's result depends on: :func:`ncld_core.code_version.source_files`."""
    return source_files()


# digest of each source file when this process first saw it loaded (the code it runs)
_SEEN: dict = {}


def _seen_code() -> tuple[dict, str]:
    for rel in loaded_sources():
        if rel not in _SEEN:
            _SEEN[rel] = file_digest(rel)
    return dict(sorted(_SEEN.items())), combine_digests(_SEEN)


def changed_sources(record: dict) -> list[str] | None:
    """The ncld_core files that changed on disk since ``record`` was computed (None: not recorded)."""
    digests = record.get("code_digests")
    if not isinstance(digests, dict) or not digests:
        return None
    return [rel for rel, d in sorted(digests.items()) if file_digest(rel) != d]


@contextlib.contextmanager
def _one_blas_thread():
    # Many small matrices: threaded BLAS is several times slower here (and the
    # parallelism comes from the workers).  threadpoolctl is optional.
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover
        yield
        return
    with threadpool_limits(1):
        yield


def run_cell(cell, data_dir: str | None = None) -> dict:
    """Run one cell: all its methods side by side on its stream; returns the cell's record.

    ``data_dir``: the client's ``NCLD_DATA_DIR``, set in this (worker) process before
    loading.  A stream the builder cannot make (``ValueError``, e.g. a schedule on a
    dataset without single-label instances) gives ``status="skipped"`` with the
    reason; any other failure gives ``status="error"`` with the traceback.
    """
    cell = cell if isinstance(cell, Cell) else Cell.from_dict(cell)
    if data_dir:
        os.environ["NCLD_DATA_DIR"] = data_dir
    cfg = cell.config()
    record = {
        "key": cell.key,
        "cell": cell.to_dict(),
        "config": cfg.to_dict(),
        "host": platform.node(),
        "pid": os.getpid(),
    }
    _seen_code()  # the modules loaded so far, as they are now
    t0 = time.perf_counter()
    try:
        with _one_blas_thread():
            dataset = None
            if cell.dataset != "synthetic":  # read here, on the worker, from its NCLD_DATA_DIR
                dataset = _load_dataset(cell.dataset, os.environ.get("NCLD_DATA_DIR"))
            try:
                stream = cfg.build_stream(dataset)
            except ValueError as exc:
                record.update(status="skipped", reason=str(exc))
                return record
            result = cfg.runner().run(stream, config=cfg.to_dict())
            summary = {
                str(method): {str(k): _plain(v) for k, v in row.items()}
                for method, row in result.summary().to_dict(orient="index").items()
            }
    except Exception as exc:  # noqa: BLE001 -- recorded, the grid goes on
        record.update(status="error", error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc())
        return record
    finally:
        record["cell_seconds"] = time.perf_counter() - t0
        record["code_digests"], record["code"] = _seen_code()
        record["finished_at"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    record.update(
        status="ok",
        stream={
            "name": result.stream_name,
            "n_instances": int(stream.n_instances),
            "n_labels": int(stream.Y_true.shape[1]),
            "chunks": len(result.chunks),
            "change_points": [{"position": int(p), "kind": k} for p, k in result.change_points],
        },
        summary=summary,
    )
    return record


# ---------------------------------------------------------------------------
# The grid
# ---------------------------------------------------------------------------
def _cell_path(out_dir: Path, cell: Cell) -> Path:
    return out_dir / f"{cell.key}.json"


def _error_path(out_dir: Path, cell: Cell) -> Path:
    return out_dir / "errors" / f"{cell.key}.json"


def _read_cell_file(path: Path, cell: Cell) -> dict | None:
    """The stored record of ``cell``, or None (with a warning) when the file is unusable."""
    if not path.is_file():
        return None
    problem = None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        problem = f"not valid JSON ({exc})"
    else:
        if not isinstance(record, dict) or record.get("key") != cell.key:
            problem = "it does not hold this cell"
        elif record.get("status") == "skipped":
            return record
        elif record.get("status") != "ok" or not isinstance(record.get("summary"), dict):
            problem = "no summary"
        else:
            missing = [m for m in cell.methods if m not in record["summary"]]
            if missing:
                problem = f"methods missing from the summary: {', '.join(missing)}"
    if problem:
        aside = path.with_name(path.name + ".corrupt")
        warnings.warn(f"corrupt cell file {path}: {problem}; recomputing (old file kept as {aside.name})",
                      stacklevel=3)
        with contextlib.suppress(OSError):
            os.replace(path, aside)
        return None
    return record


def _plain(v):
    """A summary value as plain JSON: float (full precision), int, bool, str or None for NaN."""
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, (np.integer, int)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        return float(v) if math.isfinite(v) else None
    return v if v is None or isinstance(v, str) else str(v)


def _dumps(record: dict) -> str:
    return json.dumps(record, indent=1, default=json_default, allow_nan=False)


def _store(out_dir: Path, cell: Cell, record: dict):
    if record.get("status") in ("ok", "skipped"):
        write_atomic(_cell_path(out_dir, cell), _dumps(_finite(record)))
        with contextlib.suppress(FileNotFoundError):
            _error_path(out_dir, cell).unlink()
    else:
        write_atomic(_error_path(out_dir, cell), _dumps(_finite(record)))


def _finite(obj):
    """NaN/inf -> None, so the files are strict JSON."""
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def run_grid(cells, out_dir, *, scheduler=None, n_workers: int = 2, progress=True,
             recompute: bool = False) -> pd.DataFrame:
    """Run the cells that have no result in ``out_dir`` and return the long table of all of them.

    Parameters
    ----------
    cells : iterable of Cell (or their dicts)
        Duplicates (same key) are run once.
    out_dir : path
        One ``KEY.json`` per finished (or skipped) cell; failures go to
        ``errors/KEY.json`` and are retried by the next call.  A cell whose file
        exists and is valid is not recomputed; an unreadable one is recomputed
        with a warning.
    scheduler : None, "local", "sequential", a scheduler address or a ``distributed.Client``
        ``None``/``"local"``: a LocalCluster of ``n_workers`` processes for this call;
        an address (``"tcp://host:8786"``): an existing cluster, whose workers need
        ``ncld`` installed and the datasets under the ``NCLD_DATA_DIR`` path passed
        from here; ``"sequential"``: in this process, without Dask.
    progress : bool
        A tqdm bar over the finished cells.
    recompute : bool
        Run every cell again (overwriting its file), e.g. after changing the code;
        each file records the ``code_fingerprint()`` of the sources that made it.

    Returns
    -------
    pandas.DataFrame
        One row per (cell, method): ``key, dataset, setting, stream, seed, method,
        chunk_size, n_instances, change_points, cell_seconds, code, code_current,
        code_changed`` and the summary metrics (``code_current``: the ncld_core sources
        that made the cell are unchanged on disk; ``code_changed``: those that changed).
        ``df.attrs`` holds ``computed`` (keys run by this call), ``loaded`` (read
        from files), ``skipped`` ({key: reason}), ``errors`` ({key: message}) and
        ``wall_seconds``.
    """
    t_start = time.perf_counter()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    unique = {}
    for c in cells:
        c = c if isinstance(c, Cell) else Cell.from_dict(c)
        unique.setdefault(c.key, c)
    cells = list(unique.values())
    for c in cells:  # a bad configuration is a programming error, not a skipped cell
        c.config().check()

    records, loaded = {}, []
    for c in cells:
        rec = None if recompute else _read_cell_file(_cell_path(out_dir, c), c)
        if rec is not None:
            records[c.key] = rec
            loaded.append(c.key)
    todo = [c for c in cells if c.key not in records]
    computed, errors = [], {}
    data_dir = os.environ.get("NCLD_DATA_DIR")

    def finish(cell, rec):
        _store(out_dir, cell, rec)
        if rec.get("status") == "error":
            errors[cell.key] = rec.get("error", "unknown error")
        else:
            records[cell.key] = rec
            computed.append(cell.key)

    if todo:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), desc="cells", unit="cell", disable=not progress)
        try:
            with contextlib.ExitStack() as stack:
                client = None if scheduler == "sequential" else stack.enter_context(dask_client(scheduler, n_workers))
                for i, rec in as_finished(run_cell, [c.to_dict() for c in todo], client, args=(data_dir,),
                                          return_errors=client is not None):
                    c = todo[i]
                    if isinstance(rec, Exception):  # worker died, etc.
                        rec = {"key": c.key, "cell": c.to_dict(), "status": "error",
                               "error": f"{type(rec).__name__}: {rec}",
                               "traceback": "".join(traceback.format_exception(rec))}
                    finish(c, rec)
                    bar.update()
        finally:
            bar.close()
        for key, msg in errors.items():
            warnings.warn(f"cell {key} failed: {msg} (see {out_dir / 'errors' / (key + '.json')})", stacklevel=2)

    table = _long_table([records[c.key] for c in cells if c.key in records])
    table.attrs.update(
        computed=computed,
        loaded=loaded,
        skipped={k: r.get("reason", "") for k, r in records.items() if r.get("status") == "skipped"},
        errors=errors,
        wall_seconds=time.perf_counter() - t_start,
    )
    return table


def load_grid(cells, out_dir) -> pd.DataFrame:
    """The long table of the cells already stored in ``out_dir`` (nothing is run)."""
    out_dir = Path(out_dir)
    recs = []
    for c in cells:
        c = c if isinstance(c, Cell) else Cell.from_dict(c)
        rec = _read_cell_file(_cell_path(out_dir, c), c)
        if rec is not None:
            recs.append(rec)
    return _long_table(recs)


_ID_COLUMNS = ["key", "dataset", "setting", "stream", "seed", "method", "chunk_size", "n_instances",
               "change_points", "cell_seconds", "code", "code_current", "code_changed", "finished_at"]


def _long_table(records) -> pd.DataFrame:
    rows = []
    for rec in records:
        if rec.get("status") != "ok":
            continue
        cell = Cell.from_dict(rec["cell"])
        stream = rec.get("stream", {})
        cps = ";".join(f"{cp['kind']}@{cp['position']}" for cp in stream.get("change_points", []))
        changed = changed_sources(rec)
        current = changed == []
        changed = "(not recorded)" if changed is None else ";".join(changed)
        for method in order_methods(rec["summary"]):
            row = {
                "key": cell.key, "dataset": cell.dataset, "setting": cell.setting, "stream": cell.stream,
                "seed": cell.seed, "method": method, "chunk_size": cell.chunk_size,
                "n_instances": stream.get("n_instances"), "change_points": cps,
                "cell_seconds": rec.get("cell_seconds"), "code": rec.get("code"), "code_current": current,
                "code_changed": changed, "finished_at": rec.get("finished_at"),
            }
            row.update({k: (np.nan if v is None else v) for k, v in rec["summary"][method].items()})
            rows.append(row)
    if not rows:
        return pd.DataFrame(columns=_ID_COLUMNS + list(METRICS))
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------
_BASELINE_ORDER = ("MCIC", "MW", "FALT", "SALT", "PAML-I", "PAML-II", "OSML-ELM", "ELM-CDLL", "River BR-LR")
_REFERENCE_ORDER = ("all-negative", "noisy-prior")


def order_methods(methods) -> list[str]:
    """ELM-NCLD variants, plain ELM, the paper's baselines (its column order), others, then the references."""
    methods = list(dict.fromkeys(methods))
    head = [m for m in ("ELM-O", "ELM-I", "ELM-II", "ELM (plain)") if m in methods]
    base = [m for m in _BASELINE_ORDER if m in methods]
    refs = [m for m in _REFERENCE_ORDER if m in methods]
    rest = [m for m in methods if m not in head + base + refs]
    return head + base + rest + refs


def stream_order(df: pd.DataFrame) -> list[str]:
    """The streams of the long table, by dataset (first appearance), then noisy, _a, _d."""
    order = {s: i for i, s in enumerate(SETTINGS)}
    firsts = df.drop_duplicates("stream")
    datasets = list(dict.fromkeys(firsts["dataset"]))
    firsts = firsts.assign(_d=firsts["dataset"].map(datasets.index), _s=firsts["setting"].map(order))
    return firsts.sort_values(["_d", "_s"])["stream"].tolist()


def _select(df, settings, methods):
    if settings is not None:
        settings = [settings] if isinstance(settings, str) else list(settings)
        df = df[df["setting"].isin(settings)]
    if methods is not None:
        df = df[df["method"].isin(list(methods))]
    return df


def summarize(df: pd.DataFrame, metrics=tuple(METRICS)) -> pd.DataFrame:
    """Mean, std (ddof=1; 0 for one seed) and number of seeds per (stream, method, metric)."""
    g = df.groupby(["stream", "method"], sort=False)[list(metrics)]
    mean, std, n = g.mean(), g.std(ddof=1).fillna(0.0), g.count()
    return pd.concat({"mean": mean, "std": std, "n": n}, axis=1).swaplevel(0, 1, axis=1).sort_index(axis=1)


def results_table(df: pd.DataFrame, *, settings=None, methods=None, metrics=tuple(METRICS),
                  decimals: int = 4, mark: bool = True) -> pd.DataFrame:
    """Table II / IV: rows (stream, metric), columns methods, cells ``mean ± std`` over seeds.

    In each row the best mean is ``**bold**`` and the second best ``<u>underlined</u>``
    (HL: lower is better; F1, AP: higher), compared at the shown precision so that
    ties share the mark.  All methods take part, references included.  The ``± std``
    is left out when every entry has a single seed; a missing entry is ``—``.
    """
    df = _select(df, settings, methods)
    if df.empty:
        return pd.DataFrame()
    methods = order_methods(methods if methods is not None else df["method"].unique())
    methods = [m for m in methods if m in set(df["method"])]
    stats = summarize(df, metrics)
    show_std = bool((stats.xs("n", axis=1, level=1) > 1).to_numpy().any())
    rows, index = [], []
    for stream in stream_order(df):
        for metric in metrics:
            short, lower = METRICS.get(metric, (metric, False))
            means, cells = {}, {}
            for m in methods:
                if (stream, m) not in stats.index or stats.loc[(stream, m), (metric, "n")] == 0:
                    cells[m] = "—"
                    continue
                mu = float(stats.loc[(stream, m), (metric, "mean")])
                sd = float(stats.loc[(stream, m), (metric, "std")])
                means[m] = round(mu, decimals)
                cells[m] = f"{mu:.{decimals}f} ± {sd:.{decimals}f}" if show_std else f"{mu:.{decimals}f}"
            if mark and means:
                distinct = sorted(set(means.values()), reverse=not lower)
                best = distinct[0]
                second = distinct[1] if len(distinct) > 1 else None
                for m, v in means.items():
                    if v == best:
                        cells[m] = f"**{cells[m]}**"
                    elif second is not None and v == second:
                        cells[m] = f"<u>{cells[m]}</u>"
            rows.append([cells[m] for m in methods])
            index.append((stream, short + (" ↓" if lower else " ↑")))
    return pd.DataFrame(rows, index=pd.MultiIndex.from_tuples(index, names=["dataset", "metric"]),
                        columns=methods)


def format_table(df: pd.DataFrame, **kwargs) -> str:
    """:func:`results_table` as a Markdown table (the dataset named on its first row only)."""
    table = results_table(df, **kwargs)
    if table.empty:
        return "_(no results)_\n"
    flat = table.reset_index()
    flat["dataset"] = flat["dataset"].where(~flat["dataset"].duplicated(), "")  # streams are contiguous
    return md_table(["Dataset", "Metric", *table.columns], flat.values.tolist(), "ll" + "r" * len(table.columns)) + "\n"


# ---------------------------------------------------------------------------
# Statistics (autorank)
# ---------------------------------------------------------------------------
@dataclass
class FriedmanResult:
    """Friedman test over per-dataset means and the Nemenyi critical distance (autorank)."""

    metric: str
    n_datasets: int
    n_methods: int
    chi2: float  # Friedman chi^2_F (scipy.stats.friedmanchisquare, as in autorank)
    chi2_critical: float  # chi^2_{1-alpha}(k-1)
    ff: float  # Iman-Davenport F_F, the paper's Table III statistic
    ff_critical: float  # F_{1-alpha}(k-1, (k-1)(N-1))
    pvalue: float  # autorank's Friedman p-value
    cd: float  # Nemenyi critical distance (autorank)
    alpha: float
    mean_ranks: pd.Series  # 1 = best
    rank_result: object = None  # autorank.RankResult (for cd_diagram)
    dropped: tuple = ()  # streams left out because a method had no result

    @property
    def significant(self) -> bool:
        return bool(self.pvalue < self.alpha)


def _block_matrix(df, metric, settings, methods):
    df = _select(df, settings, methods)
    data = df.groupby(["stream", "method"], sort=False)[metric].mean().unstack("method")
    methods = [m for m in order_methods(methods if methods is not None else data.columns) if m in data.columns]
    data = data.reindex(index=[s for s in stream_order(df) if s in data.index], columns=methods)
    dropped = tuple(data.index[data.isna().any(axis=1)])
    return data.dropna(axis=0, how="any"), dropped


def friedman_test(df: pd.DataFrame, metric: str, *, settings=None, methods=None,
                  alpha: float = 0.05) -> FriedmanResult:
    """Friedman test of ``metric`` over the streams (blocks: per-stream means over seeds).

    autorank (forced non-parametric: Friedman + Nemenyi, Demšar 2006) gives the
    p-value, the mean ranks and the critical distance; the chi^2 statistic is
    scipy's (the call autorank makes), and ``F_F = (N-1) chi^2 / (N(k-1) - chi^2)``
    (Iman-Davenport) is the form the paper reports, against ``F(k-1, (k-1)(N-1))``.
    Needs at least 5 streams (autorank's minimum) and 3 methods.
    """
    from autorank import autorank
    from scipy import stats

    lower = METRICS.get(metric, (metric, False))[1]
    data, dropped = _block_matrix(df, metric, settings, methods)
    n, k = data.shape
    if n < 5 or k < 3:  # autorank needs five rows
        raise ValueError(f"needs at least 5 datasets and 3 methods; have {n} and {k}")
    data = data.rename_axis(None, axis=0).rename_axis(None, axis=1).reset_index(drop=True)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        res = autorank(data, alpha=alpha, order="ascending" if lower else "descending",
                       force_mode="nonparametric")
        chi2 = float(stats.friedmanchisquare(*data.transpose().values).statistic)
    ff = (n - 1) * chi2 / (n * (k - 1) - chi2) if n * (k - 1) - chi2 > 0 else math.inf
    return FriedmanResult(
        metric=metric,
        n_datasets=n,
        n_methods=k,
        chi2=chi2,
        chi2_critical=float(stats.chi2.ppf(1 - alpha, k - 1)),
        ff=float(ff),
        ff_critical=float(stats.f.ppf(1 - alpha, k - 1, (k - 1) * (n - 1))),
        pvalue=float(res.pvalue),
        cd=float(res.cd),
        alpha=alpha,
        mean_ranks=res.rankdf["meanrank"].astype(float).sort_values(),
        rank_result=res,
        dropped=dropped,
    )


def cd_diagram(result: FriedmanResult, path, *, title: str | None = None, width: float = 7.0) -> Path:
    """Write the Nemenyi critical-difference diagram (autorank.plot_stats) of ``result`` as a PNG."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from autorank import plot_stats

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        ax = plot_stats(result.rank_result, allow_insignificant=True, width=width)
    fig = ax.get_figure()
    if title:
        fig.suptitle(title, fontsize=10, y=1.08)
    tmp = path.with_name(f".{path.stem}.{uuid.uuid4().hex[:8]}.png")
    fig.savefig(tmp, dpi=110, bbox_inches="tight")
    plt.close(fig)
    os.replace(tmp, path)
    return path
