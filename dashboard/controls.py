"""The sidebar controls: one widget per RunConfig field, inline validation, presets and the URL.

State model
-----------
* ``st.session_state["cfg_values"]`` holds the canonical RunConfig fields (a plain dict).
  It survives page switches and widgets that are not drawn (Streamlit drops a widget's
  state when it is not rendered in a run).
* Every widget has key ``w_<field>``; before it is drawn its key is seeded from the
  canonical value if missing, and after it is drawn the canonical value is updated.
* A preset or a link replaces the canonical values and drops the widget keys, so the
  widgets are re-seeded; the two tables (flip rates, drift schedule) are data editors
  keyed by a version number that is bumped to reset their edits.
* Errors come from ``RunConfig.errors`` and are written into an ``st.empty`` slot right
  under the control they concern, after every control is drawn.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import re
from dataclasses import dataclass, field

import pandas as pd
import streamlit as st

from ncld_core.config import PRESETS, SYNTHETIC_DEFAULT_LENGTH, RunConfig
from ncld_core.eval.baselines import BASELINES, OPTIONAL
from ncld_core.eval.runner import RATE_MODES
from ncld_core.eval.variants import ELM_VARIANTS, ORACLES
from ncld_core.model.cost import MEMORY_BUDGET_BYTES, estimate_for, largest_hidden_within
from ncld_core.model.detector import DETECTORS
from ncld_core.stream.schedule import KINDS

from . import data
from .figures import schedule_figure
from .teaching import PRESET_NOTES, detector_label
from .ui import md_escape

CANON = "cfg_values"
#: Every model a run can put side by side: the ELM-NCLD variants, the clean-label oracle, the paper's baselines.
MODEL_OPTIONS = [*ELM_VARIANTS, *ORACLES, *BASELINES]
FIELDS = tuple(f.name for f in dataclasses.fields(RunConfig))


@dataclass
class Context:
    """What the pages need: the configuration, its errors and the loaded upload."""

    cfg: RunConfig
    errors: dict
    upload: tuple | None = None  # (Dataset, digest)
    n_available: int | None = None
    n_labels_available: int | None = None
    label_names: list = field(default_factory=list)
    dataset_note: str = ""
    cost: object = None  # ncld_core.model.cost.CostEstimate of the settings (None: the data's size is unknown)

    @property
    def ok(self) -> bool:
        return not self.errors


#: The controls' labels, for messages that name a field or a parameter (never the internal name).
LABELS = {
    "chunk_size": "chunk size N", "n_instances": "stream length", "shuffle_seed": "stream seed",
    "n_features": "features d", "n_labels": "labels q", "cardinality": "cardinality",
    "label_correlation": "label correlation", "noise": "Flip rates", "rho_low": "rho low", "rho_high": "rho high",
    "rho_pos": "ρ+", "rho_neg": "ρ−", "rates": "flip-rate table", "schedule": "Drift schedule",
    "models": "Variants side by side", "references": "trivial references", "model_rates": "The models are told",
    "beta": "β", "gamma": "γ", "delta": "δ", "alpha": "α", "n_hidden": "L (hidden nodes)",
    "n_neighbors": "K (neighbours)", "seed": "model seed", "detector": "Detector the models act on",
    "monitors": "Compare detectors", "dataset": "Dataset", "gammas": "γ values",
    "arff_bytes": "the ARFF file", "xml_bytes": "the label XML",
}
_NAMES = re.compile(r"(?<![\w'\"])(" + "|".join(sorted((k for k in LABELS if "_" in k), key=len, reverse=True))
                    + r")(?![\w'\"])")


def worded(message: str) -> str:
    """A core message with the controls' labels in place of internal names (``n_hidden`` -> L (hidden nodes))."""
    return _NAMES.sub(lambda m: LABELS[m.group(1)], str(message))


def label_of(key: str) -> str:
    return LABELS.get(key, key)


def wkey(name: str) -> str:
    return f"w_{name}"


# --------------------------------------------------------------------------- state
def init_state():
    """First run of a session: canonical values from the URL (or the defaults)."""
    ss = st.session_state
    if CANON in ss:
        return
    cfg, error = RunConfig(), None
    params = st.query_params.to_dict()
    if params:
        from .compare import LINK_PARAM, read_link_baseline  # the pinned run (dashboard/compare.py)

        cfg, notes = read_link({k: v for k, v in params.items() if k != LINK_PARAM})
        baseline, more = read_link_baseline(params)
        notes += more
        if baseline is not None:  # re-run and pinned by the Live run page; the current settings are run too
            ss["link_baseline"], ss["autostart"] = baseline, True
        if notes:
            error = "The link had values that cannot be applied: " + "; ".join(notes) + "."
    ss[CANON] = cfg.to_dict()
    ss["url_error"] = error
    ss["editor_ver"] = 0


