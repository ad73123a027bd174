"""What the Live run page decides and says, without Streamlit (``dashboard/views/run.py`` lays it out).

A *live* page is one whose visitor has pressed Run in this session (and not Stop since): there a control that
moves starts the run of its new settings by itself (:func:`starts_by_itself`), the run of the stale settings is
stopped (``dashboard.serving.run_hub.RunHub.start`` detaches the session from it), and settings computed before are
replayed (the hub's finished runs). A link only fills the controls: a page opened from one is not live until Run
is pressed, so a link never starts work. The changes are debounced by Streamlit's reruns: a change arriving while
the page starts or draws a run ends that script run, and the next one starts the newest settings only.

>>> from types import SimpleNamespace as Run
>>> starts_by_itself(live=True, ok=True, run=Run(cfg=1), same=lambda run: run.cfg == 2)
True
>>> starts_by_itself(live=False, ok=True, run=Run(cfg=1), same=lambda run: False)  # a link, or after Stop
False
>>> starts_by_itself(live=True, ok=False, run=Run(cfg=1), same=lambda run: False)  # bad settings: nothing
False
"""

from __future__ import annotations

from collections.abc import Callable

from dashboard import figures as F
from dashboard import panels
from dashboard.labels import settings_text
from dashboard.serving.live_run import duration_text
from dashboard.serving.run_hub import queue_text
from ncld_core.eval.variants import ELM_VARIANTS
from ncld_core.model.cost import MEMORY_BUDGET_BYTES

__all__ = ["ALL", "starts_by_itself", "changed_note", "describe", "about_run", "waiting_text", "expected_text", "default_rates",
           "focus_options", "focus_choice", "panel_data", "summary_columns", "enlarge", "expected_help", "RUN_HELP"]

#: The choice of "(b)-(d) show the records of" that draws every variant.
ALL = "all"


def starts_by_itself(*, live: bool, ok: bool, run, same: Callable[[object], bool]) -> bool:
    """Whether the page starts a run without a click: it is ``live``, its settings are valid (``ok``; invalid ones
    show their inline error and start nothing), and the session's ``run`` (None: none yet) is not of the
    settings on the controls (``same(run)`` False)."""
    return bool(live and ok and run is not None and not same(run))


def changed_note(*, same: bool, ok: bool, running: bool, live: bool) -> str | None:
    """The run caption's note when the settings on the controls are not the run's (None: they are). A live page
    with valid settings has started their run already; otherwise the note says what to press.

    >>> changed_note(same=False, ok=True, running=False, live=False)
    '**The settings have changed since this run**: press Run for them'
    >>> changed_note(same=False, ok=False, running=True, live=True)
    '**The settings have changed since this run**: fix them and their run starts'
    >>> changed_note(same=True, ok=True, running=True, live=True) is None
    True
    """
    if same:
        return None
    head = "**The settings have changed since this run**"
    if not ok:
        return head + (": fix them and their run starts" if live else "")
    if live:
        return head + ": their run starts"
    return head + ": " + ("press Stop, then Run for them" if running else "press Run for them")


def describe(cfg) -> str:
    """Every setting of the run that differs from the defaults (:func:`dashboard.labels.settings_text`)."""
    text = settings_text(cfg)
    return text if text == "the default settings" else f"the defaults, except {text}"


def about_run(cfg, *, same: bool, upload: bool) -> str | None:
    """What the run caption says the run is (:func:`describe`), or None for a run of the default settings that the
    controls still show (``same``) on no uploaded file: the sentence would tell nothing the page does not.

    >>> from ncld_core.config import RunConfig
    >>> about_run(RunConfig(), same=True, upload=False) is None, about_run(RunConfig(), same=False, upload=False)
    (True, 'the default settings')
    """
    text = describe(cfg)
    return None if same and not upload and text == "the default settings" else text


#: How often the live part of the Live run page reads an active run (seconds, its fragment's ``run_every``): a chunk
#: is drawn within this of its arrival.
POLL_S = 0.2


def waiting_text(place: int, slots: int) -> str:
    """The status of a run not begun yet: its ``place`` in the server's line (0: being built), ``slots`` the runs
    the server computes at once.

    >>> waiting_text(2, 1)
    'waiting: 2nd in line · the server computes 1 job (runs, sweeps, upload parses) at once; this run starts when one ends'
    """
    if not place:
        return "starting · building the stream and the models…"
    return queue_text(place, slots, "run")


