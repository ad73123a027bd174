"""The embedded synthetic source: a multi-label stream whose truth is known exactly.

Real benchmarks only give one draw of the labels; here the clean posterior
``P(g_j = 1 | x)`` of every instance is known, so estimators of the paper
(the importance weights of Eq. (RL_New) and the cardinality estimate of
Eq. (card)) can be checked against the truth, and drift points are known.

Generative model
----------------
- Features: a mixture of ``n_clusters`` Gaussian clusters (centres with spread
  ``cluster_separation``, unit within-cluster variance), so that a k-NN graph on
  features (the paper's label reconstruction, Eq. (N3)) has local structure.
- Labels: ``P(g_j = 1 | x) = sigmoid(w_j . x + beta_j + offset)``, labels
  **conditionally independent given x**: the assumption behind the per-label
  importance weights of Eq. (card). Label correlation comes only from the
  weights sharing a common direction: ``w_j ∝ sqrt(c) u + sqrt(1 - c) v_j`` with
  ``c = label_correlation``; ``c = 0`` gives unrelated labels, ``c = 1`` labels
  that all follow the same score.
- Cardinality: the common ``offset`` is solved by root finding on a large
  reference sample so that ``E[sum_j P(g_j = 1 | x)]`` equals the target.
  A drift (growth / reduction) changes only this offset: the feature
  distribution stays the same and the change is one of the label
  distribution, as in the paper's NCLD setting.
- Shift: from a ``shift`` point on, the label columns of ``Y_true`` and
  ``P_true`` are swapped by :func:`~ncld_core.stream.schedule.apply_label_shifts`,
  labels paired by their frequency in the whole stream's ``Y_true`` (a
  second shift swaps back), drawn with the regime in force at the first shift
  to the end (a growth or reduction after the first shift does not move the
  pairing, so a change appended after a shift leaves the stream before it as it was). Each instance keeps its cardinality; which
  labels are frequent changes. Without growth or reduction the expected
  cardinality is ``cardinality`` throughout.
- Noise: Eq. (NR) flips with per-label rates (default U[0.2, 0.4], the paper's); a
  ``noise`` change of the schedule multiplies them from its position on.

>>> s = make_synthetic_stream(2000, n_features=5, n_labels=4, schedule="growth@1000", random_state=1)
>>> s.n_instances, s.n_features, s.n_labels, s.change_points
(2000, 5, 4, (ChangePoint(position=1000, kind='growth'),))
>>> round(float(s.P_true[:1000].sum(axis=1).mean()), 1), round(float(s.P_true[1000:].sum(axis=1).mean()), 1)
(1.0, 3.0)
"""

from __future__ import annotations

import functools
import numbers

import numpy as np
from scipy.special import expit

from ncld_core.validation import check_in_range
from ncld_core.stream.noise import noisy_labels
from ncld_core.stream.schedule import apply_label_shifts, as_schedule, shift_permutation
from ncld_core.stream.seeding import spawn_generators
from ncld_core.stream.stream import Stream, mark_trusted

__all__ = ["make_synthetic_stream", "solve_offset", "synthetic_bytes", "REFERENCE_SIZE", "STRUCTURES_KEPT",
           "kept_structures_clear", "kept_structures_info"]

#: Instances of the reference sample on which the offsets are solved (:func:`make_synthetic_stream`).
REFERENCE_SIZE = 50_000
#: The structures (clusters, label weights, offsets) of this many settings with an integer seed are kept: a stream
#: rebuilt with only its length, change points, noise or trusted sample changed does not solve them again.
STRUCTURES_KEPT = 8


def synthetic_bytes(n_instances: int, n_features: int, n_labels: int, reference_size: int = REFERENCE_SIZE) -> int:
    """An upper bound of the bytes :func:`make_synthetic_stream` holds at once, from the sizes alone: the
    reference sample and the stream's features with their draw's temporary (float64, two ``n x d``), the
    scores, logits and probabilities (float64, about four ``n x q``) and the two label matrices (int8).
    Measured with ``tracemalloc`` at (5000, 20, 300), (5000, 500, 10), (200000, 20, 10) and
    (100000, 100, 10): peaks of 89 %, 88 %, 74 % and 72 % of this bound.

    >>> synthetic_bytes(5000, 20, 10) < 64 * 1024**2
    True
    """
    n, d, q, r = int(n_instances), int(n_features), int(n_labels), int(reference_size)
    return 8 * (r + n) * (2 * d + 4 * q) + 2 * n * q