#: Query parameters Streamlit itself reads (not settings of a run).
_STREAMLIT_PARAMS = frozenset({"embed", "embed_options"})


def read_link(params: dict) -> tuple[RunConfig, list[str]]:
    """The configuration a link gives, value by value: every value that cannot be applied is named
    (with the control's label) and left at its default, the others are kept."""
    kept, notes = {}, []
    for key, raw in params.items():
        if key in _STREAMLIT_PARAMS:
            continue
        if key not in FIELDS:
            notes.append(f"{key}={raw!r} (not a setting: ignored)")
            continue
        try:
            RunConfig.from_query_params({key: raw})
        except (ValueError, TypeError):
            notes.append(f"{key}={raw!r} ({LABELS.get(key, key)}: cannot read it; the default is used)")
        else:
            kept[key] = raw
    cfg = RunConfig.from_query_params(kept)
    cfg, more = sanitize(cfg)
    return cfg, notes + more


def sanitize(cfg: RunConfig) -> tuple[RunConfig, list[str]]:
    """Replace values that no widget can hold (an unknown model, noise kind, ...) and say so."""
    default, notes, fix = RunConfig(), [], {}
    if cfg.noise not in ("none", "range", "table"):
        notes.append(f"noise {cfg.noise!r} (using {default.noise!r})")
        fix["noise"] = default.noise
    models = cfg.models if isinstance(cfg.models, list) else []
    bad = [m for m in models if m not in MODEL_OPTIONS]
    if bad or not isinstance(cfg.models, list):
        notes.append(f"model(s) {', '.join(map(repr, bad)) or repr(cfg.models)} (dropped)")
        fix["models"] = [m for m in models if m in MODEL_OPTIONS]
    if cfg.model_rates not in RATE_MODES:
        notes.append(f"model_rates {cfg.model_rates!r} (using {default.model_rates})")
        fix["model_rates"] = default.model_rates
    if not isinstance(cfg.references, bool):
        notes.append(f"references {cfg.references!r} (using {default.references})")
        fix["references"] = default.references
    if not isinstance(cfg.schedule, str):
        notes.append(f"schedule {cfg.schedule!r} (using none)")
        fix["schedule"] = ""
    elif cfg.schedule.strip():
        try:  # the schedule editor holds parsed rows only: an unreadable text would vanish from it
            cfg.drift_schedule
        except ValueError as exc:
            notes.append(f"schedule {cfg.schedule!r} (cannot read it: {exc}; using none)")
            fix["schedule"] = ""
    for key in ("rho_pos", "rho_neg"):
        v = getattr(cfg, key)
        if not isinstance(v, list) or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
            notes.append(f"{key} {v!r} (dropped)")
            fix[key] = []
    if not isinstance(cfg.dataset, str):
        notes.append(f"dataset {cfg.dataset!r} (using synthetic)")
        fix["dataset"] = "synthetic"
    # An unknown detector name stays (the selectbox shows it, RunConfig.errors flags it, Run is disabled);
    # what no multiselect can hold, or what would be drawn twice, is dropped and said so.
    monitors = cfg.monitors if isinstance(cfg.monitors, list) else []
    if not isinstance(cfg.monitors, list):
        notes.append(f"monitors {cfg.monitors!r} (not a list: dropped)")
    kept = []
    for m in monitors:
        if not isinstance(m, str):
            notes.append(f"monitor {m!r} (not a detector name: dropped)")
        elif m == cfg.detector:
            notes.append(f"monitor {m!r} (it is the acting detector: dropped)")
        elif m in kept:
            notes.append(f"monitor {m!r} (given twice: once kept)")
        else:
            kept.append(m)
    if kept != cfg.monitors:
        fix["monitors"] = kept
    return (dataclasses.replace(cfg, **fix) if fix else cfg), notes


def set_config(cfg: RunConfig):
    """Replace every control's value (presets, tests)."""
    ss = st.session_state
    ss[CANON] = cfg.to_dict()
    for name in FIELDS:
        ss.pop(wkey(name), None)
    ss["editor_ver"] = ss.get("editor_ver", 0) + 1


