"""Scoring a detector's firings against the true change points.

A firing in chunk ``c`` detects the latest true change whose chunk is ``<= c``
if that change is not yet detected and ``c`` comes before the next change's
chunk; the delay is ``c`` minus the change's chunk.  Every other firing is a
false alarm.

>>> r = detection_report(fired_chunks=[3, 6, 7, 15], change_chunks=[5, 12], n_chunks=20)
>>> r["delays"], r["false_alarms"], r["missed"]
([1, 3], 2, 0)
>>> r["detections"], r["false_alarm_chunks"]
({6: 5, 15: 12}, [3, 7])

The limit (:func:`oracle_delay`): the fewest chunks after a change at which a test that knows the
change point and the change (its size and direction in the observed label vector) reaches a
power of 90 % at a false-alarm probability ``alpha`` per chunk.  No detector can be expected to do
better on average; a change whose oracle delay exceeds its segment cannot be seen before the next.
With ``direction="unknown"`` the oracle knows where the change is but not which labels move: its test is
the chi-square (likelihood-ratio) test of a shift of the observed label vector, whose power depends only
on the change's size.  A detector that spreads its level over the directions cannot beat the first
oracle; it can beat the second, where the change moves few of many labels (a test aimed at sparse shifts
is then more powerful than the chi-square test over all of them).

>>> rng = np.random.default_rng(0)
>>> pre = (rng.random((2000, 3)) < [0.3, 0.2, 0.1]).astype(int)
>>> post = (rng.random((2000, 3)) < [0.5, 0.2, 0.1]).astype(int)
>>> zero = np.zeros(3)
>>> oracle_delay(pre, post, zero, zero, chunk=100, max_chunks=10)      # +0.2 on one label: seen at once
0
>>> rates = np.full(3, 0.3)                                            # noisy labels, small chunks:
>>> oracle_delay(pre, post, rates, rates, chunk=25, max_chunks=10) is None, oracle_delay(pre, post, rates, rates, chunk=25, max_chunks=40)
(True, 16)
>>> [oracle_delay(pre, post, zero, zero, chunk=25, max_chunks=10, direction=d) for d in ("known", "unknown")]
[2, 3]
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri
from scipy.stats import chi2, ncx2

__all__ = ["detection_report", "change_chunks", "oracle_noncentrality", "oracle_delay", "ORACLE_DIRECTIONS"]


def change_chunks(positions, chunk_size: int) -> list[int]:
    """The chunk index holding each true change position (instance index)."""
    return [int(p) // int(chunk_size) for p in positions]


def detection_report(fired_chunks, change_chunks, n_chunks: int) -> dict:
    """Delays (chunks) per detected change, false alarms, misses and the false-alarm rate.

    Also ``detections`` (firing chunk -> the change chunk it detects) and
    ``false_alarm_chunks`` (the other firings), for drawing them apart.  Changes at chunk
    ``n_chunks`` or later have not been reached (a run stopped early) and are not counted:
    they cannot be missed yet.

    >>> detection_report([2], [1, 7], n_chunks=5)["missed"]   # the change in chunk 7 is not reached
    0
    """
    fired = sorted(int(c) for c in fired_chunks)
    changes = sorted(int(c) for c in change_chunks if int(c) < n_chunks)
    bounds = changes + [n_chunks]
    delays, detections = [], {}
    for i, start in enumerate(changes):
        hits = [c for c in fired if start <= c < bounds[i + 1]]
        if hits:
            delays.append(hits[0] - start)
            detections[hits[0]] = start
    false_alarm_chunks = [c for c in fired if c not in detections]
    false_alarms = len(false_alarm_chunks)
    quiet = max(n_chunks - 1 - len(changes), 1)  # comparisons where nothing changed
    return {
        "delays": delays,
        "mean_delay": float(np.mean(delays)) if delays else float("nan"),
        "detected": len(delays),
        "missed": len(changes) - len(delays),
        "false_alarms": false_alarms,
        "false_alarm_rate": false_alarms / quiet,
        "detections": detections,
        "false_alarm_chunks": false_alarm_chunks,
    }


def _within_covariance(*parts):
    """Pooled within-part covariance of the rows of the arrays ``parts``."""
    scatter = sum((p - p.mean(axis=0)).T @ (p - p.mean(axis=0)) for p in parts)
    return scatter / max(sum(len(p) for p in parts) - len(parts), 1)


def oracle_noncentrality(pre_clean, post_clean, rho_pos, rho_neg) -> float:
    """Squared per-instance noncentrality ``Delta' Sigma^-1 Delta`` of the change from ``pre_clean`` to
    ``post_clean`` (clean labels (n, q) in {0, 1}) in the observed labels at flip rates ``rho_pos, rho_neg``.

    ``Delta = (1 - rho_+ - rho_-) * (mean post - mean pre)``: the observed labels' mean change (Eq. NR);
    ``Sigma``: the observed labels' covariance (the clean within-segment covariance scaled by
    ``1 - rho_+ - rho_-``, plus the flips' own variance on the diagonal).  The segments are samples
    of the two distributions: the square of their mean difference is corrected for its sampling
    variance (``tr(Sigma^-1 D Sigma_clean D) (1/n_pre + 1/n_post)``), cut at 0.
    """
    return _noncentrality_and_rank(pre_clean, post_clean, rho_pos, rho_neg)[0]


def _noncentrality_and_rank(pre_clean, post_clean, rho_pos, rho_neg) -> tuple[float, int]:
    """:func:`oracle_noncentrality` and the rank of ``Sigma`` (the directions a change can take)."""
    pre, post = (np.asarray(a, dtype=np.float64) for a in (pre_clean, post_clean))
    rho_pos, rho_neg = np.asarray(rho_pos, dtype=np.float64), np.asarray(rho_neg, dtype=np.float64)
    scale = 1.0 - rho_pos - rho_neg
    clean_cov = _within_covariance(pre, post)
    p_obs = rho_neg + scale * np.concatenate([pre, post]).mean(axis=0)
    cov = scale[:, None] * clean_cov * scale[None, :]
    cov[np.diag_indices_from(cov)] = np.maximum(p_obs * (1 - p_obs), 0.0)  # Var(y') of a Bernoulli
    values, vectors = np.linalg.eigh(cov)
    keep = values > 1e-9 * max(values.max(), 1e-300)
    if not keep.any():
        return 0.0, 0
    inv = (vectors[:, keep] / values[keep]) @ vectors[:, keep].T
    delta = scale * (post.mean(axis=0) - pre.mean(axis=0))
    sampling = float(np.trace(inv @ (scale[:, None] * clean_cov * scale[None, :]))) * (1 / len(pre) + 1 / len(post))
    return max(float(delta @ inv @ delta) - sampling, 0.0), int(keep.sum())


ORACLE_DIRECTIONS = ("known", "unknown")


def oracle_delay(pre_clean, post_clean, rho_pos, rho_neg, *, chunk: int, max_chunks: int, alpha: float = 0.05,
                 power: float = 0.9, n_reference: int | None = None, direction: str = "known"):
    """The oracle delay of a change (chunks after the change chunk, 0: at it), or None beyond ``max_chunks``.

    The oracle knows where the change is: after ``d`` chunks it tests the ``d * chunk`` new instances against
    the ``n_reference`` before the change (default: all of ``pre_clean``) at level ``alpha``, with the
    noncentrality ``lambda_d^2 = noncentrality / (1 / (d chunk) + 1 / n_reference)``
    (:func:`oracle_noncentrality`).  ``direction="known"``: it also knows the change and tests along it,
    one-sided; power ``Phi(lambda_d - z_(1-alpha))``.  ``direction="unknown"``: the chi-square test on the
    ``k`` directions of the observed label vector (``k`` the rank of its covariance); power
    ``P(chi2_k(lambda_d^2) > chi2_k,(1-alpha))``.
    """
    if direction not in ORACLE_DIRECTIONS:
        raise ValueError(f"direction must be one of {ORACLE_DIRECTIONS}; got {direction!r}")
    ncp, rank = _noncentrality_and_rank(pre_clean, post_clean, rho_pos, rho_neg)
    n_ref = len(pre_clean) if n_reference is None else n_reference
    need = float(ndtri(1 - alpha) + ndtri(power))  # lambda_d must reach this (direction known)
    critical = float(chi2.isf(alpha, rank)) if rank else float("inf")
    for d in range(1, int(max_chunks) + 1):
        lam2 = ncp / (1.0 / (d * chunk) + 1.0 / n_ref)
        if direction == "known":
            found = lam2 >= need**2
        else:
            found = rank > 0 and ncx2.sf(critical, rank, lam2) >= power
        if found:
            return d - 1
    return None
