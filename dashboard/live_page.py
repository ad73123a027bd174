"""What the Live run page decides and says, without Streamlit (``dashboard/views/run.py`` lays it out).

A *live* page is one whose visitor has pressed Run in this session (and not Stop since): there a control that
moves starts the run of its new settings by itself (:func:`starts_by_itself`), the run of the stale settings is
stopped (``dashboard.run_hub.RunHub.start`` detaches the session from it), and settings computed before are
replayed (the hub's finished runs). A link only fills the controls: a page opened from one is not live until Run
is pressed, so a link never starts work. The changes are debounced by Streamlit's reruns: a change arriving while
the page starts or draws a run ends that script run, and the next one starts the newest settings only.

>>> from types import SimpleNamespace as Run
>>> starts_by_itself(live=True, ok=True, run=Run(cfg=1), same=lambda run: run.cfg == 2)
True
>>> starts_by_itself(live=False, ok=True, run=Run(cfg=1), same=lambda run: False)  # a link, or after Stop
False
>>> starts_by_itself(live=True, ok=False, run=Run(cfg=1), same=lambda run: False)  # bad settings: nothing
False
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["starts_by_itself", "changed_note"]


def starts_by_itself(*, live: bool, ok: bool, run, same: Callable[[object], bool]) -> bool:
    """Whether the page starts a run without a click: it is ``live``, its settings are valid (``ok``; invalid ones
    show their inline error and start nothing), and the session's ``run`` (None: none yet) is not of the
    settings on the controls (``same(run)`` False)."""
    return bool(live and ok and run is not None and not same(run))


def changed_note(*, same: bool, ok: bool, running: bool, live: bool) -> str | None:
    """The run caption's note when the settings on the controls are not the run's (None: they are). A live page
    with valid settings has started their run already; otherwise the note says what to press.

    >>> changed_note(same=False, ok=True, running=False, live=False)
    '**The settings have changed since this run**: press Run for them'
    >>> changed_note(same=False, ok=False, running=True, live=True)
    '**The settings have changed since this run**: fix them and their run starts'
    >>> changed_note(same=True, ok=True, running=True, live=True) is None
    True
    """
    if same:
        return None
    head = "**The settings have changed since this run**"
    if not ok:
        return head + (": fix them and their run starts" if live else "")
    if live:
        return head + ": their run starts"
    return head + ": " + ("press Stop, then Run for them" if running else "press Run for them")
