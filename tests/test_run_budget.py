"""The whole run's memory (stream, one chunk of every variant, a sweep) is estimated from the sizes alone and
refused past the server's budget before any array is made, with a message naming the setting to lower: in the
library (RunConfig.check_budget / build_stream), the command line and the dashboard's checks alike."""

from __future__ import annotations

import tracemalloc

import pytest

from ncld_core import cli, limits
from ncld_core.config import RunConfig
from ncld_core.limits import Limits
from ncld_core.model.cost import estimate_cost, estimate_run

MiB = 1024**2


def _peak_bytes(fn) -> int:
    """Peak bytes Python allocated while ``fn`` ran (it may raise)."""
    tracemalloc.start()
    try:
        fn()
    except ValueError:
        pass
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak


def test_the_run_estimate_counts_the_stream_every_variant_and_the_sweep():
    chunk = estimate_cost(chunk_size=500, n_hidden=300, n_features=20, n_labels=10, n_neighbors=20, n_models=3)
    run = estimate_run(chunk, n_instances=10_000, n_features=20, n_labels=10)
    assert run.terms["stream: features n x d"] == 10_000 * 20 * 8
    assert run.terms["stream: true and noisy labels 2 x n x q"] == 2 * 10_000 * 10 * 8
    assert run.memory_bytes == sum(run.terms.values()) > chunk.memory_bytes
    swept = estimate_run(chunk, n_instances=10_000, n_features=20, n_labels=10, sweep_points=49, n_hidden=300)
    assert swept.memory_bytes - run.memory_bytes == 49 * (300 * 300 + 300 * 10) * 8
    more = estimate_cost(chunk_size=500, n_hidden=300, n_features=20, n_labels=10, n_neighbors=20, n_models=4)
    assert more.memory_bytes > chunk.memory_bytes  # every variant counts


def test_the_two_reported_cases_are_refused_before_any_work():
    # the CLI's --n-instances 100000000 (14.9 GiB of stream) and the link's n_features=100000 with 50000 instances
    huge_stream = RunConfig(n_instances=100_000_000)
    with pytest.raises(ValueError, match="n_instances"):
        huge_stream.check_budget()
    assert _peak_bytes(huge_stream.check_budget) < 5 * MiB
    wide = RunConfig(n_instances=50_000, n_features=100_000)
    with pytest.raises(ValueError, match=r"^n_features: .*use fewer features \(n_features\)"):
        wide.check_budget()
    assert _peak_bytes(wide.build_stream) < 5 * MiB  # refused before the 37 GiB array
    assert cli.main(["run", "--n-instances", "100000000", "--quiet"]) == 2


def test_a_config_within_every_range_but_past_the_run_budget_is_refused_everywhere(monkeypatch, tmp_path, capsys):
    cfg = RunConfig(n_instances=200_000, n_features=100, n_labels=10, chunk_size=500, models=["ELM-O"])
    assert cfg.errors() == {}
    cost = cfg.check_budget()  # within the default budget
    assert cost.memory_bytes > 150 * MiB
    monkeypatch.setattr(limits, "LIMITS", Limits(run_memory_bytes=128 * MiB))
    with pytest.raises(ValueError, match=r"^n_instances: .*past the budget of 128 MB: use a shorter stream"):
        cfg.check_budget()
    # the library: building the stream is refused before its arrays exist
    assert _peak_bytes(cfg.build_stream) < 5 * MiB
    with pytest.raises(ValueError, match="n_instances"):
        cfg.build_stream()
    # the command line: exit 2, the setting named, nothing written
    (tmp_path / "run.toml").write_text(cfg.to_toml())
    assert cli.main(["run", "--config", str(tmp_path / "run.toml"), "--quiet", "--out", str(tmp_path / "out")]) == 2
    assert "n_instances" in capsys.readouterr().err and not (tmp_path / "out").exists()
    # the dashboard's checks: an error under the control, Run disabled
    from dashboard import checks
    from dashboard.data import DatasetFacts

    errors, _ = checks.check(cfg, DatasetFacts("synthetic"))
    assert "n_instances" in errors and "past the budget" in errors["n_instances"]


def test_more_hidden_nodes_name_n_hidden(monkeypatch):
    cfg = RunConfig(n_instances=2000, n_features=20, n_labels=10, chunk_size=500, n_hidden=1500)
    assert cfg.check_budget().memory_bytes > 100 * MiB
    monkeypatch.setattr(limits, "LIMITS", Limits(run_memory_bytes=100 * MiB))
    with pytest.raises(ValueError, match=r"^n_hidden: .*fewer hidden nodes"):
        cfg.check_budget()


