"""An upload's parse on the page (dashboard/upload_view.py), driven headless by Streamlit's AppTest: a job of the
server's run hub, its place in line said on the Datasets & stream page and under the sidebar's uploader, Cancel,
and the parse begun by the hub once a slot frees."""

from __future__ import annotations

import numpy as np

from tests.apptest import open_app

from dashboard import data
from dashboard.controls import wkey
from dashboard.serving.limits import Limits
from dashboard.upload_view import CANCELLED, NOT_READ
from ncld_core.config import RunConfig

#: Computes for minutes (a slot held until it is stopped).
BLOCKER = RunConfig(n_instances=60000, chunk_size=300, n_features=20, n_labels=6, n_neighbors=5, n_hidden=600,
                    models=["ELM-O"], references=False, seed=7)


def _arff() -> bytes:
    rng = np.random.default_rng(1)
    lines = ["@relation 'queued: -C 3'", *[f"@attribute l{j} {{0,1}}" for j in range(3)],
             *[f"@attribute x{j} numeric" for j in range(3)], "@data"]
    for _ in range(300):
        x = rng.normal(size=3)
        lines.append(",".join(str(int(v > 0)) for v in x) + "," + ",".join(f"{v:.4f}" for v in x))
    return "\n".join(lines).encode()


def _plain(text: str) -> str:
    return text.replace("\\", "")


def _captions(container) -> list[str]:
    return [_plain(c.value) for c in container.caption]


WAITING = ("waiting: 1st in line · the server computes 1 job (runs, sweeps, upload parses) at once; this parse "
           "starts when one ends")


def test_the_data_page_shows_an_uploads_place_in_line_and_cancels_it():
    data.run_hub.clear()  # a hub of this test's own: one slot, taken by another visitor's run
    hub = data.run_hub()
    hub.limits = Limits(max_concurrent_runs=1)
    blocker, _ = hub.start("another visitor", BLOCKER)
    try:
        assert blocker.begin()
        at = open_app(timeout=90)
        at.switch_page("views/data.py").run()
        at.selectbox(key=wkey("dataset", at.session_state)).set_value("upload").run()
        at.file_uploader(key="w_upload_arff").upload("queued.arff", _arff())
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        # the place in line, on the page and under the uploader, said as a run's is; Run waits for the data
        assert WAITING in _captions(at.main) and WAITING in _captions(at.sidebar), _captions(at)
        assert any(m.value == "##### Your upload" for m in at.markdown)
        assert any(NOT_READ in _plain(e.value) for e in at.error), [e.value for e in at.error]  # Run waits for it
        assert hub.waiting == 1 and hub.parses == 1

        at.button(key="upload_cancel_data").click().run()  # the Data page's Cancel
        assert not at.exception, [e.value for e in at.exception]
        assert hub.waiting == 0 and hub.running == 1  # its place is freed; the other visitor's run goes on
        assert not any("in line" in c for c in _captions(at)), _captions(at)
        assert "Reading this upload was cancelled." in _captions(at.sidebar)
        assert any(CANCELLED in _plain(e.value) for e in at.error), [e.value for e in at.error]
        at.run()
        assert hub.waiting == 0 and hub.parses == 1  # a rerun of the page does not ask for it again

        at.button(key="upload_read").click().run()  # Read it: in line again
        assert WAITING in _captions(at.main) and hub.waiting == 1 and hub.parses == 2
        hub.detach("another visitor")  # the slot frees: the hub begins the parse, nobody presses anything
        at.run()  # (the page's fragment reruns while it parses; AppTest runs the page again until it is read)
        assert not at.exception, [e.value for e in at.exception]
        assert any(t.value.startswith("queued: 300 instances, 3 features, 3 labels") for t in at.text), \
            [t.value for t in at.text]
        assert not any(CANCELLED in _plain(e.value) for e in at.error)
        assert not any("in line" in c for c in _captions(at)) and hub.waiting == hub.running == 0
    finally:
        blocker.stop()
        data.run_hub.clear()
