"""The limits the library itself keeps, and how every limit is read: once from the environment
(``NCLD_<NAME>``), else its default. ``docs/deploy.md`` ("Limits") says what each one bounds, its default and
why. The server's own limits (queue, caches, sessions, upload parses) are :mod:`dashboard.serving.limits`,
read the same way (:class:`EnvLimits`).

>>> Limits.from_env({"NCLD_PARSED_DISK_DAYS": "7"}).parsed_disk_days
7.0
>>> Limits.from_env({"NCLD_RUN_MEMORY_BYTES": "zero"})
Traceback (most recent call last):
...
ValueError: NCLD_RUN_MEMORY_BYTES must be a number, got 'zero'
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import ClassVar

__all__ = ["EnvLimits", "Limits", "LIMITS", "ENV_PREFIX"]

ENV_PREFIX = "NCLD_"


class EnvLimits:
    """A frozen dataclass of limits read from the environment: :meth:`from_env`."""

    #: The limits that may be 0, with their largest value (all others must be positive).
    AT_LEAST_ZERO: ClassVar[dict[str, int]] = {}

    @classmethod
    def from_env(cls, environ=None):
        """The defaults, each replaced by ``NCLD_<FIELD NAME IN CAPITALS>`` when set; a ValueError naming the
        variable when its value is not a positive number (a whole number in its range for those of
        :attr:`AT_LEAST_ZERO`, which may be 0)."""
        environ = os.environ if environ is None else environ
        values = {}
        for f in dataclasses.fields(cls):
            name = ENV_PREFIX + f.name.upper()
            raw = environ.get(name)
            if raw is None or raw == "":
                continue
            kind = int if isinstance(f.default, int) else float
            try:
                value = kind(float(raw)) if kind is int else kind(raw)
            except ValueError:
                raise ValueError(f"{name} must be a number, got {raw!r}") from None
            if f.name in cls.AT_LEAST_ZERO:
                if not float(raw).is_integer() or not 0 <= value <= cls.AT_LEAST_ZERO[f.name]:
                    raise ValueError(f"{name} must be in [0, {cls.AT_LEAST_ZERO[f.name]}], got {raw!r}")
            elif value <= 0:
                raise ValueError(f"{name} must be positive, got {raw!r}")
            values[f.name] = value
        return cls(**values)


@dataclass(frozen=True)
class Limits(EnvLimits):
    """The library's limits (see ``docs/deploy.md``, section "Limits")."""

    #: Estimated memory of a whole run (stream, models, every variant): refused past it, before any allocation.
    run_memory_bytes: int = 2 * 1024**3
    #: Bytes the parsed-dataset folder on disk may hold (oldest entries removed first).
    parsed_disk_bytes: int = 1024**3
    #: Days an unread entry of the parsed-dataset folder is kept.
    parsed_disk_days: float = 30.0


#: The limits of this process (read once, at import).
LIMITS = Limits.from_env()
