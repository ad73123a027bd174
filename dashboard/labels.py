"""The controls' labels, for every message that names a setting (never its internal name).

>>> worded("n_hidden must be in [1, 100000], got 0")
'hidden nodes must be in [1, 100000], got 0'
>>> label_of("chunk_size"), label_of("anything else")
('chunk size', 'anything else')
>>> from ncld_core.config import RunConfig
>>> settings_text(RunConfig(schedule="growth@2500", decision="paper"))
'change points growth@2500, Decision rule paper'
>>> settings_text(RunConfig())
'the default settings'
"""

from __future__ import annotations

import re

LABELS = {
    "chunk_size": "chunk size", "n_instances": "stream length", "shuffle_seed": "stream seed",
    "n_features": "feature count", "n_labels": "label count", "cardinality": "labels per instance",
    "label_correlation": "label correlation", "noise": "label noise", "rho_low": "lowest flip rate",
    "rho_high": "highest flip rate", "rho_pos": "drop rate", "rho_neg": "add rate", "rates": "flip-rate table",
    "schedule": "change points", "models": "models side by side", "references": "trivial references",
    "model_rates": "The models are told", "beta": "label fit weight", "gamma": "ranking weight",
    "delta": "false-alarm rate", "alpha": "ridge penalty", "n_hidden": "hidden nodes", "n_neighbors": "neighbours",
    "seed": "model seed", "detector": "Detector the models act on", "monitors": "Compare detectors",
    "decision": "Decision rule", "dataset": "Dataset", "gammas": "γ values", "arff_bytes": "the ARFF file",
    "xml_bytes": "the label XML", "trusted_fraction": "trusted sample (share of each chunk)",
}
_NAMES = re.compile(r"(?<![\w'\"])(" + "|".join(sorted((k for k in LABELS if "_" in k), key=len, reverse=True))
                    + r")(?![\w'\"])")


def worded(message: str) -> str:
    """A core message with the controls' labels in place of internal names (``n_hidden`` -> hidden nodes)."""
    return _NAMES.sub(lambda m: LABELS[m.group(1)], str(message))


def label_of(key: str) -> str:
    return LABELS.get(key, key)


def without_label(key: str, message: str) -> str:
    """``message`` without a leading ``"<label of key>: "`` (where the label is shown beside it already).

    >>> without_label("rates", "flip-rate table: rho_pos of label 0 must be in [0, 1)")
    'rho_pos of label 0 must be in [0, 1)'
    >>> without_label("chunk_size", "chunk size must be a whole number, got 250.5")
    'must be a whole number, got 250.5'
    """
    label = label_of(key)
    for head in (f"{label}:", f"{label} must "):  # "<label> must ...": the label once, beside it ("must ...")
        if message.lower().startswith(head.lower()):
            return message[len(label):].lstrip(": ")
    return message


def errors_text(errors: dict) -> str:
    """Every error of the settings on one line, each after its control's label (Markdown, escaped): what the
    run, sweep and data pages say when the settings hold them back.

    >>> text = errors_text({"rates": "flip-rate table: cell 3 is empty", "beta": "empty"})
    >>> text.count("flip"), text.count("**")   # each label once, in bold
    (1, 4)
    """
    from .ui import md_escape

    return "; ".join(f"**{md_escape(label_of(k))}**: {md_escape(without_label(k, v))}" for k, v in errors.items())


def value_text(value) -> str:
    """A setting's value as the page says it: ``on``/``off``, ``0.5``, ``[a, b]`` or ``none``, ``all`` for None."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(value_text(v) for v in value) + "]" if value else "none"
    return "all" if value is None else str(value)


def changed_settings(cfg) -> list[tuple[str, str]]:
    """Every setting of ``cfg`` (a :class:`ncld_core.config.RunConfig`) that differs from the defaults, in
    field order, as (the control's label, the value) -- what a run uses beyond the defaults, all of it."""
    import dataclasses

    default = type(cfg)()
    return [(label_of(f.name), value_text(getattr(cfg, f.name))) for f in dataclasses.fields(cfg)
            if getattr(cfg, f.name) != getattr(default, f.name)]


def settings_text(cfg) -> str:
    """:func:`changed_settings` in one line (the "This run:" caption, a pinned run, a report's notes)."""
    return ", ".join(f"{label} {value}" for label, value in changed_settings(cfg)) or "the default settings"
