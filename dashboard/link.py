"""The URL state in one place: a link read into the controls' settings and a pending pinned run, and the
link written back from the settings.

A link only fills controls: nothing it carries runs by itself.

* **Its settings** (:func:`read_settings`), value by value. A value that cannot be read, or that no control
  can hold (an unknown noise kind or model, a schedule that does not parse, a list where a number goes), is
  named and left at its default; the others are kept as they came, right or wrong: the controls show them,
  :meth:`ncld_core.config.RunConfig.errors` flags the wrong ones next to their control and Run waits. The
  dataset goes through the dashboard's one resolver (:func:`dashboard.data.resolve`): a name listed in the
  data folders, the synthetic generator, or this session's own upload; anything else is refused with a
  message that names no file and no folder.
* **Its pinned run** (``baseline=<that run's link values as JSON>``, :func:`read_baseline`) must be usable
  as it is, checked as the controls check a run (:func:`dashboard.checks.check`: the data's sizes, the memory
  budget); otherwise it is refused whole (a re-run with a default in place of one of its values would not be
  that run) and the reason is said beside the link's other notes. A usable one is *pending*: the sidebar
  offers to re-run it (:mod:`dashboard.controls`), and it runs on that click only.

State (this visitor only, ``st.session_state``): :data:`CANON` the settings the controls hold (a dict of
RunConfig fields), :data:`URL_ERROR` what the link had that could not be applied, :data:`PENDING` the
pinned run waiting for a click, :data:`LINK_EXTRA` the query parameters beside the settings (the pinned
run) that :func:`sync_url` keeps in the URL.

>>> cfg, notes = read_settings({"beta": "0.3", "noise": "bogus"})
>>> cfg.beta, cfg.noise, notes[0].text()
(0.3, 'range', "noise 'bogus' (noise must be 'none', 'range', 'table' or a noise family (paper, missing, mixed); the default 'range' is used)")
"""

from __future__ import annotations

import dataclasses
import json
from typing import NamedTuple

import streamlit as st

from ncld_core.config import MAX_LINK_VALUE_CHARS, RunConfig
from ncld_core.eval.sweep import DEFAULT_BETA_RANGE, PAPER_GAMMAS, SWEEPABLE
from ncld_core.validation import NestingError, parse_json, shown_value

from . import checks, data
from .labels import label_of, worded

CANON, URL_ERROR, PENDING, LINK_EXTRA = "cfg_values", "url_error", "pending_baseline", "link_extra"
#: The guided lesson a link opens (:data:`dashboard.teaching.LESSONS`) and its step: ``(slug, step)`` or None.
LESSON = "lesson_at"
#: The query parameter of the pinned run; the link's other parameters are the current settings.
LINK_PARAM = "baseline"
#: The query parameters of a guided lesson (``?lesson=concept-growth&step=2``).
LESSON_PARAMS = ("lesson", "step")
#: Query parameters Streamlit itself reads (not settings of a run).
STREAMLIT_PARAMS = frozenset({"embed", "embed_options"})
#: The β × γ sweep's grid (the sweep page's controls): ``sweep_variant=ELM-I``, ``sweep_beta=lo,hi,step``,
#: ``sweep_gammas=[0, 0.0039]``, ``sweep_include=false``; a value at its default is left out of the link.
SWEEP_PARAMS = ("sweep_variant", "sweep_beta", "sweep_gammas", "sweep_include")
#: Where the sweep page's controls start, and what its link values are checked against.
SWEEP_DEFAULTS = {"beta": DEFAULT_BETA_RANGE, "include": True}  # (variant: the first offered; γ: all)
SWEEP_BETA_STEPS = (0.025, 0.05, 0.1, 0.2)
#: The link's sweep grid (:func:`read_sweep`), read once per session for the sweep page's controls.
SWEEP = "sweep_link"

