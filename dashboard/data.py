"""Cached data access for the dashboard: dataset listing and loading, uploads, streams, sweeps.

Everything here is ``st.cache_data``: shared across reruns and visitors, keyed by
the arguments (the configuration's frozen :class:`~ncld_core.config.StreamSpec` for streams), so
changing a model parameter never reloads a dataset. Uploads and their streams are kept apart
(:func:`uploads`), released when the last session that showed them is gone.
Per-session things (runs, models) live in ``st.session_state`` instead.
"""

from __future__ import annotations

import dataclasses
import json

import pandas as pd
import streamlit as st

from ncld_core.config import RunConfig, StreamSpec
from dashboard.serving.limits import LIMITS

UPLOAD = "upload"  #: RunConfig.dataset value for an uploaded file (cannot be put in a link)


@st.cache_data(ttl=30, show_spinner=False)
def list_datasets():
    """The datasets found in the data folders (``ncld_core.data.list_datasets``); re-scanned every 30 s."""
    from ncld_core.data import list_datasets as _list

    try:
        return _list(), None
    except ValueError as exc:  # e.g. NCLD_DATA_DIR points to a missing folder
        return pd.DataFrame(columns=["name", "instances", "features", "labels", "cardinality"]), str(exc)


@dataclasses.dataclass(frozen=True)
class DatasetFacts:
    """What the controls need to know of the chosen data: its sizes (None: not known) and label names."""

    name: str
    n_instances: int | None = None
    n_features: int | None = None
    n_labels: int | None = None
    label_names: tuple = ()
    cardinality: float | None = None

    @property
    def note(self) -> str:
        """The sizes in a line (empty for the synthetic generator, whose sizes are settings)."""
        if self.n_instances is None:
            return ""
        card = "" if self.cardinality is None else f" · cardinality {self.cardinality:.3f}"
        return f"{self.n_instances} instances · {self.n_features} features · {self.n_labels} labels{card}"


#: Said for an upload that is not there (a link, or the uploader still empty).
NO_UPLOAD = "upload an ARFF file (MEKA: labels given by -C n in @relation)"


def upload_identity(upload) -> str | None:
    """What tells one upload from another for a run (``upload``: (Dataset, digest), or None): its name and its
    bytes' digest. The stream is named after the file, and the run's caption, downloads and report show that
    name: the same bytes uploaded under two names are two runs, so a replay never shows one visitor another's
    file name."""
    return None if upload is None else json.dumps([upload[0].name, upload[1]])


def resolve(name, upload=None) -> DatasetFacts:
    """The one door from a dataset name to data, for the control, the link, the pinned run and the data page:
    the synthetic generator, a dataset listed in the data folders (``ncld_core.data.resolve_dataset``) or this
    session's own upload (``upload``: (Dataset, digest)). Anything else is a ValueError that names no file
    and no folder. The synthetic generator's sizes are settings: its facts are all None."""
    from ncld_core.data import resolve_dataset

    if name == "synthetic":
        return DatasetFacts("synthetic")
    if name == UPLOAD:
        if upload is None:
            raise ValueError(NO_UPLOAD)
        ds = upload[0]
        return DatasetFacts(ds.name, ds.n_instances, ds.n_features, ds.n_labels, tuple(ds.label_names),
                            float(ds.cardinality))
    key = resolve_dataset(name).name
    df, _ = list_datasets()
    hit = df[df["name"] == key]
    if hit.empty:  # listed a moment ago (the listing is re-scanned every 30 s): refused the same way
        raise ValueError(f"unknown dataset {key!r}: choose one of the listed datasets")
    row = hit.iloc[0]

    def size(col):
        return None if pd.isna(row[col]) else int(row[col])

    card = None if pd.isna(row["cardinality"]) else float(row["cardinality"])
    return DatasetFacts(key, size("instances"), size("features"), size("labels"), cardinality=card)


@st.cache_data(max_entries=LIMITS.parse_cache_entries, ttl=LIMITS.parse_cache_ttl_s, show_spinner=False)
def load_dataset(name: str):
    """A dataset listed in the data folders (never a path: ``ncld_core.data.load_dataset(paths=False)``)."""
    from ncld_core.data import load_dataset as _load

    return _load(name, paths=False)


def _check_upload(name: str):
    """What an upload's parse job checks once parsed: features no model can learn from are refused there, not after
    chunk 1 (``ncld_core.data.check_features``)."""
    from ncld_core.data import check_features

    tag = "" if name == "upload" else f" ({name})"
    return lambda ds: check_features(ds, f"arff_bytes{tag}")


