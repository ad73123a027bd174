"""Whether a run may be shown under a lesson's text (presentation mode), and what the page says when it may not.

A lesson's written steps (:class:`dashboard.teaching.Lesson`) state some settings: the dataset, the noise, the
changes, the models, ... (its ``assumes``, names of :data:`ASPECTS`, held at its preset's values), and fill others
in from the controls (:func:`dashboard.teaching.step_words`: where the change is, the chunk size, a range's flip
rates, the trusted sample). A run is shown under the lesson only when it is of the settings on the controls and
those agree with the lesson on every aspect it states (:func:`verdict`): a run of other settings (the previous
lesson's, a change point moved since) is never drawn under the text, and a flag says instead which settings differ
and what to press.

Plain data, no Streamlit (``dashboard/present_view.py`` draws the flag).

>>> from ncld_core.config import PRESETS, RunConfig
>>> from dashboard.teaching import LESSONS
>>> growth = LESSONS["concept-growth"]
>>> off_lesson(growth, PRESETS["concept growth"])
[]
>>> moved = RunConfig(**{**PRESETS["concept growth"].to_dict(), "schedule": "growth@1000"})
>>> off_lesson(growth, moved)  # the text follows where the change is
[]
>>> off_lesson(growth, RunConfig(**{**PRESETS["concept growth"].to_dict(), "noise": "none"}))
["Flip rates none (the lesson's: U[0.2, 0.4] per label)"]
>>> v = verdict(growth, run_cfg=PRESETS["concept growth"], cfg=moved, same=False, live=False)
>>> v.show, v.text
(False, "This run is for other settings than this lesson's (Drift schedule growth@2500, the lesson's growth@1000): press **Run** for the lesson's.")
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from dashboard.labels import label_of, value_text
from dashboard.teaching import DETECTOR_LABELS

__all__ = ["Aspect", "ASPECTS", "MAX_LISTED", "Verdict", "off_lesson", "back_to_lesson", "differences", "verdict"]

#: The most differences a flag lists (the rest counted): a projector's screen is short.
MAX_LISTED = 3


@dataclass(frozen=True)
class Aspect:
    """A setting a lesson's text may state: the ``field`` of :class:`ncld_core.config.RunConfig` whose control's
    label names it, its ``value`` in words (two settings with the same words are the same to the text), and the
    fields that make it (``fields``; default: ``field`` alone), put back by :func:`back_to_lesson`."""

    field: str
    value: Callable[[object], str]
    fields: tuple[str, ...] = ()

    @property
    def made_of(self) -> tuple[str, ...]:
        return self.fields or (self.field,)


def _noise(cfg) -> str:
    """The flip rates as a text states them: none, a range's bounds, a family, a table."""
    if cfg.noise == "none" or (cfg.noise == "range" and cfg.rho_high == 0):
        return "none"
    if cfg.noise == "range":
        return f"U[{cfg.rho_low:g}, {cfg.rho_high:g}] per label"
    if cfg.noise == "table":
        return "a table of rates per label"
    return f"the {cfg.noise} family"


def _noisy(cfg) -> str:
    """The flip rates' kind, their level aside (a lesson that fills the range in from the controls, ``{rates}``)."""
    kind = _noise(cfg)
    return "drawn per label from a range" if kind.startswith("U[") else kind


def _changes(cfg) -> str:
    """The kinds of the planted changes, in order (where they are is filled in from the controls)."""
    try:
        points = cfg.drift_schedule.points if cfg.drift_schedule else ()
    except ValueError:  # an unreadable schedule: its error is under its control
        return "an unreadable schedule"
    return ", then ".join(p.kind for p in points) or "none"


_NOISE_FIELDS = ("noise", "rho_low", "rho_high", "rho_pos", "rho_neg")


def _listed(values, names=None) -> str:
    return ", ".join((names or {}).get(v, v) for v in values) or "none"


#: The settings a lesson may state, by the name its ``assumes`` gives.
ASPECTS: dict[str, Aspect] = {
    "dataset": Aspect("dataset", lambda c: str(c.dataset)),
    "noise": Aspect("noise", _noise, _NOISE_FIELDS),
    "noisy": Aspect("noise", _noisy, _NOISE_FIELDS),
    "changes": Aspect("schedule", _changes),
    "models": Aspect("models", lambda c: _listed(c.models)),
    "model_rates": Aspect("model_rates", lambda c: str(c.model_rates)),
    "decision": Aspect("decision", lambda c: str(c.decision)),
    "beta": Aspect("beta", lambda c: value_text(c.beta)),
    "gamma": Aspect("gamma", lambda c: value_text(c.gamma)),
    "detector": Aspect("detector", lambda c: DETECTOR_LABELS.get(c.detector, str(c.detector))),
    "monitors": Aspect("monitors", lambda c: _listed(c.monitors, DETECTOR_LABELS)),
}


