"""Imported by the fork server (one of :data:`dashboard.serving.fork_server.PRELOAD`): one tiny run, computed in the
fork server once, so that every run's process forked from it starts warm.

A run's first chunk in a fresh process also pays what a process sets up once: threadpoolctl's scan of the loaded
libraries (``ncld_core.threads``), scikit-learn's look for dataframe plugins among the installed packages, the
modules the models import when first used. Computed here, in the fork server, all of it is in every child's memory
from the start: the first chunk of each run (the one a moved knob waits for) costs what any chunk costs
(``python -m benchmarks``, section 8, times the knob to the first plot).

The fork server stays single-threaded: the run is computed in its only thread, and ends before it forks anything,
so no product is ever running while it forks (what ``dashboard.serving.chunk_process`` keeps forks away from).
Importing this module anywhere else runs the tiny run there too (a fraction of a second); a failure only costs
the warmth, never the fork server.
"""

from __future__ import annotations

__all__ = ["WARM", "warm"]


def warm() -> bool:
    """Compute one tiny run of the default models (every step a default run takes, on a few rows); False when it
    failed (the fork server goes on cold)."""
    try:
        from ncld_core.config import RunConfig

        cfg = RunConfig(n_instances=60, chunk_size=20, n_features=3, n_labels=5, n_neighbors=3)
        for _ in cfg.runner().iter_run(cfg.build_stream()):
            pass
    except Exception:  # noqa: BLE001 - a warm-up that fails only leaves the children cold
        return False
    return True


#: Whether the import's run succeeded.
WARM = warm()