def _apply_preset():
    name = st.session_state.get("preset_pick")
    if name in PRESETS:
        set_config(PRESETS[name])
        st.session_state["preset_applied"] = name


def sync_url(cfg: RunConfig):
    """Put the configuration in the URL so that the link reproduces it."""
    want = {**cfg.to_query_params(), **(st.session_state.get("link_extra") or {})}  # + the pinned run
    have = st.query_params.to_dict()
    if want != have:
        st.query_params.from_dict(want)


# --------------------------------------------------------------------------- widget helpers
class _Form:
    def __init__(self):
        self.vals = dict(st.session_state[CANON])
        self.slots = {}

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
        if v is not None:
            if integer and isinstance(v, float) and v.is_integer():
                v = int(v)
            elif not integer and isinstance(v, int) and not isinstance(v, bool):
                v = float(v)
        k = self.seed(name, v)
        if not allow_none and st.session_state[k] is None:
            st.session_state[k] = v
        step = step if step is not None else (1 if integer else 0.01)
        out = st.number_input(label, key=k, step=step, format=fmt or ("%d" if integer else "%g"), help=help,
                              value=None if allow_none else "min", placeholder=placeholder)
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
    if len(pos) != n_labels or len(neg) != n_labels:
        from ncld_core.stream.noise import draw_flip_rates

        low, high = vals.get("rho_low", 0.2), vals.get("rho_high", 0.4)
        try:
            p, n = draw_flip_rates(n_labels, low, high, random_state=vals.get("shuffle_seed", 0))
            pos, neg = p.tolist(), n.tolist()
        except ValueError:
            pos, neg = [0.3] * n_labels, [0.3] * n_labels
    names = list(label_names) if len(label_names) == n_labels else [f"label_{j}" for j in range(n_labels)]
    return pd.DataFrame({"label": names, "rho_pos": [round(x, RATE_DECIMALS) for x in pos],
                         "rho_neg": [round(x, RATE_DECIMALS) for x in neg]})


def schedule_rows(text: str) -> pd.DataFrame:
    """The schedule string as editor rows (kind, position); unparsable text gives no rows."""
    from ncld_core.stream.schedule import DriftSchedule

    rows = []
    if text and text.strip():
        try:
            for p in DriftSchedule.parse(text):
                rows.append({"kind": p.kind, "position": p.position})
        except ValueError:
            rows = []
    return pd.DataFrame(rows, columns=["kind", "position"]).astype({"position": "Int64"})


def schedule_text(df: pd.DataFrame) -> tuple[str, str | None]:
    """Editor rows -> schedule string (sorted by position) and an error for incomplete rows."""
    parts, error = [], None
    rows = []
    for i, row in enumerate(df.itertuples(index=False), start=1):
        kind = row.kind if isinstance(row.kind, str) and row.kind else None
        pos = None if pd.isna(row.position) else int(row.position)
        if kind is None and pos is None:
            continue
        if kind is None:
            error = f"row {i}: choose {', '.join(KINDS[:-1])} or {KINDS[-1]}"
            continue
        rows.append((pos, kind))
    if any(p is None for p, _ in rows) and len(rows) > 1:
        error = error or "only a single point may omit its position (the paper's form)"
    rows.sort(key=lambda r: (r[0] is not None, r[0] or 0))
    for pos, kind in rows:
        parts.append(kind if pos is None else f"{kind}@{pos}")
    return ", ".join(parts), error


def _editor(name: str, make_base, **kwargs):
    """A data editor reset by bumping ``editor_ver``; re-seeded from the canonical values when dropped."""
    ss = st.session_state
    key = f"w_{name}_{ss.get('editor_ver', 0)}"
    base_key = f"{name}_base"
    if key not in ss or base_key not in ss:
        ss[base_key] = make_base()
    return st.data_editor(ss[base_key], key=key, **kwargs)


