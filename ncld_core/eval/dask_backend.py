"""Dask for the library: a map over a cluster's workers and a client to run it on (dask is optional).

dask is an optional dependency (``pip install 'ncld[grid]'``), imported when first needed; without it a
cluster asked for is a clear error (:func:`require_distributed`).

- :func:`as_finished` maps a function over items on a client's workers (or here, in order), yielding each
  result as it finishes; :func:`ncld_core.eval.sweep.sweep`'s grid points (``client=``) and the benchmarks'
  cells go through it.
- :func:`dask_client` opens a client on an address or a LocalCluster (the benchmarks' runner,
  ``benchmarks/parallel.py``).

The dashboard's server computing its runs and sweeps on a cluster (:data:`SCHEDULER_ENV`, its one client, a
run's Dask actor) is :mod:`dashboard.serving.dask_run`.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import sys

__all__ = ["SCHEDULER_ENV", "require_distributed", "dask_client", "importable", "as_finished"]

#: The dashboard's setting: a Dask scheduler's address (``tcp://host:8786``; read by
#: :func:`dashboard.serving.dask_run.scheduler_address`); unset or empty, everything runs locally.
SCHEDULER_ENV = "NCLD_DASK_SCHEDULER"


def require_distributed():
    """The ``distributed`` module; ValueError naming the setting and the install when dask is missing (the
    setting is the bad input: the page shows the message next to Run, as any other)."""
    try:
        return importlib.import_module("distributed")
    except ImportError:
        raise ValueError(
            f"{SCHEDULER_ENV} is set, but dask.distributed is not installed: pip install 'dask[distributed]' "
            f"(or unset {SCHEDULER_ENV} to compute on this machine)"
        ) from None


@contextlib.contextmanager
def dask_client(scheduler=None, n_workers: int = 2):
    """A ``distributed.Client`` for the ``with`` block: ``scheduler`` itself if it is one, one on a scheduler
    address, or (``None``/``"local"``) one on a LocalCluster of ``n_workers`` single-threaded processes (Dask's
    nanny sets ``OMP/OPENBLAS/MKL_NUM_THREADS=1`` in each: the work is many small matrices)."""
    distributed = require_distributed()
    if isinstance(scheduler, distributed.Client):
        yield scheduler
        return
    if scheduler in (None, "local"):
        with distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                      dashboard_address=None, silence_logs=logging.ERROR) as cluster, \
                distributed.Client(cluster) as client:
            yield client
        return
    with distributed.Client(scheduler) as client:
        yield client


def importable(fn):
    """``fn`` by its module's import name when it was defined in a ``python -m package.X`` script's ``__main__``
    (a worker cannot import ``__main__``)."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if getattr(fn, "__module__", None) == "__main__" and spec is not None:
        return getattr(importlib.import_module(spec.name), fn.__name__)
    return fn


def as_finished(fn, items, client=None, *, args=(), return_errors=False):
    """Yield ``(i, fn(items[i], *args))`` as the calls finish: on ``client``'s workers, or here in order.

    A failure is raised, or with ``return_errors`` yielded as the exception; leaving the loop early (an
    error, Ctrl-C, a closed page) cancels what has not run.

    >>> sorted(as_finished(abs, [-2, 3]))
    [(0, 2), (1, 3)]
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

    fn = importable(fn)
    futures = {client.submit(fn, item, *args, pure=False): i for i, item in enumerate(items)}
    try:
        for fut in as_completed(futures, loop=client.loop):  # this client's, not a default one
            try:
                res = fut.result()
            except Exception as exc:  # noqa: BLE001 -- worker died, etc.
                if not return_errors:
                    raise
                res = exc
            yield futures[fut], res
    finally:
        client.cancel([f for f in futures if not f.done()])
