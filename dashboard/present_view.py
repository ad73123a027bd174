"""Presentation mode of the Live run page: the panel chosen or stepped through, and a guided lesson's steps.

Widgets of ``dashboard/views/run.py`` in presentation mode (one panel at a time, large type): the lesson's
chooser (:func:`lesson_select`), its current step with what it asks a teacher to change and the step buttons
(:func:`lesson_box`), the panel's chooser (:func:`panel_nav`; with Previous / Next when there is no lesson), and
in place of a run that may not be shown under the lesson's text, the flag that says why (:func:`stale_flag`,
decided by :mod:`dashboard.lesson_guard`). With a lesson, all of them but the flag stand beside the panel. A
lesson's link opens its step (``dashboard.link``); every step opens its own panel.
"""

from __future__ import annotations

import streamlit as st

from dashboard import knob_row, lesson_guard, link, live_session, panels
from dashboard.controls import set_config
from dashboard.link import CANON
from dashboard.teaching import LESSONS
from dashboard.ui import md_escape
from ncld_core.config import PRESETS, RunConfig

__all__ = ["NO_LESSON", "guard", "lesson_select", "lesson_box", "stale_flag", "panel_nav"]

ss = st.session_state
NO_LESSON = ""


def _step_panel(delta: int):
    keys = [p.key for p in panels.PANELS]
    cur = ss.get("present_panel") if ss.get("present_panel") in keys else keys[0]
    ss["present_panel"] = keys[(keys.index(cur) + delta) % len(keys)]


def _go_to_step(at):
    """Show step ``at = (slug, k)`` (None: no lesson): the link follows, and the step opens its own panel."""
    link.set_lesson(at)
    if at is not None:
        ss["present_panel"] = LESSONS[at[0]].step(at[1]).panel
    ss["lesson_pick"] = at[0] if at else NO_LESSON


def _lesson_settings(slug: str):
    """The lesson's settings on every control: its preset's."""
    preset = LESSONS[slug].preset
    set_config(PRESETS[preset])
    ss["preset_applied"] = preset


def _pick_lesson():
    slug = ss.get("lesson_pick") or None
    if slug is None:
        _go_to_step(None)
        return
    _lesson_settings(slug)  # the lesson runs its preset: every setting on a control
    _go_to_step((slug, 1))


def _back_to_lesson(slug: str):
    """The settings the lesson's text states put back on their controls (:func:`lesson_guard.back_to_lesson`)."""
    set_config(lesson_guard.back_to_lesson(LESSONS[slug], RunConfig(**ss[CANON])))


def _apply(settings: tuple):
    """A step's action: ``settings`` (``(field, value)`` pairs) on their controls, the other settings kept."""
    set_config(RunConfig(**{**ss[CANON], **dict(settings)}))


def guard(run) -> lesson_guard.Verdict:
    """Whether ``run`` (None: none) may be drawn under the lesson's text (always, without a lesson)."""
    at = ss.get(link.LESSON)
    if at is None:
        return lesson_guard.Verdict(True)
    return lesson_guard.verdict(LESSONS[at[0]], run_cfg=run.cfg if run is not None else None, cfg=ss["ctx"].cfg,
                                same=run is not None and live_session.same_settings(run),
                                live=bool(ss.get(live_session.LIVE)))


def stale_flag(run) -> bool:
    """Where the panel would be: the flag of a run that may not be shown under the lesson's text (its panels are
    not drawn) and of settings that are not the lesson's, with the button back to them. True when flagged."""
    found = guard(run)
    if found.text is None:
        return False
    with st.container(border=True, key="lesson_stale"):
        st.markdown(f":material/warning: {found.text}")
        if found.back:
            slug = ss[link.LESSON][0]
            st.button("Back to the lesson's settings", key="lesson_back", icon=":material/undo:",
                      on_click=_back_to_lesson, args=(slug,),
                      help="Puts back what the lesson's text states; the other settings stay as they are.")
    return not found.show


def lesson_select():
    """The chooser of a lesson (presentation mode: on the page heading's line), its label hidden."""
    at = ss.get(link.LESSON)
    if ss.get("lesson_pick") != (at[0] if at else NO_LESSON):
        ss["lesson_pick"] = at[0] if at else NO_LESSON
    if at is not None and ss.get("lesson_shown") != at:  # opened by a link: its step's panel
        ss["lesson_shown"] = at
        ss["present_panel"] = LESSONS[at[0]].step(at[1]).panel
    st.selectbox("Lesson", [NO_LESSON, *LESSONS], key="lesson_pick", on_change=_pick_lesson,
                 format_func=lambda s: "no lesson: choose the panels yourself" if s == NO_LESSON
                 else f"lesson: {LESSONS[s].preset}", label_visibility="collapsed",
                 help="A preset as a short lecture: the setting, what to watch, then what this run measured. "
                      "The link opens the same step.")


