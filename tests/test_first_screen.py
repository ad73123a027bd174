"""The Live run's first screen without a browser (issue 38 item 4; the browser measures it in
tests/test_dashboard_first_screen_browser.py): explanations open on demand (help, not captions), and panel (a)'s
legend takes one row for three models where the graph is wide."""

from __future__ import annotations

from dashboard import figures as F
from dashboard import live_page
from ncld_core.config import RunConfig
from tests.apptest import open_app


def _layout_for(fig, width: int) -> dict:
    """The legend layout the page draws for a graph ``width`` px wide (the widest laid out within it)."""
    return [lay for lay in fig.layout.meta["legends"] if lay["w"] <= width][-1]


def test_panel_a_legend_is_one_row_for_three_models_on_a_wide_graph():
    cfg = RunConfig(n_instances=600, chunk_size=200, n_features=5, n_labels=4, n_neighbors=5, models=["ELM-O"])
    runner = cfg.runner()
    fig = F.metrics_figure(list(runner.iter_run(cfg.build_stream())), runner.model_names)
    assert len([t for t in fig.data if t.showlegend]) == 3
    wide, narrow = _layout_for(fig, 820), _layout_for(fig, 460)
    assert wide["entrywidth"] == 1 / 3 and narrow["entrywidth"] == 1 / 2  # fewer columns where narrow, not one
    assert wide["height"] < narrow["height"]  # one legend row instead of two
    assert _layout_for(fig, 380)["entrywidth"] == 1  # the narrowest: one column, as before


def test_the_explanations_are_help_and_the_first_screen_keeps_numbers():
    at = open_app()
    captions = [c.value for c in at.caption]
    # the page's introduction is the Run button's help, the estimate's method its caption's help
    assert not any(c.startswith("Prequential test-then-train") for c in captions), captions
    assert at.button(key="run_button").help == live_page.RUN_HELP
    estimate = next(c for c in at.caption if c.value.startswith("Expected for these settings"))
    assert " — an estimate" not in estimate.value and estimate.proto.help.startswith("An estimate from the array shapes")
    assert not [m.value for m in at.markdown if m.value.startswith("## Live run")]  # the navigation names the page
    # before a run, the strip's place says what to press
    assert any("Press **Run**" in i.value for i in at.info)


def test_a_run_of_the_defaults_is_not_described_again():
    assert live_page.about_run(RunConfig(), same=True, upload=False) is None
    assert live_page.about_run(RunConfig(), same=False, upload=False) == "the default settings"  # a stale run is
    assert live_page.about_run(RunConfig(seed=4), same=True, upload=False).startswith("the defaults, except")
    assert live_page.about_run(RunConfig(), same=True, upload=True) == "the default settings"  # the file is named
