"""The environment every benchmark script sets up before it imports numpy (``from benchmarks import _env``).

One BLAS thread per process: the scripts run one cell per core, and BLAS threads on top of that would
fight over the two cores. The shared datasets beside the repository when ``NCLD_DATA_DIR`` is unset, as
the Makefile does.
"""

import os
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

REPO = Path(__file__).resolve().parents[1]
if "NCLD_DATA_DIR" not in os.environ and (REPO.parent / "shared" / "datasets").is_dir():
    os.environ["NCLD_DATA_DIR"] = str(REPO.parent / "shared" / "datasets")
