"""What ELM-NCLD regresses under label noise: the per-chunk targets of its least-squares term.

The score term of Eq. (N3), ``b/2 ||H Phi - T||^2``, enters the sufficient statistics only
through ``H^T T`` (:mod:`ncld_core.model.statistics`): every loss here changes the targets ``T``
of a chunk, never ``H^T H``, so a chunk stays one pass and the beta x gamma sweep still applies.
With observed labels ``y`` in {0, 1}, per-label flip rates (Eq. NR) ``rho_+ = P(y=0 | g=1)``,
``rho_- = P(y=1 | g=0)`` and ``d = 1 - rho_+ - rho_-``, the targets (on the {-1, +1} scale of
``T = 2 t - 1``) are:

``"paper"``
    the observed labels, ``t = y`` (the paper regresses the noisy labels; its noise correction
    is in the importance-weighted ranking term only).  The scores then estimate
    ``P(y = 1 | x) = rho_- + d p(x)``, ``p(x) = P(g = 1 | x)``.
``"backward"``
    the backward-corrected (unbiased) target ``t = (y - rho_-) / d`` (Natarajan et al. 2013's
    unbiased loss, which for the squared loss is exactly a regression on this target):
    ``E[t | x] = p(x)``, so the scores estimate the clean probability, at the price of a
    variance inflated by about ``1 / d^2``.
``"forward"``
    the forward correction of the squared loss: fit the *noisy* labels through the noise.  On the
    {-1, +1} scale the noisy label ``2 y - 1`` has the expectation ``2 rho_- - 1 + d (o + 1)`` for a
    clean score ``o = H Phi``, and ``||2 rho_- - 1 + d (H Phi + 1) - (2 y - 1)||^2 + a ||Phi||^2 =
    d^2 ||H Phi - T||^2 + a ||Phi||^2`` with the backward targets ``T``: the backward regression with
    the ridge ``a / d_j^2`` on each label ``j`` (:func:`ridge_scale`): the backward targets, each label
    regularised as much more as its variance is inflated.  The labels share ``K``'s data part ``G``
    (``K = a I + G``): one tridiagonal reduction of ``G`` solves every label at its own ridge
    (:mod:`ncld_core.model.ridge`), at about the cost of the shared solve and the condition number it
    replaces.  Only the ridge changes: the ranking and graph terms keep their
    weights (beta, gamma), so this is the forward correction of the score term alone (measured against
    the other losses in ``docs/noise-gap.md``).
``"denoise"``
    the posterior of the clean label given the noisy one and the features,
    ``t = P(g = 1 | y, x)``::

        y = 1:  (1 - rho_+) p / ((1 - rho_+) p + rho_- (1 - p))
        y = 0:  rho_+ p / (rho_+ p + (1 - rho_-) (1 - p))

    with ``p`` an estimate of ``P(g = 1 | x)`` made before the chunk's labels are used by the
    model (its calibrated clean probability on the chunk, or on the first chunk the
    noise-corrected neighbour estimate): one E-step of EM per chunk, the targets bounded in
    [0, 1] (no ``1 / d`` inflation).  Its fixed point is ``E[t | x] = p(x)`` when ``p`` is right.
``"denoise-knn"``
    the same posterior with ``p`` from the chunk's graph neighbours' noisy labels with the noise
    removed, ``(P_D - rho_-) / d`` cut to [0, 1] (:func:`noise_free_probability`; ``P_D`` of the
    ``"knn"`` probability model): each label is judged by its own noisy value and its neighbours'.

>>> import numpy as np
>>> y = np.array([[1, 0]])
>>> backward_targets(y, [0.2, 0.2], [0.3, 0.3]).round(3).tolist()   # (1-0.3)/0.5, (0-0.3)/0.5 in 0/1
[[1.4, -0.6]]
>>> posterior_targets(y, [0.2, 0.2], [0.3, 0.3], p=[[0.5, 0.5]]).round(3).tolist()
[[0.727, 0.222]]
>>> regression_targets("paper", y, [0.2, 0.2], [0.3, 0.3]).tolist()   # {-1, +1} scale
[[1.0, -1.0]]
>>> noisy_scale("backward", np.array([[1.0, -1.0]]), [0.2, 0.2], [0.3, 0.3]).round(3).tolist()
[[0.6, -0.4]]
>>> ridge_scale("forward", [0.2, 0.4], [0.3, 0.1]).tolist(), ridge_scale("backward", [0.2, 0.4], [0.3, 0.1])
([4.0, 4.0], 1.0)
>>> ridge_scale("forward", [0.1, 0.4], [0.1, 0.3]).round(2).tolist()   # d = 0.8, 0.3: its own ridge each
[1.56, 11.11]
>>> regression_targets("gaussian", y, 0.2, 0.3)
Traceback (most recent call last):
...
ValueError: loss must be one of ['paper', 'backward', 'forward', 'denoise', 'denoise-knn']; got 'gaussian'
"""