#: How long the page's run that asks for an upload's parse waits for it when its slot is free (seconds): a small
#: file is then shown at once, a larger one is followed by the page's status fragment (``dashboard/upload_view.py``).
QUICK_PARSE_S = 1.0


def upload_parse(arff_bytes: bytes, xml_bytes: bytes | None, name: str, dig: str | None = None):
    """This session's upload (MULAN: ARFF + XML, or MEKA: ARFF with ``-C n``) named ``name``, ``dig`` its digest
    (:func:`digest`; computed when not given): ``(Dataset, None)`` once parsed, else ``(None, ParseJob)`` while it
    waits or parses. The parse is a job of the server's :func:`run_hub` (queued with the runs and sweeps for the same
    slots, in a process of its own under the upload limits, parsed once for every session uploading the same file;
    ``dashboard.serving.parse_job``), begun by the hub when its slot frees: the page shows its place and status and
    offers Cancel (:func:`cancel_upload_parse`). A ValueError for a file no run can use (the parse's message, or
    ``ncld_core.data.check_features``'). Once parsed, the upload is kept while a session shows it (:func:`uploads`:
    released when the last such session is gone)."""
    from .serving.run_hub import PARSE

    session, hub = session_id(), run_hub()
    key = (name, digest(arff_bytes, xml_bytes) if dig is None else dig)
    job = hub.held(session, PARSE)
    ds = uploads().attach(session, key)
    if ds is not None:
        if job is not None:
            hub.detach(session, job=job)
        return ds, None
    if job is None or (job.name, job.digest) != key:
        job, _ = hub.parse(session, arff_bytes, xml_bytes, name, check=_check_upload(name), digest=key[1])
        if job.begin():  # its slot is free: begun now, not at the hub's next look
            job.wait(QUICK_PARSE_S)  # a small file is read within it: shown by this very run of the page
    if job.status == "done":
        ds = uploads().keep(session, key, job.dataset)
        hub.detach(session, job=job)  # collected: the upload cache keeps it now
        return ds, None
    if job.status == "error":
        raise ValueError(job.error or "the upload could not be read")
    return None, job


def upload_job():
    """The parse job this session holds (waiting, parsing, or ended and not yet collected), or None."""
    from .serving.run_hub import PARSE

    return run_hub().held(session_id(), PARSE)


def cancel_upload_parse(job=None) -> None:
    """This session no longer waits for its upload's parse (``job``: only that one): a parse nobody else waits for is
    stopped at once (a waiting one never starts, a running one's process is killed); the hub's slot frees."""
    from .serving.run_hub import PARSE

    run_hub().detach(session_id(), job=job, lane=PARSE)


def parse_status_text(job, slots: int) -> str:
    """What the page says of an upload's parse job under way: its place in the server's queue (said as a run's is),
    or how long it has been parsing; ``slots``: the jobs the server computes at once.

    >>> class Job:
    ...     name, status, timeout_s = "tiny", "running", 120.0
    ...     def queue_position(self): return 0
    ...     def seconds(self): return 3.2
    >>> parse_status_text(Job(), 2)
    'reading tiny in a process of its own: 3 s so far (the server stops a parse after 120 s)'
    >>> Job.queue_position = lambda self: 2
    >>> parse_status_text(Job(), 1)
    'waiting: 2nd in line · the server computes 1 job (runs, sweeps, upload parses) at once; this parse starts when one ends'
    """
    from .serving.run_hub import queue_text

    place = job.queue_position()
    if place:
        return queue_text(place, slots, "parse")
    if job.status != "running":
        return f"starting to read {job.name}…"
    limit = LIMITS.upload_parse_timeout_s if job.timeout_s is None else job.timeout_s
    return (f"reading {job.name} in a process of its own: {job.seconds():.0f} s so far (the server stops a parse "
            f"after {limit:g} s)")


def digest(*parts: bytes | None) -> str:
    """The digest of an upload's files (:func:`dashboard.serving.uploads.upload_digest`)."""
    from .serving.uploads import upload_digest

    return upload_digest(*parts)


@st.cache_data(max_entries=LIMITS.stream_cache_entries, ttl=LIMITS.stream_cache_ttl_s,
               show_spinner="Building the stream…")
def _build_stream(spec: StreamSpec):
    if spec.dataset == "synthetic":
        return spec.build_stream()
    return spec.build_stream(dataset=load_dataset(spec.dataset))


def stream_spec(cfg: RunConfig, upload=None) -> StreamSpec:
    """The stream part of ``cfg`` (an upload's: named after the uploaded dataset): the cache key."""
    spec = cfg.stream
    if spec.dataset == UPLOAD and upload is not None:
        spec = dataclasses.replace(spec, dataset=upload[0].name)
    return spec


