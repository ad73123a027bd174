"""RunConfig: per-field validation, URL and TOML round trips."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ncld_core.config import MAX_INSTANCES, PRESETS, RunConfig


@pytest.mark.parametrize(
    "changes, field, text",
    [
        (dict(chunk_size=1), "chunk_size", "at least 2"),
        (dict(rho_low=0.3, rho_high=0.2), "rho_high", "at least rho_low"),
        (dict(rho_high=0.55), "rho_high", "below 0.5"),
        (dict(noise="table", rho_pos=[0.5] * 10, rho_neg=[0.6] * 10), "rates", "must be < 1"),
        (dict(noise="table", rho_pos=[0.1] * 3, rho_neg=[0.1] * 3), "rates", "3 rates but there are 10 labels"),
        (dict(schedule="growth@100, growth@200"), "schedule", "already multi-label"),
        (dict(schedule="growth@99999"), "schedule", "beyond"),
        (dict(n_neighbors=300), "n_neighbors", "below the chunk size"),
        (dict(beta=1.5), "beta", "[0, 1]"),
        (dict(delta=0.0), "delta", "(0, 1)"),
        (dict(models=["ELM-Z"]), "models", "unknown model"),
        (dict(models=[]), "models", "choose at least one model"),  # the references alone are no run
        (dict(cardinality=12.0), "cardinality", "(0, 10)"),
        (dict(n_instances=10**13), "n_instances", "must be in [2, 1000000]"),
        (dict(n_instances=10**6, n_features=100), "n_instances", "past the budget of 512 MB"),
        (dict(n_features=100_000), "n_features", "past the budget of 512 MB"),
        (dict(n_labels=1000), "n_labels", "past the budget of 512 MB"),
        (dict(monitors=["welch", "welch"], detector="paper"), "monitors", "each detector once"),
        (dict(monitors=["paper"], detector="paper"), "monitors", "must not repeat the acting detector 'paper'"),
        (dict(references="yes"), "references", "true or false"),
        (dict(rho_pos=["a"]), "rho_pos", "list of numbers"),
        (dict(schedule=3), "schedule", "must be text"),
        (dict(models="ELM-O"), "models", "list of model names"),
        (dict(detector=["paper"]), "detector", "must be one of"),
        (dict(trusted_fraction=0.7), "trusted_fraction", "[0, 0.5]"),
        (dict(trusted_fraction="some"), "trusted_fraction", "trusted_fraction"),
    ],
)
def test_errors_name_the_field(changes, field, text):
    err = RunConfig(**changes).errors()
    assert field in err, err
    assert text in err[field]


def test_the_synthetic_budget_bounds_what_the_generator_holds():
    """synthetic_bytes is an upper bound of the generator's peak (tracemalloc), so the budget is one too."""
    import tracemalloc

    from ncld_core.stream.synthetic import make_synthetic_stream, synthetic_bytes

    for n, d, q in ((2000, 60, 10), (2000, 5, 40), (60_000, 5, 5)):
        tracemalloc.start()
        make_synthetic_stream(n, d, q, random_state=0)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert 0.5 * synthetic_bytes(n, d, q) < peak <= synthetic_bytes(n, d, q), (n, d, q)
    assert RunConfig(n_instances=500_000).errors() == {}  # long streams of the default sizes still fit


def test_defaults_and_presets_are_valid():
    assert RunConfig().errors() == {}
    for name, cfg in PRESETS.items():
        assert cfg.errors() == {}, name


def test_dataset_size_is_checked_when_known():
    err = RunConfig(dataset="medical", n_instances=5000).errors(n_available=978)
    assert "only 978 instances" in err["n_instances"]


configs = st.builds(
    RunConfig,
    chunk_size=st.integers(2, 5000),
    beta=st.floats(0, 1),
    gamma=st.sampled_from([0.0, 2.0**-6, 0.005]),
    schedule=st.sampled_from(["", "growth@2500", "reduction@100, growth@300"]),
    models=st.lists(st.sampled_from(["ELM-O", "ELM-I", "ELM-II", "ELM (plain)"]), unique=True),
    references=st.booleans(),
    n_instances=st.one_of(st.none(), st.integers(2, 10_000)),
    noise=st.sampled_from(["none", "range", "table", "missing"]),
    rho_pos=st.lists(st.floats(0, 0.4), max_size=4),
    trusted_fraction=st.sampled_from([0.0, 0.005, 0.01, 0.05]),
    model_rates=st.sampled_from(["known", "estimate"]),
)


