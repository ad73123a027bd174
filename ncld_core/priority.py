"""A computing process's place below the machine's interactive work (the page's server, browsers).

``os.nice`` orders a process only among the processes of its own scheduling *autogroup*. Where Linux
groups processes by session (``/proc/sys/kernel/sched_autogroup_enabled`` is 1, the default of most
distributions' kernels), the CPU is shared fairly between sessions whatever their processes' niceness,
and a browser starts its processes in sessions of their own. So a run process at niceness 10, in the
server's session, still took its share of the cores from a browser drawing a page on the same machine:
on this 2-core machine a page drew its Run button in 1.57 s idle, 2.28 s beside two busy processes at
niceness 10 in one session, and 1.86-2.02 s when each busy process was in a session of its own with
that session's group at niceness 19 (medians of 6 pages; ``docs/deploy.md``, section 5).

:func:`lower_priority` puts the calling process in a session of its own (``os.setsid``: it leaves the
terminal's process group, so a Ctrl-C there no longer reaches it; the caller ends it by its pipe) and
gives that session's group and the process the same niceness. Raising a niceness needs no privilege.

>>> lower_priority(0)  # nothing asked, nothing changed
{'niceness': 0, 'own_session': False, 'group_niceness': None}
"""

from __future__ import annotations

import contextlib
import os

__all__ = ["lower_priority", "check_niceness", "AUTOGROUP"]

#: The calling process's scheduling group (Linux with autogroups): reads "/autogroup-N nice K"; writing a
#: niceness sets the group's.
AUTOGROUP = "/proc/self/autogroup"


def check_niceness(niceness) -> int:
    """``niceness`` if it is an integer in [0, 19], else a ValueError naming it."""
    if not isinstance(niceness, int) or isinstance(niceness, bool) or not 0 <= niceness <= 19:
        raise ValueError(f"niceness must be an integer in [0, 19], got {niceness!r}")
    return niceness


def lower_priority(niceness: int) -> dict:
    """Lower the calling process below the machine's other work by ``niceness`` (0-19; 0: unchanged).

    Returns what was applied: the process's niceness, whether it now leads a session of its own, and its
    autogroup's niceness (None where the system has no autogroups or the process has none of its own).
    """
    check_niceness(niceness)
    applied = {"niceness": 0, "own_session": False, "group_niceness": None}
    if niceness == 0:
        return applied
    if hasattr(os, "nice"):
        applied["niceness"] = os.nice(niceness)
    if hasattr(os, "setsid") and os.path.exists(AUTOGROUP):
        with contextlib.suppress(OSError):  # already a session leader (then it has a group of its own)
            os.setsid()
        applied["own_session"] = os.getsid(0) == os.getpid()
        if applied["own_session"]:
            with contextlib.suppress(OSError), open(AUTOGROUP, "w") as group:
                group.write(str(niceness))
            with contextlib.suppress(OSError, ValueError), open(AUTOGROUP) as group:
                applied["group_niceness"] = int(group.read().split()[-1])
    return applied
