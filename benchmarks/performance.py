"""Speed and memory of ELM-NCLD, against the paper's Woodbury update and River (``make bench``).

Run ``python -m benchmarks`` (``make bench``): it measures everything below in one run,
prints the report and writes it atomically to ``docs/performance.md``.  ``--quick`` is a
smaller run (about a minute) written to ``benchmarks/out/performance-quick.md``.

What is measured (chunks of N = 500 unless stated; the paper's noise, rho ~ U[0.2, 0.4] per
label, with the true rates given to the model):

1. throughput of the full per-chunk update of :class:`ncld_core.model.ELMNCLD` with its
   default parameters -- ``decision_function`` on the chunk, then ``partial_fit`` -- on
   enron, corel16k001 and rcv1subset5: median over chunks after one warm-up chunk, the
   stream repeated until there are enough timed chunks;
2. on the same chunks, the paper-literal Woodbury update
   (:mod:`benchmarks.woodbury_reference`) against ``ELMNCLD(hessian="paper")`` at the same
   parameters (the same model), and River's binary relevance of logistic regressions
   (:mod:`benchmarks.river_reference`) on a few chunks of enron and rcv1subset5;
3. growth of the per-chunk time with N (corel16k001) and with d (synthetic sparse data);
4. resident memory after 10^4, 10^5, 10^6 instances of the synthetic stream (in a fresh
   process, so nothing else the benchmark loaded counts);
5. the dashboard timings written by the browser test, if present;
6. the targets of the issue, met or missed, and a cProfile of ``partial_fit``.

Only the public API of :mod:`ncld_core` is used, so a re-run measures the current code.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as _dt
import gc
import json
import math
import os
import platform
import pstats
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from benchmarks.common import git_revision, md_table
from ncld_core.files import write_atomic

REPO = Path(__file__).resolve().parents[1]
DOC_PATH = REPO / "docs" / "performance.md"
QUICK_PATH = REPO / "benchmarks" / "out" / "performance-quick.md"
DASHBOARD_TIMING = REPO / "tests" / "artifacts" / "dashboard_timing.json"

CHUNK = 500
THROUGHPUT_DATASETS = ("enron", "corel16k001", "rcv1subset5")
RIVER_DATASETS = ("enron", "rcv1subset5")
SCALING_DATASET = "corel16k001"
NOISE_SEED, FLIP_SEED, MODEL_SEED = 0, 1, 0

#: Targets from the issue.
TARGETS = {
    "woodbury_ratio": 50.0,
    "river_ratio": 20.0,
    # at the defaults; issue 16 set these for its new defaults (L = 300; the 20,000 on enron was at L = 20)
    "rate": {"enron": 10_000.0, "rcv1subset5": 5_000.0},
    "memory_growth_pct": 10.0,
    "dashboard_first_plot_s": 2.0,
    "dashboard_update_ms": 200.0,
    "instrument_pct": 10.0,  # the cardinality estimate and the default detector, share of the chunk time
}


@dataclass
class Config:
    quick: bool
    n_timed: int  # timed chunks per dataset (after one warm-up chunk)
    river_timed: int  # River chunks timed per dataset (after one warm-up chunk)
    sizes: tuple = (250, 500, 1_000, 2_000)
    size_timed: int = 6
    dims: tuple = (100, 1_000, 5_000, 10_000, 50_000)
    dim_timed: int = 8
    dim_labels: int = 20
    dim_nnz: int = 50
    memory_milestones: tuple = (10_000, 100_000, 1_000_000)
    memory_budget_s: float = 300.0
    profile_chunks: int = 10
    total_budget_s: float = 540.0  # the memory run's budget shrinks to keep the whole run inside this
    extra: dict = field(default_factory=dict)


FULL = Config(quick=False, n_timed=20, river_timed=4)
QUICK = Config(
    quick=True,
    n_timed=10,
    river_timed=1,
    sizes=(250, 500, 1_000),
    size_timed=3,
    dims=(100, 1_000, 10_000, 50_000),
    dim_timed=4,
    memory_milestones=(1_000, 10_000, 100_000),
    memory_budget_s=30.0,
    total_budget_s=70.0,
    profile_chunks=5,
)


def log(msg: str):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ====================================================================== machine facts
def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _blas() -> str:
    try:
        from threadpoolctl import threadpool_info

        parts = []
        for info in threadpool_info():
            if info.get("user_api") != "blas":
                continue
            parts.append(
                f"{info.get('internal_api')} {info.get('version')} ({info.get('threading_layer', '?')} threads, "
                f"{info.get('num_threads')} threads, {info.get('architecture', '?')}; via threadpoolctl)"
            )
        if parts:
            return "; ".join(parts)
    except Exception:  # threadpoolctl missing or failing: fall back to numpy's build info
        pass
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg.get("Build Dependencies", {}).get("blas", {})
        return f"{blas.get('name')} {blas.get('version')} (via numpy.show_config)"
    except Exception as exc:
        return f"unknown ({exc})"


def machine_facts() -> dict:
    import psutil
    import scipy

    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = os.cpu_count()
    try:
        import river

        river_version = river.__version__
    except Exception:
        river_version = "not installed"
    return {
        "nproc": affinity,
        "cpu_count": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "memory_gb": psutil.virtual_memory().total / 2**30,
        "blas": _blas(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "river": river_version,
        "platform": platform.platform(),
        "git": git_revision(),
    }


# ====================================================================== data
def noisy_dataset(name):
    """``X``, noisy ``Y`` and the flip rates of dataset ``name`` under the paper's noise."""
    from ncld_core.data import load_dataset
    from ncld_core.stream.noise import apply_label_noise, draw_flip_rates

    ds = load_dataset(name)
    q = ds.Y.shape[1]
    rho_pos, rho_neg = draw_flip_rates(q, random_state=NOISE_SEED)
    Y = apply_label_noise(ds.Y, rho_pos, rho_neg, random_state=FLIP_SEED)
    X = ds.X.tocsr() if sp.issparse(ds.X) else np.asarray(ds.X)
    return X, Y, rho_pos, rho_neg


def chunk_list(X, Y, size, count):
    """``count`` chunks of ``size`` rows, cycling through the full chunks of ``X`` (slices made once)."""
    n_full = X.shape[0] // size
    if n_full < 1:
        raise ValueError(f"{X.shape[0]} instances: not one chunk of {size}")
    distinct = [(X[i * size : (i + 1) * size], Y[i * size : (i + 1) * size]) for i in range(min(n_full, count))]
    return [distinct[i % len(distinct)] for i in range(count)], n_full


def synthetic_sparse(n, d, q, nnz, seed):
    """Sparse rows with ~``nnz`` non-zeros in ``d`` columns, labels from a linear score (cardinality ~2), noisy."""
    from ncld_core.stream.noise import apply_label_noise, draw_flip_rates

    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=min(1.0, nnz / d), format="csr", random_state=rng, dtype=np.float64)
    W = rng.standard_normal((d, q))
    score = np.asarray(X @ W) + rng.normal(0.0, 0.5, size=(n, q))
    Y_true = (score > np.quantile(score, 1.0 - 2.0 / q, axis=0)).astype(np.int8)
    rho_pos, rho_neg = draw_flip_rates(q, random_state=seed + 1)
    return X, apply_label_noise(Y_true, rho_pos, rho_neg, random_state=seed + 2), rho_pos, rho_neg


# ====================================================================== timing helpers
def _time_model_chunk(model, X, Y):
    """Seconds of ``decision_function`` (skipped before the first chunk) and of ``partial_fit``."""
    t0 = time.perf_counter()
    if model.is_fitted:
        model.decision_function(X)
    t1 = time.perf_counter()
    model.partial_fit(X, Y)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1


