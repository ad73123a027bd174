"""Noise families: how per-label flip rates ``(rho_pos, rho_neg)`` are drawn for a stream.

Every claim the project makes about noise is measured under each family a user meets, not only
the paper's (Section IV).  A family is one entry of :data:`NOISE_FAMILIES`; adding one is one
function and one entry, and every stream builder, ``StreamSpec(noise=...)``, the CLI and the
benchmarks that loop over :data:`NOISE_FAMILIES` take it.

``paper``
    both rates of every label ~ U[0.2, 0.4], independently (Section IV of the paper).
``missing``
    missing labels, the most common real noise: annotators skip relevant labels far more often
    than they add irrelevant ones.  ``rho_pos ~ U[0.1, 0.3]``;
    ``rho_neg ~ U[0.01, 0.05] * min(1, 14 / q)`` (so that the false positives added per instance
    stay near those of a 14-label set whatever the number of labels ``q``).
``mixed``
    each label independently from ``paper`` or ``missing`` with probability 1/2: rates that differ
    in kind across labels, as when labels come from different annotators or tools.

>>> import numpy as np
>>> p, n = draw_family_rates("missing", 100, random_state=0)
>>> bool(p.min() >= 0.1 and p.max() <= 0.3 and n.max() <= 0.05)
True
>>> p, n = draw_family_rates("paper", 3, random_state=0)
>>> bool(np.all((p >= 0.2) & (p <= 0.4) & (n >= 0.2) & (n <= 0.4)))
True
>>> draw_family_rates("gaussian", 3)
Traceback (most recent call last):
...
ValueError: noise family 'gaussian' is unknown; choose one of: paper, missing, mixed
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ncld_core.stream.seeding import as_generator
from ncld_core.validation import check_flip_rates, check_in_range

__all__ = ["NoiseFamily", "NOISE_FAMILIES", "draw_family_rates"]


@dataclass(frozen=True)
class NoiseFamily:
    """One way of drawing per-label rates: ``draw(n_labels, rng) -> (rho_pos, rho_neg)``; ``max_sum``: the largest
    ``rho_pos + rho_neg`` a label's draw can have (a noise change of a drift schedule multiplies the rates by its
    factor, which must keep every sum below 1: ``ncld_core.config.StreamSpec`` refuses a larger factor before any
    draw)."""

    name: str
    description: str
    draw: Callable[[int, np.random.Generator], tuple]
    max_sum: float


def _paper(n_labels: int, rng: np.random.Generator):
    return rng.uniform(0.2, 0.4, n_labels), rng.uniform(0.2, 0.4, n_labels)


def _missing(n_labels: int, rng: np.random.Generator):
    rho_pos = rng.uniform(0.1, 0.3, n_labels)
    rho_neg = rng.uniform(0.01, 0.05, n_labels) * min(1.0, 14.0 / n_labels)
    return rho_pos, rho_neg


def _mixed(n_labels: int, rng: np.random.Generator):
    paper_pos, paper_neg = _paper(n_labels, rng)
    missing_pos, missing_neg = _missing(n_labels, rng)
    use_paper = rng.random(n_labels) < 0.5
    return np.where(use_paper, paper_pos, missing_pos), np.where(use_paper, paper_neg, missing_neg)


NOISE_FAMILIES: dict[str, NoiseFamily] = {
    family.name: family
    for family in (
        NoiseFamily("paper", "both rates ~ U[0.2, 0.4] per label (the paper's Section IV)", _paper, 0.4 + 0.4),
        NoiseFamily("missing", "missing labels: rho_pos ~ U[0.1, 0.3], rho_neg ~ U[0.01, 0.05] x min(1, 14/q)",
                    _missing, 0.3 + 0.05),
        NoiseFamily("mixed", "each label from 'paper' or 'missing' with probability 1/2", _mixed, 0.4 + 0.4),
    )
}


def draw_family_rates(family: str, n_labels: int, *, random_state=None):
    """Draw ``(rho_pos, rho_neg)``, each of shape ``(n_labels,)``, from the noise family named ``family``."""
    if family not in NOISE_FAMILIES:
        raise ValueError(f"noise family {family!r} is unknown; choose one of: {', '.join(NOISE_FAMILIES)}")
    check_in_range(n_labels, "n_labels", 1, np.inf, integer=True)
    rho_pos, rho_neg = NOISE_FAMILIES[family].draw(int(n_labels), as_generator(random_state))
    return check_flip_rates(rho_pos, rho_neg, n_labels, source=f"noise family {family!r}")
