"""Tests of ncld_core.data: ARFF loading, registry, listing, checksums, download.

Expected values come from independent sources: hand-built tiny ARFF files, the table
of the shared datasets' README, their SHA256SUMS, the paper's Table I, and
scikit-multilearn's own loader.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import os
import re
import shutil
import threading
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ncld_core.data import catalog as D
from ncld_core.data import (
    Dataset,
    data_dirs,
    download,
    list_datasets,
    load_arff,
    load_arff_bytes,
    load_dataset,
)

SHARED = Path((os.environ.get("NCLD_DATA_DIR") or "/work/shared/datasets").split(os.pathsep)[0])
HAVE_SHARED = (SHARED / "SHA256SUMS").is_file() and (SHARED / "emotions.arff").is_file()

# The table of the shared datasets' README.md: instances, features, labels, cardinality, sparse.
README_TABLE = {
    "medical": (978, 1449, 45, 1.245, True),
    "langlog": (1460, 1004, 75, 1.180, True),
    "emotions": (593, 72, 6, 1.868, False),
    "enron": (1702, 1001, 53, 3.378, True),
    "corel16k001": (13766, 500, 153, 2.859, True),
    "rcv1subset5": (6000, 47235, 101, 2.642, True),
    "arts": (7484, 23146, 26, 1.654, True),
    "health": (9205, 30605, 32, 1.644, True),
    "tmc2007_500": (28596, 500, 22, 2.220, True),
}
# The paper's Table I: name, cardinality, instances, features, labels (emotions is not in it).
PAPER_TABLE_I = {
    "health": ("health", 1.66, 5000, 612, 32),
    "arts": ("arts", 1.64, 5000, 462, 26),
    "enron": ("enron", 3.38, 1702, 1001, 53),
    "corel16k001": ("corel16k001", 2.86, 13766, 500, 153),
    "langlog": ("languagelog", 1.18, 1459, 1004, 75),
    "rcv1subset5": ("rcv1_subset5", 2.61, 6000, 944, 101),
    "medical": ("medical", 1.25, 978, 1449, 45),
    "tmc2007_500": ("tmc2007", 2.22, 28956, 500, 22),
}


def _sums(folder: Path) -> dict[str, str]:
    out = {}
    for line in (folder / "SHA256SUMS").read_text().splitlines():
        if line.strip():
            digest, fname = line.split()
            out[fname.lstrip("*")] = digest
    return out


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _xml(*names: str) -> str:
    body = "".join(f'<label name="{n}"></label>' for n in names)
    return f'<?xml version="1.0" encoding="utf-8"?><labels xmlns="http://mulan.sourceforge.net/labels">{body}</labels>'


@pytest.fixture
def isolated_repo_data(tmp_path, monkeypatch):
    """Point the module's repo data folder at an empty folder (the registry stays)."""
    empty = tmp_path / "repo_data"
    empty.mkdir()
    monkeypatch.setattr(D, "REPO_DATA_DIR", empty)
    return empty


# ---------------------------------------------------------------------------
# Tiny hand-built ARFF files
# ---------------------------------------------------------------------------
DENSE_MULAN = """% a comment before the header
@relation tiny

@attribute f1 numeric
@attribute f2 real
@attribute colour {red,green}
@attribute l1 {0,1}
@attribute l2 {0,1}
@attribute l3 numeric

@data
1.5,-2,red,1,0,1
0,3.25,green,0,0,0
% a comment between rows
7,8,red,1,1,1
"""
DENSE_X = [[1.5, -2.0, 0.0], [0.0, 3.25, 1.0], [7.0, 8.0, 0.0]]
DENSE_Y = [[1, 0, 1], [0, 0, 0], [1, 1, 1]]

# f3 and l2 never appear and the last row is empty: shapes must come from the header.
SPARSE_MULAN = """@relation 'sparse tiny'
@attribute f1 numeric
@attribute f2 numeric
@attribute f3 numeric
@attribute l1 {0,1}
@attribute l2 {0,1}
@data
{0 2.5,3 1}
{1 -1}
{}
"""
SPARSE_X = [[2.5, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 0.0]]
SPARSE_Y = [[1, 0], [0, 0], [0, 0]]


def test_dense_mulan_file(tmp_path):
    (tmp_path / "tiny.arff").write_text(DENSE_MULAN)
    (tmp_path / "tiny.xml").write_text(_xml("l1", "l2", "l3"))
    ds = load_arff(tmp_path / "tiny.arff", tmp_path / "tiny.xml")
    assert isinstance(ds.X, np.ndarray) and ds.X.dtype == np.float64
    assert ds.X.tolist() == DENSE_X
    assert ds.Y.dtype == np.int8 and ds.Y.tolist() == DENSE_Y
    assert ds.label_names == ("l1", "l2", "l3")
    assert ds.feature_names == ("f1", "f2", "colour")
    assert (ds.n_instances, ds.n_features, ds.n_labels) == (3, 3, 3)
    assert ds.cardinality == pytest.approx(5 / 3)
    assert ds.name == "tiny" and ds.source == str(tmp_path / "tiny.arff")
    # the sibling XML is found on its own
    assert load_arff(tmp_path / "tiny.arff").Y.tolist() == DENSE_Y