def solve_offset(logits: np.ndarray, target: float) -> float:
    """Return the common offset ``b`` with ``mean_t sum_j sigmoid(logits[t, j] + b) == target``.

    The left side ``F(b)`` increases strictly from 0 to ``q`` with ``b``, so the root is unique for
    ``0 < target < q``.  Newton's method on ``log F(b) = log target`` (on ``log(q - F(b)) = log(q - target)`` for
    a target above ``q / 2``): nearly linear in ``b`` in the tails, where ``F`` itself grows exponentially and
    plain Newton crawls.  The steps are kept inside a bracket that shrinks with every pass and bisected when one
    leaves it; a step below 1e-12 ends it (about 5 passes over the logits where Brent's method took 15).

    >>> import numpy as np
    >>> round(solve_offset(np.zeros((3, 2)), 1.0), 6)
    0.0
    >>> round(solve_offset(np.zeros((3, 2)), 0.5), 6)  # 2 sigmoid(b) = 0.5
    -1.098612
    """
    q = logits.shape[1]
    if not 0 < target < q:
        raise ValueError(f"target cardinality must be in (0, {q}), got {target}")
    # At these ends every sigmoid is < 1e-15 from 0 (resp. 1): the root is inside.
    span = float(np.max(np.abs(logits))) + 40.0
    low, high = -span, span
    n = logits.shape[0]
    upper = target > q / 2.0  # solve on the side whose tail is near the target
    goal = np.log(q - target) if upper else np.log(target)
    # Start where the mean logit would give the target (exact when every logit is equal).
    b = float(np.clip(np.log(target / (q - target)) - logits.mean(), low, high))
    work = np.empty(logits.shape, dtype=np.float64)
    for _ in range(200):
        np.add(logits, b, out=work)
        expit(work, out=work)
        total = work.sum() / n
        if total > target:
            high = b
        elif total < target:
            low = b
        else:
            return b
        slope = float(np.einsum("ij,ij->", work, 1.0 - work)) / n  # F'(b)
        side = q - total if upper else total
        if side <= 0 or slope <= 0:  # every sigmoid rounded to 0 or 1: only the bracket is left
            step = b - (low + high) / 2.0
        else:
            # d log F / db = F' / F; d log(q - F) / db = -F' / (q - F)
            step = (np.log(side) - goal) / (slope / side) * (-1.0 if upper else 1.0)
        tol = 1e-12 * max(1.0, abs(b))
        if abs(step) <= tol or high - low <= tol:  # converged (rounding may put b - step a hair outside)
            return float(np.clip(b - step, low, high))
        new = b - step
        b = new if low < new < high else (low + high) / 2.0  # Newton left the bracket: bisect it
    return float(b)


def _sample_x(rng, centres: np.ndarray, m: int) -> np.ndarray:
    """``m`` instances of the feature distribution: a cluster drawn for each, then unit normal noise around its
    centre."""
    comp = rng.integers(0, centres.shape[0], size=m)
    return centres[comp] + rng.standard_normal((m, centres.shape[1]))