_DEFAULT = RunConfig()
FIELDS = tuple(f.name for f in dataclasses.fields(RunConfig))
#: Settings edited in a number box: a link must give a number there (or nothing, for the stream length).
NUMBER_FIELDS = frozenset(
    name for name in FIELDS
    if isinstance(getattr(_DEFAULT, name), (int, float)) and not isinstance(getattr(_DEFAULT, name), bool)
) | {"n_instances"}
#: Settings whose control offers a fixed set of choices (or has no control): a value RunConfig refuses is
#: replaced by the default, since no control could show it.
CHOICE_FIELDS = ("noise", "model_rates", "references", "decision", "rho_pos", "rho_neg")


class Note(NamedTuple):
    """A link value that was not applied: what it was, why, and what is used instead."""

    what: str
    why: str
    action: str = ""

    def text(self, action: bool = True) -> str:
        tail = f"; {self.action}" if action and self.action else ""
        # a reason may quote the value again (a parser's message): cut as the value is
        why = self.why if len(self.why) <= WHY_LIMIT else f"{self.why[:WHY_LIMIT - 40]}… ({len(self.why)} characters)"
        return f"{self.what} ({why}{tail})"


#: The longest reason a note quotes whole.
WHY_LIMIT = 240


def _shown(raw) -> str:
    """A link value quoted back in a note, cut short (a link can be long)."""
    return shown_value(raw, limit=80)


def _number_like(value) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def too_long(raw) -> str | None:
    """Why a link's raw value is refused unread (longer than :data:`ncld_core.config.MAX_LINK_VALUE_CHARS`), or
    None: checked before any parsing, for every parameter a link carries."""
    if isinstance(raw, str) and len(raw) > MAX_LINK_VALUE_CHARS:
        return f"{len(raw):,} characters, past the bound of {MAX_LINK_VALUE_CHARS:,}: not read"
    return None


def _read_values(params: dict) -> tuple[dict, list[Note]]:
    """The link values that can be read (as strings, the way the URL carries them), and notes on the others."""
    kept, notes = {}, []
    for key, raw in params.items():
        if key in STREAMLIT_PARAMS or key == LINK_PARAM or key in LESSON_PARAMS or key in SWEEP_PARAMS:
            continue
        if key not in FIELDS:
            notes.append(Note(f"{key}={_shown(raw)}", "not a setting: ignored"))
            continue
        why = too_long(raw)
        if why:
            notes.append(Note(f"{key}={_shown(raw)}", f"{label_of(key)}: {why}", "the default is used"))
            continue
        try:
            value = getattr(RunConfig.from_query_params({key: raw}), key)
        except NestingError as exc:
            notes.append(Note(f"{key}={_shown(raw)}", worded(exc), "the default is used"))
            continue
        except (ValueError, TypeError):
            value, readable = None, False
        else:
            readable = key not in NUMBER_FIELDS or _number_like(value)
        if readable and _past_a_number_box(value):  # the box cannot hold it: its range says what was meant
            why = RunConfig(**{key: value}).errors().get(key) or "too large for its box"
            notes.append(Note(f"{key}={_shown(raw)}", worded(why), "the default is used"))
        elif readable:
            kept[key] = raw
        else:
            notes.append(Note(f"{key}={_shown(raw)}", f"{label_of(key)}: cannot read it", "the default is used"))
    return kept, notes


#: The largest integer a number box holds exactly (the browser's numbers are doubles).
LARGEST_BOX_INTEGER = 2**53 - 1
#: The paper's noise family (``noise="paper"``, :data:`ncld_core.stream.noise_families.NOISE_FAMILIES`) as the flip-rate
#: control holds it: the range per label it is (tests/test_dashboard_link.py builds both streams: equal).
PAPER_NOISE_RANGE = (0.2, 0.4)


def _past_a_number_box(value) -> bool:
    """An integer no number box can show (a link's 20 digits): flagging it in its box, as other values out of
    range are, is impossible, so the default is used and a note says why."""
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) > LARGEST_BOX_INTEGER


def _choices(name: str) -> int:
    """How many items a list setting can hold at most: each model, or each detector, once."""
    if name == "monitors":
        from ncld_core.model.detector import DETECTORS

        return len(DETECTORS)
    from ncld_core.eval.baselines import BASELINES
    from ncld_core.eval.variants import ELM_VARIANTS, ORACLES

    return len(ELM_VARIANTS) + len(ORACLES) + len(BASELINES)


