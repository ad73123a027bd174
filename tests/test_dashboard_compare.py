"""Compare runs (pin a baseline, its curves dimmed under the next run, the link carries it), coinciding
variants drawn once, one meaning per glyph, and what the learner never sees marked as such."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import drawn_figure, open_app

from dashboard.controls import wkey
from dashboard import compare as C
from dashboard import figures as F
from dashboard.link import LINK_PARAM, PENDING
from ncld_core.config import RunConfig
from ncld_core.eval.compare import coincide

APP = Path(__file__).resolve().parents[1] / "dashboard" / "app.py"
SMALL = RunConfig(n_instances=600, chunk_size=200, n_features=5, n_labels=4, n_neighbors=5)


def _app(query: dict | None = None) -> AppTest:
    return open_app(query, timeout=120)


def _legend(fig: dict) -> list[str]:
    return [t.get("name", "").replace("<br>", " ") for t in fig["data"] if t.get("showlegend", True) is not False]


def _errors(at) -> list[str]:
    return [e.value.replace("\\", "") for e in at.error]


def _curve(chunks, name, key="average_precision"):
    return [c.cumulative.get(name, {}).get(key) for c in chunks]


def test_pin_and_compare_round_trip_through_the_link():
    at = _app(SMALL.to_query_params())
    at.button(key="run_button").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert LINK_PARAM not in at.query_params
    at.button(key="pin_button").click().run()
    # the link carries the pinned run's settings
    assert RunConfig.from_query_params(json.loads(at.query_params[LINK_PARAM])) == SMALL
    assert at.button(key="pin_button").disabled is True
    # change a setting (the page is live since Run: its run starts by itself): the baseline's curves are under
    # every panel, dimmed, named as the baseline's
    at.number_input(key=wkey("beta", at.session_state)).set_value(0.5).run()
    assert not at.exception, [e.value for e in at.exception]
    for panel in ("metrics", "cardinality", "threshold"):
        fig = drawn_figure(at, panel)
        base = [t for t in fig["data"] if t.get("name", "").startswith("baseline #1: ")]
        assert base and all(t["opacity"] == C.DIM for t in base), panel
        assert all(t.get("opacity", 1) > C.DIM for t in fig["data"] if t not in base), panel
    assert "baseline #1: ELM-O = ELM-I = ELM-II" in _legend(drawn_figure(at, "metrics"))
    timeline = drawn_figure(at, "timeline")
    assert any(r.startswith("baseline #1: ") for r in timeline["layout"]["yaxis"]["categoryarray"])
    first = at.session_state["run_history"][0]["chunks"]
    second = at.session_state["run"].chunks
    # the dimmed curve is the baseline's, not the current run's
    ap = next(t for t in drawn_figure(at, "metrics")["data"] if t["name"] == "baseline #1: ELM-O = ELM-I = ELM-II"
              and t.get("xaxis") == "x3")
    assert coincide(ap["y"], _curve([c for c in first if c.metrics], "ELM-O"))
    assert not coincide(_curve(first, "ELM-O"), _curve(second, "ELM-O"))
    # the table: both runs, the setting that differs, final metrics per model
    table = next(t.value for t in at.table if "run" in getattr(t.value, "columns", []))
    assert table["run"].unique().tolist() == ["#1", "#2"]
    assert table["label fit weight"].tolist() == [str(SMALL.beta)] * 5 + ["0.5"] * 5
    assert table["pinned"].tolist() == ["pinned"] * 5 + [""] * 5
    # one chunk size: delays in chunks; in instances once the runs' chunk sizes differ (a chunk is not a chunk)
    assert "mean delay (chunks)" in table.columns and "mean delay (instances)" not in table.columns
    at.number_input(key=wkey("chunk_size", at.session_state)).set_value(SMALL.chunk_size // 2).run()  # run #3
    wider = next(t.value for t in at.table if "run" in getattr(t.value, "columns", []))
    assert "mean delay (instances)" in wider.columns and "mean delay (chunks)" not in wider.columns
    at.button(key="unpin_button").click().run()
    unpinned = next(t.value for t in at.table if "run" in getattr(t.value, "columns", []))
    assert "pinned" not in unpinned.columns  # no column of blanks
    at.selectbox(key="pin_pick").set_value(at.session_state["run_history"][0]["id"]).run()  # run #1 again
    at.number_input(key=wkey("chunk_size", at.session_state)).set_value(SMALL.chunk_size).run()  # (the link below: run #2's settings)
    assert table["model"].tolist()[:5] == ["ELM-O", "ELM-I", "ELM-II", "all-negative", "noisy-prior"]
    assert table["micro-F1"].iloc[0] == pytest.approx(first[-1].cumulative["ELM-O"]["micro_f1"])

    # a fresh session opened with the link: nothing runs; the controls hold the current settings and the
    # pinned run waits for a click
    link = dict(at.query_params)
    fresh = _app(link)
    assert not _errors(fresh), _errors(fresh)
    assert fresh.session_state.get("run") is None and not fresh.session_state["run_history"]
    assert fresh.session_state[PENDING] == SMALL and fresh.session_state["cfg_values"]["beta"] == 0.5
    assert fresh.query_params[LINK_PARAM] == link[LINK_PARAM]
    # the click re-runs it (seeded: the same curves) and pins it; Run runs the current settings beside it
    fresh.button(key="pending_rerun").click().run()
    assert not fresh.exception, [e.value for e in fresh.exception]
    assert fresh.session_state.get("run") is None and fresh.session_state[PENDING] is None
    fresh.button(key="run_button").click().run()
    assert not fresh.exception, [e.value for e in fresh.exception]
    assert fresh.session_state["run"].status == "done"
    hist = fresh.session_state["run_history"]
    assert fresh.session_state["pinned_run"] == hist[0]["id"] and hist[0]["origin"] == "link"
    assert hist[0]["cfg"] == SMALL and fresh.session_state["run"].cfg.beta == 0.5
    for name in ("ELM-O", "noisy-prior"):
        assert coincide(_curve(hist[0]["chunks"], name), _curve(first, name)), name
        assert coincide(_curve(fresh.session_state["run"].chunks, name), _curve(second, name)), name
    legend = _legend(drawn_figure(fresh, "metrics"))
    assert "baseline #1 (from the link): ELM-O = ELM-I = ELM-II" in legend and "ELM-O = ELM-I = ELM-II" in legend
    assert fresh.query_params[LINK_PARAM] == link[LINK_PARAM]  # and the link stays as it came


@pytest.mark.parametrize("raw, message", [
    ('{"chunk_size": "abc"}', "baseline (the pinned run: chunk_size='abc' (chunk size: cannot read it); "
                              "no baseline is pinned)"),
    ("not json", "baseline='not json' (the pinned run: cannot read it; no baseline is pinned)"),
    ('{"n_hidden": "0"}', "baseline (the pinned run: hidden nodes must be in"),
])
def test_an_unusable_pinned_run_in_the_link_is_named(raw, message):
    at = _app({"beta": "0.3", LINK_PARAM: raw})
    errors = _errors(at)
    assert any(message in e for e in errors), errors
    assert not any("not a setting" in e for e in errors), errors  # baseline is a known link value
    assert at.session_state["cfg_values"]["beta"] == 0.3  # the rest of the link is applied
    assert at.session_state.get("run") is None and not at.session_state["run_history"]  # nothing re-run
    assert at.session_state[PENDING] is None and LINK_PARAM not in at.query_params  # nothing pending


def _chunks(**kw):
    cfg = RunConfig(**{**SMALL.to_dict(), "models": ["ELM-O", "ELM-I", "ELM-II", "ELM-O (clean labels)"], **kw})
    stream = cfg.build_stream()
    chunks = list(cfg.runner().iter_run(stream))
    return chunks, list(chunks[0].seconds), [(c.position, c.kind) for c in stream.change_points]


@pytest.fixture(scope="module")
def quiet():
    return _chunks()  # no drift, no firing: ELM-O, ELM-I and ELM-II learn the same


@pytest.fixture(scope="module")
def growth():
    return _chunks(schedule="growth@400", delta=0.5, n_instances=800)  # ELM-I retrains at the change


def test_coinciding_variants_are_drawn_once_with_a_legend_naming_all(quiet, growth):
    chunks, models, cps = quiet
    assert F.coinciding_models(chunks, models)[0] == ["ELM-O", "ELM-I", "ELM-II"]
    figs = {make.__name__: make(chunks, models, cps, 200, 3) for make in
            (F.metrics_figure, F.cardinality_figure, F.detector_figure)}
    legend = {k: " | ".join(t.name.replace("<br>", " ") for t in f.data if t.showlegend is not False)
              for k, f in figs.items()}
    for name, text in legend.items():
        assert "ELM-O = ELM-I = ELM-II" in text, (name, text)
    # panel (a): one cumulative curve per metric for the three, none of their own
    cum = [t for t in figs["metrics_figure"].data if t.mode == "lines"]
    assert [t.name for t in cum].count("ELM-O = ELM-I = ELM-II") == 3
    assert not any(t.name in ("ELM-I", "ELM-II") for t in figs["metrics_figure"].data)
    # after a change ELM-I retrains: its curve parts from ELM-O's and is drawn and named on its own
    chunks, models, cps = growth
    assert any(c.diagnostics["ELM-I"].fired for c in chunks)
    names = [t.name for t in F.metrics_figure(chunks, models, cps, 200, 4).data if t.showlegend]
    assert "ELM-I" in names and "ELM-O = ELM-I = ELM-II" not in names


def test_each_glyph_means_one_thing(growth):
    chunks, models, cps = growth
    det = F.detector_figure(chunks, models, cps, 200, 4)
    tl = F.timeline_figure(chunks, models, cps, 200, 4)
    for fig in (det, tl):
        legend = [t.name.replace("<br>", " ") for t in fig.data if t.showlegend is not False]  # wrapped to the columns
        assert F.DETECTION_NAME in legend and F.FALSE_ALARM_NAME in legend
        for t in fig.data:
            symbol = t.marker.symbol if t.mode and "markers" in t.mode else None
            if symbol == "x":  # a cross is a false alarm, in (c) as in (d)
                assert t.name.endswith("false alarm") or t.name.replace("<br>", " ") == F.FALSE_ALARM_NAME, t.name
            if symbol == "circle":  # a filled circle is a detection
                assert t.name.endswith("detection") or t.name.replace("<br>", " ") == F.DETECTION_NAME, t.name
    assert F.DETECTION_NAME.startswith("detection: ") and F.FALSE_ALARM_NAME.startswith("false alarm: ")
    # a diamond is a true change (panel (d)); the estimate in (b) is not drawn with it, nor in red
    card = F.cardinality_figure(chunks, models, cps, 200, 4)
    symbols = {t.marker.symbol for t in card.data if t.marker is not None and t.marker.symbol}
    assert "diamond" not in symbols and F.ESTIMATE_SYMBOL in symbols
    red = F._CHANGE_COLOR
    assert all(t.line.color != red for t in card.data if t.x and t.x[0] is not None), "red is for true changes"


def test_what_the_learner_never_sees_is_marked_in_every_panel(growth):
    chunks, models, cps = growth
    tail = f"({F.ORACLE}"
    metrics = F.metrics_figure(chunks, models, cps, 200, 4)
    assert f"ELM-O (clean labels) ({F.ORACLE})" in [t.name.replace("<br>", " ") for t in metrics.data if t.showlegend]
    assert any(F.ORACLE in a.text for a in metrics.layout.annotations)  # its change lines
    card = F.cardinality_figure(chunks, models, cps, 200, 4)
    det = F.detector_figure(chunks, models, cps, 200, 4)
    tl = F.timeline_figure(chunks, models, cps, 200, 4)
    for fig in (card, det, tl):
        assert F.CHANGE_NAME in [t.name.replace("<br>", " ") for t in fig.data if t.showlegend is not False]
    assert F.TRUTH_NAME.endswith(tail + ")") and F.TRUTH_NAME in [t.name.replace("<br>", " ") for t in card.data]
    regimes = [t.name.replace("<br>", " ") for t in tl.data if t.legendgroup == "regimes"]
    assert regimes and all(tail in r for r in regimes)
    assert tl.layout.yaxis.categoryarray[-1] == F.TRUE_CHANGE_ROW and tail in F.TRUE_CHANGE_ROW
    # the oracle model's own estimate and detector say it too
    assert any("ELM-O (clean labels) (oracle" in t.name.replace("<br>", " ") for t in card.data)
    assert any("ELM-O (clean labels) (oracle" in t.name.replace("<br>", " ") for t in det.data if t.showlegend is not False)


def test_panels_are_in_reading_order():
    at = _app()
    heads = [m.value[6:9] for m in at.markdown if m.value.startswith("##### (")]
    assert heads == sorted(heads) and heads[:6] == ["(a)", "(b)", "(c)", "(d)", "(e)", "(f)"], heads
