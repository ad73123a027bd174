"""The time half of the cost estimate, kept honest: its speed re-measured from the runs' own chunk times.

:meth:`CostEstimate.seconds_per_chunk <ncld_core.model.cost.CostEstimate.seconds_per_chunk>` divides a
floating-point count by a rate and adds a fixed overhead. One timing of a small matrix product
(:func:`~ncld_core.model.cost.machine_flops`) is a poor rate: taken while other processes share the cores
it can be ten times off, and it is then kept for the life of the server. :class:`TimeCalibration` starts
from it, but every run that finishes tells it how many times longer (or shorter) its chunks really took
than estimated; the estimates are then scaled by the median of those factors over the last
:attr:`~TimeCalibration.window` runs, so one run under load, or one odd run, moves them little and they
follow the machine as it is now. The whole estimate is scaled, overhead included: when the cores are
shared, the Python around the products slows down as much as the products.

>>> from ncld_core.model.cost import estimate_cost
>>> cost = estimate_cost(chunk_size=250, n_hidden=300, n_features=1001, n_labels=53, n_neighbors=10, n_models=3,
...                      probability_model="logistic")  # enron's shapes at the defaults
>>> cal = TimeCalibration(seed_flops_per_s=1e9)       # a rate measured under load
>>> round(cal.seconds_per_chunk(cost), 1)
4.9
>>> cal.observe(cost, [0.9, 0.4, 0.42, 0.38])         # a run's measured chunk times (chunk 0 first)
True
>>> round(cal.seconds_per_chunk(cost), 2), cal.n_runs
(0.4, 1)
"""

from __future__ import annotations

import statistics
import threading
from collections import deque
from collections.abc import Iterable

from .cost import CostEstimate, machine_flops

__all__ = ["TimeCalibration", "measured_chunk_seconds"]


def measured_chunk_seconds(chunk_seconds: Iterable[float]) -> float | None:
    """The median of a run's chunk times, the first (chunk 0, which only initialises the models) left out
    when there are others; None without a positive time.

    >>> measured_chunk_seconds([5.0, 0.2, 0.3, 0.25]), measured_chunk_seconds([]) is None
    (0.25, True)
    """
    times = [float(t) for t in chunk_seconds]
    if len(times) > 1:
        times = times[1:]
    times = [t for t in times if t > 0]
    return statistics.median(times) if times else None


class TimeCalibration:
    """Time estimates of :class:`~ncld_core.model.cost.CostEstimate` at ``seed_flops_per_s`` (default:
    :func:`machine_flops`, measured on first use), scaled by the median measured / estimated ratio of the
    last ``window`` observed runs (1 until a run is observed).

    Shared by every visitor of a dashboard server (its state is read and written under a lock)."""

    def __init__(self, seed_flops_per_s: float | None = None, *, window: int = 9):
        if window < 1:
            raise ValueError(f"window must be at least 1, got {window!r}")
        if seed_flops_per_s is not None and not seed_flops_per_s > 0:
            raise ValueError(f"seed_flops_per_s must be positive, got {seed_flops_per_s!r}")
        self.window = int(window)
        self._seed = seed_flops_per_s
        self._ratios: deque = deque(maxlen=self.window)
        self._lock = threading.Lock()

    @property
    def n_runs(self) -> int:
        """How many observed runs the scale comes from now (0: the seed's estimate as it is)."""
        with self._lock:
            return len(self._ratios)

    def seed_flops_per_s(self) -> float:
        """The rate the unscaled estimates divide by (measured on first use when not given)."""
        with self._lock:
            if self._seed is None:
                self._seed = machine_flops()
            return float(self._seed)

    def scale(self) -> float:
        """Measured / estimated seconds, the median over the observed runs (1 before any)."""
        with self._lock:
            return float(statistics.median(self._ratios)) if self._ratios else 1.0

    def observe(self, cost: CostEstimate, chunk_seconds: Iterable[float]) -> bool:
        """Take a run's measured chunk times (seconds, in order) for its ``cost``; False when they tell nothing."""
        measured = measured_chunk_seconds(chunk_seconds)
        estimated = cost.seconds_per_chunk(self.seed_flops_per_s())
        if measured is None or not estimated > 0:
            return False
        with self._lock:
            self._ratios.append(measured / estimated)
        return True

    def observe_seconds(self, measured_s: float, estimated_s: float) -> bool:
        """Take a whole job's measured seconds against the seconds estimated for it before it began (a sweep:
        its estimate already scaled by the runs' calibration); False when they tell nothing."""
        if not (measured_s > 0 and estimated_s > 0):
            return False
        with self._lock:
            self._ratios.append(float(measured_s) / float(estimated_s))
        return True

    def spread(self) -> tuple[float, float] | None:
        """The least and the largest measured / estimated ratio of the observed jobs (None before two)."""
        with self._lock:
            return (min(self._ratios), max(self._ratios)) if len(self._ratios) >= 2 else None

    def seconds_per_chunk(self, cost: CostEstimate) -> float:
        """Expected seconds of one chunk of ``cost`` on this machine as the last runs measured it."""
        return self.scale() * cost.seconds_per_chunk(self.seed_flops_per_s())

    def seconds_total(self, cost: CostEstimate) -> float | None:
        """Expected seconds of all of ``cost``'s chunks (None when their number is unknown)."""
        return None if cost.n_chunks is None else cost.n_chunks * self.seconds_per_chunk(cost)