def off_lesson(lesson, cfg) -> list[str]:
    """Every aspect the ``lesson`` states on which the settings ``cfg`` are not its preset's, in words:
    ``"Flip rates none (the lesson's: U[0.2, 0.4] per label)"``; empty when its text holds for ``cfg``."""
    from ncld_core.config import PRESETS

    preset = PRESETS[lesson.preset]
    out = []
    for name in lesson.assumes:
        aspect = ASPECTS[name]
        have, want = aspect.value(cfg), aspect.value(preset)
        if have != want:
            out.append(f"{label_of(aspect.field)} {have} (the lesson's: {want})")
    return out


def back_to_lesson(lesson, cfg):
    """``cfg`` with every aspect the ``lesson`` states that differs put back to its preset's (the other settings
    kept: a change moved, a seed, the trusted sample).

    >>> from ncld_core.config import PRESETS, RunConfig
    >>> from dashboard.teaching import LESSONS
    >>> cfg = RunConfig(**{**PRESETS["concept growth"].to_dict(), "noise": "none", "seed": 4})
    >>> back = back_to_lesson(LESSONS["concept-growth"], cfg)
    >>> (back.noise, back.rho_low, back.rho_high, back.seed)
    ('range', 0.2, 0.4, 4)
    """
    from ncld_core.config import PRESETS, RunConfig

    preset = PRESETS[lesson.preset]
    fields = {f for name in lesson.assumes for f in ASPECTS[name].made_of
              if ASPECTS[name].value(cfg) != ASPECTS[name].value(preset)}
    return RunConfig(**{**cfg.to_dict(), **{f: getattr(preset, f) for f in fields}})


def differences(run_cfg, cfg) -> list[str]:
    """Every setting of ``run_cfg`` that is not the lesson's (``cfg``: the settings on the controls), in words.

    >>> from ncld_core.config import RunConfig
    >>> differences(RunConfig(beta=0.5, schedule="growth@100"), RunConfig(beta=1.0))
    ["Drift schedule growth@100, the lesson's none", "β 0.5, the lesson's 1"]
    """
    def words(value) -> str:
        return value_text(value) or "none"

    return [f"{label_of(f.name)} {words(getattr(run_cfg, f.name))}, the lesson's {words(getattr(cfg, f.name))}"
            for f in dataclasses.fields(cfg) if getattr(run_cfg, f.name) != getattr(cfg, f.name)]


@dataclass(frozen=True)
class Verdict:
    """Whether the run may be drawn under the lesson's text (``show``); else the flag's ``text`` (Markdown) and
    whether to offer going back to the lesson's settings (``back``: the settings on screen are not the lesson's)."""

    show: bool
    text: str | None = None
    back: bool = False


def verdict(lesson, *, run_cfg, cfg, same: bool, live: bool) -> Verdict:
    """Whether the session's run (of the settings ``run_cfg``; None: no run) may be shown under ``lesson``'s text,
    the settings on the controls being ``cfg``. ``same``: the run is of the controls' settings (an upload: of the
    same file too); ``live``: a moved control starts its run by itself (:mod:`dashboard.live_page`).

    The settings on screen not the lesson's: the text holds for neither them nor their run, and the flag offers the
    lesson's settings back. Else a run of other settings (a change moved since, the previous lesson's) is not drawn
    under it: the flag says which settings differ and that Run gives the lesson's run (the settings on the
    controls, which agree with the lesson)."""
    off = off_lesson(lesson, cfg)
    if off:
        return Verdict(False, "These settings are not the ones this lesson is written for: " + "; ".join(off)
                       + ". Go back to the lesson's settings, or choose *no lesson* to explore them.", back=True)
    if run_cfg is None:
        return Verdict(True)
    if not same:
        diff = differences(run_cfg, cfg)
        if len(diff) > MAX_LISTED:  # (another lesson's run differs in many)
            diff = diff[:MAX_LISTED - 1] + [f"and {len(diff) - MAX_LISTED + 1} more"]
        what = f" ({'; '.join(diff)})" if diff else ""
        return Verdict(False, f"This run is for other settings than this lesson's{what}: "
                       + ("the lesson's run starts." if live else "press **Run** for the lesson's."))
    return Verdict(True)
