"""The "This run:" caption (dashboard/labels.py::settings_text) names every setting that differs from the defaults."""

from __future__ import annotations

import dataclasses

import pytest

from dashboard.labels import LABELS, changed_settings, settings_text
from ncld_core.config import PRESETS, RunConfig

#: One non-default value per RunConfig field: a field added to RunConfig must be added here (test below).
OTHER = {
    "dataset": "emotions", "n_instances": 3000, "chunk_size": 500, "shuffle_seed": 3, "n_features": 12,
    "n_labels": 6, "cardinality": 1.5, "label_correlation": 0.2, "noise": "table", "rho_low": 0.1,
    "rho_high": 0.3, "rho_pos": [0.1], "rho_neg": [0.2], "schedule": "shift@2000", "beta": 0.7, "gamma": 0.01,
    "delta": 0.01, "detector": "welch", "monitors": ["labels"], "decision": "paper", "alpha": 2.5,
    "n_hidden": 40, "n_neighbors": 7, "model_rates": "estimate", "models": ["ELM-O"], "references": False,
    "seed": 9, "trusted_fraction": 0.02,
}
FIELDS = [f.name for f in dataclasses.fields(RunConfig)]


def test_every_field_has_a_changed_value_and_a_label():
    assert set(OTHER) == set(FIELDS)
    assert all(name in LABELS for name in FIELDS), [n for n in FIELDS if n not in LABELS]


@pytest.mark.parametrize("name", FIELDS)
def test_a_changed_setting_is_named_with_its_label(name):
    cfg = RunConfig(**{name: OTHER[name]})
    assert getattr(cfg, name) != getattr(RunConfig(), name)
    assert [label for label, _ in changed_settings(cfg)] == [LABELS[name]]
    assert settings_text(cfg).startswith(LABELS[name] + " ")


def test_the_defaults_are_said_as_such():
    assert changed_settings(RunConfig()) == [] and settings_text(RunConfig()) == "the default settings"


@pytest.mark.parametrize("name", list(PRESETS))
def test_a_preset_caption_lists_exactly_its_link(name):
    """Every setting in the preset's link, and nothing else, is in its caption (the hidden decision=paper was not)."""
    cfg = PRESETS[name]
    assert [label for label, _ in changed_settings(cfg)] == [LABELS[k] for k in cfg.to_query_params()]
