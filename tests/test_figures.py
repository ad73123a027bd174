"""The live panels' explicit y ranges (``dashboard.figures.fix_y_ranges``): every value drawn is inside,
the ranges only grow as chunks arrive (so most updates are drawn as transitions), and the doctests."""

from __future__ import annotations

import dataclasses
import doctest
import math

import numpy as np
import plotly.graph_objects as go
import pytest

from dashboard import compare as C
from dashboard import figures as F
from dashboard.panels import PanelData
from ncld_core.config import RunConfig

SMALL = RunConfig(n_instances=2400, chunk_size=200, n_features=5, n_labels=4, n_neighbors=5, schedule="growth@1200")


@pytest.fixture(scope="module")
def run():
    stream = SMALL.stream.build_stream()
    chunks = list(SMALL.runner().iter_run(stream))
    models = list(SMALL.models) + (["all-negative", "noisy-prior"] if SMALL.references else [])
    cps = [(cp.position, cp.kind) for cp in stream.change_points]
    return chunks, models, cps, SMALL.chunk_size, stream.n_chunks(SMALL.chunk_size)


def test_figures_doctests():
    result = doctest.testmod(F)
    assert result.attempted >= 3 and result.failed == 0, result


def _inside(fig) -> list[str]:
    """Values drawn outside their axis' range (log axes in decades), as messages; [] when all are inside."""
    out = []
    for t in fig.data:
        axis = fig.layout["yaxis" + ((t.yaxis or "y")[1:])]
        for v in t.y or ():
            if v is None or isinstance(v, str):
                continue
            if axis.range is None:
                out.append(f"{t.name}: {v} on an axis without a range")
                continue
            lo, hi = axis.range
            w = math.log10(v) if axis.type == "log" else v
            if not lo <= w <= hi:
                out.append(f"{t.name}: {v} outside {axis.range}")
    return out


@pytest.mark.parametrize("seed", range(20))
def test_random_values_are_inside_and_padded(seed):
    rng = np.random.default_rng(seed)
    scale = 10.0 ** rng.integers(-4, 4)
    ys = list(rng.normal(rng.normal() * scale, scale, size=rng.integers(1, 30)))
    log = bool(seed % 2)
    if log:
        ys = [abs(y) + 1e-9 for y in ys]
    fig = go.Figure(dict(data=[dict(type="scatter", y=ys + [None])], layout=dict(yaxis=dict(type="log" if log else "linear"))))
    F.fix_y_ranges(fig)
    lo, hi = fig.layout.yaxis.range
    vals = [math.log10(y) for y in ys] if log else ys
    span = max(vals) - min(vals)
    assert lo <= min(vals) - F.Y_PAD * span * 0.999 and hi >= max(vals) + F.Y_PAD * span * 0.999, (lo, hi, vals)
    # widened to whole steps, but not by more than two of them on each side
    step = 0.5 if log else F.nice_step(hi - lo)
    assert min(vals) - lo <= 2 * step + F.Y_PAD * span and hi - max(vals) <= 2 * step + F.Y_PAD * span


def test_tozero_category_and_own_ranges_are_kept():
    fig = go.Figure(dict(
        data=[dict(type="scatter", y=[3.0, 4.0]), dict(type="scatter", y=["a", "b"], yaxis="y2"),
              dict(type="scatter", y=[5.0, 6.0], yaxis="y3")],
        layout=dict(yaxis=dict(rangemode="tozero"), yaxis2=dict(type="category"), yaxis3=dict(range=[0, 1]))))
    F.fix_y_ranges(fig)
    assert fig.layout.yaxis.range[0] == 0 and fig.layout.yaxis.range[1] >= 4.0
    assert fig.layout.yaxis2.range is None
    assert tuple(fig.layout.yaxis3.range) == (0, 1)