def expected_text(cost, calibration) -> str:
    """The settings' expected memory and time per chunk (the core's estimate ``cost``, timed by this server's
    ``calibration``), said before Run; how it is estimated is :func:`expected_help`."""
    per, total = calibration.seconds_per_chunk(cost), calibration.seconds_total(cost)
    mem = cost.memory_bytes / 1024**2
    mem_txt = f"{mem / 1024:.1f} GB" if mem >= 1024 else f"{mem:.0f} MB"
    return (f"Expected for these settings: about {mem_txt} of arrays per chunk (budget "
            f"{MEMORY_BUDGET_BYTES / 1024**3:.0f} GB) · about {per:.1f} s per chunk"
            + (f", {duration_text(total)} for {cost.n_chunks} chunks" if total is not None else ""))


def expected_help(calibration) -> str:
    """How :func:`expected_text` estimates (its help, opened on demand)."""
    runs = calibration.n_runs
    speed = (f"this server's speed measured on its last {runs} run{'s' if runs > 1 else ''}" if runs
             else "this server's speed from one matrix product until a run has finished")
    return (f"An estimate from the array shapes and {speed}; a run's status replaces it with its measured chunk "
            "times.")


#: What Run does, and how to read what it draws (the Run button's help: the page's first screen keeps its words
#: for the run's numbers).
RUN_HELP = ("Prequential test-then-train on a noisy stream: every chunk is scored against the ground truth, then "
            "learned from its noisy labels. Whatever a legend marks *oracle: hidden from the learner* (the true "
            "cardinality, change points and regimes, the true flip rates, a model trained on the clean labels) is "
            "drawn to judge the learner, which never sees it.")


def default_rates(cfg) -> str:
    """What the drawn variants are told about the rates, said by a heading before the first record."""
    if any(m in ELM_VARIANTS and m != "ELM (plain)" for m in cfg.models):
        return cfg.model_rates
    return "ignore" if "ELM (plain)" in cfg.models else "known"  # ELM (plain) takes the rates as 0


def focus_options(cfg) -> list[str] | None:
    """The choices of "(b)-(d) show the records of": [:data:`ALL`, the ELM variants] when there are several, else
    None."""
    elm = [m for m in cfg.models if m in ELM_VARIANTS]
    return [ALL, *elm] if len(elm) >= 2 else None


def focus_choice(options: list[str], kept, cfg) -> str:
    """The ``kept`` choice when it is one of ``options``, else the default: the acting learner (ELM-O)."""
    if kept in options:
        return kept
    acting = panels.acting_learner(cfg.models)
    return acting if acting in options else options[1]


def panel_data(run, cfg, *, focus, show_paper: bool, chunks=None) -> panels.PanelData:
    """What the panels draw: ``chunks`` (default: every chunk received) of ``run``, the records of ``focus`` (a
    model, or :data:`ALL`); without a running run, no records (the headings then speak of the settings ``cfg``)."""
    if run is None or run.stream is None:
        return panels.PanelData(default_rates=default_rates(run.cfg if run else cfg))
    stream = run.stream
    return panels.PanelData(
        chunks=list(run.chunks) if chunks is None else chunks, models=list(run.models),
        change_points=list(run.change_points), chunk_size=run.chunk_size, n_chunks=run.n_chunks,
        noise_changes=list(run.noise_changes),
        focus=[focus] if focus in run.models else panels.drawn_order(run.models), show_paper=show_paper,
        rho_pos=stream.rho_pos, rho_neg=stream.rho_neg, label_names=tuple(getattr(stream, "label_names", ()) or ()),
        default_rates=default_rates(run.cfg), trusted_fraction=float(run.cfg.trusted_fraction))


def summary_columns(table, *, presenting: bool, change_points: bool) -> tuple[list[str], dict]:
    """The summary table's columns shown on the page and every column's number format: on a projector (beside a
    lesson's step) without the seconds, and without the detection columns when the stream has no change."""
    special = {"seconds": "{:.2f}", "mean delay (chunks)": "{:.1f}", "firings": "{:.0f}", "detected": "{:.0f}",
               "missed": "{:.0f}", "false alarms": "{:.0f}"}
    fmt = {c: special.get(c, "{:.4f}") for c in table.columns if table[c].dtype.kind == "f"}
    cols = ["variant", "Hamming loss", "Micro-F1", "Average precision", "GM", "detected", "missed", "false alarms",
            "mean delay (chunks)", "seconds"]
    if presenting:
        cols = [c for c in cols if c != "seconds" and not (
            not change_points and c in ("detected", "missed", "mean delay (chunks)"))]
    return [c for c in cols if c in table.columns], fmt


