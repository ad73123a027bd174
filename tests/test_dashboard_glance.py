"""The Live run's one-glance strip (issue 38 item 4; dashboard/glance.py): its sentences for every case, and on the
page (AppTest) the numbers of the run's records, the models computed beside the run never drawn on the panels.
The numbers themselves are tested in the core: tests/test_glance.py."""

from __future__ import annotations

import numpy as np
import pytest

from dashboard.glance import run_strip, strip_text
from ncld_core.eval.glance import GLANCE_MODELS, ORACLE, Glance, glance
from tests.apptest import drawn_figure, open_app


# --------------------------------------------------------------------------- the strip's sentences
def _g(**kw):
    base = dict(chunks=8, scored=7, learner="ELM-O", oracle=0.7, ignoring=0.6, learner_score=0.65, planted=(4,),
                happened=(4,), found=(4,), detected=1, band_inside=7, band_chunks=8)
    return Glance(**(base | kw))


@pytest.mark.parametrize("kw, missing, says", [
    ({}, {}, ["**0.100** micro-F1 noise cost (oracle 0.700 − ignoring 0.600) · **50 %** won back by ELM-O",
              "Drift at chunk **4**, found at **4** · band held the truth in **7 of 8** chunks"]),
    (dict(oracle=None, ignoring=None), dict.fromkeys(GLANCE_MODELS, "past the memory budget"),
     ["Noise cost not computed: the clean-label oracle and the noise-ignoring twin not run (past the memory budget)"]),
    (dict(oracle=None, ignoring=None), dict.fromkeys(GLANCE_MODELS, "no label noise in this stream"),
     ["No label noise in this stream: nothing lost to it"]),
    (dict(ignoring=None), {}, ["Noise cost not computed: the noise-ignoring twin not in this run"]),
    (dict(scored=0, chunks=1), {}, ["Noise cost: from chunk 1 (chunk 0 only initialises)"]),
    (dict(ignoring=0.7), {}, ["**0.000** micro-F1 noise cost: the oracle (0.700) no better than ignoring the noise "
                              "(0.700) · ELM-O 0.650"]),
    (dict(ignoring=0.8), {}, ["**-0.100** micro-F1 noise cost: the oracle (0.700) no better than ignoring the noise"]),
    (dict(found=(), detected=0, missed=1), {}, ["Drift at chunk **4**, **not found**"]),
    (dict(found=(2, 4, 5, 6, 7), false_alarms=4), {}, ["found at **2, 4, 5, 6** … +1 (4 false alarms)"]),
    (dict(happened=(), found=()), {}, ["Drift planted at chunk **4**, not reached yet"]),
    (dict(planted=(), happened=(), found=()), {}, ["No drift planted, no alarm"]),
    (dict(planted=(), happened=(), found=(3,), false_alarms=1), {}, ["No drift planted; found at **3** (**1 false alarm**)"]),
    (dict(learner=None, learner_score=None, found=()), {}, ["no learner corrects it", "Drift at chunk **4**, no drift test"]),
    (dict(band_kind="identified set"), {}, ["band (identified set) held the truth in **7 of 8** chunks"]),
])
def test_the_strip_says_each_number_or_why_it_has_none(kw, missing, says):
    text = strip_text(_g(**kw), missing)
    assert text.count("  \n") == 1  # two lines
    for part in says:
        assert part in text, text


# --------------------------------------------------------------------------- the page
def test_the_pages_strip_shows_the_runs_numbers_and_draws_no_model_beside_it():
    at = open_app({"n_instances": "1200", "chunk_size": "200", "n_features": "6", "n_labels": "4",
                   "n_hidden": "30", "n_neighbors": "8", "schedule": "growth@600"})
    at.button(key="run_button").click().run()
    run = at.session_state["run"]
    assert run.status == "done" and run.beside_missing == {}
    strip = [m.value for m in at.markdown if "micro-F1 noise cost" in m.value]
    assert strip == [run_strip(run, run.chunks)], [m.value for m in at.markdown]
    g = glance(run.chunks, learner="ELM-O", change_positions=[600], chunk_size=200)
    assert f"**{g.cost:.3f}** micro-F1" in strip[0] and f"**{100 * g.won_back:.0f} %** won back by ELM-O" in strip[0]
    assert "Drift at chunk **3**" in strip[0] and f"**{g.band_inside} of 6** chunks" in strip[0]
    # the oracle and the noise-ignoring twin were computed, but panel (a) draws only the run's own models
    names = {t.get("name", "") for t in drawn_figure(at, "metrics")["data"]}
    assert not any(m in n for n in names for m in GLANCE_MODELS), names
    assert all(m not in run.models and m not in run.chunks[-1].cumulative for m in GLANCE_MODELS)
    assert np.isfinite(run.chunks[-1].beside[ORACLE]["micro_f1"])
