"""A configuration checked against the data it would run on: what the controls show before Run and what a
link's pinned run must pass before it is offered.

Every check is the core's: :meth:`ncld_core.config.RunConfig.errors` with the data's sizes (ranges, the
stream's length, the schedule's pools) and :mod:`ncld_core.model.cost`'s memory budget per chunk; the
dataset itself is found by :func:`dashboard.data.resolve` only. Nothing here touches Streamlit's widgets.
"""

from __future__ import annotations

import dataclasses

import importlib.util

from ncld_core.config import SYNTHETIC_DEFAULT_LENGTH, RunConfig
from ncld_core.eval.baselines import OPTIONAL
from ncld_core.eval.variants import ELM_VARIANTS, ORACLES
from ncld_core.model.cost import MEMORY_BUDGET_BYTES, estimate_for, largest_hidden_within

from .data import DatasetFacts


def check(cfg: RunConfig, facts: DatasetFacts, *, labels_true=None, extra: dict | None = None):
    """``(errors, cost)``: ``{field: message}`` (internal names; empty when the run can start) and the
    core's cost estimate of one chunk (None when the data's size is unknown or a setting is invalid).

    ``facts``: the resolved dataset (:func:`dashboard.data.resolve`); ``labels_true``: its labels, to check
    that its pools hold the drift schedule; ``extra``: errors found by the controls themselves (an
    incomplete table row), kept unless the configuration has its own message for that field.
    """
    errors = cfg.errors(n_available=facts.n_instances, n_labels_available=facts.n_labels, Y_true=labels_true)
    for key, msg in (extra or {}).items():
        errors.setdefault(key, msg)
    models = cfg.models if isinstance(cfg.models, list) else []
    missing = [m for m in models if m in OPTIONAL and importlib.util.find_spec(OPTIONAL[m]) is None]
    if missing:
        errors.setdefault("models", "; ".join(f"{m} needs the optional package {OPTIONAL[m]!r}" for m in missing))
    if errors:  # only settings that pass every other check are costed
        return errors, None
    synthetic = cfg.dataset == "synthetic"
    n_features = cfg.n_features if synthetic else facts.n_features
    n_labels = cfg.n_labels if synthetic else facts.n_labels
    cost = settings_cost(cfg, n_features, n_labels, facts.n_instances)
    refusal = over_budget(cfg, cost, n_features, n_labels)
    if refusal is None and synthetic:
        # the whole run (its stream too); a listed dataset's or an upload's is checked with the data's own
        # sizes (sparse features) when Run builds the stream (dashboard.data.build_stream), before any array
        refusal = cfg.budget_error(cfg.run_cost())
    if refusal:
        errors[refusal[0]] = refusal[1]
    return errors, cost


def settings_cost(cfg: RunConfig, n_features, n_labels, n_available):
    """The core's estimate of one chunk's memory and work for these settings (None if the data's size is unknown)."""
    if n_features is None or n_labels is None:
        return None
    length = cfg.n_instances or (SYNTHETIC_DEFAULT_LENGTH if cfg.dataset == "synthetic" else n_available)
    return estimate_for(cfg, n_features=n_features, n_labels=n_labels, n_instances=length,
                        elm_names=[*ELM_VARIANTS, *ORACLES])


def sweep_cost(cfg: RunConfig, variant: str, facts):
    """The core's estimate of one run of ``variant`` alone on these settings and the data's ``facts`` (each
    sweep run pays the hidden layer, the graph and ``P_D`` by itself; the Live run page's even share of its
    variants does not), None when the data's size is unknown."""
    synthetic = cfg.dataset == "synthetic"
    return settings_cost(dataclasses.replace(cfg, models=[variant]),
                         cfg.n_features if synthetic else facts.n_features,
                         cfg.n_labels if synthetic else facts.n_labels, facts.n_instances)


def size_text(nbytes: float) -> str:
    return f"{nbytes / 1024**3:.1f} GB" if nbytes >= 0.1 * 1024**3 else f"{nbytes / 1024**2:.0f} MB"


#: The smallest hidden layer the memory advice proposes (fewer nodes learn next to nothing).
MIN_HIDDEN_ADVISED = 10


def over_budget(cfg: RunConfig, cost, n_features, n_labels):
    """``(field, message)`` when the settings' estimated memory per chunk is past MEMORY_BUDGET_BYTES, else None.

    The field is the control whose value makes the largest array: the hidden nodes (L) for the P_D fit and the
    statistics, the chunk size for the graph and the chunk's features.
    """
    if cost is None or cost.memory_bytes <= MEMORY_BUDGET_BYTES:
        return None
    head = (f"one chunk needs about {size_text(cost.memory_bytes)} of arrays (largest: {cost.largest}, "
            f"{size_text(cost.terms[cost.largest])}), past the budget of {size_text(MEMORY_BUDGET_BYTES)}")
    if "L" in cost.largest.split(":")[-1]:
        def fit(chunk):
            return largest_hidden_within(MEMORY_BUDGET_BYTES, chunk_size=chunk, n_features=n_features,
                                         n_labels=n_labels, n_neighbors=cfg.n_neighbors, n_models=cost.n_models,
                                         fits_proba=any("P_D" in t for t in cost.terms))
        here = fit(cfg.chunk_size)
        if here >= MIN_HIDDEN_ADVISED:
            return "n_hidden", f"{head}: with chunks of {cfg.chunk_size}, at most {here} hidden nodes fit"
        # (next to) nothing fits at this chunk size (wide data: the chunk's features alone fill the budget): the
        # largest chunk, halving, where a hidden layer of MIN_HIDDEN_ADVISED nodes fits, and its layer; a chunk
        # holds more than n_neighbors instances (RunConfig's rule)
        chunk, nodes = cfg.chunk_size // 2, 0
        while chunk > cfg.n_neighbors and (nodes := fit(chunk)) < MIN_HIDDEN_ADVISED:
            chunk //= 2
        if chunk > cfg.n_neighbors:
            return "n_hidden", (f"{head}: lower both the hidden nodes and the chunk size: with chunks of {chunk}, "
                                f"at most {nodes} hidden nodes fit")
        return "n_hidden", f"{head}: this data's {n_features:,} features leave no room for a hidden layer"
    return "chunk_size", f"{head}: lower the chunk size"
