"""The controls' labels, for every message that names a setting (never its internal name).

>>> worded("n_hidden must be in [1, 100000], got 0")
'L (hidden nodes) must be in [1, 100000], got 0'
>>> label_of("chunk_size"), label_of("anything else")
('chunk size N', 'anything else')
"""

from __future__ import annotations

import re

LABELS = {
    "chunk_size": "chunk size N", "n_instances": "stream length", "shuffle_seed": "stream seed",
    "n_features": "features d", "n_labels": "labels q", "cardinality": "cardinality",
    "label_correlation": "label correlation", "noise": "Flip rates", "rho_low": "rho low", "rho_high": "rho high",
    "rho_pos": "ρ+", "rho_neg": "ρ−", "rates": "flip-rate table", "schedule": "Drift schedule",
    "models": "Variants side by side", "references": "trivial references", "model_rates": "The models are told",
    "beta": "β", "gamma": "γ", "delta": "δ", "alpha": "α", "n_hidden": "L (hidden nodes)",
    "n_neighbors": "K (neighbours)", "seed": "model seed", "detector": "Detector the models act on",
    "monitors": "Compare detectors", "dataset": "Dataset", "gammas": "γ values",
    "arff_bytes": "the ARFF file", "xml_bytes": "the label XML",
}
_NAMES = re.compile(r"(?<![\w'\"])(" + "|".join(sorted((k for k in LABELS if "_" in k), key=len, reverse=True))
                    + r")(?![\w'\"])")


def worded(message: str) -> str:
    """A core message with the controls' labels in place of internal names (``n_hidden`` -> L (hidden nodes))."""
    return _NAMES.sub(lambda m: LABELS[m.group(1)], str(message))


def label_of(key: str) -> str:
    return LABELS.get(key, key)