def test_a_shape_in_the_axis_units_is_inside():
    fig = go.Figure(dict(data=[dict(type="scatter", y=[0.02, 0.05])], layout=dict(
        yaxis=dict(type="log"), shapes=[dict(type="line", xref="paper", yref="y", x0=0, x1=1, y0=1, y1=1)])))
    F.fix_y_ranges(fig)
    assert fig.layout.yaxis.range[1] >= 0  # log10(1)


def test_every_panel_draws_inside_its_ranges_and_they_only_grow(run):
    chunks, models, cps, size, n = run
    makers = {
        "metrics": lambda ch: F.metrics_figure(ch, models, cps, size, n),
        "cardinality": lambda ch: F.cardinality_figure(ch, models, cps, size, n),
        "threshold": lambda ch: F.detector_figure(ch, models, cps, size, n),
    }
    for name, make in makers.items():
        before, moves = None, 0
        for k in range(1, len(chunks) + 1):
            fig = make(chunks[:k])
            F.fix_y_ranges(fig)
            assert not _inside(fig), (name, k, _inside(fig))
            axes = [a for a in fig.to_dict()["layout"] if a.startswith("yaxis")]
            ranges = {a: tuple(fig.layout[a].range) for a in axes if fig.layout[a].range is not None}
            if before is not None:
                for a, (lo, hi) in ranges.items():
                    if a not in before:  # the first values on this axis
                        continue
                    assert lo <= before[a][0] and hi >= before[a][1], (name, k, a, before[a], (lo, hi))
                moves += ranges != before
            before = ranges
        # the ranges settle: most chunks add points inside them (drawn as transitions)
        assert moves <= len(chunks) // 2, (name, moves, len(chunks))


def test_scores_in_0_1_keep_that_range(run):
    chunks, models, cps, size, n = run
    fig = F.metrics_figure(chunks, models, cps, size, n)
    keys = [k for k, _, _ in F.LIVE_METRICS]
    for i, key in enumerate(keys):
        axis = fig.layout["yaxis" + ("" if i == 0 else str(i + 1))]
        if key in F.BOUNDED_METRICS:
            assert tuple(axis.range) == (-0.03, 1.03)
        else:
            assert axis.range is None and axis.rangemode == "tozero"


def test_the_baseline_overlay_widens_the_threshold_range(run):
    chunks, models, cps, size, n = run
    figs = {"threshold": F.detector_figure(chunks[:3], models, cps, size, n)}
    own = tuple(figs["threshold"].layout.yaxis.range)
    base = dict(chunks=chunks, models=models, change_points=cps, chunk_size=size, n_chunks=n, id=1, label="#1")
    out = C.overlay(figs, base, PanelData(chunks[:3], models, cps, size, n))["threshold"]
    full = tuple(F.detector_figure(chunks, models, cps, size, n).layout.yaxis.range)
    lo, hi = out.layout.yaxis.range
    assert lo <= min(own[0], full[0]) and hi >= max(own[1], full[1])


@pytest.mark.parametrize("ys", [[0.1, 0.1 + 1e-16], [1e-14, 3e-14], [1e6, 1e6 + 1e-9], [np.float32(0.5), np.int64(3)],
                                [5.0], [0.0, 0.0], [-2.5, -2.4999]])
def test_flat_tiny_and_numpy_values_get_a_proper_range(ys):
    """Rounding never gives an empty range or one that misses a value; numpy numbers count."""
    fig = go.Figure(dict(data=[dict(type="scatter", y=ys)], layout=dict(yaxis=dict())))
    F.fix_y_ranges(fig)
    lo, hi = fig.layout.yaxis.range
    assert lo <= min(ys) and hi >= max(ys) and hi - lo >= 1e-6 * max(abs(lo), abs(hi), 1e-300), (lo, hi)


