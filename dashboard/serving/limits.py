"""Every limit the dashboard's server keeps (its queue, caches, sessions, upload parses), in one place: each
read once from the environment (``NCLD_<NAME>``, :class:`ncld_core.limits.EnvLimits`), else its default. The
library's own limits (a run's memory budget, the parsed-dataset folder) are :mod:`ncld_core.limits`.
``docs/deploy.md`` ("Limits") says what each one bounds, its default and why.

>>> limits = Limits.from_env({"NCLD_MAX_CONCURRENT_RUNS": "3"})
>>> limits.max_concurrent_runs, limits.run_cache_entries
(3, 16)
>>> Limits.from_env({"NCLD_MAX_CONCURRENT_RUNS": "zero"})
Traceback (most recent call last):
...
ValueError: NCLD_MAX_CONCURRENT_RUNS must be a number, got 'zero'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ncld_core.limits import EnvLimits

__all__ = ["Limits", "LIMITS"]


@dataclass(frozen=True)
class Limits(EnvLimits):
    """The server's limits (see ``docs/deploy.md``, section "Limits")."""

    AT_LEAST_ZERO: ClassVar[dict[str, int]] = {"run_niceness": 19}

    #: Runs computing at once on the server; further runs wait in a FIFO queue.
    max_concurrent_runs: int = 2
    #: Added to the niceness of each run's process (0-19; 0: none): the server's pages answer while runs compute.
    run_niceness: int = 10
    #: How often (seconds) the server looks for closed sessions, whose runs and places in line it gives up.
    session_check_s: float = 0.5
    #: Seconds a session's browser may be disconnected before its run is given up (a page reconnects on its own).
    session_grace_s: float = 3.0
    #: Seconds an upload's last session may be disconnected before the upload is released and that session
    #: closed: Streamlit keeps a disconnected session this long (its session storage's 2 minutes) for its page to
    #: come back to, with its state and uploaded files.
    upload_grace_s: float = 120.0
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


#: The limits of this server process (read once, at import).
LIMITS = Limits.from_env()
