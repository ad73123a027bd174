"""The dashboard driven headless by Streamlit's AppTest: controls, validation, presets, URL, a run, uploads."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.apptest import carried, drawn_figure, open_app

from dashboard import figures as F
from dashboard.controls import wkey
from ncld_core.config import PRESETS, RunConfig, StreamSpec
from ncld_core.model.detector import DETECTORS

APP = Path(__file__).resolve().parents[1] / "dashboard" / "app.py"
NUMBER_FIELDS = ("chunk_size", "n_instances", "shuffle_seed", "n_features", "n_labels", "cardinality",
                 "label_correlation", "rho_low", "rho_high", "beta", "gamma", "delta", "alpha", "n_hidden",
                 "n_neighbors", "seed", "trusted_fraction")


def _app(query: dict | None = None) -> AppTest:
    return open_app(query, timeout=90)


def _plain(text: str) -> str:
    """Error bodies are Markdown-escaped by the app; compare on the plain text."""
    return text.replace("\\", "")


def _errors(at) -> list[str]:
    return [_plain(e.value) for e in at.error]


def _run_button(at):
    return at.button(key="run_button")


def _summary(at):
    tables = [d.value for d in at.dataframe if "GM" in getattr(d.value, "columns", [])]
    assert tables, "no summary table"
    return tables[0]


def _names(fig: dict) -> list[str]:
    """Legend names, a long one (drawn on two lines) read on one."""
    return [t.get("name", "").replace("<br>", " ") for t in fig["data"]]


def _uncached_small_app(seed: int) -> AppTest:
    """The app on a small synthetic stream whose stream seed (``seed``: one per test) no other test caches."""
    at = _app()
    _small(at)
    at.number_input(key=wkey("n_neighbors", at.session_state)).set_value(5)
    at.number_input(key=wkey("shuffle_seed", at.session_state)).set_value(seed)
    at.run()
    return at


#: A detector other than the default acting one (the default may change after measurement).
OTHER = next(d for d in DETECTORS if d != RunConfig().detector)


def _small(at, n=600, chunk=200):
    at.number_input(key=wkey("n_instances", at.session_state)).set_value(n)
    at.number_input(key=wkey("chunk_size", at.session_state)).set_value(chunk)
    at.number_input(key=wkey("n_features", at.session_state)).set_value(5)
    at.number_input(key=wkey("n_labels", at.session_state)).set_value(4)
    at.run()


def test_every_control_is_there():
    at = _app()
    keys = {w.key for w in at.number_input}
    assert {wkey(f, at.session_state) for f in NUMBER_FIELDS} <= keys
    assert at.selectbox(key=wkey("dataset", at.session_state)).value == "synthetic"
    assert at.radio(key=wkey("noise", at.session_state)).value == "range"
    assert at.multiselect(key=wkey("models", at.session_state)).value == ["ELM-O", "ELM-I", "ELM-II"]
    assert at.checkbox(key=wkey("references", at.session_state)).value is True
    # drift detection: the acting detector, and the others to compare with it
    assert at.selectbox(key=wkey("detector", at.session_state)).value == RunConfig().detector
    assert at.selectbox(key=wkey("detector", at.session_state)).options == [F.detector_label(d) for d in DETECTORS]
    assert at.multiselect(key=wkey("monitors", at.session_state)).value == []
    assert len(at.multiselect(key=wkey("monitors", at.session_state)).options) == len(DETECTORS) - 1
    assert any(b.key and b.key.startswith("sched_add_") for b in at.button)  # the schedule: rows added by a button
    assert not at.data_editor  # no data editor on the first page (its code was the page's largest download)
    assert _run_button(at).disabled is False
    assert at.button(key="stop_button").disabled is True
    assert len(at.expander) >= 5  # one equation expander per panel
    assert not at.latex  # drawn only once opened (the page's first answer waits for no typesetting)
    for box in at.expander:
        at.session_state[box.key] = True  # the visitor opens each
    at.run()
    latex = " ".join(l.value for l in at.latex)
    for label in ("LCard", r"\varepsilon_i", r"\gamma\,\mathrm{Tr}"):
        assert label in latex
    titles = " ".join(e.label for e in at.expander)
    for name in ("Eq. (N3)", "Eq. (card)", "Eq. (Hfd)"):
        assert name in titles


def test_rho_high_error_next_to_control_disables_run():
    at = _app()
    at.number_input(key=wkey("rho_high", at.session_state)).set_value(0.6).run()
    errors = _errors(at)
    assert any("highest flip rate below 0.5" in e for e in errors), errors
    assert _run_button(at).disabled is True
    # fixed again -> enabled
    at.number_input(key=wkey("rho_high", at.session_state)).set_value(0.45).run()
    assert not _errors(at)
    assert _run_button(at).disabled is False


def test_n_neighbors_not_below_chunk_size():
    at = _app()
    at.number_input(key=wkey("chunk_size", at.session_state)).set_value(10)
    at.number_input(key=wkey("n_neighbors", at.session_state)).set_value(10).run()
    assert any("neighbours must be below the chunk size (10)" in e for e in _errors(at)), _errors(at)
    assert _run_button(at).disabled is True


def test_rate_table_rejects_rho_sum_of_one():
    at = _app()
    at.radio(key=wkey("noise", at.session_state)).set_value("table").run()
    editor = next(d for d in at.data_editor if d.key and d.key.startswith("w_rates_"))
    assert len(editor.value) == 10  # one row per label of the synthetic generator
    at.session_state[editor.key] = {"edited_rows": {"3": {"rho_pos": 0.6, "rho_neg": 0.45}},
                                    "added_rows": [], "deleted_rows": []}
    at.run()
    assert any("drop rate + add rate must be < 1 for every label (Eq. NR), but label 3 has 0.6 + 0.45" in e
               for e in _errors(at)), _errors(at)
    assert _run_button(at).disabled is True
    cfg = RunConfig(**at.session_state["cfg_values"])
    assert cfg.noise == "table" and cfg.rho_pos[3] == 0.6 and len(cfg.rho_neg) == 10


def _schedule_controls(at) -> list[tuple]:
    """The schedule's rows as the page shows them: (kind, position) of each change point, in order."""
    kinds = [s for s in at.selectbox if s.key and s.key.startswith("w_sched_kind_")]
    positions = {n.key: n.value for n in at.number_input if n.key and n.key.startswith("w_sched_pos_")}
    return [(k.value, positions[k.key.replace("w_sched_kind_", "w_sched_pos_")]) for k in kinds]


def _schedule_text_shown(at) -> str:
    # (a position box holds a float: 2500.0 is instance 2500)
    return ", ".join(k if p is None else f"{k}@{p:.0f}" for k, p in sorted(_schedule_controls(at),
                                                                        key=lambda r: (r[1] is not None, r[1] or 0)))


def test_a_number_that_is_not_whole_in_an_integer_box_is_said_not_truncated():
    """The integer boxes were the browser's integer boxes: 250.5 became 250 and "1e3" became 1, silently. Each box
    now holds a float: a whole number is the setting (1000.0 -> 1000), any other is an error under its box."""
    at = _app()
    box = at.number_input(key=wkey("chunk_size", at.session_state))
    box.set_value(250.5).run()
    assert "chunk size must be a whole number, got 250.5" in _errors(at), _errors(at)
    assert _run_button(at).disabled is True
    banner = next(w.value for w in at.warning if "Run is disabled" in w.value).replace("\\", "")
    assert "**chunk size**: must be a whole number, got 250.5" in banner, banner  # the label once
    at.number_input(key=wkey("chunk_size", at.session_state)).set_value(1000.0).run()  # "1e3" typed
    assert not _errors(at) and at.session_state["ctx"].cfg.chunk_size == 1000
    assert isinstance(at.session_state["ctx"].cfg.chunk_size, int) and at.query_params["chunk_size"] == "1000"
    # a change point's position too
    next(b for b in at.button if b.key and b.key.startswith("sched_add_")).click().run()
    pos = [n for n in at.number_input if n.key and n.key.startswith("w_sched_pos_")][-1]
    pos.set_value(2500.5).run()
    assert any("the instance must be a whole number, got 2500.5" in e for e in _errors(at)), _errors(at)
    pos = [n for n in at.number_input if n.key and n.key.startswith("w_sched_pos_")][-1]
    pos.set_value(2500.0).run()
    assert at.session_state["ctx"].cfg.schedule == "growth@2500" and not _errors(at)
    # a second point: a fraction or a number below 1 there is said for it, and the schedule keeps its rows
    next(b for b in at.button if b.key and b.key.startswith("sched_add_")).click().run()
    at.selectbox(key=[s.key for s in at.selectbox if s.key and s.key.startswith("w_sched_kind_")][-1]) \
        .set_value("reduction").run()
    [n for n in at.number_input if n.key and n.key.startswith("w_sched_pos_")][-1].set_value(3000.0).run()
    assert at.session_state["ctx"].cfg.schedule == "growth@2500, reduction@3000"
    for typed, said in ((3000.5, "must be a whole number, got 3000.5"), (-3.0, "must be at least 1, got -3")):
        [n for n in at.number_input if n.key and n.key.startswith("w_sched_pos_")][-1].set_value(typed).run()
        assert any(f"change 2: the instance {said}" in e for e in _errors(at)), _errors(at)
        assert at.session_state["ctx"].cfg.schedule == "growth@2500, reduction@3000" and _run_button(at).disabled
    [n for n in at.number_input if n.key and n.key.startswith("w_sched_pos_")][-1].set_value(3000.0).run()
    pos = [n for n in at.number_input if n.key and n.key.startswith("w_sched_pos_")][-1]
    # numbers no integer box could hold before: an error under the box, never a broken sidebar
    pos = [n for n in at.number_input if n.key and n.key.startswith("w_sched_pos_")][-1]
    pos.set_value(1e20).run()
    assert any("the instance must be at most 9,007,199,254,740,991" in e for e in _errors(at)), _errors(at)
    assert not at.exception and not any("went wrong" in e for e in _errors(at))
    at.radio(key=wkey("noise", at.session_state)).set_value("table").run()
    at.number_input(key=wkey("n_labels", at.session_state)).set_value(1e12).run()
    assert any(e.startswith("label count must be in [") for e in _errors(at)), _errors(at)
    assert not at.exception and not any("went wrong" in e for e in _errors(at))