from __future__ import annotations

import numpy as np

__all__ = ["LOSSES", "AUTO_LOSS", "resolve_loss", "check_loss", "backward_targets", "posterior_targets", "regression_targets",
           "ridge_scale",
           "noise_free_probability", "noisy_scale", "PROBABILITY_FLOOR"]

#: Loss name -> one-line description (the ``loss`` parameter of :class:`~ncld_core.model.ELMNCLD`).
LOSSES = {
    "paper": "regress the observed (noisy) labels; correction only in the ranking term (the paper's Eq. N3)",
    "backward": "regress the backward-corrected (unbiased) targets (y - rho_-) / (1 - rho_+ - rho_-)",
    "forward": "fit the noisy labels through the noise (forward correction): the backward targets with each "
               "label's ridge divided by its (1 - rho_+ - rho_-)^2",
    "denoise": "regress the posterior P(clean = 1 | noisy label, x) from the model's clean probability",
    "denoise-knn": "regress the posterior P(clean = 1 | noisy label, x) from the graph neighbours' labels",
}
#: The default of :class:`~ncld_core.model.ELMNCLD`: "backward" with given rates, "paper" with estimated ones
#: (the backward correction divides the rates' error by ``d``: estimated ``rho_-`` is an upper bound on frequent
#: labels, ``docs/flip-rates.md``, and the corrected targets then cost AP; measured in ``docs/noise-gap.md``).
AUTO_LOSS = "auto"

#: ``p`` is kept in [PROBABILITY_FLOOR, 1 - PROBABILITY_FLOOR]: a posterior from ``p`` = 0 or 1 would ignore
#: the label for good.
PROBABILITY_FLOOR = 1e-3


def check_loss(value, *, auto: bool = False) -> str:
    """``value`` if it names a loss of :data:`LOSSES` (or, with ``auto``, is :data:`AUTO_LOSS`), else a
    ValueError naming ``loss``."""
    allowed = [*([AUTO_LOSS] if auto else []), *LOSSES]
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"loss must be one of {allowed}; got {value!r}")
    return value


def resolve_loss(loss, rates_estimated: bool, trusted: bool = False) -> str:
    """The loss of :data:`LOSSES` that ``loss`` means: :data:`AUTO_LOSS` is "backward" with given rates; with
    estimated rates "forward" when the model is given a trusted sample (``trusted``: trusted rows from its first
    chunk on, whose labels do not look missing, ``ELMNCLD.loss_in_use``), else "paper" (without trusted rows
    ``rho_-`` is only an upper bound, and the correction divides its error by ``1 - rho_+ - rho_-``).  Measured:
    ``docs/rates-unknown.md`` (with a trusted sample: a higher mean micro-F1, more streams below ignoring the
    noise; ``docs/differences.md``), ``docs/noise-gap.md`` (without).

    >>> resolve_loss("auto", rates_estimated=False), resolve_loss("auto", rates_estimated=True)
    ('backward', 'paper')
    >>> resolve_loss("auto", rates_estimated=True, trusted=True)
    'forward'
    >>> resolve_loss("denoise", rates_estimated=True, trusted=True)
    'denoise'
    """
    if check_loss(loss, auto=True) == AUTO_LOSS:
        if not rates_estimated:
            return "backward"
        return "forward" if trusted else "paper"
    return loss


def _rates(rho_pos, rho_neg, q):
    rho_pos = np.broadcast_to(np.asarray(rho_pos, dtype=np.float64), (q,))
    rho_neg = np.broadcast_to(np.asarray(rho_neg, dtype=np.float64), (q,))
    return rho_pos, rho_neg


