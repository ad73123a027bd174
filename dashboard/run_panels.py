"""The Live run's panels on the page: their places, and what a run's chunks draw into them.

One :class:`LivePanels` a script run of the Live run page (``dashboard/views/run.py``): the page lays each panel
of :data:`dashboard.panels.PANELS` out with :meth:`LivePanels.heading` and :meth:`LivePanels.body`, then
:meth:`LivePanels.draw` writes a run's records into them (the graphs through ``dashboard.live_chart``, the
headings, captions, notes and tables beside them), and :func:`summary` the summary's table and downloads.
"""

from __future__ import annotations

import re

import streamlit as st

from dashboard import compare, glance, live_page, panels, report
from dashboard import figures as F
from dashboard.live_chart import SERVED, SHARED, draw_charts, mount
from dashboard.teaching import clean_labels_note, noise_cost_text
from dashboard.ui import md_escape

__all__ = ["LivePanels", "PLOT_CONFIG", "summary", "unsaid"]

PLOT_CONFIG = {"displaylogo": False, "modeBarButtonsToRemove": ["lasso2d", "select2d"]}


def unsaid(text: str, said: str) -> str:
    """``text`` without the sentences ``said`` holds word for word: a panel's caption beside a lesson step that
    already says what its band is (the screen's height is short in presentation mode).

    >>> unsaid("The band is a set. It is wide. This run: 3 chunks.", "Look at (b). The band is a set. It is wide.")
    'This run: 3 chunks.'
    """
    if not said:
        return text
    return " ".join(s for s in re.split(r"(?<=[.?!])\s+", text) if s not in said)


