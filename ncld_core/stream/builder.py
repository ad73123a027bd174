"""Turn a real dataset's arrays into a :class:`~ncld_core.stream.stream.Stream` following the paper's protocol.

Section IV of the paper (NOTES.md section 5): the instances are ordered (a random
order, or single-label then multi-label instances for a concept growth, the
reverse for a reduction), then label noise is injected into the ground truth
with per-label rates ``rho_pos, rho_neg ~ U[0.2, 0.4]`` (Eq. NR). Noise comes
*after* ordering: the noisy labels of a stream depend only on the ordered
stream and the seed. A ``shift`` point of the schedule (not in the paper) swaps
the ground-truth label columns from its position on, after ordering and before
the noise (:func:`~ncld_core.stream.schedule.apply_label_shifts`).

>>> import numpy as np
>>> X = np.arange(20.0).reshape(10, 2)
>>> Y = np.array([[1, 0, 0]] * 6 + [[1, 1, 0]] * 4, dtype=np.int8)
>>> s = build_stream(X, Y, name="toy", flip_rates="paper", schedule="growth", random_state=0)
>>> s.change_points, s.Y_true.sum(axis=1).tolist()
((ChangePoint(position=6, kind='growth'),), [1, 1, 1, 1, 1, 1, 2, 2, 2, 2])
>>> bool(np.all((s.rho_pos >= 0.2) & (s.rho_pos <= 0.4)))
True
>>> build_stream(X, Y, name="toy", n_instances=4, shuffle=False).Y_noisy.tolist()   # no noise by default
[[1, 0, 0], [1, 0, 0], [1, 0, 0], [1, 0, 0]]
>>> t = build_stream(X, Y, name="toy", schedule="shift@8", shuffle=False)   # label 0 <-> label 2
>>> t.Y_true[6:].tolist(), t.meta["label_shift_permutation"]
([[1, 1, 0], [1, 1, 0], [0, 1, 1], [0, 1, 1]], [2, 1, 0])
"""

from __future__ import annotations

import numbers

import numpy as np

from ncld_core.validation import check_in_range, check_X, check_Y
from ncld_core.stream.noise import noisy_labels
from ncld_core.stream.schedule import (
    apply_label_shifts,
    as_schedule,
    reorder_for_schedule,
    shift_permutation,
)
from ncld_core.stream.seeding import spawn_generators
from ncld_core.stream.stream import Stream, mark_trusted

__all__ = ["build_stream"]


