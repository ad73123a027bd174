"""Section 4: resident memory along a long synthetic stream, in a fresh process."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time

import numpy as np

from benchmarks.common import REPO, md_table
from benchmarks.performance.formatting import fmt_rate, target_row
from benchmarks.performance.protocol import CHUNK, MODEL_SEED, TARGETS, Config, log


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


def render(mem: dict) -> list[str]:
    """Section 4 of the report."""
    L = ["", "## 4. Resident memory", ""]
    if "error" in mem:
        L.append(f"Not measured: {mem['error']}")
    else:
        rows = [["0 (data generated, model empty)", 0, f"{mem['baseline_mb']:.1f}", "", "", "", ""]]
        rows += [[f"{p['instances']:,}", f"{p['chunks']:,}", f"{p['rss_mb']:.1f}", f"{p['elapsed_s']:.1f}",
                  fmt_rate(p["rate"]), "yes" if p.get("finite") else "NO", f"{p.get('k_condition', float('nan')):,.0f}"]
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

    return L


def target_rows(mem: dict) -> list[list[str]]:
    """The memory target: flat within a few per cent between the last two milestones."""
    rows = []
    g = mem.get("growth_pct")
    what = f"memory flat within {TARGETS['memory_growth_pct']:.0f} %"
    if g is not None:
        a, b = mem["growth_between"]
        txt = f"{g:+.1f} % RSS from {a:,} to {b:,} instances"
        rows.append(target_row(what, txt, abs(g), TARGETS["memory_growth_pct"], False, " %"))
    else:
        rows.append(target_row(what, mem.get("error", "n/a"), None, None))
    return rows
