"""One code fingerprint for stored results (benchmark cells, the dashboard's replayed runs)."""

from __future__ import annotations

import shutil

import pytest

from ncld_core import code_version


@pytest.fixture
def package_copy(tmp_path, monkeypatch):
    """A copy of two of the package's files, the fingerprint pointed at it."""
    root = tmp_path / "ncld_core"
    (root / "model").mkdir(parents=True)
    for rel in ("config.py", "model/statistics.py"):
        shutil.copy(code_version.PACKAGE / rel, root / rel)
    (root / "cli.py").write_text("print('the command line')\n")
    monkeypatch.setattr(code_version, "PACKAGE", root)
    return root


def test_code_changes_change_the_fingerprint_and_docs_do_not(package_copy):
    before = code_version.code_fingerprint()
    assert code_version.source_files() == ("config.py", "model/statistics.py")  # not the command line
    path = package_copy / "model/statistics.py"
    text = path.read_text()
    # a comment and a docstring edit: the same code
    path.write_text(text.replace('"""', '"""An edited docstring. ', 1) + "\n# a comment\n")
    assert code_version.code_fingerprint() == before
    path.write_text(text + "\nANSWER = 42\n")
    assert code_version.code_fingerprint() != before


def test_a_missing_file_is_named_not_raised(package_copy):
    assert code_version.file_digest("model/gone.py") == "<missing>"


def test_the_dashboard_and_the_benchmarks_share_it():
    from benchmarks import grid
    from dashboard.serving import run_hub

    assert grid.code_fingerprint is code_version.code_fingerprint
    assert run_hub.RunHub.__init__.__kwdefaults__["fingerprint"] is code_version.code_fingerprint


def test_file_digest_ignores_docstrings_and_comments(package_copy):
    versions = {
        "a": '"""Module doc."""\ndef f(x):\n    """Doc."""\n    return x + 1\n',
        "b": '"""Other doc."""\n# a comment\ndef f(x):\n    return x + 1  # why\n',
        "c": '"""Module doc."""\ndef f(x):\n    """Doc."""\n    return x + 2\n',
    }
    digest = {}
    for name, src in versions.items():
        (package_copy / f"{name}.py").write_text(src)
        digest[name] = code_version.file_digest(f"{name}.py")
    assert digest["a"] == digest["b"] != digest["c"]
