r"""Reading multi-label ARFF (MULAN and MEKA) and label XML files into a :class:`~ncld_core.data.dataset.Dataset`.

Datasets come in the two usual ARFF flavours:

* **MULAN** -- ``NAME.arff`` plus ``NAME.xml``; the XML names the label attributes
  (normally the last ones).
* **MEKA** -- a single ``NAME.arff`` whose relation name carries ``-C n``: the first
  ``n`` attributes are the labels when ``n > 0``, the last ``|n|`` when ``n < 0``.

Dense and sparse (``{index value, ...}`` rows) files are recognised automatically;
parsing is done by liac-arff (the parser scikit-multilearn uses), never by ``eval``
or ``pickle``, and label XML files are refused when they declare a DOCTYPE/ENTITY.
Every problem with the input is a ``ValueError`` naming the file (and, for ARFF
syntax errors, the line).

Benchmark files are never stored in the repository: they are found in the repo's
``data/`` folder (where users drop their own files) and in the folder named by the
environment variable ``NCLD_DATA_DIR`` (see :func:`data_dirs`).  ``data/registry.toml``
lists the known benchmarks with their checksums, their figures and the paper's
Table I figures; :func:`list_datasets` shows what is available, :func:`load_dataset`
loads (and verifies) one by name.

A MULAN upload (what the dashboard's file uploader hands over):

>>> arff_text = b'''@relation toy
... @attribute f1 numeric
... @attribute f2 numeric
... @attribute sport {0,1}
... @attribute news {0,1}
... @data
... 0.5,1.0,1,0
... 2.0,0.0,1,1
... '''
>>> xml_text = (b'<labels xmlns="http://mulan.sourceforge.net/labels">'
...             b'<label name="sport"/><label name="news"/></labels>')
>>> ds = load_arff_bytes(arff_text, xml_text, name="toy")
>>> ds.n_instances, ds.n_features, ds.n_labels, ds.cardinality
(2, 2, 2, 1.5)
>>> ds.Y.tolist(), ds.label_names
([[1, 0], [1, 1]], ('sport', 'news'))

A sparse MEKA file (labels are the first two attributes):

>>> meka = b"@relation 'toy: -C 2'\n@attribute a {0,1}\n@attribute b {0,1}\n" \
...        b"@attribute x numeric\n@data\n{0 1,2 3.5}\n{1 1}\n"
>>> ds = load_arff_bytes(meka)
>>> ds.label_names, ds.is_sparse, ds.X.toarray().tolist(), ds.Y.tolist()
(('a', 'b'), True, [[3.5], [0.0]], [[1, 0], [0, 1]])

Bad input is reported, not raised from deep inside the parser:

>>> load_arff_bytes(b"@relation r\n@attribute x numeric\n@attribute y {0,1}\n@data\n1,0\noops\n",
...                 label_count=1)
Traceback (most recent call last):
...
ValueError: arff_bytes: malformed ARFF at line 6: the row has 1 value, the header declares 2 attributes
"""

from __future__ import annotations

import csv
import math
import re
import xml.etree.ElementTree as ET

import arff  # liac-arff
import numpy as np
import scipy.sparse as sp

from ..validation import MAX_FEATURE, check_feature_values, shown_value  # noqa: F401  (MAX_FEATURE: re-exported)
from .dataset import Dataset
from .paths import as_path, read_file


# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------
def _show(items, k: int = 10) -> str:
    items = [str(i) for i in items]
    shown = ", ".join(repr(i) for i in items[:k])
    return shown + (f", ... (+{len(items) - k} more)" if len(items) > k else "")


def _as_bytes(value, param: str) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise ValueError(f"{param} must be bytes (the uploaded file's content), got {type(value).__name__}")