@settings(max_examples=100, deadline=None)
@given(configs)
def test_url_round_trip(cfg):
    params = cfg.to_query_params()
    assert all(isinstance(v, str) for v in params.values())
    assert RunConfig.from_query_params(params) == cfg


@settings(max_examples=50, deadline=None)
@given(configs)
def test_toml_round_trip(cfg):
    assert RunConfig.from_toml(cfg.to_toml()) == cfg


def test_bad_link_value_is_a_clear_error():
    with pytest.raises(ValueError, match="chunk_size: cannot read 'abc'"):
        RunConfig.from_query_params({"chunk_size": "abc"})


def test_unknown_toml_key_is_refused():
    with pytest.raises(ValueError, match="unknown configuration key"):
        RunConfig.from_toml("chunksize = 3\n")
    with pytest.raises(ValueError, match="not valid TOML"):
        RunConfig.from_toml("chunk_size = = 3\n")


def test_errors_check_the_schedule_against_the_datasets_pools():
    # 3 single-label and 5 multi-label instances: growth@4 needs 4 single-label ones.
    Y = np.array([[1, 0, 0]] * 3 + [[1, 1, 0]] * 5)
    cfg = RunConfig(dataset="real", chunk_size=2, n_neighbors=1, schedule="growth@4")
    assert "3 single-label" in cfg.errors(n_available=8, n_labels_available=3, Y_true=Y)["schedule"]
    assert "schedule" not in RunConfig(dataset="real", chunk_size=2, n_neighbors=1, schedule="growth@3").errors(
        n_available=8, n_labels_available=3, Y_true=Y)


# ---------------------------------------------------------------- each field and each limit declared once
def test_fields_are_declared_once_and_model_params_are_the_models():
    import dataclasses

    from ncld_core.config import MODEL_PARAMS, STREAM_FIELDS, ModelParams, StreamSpec
    from ncld_core.model.elm_ncld import ELMNCLD

    names = [f.name for f in dataclasses.fields(RunConfig)]
    assert len(names) == len(set(names))
    assert STREAM_FIELDS == tuple(f.name for f in dataclasses.fields(StreamSpec))
    assert MODEL_PARAMS == tuple(f.name for f in dataclasses.fields(ModelParams))
    assert set(STREAM_FIELDS) | set(MODEL_PARAMS) <= set(names)
    model = ELMNCLD().get_params()
    assert set(MODEL_PARAMS) <= set(model)  # every parameter the config carries is the model's
    assert {k: getattr(RunConfig(), k) for k in MODEL_PARAMS if k != "monitors"} == {
        k: model[k] for k in MODEL_PARAMS if k != "monitors"}
    cfg = RunConfig(beta=0.3, schedule="growth@2500")
    assert cfg.stream == StreamSpec(schedule="growth@2500") and cfg.model == ModelParams(beta=0.3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.beta = 0.5


@pytest.mark.parametrize("name, value", [("n_hidden", 200_000), ("n_hidden", 0), ("n_neighbors", 0), ("beta", 1.5),
                                         ("alpha", 0.0), ("delta", 1.0)])
def test_range_messages_are_the_models(name, value):
    import numpy as np

    from ncld_core.model.elm_ncld import ELMNCLD

    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(40, 3)), (rng.random((40, 4)) < 0.3).astype(int)
    with pytest.raises(ValueError) as raised:
        ELMNCLD(**{name: value}).partial_fit(X, Y)
    assert RunConfig(**{name: value}).errors()[name] == str(raised.value)
    assert name in str(raised.value)  # the message names the control's parameter


def test_n_hidden_limit_is_the_models():
    assert "n_hidden" not in RunConfig(n_hidden=20_000).errors()  # the config once stopped at 10,000


