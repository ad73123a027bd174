"""dashboard.figures.fit_legend lays a legend out for every graph width from one read of the figure: plotly's
property reads, made once per width, were most of the server's work per redraw of the live panels."""

from __future__ import annotations

import plotly.graph_objects as go

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
