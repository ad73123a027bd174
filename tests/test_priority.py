"""dashboard.serving.priority: a run's process below the machine's interactive work."""

from __future__ import annotations

import builtins

import pytest

from dashboard.serving import priority


def test_a_bad_niceness_is_named():
    for bad in (-1, 20, 2.5, True, "5"):
        with pytest.raises(ValueError, match="^niceness must be an integer in"):
            priority.lower_priority(bad)
    assert priority.check_niceness(19) == 19


def test_the_group_niceness_the_kernel_refuses_once_is_retried(monkeypatch, tmp_path):
    """An unprivileged user may set one autogroup niceness per 100 ms (EAGAIN otherwise): two runs starting
    together would leave the second in a group of its own at niceness 0, above the server."""
    group = tmp_path / "autogroup"
    group.write_text("/autogroup-1 nice 0\n")
    monkeypatch.setattr(priority, "AUTOGROUP", str(group))
    refusals = [BlockingIOError(11, "Resource temporarily unavailable")]

    def kernel(path, mode="r", *args, **kwargs):
        if mode == "w" and refusals:
            raise refusals.pop()
        if mode == "w":  # the kernel's file reads back as "/autogroup-N nice K"
            return _Rewriting(path)
        return builtins.open(path, mode, *args, **kwargs)

    monkeypatch.setattr(priority, "open", kernel, raising=False)
    assert priority.set_group_niceness(10) == 10
    assert not refusals


def test_a_group_niceness_refused_past_the_retry_is_logged_not_raised(monkeypatch, tmp_path, caplog):
    group = tmp_path / "autogroup"
    group.write_text("/autogroup-1 nice 0\n")
    monkeypatch.setattr(priority, "AUTOGROUP", str(group))
    monkeypatch.setattr(priority, "GROUP_RETRY_S", 0.3)

    def kernel(path, mode="r", *args, **kwargs):
        if mode == "w":
            raise BlockingIOError(11, "Resource temporarily unavailable")
        return builtins.open(path, mode, *args, **kwargs)

    monkeypatch.setattr(priority, "open", kernel, raising=False)
    with caplog.at_level("WARNING", logger="ncld.priority"):
        assert priority.set_group_niceness(10) == 0  # kept its niceness, and said so
    assert "kernel refused it" in caplog.text


class _Rewriting:
    """A write of ``K`` to the fake group file stores "/autogroup-1 nice K", as the kernel's reads back."""

    def __init__(self, path):
        self.path = path

    def write(self, text):
        with builtins.open(self.path, "w") as f:
            f.write(f"/autogroup-1 nice {text}\n")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
