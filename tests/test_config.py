"""RunConfig: per-field validation, URL and TOML round trips."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ncld_core.config import PRESETS, RunConfig


@pytest.mark.parametrize(
    "changes, field, text",
    [
        (dict(chunk_size=1), "chunk_size", "at least 2"),
        (dict(rho_low=0.3, rho_high=0.2), "rho_high", "at least rho_low"),
        (dict(rho_high=0.55), "rho_high", "below 0.5"),
        (dict(noise="table", rho_pos=[0.5] * 10, rho_neg=[0.6] * 10), "rates", "must be < 1"),
        (dict(noise="table", rho_pos=[0.1] * 3, rho_neg=[0.1] * 3), "rates", "3 labels but the dataset has 10"),
        (dict(schedule="growth@100, growth@200"), "schedule", "already multi-label"),
        (dict(schedule="growth@99999"), "schedule", "beyond"),
        (dict(n_neighbors=300), "n_neighbors", "below the chunk size"),
        (dict(beta=1.5), "beta", "[0, 1]"),
        (dict(delta=0.0), "delta", "(0, 1)"),
        (dict(models=["ELM-Z"]), "models", "unknown model"),
        (dict(cardinality=12.0), "cardinality", "(0, 10)"),
    ],
)
def test_errors_name_the_field(changes, field, text):
    err = RunConfig(**changes).errors()
    assert field in err, err
    assert text in err[field]


def test_defaults_and_presets_are_valid():
    assert RunConfig().errors() == {}
    for name, cfg in PRESETS.items():
        assert cfg.errors() == {}, name


def test_dataset_size_is_checked_when_known():
    err = RunConfig(dataset="medical", n_instances=5000).errors(n_available=978)
    assert "only 978 instances" in err["n_instances"]


configs = st.builds(
    RunConfig,
    chunk_size=st.integers(2, 5000),
    beta=st.floats(0, 1),
    gamma=st.sampled_from([0.0, 2.0**-6, 0.005]),
    schedule=st.sampled_from(["", "growth@2500", "reduction@100, growth@300"]),
    models=st.lists(st.sampled_from(["ELM-O", "ELM-I", "ELM-II", "ELM (plain)"]), unique=True),
    references=st.booleans(),
    n_instances=st.one_of(st.none(), st.integers(2, 10_000)),
    noise=st.sampled_from(["none", "range", "table"]),
    rho_pos=st.lists(st.floats(0, 0.4), max_size=4),
)


@settings(max_examples=100, deadline=None)
@given(configs)
def test_url_round_trip(cfg):
    params = cfg.to_query_params()
    assert all(isinstance(v, str) for v in params.values())
    assert RunConfig.from_query_params(params) == cfg


@settings(max_examples=50, deadline=None)
@given(configs)
def test_toml_round_trip(cfg):
    assert RunConfig.from_toml(cfg.to_toml()) == cfg


def test_bad_link_value_is_a_clear_error():
    with pytest.raises(ValueError, match="chunk_size: cannot read 'abc'"):
        RunConfig.from_query_params({"chunk_size": "abc"})


def test_unknown_toml_key_is_refused():
    with pytest.raises(ValueError, match="unknown configuration key"):
        RunConfig.from_toml("chunksize = 3\n")
    with pytest.raises(ValueError, match="not valid TOML"):
        RunConfig.from_toml("chunk_size = = 3\n")


def test_errors_check_the_schedule_against_the_datasets_pools():
    # 3 single-label and 5 multi-label instances: growth@4 needs 4 single-label ones.
    Y = np.array([[1, 0, 0]] * 3 + [[1, 1, 0]] * 5)
    cfg = RunConfig(dataset="real", chunk_size=2, n_neighbors=1, schedule="growth@4")
    assert "3 single-label" in cfg.errors(n_available=8, n_labels_available=3, Y_true=Y)["schedule"]
    assert "schedule" not in RunConfig(dataset="real", chunk_size=2, n_neighbors=1, schedule="growth@3").errors(
        n_available=8, n_labels_available=3, Y_true=Y)