def _params_txt(model) -> str:
    """The model's parameters, with the per-label flip-rate arrays summarised."""
    parts = []
    for k, v in model.get_params().items():
        if isinstance(v, np.ndarray):
            parts.append(f"{k}=<{v.size} rates in [{v.min():.2f}, {v.max():.2f}]>")
        else:
            parts.append(f"{k}={v!r}")
    return f"{type(model).__name__}({', '.join(parts)})"


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def _blas_one_thread():
    """A context manager limiting BLAS to one thread (threadpoolctl), or None without threadpoolctl."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    controller = ThreadpoolController()
    return lambda: controller.limit(limits=1, user_api="blas")


def _median(xs):
    return float(np.median(xs)) if len(xs) else float("nan")


def _paper_params():
    from benchmarks.woodbury_reference import PAPER_PARAMS

    return dict(PAPER_PARAMS, detector="paper")  # the Woodbury reference runs the paper's Eq. (Hfd)


# ====================================================================== 1 + 2a: throughput and Woodbury
def bench_throughput(cfg: Config) -> dict:
    """ELMNCLD (defaults), ELMNCLD(hessian="paper") and the Woodbury reference on the same chunks."""
    import copy

    from benchmarks.woodbury_reference import WoodburyELMNCLD
    from ncld_core.model import ELMNCLD
    from ncld_core.model.cardinality import moment_cardinality
    from ncld_core.model.detector import ChunkSignal, make_detector

    out = {}
    for name in THROUGHPUT_DATASETS:
        try:
            X, Y, rho_pos, rho_neg = noisy_dataset(name)
        except Exception as exc:
            out[name] = {"error": f"{type(exc).__name__}: {exc}"}
            log(f"{name}: not measured ({exc})")
            continue
        chunks, n_full = chunk_list(X, Y, CHUNK, 1 + cfg.n_timed)
        default = ELMNCLD(rho_pos=rho_pos, rho_neg=rho_neg, random_state=MODEL_SEED)
        paper = ELMNCLD(hessian="paper", rho_pos=rho_pos, rho_neg=rho_neg, random_state=MODEL_SEED, **_paper_params())
        one_thread = ELMNCLD(rho_pos=rho_pos, rho_neg=rho_neg, random_state=MODEL_SEED)
        estimating = ELMNCLD(random_state=MODEL_SEED)  # no rates given: estimated online (ncld_core.model.flip_rates)
        blas1 = _blas_one_thread()
        ref = None
        keys = ("default_predict", "default_fit", "blas1_total", "estimate_total", "paper_total", "ref_total",
                "ref_shared", "ref_woodbury", "instrument")
        # The instruments alone, as partial_fit runs them: the moment estimate, the signal, a copy of the
        # default detector (updates are all-or-nothing) and its update.
        instrument = make_detector(default.detector, default.delta)
        rec = {k: [] for k in keys}
        max_rel_diff = 0.0
        who_all = ["default", "estimate", "paper", "ref"] + (["blas1"] if blas1 else [])
        for i, (Xc, Yc) in enumerate(chunks):
            # rotate the order so that no implementation always runs first (caches, turbo)
            for who in np.roll(who_all, -(i % len(who_all))):
                if who == "default":
                    p, f = _time_model_chunk(default, Xc, Yc)
                    rec["default_predict"].append(p)
                    rec["default_fit"].append(f)
                    t0 = time.perf_counter()
                    card = moment_cardinality(Yc, rho_pos, rho_neg)
                    signal = ChunkSignal(card.per_instance, card.per_instance, Yc.sum(axis=0))
                    instrument = copy.deepcopy(instrument)
                    instrument.update(signal)
                    rec["instrument"].append(time.perf_counter() - t0)
                elif who == "estimate":
                    p, f = _time_model_chunk(estimating, Xc, Yc)
                    rec["estimate_total"].append(p + f)
                elif who == "blas1":
                    with blas1():
                        p, f = _time_model_chunk(one_thread, Xc, Yc)
                    rec["blas1_total"].append(p + f)
                elif who == "paper":
                    p, f = _time_model_chunk(paper, Xc, Yc)
                    rec["paper_total"].append(p + f)
                else:
                    if ref is None:
                        ref = WoodburyELMNCLD.from_model(paper)
                    t0 = time.perf_counter()
                    if ref.is_fitted:
                        ref.decision_function(Xc)
                    t1 = time.perf_counter()
                    ref.partial_fit(Xc, Yc)
                    rec["ref_total"].append(time.perf_counter() - t0)
                    rec["ref_shared"].append(ref.last_seconds_["shared"] + (t1 - t0))
                    rec["ref_woodbury"].append(ref.last_seconds_["woodbury"])
            scale = np.max(np.abs(paper.coef_))
            max_rel_diff = max(max_rel_diff, float(np.max(np.abs(ref.coef_ - paper.coef_)) / scale))
        timed = {k: np.asarray(v[1:]) for k, v in rec.items()}  # drop the warm-up (initialisation) chunk
        default_total = timed["default_predict"] + timed["default_fit"]
        med = {k: _median(v) for k, v in timed.items()}
        med["default_total"] = _median(default_total)
        out[name] = {
            "n_instances": X.shape[0],
            "n_features": X.shape[1],
            "n_labels": Y.shape[1],
            "sparse": bool(sp.issparse(X)),
            "distinct_chunks": min(n_full, 1 + cfg.n_timed),
            "full_chunks": n_full,
            "timed_chunks": cfg.n_timed,
            "median_s": med,
            "p90_default_s": float(np.percentile(default_total, 90)),
            "rate": CHUNK / med["default_total"],
            "blas1_rate": CHUNK / med["blas1_total"] if rec["blas1_total"] else None,
            "estimate_rate": CHUNK / med["estimate_total"],
            "instrument_pct": 100.0 * med["instrument"] / med["default_total"],
            "default_detector": default.detector,
            "paper_rate": CHUNK / med["paper_total"],
            "ref_rate": CHUNK / med["ref_total"],
            "woodbury_ratio": med["ref_total"] / med["paper_total"],
            "woodbury_ratio_default": med["ref_total"] / med["default_total"],
            "woodbury_shared_bound": med["ref_total"] / med["ref_shared"],
            "coef_max_rel_diff": max_rel_diff,
            "default_chunk_s": default_total.tolist(),
            "default_params": _params_txt(default),
            "paper_params": _params_txt(paper),
        }
        log(
            f"{name}: ELMNCLD {med['default_total'] * 1e3:.1f} ms/chunk ({CHUNK / med['default_total']:.0f} inst/s); "
            f"paper form {med['paper_total'] * 1e3:.1f} ms; Woodbury {med['ref_total'] * 1e3:.1f} ms "
            f"(x{out[name]['woodbury_ratio']:.2f}); max |dPhi|/|Phi| {max_rel_diff:.1e}"
        )
    return out


# ====================================================================== 2b: River
def bench_river(cfg: Config, throughput: dict) -> dict:
    """River binary relevance on the warm-up chunk + ``river_timed`` chunks, the same chunks ELMNCLD timed first."""
    out = {}
    try:
        from benchmarks.river_reference import RiverBinaryRelevance
    except Exception as exc:
        return {name: {"error": f"river unavailable: {exc}"} for name in RIVER_DATASETS}
    for name in RIVER_DATASETS:
        th = throughput.get(name, {})
        if "error" in th or not th:
            out[name] = {"error": th.get("error", "throughput not measured")}
            continue
        X, Y, _, _ = noisy_dataset(name)
        chunks, _ = chunk_list(X, Y, CHUNK, 1 + cfg.river_timed)
        br = RiverBinaryRelevance()
        secs = []
        for Xc, Yc in chunks:
            t0 = time.perf_counter()
            br.process_chunk(Xc, Yc)
            secs.append(time.perf_counter() - t0)
        river_med = _median(secs[1:])
        elm_same = _median(th["default_chunk_s"][: cfg.river_timed])  # ELMNCLD's chunks 1..k
        out[name] = {
            "timed_chunks": cfg.river_timed,
            "warmup_s": secs[0],
            "chunk_s": secs[1:],
            "median_s": river_med,
            "rate": CHUNK / river_med,
            "elm_median_s": elm_same,
            "ratio": river_med / elm_same,
        }
        log(f"{name}: River {river_med:.2f} s/chunk ({CHUNK / river_med:.0f} inst/s), ELMNCLD x{river_med / elm_same:.0f}")
    return out


# ====================================================================== 3: growth with N and d
def bench_sizes(cfg: Config) -> dict:
    from benchmarks.woodbury_reference import WoodburyELMNCLD
    from ncld_core.model import ELMNCLD

    try:
        X, Y, rho_pos, rho_neg = noisy_dataset(SCALING_DATASET)
    except Exception as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    rows = []
    for n in cfg.sizes:
        chunks, n_full = chunk_list(X, Y, n, 1 + cfg.size_timed)
        default = ELMNCLD(rho_pos=rho_pos, rho_neg=rho_neg, random_state=MODEL_SEED)
        paper = ELMNCLD(hessian="paper", rho_pos=rho_pos, rho_neg=rho_neg, random_state=MODEL_SEED, **_paper_params())
        ref = None
        t_def, t_pap, t_ref = [], [], []
        for Xc, Yc in chunks:
            p, f = _time_model_chunk(default, Xc, Yc)
            t_def.append(p + f)
            p, f = _time_model_chunk(paper, Xc, Yc)
            t_pap.append(p + f)
            if ref is None:
                ref = WoodburyELMNCLD.from_model(paper)
            t0 = time.perf_counter()
            if ref.is_fitted:
                ref.decision_function(Xc)
            ref.partial_fit(Xc, Yc)
            t_ref.append(time.perf_counter() - t0)
        row = {
            "N": n,
            "timed_chunks": cfg.size_timed,
            "distinct_chunks": min(n_full, 1 + cfg.size_timed),
            "default_s": _median(t_def[1:]),
            "paper_s": _median(t_pap[1:]),
            "ref_s": _median(t_ref[1:]),
        }
        row["rate"] = n / row["default_s"]
        row["ratio"] = row["ref_s"] / row["paper_s"]
        rows.append(row)
        log(f"N={n}: ELMNCLD {row['default_s'] * 1e3:.1f} ms/chunk, Woodbury {row['ref_s'] * 1e3:.1f} ms/chunk")
    return {"dataset": SCALING_DATASET, "rows": rows}


def bench_dims(cfg: Config) -> dict:
    from ncld_core.model import ELMNCLD

    rows = []
    for d in cfg.dims:
        X, Y, rho_pos, rho_neg = synthetic_sparse(CHUNK * (1 + cfg.dim_timed), d, cfg.dim_labels, cfg.dim_nnz, seed=d)
        chunks, _ = chunk_list(X, Y, CHUNK, 1 + cfg.dim_timed)
        model = ELMNCLD(rho_pos=rho_pos, rho_neg=rho_neg, random_state=MODEL_SEED)
        secs = [sum(_time_model_chunk(model, Xc, Yc)) for Xc, Yc in chunks]
        med = _median(secs[1:])
        rows.append({"d": d, "nnz_per_row": X.nnz / X.shape[0], "timed_chunks": cfg.dim_timed, "s": med, "rate": CHUNK / med})
        log(f"d={d}: {med * 1e3:.1f} ms/chunk ({X.nnz / X.shape[0]:.0f} nnz/row)")
    return {"N": CHUNK, "q": cfg.dim_labels, "rows": rows}


# ====================================================================== 4: memory
def _rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def memory_worker(milestones, budget_s) -> dict:
    """Run in a fresh process: stream the synthetic data through ELMNCLD, RSS at each milestone."""
    from ncld_core.model import ELMNCLD
    from ncld_core.stream.synthetic import make_synthetic_stream

    stream = make_synthetic_stream(10_000, n_features=50, n_labels=20, random_state=0)
    X, Y = stream.X, stream.Y_noisy
    chunks = [(X[s : s + CHUNK], Y[s : s + CHUNK]) for s in range(0, X.shape[0] - CHUNK + 1, CHUNK)]
    model = ELMNCLD(rho_pos=stream.rho_pos, rho_neg=stream.rho_neg, random_state=MODEL_SEED)
    gc.collect()
    result = {
        "stream": "make_synthetic_stream(10_000, n_features=50, n_labels=20), its 20 chunks cycled",
        "baseline_mb": _rss_mb(),
        "points": [],
    }
    seen, i, t_start = 0, 0, time.perf_counter()
    for target in milestones:
        if result["points"]:
            elapsed = time.perf_counter() - t_start
            projected = (target - seen) / (seen / elapsed)
            if elapsed + projected > budget_s:
                result["skipped"] = {"instances": target, "projected_s": elapsed + projected, "budget_s": budget_s}
                break
        while seen < target:
            Xc, Yc = chunks[i % len(chunks)]
            if model.is_fitted:
                model.decision_function(Xc)
            model.partial_fit(Xc, Yc)
            seen += Xc.shape[0]
            i += 1
        gc.collect()
        elapsed = time.perf_counter() - t_start
        # long-stream health (issue: 10^6 instances with no NaN/inf, K's condition number bounded)
        finite = bool(np.isfinite(model.K_).all() and np.isfinite(model.coef_).all() and np.isfinite(model.psi_).all())
        result["points"].append(
            {"instances": seen, "rss_mb": _rss_mb(), "elapsed_s": elapsed, "rate": seen / elapsed, "chunks": i,
             "finite": finite, "k_condition": float(model.last_record_.k_condition)}
        )
    try:
        import resource

        result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    except Exception:
        pass
    return result


def bench_memory(cfg: Config, budget_s: float | None = None) -> dict:
    budget_s = cfg.memory_budget_s if budget_s is None else budget_s
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.performance",
        "memory-worker",
        ",".join(str(m) for m in cfg.memory_milestones),
        str(budget_s),
    ]
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    try:
        proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=budget_s * 3 + 120)
    except subprocess.TimeoutExpired:
        return {"error": "the memory run timed out"}
    if proc.returncode != 0:
        return {"error": f"memory worker failed: {proc.stderr.strip()[-800:]}"}
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    pts = res["points"]
    if len(pts) >= 2:
        a, b = pts[-2], pts[-1]
        res["growth_pct"] = 100.0 * (b["rss_mb"] - a["rss_mb"]) / a["rss_mb"]
        res["growth_between"] = (a["instances"], b["instances"])
    for p in pts:
        log(f"memory: {p['instances']:,} instances -> RSS {p['rss_mb']:.1f} MB ({p['rate']:.0f} inst/s)")
    return res


# ====================================================================== 5: dashboard
def _find_numbers(obj, prefix="", kind=(int, float)):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _find_numbers(v, f"{prefix}.{k}" if prefix else str(k), kind)
    elif isinstance(obj, kind) and not isinstance(obj, bool):
        yield prefix, (obj if kind is str else float(obj))


def dashboard_timing(path=DASHBOARD_TIMING) -> dict:
    """Numbers of the browser test's ``dashboard_timing.json`` (any layout), or ``{"missing": True}``."""
    path = Path(path)
    if not path.is_file():
        return {"missing": True, "path": str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)}
    try:
        data = json.loads(path.read_text())
    except Exception as exc:
        return {"missing": True, "error": f"unreadable: {exc}", "path": str(path)}
    numbers = dict(_find_numbers(data))
    stamp = None
    if isinstance(data, dict):
        for key in ("timestamp", "generated_at", "created_at", "date", "time", "when"):
            if key in data and isinstance(data[key], str):
                stamp = data[key]
                break
    mtime = _dt.datetime.fromtimestamp(path.stat().st_mtime).astimezone().isoformat(timespec="seconds")

    # the brief's scenario is medical: prefer entries that name it, then any other
    order = sorted(numbers, key=lambda k: 0 if "medical" in k.lower() else 1)

    def pick(*words, exclude=()):
        for key in order:
            value = numbers[key]
            low = key.lower()
            if all(w in low for w in words) and not any(e in low for e in exclude):
                in_ms = low.endswith("ms") or "_ms" in low or "millis" in low
                seconds = value / 1000.0 if in_ms else value
                return key, seconds
        return None, None

    # the user-facing (browser) time to the first plot if there is one; the per-chunk *update*
    for key_words in (("first", "browser"), ("first",), ("plot",)):
        first_key, first_s = pick(*key_words)
        if first_key:
            break
    # The per-chunk update as the user sees it: the browser's interval between chunks (compute and
    # render), the slowest scenario; older files have only the server's render time.
    intervals = {k: v / 1000.0 for k, v in numbers.items() if "interval" in k.lower() and "browser" in k.lower()}
    if intervals:
        upd_key = max(intervals, key=intervals.get)
        upd_s = intervals[upd_key]
    else:
        for key_words in (("median", "update"), ("update",), ("median",)):
            upd_key, upd_s = pick(*key_words, exclude=("first",))
            if upd_key:
                break
    scope = upd_key.rsplit(".", 1)[0] if upd_key and "." in upd_key else ""
    others = {
        k: v for k, v in numbers.items() if "median" in k.lower() and k != upd_key and k.startswith(scope)
    }
    return {
        "missing": False,
        "path": str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path),
        "timestamp": stamp,
        "mtime": mtime,
        "numbers": numbers,
        "strings": dict(_find_numbers(data, kind=str)),
        "first_plot": (first_key, first_s),
        "update": (upd_key, upd_s),
        "other_medians": others,
    }