def _structure(rng_struct, rng_ref, d, q, label_correlation, n_clusters, cluster_separation, signal, label_skew,
               reference_size, targets) -> tuple:
    """What a stream's labels are drawn by, from its first two generators: ``(centres, W, bias, offsets)``, the
    clusters' centres, the labels' weights and biases (``logits = x @ W.T + bias + offset``) and the offset of each
    regime of ``targets`` (``((regime, target cardinality), ...)``), solved on a reference sample of
    ``reference_size`` instances. It does not depend on the stream's length, change positions, noise or trusted
    sample."""
    # --- structure: clusters, label weights, per-label biases ----------------------
    centres = rng_struct.normal(0.0, cluster_separation, size=(n_clusters, d))
    shared = rng_struct.standard_normal(d)
    own = rng_struct.standard_normal((q, d))
    # Weighted sum of a shared and an own direction: with unit-variance normals,
    # sqrt(c) / sqrt(1 - c) make the cosine between two labels' weights about c
    # (exactly c in expectation of the inner products), so label co-occurrence
    # grows with label_correlation while labels stay independent given x.
    W = np.sqrt(label_correlation) * shared[None, :] + np.sqrt(1.0 - label_correlation) * own
    beta = rng_struct.normal(0.0, label_skew, size=q)

    # --- scale and offsets from a reference sample of the feature distribution -------
    X_ref = _sample_x(rng_ref, centres, reference_size)
    S_ref = X_ref @ W.T
    scale = S_ref.std(axis=0)
    scale[scale == 0] = 1.0
    # Each label's score w_j . x gets standard deviation `signal` (and mean 0).
    W = W * (signal / scale)[:, None]
    centre_score = (S_ref.mean(axis=0) * signal / scale)
    base = S_ref * (signal / scale) - centre_score + beta  # reference logits without offset
    offsets = {k: solve_offset(base, t) for k, t in targets}
    bias = beta - centre_score  # logits = x @ W.T + bias + offset
    return centres, W, bias, offsets


@functools.lru_cache(maxsize=STRUCTURES_KEPT)
def _kept_structure(seed: int, *shape) -> tuple:
    """:func:`_structure` of an integer seed, kept for the :data:`STRUCTURES_KEPT` settings used last (its arrays
    read-only): the same stream with another length, schedule, noise or trusted sample (a knob of the dashboard
    moved) skips the reference sample, most of the build (``python -m benchmarks``, section 5e, times both)."""
    rng_struct, rng_ref = spawn_generators(seed, 7)[:2]  # the same two as the stream's own seven
    centres, W, bias, offsets = _structure(rng_struct, rng_ref, *shape)
    for a in (centres, W, bias):
        a.setflags(write=False)
    return centres, W, bias, offsets


def kept_structures_clear() -> None:
    """Forget every kept structure: the next stream of any settings solves its own again."""
    _kept_structure.cache_clear()


def kept_structures_info():
    """How many structures are kept and how often one was found (``functools.lru_cache``'s ``cache_info()``)."""
    return _kept_structure.cache_info()


def _check_cardinality(value, name: str, q: int) -> float:
    check_in_range(value, name, 0, q, low_open=True, high_open=True)
    return float(value)


