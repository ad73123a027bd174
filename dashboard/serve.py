"""Serve the dashboard in a process of its own, on a free local port, and stop it again.

The browser tests, the README screenshot (``python -m benchmarks.screenshot``) and the classroom
load test all need a real ``streamlit run``; this is the one place that starts one.

>>> free_port() > 0
True
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "dashboard" / "app.py"

__all__ = ["free_port", "serve", "wait_healthy"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen | None = None, timeout: float = 60.0) -> None:
    """Block until ``url``'s Streamlit health check answers ``ok``; RuntimeError after ``timeout`` s
    or when ``proc`` exits first."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    return
        except OSError:
            pass
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {proc.returncode} before answering")
        if time.monotonic() > deadline:
            raise RuntimeError(f"streamlit did not answer at {url} within {timeout:.0f} s")
        time.sleep(0.3)


def is_server_command(cmdline) -> bool:
    """Whether a process's command line (``psutil.Process.cmdline()``) is a dashboard server: started by
    :func:`serve` or ``make demo`` (``-m dashboard.launch``), or by ``streamlit`` itself.

    >>> is_server_command(["python", "-m", "dashboard.launch", "run", "dashboard/app.py"])
    True
    >>> is_server_command(["/venv/bin/streamlit", "run", "app.py"]), is_server_command(["python", "-m", "pytest"])
    (True, False)
    """
    return any(part == "dashboard.launch" or "streamlit" in part for part in cmdline)


@contextlib.contextmanager
def serve(*, port: int | None = None, env: dict | None = None, log=None, timeout: float = 60.0,
          extra_args: tuple = (), app: Path = APP):
    """``with serve() as url:`` a healthy dashboard at ``url`` (http://127.0.0.1:PORT), terminated on exit.

    ``env`` adds to (and overrides) this process's environment; ``log`` is a file the server's output
    goes to (discarded when None); ``app``: another script served the same way (a benchmark's reference page).
    """
    port = free_port() if port is None else int(port)
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.Popen(
        [sys.executable, "-m", "dashboard.launch", "run", str(app), "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
         *extra_args],
        cwd=ROOT, env=full_env, stdout=log if log is not None else subprocess.DEVNULL, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc, timeout)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
