"""Streams: a dataset made into chunks with label noise and planted changes.

* :mod:`~ncld_core.stream.stream` -- the :class:`Stream` type and its :class:`ChangePoint` s and :class:`NoiseChange` s;
* :mod:`~ncld_core.stream.seeding` -- seeds made into independent generators, one per step;
* :mod:`~ncld_core.stream.noise` -- per-label flip rates and label flipping (Eq. NR);
* :mod:`~ncld_core.stream.schedule` -- concept growth / reduction / shift schedules;
* :mod:`~ncld_core.stream.synthetic` -- the embedded generator with a known truth;
* :mod:`~ncld_core.stream.builder` -- a dataset + noise + schedule made into a :class:`Stream`.
"""

from .stream import ChangePoint, NoiseChange, Stream

__all__ = ["Stream", "ChangePoint", "NoiseChange"]
