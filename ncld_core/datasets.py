r"""Multi-label benchmark datasets: ARFF loading, the registry, checksums and downloads.

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
ValueError: arff_bytes: malformed ARFF at line 6: Bad @DATA instance format: oops
"""

from __future__ import annotations

import copy
import functools
import hashlib
import http.client
import math
import os
import re
import tempfile
import tomllib
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import arff  # liac-arff
import numpy as np
import pandas as pd
import scipy.sparse as sp

__all__ = [
    "Dataset",
    "load_arff",
    "load_arff_bytes",
    "load_dataset",
    "list_datasets",
    "data_dirs",
    "registry",
    "download",
    "ENV_VAR",
    "REPO_DATA_DIR",
    "REGISTRY_PATH",
]

#: Environment variable naming an extra folder (or ``os.pathsep``-separated folders) of datasets.
ENV_VAR = "NCLD_DATA_DIR"
#: The repository's ``data/`` folder: the registry, and where users drop their own files.
REPO_DATA_DIR = Path(__file__).resolve().parents[1] / "data"
#: The registry of known benchmark datasets.
REGISTRY_PATH = REPO_DATA_DIR / "registry.toml"
#: Name of the checksum file honoured in any data folder (``sha256sum`` output format).
CHECKSUM_FILE = "SHA256SUMS"

_LIST_COLUMNS = [
    "name", "instances", "features", "labels", "cardinality", "sparse", "folder", "verified",
    "paper_instances", "paper_features", "paper_labels", "paper_cardinality",
    "paper_name", "error",
]


# ---------------------------------------------------------------------------
# The dataset
# ---------------------------------------------------------------------------
@dataclass(frozen=True, eq=False, repr=False)
class Dataset:
    """A multi-label dataset: features, {0, 1} labels and their names.

    Attributes
    ----------
    name : str
        Short name (the file stem for files, ``"upload"`` by default for uploads).
    X : scipy.sparse.csr_matrix or numpy.ndarray, shape (n, d)
        float64 features: CSR for sparse ARFF files, a dense array for dense ones.
        Nominal features hold the index of their value in the declaration.
    Y : numpy.ndarray of int8, shape (n, q)
        Labels in {0, 1}.
    label_names : tuple of str
        One name per column of ``Y`` (default ``label_0``, ``label_1``, ...).
    feature_names : tuple of str
        One name per column of ``X`` (default ``x_0``, ``x_1``, ...).
    source : str
        Path of the ARFF file, or ``"upload"``.

    Notes
    -----
    Instances are compared by identity (``eq=False``): they hold arrays.
    """

    name: str
    X: object
    Y: np.ndarray
    label_names: tuple = ()
    feature_names: tuple = ()
    source: str = "upload"

    def __post_init__(self):
        X = self.X
        if sp.issparse(X):
            if not (isinstance(X, sp.csr_matrix) and X.dtype == np.float64):
                X = sp.csr_matrix(X, dtype=np.float64)
        else:
            try:
                X = np.asarray(X, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"Dataset {self.name!r}: X must be numeric: {exc}") from None
        if X.ndim != 2:
            raise ValueError(f"Dataset {self.name!r}: X must be 2-D (instances x features), got {X.ndim}-D")
        if X.shape[0] == 0:
            raise ValueError(f"Dataset {self.name!r}: X has no instances")
        Y = np.asarray(self.Y)
        if Y.ndim != 2 or Y.shape[0] != X.shape[0]:
            raise ValueError(
                f"Dataset {self.name!r}: Y must have shape (n_instances, n_labels) with "
                f"n_instances={X.shape[0]}, got {Y.shape}"
            )
        if Y.shape[1] == 0:
            raise ValueError(f"Dataset {self.name!r}: Y has no labels")
        if not np.all(np.isin(Y, (0, 1))):
            raise ValueError(f"Dataset {self.name!r}: Y must hold labels in {{0, 1}}")
        Y = Y.astype(np.int8, copy=False)
        labels = tuple(str(s) for s in self.label_names) or tuple(f"label_{j}" for j in range(Y.shape[1]))
        features = tuple(str(s) for s in self.feature_names) or tuple(f"x_{j}" for j in range(X.shape[1]))
        if len(labels) != Y.shape[1]:
            raise ValueError(f"Dataset {self.name!r}: {len(labels)} label_names for {Y.shape[1]} labels")
        if len(features) != X.shape[1]:
            raise ValueError(f"Dataset {self.name!r}: {len(features)} feature_names for {X.shape[1]} features")
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "Y", Y)
        object.__setattr__(self, "label_names", labels)
        object.__setattr__(self, "feature_names", features)
        object.__setattr__(self, "source", str(self.source))

    @property
    def n_instances(self) -> int:
        """Number of instances (rows)."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Number of feature attributes."""
        return int(self.X.shape[1])

    @property
    def n_labels(self) -> int:
        """Number of labels."""
        return int(self.Y.shape[1])

    @property
    def cardinality(self) -> float:
        """Label cardinality: mean number of relevant labels per instance."""
        return float(self.Y.sum(axis=1, dtype=np.int64).mean())

    @property
    def is_sparse(self) -> bool:
        """Whether ``X`` is a scipy.sparse CSR matrix."""
        return sp.issparse(self.X)

    def __repr__(self) -> str:
        return (
            f"Dataset(name={self.name!r}, n_instances={self.n_instances}, n_features={self.n_features}, "
            f"n_labels={self.n_labels}, cardinality={self.cardinality:.3f}, sparse={self.is_sparse}, "
            f"source={self.source!r})"
        )


