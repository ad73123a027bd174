"""The command line: tables, files, and errors without tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from ncld_core.cli import main


def test_run_synthetic_writes_csv_and_json(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["run", "--n-instances", "1000", "--chunk-size", "250", "--schedule", "growth@500",
                 "--quiet", "--out", str(out)])
    assert code == 0
    text = capsys.readouterr().out
    for name in ("ELM-O", "ELM-I", "ELM-II", "all-negative", "noisy-prior"):
        assert name in text
    frame = pd.read_csv(out / "chunks.csv")
    assert frame["chunk"].max() == 3
    doc = json.loads((out / "summary.json").read_text())
    assert doc["change_points"][0]["position"] == 500


def test_toml_config_and_flag_override(tmp_path, capsys):
    cfg = tmp_path / "run.toml"
    cfg.write_text('n_instances = 600\nchunk_size = 200\nmodels = ["ELM-O"]\nreferences = false\n')
    assert main(["run", "--config", str(cfg), "--beta", "0.5", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "ELM-O" in text and "noisy-prior" not in text


def test_trusted_fraction_and_model_rates(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "--n-instances", "1000", "--chunk-size", "250", "--noise", "missing", "--model-rates",
                 "estimate", "--trusted-fraction", "0.05", "--models", "ELM-O", "--quiet", "--out", str(out)]) == 0
    frame = pd.read_csv(out / "chunks.csv")
    trusted = frame[frame["model"] == "ELM-O"]["diag_n_trusted"]
    assert trusted.iloc[-1] > 0 and trusted.is_monotonic_increasing
    assert frame[frame["model"] == "ELM-O"]["diag_lcard_identified"].all()
    doc = json.loads((out / "summary.json").read_text())
    assert doc["config"]["trusted_fraction"] == 0.05 and doc["config"]["model_rates"] == "estimate"


def test_rates_csv(tmp_path, capsys):
    rates = tmp_path / "rates.csv"
    pd.DataFrame({"rho_pos": [0.1] * 10, "rho_neg": [0.2] * 10}).to_csv(rates, index=False)
    assert main(["run", "--n-instances", "600", "--chunk-size", "200", "--rates-csv", str(rates), "--quiet"]) == 0


def test_rates_csv_is_read_like_every_rates_table(tmp_path, data_dir):
    # A label column reorders the rows to the dataset's labels; spaces after commas are fine.
    from ncld_core.cli import build_parser, config_from_args
    from ncld_core.data import load_dataset

    names = list(load_dataset("medical").label_names)
    rates = tmp_path / "rates.csv"
    rows = [f"{name}, {0.01 * (j % 40):.2f}, 0.2" for j, name in enumerate(names)]
    rates.write_text("label, rho_pos, rho_neg\n" + "\n".join(reversed(rows)) + "\n")
    cfg = config_from_args(build_parser().parse_args(["run", "--dataset", "medical", "--rates-csv", str(rates)]))
    assert cfg.noise == "table"
    assert cfg.rho_pos == pytest.approx([0.01 * (j % 40) for j in range(len(names))])


@pytest.mark.parametrize(
    "argv, text",
    [
        (["run", "--dataset", "no-such-set"], "unknown dataset 'no-such-set'"),
        (["run", "--chunk-size", "1"], "chunk_size: chunk size must be at least 2"),
        (["run", "--schedule", "growth@999999"], "beyond"),
        (["run", "--rho-range", "0.3", "0.6"], "below 0.5"),
        (["run", "--config", "/nonexistent.toml"], "--config: no such file: /nonexistent.toml"),
        (["run", "--config", "/dev/zero"], "--config: not a regular file: /dev/zero"),
        (["run", "--rates-csv", "/"], "flip rates file: not a regular file: /"),
        (["run", "--trusted-fraction", "0.9"], "trusted_fraction"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(tmp_path, capsys, monkeypatch, argv, text):
    monkeypatch.delenv("NCLD_DATA_DIR", raising=False)
    out = tmp_path / "never"
    assert main(argv + ["--quiet", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and text in err
    assert "Traceback" not in err
    assert not out.exists()


@pytest.mark.datasets
def test_enron_paper_protocol_prints_the_table(data_dir):
    """Issue 3: on enron with the paper's protocol (seed 0) the command prints HL, F1, AP per model."""
    proc = subprocess.run(
        [sys.executable, "-m", "ncld_core", "run", "--dataset", "enron", "--noise", "range",
         "--rho-range", "0.2", "0.4", "--chunk-size", "500", "--seed", "0", "--quiet"],
        capture_output=True, text=True, timeout=300, env={**__import__("os").environ, "NCLD_DATA_DIR": str(data_dir)},
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = next(line for line in lines if "hamming_loss" in line)
    assert "micro_f1" in header and "average_precision" in header
    for name in ("ELM-O", "ELM-I", "ELM-II", "all-negative", "noisy-prior"):
        row = next(line for line in lines if line.startswith(name))
        values = [float(v) for v in row[len(name):].split()[:3]]
        assert all(0 <= v <= 1 for v in values)


def test_datasets_without_a_data_folder_says_where_to_put_them(monkeypatch, capsys, tmp_path):
    import ncld_core.data.catalog as catalog

    monkeypatch.delenv("NCLD_DATA_DIR", raising=False)
    monkeypatch.setattr(catalog, "REPO_DATA_DIR", tmp_path)  # an empty data/ folder
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert "Empty DataFrame" not in out
    assert out.startswith("no datasets found") and str(tmp_path) in out and "NCLD_DATA_DIR" in out


@pytest.mark.parametrize("argv, text", [
    (["run", "--seed", "abc"], "ncld run: error: argument --seed: invalid int value: 'abc' (see 'ncld run --help')"),
    (["bogus"], "ncld: error: argument command: invalid choice: 'bogus'"),
])
def test_a_flag_that_does_not_parse_is_one_line_naming_the_help(capsys, argv, text):
    """argparse's own errors: one line and the help to read, not its 14-line usage block."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.startswith(text) and err.count("\n") == 1 and "usage:" not in err


def test_out_that_cannot_be_reached_is_one_line(monkeypatch, tmp_path):
    """A folder on the way the process may not enter (exists() raises): a ValueError naming --out, not a
    PermissionError's traceback (monkeypatched: the tests run as root, who may enter everything)."""
    from pathlib import Path

    from ncld_core.files import check_writable

    def locked(self):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "exists", locked)
    with pytest.raises(ValueError, match=r"^--out .*: cannot reach it \(Permission denied\)$"):
        check_writable(tmp_path / "x", "--out", folder=True)


