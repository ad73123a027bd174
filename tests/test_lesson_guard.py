"""A run is shown under a lesson's text only when the text holds for it (dashboard/lesson_guard.py), without Streamlit.

Issue 38 item 5: a run whose settings differ from the lesson's text is never shown under it. The page's side (the
flag drawn instead of the panels, the measured step left unread) is tests/test_dashboard_present.py.
"""

from __future__ import annotations

import itertools

import pytest

from dashboard.lesson_guard import ASPECTS, MAX_LISTED, differences, off_lesson, verdict
from dashboard.teaching import LESSONS
from ncld_core.config import PRESETS, RunConfig


def _with(preset: str, **changes) -> RunConfig:
    return RunConfig(**{**PRESETS[preset].to_dict(), **changes})


def test_every_lesson_states_known_aspects_and_its_preset_holds_them():
    for lesson in LESSONS.values():
        assert lesson.assumes and set(lesson.assumes) <= set(ASPECTS), lesson.slug
        assert {"dataset", "models"} <= set(lesson.assumes), lesson.slug  # named in every lesson's text or panels
        assert off_lesson(lesson, PRESETS[lesson.preset]) == [], lesson.slug


@pytest.mark.parametrize("shown,run_of", list(itertools.permutations(LESSONS, 2)))
def test_another_lessons_run_is_never_shown_under_a_lesson(shown, run_of):
    """Switching lessons: the previous lesson's run differs from the new one's text (its settings are not the new
    preset's), whether the controls hold the new lesson's settings (a lesson picked) or still the old ones."""
    lesson, other = LESSONS[shown], PRESETS[LESSONS[run_of].preset]
    assert off_lesson(lesson, other), (shown, run_of)  # the old settings on the controls: not the lesson's
    found = verdict(lesson, run_cfg=other, cfg=PRESETS[lesson.preset], same=False, live=False)
    assert not found.show and "press **Run** for the lesson's" in found.text, found


def test_a_moved_change_is_followed_by_the_text_and_a_run_from_before_is_not_shown():
    """Issue 38: the growth moved to 1000 and run, then the lesson's settings back: the text said instance 2500
    (chunk 10) with the red line at chunk 4."""
    growth = LESSONS["concept-growth"]
    moved = _with("concept growth", schedule="growth@1000")
    assert off_lesson(growth, moved) == []  # the text follows the change
    assert "instance 1000 (chunk 4)" in growth.step(1, cfg=moved).text
    assert verdict(growth, run_cfg=moved, cfg=moved, same=True, live=False).show
    back = verdict(growth, run_cfg=moved, cfg=PRESETS["concept growth"], same=False, live=False)
    assert not back.show and "change points growth@1000, the lesson's growth@2500" in back.text, back
    live = verdict(growth, run_cfg=moved, cfg=PRESETS["concept growth"], same=False, live=True)
    assert not live.show and live.text.endswith("the lesson's run starts."), live


@pytest.mark.parametrize("slug,changes,words", [
    ("clean-vs-noisy", {"noise": "none"}, "label noise none (the lesson's: drawn per label from a range)"),
    ("clean-vs-noisy", {"rho_high": 0.0, "rho_low": 0.0}, "label noise none"),
    ("clean-vs-noisy", {"decision": "f1-budget"}, "Decision rule f1-budget (the lesson's: paper)"),
    ("concept-growth", {"noise": "none"}, "label noise none (the lesson's: U[0.2, 0.4] per label)"),
    ("concept-growth", {"schedule": "growth@2500, reduction@4000"}, "growth, then reduction"),
    ("concept-growth", {"dataset": "emotions"}, "Dataset emotions (the lesson's: synthetic)"),
    ("label-shift", {"monitors": []}, "Compare detectors none"),
    ("unknown-noise", {"model_rates": "known"}, "The models are told known (the lesson's: estimate)"),
    ("why-beta-matters", {"beta": 0.5}, "label fit weight 0.5 (the lesson's: 1)"),
    ("why-beta-matters", {"models": ["ELM-O"]}, "models side by side ELM-O (the lesson's: ELM-O, ELM (plain))"),
])
def test_settings_the_text_states_are_flagged_with_the_lessons_back(slug, changes, words):
    lesson = LESSONS[slug]
    cfg = _with(lesson.preset, **changes)
    off = off_lesson(lesson, cfg)
    assert any(words in o for o in off), off
    found = verdict(lesson, run_cfg=cfg, cfg=cfg, same=True, live=True)  # even the run of the controls' settings
    assert not found.show and found.back and words in found.text, found


@pytest.mark.parametrize("slug,changes,said", [
    ("clean-vs-noisy", {"rho_low": 0.1, "rho_high": 0.3}, "Labels flipped at rates drawn from U[0.1, 0.3] per label"),
    ("unknown-noise", {"trusted_fraction": 0.0}, "Nobody has checked any instance by hand: the trusted sample is 0."),
    ("label-shift", {"chunk_size": 250, "schedule": "shift@3000"}, "In chunks of 250 instances, from instance 3000 "
                                                                    "(chunk 12)"),
])
def test_settings_the_text_follows_or_leaves_aside_are_not_flagged(slug, changes, said):
    """What a step asks a teacher to change (the trusted sample to 0), the knobs whose words the text fills in
    (a range's rates, the change, the chunk size) and settings it does not speak of (the seeds, L) keep the run."""
    lesson = LESSONS[slug]
    for cfg in (_with(lesson.preset, **changes), _with(lesson.preset, seed=7, n_hidden=50, shuffle_seed=3)):
        assert off_lesson(lesson, cfg) == [], cfg
        assert verdict(lesson, run_cfg=cfg, cfg=cfg, same=True, live=False).show
    assert said in lesson.step(1, cfg=_with(lesson.preset, **changes)).text


def test_no_run_is_nothing_to_hide_and_a_long_difference_is_counted():
    lesson = LESSONS["concept-growth"]
    assert verdict(lesson, run_cfg=None, cfg=PRESETS["concept growth"], same=False, live=False).show
    other = RunConfig(dataset="emotions", chunk_size=100, seed=3, beta=0.5, gamma=0.1, n_hidden=60)
    n = len(differences(other, PRESETS["concept growth"]))
    assert n == 8  # dataset, chunk size, schedule, beta, gamma, decision, L, seed
    found = verdict(lesson, run_cfg=other, cfg=PRESETS["concept growth"], same=False, live=False)
    # MAX_LISTED parts: the first differences, then how many more
    assert found.text.count("; ") == MAX_LISTED - 1 and f"and {n - MAX_LISTED + 1} more" in found.text, found.text
    assert differences(PRESETS["concept growth"], PRESETS["concept growth"]) == []
