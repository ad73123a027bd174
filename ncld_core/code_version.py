"""The version of the code that computes a run: a fingerprint of ``ncld_core``'s source.

A run is a pure function of its configuration, seed and code: a stored result (a benchmark cell,
a run the dashboard keeps to replay) is reused only while the code that made it is unchanged.
Only the code counts (each file's syntax tree without docstrings), not comments or documentation,
so a docstring edit does not invalidate every stored result.

>>> fp = code_fingerprint()
>>> len(fp), fp == code_fingerprint()
(10, True)
>>> "model/elm_ncld.py" in source_files() and "cli.py" not in source_files()
True
"""

from __future__ import annotations

import ast
import functools
import hashlib
from pathlib import Path

__all__ = ["source_files", "file_digest", "combine_digests", "code_fingerprint"]

PACKAGE = Path(__file__).resolve().parent
# the command line and ``python -m`` entry: they start runs but do not change their results
_HARNESS = {"cli.py", "__main__.py"}


def source_files() -> tuple[str, ...]:
    """The ``ncld_core`` source files a run's result depends on (paths relative to the package): every
    module but the command line. A fixed list, so the fingerprint is the same in a Dask worker and in a
    process that happened to import more of the package."""
    return tuple(sorted(
        p.relative_to(PACKAGE).as_posix()
        for p in PACKAGE.rglob("*.py")
        if p.name not in _HARNESS or p.parent != PACKAGE
    ))


def file_digest(rel: str) -> str:
    """Digest of one source file's code (``rel`` relative to the package): its syntax tree without
    docstrings; ``"<missing>"`` for a file that is gone."""
    p = PACKAGE / rel
    try:
        st = p.stat()
    except OSError:
        return "<missing>"
    return _code_digest(str(p), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=512)
def _code_digest(path: str, mtime_ns: int, size: int) -> str:  # keyed by mtime and size: re-read on change
    src = Path(path).read_bytes()
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return "bytes:" + hashlib.sha1(src).hexdigest()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return hashlib.sha1(ast.dump(tree).encode()).hexdigest()


def combine_digests(digests: dict) -> str:
    """One short fingerprint of ``{relative path: file digest}``."""
    h = hashlib.sha1()
    for rel in sorted(digests):
        h.update(f"{rel}\0{digests[rel]}\n".encode())
    return h.hexdigest()[:10]


def code_fingerprint(files=None) -> str:
    """The fingerprint of ``files`` (default: :func:`source_files`) as they are now on disk."""
    files = source_files() if files is None else files
    return combine_digests({rel: file_digest(rel) for rel in files})
