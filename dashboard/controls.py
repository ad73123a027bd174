"""The sidebar controls: one widget per RunConfig field, inline validation, presets, the link's notes.

State model
-----------
* ``st.session_state["cfg_values"]`` (:data:`dashboard.link.CANON`) holds the canonical RunConfig fields
  (a plain dict). It survives page switches and widgets that are not drawn (Streamlit drops a widget's
  state when it is not rendered in a run). A link fills it on a session's first run (:mod:`dashboard.link`).
* Every widget has key ``w_<field>_<version>`` (:func:`wkey`); before it is drawn its key is seeded from the
  canonical value if missing, and after it is drawn the canonical value is updated.
* A preset replaces the canonical values and bumps the controls' version (``editor_ver``), so every widget,
  the flip rate table (a data editor) and the drift schedule's rows (a kind and a position per change point)
  included, is drawn afresh under a new key, seeded from the canonical values; values a browser sends for the
  keys of before (a click while the preset still draws) name no widget.
* Errors come from :func:`dashboard.checks.check` (``RunConfig.errors`` with the data's sizes, the memory
  budget) and are written into an ``st.empty`` slot right under the control they concern, after every
  control is drawn.

The sidebar is drawn group by group (:func:`render_sidebar`): the link's notes and its pending pinned run, then
data, noise, drift (the change points and their detection), model and run (how the stream is cut and seeded),
then the checks. Labels are plain words; a setting's symbol (β, ρ₊, N, ...) is in its help.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from ncld_core.config import PRESETS, SYNTHETIC_DEFAULT_LENGTH, RunConfig
from ncld_core.data import label_problems
from ncld_core.eval.baselines import BASELINES
from ncld_core.eval.runner import RATE_MODES
from ncld_core.eval.variants import ELM_VARIANTS, ORACLES
from ncld_core.model.decision import DECISIONS
from ncld_core.model.detector import DETECTORS
from ncld_core.stream.schedule import ALL_KINDS, MAX_SCHEDULE_POINTS, NOISE_KIND
from ncld_core.stream.noise_families import NOISE_FAMILIES

from . import checks, compare, data, link, upload_view
from .figures import schedule_figure
from .svg import svg_of
from .labels import LABELS, label_of, settings_text, worded
from .link import CANON, FIELDS
from .teaching import PRESET_NOTES, detector_label
from .ui import guarded, md_escape

__all__ = ["Context", "render_sidebar", "set_config", "set_values", "label_of", "worded", "start_failure", "MODEL_OPTIONS",
           "schedule_rows", "schedule_text"]

#: Every model a run can put side by side: the ELM-NCLD variants, the clean-label oracle, the paper's baselines.
MODEL_OPTIONS = [*ELM_VARIANTS, *ORACLES, *BASELINES]


@dataclass
class Context:
    """What the pages need: the configuration, its errors, the loaded upload and the data's facts."""

    cfg: RunConfig
    errors: dict
    upload: tuple | None = None  # (Dataset, digest)
    facts: data.DatasetFacts | None = None
    cost: object = None  # ncld_core.model.cost.CostEstimate of the settings (None: the data's size is unknown)

    @property
    def ok(self) -> bool:
        return not self.errors


def wkey(name: str, state=None) -> str:
    """The widget key of control ``name`` in this version of the controls (``editor_ver``, of ``state``: by
    default this session's).

    A preset or a link bumps the version, so a click that reaches the server with the widgets' values from
    before the preset (a Run pressed while the preset still draws) finds no widget of the new version to
    overwrite: the run gets the preset's settings, not a mix of the preset's and the stale ones."""
    state = st.session_state if state is None else state
    return f"w_{name}_{state['editor_ver'] if 'editor_ver' in state else 0}"


# --------------------------------------------------------------------------- state
def init_state():
    """First run of a session: canonical values from the URL (or the defaults)."""
    if link.init_state():
        st.session_state["editor_ver"] = 0


def set_config(cfg: RunConfig):
    """Replace every control's value (presets, tests)."""
    ss = st.session_state
    ss[CANON] = cfg.to_dict()
    ss["editor_ver"] = ss.get("editor_ver", 0) + 1  # every widget afresh, under new keys (wkey)


def set_values(changes: dict):
    """Some settings changed from outside the sidebar (the knob row above the Live run's panels,
    :mod:`dashboard.knob_row`): the canonical values take them, and so do the sidebar's controls of this version,
    which are drawn next with them. Called from a widget's callback, before the script run draws any control.

    A number goes into its box as a float (every box holds one, :class:`_Form`); a new schedule has its change
    points' rows drawn afresh from it (:func:`_schedule_row_ids`)."""
    ss = st.session_state
    ss[CANON] = {**ss[CANON], **changes}
    for name, value in changes.items():
        if name == "schedule":
            ss.pop(f"schedule_rows_{ss.get('editor_ver', 0)}", None)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            ss[wkey(name)] = float(value)
        else:
            ss[wkey(name)] = value


def _apply_preset():
    name = st.session_state.get("preset_pick")
    if name in PRESETS:
        set_config(PRESETS[name])
        st.session_state["preset_applied"] = name