def dashboard_latency_section(dash: dict) -> list[str]:
    """The latency targets of the Live run against the browser test's measurements (``latency_<dataset>``,
    ``stop_inside_slow_chunk_*`` in ``dashboard_timing.json``): per-chunk update, Run to first plot, Stop.

    Measured by ``pytest tests/test_dashboard_browser.py -k "latency or slow_chunk"`` (Chromium, 1400 x 1000):
    the per-chunk update is the time from the status line first naming chunk k (sent before the figures) to
    every panel's figure showing chunk k, per animation frame; Run to first plot from the click to all four
    panels drawn; Stop from the click to the status saying "stopped", inside a chunk of tens of seconds.
    """
    if dash.get("missing"):
        return []
    nums = dash.get("numbers", {})
    names = sorted({k.split(".")[0][len("latency_"):] for k in nums if k.startswith("latency_")})
    stops = {k.split(".")[0] for k in nums if k.startswith("stop_inside_slow_chunk")}
    if not names and not stops:
        return []
    upd, first = TARGETS["dashboard_update_ms"], TARGETS["dashboard_first_plot_s"]
    strings = dash.get("strings", {})
    L = ["", "### 5b. Live-run latency against the targets", "",
         "Measured by `pytest tests/test_dashboard_browser.py -k \"latency or slow_chunk\"` in Chromium at "
         "1400 x 1000 (browser clock): per chunk from chunk 2 on, from the status line naming chunk k (sent "
         "before the figures) to every panel showing it (its graph's `data-chunk`, set once drawn). The panels are "
         "updated in place (`dashboard/live_chart.py`): a chunk's four figures travel in one element (one render "
         "of the page), a figure equal to the one drawn is not redrawn, and one that only adds points inside "
         "the axes' ranges is drawn as a plotly transition (the traces, not the axes, legend and hover layers; "
         "`dashboard.figures.fix_y_ranges` rounds the ranges so that they rarely move). Chunk 1's draw mounts the "
         "four graphs and is part of Run to first plot, from the click to the four panels drawn (its own column "
         "gives the draw alone); Stop to the status saying *stopped*, inside a chunk of several seconds (enron, "
         "L = 4000). The large datasets are cut to 13 chunks; emotions and medical (3 and 4 chunks) are run on three "
         "fresh pages, their updates pooled (*chunks measured* counts the updates). *Parsed cache* says whether the dataset had been "
         "parsed before the page was opened; the page reads the selected dataset before Run either way "
         "(`dashboard/controls.py`), so a first read's parse (section 5c) is not in Run to first plot.", "",
         f"| dataset | per-chunk update, median ms (target {upd:.0f}) | p90 ms | chunks measured | "
         f"chunk 1 draw ms | Run to first plot, s (target {first:g}) | parsed cache |",
         "|---|---|---|---|---|---|---|"]
    for n in names:
        g = lambda f: nums.get(f"latency_{n}.{f}")  # noqa: E731
        med, fp, mount = g("median_ms"), g("run_to_first_plot_s"), g("first_draw_ms")
        ok = lambda v, t: "–" if v is None else f"{v:g} {'(met)' if v <= t else '(missed)'}"  # noqa: E731
        shown = lambda v: "–" if v is None else f"{v:g}"  # noqa: E731
        L.append(f"| {n} | {ok(med, upd)} | {shown(g('p90_ms'))} | {g('chunks_measured'):.0f} | {shown(mount)} | "
                 f"{ok(fp, first)} | {strings.get(f'latency_{n}.parsed_cache', '–')} |")
    for key in sorted(stops):
        s_, b, load = nums.get(f"{key}.stop_s_browser"), nums.get(f"{key}.bound_s"), nums.get(f"{key}.load_per_core")
        L += ["", f"Stop inside a slow chunk ({key[len('stop_inside_slow_chunk_'):]}): {s_:g} s "
                  f"(target 1 s; the test's bound {b:g} s at a load of {load:g} runnable processes per core)."]
    return L


