"""ncld dashboard entry point: ``python -m dashboard.launch run dashboard/app.py`` (``make demo``; ``streamlit run``
serves it too, without the launcher's TCP setting, dashboard/launch.py).

The sidebar (every control, shared by all pages) is drawn here; each view is a page
of ``st.navigation``. The app is a thin layer over ``ncld_core``: no model math here.
The sidebar and every page run guarded (``dashboard.ui.guarded``): an unexpected error shows a short
message with an error id, and its traceback goes to the server's log under that id.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

HERE = Path(__file__).resolve().parent


def main():
    import streamlit as st  # here, not at the top: a process that runs this file as __mp_main__ skips it

    # A local page icon: an emoji or :material/...: icon would be fetched from the internet as the favicon.
    st.set_page_config(page_title="ncld · ELM-NCLD lab", page_icon=str(HERE / "static" / "icon.png"), layout="wide")

    from dashboard.controls import render_sidebar
    from dashboard.data import warm_up
    from dashboard.ui import guarded

    pages = [  # the default page is served at "/" (Streamlit gives it no path of its own: a url_path would be ignored)
        st.Page(HERE / "views" / "run.py", title="Live run", icon=":material/play_circle:", default=True),
        st.Page(HERE / "views" / "sweep.py", title="β × γ sweep", icon=":material/grid_on:", url_path="sweep"),
        st.Page(HERE / "views" / "data.py", title="Datasets & stream", icon=":material/dataset:", url_path="data"),
    ]
    page = st.navigation(pages, position="top")
    st.session_state.pop("ctx", None)
    with st.sidebar, guarded("drawing the settings"):
        st.session_state["ctx"] = render_sidebar()
    if "ctx" not in st.session_state:  # the settings could not be drawn: no page without them
        st.stop()
    warm_up()
    with guarded("drawing the page"):
        page.run()


# Streamlit runs this file as __main__. A process the fork server starts (a run's, an upload parse's) runs its
# parent's __main__ file again, as __mp_main__: there it must draw nothing (it drew the whole page without a
# server before each run's first chunk, about 0.4 s and 500 warning lines in the server's log per run).
if __name__ == "__main__":
    main()
