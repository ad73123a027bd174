"""One parallel runner for the benchmarks: a local Dask cluster of processes.

Its client and its map (``dask_client``, ``as_finished``) are ``ncld_core.eval.dask_backend``'s, shared with
the dashboard's runs and sweeps on a cluster.

Each worker is a process with one thread; Dask's nanny sets ``OMP/OPENBLAS/MKL_NUM_THREADS=1``
in every worker (the work is many small matrices: threaded BLAS is slower here, and the
parallelism comes from the workers).  With one worker (or no client) the work runs in this
process, in order.
"""

from __future__ import annotations

import contextlib

# The cluster handling and the map live once, in the installed package (the dashboard's sweep uses them too).
from ncld_core.eval.dask_backend import as_finished, dask_client, importable

__all__ = ["as_finished", "dask_client", "map_parallel", "map_calls"]


def map_parallel(fn, items, n_workers: int = 2, *, client=None, progress: bool = False, desc: str | None = None) -> list:
    """``[fn(item) for item in items]`` on ``n_workers`` processes (or ``client``); results in input order.

    The first failure is raised. ``progress``: a tqdm bar over the finished items.
    """
    from tqdm.auto import tqdm

    items = list(items)
    out = [None] * len(items)
    with contextlib.ExitStack() as stack:
        if client is None and n_workers > 1 and len(items) > 1:
            client = stack.enter_context(dask_client(None, n_workers))
        bar = stack.enter_context(tqdm(total=len(items), desc=desc, disable=not progress))
        for i, res in as_finished(fn, items, client):
            out[i] = res
            bar.update()
    return out


def _call(job):
    fn, arg = job
    return fn(arg)


def map_calls(calls, n_workers: int = 2, *, client=None, progress: bool = False, desc: str | None = None) -> list:
    """``[fn(arg) for fn, arg in calls]`` as :func:`map_parallel` runs it: several functions in one map (one pool,
    one bar); a function of ``python -m benchmarks.X``'s ``__main__`` is sent by its module's import name."""
    return map_parallel(_call, [(importable(fn), arg) for fn, arg in calls], n_workers, client=client,
                        progress=progress, desc=desc)
