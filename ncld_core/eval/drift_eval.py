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
"""

from __future__ import annotations

import numpy as np

__all__ = ["detection_report", "change_chunks"]


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
