"""The synthetic generator keeps the structure (clusters, label weights, offsets) of the settings it built last:
a stream rebuilt with another noise, trusted share, length or change position (a knob of the dashboard moved)
skips the reference sample. Its streams stay what they were, byte for byte."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from ncld_core.config import RunConfig
from ncld_core.stream import synthetic
from ncld_core.stream.synthetic import make_synthetic_stream

#: Streams of the dashboard's settings, by the RunConfig fields that differ from the defaults.
CASES = {
    "default": {},
    "growth": {"schedule": "growth@2500"},
    "shift-reduction": {"schedule": "shift@1500, reduction@3500"},
    "no-noise-trusted": {"noise": "none", "trusted_fraction": 0.05},
    "seed-labels": {"shuffle_seed": 3, "n_labels": 6, "n_features": 8, "rho_high": 0.3},
    "missing": {"noise": "missing", "cardinality": 1.5, "label_correlation": 0.2},
}

#: :func:`digest` of each case's stream, computed by the generator before it kept anything (main at d4032ac).
DIGESTS = {
    "default": "c94ec4b1fed535b8",
    "growth": "ca9ae317cd271714",
    "shift-reduction": "4a49fbdf7365f3bd",
    "no-noise-trusted": "b016f7278e7df386",
    "seed-labels": "c159efa955af49fc",
    "missing": "6b12a69818a76a3f",
}


def digest(stream) -> str:
    """SHA-256 (16 hex digits) of a stream's records: the bytes of its features, clean and noisy labels, flip rates
    and trusted rows, its change points and meta; the clean posteriors and the solved offsets to 10 decimals (they
    go through BLAS products, whose last bits may differ between CPUs: the exact comparison of the cached build
    against a fresh one is :func:`test_a_kept_structure_builds_the_same_stream_byte_for_byte`)."""
    h = hashlib.sha256()
    for name in ("X", "Y_true", "Y_noisy", "rho_pos", "rho_neg", "trusted"):
        a = getattr(stream, name)
        a = np.zeros(0) if a is None else np.ascontiguousarray(a)
        for part in (name, str(a.dtype), str(a.shape)):
            h.update(part.encode())
        h.update(a.tobytes())
    h.update(np.round(stream.P_true, 10).tobytes())
    h.update(json.dumps({k: v for k, v in stream.meta.items() if k != "offsets"}, sort_keys=True,
                        default=str).encode())
    h.update(json.dumps({k: round(v, 10) for k, v in stream.meta["offsets"].items()}, sort_keys=True).encode())
    h.update(repr(stream.change_points).encode())
    return h.hexdigest()[:16]


def _arrays(stream) -> dict:
    return {name: getattr(stream, name) for name in ("X", "Y_true", "Y_noisy", "P_true", "rho_pos", "rho_neg",
                                                      "trusted")}


@pytest.mark.parametrize("case", list(CASES))
def test_the_streams_are_those_the_generator_made_before_it_kept_anything(case):
    synthetic.kept_structures_clear()
    first, again = (RunConfig(**CASES[case]).build_stream() for _ in range(2))  # built afresh, then from what is kept
    assert digest(first) == digest(again) == DIGESTS[case]


def test_a_kept_structure_builds_the_same_stream_byte_for_byte():
    """Moving a knob of the stream (noise, trusted share, change position) after a build reuses its structure:
    each stream equals, bit for bit, the one built with nothing kept."""
    moved = [dict(flip_rates=(0.2, 0.3)), dict(trusted_fraction=0.02), dict(schedule="growth@1000"),
             dict(schedule="growth@3000"), dict(n_instances=3000), dict(flip_rates=None, schedule="shift@700")]
    for kw in moved:
        synthetic.kept_structures_clear()
        fresh = make_synthetic_stream(**{"n_instances": 5000, **kw}, random_state=4)
        make_synthetic_stream(5000, random_state=4, schedule=kw.get("schedule"))  # its structure kept (or not)
        kept = make_synthetic_stream(**{"n_instances": 5000, **kw}, random_state=4)
        for name, a in _arrays(fresh).items():
            b = _arrays(kept)[name]
            assert (a is None and b is None) or (a.dtype == b.dtype and a.tobytes() == b.tobytes()), (kw, name)
        assert fresh.meta == kept.meta and fresh.change_points == kept.change_points


def test_a_moved_noise_trusted_share_or_change_position_does_not_solve_the_offsets_again(monkeypatch):
    solved = []
    real = synthetic.solve_offset
    monkeypatch.setattr(synthetic, "solve_offset", lambda *a, **k: solved.append(1) or real(*a, **k))
    synthetic.kept_structures_clear()
    RunConfig().build_stream()
    assert len(solved) == 1  # the default's one regime
    for kw in (dict(rho_high=0.3), dict(trusted_fraction=0.01), dict(n_instances=4000), dict(noise="none")):
        RunConfig(**kw).build_stream()
    assert len(solved) == 1
    RunConfig(schedule="growth@1000").build_stream()  # two regimes: other targets, solved once
    RunConfig(schedule="reduction@2000").build_stream()
    assert len(solved) == 3
    RunConfig(shuffle_seed=1).build_stream()  # another seed: another structure
    assert len(solved) == 4


def test_a_generator_seed_is_never_kept():
    """A numpy Generator is consumed as it is used: two streams of one are two draws, nothing is kept for them."""
    synthetic.kept_structures_clear()
    rng = np.random.default_rng(3)
    a, b = make_synthetic_stream(500, random_state=rng), make_synthetic_stream(500, random_state=rng)
    assert not np.array_equal(a.X, b.X)
    assert synthetic.kept_structures_info().currsize == 0


def test_the_kept_arrays_cannot_be_changed_through_a_stream():
    synthetic.kept_structures_clear()
    s = make_synthetic_stream(500, random_state=8)
    s.X[:] = 0  # the stream's own arrays are the caller's
    again = make_synthetic_stream(500, random_state=8)
    assert again.X.any() and again.X.flags.writeable and not np.shares_memory(s.X, again.X)
