"""The doctests of every benchmark module that has one.

Not collected through ``testpaths``: collecting ``benchmarks/`` imports every script, and the scripts set
one BLAS thread for their process (``benchmarks/_env.py``), which would then hold for the whole test
session and every process it starts. Here each module is imported with the environment restored after it.
"""

import doctest
import importlib
import os
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
WITH_DOCTESTS = sorted(p.stem for p in BENCHMARKS.glob("*.py") if ">>> " in p.read_text(encoding="utf-8"))


def test_the_modules_with_doctests_are_found():
    assert {"grid", "river_reference", "targets", "woodbury_reference"} <= set(WITH_DOCTESTS)


@pytest.mark.parametrize("name", WITH_DOCTESTS)
def test_benchmark_module_doctests(name):
    saved = dict(os.environ)
    try:
        module = importlib.import_module(f"benchmarks.{name}")
    finally:
        os.environ.clear()
        os.environ.update(saved)
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0, result
