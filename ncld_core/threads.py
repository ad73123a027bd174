"""Thread budgets for the BLAS/OpenMP pools that ncld's own work runs on.

Why this module exists: numpy and scipy start one BLAS thread per core. ELM-NCLD's per-chunk algebra is
small (an ``L x L`` solve and ``N x L`` products with ``L = 300`` by default), where a second thread costs
more in synchronisation than it gains; and when other work shares the machine (the browser drawing the
page, another visitor's run), a thread pool as large as the core count is oversubscribed and spins.
``make bench`` measures the policy below against every thread count in one run (section "Threads under
load" of ``docs/performance.md``).

Policy (:func:`threads_for`): one thread per run unless the run's matrices are large enough for BLAS
threads to pay (``n_hidden >= THREADED_FROM``), and then the cores left per concurrent run. The budget is
set per process with :func:`set_budget` (the command line's ``--threads``, the dashboard's run processes
from the number of runs sharing the server, the benchmarks) and read by the models' ``n_threads="auto"``;
an integer ``n_threads`` overrides it.

>>> threads_for(n_hidden=300, cores=2)
1
>>> threads_for(n_hidden=4000, cores=4, concurrent_runs=2)
2
>>> with limit(1):
...     current_blas_threads()
1
"""

from __future__ import annotations

import contextlib
import functools
import numbers
import os
import threading

__all__ = ["THREADED_FROM", "threads_for", "set_budget", "budget", "resolve", "limit", "limited",
           "current_blas_threads", "check_n_threads", "available_cores"]

#: Hidden-layer size from which a run's BLAS calls get more than one thread (below it one thread was
#: faster at every load measured; ``docs/performance.md``).
THREADED_FROM = 1500

_lock = threading.Lock()
_budget: int | None = None
_controller = None
#: Per thread, the limits of the enclosing :func:`limit` contexts, innermost last (a dashboard computing runs in
#: threads enters and leaves them from several threads; one shared list would pop another thread's limit).
_scopes = threading.local()


def _active() -> list[int]:
    stack = getattr(_scopes, "stack", None)
    if stack is None:
        stack = _scopes.stack = []
    return stack


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity; the machine's count where that is not known)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def threads_for(*, n_hidden: int = 300, cores: int | None = None, concurrent_runs: int = 1) -> int:
    """The BLAS threads one run gets: 1 for small hidden layers, else the cores per concurrent run."""
    cores = available_cores() if cores is None else int(cores)
    if n_hidden < THREADED_FROM:
        return 1
    return max(1, cores // max(1, int(concurrent_runs)))


def check_n_threads(n_threads, name: str = "n_threads"):
    """``"auto"`` or a positive integer; ValueError naming ``name`` otherwise."""
    if n_threads == "auto":
        return n_threads
    if isinstance(n_threads, bool) or not isinstance(n_threads, numbers.Integral) or n_threads < 1:
        raise ValueError(f"{name} must be 'auto' or a positive integer, got {n_threads!r}")
    return int(n_threads)


def set_budget(n_threads: int | None) -> None:
    """Set this process's thread budget for ``n_threads="auto"`` (None: back to :func:`threads_for`)."""
    global _budget
    _budget = None if n_threads is None else check_n_threads(n_threads, "n_threads")


def budget() -> int | None:
    """This process's budget set with :func:`set_budget`, or None."""
    return _budget


def resolve(n_threads, *, n_hidden: int = 300) -> int:
    """The thread count a model with parameter ``n_threads`` uses: an integer as given; ``"auto"``: the
    limit of an enclosing :func:`limit` (a runner's, for its chunk), else the process's budget, else
    :func:`threads_for` of its hidden-layer size."""
    n_threads = check_n_threads(n_threads)
    if n_threads != "auto":
        return n_threads
    if _active():
        return _active()[-1]
    return _budget if _budget is not None else threads_for(n_hidden=n_hidden)


def _get_controller():
    global _controller
    with _lock:
        if _controller is None:
            import scipy.linalg  # noqa: F401 - load scipy's BLAS before the controller lists the libraries
            from threadpoolctl import ThreadpoolController

            _controller = ThreadpoolController()
        return _controller


@contextlib.contextmanager
def limit(n_threads: int):
    """Context manager: every BLAS/OpenMP pool of this process limited to ``n_threads`` inside it;
    a model's ``n_threads="auto"`` inside it follows it (:func:`resolve`)."""
    n_threads = check_n_threads(n_threads)
    if n_threads == "auto":
        n_threads = resolve("auto")
    try:
        controller = _get_controller()
    except ImportError:  # threadpoolctl comes with scikit-learn; without it, leave the pools alone
        controller = None
    _active().append(int(n_threads))
    try:
        if controller is None:
            yield
        else:
            with controller.limit(limits=int(n_threads)):
                yield
    finally:
        _active().pop()


def current_blas_threads() -> int:
    """The largest thread count of the BLAS pools loaded now."""
    return max((lib.num_threads for lib in _get_controller().select(user_api="blas").lib_controllers), default=1)


def limited(method):
    """Decorator for a model's method: its BLAS work runs on ``resolve(self.n_threads, n_hidden=self.n_hidden)``
    threads (the model's ``n_threads`` parameter; ``"auto"`` follows the process budget)."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with limit(resolve(self.n_threads, n_hidden=int(getattr(self, "n_hidden", 0) or 0))):
            return method(self, *args, **kwargs)

    return wrapper