def build_stream(cfg: RunConfig, upload=None):
    """The stream of ``cfg`` (cached by its stream spec); ``upload``: (Dataset, digest) for uploads. The whole
    run's memory is checked first (``RunConfig.check_budget``, with the data's own sizes): refused before
    the stream is made."""
    if cfg.dataset == UPLOAD:
        if upload is None:
            raise ValueError("upload an ARFF file first")
        dataset, dig = upload
        cfg.check_budget(dataset=dataset)
        spec = stream_spec(cfg, upload)  # kept with the upload, released with it (not in st.cache_data)
        return uploads().stream(dataset.name, dig, json.dumps(dataclasses.asdict(spec), sort_keys=True, default=str),
                                lambda: spec.build_stream(dataset=dataset))
    cfg.check_budget(dataset=None if cfg.dataset == "synthetic" else load_dataset(cfg.dataset))
    return _build_stream(cfg.stream)


def sweep_progress_text(done: int, total: int, n_points: int, one_by_one: bool,
                        remaining_s: float | None = None) -> str:
    """The sweep bar's text, counting grid points (never chunks), and the time left at the pace so far.

    ``one_by_one``: each grid point is a run of its own (``done`` of ``total`` = grid points);
    otherwise every grid point advances together through the stream (``done`` of ``total`` steps).

    >>> sweep_progress_text(3, 12, 12, True, 41.0)
    'Sweeping β × γ: grid point 3 of 12 done · about 41 s left'
    """
    from .serving.live_run import duration_text

    left = "" if remaining_s is None or done >= total else f" · about {duration_text(remaining_s)} left"
    if one_by_one:
        return f"Sweeping β × γ: grid point {done} of {n_points} done{left}"
    return f"Sweeping β × γ: {n_points} grid points together, {100 * done / total:.0f} % of the stream{left}"


def sweep_waiting_text(place: int, n_slots: int, n_points: int) -> str:
    """The sweep bar's text before its first step: its ``place`` in the server's queue (1: first in line), or
    (0) that its stream is being built; ``n_slots``: the jobs the server computes at once.

    >>> sweep_waiting_text(3, 2, 40)
    'waiting: 3rd in line · the server computes 2 jobs (runs, sweeps, upload parses) at once; this sweep starts when one ends'
    """
    from .serving.run_hub import queue_text

    if place:
        return queue_text(place, n_slots, "sweep")
    return f"starting · building the stream for {n_points} grid points…"


def sweep_config(cfg: RunConfig, params: str) -> RunConfig:
    """What a sweep of ``cfg`` computes with: its stream and ``params`` (the model parameters the sweep page
    passes, as JSON: every one but the swept beta and gamma), so that settings the sweep does not read (the
    sidebar's variants, beta and gamma) make no other sweep."""
    return RunConfig(**dataclasses.asdict(cfg.stream), **json.loads(params))


def check_sweep_budget(cfg: RunConfig, stream, n_points: int) -> None:
    """The whole sweep with its grid of ``n_points`` within the memory budget (``RunConfig.check_budget``, with
    the stream's own sizes), before any grid point is solved: a ValueError naming what to change."""
    X = stream.X
    cfg.check_budget(n_features=X.shape[1], n_labels=stream.Y_true.shape[1], n_available=stream.n_instances,
                     sweep_points=n_points, features_bytes=(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes)
                     if hasattr(X, "indptr") else None)


def sweep_stream(cfg: RunConfig, upload, params: str, n_points: int):
    """The stream of a sweep of ``cfg`` (:func:`build_stream`, cached), its grid of ``n_points`` with ``params``
    (:func:`sweep_config`) checked against the budget first."""
    stream = build_stream(cfg, upload)
    check_sweep_budget(sweep_config(cfg, params), stream, n_points)
    return stream


def start_sweep(cfg: RunConfig, upload, params: str, variant: str, betas: tuple, gammas: tuple):
    """This session's sweep, a job of the server's :func:`run_hub` (queued with the runs, computed in a process of
    its own, replayed or followed when another visitor asked for the same): ``(LiveRun, role)``. Each step the
    job receives is a :class:`~ncld_core.eval.sweep.SweepStep` (grid points, or chunks of all points together);
    the last one carries the table. The session's previous job (a run, or a sweep) is stopped unless followed."""
    from ncld_core.eval.sweep import SweepJob

    job = SweepJob(sweep_config(cfg, params), variant, tuple(betas), tuple(gammas))
    n_points = job.n_points
    return run_hub().start(session_id(), job, extra=upload_identity(upload),
                           build_stream=lambda: sweep_stream(cfg, upload, params, n_points))