def _per_dataset_latency(dash: dict) -> dict:
    """``{dataset: (median per-chunk update ms, Run to first plot s)}`` from the browser test's ``latency_*``."""
    nums = dash.get("numbers", {})
    names = sorted({k.split(".")[0][len("latency_"):] for k in nums if k.startswith("latency_")})
    return {n: (nums.get(f"latency_{n}.median_ms"), nums.get(f"latency_{n}.run_to_first_plot_s")) for n in names}


def _latency_target_rows(per: dict, dash: dict, first_plot: str, update: str) -> list:
    """The two dashboard targets over every dataset the browser test measured: the worst one decides."""
    rows = []
    for what, idx, target, unit in ((first_plot, 1, TARGETS["dashboard_first_plot_s"], " s"),
                                    (update, 0, TARGETS["dashboard_update_ms"], " ms")):
        vals = {n: v[idx] for n, v in per.items() if v[idx] is not None}
        if not vals:
            rows.append(_target_row(what, "no measurement in the file", None, None))
            continue
        worst = max(vals, key=vals.get)
        met = sum(v <= target for v in vals.values())
        txt = (f"worst {vals[worst]:g}{unit} ({worst}); met on {met} of {len(vals)} datasets (section 5b, file of "
               f"{dash['timestamp'] or dash['mtime']})")
        rows.append(_target_row(what, txt, vals[worst], target, False, unit))
    return rows


# ====================================================================== 5c: dataset load
def bench_load(names=("arts", "health", "rcv1subset5", "tmc2007_500", "corel16k001", "enron")) -> dict:
    """Seconds to load each shared dataset by parsing its ARFF and from the parsed cache (best of 3 each).

    The parse is what the first Run on a dataset pays after install (or after its file or the parser changed);
    every later load in any process reads the cache (``ncld_core.data.parsed_cache``).
    """
    import tempfile

    from ncld_core.data import load_dataset, parsed_cache

    rows, old = [], os.environ.get(parsed_cache.CACHE_ENV)
    with tempfile.TemporaryDirectory() as folder:
        try:
            for name in names:
                try:
                    os.environ[parsed_cache.CACHE_ENV] = ""  # off: every load parses
                    parse = min(_timed(load_dataset, name) for _ in range(3))
                    os.environ[parsed_cache.CACHE_ENV] = folder
                    load_dataset(name)  # fills the cache
                    cached = min(_timed(load_dataset, name) for _ in range(3))
                except ValueError as exc:  # not in the data folder
                    log(f"load {name}: skipped ({exc})")
                    continue
                rows.append({"dataset": name, "parse_s": parse, "cached_s": cached, "ratio": parse / cached})
        finally:
            if old is None:
                os.environ.pop(parsed_cache.CACHE_ENV, None)
            else:
                os.environ[parsed_cache.CACHE_ENV] = old
    return {"rows": rows}


def _timed(fn, *args) -> float:
    t = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t


