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


class OwnCPU:
    """CPU seconds of this process and of every process it started, directly or not, while alive: ``with OwnCPU()
    as own: ...`` then ``own.seconds``. A thread reads the descendants' CPU times every ``every_s`` seconds, so a
    section's dashboard server, its run processes (which leave the session: ``os.setsid``) and its browser count
    as its own, not as other processes' (those ended before a reading lose at most ``every_s`` of theirs); processes
    alive before the section count from the first reading."""

    def __init__(self, every_s: float = 0.25):
        import threading

        import psutil

        self._psutil = psutil
        self._me = psutil.Process()
        self.every_s = every_s
        self._first: dict[int, float] = {}
        self._last: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="own-cpu", daemon=True)
        self._at_start = False  # True only for the reading at __enter__: those processes count from there
        self.seconds = 0.0

    def _read(self) -> None:
        for proc in self._me.children(recursive=True):
            try:
                t = proc.cpu_times()
            except self._psutil.Error:  # ended meanwhile
                continue
            self._first.setdefault(proc.pid, t.user + t.system if self._at_start else 0.0)
            self._last[proc.pid] = t.user + t.system

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            self._read()

    def _self(self) -> float:
        t = self._me.cpu_times()
        return t.user + t.system

    def __enter__(self):
        self._at_start = True
        self._read()  # the descendants alive now count from here
        self._at_start = False
        self._self0 = self._self()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=5)
        self._read()
        self.seconds = self._self() - self._self0 + sum(self._last[p] - self._first[p] for p in self._last)


def cpu_seconds():
    """(busy CPU seconds of the whole machine, CPU seconds of this process and its finished children)."""
    import psutil

    t = psutil.cpu_times()
    busy = sum(t) - t.idle - getattr(t, "iowait", 0.0)
    c = psutil.Process().cpu_times()
    return busy, c.user + c.system + c.children_user + c.children_system
