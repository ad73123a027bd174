"""Opening the dashboard in Streamlit's AppTest, as the page tests do."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[1] / "dashboard" / "app.py"


def open_app(query: dict | None = None, *, timeout: float = 120) -> AppTest:
    """The page opened with the link's ``query``, run once; an uncaught exception fails the test."""
    at = AppTest.from_file(str(APP), default_timeout=timeout)
    if query:
        at.query_params.update(query)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def drawn_figure(at, panel: str) -> dict:
    """The spec (plotly JSON) of the newest figure drawn in a panel of the Live run (dashboard.live_chart)."""
    drawn = [json.loads(c.proto.json) for c in at.get("bidi_component")
             if c.proto.component_name == "ncld_live_chart"]
    figures = [json.loads(d["figures"][panel]) for d in drawn if panel in d.get("figures", {})]  # not the mounts
    assert figures, f"no figure in panel {panel}"
    return figures[-1]
