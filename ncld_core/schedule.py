"""Drift schedules: where the true label distribution changes, and real streams built to follow them.

The paper studies two changes of the ground-truth label distribution (Section
III-D, "OMC under NCLD"): *concept growth* ``D^S_G -> D^M_G`` (the stream moves
from single-label to multi-label instances) and *concept reduction*
``D^M_G -> D^S_G`` (the reverse). Its experiments (Section IV, NOTES.md section 5)
put all single-label instances of a dataset first and then all multi-label ones
(growth, suffix ``_a``), or the reverse (reduction); noise is injected after
ordering. A :class:`DriftSchedule` generalises this to any number of alternating
change points; :func:`reorder_for_schedule` builds such an order from a real
dataset, and the synthetic generator uses the same schedules.

>>> import numpy as np
>>> s = DriftSchedule.parse("growth@4, reduction@6")
>>> str(s), s.initial_regime
('growth@4, reduction@6', 'single')
>>> Y = np.array([[1, 0]] * 6 + [[1, 1]] * 4, dtype=np.int8)   # 6 single-, 4 multi-label
>>> order, cps = reorder_for_schedule(Y, s, n_instances=8, random_state=0)
>>> Y[order].sum(axis=1).tolist()
[1, 1, 1, 1, 2, 2, 1, 1]
>>> [(c.position, c.kind) for c in cps]
[(4, 'growth'), (6, 'reduction')]
>>> reorder_for_schedule(Y, DriftSchedule.paper("growth"))[1]
(ChangePoint(position=6, kind='growth'),)
"""

from __future__ import annotations

import numbers
import re
from dataclasses import dataclass

import numpy as np

from ncld_core._validation import check_in_range, check_Y
from ncld_core.noise import _as_generator
from ncld_core.stream import ChangePoint

__all__ = ["DriftSchedule", "as_schedule", "reorder_for_schedule", "KINDS"]

#: The two kinds of change of the true label distribution.
KINDS = ("growth", "reduction")

# The regime a change point leaves.
_REGIME_BEFORE = {"growth": "single", "reduction": "multi"}

_TOKEN = re.compile(r"^(?P<kind>[a-z]+)\s*(?:@\s*(?P<chunk>chunk\s*:\s*)?(?P<pos>[+-]?\d+))?$")


def _check_kind(kind, where: str) -> str:
    if not isinstance(kind, str) or kind.strip().lower() not in KINDS:
        raise ValueError(f"{where}: kind must be 'growth' or 'reduction', got {kind!r}")
    return kind.strip().lower()


def _check_position(position, where: str) -> int:
    if isinstance(position, bool) or not isinstance(position, numbers.Integral):
        raise ValueError(f"{where}: position must be an integer instance index, got {position!r}")
    if position <= 0:
        raise ValueError(
            f"{where}: position must be > 0 (the regime before the first change needs at least one instance), "
            f"got {position}"
        )
    return int(position)


def _fmt(point: ChangePoint) -> str:
    return point.kind if point.position is None else f"{point.kind}@{point.position}"