# ---------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------
def _show(items, k: int = 10) -> str:
    items = [str(i) for i in items]
    shown = ", ".join(repr(i) for i in items[:k])
    return shown + (f", ... (+{len(items) - k} more)" if len(items) > k else "")


def _as_path(value, param: str) -> Path:
    if isinstance(value, (str, os.PathLike)) and str(value):
        return Path(value).expanduser()
    raise ValueError(f"{param} must be a path (str or os.PathLike), got {value!r}")


def _read_file(path: Path, param: str) -> bytes:
    if not path.exists():
        raise ValueError(f"{param}: no such file: {path}")
    if not path.is_file():
        raise ValueError(f"{param}: not a regular file: {path}")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ValueError(f"{param}: cannot read {path}: {exc.strerror or exc}") from None


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


def _arff_message(exc: Exception) -> str:
    try:
        msg = str(exc)
    except Exception:  # liac-arff formats with '%': a '%' in the row breaks it
        msg = type(exc).__name__
    line = getattr(exc, "line", None)
    if line is not None:
        msg = re.sub(rf",?\s+(?:at|in)\s+line\s+{line}\b\.?", "", msg, count=1)
    return msg if len(msg) <= 240 else msg[:240] + "..."


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
            f"{source}: no label attributes: give the MULAN label XML, or label_count, "
            f"or use a MEKA relation name with '-C n' (relation is {relation!r})"
        )
    if c == 0:
        raise ValueError(f"{source}: the MEKA relation {relation!r} declares -C 0: no label attributes")
    if abs(c) >= n_attr:
        raise ValueError(
            f"{source}: the MEKA relation declares -C {c} but there are only {n_attr} attributes "
            f"(at least one must be a feature)"
        )
    return list(range(c)) if c > 0 else list(range(n_attr + c, n_attr))