def test_panel_b_names_the_trusted_samples_band_and_says_what_the_rates_pin_down():
    """Issue 25: with estimated rates the caption says on how many labels the noisy labels pin both rates
    down; with a trusted sample the band is named as its 95 % interval (every number from the run)."""
    base = RunConfig(n_instances=2000, chunk_size=250, noise="missing", model_rates="estimate", models=["ELM-O"],
                     references=False, n_hidden=20)
    for fraction in (0.0, 0.05):
        cfg = RunConfig(**{**base.to_dict(), "trusted_fraction": fraction})
        chunks = list(cfg.runner().iter_run(cfg.build_stream()))
        fig = F.cardinality_figure(chunks, ["ELM-O"])
        band = [t.name.replace("<br>", " ") for t in fig.data if t.fill == "tonexty"]
        note = F.cardinality_note(chunks, ["ELM-O"])
        last = chunks[-1].diagnostics["ELM-O"]
        if fraction:
            assert band == ["95 % interval from the trusted sample"] and F.cardinality_mode(chunks, ["ELM-O"]) == "trusted"
            assert f"{last.n_trusted} trusted rows" in note and "identified set" not in note
        else:
            assert band == ["identified set (rates from 0 to their bounds)"]
            assert f"pin both flip rates down on {last.rates_identified:.0%} of the labels" in note


def test_panel_b_says_a_trusted_sample_is_unused_when_the_models_are_told_the_rates():
    """Told the rates, the models use no checked labels: the caption says so when the stream has a trusted
    sample (a visitor who set one saw nothing change), and says nothing of it otherwise."""
    cfg = RunConfig(n_instances=1000, chunk_size=250, models=["ELM-O"], references=False, n_hidden=20,
                    trusted_fraction=0.1)
    chunks = list(cfg.runner().iter_run(cfg.build_stream()))
    told = F.cardinality_note(chunks, ["ELM-O"], trusted_fraction=cfg.trusted_fraction)
    assert told.startswith("This run: the 95 % interval") and "The trusted sample is not used here" in told
    assert "trusted" not in F.cardinality_note(chunks, ["ELM-O"])  # no trusted sample: not a word of it
    assert PanelData(chunks, ["ELM-O"], trusted_fraction=0.1).trusted_fraction == 0.1


# --------------------------------------------------------------------------- legends (issue 24 item 3)
def _plot_share(fig) -> float:
    lay = fig.layout
    return (lay.height - lay.margin.t - lay.margin.b) / lay.height


@pytest.fixture(scope="module")
def five_detectors():
    from ncld_core.model.detector import DETECTORS

    cfg = RunConfig(n_instances=1600, chunk_size=200, n_features=5, n_labels=4, n_neighbors=5, schedule="growth@800",
                    models=["ELM-O"], monitors=[d for d in DETECTORS if d != RunConfig().detector][:4])
    stream = cfg.stream.build_stream()
    chunks = list(cfg.runner().iter_run(stream))
    cps = [(cp.position, cp.kind) for cp in stream.change_points]
    shown = PanelData(chunks, list(cfg.models), cps, cfg.chunk_size, stream.n_chunks(cfg.chunk_size))
    base = {"chunks": chunks, "models": list(cfg.models), "change_points": cps, "chunk_size": cfg.chunk_size,
            "n_chunks": shown.n_chunks, "compare_id": 1, "id": 1, "cfg": cfg, "stream_name": "synthetic"}
    return shown, base


def test_legends_sit_under_the_plot_which_keeps_most_of_the_height(five_detectors):
    from dashboard import panels

    shown, base = five_detectors
    figs = panels.figures(shown)
    assert len(F.detector_series(shown.chunks, shown.models)) == 5
    pinned = C.overlay(figs, base, shown)
    for key in ("metrics", "cardinality", "threshold", "timeline"):
        for fig in (figs[key], pinned[key]):
            lay = fig.layout
            assert lay.legend.yref == "container" and lay.legend.yanchor == "bottom" and lay.legend.y == 0, key
            # the plot area keeps its own height whatever the legend: the legend's room is added under it
            # ((d) grows by the baseline's rows: asserted below)
            assert key == "timeline" or lay.height - lay.margin.t - lay.margin.b == figs[key].layout.height - figs[key].layout.margin.t \
                - figs[key].layout.margin.b, key
            # at the narrowest panel (380 px) (c)'s 14 entries leave its plot 0.32 of the graph: not yet "most"
            assert _plot_share(fig) >= 0.3, (key, _plot_share(fig))
        assert len(pinned[key].data) > len(figs[key].data), key  # the baseline's entries are in the legend
    # (d): 40 px of plot per row, baseline rows included
    tl = pinned["timeline"].layout
    assert tl.height - tl.margin.t - tl.margin.b >= F.ROW_PX * len(tl.yaxis.categoryarray)


