"""One parallel runner for the benchmarks: a local Dask cluster of processes.

Each worker is a process with one thread; Dask's nanny sets ``OMP/OPENBLAS/MKL_NUM_THREADS=1``
in every worker (the work is many small matrices: threaded BLAS is slower here, and the
parallelism comes from the workers).  With one worker (or no client) the work runs in this
process, in order.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import sys


@contextlib.contextmanager
def dask_client(scheduler=None, n_workers: int = 2):
    """A ``distributed.Client``: ``scheduler`` itself if it is one, one on a scheduler address,
    or (``None``/``"local"``) one on a LocalCluster of ``n_workers`` processes for the ``with`` block."""
    from distributed import Client, LocalCluster

    if isinstance(scheduler, Client):
        yield scheduler
        return
    if scheduler in (None, "local"):
        with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                          dashboard_address=None, silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
            yield client
        return
    with Client(scheduler) as client:
        yield client


def _importable(fn):
    """``fn`` from its module's import name when it was defined in ``python -m benchmarks.X``'s ``__main__``."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if getattr(fn, "__module__", None) == "__main__" and spec is not None:
        return getattr(importlib.import_module(spec.name), fn.__name__)
    return fn


def as_finished(fn, items, client=None, *, args=(), return_errors=False):
    """Yield ``(i, fn(items[i], *args))`` as the calls finish: on ``client``'s workers, or here in order.

    A failure is raised, or with ``return_errors`` yielded as the exception; leaving the loop
    early (an error, Ctrl-C) cancels what has not run.
    """
    items = list(items)
    if client is None:
        for i, item in enumerate(items):
            try:
                res = fn(item, *args)
            except Exception as exc:  # noqa: BLE001 -- returned on request
                if not return_errors:
                    raise
                res = exc
            yield i, res
        return
    from distributed import as_completed

    fn = _importable(fn)
    futures = {client.submit(fn, item, *args, pure=False): i for i, item in enumerate(items)}
    try:
        for fut in as_completed(futures):
            try:
                res = fut.result()
            except Exception as exc:  # noqa: BLE001 -- worker died, etc.
                if not return_errors:
                    raise
                res = exc
            yield futures[fut], res
    finally:
        client.cancel([f for f in futures if not f.done()])


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
    return map_parallel(_call, [(_importable(fn), arg) for fn, arg in calls], n_workers, client=client,
                        progress=progress, desc=desc)
