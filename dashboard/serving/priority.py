"""A computing process's place below the machine's interactive work (the page's server, browsers).

``os.nice`` orders a process only among the processes of its own scheduling *autogroup*. Where Linux
groups processes by session (``/proc/sys/kernel/sched_autogroup_enabled`` is 1, the default of many
distributions' kernels, and where no CPU cgroup of a container or service manager groups them instead),
the CPU is shared fairly between sessions whatever their processes' niceness, and a browser starts its
processes in sessions of their own. So a run process at niceness 10, in the server's session, still took
its share of the cores from a browser drawing a page on the same machine (``python -m
benchmarks.page_beside_busy`` measures a page beside busy processes in each place; ``docs/deploy.md``
section 5 quotes it).

:func:`lower_priority` puts the calling process in a session of its own (``os.setsid``: it leaves the
terminal's process group, so a Ctrl-C there no longer reaches it; the caller ends it by its pipe) and
gives that session's group and the process the same niceness. Raising a niceness needs no privilege, but
the kernel takes one autogroup niceness per 100 ms from an unprivileged user (``EAGAIN`` otherwise):
two runs starting together retry for up to :data:`GROUP_RETRY_S`.

>>> lower_priority(0)  # nothing asked, nothing changed
{'niceness': 0, 'own_session': False, 'group_niceness': None}
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import time

__all__ = ["lower_priority", "check_niceness", "autogroups_on", "set_group_niceness", "AUTOGROUP", "GROUP_RETRY_S"]

#: The calling process's scheduling group (Linux with autogroups): reads "/autogroup-N nice K"; writing a
#: niceness sets the group's.
AUTOGROUP = "/proc/self/autogroup"
#: Whether the kernel groups processes by session ("1") or not ("0").
AUTOGROUP_SWITCH = "/proc/sys/kernel/sched_autogroup_enabled"
#: How long a refused group niceness (another process's set it within the last 100 ms) is retried.
GROUP_RETRY_S = 1.5

log = logging.getLogger("ncld.priority")


def check_niceness(niceness) -> int:
    """``niceness`` if it is an integer in [0, 19], else a ValueError naming it."""
    if not isinstance(niceness, int) or isinstance(niceness, bool) or not 0 <= niceness <= 19:
        raise ValueError(f"niceness must be an integer in [0, 19], got {niceness!r}")
    return niceness


def autogroups_on() -> bool:
    """Whether this system schedules by session groups (Linux with autogroups switched on)."""
    try:
        with open(AUTOGROUP_SWITCH) as switch:
            return switch.read().strip() == "1" and os.path.exists(AUTOGROUP)
    except OSError:
        return False


def set_group_niceness(niceness: int) -> int | None:
    """Write the group's niceness, retrying the kernel's once-per-100-ms refusal; the niceness read back."""
    deadline = time.monotonic() + GROUP_RETRY_S
    while True:
        try:
            with open(AUTOGROUP, "w") as group:
                group.write(str(niceness))
            break
        except BlockingIOError:  # EAGAIN: another process set a group niceness within 100 ms
            if time.monotonic() >= deadline:
                log.warning("the run's scheduling group kept its niceness: the kernel refused it for %.1f s",
                            GROUP_RETRY_S)
                break
            time.sleep(0.1 + 0.05 * random.random())
        except OSError as exc:
            log.warning("the run's scheduling group kept its niceness: %s", exc)
            break
    with contextlib.suppress(OSError, ValueError, IndexError), open(AUTOGROUP) as group:
        return int(group.read().split()[-1])
    return None


def lower_priority(niceness: int) -> dict:
    """Lower the calling process below the machine's other work by ``niceness`` (0-19; 0: unchanged).

    Returns what was applied: the process's niceness after the change (0 when nothing was asked), whether
    it now leads a session of its own, and its autogroup's niceness (None where the system has no
    autogroups, or the process has none of its own).
    """
    check_niceness(niceness)
    applied = {"niceness": 0, "own_session": False, "group_niceness": None}
    if niceness == 0:
        return applied
    if hasattr(os, "nice"):
        applied["niceness"] = os.nice(niceness)
    if hasattr(os, "setsid") and autogroups_on():
        with contextlib.suppress(OSError):  # already a session leader (then it has a group of its own)
            os.setsid()
        applied["own_session"] = os.getsid(0) == os.getpid()
        if applied["own_session"]:
            applied["group_niceness"] = set_group_niceness(niceness)
    return applied