def load_section(load: dict | None) -> list[str]:
    """Section 5c: what the first Run on a dataset pays to parse it, and what every later load pays."""
    if not load or not load.get("rows"):
        return []
    return ["", "### 5c. Loading a dataset: parsing against the parsed cache", "",
            "The first read of a dataset after install parses its ARFF (the dashboard reads a dataset when it "
            "is chosen, before Run); the arrays are then kept in the parsed cache "
            "(`ncld_core.data.parsed_cache`, `~/.cache/ncld/parsed`) and every later load, in any process, "
            "reads them. Best of 3 loads each, this run:", "",
            md_table(["dataset", "parse s", "from the cache s", "ratio"],
                     [[r["dataset"], f"{r['parse_s']:.3f}", f"{r['cached_s']:.3f}", f"{r['ratio']:.0f}x"]
                      for r in load["rows"]])]


# ====================================================================== 5d: the graph's Gram product
GRAM_DATASETS = ("enron", "medical", "langlog", "corel16k001", "tmc2007_500", "rcv1subset5", "arts", "health")


def bench_gram(names=GRAM_DATASETS, sizes=(250, 500)) -> dict:
    """The kNN graph's Gram product of a scaled chunk, dense (BLAS) against sparse, best of 5 each, and which
    one ``ncld_core.model.graph.use_dense_gram`` picks (the dashboard's chunk of 250 and the paper's 500)."""
    import scipy.sparse as sp

    from ncld_core.data import load_dataset
    from ncld_core.model.elm import RandomHiddenLayer
    from ncld_core.model.graph import use_dense_gram

    def best(fn):
        return min(_timed(fn) for _ in range(5))

    rows = []
    for name in names:
        try:
            X = load_dataset(name).X
        except ValueError as exc:
            log(f"gram {name}: skipped ({exc})")
            continue
        if not sp.issparse(X):
            continue
        for n in sizes:
            chunk = sp.csr_matrix(X[n:2 * n])  # the second chunk (the first initialises the model)
            Xs = RandomHiddenLayer(8, "auto", 0).fit(chunk).scale(chunk)
            dense = best(lambda: (lambda D: D @ D.T)(Xs.toarray()))
            sparse = best(lambda: (Xs @ Xs.T).toarray())
            rows.append({"dataset": name, "n": Xs.shape[0], "d": Xs.shape[1], "dense_ms": 1e3 * dense,
                         "sparse_ms": 1e3 * sparse, "picked": "dense" if use_dense_gram(Xs) else "sparse"})
    return {"rows": rows}


def gram_section(gram: dict | None) -> list[str]:
    """Section 5d: does the cost model pick the faster Gram product on each shared dataset?"""
    if not gram or not gram.get("rows"):
        return []
    rows = gram["rows"]
    right = [r for r in rows if (r["dense_ms"] <= r["sparse_ms"]) == (r["picked"] == "dense")]
    lost = sum(max(0.0, r[f"{r['picked']}_ms"] - min(r["dense_ms"], r["sparse_ms"])) for r in rows)
    return ["", "### 5d. The kNN graph's Gram product: dense or sparse", "",
            "A sparse chunk's `X X^T` (N x N, dense) is computed as a dense BLAS product or as a sparse one, "
            "whichever `ncld_core.model.graph.use_dense_gram` expects to cost less. Both timed on the scaled "
            f"second chunk, best of 5, this run: the rule picked the faster product in {len(right)} of {len(rows)} "
            f"cases (its wrong picks cost {lost:.2f} ms in all).", "",
            md_table(["dataset", "N x d", "dense ms", "sparse ms", "picked", "faster"],
                     [[r["dataset"], f"{r['n']} x {r['d']:,}", f"{r['dense_ms']:.2f}", f"{r['sparse_ms']:.2f}",
                       r["picked"], "dense" if r["dense_ms"] <= r["sparse_ms"] else "sparse"] for r in rows])]


# ====================================================================== 6: profile
def profile_partial_fit(name: str, cfg: Config, top: int = 15) -> dict:
    from ncld_core.model import ELMNCLD

    X, Y, rho_pos, rho_neg = noisy_dataset(name)
    chunks, _ = chunk_list(X, Y, CHUNK, 1 + cfg.profile_chunks)
    model = ELMNCLD(rho_pos=rho_pos, rho_neg=rho_neg, random_state=MODEL_SEED)
    model.partial_fit(*chunks[0])
    prof = cProfile.Profile()
    for Xc, Yc in chunks[1:]:
        prof.enable()
        model.partial_fit(Xc, Yc)
        prof.disable()
    st = pstats.Stats(prof)
    entries = []
    for (fname, line, func), (cc, nc, tt, ct, _callers) in st.stats.items():
        entries.append({"where": _short(fname, line, func), "ncalls": nc, "tottime": tt, "cumtime": ct})
    total = max((e["cumtime"] for e in entries if e["where"].endswith("(partial_fit)")), default=None)
    if total is None:
        total = max(e["cumtime"] for e in entries)
    by_cum = sorted(entries, key=lambda e: -e["cumtime"])[:top]
    by_self = sorted(entries, key=lambda e: -e["tottime"])[:8]
    return {
        "dataset": name,
        "chunks": cfg.profile_chunks,
        "total_s": total,
        "by_cumulative": by_cum,
        "by_self": by_self,
    }


def _short(fname, line, func) -> str:
    if fname == "~":
        return func  # built-in
    p = Path(fname)
    for root in (Path(np.__file__).parents[1], REPO):  # site-packages first: the venv lives in the repo
        try:
            return f"{p.relative_to(root)}:{line}({func})"
        except ValueError:
            continue
    return f"{p.name}:{line}({func})"


# ====================================================================== report
def _fmt_rate(x):
    return "n/a" if x is None or not np.isfinite(x) else f"{x:,.0f}"


def _ms(x):
    return "n/a" if x is None or not np.isfinite(x) else (f"{x * 1e3:.1f}" if x < 10 else f"{x * 1e3:,.0f}")


def _target_row(what, measured_txt, value, target, higher_is_better=True, unit=""):
    if value is None or not np.isfinite(value):
        return [what, measured_txt, "not measured in this run"]
    ok = value >= target if higher_is_better else value <= target
    if ok:
        return [what, measured_txt, "**met**"]
    if higher_is_better:
        gap = f"missed: {100 * value / target:.0f} % of the target, {target / value:.2f}x short"
    else:
        gap = f"missed: {value - target:+.3g}{unit} over the target ({value / target:.2f}x)"
    return [what, measured_txt, f"**{gap}**"]