def test_sparse_mulan_shapes_from_header(tmp_path):
    (tmp_path / "sp.arff").write_text(SPARSE_MULAN)
    (tmp_path / "sp.xml").write_text(_xml("l1", "l2"))
    ds = load_arff(tmp_path / "sp.arff", tmp_path / "sp.xml", name="custom")
    assert isinstance(ds.X, sp.csr_matrix) and ds.X.dtype == np.float64
    assert ds.X.shape == (3, 3) and ds.X.toarray().tolist() == SPARSE_X
    assert ds.Y.tolist() == SPARSE_Y
    assert ds.name == "custom" and ds.is_sparse
    assert ds.cardinality == pytest.approx(1 / 3)


def test_labels_located_by_name_in_xml_order():
    text = b"@relation r\n@attribute a {0,1}\n@attribute x numeric\n@attribute b {0,1}\n@attribute y numeric\n@data\n1,5,0,6\n0,7,1,8\n"
    ds = load_arff_bytes(text, _xml("b", "a").encode())
    assert ds.label_names == ("b", "a")
    assert ds.Y.tolist() == [[0, 1], [1, 0]]
    assert ds.feature_names == ("x", "y") and ds.X.tolist() == [[5, 6], [7, 8]]
    assert ds.source == "upload" and ds.name == "upload"


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("c", [2, -2])
def test_meka(c, sparse):
    # attributes: two labels then two features (c=2) or two features then two labels (c=-2)
    if c > 0:
        attrs = ["@attribute La {0,1}", "@attribute Lb {0,1}", "@attribute x1 numeric", "@attribute x2 numeric"]
        dense_rows = ["1,0,0.5,0", "0,1,0,2", "1,1,3,4"]
        sparse_rows = ["{0 1,2 0.5}", "{1 1,3 2}", "{0 1,1 1,2 3,3 4}"]
    else:
        attrs = ["@attribute x1 numeric", "@attribute x2 numeric", "@attribute La {0,1}", "@attribute Lb {0,1}"]
        dense_rows = ["0.5,0,1,0", "0,2,0,1", "3,4,1,1"]
        sparse_rows = ["{0 0.5,2 1}", "{1 2,3 1}", "{0 3,1 4,2 1,3 1}"]
    rows = sparse_rows if sparse else dense_rows
    text = "\n".join([f"@relation 'meka-toy: -C {c} -split 50'", *attrs, "@data", *rows]) + "\n"
    ds = load_arff_bytes(text.encode(), name="meka")
    assert ds.label_names == ("La", "Lb")
    assert ds.feature_names == ("x1", "x2")
    assert ds.Y.tolist() == [[1, 0], [0, 1], [1, 1]]
    X = ds.X.toarray() if sparse else ds.X
    assert sp.issparse(ds.X) == sparse
    assert X.tolist() == [[0.5, 0], [0, 2], [3, 4]]


def test_meka_file_listed_and_loaded(tmp_path, isolated_repo_data):
    text = "@relation 'm: -C -1'\n@attribute x numeric\n@attribute lab {0,1}\n@data\n1,1\n2,0\n"
    (tmp_path / "mk.arff").write_text(text)
    (tmp_path / "notlabelled.arff").write_text("@relation plain\n@attribute x numeric\n@data\n1\n")
    df = list_datasets([tmp_path])
    assert df["name"].tolist() == ["mk"]  # the unlabelled ARFF is not a dataset
    row = df.iloc[0]
    assert (row.instances, row.features, row.labels, row.cardinality) == (2, 1, 1, 0.5)
    assert row.verified is None and not row["sparse"]
    assert load_dataset("mk", dirs=[tmp_path]).Y.tolist() == [[1], [0]]


def test_label_count_end_and_start():
    text = b"@relation r\n@attribute a numeric\n@attribute b numeric\n@attribute c numeric\n@data\n1,0,1\n0,1,1\n"
    end = load_arff_bytes(text, label_count=2)
    assert end.label_names == ("b", "c") and end.Y.tolist() == [[0, 1], [1, 1]]
    start = load_arff_bytes(text, label_count=1, label_location="start")
    assert start.label_names == ("a",) and start.X.tolist() == [[0, 1], [1, 1]]


def test_nominal_label_declared_one_zero_is_mapped_by_value():
    text = b"@relation r\n@attribute x numeric\n@attribute lab {1,0}\n@data\n5,0\n6,1\n"
    assert load_arff_bytes(text, label_count=1).Y.tolist() == [[0], [1]]


ROW = st.tuples(
    st.lists(st.sampled_from([0.0, 1.0, -2.5, 0.125, 3.0]), min_size=3, max_size=3),
    st.lists(st.integers(0, 1), min_size=2, max_size=2),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(ROW, min_size=1, max_size=8), sparse=st.booleans())
