"""The sidebar grouped as data / noise / drift / model / run, its labels plain words with the symbols in their help
(issue 38 item 2), every setting still on a control."""

from __future__ import annotations

import re

from dashboard.controls import wkey
from dashboard.labels import label_of
from tests.apptest import open_app

#: Each setting's symbol, said in its control's help (the label is plain words).
SYMBOLS = {"beta": "β", "gamma": "γ", "delta": "δ", "alpha": "α", "n_hidden": "L", "n_neighbors": "K",
           "chunk_size": "N", "n_features": "d", "n_labels": "q", "rho_low": "ρ", "rho_high": "ρ", "noise": "ρ₊"}


def _sidebar_widgets(at):
    side = at.sidebar
    return [w for kind in (side.number_input, side.selectbox, side.radio, side.multiselect, side.checkbox)
            for w in kind]


def test_the_sidebar_is_grouped_data_noise_drift_model_run():
    at = open_app()
    heads = [m.value[5:] for m in at.sidebar.markdown if m.value.startswith("#### ")]
    assert heads == ["Data", "Noise", "Drift", "Model", "Run"], heads


def test_labels_are_plain_words_and_the_symbols_are_in_the_help():
    at = open_app({"schedule": "growth@2500"})
    widgets = {w.key: w for w in _sidebar_widgets(at) if w.key}
    symbol = re.compile(r"[βγδαρ]|(?<![\w-])[NLKdq](?![\w-])")
    assert not [w.label for w in widgets.values() if symbol.search(w.label)]
    for name, sym in SYMBOLS.items():
        w = widgets[wkey(name, at.session_state)]
        assert w.label == label_of(name), (name, w.label)  # messages name the setting as its control does
        assert sym in (w.help or ""), (name, w.help)