# --------------------------------------------------------------------------- the sidebar
def render_sidebar() -> Context:
    init_state()
    ss = st.session_state
    f = _Form()
    extra_errors = {}
    ctx_upload, n_available, n_labels_available, label_names, note = None, None, None, [], ""
    n_features_available = None

    st.markdown("### ncld · ELM-NCLD lab")
    st.pills("Presets", list(PRESETS), key="preset_pick", on_change=_apply_preset,
             help="Fill every control with a ready-made experiment.")
    applied = ss.get("preset_applied")
    preset_note = st.empty()
    if ss.get("url_error"):
        st.error(md_escape(ss["url_error"]), icon=":material/link_off:")

    # ---------------------------------------------------------------- data
    st.markdown("#### Data")
    listing, list_error = data.list_datasets()
    names = listing["name"].tolist()
    options = ["synthetic", *names, data.UPLOAD]
    current = f.vals["dataset"]
    if current not in options:
        options.insert(1, current)  # from a link: keep it visible, flag it below
    labels = {"synthetic": "synthetic generator", data.UPLOAD: "upload ARFF (+ XML)…"}
    f.seed("dataset")
    dataset = st.selectbox("Dataset", options, key=wkey("dataset"), format_func=lambda o: labels.get(o, o),
                           help="The embedded synthetic generator, a benchmark found in data/ or "
                                "$NCLD_DATA_DIR, or your own MULAN / MEKA file.")
    f.vals["dataset"] = dataset
    f.slot("dataset")
    if list_error:
        st.caption(md_escape(list_error))
    if dataset == "synthetic":
        c1, c2 = st.columns(2)
        with c1:
            f.number("n_features", "features d", integer=True, step=1)
        with c2:
            f.number("n_labels", "labels q", integer=True, step=1)
        c1, c2 = st.columns(2)
        with c1:
            f.number("cardinality", "cardinality", step=0.1,
                     help="Expected true labels per instance (without a drift schedule; with one, "
                          "the single-label regime has 1 and the multi-label one 3).")
        with c2:
            f.number("label_correlation", "label correlation", step=0.05)
        n_labels_available = f.vals["n_labels"] if isinstance(f.vals["n_labels"], int) else None
    elif dataset == data.UPLOAD:
        arff = st.file_uploader("ARFF file (MULAN or MEKA)", type=["arff"], key="w_upload_arff")
        xml = st.file_uploader("MULAN label XML (optional for MEKA)", type=["xml"], key="w_upload_xml")
        if arff is None:
            extra_errors["dataset"] = "upload an ARFF file (MEKA: labels given by -C n in @relation)"
        else:
            arff_bytes = arff.getvalue()
            xml_bytes = xml.getvalue() if xml is not None else None
            stem = arff.name.rsplit(".", 1)[0] or "upload"
            try:
                ds = data.load_upload(arff_bytes, xml_bytes, stem)
            except ValueError as exc:
                extra_errors["dataset"] = str(exc)
            else:
                ctx_upload = (ds, data.digest(arff_bytes, xml_bytes))
                n_available, n_labels_available = ds.n_instances, ds.n_labels
                n_features_available = ds.n_features
                label_names = list(ds.label_names)
                # st.text: the name comes from the user's file, shown verbatim (no markdown / HTML).
                st.text(f"{ds.name}: {ds.n_instances} instances, {ds.n_features} features, "
                        f"{ds.n_labels} labels, cardinality {ds.cardinality:.3f}")
                st.caption("Uploaded data cannot travel in a link: the URL keeps every other setting.")
    else:
        row = data.dataset_row(dataset)
        if row is None:
            extra_errors["dataset"] = (f"dataset {dataset!r} is not in the data folders "
                                       f"(available: {', '.join(names) or 'none'}); set NCLD_DATA_DIR")
        else:
            n_available = int(row["instances"]) if pd.notna(row["instances"]) else None
            n_labels_available = int(row["labels"]) if pd.notna(row["labels"]) else None
            n_features_available = int(row["features"]) if pd.notna(row["features"]) else None
            note = (f"{row['instances']} instances · {row['features']} features · {row['labels']} labels · "
                    f"cardinality {row['cardinality']:.3f}")
            st.caption(note)
            # Read now, while the visitor sets up the run, not after Run: a first read parses the ARFF
            # (docs/performance.md section 5c times it); Run then starts from the arrays.
            try:
                with st.spinner(f"Reading {dataset}…"):
                    data.load_dataset(dataset)
            except ValueError as exc:
                extra_errors["dataset"] = str(exc)

    # ---------------------------------------------------------------- stream
    st.markdown("#### Stream")
    c1, c2 = st.columns(2)
    with c1:
        f.number("chunk_size", "chunk size N", integer=True, step=50,
                 help="Instances per chunk (the paper: 500). Each chunk is scored, then learned.")
    with c2:
        default_n = SYNTHETIC_DEFAULT_LENGTH if dataset == "synthetic" else n_available
        f.number("n_instances", "stream length", integer=True, step=500, allow_none=True,
                 placeholder=f"all ({default_n})" if default_n else "all",
                 help=f"Instances in the stream; empty = the whole dataset (synthetic: {SYNTHETIC_DEFAULT_LENGTH}).")
    f.number("shuffle_seed", "stream seed", integer=True, step=1,
             help="Seeds the order of the instances, the drawn flip rates and the flips.")

    # ---------------------------------------------------------------- noise
    st.markdown("#### Label noise (Eq. NR)")
    f.seed("noise")
    noise = st.radio("Flip rates", ["none", "range", "table"], key=wkey("noise"), horizontal=True,
                     format_func={"none": "none", "range": "range per label", "table": "table"}.get,
                     help="range: rho_pos and rho_neg of every label drawn from U[low, high] (the paper: "
                          "[0.2, 0.4]); table: edit them label by label.")
    f.vals["noise"] = noise
    f.slot("noise")
    if noise == "range":
        c1, c2 = st.columns(2)
        with c1:
            f.number("rho_low", "rho low", step=0.05)
        with c2:
            f.number("rho_high", "rho high", step=0.05)
    elif noise == "table":
        n_lab = n_labels_available if n_labels_available is not None else (len(f.vals["rho_pos"]) or None)
        if n_lab is None:
            st.caption("The table needs the dataset's label count.")
        else:
            names_for_table = label_names
            if not names_for_table and dataset not in ("synthetic", data.UPLOAD):
                try:  # cached: the file is read once per server
                    names_for_table = list(data.load_dataset(dataset).label_names)
                except ValueError:
                    names_for_table = []
            have = len(f.vals["rho_pos"] or [])
            if have and (have != n_lab or len(f.vals["rho_neg"] or []) != n_lab):
                # Another dataset (or a link's table of another size): the table follows the dataset.
                f.vals["rho_pos"], f.vals["rho_neg"] = [], []
                ss["editor_ver"] = ss.get("editor_ver", 0) + 1
                ss.pop("rates_base", None)
                ss["rates_redrawn"] = (f"The flip-rate table had {have} rows for the {n_lab} labels of this dataset: "
                                       "it was drawn afresh from rho low / rho high (seeded by the stream seed).")
            edited = _editor(
                "rates", lambda: _rates_base(f.vals, n_lab, names_for_table),
                hide_index=True, width="stretch", height=min(38 + 35 * n_lab, 260), num_rows="fixed",
                column_config={
                    "label": st.column_config.TextColumn("label", disabled=True),
                    # rates are used to 4 decimals (_rates_base): shown and edited to 4 decimals
                    "rho_pos": st.column_config.NumberColumn("ρ+ (lose)", min_value=0.0, max_value=0.9999,
                                                             step=RATE_STEP, format=RATE_FORMAT, help="P(y=-1 | g=+1)"),
                    "rho_neg": st.column_config.NumberColumn("ρ− (add)", min_value=0.0, max_value=0.9999,
                                                             step=RATE_STEP, format=RATE_FORMAT, help="P(y=+1 | g=-1)"),
                },
            )
            if ss.get("rates_redrawn"):  # said once, on the rerun that redrew the table
                st.info(md_escape(ss.pop("rates_redrawn")), icon=":material/refresh:")
            f.vals["rho_pos"] = [None if pd.isna(v) else float(v) for v in edited["rho_pos"]]
            f.vals["rho_neg"] = [None if pd.isna(v) else float(v) for v in edited["rho_neg"]]
            if st.button("Draw the table from the range", help="Fresh rates from U[rho low, rho high], seeded "
                                                               "by the stream seed."):
                f.vals["rho_pos"], f.vals["rho_neg"] = [], []
                ss[CANON] = dict(f.vals)
                ss["editor_ver"] = ss.get("editor_ver", 0) + 1
                st.rerun()
    f.slot("rates")

    # ---------------------------------------------------------------- schedule
    st.markdown("#### Drift schedule")
    sched_df = _editor(
        "schedule", lambda: schedule_rows(f.vals["schedule"]),
        hide_index=True, width="stretch", num_rows="dynamic",
        column_config={
            "kind": st.column_config.SelectboxColumn("change", options=list(KINDS), required=True,
                                                     help="growth: to multi-label; reduction: to single-label; "
                                                          "shift: other labels relevant, same cardinality"),
            "position": st.column_config.NumberColumn("at instance", min_value=1, step=1, format="%d",
                                                      help="First instance of the new regime; leave empty "
                                                           "on a single row for the paper's form"),
        },
    )
    text, sched_error = schedule_text(sched_df)
    f.vals["schedule"] = text
    if sched_error:
        extra_errors["schedule"] = sched_error
    length = f.vals["n_instances"] or (SYNTHETIC_DEFAULT_LENGTH if dataset == "synthetic" else n_available)
    schedule_chart = st.empty()  # drawn once the configuration (and its parsed schedule) exists
    st.caption(f"schedule: `{text or 'none'}` · growth = to multi-label, reduction = to single-label, "
               "shift = other labels relevant (same cardinality)")
    f.slot("schedule")

    # ---------------------------------------------------------------- models
    st.markdown("#### Models")
    f.seed("models")
    models = st.multiselect(
        "Variants side by side", MODEL_OPTIONS, key=wkey("models"),
        format_func=lambda m: m if m in ELM_VARIANTS else (f"{m} — oracle" if m in ORACLES else f"{m} (baseline)"),
        help="; ".join(f"{k}: {v}" for k, v in {**ELM_VARIANTS, **ORACLES}.items())
             + ". Baselines: the paper's comparison methods, run as published (not told the flip rates).")
    f.vals["models"] = list(models)
    missing = [m for m in models if m in OPTIONAL and importlib.util.find_spec(OPTIONAL[m]) is None]
    if missing:
        extra_errors["models"] = "; ".join(f"{m} needs the optional package {OPTIONAL[m]!r}" for m in missing)
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
    c1, c2 = st.columns(2)
    with c1:
        f.number("beta", "β (label fit)", step=0.01, help="Eq. (N2): weight of the observed labels vs the "
                                                          "graph neighbours' scores, in [0, 1].")
        f.number("delta", "δ (false alarms)", step=0.01,
                 help="In (0, 1): the tolerated probability of a false alarm per chunk of the p-value tests; "
                      "the δ of Eq. (Hfd) for the paper's test.")
        f.number("n_hidden", "L (hidden nodes)", integer=True, step=5)
        f.number("seed", "model seed", integer=True, step=1)
    with c2:
        f.number("gamma", "γ (ranking)", step=0.001,
                 help="Eq. (N3): weight of the importance-weighted ranking term, ≥ 0.")
        f.number("alpha", "α (ridge)", step=0.1)
        f.number("n_neighbors", "K (neighbours)", integer=True, step=1, help="Eq. (Re): neighbours per instance "
                                                                               "in the chunk's feature graph.")

    # ---------------------------------------------------------------- drift detection
    st.markdown("#### Drift detection")
    det_options = list(DETECTORS)
    current = f.vals["detector"]
    if current not in det_options:
        det_options.append(current)  # from a link: keep it visible, flagged below
    f.seed("detector")
    detector = st.selectbox(
        "Detector the models act on", det_options, key=wkey("detector"), format_func=detector_label,
        help="ELM-I retrains and ELM-II adjusts when it fires; ELM-O only records its firings. "
             "Each detector is described in the expander beside panel (c) of the Live run.")
    f.vals["detector"] = detector
    f.slot("detector")
    current = f.vals["monitors"] if isinstance(f.vals["monitors"], list) else []
    mon_options = [d for d in DETECTORS if d != detector]
    mon_options += [m for m in current if m not in mon_options and m != detector]  # unknown ones: flagged below
    k = f.seed("monitors", list(current))
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

    # ---------------------------------------------------------------- validate
    ss[CANON] = dict(f.vals)
    cfg = RunConfig(**f.vals)
    schedule_chart.plotly_chart(schedule_figure(_points(cfg), length), config={"displayModeBar": False},
                                key="schedule_chart")
    errors = {}
    labels_true = None  # a real dataset's labels: can its pools hold the drift schedule?
    if cfg.schedule.strip() and dataset != "synthetic":
        if ctx_upload is not None:
            labels_true = ctx_upload[0].Y
        elif dataset != data.UPLOAD and "dataset" not in extra_errors:
            try:  # cached: the file is read once per server
                labels_true = data.load_dataset(dataset).Y
            except ValueError:
                labels_true = None
    try:
        errors = cfg.errors(n_available=n_available, n_labels_available=n_labels_available, Y_true=labels_true)
    except Exception as exc:  # noqa: BLE001 - never a traceback for a bad value
        errors = {"dataset": f"cannot check the settings: {exc}"}
    for k, v in extra_errors.items():
        errors.setdefault(k, v)
    _word_detector_errors(errors, cfg)
    cost = None
    if not errors:  # only settings that pass every other check are costed
        if dataset == "synthetic":
            n_features_available, n_labels_available_c = cfg.n_features, cfg.n_labels
        else:
            n_labels_available_c = n_labels_available
        cost = settings_cost(cfg, n_features_available, n_labels_available_c, n_available)
        refusal = over_budget(cfg, cost, n_features_available, n_labels_available_c)
        if refusal:
            errors[refusal[0]] = refusal[1]
    errors = {k: worded(v) for k, v in errors.items()}
    for k, msg in errors.items():
        slot = f.slots.get(k) or f.slots.get("dataset")
        slot.error(md_escape(msg), icon=":material/error:")
    failed = start_failure(ss.get("run"), cfg)
    if failed and failed[0] not in errors:
        # The settings passed every check but the run could not start: say why next to the control at
        # fault (Run stays usable: the reason may be passing, e.g. a file that changed on disk).
        (f.slots.get(failed[0]) or f.slots["dataset"]).warning(
            md_escape(f"The last run could not start: {failed[1]}"), icon=":material/warning:")
    sync_url(cfg)  # an upload appears as dataset=upload: the file itself cannot travel in a link
    if applied and applied in PRESETS:
        preset_note.caption(f"**{applied}**{'' if cfg == PRESETS[applied] else ' (modified)'} — "
                            f"{PRESET_NOTES.get(applied, '')}")
    return Context(cfg=cfg, errors=errors, upload=ctx_upload, n_available=n_available,
                   n_labels_available=n_labels_available, label_names=label_names, dataset_note=note, cost=cost)


