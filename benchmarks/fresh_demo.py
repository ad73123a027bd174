"""How long the README's first command takes on a fresh clone: ``python -m benchmarks.fresh_demo``.

Clones this repository's committed ``HEAD`` into a temporary folder, runs ``make demo`` there (a new
virtual environment, the page's own dependencies from the package registry or pip's cache, then the
dashboard on port 8501), and measures, from the moment ``make demo`` starts:

- ``server_s``: Streamlit's health endpoint answers;
- ``page_s``: a real Chromium page of ``http://127.0.0.1:8501`` shows its Run button (the page answers).

Then it stops the server and removes the clone. Prints one line of JSON; exit code 1 when the page did not
answer within ``--target`` seconds (60, issue 24). The result depends on pip's cache (a first install
downloads every wheel): the line says whether pip's cache held wheels before the run. Needs Debian's
Chromium at ``/usr/bin/chromium`` and playwright (the ``test`` extra) in the running interpreter.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from benchmarks.common import argument_parser, git_revision

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
PORT = 8501  # make demo's


def _health(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False


def _pip_cache_has_wheels() -> bool:
    out = subprocess.run([sys.executable, "-m", "pip", "cache", "list"], capture_output=True, text=True)
    return ".whl" in out.stdout


def measure(timeout_s: float = 600.0) -> dict:
    from playwright.sync_api import sync_playwright

    url = f"http://127.0.0.1:{PORT}"
    if _health(url):
        raise RuntimeError(f"something already answers on port {PORT}: stop it first")
    result = {"revision": git_revision(), "pip_cache_had_wheels": _pip_cache_has_wheels(),
              "load_1min_before": round(os.getloadavg()[0], 2)}
    with tempfile.TemporaryDirectory(prefix="ncld-fresh-") as tmp:
        clone = Path(tmp) / "ncld"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        log = open(Path(tmp) / "demo.log", "w")
        t0 = time.monotonic()
        proc = subprocess.Popen(["make", "demo"], cwd=clone, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            while not _health(url):
                if proc.poll() is not None:
                    raise RuntimeError(f"make demo ended with {proc.returncode}: {(Path(tmp) / 'demo.log').read_text()[-800:]}")
                if time.monotonic() - t0 > timeout_s:
                    raise RuntimeError(f"no server within {timeout_s:.0f} s")
                time.sleep(0.25)
            result["server_s"] = round(time.monotonic() - t0, 1)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
                page = browser.new_page()
                page.goto(url, timeout=120_000)
                page.get_by_role("button", name="Run", exact=True).wait_for(timeout=120_000)
                result["page_s"] = round(time.monotonic() - t0, 1)
                browser.close()
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
            log.close()
    return result


def main(argv=None) -> int:
    p = argument_parser("benchmarks.fresh_demo", __doc__)
    p.add_argument("--target", type=float, default=60.0, help="seconds the page must answer within (default 60)")
    args = p.parse_args(argv)
    result = measure()
    result["target_s"] = args.target
    result["met"] = result["page_s"] <= args.target
    print(json.dumps(result))
    return 0 if result["met"] else 1


if __name__ == "__main__":
    sys.exit(main())