def test_schedule_rows_are_added_validated_and_removed():
    at = _app()
    start = _schedule_controls(at)
    next(b for b in at.button if b.key and b.key.startswith("sched_add_")).click().run()
    assert len(_schedule_controls(at)) == len(start) + 1
    new_kind = [s for s in at.selectbox if s.key and s.key.startswith("w_sched_kind_")][-1]
    new_kind.set_value("growth")
    at.number_input(key=new_kind.key.replace("w_sched_kind_", "w_sched_pos_")).set_value(9000).run()
    assert any("lies beyond the stream of 5000 instances" in e for e in _errors(at)), _errors(at)
    assert _run_button(at).disabled is True
    assert at.session_state["cfg_values"]["schedule"].endswith("growth@9000")
    # two rows without a position: only a single point may omit it (the paper's form)
    next(b for b in at.button if b.key and b.key.startswith("sched_add_")).click().run()
    next(b for b in at.button if b.key and b.key.startswith("sched_add_")).click().run()
    assert any("single point" in e and "position" in e for e in _errors(at)), _errors(at)
    # removing the rows brings the schedule back
    for _ in range(3):
        [b for b in at.button if b.key and b.key.startswith("sched_del_")][-1].click().run()
    assert _schedule_controls(at) == start and not _errors(at), _errors(at)
    assert _run_button(at).disabled is False


@pytest.mark.parametrize("field", ["chunk_size", "seed", "beta"])
def test_an_emptied_number_box_says_so_and_holds_run(field):
    """An emptied box read as 0 before (Streamlit's value="min"): "got 0" where 0 is refused, and a silent run with
    0 where it is allowed (the seeds, beta). Now it stays empty, says so under it, and Run waits for a number."""
    at = _app()
    box = at.number_input(key=wkey(field, at.session_state))
    before = box.value
    box.set_value(None).run()
    assert any("empty: type a number" in e for e in _errors(at)), _errors(at)
    assert _run_button(at).disabled is True and at.number_input(key=wkey(field, at.session_state)).value is None
    at.number_input(key=wkey(field, at.session_state)).set_value(before).run()
    assert not _errors(at) and _run_button(at).disabled is False


def test_an_emptied_box_that_is_then_hidden_gets_its_default():
    """Found in review: rho low emptied, then the noise set to none, left None in a configuration that passed every
    check (the link said rho_low=null, the caption "rho low all")."""
    at = _app()
    at.number_input(key=wkey("rho_low", at.session_state)).set_value(None).run()
    at.radio(key=wkey("noise", at.session_state)).set_value("none").run()
    assert at.session_state["cfg_values"]["rho_low"] == RunConfig().rho_low
    assert "rho_low" not in at.query_params and not _errors(at) and _run_button(at).disabled is False


def _control_keys(at) -> set[str]:
    return {w.key for kind in (at.number_input, at.selectbox, at.radio, at.multiselect, at.checkbox) for w in kind
            if w.key and w.key.startswith("w_")}


def test_a_preset_gives_every_control_a_new_key():
    """A Run pressed while a preset still draws reaches the server with the values the page showed before the
    preset for the controls not yet redrawn. Under the same keys they overwrote the preset's (a run with a mix of
    the two was seen 1 time in 21 beside busy cores); under the preset's new keys they name no control."""
    at = _app()
    before = _control_keys(at)
    at.button_group(key="preset_pick").set_value("concept growth").run()
    after = _control_keys(at)
    assert before and after and not before & after, before & after
    assert RunConfig(**at.session_state["cfg_values"]) == PRESETS["concept growth"]


def test_a_finished_run_says_when_the_settings_changed_after_it():
    """After a run on a page that is not live (Stop pressed since: the session's ``live`` flag off), a preset (or
    any control) changes the settings: the run's numbers stay on the page, and its caption says they are not of
    the settings shown; back on the run's settings, the note goes."""
    changed = "The settings have changed since this run"
    at = _app()
    _small(at)
    _run_button(at).click().run()
    assert at.session_state["run"].status == "done"
    assert not any(changed in c.value for c in at.caption)
    at.session_state["live"] = False  # what Stop does (a run of three chunks ends before a click could stop it)
    at.number_input(key=wkey("seed", at.session_state)).set_value(7).run()
    assert at.session_state["run"].cfg.seed != 7  # nothing started
    note = [_plain(c.value) for c in at.caption if changed in c.value]
    assert note and "press Run for them" in note[0] and "This run:" in note[0], note
    at.number_input(key=wkey("seed", at.session_state)).set_value(RunConfig().seed).run()
    assert not any(changed in c.value for c in at.caption)
    at.button_group(key="preset_pick").set_value("concept growth").run()
    assert any(changed in c.value for c in at.caption)


def test_a_knob_moved_after_run_starts_its_run_without_a_click():
    """Issue 38 item 1: once Run was pressed, a control that moves starts the run of its settings by itself (a
    configuration computed before is replayed); a link fills the controls and starts nothing, and settings that
    are not valid show their error and start nothing."""
    at = _app({"seed": "3"})  # a link: the controls filled, no run
    _small(at)
    at.number_input(key=wkey("seed", at.session_state)).set_value(9).run()
    assert at.session_state.get("run") is None
    _run_button(at).click().run()
    first = at.session_state["run"]
    assert first.status == "done" and first.cfg.seed == 9
    at.number_input(key=wkey("seed", at.session_state)).set_value(10).run()  # no click
    assert not at.exception, [e.value for e in at.exception]
    run = at.session_state["run"]
    assert run is not first and run.cfg.seed == 10 and run.status == "done", (run.cfg.seed, run.status)
    assert run.cfg == RunConfig(**at.session_state["cfg_values"])
    assert not any("settings have changed" in c.value for c in at.caption)
    at.number_input(key=wkey("seed", at.session_state)).set_value(9).run()  # computed before: replayed
    assert at.session_state["run"].cfg.seed == 9 and at.session_state["run_role"] == "replayed"
    # bad settings: their error, and the run shown stays the last valid one's
    at.number_input(key=wkey("n_neighbors", at.session_state)).set_value(10_000).run()
    assert not at.exception and _run_button(at).disabled is True
    assert at.session_state["run"].cfg.seed == 9 and at.session_state["run"].cfg.n_neighbors != 10_000


def test_the_expected_cost_is_said_before_a_run_and_gives_way_to_its_status():
    """Issue 38: "Expected for these settings…" says a run's status replaces it, and it stayed after the run."""
    at = _app()
    _small(at)
    assert any(c.value.startswith("Expected for these settings") for c in at.caption)
    _run_button(at).click().run()
    assert at.session_state["run"].status == "done"
    assert not any(c.value.startswith("Expected for these settings") for c in at.caption)


@pytest.mark.parametrize("name", list(PRESETS))
def test_preset_fills_the_controls(name):
    at = _app()
    at.button_group(key="preset_pick").set_value(name).run()
    assert not at.exception
    want = PRESETS[name]
    for f in NUMBER_FIELDS:
        if f in ("rho_low", "rho_high") and want.noise != "range":
            continue  # a noise family: no range controls on the page
        assert at.number_input(key=wkey(f, at.session_state)).value == getattr(want, f), f
    assert at.multiselect(key=wkey("models", at.session_state)).value == want.models
    assert at.radio(key=wkey("noise", at.session_state)).value == want.noise
    assert RunConfig(**at.session_state["cfg_values"]) == want
    assert at.query_params == {k: v for k, v in want.to_query_params().items()}
    # every setting the preset sets is on a control of the page (none hidden)
    keys = {w.key for kind in (at.number_input, at.selectbox, at.radio, at.multiselect, at.checkbox) for w in kind}
    for field in want.to_query_params():
        if field == "schedule":
            assert _schedule_text_shown(at) == want.schedule
        else:
            assert wkey(field, at.session_state) in keys, field
    assert at.selectbox(key=wkey("decision", at.session_state)).value == want.decision


def test_url_round_trip_in():
    cfg = RunConfig(chunk_size=100, n_instances=1200, beta=0.3, gamma=2**-6, delta=0.2, schedule="growth@600",
                    models=["ELM-I", "ELM (plain)"], references=False, noise="none", seed=7)
    at = _app(cfg.to_query_params())
    assert at.number_input(key=wkey("chunk_size", at.session_state)).value == 100
    assert at.number_input(key=wkey("n_instances", at.session_state)).value == 1200
    assert at.number_input(key=wkey("beta", at.session_state)).value == 0.3
    assert at.number_input(key=wkey("gamma", at.session_state)).value == 2**-6
    assert at.number_input(key=wkey("seed", at.session_state)).value == 7
    assert at.multiselect(key=wkey("models", at.session_state)).value == ["ELM-I", "ELM (plain)"]
    assert at.checkbox(key=wkey("references", at.session_state)).value is False
    assert at.radio(key=wkey("noise", at.session_state)).value == "none"
    assert RunConfig(**at.session_state["cfg_values"]) == cfg
    assert at.query_params == cfg.to_query_params()  # nothing lost on the way back out


