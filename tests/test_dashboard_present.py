"""Presentation mode's lessons in Streamlit's AppTest (issue 38 item 5): every step opens its own panel, what a step
asks a teacher to change is a click away, and a run of other settings than the lesson's text is flagged instead of
drawn under it. The browser's twin, every step at 1280 x 720 and 1024 x 768, is
tests/test_dashboard_present_browser.py (slow tier); the guard's rules are tests/test_lesson_guard.py.
"""

from __future__ import annotations

import re

from tests.apptest import carried, open_app

from dashboard import live_session
from dashboard.link import CANON
from dashboard.teaching import LESSONS
from ncld_core.config import RunConfig


def _texts(at) -> str:
    return " ".join(m.value for m in at.markdown)


def _figures_drawn(at) -> set:
    """The panels a figure was sent to in the page's last run (dashboard.live_chart)."""
    return {k for payload in carried(at) for k in payload.get("figures", {})}


def _flag(at) -> str:
    return " ".join(m.value for m in at.markdown if "settings" in m.value and ":material/warning:" in m.value)


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


#: Words of a step that asks the teacher to change something or go elsewhere.
ASKS = re.compile(r"\b(Set|Change|Move|Turn|Switch|Open|Press)\b|the Sweep page")


def test_every_step_that_asks_for_a_change_offers_it():
    asking = {(slug, k) for slug, lesson in LESSONS.items() for k, step in enumerate(lesson.steps, start=1)
              if ASKS.search(step.text)}
    assert asking == {("unknown-noise", 4), ("why-beta-matters", 2)}, asking  # (a new one: give it its action)
    for slug, k in asking:
        assert LESSONS[slug].step(k).actions, (slug, k)


def test_what_a_step_asks_to_change_is_one_click_away():
    """The sidebar is hidden in presentation mode: "Set the trusted sample to 0" is a button of its step, and
    "Then the Sweep page" a link to it."""
    at = open_app({"lesson": "unknown-noise", "step": "4"})
    button = at.button(key="lesson_action_0")
    assert button.label == "Set the trusted sample to 0" and not button.disabled
    button.click().run()
    assert at.session_state[CANON]["trusted_fraction"] == 0.0
    assert "trusted_fraction" not in at.query_params  # the link follows (0, the default, is left out)
    assert at.button(key="lesson_action_0").disabled  # done
    assert not _flag(at)  # the text follows the trusted sample: not flagged
    for _ in range(3):  # back to step 1, whose text says who checked what
        at.button(key="lesson_prev").click().run()
    assert "Nobody has checked any instance by hand" in _texts(at)
    at = open_app({"lesson": "why-beta-matters", "step": "2"})
    links = [p for p in at.get("page_link")]
    assert [p.proto.label for p in links] == ["Open the Sweep page"], links
    assert links[0].proto.page.endswith("sweep.py") or "sweep" in links[0].proto.page, links[0].proto


def test_settings_that_are_not_the_lessons_are_flagged_with_the_way_back():
    """A link (or a knob) that turns what the text states, here no noise under a lesson that speaks of it: the
    flag says so in place of the panel, Run's run of those settings is not drawn under the text, and the button
    puts the lesson's settings back."""
    at = open_app({"lesson": "concept-growth", "step": "4", "noise": "none", "n_instances": "1500",
                   "schedule": "growth@750"})
    flag = _flag(at)
    assert "label noise none (the lesson's: U[0.2, 0.4] per label)" in flag, flag
    at.button(key="run_button").click().run()
    assert at.session_state["run"].status == "done"
    assert not _figures_drawn(at), _figures_drawn(at)  # the run is not drawn under the lesson
    assert "Press **Run**" in _texts(at)  # nor measured by its last step
    at.button(key="lesson_back").click().run()  # a live page: the lesson's run starts by itself
    back = RunConfig(**at.session_state[CANON])
    assert (back.noise, back.rho_low, back.rho_high) == ("range", 0.2, 0.4)  # the lesson's noise ...
    assert (back.n_instances, back.schedule) == (1500, "growth@750")  # ... the rest kept
    assert not _flag(at) and at.session_state["run"].cfg == back
    assert "The acting detector fired in" in _texts(at), _texts(at)
    assert not at.exception


def test_a_run_of_the_previous_lesson_is_never_shown_under_the_next():
    """Issue 38: going from clean-vs-noisy to concept growth, step 1 showed the clean-vs-noisy results. On a page
    that is not live (after Stop) the new lesson's settings do not start their run: the old run is flagged, not
    drawn, until Run; on a live page the new lesson's run replaces it at once."""
    at = open_app({"lesson": "concept-growth", "step": "1", "n_instances": "1500", "schedule": "growth@750"})
    at.button(key="run_button").click().run()
    assert at.session_state["run"].status == "done" and "metrics" in _figures_drawn(at)
    at.session_state[live_session.LIVE] = False  # as after Stop: a moved control starts nothing
    at.selectbox(key="lesson_pick").set_value("label-shift").run()
    flag = _flag(at)
    assert flag.startswith(":material/warning: This run is for other settings than this lesson's (") and \
        "press **Run** for the lesson's" in flag, flag
    assert not _figures_drawn(at) and "panel_metrics" not in str(at.main)
    at.button(key="lesson_next").click().run()
    at.button(key="lesson_next").click().run()
    at.button(key="lesson_next").click().run()
    assert "Press **Run**" in _texts(at)  # the measured step does not read the other lesson's run
    assert not at.exception


def test_a_panels_caption_leaves_out_what_the_lesson_step_beside_it_says():
    """Step 3 of the unknown-noise lesson says what the trusted band is; panel (b)'s caption, which says it too
    outside presentation mode, then and at the steps after keeps only what this run measured (the screen's height
    is short: at 820 x 768 the step and the whole caption ran past the screen); before step 3 it says it."""
    from dashboard.teaching import BANDS

    at = open_app({"lesson": "unknown-noise", "step": "3", "n_instances": "1500"})
    at.button(key="run_button").click().run()
    assert at.session_state["run"].status == "done"
    captions = [c.value for c in at.caption]
    measured = [c for c in captions if c.startswith("This run") and "trusted rows" in c]
    assert measured, captions
    assert not any(BANDS["trusted"] in c for c in captions), captions
    assert BANDS["trusted"] in _texts(at)  # said once, by the step
    at.button(key="lesson_next").click().run()  # step 4: the trusted band still drawn, said at step 3
    assert not any(BANDS["trusted"] in c for c in (c.value for c in at.caption))
    at.button(key="lesson_prev").click().run()
    at.button(key="lesson_prev").click().run()  # step 2 has not said it: the caption does
    at.selectbox(key="present_panel").set_value("cardinality").run()
    assert any(BANDS["trusted"] in c for c in (c.value for c in at.caption)), [c.value for c in at.caption]