def test_roundtrip_random_tables(rows, sparse):
    header = "@relation rt\n" + "".join(f"@attribute f{i} numeric\n" for i in range(3))
    header += "@attribute y0 {0,1}\n@attribute y1 {0,1}\n@data\n"
    lines = []
    for x, y in rows:
        values = [*x, *y]
        if sparse:
            lines.append("{" + ",".join(f"{i} {v:g}" for i, v in enumerate(values) if v != 0) + "}")
        else:
            lines.append(",".join(f"{v:g}" for v in values))
    ds = load_arff_bytes((header + "\n".join(lines) + "\n").encode(), _xml("y0", "y1").encode())
    X = ds.X.toarray() if sparse else ds.X
    assert X.tolist() == [x for x, _ in rows]
    assert ds.Y.tolist() == [y for _, y in rows]
    assert ds.cardinality == pytest.approx(np.mean([sum(y) for _, y in rows]))


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------
def test_malformed_arff_reports_line_number(tmp_path):
    lines = ["", "", "% leading blank lines and a comment", "@relation r", "@attribute x numeric",
             "@attribute y {0,1}", "@data", "1,0", "2,1,7", "3,1"]
    (tmp_path / "bad.arff").write_text("\n".join(lines) + "\n")
    (tmp_path / "bad.xml").write_text(_xml("y"))
    bad_line = lines.index("2,1,7") + 1
    with pytest.raises(ValueError, match=rf"bad\.arff: malformed ARFF at line {bad_line}\b"):
        load_arff(tmp_path / "bad.arff")
    with pytest.raises(ValueError, match=r"line 6: the value of the nominal attribute .y. \(column 2\) is not one of its declared values$"):
        load_arff_bytes(b"@relation r\n@attribute x numeric\n@attribute y {0,1}\n@data\n1,0\n1,2\n", label_count=1)
    with pytest.raises(ValueError, match=r"line 2: Bad @ATTRIBUTE type"):
        load_arff_bytes(b"@relation r\n@attribute x date\n@attribute y {0,1}\n@data\n1,0\n", label_count=1)


def test_labels_outside_01_refused_with_position():
    text = b"@relation r\n@attribute x numeric\n@attribute y numeric\n@data\n1,0\n1,1\n1,2\n"
    with pytest.raises(ValueError, match=r"label 'y' has value 2 at data row 3 \(line 7\)"):
        load_arff_bytes(text, label_count=1)
    with pytest.raises(ValueError, match=r"label attribute 'y' is nominal \{yes,no\}"):
        load_arff_bytes(b"@relation r\n@attribute x numeric\n@attribute y {yes,no}\n@data\n1,yes\n", label_count=1)
    with pytest.raises(ValueError, match=r"label 'y' has missing value"):
        load_arff_bytes(b"@relation r\n@attribute x numeric\n@attribute y {0,1}\n@data\n1,?\n", label_count=1)


def test_xml_label_missing_from_arff_is_named():
    text = b"@relation r\n@attribute x numeric\n@attribute y {0,1}\n@data\n1,0\n"
    with pytest.raises(ValueError, match=r"not attributes of the ARFF: 'ghost', 'phantom'"):
        load_arff_bytes(text, _xml("y", "ghost", "phantom").encode())


def test_doctype_and_entities_refused(tmp_path):
    laughs = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
              b'<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>'
              b'<labels><label name="&lol2;"/></labels>')
    text = b"@relation r\n@attribute x numeric\n@attribute y {0,1}\n@data\n1,0\n"
    with pytest.raises(ValueError, match="DOCTYPE or ENTITY"):
        load_arff_bytes(text, laughs)
    (tmp_path / "t.arff").write_bytes(text)
    (tmp_path / "t.xml").write_bytes(laughs)
    with pytest.raises(ValueError, match=r"t\.xml: XML with a DOCTYPE"):
        load_arff(tmp_path / "t.arff")


@pytest.mark.parametrize("encoding", ["UTF-7", "Shift_JIS", "no-such-encoding"])
def test_a_label_xml_in_an_unreadable_encoding_is_refused_naming_its_file(tmp_path, encoding):
    xml = _xml("y").replace('encoding="utf-8"', f'encoding="{encoding}"').encode()
    text = b"@relation r\n@attribute x numeric\n@attribute y {0,1}\n@data\n1,0\n"
    message = rf"the label XML declares the encoding '{encoding}', which cannot be read \(.+\); save it as UTF-8"
    with pytest.raises(ValueError, match=r"xml_bytes \(up\): " + message):
        load_arff_bytes(text, xml, name="up")
    (tmp_path / "t.arff").write_bytes(text)
    (tmp_path / "t.xml").write_bytes(xml)
    with pytest.raises(ValueError, match=r"t\.xml: " + message):
        load_arff(tmp_path / "t.arff")