def _kept_items(cfg: RunConfig, name: str, what: str) -> tuple[list, list[Note]]:
    """The items of a list setting (models, monitors) that RunConfig accepts one by one, and notes on the others.
    A list longer than there are choices is dropped whole, with one note: item by item, its checks and notes grow
    with its length (measured in the commit that bounded it)."""
    items = getattr(cfg, name)
    if len(items) > _choices(name):
        return [], [Note(f"{name} {_shown(items)}", f"{len(items):,} {what}s, more than the {_choices(name)} there are",
                         "dropped")]
    kept, notes = [], []
    for item in items:
        error = dataclasses.replace(cfg, **{name: [*kept, item]}).errors().get(name)
        if error:
            notes.append(Note(f"{what} {_shown(item)}", worded(error), "dropped"))
        else:
            kept.append(item)
    return kept, notes


def read_settings(params: dict) -> tuple[RunConfig, list[Note]]:
    """The settings a link gives (its ``baseline`` aside), and a note for every value not applied."""
    kept, notes = _read_values(params)
    cfg = RunConfig.from_query_params(kept)
    errors, fix = cfg.errors(), {}
    for key in ("rho_pos", "rho_neg"):  # the table's cells hold numbers: anything else cannot be shown in it
        value = getattr(cfg, key)
        if value != [] and (not isinstance(value, list) or not all(_number_like(v) and v is not None for v in value)):
            notes.append(Note(f"{key}={_shown(value)}", f"{label_of(key)}: not a list of numbers",
                              "the table is drawn from the lowest / highest flip rate"))
            fix[key] = []
            errors.pop(key, None)
    for key in CHOICE_FIELDS:
        if key in errors:
            default = getattr(_DEFAULT, key)
            notes.append(Note(f"{key} {_shown(getattr(cfg, key))}", worded(errors[key]),
                              f"the default {default!r} is used"))
            fix[key] = default
    if cfg.noise == "paper":  # no control is named so: the flip-rate control draws it as the range it is
        low, high = PAPER_NOISE_RANGE
        overridden = [k for k, v in (("rho_low", low), ("rho_high", high)) if k in params and getattr(cfg, k) != v]
        notes.append(Note("noise 'paper'", f"the paper's noise is both rates of every label drawn from [{low}, {high}]",
                          f"set as 'range per label', lowest flip rate {low}, highest flip rate {high} (the same stream)"
                          + (f"; the link's {' and '.join(overridden)} not used" if overridden else "")))
        fix.update(noise="range", rho_low=low, rho_high=high)
    try:  # the schedule's editor holds parsed rows only: a text that does not parse would vanish from it
        schedule = cfg.drift_schedule
        positions = [p.position for p in (schedule.changes if schedule else ()) if p.position is not None]
    except ValueError as exc:
        notes.append(Note(f"schedule {_shown(cfg.schedule)}", f"cannot read it: {worded(exc)}", "using none"))
        fix["schedule"] = ""
    else:
        if any(p > LARGEST_BOX_INTEGER for p in positions):  # no box can show it (the browser's numbers)
            notes.append(Note(f"schedule {_shown(cfg.schedule)}",
                              f"a change point past instance {LARGEST_BOX_INTEGER:,}: too large for its box",
                              "using none"))
            fix["schedule"] = ""
    if not isinstance(cfg.detector, str):  # an unknown name stays: its box shows it, flagged, and Run waits
        notes.append(Note(f"detector {_shown(cfg.detector)}", worded(errors["detector"]), "the default is used"))
        fix["detector"] = _DEFAULT.detector
    for name, what in (("models", "model"), ("monitors", "monitor")):
        if not isinstance(getattr(cfg, name), list):
            notes.append(Note(f"{name} {_shown(getattr(cfg, name))}", worded(errors[name]), "the default is used"))
            fix[name] = getattr(_DEFAULT, name)
        else:
            items, more = _kept_items(dataclasses.replace(cfg, **fix), name, what)
            if more and not items and name == "models":  # none left: a run needs one, so the defaults come back
                items = list(_DEFAULT.models)
                more = [n._replace(action=f"dropped; the default {items!r} is used") for n in more]
            notes += more
            if more:
                fix[name] = items
    n_labels = None  # the table's rows: the generator's setting, a listed dataset's labels (an upload's: unknown yet)
    if cfg.dataset != data.UPLOAD:  # this session's own upload is asked for by the dataset control
        try:
            facts = data.resolve(cfg.dataset)
            fix["dataset"] = facts.name  # an alias becomes the listed name
            n_labels = cfg.n_labels if facts.name == "synthetic" else facts.n_labels  # (None: not known)
        except ValueError as exc:
            notes.append(Note("dataset", str(exc), "the synthetic generator is used"))
            fix["dataset"] = "synthetic"
    for key in ("rho_pos", "rho_neg"):  # the table has a row per label: other lengths cannot be shown in it
        value = fix.get(key, getattr(cfg, key))
        if (cfg.noise == "table" and value and isinstance(n_labels, int) and n_labels > 0 and "n_labels" not in errors
                and len(value) != n_labels):
            notes.append(Note(f"{key}={_shown(value)}", f"{label_of(key)}: {len(value)} rates for {n_labels} labels",
                              "the table is drawn from the lowest / highest flip rate"))
            fix[key] = []
    return dataclasses.replace(cfg, **fix), notes