@dataclass(frozen=True, init=False)
class DriftSchedule:
    """An ordered tuple of true changes of the label distribution.

    Parameters
    ----------
    points : iterable of ``(position, kind)`` pairs or :class:`~ncld_core.stream.ChangePoint`
        ``position`` is the index of the first instance of the new regime
        (an integer > 0, strictly increasing); ``kind`` is ``"growth"`` (the
        stream moves to multi-label instances) or ``"reduction"`` (to
        single-label instances). Kinds must alternate: after a growth the
        stream is already multi-label, so only a reduction can follow.
        The regime before the first point is the opposite of its kind.

        A single point may have ``position=None``: the paper's protocol, where
        the change comes after the whole first pool (see :meth:`paper`).

    Attributes
    ----------
    points : tuple of ChangePoint

    Examples
    --------
    >>> DriftSchedule([(600, "growth"), (1500, "reduction")]).positions
    (600, 1500)
    >>> DriftSchedule.from_chunks([(3, "growth")], chunk_size=500).positions
    (1500,)
    >>> DriftSchedule([(600, "growth"), (900, "growth")])
    Traceback (most recent call last):
    ...
    ValueError: drift points must alternate between growth and reduction: point 2 ('growth@900') is a growth right after a growth (the stream is already multi-label there)
    """

    points: tuple

    def __init__(self, points):
        if isinstance(points, str):
            raise ValueError("DriftSchedule takes (position, kind) pairs; use DriftSchedule.parse for text")
        try:
            raw = list(points)
        except TypeError:
            raise ValueError(f"points must be an iterable of (position, kind) pairs, got {points!r}") from None
        if not raw:
            raise ValueError("a DriftSchedule needs at least one point; use schedule=None for a stream without drift")
        out = []
        for i, p in enumerate(raw, start=1):
            where = f"drift point {i}"
            if isinstance(p, ChangePoint):
                position, kind = p.position, p.kind
            else:
                try:
                    position, kind = p
                except (TypeError, ValueError):
                    raise ValueError(f"{where} must be a (position, kind) pair, got {p!r}") from None
            kind = _check_kind(kind, where)
            if position is None:
                if len(raw) != 1:
                    raise ValueError(
                        f"{where} ({kind!r}) has no position: that form (the paper's protocol, change after "
                        "the whole first pool) is only allowed as the single point of a schedule"
                    )
            else:
                position = _check_position(position, where)
            out.append(ChangePoint(position, kind))
        for i in range(1, len(out)):
            prev, cur = out[i - 1], out[i]
            if cur.kind == prev.kind:
                state = "multi-label" if cur.kind == "growth" else "single-label"
                raise ValueError(
                    "drift points must alternate between growth and reduction: "
                    f"point {i + 1} ({_fmt(cur)!r}) is a {cur.kind} right after a {prev.kind} "
                    f"(the stream is already {state} there)"
                )
            if cur.position <= prev.position:
                raise ValueError(
                    f"drift positions must be strictly increasing: point {i + 1} ({_fmt(cur)!r}) "
                    f"is not after point {i} ({_fmt(prev)!r})"
                )
        object.__setattr__(self, "points", tuple(out))

    # -- constructors -------------------------------------------------------------
    @classmethod
    def paper(cls, kind: str) -> "DriftSchedule":
        """The paper's protocol: one change after the whole first pool (Section IV).

        ``paper("growth")`` puts every single-label instance first, then the
        multi-label ones (datasets ``*_a``); ``paper("reduction")`` the reverse.
        The position is fixed by :func:`reorder_for_schedule` (the size of the
        first pool).

        >>> str(DriftSchedule.paper("reduction")), DriftSchedule.paper("growth").is_paper
        ('reduction', True)
        """
        return cls([(None, _check_kind(kind, "paper schedule"))])

    @classmethod
    def from_chunks(cls, chunks, chunk_size: int, *, first: str | None = None) -> "DriftSchedule":
        """Build a schedule from chunk indices: a point at chunk ``k`` starts at instance ``k * chunk_size``.

        Parameters
        ----------
        chunks : iterable of ``(chunk_index, kind)`` pairs, or of chunk indices with ``first``
        chunk_size : int >= 1
        first : {"growth", "reduction"}, optional
            Kind of the first point when ``chunks`` holds bare indices; the
            following kinds alternate.

        >>> str(DriftSchedule.from_chunks([2, 5], 100, first="reduction"))
        'reduction@200, growth@500'
        """
        check_in_range(chunk_size, "chunk_size", 1, np.inf, integer=True)
        items = list(chunks)
        pairs = []
        if first is not None:
            kind = _check_kind(first, "first")
            for k in items:
                pairs.append((k, kind))
                kind = "reduction" if kind == "growth" else "growth"
        else:
            pairs = items
        points = []
        for i, p in enumerate(pairs, start=1):
            try:
                k, kind = p
            except (TypeError, ValueError):
                raise ValueError(
                    f"drift point {i}: expected a (chunk_index, kind) pair (or give first=...), got {p!r}"
                ) from None
            if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
                raise ValueError(f"drift point {i}: chunk index must be an integer >= 1, got {k!r}")
            points.append((int(k) * int(chunk_size), kind))
        return cls(points)

    @classmethod
    def parse(cls, text: str, *, chunk_size: int | None = None) -> "DriftSchedule":
        """Parse ``"growth@600, reduction@1500"`` (instance positions).

        Points are separated by commas or semicolons. ``kind@chunk:k`` gives the
        position as a chunk index (needs ``chunk_size``). A bare ``"growth"`` or
        ``"reduction"`` is the paper's protocol (:meth:`paper`). Case and spaces
        are ignored. ``str(schedule)`` gives text that parses back to it.

        >>> DriftSchedule.parse("Growth @ chunk:3; reduction@chunk:5", chunk_size=500).positions
        (1500, 2500)
        >>> DriftSchedule.parse("growth@600, growth@900")
        Traceback (most recent call last):
        ...
        ValueError: drift points must alternate between growth and reduction: point 2 ('growth@900') is a growth right after a growth (the stream is already multi-label there)
        """
        if not isinstance(text, str):
            raise ValueError(f"schedule text must be a string, got {text!r}")
        tokens = [t.strip() for t in re.split(r"[,;]", text)]
        if not any(tokens):
            raise ValueError("schedule text is empty; expected e.g. 'growth@600, reduction@1500'")
        points = []
        for i, tok in enumerate(tokens, start=1):
            m = _TOKEN.match(tok.lower())
            if not tok or m is None or m.group("kind") not in KINDS:
                raise ValueError(
                    f"cannot parse drift point {i} ({tok!r}): expected 'growth@<instance>' or "
                    "'reduction@<instance>', '<kind>@chunk:<k>' with a chunk size, or a bare kind"
                )
            pos = m.group("pos")
            if pos is None:
                points.append((None, m.group("kind")))
                continue
            pos = int(pos)
            if m.group("chunk"):
                if chunk_size is None:
                    raise ValueError(f"drift point {i} ({tok!r}) is given in chunks: pass chunk_size")
                check_in_range(chunk_size, "chunk_size", 1, np.inf, integer=True)
                if pos < 1:
                    raise ValueError(f"drift point {i} ({tok!r}): chunk index must be >= 1")
                pos *= int(chunk_size)
            points.append((pos, m.group("kind")))
        return cls(points)

    # -- views ---------------------------------------------------------------------
    def __str__(self) -> str:
        return ", ".join(_fmt(p) for p in self.points)

    def __repr__(self) -> str:
        return f"DriftSchedule({str(self)!r})"

    def __len__(self) -> int:
        return len(self.points)

    def __iter__(self):
        return iter(self.points)

    @property
    def is_paper(self) -> bool:
        """True for the paper's form, whose position is fixed only by the data."""
        return self.points[0].position is None

    @property
    def kinds(self) -> tuple:
        return tuple(p.kind for p in self.points)

    @property
    def positions(self) -> tuple:
        return tuple(p.position for p in self.points)

    @property
    def initial_regime(self) -> str:
        """``"single"`` or ``"multi"``: the regime before the first point (opposite of its kind)."""
        return _REGIME_BEFORE[self.points[0].kind]

    @property
    def change_points(self) -> tuple:
        """The points as a tuple of :class:`ChangePoint` (positions must be known)."""
        if self.is_paper:
            raise ValueError(
                f"schedule {str(self)!r} has no position yet: it is fixed by the data (reorder_for_schedule) "
                "or by at(position)"
            )
        return self.points

    def at(self, position: int) -> "DriftSchedule":
        """Give the paper form its position; a schedule with positions is returned unchanged.

        >>> str(DriftSchedule.paper("growth").at(700))
        'growth@700'
        """
        if not self.is_paper:
            return self
        return DriftSchedule([(position, self.points[0].kind)])

    def validate(self, n_instances: int) -> "DriftSchedule":
        """Check every point lies inside a stream of ``n_instances`` instances; return ``self``.

        A point at position ``p`` needs ``p < n_instances``, so that the regime it
        starts has at least one instance.

        >>> DriftSchedule.parse("growth@600, reduction@1500").validate(1200)
        Traceback (most recent call last):
        ...
        ValueError: drift point 'reduction@1500' lies beyond the stream of 1200 instances (positions must be < n_instances)
        """
        check_in_range(n_instances, "n_instances", 1, np.inf, integer=True)
        if self.is_paper:
            if n_instances < 2:
                raise ValueError(f"a stream with a drift needs at least 2 instances, got n_instances={n_instances}")
            return self
        for p in self.points:
            if p.position >= n_instances:
                raise ValueError(
                    f"drift point {_fmt(p)!r} lies beyond the stream of {n_instances} instances "
                    "(positions must be < n_instances)"
                )
        return self

    def segments(self, n_instances: int) -> list:
        """``[(start, stop, regime), ...]`` covering ``[0, n_instances)``; regime is ``"single"`` or ``"multi"``.

        >>> DriftSchedule.parse("reduction@3").segments(5)
        [(0, 3, 'multi'), (3, 5, 'single')]
        """
        self.validate(n_instances)
        if self.is_paper:
            raise ValueError(f"schedule {str(self)!r} has no position: call at(position) first")
        bounds = [0, *self.positions, n_instances]
        regime = self.initial_regime
        out = []
        for k in range(len(bounds) - 1):
            out.append((bounds[k], bounds[k + 1], regime))
            regime = "multi" if regime == "single" else "single"
        return out