def test_url_round_trip_out():
    at = _app()
    assert at.query_params == {}
    at.number_input(key=wkey("beta", at.session_state)).set_value(0.3)
    at.multiselect(key=wkey("models", at.session_state)).set_value(["ELM-II"])
    at.run()
    assert at.query_params["beta"] == "0.3"
    assert json.loads(at.query_params["models"]) == ["ELM-II"]
    back = RunConfig.from_query_params(at.query_params)
    assert back.beta == 0.3 and back.models == ["ELM-II"]


@pytest.mark.parametrize(
    "query, message",
    [
        ({"chunk_size": "abc"}, "chunk_size='abc' (chunk size: cannot read it; the default is used)"),
        ({"models": '["bogus", "ELM-I"]'}, "model 'bogus' (unknown model(s): bogus; dropped)"),
        ({"models": '["bogus"]'}, "model 'bogus' (unknown model(s): bogus; dropped; the default ['ELM-O', 'ELM-I', "
                                  "'ELM-II'] is used)"),
        ({"models": "[]"}, "choose at least one model"),
        ({"noise": "bogus"}, "noise 'bogus' (noise must be 'none', 'range', 'table' or a noise family (paper, missing, mixed); the default 'range' is used)"),
        ({"dataset": "nosuch"}, "dataset (unknown dataset 'nosuch': choose one of the listed datasets"),
        ({"chunk_size": "null"}, "empty: type a number"),  # the box is shown empty, the message under it
    ],
)
def test_broken_link_is_an_inline_error(query, message):
    at = _app(query)  # never an exception
    assert any(message in e for e in _errors(at)), _errors(at)
    if "chunk_size" in query and query["chunk_size"] == "abc":
        assert at.number_input(key=wkey("chunk_size", at.session_state)).value == RunConfig().chunk_size
    if "models" in query:  # a link whose every model is unknown gets the defaults; an empty list waits for one
        expected = {'["bogus", "ELM-I"]': ["ELM-I"], '["bogus"]': list(RunConfig().models), "[]": []}
        assert at.multiselect(key=wkey("models", at.session_state)).value == expected[query["models"]]
        assert at.button(key="run_button").disabled is (query["models"] == "[]")
    if "dataset" in query:  # refused by the resolver: the synthetic generator is used
        assert at.selectbox(key=wkey("dataset", at.session_state)).value == "synthetic"


def test_short_run_completes_with_summary_and_downloads():
    at = _app()
    _small(at)
    at.number_input(key=wkey("n_neighbors", at.session_state)).set_value(5)
    at.run()
    _run_button(at).click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not _errors(at)
    summary = _summary(at)
    variants = summary["variant"].tolist()
    assert variants == ["ELM-O", "ELM-I", "ELM-II", "all-negative", "noisy-prior"]
    assert {"Hamming loss", "Micro-F1", "Average precision", "GM"} <= set(summary.columns)
    assert summary["Hamming loss"].between(0, 1).all()
    # the seconds of the variants that share a chunk's work say so (seen read as "ELM-I is 200x faster")
    assert any("counted in the time of the first variant listed that needs it (here ELM-O)" in _plain(c.value)
               for c in at.caption)
    labels = {b.label for b in at.get("download_button")}
    assert {"Per-chunk CSV", "Summary JSON", "HTML report"} <= labels
    run = at.session_state["run"]
    assert run.status == "done" and len(run.chunks) == 3
    timings = at.session_state["timings"]
    # one redraw per chunk at most: chunks that arrive during a redraw are drawn together by the next one
    assert 1 <= len(timings["update_ms"]) <= 3 and timings["first_plot_s"] > 0
    assert any(c.value.startswith("done · chunk 3/3") for c in at.caption)
    assert _run_button(at).disabled is False and at.button(key="stop_button").disabled is True


def _tiny_arff(label_prefix="<b>l"):
    rng = np.random.default_rng(0)
    lines = ["@relation tiny", *[f"@attribute x{j} numeric" for j in range(3)],
             *[f"@attribute {label_prefix}{j}</b> {{0,1}}" for j in range(3)], "@data"]
    for _ in range(300):
        x = rng.normal(size=3)
        lines.append(",".join(f"{v:.4f}" for v in x) + "," + ",".join(str(int(v > 0)) for v in x))
    xml = ('<?xml version="1.0"?><labels xmlns="http://mulan.sourceforge.net/labels">'
           + "".join(f'<label name="&lt;b&gt;l{j}&lt;/b&gt;"></label>' for j in range(3)) + "</labels>")
    return "\n".join(lines).encode(), xml.encode()


def test_upload_broken_and_good_files():
    at = _app()
    at.selectbox(key=wkey("dataset", at.session_state)).set_value("upload").run()
    assert any("upload an ARFF file" in e for e in _errors(at))
    assert _run_button(at).disabled is True
    at.file_uploader(key="w_upload_arff").upload("broken.arff", b"this is not an arff file")
    at.run()
    assert not at.exception
    assert any("malformed ARFF" in e for e in _errors(at)), _errors(at)
    assert _run_button(at).disabled is True

    arff, xml = _tiny_arff()
    at.file_uploader(key="w_upload_arff").upload("<i>tiny</i>.arff", arff)
    at.file_uploader(key="w_upload_xml").upload("tiny.xml", xml)
    at.number_input(key=wkey("chunk_size", at.session_state)).set_value(100)
    at.number_input(key=wkey("n_neighbors", at.session_state)).set_value(5)
    at.run()
    assert not _errors(at), _errors(at)
    # The user's file name is shown verbatim as plain text, never as Markdown / HTML.
    assert any(t.value.startswith("<i>tiny</i>: 300 instances") for t in at.text)
    assert at.query_params.get("dataset") == "upload"
    _run_button(at).click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["run"].status == "done"
    assert _summary(at)["variant"].tolist()[0] == "ELM-O"
    # the run's caption names the file (no setting does: dataset=upload)
    caption = next(_plain(c.value) for c in at.caption if "This run:" in c.value)
    assert "(the uploaded file <i>tiny</i>" in caption, caption
    assert "settings have changed" not in caption
    at.button(key="pin_button").click().run()  # pinned: the caption says the link cannot carry the file, only that
    pinned = next(_plain(c.value) for c in at.caption if c.value.startswith("Pinned baseline"))
    assert "it ran on an uploaded file, which cannot travel in a link" in pinned and "re-run" not in pinned, pinned
    # another file under the same settings: the run shown is not of it (no setting names the file)
    # another file under the same settings: a new run of it (the page is live: Run was pressed), though no
    # setting names the file
    before = at.session_state["run"]
    at.file_uploader(key="w_upload_arff").upload("<i>tiny</i>.arff", arff.replace(b"0.5", b"0.75", 1))
    at.run()
    assert at.session_state["run"] is not before and at.session_state["run"].status == "done"
    caption = next(_plain(c.value) for c in at.caption if "This run:" in c.value)
    assert "The settings have changed since this run" not in caption, caption


def test_a_replayed_upload_run_never_shows_another_visitors_file_name():
    """The same bytes uploaded under two names are two runs: the second visitor's caption, downloads and report name
    their own file (a replay had kept the first uploader's name); the same name and bytes are replayed."""
    from dashboard.data import run_hub

    run_hub.clear()
    arff, xml = _tiny_arff()

    def visit(name):
        at = _app()
        at.selectbox(key=wkey("dataset", at.session_state)).set_value("upload").run()
        at.file_uploader(key="w_upload_arff").upload(f"{name}.arff", arff)
        at.file_uploader(key="w_upload_xml").upload("tiny.xml", xml)
        at.number_input(key=wkey("chunk_size", at.session_state)).set_value(100)
        at.number_input(key=wkey("n_neighbors", at.session_state)).set_value(5)
        at.run()
        _run_button(at).click().run()
        assert not at.exception and at.session_state["run"].status == "done"
        caption = next(_plain(c.value) for c in at.caption if "This run:" in c.value)
        return at, caption

    _, first = visit("alice_private")
    assert "(the uploaded file alice_private)" in first and "replayed" not in first, first
    bob, second = visit("bob")
    assert "(the uploaded file bob)" in second and "alice" not in second and "replayed" not in second, second
    assert bob.session_state["run"].stream_name == "bob"
    _, third = visit("bob")
    assert "replayed" in third and "(the uploaded file bob)" in third, third


def test_the_compare_table_names_the_file_of_each_upload_run():
    """Two runs on two uploaded files: the compare table's dataset column names each (both read "upload" before,
    so no column told them apart)."""
    arff, xml = _tiny_arff()
    at = _app()
    at.selectbox(key=wkey("dataset", at.session_state)).set_value("upload").run()
    at.number_input(key=wkey("chunk_size", at.session_state)).set_value(100)
    at.number_input(key=wkey("n_neighbors", at.session_state)).set_value(5)
    for name, body in (("first", arff), ("second", arff.replace(b"0.5", b"0.75", 1))):
        at.file_uploader(key="w_upload_arff").upload(f"{name}.arff", body)
        at.file_uploader(key="w_upload_xml").upload("tiny.xml", xml)
        at.run()
        _run_button(at).click().run()
        assert not at.exception and at.session_state["run"].status == "done"
    df = next(t.value for t in at.table if "model" in t.value.columns)
    assert "Dataset" in df.columns, df.columns
    assert set(df["Dataset"]) == {"upload: first", "upload: second"}, df["Dataset"].tolist()
    columns = list(df.columns)  # the scores before the settings (a projector's screen shows the scores first)
    assert columns.index("average precision") < columns.index("Dataset"), columns