# --------------------------------------------------------------------------- widget helpers
class _Form:
    """One drawing of the sidebar: the values as the widgets leave them, the error slots, what the controls
    found themselves (``extra``), the chosen data (``facts``, ``upload``)."""

    def __init__(self):
        self.vals = dict(st.session_state[CANON])
        self.slots = {}
        self.extra = {}
        self.facts = data.DatasetFacts("synthetic")
        self.upload = None  # (Dataset, digest)
        self.empty = []  # number boxes left empty that need a number
        self.fractional = {}  # integer boxes holding a number that is not whole: name -> the number
        self.drawn = set()  # the number boxes drawn in this run

    def seed(self, name, value=None):
        k = wkey(name)
        if k not in st.session_state:
            st.session_state[k] = self.vals[name] if value is None else value
        return k

    def slot(self, name, container=None):
        self.slots[name] = (container or st).empty()

    def number(self, name, label, *, integer=False, step=None, fmt=None, help=None, allow_none=False,
               placeholder=None):
        v = self.vals[name]
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            v = float(v)  # every box holds a float (whole numbers are read back as int below)
        k = self.seed(name, v)
        step = float(step if step is not None else (1 if integer else 0.01))
        # every box can be emptied (value=None): an emptied box that needs a number says so under it; with
        # value="min" Streamlit put 0 in it instead, which read as typed ("got 0", or a valid 0 run silently).
        # An integer's box holds a float too: the browser's integer box read "1e3" as 1 and 250.5 as 250, silently;
        # a float box reads 1000 and 250.5, and a number that is not whole is said under it.
        out = st.number_input(label, key=k, step=step, format=fmt or ("%.15g" if integer else "%g"), help=help,
                              value=None, placeholder=placeholder if allow_none else "type a number")
        if integer and out is not None:
            if float(out).is_integer():
                out = int(out)
            else:
                self.fractional[name] = out
                out = None  # (what reads the settings before the checks gets no fraction: as if emptied)
        elif out is None and not allow_none:
            self.empty.append(name)
        self.drawn.add(name)
        self.vals[name] = out
        self.slot(name)
        return out


#: The rate table's precision: rates are drawn, stored, shown and edited to 4 decimals.
RATE_DECIMALS = 4
RATE_STEP = 10.0 ** -RATE_DECIMALS
RATE_FORMAT = f"%.{RATE_DECIMALS}f"


def _rates_base(vals, n_labels, label_names):
    pos, neg = list(vals.get("rho_pos") or []), list(vals.get("rho_neg") or [])
    if n_labels is None:
        n_labels = len(pos) or 1
    # a cell emptied in the table is None: shown empty again (flagged under the table), not redrawn; a link's
    # cells that are no numbers never get here (dashboard.link)
    if len(pos) != n_labels or len(neg) != n_labels:
        from ncld_core.stream.noise import draw_flip_rates

        low, high = vals.get("rho_low", 0.2), vals.get("rho_high", 0.4)
        try:
            p, n = draw_flip_rates(n_labels, low, high, random_state=vals.get("shuffle_seed", 0))
            pos, neg = p.tolist(), n.tolist()
        except ValueError:
            pos, neg = [0.3] * n_labels, [0.3] * n_labels
    names = list(label_names) if len(label_names) == n_labels else [f"label_{j}" for j in range(n_labels)]
    return pd.DataFrame({"label": names, "rho_pos": [None if x is None else round(x, RATE_DECIMALS) for x in pos],
                         "rho_neg": [None if x is None else round(x, RATE_DECIMALS) for x in neg]})


def schedule_rows(text: str) -> pd.DataFrame:
    """The schedule string as editor rows (kind, position, factor: a noise change's, else None), in the text's
    order; unparsable text gives no rows."""
    from ncld_core.stream.schedule import DriftSchedule

    rows = []
    if text and text.strip():
        try:
            for p in DriftSchedule.parse(text).changes:
                factor = getattr(p, "factor", None)
                rows.append({"kind": NOISE_KIND if factor is not None else p.kind, "position": p.position,
                             "factor": factor})
        except ValueError:
            rows = []
    return pd.DataFrame(rows, columns=["kind", "position", "factor"]).astype({"position": "Int64",
                                                                            "factor": "Float64"})


def schedule_text(df: pd.DataFrame) -> tuple[str, str | None]:
    """Editor rows -> schedule string (sorted by position, as the schedule prints itself) and an error for
    incomplete rows."""
    from ncld_core.stream.schedule import DriftSchedule

    parts, error = [], None
    rows = []
    for i, row in enumerate(df.itertuples(index=False), start=1):
        kind = row.kind if isinstance(row.kind, str) and row.kind else None
        pos = None if pd.isna(row.position) else int(row.position)
        factor = getattr(row, "factor", None)
        factor = None if factor is None or pd.isna(factor) else float(factor)
        if kind is None and pos is None:
            continue
        if kind is None:
            error = f"row {i}: choose {', '.join(ALL_KINDS[:-1])} or {ALL_KINDS[-1]}"
            continue
        if kind == NOISE_KIND and factor is None:
            error = error or f"row {i}: a noise change needs its factor (the flip rates times it)"
            continue
        rows.append((pos, kind, factor))
    if any(p is None for p, _, _ in rows) and len(rows) > 1:
        error = error or "only a single point may omit its position (the paper's form)"
    rows.sort(key=lambda r: (r[0] is not None, r[0] or 0, r[1] == NOISE_KIND))
    for pos, kind, factor in rows:
        if kind == NOISE_KIND:
            parts.append(f"{kind}@{pos}x{factor!r}" if pos is not None else kind)
        else:
            parts.append(kind if pos is None else f"{kind}@{pos}")
    text = ", ".join(parts)
    try:  # the schedule's own text: a configuration equals the one its link gives
        text = str(DriftSchedule.parse(text)) if text else text
    except ValueError:
        pass
    return text, error