def build_stream(
    X,
    Y_true,
    *,
    name: str,
    label_names=(),
    flip_rates=None,
    schedule=None,
    n_instances: int | None = None,
    shuffle: bool = True,
    random_state=0,
    trusted_fraction: float = 0.0,
) -> Stream:
    """Order, optionally truncate, and corrupt a dataset into a stream (paper protocol, Section IV).

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n, d)
        Sparse input stays sparse (CSR); rows are taken by fancy indexing.
    Y_true : array-like (n, q) in {0, 1} or {-1, +1}
        Ground-truth labels.
    name : str
        Name of the stream (e.g. ``"enron"`` or ``"mediamill_a"``).
    label_names : sequence of str, optional
        ``q`` names; ``label_0``, ``label_1``, ... when empty.
    flip_rates : None, "paper", (low, high), or an explicit spec
        ``None``: no noise (``Y_noisy`` equals ``Y_true``, rates are zeros).
        ``"paper"``: ``rho_pos, rho_neg ~ U[0.2, 0.4]`` per label. Two numbers
        ``(low, high)`` (tuple or list) are a *range* to draw from. Anything else is read by
        :func:`~ncld_core.stream.noise.parse_flip_rates` (a ``(q, 2)`` array, a dict
        ``{"rho_pos": ..., "rho_neg": ...}``, a DataFrame or a CSV path).
    schedule : None, DriftSchedule or str
        ``None``: no drift (random order if ``shuffle``). Otherwise the order
        follows the schedule (:func:`~ncld_core.stream.schedule.reorder_for_schedule`):
        ``"growth"`` / ``"reduction"`` is the paper's protocol, ``"growth@600,
        reduction@1500"`` places the changes. An empty string or ``"none"`` means no drift.
        ``"shift@900"`` swaps the ground-truth label columns from instance 900
        on (paired by frequency in the whole dataset,
        :func:`~ncld_core.stream.schedule.shift_permutation`; a second shift swaps them
        back); it does not change the order, so a schedule of shifts only is
        ordered as without a schedule. ``"noise@900x1.5"`` multiplies the flip rates
        by 1.5 from instance 900 on (``Stream.noise_changes``; ``rho_pos`` / ``rho_neg``
        stay the rates drawn); it changes neither the order nor the truth, and needs noise.
    n_instances : int, optional
        Keep only this many instances (the first ones of the order).
    shuffle : bool
        Random order (default). ``False`` keeps the dataset's order (within each
        pool, when there is a schedule).
    random_state : None, int or numpy.random.Generator
        Seeds the order, the drawn rates and the flips, each with its own
        independent generator, so that the same ordered stream gets the same
        noise whatever produced the order.
    trusted_fraction : float in [0, 1], default 0
        A trusted sample: each row's clean labels are revealed with this probability
        (:func:`~ncld_core.stream.stream.mark_trusted`, its own generator: the rest of the
        stream does not depend on it); ``Stream.trusted`` marks them.

    Returns
    -------
    Stream
        With ``meta`` holding the source size, the schedule, the noise mode and
        the single-/multi-label pool sizes; with a shift, also
        ``"label_shift_permutation"`` (the list ``perm``: after an odd number of
        shifts, column ``j`` holds the dataset's label ``perm[j]``).
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    X = check_X(X)  # float64, finite; sparse input comes back as CSR
    Y = check_Y(Y_true, name="Y_true")
    n_total, q = Y.shape
    if X.shape[0] != n_total:
        raise ValueError(f"X has {X.shape[0]} instances but Y_true has {n_total}")
    label_names = tuple(str(v) for v in label_names) if label_names is not None else ()
    if not label_names:
        label_names = tuple(f"label_{j}" for j in range(q))
    elif len(label_names) != q:
        raise ValueError(f"label_names has {len(label_names)} names but Y_true has {q} labels")
    if n_instances is not None:
        check_in_range(n_instances, "n_instances", 1, np.inf, integer=True)
        if n_instances > n_total:
            raise ValueError(f"n_instances={n_instances} exceeds the {n_total} instances of the dataset")
    if not isinstance(shuffle, (bool, np.bool_)):
        raise ValueError(f"shuffle must be True or False, got {shuffle!r}")
    schedule = as_schedule(schedule, optional=True)

    # One independent generator per step (see the random_state doc).
    rng_order, rng_rates, rng_noise, rng_trusted = spawn_generators(random_state, 4)  # the first 3 as before

    # 1. Order (and truncate).
    if schedule is not None:
        order, change_points = reorder_for_schedule(
            Y, schedule, n_instances, random_state=rng_order, shuffle=bool(shuffle)
        )
    else:
        order = rng_order.permutation(n_total) if shuffle else np.arange(n_total)
        order = order[:n_instances] if n_instances is not None else order
        change_points = ()
    X_ord = X[order]
    Y_ord = Y[order]

    # 2. Shifts of the truth: label columns paired by frequency in the whole dataset.
    shift_perm = None
    if schedule is not None and schedule.shift_positions:
        shift_perm = shift_permutation(Y)
        Y_ord = apply_label_shifts(Y_ord, change_points, shift_perm)

    # 3. Noise, after ordering and shifts (paper protocol): rates stay with the columns; a noise change of the
    # schedule scales them from its position on.
    noise_changes = () if schedule is None else schedule.noise_changes
    Y_noisy, rho_pos, rho_neg, mode = noisy_labels(
        Y_ord, flip_rates, label_names, rates_random_state=rng_rates, noise_random_state=rng_noise,
        changes=noise_changes)

    card = Y.sum(axis=1)
    used_card = card[order]
    left_single = int(np.count_nonzero(card <= 1) - np.count_nonzero(used_card <= 1))
    left_multi = int(np.count_nonzero(card >= 2) - np.count_nonzero(used_card >= 2))
    meta = {
        "source": "dataset",
        "n_source_instances": int(n_total),
        "n_single_label": int(np.count_nonzero(card <= 1)),
        "n_multi_label": int(np.count_nonzero(card >= 2)),
        "schedule": None if schedule is None else str(schedule),
        # Reported, never silent (CLI summary, the page, summary.json): a schedule takes each regime
        # from its own pool, so the pool it needs less of is not used up.
        "left_out": {"single-label": left_single, "multi-label": left_multi},
        "left_out_by": (
            "n_instances" if n_instances is not None and (schedule is None or not schedule.regime_points)
            else f"n_instances and the schedule {str(schedule)!r}" if n_instances is not None
            else f"the schedule {str(schedule)!r}"
        ),
        "shuffle": bool(shuffle),
        "flip_rates_mode": mode,
        "random_state": (
            int(random_state) if isinstance(random_state, numbers.Integral)
            else None if random_state is None else repr(random_state)
        ),
    }
    if shift_perm is not None:
        meta["label_shift_permutation"] = [int(v) for v in shift_perm]
    return Stream(
        X=X_ord,
        Y_true=Y_ord,
        Y_noisy=Y_noisy,
        name=name,
        rho_pos=rho_pos,
        rho_neg=rho_neg,
        change_points=tuple(change_points),
        label_names=label_names,
        meta=meta,
        trusted=mark_trusted(Y_ord.shape[0], trusted_fraction, rng_trusted),
        noise_changes=tuple(noise_changes),
    )