def lesson_box(run, cfg):
    """With a lesson chosen, its current step: setting, what to watch, what ``run`` measured when it may be shown
    under the lesson (:func:`guard`), the settings on screen being ``cfg``; the buttons of what the step asks a
    teacher to change (the sidebar is hidden), then Previous / Next step. Beside the panel on a wide screen, above it
    on a narrow one (``dashboard/static/present.css``)."""
    at = ss.get(link.LESSON)
    if at is None:
        return
    lesson, k = LESSONS[at[0]], at[1]
    shown = run if run is not None and run.chunks and guard(run).show else None
    step = lesson.step(k, shown.result() if shown else None, shown.stream if shown else None, cfg=cfg)
    with st.container(border=True, key="lesson_step"):
        st.markdown(f"**{md_escape(lesson.preset)}** · step {k} of {lesson.n_steps}: **{md_escape(step.title)}**")
        st.markdown(step.text)
        for i, action in enumerate(step.actions):
            if action.page is not None:
                st.page_link(f"views/{action.page}", label=action.label, icon=":material/open_in_new:")
                continue
            done = all(ss[CANON].get(name) == value for name, value in action.settings)
            st.button(action.label, key=f"lesson_action_{i}", icon=":material/tune:", disabled=done,
                      on_click=_apply, args=(action.settings,),
                      help="Done: the settings say so." if done else "Sets it on its control; the run of the new "
                                                                     "settings starts by itself once Run was pressed.")
        _step_buttons(lesson, k)


def step_said(cfg) -> str:
    """The written text of the lesson's steps up to the one on screen (the settings ``cfg`` fill them in), "" without
    a lesson: what the class has been told, which the panels' captions need not say again
    (:func:`dashboard.run_panels.unsaid`)."""
    at = ss.get(link.LESSON)
    if at is None:
        return ""
    lesson = LESSONS[at[0]]
    return " ".join(lesson.step(k, cfg=cfg).text for k in range(1, min(at[1], lesson.n_steps) + 1))


def _present_label(key: str) -> str:
    index = next(i for i, p in enumerate(panels.PANELS) if p.key == key)
    return f"({panels.letter(index)}) {panels.PANELS[index].label}"


def _step_buttons(lesson, k: int):
    """A lesson's Previous / Next step (each step opens its own panel)."""
    p2, p3 = st.container(key="lesson_nav").columns(2, vertical_alignment="bottom")
    p2.button("Previous step", icon=":material/chevron_left:", key="lesson_prev", disabled=k <= 1,
              on_click=_go_to_step, args=((lesson.slug, k - 1),), width="stretch")
    p3.button("Next step", icon=":material/chevron_right:", key="lesson_next", disabled=k >= lesson.n_steps,
              on_click=_go_to_step, args=((lesson.slug, k + 1),), width="stretch")


def panel_nav():
    """The chooser of the panel, with Previous / Next beside it (with a lesson: alone, under the lesson's step and
    its buttons, :func:`lesson_box`), and the knobs (the sidebar is hidden: :func:`dashboard.knob_row.popover`);
    the panel shown."""
    keys = [p.key for p in panels.PANELS]
    if ss.get("present_panel") not in keys:
        ss["present_panel"] = keys[0]
    if ss.get(link.LESSON) is not None:
        p1, p4 = st.container(key="present_nav").columns([6, 1], vertical_alignment="bottom")
        with p1:
            st.selectbox("Panel", keys, key="present_panel", format_func=_present_label, label_visibility="collapsed")
        with p4:
            knob_row.popover(ss["ctx"])
        return panels.by_key(ss.get("present_panel") or keys[0])
    p1, p2, p3, p4 = st.container(key="present_nav").columns([4, 1, 1, 1], vertical_alignment="bottom")
    with p1:
        st.selectbox("Panel", keys, key="present_panel", format_func=_present_label, label_visibility="collapsed")
    p2.button("Previous", icon=":material/chevron_left:", on_click=_step_panel, args=(-1,), key="present_prev",
              width="stretch")
    p3.button("Next", icon=":material/chevron_right:", on_click=_step_panel, args=(1,), key="present_next",
              width="stretch")
    with p4:
        knob_row.popover(ss["ctx"])
    return panels.by_key(ss.get("present_panel") or keys[0])