def _editor(name: str, make_base, **kwargs):
    """A data editor reset by bumping ``editor_ver``; re-seeded from the canonical values when dropped."""
    ss = st.session_state
    key = wkey(name)
    base_key = f"{name}_base"
    if key not in ss or base_key not in ss:
        ss[base_key] = make_base()
    return st.data_editor(ss[base_key], key=key, **kwargs)




# --------------------------------------------------------------------------- the sidebar, section by section
def render_sidebar() -> Context:
    init_state()
    f = _Form()
    preset_note = _header()
    _data_section(f)
    _noise_section(f)
    schedule_chart = _schedule_section(f)
    _detection_section(f)
    _models_section(f)
    _run_section(f)
    ctx = _validate(f, schedule_chart)
    applied = st.session_state.get("preset_applied")
    if applied in PRESETS:
        preset_note.caption(f"**{applied}**{'' if ctx.cfg == PRESETS[applied] else ' (modified)'} — "
                            f"{PRESET_NOTES.get(applied, '')}")
    return ctx


def _header():
    """Title, presets, what the link had that was not applied and its pinned run; the preset note's slot."""
    st.markdown("### ncld · ELM-NCLD lab")
    st.pills("Presets", list(PRESETS), key="preset_pick", on_change=_apply_preset,
             help="Fill every control with a ready-made experiment.")
    preset_note = st.empty()
    if st.session_state.get(link.URL_ERROR):
        st.error(md_escape(st.session_state[link.URL_ERROR]), icon=":material/link_off:")
    _pending_baseline()
    return preset_note


PENDING_ERROR = "pending_baseline_error"


def _pending_baseline():
    """The link's pinned run: said, and re-run (or loaded into the controls) on a click only."""
    ss = st.session_state
    cfg = link.pending()
    if ss.get(PENDING_ERROR):
        st.error(md_escape(ss[PENDING_ERROR]), icon=":material/error:")
    if cfg is None:
        return
    try:
        _, cost = checks.check(cfg, data.resolve(cfg.dataset))
    except ValueError as exc:  # its dataset is gone from the data folders since the link was read
        link.set_baseline(None)
        ss[PENDING_ERROR] = f"The link's pinned baseline cannot be re-run: {exc}"
        st.error(md_escape(ss[PENDING_ERROR]), icon=":material/error:")
        return
    seconds = None if cost is None else data.time_calibration().seconds_total(cost)
    quick = seconds is not None and seconds <= compare.REPLAY_LIMIT_S
    with st.container(border=True, key="pending_baseline"):
        st.markdown(f"**The link carries a pinned baseline run**, not run yet: {md_escape(settings_text(cfg))}.")
        if quick:
            st.caption(f"Re-running it takes about {seconds:.0f} s; its curves are then drawn dimmed under "
                       "your runs.")
        else:
            st.caption(f"Re-running it would take longer than {compare.REPLAY_LIMIT_S} s: load its settings "
                       "and press Run (Stop stays at hand), then pin the run.")
        c1, c2, c3 = st.columns(3)
        rerun = c1.button("Re-run it", key="pending_rerun", disabled=not quick, width="stretch")
        load = c2.button("Load it", key="pending_load", width="stretch", help="Its settings into the controls")
        drop = c3.button("Dismiss", key="pending_drop", width="stretch")
    if rerun:
        with guarded("re-running the link's pinned baseline"):
            ss[PENDING_ERROR] = compare.run_baseline(cfg)
            st.rerun()
    if load or drop:
        link.set_baseline(None)
        ss.pop(PENDING_ERROR, None)
        if load:
            set_config(cfg)
        st.rerun()


def _data_section(f: _Form):
    st.markdown("#### Data")
    listing, list_error = data.list_datasets()
    options = ["synthetic", *listing["name"].tolist(), data.UPLOAD]
    current = f.vals["dataset"]
    if current not in options:
        options.insert(1, current)  # listed when chosen, gone since: kept visible, flagged below
    labels = {"synthetic": "synthetic generator", data.UPLOAD: "upload ARFF (+ XML)…"}
    f.seed("dataset")
    dataset = st.selectbox("Dataset", options, key=wkey("dataset"), format_func=lambda o: labels.get(o, o),
                           help="The embedded synthetic generator, a benchmark found in data/ or "
                                "$NCLD_DATA_DIR, or your own MULAN / MEKA file.")
    f.vals["dataset"] = dataset
    f.slot("dataset")
    if list_error:
        st.caption(md_escape(list_error))
    if dataset == data.UPLOAD:
        _upload_controls(f)
        return
    data.cancel_upload_parse()  # the upload is no longer the data: its parse (if under way) is not waited for
    if dataset == "synthetic":
        _synthetic_controls(f)
    else:
        _listed_dataset(f, dataset)


