"""The registry of benchmark datasets: where files are found, their checksums, listing and loading by name.

Benchmark files are never stored in the repository: they are found in the repo's
``data/`` folder (where users drop their own files) and in the folder named by the
environment variable ``NCLD_DATA_DIR`` (see :func:`data_dirs`).  ``data/registry.toml``
lists the known benchmarks with their checksums, their figures and the paper's
Table I figures; :func:`list_datasets` shows what is available, :func:`load_dataset`
loads (and verifies) one by name.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import math
import os
import re
import tomllib
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from . import parsed_cache
from .arff import header_label_count, load_arff, parse_arff
from .dataset import Dataset
from .paths import as_path, read_file

#: Environment variable naming an extra folder (or ``os.pathsep``-separated folders) of datasets.
ENV_VAR = "NCLD_DATA_DIR"
#: The repository's ``data/`` folder: the registry, and where users drop their own files.
REPO_DATA_DIR = Path(__file__).resolve().parents[2] / "data"
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
    return copy.deepcopy(_registry(None if path is None else as_path(path, "path")))


def suite(name: str, path=None) -> list[str]:
    """The datasets of the benchmark suite ``name``, in registry order: those whose ``suites`` field holds it.

    ``"benchmark"`` is what every benchmark runs in full, ``"paper"`` the paper's datasets (Table I),
    ``"paper-drift"`` its drift datasets (``data/registry.toml`` explains the field): adding a dataset to
    the benchmarks is one ``suites = ["benchmark"]`` line in its registry entry.

    Parameters
    ----------
    name : str
        A suite named in the registry.
    path : str or os.PathLike, optional
        Another registry file (as for :func:`registry`).

    Raises
    ------
    ValueError
        ``name`` is no suite of the registry (the message lists those there are), or an
        entry's ``suites`` is not a list of names.

    >>> suite("benchmark")[:3]
    ['medical', 'langlog', 'enron']
    """
    entries = registry(path)
    known = {}
    for key, entry in entries.items():
        tags = entry.get("suites", [])
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise ValueError(f"registry: [datasets.{key}] suites must be a list of names, got {tags!r}")
        for tag in tags:
            known.setdefault(tag, []).append(key)
    if not isinstance(name, str) or name not in known:
        raise ValueError(f"name: no suite {name!r} in the registry; suites: {', '.join(sorted(known)) or '(none)'}")
    return known[name]


def canonical_name(name: str, reg: dict | None = None) -> str | None:
    """The registry key of ``name``: itself, or the dataset whose paper name or alias it is; None if unknown.

    ``reg`` is a registry as :func:`registry` returns it (default the repository's).
    """
    reg = _registry() if reg is None else reg
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
        folder = as_path(d, "dirs")
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


def sha256_file(path: Path) -> str:
    """The sha256 hex digest of the file ``path`` (remembered while its size and mtime stay the same)."""
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
    return header_label_count(head)


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


#: What a dataset name may look like when a message quotes it back (anything else is not quoted).
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,79}")


def _quoted(name) -> str:
    """``name`` quoted in a message when it is a plain name; a path or anything else is not repeated."""
    if isinstance(name, str) and _PLAIN_NAME.fullmatch(name) and not _looks_like_path(name):
        return f" {name!r}"
    return ""


class DatasetFiles(NamedTuple):
    """A dataset found in the data folders: its canonical name and files (``xml`` None for MEKA)."""

    name: str
    arff: Path
    xml: Path | None


def resolve_dataset(name, *, dirs=None) -> DatasetFiles:
    """The files of a dataset listed in the data folders, found by its name or alias -- never by a path.

    The one door from a dataset name to a file for names that come from outside the program (a link,
    a configuration file, a visitor): a path, an unknown name or anything but a string is refused with
    the same message, which names no folder and no file, so it does not tell whether a path exists.

    Parameters
    ----------
    name : str
        A name as :func:`list_datasets` lists it (``"medical"``), or the paper's name or an alias
        from the registry (``"languagelog"``).
    dirs : path or list of paths, optional
        Folders to search; default :func:`data_dirs`.

    Returns
    -------
    DatasetFiles
        ``(name, arff, xml)``: the canonical name and the files :func:`load_dataset` reads.

    Raises
    ------
    ValueError
        ``unknown dataset 'x': choose one of the listed datasets (available: ...)``; for a registry
        benchmark missing from the folders, how to get it.

    >>> resolve_dataset("/etc/passwd", dirs=[])
    Traceback (most recent call last):
    ...
    ValueError: unknown dataset: choose one of the listed datasets (available: none)
    """
    folders = _resolve_dirs(dirs)
    found = _available(folders)
    available = ", ".join(sorted(found)) or "none"
    if isinstance(name, str) and name.strip() and not _looks_like_path(name):
        reg = _registry()
        key = name if name in found else canonical_name(name, reg)
        if key in found:
            return DatasetFiles(key, *found[key])
        if key is not None:
            raise ValueError(
                f"dataset{_quoted(name)} is a known benchmark but {reg[key]['arff']} is not in the data "
                f"folders: set {ENV_VAR} to the folder holding it, or put the files in the repository's "
                f"data/ folder (see download()). Available: {available}")
    raise ValueError(f"unknown dataset{_quoted(name)}: choose one of the listed datasets (available: {available})")


def load_dataset(name, *, dirs=None, verify=True, paths=True) -> Dataset:
    """Load a dataset by registry/file name, or by path.

    Parameters
    ----------
    name : str or os.PathLike
        A dataset name (``"medical"``; the paper's names such as ``"languagelog"`` are
        accepted as aliases), searched as ``NAME.arff`` in the data folders
        (:func:`resolve_dataset`); or, with ``paths``, a path to an ``.arff`` file (any
        string containing a path separator or ending in ``.arff``). A sibling ``NAME.xml``
        makes it a MULAN dataset, otherwise the MEKA ``-C n`` relation option is required.
    dirs : path or list of paths, optional
        Folders to search; default :func:`data_dirs`.
    verify : bool
        Check the sha256 of the ARFF and XML against the folder's ``SHA256SUMS`` (or,
        when that does not list the file, the registry's checksum for that name) and
        refuse a mismatch. Files with no known checksum load unverified.
    paths : bool
        Whether a path is read. False for a name that comes from outside the program (a
        run configuration, a link): then only datasets listed in the data folders load,
        and anything else is refused as :func:`resolve_dataset` refuses it.

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
    if paths and (isinstance(name, os.PathLike) or (isinstance(name, str) and _looks_like_path(name))):
        arff_path = as_path(name, "name")
        if not arff_path.is_file():
            raise ValueError(f"name: no such file: {arff_path}")
        key = arff_path.stem
        xml_path = arff_path.with_suffix(".xml")
        xml_path = xml_path if xml_path.is_file() else None
    else:
        key, arff_path, xml_path = resolve_dataset(name, dirs=dirs)
    data = read_file(arff_path, "name")
    xml_data = read_file(xml_path, "name") if xml_path is not None else None
    if verify:
        _verify_bytes(arff_path, data, key)
        if xml_path is not None:
            _verify_bytes(xml_path, xml_data, key)
    cache_key = parsed_cache.content_key(data, xml_data)
    cached = parsed_cache.fetch(cache_key, name=key, source=str(arff_path))
    if cached is not None:
        return cached
    ds = parse_arff(data, xml_data, name=key, source=str(arff_path),
                    xml_source=None if xml_path is None else str(xml_path))
    parsed_cache.store(ds, cache_key)
    return ds
