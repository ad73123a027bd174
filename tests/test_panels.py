"""The Live run's panel registry (dashboard/panels.py): one entry is all a new panel needs.

A dummy panel added to the registry is laid out and drawn by the Live run page, embedded by the HTML
report, drawn under a pinned baseline by the compare section and drawn by the server's warm-up; and no
module of the dashboard keeps a second list of the panels (checked on the source, with a check that is
shown to fail on the lists the registry replaced).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pandas as pd
import pytest

from dashboard.controls import wkey
from dashboard import compare, panels, report
from dashboard import data as dashboard_data
from dashboard import figures as F
from dashboard.panels import PANELS, Panel, PanelData
from dashboard.teaching import Teaching
from ncld_core.config import RunConfig
from tests.apptest import drawn_figure
from tests.test_dashboard_app import _app, _run_button, _small

ROOT = Path(__file__).resolve().parents[1]
CFG = RunConfig(n_instances=600, chunk_size=200, n_features=5, n_labels=4, n_neighbors=5, schedule="growth@300",
                models=["ELM-O", "ELM-II"])


def _dummy_figure(calls: list):
    """A figure function that records what it was given: one line over the chunks seen."""

    def figure(d: PanelData):
        calls.append(d)
        xs = [c.chunk for c in d.chunks] or [0]
        return F.figure_from_spec({"data": [{"type": "scatter", "x": xs, "y": [1.0] * len(xs), "mode": "lines",
                                             "name": "dummy line"}],
                                   "layout": {"xaxis": {"range": [-0.5, max(xs) + 0.5]}, "height": 200}})

    return figure


def _dummy(calls: list) -> Panel:
    return Panel("dummy", "A dummy panel", "dummy", Teaching("Dummy explanation", (r"x = 1",), "What a dummy shows."),
                 figure=_dummy_figure(calls), note=lambda d: f"dummy note: {len(d.chunks)} chunks",
                 table=lambda d: pd.DataFrame({"chunks drawn": [len(d.chunks)]}), table_title="Dummy table")


@pytest.fixture(scope="module")
def records():
    stream = CFG.build_stream()
    chunks = list(CFG.runner().iter_run(stream))
    models = list(CFG.models) + ["all-negative", "noisy-prior"]
    return PanelData(chunks, models, [(c.position, c.kind) for c in stream.change_points], CFG.chunk_size, 3,
                     rho_pos=stream.rho_pos, rho_neg=stream.rho_neg)


def test_letters_headings_and_the_per_variant_span_follow_the_registry():
    assert [panels.heading(p)[:4] for p in PANELS] == ["(a) ", "(b) ", "(c) ", "(d) ", "(e) ", "(f) "]
    assert panels.heading(panels.by_key("summary")) == "(f) Summary"
    assert panels.focus_span() == "(b)–(d)"
    assert len({p.key for p in PANELS}) == len(PANELS)
    with pytest.raises(KeyError, match="no panel 'nope': the panels are metrics, cardinality"):
        panels.by_key("nope")


def test_the_report_the_overlay_and_the_warm_up_pick_up_a_new_panel(monkeypatch, records):
    calls = []
    monkeypatch.setattr(panels, "PANELS", (*PANELS, _dummy(calls)))
    assert panels.heading(panels.by_key("dummy")) == "(g) A dummy panel"

    # the HTML report: its figure, its note under it, its table
    figs = report.run_figures(records)
    assert "(g) A dummy panel" in figs and calls and calls[-1].chunks == records.chunks
    assert report.run_notes(records)["(g) A dummy panel"] == "dummy note: 3 chunks"
    assert report.run_tables(records)["Dummy table"]["chunks drawn"].tolist() == [3]
    page = report.html_report("dummy", CFG.to_dict(), figs, pd.DataFrame(), tables=report.run_tables(records),
                              figure_notes=report.run_notes(records))
    assert "(g) A dummy panel" in page and "dummy note: 3 chunks" in page and "Dummy table" in page

    # the compare section: the pinned run's line drawn under the current one, dimmed, named as the baseline's
    base = {"id": 1, "origin": "run", "chunks": records.chunks, "models": records.models,
            "change_points": records.change_points, "chunk_size": records.chunk_size, "n_chunks": 3}
    current = PanelData(records.chunks[:2], records.models, records.change_points, records.chunk_size, 3)
    out = compare.overlay(panels.figures(current), base, current)["dummy"]
    names = [t.name for t in out.data]
    assert names == ["baseline #1: dummy line", "dummy line"], names
    assert out.data[0].opacity == compare.DIM and list(out.data[0].x) == [0, 1, 2] and list(out.data[1].x) == [0, 1]
    assert tuple(out.layout.xaxis.range) == (-0.5, 2.5)  # wide enough for the baseline's chunks

    # the warm-up draws every panel once per server process
    calls.clear()
    dashboard_data.warm_up.clear()
    assert dashboard_data.warm_up() is True
    assert len(calls) == 1 and len(calls[0].chunks) == 3


def test_the_live_page_lays_out_and_draws_a_new_panel(monkeypatch):
    calls = []
    monkeypatch.setattr(panels, "PANELS", (*PANELS, _dummy(calls)))
    at = _app()
    heads = [m.value for m in at.markdown if m.value.startswith("##### (")]
    assert "##### (g) A dummy panel" in heads and "##### (h) Compare runs" in heads, heads
    assert "Dummy explanation" in [e.label for e in at.expander]
    _small(at)
    at.number_input(key=wkey("n_neighbors", at.session_state)).set_value(5)
    at.run()
    _run_button(at).click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["run"].status == "done"
    fig = drawn_figure(at, "dummy")  # sent with the chunk's other figures
    assert [t["name"] for t in fig["data"]] == ["dummy line"] and fig["data"][0]["x"] == [0, 1, 2]
    assert "dummy note: 3 chunks" in [c.value for c in at.caption]
    assert any(t.value["chunks drawn"].tolist() == [3] for t in at.table if "chunks drawn" in t.value.columns)
    # presentation mode offers it and shows it alone
    at.toggle(key="presenting").set_value(True).run()
    assert at.selectbox(key="present_panel").options[-1] == "(g) dummy"
    at.selectbox(key="present_panel").set_value("dummy").run()
    assert not at.exception, [e.value for e in at.exception]
    # the panel alone: the Compare section (the runs' table, wide) is not drawn under it on a projector's screen
    assert [m.value for m in at.markdown if m.value.startswith("##### (")] == ["##### (g) A dummy panel"]


# --------------------------------------------------------------------------- no second list of the panels
def _compared(nodes, keys: set[str]) -> set[str]:
    """The registry keys a value is compared with (``==``, ``!=``, ``in``) anywhere in ``nodes``."""
    out = set()
    for top in nodes:
        for node in ast.walk(top):
            if isinstance(node, ast.Compare):
                out |= {s.value for s in (node.left, *node.comparators) if isinstance(s, ast.Constant) and s.value in keys}
    return out


def _key_lists(tree: ast.Module, keys: set[str]) -> list[str]:
    """Places in ``tree`` that list the panels again: a list / tuple / set / dict display holding (at any depth)
    at least half of the registry's keys, or a function (or the module's top-level code) comparing values with two or more."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
            # nested displays count: ((key, label), ...) lists the keys as much as (key, ...)
            named = {e.value for e in ast.walk(node) if isinstance(e, ast.Constant) and e.value in keys}
            if 2 * len(named) >= len(keys):
                found.append(f"line {node.lineno}: a collection of {sorted(named)}")
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    scopes = [("module", [s for s in tree.body if not isinstance(s, defs)])]
    scopes += [(n.name, [n]) for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for name, nodes in scopes:
        compared = _compared(nodes, keys)
        if len(compared) >= 2:
            found.append(f"{name}: compares with {sorted(compared)}")
    return found


def test_no_module_of_the_dashboard_lists_the_panels_again():
    keys = {p.key for p in PANELS}
    bad = {}
    for path in sorted((ROOT / "dashboard").rglob("*.py")):
        if path.name == "panels.py":
            continue
        hits = _key_lists(ast.parse(path.read_text()), keys)
        if hits:
            bad[str(path.relative_to(ROOT))] = hits
    assert not bad, bad


def test_the_list_check_fails_on_the_lists_the_registry_replaced():
    keys = {p.key for p in PANELS}
    old = '''
PRESENT_PANELS = (("metrics", "(a) quality"), ("cardinality", "(b) cardinality"), ("threshold", "(c) drift tests"))
def overlay(figs):
    for name, fig in figs.items():
        if name == "metrics":
            pass
        elif name == "timeline":
            pass
'''
    hits = _key_lists(ast.parse(old), keys)
    assert "line 2: a collection of ['cardinality', 'metrics', 'threshold']" in hits, hits
    assert "overlay: compares with ['metrics', 'timeline']" in hits, hits


def test_every_consumer_reads_the_registry():
    """The page, the report, the overlay and the warm-up name ``panels.PANELS`` or ``panels.figures`` (read at
    call time: the tests above swap the registry)."""
    for name in ("views/run.py", "report.py", "compare.py", "data.py"):
        tree = ast.parse((ROOT / "dashboard" / name).read_text())
        reads = {n.attr for n in ast.walk(tree)
                 if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "panels"}
        assert reads & {"PANELS", "figures"}, name


def test_every_detector_has_its_own_label_and_note():
    """The controls and legends name a detector in words and (c)'s note says what it does: a detector of the core
    without its own entry would show its bare registry name and "see ncld_core/model/detector.py."."""
    from dashboard.teaching import DETECTOR_LABELS, DETECTOR_NOTES
    from ncld_core.model.detector import DETECTORS

    for name in DETECTORS:
        assert DETECTOR_LABELS[name] != name, name
        assert not DETECTOR_NOTES[name].startswith("see "), name
    assert len(set(DETECTOR_LABELS[n] for n in DETECTORS)) == len(DETECTORS)  # told apart in a legend