#: Plotly font size (px) of the figures in presentation mode.
PRESENT_FONT = 18
#: Presentation mode: the plot area's height as sent (px; panel (d) takes more with many rows), which the page
#: then fits to the height the screen has left (dashboard/static/live_chart.js) within PRESENT_PLOT_RANGE_PX (no
#: plot under 200 px: issue 38 item 5); the plot area of a categorical axis (panel (d)'s rows) keeps PRESENT_ROW_PX
#: a row at least.
PRESENT_PLOT_PX = 200
PRESENT_PLOT_RANGE_PX = (200, 420)
PRESENT_ROW_PX = 46
#: Presentation mode on a screen narrower than PRESENT_WIDE_PX (px; a lesson's step then stands above the panel,
#: dashboard/static/present.css): the least plot height is PRESENT_NARROW_MIN_PX instead, so that the panel fits.
PRESENT_WIDE_PX = 1000
PRESENT_NARROW_MIN_PX = 90
#: Presentation mode: the graph widths (px) a legend is laid out for, every 40 px (the page draws the widest its
#: graph holds: a bucket far below the graph's width wraps the names for nothing), in 2 or 3 columns, the lower.
PRESENT_LEGEND_WIDTHS = tuple(range(460, 1241, 40))
PRESENT_LEGEND_COLUMNS = (2, 3)
#: Presentation mode: the top margin (px) of a figure of rows with nothing above them (no title, no change's label).
PRESENT_BARE_TOP_PX = 12


def enlarge(fig) -> None:
    """Presentation mode: the figure's type at PRESENT_FONT px (the margins grown to hold the larger tick labels,
    no room kept above rows with nothing there), its legend under the plot laid out afresh for that type in two or
    three columns, and its plot's height left to the page to fit to the screen (``meta.fit``, drawn by
    dashboard/static/live_chart.js): the panel, its axes, legend and caption, and a lesson's step, fit 1280 x 720
    and 1024 x 768 with no plot under 200 px, and 820 x 768, without scrolling (tests/test_dashboard_present_browser.py
    and tests/test_dashboard_browser.py measure it)."""
    fig.update_layout(font=dict(size=PRESENT_FONT))
    fig.update_annotations(font_size=PRESENT_FONT)
    F.scale_subtitles(fig, PRESENT_FONT - 4)
    fig.update_layout(legend_font_size=PRESENT_FONT - 4)  # under the plot, in two columns: fewer lines
    # automargin: the margins grow with the larger tick labels, so an axis title never lies on them
    fig.update_xaxes(tickfont_size=PRESENT_FONT - 2, title_font_size=PRESENT_FONT, automargin=True)
    fig.update_yaxes(tickfont_size=PRESENT_FONT - 2, title_font_size=PRESENT_FONT, automargin=True)
    rows = len(fig.layout.yaxis.categoryarray or ()) if fig.layout.yaxis.type == "category" else 0
    if rows and not fig.layout.title.text and not any(a.yref == "paper" and (a.y or 0) >= 1
                                                      for a in fig.layout.annotations):
        # rows (panel (d)) and nothing above them: no room kept there (a rotated y title needs it, rows do not)
        fig.update_layout(margin_t=PRESENT_BARE_TOP_PX)
    meta = dict(fig.layout.meta) if isinstance(fig.layout.meta, dict) else {}
    fig.layout.meta = meta | {"plot_px": PRESENT_PLOT_PX}
    F.fit_legend(fig, columns=PRESENT_LEGEND_COLUMNS, wider=PRESENT_LEGEND_WIDTHS)  # the page draws the graph's width's
    plot = fig.layout.meta["plot_px"]
    low, high = PRESENT_PLOT_RANGE_PX
    low = max(low, PRESENT_ROW_PX * rows)
    fig.layout.meta = dict(fig.layout.meta) | {"fit": dict(
        base=fig.layout.height, plot=plot, min=low, max=max(high, plot), wide=PRESENT_WIDE_PX,
        narrow_min=min(low, max(PRESENT_NARROW_MIN_PX, PRESENT_ROW_PX * rows)))}
