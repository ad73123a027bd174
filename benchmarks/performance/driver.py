"""One run of every section, and the command line (``python -m benchmarks``)."""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import time
from pathlib import Path

import numpy as np

from benchmarks.common import REPO, write_atomic
from benchmarks.performance.dashboard import dashboard_timing
from benchmarks.performance.knobs import bench_knobs
from benchmarks.performance.loading import bench_gram, bench_load, bench_synthetic
from benchmarks.performance.machine import OwnCPU, cpu_seconds, load_average, machine_facts
from benchmarks.performance.memory import bench_memory
from benchmarks.performance.profiling import profile_partial_fit
from benchmarks.performance.protocol import DOC_PATH, FULL, QUICK, QUICK_PATH, TARGETS, Config, log
from benchmarks.performance.report import render
from benchmarks.performance.scaling import bench_dims, bench_sizes
from benchmarks.performance.throughput import bench_river, bench_throughput
from benchmarks.threads import measure_or_error as bench_threads


def jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, (np.floating, np.integer)):
        return obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def run(cfg: Config) -> dict:
    t0 = time.perf_counter()
    busy0, own0 = cpu_seconds()
    os.environ.setdefault("NCLD_DATA_DIR", str(REPO.parent / "shared" / "datasets"))
    nproc = None
    sections = {}

    def section(name, fn, *args):
        """Run one measurement, recording how much of the machine other processes used meanwhile."""
        w0, (b0, _) = time.perf_counter(), cpu_seconds()
        with OwnCPU() as own:  # the section's server, run processes and browser are its own
            value = fn(*args)
        w1, (b1, _) = time.perf_counter(), cpu_seconds()
        sections[name] = {
            "wall_s": w1 - w0,
            "others_pct": 100.0 * max(0.0, (b1 - b0) - own.seconds) / max((w1 - w0) * nproc, 1e-9),
            "loadavg_1min_end": load_average(),
        }
        return value

    res = {
        "date": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "config": {k: v for k, v in cfg.__dict__.items() if k != "extra"},
        "machine": machine_facts(),
        "loadavg_1min_start": load_average(),
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
    res["synthetic"] = section("5e synthetic stream", bench_synthetic)
    res["threads"] = section("7 threads under load", bench_threads) if not cfg.quick else {"error": "not in --quick"}
    res["knobs"] = section("8 knobs in the browser", bench_knobs, cfg.knob_changes, cfg.knob_budget_s)
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
    busy1, own1 = cpu_seconds()
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
        while load_average() >= 1.0 and time.perf_counter() - t_wait < args.wait_idle:
            log(f"waiting for an idle machine: load average {load_average():.1f}")
            time.sleep(15)
    res = run(cfg)
    text = render(res)
    print(text)
    write_atomic(out, text)
    raw = REPO / "benchmarks" / "out" / ("performance-quick.json" if cfg.quick else "performance.json")
    write_atomic(raw, json.dumps(jsonable(res), indent=1))
    log(f"wrote {out} and {raw} ({res['wall_s']:.0f} s)")
    return 0