def _parse_arff(text, *, source, name, xml_labels=None, label_count=None, label_location="end",
                dataset_source=None) -> Dataset:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    # Locate the data rows exactly as liac-arff does (first line starting with @DATA, then
    # every non-blank line that is not a '%' comment) to know the row count and line numbers.
    data_at = next((i for i, raw in enumerate(lines) if raw.strip(" \r\n").upper().startswith("@DATA")), None)
    if data_at is None:
        raise ValueError(f"{source}: malformed ARFF: no @data line (the data section is missing)")
    data_lines = [i + 1 for i in range(data_at + 1, len(lines))
                  if (s := lines[i].strip()) and not s.startswith("%")]
    sparse = bool(data_lines) and lines[data_lines[0] - 1].lstrip().startswith("{")

    decoder = arff.ArffDecoder()
    try:
        obj = decoder.decode(lines, encode_nominal=True, return_type=arff.COO if sparse else arff.DENSE)
    except arff.ArffException as exc:
        msg = _arff_message(exc)
        if isinstance(exc, arff.BadAttributeType):
            msg += " (supported types: numeric, real, integer, string, nominal {...}; not date)"
        raise ValueError(f"{source}: malformed ARFF at line {exc.line}: {msg}") from None
    except (ValueError, TypeError, IndexError, KeyError, AttributeError) as exc:
        line = decoder._current_line
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
        shown = "missing value '?'" if math.isnan(value) else f"value {value:g}"
        row = int(row)
        line = data_lines[row] if row < len(data_lines) else "?"
        return f"{source}: {what} {names[attr]!r} has {shown} at data row {row + 1} (line {line})"

    if sparse:
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
    path = _as_path(arff_path, "arff_path")
    label_count = _check_label_args(label_count, label_location)
    if name is not None and (not isinstance(name, str) or not name):
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    text = _decode_text(_read_file(path, "arff_path"), str(path))
    xml_labels = None
    if xml_path is not None:
        xpath = _as_path(xml_path, "xml_path")
        xml_labels = _parse_label_xml(_read_file(xpath, "xml_path"), str(xpath))
    elif label_count is None:
        sibling = path.with_suffix(".xml")
        if sibling.is_file():
            xml_labels = _parse_label_xml(_read_file(sibling, "xml_path"), str(sibling))
    return _parse_arff(text, source=str(path), name=name or path.stem, xml_labels=xml_labels,
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
    text = _decode_text(_as_bytes(arff_bytes, "arff_bytes"), f"arff_bytes{tag}")
    xml_labels = None
    if xml_bytes is not None:
        xml_labels = _parse_label_xml(_as_bytes(xml_bytes, "xml_bytes"), f"xml_bytes{tag}")
    return _parse_arff(text, source=f"arff_bytes{tag}", name=name, xml_labels=xml_labels,
                       label_count=label_count, label_location=label_location, dataset_source="upload")


#: Largest feature magnitude a model accepts: beyond it the squared distances of the graph
#: (Eq. Re) and the hidden layer's Gram matrices overflow float64 and the solve fails.
MAX_FEATURE = 1e100


def check_features(ds: "Dataset", source: str = "dataset") -> None:
    """Refuse features no model can learn from, naming the column and the row (1-based data row).

    Not part of parsing (a file may hold anything); called where data is loaded for a run
    (the dashboard's upload).

    * a value with ``|x| > MAX_FEATURE`` (finite, but its square overflows);
    * every feature constant: the instances cannot be told apart (no graph, no hidden layer signal).

    >>> import numpy as np
    >>> bad = Dataset(name="t", X=np.array([[0.0, 1.0], [2.0, 1e308]]), Y=np.zeros((2, 1), np.int8))
    >>> check_features(bad)
    Traceback (most recent call last):
    ...
    ValueError: dataset: feature 'x_1', data row 2: value 1e+308 is too large (|x| must stay below 1e+100; its square overflows the solve)
    """
    import scipy.sparse as sp

    X = ds.X
    if sp.issparse(X):
        coo = X.tocoo()
        rows, cols, vals = coo.row, coo.col, coo.data
    else:
        A = np.asarray(X, dtype=float)
        rows, cols = np.nonzero(np.abs(A) > MAX_FEATURE)
        vals = A[rows, cols]
    big = np.flatnonzero(np.abs(vals) > MAX_FEATURE)
    if big.size:
        k = big[np.lexsort((cols[big], rows[big]))[0]]
        raise ValueError(f"{source}: feature {ds.feature_names[cols[k]]!r}, data row {rows[k] + 1}: value "
                         f"{vals[k]:g} is too large (|x| must stay below {MAX_FEATURE:g}; its square overflows the solve)")
    if X.shape[0] >= 2 and X.shape[1] >= 1:
        lo = X.min(axis=0).toarray().ravel() if sp.issparse(X) else np.min(X, axis=0)
        hi = X.max(axis=0).toarray().ravel() if sp.issparse(X) else np.max(X, axis=0)
        if np.all(lo == hi):
            names = ", ".join(repr(n) for n in ds.feature_names[:5]) + (", ..." if X.shape[1] > 5 else "")
            raise ValueError(f"{source}: every feature is constant ({names}, rows 1 to {X.shape[0]}): "
                             "the instances cannot be told apart")


# ---------------------------------------------------------------------------
# Registry, folders, checksums
# ---------------------------------------------------------------------------
@functools.lru_cache(maxsize=8)
def _registry_cached(path: str, mtime_ns: int, size: int) -> dict:
    try:
        doc = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: cannot read the dataset registry: {exc}") from None
    entries = doc.get("datasets", {})
    if not isinstance(entries, dict):
        raise ValueError(f"{path}: [datasets] must be a table of tables")
    for key, entry in entries.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("arff"), str):
            raise ValueError(f"{path}: [datasets.{key}] must be a table with an 'arff' file name")
    return entries


