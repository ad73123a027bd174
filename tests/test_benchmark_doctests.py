"""The doctests of the benchmark modules that have them.

Not collected through ``testpaths``: collecting ``benchmarks/`` imports every script, and the scripts set
one BLAS thread for their process (``benchmarks/_env.py``), which would then hold for the whole test
session and every process it starts.
"""

import doctest
import importlib
import os

import pytest


@pytest.mark.parametrize("name", ["grid", "river_reference", "targets", "woodbury_reference"])
def test_benchmark_module_doctests(name):
    before = os.environ.get("OPENBLAS_NUM_THREADS")
    module = importlib.import_module(f"benchmarks.{name}")
    assert os.environ.get("OPENBLAS_NUM_THREADS") == before, f"benchmarks.{name} changed the session's BLAS threads"
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0, result
