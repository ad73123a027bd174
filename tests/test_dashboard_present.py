"""Presentation mode's lessons in Streamlit's AppTest (issue 38 item 5): every step opens its own panel."""

from __future__ import annotations

from tests.apptest import open_app

from dashboard.teaching import LESSONS


def test_every_step_opens_its_own_panel_whatever_was_on_screen():
    """Issue 38: a lesson's step 1 kept whatever panel was last on screen. Each step, reached by Next, Previous or
    a new lesson, shows the panel it names, after another panel was chosen by hand."""
    at = open_app({"lesson": "concept-growth", "step": "2"})
    assert at.session_state["present_panel"] == LESSONS["concept-growth"].step(2).panel
    for slug, lesson in LESSONS.items():
        at.selectbox(key="present_panel").set_value("threshold").run()  # a panel no step opens
        at.selectbox(key="lesson_pick").set_value(slug).run()
        assert at.session_state["present_panel"] == lesson.step(1).panel, slug
        for k in range(2, lesson.n_steps + 1):
            at.selectbox(key="present_panel").set_value("threshold").run()
            at.button(key="lesson_next").click().run()
            assert at.session_state["present_panel"] == lesson.step(k).panel, (slug, k)
        at.selectbox(key="present_panel").set_value("threshold").run()
        at.button(key="lesson_prev").click().run()
        assert at.session_state["present_panel"] == lesson.step(lesson.n_steps - 1).panel, slug
    assert not at.exception