def _registry(path: Path | None = None) -> dict:
    p = REGISTRY_PATH if path is None else Path(path)
    try:
        st = p.stat()
    except OSError:
        if path is None:
            return {}
        raise ValueError(f"registry: no such file: {p}") from None
    return _registry_cached(str(p), st.st_mtime_ns, st.st_size)


def registry(path=None) -> dict[str, dict]:
    """The known benchmark datasets, from ``data/registry.toml``.

    Parameters
    ----------
    path : str or os.PathLike, optional
        Another registry file (default: the repository's ``data/registry.toml``;
        an empty registry when that file is absent).

    Returns
    -------
    dict
        ``{name: entry}``; each entry holds the fields documented in the TOML file
        (``arff``, ``xml``, ``arff_sha256``, ``instances``, ``paper_instances``, ...).
        A copy: mutating it does not affect the module.
    """
    return copy.deepcopy(_registry(None if path is None else _as_path(path, "path")))


def _canonical_name(name: str, reg: dict) -> str | None:
    if name in reg:
        return name
    for key, entry in reg.items():
        if name == entry.get("paper_name") or name in (entry.get("aliases") or ()):
            return key
    return None


def data_dirs() -> list[Path]:
    """The folders searched for datasets, in priority order.

    Returns
    -------
    list of pathlib.Path
        The repository's ``data/`` folder (when it exists), then the folder(s) named by
        ``$NCLD_DATA_DIR`` (several may be separated by ``os.pathsep``).

    Raises
    ------
    ValueError
        When ``NCLD_DATA_DIR`` names a folder that does not exist.
    """
    out = [REPO_DATA_DIR] if REPO_DATA_DIR.is_dir() else []
    env = os.environ.get(ENV_VAR, "").strip()
    for part in env.split(os.pathsep) if env else ():
        if not part.strip():
            continue
        folder = Path(part.strip()).expanduser()
        if not folder.is_dir():
            raise ValueError(
                f"{ENV_VAR}={env!r}: the folder {folder} does not exist or is not a directory; "
                f"point {ENV_VAR} at the folder holding the benchmark .arff files"
            )
        folder = folder.resolve()
        if folder not in out:
            out.append(folder)
    return out


def _resolve_dirs(dirs) -> list[Path]:
    if dirs is None:
        return data_dirs()
    if isinstance(dirs, (str, os.PathLike)):
        dirs = [dirs]
    out = []
    for d in dirs:
        folder = _as_path(d, "dirs")
        if not folder.is_dir():
            raise ValueError(f"dirs: {folder} is not an existing directory")
        if folder not in out:
            out.append(folder)
    return out