def test_html_report_is_offline_and_escaped():
    from dashboard import report
    from dashboard.panels import PANELS, PanelData, by_key, heading
    from ncld_core.eval.runner import RunResult

    cfg = RunConfig(n_instances=600, chunk_size=200, n_features=5, n_labels=4, n_neighbors=5,
                    schedule="growth@300", models=["ELM-I"])
    stream = cfg.build_stream()
    stream = type(stream)(**{**stream.__dict__, "name": "<script>alert(1)</script>"})
    result = RunResult(list(cfg.runner().iter_run(stream)), stream, cfg.chunk_size, config=cfg.to_dict())
    drawn = PanelData(result.chunks, result.models, result.change_points, cfg.chunk_size, 3,
                      rho_pos=stream.rho_pos, rho_neg=stream.rho_neg)
    figs = report.run_figures(drawn)
    card = heading(by_key("cardinality"), drawn)
    assert card in figs and "95 % interval" in card  # the stream's rates are given: a confidence interval
    # the report's headings are the page's: one per panel with a figure (no variant estimates its rates here)
    assert list(figs) == [heading(p, drawn) for p in PANELS if p.figure is not None and p.key != "rates"]
    page = report.html_report(f"run on {stream.name}", cfg.to_dict(), figs, report.summary_table(result),
                              tables=report.run_tables(drawn), figure_notes=report.run_notes(drawn))
    assert "Drift detection per detector" in page and F.detector_label(cfg.detector) in page
    assert "the 95 % interval (mean width" in page
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # nothing is fetched: no external script, stylesheet, image or frame (plotly.js itself is inlined)
    assert not re.search(r"<(script|link|img|iframe)\b[^>]*\b(src|href)\s*=\s*[\"']?(https?:)?//", page, re.I)
    assert "<script src=" not in page
    assert page.count("Plotly.newPlot") == 4
    assert len(page) > 1_000_000  # plotly.js inlined
    csv = report.records_csv(result)
    assert csv.splitlines()[0].startswith("chunk,start,stop,model")
    doc = json.loads(report.summary_json(result))
    assert doc["change_points"] == [{"position": 300, "kind": "growth"}]
    assert "ELM-I" in doc["summary"]