def _synthetic_controls(f: _Form):
    c1, c2 = st.columns(2)
    with c1:
        f.number("n_features", "feature count", integer=True, step=1, help="d, the number of features of an instance.")
    with c2:
        f.number("n_labels", "label count", integer=True, step=1, help="q, the number of labels.")
    c1, c2 = st.columns(2)
    with c1:
        f.number("cardinality", "labels per instance", step=0.1,
                 help="The label cardinality: expected true labels per instance (without a drift schedule; with "
                      "one, the single-label regime has 1 and the multi-label one 3).")
    with c2:
        f.number("label_correlation", "label correlation", step=0.05)


def _upload_controls(f: _Form):
    arff = st.file_uploader("ARFF file (MULAN or MEKA)", type=["arff"], key="w_upload_arff")
    xml = st.file_uploader("MULAN label XML (optional for MEKA)", type=["xml"], key="w_upload_xml")
    if arff is None:
        data.cancel_upload_parse()  # a parse of a file since removed is not waited for
        f.extra["dataset"] = data.NO_UPLOAD
        return
    arff_bytes = arff.getvalue()
    xml_bytes = xml.getvalue() if xml is not None else None
    stem = arff.name.rsplit(".", 1)[0] or "upload"
    dig = data.digest(arff_bytes, xml_bytes)
    try:  # a job of the server's queue: its place and Cancel are drawn here until it is parsed
        ds = upload_view.read(arff_bytes, xml_bytes, stem, dig)
    except ValueError as exc:
        f.extra["dataset"] = str(exc)
        return
    if ds is None:
        f.extra["dataset"] = upload_view.CANCELLED if upload_view.cancelled() else upload_view.NOT_READ
        return
    refused, warned = label_problems(ds)
    if refused:
        f.extra["dataset"] = f"{arff.name}: {refused}"
        return
    if warned:
        st.warning(md_escape(warned), icon=":material/warning:")
    f.upload = (ds, dig)
    f.facts = data.resolve(data.UPLOAD, f.upload)
    # st.text: the name comes from the user's file, shown verbatim (no markdown / HTML).
    st.text(f"{ds.name}: {ds.n_instances} instances, {ds.n_features} features, "
            f"{ds.n_labels} labels, cardinality {ds.cardinality:.3f}")
    st.caption("Uploaded data cannot travel in a link: the URL keeps every other setting.")


def _listed_dataset(f: _Form, dataset: str):
    try:
        f.facts = data.resolve(dataset)
    except ValueError as exc:
        f.facts = data.DatasetFacts(dataset)
        f.extra["dataset"] = str(exc)
        return
    st.caption(f.facts.note)
    # Read now, while the visitor sets up the run, not after Run: a first read parses the ARFF
    # (docs/performance.md section 5c times it); Run then starts from the arrays.
    try:
        with st.spinner(f"Reading {dataset}…"):
            data.load_dataset(dataset)
    except ValueError as exc:
        f.extra["dataset"] = str(exc)


def _run_section(f: _Form):
    """How the stream is cut and run: chunk size, length, the stream's and the models' seeds."""
    st.markdown("#### Run")
    c1, c2 = st.columns(2)
    with c1:
        f.number("chunk_size", "chunk size", integer=True, step=50,
                 help="N, the instances per chunk (the paper: 500). Each chunk is scored, then learned.")
    with c2:
        default_n = SYNTHETIC_DEFAULT_LENGTH if f.vals["dataset"] == "synthetic" else f.facts.n_instances
        f.number("n_instances", "stream length", integer=True, step=500, allow_none=True,
                 placeholder=f"all ({default_n})" if default_n else "all",
                 help=f"Instances in the stream; empty = the whole dataset (synthetic: {SYNTHETIC_DEFAULT_LENGTH}).")
    c1, c2 = st.columns(2)
    with c1:
        f.number("shuffle_seed", "stream seed", integer=True, step=1,
                 help="Seeds the order of the instances, the drawn flip rates and the flips.")
    with c2:
        f.number("seed", "model seed", integer=True, step=1, help="Seeds the models' hidden layers.")


def _noise_section(f: _Form):
    st.markdown("#### Noise")
    f.seed("noise")
    families = [name for name in NOISE_FAMILIES if name != "paper"]  # "paper" is the range 0.2-0.4
    noise = st.radio("label noise", ["none", "range", "table", *families], key=wkey("noise"), horizontal=True,
                     format_func=lambda v: {"range": "range per label", "missing": "missing labels"}.get(v, v),
                     help="How labels are flipped (Eq. NR): a relevant label dropped with probability ρ₊ "
                          "(rho_pos), an irrelevant one added with ρ₋ (rho_neg). range: both rates of every label "
                          "drawn from U[low, high] (the paper: [0.2, 0.4]); table: edit them label by label; "
                          + "; ".join(f"{n}: {NOISE_FAMILIES[n].description}" for n in families) + ".")
    f.vals["noise"] = noise
    f.slot("noise")
    if noise == "range":
        c1, c2 = st.columns(2)
        with c1:
            f.number("rho_low", "lowest flip rate", step=0.05, help="rho low: the lower end of U[low, high] "
                                                                     "the rates ρ₊, ρ₋ of every label are drawn from.")
        with c2:
            f.number("rho_high", "highest flip rate", step=0.05, help="rho high: the upper end of the range of "
                                                                       "ρ₊, ρ₋ (below 0.5: a label's two rates "
                                                                       "sum below 1).")
    elif noise == "table":
        _rate_table(f)
    f.slot("rates")
    f.number("trusted_fraction", "trusted sample (share of each chunk)", step=0.005,
             help="A user checks the labels of a few instances: each row's clean labels are revealed with this "
                  "probability (0.01 = 1 % of every chunk). The variants told nothing about the noise use them "
                  "for the flip rates and the cardinality band (docs/flip-rates.md).")
    f.slot("trusted_fraction")


