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

A third kind, ``shift`` (not in the paper), changes *which* labels are relevant
while keeping every instance's cardinality: from a shift on, the ground-truth
label columns are swapped by a fixed involution pairing labels by frequency
(most frequent with least frequent, ...; :func:`shift_permutation`), and a
second shift swaps them back (:func:`apply_label_shifts`). A shift does not
change the single-/multi-label regime and stays out of the growth/reduction
alternation; it must always be given a position. It is a true change of the
label distribution that leaves every instance's true cardinality unchanged: a
cardinality-based detector can react to it only indirectly (per-label flip
rates now meet other prevalences, which moves the *observed* cardinality).

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
>>> t = DriftSchedule.parse("growth@4, shift@5, reduction@6")
>>> t.segments(8), t.shift_positions
([(0, 4, 'single'), (4, 6, 'multi'), (6, 8, 'single')], (5,))
>>> apply_label_shifts(Y[:3], [ChangePoint(1, "shift")]).tolist()   # label 0 is the frequent one
[[1, 0], [0, 1], [0, 1]]

A fourth kind, ``noise``, is a change of the label noise, not of the truth: ``noise@3000x1.5`` multiplies every
label's flip rates by 1.5 from instance 3000 on (``x0`` makes the labels clean, ``x1`` brings back the stream's
own rates). It keeps the order and the truth; the noise injection applies it
(:func:`~ncld_core.stream.noise.apply_label_noise`) for every noise family. What the models are *told* stays the
stream's own rates (``Stream.rho_pos`` / ``rho_neg``, the configured ones): the noise moves under a model told the
rates, whose cardinality estimate then leaves the truth while the observed cardinality moves with the noise
(docs/interventions.md). Noise changes count in :data:`MAX_SCHEDULE_POINTS` and are kept apart from the changes of
the labels (:attr:`DriftSchedule.noise_changes`; a stream's ``noise_changes``, never its ``change_points``).

>>> u = DriftSchedule.parse("reduction@1000, noise@2500x1.5, growth@2500")
>>> str(u), u.noise_changes, u.positions
('reduction@1000, growth@2500, noise@2500x1.5', (NoiseChange(position=2500, factor=1.5),), (1000, 2500))
>>> DriftSchedule.parse(str(u)) == u
True
"""

from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass

import numpy as np

from ncld_core.validation import check_in_range, check_Y
from ncld_core.stream.seeding import as_generator
from ncld_core.stream.stream import ChangePoint, NoiseChange

__all__ = [
    "DriftSchedule",
    "as_schedule",
    "reorder_for_schedule",
    "shift_permutation",
    "apply_label_shifts",
    "append_change",
    "noise_factor_step",
    "KINDS",
    "REGIME_KINDS",
    "NOISE_KIND",
    "ALL_KINDS",
    "MAX_NOISE_FACTOR",
    "MAX_SCHEDULE_POINTS",
]

#: The kinds of change of the true label distribution: ``growth`` (to multi-label
#: instances), ``reduction`` (to single-label instances) and ``shift`` (other labels
#: relevant, same cardinality).
KINDS = ("growth", "reduction", "shift")

#: The most change points a schedule may have. The presets have one, the drift benchmark's streams a handful; 100
#: is a change every 1 % of any stream, more than a detector can be told apart on (each change needs chunks before
#: the next) or a reader can follow. Every point is a row of the dashboard's sidebar (its widgets' cost grows
#: faster than the rows: a link of 1,000 points took 31 s before Run) and a mark of its preview. Checked by
#: counting, before any parsing (RunConfig, the link, the command line and the sidebar all parse through here).
MAX_SCHEDULE_POINTS = 100

#: The kinds that change the single-/multi-label regime; they must alternate.
REGIME_KINDS = ("growth", "reduction")

#: The kind of a change of the label *noise* (``noise@3000x1.5``): every label's flip rates times the factor from
#: there on. Not a change of the true label distribution: kept apart (:attr:`DriftSchedule.noise_changes`).
NOISE_KIND = "noise"
#: Every kind a schedule's text may name.
ALL_KINDS = (*KINDS, NOISE_KIND)
#: The largest factor a noise change may give the flip rates (Eq. NR bounds it further for a stream's own rates:
#: ``ncld_core.config.StreamSpec``, :func:`ncld_core.stream.noise.apply_label_noise`).
MAX_NOISE_FACTOR = 10.0

# The regime a change point leaves, and the one it starts.
_REGIME_BEFORE = {"growth": "single", "reduction": "multi"}
_REGIME_AFTER = {"growth": "multi", "reduction": "single"}

#: ``initial_regime`` of a schedule without growth or reduction: the schedule does not
#: sort instances by cardinality (random order on real data, one constant expected
#: cardinality in the synthetic stream).
MIXED = "mixed"

_TOKEN = re.compile(r"^(?P<kind>[a-z]+)\s*(?:@\s*(?P<chunk>chunk\s*:\s*)?(?P<pos>[+-]?\d+))?"
                    r"(?:\s*[x×*]\s*(?P<factor>\S+))?$")


def _check_kind(kind, where: str, kinds=KINDS) -> str:
    if not isinstance(kind, str) or kind.strip().lower() not in kinds:
        names = ", ".join(repr(k) for k in kinds[:-1]) + f" or {kinds[-1]!r}"
        raise ValueError(f"{where}: kind must be {names}, got {kind!r}")
    return kind.strip().lower()


_NO_PAPER_SHIFT = "a shift needs a position ('shift@<instance>' or 'shift@chunk:<k>'): it has no paper form"
_NO_PAPER_NOISE = "a noise change needs a position and a factor, e.g. 'noise@3000x1.5' (or 'noise@chunk:12x1.5')"
_NEEDS_FACTOR = ("a noise change needs its factor, e.g. 'noise@3000x1.5': the flip rates times 1.5 from instance "
                 "3000 on")


def _check_position(position, where: str) -> int:
    if isinstance(position, bool) or not isinstance(position, numbers.Integral):
        raise ValueError(f"{where}: position must be an integer instance index, got {position!r}")
    if position <= 0:
        raise ValueError(
            f"{where}: position must be > 0 (the regime before the first change needs at least one instance), "
            f"got {position}"
        )
    return int(position)


def _check_count(n: int) -> None:
    """A schedule of ``n`` points (or separated parts of a text) past :data:`MAX_SCHEDULE_POINTS`: a ValueError.

    >>> _check_count(101)
    Traceback (most recent call last):
    ...
    ValueError: a drift schedule has at most 100 change points, got 101
    """
    if n > MAX_SCHEDULE_POINTS:
        raise ValueError(f"a drift schedule has at most {MAX_SCHEDULE_POINTS} change points, got {n:,}")


def _factor_text(factor: float) -> str:
    """``1.5`` -> ``"1.5"``, ``2.0`` -> ``"2"``: the shortest text that reads back as the same number."""
    short = format(factor, "g")
    return short if float(short) == factor else repr(float(factor))


def _fmt(point) -> str:
    if isinstance(point, NoiseChange):
        return f"{NOISE_KIND}@{point.position}x{_factor_text(point.factor)}"
    return point.kind if point.position is None else f"{point.kind}@{point.position}"


def _is_noise(kind) -> bool:
    return isinstance(kind, str) and kind.strip().lower() == NOISE_KIND


def _check_factor(factor, where: str) -> float:
    """A noise change's factor: a number in [0, :data:`MAX_NOISE_FACTOR`]; a ValueError naming ``where`` otherwise.

    >>> _check_factor(-1, "drift point 1")
    Traceback (most recent call last):
    ...
    ValueError: drift point 1: a noise change's factor must be a number in [0, 10] (the flip rates are multiplied by it from there on), got -1
    """
    if (isinstance(factor, bool) or not isinstance(factor, numbers.Real) or not math.isfinite(factor)
            or not 0 <= factor <= MAX_NOISE_FACTOR):
        raise ValueError(f"{where}: a noise change's factor must be a number in [0, {MAX_NOISE_FACTOR:g}] (the flip "
                         f"rates are multiplied by it from there on), got {factor!r}")
    return float(factor)


def _as_item(p, where: str):
    """``(position, kind, factor)`` of a ChangePoint, a NoiseChange, a ``(position, kind)`` pair or a
    ``(position, "noise", factor)`` triple (factor None for the others); a ValueError naming ``where`` otherwise."""
    if isinstance(p, NoiseChange):
        return p.position, NOISE_KIND, p.factor
    if isinstance(p, ChangePoint):
        return p.position, p.kind, None
    try:
        parts = tuple(p)
    except TypeError:
        parts = ()
    if isinstance(p, str) or len(parts) not in (2, 3):
        raise ValueError(f"{where} must be a ChangePoint, a NoiseChange, a (position, kind) pair or a "
                         f"(position, 'noise', factor) triple, got {p!r}")
    return (*parts, None) if len(parts) == 2 else parts


@dataclass(frozen=True, init=False)
class DriftSchedule:
    """An ordered tuple of true changes of the label distribution.

    Parameters
    ----------
    points : iterable of ``(position, kind)`` pairs or :class:`~ncld_core.stream.stream.ChangePoint`
        ``position`` is the index of the first instance of the new regime
        (an integer > 0, strictly increasing); ``kind`` is ``"growth"`` (the
        stream moves to multi-label instances), ``"reduction"`` (to
        single-label instances) or ``"shift"`` (the label columns are swapped
        by frequency, see :func:`apply_label_shifts`; the regime is kept).
        Growths and reductions must alternate, shifts in between not
        counting: after a growth the stream is already multi-label, so only a
        reduction can follow. The regime before the first growth/reduction is
        the opposite of its kind.

        A single growth or reduction may have ``position=None``: the paper's
        protocol, where the change comes after the whole first pool (see
        :meth:`paper`). A shift always needs a position.

        A change of the label *noise* is a :class:`~ncld_core.stream.stream.NoiseChange` or a
        ``(position, "noise", factor)`` triple: every label's flip rates times ``factor`` (a number in
        [0, :data:`MAX_NOISE_FACTOR`]) from ``position`` on, until the next noise change. Noise changes are
        strictly increasing among themselves, may share an instance with a change of the labels, and do not
        count in the alternation.

    Attributes
    ----------
    points : tuple of ChangePoint
        The changes of the true label distribution (what iterating a schedule gives).
    noise_changes : tuple of NoiseChange
        The changes of the noise; every change in the text's order is :attr:`changes`.

    Examples
    --------
    >>> DriftSchedule([(600, "growth"), (1500, "reduction")]).positions
    (600, 1500)
    >>> DriftSchedule.from_chunks([(3, "growth")], chunk_size=500).positions
    (1500,)
    >>> DriftSchedule([(600, "growth"), (900, "shift"), (1200, "reduction"), (1300, "shift")]).kinds
    ('growth', 'shift', 'reduction', 'shift')
    >>> DriftSchedule([(600, "growth"), (900, "growth")])
    Traceback (most recent call last):
    ...
    ValueError: drift points must alternate between growth and reduction: point 2 ('growth@900') is a growth right after a growth (the stream is already multi-label there)
    """

    points: tuple
    noise_changes: tuple

    def __init__(self, points):
        if isinstance(points, str):
            raise ValueError("DriftSchedule takes (position, kind) pairs; use DriftSchedule.parse for text")
        try:
            raw = list(points)
        except TypeError:
            raise ValueError(f"points must be an iterable of (position, kind) pairs, got {points!r}") from None
        _check_count(len(raw))
        if not raw:
            raise ValueError("a DriftSchedule needs at least one point; use schedule=None for a stream without drift")
        items = [(i, *_as_item(p, f"drift point {i}")) for i, p in enumerate(raw, start=1)]
        n_points = sum(1 for _, _, kind, _ in items if not _is_noise(kind))
        out, noise, given = [], [], []  # given: (number, item) in the order given
        for i, position, kind, factor in items:
            where = f"drift point {i}"
            if _is_noise(kind):
                if position is None:
                    raise ValueError(f"{where}: {_NO_PAPER_NOISE}")
                if factor is None:
                    raise ValueError(f"{where}: {_NEEDS_FACTOR}")
                change = NoiseChange(_check_position(position, where), _check_factor(factor, where))
                noise.append((i, change))
                given.append((i, change))
                continue
            if factor is not None:
                raise ValueError(f"{where}: only a noise change takes a factor, got {kind!r} with factor {factor!r}")
            kind = _check_kind(kind, where, ALL_KINDS)
            if position is None:
                if kind == "shift":
                    raise ValueError(f"{where}: {_NO_PAPER_SHIFT}")
                if n_points != 1:
                    raise ValueError(
                        f"{where} ({kind!r}) has no position: that form (the paper's protocol, change after "
                        "the whole first pool) is only allowed as the single point of a schedule (noise changes aside)"
                    )
            else:
                position = _check_position(position, where)
            out.append((i, ChangePoint(position, kind)))
            given.append((i, out[-1][1]))
        # Alternation of the regime changes; shifts keep the regime and are skipped.
        regime = [(k, i, p) for k, (i, p) in enumerate(out) if p.kind != "shift"]
        for (k0, i0, prev), (k1, i1, cur) in zip(regime, regime[1:]):
            if cur.kind == prev.kind:
                state = "multi-label" if cur.kind == "growth" else "single-label"
                between = "" if k1 == k0 + 1 else f" (point {i0}, {_fmt(prev)!r}; the shifts in between keep the regime)"
                raise ValueError(
                    "drift points must alternate between growth and reduction: "
                    f"point {i1} ({_fmt(cur)!r}) is a {cur.kind} right after a {prev.kind}{between} "
                    f"(the stream is already {state} there)"
                )
        # Strictly increasing within the changes of the labels and within the noise changes; a noise change may
        # share its instance with a change of the labels, and the text gives them in order of position.
        for group in (out, noise):
            for (i0, prev), (i1, cur) in zip(group, group[1:]):
                if cur.position <= prev.position:
                    raise ValueError(
                        f"drift positions must be strictly increasing: point {i1} ({_fmt(cur)!r}) "
                        f"is not after point {i0} ({_fmt(prev)!r})"
                    )
        placed = [(i, p) for i, p in given if p.position is not None]
        for (i0, prev), (i1, cur) in zip(placed, placed[1:]):
            if cur.position < prev.position:
                raise ValueError(
                    f"drift positions must be increasing: point {i1} ({_fmt(cur)!r}) is before point {i0} "
                    f"({_fmt(prev)!r})"
                )
        object.__setattr__(self, "points", tuple(p for _, p in out))
        object.__setattr__(self, "noise_changes", tuple(c for _, c in noise))

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
        >>> DriftSchedule.paper("shift")
        Traceback (most recent call last):
        ...
        ValueError: paper schedule: a shift needs a position ('shift@<instance>' or 'shift@chunk:<k>'): it has no paper form
        """
        if isinstance(kind, str) and kind.strip().lower() == "shift":
            raise ValueError(f"paper schedule: {_NO_PAPER_SHIFT}")
        return cls([(None, _check_kind(kind, "paper schedule", REGIME_KINDS))])

    @classmethod
    def from_chunks(cls, chunks, chunk_size: int, *, first: str | None = None) -> "DriftSchedule":
        """Build a schedule from chunk indices: a point at chunk ``k`` starts at instance ``k * chunk_size``.

        Parameters
        ----------
        chunks : iterable of ``(chunk_index, kind)`` pairs, or of chunk indices with ``first``
            ``kind`` may be ``"shift"`` in the pairs; a noise change is a triple ``(chunk_index, "noise", factor)``.
        chunk_size : int >= 1
        first : {"growth", "reduction"}, optional
            Kind of the first point when ``chunks`` holds bare indices; the
            following kinds alternate (give pairs for shifts).

        >>> str(DriftSchedule.from_chunks([2, 5], 100, first="reduction"))
        'reduction@200, growth@500'
        >>> str(DriftSchedule.from_chunks([(2, "shift"), (4, "growth"), (6, "shift")], 100))
        'shift@200, growth@400, shift@600'
        >>> str(DriftSchedule.from_chunks([(4, "growth"), (4, "noise", 2)], 100))
        'growth@400, noise@400x2'
        """
        check_in_range(chunk_size, "chunk_size", 1, np.inf, integer=True)
        items = list(chunks)
        _check_count(len(items))
        pairs = []
        if first is not None:
            kind = _check_kind(first, "first (bare chunk indices alternate; give (chunk, 'shift') pairs for shifts)",
                               REGIME_KINDS)
            for k in items:
                pairs.append((k, kind))
                kind = "reduction" if kind == "growth" else "growth"
        else:
            pairs = items
        points = []
        for i, p in enumerate(pairs, start=1):
            try:
                k, kind, *factor = p
            except (TypeError, ValueError):
                factor = [None, None]
            if len(factor) > 1 or isinstance(p, str):
                raise ValueError(
                    f"drift point {i}: expected a (chunk_index, kind) pair or a (chunk_index, 'noise', factor) triple "
                    f"(or give first=...), got {p!r}"
                ) from None
            if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
                raise ValueError(f"drift point {i}: chunk index must be an integer >= 1, got {k!r}")
            points.append((int(k) * int(chunk_size), kind, *factor))
        return cls(points)

    @classmethod
    def parse(cls, text: str, *, chunk_size: int | None = None) -> "DriftSchedule":
        """Parse ``"growth@600, reduction@1500"`` (instance positions); kinds are growth, reduction, shift, noise.

        Points are separated by commas or semicolons. ``kind@chunk:k`` gives the
        position as a chunk index (needs ``chunk_size``). A bare ``"growth"`` or
        ``"reduction"`` is the paper's protocol (:meth:`paper`); a bare
        ``"shift"`` is an error (a shift has no paper form). A noise change gives
        its factor after an ``x``: ``"noise@3000x1.5"`` (``"noise@chunk:12x1.5"``).
        Case and spaces are ignored. ``str(schedule)`` gives text that parses back to it.

        >>> DriftSchedule.parse("Growth @ chunk:3; shift@chunk:4, reduction@chunk:5", chunk_size=500).positions
        (1500, 2000, 2500)
        >>> DriftSchedule.parse("shift")
        Traceback (most recent call last):
        ...
        ValueError: drift point 1 ('shift'): a shift needs a position ('shift@<instance>' or 'shift@chunk:<k>'): it has no paper form
        >>> DriftSchedule.parse("growth@600, growth@900")
        Traceback (most recent call last):
        ...
        ValueError: drift points must alternate between growth and reduction: point 2 ('growth@900') is a growth right after a growth (the stream is already multi-label there)
        >>> str(DriftSchedule.parse("noise @ chunk:4 x 0.5, growth@chunk:4", chunk_size=250))
        'growth@1000, noise@1000x0.5'
        >>> DriftSchedule.parse("growth@600x2")
        Traceback (most recent call last):
        ...
        ValueError: drift point 1: only a noise change takes a factor, got 'growth' with factor 2.0
        """
        if not isinstance(text, str):
            raise ValueError(f"schedule text must be a string, got {text!r}")
        _check_count(text.count(",") + text.count(";") + 1)  # counted before any other work on the text
        tokens = [t.strip() for t in re.split(r"[,;]", text)]
        if not any(tokens):
            raise ValueError("schedule text is empty; expected e.g. 'growth@600, reduction@1500'")
        points = []
        for i, tok in enumerate(tokens, start=1):
            m = _TOKEN.match(tok.lower())
            factor = None if m is None else m.group("factor")
            if factor is not None:
                try:
                    factor = float(factor)
                except ValueError:
                    m = None
            if not tok or m is None or m.group("kind") not in ALL_KINDS:
                raise ValueError(
                    f"cannot parse drift point {i} ({tok!r}): expected 'growth@<instance>', "
                    "'reduction@<instance>' or 'shift@<instance>', '<kind>@chunk:<k>' with a chunk size, "
                    "a bare growth/reduction, or a noise change 'noise@<instance>x<factor>'"
                )
            extra = () if factor is None else (factor,)
            pos = m.group("pos")
            if pos is None:
                if m.group("kind") == "shift":
                    raise ValueError(f"drift point {i} ({tok!r}): {_NO_PAPER_SHIFT}")
                if m.group("kind") == NOISE_KIND:
                    raise ValueError(f"drift point {i} ({tok!r}): {_NO_PAPER_NOISE}")
                points.append((None, m.group("kind"), *extra))
                continue
            pos = int(pos)
            if m.group("chunk"):
                if chunk_size is None:
                    raise ValueError(f"drift point {i} ({tok!r}) is given in chunks: pass chunk_size")
                check_in_range(chunk_size, "chunk_size", 1, np.inf, integer=True)
                if pos < 1:
                    raise ValueError(f"drift point {i} ({tok!r}): chunk index must be >= 1")
                pos *= int(chunk_size)
            points.append((pos, m.group("kind"), *extra))
        return cls(points)

    # -- views ---------------------------------------------------------------------
    def __str__(self) -> str:
        return ", ".join(_fmt(p) for p in self.changes)

    def __repr__(self) -> str:
        return f"DriftSchedule({str(self)!r})"

    def __len__(self) -> int:
        """The changes of the label distribution (:attr:`points`; the noise changes are :attr:`noise_changes`)."""
        return len(self.points)

    def __bool__(self) -> bool:
        """Always true: a schedule holds at least one change (of the labels or of the noise; ``len`` counts the
        former only)."""
        return True

    def __iter__(self):
        """The changes of the label distribution (:attr:`points`; the noise changes are :attr:`noise_changes`)."""
        return iter(self.points)

    @property
    def changes(self) -> tuple:
        """Every change, of the labels (:class:`ChangePoint`) and of the noise (:class:`NoiseChange`), in the order
        of their positions (the paper's unpositioned point first; at one instance, the labels' change first): the
        order of ``str(schedule)``.

        >>> DriftSchedule.parse("noise@900x2, shift@900, noise@1200x1").changes  # doctest: +NORMALIZE_WHITESPACE
        (ChangePoint(position=900, kind='shift'), NoiseChange(position=900, factor=2.0),
         NoiseChange(position=1200, factor=1.0))
        """
        return tuple(sorted((*self.points, *self.noise_changes),
                            key=lambda p: (p.position is not None, p.position or 0, isinstance(p, NoiseChange))))

    @property
    def is_paper(self) -> bool:
        """True for the paper's form, whose position is fixed only by the data."""
        return bool(self.points) and self.points[0].position is None

    def noise_factor_at(self, position: int) -> float:
        """The factor of the flip rates at instance ``position``: that of the last noise change at or before it, 1
        before the first.

        >>> s = DriftSchedule.parse("noise@100x1.5, noise@300x0")
        >>> s.noise_factor_at(99), s.noise_factor_at(100), s.noise_factor_at(300)
        (1.0, 1.5, 0.0)
        """
        factor = 1.0
        for change in self.noise_changes:
            if change.position <= position:
                factor = change.factor
        return factor

    def regime_at(self, position: int) -> str:
        """The regime the stream is in at instance ``position``: ``"single"``, ``"multi"`` or ``"mixed"`` (no
        growth or reduction at or before it and none after it; see :attr:`initial_regime`).

        >>> s = DriftSchedule.parse("reduction@100, shift@200")
        >>> s.regime_at(99), s.regime_at(100), s.regime_at(250), DriftSchedule.parse("shift@5").regime_at(9)
        ('multi', 'single', 'single', 'mixed')
        """
        if self.is_paper:
            raise ValueError(f"schedule {str(self)!r} has no position yet: call at(position) first")
        regime = self.initial_regime
        for p in self.regime_points:
            if p.position <= position:
                regime = _REGIME_AFTER[p.kind]
        return regime

    @property
    def kinds(self) -> tuple:
        return tuple(p.kind for p in self.points)

    @property
    def positions(self) -> tuple:
        return tuple(p.position for p in self.points)

    @property
    def regime_points(self) -> tuple:
        """The growth and reduction points (the ones that change the single-/multi-label regime)."""
        return tuple(p for p in self.points if p.kind in REGIME_KINDS)

    @property
    def shift_positions(self) -> tuple:
        """Positions of the shift points (empty when there is none).

        >>> DriftSchedule.parse("shift@10, growth@20, shift@30").shift_positions
        (10, 30)
        """
        return tuple(p.position for p in self.points if p.kind == "shift")

    @property
    def initial_regime(self) -> str:
        """The regime before the first growth/reduction point (opposite of its kind).

        ``"single"`` or ``"multi"``; ``"mixed"`` for a schedule of shifts only, which
        does not sort instances by cardinality.

        >>> DriftSchedule.parse("shift@5, reduction@9").initial_regime, DriftSchedule.parse("shift@5").initial_regime
        ('multi', 'mixed')
        """
        regime = self.regime_points
        return _REGIME_BEFORE[regime[0].kind] if regime else MIXED

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
        return DriftSchedule(_in_order([ChangePoint(position, self.points[0].kind), *self.noise_changes]))

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
        if self.is_paper and n_instances < 2:
            raise ValueError(f"a stream with a drift needs at least 2 instances, got n_instances={n_instances}")
        for p in self.changes:
            if p.position is not None and p.position >= n_instances:
                raise ValueError(
                    f"drift point {_fmt(p)!r} lies beyond the stream of {n_instances} instances "
                    "(positions must be < n_instances)"
                )
        return self

    def segments(self, n_instances: int) -> list:
        """``[(start, stop, regime), ...]`` covering ``[0, n_instances)``; regime is ``"single"`` or ``"multi"``.

        Segments are cut only at growth and reduction points: a shift keeps the
        regime, so it lies inside a segment. A schedule of shifts only gives
        one segment of regime ``"mixed"``. Every point (shifts too) must lie
        inside the stream (:meth:`validate`).

        >>> DriftSchedule.parse("reduction@3").segments(5)
        [(0, 3, 'multi'), (3, 5, 'single')]
        >>> DriftSchedule.parse("shift@2, reduction@3, shift@4").segments(5), DriftSchedule.parse("shift@2").segments(5)
        ([(0, 3, 'multi'), (3, 5, 'single')], [(0, 5, 'mixed')])
        """
        self.validate(n_instances)
        if self.is_paper:
            raise ValueError(f"schedule {str(self)!r} has no position: call at(position) first")
        bounds = [0, *(p.position for p in self.regime_points), n_instances]
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