@functools.lru_cache(maxsize=1024)
def _sha256_cached(path: str, mtime_ns: int, size: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _sha256_file(path: Path) -> str:
    st = path.stat()
    return _sha256_cached(str(path), st.st_mtime_ns, st.st_size)


_SUMS_LINE = re.compile(r"^\s*([0-9a-fA-F]{64})\s+\*?(.+?)\s*$")


@functools.lru_cache(maxsize=64)
def _sums_cached(path: str, mtime_ns: int, size: int) -> dict:
    sums = {}
    for line in Path(path).read_text(encoding="utf-8", errors="replace").splitlines():
        m = _SUMS_LINE.match(line)
        if m:
            fname = m.group(2)
            sums[fname[2:] if fname.startswith("./") else fname] = m.group(1).lower()
    return sums


def _folder_sums(folder: Path) -> dict:
    p = folder / CHECKSUM_FILE
    try:
        st = p.stat()
        return _sums_cached(str(p), st.st_mtime_ns, st.st_size)
    except OSError:
        return {}


def _expected_sha256(path: Path, key: str | None = None):
    """``(hex, origin)`` from the folder's SHA256SUMS, else from the registry; or None."""
    sums = _folder_sums(path.parent)
    if path.name in sums:
        return sums[path.name], str(path.parent / CHECKSUM_FILE)
    entry = _registry().get(key if key is not None else path.stem)
    if entry:
        for kind in ("arff", "xml"):
            sha = entry.get(f"{kind}_sha256")
            if entry.get(kind) == path.name and sha:
                return sha.lower(), str(REGISTRY_PATH)
    return None


def _verify_bytes(path: Path, data: bytes, key: str | None):
    expected = _expected_sha256(path, key)
    if expected is None:
        return
    want, origin = expected
    got = hashlib.sha256(data).hexdigest()
    if got != want:
        raise ValueError(
            f"checksum mismatch for {path}: expected sha256 {want[:16]}... (from {origin}) but the file "
            f"has {got[:16]}...; the file is corrupted or a different version: replace it, or pass "
            f"verify=False to load it anyway"
        )


@functools.lru_cache(maxsize=1024)
def _meka_header_cached(path: str, mtime_ns: int, size: int) -> int | None:
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 16).decode("utf-8", errors="replace")
    except OSError:
        return None
    return _meka_label_count(_prescan_relation(head))


def _scan_folder(folder: Path):
    """``(name, arff, xml_or_None)`` for each loadable dataset of a folder."""
    try:
        entries = sorted(folder.iterdir())
    except OSError as exc:
        raise ValueError(f"cannot list the data folder {folder}: {exc.strerror or exc}") from None
    for p in entries:
        if p.suffix.lower() != ".arff" or p.name.startswith(".") or not p.is_file():
            continue
        xml = p.with_suffix(".xml")
        if xml.is_file():
            yield p.stem, p, xml
        else:
            try:
                st = p.stat()
            except OSError:  # vanished meanwhile
                continue
            if _meka_header_cached(str(p), st.st_mtime_ns, st.st_size) is not None:
                yield p.stem, p, None


@functools.lru_cache(maxsize=256)
def _stats_cached(arff_path: str, xml_path: str | None, key: tuple):
    try:
        ds = load_arff(arff_path, xml_path)
    except ValueError as exc:
        return None, str(exc)
    return {
        "instances": ds.n_instances,
        "features": ds.n_features,
        "labels": ds.n_labels,
        "cardinality": ds.cardinality,
        "sparse": ds.is_sparse,
    }, None