def backward_targets(Y01, rho_pos, rho_neg) -> np.ndarray:
    """``(y - rho_-) / (1 - rho_+ - rho_-)`` (N, q): unbiased for the clean label, on the 0/1 scale."""
    Y = np.asarray(Y01, dtype=np.float64)
    rho_pos, rho_neg = _rates(rho_pos, rho_neg, Y.shape[1])
    return (Y - rho_neg) / (1.0 - rho_pos - rho_neg)


def posterior_targets(Y01, rho_pos, rho_neg, p) -> np.ndarray:
    """``P(g = 1 | y, x)`` (N, q) on the 0/1 scale from the clean probability ``p`` (N, q) (module doc)."""
    Y = np.asarray(Y01, dtype=np.float64)
    rho_pos, rho_neg = _rates(rho_pos, rho_neg, Y.shape[1])
    p = np.clip(np.broadcast_to(np.asarray(p, dtype=np.float64), Y.shape), PROBABILITY_FLOOR,
                1.0 - PROBABILITY_FLOOR)
    keep_pos, keep_neg = (1.0 - rho_pos) * p, (1.0 - rho_neg) * (1.0 - p)  # P(y = g, g) for g = 1, 0
    flip_pos, flip_neg = rho_pos * p, rho_neg * (1.0 - p)  # P(y != g, g)
    return np.where(Y > 0.5, keep_pos / (keep_pos + flip_neg), flip_pos / (flip_pos + keep_neg))


def noise_free_probability(P_noisy, rho_pos, rho_neg) -> np.ndarray:
    """``(P_D - rho_-) / d`` cut to [0, 1]: the clean probability implied by a noisy one (Eq. NR inverted)."""
    P = np.asarray(P_noisy, dtype=np.float64)
    rho_pos, rho_neg = _rates(rho_pos, rho_neg, P.shape[1])
    return np.clip((P - rho_neg) / (1.0 - rho_pos - rho_neg), 0.0, 1.0)


def regression_targets(loss, Y01, rho_pos, rho_neg, p=None) -> np.ndarray:
    """The targets ``T`` (N, q) on the {-1, +1} scale that ``loss`` regresses (module doc).

    ``p`` (N, q): the clean probability ``"denoise"`` needs (ignored by the others).
    """
    check_loss(loss)
    Y = np.asarray(Y01, dtype=np.float64)
    if loss == "paper":
        t = Y
    elif loss in ("backward", "forward"):
        t = backward_targets(Y, rho_pos, rho_neg)
    else:
        if p is None:
            raise ValueError(f"loss={loss!r} needs the clean probability p of the chunk")
        t = posterior_targets(Y, rho_pos, rho_neg, p)
    return 2.0 * t - 1.0


def ridge_scale(loss, rho_pos, rho_neg):
    """What ``loss`` multiplies the model's ridge ``alpha`` by: per label ``1 / d_j^2`` for ``"forward"``
    (an array, module doc), the number 1 for the others."""
    if check_loss(loss) != "forward":
        return 1.0
    rho_pos, rho_neg = _rates(rho_pos, rho_neg, max(np.size(rho_pos), np.size(rho_neg)))
    return 1.0 / np.maximum(1.0 - rho_pos - rho_neg, 1e-3) ** 2


def noisy_scale(loss, scores, rho_pos, rho_neg) -> np.ndarray:
    """Scores of a model learnt with ``loss`` as a regression of the *noisy* labels on the {-1, +1} scale,
    what the decision rules read (:mod:`ncld_core.model.decision`).

    ``"paper"`` regresses the noisy labels: unchanged.  The other losses' scores ``o`` estimate the clean
    label, ``(o + 1) / 2 ~ p``: mapped to ``2 (rho_- + d (o + 1) / 2) - 1`` (Eq. NR), so that the rules'
    noise-corrected scale ``u`` is ``(o + 1) / 2`` again.
    """
    S = np.asarray(scores, dtype=np.float64)
    if check_loss(loss) == "paper":
        return S
    S2 = S.reshape(S.shape[0], -1)
    rho_pos, rho_neg = _rates(rho_pos, rho_neg, S2.shape[1])
    return (2.0 * (rho_neg + (1.0 - rho_pos - rho_neg) * (S2 + 1.0) / 2.0) - 1.0).reshape(S.shape)
