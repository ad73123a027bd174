"""Small presentation helpers shared by the pages."""

from __future__ import annotations

import logging
import re
import time
import uuid
from contextlib import contextmanager

import streamlit as st

from .teaching import Teaching

_MD = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def md_escape(text) -> str:
    """Escape Markdown (and Streamlit's ``$...$`` LaTeX, ``:color[...]`` directives) in user text."""
    return _MD.sub(r"\\\1", str(text))


def teach(info: Teaching, *, key: str | None = None, expanded: bool = False):
    """The expander with a panel's equation(s), named by the paper's label, and what to look for.

    With a ``key``, its content is drawn only while it is open (opening it reruns the page): typesetting every
    panel's equations delayed a new visitor's page by 0.24-0.41 s, idle or beside busy cores
    (``python -m benchmarks.page_beside_busy``; ``docs/deploy.md``, section 5). Without one it is drawn at once
    and opens without a rerun (for a page whose work runs inside its script run, which a rerun would end)."""
    if key is None:
        box = st.expander(info.title, expanded=expanded, icon=":material/function:")
    else:
        box = st.expander(info.title, expanded=expanded, icon=":material/function:", key=key, on_change="rerun")
        if not box.open:
            return
    with box:
        for eq in info.latex:
            st.latex(r"\small " + eq)
        st.markdown(info.text)


#: A live part's refused write reruns the page (:func:`rerun_after_refused_write`) unless the last one was this
#: recent (seconds): then the page's full runs do not write the place, no race, and the error shows.
REFUSED_AGAIN_S = 2.0


def rerun_after_refused_write() -> None:
    """Call in ``except StreamlitInvalidLayoutContextError`` of a live part (an ``st.fragment`` with ``run_every``)
    writing to places outside it: Streamlit refuses such a write when the page's last full run, racing with the
    part's rerun, did not write the place. The page is rerun, which writes every place again; a second refusal
    within :data:`REFUSED_AGAIN_S` is not that race: the error is raised again (shown, never rerun in a loop)."""
    now, last = time.monotonic(), st.session_state.get("_refused_write_at")
    if last is not None and now - last < REFUSED_AGAIN_S:
        raise
    st.session_state["_refused_write_at"] = now
    st.rerun()


#: The server's log of the dashboard: where an unexpected error's traceback goes, under its error id.
log = logging.getLogger("ncld.dashboard")


def error_text(what: str, error_id: str) -> str:
    """What a visitor reads when something unexpected fails: what, and the id that finds it in the log."""
    return (f"Something went wrong while {what} (error id {error_id}). Nothing about it is shown here; "
            "the server's log has the details under that id.")


@contextmanager
def guarded(what: str, slot=None):
    """Run a page's work: an unexpected error is a short message with an error id on the page (in ``slot``,
    else where the work was), its traceback goes to the server's log with that id, never to the visitor.
    Streamlit's own rerun and stop pass through (they are not ``Exception``)."""
    try:
        yield
    except Exception:  # noqa: BLE001 - the whole point: nothing reaches the visitor but the id
        error_id = uuid.uuid4().hex[:12]
        log.exception("dashboard error %s while %s", error_id, what)
        (slot or st).error(error_text(what, error_id), icon=":material/error:")