def render(res: dict) -> str:
    cfg = res["config"]
    m = res["machine"]
    th, rv, sz, dm, mem, dash, prof = (
        res["throughput"],
        res["river"],
        res["sizes"],
        res["dims"],
        res["memory"],
        res["dashboard"],
        res["profile"],
    )
    L = []
    cmd = "`python -m benchmarks --quick`" if cfg["quick"] else "`make bench` (= `python -m benchmarks`)"
    c = res["contention"]
    L += [
        "# Performance of ELM-NCLD",
        "",
        f"Generated by {cmd} on {res['date']} in {res['wall_s']:.0f} s."
        + (" **Quick run: fewer chunks and smaller memory milestones; not the reference numbers.**" if cfg["quick"] else ""),
        "Every number in this file comes from that one run (targets are the issue's), except section 5's, which "
        "the browser test writes (`make test`); re-run the command to refresh it.",
        "The harness calls only the public API of `ncld_core`, so a re-run measures the current code.",
        "",
        "## Machine",
        "",
        md_table(["", ""], [
            ["nproc (usable CPUs)", f"{m['nproc']} (os.cpu_count {m['cpu_count']})"],
            ["CPU model (/proc/cpuinfo)", m["cpu_model"]],
            ["memory", f"{m['memory_gb']:.1f} GiB"],
            ["numpy BLAS", m["blas"]],
            ["Python / numpy / scipy / river", f"{m['python']} / {m['numpy']} / {m['scipy']} / {m['river']}"],
            ["platform", m["platform"]],
            ["code", f"git {m['git']}"],
            ["load average (1 min) at the start", f"{res['loadavg_1min_start']:.1f}"],
            ["CPU time of other processes during the run",
             f"{c['others_cpu_s']:.0f} s of {c['available_cpu_s']:.0f} s available ({_busy_pct(res):.0f} %); "
             f"this run used {c['own_cpu_s']:.0f} s"],
        ]),
        "",
        "Other processes' share of the machine's CPU time during each section (a shared machine slows every",
        "timing below; BLAS threads suffer most):",
        "",
        md_table(["section", "wall s", "CPU used by other processes", "load average at its end"],
                 [[name, f"{sec['wall_s']:.0f}", f"{sec['others_pct']:.0f} %", f"{sec['loadavg_1min_end']:.1f}"]
                  for name, sec in c["sections"].items()]),
        "",
    ]
    busy = [n for n, sec in c["sections"].items() if sec["others_pct"] > 10]
    if busy:
        L += [
            f"**Warning: other processes used more than 10 % of the CPU during: {', '.join(busy)}; "
            "those timings are slower and noisier than on an idle machine"
            " (`python -m benchmarks --wait-idle 600` waits for a quiet machine first).**",
            "",
        ]

    # ---------------------------------------------------------------- targets
    rows = []
    for name in THROUGHPUT_DATASETS:
        r = th.get(name, {})
        v = r.get("woodbury_ratio")
        txt = (
            f"{v:.2f}x on {name} ({_ms(r['median_s']['ref_total'])} vs {_ms(r['median_s']['paper_total'])} ms/chunk)"
            if v
            else r.get("error", "n/a")
        )
        rows.append(_target_row(f">= {TARGETS['woodbury_ratio']:.0f}x the Woodbury reference, N = 500, {name}", txt, v, TARGETS["woodbury_ratio"]))
    for name in RIVER_DATASETS:
        r = rv.get(name, {})
        v = r.get("ratio")
        txt = f"{v:.0f}x on {name} ({r['timed_chunks']} River chunk(s) timed)" if v else r.get("error", "n/a")
        rows.append(_target_row(f">= {TARGETS['river_ratio']:.0f}x River binary relevance, {name}", txt, v, TARGETS["river_ratio"]))
    for name in THROUGHPUT_DATASETS:
        r = th.get(name, {})
        v = r.get("instrument_pct")
        txt = (f"{v:.1f} % on {name} ({_ms(r['median_s']['instrument'])} of {_ms(r['median_s']['default_total'])} "
               f"ms/chunk; moment estimate + detector `{r['default_detector']}`)" if v is not None
               else r.get("error", "n/a"))
        rows.append(_target_row(f"cardinality estimate and drift detector <= {TARGETS['instrument_pct']:.0f} % of the "
                                f"chunk time, {name}", txt, v, TARGETS["instrument_pct"], False, " %"))
    for name, target in TARGETS["rate"].items():
        r = th.get(name, {})
        v = r.get("rate")
        txt = f"{_fmt_rate(v)} instances/s" if v else r.get("error", "n/a")
        rows.append(_target_row(f">= {target:,.0f} instances/s on {name} ({m['nproc']} cores)", txt, v, target))
    g = mem.get("growth_pct")
    what = f"memory flat within {TARGETS['memory_growth_pct']:.0f} %"
    if g is not None:
        a, b = mem["growth_between"]
        txt = f"{g:+.1f} % RSS from {a:,} to {b:,} instances"
        rows.append(_target_row(what, txt, abs(g), TARGETS["memory_growth_pct"], False, " %"))
    else:
        rows.append(_target_row(what, mem.get("error", "n/a"), None, None))
    first_plot = f"dashboard: Run to first plot <= {TARGETS['dashboard_first_plot_s']:.0f} s"
    update = f"dashboard: per-chunk update in the browser <= {TARGETS['dashboard_update_ms']:.0f} ms"
    if dash.get("missing"):
        rows += [_target_row(first_plot, "not measured in this run", None, None),
                 _target_row(update, "not measured in this run", None, None)]
    elif per_dataset := _per_dataset_latency(dash):
        rows += _latency_target_rows(per_dataset, dash, first_plot, update)
    else:
        k, s = dash["first_plot"]
        txt = f"{s:.2f} s (`{k}`, file of {dash['timestamp'] or dash['mtime']})" if k else "no such field in the file"
        rows.append(_target_row(first_plot, txt, s, TARGETS["dashboard_first_plot_s"], False, " s"))
        k, s = dash["update"]
        ms = None if s is None else s * 1e3
        txt = f"{ms:.0f} ms (`{k}`)" if k else "no such field in the file"
        if dash.get("other_medians"):
            txt += "; also recorded: " + ", ".join(f"`{ok}` = {ov:g}" for ok, ov in dash["other_medians"].items())
        rows.append(_target_row(update, txt, ms, TARGETS["dashboard_update_ms"], False, " ms"))
    L += ["## Targets (from the issue)", "", md_table(["target", "measured", "verdict"], rows), ""]
    L += _miss_notes(res)

    # ---------------------------------------------------------------- 1 + 2a
    def measured(name, r, n_cols):
        """A dataset's row: its figures, or its error and empty cells."""
        return [name, f"not measured: {r['error']}"] + [""] * (n_cols - 2) if "error" in r else None

    rows = []
    for name in THROUGHPUT_DATASETS:
        r = th.get(name, {})
        md = r.get("median_s")
        rows.append(measured(name, r, 9) or [
            name, f"{r['n_instances']:,} x {r['n_features']:,}{' (sparse)' if r['sparse'] else ''}, {r['n_labels']}",
            f"{r['timed_chunks']} ({r['distinct_chunks']} of {r['full_chunks']})", _ms(md["default_predict"]),
            _ms(md["default_fit"]), f"{_ms(md['default_total'])} ({_ms(r['p90_default_s'])})",
            f"**{_fmt_rate(r['rate'])}**", _fmt_rate(r.get("blas1_rate")),
            f"{_fmt_rate(r.get('estimate_rate'))} ({r['estimate_rate'] / r['rate']:.2f}x)"])
    L += [
        "## 1. Throughput of the full per-chunk update (N = 500)",
        "",
        "Per chunk: `decision_function` on the chunk (test), then `partial_fit` (graph, probability model,",
        "importance weights, drift detector, statistics, solve). Paper's noise: rho_+ and rho_- ~ U[0.2, 0.4]",
        f"per label (`draw_flip_rates(seed={NOISE_SEED})`, `apply_label_noise(seed={FLIP_SEED})`), rates given to the model.",
        "Median over the timed chunks, after one warm-up chunk (the initialisation chunk D_0, not timed);",
        "a dataset with fewer full chunks than needed is repeated from its start.",
        "",
        md_table(["dataset", "N x d, q", "chunks timed (distinct)", "predict ms", "partial_fit ms",
                  "total ms/chunk (p90)", "instances/s", "instances/s, BLAS on 1 thread",
                  "instances/s, rates estimated (ratio)"], rows),
    ]
    any_r = next((r for r in th.values() if "default_params" in r), None)
    if any_r:
        L += [
            "",
            f"Model: `{any_r['default_params']}` (ELMNCLD defaults, the true flip rates given).",
            "\"BLAS on 1 thread\" is a second, identical model timed on the same chunks with BLAS limited to one thread",
            "(`threadpoolctl`); the targets use the default configuration (\"instances/s\"). \"rates estimated\":",
            "`ELMNCLD(random_state=...)` with no rates, which estimates them online (`ncld_core.model.flip_rates`), on the",
            "same chunks; the ratio is its throughput over the column \"instances/s\".",
        ]
    rows = []
    for name in THROUGHPUT_DATASETS:
        r = th.get(name, {})
        md = r.get("median_s")
        rows.append(measured(name, r, 8) or [
            name, _ms(md["paper_total"]), _ms(md["ref_total"]), f"{_ms(md['ref_shared'])} / {_ms(md['ref_woodbury'])}",
            f"**{r['woodbury_ratio']:.2f}x**", f"{r['woodbury_ratio_default']:.2f}x",
            f"{r['woodbury_shared_bound']:.2f}x", f"{r['coef_max_rel_diff']:.1e}"])
    L += [
        "",
        "## 2. Against the references",
        "",
        "### 2a. The paper's Woodbury update (`benchmarks/woodbury_reference.py`)",
        "",
        "Eq. (Update) and Eq. (Z_Update) literally: dense N x N `R = bI + (1-b)(S^T S - S^T - S)`, `R^-1`,",
        "`(R^-1 + H P H^T)^-1`, then P, Phi, Z. Compared with `ELMNCLD(hessian=\"paper\")` at the same",
        f"parameters ({', '.join(f'{k}={v:g}' if isinstance(v, float) else f'{k}={v}' for k, v in _paper_params().items())}, the paper's; beta > 1/2 so R is invertible),",
        "i.e. the same model: the largest relative difference of Phi between the two over all chunks is listed.",
        "Both share the hidden layer, the graph weights S, the probability model and the importance weights;",
        "timed on the same chunks as section 1, interleaved (order rotated per chunk), predict + update.",
        "",
        md_table(["dataset", "ELMNCLD paper form ms/chunk", "Woodbury ms/chunk", "of which shared steps / N x N algebra",
                  "ratio", "ratio vs ELMNCLD defaults", "bound if the update were free", "max rel. diff of Phi"], rows),
    ]
    rows = [measured(name, r, 6) or [name, r["timed_chunks"], _ms(r["median_s"]), _fmt_rate(r["rate"]),
                                     _ms(r["elm_median_s"]), f"**{r['ratio']:.0f}x**"]
            for name in RIVER_DATASETS for r in [rv.get(name, {})]]
    L += [
        "",
        "\"Bound if the update were free\" = Woodbury total / its shared steps (hidden layer, graph, probability model,",
        "weights, detector, predict): the ratio any implementation computing the same S and P_D could reach at N = 500.",
        "",
        "### 2b. River: binary relevance of logistic regressions (`benchmarks/river_reference.py`)",
        "",
        "`river.multioutput.PerOutputClassifier(river.linear_model.LogisticRegression())`, instance by instance:",
        "`predict_proba_one` then `learn_one`, features as dicts of the sparse rows (conversion included).",
        "River is slow, so only the warm-up chunk plus the first chunks ELMNCLD timed in section 1 are run.",
        "",
        md_table(["dataset", "River chunks timed (+1 warm-up)", "River ms/chunk", "River instances/s",
                  "ELMNCLD ms/chunk, same chunks", "ratio"], rows),
    ]

    # ---------------------------------------------------------------- 3
    L += ["", "## 3. How the cost grows", ""]
    if "error" in sz:
        L.append(f"Chunk size: not measured ({sz['error']}).")
    else:
        L += [
            f"### With the chunk size N ({sz['dataset']}, median of {cfg['size_timed']} chunks after a warm-up)",
            "",
            md_table(["N", "ELMNCLD ms/chunk", "ELMNCLD instances/s", "ELMNCLD paper form ms/chunk", "Woodbury ms/chunk",
                      "Woodbury / paper form"],
                     [[f"{r['N']:,}", _ms(r["default_s"]), _fmt_rate(r["rate"]), _ms(r["paper_s"]), _ms(r["ref_s"]),
                       f"{r['ratio']:.2f}x"] for r in sz["rows"]]),
        ]
        rows = sz["rows"]
        if len(rows) >= 2:
            e_def = math.log(rows[-1]["default_s"] / rows[0]["default_s"]) / math.log(rows[-1]["N"] / rows[0]["N"])
            e_ref = math.log(rows[-1]["ref_s"] / rows[0]["ref_s"]) / math.log(rows[-1]["N"] / rows[0]["N"])
            L += [
                "",
                f"Empirical exponent of time per chunk in N from {rows[0]['N']} to {rows[-1]['N']}: "
                f"ELMNCLD {e_def:.2f}, Woodbury {e_ref:.2f} (1 = linear, 3 = the N x N inverses).",
            ]
    L += [
        "",
        f"### With the feature count d (synthetic sparse, N = {dm['N']}, q = {dm['q']}, median of {cfg['dim_timed']} chunks after a warm-up)",
        "",
        "`scipy.sparse.random` rows with about 50 non-zeros, labels from a noisy linear score (cardinality 2), paper's noise.",
        "",
        md_table(["d", "non-zeros per row", "ms/chunk", "instances/s"],
                 [[f"{r['d']:,}", f"{r['nnz_per_row']:.0f}", _ms(r["s"]), _fmt_rate(r["rate"])] for r in dm["rows"]]),
    ]

    # ---------------------------------------------------------------- 4
    L += ["", "## 4. Resident memory", ""]
    if "error" in mem:
        L.append(f"Not measured: {mem['error']}")
    else:
        rows = [["0 (data generated, model empty)", 0, f"{mem['baseline_mb']:.1f}", "", "", "", ""]]
        rows += [[f"{p['instances']:,}", f"{p['chunks']:,}", f"{p['rss_mb']:.1f}", f"{p['elapsed_s']:.1f}",
                  _fmt_rate(p["rate"]), "yes" if p.get("finite") else "NO", f"{p.get('k_condition', float('nan')):,.0f}"]
                 for p in mem["points"]]
        if "skipped" in mem:
            s = mem["skipped"]
            rows.append([f"{s['instances']:,}", f"skipped: at the measured rate the run would take "
                         f"{s['projected_s']:.0f} s, over its budget of {s['budget_s']:.0f} s", "", "", "", "", ""])
        L += [
            f"A fresh Python process streams {mem['stream']} through ELMNCLD (defaults, rates given),",
            "predict + partial_fit per chunk of 500; RSS by psutil after `gc.collect()` at each milestone.",
            "",
            "The last two columns are the long-stream check: the model's state (K, Phi, Psi) all finite,",
            "and the condition number of K after the last chunk.",
            "",
            md_table(["instances", "chunks", "RSS MB", "elapsed s", "instances/s", "state finite", "cond(K)"], rows),
        ]
        if "growth_pct" in mem:
            a, b = mem["growth_between"]
            L += ["", f"Growth from {a:,} to {b:,} instances: **{mem['growth_pct']:+.2f} %**."]
        if "peak_rss_mb" in mem:
            L.append(f"Peak RSS of the process: {mem['peak_rss_mb']:.1f} MB.")

    # ---------------------------------------------------------------- 5
    L += ["", "## 5. Dashboard", ""]
    if dash.get("missing"):
        L.append(
            f"Not measured in this run: `{dash.get('path')}` (written by the browser test) does not exist"
            + (f" ({dash['error']})" if dash.get("error") else "")
            + "; this benchmark does not start a browser."
        )
    else:
        L += [
            f"From `{dash['path']}` (written by the browser test, not by this run): timestamp "
            f"{dash['timestamp'] or 'none in the file'}, file modified {dash['mtime']}.",
            "",
            md_table(["field", "value"], [[k, f"{v:g}"] for k, v in dash["numbers"].items()]
                     + [[k, v] for k, v in dash.get("strings", {}).items()]),
        ]
    L += dashboard_latency_section(dash)
    L += load_section(res.get("load"))
    L += gram_section(res.get("gram"))

    # ---------------------------------------------------------------- 6
    L += ["", "## 6. Profile of `partial_fit`", ""]
    if "error" in prof:
        L.append(f"Not measured: {prof['error']}")
    else:
        n, total = prof["chunks"], prof["total_s"]
        L += [
            f"cProfile of ELMNCLD.partial_fit (defaults) on {n} chunks of {prof['dataset']} after a warm-up chunk:",
            f"{total * 1e3 / n:.1f} ms per chunk under the profiler (profiling adds overhead).",
            "",
            "Top functions by cumulative time (BLAS products written with `@` count in the calling function):",
            "",
            md_table(["function", "calls per chunk", "cumulative ms per chunk", "% of partial_fit"],
                     [[f"`{e['where']}`", f"{e['ncalls'] / n:.0f}", f"{e['cumtime'] * 1e3 / n:.2f}",
                       f"{100 * e['cumtime'] / total:.0f} %"] for e in prof["by_cumulative"]]),
            "",
            "Top functions by own (self) time:",
            "",
            md_table(["function", "self ms per chunk", "%"],
                     [[f"`{e['where']}`", f"{e['tottime'] * 1e3 / n:.2f}", f"{100 * e['tottime'] / total:.0f} %"]
                      for e in prof["by_self"]]),
        ]
    L += [
        "",
        "## How to reproduce",
        "",
        "`make bench` (full, writes this file) or `python -m benchmarks --quick` (about a minute, writes",
        "`benchmarks/out/performance-quick.md`); the raw numbers of the run go to `benchmarks/out/performance.json`",
        "(`performance-quick.json`); `--wait-idle SECONDS` first waits for the load average to fall below 1.\n"
        "Datasets come from `NCLD_DATA_DIR`. The equality of the Woodbury reference and",
        "`ELMNCLD(hessian=\"paper\")` is tested in `tests/test_woodbury_reference.py`.",
        "",
    ]
    return "\n".join(L)