def _describe(name: str, arff_path: Path, xml_path: Path | None, reg: dict) -> dict:
    entry = reg.get(name)
    row = dict.fromkeys(_LIST_COLUMNS)
    row.update(name=name, folder=str(arff_path.parent))
    for field in ("paper_instances", "paper_features", "paper_labels", "paper_cardinality"):
        value = entry.get(field) if entry else None
        row[field] = float(value) if value is not None else math.nan
    row["paper_name"] = entry.get("paper_name") if entry else None
    try:
        checks = []
        registry_match = entry is not None and (xml_path is None) == (not entry.get("xml"))
        key = []
        for kind, path in (("arff", arff_path), ("xml", xml_path)):
            if path is None:
                continue
            st = path.stat()
            key.append((st.st_mtime_ns, st.st_size))
            expected = _expected_sha256(path, name)
            reg_sha = reg_size = None
            if entry is not None and entry.get(kind) == path.name:
                reg_sha, reg_size = entry.get(f"{kind}_sha256"), entry.get(f"{kind}_size")
            elif entry is not None:
                registry_match = False
            if reg_size is not None and reg_size != st.st_size:
                registry_match = False
            got = None
            if expected is not None or (registry_match and reg_sha):
                got = _sha256_cached(str(path), st.st_mtime_ns, st.st_size)
            if expected is not None:
                checks.append(got == expected[0])
            if reg_sha:
                registry_match = registry_match and got == reg_sha.lower()
            elif reg_size is None:
                registry_match = False  # nothing to tie the registry's figures to this file
        row["verified"] = all(checks) if checks else None
        if registry_match:
            stats = {f: entry.get(f) for f in ("instances", "features", "labels", "cardinality", "sparse")}
            error = None
            if any(v is None for v in stats.values()):
                registry_match = False
        if not registry_match:
            stats, error = _stats_cached(str(arff_path), str(xml_path) if xml_path else None, tuple(key))
        if stats:
            row.update(stats)
        row["error"] = error
    except OSError as exc:
        row["error"] = f"{arff_path}: {exc.strerror or exc}"
    return row


def _available(folders) -> dict[str, tuple[Path, Path | None]]:
    found = {}
    for folder in folders:
        for name, arff_path, xml_path in _scan_folder(folder):
            found.setdefault(name, (arff_path, xml_path))
    return found


def list_datasets(dirs=None) -> pd.DataFrame:
    """List the datasets available in the data folders.

    A dataset is an ``.arff`` file with its ``.xml`` sibling (MULAN), or an ``.arff``
    whose relation carries ``-C n`` (MEKA). When a name occurs in several folders,
    only the first (the one :func:`load_dataset` loads) is listed.

    Fast enough to call on every dashboard rerun: for a file that matches its registry
    entry (checksum, else size), the registry's figures are used; other files are
    parsed once and their figures cached in-process by (path, mtime, size); checksums
    are cached the same way.

    Parameters
    ----------
    dirs : path or list of paths, optional
        Folders to search; default :func:`data_dirs`.

    Returns
    -------
    pandas.DataFrame
        One row per dataset, columns ``name, instances, features, labels, cardinality,
        sparse, folder, verified, paper_instances, paper_features, paper_labels,
        paper_cardinality, paper_name, error``. ``verified`` is True/False from the
        folder's SHA256SUMS or the registry's checksums, None when none is known;
        ``paper_*`` come from the registry (NaN when unknown); ``error`` explains why
        a file could not be read (its figures are then missing).

    Raises
    ------
    ValueError
        A folder in ``dirs`` (or ``NCLD_DATA_DIR``) does not exist.
    """
    folders = _resolve_dirs(dirs)
    reg = _registry()
    rows = [_describe(name, a, x, reg) for name, (a, x) in _available(folders).items()]
    df = pd.DataFrame(rows, columns=_LIST_COLUMNS)
    for col in ("instances", "features", "labels"):
        df[col] = df[col].astype("Int64")
    df["cardinality"] = df["cardinality"].astype("float64")
    df["sparse"] = df["sparse"].astype("boolean")
    for col in ("paper_instances", "paper_features", "paper_labels", "paper_cardinality"):
        df[col] = df[col].astype("float64")
    for col in ("verified", "paper_name", "error"):  # keep None (pandas would infer NaN-strings)
        df[col] = pd.Series([r[col] for r in rows], index=df.index, dtype=object)
    return df.reset_index(drop=True)