def read_baseline(raw: str | None) -> tuple[RunConfig | None, list[Note]]:
    """The pinned run a link carries, usable as it is, or None and why not (nothing is run here)."""
    if raw is None:
        return None, []
    why = too_long(raw)
    if why:
        return None, [Note(f"{LINK_PARAM}={_shown(raw)}", f"the pinned run: {why}", "no baseline is pinned")]
    try:
        values = parse_json(raw, "the pinned run")
    except NestingError as exc:
        return None, [Note(f"{LINK_PARAM}={_shown(raw)}", str(exc), "no baseline is pinned")]
    except ValueError:
        values = None
    if not isinstance(values, dict):
        return None, [Note(f"{LINK_PARAM}={_shown(raw)}", "the pinned run: cannot read it", "no baseline is pinned")]
    cfg, notes = read_settings({str(k): v if isinstance(v, str) else json.dumps(v) for k, v in values.items()
                                if str(k) != LINK_PARAM})
    reasons = [n.text(action=False) for n in notes]
    if not reasons and cfg.dataset == data.UPLOAD:
        reasons = ["dataset 'upload' (an uploaded file cannot travel in a link)"]
    if not reasons:
        errors, _ = checks.check(cfg, data.resolve(cfg.dataset))
        reasons = [worded(v) for v in errors.values()]
    if reasons:
        return None, [Note(LINK_PARAM, "the pinned run: " + "; ".join(reasons), "no baseline is pinned")]
    return cfg, []


def baseline_param(cfg: RunConfig | None) -> dict:
    """The query parameter that carries a pinned run (none for an upload: the file cannot travel)."""
    if cfg is None or cfg.dataset == data.UPLOAD:
        return {}
    return {LINK_PARAM: json.dumps(cfg.to_query_params(), sort_keys=True, separators=(",", ":"))}


def read_lesson(params: dict) -> tuple[tuple[str, int] | None, list[Note]]:
    """The lesson a link opens, as ``(slug, step)`` (the step clamped to the lesson), or None, and notes.

    >>> read_lesson({"lesson": "concept-growth", "step": "2"})
    (('concept-growth', 2), [])
    >>> read_lesson({"lesson": "nope"})[1][0].text()
    "lesson='nope' (no such lesson; no lesson is opened)"
    >>> at, notes = read_lesson({"lesson": "concept-growth", "step": "-1"})
    >>> at, notes[0].text()
    (('concept-growth', 1), "step='-1' (the lesson has steps 1 to 4; it opens at step 1)")
    """
    from .teaching import LESSONS

    slug = params.get("lesson")
    if slug is None:
        return None, [Note(f"step={_shown(params['step'])}", "a step without a lesson: ignored")] if "step" in params else []
    if slug not in LESSONS:
        return None, [Note(f"lesson={_shown(slug)}", "no such lesson", "no lesson is opened")]
    raw, notes = params.get("step", "1"), []
    try:
        step = int(raw)
    except (TypeError, ValueError):
        step = 1
        notes.append(Note(f"step={_shown(raw)}", "not a step number", "the lesson opens at step 1"))
    n = LESSONS[slug].n_steps
    if not 1 <= step <= n:
        step = min(max(step, 1), n)
        notes.append(Note(f"step={_shown(raw)}", f"the lesson has steps 1 to {n}", f"it opens at step {step}"))
    return (slug, step), notes