def test_observed_cardinality_far_above_the_truth_leaves_one_axis_framing_the_truth(run):
    """One quantity, one axis (issue 38: on corel16k001 a second axis 0-50 beside 0-8 read as comparable): the
    axis frames the truth and the estimates, and the observed line, off its scale, says so in its name."""
    chunks, models, cps, size, n = run
    fig = F.cardinality_figure(chunks, models, cps, size, n)
    assert "yaxis2" not in fig.layout.to_plotly_json() and fig.layout.yaxis.range is None  # near the truth
    import dataclasses

    far = [dataclasses.replace(c, observed_cardinality=16 * c.true_cardinality) for c in chunks]
    fig = F.cardinality_figure(far, models, cps, size, n)
    observed = next(t for t in fig.data if t.name.replace("<br>", " ").startswith(F.OBSERVED_NAME))
    assert "yaxis2" not in fig.layout.to_plotly_json() and (observed.yaxis or "y") == "y"
    assert "above this scale" in observed.name.replace("<br>", " ")
    F.fix_y_ranges(fig)
    truth_top = max(c.true_cardinality for c in far)
    assert truth_top <= fig.layout.yaxis.range[1] < 3 * truth_top  # the axis frames the truth and the estimates
    others = [v for t in fig.data if t is not observed for v in (t.y or ()) if isinstance(v, float)]
    assert max(others) <= fig.layout.yaxis.range[1]


# --------------------------------------------------------------------------- the sidebar's schedule preview (SVG)
def _svg(points, n):
    from dashboard.svg import svg_of

    return svg_of(F.schedule_figure(points, n), label="the schedule")


def test_the_schedule_preview_draws_each_regime_and_change_point_where_the_figure_puts_them():
    import xml.etree.ElementTree as ET

    svg = _svg([(1000, "growth"), (3000, "reduction"), (4000, "shift")], 5000)
    root = ET.fromstring(svg)  # well-formed XML
    ns = "{http://www.w3.org/2000/svg}"
    rects = root.findall(f"{ns}rect")
    # three regimes (a shift keeps its regime): each band starts where the last ended, in x order, on 300 px
    assert len(rects) == 3
    xs = [(float(r.get("x")), float(r.get("x")) + float(r.get("width"))) for r in rects]
    assert xs[0][0] == 10 and xs[-1][1] == 290 and all(abs(a[1] - b[0]) < 0.2 for a, b in zip(xs, xs[1:]))
    assert abs(xs[0][1] - (10 + 280 * 1000 / 5000)) < 0.2  # the growth at 1000 of 5000
    marks = root.findall(f"{ns}path")
    assert [m.find(f"{ns}title").text for m in marks] == ["growth@1000", "reduction@3000", "shift@4000"]
    assert [m.get("fill") for m in marks][-1] == "white"  # a shift: an open diamond, as in the plotly figure
    texts = [t.text for t in root.findall(f"{ns}text")]
    assert texts.count("single") == 2 and "multi" in texts and "instance" in texts
    assert texts[:3] == ["0", "2,000", "4,000"]  # round ticks from the start, at most one per 60 px


