"""Putting runs and curves side by side: which curves coincide, which settings differ, final scores.

* :func:`coinciding_groups` -- series equal within a tolerance share one group (drawn once);
* :func:`differing_settings` -- the configuration fields that differ between runs;
* :func:`run_scores` -- per model, the final cumulative metrics and the acting detector's scores;
* :func:`rescale_chunks` -- chunk indices of one run on the chunk axis of another.

>>> coinciding_groups({"ELM-O": [0.1, 0.2], "ELM-I": [0.1, 0.2 + 1e-13], "ELM-II": [0.1, 0.3]})
[['ELM-O', 'ELM-I'], ['ELM-II']]
>>> differing_settings([{"beta": 0.2, "seed": 0}, {"beta": 0.3, "seed": 0}])
['beta']
>>> rescale_chunks([0, 1], from_size=500, to_size=250)
[0.5, 2.5]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from .drift_eval import change_chunks, detection_report

__all__ = ["RTOL", "ATOL", "coincide", "coinciding_groups", "differing_settings", "run_scores",
           "rescale_chunks", "SCORE_METRICS"]

#: Default tolerances of :func:`coincide`: far below what a plot can show, far above float round-off
#: of the same computation done in another order.
RTOL, ATOL = 1e-7, 1e-9


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def coincide(a: Sequence, b: Sequence, *, rtol: float = RTOL, atol: float = ATOL) -> bool:
    """Two series are the same curve: equal length, missing values (None / NaN) at the same places,
    every other pair within ``atol + rtol * |b|``.

    >>> coincide([1.0, None], [1.0 + 1e-12, float("nan")]), coincide([1.0], [1.001]), coincide([1.0], [1.0, 2.0])
    (True, False, False)
    """
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        mx, my = _missing(x), _missing(y)
        if mx or my:
            if mx != my:
                return False
            continue
        if isinstance(x, (str, bool)) or isinstance(y, (str, bool)):
            if x != y:
                return False
            continue
        if abs(float(x) - float(y)) > atol + rtol * abs(float(y)):
            return False
    return True


def coinciding_groups(series: Mapping[str, Sequence], *, rtol: float = RTOL, atol: float = ATOL) -> list[list[str]]:
    """Names grouped by coinciding series (:func:`coincide`), in first-appearance order.

    Each series joins the first group whose first member it coincides with (the first member is the
    reference: a chain of near-equal series that drifts apart is not merged into one group).
    Strings and booleans in a series (e.g. which chunks fired) must be equal.
    """
    groups: list[tuple[list[str], Sequence]] = []
    for name, values in series.items():
        values = list(values)
        for names, ref in groups:
            if coincide(values, ref, rtol=rtol, atol=atol):
                names.append(name)
                break
        else:
            groups.append(([name], values))
    return [names for names, _ in groups]


def differing_settings(configs: Sequence[Mapping]) -> list[str]:
    """The keys whose values are not the same in every configuration (in the first one's order,
    then keys only later ones have)."""
    keys: list[str] = []
    for cfg in configs:
        keys += [k for k in cfg if k not in keys]
    missing = object()
    return [k for k in keys if len({repr(cfg.get(k, missing)) for cfg in configs}) > 1]


#: (key, column) of the final cumulative metrics :func:`run_scores` reports.
SCORE_METRICS = (("hamming_loss", "Hamming loss"), ("micro_f1", "micro-F1"),
                 ("average_precision", "average precision"))


def run_scores(chunks, models, change_points, chunk_size) -> list[dict]:
    """One row per model: the final cumulative metrics (NaN when nothing was scored) and the acting
    detector's firings, detections, misses, false alarms and mean delay against the true change
    points (NaN for a model without a detector).

    ``chunks``: the runner's ChunkResults (``metrics``, ``cumulative``, ``diagnostics``);
    ``change_points``: ``(position, kind)`` pairs in instances.
    """
    scored = [c for c in chunks if c.metrics]
    truth = change_chunks([p for p, _ in change_points], chunk_size)
    rows = []
    for name in models:
        last = scored[-1].cumulative.get(name, {}) if scored else {}
        row = {"model": name}
        for key, column in SCORE_METRICS:
            v = last.get(key)
            row[column] = float("nan") if _missing(v) else float(v)
        records = [(c.chunk, c.diagnostics.get(name)) for c in chunks]
        if any(r is not None for _, r in records):  # a model with a detector (ModelChunkRecord)
            fired = [ch for ch, r in records if r is not None and r.fired]
            rep = detection_report(fired, truth, len(chunks))
            row.update({"firings": len(fired), "detected": rep["detected"], "missed": rep["missed"],
                        "false alarms": rep["false_alarms"], "mean delay (chunks)": rep["mean_delay"],
                        "mean delay (instances)": rep["mean_delay"] * chunk_size})
        else:
            row.update({k: float("nan") for k in ("firings", "detected", "missed", "false alarms",
                                                  "mean delay (chunks)", "mean delay (instances)")})
        rows.append(row)
    return rows


def rescale_chunks(chunks: Sequence[int], *, from_size: int, to_size: int) -> list[float]:
    """Chunk indices of a run in chunks of ``from_size`` placed on the chunk axis of a run in chunks of
    ``to_size``: each chunk at the middle of the instances it holds (identity when the sizes agree)."""
    if from_size == to_size:
        return [c for c in chunks]
    return [(c + 0.5) * from_size / to_size - 0.5 for c in chunks]