@pytest.mark.parametrize(
    ("arff_bytes", "kwargs", "pattern"),
    [
        (b"@relation r\n@attribute x numeric\n@attribute y {0,1}\n@data\n\n% only a comment\n",
         {"label_count": 1}, r"@data section is empty"),
        (b"@relation r\n@attribute x numeric\n@attribute y {0,1}\n", {"label_count": 1}, r"no @data"),
        # advice a page can act on first (the XML, the relation's '-C n'); the API's parameter named as such
        (b"@relation r\n@attribute x numeric\n@attribute y {0,1}\n@data\n1,0\n", {},
         r"no label attributes: give the MULAN label XML, or add ' -C n' .* to the relation name .*; from Python, "
         r"label_count= says it too"),
        (b"@relation 'r: -C 0'\n@attribute x numeric\n@attribute y {0,1}\n@data\n1,0\n", {}, r"-C 0: no label"),
        # a misspelt keyword is named at its own line (liac-arff's 'Invalid layout' named the next one)
        (b"@relaton 'r: -C 1'\n@attribute x numeric\n@attribute y {0,1}\n@data\n1,0\n", {},
         r"at line 1: unknown keyword '@relaton'"),
        (b"@relation r\n@attribute x numeric\n@attribute y {0,1}\n@data\n1,0\n", {"label_count": 3},
         r"label_count=3 exceeds the 2 attributes"),
        (b"@relation r\n@attribute x numeric\n@attribute y {0,1}\n@data\n1,0\n", {"label_count": 2},
         r"leaves no feature"),
        (b"@relation r\n@attribute x numeric\n@attribute y {0,1}\n@data\n1,0\n", {"label_count": 0},
         r"label_count must be a positive integer"),
        (b"@relation r\n@attribute x numeric\n@attribute y {0,1}\n@data\n?,0\n", {"label_count": 1},
         r"feature 'x' has missing value '\?' at data row 1 \(line 5\)"),
        (b"@relation r\n@attribute x string\n@attribute y {0,1}\n@data\nab,0\n", {"label_count": 1},
         r"feature attribute 'x' is a string attribute"),
        (b"@relation caf\xe9\n@attribute x numeric\n@attribute y {0,1}\n@data\n1,0\n", {"label_count": 1},
         r"arff_bytes is not valid UTF-8 .*offset 13, line 1"),
    ],
)
def test_bad_uploads(arff_bytes, kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        load_arff_bytes(arff_bytes, **kwargs)


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="arff_bytes must be bytes"):
        load_arff_bytes("@relation r")
    with pytest.raises(ValueError, match=r"arff_path: no such file"):
        load_arff(tmp_path / "missing.arff")
    with pytest.raises(ValueError, match=r"xml_bytes: malformed XML at line 1"):
        load_arff_bytes(b"@relation r\n@attribute x numeric\n@attribute y {0,1}\n@data\n1,0\n", b"<labels><label>")


def test_dataset_validation():
    ds = Dataset("d", np.ones((2, 3)), np.array([[1, 0], [1, 1]]))
    assert ds.Y.dtype == np.int8 and ds.label_names == ("label_0", "label_1") and len(ds.feature_names) == 3
    assert (ds.n_instances, ds.n_features, ds.n_labels, ds.cardinality) == (2, 3, 2, 1.5)
    with pytest.raises(ValueError, match=r"\{0, 1\}"):
        Dataset("d", np.ones((2, 3)), np.array([[2], [0]]))
    with pytest.raises(ValueError, match="Y must have shape"):
        Dataset("d", np.ones((2, 3)), np.ones((3, 1)))
    with pytest.raises(ValueError, match="1 label_names for 2 labels"):
        Dataset("d", np.ones((2, 3)), np.ones((2, 2)), label_names=("a",))


