"""A labelled multi-label stream with its ground truth, noise and true change points.

Every source of data (a benchmark file, the synthetic generator) is turned into a
:class:`Stream`; the prequential runner, the command line and the dashboard
consume only this.

>>> import numpy as np
>>> s = Stream(X=np.zeros((5, 2)), Y_true=np.eye(5, 3, dtype=np.int8),
...            Y_noisy=np.eye(5, 3, dtype=np.int8), name="toy")
>>> [c for c in s.chunk_bounds(2)]
[(0, 2), (2, 4), (4, 5)]
>>> s.n_instances, s.n_features, s.n_labels
(5, 2, 3)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

__all__ = ["Stream", "ChangePoint", "NoiseChange", "mark_trusted", "noise_factors"]


def mark_trusted(n: int, fraction: float, random_state=None) -> np.ndarray | None:
    """A trusted sample: each of ``n`` rows is marked with probability ``fraction`` (None for 0), so that
    about that fraction of every chunk has its clean labels revealed.

    >>> m = mark_trusted(10_000, 0.01, random_state=0)
    >>> m.dtype.name, int(m.sum())
    ('bool', 89)
    >>> mark_trusted(10, 0.0) is None
    True
    """
    from ncld_core.stream.seeding import as_generator
    from ncld_core.validation import check_in_range

    check_in_range(fraction, "trusted_fraction", 0, 1)
    if fraction == 0:
        return None
    return as_generator(random_state).random(int(n)) < fraction


@dataclass(frozen=True)
class ChangePoint:
    """A true change of the label distribution, at instance index ``position``."""

    position: int
    kind: str  # "growth" (towards multi-label), "reduction" (towards single-label) or "shift" (labels swapped)


@dataclass(frozen=True)
class NoiseChange:
    """A change of the label noise, at instance index ``position``: from there on every label's flip rates are
    ``factor`` times the stream's own (``Stream.rho_pos`` / ``rho_neg``, which stay what the models are told).
    Not a change of the true label distribution (never among a stream's ``change_points``)."""

    position: int
    factor: float


def noise_factors(n: int, changes=()) -> np.ndarray:
    """The factor of the flip rates at each of ``n`` instances: 1 before the first :class:`NoiseChange` of
    ``changes`` (sorted by position), then the factor of the last change at or before the instance.

    >>> noise_factors(6, [NoiseChange(2, 1.5), NoiseChange(4, 0.0)]).tolist()
    [1.0, 1.0, 1.5, 1.5, 0.0, 0.0]
    """
    out = np.ones(int(n), dtype=np.float64)
    for change in sorted(changes, key=lambda c: c.position):
        out[min(int(change.position), int(n)):] = float(change.factor)
    return out


@dataclass(frozen=True)
class Stream:
    """Instances in stream order with true and observed (noisy) labels.

    Attributes
    ----------
    X : ndarray or scipy.sparse.csr_matrix, shape (n, d)
    Y_true : int8 ndarray in {0, 1}, shape (n, q) -- ground truth, used only for scoring.
    Y_noisy : int8 ndarray in {0, 1}, shape (n, q) -- what the learner observes.
    rho_pos, rho_neg : float ndarray, shape (q,) -- the flip rates that produced
        ``Y_noisy`` (Eq. NR): P(y=-1 | g=+1) and P(y=+1 | g=-1); scaled from each noise change on.
    change_points : tuple of ChangePoint -- true changes of the label distribution.
    noise_changes : tuple of NoiseChange -- where the flip rates that produced ``Y_noisy`` move away from
        ``rho_pos`` / ``rho_neg`` (scaled by a factor from there on; :func:`noise_factors`).
    P_true : float ndarray (n, q) or None -- the clean P(g=1 | x), when known (synthetic).
    trusted : bool ndarray (n,) or None -- the rows whose clean labels a user has checked (a trusted
        sample, :func:`mark_trusted`): the runner reveals their ``Y_true`` to the models that take it.
    """

    X: object
    Y_true: np.ndarray
    Y_noisy: np.ndarray
    name: str = "stream"
    rho_pos: np.ndarray | None = None
    rho_neg: np.ndarray | None = None
    change_points: tuple = ()
    label_names: tuple = ()
    P_true: np.ndarray | None = None
    meta: dict = field(default_factory=dict)
    trusted: np.ndarray | None = None
    noise_changes: tuple = ()

    def __post_init__(self):
        n = self.X.shape[0]
        for attr in ("Y_true", "Y_noisy"):
            y = getattr(self, attr)
            if y.shape[0] != n:
                raise ValueError(f"{attr} has {y.shape[0]} rows but X has {n}")
        if self.Y_true.shape != self.Y_noisy.shape:
            raise ValueError("Y_true and Y_noisy must have the same shape")
        if self.trusted is not None and (np.asarray(self.trusted).dtype != bool or np.shape(self.trusted) != (n,)):
            raise ValueError(f"trusted must be a boolean mask of the {n} rows")

    @property
    def n_trusted(self) -> int:
        """Rows of the trusted sample (0 without one)."""
        return 0 if self.trusted is None else int(np.count_nonzero(self.trusted))

    @property
    def n_instances(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    @property
    def n_labels(self) -> int:
        return int(self.Y_true.shape[1])

    @property
    def is_sparse(self) -> bool:
        return sp.issparse(self.X)

    def chunk_bounds(self, size: int):
        """Yield ``(start, stop)`` of consecutive chunks of ``size`` instances (last may be short)."""
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 2:
            raise ValueError(f"chunk_size must be an integer >= 2, got {size!r}")
        for start in range(0, self.n_instances, size):
            yield start, min(start + size, self.n_instances)

    def n_chunks(self, size: int) -> int:
        """Number of chunks of ``size`` instances (the last may be short), as :meth:`chunk_bounds` yields.

        >>> from ncld_core.stream.synthetic import make_synthetic_stream
        >>> make_synthetic_stream(1001, random_state=0).n_chunks(500)
        3
        """
        return sum(1 for _ in self.chunk_bounds(size)) if self.n_instances else 0

    @property
    def n_left_out(self) -> int:
        """Instances of the source the stream does not use (0 for a generated stream).

        A schedule on real data takes each regime's instances from its own pool (single- or
        multi-label), so the pool the schedule needs less of is not used up; ``n_instances``
        cuts the order. ``meta["left_out"]`` says why, per pool.
        """
        return int(self.meta.get("n_source_instances", self.n_instances)) - self.n_instances

    def coverage_note(self) -> str | None:
        """One sentence on the instances left out, or None when the stream uses its whole source.

        >>> import numpy as np
        >>> s = Stream(X=np.zeros((3, 1)), Y_true=np.zeros((3, 2), np.int8), Y_noisy=np.zeros((3, 2), np.int8),
        ...            meta={"n_source_instances": 5, "left_out": {"single-label": 2, "multi-label": 0},
        ...                  "left_out_by": "the schedule"})
        >>> s.coverage_note()
        'uses 3 of the 5 instances of its source: the schedule leaves out 2 single-label ones'
        """
        n_out = self.n_left_out
        if n_out <= 0:
            return None
        pools = [f"{k} {name}" for name, k in self.meta.get("left_out", {}).items() if k]
        parts = " and ".join(pools) if pools else str(n_out)
        return (f"uses {self.n_instances} of the {self.meta['n_source_instances']} instances of its source: "
                f"{self.meta.get('left_out_by', 'the configuration')} leaves out {parts} ones")

    def true_cardinality(self, start: int = 0, stop: int | None = None) -> float:
        return float(self.Y_true[start:stop].sum(axis=1).mean())

    def observed_cardinality(self, start: int = 0, stop: int | None = None) -> float:
        return float(self.Y_noisy[start:stop].sum(axis=1).mean())