def test_a_real_parameter_past_a_float_is_refused_before_the_run():
    from ncld_core.config import RunConfig

    with pytest.raises(ValueError, match=r"alpha must be a finite number"):
        RunConfig(alpha=10**400).check()


#: A value of every RunConfig field, not its default, as flags give it (``--no-references`` for references).
FLAG_EXAMPLES = {
    "dataset": (["--dataset", "medical"], "medical"),
    "n_instances": (["--n-instances", "700"], 700),
    "chunk_size": (["--chunk-size", "100"], 100),
    "shuffle_seed": (["--shuffle-seed", "3"], 3),
    "n_features": (["--n-features", "7"], 7),
    "n_labels": (["--n-labels", "6"], 6),
    "cardinality": (["--cardinality", "1.5"], 1.5),
    "label_correlation": (["--label-correlation", "0.25"], 0.25),
    "noise": (["--noise", "missing"], "missing"),
    "rho_low": (["--rho-low", "0.1"], 0.1),
    "rho_high": (["--rho-high", "0.3"], 0.3),
    "rho_pos": (["--rho-pos", "0.1,0.2"], [0.1, 0.2]),
    "rho_neg": (["--rho-neg", "0.3,0.05"], [0.3, 0.05]),
    "schedule": (["--schedule", "growth@300"], "growth@300"),
    "trusted_fraction": (["--trusted-fraction", "0.02"], 0.02),
    "beta": (["--beta", "0.5"], 0.5),
    "gamma": (["--gamma", "0.25"], 0.25),
    "delta": (["--delta", "0.01"], 0.01),
    "detector": (["--detector", "paper"], "paper"),
    "monitors": (["--monitors", "welch,cardinality"], ["welch", "cardinality"]),
    "decision": (["--decision", "f1"], "f1"),
    "alpha": (["--alpha", "auto"], "auto"),
    "n_hidden": (["--n-hidden", "40"], 40),
    "n_neighbors": (["--n-neighbors", "4"], 4),
    "model_rates": (["--model-rates", "estimate"], "estimate"),
    "models": (["--models", "ELM-O,ELM (plain)"], ["ELM-O", "ELM (plain)"]),
    "references": (["--no-references"], False),
    "seed": (["--seed", "9"], 9),
}