def append_change(schedule, position: int, kind: str, factor: float | None = None) -> DriftSchedule:
    """``schedule`` (a DriftSchedule, text or None) with one more change at instance ``position``, refused unless
    the stream before ``position`` stays exactly as it was: an intervention during a run, from a point on.

    ``kind`` is a kind of :data:`ALL_KINDS`; a noise change takes its ``factor`` (the flip rates times it from
    ``position`` on; one at the same instance is replaced). A growth or reduction needs the regime it leaves at
    ``position`` (after a growth the stream is already multi-label) and both a growth or reduction before
    ``position`` and none after it: without one before, the stream before it has no single-/multi-label regime
    (its instances in random order, one cardinality in the synthetic stream) and the change would reorder it;
    one after it would no longer alternate. A shift is refused where a change of the labels already is. Streams
    built from the result (:func:`~ncld_core.stream.builder.build_stream`,
    :func:`~ncld_core.stream.synthetic.make_synthetic_stream`) are identical to those of ``schedule`` before
    ``position`` (tests/test_interventions.py).

    >>> str(append_change("reduction@1000", 2500, "growth"))
    'reduction@1000, growth@2500'
    >>> str(append_change("reduction@1000, noise@2500x2", 2500, "noise", 0.5))
    'reduction@1000, noise@2500x0.5'
    >>> append_change(None, 2500, "growth")
    Traceback (most recent call last):
    ...
    ValueError: a growth at instance 2500 would reorder the stream before it: that stream has no single-/multi-label regime (no growth or reduction before it); put one in the schedule before the run
    >>> append_change("growth@1000", 2500, "growth")
    Traceback (most recent call last):
    ...
    ValueError: a growth at instance 2500: the stream is already multi-label there
    """
    sched = as_schedule(schedule, optional=True)
    if sched is not None and sched.is_paper:
        raise ValueError(f"schedule {str(sched)!r} has no position yet: give it its position first (at(position))")
    position = _check_position(position, "the change")
    kind = _check_kind(kind, "the change", ALL_KINDS)
    items = [] if sched is None else list(sched.changes)
    where = f"a {kind} at instance {position}"
    if kind == NOISE_KIND:
        if factor is None:
            raise ValueError(f"{where}: {_NEEDS_FACTOR}")
        items = [p for p in items if not (isinstance(p, NoiseChange) and p.position == position)]
        items.append(NoiseChange(position, _check_factor(factor, where)))
        return DriftSchedule(_in_order(items))
    if factor is not None:
        raise ValueError(f"{where}: only a noise change takes a factor, got {factor!r}")
    labels = [p for p in items if isinstance(p, ChangePoint)]
    same = [p for p in labels if p.position == position]
    if same:
        raise ValueError(f"{where}: a change of the labels is there already ({_fmt(same[0])!r}): one an instance")
    if kind in REGIME_KINDS:
        regime = [p for p in labels if p.kind in REGIME_KINDS]
        if not any(p.position < position for p in regime):
            raise ValueError(f"{where} would reorder the stream before it: that stream has no single-/multi-label "
                             "regime (no growth or reduction before it); put one in the schedule before the run")
        later = [p for p in regime if p.position > position]
        if later:
            raise ValueError(f"{where}: the schedule's {_fmt(later[0])!r} comes after it and would no longer "
                             "alternate; remove that change first")
        if sched.regime_at(position) != _REGIME_BEFORE[kind]:
            state = "multi-label" if kind == "growth" else "single-label"
            raise ValueError(f"{where}: the stream is already {state} there")
    items.append(ChangePoint(position, kind))
    return DriftSchedule(_in_order(items))


