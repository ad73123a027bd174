"""What the benchmark scripts share: Markdown tables through pandas, the git revision of the code."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]


def md_table(header, rows, align: str | None = None) -> str:
    """A Markdown table of already formatted cells (``DataFrame.to_markdown``, no trailing newline).

    Cells are written as given (``disable_numparse``: "0.5000" stays "0.5000"), so marks such as
    ``**best**`` stay where they are. ``align``: one of ``l``/``r``/``c`` per column (``:--``,
    ``--:``, ``:-:``); without it the separator has no colons.
    """
    frame = pd.DataFrame([["" if c is None else str(c) for c in r] for r in rows], columns=[str(h) for h in header])
    if align is None:
        return frame.to_markdown(index=False, tablefmt="github", disable_numparse=True)
    names = {"l": "left", "r": "right", "c": "center"}
    return frame.to_markdown(index=False, tablefmt="pipe", disable_numparse=True,
                             colalign=[names[a] for a in align])


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
