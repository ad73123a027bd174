"""Every catalogued bad input raises a clear ValueError, and docs/bad-inputs.md is current."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.catalogue import DOC, cases, render, run_case

_CASES = cases(Path(tempfile.gettempdir()))


def test_catalogue_has_at_least_25_distinct_inputs():
    assert len({what for _, what, _, _ in _CASES}) >= 25


@pytest.mark.parametrize("index", range(len(_CASES)), ids=[c[1] for c in _CASES])
def test_case_raises_a_clear_value_error(tmp_path, index):
    area, what, fn, expected = cases(tmp_path)[index]
    message = run_case(fn)
    assert expected in message, message
    assert "Traceback" not in message and len(message) > 10


def test_doc_is_current(tmp_path):
    assert DOC.read_text(encoding="utf-8") == render(tmp_path), "run: python tests/catalogue.py"