def _looks_like_path(name: str) -> bool:
    seps = [os.sep] + ([os.altsep] if os.altsep else [])
    return any(s in name for s in seps) or name.lower().endswith(".arff")


def load_dataset(name, *, dirs=None, verify=True) -> Dataset:
    """Load a dataset by registry/file name, or by path.

    Parameters
    ----------
    name : str or os.PathLike
        A dataset name (``"medical"``; the paper's names such as ``"languagelog"`` are
        accepted as aliases), searched as ``NAME.arff`` in the data folders; or a path
        to an ``.arff`` file (any string containing a path separator or ending in
        ``.arff``). A sibling ``NAME.xml`` makes it a MULAN dataset, otherwise the MEKA
        ``-C n`` relation option is required.
    dirs : path or list of paths, optional
        Folders to search; default :func:`data_dirs`.
    verify : bool
        Check the sha256 of the ARFF and XML against the folder's ``SHA256SUMS`` (or,
        when that does not list the file, the registry's checksum for that name) and
        refuse a mismatch. Files with no known checksum load unverified.

    Returns
    -------
    Dataset

    Raises
    ------
    ValueError
        Unknown name (the message lists the available ones), checksum mismatch
        (naming the file and both hash prefixes), or any problem of :func:`load_arff`.
    """
    if not isinstance(verify, bool):
        raise ValueError(f"verify must be True or False, got {verify!r}")
    if isinstance(name, os.PathLike) or (isinstance(name, str) and _looks_like_path(name)):
        arff_path = _as_path(name, "name")
        if not arff_path.is_file():
            raise ValueError(f"name: no such file: {arff_path}")
        key = arff_path.stem
        xml_path = arff_path.with_suffix(".xml")
        xml_path = xml_path if xml_path.is_file() else None
    else:
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"name must be a dataset name or a path, got {name!r}")
        folders = _resolve_dirs(dirs)
        found = _available(folders)
        reg = _registry()
        key = name if name in found else _canonical_name(name, reg)
        if key not in found:
            where = ", ".join(str(f) for f in folders) or "(no data folder)"
            available = ", ".join(sorted(found)) or "(none)"
            if key is not None:
                raise ValueError(
                    f"dataset {name!r} is a known benchmark but {reg[key]['arff']} was not found in "
                    f"{where}; set {ENV_VAR} to the folder holding it, or put the files in "
                    f"{REPO_DATA_DIR} (see download()). Available: {available}"
                )
            raise ValueError(f"unknown dataset {name!r}; available: {available} (searched {where})")
        arff_path, xml_path = found[key]
    data = _read_file(arff_path, "name")
    xml_data = _read_file(xml_path, "name") if xml_path is not None else None
    if verify:
        _verify_bytes(arff_path, data, key)
        if xml_path is not None:
            _verify_bytes(xml_path, xml_data, key)
    text = _decode_text(data, str(arff_path))
    xml_labels = _parse_label_xml(xml_data, str(xml_path)) if xml_path is not None else None
    return _parse_arff(text, source=str(arff_path), name=key, xml_labels=xml_labels)


# ---------------------------------------------------------------------------
# Download
# ---------------------------------------------------------------------------
def _file_url(template: str, fname: str) -> str:
    quoted = urllib.parse.quote(fname)
    if "{file}" in template:
        return template.replace("{file}", quoted)
    return template.rstrip("/") + "/" + quoted