def test_sweep_page_computes_a_heat_map():
    at = _app()
    _small(at)
    at.number_input(key=wkey("n_neighbors", at.session_state)).set_value(5)
    at.run()
    at.switch_page("views/sweep.py").run()
    assert not at.exception, [e.value for e in at.exception]
    # the explanation is drawn at once: opening a lazy one would rerun the page and end a sweep under way
    assert len(at.expander) == 1 and at.expander[0].key is None and at.latex
    at.select_slider(key="sweep_beta_step").set_value(0.2)
    at.multiselect(key="sweep_gammas").set_value([0.0, 2**-6])
    at.run()
    at.button(key="sweep_go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    df = at.session_state["sweep"]["df"]
    # beta 0.05..0.95 step 0.2 (5) plus the current 0.18; gamma {0, 2^-6} plus the current 0.005
    assert len(df) == 6 * 3
    assert {"beta", "gamma", "gm"} <= set(df.columns)
    assert df["gm"].between(0, 1).all()
    assert any("best GM" == m.label for m in at.metric)
    # the estimate is a range; the sweep computed for this page is measured against it, for the next estimates
    caption = next(c.value for c in at.caption if "grid points on the sidebar's stream" in c.value)
    assert re.search(r"Roughly \d+ s to \d+ s on this server: [\d.]+ runs of ELM-\w+ alone", caption), caption
    from dashboard.data import sweep_calibration
    assert sweep_calibration().n_runs >= 1
    # "Use the best point": the sidebar takes it, and the page's current setting follows (it stayed at the
    # computed one, with the button still offered)
    best = df.loc[df["gm"].idxmax()]
    at.button(key="sweep_use_best").click().run()
    assert (at.session_state["ctx"].cfg.beta, at.session_state["ctx"].cfg.gamma) == (best["beta"], best["gamma"])
    current = next(m for m in at.metric if m.label == "GM at the current setting")
    assert current.value == f"{best['gm']:.4f}" and "β=" in current.help
    assert not [b for b in at.button if b.key == "sweep_use_best"]
    assert any(c.value.startswith("The sidebar uses the best point") for c in at.caption)
    # the sidebar's point moved onto the grid: the sweep is not stale (its old point is no longer added)
    assert not any("settings changed since this sweep" in i.value for i in at.info), [i.value for i in at.info]
    # a point off the grid is: the sweep has no number for it
    at.number_input(key=wkey("beta", at.session_state)).set_value(0.42).run()
    assert any("settings changed since this sweep" in i.value for i in at.info)


def test_run_pressed_with_a_control_changed_runs_the_changed_settings():
    """A click on Run that arrives with a control's new value (its rerun not yet over, as under load) runs the new
    value: the run starts once the sidebar has read the controls, not from the previous script run's settings."""
    at = _app()
    _small(at)
    at.number_input(key=wkey("n_neighbors", at.session_state)).set_value(5)
    at.run()
    at.number_input(key=wkey("seed", at.session_state)).set_value(7)
    _run_button(at).click().run()  # the new seed and the click in one script run
    assert not at.exception, [e.value for e in at.exception]
    run = at.session_state["run"]
    assert run.cfg.seed == 7 and run.cfg == RunConfig(**at.session_state["cfg_values"]), run.cfg


def test_model_controls_do_not_rebuild_the_stream(monkeypatch):
    """Streams (and the datasets under them) are cached by their own fields only."""
    calls = []
    original = StreamSpec.build_stream

    def counting(self, dataset=None):
        if self.shuffle_seed == 424242:  # this test's stream (the default one is cached or not, by test order)
            calls.append(self.shuffle_seed)
        return original(self, dataset=dataset)

    monkeypatch.setattr(StreamSpec, "build_stream", counting)
    at = _uncached_small_app(424242)
    _run_button(at).click().run()
    assert calls == [424242]
    at.number_input(key=wkey("beta", at.session_state)).set_value(0.5)
    at.number_input(key=wkey("delta", at.session_state)).set_value(0.3)
    at.run()
    _run_button(at).click().run()
    assert not at.exception
    assert at.session_state["run"].cfg.beta == 0.5 and at.session_state["run"].status == "done"
    assert calls == [424242]  # the second run reused the cached stream


def test_a_failing_stream_build_is_an_inline_error():
    # 3 labels cannot hold the multi-label regime (cardinality 3) of a drift schedule
    cfg = RunConfig(n_labels=3, n_instances=600, chunk_size=200, n_neighbors=5, schedule="growth@300")
    at = _app(cfg.to_query_params())
    assert _run_button(at).disabled is True  # RunConfig.errors knows the rule: shown before Run
    assert not at.exception, [e.value for e in at.exception]
    assert any("cardinality" in e for e in _errors(at)), _errors(at)


def test_baselines_run_side_by_side():
    cfg = RunConfig(n_instances=600, chunk_size=200, n_features=5, n_labels=4, n_neighbors=5,
                    models=["ELM-II", "OSML-ELM", "PAML-I"], references=False)
    at = _app(cfg.to_query_params())
    assert at.multiselect(key=wkey("models", at.session_state)).value == ["ELM-II", "OSML-ELM", "PAML-I"]
    assert {"OSML-ELM (baseline)", "PAML-I (baseline)"} <= set(at.multiselect(key=wkey("models", at.session_state)).options)
    _run_button(at).click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert _summary(at)["variant"].tolist() == ["ELM-II", "OSML-ELM", "PAML-I"]


def test_figures_are_valid_plotly():
    """The figures skip plotly's validation for speed: validate them here once."""
    import plotly.graph_objects as go

    from dashboard import figures as F
    from ncld_core.eval.sweep import sweep

    cfg = RunConfig(n_instances=800, chunk_size=200, n_features=5, n_labels=4, n_neighbors=5,
                    schedule="growth@400, shift@600", delta=0.5, models=["ELM-O", "ELM-I", "OSML-ELM"],
                    monitors=[OTHER])
    stream = cfg.build_stream()
    chunks = list(cfg.runner().iter_run(stream))
    models = list(chunks[0].seconds)
    cps = [(c.position, c.kind) for c in stream.change_points]
    figs = [make(chunks, models, cps, 200, 4) for make in (F.metrics_figure, F.cardinality_figure,
                                                           F.detector_figure, F.timeline_figure)]
    figs.append(F.cardinality_figure(chunks, models, cps, 200, 4, show_paper=True))
    figs.append(F.schedule_figure(cps, 800))
    figs.append(F.schedule_figure([(None, "growth")], 800))
    figs.append(F.schedule_figure([(300, "growth"), (500, "shift")], 800))
    df = sweep(cfg, [0.2, 0.6], [0.0, 2**-6], stream=stream, model="ELM-I")
    figs.append(F.sweep_figure(df, chosen=(0.2, 0.0), best=df.iloc[0].to_dict()))
    for fig in figs:
        go.Figure(fig.to_dict())  # raises on any invalid property
    # (a): each subplot title is two short lines (three subplots share a chart as narrow as ~490 px)
    titles = [a["text"] for a in figs[0].to_dict()["layout"]["annotations"] if a.get("yanchor") == "bottom"]
    assert len(titles) == 3
    for t in titles:
        lines = [re.sub(r"<[^>]+>", "", line) for line in t.split("<br>")]
        assert len(lines) == 2 and max(map(len, lines)) <= 18, lines
    # (c): one labelled tick per decade, no minor "2" / "5" labels; the threshold named in the legend
    y = figs[2].to_dict()["layout"]["yaxis"]
    assert y["type"] == "log" and y["tickvals"] == [0.01, 0.1, 1, 10, 100, 1000, 10000]
    assert y["ticktext"][1:4] == ["0.1", "1", "10"] and not {"2", "5"} & set(y["ticktext"])
    assert F.THRESHOLD_NAME in [t.name for t in figs[2].data]
    # (b), (c): the change labels sit above the plot area, not on the data
    for fig in figs[1:3]:
        for a in fig.to_dict()["layout"]["annotations"]:
            assert a["yref"] == "paper" and a["y"] == 1 and a["yanchor"] == "bottom", a
    # (d): the x title is short (the regimes are explained in the legend)
    tl = figs[3].to_dict()
    assert tl["layout"]["xaxis"]["title"]["text"] == "chunk"
    assert {F.REGIME_NAMES["single"], F.REGIME_NAMES["multi"]} <= set(_names(tl))
    table = F.detection_table(chunks, models, cps, 200)
    # one row per detector (ELM-O and ELM-I record the same firings; the baseline has no detector)
    assert table["detector"].tolist() == [F.detector_label(cfg.detector), F.detector_label(OTHER)]
    assert table["role"].tolist() == ["acting", "compared only"]
    assert list(table.columns) == F.DETECTION_COLUMNS
    assert F.gamma_label(2**-6) == "2⁻⁶" and F.gamma_label(0) == "0" and F.gamma_label(0.005) == "0.005"


def test_run_without_rates_shows_estimates_against_truth():
    at = _app()
    _small(at)
    at.number_input(key=wkey("n_neighbors", at.session_state)).set_value(5)
    at.selectbox(key=wkey("model_rates", at.session_state)).set_value("estimate")
    at.run()
    _run_button(at).click().run()
    assert not at.exception, [e.value for e in at.exception]
    run = at.session_state["run"]
    assert run.status == "done" and run.cfg.model_rates == "estimate"
    assert len(run.chunks[-1].diagnostics["ELM-O"].rho_neg_est) == run.stream.n_labels
    tables = [d.value for d in at.dataframe if "rho_neg estimated" in d.value.columns]
    assert tables and {"rho_neg true", "|error| rho_neg"} <= set(tables[0].columns)
    assert len(tables[0]) == run.stream.n_labels
    # known rates (the default): the panel says how to switch, no estimates
    at2 = _app()
    _small(at2)
    at2.number_input(key=wkey("n_neighbors", at2.session_state)).set_value(5)
    at2.run()
    _run_button(at2).click().run()
    assert any("*rates estimated*" in c.value for c in at2.caption)


def test_detector_controls_feed_the_run_and_the_detection_table():
    at = _app()
    _small(at)
    at.number_input(key=wkey("n_neighbors", at.session_state)).set_value(5)
    at.multiselect(key=wkey("monitors", at.session_state)).set_value([OTHER])
    at.run()
    assert json.loads(at.query_params["monitors"]) == [OTHER]  # the link carries it
    assert RunConfig.from_query_params(at.query_params).monitors == [OTHER]
    _run_button(at).click().run()
    assert not at.exception, [e.value for e in at.exception]
    run = at.session_state["run"]
    assert run.status == "done" and run.cfg.monitors == [OTHER]
    tables = [t.value for t in at.table if "detector" in getattr(t.value, "columns", [])]
    assert tables, "no detection table"
    table = tables[0]
    assert table["detector"].tolist() == [F.detector_label(RunConfig().detector), F.detector_label(OTHER)]
    assert table["role"].tolist() == ["acting", "compared only"]
    assert {"detected", "within 1 chunk", "missed", "false alarms", "mean delay (chunks)"} <= set(table.columns)
    # panel (c): one line per detector, the threshold at 1 on a log axis
    fig = drawn_figure(at, "threshold")
    names = _names(fig)
    # one line per detector, of the acting learner (ELM-O) by default
    assert at.session_state["focus_choice"] == "ELM-O"
    assert F.detector_label(OTHER) in names and F.detector_label(RunConfig().detector) + " (acting)" in names
    assert fig["layout"]["yaxis"]["type"] == "log"
    # every variant: the three variants' identical records are drawn once, the legend naming them all
    at.selectbox(key="focus_variant").set_value("all").run()
    names = _names(drawn_figure(at, "threshold"))
    assert F.detector_label(OTHER) + " · ELM-O = ELM-I = ELM-II" in names
    assert F.detector_label(RunConfig().detector) + " (acting) · ELM-O = ELM-I = ELM-II" in names
    assert any(sh.get("y0") == 1 and sh.get("y1") == 1 for sh in fig["layout"]["shapes"])
    # choosing the compared detector as the acting one removes it from the comparison
    at.selectbox(key=wkey("detector", at.session_state)).set_value(OTHER).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.multiselect(key=wkey("monitors", at.session_state)).value == []
    assert at.query_params["detector"] == OTHER and "monitors" not in at.query_params


def test_cardinality_panel_draws_the_band_and_on_request_the_papers_estimate():
    at = _app()
    _small(at)
    at.number_input(key=wkey("n_neighbors", at.session_state)).set_value(5)
    at.run()
    _run_button(at).click().run()
    assert not at.exception, [e.value for e in at.exception]
    fig = drawn_figure(at, "cardinality")
    names = _names(fig)
    assert F.TRUTH_NAME in names and "oracle" in F.TRUTH_NAME
    band = [t for t in fig["data"] if t.get("fill") == "tonexty"]
    assert len(band) == 1 and "95 % interval" in band[0]["name"]
    assert len(band[0]["y"]) == 3 and all(v is not None for v in band[0]["y"])
    assert not any(n.startswith(F.PAPER_NAME) for n in names)
    notes = [c.value for c in at.caption if c.value.startswith("This run: the 95 % interval (mean width")]
    assert notes and "holds the true cardinality in" in notes[0], [c.value for c in at.caption]
    assert any("moment estimate with its 95 % interval" in m.value for m in at.markdown)
    at.checkbox(key="show_paper").check().run()
    assert not at.exception, [e.value for e in at.exception]
    names = _names(drawn_figure(at, "cardinality"))
    assert F.PAPER_NAME in names and "biased" in F.PAPER_NAME  # of the acting learner (ELM-O), by default
    at.selectbox(key="focus_variant").set_value("all").run()
    names = _names(drawn_figure(at, "cardinality"))
    # the three variants' identical estimates: one line, the legend naming them all
    assert F.PAPER_NAME + " · ELM-O = ELM-I = ELM-II" in names


def test_cardinality_band_says_what_it_is_when_the_rates_are_estimated():
    cfg = RunConfig(n_instances=600, chunk_size=200, n_features=5, n_labels=4, n_neighbors=5,
                    model_rates="estimate", models=["ELM-O", "ELM-I"], references=False)
    at = _app(cfg.to_query_params())
    # variants that estimate their own rates may part: one variant's records at a time by default
    assert at.selectbox(key="focus_variant").value == "ELM-O"
    _run_button(at).click().run()
    assert not at.exception, [e.value for e in at.exception]
    fig = drawn_figure(at, "cardinality")
    band = [t for t in fig["data"] if t.get("fill") == "tonexty"]
    assert [t["name"].replace("<br>", " ") for t in band] == ["identified set (rates from 0 to their bounds)"]
    # the point estimate is a plug-in of upper bounds: its legend says biased, never unbiased
    est = [t["name"].replace("<br>", " ") for t in fig["data"] if t.get("marker", {}).get("symbol") == F.ESTIMATE_SYMBOL]
    assert est == ["plug-in estimate (rates estimated: biased)"]
    assert "unbiased" not in " ".join(_names(fig))
    # the heading and the caption say what the band is, with its width on the run on screen
    assert any("identified set" in m.value for m in at.markdown if m.value.startswith("##### (b)"))
    assert not any("interval" in m.value for m in at.markdown if m.value.startswith("##### (b)"))
    run = at.session_state["run"]
    rows = [c.diagnostics["ELM-O"] for c in run.chunks]
    width = sum(d.lcard_high - d.lcard_low for d in rows) / len(rows)
    notes = [c.value for c in at.caption if "This run" in c.value
             and "identified set" in c.value]
    assert notes, [c.value for c in at.caption]
    note = notes[0]
    assert f"mean width is {width:.2f} labels per instance" in note, note
    assert "confidence interval" not in note and "biased" in note and "docs/flip-rates.md" in note
    assert "95 %" not in note and "unbiased" not in note
    inside = sum(d.lcard_low <= c.true_cardinality <= d.lcard_high for c, d in zip(run.chunks, rows))
    assert f"({inside} of {len(rows)} chunks)" in note
    err = sum(d.lcard_hat - c.true_cardinality for c, d in zip(run.chunks, rows)) / len(rows)
    assert f"mean error here {err:+.3f}" in note
    at.selectbox(key="focus_variant").set_value("all").run()
    assert not at.exception, [e.value for e in at.exception]
    band = [t for t in drawn_figure(at, "cardinality")["data"] if t.get("fill") == "tonexty"]
    assert band and all(t["name"].replace("<br>", " ").startswith("identified set (rates from 0 to their bounds)")
                        for t in band)


@pytest.mark.parametrize(
    "query, message",
    [
        ({"detector": "bogus"}, "detector 'bogus' is not known: choose one in the list"),
        ({"monitors": '["bogus"]'}, "monitor 'bogus' (monitors must be a list of detector names from"),
        ({"monitors": '"welch"'}, "monitors 'welch' (monitors must be a list of detector names from"),
    ],
)
def test_bad_detector_in_the_link_is_reported(query, message):
    at = _app(query)  # never an exception
    assert any(message in e for e in _errors(at)), _errors(at)
    if "detector" in query:
        # kept and shown as unknown (not silently replaced): Run waits until another is chosen
        assert at.selectbox(key=wkey("detector", at.session_state)).value == "bogus"
        assert _run_button(at).disabled is True
        at.selectbox(key=wkey("detector", at.session_state)).set_value(RunConfig().detector).run()
        assert not at.exception and not _errors(at), _errors(at)
        assert _run_button(at).disabled is False
    if "monitors" in query:  # no list of detectors can hold it: dropped, said so, and Run works
        assert at.multiselect(key=wkey("monitors", at.session_state)).value == []
        assert _run_button(at).disabled is False


def test_a_monitor_equal_to_the_acting_detector_is_dropped_and_said_so():
    acting = RunConfig().detector
    at = _app({"monitors": json.dumps([acting, OTHER])})
    said = f"monitor '{acting}' (monitors must not repeat the acting detector '{acting}'"
    assert any(said in e and "dropped" in e for e in _errors(at)), _errors(at)
    assert at.multiselect(key=wkey("monitors", at.session_state)).value == [OTHER]
    assert _run_button(at).disabled is False


def test_a_shift_in_the_schedule_is_drawn_as_its_own_change():
    cfg = RunConfig(n_instances=800, chunk_size=200, n_features=5, n_labels=6, n_neighbors=5,
                    schedule="growth@400, shift@600", models=["ELM-O"], references=False, monitors=[OTHER])
    at = _app(cfg.to_query_params())
    assert not _errors(at), _errors(at)
    assert _schedule_controls(at) == [("growth", 400), ("shift", 600)]
    _run_button(at).click().run()
    assert not at.exception, [e.value for e in at.exception]
    timeline = drawn_figure(at, "timeline")
    # two change lines (dotted for the shift), one regime switch (the shift keeps the regime)
    lines = [sh for sh in timeline["layout"]["shapes"] if sh["type"] == "line"]
    assert sorted(sh["x0"] for sh in lines) == [2, 3]
    assert [sh["line"]["dash"] for sh in sorted(lines, key=lambda sh: sh["x0"])] == ["dash", "dot"]
    regimes = [sh for sh in timeline["layout"]["shapes"] if sh["type"] == "rect"]
    assert len(regimes) == 2
    labels = [a["text"] for a in drawn_figure(at, "threshold")["layout"]["annotations"]]
    assert "shift" in labels and "growth" in labels


# --------------------------------------------------------------------------- the dashboard as a teaching instrument
def test_clean_vs_noisy_preset_says_what_the_noise_cost_from_the_run():
    from dashboard.teaching import PRESET_NOTES, noise_cost_text

    at = _app()
    at.button_group(key="preset_pick").set_value("clean vs noisy").run()
    notes = " ".join(c.value for c in at.caption)
    assert PRESET_NOTES["clean vs noisy"][:60] in notes
    assert "ELM-O (clean labels)" in at.multiselect(key=wkey("models", at.session_state)).value
    _run_button(at).click().run()
    assert not at.exception, [e.value for e in at.exception]
    run = at.session_state["run"]
    assert run.status == "done"
    cost = RunResult_of(run).noise_cost("average_precision")
    want = noise_cost_text(cost)
    assert any(c.value == want for c in at.caption), [c.value for c in at.caption]
    assert "recovers" in want and _summary(at)["variant"].tolist()[0] == "ELM-O (clean labels)"


def RunResult_of(run):
    from ncld_core.eval.runner import RunResult

    return RunResult(list(run.chunks), run.stream, run.chunk_size)


def test_a_schedule_the_datasets_pools_cannot_hold_is_flagged_before_run(data_dir):  # enron
    # enron has 196 single-label instances: growth@800 cannot start; said next to the schedule, before Run.
    cfg = RunConfig(dataset="enron", chunk_size=200, schedule="growth@800")
    at = _app(cfg.to_query_params())
    assert any("needs at least 800 single-label" in e and "196 single-label" in e for e in _errors(at)), _errors(at)
    assert _run_button(at).disabled is True and at.button(key="stop_button").disabled is True


def test_a_run_that_fails_to_start_leaves_run_usable(monkeypatch):
    seed = 515151  # a stream no other test has cached

    def failing(self, dataset=None):
        raise ValueError("schedule: the stream cannot be built (test)")

    monkeypatch.setattr(StreamSpec, "build_stream", failing)
    at = _uncached_small_app(seed)
    _run_button(at).click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("the stream cannot be built (test)" in e for e in _errors(at)), _errors(at)
    assert _run_button(at).disabled is False and at.button(key="stop_button").disabled is True
    # and next to the control the message names (the drift schedule), as a warning that does not block Run
    from dashboard.controls import start_failure

    assert start_failure(at.session_state["run"], RunConfig(**at.session_state["cfg_values"]))[0] == "schedule"
    assert any("The last run could not start: schedule: the stream cannot be built (test)" in _plain(w.value)
               for w in at.warning), [w.value for w in at.warning]


def _arff_with(mod):
    rng = np.random.default_rng(0)
    lines = ["@relation 'tiny: -C 3'", *[f"@attribute l{j} {{0,1}}" for j in range(3)],
             *[f"@attribute x{j} numeric" for j in range(3)], "@data"]
    for i in range(300):
        x = mod(i, rng.normal(size=3))
        lines.append(",".join(str(int(v > 0)) for v in x) + "," + ",".join(repr(float(v)) for v in x))
    return "\n".join(lines).encode()


@pytest.mark.parametrize("mod, message", [
    (lambda i, x: np.r_[x[:2], 1e308 if i == 150 else x[2]], "feature 'x2', data row 151: value 1e+308 is too large"),
    (lambda i, x: np.full(3, 5.0), "every feature is constant ('x0', 'x1', 'x2', rows 1 to 300)"),
])
def test_upload_with_values_that_break_the_solve_is_refused_at_load(mod, message):
    at = _app()
    at.selectbox(key=wkey("dataset", at.session_state)).set_value("upload").run()
    at.file_uploader(key="w_upload_arff").upload("tiny.arff", _arff_with(mod))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    errors = _errors(at)
    assert any(message in e for e in errors), errors
    assert not any("arff_bytes" in e for e in errors), errors  # the control's words, not the parameter's
    assert _run_button(at).disabled is True


def test_rate_table_shows_and_edits_the_rates_as_used():
    at = _app({"noise": "table"})
    editor = next(d for d in at.data_editor if d.key and d.key.startswith("w_rates_"))
    cols = json.loads(editor.proto.columns)
    for c in ("rho_pos", "rho_neg"):
        assert cols[c]["type_config"]["format"] == "%.4f" and cols[c]["type_config"]["step"] == 0.0001
    used = at.session_state["cfg_values"]["rho_pos"]
    assert editor.value["rho_pos"].tolist() == used
    assert any(round(v, 4) == v and round(v, 3) != v for v in used)  # a 4th decimal that a 3-decimal view would cut


def test_an_emptied_rate_cell_is_drawn_empty_again_when_the_table_is_rebuilt():
    """A cell emptied in the table is None in the settings; when the table is rebuilt from them (its widget dropped,
    e.g. after another page) it is shown empty and flagged, the other rates kept (round(None) broke the sidebar)."""
    at = _app({"noise": "table"})
    vals = dict(at.session_state["cfg_values"])
    vals["rho_pos"] = [None, *vals["rho_pos"][1:]]
    at.session_state["cfg_values"] = vals
    del at.session_state["rates_base"]
    at.run()
    assert not at.exception and not any("went wrong" in e for e in _errors(at)), _errors(at)
    shown = next(d for d in at.data_editor if d.key and d.key.startswith("w_rates_")).value["rho_pos"].tolist()
    assert np.isnan(shown[0]) and shown[1:] == vals["rho_pos"][1:]
    assert any("drop rate of label 0 must be in [0, 1)" in e for e in _errors(at)), _errors(at)


def test_rate_table_follows_the_dataset(data_dir):  # medical
    at = _app({"noise": "table"})
    at.selectbox(key=wkey("dataset", at.session_state)).set_value("medical").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not _errors(at), _errors(at)
    editor = next(d for d in at.data_editor if d.key and d.key.startswith("w_rates_"))
    assert len(editor.value) == 45 and len(at.session_state["cfg_values"]["rho_pos"]) == 45
    assert any("had 10 rows for the 45 labels" in _plain(i.value) for i in at.info)
    assert _run_button(at).disabled is False
    # the redraw bumped the controls' version: every control above the table is drawn afresh, and takes a value
    at.number_input(key=wkey("chunk_size", at.session_state)).set_value(123).run()
    assert at.session_state["cfg_values"]["chunk_size"] == 123


def test_a_new_label_count_redraws_the_table_and_the_controls_above_keep_taking_values():
    """Found in review: the table's redraw bumped the version in the middle of the sidebar, so the controls drawn
    above it kept keys of the old version and the next value typed into one was dropped."""
    at = _app({"noise": "table"})
    at.number_input(key=wkey("n_labels", at.session_state)).set_value(5).run()
    assert len(at.session_state["cfg_values"]["rho_pos"]) == 5
    at.number_input(key=wkey("chunk_size", at.session_state)).set_value(123).run()
    assert at.session_state["cfg_values"]["chunk_size"] == 123 and not at.exception


@pytest.mark.parametrize("query, message, kept", [
    ({"schedule": "garbage@@", "beta": "0.3"}, "schedule 'garbage@@' (cannot read it", {"beta": 0.3, "schedule": ""}),
    ({"chunk_size": "abc", "beta": "0.3"}, "chunk_size='abc' (chunk size: cannot read it", {"beta": 0.3}),
    ({"bogus": "1", "beta": "0.3"}, "bogus='1' (not a setting: ignored)", {"beta": 0.3}),
])
def test_every_link_value_that_cannot_be_applied_is_named(query, message, kept):
    at = _app(query)
    assert any(message in e for e in _errors(at)), _errors(at)
    for k, v in kept.items():  # the readable values are applied, not dropped with the bad one
        assert at.session_state["cfg_values"][k] == v


def test_link_rates_that_sum_past_one_are_reported_by_label():
    at = _app({"rho_low": "0.3", "rho_high": "0.6"})
    assert any("keep highest flip rate below 0.5" in e and "drop rate + add rate" in e for e in _errors(at)), _errors(at)
    assert at.number_input(key=wkey("rho_high", at.session_state)).value == 0.6  # shown, not replaced
    assert _run_button(at).disabled is True


def test_messages_use_the_controls_labels():
    at = _app({"n_hidden": "0", "shuffle_seed": "-1"})
    errors = _errors(at)
    assert any(e.startswith("hidden nodes must be in") for e in errors), errors
    assert any(e.startswith("stream seed must be in") for e in errors), errors
    warning = " ".join(_plain(w.value) for w in at.warning)
    assert "hidden nodes" in warning and "n_hidden" not in warning and "shuffle_seed" not in warning


def test_sweep_progress_counts_grid_points():
    from dashboard.data import sweep_progress_text

    assert sweep_progress_text(3, 12, 12, True) == "Sweeping β × γ: grid point 3 of 12 done"
    assert sweep_progress_text(5, 20, 18, False) == "Sweeping β × γ: 18 grid points together, 25 % of the stream"
    assert "chunk" not in sweep_progress_text(5, 20, 18, False)
    assert sweep_progress_text(5, 20, 18, False, 200.0).endswith("25 % of the stream · about 3 min left")
    assert "left" not in sweep_progress_text(20, 20, 18, False, 0.0)


def test_a_run_computed_in_a_thread_where_the_platform_has_no_fork_server(monkeypatch):
    """Platforms without a fork server compute the chunks in a thread: the run completes the same way."""
    from dashboard.data import run_hub

    monkeypatch.setenv("NCLD_DASHBOARD_THREADS", "1")
    run_hub.clear()  # computed here, not replayed from an earlier test's run of the same settings
    at = _app()
    _small(at)
    at.number_input(key=wkey("n_neighbors", at.session_state)).set_value(5)
    at.run()
    _run_button(at).click().run()
    assert not at.exception, [e.value for e in at.exception]
    run = at.session_state["run"]
    assert run.status == "done" and len(run.chunks) == 3 and run.mode == "thread"
    assert _summary(at)["variant"].tolist() == ["ELM-O", "ELM-I", "ELM-II", "all-negative", "noisy-prior"]


def test_plotly_js_is_served_from_the_app_folder_or_the_panels_fall_back(tmp_path, monkeypatch):
    from dashboard import live_chart

    static = tmp_path / "static"
    static.mkdir()
    (static / "plotly-0.0.1.min.js").write_text("an older plotly's copy")
    monkeypatch.setattr(live_chart, "STATIC", static)
    monkeypatch.setattr(live_chart, "SERVED_JS", static / live_chart.SERVED_JS.name)
    assert live_chart.ensure_served() is True
    assert (static / live_chart.SERVED_JS.name).read_bytes() == live_chart.PLOTLY_JS.read_bytes()
    assert sorted(p.name for p in static.iterdir()) == [live_chart.SERVED_JS.name]  # the old copy is gone
    # a folder that cannot be written (here: a file in its place): False, nothing left behind, no exception
    blocked = tmp_path / "not_a_folder"
    blocked.write_text("x")
    monkeypatch.setattr(live_chart, "STATIC", blocked)
    monkeypatch.setattr(live_chart, "SERVED_JS", blocked / live_chart.SERVED_JS.name)
    assert live_chart.ensure_served() is False
    assert blocked.read_text() == "x"


def test_a_rerun_through_the_start_of_a_run_does_not_leave_it_starting(monkeypatch):
    """A rerun raised while the stream is built (fastReruns: a click meanwhile) interrupts the script run
    beginning the run; the next script run begins it again instead of waiting for nobody."""
    from streamlit.runtime.scriptrunner_utils.exceptions import RerunException
    from streamlit.runtime.scriptrunner_utils.script_requests import RerunData

    original = StreamSpec.build_stream
    calls = []

    def interrupted_once(self, dataset=None):
        if self.shuffle_seed == 626262:
            calls.append(self.shuffle_seed)
            if len(calls) == 1:
                raise RerunException(RerunData())
        return original(self, dataset=dataset)

    monkeypatch.setattr(StreamSpec, "build_stream", interrupted_once)
    at = _uncached_small_app(626262)
    _run_button(at).click().run(timeout=120)
    for _ in range(20):  # each AppTest run is one script run: let the reruns happen
        if at.session_state["run"].status not in ("starting", "running"):
            break
        at.run(timeout=120)
    assert calls == [626262, 626262], calls  # begun again after the interruption
    assert at.session_state["run"].status == "done", at.session_state["run"].status
    assert not at.exception


def test_a_click_on_run_survives_a_rerun_that_interrupts_the_start(monkeypatch):
    """A rerun arriving while the click's script run starts the run (a control changed just after the click)
    interrupts it inside ``_start``; the next script run starts the run instead of dropping the click (the page
    would stay at 'Ready: press Run.')."""
    import streamlit as st

    from dashboard import data

    hub, calls = data.run_hub(), []

    class Interrupted:
        def start(self, *args, **kwargs):
            calls.append(1)
            if len(calls) == 1:
                st.rerun()  # what an arriving rerun request does at the script's next checkpoint
            return hub.start(*args, **kwargs)

        def __getattr__(self, name):
            return getattr(hub, name)

    at = _app()
    _small(at)
    monkeypatch.setattr(data, "run_hub", lambda: Interrupted())
    _run_button(at).click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(calls) == 2 and at.session_state["run"] is not None


def test_presentation_mode_keeps_the_records_chosen_for_b_to_d():
    """The choice is drawn as a widget on panel (b) only in presentation mode; panels (c) and (d) keep it."""
    at = _app()
    at.selectbox(key=wkey("model_rates", at.session_state)).set_value("estimate").run()
    at.selectbox(key="focus_variant").set_value("ELM-II").run()
    at.toggle(key="presenting").set_value(True).run()
    for panel in ("threshold", "timeline", "cardinality"):
        at.selectbox(key="present_panel").set_value(panel).run()
        assert not at.exception, [e.value for e in at.exception]
        assert at.session_state["focus_choice"] == "ELM-II", panel
    assert at.selectbox(key="focus_variant").value == "ELM-II"


@pytest.mark.parametrize("rates", ["known", "estimate"])
def test_presentation_mode_folds_a_panels_table_only_when_there_is_one(rates):
    """Panel (e)'s per-label table is folded in an expander on the projector; with every variant told the rates
    there is no table, and no empty expander either."""
    at = _app()
    _small(at)
    at.selectbox(key=wkey("model_rates", at.session_state)).set_value(rates).run()
    at.toggle(key="presenting").set_value(True).run()
    at.selectbox(key="present_panel").set_value("rates").run()
    _run_button(at).click().run()
    for _ in range(20):
        if at.session_state["run"].status not in ("starting", "running"):
            break
        at.run(timeout=120)
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["run"].status == "done"
    folded = [e for e in at.expander if e.label.startswith("Flip rates per label")]
    if rates == "known":
        assert folded == []
    else:
        assert len(folded) == 1 and len(folded[0].dataframe) == 1 and len(folded[0].dataframe[0].value) >= 2


def test_without_the_served_plotly_js_the_panels_are_plotly_charts(monkeypatch):
    """Where dashboard/static cannot be written (live_chart.SERVED False) every live panel, (e) included, is an
    st.plotly_chart of the run's last chunk, and no component instance is sent."""
    from dashboard import live_chart

    monkeypatch.setattr(live_chart, "SERVED", False)
    at = _app()
    _small(at)
    at.number_input(key=wkey("n_neighbors", at.session_state)).set_value(5)
    at.selectbox(key=wkey("model_rates", at.session_state)).set_value("estimate")
    at.run()
    _run_button(at).click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["run"].status == "done"
    charts = at.get("plotly_chart")
    assert len(charts) >= 5, len(charts)
    assert not carried(at)
    assert not [c for c in at.get("bidi_component") if c.proto.component_name == "ncld_live_chart"]


def test_the_page_says_which_source_instances_a_schedule_leaves_out(data_dir):
    # medical growth@300 uses 526 of its 978 instances: said on the page, not only in the CLI
    cfg = RunConfig(dataset="medical", chunk_size=100, schedule="growth@300", models=("ELM-O",), n_hidden=20)
    at = _app(cfg.to_query_params())
    _run_button(at).click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["run"].status == "done"
    infos = [_plain(i.value) for i in at.info]
    assert any("uses 526 of the 978 instances" in i and "leaves out 452 single-label ones" in i for i in infos), infos


# --------------------------------------------------------------------------- issue 24: uploads, (b)'s learner, the decision rule
def _arff_rows(rows):
    head = ["@relation 'tiny: -C -2'", "@attribute x0 numeric", "@attribute x1 numeric",
            "@attribute l0 {0,1}", "@attribute l1 {0,1}", "@data"]
    return "\n".join(head + rows).encode()


def test_an_upload_without_a_positive_label_is_refused_and_a_nan_is_named():
    at = _app()
    at.selectbox(key=wkey("dataset", at.session_state)).set_value("upload").run()
    rng = np.random.default_rng(0)
    at.file_uploader(key="w_upload_arff").upload(
        "empty.arff", _arff_rows([f"{a:.3f},{b:.3f},0,0" for a, b in rng.normal(size=(300, 2))]))
    at.run()
    assert not at.exception
    assert any("no positive label" in e for e in _errors(at)), _errors(at)
    assert _run_button(at).disabled is True  # no run, so no AP 1.0 presented as a result

    rows = [f"{a:.3f},{b:.3f},{int(a > 0)},0" for a, b in rng.normal(size=(300, 2))]
    at.file_uploader(key="w_upload_arff").upload("half.arff", _arff_rows(rows))
    at.run()
    assert any("never positive" in w.value and "'l1'" in w.value for w in at.warning), [w.value for w in at.warning]

    rows[3] = "0.5,NaN,1,0"
    at.file_uploader(key="w_upload_arff").upload("nan.arff", _arff_rows(rows))
    at.run()
    assert any("has NaN ('NaN') at data row 4" in e for e in _errors(at)), _errors(at)
    assert not any("missing value" in e for e in _errors(at))


def test_the_decision_rule_is_a_control_and_follows_the_link():
    at = _app({"decision": "paper"})
    assert at.selectbox(key=wkey("decision", at.session_state)).value == "paper"
    at.selectbox(key=wkey("decision", at.session_state)).set_value("bayes").run()
    assert at.query_params["decision"] == "bayes"
    assert RunConfig(**at.session_state["cfg_values"]).decision == "bayes"


def test_clean_vs_noisy_panel_b_speaks_of_the_acting_learner_not_the_oracle():
    at = _app()
    at.button_group(key="preset_pick").set_value("clean vs noisy").run()
    _run_button(at).click().run()
    assert not at.exception, [e.value for e in at.exception]
    texts = " ".join([m.value for m in at.markdown] + [c.value for c in at.caption])
    assert "rates 0 (= observed)" not in texts
    assert "(ELM-O (clean labels))" not in texts and "mean width 0.00" not in texts
    assert at.session_state["focus_choice"] == "ELM-O"
    fig = drawn_figure(at, "cardinality")
    estimates = [n for n in _names(fig) if "clean labels" in n]
    assert all("oracle" in n for n in estimates), estimates  # the oracle is drawn only where it says so


def test_a_lesson_link_opens_its_step_in_presentation_mode_and_steps_to_the_measured_sentence():
    from dashboard.teaching import LESSONS

    lesson = LESSONS["concept-growth"]
    at = _app({"lesson": "concept-growth", "step": "2"})
    assert at.toggle(key="presenting").value is True
    assert RunConfig(**at.session_state["cfg_values"]) == PRESETS["concept growth"]
    assert at.session_state["present_panel"] == lesson.step(2).panel
    text = " ".join(m.value for m in at.markdown)
    assert "step 2 of 4" in text and lesson.step(2).text in text
    assert at.query_params["lesson"] == "concept-growth" and at.query_params["step"] == "2"
    assert at.query_params["schedule"] == "growth@2500"  # the preset's settings travel with the lesson
    at.button(key="lesson_next").click().run()
    assert at.query_params["step"] == "3" and at.session_state["present_panel"] == "timeline"
    at.button(key="lesson_next").click().run()
    assert "Press **Run**" in " ".join(m.value for m in at.markdown)  # measured only on a run
    _run_button(at).click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["run"].status == "done"
    text = " ".join(m.value for m in at.markdown)
    assert "step 4 of 4" in text and "The acting detector fired in chunk 10" in text, text
    assert at.button(key="lesson_next").disabled is True


def test_a_lesson_names_the_change_where_the_links_settings_put_it():
    """A link that changes the lesson's chunk size (or moves its change): the written steps name the chunk the
    run's panels show (they said chunk 10 while panel (d) drew the change at chunk 25)."""
    at = _app({"lesson": "concept-growth", "step": "3", "chunk_size": "100"})
    text = " ".join(m.value for m in at.markdown)
    assert "does the acting detector fire at chunk 25, and nowhere else?" in text, text
    assert "chunk 10" not in text
    at = _app({"lesson": "label-shift", "step": "1", "schedule": "shift@3000"})
    text = " ".join(m.value for m in at.markdown)
    assert "In chunks of 500 instances, from instance 3000 (chunk 6) other labels are relevant" in text, text


def test_a_broken_lesson_link_is_named_and_opens_no_lesson():
    at = _app({"lesson": "nope", "step": "x"})
    assert any("lesson='nope'" in e for e in _errors(at)), _errors(at)
    assert "lesson" not in at.query_params


def test_the_sidebar_draws_the_schedule_as_svg_and_the_page_needs_no_plotly_before_run():
    """The schedule preview is inline SVG (dashboard/svg.py): the first page sends no st.plotly_chart, whose
    plotly.js the browser evaluated before drawing the Run button (the classroom test's page answers)."""
    cfg = PRESETS["concept growth"]
    at = open_app(cfg.to_query_params())
    assert not at.exception, [e.value for e in at.exception]
    previews = [m.value for m in at.markdown if m.value.startswith("<svg")]  # st.html would drop it (its sanitizer)
    assert len(previews) == 1 and f'aria-label="drift schedule: {cfg.schedule} on ' in previews[0], previews
    assert previews[0].count("<title>") == len([p for p in cfg.schedule.split(",") if p.strip()])
    assert not at.get("plotly_chart")


def test_a_second_session_replaying_a_run_draws_the_figures_the_first_drew():
    """A class on one run: the second session's replay takes each chunk's figures as the first session drew them
    (dashboard/live_chart.py: SharedDrawings), the same JSON, none made again; a session with other drawing
    options (the paper's estimate shown) gets its own."""
    from dashboard.live_chart import SHARED

    first = _uncached_small_app(seed=8811)
    _run_button(first).click().run()
    assert first.session_state["run"].status == "done"
    made = SHARED.made
    drawn_first = carried(first)
    second = _uncached_small_app(seed=8811)
    _run_button(second).click().run()
    assert second.session_state["run"].mode == "replay" and second.session_state["run"].status == "done"
    assert SHARED.made == made  # every chunk's figures were shared
    drawn_second = carried(second)
    assert drawn_first and drawn_second[-1]["figures"] == drawn_first[-1]["figures"]
    third = _uncached_small_app(seed=8811)
    third.checkbox(key="show_paper").check().run()
    _run_button(third).click().run()
    assert SHARED.made > made  # other options: drawn for this session


def test_a_preset_leaves_only_its_own_schedule_rows_in_the_session():
    """Each preset starts the schedule's rows afresh (a new version); the earlier versions' rows are dropped."""
    at = _app()
    for name in list(PRESETS)[:3]:
        at.button_group(key="preset_pick").set_value(name).run()
        assert _schedule_text_shown(at) == PRESETS[name].schedule
    kept = [k for k in at.session_state if k.startswith("schedule_rows_")]
    assert len(kept) == 1, kept


def test_the_sweep_page_says_its_place_in_the_servers_queue():
    from dashboard.data import sweep_waiting_text

    assert sweep_waiting_text(3, 2, 40).startswith("waiting: 3rd in line · the server computes 2 jobs")
    assert sweep_waiting_text(1, 1, 40).startswith("waiting: 1st in line · the server computes 1 job (")
    assert sweep_waiting_text(0, 2, 40) == "starting · building the stream for 40 grid points…"


def test_a_sweep_asked_again_by_another_visitor_is_replayed_not_recomputed():
    """The sweep is a job of the server's run hub: a second visitor asking for the same sweep gets it replayed
    (nothing computed), and the page says so."""
    from dashboard.data import run_hub

    run_hub.clear()
    pages = []
    for _ in range(2):
        at = _app()
        _small(at)
        at.run()
        at.switch_page("views/sweep.py").run()
        at.slider(key="sweep_beta_range").set_value((0.5, 0.9))
        at.select_slider(key="sweep_beta_step").set_value(0.2)
        at.multiselect(key="sweep_gammas").set_value([0.0])
        at.checkbox(key="sweep_include").uncheck()
        at.run()
        at.button(key="sweep_go").click().run()
        assert not at.exception, [e.value for e in at.exception]
        pages.append(at)
    first, second = (at.session_state["sweep"] for at in pages)
    assert second["df"].equals(first["df"]) and len(first["df"]) == 3
    assert run_hub().computations == 1
    assert first.get("role") is None
    assert second["role"] == "replayed: computed for an earlier visitor, nothing was recomputed"
    assert any(c.value.startswith("**replayed: computed for an earlier visitor") for c in pages[1].caption)
    assert pages[1].button(key="sweep_stop").disabled and not pages[1].button(key="sweep_go").disabled


def test_a_sweep_started_in_a_script_run_that_ends_before_the_page_keeps_it_is_started_again():
    """A rerun that interrupts the script between the hub's start and the session state: the click is not lost
    (the next script run starts the sweep again) and the first job, which no page shows, is given up (the session
    holds one job) rather than holding a slot until it is abandoned."""
    from dashboard import data

    data.run_hub.clear()
    at = _app()
    _small(at)
    at.switch_page("views/sweep.py").run()
    at.select_slider(key="sweep_beta_step").set_value(0.2)
    at.multiselect(key="sweep_gammas").set_value([0.0])
    at.run()
    seen = []
    real = data.start_sweep

    def start_and_lose(*args, **kwargs):  # the hub starts the sweep; the script run ends before the page keeps it
        import streamlit as st

        seen.append(real(*args, **kwargs)[0])
        if len(seen) == 1:
            st.stop()
        return seen[-1], "computing"

    try:
        data.start_sweep = start_and_lose
        at.button(key="sweep_go").click().run()
        assert "sweep_job" not in at.session_state and "sweep" not in at.session_state
        at.run()
    finally:
        data.start_sweep = real
    assert not at.exception, [e.value for e in at.exception]
    first, second = seen
    assert first.status == "stopped" and second.status == "done" and data.run_hub().computations == 2
    assert at.session_state["sweep"]["df"].equals(second.chunks[-1].table)