# ---------------------------------------------------------------------------
# Folders, registry, listing
# ---------------------------------------------------------------------------
def test_data_dirs_env(tmp_path, monkeypatch):
    monkeypatch.setenv("NCLD_DATA_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="NCLD_DATA_DIR"):
        data_dirs()
    with pytest.raises(ValueError, match="NCLD_DATA_DIR"):
        list_datasets()
    monkeypatch.setenv("NCLD_DATA_DIR", str(tmp_path))
    dirs = data_dirs()
    assert dirs[-1] == tmp_path.resolve()
    assert D.REPO_DATA_DIR in dirs
    monkeypatch.delenv("NCLD_DATA_DIR")
    assert tmp_path.resolve() not in data_dirs()


def test_registry_file_matches_readme_and_paper():
    doc = tomllib.loads((D.REPO_DATA_DIR / "registry.toml").read_text())
    entries = doc["datasets"]
    assert set(entries) == set(README_TABLE)
    for name, (n, d, q, card, sparse) in README_TABLE.items():
        e = entries[name]
        assert (e["instances"], e["features"], e["labels"], e["sparse"]) == (n, d, q, sparse)
        assert e["cardinality"] == pytest.approx(card, abs=1e-3)
        assert e["arff"] == f"{name}.arff" and e["xml"] == f"{name}.xml"
        if name in PAPER_TABLE_I:
            pname, pcard, pn, pd, pq = PAPER_TABLE_I[name]
            assert (e["paper_name"], e["paper_instances"], e["paper_features"], e["paper_labels"]) == (pname, pn, pd, pq)
            assert e["paper_cardinality"] == pytest.approx(pcard)
        else:
            assert "paper_instances" not in e
    assert D.registry() == entries


@pytest.mark.datasets
@pytest.mark.skipif(not HAVE_SHARED, reason=f"shared benchmark datasets not found in {SHARED} (set NCLD_DATA_DIR)")
def test_registry_checksums_and_sizes_match_shared_files():
    sums = _sums(SHARED)
    for name, e in D.registry().items():
        for kind in ("arff", "xml"):
            assert e[f"{kind}_sha256"] == sums[e[kind]]
            assert e[f"{kind}_size"] == (SHARED / e[kind]).stat().st_size


@pytest.mark.datasets
@pytest.mark.skipif(not HAVE_SHARED, reason=f"shared benchmark datasets not found in {SHARED} (set NCLD_DATA_DIR)")
def test_readme_table_is_what_the_tests_assume():
    text = (SHARED / "README.md").read_text()
    for name, (n, d, q, card, _) in README_TABLE.items():
        m = re.search(rf"^\|\s*{name}\s*\|[^|]*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*([\d.]+)\s*\|", text, re.M)
        assert m, name
        assert (int(m[1]), int(m[2]), int(m[3]), float(m[4])) == (n, d, q, card)


@pytest.mark.datasets
@pytest.mark.skipif(not HAVE_SHARED, reason=f"shared benchmark datasets not found in {SHARED} (set NCLD_DATA_DIR)")
@pytest.mark.parametrize("name", list(README_TABLE))
def test_shared_dataset_matches_readme(name, monkeypatch, isolated_repo_data):
    monkeypatch.setenv("NCLD_DATA_DIR", str(SHARED))
    n, d, q, card, sparse = README_TABLE[name]
    ds = load_dataset(name)
    assert ds.X.shape == (n, d) and ds.Y.shape == (n, q)
    assert ds.Y.dtype == np.int8 and set(np.unique(ds.Y)) <= {0, 1}
    assert ds.cardinality == pytest.approx(card, abs=1e-3)
    assert sp.issparse(ds.X) == sparse and ds.X.dtype == np.float64
    xml_names = re.findall(r'<label name="([^"]*)"', (SHARED / f"{name}.xml").read_text())
    assert ds.label_names == tuple(xml_names)
    assert Path(ds.source).resolve() == (SHARED / f"{name}.arff").resolve()


@pytest.mark.datasets
@pytest.mark.skipif(not HAVE_SHARED, reason=f"shared benchmark datasets not found in {SHARED} (set NCLD_DATA_DIR)")
@pytest.mark.parametrize(("name", "q", "sparse"), [("emotions", 6, False), ("medical", 45, True)])
def test_agrees_with_scikit_multilearn(name, q, sparse):
    skd = pytest.importorskip("skmultilearn.dataset")
    X_ref, Y_ref = skd.load_from_arff(str(SHARED / f"{name}.arff"), label_count=q, label_location="end",
                                      load_sparse=sparse)
    ds = load_arff(SHARED / f"{name}.arff", SHARED / f"{name}.xml")
    X = ds.X.toarray() if sparse else ds.X
    assert X.shape == X_ref.shape and np.allclose(X, X_ref.toarray())
    assert np.array_equal(ds.Y, Y_ref.toarray())


@pytest.mark.datasets
@pytest.mark.skipif(not HAVE_SHARED, reason=f"shared benchmark datasets not found in {SHARED} (set NCLD_DATA_DIR)")
def test_list_datasets_via_env(monkeypatch, isolated_repo_data):
    monkeypatch.setenv("NCLD_DATA_DIR", str(SHARED))
    df = list_datasets()
    assert set(df["name"]) == set(README_TABLE)
    for required in ("name", "instances", "features", "labels", "cardinality", "sparse", "folder", "verified",
                     "paper_instances", "paper_features", "paper_labels", "paper_cardinality"):
        assert required in df.columns
    by = df.set_index("name")
    for name, (n, d, q, card, sparse) in README_TABLE.items():
        row = by.loc[name]
        assert (row.instances, row.features, row.labels, bool(row["sparse"])) == (n, d, q, sparse)
        assert row.cardinality == pytest.approx(card, abs=1e-3)
        assert row.verified is True
        assert Path(row.folder) == SHARED.resolve()
        if name in PAPER_TABLE_I:
            _, pcard, pn, pd, pq = PAPER_TABLE_I[name]
            assert (row.paper_instances, row.paper_features, row.paper_labels) == (pn, pd, pq)
            assert row.paper_cardinality == pytest.approx(pcard)
        else:
            assert np.isnan([row.paper_instances, row.paper_features, row.paper_labels, row.paper_cardinality]).all()


@pytest.mark.datasets
@pytest.mark.skipif(not HAVE_SHARED, reason=f"shared benchmark datasets not found in {SHARED} (set NCLD_DATA_DIR)")
def test_listing_of_verified_files_does_not_parse(monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("list_datasets parsed a file whose registry figures apply")

    monkeypatch.setattr(D, "_stats_cached", boom)
    monkeypatch.setattr(D, "load_arff", boom)
    df = list_datasets([SHARED])
    assert len(df) == len(README_TABLE) and df["error"].isna().all()


def _altered_emotions(folder: Path, with_sums: bool) -> tuple[Path, str, str]:
    """Copy emotions into ``folder`` with one byte of the first data value changed."""
    shutil.copy(SHARED / "emotions.xml", folder / "emotions.xml")
    raw = (SHARED / "emotions.arff").read_bytes()
    at = raw.index(b"\n0.034741,", raw.index(b"@data")) + 1 + len("0.03474")
    assert raw[at:at + 1] == b"1"
    altered = raw[:at] + b"2" + raw[at + 1:]
    (folder / "emotions.arff").write_bytes(altered)
    sums = _sums(SHARED)
    if with_sums:
        (folder / "SHA256SUMS").write_text(
            f"{sums['emotions.arff']}  emotions.arff\n{sums['emotions.xml']}  emotions.xml\n")
    return folder / "emotions.arff", sums["emotions.arff"], hashlib.sha256(altered).hexdigest()


@pytest.mark.datasets
@pytest.mark.skipif(not HAVE_SHARED, reason=f"shared benchmark datasets not found in {SHARED} (set NCLD_DATA_DIR)")
@pytest.mark.parametrize("with_sums", [True, False])
def test_checksum_mismatch_refused(tmp_path, with_sums):
    path, want, got = _altered_emotions(tmp_path, with_sums)
    origin = "SHA256SUMS" if with_sums else "registry.toml"
    pattern = rf"checksum mismatch for .*emotions\.arff: expected sha256 {want[:16]}.*{origin}.*{got[:16]}"
    with pytest.raises(ValueError, match=pattern):
        load_dataset("emotions", dirs=[tmp_path])
    with pytest.raises(ValueError, match=pattern):
        load_dataset(str(path))
    ds = load_dataset("emotions", dirs=[tmp_path], verify=False)
    assert ds.X[0, 0] == pytest.approx(0.034742)
    row = list_datasets([tmp_path]).set_index("name").loc["emotions"]
    assert row.verified is False
    assert row.instances == README_TABLE["emotions"][0]  # figures computed from the file itself


def test_user_file_listed_with_computed_figures(tmp_path):
    (tmp_path / "mine.arff").write_text(DENSE_MULAN)
    (tmp_path / "mine.xml").write_text(_xml("l1", "l2", "l3"))
    (tmp_path / "broken.arff").write_text("@relation r\n@attribute x numeric\n@data\n1,2\n")
    (tmp_path / "broken.xml").write_text(_xml("x"))
    by = list_datasets(tmp_path).set_index("name")
    mine = by.loc["mine"]
    assert (mine.instances, mine.features, mine.labels) == (3, 3, 3)
    assert mine.cardinality == pytest.approx(5 / 3) and not mine["sparse"] and mine.verified is None
    assert np.isnan(mine.paper_instances) and mine.error is None
    assert "line 4" in by.loc["broken"].error and pd.isna(by.loc["broken"].instances)


def test_unknown_name_lists_available(tmp_path, isolated_repo_data):
    (tmp_path / "tiny.arff").write_text(DENSE_MULAN)
    (tmp_path / "tiny.xml").write_text(_xml("l1", "l2", "l3"))
    with pytest.raises(ValueError, match=r"unknown dataset 'nope': choose one of the listed datasets \(available: tiny\)"):
        load_dataset("nope", dirs=[tmp_path])
    with pytest.raises(ValueError, match=r"'medical' is a known benchmark .*NCLD_DATA_DIR.*Available: tiny"):
        load_dataset("medical", dirs=[tmp_path])
    assert load_dataset("tiny", dirs=[tmp_path]).Y.tolist() == DENSE_Y
    with pytest.raises(ValueError, match=r"dirs: .* is not an existing directory"):
        load_dataset("tiny", dirs=[tmp_path / "nowhere"])


@pytest.mark.datasets
@pytest.mark.skipif(not HAVE_SHARED, reason=f"shared benchmark datasets not found in {SHARED} (set NCLD_DATA_DIR)")
def test_paper_alias_and_first_folder_wins(tmp_path):
    assert load_dataset("languagelog", dirs=[SHARED]).name == "langlog"
    (tmp_path / "medical.arff").write_text(DENSE_MULAN)
    (tmp_path / "medical.xml").write_text(_xml("l1", "l2", "l3"))
    first = load_dataset("medical", dirs=[tmp_path, SHARED], verify=False)
    assert first.source == str(tmp_path / "medical.arff")
    assert list_datasets([tmp_path, SHARED]).set_index("name").loc["medical"].folder == str(tmp_path)


# ---------------------------------------------------------------------------
# Download against a loopback server
# ---------------------------------------------------------------------------
class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def serve(monkeypatch):
    """Start loopback HTTP servers for folders; all shut down after the test."""
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    running = []

    def start(folder: Path) -> str:
        server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(folder)))
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        running.append((server, thread))
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server, thread in running:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.mark.datasets
@pytest.mark.skipif(not HAVE_SHARED, reason=f"shared benchmark datasets not found in {SHARED} (set NCLD_DATA_DIR)")
def test_download_verified(tmp_path, serve):
    url = serve(SHARED)
    dest = tmp_path / "dl"
    path = download("emotions", dest, base_url=url, timeout=10)
    sums = _sums(SHARED)
    assert path == dest / "emotions.arff"
    assert sorted(p.name for p in dest.iterdir()) == ["emotions.arff", "emotions.xml"]
    assert _sha(dest / "emotions.arff") == sums["emotions.arff"]
    assert _sha(dest / "emotions.xml") == sums["emotions.xml"]
    assert load_dataset(str(path)).Y.shape == (593, 6)
    # already present and verified: no second request needed (a dead URL is fine)
    assert download("emotions", dest, base_url="http://127.0.0.1:9/") == path
    # a {file} template works too
    (dest / "emotions.xml").unlink()
    download("emotions", dest, base_url=url + "/{file}")
    assert _sha(dest / "emotions.xml") == sums["emotions.xml"]


