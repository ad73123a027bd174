"""Section 6: a cProfile of ``partial_fit`` on the dataset furthest from its throughput target."""

from __future__ import annotations

import cProfile
import pstats
from pathlib import Path

import numpy as np

from benchmarks.common import REPO, md_table
from benchmarks.performance.chunks import chunk_list, noisy_dataset
from benchmarks.performance.protocol import CHUNK, MODEL_SEED, Config


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


def render(prof: dict) -> list[str]:
    """Section 6 of the report."""
    L = ["", "## 6. Profile of `partial_fit`", ""]
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
    return L