def test_limits_are_read_from_the_environment_and_bad_values_are_named():
    from dashboard.serving.limits import Limits as ServerLimits

    assert Limits.from_env({"NCLD_RUN_MEMORY_BYTES": "1e9"}).run_memory_bytes == 10**9
    with pytest.raises(ValueError, match="NCLD_PARSED_DISK_DAYS must be positive"):
        Limits.from_env({"NCLD_PARSED_DISK_DAYS": "-1"})
    with pytest.raises(ValueError, match="NCLD_SESSION_CHECK_S must be positive"):
        ServerLimits.from_env({"NCLD_SESSION_CHECK_S": "-1"})
    assert ServerLimits.from_env({}).run_niceness == 10
    assert ServerLimits.from_env({"NCLD_RUN_NICENESS": "0"}).run_niceness == 0
    for bad in ("20", "2.5", "-1"):
        with pytest.raises(ValueError, match=rf"NCLD_RUN_NICENESS must be in \[0, 19\], got '{bad}'"):
            ServerLimits.from_env({"NCLD_RUN_NICENESS": bad})


def test_the_parsed_cache_on_disk_is_bounded_in_size_and_age(tmp_path, monkeypatch):
    import os

    import numpy as np

    from ncld_core.data import parsed_cache
    from ncld_core.data.dataset import Dataset

    def ds(i):
        rng = np.random.default_rng(i)
        return Dataset(f"d{i}", rng.standard_normal((200, 20)), rng.integers(0, 2, (200, 3)), source="x.arff")

    assert parsed_cache.store(ds(0), "k0", folder=tmp_path)
    one = parsed_cache.entry_path("k0", folder=tmp_path).stat().st_size
    monkeypatch.setattr(limits, "LIMITS", Limits(parsed_disk_bytes=int(2.5 * one), parsed_disk_days=1.0))
    first = parsed_cache.entry_path("k0", folder=tmp_path)
    os.utime(first, (first.stat().st_mtime - 100, first.stat().st_mtime - 100))  # read longest ago
    for i in (1, 2):
        assert parsed_cache.store(ds(i), f"k{i}", folder=tmp_path)
    # three entries do not fit in 2.5 entries' bytes: the least recently read (k0) went
    assert parsed_cache.fetch("k0", folder=tmp_path) is None
    assert parsed_cache.fetch("k1", folder=tmp_path).name == "d1"
    assert parsed_cache.fetch("k2", folder=tmp_path).name == "d2"
    # an entry unread for longer than the age limit goes at the next write; the one just written stays
    old = parsed_cache.entry_path("k1", folder=tmp_path)
    os.utime(old, (old.stat().st_mtime - 2 * 86400, old.stat().st_mtime - 2 * 86400))
    assert parsed_cache.store(ds(3), "k3", folder=tmp_path)
    assert parsed_cache.fetch("k1", folder=tmp_path) is None and parsed_cache.fetch("k3", folder=tmp_path) is not None


def test_a_sweep_counts_its_grid_points_and_is_refused_before_solving_any(monkeypatch):
    import json

    from dashboard import data

    cfg = RunConfig(n_instances=600, chunk_size=200, n_features=5, n_labels=4, n_neighbors=5, n_hidden=300,
                    models=["ELM-O"], references=False)
    stream = cfg.build_stream()
    one, grid = cfg.check_budget(sweep_points=1), cfg.check_budget(sweep_points=400)
    assert grid.memory_bytes - one.memory_bytes == 399 * (300 * 300 + 300 * 4) * 8
    monkeypatch.setattr(limits, "LIMITS", Limits(run_memory_bytes=(one.memory_bytes + grid.memory_bytes) // 2))
    params = json.dumps({"n_hidden": 300, "n_neighbors": 5, "seed": 0, "model_rates": "known"})
    with pytest.raises(ValueError, match=r"^n_hidden: .*sweep: an L x L system per \(beta, gamma\) point"):
        data.check_sweep_budget(data.sweep_config(cfg, params), stream, 20 * 20)


def test_each_limit_is_declared_once_library_or_server():
    """The library's limits (ncld_core.limits) and the server's (dashboard.serving.limits) share no name, and
    the library's are the ones it reads: a run's budget and the parsed-dataset folder."""
    import dataclasses

    from dashboard.serving.limits import Limits as ServerLimits

    library = {f.name for f in dataclasses.fields(Limits)}
    assert library == {"run_memory_bytes", "parsed_disk_bytes", "parsed_disk_days"}
    assert not library & {f.name for f in dataclasses.fields(ServerLimits)}