def _table_labels(f: _Form) -> tuple[int | None, list]:
    """The rate table's row count and label names: the dataset's (the synthetic generator's: its setting)."""
    ss = st.session_state
    dataset = f.vals["dataset"]
    if dataset == "synthetic":
        n_lab = f.vals["n_labels"] if isinstance(f.vals["n_labels"], int) else None
        if n_lab is not None and "n_labels" in RunConfig(n_labels=n_lab).errors():
            n_lab = None  # out of its range (its box says so): no table of a billion rows
    else:
        n_lab = f.facts.n_labels
    n_lab = n_lab if n_lab is not None else (len(f.vals["rho_pos"]) or None)
    names = list(f.facts.label_names)
    if not names and dataset not in ("synthetic", data.UPLOAD) and "dataset" not in f.extra:
        try:  # cached: the file is read once per server
            names = list(data.load_dataset(dataset).label_names)
        except ValueError:
            names = []
    have = len(f.vals["rho_pos"] or [])
    if n_lab is not None and have and (have != n_lab or len(f.vals["rho_neg"] or []) != n_lab):
        # Another dataset (or a link's table of another size): the table follows the dataset.
        f.vals["rho_pos"], f.vals["rho_neg"] = [], []
        ss["editor_ver"] = ss.get("editor_ver", 0) + 1
        ss.pop("rates_base", None)
        ss["rates_redrawn"] = (f"The flip-rate table had {have} rows for the {n_lab} labels of this dataset: "
                               "it was drawn afresh from the lowest / highest flip rate (seeded by the stream seed).")
        # The version is in every control's key (wkey): the controls drawn above this one carry the old one, so
        # a value typed into them next would name no widget. Drawn afresh now, with what they hold.
        ss[CANON] = dict(f.vals)
        st.rerun()
    return n_lab, names


def _rate_table(f: _Form):
    ss = st.session_state
    n_lab, names = _table_labels(f)
    if n_lab is None:
        st.caption("The table needs the dataset's label count.")
        return
    edited = _editor(
        "rates", lambda: _rates_base(f.vals, n_lab, names),
        hide_index=True, width="stretch", height=min(38 + 35 * n_lab, 260), num_rows="fixed",
        column_config={
            "label": st.column_config.TextColumn("label", disabled=True),
            # rates are used to 4 decimals (_rates_base): shown and edited to 4 decimals
            "rho_pos": st.column_config.NumberColumn("drop rate", min_value=0.0, max_value=0.9999,
                                                     step=RATE_STEP, format=RATE_FORMAT,
                                                     help="ρ₊ = P(y=-1 | g=+1): a relevant label dropped"),
            "rho_neg": st.column_config.NumberColumn("add rate", min_value=0.0, max_value=0.9999,
                                                     step=RATE_STEP, format=RATE_FORMAT,
                                                     help="ρ₋ = P(y=+1 | g=-1): an irrelevant label added"),
        },
    )
    if ss.get("rates_redrawn"):  # said once, on the rerun that redrew the table
        st.info(md_escape(ss.pop("rates_redrawn")), icon=":material/refresh:")
    f.vals["rho_pos"] = [None if pd.isna(v) else float(v) for v in edited["rho_pos"]]
    f.vals["rho_neg"] = [None if pd.isna(v) else float(v) for v in edited["rho_neg"]]
    if st.button("Draw the table from the range", help="Fresh rates from U[lowest, highest flip rate], seeded "
                                                       "by the stream seed."):
        f.vals["rho_pos"], f.vals["rho_neg"] = [], []
        ss[CANON] = dict(f.vals)
        ss["editor_ver"] = ss.get("editor_ver", 0) + 1
        st.rerun()


#: The remove buttons of the schedule's rows show their icon only; their name stays for screen readers.
SCHEDULE_CSS = """<style>
[class*="st-key-sched_del_"] button p { position: absolute; width: 1px; height: 1px; overflow: hidden;
  clip-path: inset(50%); white-space: nowrap; }
</style>"""


def _schedule_keys(ver: int, rid: int) -> tuple[str, str]:
    """The widget keys of change point ``rid`` (its kind, its position) of the controls' version ``ver``."""
    return f"w_sched_kind_{ver}_{rid}", f"w_sched_pos_{ver}_{rid}"


def _factor_key(ver: int, rid: int) -> str:
    """The widget key of a noise change's factor (row ``rid`` of the controls' version ``ver``)."""
    return f"w_sched_factor_{ver}_{rid}"