def lesson_param(at: tuple[str, int] | None) -> dict:
    """The query parameters of a lesson at a step (none without one)."""
    return {} if at is None else {"lesson": at[0], "step": str(at[1])}


def _replace_extra(keys, params: dict):
    """The link's parameters beside the settings (:data:`LINK_EXTRA`), those of ``keys`` replaced by ``params``."""
    ss = st.session_state
    kept = {k: v for k, v in (ss.get(LINK_EXTRA) or {}).items() if k not in keys}
    ss[LINK_EXTRA] = {**kept, **params}


def set_lesson(at: tuple[str, int] | None):
    """The lesson (and step) the page shows, and the link carries, from now on."""
    st.session_state[LESSON] = at
    _replace_extra(LESSON_PARAMS, lesson_param(at))


def read_sweep(params: dict) -> tuple[dict, list[Note]]:
    """The β × γ sweep's grid a link gives (only the values it has, checked as its controls would hold them:
    a variant of :data:`ncld_core.eval.sweep.SWEEPABLE`, β bounds on the slider's 0.05 grid in [0, 1] with a
    step it offers, γ values of :data:`~ncld_core.eval.sweep.PAPER_GAMMAS`), and a note for each value not used.

    >>> read_sweep({"sweep_beta": "0.2,0.6,0.1", "sweep_gammas": "[0, 0.00390625]", "sweep_include": "false"})[0]
    {'beta': (0.2, 0.6, 0.1), 'gammas': [0.0, 0.00390625], 'include': False}
    >>> read_sweep({"sweep_variant": "ELM-IX"})[1][0].text()
    "sweep_variant='ELM-IX' (the sweep's variant must be one of ELM-O, ELM-I, ELM-II; the default is used)"
    """
    out, notes = {}, []

    def refuse(key, why):
        notes.append(Note(f"{key}={_shown(params[key])}", why, "the default is used"))

    params = dict(params)
    for key in SWEEP_PARAMS:
        if key in params and too_long(params[key]):
            refuse(key, too_long(params[key]))
            del params[key]

    if "sweep_variant" in params:
        if params["sweep_variant"] in SWEEPABLE:
            out["variant"] = params["sweep_variant"]
        else:
            refuse("sweep_variant", f"the sweep's variant must be one of {', '.join(SWEEPABLE)}")
    if "sweep_beta" in params:
        try:
            lo, hi, step = (float(x) for x in str(params["sweep_beta"]).split(","))
        except ValueError:
            refuse("sweep_beta", "the sweep's β range must read lo,hi,step")
        else:  # (NaN and inf fail the range first: the grid test rounds)
            in_range = 0 <= lo <= hi <= 1
            if not (in_range and all(abs(v * 20 - round(v * 20)) < 1e-9 for v in (lo, hi))
                    and step in SWEEP_BETA_STEPS):
                refuse("sweep_beta", "the sweep's β range must lie in [0, 1] on a 0.05 grid, its step one of "
                                     + ", ".join(f"{x:g}" for x in SWEEP_BETA_STEPS))
            else:
                out["beta"] = (round(lo, 2), round(hi, 2), step)
    if "sweep_gammas" in params:
        try:
            gammas = [float(g) for g in parse_json(params["sweep_gammas"], "sweep_gammas")]
        except (ValueError, TypeError):  # (a NestingError too: a list nested thousands deep)
            gammas = None
        if gammas is None or not all(any(abs(g - p) < 1e-12 for p in PAPER_GAMMAS) for g in gammas):
            refuse("sweep_gammas", "the sweep's γ values must be a list of the offered values (0, 2^-8 ... 2^-3)")
        else:
            out["gammas"] = [p for p in PAPER_GAMMAS if any(abs(g - p) < 1e-12 for g in gammas)]
    if "sweep_include" in params:
        if params["sweep_include"] in ("true", "false"):
            out["include"] = params["sweep_include"] == "true"
        else:
            refuse("sweep_include", "must be true or false")
    return out, notes