def test_the_schedule_preview_says_the_papers_form_and_no_drift_and_escapes_text():
    import xml.etree.ElementTree as ET

    ns = "{http://www.w3.org/2000/svg}"
    paper = ET.fromstring(_svg([(None, "growth")], 800))
    assert any("paper's growth" in (t.text or "") for t in paper.findall(f"{ns}text"))
    none = ET.fromstring(_svg([], 800))
    assert any(t.text == "no drift: one regime" for t in none.findall(f"{ns}text"))
    from dashboard.svg import svg_of

    hostile = F.schedule_figure([(100, "<script>x</script>&")], 800)
    out = svg_of(hostile, label='"><script>')
    assert "<script>" not in out and ET.fromstring(out).get("aria-label") == '"><script>'


def test_nice_ticks_are_round_and_cover_the_range():
    from dashboard.svg import nice_ticks

    for low, high in [(0, 800), (0, 5000), (0, 123456), (0, 7), (0.5, 1.5)]:
        ticks = nice_ticks(low, high)
        assert 2 <= len(ticks) <= 6 and low <= ticks[0] and ticks[-1] <= high, (low, high, ticks)
        steps = {round(b - a, 9) for a, b in zip(ticks, ticks[1:])}
        assert len(steps) == 1
        mantissa = steps.pop() / 10 ** math.floor(math.log10(ticks[1] - ticks[0]))
        assert round(mantissa, 6) in (1, 2, 5)


# --------------------------------------------------------------------------- colours and legends follow the run
def test_a_model_keeps_its_colour_whatever_runs_beside_it(run):
    """Issue 38: the clean-label oracle was pink in one lesson and navy once OSML-ELM was added (colours were
    taken by position). Every model the runner knows has a colour of its own, the same in every run."""
    from ncld_core.eval.baselines import BASELINES
    from ncld_core.eval.variants import VARIANTS

    known = [*VARIANTS, *BASELINES]
    assert set(known) <= set(F.COLORS)
    assert len({F.COLORS[m] for m in known}) == len(known)  # no two known models share a colour
    assert "#d62728" not in {F.COLORS[m] for m in known}  # red is the true changes'
    oracle = "ELM-O (clean labels)"
    colours = []
    for models in (["ELM-O", oracle], ["ELM-O", "OSML-ELM", oracle]):  # the two lessons
        cfg = RunConfig(n_instances=600, chunk_size=200, n_features=5, n_labels=4, n_neighbors=5, n_hidden=20,
                        models=models, references=False)
        chunks = list(cfg.runner().iter_run(cfg.build_stream()))
        fig = F.metrics_figure(chunks, models, [], cfg.chunk_size, 3)
        colours.append({t.legendgroup: t.line.color for t in fig.data if t.showlegend})
    assert colours[0][oracle] == colours[1][oracle] == F.COLORS[oracle]
    assert colours[0]["ELM-O"] == colours[1]["ELM-O"] == F.COLORS["ELM-O"]


def _annotations_text(fig) -> str:
    return " ".join(a.text for a in fig.layout.annotations or ())


def test_no_legend_or_key_names_what_is_not_drawn(run):
    """Issue 38: "red lines: true changes" on runs with no change; "observed cardinality (noisy labels)" with
    noise none; the paper's estimate's error in the note while that estimate is hidden."""
    chunks, models, cps, size, n = run
    assert "red lines" in _annotations_text(F.metrics_figure(chunks, models, cps, size, n))
    assert "red lines" not in _annotations_text(F.metrics_figure(chunks, models, [], size, n))
    noisy = [t.name for t in F.cardinality_figure(chunks, models, cps, size, n).data]
    assert F.OBSERVED_NAME in noisy and F.OBSERVED_CLEAN_NAME not in noisy
    cfg = RunConfig(n_instances=1000, chunk_size=250, models=["ELM-O"], references=False, n_hidden=20, noise="none")
    clean = list(cfg.runner().iter_run(cfg.build_stream()))
    names = [t.name for t in F.cardinality_figure(clean, ["ELM-O"]).data]
    assert F.OBSERVED_CLEAN_NAME in names and F.OBSERVED_NAME not in names
    assert "paper's estimate" not in F.cardinality_note(chunks, models)
    assert "paper's estimate" in F.cardinality_note(chunks, models, show_paper=True)