@pytest.mark.datasets
@pytest.mark.skipif(not HAVE_SHARED, reason=f"shared benchmark datasets not found in {SHARED} (set NCLD_DATA_DIR)")
@pytest.mark.parametrize("corrupt", ["emotions.arff", "emotions.xml"])
def test_download_corrupted_refused_leaves_nothing(tmp_path, serve, corrupt):
    served = tmp_path / "served"
    served.mkdir()
    for fname in ("emotions.arff", "emotions.xml"):
        shutil.copy(SHARED / fname, served / fname)
    data = bytearray((served / corrupt).read_bytes())
    data[-5] ^= 0x01
    (served / corrupt).write_bytes(bytes(data))
    dest = tmp_path / "dl"
    want = _sums(SHARED)[corrupt]
    got = hashlib.sha256(bytes(data)).hexdigest()
    with pytest.raises(ValueError, match=rf"{re.escape(corrupt)} .*expected sha256 {want[:16]}.*got {got[:16]}"):
        download("emotions", dest, base_url=serve(served))
    assert list(dest.iterdir()) == []


def test_download_refusals(tmp_path, serve):
    with pytest.raises(ValueError, match=r"unknown dataset 'nope'; the registry knows: .*emotions"):
        download("nope", tmp_path)
    with pytest.raises(ValueError, match="no download URL is known for 'emotions'"):
        download("emotions", tmp_path)  # the registry's url is empty: no network attempted
    with pytest.raises(ValueError, match="must be an http"):
        download("emotions", tmp_path, base_url="file:///etc")
    empty = tmp_path / "empty"
    empty.mkdir()
    dest = tmp_path / "dl"
    with pytest.raises(ValueError, match=r"could not download emotions\.arff .*404"):
        download("emotions", dest, base_url=serve(empty), timeout=5)
    assert list(dest.iterdir()) == []


