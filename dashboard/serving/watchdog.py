"""A daemon thread that calls a function every few seconds: what the run hub and the upload cache each run to give
up the jobs and uploads of sessions that are gone.

A failure of the function (a ``session_alive`` that raises) is swallowed: it must not end the thread, which the
next call would otherwise never make again.

>>> import threading
>>> ticks = threading.Event()
>>> dog = Watchdog(0.01, ticks.set, name="ncld-example")
>>> dog.ensure(); ticks.wait(5)
True
>>> Watchdog(0, ticks.set, name="off").ensure()  # an interval of 0: no thread (tests call the function themselves)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["Watchdog"]


class Watchdog:
    """Calls ``step`` every ``interval_s`` seconds in a daemon thread named ``name``, once :meth:`ensure` started it
    (again, should it have ended); an interval of 0 or less starts nothing."""

    def __init__(self, interval_s: float, step: Callable[[], None], *, name: str):
        self.interval_s = interval_s
        self.step = step
        self.name = name
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def ensure(self) -> None:
        """Start the thread unless it runs (or the interval is 0)."""
        with self._lock:
            if self.interval_s > 0 and (self._thread is None or not self._thread.is_alive()):
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            time.sleep(self.interval_s)
            try:
                self.step()
            except Exception:  # noqa: BLE001 - a failing step must not end the watchdog
                pass
