"""The Live run page as Streamlit intends (issue 40 item 3): the view is layout, its live part a fragment, its CSS
and its chart's script static files; what it decides is in dashboard/live_page.py, tested here without Streamlit."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from dashboard import live_page
from ncld_core.config import RunConfig

ROOT = Path(__file__).resolve().parents[1]
VIEW = ROOT / "dashboard" / "views" / "run.py"


def test_the_live_view_is_layout_without_a_sleep_loop():
    src = VIEW.read_text(encoding="utf-8")
    assert len(src.splitlines()) <= 300, len(src.splitlines())
    tree = ast.parse(src)
    loops = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.While)]
    sleeps = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "sleep"]
    assert not loops and not sleeps, (loops, sleeps)
    fragments = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                 and n.func.attr == "fragment" and any(k.arg == "run_every" for k in n.keywords)]
    assert fragments, "the live part is no st.fragment(run_every=...)"


def test_no_css_or_javascript_in_the_live_pages_python():
    for name in ("views/run.py", "live_chart.py", "live_page.py", "live_session.py", "run_panels.py",
                 "present_view.py"):
        path = ROOT / "dashboard" / name
        src = path.read_text(encoding="utf-8")
        assert "<style>" not in src and "export default function" not in src, path
    script = (ROOT / "dashboard" / "static" / "live_chart.js").read_text(encoding="utf-8")
    assert "_fullLayout" not in script  # plotly's internals: its public API only


def test_the_page_script_looks_for_the_carrier_the_server_sends():
    """The carrier's class lives in Python (dashboard/figure_carrier.py) and in the page's script: the same."""
    from dashboard.figure_carrier import CARRIER_CLASS, carrier_html

    script = (ROOT / "dashboard" / "static" / "live_chart.js").read_text(encoding="utf-8")
    assert f"const CARRIER = 'div.{CARRIER_CLASS}';" in script
    assert carrier_html({}).startswith(f'<div hidden class="{CARRIER_CLASS}">')


def test_a_page_starts_by_itself_only_when_live_valid_and_stale():
    same = lambda run: run.cfg == "now"  # noqa: E731
    assert live_page.starts_by_itself(live=True, ok=True, run=SimpleNamespace(cfg="old"), same=same)
    assert not live_page.starts_by_itself(live=True, ok=True, run=SimpleNamespace(cfg="now"), same=same)
    assert not live_page.starts_by_itself(live=True, ok=True, run=None, same=same)  # Run starts the first
    assert not live_page.starts_by_itself(live=False, ok=True, run=SimpleNamespace(cfg="old"), same=same)
    assert not live_page.starts_by_itself(live=True, ok=False, run=SimpleNamespace(cfg="old"), same=same)


def test_the_note_says_what_to_press_only_when_the_page_is_not_live():
    assert "press Run for them" in live_page.changed_note(same=False, ok=True, running=False, live=False)
    assert "press Stop, then Run" in live_page.changed_note(same=False, ok=True, running=True, live=False)
    assert "press" not in live_page.changed_note(same=False, ok=True, running=True, live=True)


def test_focus_defaults_to_the_acting_learner_and_keeps_a_valid_choice():
    cfg = RunConfig(models=["ELM-O", "ELM-I", "ELM (plain)"])
    options = live_page.focus_options(cfg)
    assert options[0] == live_page.ALL and "ELM-O" in options
    assert live_page.focus_choice(options, None, cfg) == "ELM-O"
    assert live_page.focus_choice(options, "ELM-I", cfg) == "ELM-I"
    assert live_page.focus_choice(options, "gone", cfg) == "ELM-O"
    assert live_page.focus_options(RunConfig(models=["ELM-O"])) is None


def test_the_summary_on_a_projector_drops_what_says_nothing_there():
    table = pd.DataFrame({"variant": ["ELM-O"], "Hamming loss": [0.1], "GM": [0.5], "detected": [1.0],
                          "seconds": [0.2]})
    cols, fmt = live_page.summary_columns(table, presenting=False, change_points=False)
    assert cols == ["variant", "Hamming loss", "GM", "detected", "seconds"] and fmt["seconds"] == "{:.2f}"
    cols, _ = live_page.summary_columns(table, presenting=True, change_points=False)
    assert cols == ["variant", "Hamming loss", "GM"]
    cols, _ = live_page.summary_columns(table, presenting=True, change_points=True)
    assert cols == ["variant", "Hamming loss", "GM", "detected"]


def test_a_refused_write_reruns_the_page_once_then_shows_the_error(monkeypatch):
    """A live part's write that Streamlit refused after a racing full run reruns the page; a second refusal within
    ui.REFUSED_AGAIN_S is no race (the page's full runs never write that place): raised, never rerun in a loop."""
    from streamlit.errors import StreamlitInvalidLayoutContextError

    from dashboard import ui

    class Rerun(Exception):
        pass

    def rerun():
        raise Rerun

    clock = [100.0]
    monkeypatch.setattr(ui.st, "session_state", {})
    monkeypatch.setattr(ui.st, "rerun", rerun)
    monkeypatch.setattr(ui.time, "monotonic", lambda: clock[0])

    def refused():
        try:
            raise StreamlitInvalidLayoutContextError("refused")
        except StreamlitInvalidLayoutContextError:
            ui.rerun_after_refused_write()

    outcomes = []
    for dt in (0.0, ui.REFUSED_AGAIN_S + 0.1, 0.5):  # a race; another, later; then one right after it
        clock[0] += dt
        try:
            refused()
        except Rerun:
            outcomes.append("rerun")
        except StreamlitInvalidLayoutContextError:
            outcomes.append("raised")
    assert outcomes == ["rerun", "rerun", "raised"]