def settings_cost(cfg: RunConfig, n_features, n_labels, n_available):
    """The core's estimate of one chunk's memory and work for these settings (None if the data's size is unknown)."""
    if n_features is None or n_labels is None:
        return None
    length = cfg.n_instances or (SYNTHETIC_DEFAULT_LENGTH if cfg.dataset == "synthetic" else n_available)
    return estimate_for(cfg, n_features=n_features, n_labels=n_labels, n_instances=length,
                        elm_names=[*ELM_VARIANTS, *ORACLES])


def _gb(nbytes: float) -> str:
    return f"{nbytes / 1024**3:.1f} GB" if nbytes >= 0.1 * 1024**3 else f"{nbytes / 1024**2:.0f} MB"


def over_budget(cfg: RunConfig, cost, n_features, n_labels):
    """``(field, message)`` when the settings' estimated memory per chunk is past MEMORY_BUDGET_BYTES, else None.

    The field is the control whose value makes the largest array: L (hidden nodes) for the P_D fit and the
    statistics, the chunk size for the graph and the chunk's features.
    """
    if cost is None or cost.memory_bytes <= MEMORY_BUDGET_BYTES:
        return None
    head = (f"one chunk needs about {_gb(cost.memory_bytes)} of arrays (largest: {cost.largest}, "
            f"{_gb(cost.terms[cost.largest])}), past the budget of {_gb(MEMORY_BUDGET_BYTES)}")
    if "L" in cost.largest.split(":")[-1]:
        fit = largest_hidden_within(MEMORY_BUDGET_BYTES, chunk_size=cfg.chunk_size, n_features=n_features,
                                    n_labels=n_labels, n_neighbors=cfg.n_neighbors, n_models=cost.n_models,
                                    fits_proba=any("P_D" in t for t in cost.terms))
        return "n_hidden", (f"{head}: with chunks of {cfg.chunk_size}, at most {fit} hidden nodes fit"
                            if fit else f"{head}: lower the chunk size")
    return "chunk_size", f"{head}: lower the chunk size"


def start_failure(run, cfg: RunConfig):
    """``(field, message)`` when the newest run (a :class:`dashboard.live_run.LiveRun`) of these settings
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


def _points(cfg: RunConfig):
    """The schedule's points as (position, kind), from the configuration's parsed schedule."""
    try:
        schedule = cfg.drift_schedule
    except ValueError:
        return []
    return [] if schedule is None else [(p.position, p.kind) for p in schedule]
