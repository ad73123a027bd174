"""Hostile input: generated malformed ARFF and label XML never crash, hang or escape as non-ValueError.

Each generated file either loads into a valid Dataset or raises a ValueError with a
message; both within a time bound.  >= 1 000 files in total (hypothesis, fixed seed
via the profile below).
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ncld_core.data import Dataset, load_arff_bytes

TIME_BOUND = 5.0  # seconds per file, generous for a loaded 2-core CI machine

VALID_DENSE = b"""@relation t
@attribute f0 numeric
@attribute f1 numeric
@attribute a {0,1}
@attribute b {0,1}
@data
0.5,1.0,1,0
1.5,2.0,0,1
"""
VALID_SPARSE = b"""@relation t
@attribute f0 numeric
@attribute f1 numeric
@attribute a {0,1}
@attribute b {0,1}
@data
{0 0.5,2 1}
{1 2.0,3 1}
"""
XML = b'<?xml version="1.0"?><labels xmlns="http://mulan.sourceforge.net/labels"><label name="a"></label><label name="b"></label></labels>'

TOKENS = [b"@relation", b"@attribute", b"@data", b"numeric", b"real", b"string", b"date", b"{0,1}", b"{", b"}",
          b",", b"'", b'"', b"%", b"?", b"\n", b" ", b"\t", b"-C", b"1e309", b"nan", b"-inf", b"0", b"1", b"2",
          b"\x00", b"\xff\xfe", b"\xc3\x28", b"a", b"b", b"f0"]


def check(arff: bytes, xml: bytes | None = None, **kw):
    t0 = time.perf_counter()
    try:
        ds = load_arff_bytes(arff, xml, **kw)
    except ValueError as exc:
        assert str(exc), "empty error message"
        outcome = "error"
    else:
        assert isinstance(ds, Dataset)
        assert ds.Y.dtype == np.int8 and set(np.unique(ds.Y)) <= {0, 1}
        X = ds.X.toarray() if hasattr(ds.X, "toarray") else ds.X
        assert np.isfinite(X).all(), "a loaded dataset must be finite"
        outcome = "loaded"
    assert time.perf_counter() - t0 < TIME_BOUND
    return outcome


FUZZ = settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


@FUZZ
@given(data=st.data())
def test_truncated_files(data):
    base = data.draw(st.sampled_from([VALID_DENSE, VALID_SPARSE]))
    cut = data.draw(st.integers(0, len(base)))
    check(base[:cut], XML)


@FUZZ
@given(data=st.data())
def test_mutated_bytes(data):
    base = bytearray(data.draw(st.sampled_from([VALID_DENSE, VALID_SPARSE])))
    for _ in range(data.draw(st.integers(1, 6))):
        pos = data.draw(st.integers(0, len(base) - 1))
        op = data.draw(st.sampled_from(["replace", "insert", "delete"]))
        tok = data.draw(st.sampled_from(TOKENS))
        if op == "replace":
            base[pos:pos + len(tok)] = tok
        elif op == "insert":
            base[pos:pos] = tok
        elif len(base) > 1:
            del base[pos]
    check(bytes(base), data.draw(st.sampled_from([XML, None])), label_count=data.draw(st.sampled_from([None, 2])))


@FUZZ
@given(tokens=st.lists(st.sampled_from(TOKENS), max_size=60))
def test_token_soup(tokens):
    check(b"".join(tokens), XML)


@FUZZ
@given(
    n_attrs=st.integers(0, 3000),
    value=st.sampled_from(["1", "x", "1e400", "-", "'q'", "{0,1}", ""]),
    label_type=st.sampled_from(["{0,1}", "numeric", "{yes,no}", "string", "{1,0}"]),
)
def test_huge_headers_and_wrong_types(n_attrs, value, label_type):
    header = [b"@relation big"]
    header += [f"@attribute f{i} numeric".encode() for i in range(n_attrs)]
    header += [f"@attribute a {label_type}".encode(), f"@attribute b {label_type}".encode(), b"@data"]
    row = ",".join([value] * n_attrs + ["1", "0"]).encode()
    check(b"\n".join(header + [row, row]) + b"\n", XML)


XML_BAD = [
    b"",
    b"<labels>",
    b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY x "y">]><labels><label name="&x;"/></labels>',
    b"<labels><label/></labels>",
    b"<labels><label name='zzz'/></labels>",
    b"\xff\xfe<\x00l\x00",
    b"<labels>" + b"<label name='a'/>" * 5 + b"</labels>",
]


@pytest.mark.parametrize("xml", XML_BAD)
def test_bad_label_xml(xml):
    assert check(VALID_DENSE, xml) == "error"


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(st.lists(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 9)), min_size=1, max_size=6), min_size=1, max_size=5),
       st.booleans())
def test_sparse_rows_keep_every_value_or_name_the_repeated_index(rows, quoted):
    """A sparse row naming an attribute twice (liac-arff would keep the last value, silently) is refused,
    naming the data row and the index; a row without repeats keeps every value it gives."""
    header = VALID_SPARSE.split(b"@data")[0] + b"@data\n"
    lines = []
    for entries in rows:
        parts = [f"{i} {v if i < 2 else 1}" if not (quoted and i >= 2) else f"{i} '1'" for i, v in entries]
        lines.append("{" + ",".join(parts) + "}")
    text = header + "\n".join(lines).encode() + b"\n"
    first_repeat = next((r for r, entries in enumerate(rows) if len({i for i, _ in entries}) < len(entries)), None)
    if first_repeat is None:
        ds = load_arff_bytes(text, XML)
        X = ds.X.toarray()
        for r, entries in enumerate(rows):
            for i, v in entries:
                if i < 2:
                    assert X[r, i] == v
    else:
        entries = [i for i, _ in rows[first_repeat]]
        repeated = next(i for k, i in enumerate(entries) if i in entries[:k])
        with pytest.raises(ValueError, match=f"data row {first_repeat + 1} \\(line \\d+\\) gives attribute index "
                                             f"{repeated} twice"):
            load_arff_bytes(text, XML)