def test_the_sweep_heat_map_does_not_magnify_small_differences_and_says_its_scale():
    """Issue 38 item 7: a colour scale of 0.63-0.70 made a GM difference of 0.008 look large, and the γ ticks
    mixed "2⁻⁸" and "0.005"."""
    import pandas as pd

    rows = [{"beta": b, "gamma": g, "gm": 0.69 + 0.004 * i + 0.001 * j}
            for i, b in enumerate((0.1, 0.2)) for j, g in enumerate((2 ** -8, 0.005, 2 ** -6))]
    df = pd.DataFrame(rows)
    fig = F.sweep_figure(df, chosen=(0.2, 0.005), best=df.loc[df.gm.idxmax()].to_dict())
    heat = fig.data[0]
    assert heat.zmax - heat.zmin >= F.SWEEP_MIN_SPAN - 1e-12 and heat.zmax == df.gm.max()
    assert f"{heat.zmin:.2f}-{heat.zmax:.2f}" in heat.colorbar.title.text
    assert list(heat.x) == ["0.00391", "0.005", "0.0156"]  # one notation
    current = next(t for t in fig.data if (t.name or "").startswith("current setting"))
    assert current.name == f"current setting: GM {0.69 + 0.004 + 0.001:.4f}" and current.x == ("0.005",)
    powers = F.sweep_figure(df[df.gamma != 0.005])
    assert list(powers.data[0].x) == ["2⁻⁸", "2⁻⁶"]


def test_the_schedule_preview_reads_the_figure_once_as_data():
    """Issue 41 item 1: read through Plotly's objects, each annotation and marker looked itself up among its
    siblings (1,000 points: 2.6 s, quadratic); the figure is read once as plain data (100 points: a few ms)."""
    from dashboard.svg import svg_of
    from ncld_core.stream.schedule import MAX_SCHEDULE_POINTS

    points = [(10 * (i + 1), ("growth", "shift", "reduction", "shift")[i % 4]) for i in range(MAX_SCHEDULE_POINTS)]
    fig = F.schedule_figure(points, 100_000)
    reads = []

    class OnlyItsData:  # a figure that is its data alone: no Plotly object is read
        def to_plotly_json(self):
            reads.append(1)
            return fig.to_plotly_json()

    out = svg_of(OnlyItsData(), label="s")
    assert out == svg_of(fig, label="s") and reads == [1] and out.count("<path") == MAX_SCHEDULE_POINTS


# --------------------------------------------------------------------------- noise changes (issue 38 item 3)
def _noise_lines(fig) -> list:
    return [s.x0 for s in fig.layout.shapes or () if s.type == "line" and s.line.color == F._NOISE_COLOR]