def _decode_text(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ValueError(
            f"{source} is not valid UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}, "
            f"line {line}); save it as UTF-8"
        ) from None


def _check_label_args(label_count, label_location):
    if label_count is not None:
        if isinstance(label_count, bool) or not isinstance(label_count, (int, np.integer)) or label_count < 1:
            raise ValueError(f"label_count must be a positive integer, got {label_count!r}")
        label_count = int(label_count)
    if label_location not in ("end", "start"):
        raise ValueError(f"label_location must be 'end' (MULAN) or 'start' (MEKA), got {label_location!r}")
    return label_count


# ---------------------------------------------------------------------------
# Label XML (MULAN)
# ---------------------------------------------------------------------------
_XML_DANGEROUS = re.compile(rb"<!\s*(?:DOCTYPE|ENTITY)", re.IGNORECASE)
_XML_ENCODING = re.compile(rb"""<\?xml[^>]*?encoding\s*=\s*["']([^"']{1,40})["']""")


def _parse_label_xml(data: bytes, source: str) -> tuple[str, ...]:
    """Label names, in document order, of a MULAN label file; safe against entity tricks."""
    if b"\x00" in data:
        raise ValueError(f"{source}: the label XML must be UTF-8 (UTF-16/32 files are not supported)")
    if _XML_DANGEROUS.search(data):
        raise ValueError(
            f"{source}: XML with a DOCTYPE or ENTITY declaration is refused (entity expansion is "
            f"unsafe); a MULAN label file needs neither"
        )
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        line, col = getattr(exc, "position", (0, -1))
        msg = re.sub(r":\s*line \d+, column \d+$", "", str(exc))
        raise ValueError(f"{source}: malformed XML at line {line}, column {col + 1}: {msg}") from None
    except (ValueError, LookupError) as exc:  # expat: an encoding it cannot read (UTF-7, Shift_JIS, unknown)
        declared = _XML_ENCODING.search(data)
        what = f"declares the encoding {declared[1].decode('ascii', 'replace')!r}" if declared else "is not UTF-8"
        raise ValueError(f"{source}: the label XML {what}, which cannot be read ({exc}); save it as UTF-8") from None
    names = []
    for el in root.iter():
        if isinstance(el.tag, str) and el.tag.rsplit("}", 1)[-1] == "label":
            label = el.get("name")
            if label is None or not label.strip():
                raise ValueError(f"{source}: a <label> element has no name attribute")
            names.append(label)
    if not names:
        raise ValueError(f"{source}: the XML lists no <label name=...> elements (no label attributes)")
    seen, dups = set(), []
    for label in names:
        if label in seen:
            dups.append(label)
        seen.add(label)
    if dups:
        raise ValueError(f"{source}: labels listed twice in the XML: {_show(dups)}")
    return tuple(names)


# ---------------------------------------------------------------------------
# ARFF
# ---------------------------------------------------------------------------
_RELATION_RE = re.compile(r"^[ \t]*@relation[ \t]+(.*?)[ \t]*$", re.IGNORECASE | re.MULTILINE)
_MEKA_C_RE = re.compile(r"(?:^|\s)-C\s+(-?\d+)(?=\s|$)")


def _meka_label_count(relation: str | None) -> int | None:
    m = _MEKA_C_RE.search(relation or "")
    return int(m.group(1)) if m else None


def _prescan_relation(text: str) -> str | None:
    m = _RELATION_RE.search(text[:1 << 16])
    return m.group(1).strip("'\"") if m else None


def header_label_count(text: str) -> int | None:
    """The MEKA ``-C n`` of the ``@relation`` line in the first 64 KiB of an ARFF's ``text``, or None.

    Tells, without parsing the data, whether a file without a label XML is loadable (and where
    its labels are: the first ``n`` attributes when ``n > 0``, the last ``|n|`` when ``n < 0``).

    >>> header_label_count("% comment\\n@relation 'scene: -C 6'\\n@attribute a numeric\\n")
    6
    >>> header_label_count("@relation plain\\n") is None
    True
    """
    return _meka_label_count(_prescan_relation(text))


def _arff_message(exc: Exception) -> str:
    try:
        msg = str(exc)
    except Exception:  # liac-arff formats with '%': a '%' in the row breaks it
        msg = type(exc).__name__
    line = getattr(exc, "line", None)
    if line is not None:
        msg = re.sub(rf",?\s+(?:at|in)\s+line\s+{line}\b\.?", "", msg, count=1)
    return msg if len(msg) <= 240 else msg[:240] + "..."


_HEADER_KEYWORDS = ("@RELATION", "@ATTRIBUTE", "@DATA", "@END")


def _layout_problem(lines: list[str], upto: int) -> tuple[int, str] | None:
    """``(line, message)`` for the header's first line out of place up to line ``upto`` (1-based): a keyword
    ARFF does not have, or an ``@attribute`` before ``@relation``; None when none is found.

    >>> _layout_problem(["@relaton 'toy: -C 3'", "@attribute a numeric", "@data"], 2)
    (1, "unknown keyword '@relaton' (the header is @relation, then @attribute lines, then @data)")
    >>> _layout_problem(["% a comment", "@attribute a numeric", "@data"], 2)
    (2, '@attribute before any @relation line (the header is @relation, then @attribute lines, then @data)')
    >>> _layout_problem(["@relation r", "@data"], 2)[1]
    '@data before any @attribute line (the header is @relation, then @attribute lines, then @data)'
    """
    order = "(the header is @relation, then @attribute lines, then @data)"
    seen_relation = seen_attribute = False
    for number, raw in enumerate(lines[:upto], start=1):
        text = raw.strip()
        if not text or text.startswith("%"):
            continue
        word = text.split(None, 1)[0]
        key = word.upper()
        if key.startswith("@") and key not in _HEADER_KEYWORDS:
            return number, f"unknown keyword {word[:40]!r} {order}"
        if key == "@RELATION":
            seen_relation = True
        elif key == "@ATTRIBUTE":
            if not seen_relation:
                return number, f"@attribute before any @relation line {order}"
            seen_attribute = True
        elif key == "@DATA" and not seen_attribute:
            return number, f"@data before any @attribute line {order}"
    return None


_ATTRIBUTE = re.compile(r"""@attribute\s+('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|\S+)\s+(.*)""", re.IGNORECASE)


def _split_row(raw: str) -> list[str] | None:
    """A dense data row's values (quoted with ' or "), or None when it cannot be split."""
    quote = '"' if '"' in raw and "'" not in raw else "'"
    try:
        return next(csv.reader([raw], quotechar=quote, skipinitialspace=True), [])
    except csv.Error:  # (a field past csv's size limit)
        return None


def _row_problem(header, values) -> str | None:
    """The first value of ``values`` its attribute of ``header`` (name, type) cannot hold, in words that quote
    the attribute's name (cut short) and its column, never the value."""
    for column, ((name, kind), value) in enumerate(zip(header, values), 1):
        value, kind = value.strip(), kind.strip()
        shown = f"{shown_value(name.strip(chr(39) + chr(34)), limit=40)} (column {column})"
        if value == "?":
            continue
        if kind.startswith("{"):
            declared = {v.strip().strip("'\"") for v in kind.strip("{}").split(",")}
            if value.strip("'\"") not in declared:
                return f"the value of the nominal attribute {shown} is not one of its declared values"
        elif kind.lower().split()[0] in ("numeric", "real", "integer"):
            try:
                float(value)
            except ValueError:
                return f"the value of the numeric attribute {shown} is not a number"
    return None


def _data_row_message(lines, data_at: int, line: int, exc) -> str:
    """What is wrong with the data row at ``line`` (1-based), in words that quote nothing of it: its number of
    values against the header's attributes, or the attribute whose value it cannot hold.

    >>> text = ["@relation r", "@attribute 'f 1' numeric", "@attribute y {0,1}", "@data", "1,0", "1,0,1", "x,1",
    ...         "1,7"]
    >>> _data_row_message(text, 3, 6, arff.BadDataFormat("1,0,1"))
    'the row has 3 values, the header declares 2 attributes'
    >>> _data_row_message(text, 3, 7, arff.BadNumericalValue())
    "the value of the numeric attribute 'f 1' (column 1) is not a number"
    >>> _data_row_message(text, 3, 8, arff.BadNominalValue("7"))
    "the value of the nominal attribute 'y' (column 2) is not one of its declared values"
    """
    header = [m.groups() for raw in lines[:data_at] if (m := _ATTRIBUTE.match(raw.strip()))]
    raw = lines[line - 1].strip()
    if raw.startswith("{"):
        return (f"the sparse row is malformed: it must read {{index value, ...}} with indices 0 to {len(header) - 1}, "
                "each once")
    values = _split_row(raw)
    if values is None:
        return "the row cannot be split into values (a value is too long)"
    if len(values) != len(header):
        return (f"the row has {len(values)} value{'s' * (len(values) != 1)}, the header declares {len(header)} "
                f"attribute{'s' * (len(header) != 1)}")
    return _row_problem(header, values) or "a value does not match its attribute's declaration"


def _label_columns(names, relation, xml_labels, label_count, label_location, source) -> list[int]:
    n_attr = len(names)
    if xml_labels is not None:
        pos = {}
        for i, nm in enumerate(names):
            pos.setdefault(nm, i)
            pos.setdefault(re.sub(r"\\(.)", r"\1", nm), i)  # liac-arff keeps ARFF escapes in names
        missing = [lab for lab in xml_labels if lab not in pos]
        if missing:
            raise ValueError(
                f"{source}: {len(missing)} label(s) named in the XML are not attributes of the ARFF: {_show(missing)}"
            )
        idx = [pos[lab] for lab in xml_labels]
        if label_count is not None and label_count != len(idx):
            raise ValueError(f"label_count={label_count} but the XML names {len(idx)} labels")
        if len(idx) >= n_attr:
            raise ValueError(f"{source}: every attribute is a label: no feature attributes left")
        return idx
    if label_count is not None:
        if label_count > n_attr:
            raise ValueError(f"label_count={label_count} exceeds the {n_attr} attributes of {source}")
        if label_count == n_attr:
            raise ValueError(f"label_count={label_count} leaves no feature attributes in {source} ({n_attr} attributes)")
        if label_location == "end":
            return list(range(n_attr - label_count, n_attr))
        return list(range(label_count))
    c = _meka_label_count(relation)
    if c is None:
        raise ValueError(
            f"{source}: no label attributes: give the MULAN label XML, or add ' -C n' (n: the number of labels) to "
            f"the relation name as MEKA files do (relation is {relation!r}); from Python, label_count= says it too"
        )
    if c == 0:
        raise ValueError(f"{source}: the MEKA relation {relation!r} declares -C 0: no label attributes")
    if abs(c) >= n_attr:
        raise ValueError(
            f"{source}: the MEKA relation declares -C {c} but there are only {n_attr} attributes "
            f"(at least one must be a feature)"
        )
    return list(range(c)) if c > 0 else list(range(n_attr + c, n_attr))


def _raw_token(line: str, attr: int, sparse: bool) -> str | None:
    """The text of attribute ``attr`` in a data row (None when the row cannot be split simply: quotes).

    >>> _raw_token("1.5,NaN,?", 1, False), _raw_token("{0 2, 3 nan}", 3, True), _raw_token("'a,b',?", 1, False)
    ('NaN', 'nan', None)
    """
    text = line.strip()
    if "'" in text or '"' in text:
        return None
    if sparse:
        for item in text.strip("{}").split(","):
            parts = item.split()
            if len(parts) == 2 and parts[0].isdigit() and int(parts[0]) == attr:
                return parts[1]
        return None
    parts = text.split(",")
    return parts[attr].strip() if attr < len(parts) else None


def _parse_arff(text, *, source, name, xml_labels=None, label_count=None, label_location="end",
                dataset_source=None) -> Dataset:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    # Locate the data rows exactly as liac-arff does (first line starting with @DATA, then
    # every non-blank line that is not a '%' comment) to know the row count and line numbers.
    data_at = next((i for i, raw in enumerate(lines) if raw.strip(" \r\n").upper().startswith("@DATA")), None)
    if not text.strip():
        raise ValueError(f"{source}: the file is empty")
    if data_at is None:
        raise ValueError(f"{source}: malformed ARFF: no @data line (the data section is missing)")
    data_lines = [i + 1 for i in range(data_at + 1, len(lines))
                  if (s := lines[i].strip()) and not s.startswith("%")]
    sparse = bool(data_lines) and lines[data_lines[0] - 1].lstrip().startswith("{")

    read = 0  # lines handed to liac-arff so far: the one it failed on, if it raises other than ArffException

    def counted():
        nonlocal read
        for raw in lines:
            read += 1
            yield raw

    try:
        obj = arff.ArffDecoder().decode(counted(), encode_nominal=True,
                                        return_type=arff.COO if sparse else arff.DENSE)
    except arff.ArffException as exc:
        msg = _arff_message(exc)
        if exc.line and exc.line > data_at + 1:  # a data row: what is wrong with it, never the row itself
            msg = _data_row_message(lines, data_at, exc.line, exc)
        elif isinstance(exc, arff.BadLayout):  # liac-arff names the line after a misspelt keyword, and no keyword
            found = _layout_problem(lines, exc.line or data_at + 1)
            if found is not None:
                line, msg = found
                raise ValueError(f"{source}: malformed ARFF at line {line}: {msg}") from None
        if isinstance(exc, arff.BadAttributeType):
            msg += " (supported types: numeric, real, integer, string, nominal {...}; not date)"
        raise ValueError(f"{source}: malformed ARFF at line {exc.line}: {msg}") from None
    except (ValueError, TypeError, IndexError, KeyError, AttributeError, csv.Error) as exc:
        line = read
        if data_at + 1 < line <= len(lines):  # a data row: described, never quoted
            raise ValueError(f"{source}: malformed ARFF at line {line}: "
                             f"{_data_row_message(lines, data_at, line, exc)}") from None
        shown = lines[line - 1].strip()[:80] if 0 < line <= len(lines) else ""
        raise ValueError(f"{source}: malformed ARFF at line {line}: cannot parse {shown!r} ({exc})") from None

    attributes = obj["attributes"]
    names = [a[0] for a in attributes]
    relation = obj.get("relation", "")
    n_attr = len(attributes)
    if n_attr == 0:
        raise ValueError(f"{source}: the ARFF declares no attributes")
    if not data_lines:
        raise ValueError(f"{source}: the @data section is empty (no instances)")
    idx = _label_columns(names, relation, xml_labels, label_count, label_location, source)
    label_set = set(idx)
    feat_idx = [i for i in range(n_attr) if i not in label_set]
    for i in feat_idx:
        if attributes[i][1] == "STRING":
            raise ValueError(
                f"{source}: feature attribute {names[i]!r} is a string attribute; only numeric and nominal "
                f"features are supported"
            )
    lookups = {}
    for j, i in enumerate(idx):
        kind = attributes[i][1]
        if kind == "STRING":
            raise ValueError(f"{source}: label attribute {names[i]!r} is a string attribute; labels must be {{0,1}}")
        if isinstance(kind, (list, tuple)):
            try:
                values = [float(v) for v in kind]
            except (TypeError, ValueError):
                values = None
            if values is None or any(v not in (0.0, 1.0) for v in values):
                raise ValueError(
                    f"{source}: label attribute {names[i]!r} is nominal {{{','.join(map(str, kind))}}}; "
                    f"labels must take values in {{0,1}}"
                )
            lookups[j] = np.asarray(values, dtype=np.float64)

    n, d, q = len(data_lines), len(feat_idx), len(idx)

    def bad_value(row, attr, value, what):
        row = int(row)
        line = data_lines[row] if row < len(data_lines) else "?"
        if math.isnan(value):  # '?' (missing) and a NaN literal both read as NaN: the row's text says which
            token = _raw_token(lines[line - 1], int(attr), sparse) if line != "?" else None
            shown = ({"?": "missing value '?'"}.get(token) or (f"NaN ({token!r})" if token else None)
                     or "missing value '?' or NaN")
        else:
            shown = f"value {value:g}"
        return f"{source}: {what} {names[attr]!r} has {shown} at data row {row + 1} (line {line})"

    if sparse:
        _refuse_duplicate_indices(lines, data_lines, source)
        values, rows, cols = obj["data"]
        values = np.asarray(values, dtype=np.float64)
        rows = np.asarray(rows, dtype=np.intp)
        cols = np.asarray(cols, dtype=np.intp)
        if rows.size and rows.max() >= n:  # pragma: no cover - both count the same lines
            raise ValueError(f"{source}: could not count the data rows consistently")
        is_label = np.zeros(n_attr, dtype=bool)
        is_label[idx] = True
        feat_pos = np.full(n_attr, -1, dtype=np.intp)
        feat_pos[feat_idx] = np.arange(d)
        lab_pos = np.full(n_attr, -1, dtype=np.intp)
        lab_pos[idx] = np.arange(q)
        lm = is_label[cols]
        fv, fr, fc = values[~lm], rows[~lm], cols[~lm]
        bad = np.flatnonzero(~np.isfinite(fv))
        if bad.size:
            k = bad[0]
            raise ValueError(bad_value(fr[k], fc[k], fv[k], "feature"))
        X = sp.csr_matrix((fv, (fr, feat_pos[fc])), shape=(n, d), dtype=np.float64)
        X.sum_duplicates()
        X.eliminate_zeros()
        C = np.zeros((n, q), dtype=np.float64)
        C[rows[lm], lab_pos[cols[lm]]] = values[lm]
    else:
        M = np.array(obj["data"], dtype=np.float64)  # missing values (None) become NaN
        if M.shape != (n, n_attr):  # pragma: no cover - liac-arff checks the row width
            raise ValueError(f"{source}: expected {n} rows of {n_attr} values, got shape {M.shape}")
        X = np.ascontiguousarray(M[:, feat_idx])
        bad = ~np.isfinite(X)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise ValueError(bad_value(r, feat_idx[c], X[r, c], "feature"))
        C = M[:, idx]

    Y = C.copy()
    for j, lut in lookups.items():
        ok = np.isfinite(C[:, j])
        Y[ok, j] = lut[C[ok, j].astype(np.intp)]
    bad = ~np.isin(Y, (0.0, 1.0))
    if bad.any():
        r, j = np.argwhere(bad)[0]
        msg = bad_value(r, idx[j], Y[r, j], "label")
        raise ValueError(msg + "; labels must be 0 or 1")
    return Dataset(
        name=name,
        X=X,
        Y=Y.astype(np.int8),
        label_names=tuple(names[i] for i in idx),
        feature_names=tuple(names[i] for i in feat_idx),
        source=dataset_source if dataset_source is not None else source,
    )


def parse_arff(arff_bytes: bytes, xml_bytes: bytes | None = None, *, name: str, source: str,
               xml_source: str | None = None, label_count=None, label_location="end",
               dataset_source: str | None = None) -> Dataset:
    """Parse the content of a MULAN or MEKA ARFF (and of its label XML) into a :class:`Dataset`.

    The one parse behind :func:`load_arff`, :func:`load_arff_bytes` and the registry's
    :func:`~ncld_core.data.catalog.load_dataset` (which reads the bytes itself, to check their
    checksums first). The labels are those the XML names, else ``label_count`` attributes at
    ``label_location``, else the MEKA ``-C n`` of the relation name.

    Parameters
    ----------
    arff_bytes, xml_bytes : bytes
        The files' content (UTF-8); ``xml_bytes`` optional.
    name : str
        The dataset's name.
    source, xml_source : str
        How messages name the ARFF and the XML (a path, or ``arff_bytes`` for an upload);
        ``source`` is also the dataset's ``source`` unless ``dataset_source`` is given.

    >>> ds = parse_arff(b"@relation 'r: -C 1'\\n@attribute y {0,1}\\n@attribute x numeric\\n@data\\n1,2.5\\n",
    ...                 name="r", source="r.arff")
    >>> ds.label_names, ds.X.tolist(), ds.Y.tolist(), ds.source
    (('y',), [[2.5]], [[1]], 'r.arff')
    """
    label_count = _check_label_args(label_count, label_location)
    text = _decode_text(arff_bytes, source)
    xml_labels = None
    if xml_bytes is not None:
        xml_labels = _parse_label_xml(xml_bytes, xml_source or f"{source} (label XML)")
    return _parse_arff(text, source=source, name=name, xml_labels=xml_labels, label_count=label_count,
                       label_location=label_location, dataset_source=dataset_source)


_SPARSE_INDEX = re.compile(r"[{,]\s*([^\s,}]+)")


def _sparse_entry_indices(row: str) -> list[str]:
    """The index of each ``index value`` entry of a sparse row ``{i v, j w}``; quotes respected."""
    body = row.strip()
    if "'" not in body and '"' not in body:
        return _SPARSE_INDEX.findall(body)
    entries, current, quote, escaped = [], [], None, False
    for ch in body.strip("{}"):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == ",":
            entries.append("".join(current))
            current = []
            continue
        current.append(ch)
    entries.append("".join(current))
    return [e.split(None, 1)[0] for e in entries if e.strip()]


def _refuse_duplicate_indices(lines, data_lines, source: str) -> None:
    """A sparse row naming an attribute twice (``{2 1.0,2 5.0}``): liac-arff keeps the last value and
    drops the others silently, so the file is refused, naming the row and the index."""
    for row, line in enumerate(data_lines):
        indices = [int(i) if i.isdigit() else i for i in _sparse_entry_indices(lines[line - 1])]  # "02" is 2
        if len(indices) != len(set(indices)):
            seen = set()
            dup = next(i for i in indices if i in seen or seen.add(i))
            raise ValueError(f"{source}: data row {row + 1} (line {line}) gives attribute index {dup} twice; "
                             "each index may appear once in a sparse row")


def load_arff(arff_path, xml_path=None, *, label_count=None, name=None, label_location="end") -> Dataset:
    """Load a MULAN or MEKA ARFF file (dense or sparse).

    Parameters
    ----------
    arff_path : str or os.PathLike
        The ``.arff`` file (UTF-8).
    xml_path : str or os.PathLike, optional
        The MULAN label XML. Labels are located *by name* among the attributes.
    label_count : int, optional
        Number of label attributes, at the end of the attribute list (MULAN layout) or
        at the start when ``label_location="start"``; used when there is no XML.
    name : str, optional
        Dataset name; defaults to the file stem.
    label_location : {"end", "start"}
        Where ``label_count`` labels sit (ignored otherwise).

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        Unreadable file, non-UTF-8 text, malformed ARFF (with the line number), XML
        labels missing from the ARFF, labels outside {0, 1}, no label attributes, an
        empty data section, or ``label_count`` not smaller than the number of attributes.

    Notes
    -----
    The labels are taken from, in order of precedence: ``xml_path``; ``label_count``;
    the sibling ``NAME.xml`` when it exists; the MEKA ``-C n`` option of the relation
    name (``n > 0``: the first ``n`` attributes, ``n < 0``: the last ``|n|``).
    """
    path = as_path(arff_path, "arff_path")
    label_count = _check_label_args(label_count, label_location)
    if name is not None and (not isinstance(name, str) or not name):
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    data = read_file(path, "arff_path")
    xpath = None
    if xml_path is not None:
        xpath = as_path(xml_path, "xml_path")
    elif label_count is None and path.with_suffix(".xml").is_file():
        xpath = path.with_suffix(".xml")
    xml_data = None if xpath is None else read_file(xpath, "xml_path")
    return parse_arff(data, xml_data, name=name or path.stem, source=str(path),
                      xml_source=None if xpath is None else str(xpath),
                      label_count=label_count, label_location=label_location)


def load_arff_bytes(arff_bytes, xml_bytes=None, *, name="upload", label_count=None,
                    label_location="end") -> Dataset:
    """Load an uploaded MULAN or MEKA ARFF from memory.

    Nothing is executed: the text is parsed by liac-arff and the XML by ElementTree
    after refusing DOCTYPE/ENTITY declarations.

    Parameters
    ----------
    arff_bytes : bytes
        Content of the ``.arff`` file, UTF-8 encoded.
    xml_bytes : bytes, optional
        Content of the MULAN label XML. Without it, ``label_count`` or the MEKA
        ``-C n`` relation option decide which attributes are labels.
    name : str
        Dataset name (``Dataset.source`` is ``"upload"``).
    label_count : int, optional
        Number of label attributes (see :func:`load_arff`).
    label_location : {"end", "start"}
        Where ``label_count`` labels sit.

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        As :func:`load_arff`; the message names ``arff_bytes``/``xml_bytes``.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    label_count = _check_label_args(label_count, label_location)
    tag = "" if name == "upload" else f" ({name})"
    data = _as_bytes(arff_bytes, "arff_bytes")
    xml_data = None if xml_bytes is None else _as_bytes(xml_bytes, "xml_bytes")
    return parse_arff(data, xml_data, name=name, source=f"arff_bytes{tag}", xml_source=f"xml_bytes{tag}",
                      label_count=label_count, label_location=label_location, dataset_source="upload")


def check_features(ds: "Dataset", source: str = "dataset") -> None:
    """Refuse features no model can learn from, naming the feature and the row (1-based data row).

    Not part of parsing (a file may hold anything); called where data is loaded for a run (the
    dashboard's upload).  The one check of :func:`ncld_core.validation.check_feature_values`, which
    the models' ``check_X`` and the stream builder (so the command line) run too: a value with
    ``|x| > MAX_FEATURE`` (finite, but its square overflows), or every feature constant.

    >>> import numpy as np
    >>> bad = Dataset(name="t", X=np.array([[0.0, 1.0], [2.0, 1e308]]), Y=np.zeros((2, 1), np.int8))
    >>> check_features(bad)
    Traceback (most recent call last):
    ...
    ValueError: dataset: feature 'x_1', data row 2: value 1e+308 is too large (|x| must stay below 1e+100; its square overflows the solve)
    """
    check_feature_values(ds.X, source=source, feature_names=ds.feature_names, data_rows=True)
