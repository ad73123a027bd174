"""The paper's baselines and peers (River BR-LR / CC-LR, windowed ML-kNN, MLSAMPkNN), each with the chunk API of the core.

Every baseline has ``partial_fit(X, Y)`` per chunk, ``decision_function(X)`` and
``predict(X)`` (in the label values and dtype of the fitted ``Y``), parameters set in ``__init__``.  None is told the
flip rates: they are the methods the paper compares against, run as published.

``BASELINES`` maps a display name to ``"module:Class"``; :func:`make_baseline`
imports lazily, so optional dependencies (River) are needed only when used.

>>> sorted(BASELINES)[:3]
['ELM-CDLL', 'FALT', 'MCIC']
"""

from __future__ import annotations

import importlib

__all__ = ["BASELINES", "make_baseline", "baseline_class", "OPTIONAL"]

BASELINES = {
    "OSML-ELM": "osml_elm:OSMLELM",
    "ELM-CDLL": "elm_cdll:ELMCDLL",
    "FALT": "thresholding:FALT",
    "SALT": "thresholding:SALT",
    "PAML-I": "paml:PAMLI",
    "PAML-II": "paml:PAMLII",
    "MCIC": "mcic:MCIC",
    "MW": "mw:MW",
    "River BR-LR": "river_peer:RiverBinaryRelevance",
    "River CC-LR": "river_chain:RiverClassifierChain",
    "ML-kNN (window)": "mlknn:WindowMLkNN",
    "MLSAMPkNN": "mlsamknn:MLSAMPkNN",
}

#: Baselines that need an optional dependency, with the pip extra that provides it.
OPTIONAL = {"River BR-LR": "river"}


def baseline_class(name: str) -> type:
    """The class of a baseline by display name; a ValueError if the name is unknown or its module cannot be
    imported (an optional dependency missing)."""
    try:
        spec = BASELINES[name]
    except KeyError:
        raise ValueError(f"unknown baseline {name!r}; available: {', '.join(BASELINES)}") from None
    module_name, cls_name = spec.split(":")
    try:
        module = importlib.import_module(f"{__name__}.{module_name}")
    except ImportError as exc:
        extra = OPTIONAL.get(name)
        hint = f" (install the optional dependency: pip install {extra})" if extra else ""
        raise ValueError(f"baseline {name!r} is not available: {exc}{hint}") from None
    return getattr(module, cls_name)


def make_baseline(name: str, *, random_state=None, **params):
    """A fresh baseline by display name (``random_state`` passed when the class takes it)."""
    cls = baseline_class(name)
    import inspect

    if "random_state" in inspect.signature(cls.__init__).parameters:
        params.setdefault("random_state", random_state)
    return cls(**params)
