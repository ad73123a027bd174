"""What the benchmark scripts share: their datasets, report pieces (Markdown tables, numbers, the stamp of
the code and the command), and writing a report.

The datasets every benchmark runs are a suite of ``data/registry.toml`` (:func:`benchmark_datasets`), so adding a
dataset to every benchmark is one ``suites = ["benchmark"]`` line in its registry entry.
"""

from __future__ import annotations

import argparse
import copy
import datetime
import math
import shlex
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd

from ncld_core.data.catalog import suite
from ncld_core.eval.runner import write_atomic

__all__ = ["REPO", "benchmark_datasets", "paper_drift_datasets", "md_table", "fnum", "git_revision", "utc_now",
           "command_line", "argument_parser", "write_atomic", "decide_with"]

REPO = Path(__file__).resolve().parents[1]


def benchmark_datasets() -> list[str]:
    """The datasets of every benchmark's full run: the registry's ``"benchmark"`` suite, in registry order."""
    return suite("benchmark")


def paper_drift_datasets() -> list[str]:
    """The paper's drift datasets (its Table IV) available here: the registry's ``"paper-drift"`` suite."""
    return suite("paper-drift")


def md_table(header, rows, align: str | None = None) -> str:
    """A Markdown table of already formatted cells (``DataFrame.to_markdown``, no trailing newline).

    Cells are written as given (``disable_numparse``: "0.5000" stays "0.5000"), so marks such as
    ``**best**`` stay where they are. ``align``: one of ``l``/``r``/``c`` per column (``:--``,
    ``--:``, ``:-:``); without it the separator has no colons.

    >>> print(md_table(["a", "b"], [["0.50", "**1**"]]))
    | a    | b     |
    |------|-------|
    | 0.50 | **1** |
    """
    frame = pd.DataFrame([["" if c is None else str(c) for c in r] for r in rows], columns=[str(h) for h in header])
    if align is None:
        return frame.to_markdown(index=False, tablefmt="github", disable_numparse=True)
    names = {"l": "left", "r": "right", "c": "center"}
    return frame.to_markdown(index=False, tablefmt="pipe", disable_numparse=True,
                             colalign=[names[a] for a in align])


def fnum(x, nd: int = 3) -> str:
    """A number for a report cell: ``nd`` decimals, integers as they are, ``—`` for None / NaN, ``∞``.

    >>> fnum(0.12345), fnum(3), fnum(float("nan")), fnum(None), fnum(-math.inf, 1)
    ('0.123', '3', '—', '—', '-∞')
    """
    if x is None or (isinstance(x, (float, np.floating)) and math.isnan(x)):
        return "—"
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    return f"{x:.{nd}f}"


def wilson_interval(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95 % by default): ``successes`` of ``n`` independent trials.

    >>> [round(x, 3) for x in wilson_interval(21, 24)]
    [0.69, 0.957]
    """
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def decide_with(model, rule: str, scores) -> np.ndarray:
    """What the ELM-NCLD ``model`` predicts from its ranking ``scores`` (``ranking_scores``, or the runner's
    ``on_scores``) had its ``decision`` been ``rule``: the model's own ``decide``, on a shallow copy, so the rule
    reads the scores on the scale its decision state was fitted on (with the default loss that is not the
    ranking scores' own scale: ``ncld_core.model.noisy_targets.noisy_scale``)."""
    other = copy.copy(model)
    other.decision = rule
    return other.decide(scores)


def git_revision(path: str = "ncld_core") -> str:
    """``git rev-parse --short HEAD`` and the files under ``path`` with uncommitted changes; ``unknown`` outside git."""
    try:
        def git(*args) -> str:
            out = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=10, check=False)
            return out.stdout if out.returncode == 0 else ""

        head = git("rev-parse", "--short", "HEAD").strip()
        status = git("status", "--porcelain", "--", path)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if not head:
        return "unknown"
    dirty = sorted(line[3:] for line in status.split("\n") if line.strip())
    if not dirty:
        return head
    shown = ", ".join(dirty[:4]) + (f" and {len(dirty) - 4} more" if len(dirty) > 4 else "")
    return f"{head} with uncommitted changes in {shown}"


def utc_now() -> str:
    """The time a report is generated, e.g. ``2026-01-31 17:05 UTC``."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def generated_by(command: str, *, seconds: float, workers: int, saved: dict | None = None) -> str:
    """A generated report's stamp (Markdown, one line): the command, when, at which code, how long it took on how
    many workers, and that the page is not edited by hand.  ``saved``: the ``date`` and ``revision`` of the run whose
    saved rows the report is written from (``--load``); the stamp names that run and the code that wrote it.

    >>> generated_by("python -m benchmarks.x", seconds=61.4, workers=2)  # doctest: +ELLIPSIS
    '_Generated by `python -m benchmarks.x` on ... UTC at ... in 61 s (2 workers); do not edit by hand._'
    >>> generated_by("python -m benchmarks.x", seconds=61.4, workers=2,
    ...              saved={"date": "2026-01-02 03:04 UTC", "revision": "abc1234"})  # doctest: +ELLIPSIS
    '_Generated by `python -m benchmarks.x` on 2026-01-02 03:04 UTC at abc1234 in 61 s (2 workers); written from its saved rows (`--load`) at ...; do not edit by hand._'
    """
    when, code = (utc_now(), git_revision()) if saved is None else (saved["date"], saved["revision"])
    loaded = "" if saved is None else f"; written from its saved rows (`--load`) at {git_revision()}"
    return (f"_Generated by `{command}` on {when} at {code} in {seconds:.0f} s ({workers} workers){loaded}; "
            "do not edit by hand._")


def command_line(module: str, argv=()) -> str:
    """The command that generated a report: ``python -m MODULE ARGS`` (arguments shell-quoted).

    >>> command_line("benchmarks.decisions", ["--quick", "--out", "my report.md"])
    "python -m benchmarks.decisions --quick --out 'my report.md'"
    """
    argv = list(argv)
    return f"python -m {module}" + (" " + shlex.join(argv) if argv else "")


def argument_parser(module: str, doc: str, **kwargs) -> argparse.ArgumentParser:
    """The command line of ``python -m MODULE``, described by the first paragraph of its docstring ``doc``."""
    return argparse.ArgumentParser(prog=f"python -m {module}", description=doc.split("\n\n")[0], **kwargs)