def make_synthetic_stream(
    n_instances: int = 5000,
    n_features: int = 20,
    n_labels: int = 10,
    *,
    cardinality: float = 2.0,
    label_correlation: float = 0.5,
    schedule=None,
    low_cardinality: float = 1.0,
    high_cardinality: float = 3.0,
    flip_rates=(0.2, 0.4),
    n_clusters: int = 8,
    cluster_separation: float = 2.0,
    signal: float = 2.5,
    label_skew: float = 0.5,
    reference_size: int = REFERENCE_SIZE,
    random_state=0,
    name: str = "synthetic",
    trusted_fraction: float = 0.0,
) -> Stream:
    """Generate a multi-label stream with known clean posteriors, noise and drift points.

    Parameters
    ----------
    n_instances : int >= 2
    n_features : int >= 1
    n_labels : int >= 1
    cardinality : float in (0, n_labels)
        Expected true cardinality ``E[sum_j P(g_j=1|x)]`` when there is no schedule.
    label_correlation : float in [0, 1]
        Weight of the direction shared by all labels' scores (0: unrelated
        labels, 1: all labels follow one score). Given x, labels stay independent.
    schedule : DriftSchedule, str or None
        True changes of the label distribution. Single-label regimes (before a
        growth, after a reduction) have expected cardinality ``low_cardinality``,
        multi-label regimes ``high_cardinality``. The paper form (a bare
        ``"growth"``) puts the change in the middle of the stream. Shift
        points swap label columns (see the module docstring) and keep the
        regime; a schedule of shifts only keeps ``cardinality``.
    low_cardinality, high_cardinality : float in (0, n_labels), low < high
        Used only with a schedule that has a growth or a reduction.
    flip_rates : None, "paper", (low, high) range, or an explicit spec
        ``None``: no noise; ``"paper"`` or two numbers ``(low, high)``: each label's
        ``rho_pos`` and ``rho_neg`` drawn from U[low, high]; otherwise anything
        :func:`~ncld_core.stream.noise.parse_flip_rates` accepts (array ``(q, 2)``, dict,
        DataFrame, CSV path).
    n_clusters : int >= 1
        Gaussian clusters of the feature distribution (equal weights).
    cluster_separation : float >= 0
        Standard deviation of the cluster centres (within-cluster std is 1).
    signal : float >= 0
        Standard deviation of each label's score ``w_j . x`` over the feature
        distribution: larger means labels are easier to predict from x.
    label_skew : float >= 0
        Standard deviation of the per-label biases ``beta_j`` (label imbalance).
    reference_size : int >= 1000
        Size of the sample on which the offsets are solved.
    random_state : None, int or numpy.random.Generator
        Same seed, identical arrays.
    name : str
    trusted_fraction : float in [0, 1], default 0
        A trusted sample: each row's clean labels revealed with this probability (``Stream.trusted``;
        :func:`~ncld_core.stream.stream.mark_trusted`, its own generator: nothing else changes).

    Returns
    -------
    Stream
        ``X`` (float64, dense), ``Y_true`` drawn from ``P_true``, ``Y_noisy`` by
        Eq. (NR), ``rho_pos``/``rho_neg``, ``change_points``, ``label_names``
        (``label_0``, ...), and ``meta`` with the configuration (``"config"``),
        the solved offset (``"offsets"``) and target cardinality
        (``"target_cardinality"``) of each regime, and the segments
        ``[start, stop, regime]`` (cut at growths and reductions only); with a
        shift, also ``"label_shift_permutation"`` (list of ints, see
        :func:`~ncld_core.stream.schedule.shift_permutation`).

    Raises
    ------
    ValueError
        Naming the parameter that is out of range.
    """
    check_in_range(n_instances, "n_instances", 2, np.inf, integer=True)
    check_in_range(n_features, "n_features", 1, np.inf, integer=True)
    check_in_range(n_labels, "n_labels", 1, np.inf, integer=True)
    q = int(n_labels)
    cardinality = _check_cardinality(cardinality, "cardinality", q)
    check_in_range(label_correlation, "label_correlation", 0, 1)
    check_in_range(n_clusters, "n_clusters", 1, np.inf, integer=True)
    check_in_range(cluster_separation, "cluster_separation", 0, np.inf)
    check_in_range(signal, "signal", 0, np.inf)
    check_in_range(label_skew, "label_skew", 0, np.inf)
    check_in_range(reference_size, "reference_size", 1000, np.inf, integer=True)
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r}")

    schedule = as_schedule(schedule, optional=True)
    if schedule is not None:
        if schedule.is_paper:
            schedule = schedule.at(n_instances // 2)
        try:
            schedule.validate(n_instances)
        except ValueError as exc:
            raise ValueError(f"schedule: {exc}") from None
    # Growth / reduction points set the single-/multi-label regimes; shifts do not.
    regimes = schedule is not None and bool(schedule.regime_points)
    if regimes:
        low_cardinality = _check_cardinality(low_cardinality, "low_cardinality", q)
        high_cardinality = _check_cardinality(high_cardinality, "high_cardinality", q)
        if low_cardinality >= high_cardinality:
            raise ValueError(
                f"low_cardinality must be < high_cardinality, got {low_cardinality} and {high_cardinality}"
            )

    if not regimes:
        targets = {"constant": cardinality}
    else:
        targets = {"single": low_cardinality, "multi": high_cardinality}
    # Independent streams per step: e.g. changing flip_rates does not change X or Y_true.
    # (a 7th generator for the trusted sample: the first 6 are the same as without it)
    rng_struct, rng_ref, rng_x, rng_y, rng_rates, rng_noise, rng_trusted = spawn_generators(random_state, 7)
    n, d = int(n_instances), int(n_features)
    shape = (d, q, float(label_correlation), int(n_clusters), float(cluster_separation), float(signal),
             float(label_skew), int(reference_size), tuple(targets.items()))
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        # the first two generators depend on the seed alone: the structure of these settings is computed once
        centres, W, bias, offsets = _kept_structure(int(random_state), *shape)
    else:  # a Generator (or fresh entropy) is never seen twice
        centres, W, bias, offsets = _structure(rng_struct, rng_ref, *shape)
    offsets = dict(offsets)

    # --- the stream --------------------------------------------------------------
    X = _sample_x(rng_x, centres, n)
    logits = X @ W.T + bias
    # a growth or reduction after the first shift: the shift's pairing needs the logits without offsets (below)
    first_shift = schedule.shift_positions[0] if schedule is not None and schedule.shift_positions else None
    later = [] if first_shift is None else [p for p in schedule.regime_points if p.position > first_shift]
    raw = logits.copy() if later else None
    if not regimes:
        logits += offsets["constant"]
        segments = [(0, n, "constant")]
    else:
        segments = schedule.segments(n)
        for start, stop, regime in segments:
            logits[start:stop] += offsets[regime]
    P_true = expit(logits)
    # Labels independent given x: one uniform per entry.
    uniforms = rng_y.random((n, q))
    Y_true = (uniforms < P_true).astype(np.int8)
    shift_perm = None
    if schedule is not None and schedule.shift_positions:
        # Pairing by frequency in the whole stream's truth, before the shifts, with the regimes as they stand at
        # the first shift (a growth or reduction after it does not move the pairing: a change appended after a
        # shift leaves the stream before it as it was); P_true follows so that Y_true stays drawn from it.
        pairing_truth = Y_true
        if later:
            held = logits.copy()  # the regime in force at the first shift, to the end of the stream
            cut = later[0].position
            held[cut:] = raw[cut:] + offsets[schedule.regime_at(first_shift)]
            pairing_truth = (uniforms < expit(held)).astype(np.int8)
        shift_perm = shift_permutation(pairing_truth)
        Y_true = apply_label_shifts(Y_true, schedule.change_points, shift_perm)
        P_true = apply_label_shifts(P_true, schedule.change_points, shift_perm)

    label_names = tuple(f"label_{j}" for j in range(q))
    noise_changes = () if schedule is None else schedule.noise_changes
    Y_noisy, rho_pos, rho_neg, mode = noisy_labels(
        Y_true, flip_rates, label_names, rates_random_state=rng_rates, noise_random_state=rng_noise,
        changes=noise_changes)

    config = {
        "n_instances": n,
        "n_features": d,
        "n_labels": q,
        "cardinality": cardinality,
        "label_correlation": float(label_correlation),
        "schedule": None if schedule is None else str(schedule),
        "low_cardinality": float(low_cardinality),
        "high_cardinality": float(high_cardinality),
        # JSON-friendly; a [low, high] list means the same range when passed back (a range is the
        # only non-string spec resolve_flip_rates draws from).
        "flip_rates": (
            flip_rates if isinstance(flip_rates, (str, type(None)))
            else [float(v) for v in flip_rates] if mode == "drawn"
            else "explicit"
        ),
        "n_clusters": int(n_clusters),
        "cluster_separation": float(cluster_separation),
        "signal": float(signal),
        "label_skew": float(label_skew),
        "reference_size": int(reference_size),
        "random_state": (
            int(random_state) if isinstance(random_state, numbers.Integral)
            else None if random_state is None else repr(random_state)
        ),
    }
    meta = {
        "source": "synthetic",
        "config": config,
        "flip_rates_mode": mode,
        "offsets": offsets,
        "target_cardinality": targets,
        "segments": [[int(a), int(b), r] for a, b, r in segments],
    }
    if shift_perm is not None:
        meta["label_shift_permutation"] = [int(v) for v in shift_perm]
    return Stream(
        X=X,
        Y_true=Y_true,
        Y_noisy=Y_noisy,
        name=name,
        rho_pos=rho_pos,
        rho_neg=rho_neg,
        change_points=() if schedule is None else schedule.change_points,
        label_names=label_names,
        P_true=P_true,
        meta=meta,
        trusted=mark_trusted(n, trusted_fraction, rng_trusted),
        noise_changes=tuple(noise_changes),
    )