def _schedule_row_ids(schedule: str) -> list[int]:
    """The change points' rows (ids, in order) of this version of the controls, seeded from ``schedule`` (a preset
    or a link bumps the version: its rows start afresh from the canonical schedule), and seeded again from it when
    Streamlit has dropped a row's widget values, as every other control is (:meth:`_Form.seed`, :func:`_editor`):
    it drops those a client never sent back (a websocket client's, after the live part asks for a rerun), and the
    rows would otherwise read as their defaults, a schedule other than the run's."""
    ss = st.session_state
    ver = ss.get("editor_ver", 0)
    ids_key = f"schedule_rows_{ver}"
    dropped = ids_key in ss and any(key not in ss for rid in ss[ids_key] for key in _schedule_keys(ver, rid))
    if ids_key not in ss or dropped:
        for key in [k for k in ss if k.startswith(("schedule_rows_", "schedule_next_"))]:
            del ss[key]  # an earlier version's rows (their widgets' keys Streamlit drops once not drawn)
        rows = schedule_rows(schedule)
        ss[ids_key] = list(range(len(rows)))
        ss[f"schedule_next_{ver}"] = len(rows)
        for rid, row in enumerate(rows.itertuples(index=False)):
            kind_key, pos_key = _schedule_keys(ver, rid)
            ss[kind_key] = row.kind
            ss[pos_key] = None if pd.isna(row.position) else float(row.position)
            if not pd.isna(row.factor):
                ss[_factor_key(ver, rid)] = float(row.factor)
    return ss[ids_key]


def _add_change_point(ver: int):
    ss = st.session_state
    if len(ss[f"schedule_rows_{ver}"]) >= MAX_SCHEDULE_POINTS:  # (a click on a button drawn before it was full)
        return
    rid = ss[f"schedule_next_{ver}"]
    ss[f"schedule_next_{ver}"] = rid + 1
    ss[f"schedule_rows_{ver}"] = [*ss[f"schedule_rows_{ver}"], rid]
    kind_key, pos_key = _schedule_keys(ver, rid)
    ss[kind_key], ss[pos_key] = ALL_KINDS[0], None


def _remove_change_point(ver: int, rid: int):
    ss = st.session_state
    ss[f"schedule_rows_{ver}"] = [r for r in ss[f"schedule_rows_{ver}"] if r != rid]
    for key in (*_schedule_keys(ver, rid), _factor_key(ver, rid)):
        ss.pop(key, None)


def _position_error(position: float) -> str | None:
    """What is wrong with a change point's position typed into its box ("must ..."), or None."""
    if not float(position).is_integer():
        return f"must be a whole number, got {position:g}"
    if position < 1:
        return f"must be at least 1, got {position:g}"
    if position > link.LARGEST_BOX_INTEGER:
        return f"must be at most {link.LARGEST_BOX_INTEGER:,}"
    return None


def _schedule_row(ver: int, i: int, rid: int) -> tuple[dict, str | None]:
    """Change ``i`` (row ``rid``): its kind, its position, a noise change's factor, its remove button; the row read,
    and what is wrong with its position (None: nothing)."""
    ss = st.session_state
    kind_key, pos_key = _schedule_keys(ver, rid)
    noise = ss.get(kind_key) == NOISE_KIND  # a noise change's row has a box for its factor
    if noise:
        c1, c2, c4, c3 = st.columns([6, 5, 4, 2], vertical_alignment="center", gap="small")
    else:
        c1, c2, c3 = st.columns([8, 6, 2], vertical_alignment="center", gap="small")
    kind = c1.selectbox(f"change {i}", list(ALL_KINDS), key=kind_key, label_visibility="collapsed",
                        help="growth: to multi-label; reduction: to single-label; shift: other labels relevant, "
                             "same cardinality; noise: every flip rate times a factor from there on (the models are "
                             "still told the old rates)")
    # a float box, as the integer settings' (_Form.number): "1e3" reads 1000, a fraction is said. No minimum: the
    # browser keeps a number below it to itself, and the error under the box would name the one before.
    position = c2.number_input(f"at instance (change {i})", step=1.0, format="%.15g", value=None,
                               key=pos_key, label_visibility="collapsed", placeholder="paper's form")
    bad = None
    if position is not None:
        wrong = _position_error(position)
        if wrong:
            bad = f"change {i}: the instance {wrong}"
        else:
            position = int(position)
    factor = None
    if noise:
        factor = c4.number_input(f"× flip rates (change {i})", step=0.1, format="%g", value=None,
                                 key=_factor_key(ver, rid), label_visibility="collapsed", placeholder="× rates",
                                 help="the flip rates times this from the change on: 0 makes the labels clean, "
                                      "1 brings back the stream's own rates")
    # named for screen readers and tests, shown as its icon only (SCHEDULE_CSS)
    c3.button(f"Remove change {i}", key=f"sched_del_{ver}_{rid}", icon=":material/close:",
              on_click=_remove_change_point, args=(ver, rid))
    return {"kind": kind, "position": position, "factor": factor}, bad