class LivePanels:
    """The panels' places in one script run: ``presenting`` (presentation mode), ``owner`` (the token of the run
    the graphs' mounts show, None: none), ``hub`` (an ``st.empty`` of no height that carries each draw's
    figures, ``dashboard.live_chart.draw_charts``) and ``said``: text on screen beside the panels (a lesson's
    step), whose sentences the captions leave out (:func:`unsaid`)."""

    def __init__(self, *, presenting: bool, owner: str | None, hub, said: str = ""):
        self.presenting, self.owner, self.hub, self.said = presenting, owner, hub, said
        self.slots: dict = {}
        self.sent: dict = {}  # what each slot shows since the last clear (see put)
        self.folds: dict = {}  # presentation mode: a table slot -> the slot inside its expander (put_table)

    def heading(self, panel, before: panels.PanelData, where=None) -> None:
        """The panel's heading, from ``before`` (no records yet); a slot when :meth:`draw` rewrites it."""
        text = "##### " + panels.heading(panel, before)
        if callable(panel.title):
            self.slots[f"{panel.key}_heading"] = (where or st).empty()
            self.slots[f"{panel.key}_heading"].markdown(text)
        else:
            (where or st).markdown(text)

    def body(self, panel):
        """The panel's container (``panel_<key>``): its caption, graph, note and table, as the panel has them;
        for the summary, the box its content goes in (returned)."""
        if panel.kind == "summary":
            return st.container(key=f"panel_{panel.key}").empty()  # one child: a new run's layout clears it
        with st.container(key=f"panel_{panel.key}"):
            if panel.caption is not None:
                self.slots[f"{panel.key}_caption"] = st.empty()
            if panel.figure is not None:
                self.slots[panel.key] = st.empty()
                mount(self.slots[panel.key], panel.key, key=f"mount_{panel.key}", owner=self.owner)
            if panel.note is not None:
                self.slots[f"{panel.key}_note"] = st.empty()
            if panel.table is not None:
                self.slots[f"{panel.key}_table"] = st.container(key=f"panel_{panel.key}_table").empty()
        return None

    def draw(self, run, shown: panels.PanelData, *, figures: bool = True) -> None:
        """Redraw every panel from ``shown`` (records of ``run``): its graphs (unless ``figures`` is False: they
        show these records already), then what the panels write beside them."""
        if figures:
            k = len(shown.chunks)  # (the fallback's charts: a fresh key per redraw, two identical figures allowed)
            base = compare.baseline_for(run.record())

            def make():
                figs = panels.figures(shown, keys=self.slots)  # presentation mode: the panel shown
                if base is not None:  # the pinned run, dimmed, under every panel
                    figs = compare.overlay(figs, base, shown)
                if self.presenting:
                    for fig in figs.values():
                        live_page.enlarge(fig)
                return figs

            # the same chunk drawn with the same options by another session (a class on one run): its figures as
            # drawn; a pinned run is the session's own (its history), never shared
            chunk = shown.chunks[-1] if shown.chunks and base is None else None
            # (the change points too: an intervention's run draws the chunks of the run it goes on from with its own)
            figs = SHARED.figures(chunk, (k, tuple(shown.focus), shown.show_paper, tuple(sorted(self.slots)),
                                          self.presenting, tuple(shown.change_points), tuple(shown.noise_changes)),
                                  make)
            # chunk: each graph says how many chunks it shows (the browser test's latency measurement)
            draw_charts(self.hub, self.slots, figs, key=f"figs_{k}", owner=self.owner, config=PLOT_CONFIG, chunk=k)
        if "glance" in self.slots:  # the one-glance strip above the panels (not in presentation mode)
            self.put("glance", "markdown", glance.run_strip(run, shown.chunks), help=glance.STRIP_HELP)
        for panel in panels.PANELS:  # then what the panels write beside their graphs
            key = panel.key
            if f"{key}_heading" in self.slots:
                self.put(f"{key}_heading", "markdown", "##### " + panels.heading(panel, shown))
            for part in ("caption", "note"):
                if f"{key}_{part}" in self.slots:
                    text = unsaid(getattr(panel, part)(shown) or "", self.said)
                    if text:
                        self.put(f"{key}_{part}", "caption", text)
            if f"{key}_table" in self.slots:
                table = panel.table(shown)
                if table is not None and not table.empty:
                    # presentation mode: the table on request (the graph, its legend and caption fit the screen),
                    # in an expander drawn only once there is a table (none when no variant estimates the rates)
                    self.put_table(f"{key}_table", table, scrolls=panel.table_scrolls,
                                   folded=(panel.table_title or "table") if self.presenting else None)

    def reserve(self, before: panels.PanelData) -> None:
        """Write every place :meth:`draw` writes (the headings as ``before`` the records, the rest empty): a
        fragment may write only to the outside places it wrote in the page's last full run."""
        graphs = {p.key for p in panels.PANELS if p.figure is not None} if SERVED else set()
        for name, slot in self.slots.items():
            if name.endswith("_heading"):
                slot.markdown("##### " + panels.heading(panels.by_key(name[:-len("_heading")]), before))
            elif name not in graphs:  # (a graph's slot holds its mount)
                slot.empty()
        self.hub.empty()

    def clear(self) -> None:
        """Forget what the slots show: the live part's rerun (a fragment's) writes them again."""
        self.sent.clear()
        self.folds.clear()

    def put(self, slot: str, kind: str, content, **kw) -> None:
        """Write ``content`` into ``slot`` with its ``kind`` method (and options ``kw``), unless the slot shows it
        already: every element sent is one more update the page renders while the next chunk waits."""
        seen = (content.to_json() if hasattr(content, "to_json") else content, repr(sorted(kw.items())))
        if self.sent.get(slot) == (kind, seen):
            return
        self.sent[slot] = (kind, seen)
        getattr(self.folds.get(slot) or self.slots[slot], kind)(content, **kw)

    def put_table(self, slot: str, table, *, scrolls: bool, folded: str | None = None) -> None:
        """A panel's table: every row (a plain HTML table), or scrolling with its numbers to 4 decimals (as the
        sidebar's rate table), a column of true values marked as hidden from the learner; ``folded``: inside a
        closed expander of that title."""
        if not scrolls:
            kind, kw = "table", {"hide_index": True}
        else:
            kind, kw = "dataframe", dict(
                hide_index=True, width="stretch", height=220,
                column_config={c: st.column_config.NumberColumn(
                    c + (f" ({F.ORACLE})" if c.endswith(" true") else ""), format="%.4f")
                    for c in table.columns if table[c].dtype.kind == "f"})
        if folded is not None and slot not in self.folds:  # an open one stays open as chunks come
            with self.slots[slot].container(), st.expander(folded):
                self.folds[slot] = st.empty()
        self.put(slot, kind, table, **kw)