@st.cache_resource(show_spinner=False)
def warm_up() -> bool:
    """Exercise the run and figure code once per server process, so the first Run starts fast.

    Read-only and shared: it only imports modules and fills their lazy caches (plotly's
    validators, scipy's LAPACK wrappers), starts the fork server of the runs' processes
    (``dashboard.serving.chunk_process``), puts the embedded default's stream in the stream cache (the
    first Run of the default settings then finds it built) and reads the code's fingerprint once (each run's
    key holds it: :func:`ncld_core.code_version.code_fingerprint`, then read from its files' sizes and times);
    nothing of a visitor is kept. The first page of a fresh server waits for it, so that its first Run does
    not. First it removes the upload parse
    folders a killed server left in the temporary folder
    (``dashboard.serving.bounded_parse.remove_orphaned_folders``; a running server's stay).
    """
    from dashboard.serving.bounded_parse import remove_orphaned_folders

    remove_orphaned_folders()
    try:
        from dashboard.serving.chunk_process import start_fork_server

        start_fork_server()
        from ncld_core.model.detector import DETECTORS

        from . import panels

        cfg = RunConfig(n_instances=60, chunk_size=20, n_features=3, n_labels=5, n_neighbors=3,
                        schedule="growth@30", models=["ELM-O"],
                        monitors=[d for d in DETECTORS if d != RunConfig().detector][:1])
        stream = cfg.build_stream()
        chunks = list(cfg.runner().iter_run(stream))
        shown = panels.PanelData(chunks, ["ELM-O", "all-negative"], [(30, "growth")], 20, 3,
                                 rho_pos=stream.rho_pos, rho_neg=stream.rho_neg)
        for fig in panels.figures(shown).values():  # every panel of the Live run
            fig.to_json()
        _build_stream(RunConfig().stream)
        from ncld_core.code_version import code_fingerprint

        code_fingerprint()
    except Exception:  # noqa: BLE001 - a failed warm-up only costs time later
        return False
    return True


@st.cache_resource(show_spinner=False)
def time_calibration():
    """This server's :class:`~ncld_core.model.chunk_time.TimeCalibration`, shared by its visitors: the speed the
    time estimates divide by, re-measured from every finished run's chunk times (not one timing at warm-up)."""
    from ncld_core.model.chunk_time import TimeCalibration

    return TimeCalibration()



@st.cache_resource(show_spinner=False)
def sweep_calibration():
    """This server's measured / estimated seconds of the sweeps it computed (a
    :class:`~ncld_core.model.chunk_time.TimeCalibration` fed whole sweeps): the range the sweep page says."""
    from ncld_core.model.chunk_time import TimeCalibration

    return TimeCalibration()


def session_id() -> str:
    """This visitor's Streamlit session (``"local"`` outside a script run)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "local"


def session_alive(session: str) -> bool:
    """Whether the session's browser is still connected (Streamlit ends a session when its browser goes away);
    True where there is no server (a script run in tests)."""
    from streamlit.runtime import Runtime

    return not Runtime.exists() or Runtime.instance().is_active_session(session)


def close_session(session: str) -> None:
    """Close a session found gone (its upload released): Streamlit drops its stored state and its uploaded files.
    Streamlit keeps a disconnected session for a reconnect (``server.disconnectedSessionTTL``) and, once that
    expires, never removes its uploaded files; closing it is the public, thread-safe
    ``Runtime.clear_user_info_for_session`` (for a session that is no longer connected: closed on the event loop,
    never resumed). Nothing where there is no server."""
    from streamlit.runtime import Runtime

    if Runtime.exists() and not session_alive(session):
        Runtime.instance().clear_user_info_for_session(session)


@st.cache_resource(show_spinner=False)
def uploads():
    """The server's parsed uploads (:class:`dashboard.serving.uploads.UploadCache`), shared by every visitor: an upload
    is parsed once, kept with its streams while a session shows it, and released (with that session's Streamlit
    state and files: :func:`close_session`) when the last is gone for ``upload_grace_s``, or after
    ``parse_cache_ttl_s`` unused."""
    from .serving.uploads import UploadCache

    return UploadCache(LIMITS, session_alive=session_alive, forget=close_session, watch_s=LIMITS.session_check_s)


@st.cache_resource(show_spinner=False)
def run_hub():
    """The server's runs, sweeps and upload parses, shared by every visitor (:class:`dashboard.serving.run_hub.RunHub`):
    the queue, the one run (and one parse) per session, the closed sessions' jobs stopped, each computed once; a run
    with the models its one-glance strip needs beside its own, where the memory budget allows (``dashboard.glance``)."""
    from .serving.run_hub import RunHub

    return RunHub(LIMITS, session_alive=session_alive, watch_s=LIMITS.session_check_s, beside=True)
