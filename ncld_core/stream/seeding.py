"""Seeds made into numpy generators, one independent generator per step of a pipeline.

A stream is made in steps (ordering, drawing the flip rates, flipping; the synthetic generator has
more); each step gets a generator of its own, spawned from the one ``random_state``, so that changing
one step (e.g. no shuffling) does not change the random numbers the others see: the noise of a given
ordered stream then depends only on the seed.

>>> a, b = spawn_generators(7, 2)
>>> a2, b2 = spawn_generators(7, 2)
>>> bool(a.random() == a2.random()), bool(b.random() == b2.random())
(True, True)
>>> as_generator(0).integers(10) == as_generator(0).integers(10)
np.True_
>>> as_generator(-1)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: random_state must be None, a non-negative integer or a numpy Generator, got -1 (...)
"""

from __future__ import annotations

import numpy as np

__all__ = ["as_generator", "spawn_generators"]


def _refuse(random_state, name: str, reason: str = "") -> ValueError:
    return ValueError(
        f"{name} must be None, a non-negative integer or a numpy Generator, got {random_state!r}{reason}"
    )


def as_generator(random_state, name: str = "random_state") -> np.random.Generator:
    """A ``numpy.random.Generator`` from None, an int, a SeedSequence or a Generator (returned as is);
    anything else is a ``ValueError`` naming ``name``."""
    if isinstance(random_state, bool):
        raise ValueError(f"{name} must be None, an integer or a numpy Generator, got {random_state!r}")
    try:
        return np.random.default_rng(random_state)
    except (TypeError, ValueError) as exc:
        raise _refuse(random_state, name, f" ({exc})") from None


def spawn_generators(random_state, n: int, name: str = "random_state") -> list[np.random.Generator]:
    """Split one seed (as :func:`as_generator` takes it) into ``n`` independent generators.

    A Generator is split by ``Generator.spawn``; a seed by ``SeedSequence.spawn``.
    """
    if isinstance(random_state, np.random.Generator):
        return list(random_state.spawn(n))
    if isinstance(random_state, bool):
        raise ValueError(f"{name} must be None, an integer or a numpy Generator, got {random_state!r}")
    try:
        seq = (
            random_state
            if isinstance(random_state, np.random.SeedSequence)
            else np.random.SeedSequence(random_state)
        )
        return [np.random.default_rng(s) for s in seq.spawn(n)]
    except (TypeError, ValueError) as exc:
        raise _refuse(random_state, name, f" ({exc})") from None