def summary(box, run, *, presenting: bool, drawn: panels.PanelData) -> None:
    """The summary of a run that ended (``drawn``: the records its panels show) in ``box``: the cumulative table,
    what the noise cost, and outside presentation mode every metric and the downloads."""
    result = run.result()
    table = report.summary_table(result, readable=True)
    with box.container():
        if table.empty or "Hamming loss" not in table.columns:
            st.info("No chunk was scored yet: chunk 0 only initialises the models, so the stream needs at "
                    "least two chunks.", icon=":material/info:")
            return
        if run.status != "done":
            st.caption(f"Partial results: the run {result.status}; the downloads say so.")
        main_cols, fmt = live_page.summary_columns(
            table, presenting=presenting, change_points=run.stream is None or bool(run.stream.change_points))
        cost = result.noise_cost("average_precision", corrected=next(
            (m for m in ("ELM-O", "ELM-I", "ELM-II") if m in result.models), "ELM-O"))
        if cost is not None:
            st.caption(noise_cost_text(cost), help="The oracle learns the ground truth, which the learner never "
                                                   "has: it only measures what the label noise costs.")
        clean_note = clean_labels_note(run.cfg)
        if clean_note:  # a preset whose clean labels score below its noisy ones: why, beside the numbers
            st.caption(clean_note)
        # st.table: a plain HTML table (readable by screen readers and the browser test)
        st.table(table[main_cols].style.format({k: v for k, v in fmt.items() if k in main_cols}, na_rep="–")
                 .hide(axis="index"))
        seconds = report.seconds_note(result.models)
        if presenting:  # (the downloads and the full table are on the page outside presentation mode)
            st.caption("Cumulative over the run. GM = √((1 − Hamming loss) × micro-F1).")
            return
        st.caption("Cumulative over the run. GM = √((1 − Hamming loss) × micro-F1), the paper's score of the β × γ "
                   "sweep; mean delay: chunks from a true change to the firing that detects it. "
                   + md_escape(seconds))
        with st.expander("All cumulative metrics"):
            st.dataframe(table.style.format(fmt, na_rep="–"), hide_index=True, width="stretch")
        cfg = run.cfg
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"ncld_{run.stream_name}_N{cfg.chunk_size}")
        d1, d2, d3 = st.columns(3)
        d1.download_button("Per-chunk CSV", data=lambda: report.records_csv(result), file_name=f"{stem}_chunks.csv",
                           mime="text/csv", on_click="ignore", icon=":material/download:", width="stretch")
        d2.download_button("Summary JSON", data=lambda: report.summary_json(result), file_name=f"{stem}_summary.json",
                           mime="application/json", on_click="ignore", icon=":material/download:", width="stretch")
        notes = " ".join(t for t in (live_page.describe(cfg) + (f". {noise_cost_text(cost)}" if cost else ""),
                                     seconds) if t)

        def html():  # made when it is downloaded
            return report.html_report(f"ncld run on {run.stream_name}", cfg.to_dict(), report.run_figures(drawn),
                                      table, notes=notes, tables=report.run_tables(drawn),
                                      figure_notes=report.run_notes(drawn), status=result.status)

        d3.download_button("HTML report", data=html, file_name=f"{stem}_report.html", mime="text/html",
                           on_click="ignore", icon=":material/download:", width="stretch")