def test_check_features_names_the_column_and_row():
    from ncld_core.data import Dataset, check_features

    X = np.zeros((4, 2))
    X[:, 0] = np.arange(4)
    X[2, 1] = -1e200
    with pytest.raises(ValueError, match=r"feature 'x_1', data row 3: value -1e\+200 is too large"):
        check_features(Dataset(name="t", X=X, Y=np.zeros((4, 1), np.int8)))
    import scipy.sparse as sp

    with pytest.raises(ValueError, match=r"feature 'x_1', data row 3"):
        check_features(Dataset(name="t", X=sp.csr_matrix(X), Y=np.zeros((4, 1), np.int8)))
    with pytest.raises(ValueError, match="every feature is constant"):
        check_features(Dataset(name="t", X=np.ones((4, 2)), Y=np.zeros((4, 1), np.int8)))
    check_features(Dataset(name="t", X=np.c_[np.arange(4.0), np.ones(4)], Y=np.zeros((4, 1), np.int8)))


# ---------------------------------------------------------------------------
# The parsed-dataset cache (ncld_core.data.parsed_cache)
# ---------------------------------------------------------------------------
def test_parsed_cache_round_trip_and_invalidation(tmp_path, monkeypatch):
    from ncld_core.data import parsed_cache

    cache = tmp_path / "cache"
    monkeypatch.setenv(parsed_cache.CACHE_ENV, str(cache))
    for text, name, xml in ((SPARSE_MULAN, "sp", _xml("l1", "l2")), (DENSE_MULAN, "de", _xml("l1", "l2", "l3"))):
        (tmp_path / f"{name}.arff").write_text(text)
        (tmp_path / f"{name}.xml").write_text(xml)
        first = load_dataset(tmp_path / f"{name}.arff")
        assert len(list(cache.rglob("*.npz"))) >= 1
        # the second load reads the entry: the parser is not called
        monkeypatch.setattr(D, "parse_arff", lambda *a, **k: pytest.fail("parsed again despite the cache"))
        second = load_dataset(tmp_path / f"{name}.arff")
        monkeypatch.undo()
        monkeypatch.setenv(parsed_cache.CACHE_ENV, str(cache))
        dense = (lambda X: X.toarray() if sp.issparse(X) else X)
        assert type(second.X) is type(first.X)
        assert np.array_equal(dense(second.X), dense(first.X)) and second.X.dtype == np.float64
        assert np.array_equal(second.Y, first.Y) and second.Y.dtype == np.int8
        assert (second.name, second.source, second.label_names, second.feature_names) == \
               (first.name, first.source, first.label_names, first.feature_names)
    # the same content under another name and path: the entry is shared, the name and path are the caller's
    shutil.copy(tmp_path / "sp.arff", tmp_path / "other.arff")
    shutil.copy(tmp_path / "sp.xml", tmp_path / "other.xml")
    other = load_dataset(tmp_path / "other.arff")
    assert other.name == "other" and other.source == str(tmp_path / "other.arff")
    # an edited file is a new entry (never the stale one)
    (tmp_path / "sp.arff").write_text(SPARSE_MULAN.replace("{0 2.5,3 1}", "{0 9.5,3 1}"))
    assert load_dataset(tmp_path / "sp.arff").X.toarray()[0, 0] == 9.5
    # damaged entries (not a zip; a real entry truncated; one flipped byte) are parsed again and replaced
    entry = parsed_cache.entry_path(parsed_cache.content_key((tmp_path / "de.arff").read_bytes(),
                                                             (tmp_path / "de.xml").read_bytes()))
    good = entry.read_bytes()
    for damaged in (b"not an npz", good[: len(good) // 2], good[:10],
                    good[: len(good) // 2] + bytes([good[len(good) // 2] ^ 0xFF]) + good[len(good) // 2 + 1:]):
        entry.write_bytes(damaged)
        assert load_dataset(tmp_path / "de.arff").X.tolist() == DENSE_X
        assert entry.read_bytes() == good  # written again by that load
    # an edited parser source names another folder; writing there removes the old one
    edited = tmp_path / "arff_edited.py"
    edited.write_bytes(parsed_cache.PARSER_SOURCES[0].read_bytes() + b"\n# edited\n")
    assert parsed_cache.parser_digest((edited, *parsed_cache.PARSER_SOURCES[1:])) != parsed_cache.parser_digest()
    old_folder = entry.parent
    monkeypatch.setattr(parsed_cache, "PARSER_SOURCES", (edited, *parsed_cache.PARSER_SOURCES[1:]))
    monkeypatch.setattr(parsed_cache, "parser_digest", lambda sources=parsed_cache.PARSER_SOURCES:
                        parsed_cache._parser_digest(tuple(str(p) for p in (edited, *sources[1:]))))
    assert load_dataset(tmp_path / "de.arff").X.tolist() == DENSE_X  # parsed again, into the new folder
    assert not old_folder.exists() and len([d for d in cache.iterdir() if d.is_dir()]) == 1


def test_parsed_cache_off_and_unwritable(tmp_path, monkeypatch):
    from ncld_core.data import parsed_cache

    (tmp_path / "sp.arff").write_text(SPARSE_MULAN)
    (tmp_path / "sp.xml").write_text(_xml("l1", "l2"))
    monkeypatch.setenv(parsed_cache.CACHE_ENV, "")  # off: nothing written anywhere, loading works
    assert parsed_cache.cache_dir() is None
    assert load_dataset(tmp_path / "sp.arff").X.toarray().tolist() == SPARSE_X
    assert parsed_cache.entry_path("abc") is None and parsed_cache.store(load_dataset(tmp_path / "sp.arff"), "abc") is False
    blocker = tmp_path / "file"
    blocker.write_text("a file where the folder should be")
    monkeypatch.setenv(parsed_cache.CACHE_ENV, str(blocker / "cache"))  # cannot be created: only costs the parse
    assert load_dataset(tmp_path / "sp.arff").X.toarray().tolist() == SPARSE_X
    assert blocker.read_text() == "a file where the folder should be" and list(tmp_path.glob("**/*.npz")) == []


@pytest.mark.parametrize("row, text", [
    ('"a,b",0', "the value of the numeric attribute 'x' (column 1) is not a number"),  # a double-quoted value
    ("1," + "9" * 200_000 + ",0", "the row cannot be split into values (a value is too long)"),  # past csv's limit
    ("SECRET_TOKEN,0", "the value of the numeric attribute 'x' (column 1) is not a number"),
])
def test_a_bad_data_row_is_described_never_quoted(row, text):
    with pytest.raises(ValueError) as err:
        load_arff_bytes(f"@relation r\n@attribute x numeric\n@attribute y {{0,1}}\n@data\n1,0\n{row}\n".encode(),
                        label_count=1)
    assert str(err.value).endswith(text) and "SECRET" not in str(err.value) and "999" not in str(err.value)
