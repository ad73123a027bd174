"""Every limit a shared server keeps, in one place: each read once from the environment (``NCLD_<NAME>``),
else its default. ``docs/deploy.md`` ("Limits") says what each one bounds, its default and why.

>>> limits = Limits.from_env({"NCLD_MAX_CONCURRENT_RUNS": "3"})
>>> limits.max_concurrent_runs, limits.run_cache_entries
(3, 16)
>>> Limits.from_env({"NCLD_MAX_CONCURRENT_RUNS": "zero"})
Traceback (most recent call last):
...
ValueError: NCLD_MAX_CONCURRENT_RUNS must be a number, got 'zero'
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

__all__ = ["Limits", "LIMITS", "ENV_PREFIX"]

ENV_PREFIX = "NCLD_"
#: The limits that may be 0, with their largest value (all others must be positive).
_AT_LEAST_ZERO = {"run_niceness": 19}


@dataclass(frozen=True)
class Limits:
    """The server's limits (see ``docs/deploy.md``, section "Limits")."""

    #: Estimated memory of a whole run (stream, models, every variant): refused past it, before any allocation.
    run_memory_bytes: int = 2 * 1024**3
    #: Runs computing at once on the server; further runs wait in a FIFO queue.
    max_concurrent_runs: int = 2
    #: Added to the niceness of each run's process (0-19; 0: none): the server's pages answer while runs compute.
    run_niceness: int = 10
    #: How often (seconds) the server looks for closed sessions, whose runs and places in line it gives up.
    session_check_s: float = 0.5
    #: Seconds a session's browser may be disconnected before its run is given up (a page reconnects on its own).
    session_grace_s: float = 3.0
    #: Bytes of drawn chunks' figures (their JSON) kept for the other sessions drawing them (a class on one run).
    drawn_figures_bytes: int = 64 * 1024**2
    #: Finished runs kept for replay (any visitor with the same configuration and code version).
    run_cache_entries: int = 16
    #: Seconds a finished run is kept for replay.
    run_cache_ttl_s: float = 3600.0
    #: Parsed datasets and uploads kept in memory (st.cache_data max_entries).
    parse_cache_entries: int = 4
    #: Seconds a parsed dataset or upload is kept in memory (st.cache_data ttl).
    parse_cache_ttl_s: float = 1800.0
    #: Memory one upload's parse may take beyond its process's start (a child process, capped): refused past it.
    upload_parse_bytes: int = 1536 * 1024**2
    #: Seconds one upload's parse may take: refused past it.
    upload_parse_timeout_s: float = 120.0
    #: Streams kept in memory (st.cache_data max_entries).
    stream_cache_entries: int = 6
    #: Seconds a stream is kept in memory (st.cache_data ttl).
    stream_cache_ttl_s: float = 1800.0
    #: Bytes the parsed-dataset folder on disk may hold (oldest entries removed first).
    parsed_disk_bytes: int = 1024**3
    #: Days an unread entry of the parsed-dataset folder is kept.
    parsed_disk_days: float = 30.0

    @classmethod
    def from_env(cls, environ=None) -> "Limits":
        """The defaults, each replaced by ``NCLD_<FIELD NAME IN CAPITALS>`` when set; a ValueError naming the
        variable when its value is not a positive number (a whole number in its range for those of
        ``_AT_LEAST_ZERO``, which may be 0)."""
        environ = os.environ if environ is None else environ
        values = {}
        for f in dataclasses.fields(cls):
            name = ENV_PREFIX + f.name.upper()
            raw = environ.get(name)
            if raw is None or raw == "":
                continue
            kind = int if isinstance(f.default, int) else float
            try:
                value = kind(float(raw)) if kind is int else kind(raw)
            except ValueError:
                raise ValueError(f"{name} must be a number, got {raw!r}") from None
            if f.name in _AT_LEAST_ZERO:
                if not float(raw).is_integer() or not 0 <= value <= _AT_LEAST_ZERO[f.name]:
                    raise ValueError(f"{name} must be in [0, {_AT_LEAST_ZERO[f.name]}], got {raw!r}")
            elif value <= 0:
                raise ValueError(f"{name} must be positive, got {raw!r}")
            values[f.name] = value
        return cls(**values)


#: The limits of this process (read once, at import).
LIMITS = Limits.from_env()