def noise_factor_step(current: float, up: bool, bound: float | None, step: float = 0.5) -> float | None:
    """The factor "noise up" (``up``) or "noise down" sets where the factor is ``current``: ``step`` more or less, at
    least 0 and, going up, the largest multiple of 0.05 that keeps every label's ``rho_pos + rho_neg`` below 1 (Eq. NR;
    ``bound``: the stream's largest sum, ``ncld_core.config.StreamSpec.noise_bound``) and within
    :data:`MAX_NOISE_FACTOR`; None when the factor cannot move that way.

    >>> noise_factor_step(1.0, True, 0.8), noise_factor_step(1.0, True, 0.35), noise_factor_step(0.5, False, 0.8)
    (1.2, 1.5, 0.0)
    >>> noise_factor_step(1.2, True, 0.8) is None, noise_factor_step(0.0, False, 0.8) is None
    (True, True)
    """
    if not up:
        new = max(current - step, 0.0)
        return round(new, 10) if new < current else None
    limit = MAX_NOISE_FACTOR
    if bound:
        limit = min(limit, (math.ceil(1.0 / bound / 0.05 - 1e-9) - 1) * 0.05)
    new = round(min(current + step, limit), 10)
    return new if new > current else None


def _in_order(items) -> list:
    return sorted(items, key=lambda p: (p.position, isinstance(p, NoiseChange)))


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
        Shift points do not cut segments (they change the labels, not the
        order: :func:`apply_label_shifts`) but must lie inside the stream. A
        schedule of shifts only gives the order of a stream without drift: a
        random permutation of the whole dataset (``shuffle=True``, drawn as
        :func:`~ncld_core.stream.builder.build_stream` draws it without a schedule)
        or the dataset's order, cut to ``n_instances``.
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

    if not sched.regime_points:
        # Shifts only: no pools, the order of a stream without drift.
        n = n_total if n_instances is None else n_instances
        sched.validate(n)
        rng = as_generator(random_state)
        order = rng.permutation(n_total) if shuffle else np.arange(n_total)
        return order[:n].astype(np.int64, copy=False), sched.change_points

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
        last_position = max(p.position for p in sched.changes)  # a shift or a noise change may come after it
        segs = sched.segments(last_position + 1)
        need_before = {"single": 0, "multi": 0}
        for start, stop, regime in segs[:-1]:
            need_before[regime] += stop - start
        last_start, last = segs[-1][0], segs[-1][2]
        asked = dict(need_before)
        # The open last segment reaches past its last point: at least one instance after it.
        asked[last] += last_position + 1 - last_start
        if asked["single"] > have["single"] or asked["multi"] > have["multi"]:
            raise ValueError(
                f"schedule {str(sched)!r} needs at least {asked['single']} single-label and "
                f"{asked['multi']} multi-label instances, but {counts}"
            )
        n = last_start + have[last] - need_before[last]
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

    rng = as_generator(random_state)
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