def _fetch(url: str, dest: Path, fname: str, want: str, size, timeout) -> Path:
    """Stream ``url`` into a temporary file of ``dest``; return it once its sha256 is ``want``."""
    fd, tmp_name = tempfile.mkstemp(dir=dest, prefix=f".{fname}.", suffix=".part")
    tmp = Path(tmp_name)
    h = hashlib.sha256()
    total = 0
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 (scheme checked)
                    while chunk := resp.read(1 << 16):
                        total += len(chunk)
                        if size is not None and total > size:
                            break
                        h.update(chunk)
                        out.write(chunk)
            except (OSError, http.client.HTTPException) as exc:  # URLError, HTTPError, timeouts
                raise ValueError(f"could not download {fname} from {url}: {exc}") from None
        got = h.hexdigest()
        if size is not None and total > size:
            raise ValueError(
                f"download of {fname} from {url} refused: more than the expected {size} bytes; nothing was written"
            )
        if got != want:
            raise ValueError(
                f"download of {fname} from {url} failed verification: expected sha256 {want[:16]}... but got "
                f"{got[:16]}...; the file was deleted"
            )
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def download(name, dest=None, *, base_url=None, timeout=30) -> Path:
    """Download a registry dataset's ARFF (and XML), verifying their sha256.

    Each file is streamed to a temporary file in ``dest`` and renamed into place only
    once every file of the dataset has been verified; on any failure the temporary
    files are deleted and nothing is left behind. Files already present with the
    right checksum are not downloaded again. Uses ``urllib`` only (and honours the
    usual proxy environment variables).

    Parameters
    ----------
    name : str
        Registry name (or alias) of the dataset.
    dest : str or os.PathLike, optional
        Destination folder (created if needed); default the repository's ``data/``.
    base_url : str, optional
        Overrides the registry's ``url``: an http(s) base URL to which the file name is
        appended, or a template containing ``{file}``.
    timeout : float
        Socket timeout in seconds, per request.

    Returns
    -------
    pathlib.Path
        Path of the downloaded ``.arff``.

    Raises
    ------
    ValueError
        Unknown name, no URL known (the registry's ``url`` is empty and no ``base_url``),
        a non-http(s) URL, no checksum in the registry, a network error, or a checksum
        mismatch (the message names the file and both hash prefixes).
    """
    reg = _registry()
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a dataset name, got {name!r}")
    key = _canonical_name(name, reg)
    if key is None:
        raise ValueError(f"unknown dataset {name!r}; the registry knows: {', '.join(sorted(reg)) or '(none)'}")
    entry = reg[key]
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    template = base_url if base_url is not None else entry.get("url") or ""
    if not isinstance(template, str) or not template:
        raise ValueError(
            f"no download URL is known for {key!r} (its registry url is empty); pass base_url=..., or get "
            f"the files elsewhere and put them in {REPO_DATA_DIR} or in ${ENV_VAR}"
        )
    if urllib.parse.urlsplit(template).scheme.lower() not in ("http", "https"):
        raise ValueError(f"base_url must be an http(s) URL, got {template!r}")
    files = []
    for kind in ("arff", "xml"):
        fname = entry.get(kind)
        if not fname:
            continue
        if Path(fname).name != fname:
            raise ValueError(f"{REGISTRY_PATH}: [datasets.{key}] {kind} must be a bare file name, got {fname!r}")
        sha = entry.get(f"{kind}_sha256")
        if not sha:
            raise ValueError(f"{REGISTRY_PATH}: [datasets.{key}] has no {kind}_sha256: refusing an unverifiable download")
        files.append((fname, sha.lower(), entry.get(f"{kind}_size")))
    folder = REPO_DATA_DIR if dest is None else _as_path(dest, "dest")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"dest: cannot create {folder}: {exc.strerror or exc}") from None
    staged = []
    try:
        for fname, sha, size in files:
            target = folder / fname
            if target.is_file() and _sha256_file(target) == sha:
                continue
            staged.append((_fetch(_file_url(template, fname), folder, fname, sha, size, timeout), target))
        for tmp, target in staged:
            os.replace(tmp, target)
    except BaseException:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise
    return folder / entry["arff"]
