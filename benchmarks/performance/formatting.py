"""How the report writes numbers and verdicts."""

from __future__ import annotations

import numpy as np


def fmt_rate(x):
    return "n/a" if x is None or not np.isfinite(x) else f"{x:,.0f}"


def fmt_ms(x):
    return "n/a" if x is None or not np.isfinite(x) else (f"{x * 1e3:.1f}" if x < 10 else f"{x * 1e3:,.0f}")


def target_row(what, measured_txt, value, target, higher_is_better=True, unit=""):
    if value is None or not np.isfinite(value):
        return [what, measured_txt, "not measured in this run"]
    ok = value >= target if higher_is_better else value <= target
    if ok:
        return [what, measured_txt, "**met**"]
    if higher_is_better:
        gap = f"missed: {100 * value / target:.0f} % of the target, {target / value:.2f}x short"
    else:
        gap = f"missed: {value - target:+.3g}{unit} over the target ({value / target:.2f}x)"
    return [what, measured_txt, f"**{gap}**"]
