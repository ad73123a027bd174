"""dashboard.figures.fit_legend lays a legend out for every graph width from one read of the figure: plotly's
property reads, made once per width, were most of the server's work per redraw of the live panels."""

from __future__ import annotations

import copy

import plotly.graph_objects as go
import pytest

from dashboard import figures as F


class CountingFigure(go.Figure):
    """A figure that counts the reads of its x axes (one per legend layout on main before the change)."""

    reads = 0

    def select_xaxes(self, *args, **kwargs):
        type(self).reads += 1
        return super().select_xaxes(*args, **kwargs)


def test_a_legend_is_laid_out_for_every_width_from_one_read_of_the_figure():
    CountingFigure.reads = 0
    fig = CountingFigure(dict(data=[dict(type="scatter", y=[1, 2], name=f"series {i}") for i in range(6)],
                              layout=dict(height=300, margin=dict(t=40, b=40))))
    F.fit_legend(fig)
    assert len(fig.layout.meta["legends"]) == 1 + len(F.LEGEND_WIDTHS)  # a layout for each width
    assert CountingFigure.reads == 1


def test_the_layouts_follow_the_width_as_before():
    """Narrow graphs wrap long names and stack one column; wide ones keep them on a line, two columns."""
    long = "a long legend name · with the variants ELM-O, ELM-I"
    fig = go.Figure(dict(data=[dict(type="scatter", y=[1, 2], name=long), dict(type="scatter", y=[2, 1], name="b"),
                               dict(type="scatter", y=[0, 1], name="hidden", showlegend=False)],
                         layout=dict(height=300, margin=dict(t=40, b=40, l=50, r=20))))
    F.fit_legend(fig)
    narrow, wide = fig.layout.meta["legends"][0], fig.layout.meta["legends"][-1]
    assert set(narrow["names"]) == set(wide["names"]) == {"0", "1"}  # the hidden trace is not in the legend
    assert "<br>" in narrow["names"]["0"] and "<br>" not in wide["names"]["0"]
    assert (narrow["entrywidth"], wide["entrywidth"]) == (1.0, 0.5)
    assert narrow["height"] > wide["height"] and fig.data[0].name == narrow["names"]["0"]


def test_a_spec_is_laid_out_as_its_figure_is(run_figures):
    """The live builders lay their legend out on the figure's spec (plain dicts, no plotly property reads): the same
    figure as laying it out on the Figure, for every live panel's figure (laid out again from the same start)."""
    for name, fig in run_figures.items():
        plain = fig.to_plotly_json()
        larger = copy.deepcopy(plain)  # larger type (as presentation mode's), a titled x axis
        larger["layout"].update(font=dict(size=18), legend=dict(font=dict(size=16)))
        larger["layout"].setdefault("xaxis", {})["title"] = dict(text="chunk", font=dict(size=20))
        for start in (plain, larger):
            on_figure = F.figure_from_spec(copy.deepcopy(start))
            F.fit_legend(on_figure, columns=3)
            spec = copy.deepcopy(start)
            F.fit_legend(spec, columns=3)
            assert F.figure_from_spec(spec).to_plotly_json() == on_figure.to_plotly_json(), name
            assert spec["layout"]["meta"]["legends"] and spec["layout"]["legend"]["yref"] == "container", name


@pytest.fixture(scope="module")
def run_figures():
    from dashboard import panels
    from ncld_core.config import RunConfig

    cfg = RunConfig(n_instances=2400, chunk_size=200, n_features=5, n_labels=4, n_neighbors=5,
                    schedule="growth@1200", model_rates="estimate", trusted_fraction=0.05)
    stream = cfg.stream.build_stream()
    chunks = list(cfg.runner().iter_run(stream))
    models = list(cfg.models) + (["all-negative", "noisy-prior"] if cfg.references else [])
    data = panels.PanelData(chunks=chunks, models=models, chunk_size=cfg.chunk_size,
                            change_points=[(cp.position, cp.kind) for cp in stream.change_points],
                            n_chunks=stream.n_chunks(cfg.chunk_size), rho_pos=stream.rho_pos, rho_neg=stream.rho_neg,
                            default_rates="estimate", trusted_fraction=0.05)
    figs = panels.figures(data)
    assert {"metrics", "cardinality", "threshold", "timeline"} <= set(figs), set(figs)
    return figs