def _schedule_section(f: _Form):
    """The change points, one row of plain controls each (kind, position, remove), and a button adding one;
    returns the slot of the schedule's preview (drawn once the configuration exists).

    Plain selectboxes and number inputs, not a data editor: its grid is drawn on a canvas (a screen reader and a
    keyboard reach its cells poorly) and its code was the page's largest download before the Run button."""
    ss = st.session_state
    st.markdown("#### Drift")
    st.html(SCHEDULE_CSS)
    ver = ss.get("editor_ver", 0)
    ids = _schedule_row_ids(f.vals["schedule"])
    if ids:
        st.caption("change · at instance (the new regime's first; empty on a single row: the paper's form)")
    rows, bad = [], None
    for i, rid in enumerate(ids, start=1):
        row, wrong = _schedule_row(ver, i, rid)
        rows.append(row)
        bad = bad or wrong
    full = len(ids) >= MAX_SCHEDULE_POINTS  # the schedule's bound (each row is three widgets of this sidebar)
    st.button("Add a change point", key=f"sched_add_{ver}", icon=":material/add:", on_click=_add_change_point,
              args=(ver,), disabled=full,
              help=f"a schedule has at most {MAX_SCHEDULE_POINTS} change points" if full else None)
    if bad:  # a position no schedule can hold: said, and the schedule stays the last one read (rows keep their order)
        text, sched_error = f.vals["schedule"], bad
    else:
        rows_df = pd.DataFrame(rows, columns=["kind", "position", "factor"]).astype({"position": "Int64",
                                                                                  "factor": "Float64"})
        text, sched_error = schedule_text(rows_df)
    f.vals["schedule"] = text
    if sched_error:
        f.extra["schedule"] = sched_error
    chart = st.empty()
    st.caption(f"schedule: `{text or 'none'}` · growth = to multi-label, reduction = to single-label, "
               "shift = other labels relevant (same cardinality), noise = the flip rates times a factor")
    f.slot("schedule")
    return chart


def _models_section(f: _Form):
    st.markdown("#### Model")
    f.seed("models")
    models = st.multiselect(
        "models side by side", MODEL_OPTIONS, key=wkey("models"),
        format_func=lambda m: m if m in ELM_VARIANTS else (f"{m} — oracle" if m in ORACLES else f"{m} (baseline)"),
        help="; ".join(f"{k}: {v}" for k, v in {**ELM_VARIANTS, **ORACLES}.items())
             + ". Baselines: the paper's comparison methods, run as published (not told the flip rates).")
    f.vals["models"] = list(models)
    f.seed("references")
    f.vals["references"] = st.checkbox("trivial references (all-negative, noisy-prior)", key=wkey("references"))
    f.seed("model_rates")
    f.vals["model_rates"] = st.selectbox(
        "The models are told", RATE_MODES, key=wkey("model_rates"),
        format_func=lambda m: {"known": "the true flip rates (the paper's setting)",
                               "estimate": "nothing (estimate the rates online)",
                               "ignore": "rates 0 (ignore the noise)"}[m],
        help="What the ELM-NCLD variants know about the label noise; the baselines are never told.")
    f.slot("model_rates")
    f.slot("models")
    options = list(DECISIONS)
    if f.vals["decision"] not in options:
        options.append(f.vals["decision"])  # from a link: kept visible, flagged below
    f.seed("decision")
    f.vals["decision"] = st.selectbox(
        "Decision rule", options, key=wkey("decision"),
        format_func=lambda d: f"{d}: {DECISIONS[d]}" if d in DECISIONS else f"unknown rule {d!r}",
        help="How the ELM-NCLD variants turn their label scores into predicted labels "
             "(ncld_core/model/decision.py); 'paper' is the paper's threshold 0.")
    f.slot("decision")
    _model_parameters(f)


def _model_parameters(f: _Form):
    c1, c2 = st.columns(2)
    with c1:
        f.number("beta", "label fit weight", step=0.01, help="β of Eq. (N2): weight of the observed labels vs the "
                                                             "graph neighbours' scores, in [0, 1].")
        f.number("n_hidden", "hidden nodes", integer=True, step=5, help="L, the ELM's hidden layer's size.")
        f.number("alpha", "ridge penalty", step=0.1, help="α, the ridge penalty of the output weights.")
    with c2:
        f.number("gamma", "ranking weight", step=0.001,
                 help="γ of Eq. (N3): weight of the importance-weighted ranking term, ≥ 0.")
        f.number("n_neighbors", "neighbours", integer=True, step=1, help="K of Eq. (Re): neighbours per instance "
                                                                         "in the chunk's feature graph.")


def _detection_section(f: _Form):
    ss = st.session_state
    det_options = list(DETECTORS)
    if f.vals["detector"] not in det_options:
        det_options.append(f.vals["detector"])  # from a link: kept visible, flagged below
    f.seed("detector")
    detector = st.selectbox(
        "Detector the models act on", det_options, key=wkey("detector"), format_func=detector_label,
        help="ELM-I retrains and ELM-II adjusts when it fires; ELM-O only records its firings. "
             "Each detector is described in the expander beside panel (c) of the Live run.")
    f.vals["detector"] = detector
    f.slot("detector")
    mon_options = [d for d in DETECTORS if d != detector]
    k = f.seed("monitors", list(f.vals["monitors"]))
    # The acting detector is not offered twice: drop it (and anything no longer offered) before drawing.
    held = [m for m in (ss[k] if isinstance(ss[k], list) else []) if m in mon_options]
    if held != ss[k]:
        ss[k] = held
    monitors = st.multiselect(
        "Compare detectors (recorded, not acted on)", mon_options, key=k, format_func=detector_label,
        placeholder="none", help="Run on the same chunks beside the acting one; panels (c) and (d) draw their "
                                 "statistics and firings and score them against the true change points.")
    f.vals["monitors"] = list(monitors)
    f.slot("monitors")
    f.number("delta", "false-alarm rate", step=0.01,
             help="δ, in (0, 1): the tolerated probability of a false alarm per chunk of the p-value tests; "
                  "the δ of Eq. (Hfd) for the paper's test.")