# --------------------------------------------------------------------------- shifts
def shift_permutation(Y_true) -> np.ndarray:
    """The involution of a shift: labels paired by frequency, most frequent with least frequent.

    Labels are sorted by their number of relevant instances in ``Y_true``
    (decreasing; ties by column index), then the 1st is paired with the last,
    the 2nd with the second-to-last, and so on; with an odd number of labels
    the middle one stays. ``perm[j]`` is the label whose column label ``j``
    takes after a shift; ``perm[perm[j]] == j``.

    Parameters
    ----------
    Y_true : array-like (n, q) in {0, 1} or {-1, +1}
        Ground truth whose frequencies define the pairing (the whole dataset, or
        the whole stream before its shifts).

    Returns
    -------
    perm : int64 ndarray (q,)

    >>> import numpy as np
    >>> Y = np.array([[1, 0, 1, 1, 0], [1, 0, 0, 1, 0], [1, 1, 0, 0, 0]])   # counts 3, 1, 1, 2, 0
    >>> shift_permutation(Y).tolist()   # 0 <-> 4 (3 vs 0), 3 <-> 2 (2 vs 1; 1 before 2 on the tie), 1 stays
    [4, 1, 3, 2, 0]
    """
    Y = check_Y(Y_true, name="Y_true")
    q = Y.shape[1]
    counts = Y.sum(axis=0, dtype=np.int64)
    by_freq = np.argsort(-counts, kind="stable")  # most frequent first, ties by index
    perm = np.arange(q, dtype=np.int64)
    for k in range(q // 2):
        a, b = by_freq[k], by_freq[q - 1 - k]
        perm[a], perm[b] = b, a
    return perm


def _as_pair(p, where: str):
    """``(position, kind)`` of a ChangePoint or a pair; a ValueError naming ``where`` otherwise."""
    if isinstance(p, ChangePoint):
        return p.position, p.kind
    try:
        position, kind = p
    except (TypeError, ValueError):
        raise ValueError(f"{where} must be a ChangePoint or a (position, kind) pair, got {p!r}") from None
    return position, kind


def _shift_points(change_points) -> list:
    out = []
    for i, p in enumerate(change_points, start=1):
        position, kind = _as_pair(p, f"change point {i}")
        if kind != "shift":
            continue
        if isinstance(position, bool) or not isinstance(position, numbers.Integral) or position < 0:
            raise ValueError(f"change point {i} (shift): position must be an integer >= 0, got {position!r}")
        out.append(int(position))
    return sorted(out)


def apply_label_shifts(Y, change_points, permutation=None) -> np.ndarray:
    """Swap the label columns of the rows after each shift point, toggling: two shifts restore.

    Rows ``t`` with an odd number of shift positions ``<= t`` get their columns
    permuted (``out[t, j] = Y[t, perm[j]]``); the others are copied unchanged.
    Each row keeps its values, so every instance keeps its cardinality
    exactly, while the per-label prevalences after a shift are those of the
    paired labels. Growth and reduction points are ignored.

    Parameters
    ----------
    Y : array-like (n, q)
        The ordered ground truth (or any per-label array in stream order, e.g. the
        synthetic stream's ``P_true``); values are not checked.
    change_points : iterable of ChangePoint or ``(position, kind)``, or a DriftSchedule
        Only ``kind == "shift"`` points are used.
    permutation : array-like of int (q,), optional
        An involution of ``range(q)``; default :func:`shift_permutation` of ``Y``
        itself (before shifting).

    Returns
    -------
    ndarray
        A new array, same shape and dtype as ``Y``.

    >>> import numpy as np
    >>> Y = np.array([[1, 1, 0], [1, 0, 0], [1, 1, 0], [0, 1, 1], [1, 0, 0]])
    >>> shift_permutation(Y).tolist()
    [2, 1, 0]
    >>> cps = [ChangePoint(2, "growth"), ChangePoint(2, "shift"), ChangePoint(4, "shift")]
    >>> apply_label_shifts(Y, cps).tolist()
    [[1, 1, 0], [1, 0, 0], [0, 1, 1], [1, 1, 0], [1, 0, 0]]
    """
    A = np.asarray(Y)
    if A.ndim != 2:
        raise ValueError(f"Y must be a 2-D array (instances x labels), got shape {A.shape}")
    q = A.shape[1]
    if permutation is None:
        perm = shift_permutation(A)
    else:
        perm = np.asarray(permutation)
        if (perm.shape != (q,) or perm.dtype.kind not in "iu"
                or not np.array_equal(np.sort(perm), np.arange(q))):
            raise ValueError(f"permutation must be a permutation of range({q}), got {np.asarray(permutation).tolist()!r}")
        if not np.array_equal(perm[perm], np.arange(q)):
            raise ValueError(
                f"permutation must be an involution (perm[perm[j]] == j) so that a second shift undoes the first, "
                f"got {perm.tolist()!r}"
            )
    out = A.copy()
    shifts = _shift_points(change_points)
    n = A.shape[0]
    # Rows between the 1st and 2nd shift, the 3rd and 4th, ... are swapped.
    for start, stop in zip(shifts[0::2], shifts[1::2] + [n]):
        start, stop = min(start, n), min(stop, n)
        out[start:stop] = A[start:stop][:, perm]
    return out