def as_schedule(schedule, *, optional: bool = False) -> DriftSchedule | None:
    """``schedule`` as a DriftSchedule (parsing a string); with ``optional``, None, "" and "none" give None.

    >>> as_schedule("none", optional=True) is None, as_schedule("growth@600").points[0].position
    (True, 600)
    """
    if optional and (schedule is None or (isinstance(schedule, str) and schedule.strip().lower() in ("", "none"))):
        return None
    if isinstance(schedule, DriftSchedule):
        return schedule
    if isinstance(schedule, str):
        return DriftSchedule.parse(schedule)
    none = "None, " if optional else ""
    raise ValueError(f"schedule must be {none}a DriftSchedule or a string like 'growth@600', got {schedule!r}")


def reorder_for_schedule(Y_true, schedule, n_instances: int | None = None, *, random_state=None, shuffle: bool = True):
    """Order a real dataset's instances so that its true label cardinality follows ``schedule``.

    Instances are split into two pools by their *true* cardinality: the
    single-label pool (cardinality <= 1; instances with no relevant label go
    here too, as they are not multi-label) and the multi-label pool
    (cardinality >= 2). Each segment of the schedule takes fresh instances of
    its pool, without replacement, in random order (``shuffle=True``) or in
    dataset order (``shuffle=False``).

    Parameters
    ----------
    Y_true : array-like (n, q) in {0, 1} or {-1, +1}
        Ground-truth labels (never the noisy ones: the schedule is about the truth).
    schedule : DriftSchedule or str
        With positions, the segments are ``[0, p1), [p1, p2), ...``. The last
        segment runs to ``n_instances`` if given, otherwise it takes every
        remaining instance of its pool.
        The paper's form (:meth:`DriftSchedule.paper`, or a bare ``"growth"``)
        puts the whole first pool first and the whole second pool after it, so
        the change is at the size of the first pool. With ``n_instances``, both
        pools are subsampled in proportion (the change then sits at
        ``round(n_instances * n_first / (n_first + n_second))``).
    n_instances : int, optional
        Length of the stream.
    random_state : None, int or numpy.random.Generator
    shuffle : bool
        Shuffle within segments (default), or keep the dataset's order inside each pool.

    Returns
    -------
    order : int64 ndarray
        Indices into ``Y_true`` (a selection without repetition), in stream order.
    change_points : tuple of ChangePoint
        The true change points of the ordered stream.

    Raises
    ------
    ValueError
        When a pool holds fewer instances than the segments ask for; the message
        gives the dataset's single-/multi-label counts and what was asked.
    """
    Y = check_Y(Y_true, name="Y_true")
    sched = as_schedule(schedule)
    n_total = Y.shape[0]
    card = Y.sum(axis=1, dtype=np.int64)
    pools = {"single": np.flatnonzero(card <= 1), "multi": np.flatnonzero(card >= 2)}
    have = {k: v.size for k, v in pools.items()}
    counts = f"the dataset has {have['single']} single-label (cardinality <= 1) and {have['multi']} multi-label (cardinality >= 2) instances"
    if n_instances is not None:
        check_in_range(n_instances, "n_instances", 2, np.inf, integer=True)
        if n_instances > n_total:
            raise ValueError(f"n_instances={n_instances} exceeds the {n_total} instances of the dataset")

    first = sched.initial_regime
    second = "multi" if first == "single" else "single"
    if sched.is_paper:
        if have[first] == 0 or have[second] == 0:
            raise ValueError(
                f"schedule {str(sched)!r} (paper protocol) needs both {first}-label and {second}-label "
                f"instances, but {counts}"
            )
        if n_instances is None:
            position, n = have[first], n_total
        else:
            n = n_instances
            # Proportional subsampling keeps the paper's ratio of the two regimes.
            position = int(round(n * have[first] / n_total))
            position = min(max(position, 1, n - have[second]), n - 1, have[first])
        sched = sched.at(position)
    elif n_instances is None:
        # The last segment is open-ended: it takes what is left of its pool.
        segs = sched.segments(sched.positions[-1] + 1)
        need_before = {"single": 0, "multi": 0}
        for start, stop, regime in segs[:-1]:
            need_before[regime] += stop - start
        last = segs[-1][2]
        asked = dict(need_before)
        asked[last] += 1  # the open last segment needs at least one instance
        if asked["single"] > have["single"] or asked["multi"] > have["multi"]:
            raise ValueError(
                f"schedule {str(sched)!r} needs at least {asked['single']} single-label and "
                f"{asked['multi']} multi-label instances, but {counts}"
            )
        n = sched.positions[-1] + have[last] - need_before[last]
    else:
        n = n_instances

    segs = sched.segments(n)
    need = {"single": 0, "multi": 0}
    for start, stop, regime in segs:
        need[regime] += stop - start
    if need["single"] > have["single"] or need["multi"] > have["multi"]:
        raise ValueError(
            f"schedule {str(sched)!r} over {n} instances needs {need['single']} single-label and "
            f"{need['multi']} multi-label instances, but {counts}"
        )

    rng = _as_generator(random_state)
    # One permutation per pool, cut into consecutive slices: segments are disjoint
    # (no instance twice) and each is in random order.
    drawn = {}
    for regime in ("single", "multi"):
        idx = pools[regime]
        drawn[regime] = rng.permutation(idx) if shuffle else idx
    used = {"single": 0, "multi": 0}
    parts = []
    for start, stop, regime in segs:
        k = stop - start
        parts.append(drawn[regime][used[regime] : used[regime] + k])
        used[regime] += k
    order = np.concatenate(parts).astype(np.int64, copy=False)
    return order, sched.change_points