def test_every_panel_marks_a_noise_change_in_its_own_style_named_only_when_drawn():
    """A noise change of the schedule (noise@1200x2 in chunks of 200: chunk 6) is a brown dash-dot line on every
    panel, apart from the true changes' red ones, and the legend (panel (a): its key) names it only when drawn."""
    from ncld_core.stream.stream import NoiseChange

    cfg = RunConfig(n_instances=2400, chunk_size=200, n_features=5, n_labels=4, n_neighbors=5, n_hidden=20,
                    noise="missing", schedule="growth@600, noise@1200x2", model_rates="estimate", monitors=["labels"])
    stream = cfg.build_stream()
    assert stream.noise_changes == (NoiseChange(1200, 2.0),)
    chunks = list(cfg.runner().iter_run(stream))
    models = cfg.runner().model_names
    cps = [(cp.position, cp.kind) for cp in stream.change_points]
    noise = [(1200, 2.0)]
    drawn = PanelData(chunks=chunks, models=models, change_points=cps, chunk_size=200, n_chunks=12,
                      rho_pos=stream.rho_pos, rho_neg=stream.rho_neg, noise_changes=noise)
    from dashboard import panels

    figs = panels.figures(drawn)
    assert set(figs) == {p.key for p in panels.PANELS if p.figure is not None}  # (e) too: the rates are estimated
    for key, fig in figs.items():
        lines = _noise_lines(fig)
        assert lines and set(lines) == {6}, key
        red = [s.x0 for s in fig.layout.shapes if s.type == "line" and s.line.color == F._CHANGE_COLOR]
        assert key == "rates" or 3 in red, key  # the growth stays a red line
        names = [t.name for t in fig.data if t.showlegend is not False]
        if key == "metrics":
            assert "noise changes" in _annotations_text(fig)
        else:
            assert any(n and n.replace("<br>", " ") == F.NOISE_CHANGE_NAME for n in names), (key, names)
    assert "noise ×2" in _annotations_text(figs["cardinality"])
    # without a noise change nothing names one
    plain = dataclasses.replace(drawn, noise_changes=())
    for key, fig in panels.figures(plain).items():
        assert not _noise_lines(fig), key
        assert "noise change" not in " ".join(str(t.name) for t in fig.data) + _annotations_text(fig), key


def test_panel_e_measures_the_estimates_against_the_rates_the_noise_change_set():
    from dashboard import panels

    cfg = RunConfig(n_instances=2000, chunk_size=250, n_features=5, n_labels=4, n_neighbors=5, n_hidden=20,
                    noise="missing", schedule="noise@1000x0", model_rates="estimate", models=["ELM-O"])
    stream = cfg.build_stream()
    chunks = list(cfg.runner().iter_run(stream))
    drawn = PanelData(chunks=chunks, models=["ELM-O"], chunk_size=250, n_chunks=8, rho_pos=stream.rho_pos,
                      rho_neg=stream.rho_neg, noise_changes=[(1000, 0.0)])
    table = panels.by_key("rates").table(drawn)
    assert (table["rho_pos true"] == 0).all() and (table["rho_neg true"] == 0).all()  # clean labels from 1000 on


def test_the_schedule_preview_marks_the_noise_changes_with_their_factors():
    import xml.etree.ElementTree as ET

    from dashboard.svg import svg_of

    ns = "{http://www.w3.org/2000/svg}"
    root = ET.fromstring(svg_of(F.schedule_figure([(1000, "reduction")], 5000, noise_changes=[(3000, 1.5)]),
                                label="s"))
    tips = [m.find(f"{ns}title").text for m in root.findall(f"{ns}path")]
    assert tips == ["reduction@1000", "noise@3000x1.5: noise ×1.5"]
    assert "×1.5" in [t.text for t in root.findall(f"{ns}text")]


def test_the_live_figures_travel_without_streamlits_template(run):
    """The live panels' JSON (dashboard/live_chart.py: serialized) carries no plotly template: Streamlit's default
    template holds placeholder colours that only st.plotly_chart replaces (plotly.js would draw them as given,
    near-black), and it would travel with every chunk. Everything the figure itself sets stays."""
    import json

    import streamlit  # noqa: F401 - registers its template as plotly's default, as in the app

    from dashboard.live_chart import serialized

    chunks, models, cps, size, n = run
    fig = F.metrics_figure(chunks, models, cps, size, n)
    sent = json.loads(serialized({"metrics": fig})["metrics"])
    full = json.loads(fig.to_json())  # (after serialized: it fixed the y ranges on the figure)
    assert "template" in full["layout"]  # what the figure would carry without serialized
    assert "template" not in sent["layout"]
    assert len(json.dumps(sent)) < len(json.dumps(full))
    assert sent["data"] == full["data"]
    assert sent["layout"] == {k: v for k, v in full["layout"].items() if k != "template"}
