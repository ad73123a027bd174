"""The machine a run measured: CPUs, BLAS, versions, the code's revision; its load and CPU time."""

from __future__ import annotations

import os
import platform

import numpy as np

from benchmarks.common import git_revision


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


def load_average() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def cpu_seconds():
    """(busy CPU seconds of the whole machine, CPU seconds of this process and its finished children)."""
    import psutil

    t = psutil.cpu_times()
    busy = sum(t) - t.idle - getattr(t, "iowait", 0.0)
    c = psutil.Process().cpu_times()
    return busy, c.user + c.system + c.children_user + c.children_system