def sweep_param(variant: str | None, beta: tuple, gammas: list, include: bool) -> dict:
    """The query parameters of the sweep page's grid (those not at their default).

    >>> sweep_param("ELM-I", (0.05, 0.95, 0.05), [0.0], True)
    {'sweep_variant': 'ELM-I', 'sweep_gammas': '[0.0]'}
    """
    out = {}
    if variant is not None and variant != SWEEPABLE[0]:
        out["sweep_variant"] = variant
    if tuple(beta) != SWEEP_DEFAULTS["beta"]:
        out["sweep_beta"] = ",".join(f"{v:g}" for v in beta)
    if list(gammas) != list(PAPER_GAMMAS):
        out["sweep_gammas"] = json.dumps([float(g) for g in gammas])
    if include != SWEEP_DEFAULTS["include"]:
        out["sweep_include"] = "true" if include else "false"
    return out


def sweep_values(sweep: dict) -> dict:
    """The sweep page's grid: the link's values (:func:`read_sweep`) over the defaults, as :func:`sweep_param`
    takes them."""
    return {"variant": sweep.get("variant"), "beta": sweep.get("beta", SWEEP_DEFAULTS["beta"]),
            "gammas": sweep.get("gammas", list(PAPER_GAMMAS)),
            "include": sweep.get("include", SWEEP_DEFAULTS["include"])}


def set_sweep(variant: str | None, beta: tuple, gammas: list, include: bool):
    """The sweep's grid its page shows (when it is drawn again, after another page) and the link carries, from
    now on."""
    st.session_state[SWEEP] = {"variant": variant, "beta": tuple(beta), "gammas": list(gammas), "include": include}
    _replace_extra(SWEEP_PARAMS, sweep_param(variant, beta, gammas, include))


def message(notes: list[Note]) -> str | None:
    if not notes:
        return None
    return "The link had values that cannot be applied: " + "; ".join(n.text() for n in notes) + "."


# --------------------------------------------------------------------------- the session's link state
def init_state() -> bool:
    """First run of a session: the controls' settings and the pending pinned run from the URL (or the
    defaults). True when this run did it."""
    ss = st.session_state
    if CANON in ss:
        return False
    params = st.query_params.to_dict()
    lesson, lesson_notes = read_lesson(params)
    if lesson is not None:  # the lesson's preset, and the link's own settings over it
        from ncld_core.config import PRESETS

        from .teaching import LESSONS

        preset = LESSONS[lesson[0]].preset
        params = {**PRESETS[preset].to_query_params(), **params}
        ss["preset_applied"] = preset
        ss.setdefault("presenting", True)
    cfg, notes = read_settings(params)
    baseline, more = read_baseline(params.get(LINK_PARAM))
    sweep, sweep_notes = read_sweep(params)
    ss[CANON] = cfg.to_dict()
    ss[URL_ERROR] = message(notes + more + lesson_notes + sweep_notes)
    ss[PENDING] = baseline
    ss[LESSON] = lesson
    ss[SWEEP] = sweep
    ss[LINK_EXTRA] = {**baseline_param(baseline), **lesson_param(lesson), **sweep_param(**sweep_values(sweep))}
    return True


def pending() -> RunConfig | None:
    """The link's pinned run, waiting for the visitor's click."""
    return st.session_state.get(PENDING)


def set_baseline(cfg: RunConfig | None):
    """The pinned run the link carries from now on (None: none); a pending one is dropped."""
    st.session_state[PENDING] = None
    _replace_extra((LINK_PARAM,), baseline_param(cfg))


def sync_url(cfg: RunConfig):
    """Put the settings (and the pinned run) in the URL so that the link reproduces them."""
    want = {**cfg.to_query_params(), **(st.session_state.get(LINK_EXTRA) or {})}
    if want != st.query_params.to_dict():
        st.query_params.from_dict(want)
