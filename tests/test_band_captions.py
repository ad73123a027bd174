"""What the cardinality panel's bands are, said in at most 40 words each (issue 39, item 5): the caption under panel
(b) and the unknown-noise lesson, with the flip rates estimated."""

from __future__ import annotations

import re

import pytest

from dashboard import figures as F
from dashboard.teaching import BANDS, LESSONS
from ncld_core.config import RunConfig


def _words(text: str) -> int:
    return len(re.findall(r"\S+", text))


def test_each_band_is_said_in_at_most_40_words():
    assert set(BANDS) == {"identified", "trusted", "point"}
    assert all(_words(text) <= 40 for text in BANDS.values()), {k: _words(v) for k, v in BANDS.items()}
    # the identified set assumes no rate values and is no confidence interval; the interval and the point do assume
    assert "confidence interval" not in BANDS["identified"] and "assumes no values of the rates" in BANDS["identified"]
    assert "95 % confidence interval" in BANDS["trusted"] and "random sample" in BANDS["trusted"]
    assert "under an assumption" in BANDS["point"] and "biased" in BANDS["point"]


@pytest.fixture(scope="module")
def notes():
    base = RunConfig(n_instances=2000, chunk_size=250, noise="missing", model_rates="estimate", models=["ELM-O"],
                     references=False, n_hidden=20)
    out = {}
    for fraction in (0.0, 0.05):
        cfg = RunConfig(**{**base.to_dict(), "trusted_fraction": fraction})
        chunks = list(cfg.runner().iter_run(cfg.build_stream()))
        out[fraction] = (F.cardinality_mode(chunks, ["ELM-O"]), F.cardinality_note(chunks, ["ELM-O"]))
    return out


def test_the_caption_says_what_the_band_is_and_never_that_an_assumption_is_not_needed(notes):
    mode, note = notes[0.0]
    assert mode == "estimate" and note.startswith(BANDS["identified"] + " " + BANDS["point"])
    assert "confidence interval" not in note  # the identified set is not one
    mode, note = notes[0.05]
    assert mode == "trusted" and note.startswith(BANDS["trusted"])
    for _, note in notes.values():
        assert "needs no assumption" not in note and "whatever the rates" not in note


def test_the_unknown_noise_lesson_says_what_each_band_is():
    lesson = LESSONS["unknown-noise"]
    text = " ".join(step.text for step in lesson.steps)
    assert all(band in text for band in BANDS.values())
    for sentence in re.split(r"(?<=[.?!])\s+", text):
        if "identified set" in sentence:
            assert "confidence interval" not in sentence, sentence
        assert "needs no assumption" not in sentence, sentence
