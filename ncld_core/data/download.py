"""Checksum-verified downloads of registry datasets (through pooch)."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import urllib.parse
from pathlib import Path

from .catalog import ENV_VAR, REGISTRY_PATH, REPO_DATA_DIR, canonical_name, registry, sha256_file
from .paths import as_path


def _file_url(template: str, fname: str) -> str:
    quoted = urllib.parse.quote(fname)
    if "{file}" in template:
        return template.replace("{file}", quoted)
    return template.rstrip("/") + "/" + quoted


def _retrieve(url: str, folder: Path, fname: str, sha: str, timeout) -> None:
    """``pooch.retrieve`` one file into ``folder``, its errors translated into ValueErrors naming the file."""
    import pooch  # imported here: importing ncld_core never touches the network stack
    import requests

    try:
        pooch.retrieve(url, known_hash=f"sha256:{sha}", fname=fname, path=folder,
                       downloader=pooch.HTTPDownloader(timeout=timeout), progressbar=False)
    except (OSError, requests.RequestException) as exc:  # HTTP errors, refused connections, timeouts
        raise ValueError(f"could not download {fname} from {url}: {exc}") from None
    except ValueError as exc:  # pooch's checksum mismatch (it has deleted the file), or another refusal
        got = re.search(r"does not match the known hash: .* but got (\w+)", str(exc))
        if got is None:
            raise ValueError(f"could not download {fname} from {url}: {exc}") from None
        raise ValueError(
            f"download of {fname} from {url} failed verification: expected sha256 {sha[:16]}... but got "
            f"{got.group(1)[:16]}...; the file was deleted"
        ) from None


def download(name, dest=None, *, base_url=None, timeout=30) -> Path:
    """Download a registry dataset's ARFF (and XML), verifying their sha256.

    Each file is fetched by :func:`pooch.retrieve` against the registry's sha256 into a
    temporary folder in ``dest``; the files are moved into place only once every file of
    the dataset has been verified, and on any failure the temporary folder is deleted so
    nothing is left behind. Files already present with the right checksum are not
    downloaded again. Nothing is downloaded unless this function is called.

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
    reg = registry()
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a dataset name, got {name!r}")
    key = canonical_name(name, reg)
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
        files.append((fname, sha.lower()))
    folder = REPO_DATA_DIR if dest is None else as_path(dest, "dest")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"dest: cannot create {folder}: {exc.strerror or exc}") from None
    missing = [(f, sha) for f, sha in files if not ((folder / f).is_file() and sha256_file(folder / f) == sha)]
    if missing:
        staging = Path(tempfile.mkdtemp(dir=folder, prefix=f".{key}.", suffix=".part"))
        try:
            for fname, sha in missing:
                _retrieve(_file_url(template, fname), staging, fname, sha, timeout)
            for fname, _ in missing:
                os.replace(staging / fname, folder / fname)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return folder / entry["arff"]
