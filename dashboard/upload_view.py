"""The upload's parse on the page: while the server's run hub has it waiting or parsing, its place in line (said as a
run's is) or its time so far, and Cancel; under the sidebar's uploader, and on the Datasets & stream page.

The parse is a job of the run hub (:func:`dashboard.data.upload_parse`), begun by the page that asks for it when
a slot is free (which waits for it at most ``dashboard.data.QUICK_PARSE_S``: a small file is shown at once) or by the
hub when one frees, so the page does not wait for a large file or a queue: :func:`show` is a fragment that reads the job every :data:`POLL_S` seconds and reruns
the whole page once the job has ended (or this session no longer holds it), so the sidebar collects the parsed
upload, or says why it failed. Cancel detaches the session from the job (stopped at once unless another visitor's
page waits for the same file) and notes the upload as cancelled for this session, so the page does not ask for
its parse again until "Read it" is pressed or another file is uploaded.
"""

from __future__ import annotations

import streamlit as st

from . import data
from .ui import md_escape

__all__ = ["read", "show", "cancelled", "NOT_READ", "CANCELLED", "PARSE_CANCELLED", "POLL_S"]

#: How often the status of a parse under way is read again (seconds).
POLL_S = 0.5
#: Session state: ``(name, digest)`` of the upload whose parse this session cancelled.
PARSE_CANCELLED = "upload_parse_cancelled"
#: Said under the dataset control while the upload is not read (Run waits for it).
NOT_READ = "the upload is not read yet: its place in line or its progress is under the uploader"
#: Said under the dataset control once its parse was cancelled.
CANCELLED = "reading the upload was cancelled: press Read it to read it"


def cancelled() -> bool:
    """Whether this session cancelled the parse of the upload it shows (:func:`read` said so)."""
    return PARSE_CANCELLED in st.session_state


def read(arff_bytes: bytes, xml_bytes: bytes | None, name: str, dig: str):
    """The upload's Dataset once parsed, else None with its status drawn here (the place in line or the time so far,
    and Cancel; or, once cancelled, Read it). A ValueError for a file no run can use (:func:`dashboard.data.upload_parse`)."""
    ss = st.session_state
    key = (name, dig)
    if ss.get(PARSE_CANCELLED) == key:
        st.caption("Reading this upload was cancelled.")
        st.button("Read it", key="upload_read", icon=":material/upload_file:", on_click=ss.pop,
                  args=(PARSE_CANCELLED, None), help="Parse the file again: it takes its place in the server's queue.")
        return None
    ss.pop(PARSE_CANCELLED, None)  # another file: the cancel of an earlier one no longer holds
    ds, job = data.upload_parse(arff_bytes, xml_bytes, name, dig)
    if ds is not None:
        return ds
    if not job.active:  # stopped, not by this page (a race with another of its parses): said as cancelled
        data.cancel_upload_parse(job)
        ss[PARSE_CANCELLED] = key
        st.rerun()
    show(job, "sidebar")
    return None


def _cancel(job) -> None:
    st.session_state[PARSE_CANCELLED] = (job.name, job.digest)
    data.cancel_upload_parse(job)


def show(job, where: str) -> None:
    """The parse job's status and its Cancel button (keyed by ``where``), read again every :data:`POLL_S` seconds;
    the whole page is run again once the job has ended or this session no longer holds it."""
    st.fragment(_status, run_every=POLL_S)(job, where)


def _status(job, where: str) -> None:
    if not job.active or data.upload_job() is not job:
        st.rerun()  # the whole page: the sidebar collects the dataset, says the failure, or the cancel
    st.caption(md_escape(data.parse_status_text(job, data.run_hub().limits.max_concurrent_runs)))
    st.button("Cancel", key=f"upload_cancel_{where}", icon=":material/close:", on_click=_cancel, args=(job,),
              help="Stop reading this upload (at once; the server's slot goes to the next job in line).")
