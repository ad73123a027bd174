"""Sections 1 and 2: the full per-chunk update at the defaults, against the paper's Woodbury update and River."""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from benchmarks.common import md_table
from benchmarks.performance.chunks import chunk_list, median, noisy_dataset, paper_params, time_model_chunk
from benchmarks.performance.formatting import fmt_ms, fmt_rate, target_row
from benchmarks.performance.protocol import (
    CHUNK, FLIP_SEED, MODEL_SEED, NOISE_SEED, RIVER_DATASETS, TARGETS, THROUGHPUT_DATASETS, Config, log,
)


def _params_txt(model) -> str:
    """The model's parameters, with the per-label flip-rate arrays summarised."""
    parts = []
    for k, v in model.get_params().items():
        if isinstance(v, np.ndarray):
            parts.append(f"{k}=<{v.size} rates in [{v.min():.2f}, {v.max():.2f}]>")
        else:
            parts.append(f"{k}={v!r}")
    return f"{type(model).__name__}({', '.join(parts)})"


def _blas_one_thread():
    """A context manager limiting BLAS to one thread (threadpoolctl), or None without threadpoolctl."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    controller = ThreadpoolController()
    return lambda: controller.limit(limits=1, user_api="blas")


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
        paper = ELMNCLD(hessian="paper", rho_pos=rho_pos, rho_neg=rho_neg, random_state=MODEL_SEED, **paper_params())
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
                    p, f = time_model_chunk(default, Xc, Yc)
                    rec["default_predict"].append(p)
                    rec["default_fit"].append(f)
                    t0 = time.perf_counter()
                    card = moment_cardinality(Yc, rho_pos, rho_neg)
                    signal = ChunkSignal(card.per_instance, card.per_instance, Yc.sum(axis=0))
                    instrument = copy.deepcopy(instrument)
                    instrument.update(signal)
                    rec["instrument"].append(time.perf_counter() - t0)
                elif who == "estimate":
                    p, f = time_model_chunk(estimating, Xc, Yc)
                    rec["estimate_total"].append(p + f)
                elif who == "blas1":
                    with blas1():
                        p, f = time_model_chunk(one_thread, Xc, Yc)
                    rec["blas1_total"].append(p + f)
                elif who == "paper":
                    p, f = time_model_chunk(paper, Xc, Yc)
                    rec["paper_total"].append(p + f)
                else:
                    if ref is None:
                        ref = WoodburyELMNCLD.from_model(paper)
                    p, f = time_model_chunk(ref, Xc, Yc)
                    rec["ref_total"].append(p + f)
                    rec["ref_shared"].append(ref.last_seconds_["shared"] + p)
                    rec["ref_woodbury"].append(ref.last_seconds_["woodbury"])
            scale = np.max(np.abs(paper.coef_))
            max_rel_diff = max(max_rel_diff, float(np.max(np.abs(ref.coef_ - paper.coef_)) / scale))
        timed = {k: np.asarray(v[1:]) for k, v in rec.items()}  # drop the warm-up (initialisation) chunk
        default_total = timed["default_predict"] + timed["default_fit"]
        med = {k: median(v) for k, v in timed.items()}
        med["default_total"] = median(default_total)
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
        river_med = median(secs[1:])
        elm_same = median(th["default_chunk_s"][: cfg.river_timed])  # ELMNCLD's chunks 1..k
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


def render(th: dict, rv: dict) -> list[str]:
    """Sections 1, 2a and 2b of the report."""
    L = []

    def measured(name, r, n_cols):
        """A dataset's row: its figures, or its error and empty cells."""
        return [name, f"not measured: {r['error']}"] + [""] * (n_cols - 2) if "error" in r else None

    rows = []
    for name in THROUGHPUT_DATASETS:
        r = th.get(name, {})
        md = r.get("median_s")
        rows.append(measured(name, r, 9) or [
            name, f"{r['n_instances']:,} x {r['n_features']:,}{' (sparse)' if r['sparse'] else ''}, {r['n_labels']}",
            f"{r['timed_chunks']} ({r['distinct_chunks']} of {r['full_chunks']})", fmt_ms(md["default_predict"]),
            fmt_ms(md["default_fit"]), f"{fmt_ms(md['default_total'])} ({fmt_ms(r['p90_default_s'])})",
            f"**{fmt_rate(r['rate'])}**", fmt_rate(r.get("blas1_rate")),
            f"{fmt_rate(r.get('estimate_rate'))} ({r['estimate_rate'] / r['rate']:.2f}x)"])
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
            name, fmt_ms(md["paper_total"]), fmt_ms(md["ref_total"]), f"{fmt_ms(md['ref_shared'])} / {fmt_ms(md['ref_woodbury'])}",
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
        f"parameters ({', '.join(f'{k}={v:g}' if isinstance(v, float) else f'{k}={v}' for k, v in paper_params().items())}, the paper's; beta > 1/2 so R is invertible),",
        "i.e. the same model: the largest relative difference of Phi between the two over all chunks is listed.",
        "Both share the hidden layer, the graph weights S, the probability model and the importance weights;",
        "timed on the same chunks as section 1, interleaved (order rotated per chunk), predict + update.",
        "",
        md_table(["dataset", "ELMNCLD paper form ms/chunk", "Woodbury ms/chunk", "of which shared steps / N x N algebra",
                  "ratio", "ratio vs ELMNCLD defaults", "bound if the update were free", "max rel. diff of Phi"], rows),
    ]
    rows = [measured(name, r, 6) or [name, r["timed_chunks"], fmt_ms(r["median_s"]), fmt_rate(r["rate"]),
                                     fmt_ms(r["elm_median_s"]), f"**{r['ratio']:.0f}x**"]
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

    return L


def target_rows(th: dict, rv: dict, nproc: int) -> list[list[str]]:
    """The targets of sections 1 and 2: the Woodbury and River ratios, the instruments' share, the throughput."""
    rows = []
    for name in THROUGHPUT_DATASETS:
        r = th.get(name, {})
        v = r.get("woodbury_ratio")
        txt = (
            f"{v:.2f}x on {name} ({fmt_ms(r['median_s']['ref_total'])} vs {fmt_ms(r['median_s']['paper_total'])} ms/chunk)"
            if v
            else r.get("error", "n/a")
        )
        rows.append(target_row(f">= {TARGETS['woodbury_ratio']:.0f}x the Woodbury reference, N = 500, {name}", txt, v, TARGETS["woodbury_ratio"]))
    for name in RIVER_DATASETS:
        r = rv.get(name, {})
        v = r.get("ratio")
        txt = f"{v:.0f}x on {name} ({r['timed_chunks']} River chunk(s) timed)" if v else r.get("error", "n/a")
        rows.append(target_row(f">= {TARGETS['river_ratio']:.0f}x River binary relevance, {name}", txt, v, TARGETS["river_ratio"]))
    for name in THROUGHPUT_DATASETS:
        r = th.get(name, {})
        v = r.get("instrument_pct")
        txt = (f"{v:.1f} % on {name} ({fmt_ms(r['median_s']['instrument'])} of {fmt_ms(r['median_s']['default_total'])} "
               f"ms/chunk; moment estimate + detector `{r['default_detector']}`)" if v is not None
               else r.get("error", "n/a"))
        rows.append(target_row(f"cardinality estimate and drift detector <= {TARGETS['instrument_pct']:.0f} % of the "
                                f"chunk time, {name}", txt, v, TARGETS["instrument_pct"], False, " %"))
    for name, target in TARGETS["rate"].items():
        r = th.get(name, {})
        v = r.get("rate")
        txt = f"{fmt_rate(v)} instances/s" if v else r.get("error", "n/a")
        rows.append(target_row(f">= {target:,.0f} instances/s on {name} ({nproc} cores)", txt, v, target))
    return rows