def _busy_pct(res) -> float:
    c = res["contention"]
    return 100.0 * c["others_cpu_s"] / c["available_cpu_s"] if c["available_cpu_s"] else float("nan")


def _miss_notes(res) -> list:
    """A few sentences, computed from this run, on why targets were missed."""
    th, prof = res["throughput"], res["profile"]
    notes = []
    woodbury_missed = [n for n, r in th.items() if r.get("woodbury_ratio") and r["woodbury_ratio"] < TARGETS["woodbury_ratio"]]
    if woodbury_missed:
        parts = [
            f"{n}: the reference spends {_ms(th[n]['median_s']['ref_shared'])} of {_ms(th[n]['median_s']['ref_total'])} ms "
            f"in steps both implementations share, which bounds any update rule at "
            f"{th[n]['woodbury_shared_bound']:.2f}x (measured {th[n]['woodbury_ratio']:.2f}x"
            + ("; above the bound: the two medians come from different chunks' timings)"
               if th[n]["woodbury_ratio"] > th[n]["woodbury_shared_bound"] else ")")
            for n in woodbury_missed
        ]
        notes.append(
            "- **Woodbury ratio**: at N = 500 the shared steps, not the N x N algebra, set the ratio; "
            + "; ".join(parts)
            + ". Section 3 shows how the ratio changes with N."
        )
    rate_missed = [n for n, t in TARGETS["rate"].items() if th.get(n, {}).get("rate") and th[n]["rate"] < t]
    if (rate_missed or woodbury_missed) and "by_self" in prof:
        tops = [e for e in prof["by_cumulative"] if not e["where"].endswith("(partial_fit)")][:5]
        selfs = prof["by_self"][:4]
        notes.append(
            f"- **Profile** ({prof['dataset']}, section 6): by cumulative time "
            + ", ".join(f"`{e['where']}` {100 * e['cumtime'] / prof['total_s']:.0f} %" for e in tops)
            + "; by own time "
            + ", ".join(f"`{e['where']}` {100 * e['tottime'] / prof['total_s']:.0f} %" for e in selfs)
            + "."
        )
    if rate_missed:
        notes.append(
            "- **Throughput** missed on "
            + ", ".join(
                f"{n} ({_ms(CHUNK / TARGETS['rate'][n])} ms/chunk needed, {_ms(th[n]['median_s']['default_total'])} measured"
                + (
                    f"; {_fmt_rate(th[n]['blas1_rate'])} instances/s with BLAS on one thread"
                    if th[n].get("blas1_rate")
                    else ""
                )
                + ")"
                for n in rate_missed
            )
            + "."
        )
    return (["Notes on the misses (from this run):", "", *notes, ""]) if notes else []