def test_every_run_config_field_has_a_flag():
    """Issue 41 item 6: `--decision f1` was read as a float; every field is settable on the command line, a choice
    by its name. A new RunConfig field fails here until it has an example (and so a flag)."""
    import dataclasses

    from ncld_core.cli import build_parser, config_from_args
    from ncld_core.config import RunConfig

    fields = [f.name for f in dataclasses.fields(RunConfig)]
    assert sorted(FLAG_EXAMPLES) == sorted(fields)
    default = RunConfig()
    for name in fields:
        argv, value = FLAG_EXAMPLES[name]
        assert value != getattr(default, name), name
        cfg = config_from_args(build_parser().parse_args(["run", *argv]))
        assert getattr(cfg, name) == value, (name, argv)
    assert config_from_args(build_parser().parse_args(["run", "--alpha", "1,4"])).alpha == [1.0, 4.0]
    assert config_from_args(build_parser().parse_args(["run", "--rho-pos", "0.1"])).noise == "table"


def test_a_decision_rule_is_chosen_by_name(capsys):
    from ncld_core.model.decision import DECISIONS

    assert main(["run", "--decision", "f1", "--n-instances", "600", "--chunk-size", "200", "--models", "ELM-O",
                 "--quiet"]) == 0
    with pytest.raises(SystemExit):
        main(["run", "--decision", "f2"])
    err = capsys.readouterr().err
    assert "argument --decision: invalid choice: 'f2'" in err and all(name in err for name in DECISIONS)


def test_threads_are_capped_at_the_cores(monkeypatch, capsys):
    """Issue 41 item 10: `--threads 64` on 2 cores took the load to 41; it is capped, and a note says so."""
    import ncld_core.cli as cli
    from ncld_core import threads

    monkeypatch.setattr(cli, "available_cores", lambda: 2)
    budgets = []
    monkeypatch.setattr(cli, "set_budget", budgets.append)
    assert main(["--threads", "64", "datasets"]) == 0
    assert budgets == [2]
    assert "note: --threads 64 is more than the 2 cores this process may use: using 2" in capsys.readouterr().err
    assert main(["--threads", "2", "datasets"]) == 0 and budgets[-1] == 2
    assert "note" not in capsys.readouterr().err
    assert threads.available_cores() == len(__import__("os").sched_getaffinity(0))


@pytest.mark.parametrize("content, text", [
    ("beta = 0.9\nn_hidden = 7\n[run]\nchunk_size = 300\n",
     "beta, n_hidden outside the [run] table: put them under [run] (or leave out the [run] header)"),
    ("run = 5\n", "'run' must be a table ([run]) of configuration keys, got 5"),
    ("[run]\nbetta = 0.3\n", "unknown configuration key(s): betta"),
    ("x = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n", "nested more than 64 levels deep"),
    ("[run]\nmodels = " + "[" * 5000 + "]" * 5000 + "\n", "nested more than 64 levels deep"),
    ("[" + ".".join(["a"] * 5000) + "]\n", "nested more than 64 levels deep"),
    (b'dataset = "caf\xe9"\n', "not UTF-8 text: byte 0xe9 at line 1, column 15"),
    ("beta = = 1\n", "is not valid TOML: Invalid value (at line 1, column 8)"),
])
def test_a_config_file_is_refused_naming_the_file_and_why(tmp_path, capsys, content, text):
    """Issue 41 items 3, 7, 11: keys beside [run] were ignored, deep tables a RecursionError, `run = 5` a TypeError,
    a latin-1 file's message did not name it."""
    path = tmp_path / "run.toml"
    (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
    assert main(["run", "--config", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --config {path}") and text in err and "Traceback" not in err


def test_a_config_file_with_a_byte_order_mark_is_read(tmp_path):
    from ncld_core.config import RunConfig

    path = tmp_path / "run.toml"
    path.write_bytes(b"\xef\xbb\xbf[run]\nbeta = 0.3\n")
    assert RunConfig.read_toml(path).beta == 0.3


def test_a_config_file_past_the_byte_bound_is_not_read(tmp_path, monkeypatch):
    """Issue 41 item 5: `--config /dev/zero` ended in a MemoryError; a regular file past the bound is refused too."""
    from pathlib import Path

    from ncld_core.config import RunConfig
    from ncld_core.validation import MAX_TEXT_BYTES

    path = tmp_path / "big.toml"
    with path.open("wb") as fh:
        fh.truncate(MAX_TEXT_BYTES + 1)
    read = []
    monkeypatch.setattr(Path, "read_bytes", lambda self: read.append(self))
    with pytest.raises(ValueError, match=r"^config: .*big.toml has 1,048,577 bytes, past the bound of 1,048,576"):
        RunConfig.read_toml(path)
    assert not read
