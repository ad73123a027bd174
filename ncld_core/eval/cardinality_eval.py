"""Scoring the cardinality estimates of a run against the true cardinality (an oracle view).

Per chunk: the true label cardinality ``t``, the band ``[low, high]`` (a 95 % interval, or
the identified set with estimated rates), the moment estimate and, optionally, the
paper's Eq. (card).  The report says how often the band held the truth, its mean width
and the mean (signed) errors of the estimates, in labels per instance.

>>> r = interval_report([1.0, 2.0, 3.0], low=[0.5, 2.1, 2.0], high=[1.5, 2.5, 4.0],
...                     estimate=[1.1, 2.3, 3.0], paper=[1.5, 2.5, 3.5])
>>> r["n"], r["inside"], round(r["width"], 3), round(r["mean_error"], 3), round(r["paper_error"], 3)
(3, 2, 1.133, 0.133, 0.5)
"""

from __future__ import annotations

import numpy as np

__all__ = ["interval_report"]


def _finite(values, n: int) -> np.ndarray:
    out = np.full(n, np.nan) if values is None else np.array(
        [np.nan if v is None else v for v in values], dtype=np.float64)
    if out.shape != (n,):
        raise ValueError(f"expected {n} values per chunk, got shape {out.shape}")
    return out


def interval_report(truth, low, high, estimate=None, paper=None) -> dict:
    """Coverage, mean width and mean errors over the chunks where the band is defined.

    Returns ``n`` (chunks scored), ``inside`` (bands holding the truth), ``width`` (mean
    ``high - low``), ``truth`` (mean true cardinality), ``mean_error`` and ``paper_error``
    (mean ``estimate - truth``; None where no chunk has the estimate).  ``n == 0``: nothing
    to score (the other entries are None).
    """
    t = np.asarray(truth, dtype=np.float64)
    n = t.shape[0]
    lo, hi, est, pap = (_finite(v, n) for v in (low, high, estimate, paper))
    ok = np.isfinite(lo) & np.isfinite(hi) & np.isfinite(t)
    if not ok.any():
        return {"n": 0, "inside": 0, "width": None, "truth": None, "mean_error": None, "paper_error": None}

    def mean_error(values):
        keep = ok & np.isfinite(values)
        return float((values[keep] - t[keep]).mean()) if keep.any() else None

    return {
        "n": int(ok.sum()),
        "inside": int(((lo <= t) & (t <= hi) & ok).sum()),
        "width": float((hi[ok] - lo[ok]).mean()),
        "truth": float(t[ok].mean()),
        "mean_error": mean_error(est),
        "paper_error": mean_error(pap),
    }