# ====================================================================== driver
def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.floating, np.integer)):
        return obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def _cpu_seconds():
    """(busy CPU seconds of the whole machine, CPU seconds of this process and its finished children)."""
    import psutil

    t = psutil.cpu_times()
    busy = sum(t) - t.idle - getattr(t, "iowait", 0.0)
    c = psutil.Process().cpu_times()
    return busy, c.user + c.system + c.children_user + c.children_system


def run(cfg: Config) -> dict:
    t0 = time.perf_counter()
    busy0, own0 = _cpu_seconds()
    os.environ.setdefault("NCLD_DATA_DIR", str(REPO.parent / "shared" / "datasets"))
    nproc = None
    sections = {}

    def section(name, fn, *args):
        """Run one measurement, recording how much of the machine other processes used meanwhile."""
        w0, (b0, o0) = time.perf_counter(), _cpu_seconds()
        value = fn(*args)
        w1, (b1, o1) = time.perf_counter(), _cpu_seconds()
        sections[name] = {
            "wall_s": w1 - w0,
            "others_pct": 100.0 * max(0.0, (b1 - b0) - (o1 - o0)) / max((w1 - w0) * nproc, 1e-9),
            "loadavg_1min_end": _load(),
        }
        return value

    res = {
        "date": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "config": {k: v for k, v in cfg.__dict__.items() if k != "extra"},
        "machine": machine_facts(),
        "loadavg_1min_start": _load(),
    }
    nproc = res["machine"]["nproc"]
    log(f"machine: {nproc} CPUs, {res['machine']['cpu_model']}, {res['machine']['blas']}")
    res["throughput"] = section("1-2a throughput + Woodbury", bench_throughput, cfg)
    res["river"] = section("2b River", bench_river, cfg, res["throughput"])
    res["sizes"] = section("3 growth with N", bench_sizes, cfg)
    res["dims"] = section("3 growth with d", bench_dims, cfg)
    # the 10^6 leg runs only if its projected time fits in what is left of the run's budget
    left = cfg.total_budget_s - (time.perf_counter() - t0) - 20.0
    res["memory"] = section("4 memory", bench_memory, cfg, max(10.0, min(cfg.memory_budget_s, left)))
    res["dashboard"] = dashboard_timing()
    res["load"] = section("5c dataset load", bench_load)
    res["gram"] = section("5d Gram product", bench_gram)
    # profile the dataset furthest from its throughput target
    margins = {n: res["throughput"][n]["rate"] / t for n, t in TARGETS["rate"].items() if "rate" in res["throughput"].get(n, {})}
    target = min(margins, key=margins.get) if margins else None
    try:
        res["profile"] = (
            section("6 profile", profile_partial_fit, target, cfg) if target else {"error": "no dataset measured"}
        )
    except Exception as exc:
        res["profile"] = {"error": f"{type(exc).__name__}: {exc}"}
    res["wall_s"] = time.perf_counter() - t0
    busy1, own1 = _cpu_seconds()
    res["contention"] = {
        "sections": sections,
        "others_cpu_s": max(0.0, (busy1 - busy0) - (own1 - own0)),
        "own_cpu_s": own1 - own0,
        "available_cpu_s": res["wall_s"] * nproc,
    }
    return res


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smaller run (about a minute), not written to docs/")
    parser.add_argument(
        "--wait-idle",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="first wait up to SECONDS for the 1-minute load average to fall below 1 (a shared machine)",
    )
    parser.add_argument("--output", type=Path, default=None, help="where to write the report (default: docs/performance.md, or benchmarks/out/performance-quick.md with --quick)")
    args = parser.parse_args(argv)
    cfg = QUICK if args.quick else FULL
    out = args.output or (QUICK_PATH if cfg.quick else DOC_PATH)
    if args.wait_idle > 0:
        t_wait = time.perf_counter()
        while _load() >= 1.0 and time.perf_counter() - t_wait < args.wait_idle:
            log(f"waiting for an idle machine: load average {_load():.1f}")
            time.sleep(15)
    res = run(cfg)
    text = render(res)
    print(text)
    write_atomic(out, text)
    raw = REPO / "benchmarks" / "out" / ("performance-quick.json" if cfg.quick else "performance.json")
    write_atomic(raw, json.dumps(_jsonable(res), indent=1))
    log(f"wrote {out} and {raw} ({res['wall_s']:.0f} s)")
    return 0


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "memory-worker":
        milestones = tuple(int(x) for x in sys.argv[2].split(","))
        print(json.dumps(memory_worker(milestones, float(sys.argv[3]))))
    else:
        sys.exit(main())