def test_schedule_is_parsed_once_per_config(monkeypatch):
    from ncld_core.stream.schedule import DriftSchedule

    calls = []
    parse = DriftSchedule.parse.__func__

    def counted(cls, text, **kw):
        calls.append(text)
        return parse(cls, text, **kw)

    monkeypatch.setattr(DriftSchedule, "parse", classmethod(counted))
    cfg = RunConfig(schedule="growth@300", n_instances=600, chunk_size=100, n_neighbors=5, n_hidden=20)
    assert cfg.errors() == {} and cfg.errors() == {}
    cfg.check()
    stream = cfg.build_stream()
    assert [(cp.position, cp.kind) for cp in stream.change_points] == [(300, "growth")]
    assert cfg.drift_schedule is cfg.stream.drift_schedule
    assert calls == ["growth@300"]
    bad = RunConfig(schedule="sideways@3")
    assert "schedule" in bad.errors() and "schedule" in bad.errors()
    assert calls == ["growth@300", "sideways@3"]


def test_flip_rate_messages_come_from_one_check():
    from ncld_core.validation import check_flip_rates

    with pytest.raises(ValueError) as raised:
        check_flip_rates([0.5] * 10, [0.6] * 10, 10, source="flip-rate table")
    assert RunConfig(noise="table", rho_pos=[0.5] * 10, rho_neg=[0.6] * 10).errors()["rates"] == str(raised.value)


def test_a_short_last_chunk_counts_as_a_chunk():
    """medical (978 instances) in chunks of 500 is two chunks, 500 + 478: accepted (the comparison needs it)."""
    assert "chunk_size" not in RunConfig(n_instances=978, chunk_size=500).errors()
    assert "chunk_size" in RunConfig(n_instances=500, chunk_size=500).errors()


@pytest.mark.parametrize("n, k", [(2, 1), (2, 20), (7, 20), (21, 20)])
def test_a_stream_too_short_for_any_chunk_size_says_to_lengthen_it(n, k):
    """No chunk size can fix these (at least 2 instances, more than K, two chunks): the message is on the stream
    length and suggests no chunk size the checks then refuse; a stream of K + 2 can be run."""
    err = RunConfig(n_instances=n, chunk_size=250, n_neighbors=k).errors()
    assert set(err) == {"n_instances"} and "smaller than" not in err["n_instances"], err
    fixed = RunConfig(n_instances=max(k + 2, 3), chunk_size=max(k + 1, 2), n_neighbors=k)
    assert not fixed.errors(), fixed.errors()
    # where a chunk size does fix it, the message suggests one that the checks accept
    err = RunConfig(n_instances=100, chunk_size=250, n_neighbors=20).errors()
    assert "smaller than 100" in err["chunk_size"] and not RunConfig(n_instances=100, chunk_size=99).errors()


@pytest.mark.parametrize("n", [-100, 1])
def test_a_stream_length_below_its_range_gets_the_ranges_message(n):
    """'the stream (-100 instances) is too short for n_neighbors = 20' said something no stream is: below its
    range, the length gets the range's message."""
    assert RunConfig(n_instances=n).errors() == {"n_instances": f"n_instances must be in [2, {MAX_INSTANCES}], got {n}"}


def test_a_trusted_fraction_marks_the_stream_and_reaches_the_models():
    cfg = RunConfig(n_instances=1000, chunk_size=250, noise="missing", model_rates="estimate", trusted_fraction=0.05,
                    models=["ELM-O"], references=False)
    stream = cfg.build_stream()
    assert stream.n_trusted == int(stream.trusted.sum()) > 0
    assert RunConfig.from_query_params(cfg.to_query_params()) == cfg == RunConfig.from_toml(cfg.to_toml())
    assert "trusted_fraction" in cfg.to_query_params()
    same = RunConfig(**{**cfg.to_dict(), "trusted_fraction": 0.0}).build_stream()
    assert same.trusted is None and np.array_equal(same.Y_noisy, stream.Y_noisy)  # nothing else changes
    result = cfg.runner().run(stream)
    last = result.chunks[-1].diagnostics["ELM-O"]
    assert last.n_trusted == stream.n_trusted and last.lcard_identified


