"""Checksum-verified downloads of registry datasets."""

from __future__ import annotations

import hashlib
import http.client
import os
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path

from .arff import _as_path
from .catalog import (
    ENV_VAR,
    REGISTRY_PATH,
    REPO_DATA_DIR,
    _canonical_name,
    _registry,
    _sha256_file,
)


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
