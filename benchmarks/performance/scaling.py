"""Section 3: how the per-chunk time grows with the chunk size N and with the feature count d."""

from __future__ import annotations

import math

from benchmarks.common import md_table
from benchmarks.performance.chunks import (
    chunk_list, median, noisy_dataset, paper_params, synthetic_sparse, time_model_chunk,
)
from benchmarks.performance.formatting import fmt_ms, fmt_rate
from benchmarks.performance.protocol import CHUNK, MODEL_SEED, SCALING_DATASET, Config, log


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
        paper = ELMNCLD(hessian="paper", rho_pos=rho_pos, rho_neg=rho_neg, random_state=MODEL_SEED, **paper_params())
        ref = None
        t_def, t_pap, t_ref = [], [], []
        for Xc, Yc in chunks:
            p, f = time_model_chunk(default, Xc, Yc)
            t_def.append(p + f)
            p, f = time_model_chunk(paper, Xc, Yc)
            t_pap.append(p + f)
            if ref is None:
                ref = WoodburyELMNCLD.from_model(paper)
            t_ref.append(sum(time_model_chunk(ref, Xc, Yc)))
        row = {
            "N": n,
            "timed_chunks": cfg.size_timed,
            "distinct_chunks": min(n_full, 1 + cfg.size_timed),
            "default_s": median(t_def[1:]),
            "paper_s": median(t_pap[1:]),
            "ref_s": median(t_ref[1:]),
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
        secs = [sum(time_model_chunk(model, Xc, Yc)) for Xc, Yc in chunks]
        med = median(secs[1:])
        rows.append({"d": d, "nnz_per_row": X.nnz / X.shape[0], "timed_chunks": cfg.dim_timed, "s": med, "rate": CHUNK / med})
        log(f"d={d}: {med * 1e3:.1f} ms/chunk ({X.nnz / X.shape[0]:.0f} nnz/row)")
    return {"N": CHUNK, "q": cfg.dim_labels, "rows": rows}


def render(sz: dict, dm: dict, cfg: dict) -> list[str]:
    """Section 3 of the report."""
    L = ["", "## 3. How the cost grows", ""]
    if "error" in sz:
        L.append(f"Chunk size: not measured ({sz['error']}).")
    else:
        L += [
            f"### With the chunk size N ({sz['dataset']}, median of {cfg['size_timed']} chunks after a warm-up)",
            "",
            md_table(["N", "ELMNCLD ms/chunk", "ELMNCLD instances/s", "ELMNCLD paper form ms/chunk", "Woodbury ms/chunk",
                      "Woodbury / paper form"],
                     [[f"{r['N']:,}", fmt_ms(r["default_s"]), fmt_rate(r["rate"]), fmt_ms(r["paper_s"]), fmt_ms(r["ref_s"]),
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
                 [[f"{r['d']:,}", f"{r['nnz_per_row']:.0f}", fmt_ms(r["s"]), fmt_rate(r["rate"])] for r in dm["rows"]]),
    ]

    return L