def _labels_true(f: _Form, cfg: RunConfig):
    """A real dataset's labels, when the schedule needs its pools checked (cached: read once per server)."""
    if not cfg.schedule.strip() or cfg.dataset == "synthetic" or "dataset" in f.extra:
        return None
    if f.upload is not None:
        return f.upload[0].Y
    if cfg.dataset == data.UPLOAD:
        return None
    try:
        return data.load_dataset(cfg.dataset).Y
    except ValueError:
        return None


def _validate(f: _Form, schedule_chart) -> Context:
    """Every check of the settings, each error under its control; the URL follows the settings."""
    ss = st.session_state
    default = RunConfig()
    for name in FIELDS:  # a box emptied, then hidden (another noise, a listed dataset): its default, not None
        if f.vals.get(name) is None and getattr(default, name) is not None and name not in f.drawn:
            f.vals[name] = getattr(default, name)
    ss[CANON] = dict(f.vals)
    cfg = RunConfig(**f.vals)
    length = cfg.stream.length(f.facts.n_instances)
    # inline SVG, not st.plotly_chart: the page's first plotly.js came before its Run button (dashboard/svg.py)
    # st.markdown, not st.html: st.html's sanitizer keeps HTML only and drops every SVG element (the preview
    # was sent and never shown); the SVG is built here from escaped text (dashboard/svg.py)
    schedule_chart.markdown(svg_of(schedule_figure(_points(cfg), length, noise_changes=_noise_points(cfg)),
                                   label=f"drift schedule: {cfg.schedule or 'none'}"
                                         + (f" on {length:,} instances" if length else "")),
                            unsafe_allow_html=True)
    errors, cost = checks.check(cfg, f.facts, labels_true=_labels_true(f, cfg), extra=f.extra)
    _word_detector_errors(errors, cfg)
    errors = {k: worded(v) for k, v in errors.items()}
    errors.update({name: "empty: type a number" for name in f.empty})
    errors.update({name: f"{label_of(name)} must be a whole number, got {value:g}"
                   for name, value in f.fractional.items()})
    for k, msg in errors.items():
        slot = f.slots.get(k) or f.slots.get("dataset")
        slot.error(md_escape(msg), icon=":material/error:")
    failed = start_failure(ss.get("run"), cfg)
    if failed and failed[0] not in errors:
        # The settings passed every check but the run could not start: say why next to the control at
        # fault (Run stays usable: the reason may be passing, e.g. a file that changed on disk).
        (f.slots.get(failed[0]) or f.slots["dataset"]).warning(
            md_escape(f"The last run could not start: {failed[1]}"), icon=":material/warning:")
    link.sync_url(cfg)  # an upload appears as dataset=upload: the file itself cannot travel in a link
    return Context(cfg=cfg, errors=errors, upload=f.upload, facts=f.facts, cost=cost)


def start_failure(run, cfg: RunConfig):
    """``(field, message)`` when the newest run (a :class:`dashboard.serving.live_run.LiveRun`) of these settings
    failed before its first chunk, else None.

    The field is the setting the message names first (its internal name or its label), else the dataset.
    """
    if run is None or run.status != "error" or run.chunks or run.cfg != cfg:
        return None
    msg = worded(run.error or "the run failed")
    low = msg.lower()
    hits = [(low.find(name.lower()), key) for key, label in LABELS.items() for name in {key, label}
            if name.lower() in low and key in FIELDS]
    field = min(hits)[1] if hits else "dataset"
    return field, msg


def _word_detector_errors(errors: dict, cfg: RunConfig):
    """RunConfig.errors names detectors as the link does: say it with the labels the controls show."""
    names = ", ".join(DETECTORS)
    if "detector" in errors:
        errors["detector"] = (f"detector {cfg.detector!r} is not known: choose one in the list "
                              f"(a link names them {names})")
    if "monitors" in errors and isinstance(cfg.monitors, list):
        bad = [m for m in cfg.monitors if m not in DETECTORS]
        if bad:
            errors["monitors"] = (f"compared detector(s) {', '.join(map(repr, bad))} not known: remove them "
                                  f"(a link names the detectors {names})")


def _noise_points(cfg: RunConfig):
    """The schedule's noise changes as (position, factor)."""
    try:
        schedule = cfg.drift_schedule
    except ValueError:
        return []
    return [] if schedule is None else [(c.position, c.factor) for c in schedule.noise_changes]


def _points(cfg: RunConfig):
    """The schedule's points as (position, kind), from the configuration's parsed schedule."""
    try:
        schedule = cfg.drift_schedule
    except ValueError:
        return []
    return [] if schedule is None else [(p.position, p.kind) for p in schedule]