@pytest.mark.parametrize("key", ["dataset", "n_instances", "models", "rho_pos", "references"])
def test_a_link_value_nested_thousands_deep_is_a_named_error(key):
    """Issue 41 item 3: `?dataset=[[[...` (1,200 deep) or a 5,000-deep object was a RecursionError."""
    from ncld_core.validation import NestingError

    deep = ["[" * 1200] + (['{"a": ' * 5000 + "1" + "}" * 5000] if key != "dataset" else [])  # ({...: a name)
    for raw in deep:
        with pytest.raises(NestingError, match=rf"^{key}: nested more than 64 levels deep"):
            RunConfig.from_query_params({key: raw})


def test_a_link_value_past_the_length_bound_is_refused_before_it_is_parsed(monkeypatch):
    """Issue 41 item 1: a link's value is bounded in characters before any parsing; the longest real one (a pinned
    run with two full-precision flip-rate tables of 1,000 labels) fits."""
    import json

    import ncld_core.config as config
    from ncld_core.config import MAX_LINK_VALUE_CHARS

    rates = list(np.random.default_rng(0).uniform(0.01, 0.3, 1000))
    longest = RunConfig(n_labels=1000, noise="table", rho_pos=rates, rho_neg=rates[::-1], schedule=", ".join(
        f"{'growth' if i % 2 == 0 else 'reduction'}@{100_000 + i}" for i in range(100)))
    baseline = json.dumps(longest.to_query_params(), sort_keys=True, separators=(",", ":"))
    assert len(baseline) < MAX_LINK_VALUE_CHARS
    parsed = []
    monkeypatch.setattr(config, "parse_json", lambda *a: parsed.append(a))
    with pytest.raises(ValueError, match=r"^rho_pos: the link's value has 65,537 characters, past the bound of 65,536$"):
        RunConfig.from_query_params({"rho_pos": "[" + "1," * 32767 + "1]"})
    with pytest.raises(ValueError, match=r"^schedule: the link's value has 71,"):
        RunConfig.from_query_params({"schedule": "growth@10," * 7100})
    assert not parsed


def test_a_malformed_link_value_is_quoted_short():
    with pytest.raises(ValueError, match=r"^n_hidden: cannot read 'x{19}… \(5002 characters\) from the link$"):
        RunConfig.from_query_params({"n_hidden": "x" * 5000})


def test_long_model_and_monitor_lists_are_checked_in_linear_time_and_said_short():
    """A TOML file or a link can carry thousands of list items: 'unknown model(s)' listed every one (a 1 MB
    message) and the monitors' repeat check counted each item over the whole list (20,000 items: 0.6 s)."""
    assert RunConfig(models=["x"] * 200_000).errors()["models"] == "unknown model(s): x"
    assert RunConfig(models=[f"m{i}" for i in range(9)]).errors()["models"] == "unknown model(s): m0, m1, m2, m3, m4 and 4 more"
    counted = []

    class Items(list):
        def count(self, item):  # the repeat check must not count item by item
            counted.append(item)
            return super().count(item)

    assert "more than once" in RunConfig(monitors=Items(["paper"] * 1000)).errors()["monitors"] and not counted


@pytest.mark.parametrize("text, depth", [
    ('a = [ """x"""", [[[1]]] ]', 4),  # a multi-line string closed by 4 quotes (one is its content's)
    ("a = [ '''x''''', [[[1]]] ]", 4),  # the same, literal, 5 quotes
    ('a = """ \\""" [[[ """', 0),  # an escaped quote inside a basic multi-line string
    ('a = """he said ""hi"" [x]"""', 0),  # two quotes inside one
    ("b = [[1, [2]], '[[']", 3),
])
def test_the_toml_nesting_scan_reads_strings_as_toml_does(text, depth):
    """Brackets inside TOML strings do not count (the reviewer's cases: a string closed by 4 or 5 quotes, read as
    still open, hid 2,000 levels; an escaped quote counted a string's brackets)."""
    import tomllib

    from ncld_core.validation import nesting_depth

    tomllib.loads(text)  # the cases are valid TOML
    assert nesting_depth(text, toml=True) == depth
