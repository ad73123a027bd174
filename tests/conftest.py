"""Shared fixtures: where the benchmark datasets are, and skipping when they are absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_DEFAULT_DATA = REPO.parent / "shared" / "datasets"


def shared_data_dir() -> Path | None:
    env = os.environ.get("NCLD_DATA_DIR")
    path = Path(env) if env else _DEFAULT_DATA
    return path if (path / "SHA256SUMS").is_file() else None


# A bare `pytest` sees the datasets as `make test` does (it exports NCLD_DATA_DIR): the dashboard caches
# the list of datasets it found, so a test that exported the folder only for itself could meet the list
# an earlier test cached without it.
if "NCLD_DATA_DIR" not in os.environ and shared_data_dir() is not None:
    os.environ["NCLD_DATA_DIR"] = str(shared_data_dir())


@pytest.fixture
def data_dir(monkeypatch):
    """The shared datasets folder, exported as NCLD_DATA_DIR; skips (or fails in CI) when absent."""
    path = shared_data_dir()
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("the shared datasets are missing in CI (set NCLD_DATA_DIR)")
        pytest.skip("shared datasets not found: set NCLD_DATA_DIR to ../shared/datasets")
    monkeypatch.setenv("NCLD_DATA_DIR", str(path))
    return path


@pytest.fixture(scope="session", autouse=True)
def _parsed_cache_of_this_session(tmp_path_factory):
    """The parsed-dataset cache of the test session: a folder of its own (inherited by the dashboard servers
    the browser tests start), so tests never read or fill the developer's ~/.cache/ncld/parsed."""
    old = os.environ.get("NCLD_CACHE_DIR")
    os.environ["NCLD_CACHE_DIR"] = str(tmp_path_factory.mktemp("parsed_cache"))
    yield
    if old is None:
        os.environ.pop("NCLD_CACHE_DIR", None)
    else:
        os.environ["NCLD_CACHE_DIR"] = old


def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true", default=False,
                     help="run the slow tier too (the browser measurements `make bench` reads, the ten visitors)")


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (``make test`` runs ``-n auto --dist loadgroup``), the browser tests of one module run
    on one worker, one after another (they share the module's dashboard server and Chromium); the timing
    measurements and the ten visitors, which assume nothing beside them, are the slow tier, run alone."""
    for item in items:
        if item.get_closest_marker("browser") is not None:  # one worker per browser module: its server and Chromium
            item.add_marker(pytest.mark.xdist_group(f"browser-{item.module.__name__}"))
    # The slow tier (`make test-slow`, which .ci/run runs after `make test`): measurements and load tests
    # that take minutes of waiting each; `make test` stays within its few minutes without them.
    if not config.getoption("--slow"):
        skip = pytest.mark.skip(reason="slow tier: make test-slow (pytest --slow -m slow)")
        for item in items:
            if item.get_closest_marker("slow") is not None:
                item.add_marker(skip)
