"""A runner for the tests of Stop on Dask (``tests/test_dask_backend.py``), in a module of its own that imports only the
standard library: a Dask worker and the run's own process import it quickly to unpickle it."""

from __future__ import annotations

import os
import time


class MarkedRunner:
    """Chunks of ``seconds`` each; each chunk, as it starts, appends its process's id and the time to ``mark`` (a
    file: the test reads it from any process)."""

    def __init__(self, seconds: float, mark):
        self.seconds, self.mark = seconds, str(mark)

    def iter_run(self, stream):
        while True:
            with open(self.mark, "a") as f:
                f.write(f"{os.getpid()} {time.time()}\n")
            time.sleep(self.seconds)
            yield stream
