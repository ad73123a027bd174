"""The layout's rules (docs/architecture.md): layers in order, and in every package (``ncld_core``,
``dashboard``, ``benchmarks``) no import circles and no private name crossing a module.

The rules are read from the source with :mod:`ast` (nothing is imported), by a small checker
(:func:`project_modules`, :func:`imports_of`, :func:`import_circles`, :func:`private_crossings`) that
``test_the_checker_*`` runs on synthetic module trees, so the rules are seen to fail when broken.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ncld_core", "dashboard", "benchmarks")

#: Lower layers never import higher ones (the top level's helpers ``validation``, ``files`` and
#: ``sklearn_compat`` sit below everything).
LAYERS = {
    "ncld_core.validation": 0, "ncld_core.files": 0, "ncld_core.sklearn_compat": 0, "ncld_core.threads": 0,
    "ncld_core.limits": 0, "ncld_core.code_version": 0, "ncld_core.saved_state": 0,
    "ncld_core.data": 1, "ncld_core.stream": 2, "ncld_core.model": 3, "ncld_core.eval": 4,
    "ncld_core.river_compat": 4, "ncld_core.config": 5, "ncld_core.checkpoint": 5, "ncld_core.cli": 6,
}

# Known offenders that other work is removing. Each entry is a temporary exception, not a rule: the
# tests below fail when an entry no longer occurs, so the lists only shrink; the lead empties them.
#: Import circles, as the set of modules in each.
KNOWN_CIRCLES: set[frozenset[str]] = set()
#: Private names taken across modules, as ``"importer -> module.name"``.
KNOWN_PRIVATE_IMPORTS: set[str] = set()


# --- the checker --------------------------------------------------------------------------------

def project_modules(root: Path, packages=PACKAGES) -> dict[str, Path]:
    """Every module of ``packages`` under ``root``, by dotted name (a package by its own name)."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


@dataclass(frozen=True)
class NameUse:
    """``module.name`` used by ``importer`` (``name`` is None for the module itself), at ``line``."""

    importer: str
    module: str
    name: str | None
    line: int


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> list[NameUse]:
    """Every use of a project module by ``module``: its imports (top level or inside functions) and
    the attributes it reads from a module it imported (``noise._spawn``).

    ``from package import sub`` is a use of the module ``package.sub``; ``from module import name`` a
    use of ``module.name``.
    """
    is_package = path.name == "__init__.py"
    here = module if is_package else module.rpartition(".")[0]
    uses: list[NameUse] = []
    bound: dict[str, str] = {}  # local name -> the project module it is bound to

    def known(name: str) -> bool:
        return any(_inside(name, m) or _inside(m, name) for m in modules)

    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")[: len(here.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if not known(source):
                continue
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                if submodule in modules:
                    uses.append(NameUse(module, submodule, None, node.lineno))
                    bound[alias.asname or alias.name] = submodule
                else:
                    uses.append(NameUse(module, source, alias.name, node.lineno))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if not known(alias.name):
                    continue
                uses.append(NameUse(module, alias.name, None, node.lineno))
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    bound[top] = top
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not isinstance(node.ctx, ast.Load):
            continue
        chain, value = [node.attr], node.value
        while isinstance(value, ast.Attribute):
            chain.append(value.attr)
            value = value.value
        if not isinstance(value, ast.Name) or value.id not in bound:
            continue
        target = bound[value.id]
        for attr in reversed(chain):  # walk down the dotted chain while it names modules
            if f"{target}.{attr}" in modules:
                target = f"{target}.{attr}"
                continue
            if target in modules:
                uses.append(NameUse(module, target, attr, node.lineno))
            break
    return uses


def private_crossings(modules: dict[str, Path]) -> list[str]:
    """Every private name one module takes from another, as ``"importer -> module.name (line)"``.

    A private name is ``_x`` (not ``__x__``). Taken from another module it is a crossing, whether
    imported (``from m import _x``) or read off the module (``m._x``). A private *module* (``pkg._m``)
    belongs to its package: modules inside ``pkg`` may import it and its public names, no one else.
    """
    bad = set()
    for importer, path in modules.items():
        for use in imports_of(importer, path, modules):
            full = use.module if use.name is None else f"{use.module}.{use.name}"
            parts = full.split(".")
            for i, part in enumerate(parts):
                if not _is_private(part):
                    continue
                owner = ".".join(parts[:i])
                is_module_part = ".".join(parts[: i + 1]) in modules
                if is_module_part and _inside(importer, owner):
                    continue  # a package's own private module, used inside the package
                if not is_module_part and use.module == importer:
                    continue
                bad.add(f"{importer} -> {full}")
                break
    return sorted(bad)


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Which project modules each module imports (a name from a module counts as the module)."""
    return {
        m: {use.module for use in imports_of(m, path, modules) if use.module in modules and use.module != m}
        for m, path in modules.items()
    }


def import_circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The import circles: the graph's strongly connected components of more than one module
    (Tarjan's algorithm; a package's ``__init__`` counts as a module)."""
    index, low, on_stack, stack, circles = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def _layer(module: str):
    best = None
    for prefix, layer in LAYERS.items():
        if _inside(module, prefix):
            best = layer
    return best


# --- the rules, on the repository ----------------------------------------------------------------

MODULES = project_modules(ROOT)


def _show(circle) -> str:
    return " <-> ".join(sorted(circle))


def test_no_import_circles_in_any_package():
    circles = [c for c in import_circles(import_graph(MODULES)) if c not in KNOWN_CIRCLES]
    assert not circles, "import circles: " + "; ".join(_show(c) for c in circles)


def test_no_private_name_crosses_a_module():
    bad = [b for b in private_crossings(MODULES) if b not in KNOWN_PRIVATE_IMPORTS]
    assert not bad, "private names used across modules:\n" + "\n".join(bad)


def test_the_known_offenders_still_exist_and_are_outside_the_core():
    """An allow-list entry that no longer occurs must go; the core has none."""
    circles = set(import_circles(import_graph(MODULES)))
    gone = [_show(c) for c in KNOWN_CIRCLES if c not in circles]
    gone += sorted(KNOWN_PRIVATE_IMPORTS - set(private_crossings(MODULES)))
    assert not gone, "remove from the known offenders: " + "; ".join(gone)
    assert not any(_inside(m, "ncld_core") for c in KNOWN_CIRCLES for m in c)
    assert not any(b.startswith("ncld_core") for b in KNOWN_PRIVATE_IMPORTS)


def test_layers_import_downwards_only():
    bad = []
    for module, imports in import_graph(MODULES).items():
        here = _layer(module)
        if here is None:
            continue
        for target in imports:
            there = _layer(target)
            if there is not None and there > here:
                bad.append(f"{module} -> {target}")
    assert not bad, "upward imports: " + ", ".join(sorted(bad))


def test_the_core_imports_neither_the_dashboard_nor_the_benchmarks():
    bad = [
        f"{m} -> {t}" for m, targets in import_graph(MODULES).items() if _inside(m, "ncld_core")
        for t in targets if not _inside(t, "ncld_core")
    ]
    assert not bad, bad


# --- the checker, on synthetic trees (the rules can fail) ----------------------------------------

def _tree(tmp_path: Path, files: dict[str, str]) -> dict[str, Path]:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return project_modules(tmp_path, ("pkg",))


def test_the_checker_flags_private_names_across_modules(tmp_path):
    modules = _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "def _helper(): pass\ndef public(): pass\n_CONSTANT = 1\n",
        "pkg/b.py": "from pkg.a import _helper, public\n",
        "pkg/c.py": "from .a import _CONSTANT as C\n",
        "pkg/d.py": "import pkg.a as a\n\ndef f():\n    return a._helper()\n",
        "pkg/e.py": "import pkg.a\nx = pkg.a._CONSTANT\n",
        "pkg/f.py": "from pkg import a\ny = a.public() + a.__name__\n",  # public and dunder: fine
        "pkg/g.py": "def _own(): pass\nz = _own()\n",  # its own private name: fine
        "pkg/sub/__init__.py": "",
        "pkg/sub/_private.py": "def tool(): pass\n",
        "pkg/sub/user.py": "from ._private import tool\nfrom pkg.sub import _private\n",  # inside sub: fine
        "pkg/outside.py": "from pkg.sub._private import tool\n",
        "pkg/outside2.py": "from pkg.sub import _private\n",
        "pkg/lazy.py": "def f():\n    from pkg.a import _helper\n    return _helper\n",
    })
    assert private_crossings(modules) == [
        "pkg.b -> pkg.a._helper",
        "pkg.c -> pkg.a._CONSTANT",
        "pkg.d -> pkg.a._helper",
        "pkg.e -> pkg.a._CONSTANT",
        "pkg.lazy -> pkg.a._helper",
        "pkg.outside -> pkg.sub._private.tool",
        "pkg.outside2 -> pkg.sub._private",
    ]


def test_the_checker_finds_import_circles(tmp_path):
    modules = _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg.b import x\n",
        "pkg/b.py": "x = 1\n\ndef f():\n    from . import c\n",  # a lazy import still counts
        "pkg/c.py": "import pkg.a\n",
        "pkg/d.py": "from pkg import a\n",  # uses the circle, is not in it
        "pkg/e.py": "from pkg.d import *\n",
    })
    graph = import_graph(modules)
    assert graph["pkg.d"] == {"pkg.a"} and graph["pkg.b"] == {"pkg.c"}
    assert import_circles(graph) == [frozenset({"pkg.a", "pkg.b", "pkg.c"})]
    del graph["pkg.c"]
    assert import_circles(graph) == []


def test_the_layer_check_orders_the_core():
    assert _layer("ncld_core.model.elm_ncld") < _layer("ncld_core.eval.runner")
    assert _layer("ncld_core.data.arff") < _layer("ncld_core.stream.builder")
    assert _layer("ncld_core.validation") < _layer("ncld_core.data.arff")


# --- the library is the method: no process or scheduler machinery ------------------------------------

#: Modules whose only use is starting, signalling, limiting or waiting on processes or scheduling work: the
#: serving layer's (``dashboard/serving/``), never the library's.
PROCESS_MODULES = ("multiprocessing", "subprocess", "signal", "resource", "select", "selectors", "sched",
                   "asyncio", "concurrent", "_thread")
#: What the library may take of ``threading``: locks and per-thread state (a model shared by a server's
#: threads, ``ncld_core.threads``' BLAS budgets), never a thread, timer or event of its own.
THREADING_ALLOWED = frozenset({"Lock", "RLock", "local"})
#: ``os`` functions that make, end, signal or reprioritise processes.
OS_PROCESS_CALLS = frozenset({
    "fork", "forkpty", "register_at_fork", "setsid", "setpgid", "setpgrp", "nice", "setpriority", "getpriority",
    "kill", "killpg", "pidfd_open", "waitpid", "wait", "wait3", "wait4", "system", "popen", "posix_spawn",
    "posix_spawnp", "sched_setaffinity", "sched_setscheduler", "sched_setparam", "setrlimit",
    "spawnl", "spawnle", "spawnlp", "spawnv", "spawnve", "spawnvp", "execv", "execve", "execvp",
})
#: Words only scheduler code has (Linux's autogroup niceness, a fork server).
SCHEDULER_WORDS = ("autogroup", "forkserver", "fork_server")


def process_machinery(modules: dict[str, Path]) -> list[str]:
    """Every use of process or scheduler machinery in ``modules``, as ``"module: what (line N)"``: an import of
    a :data:`PROCESS_MODULES` module, a name of ``threading`` outside :data:`THREADING_ALLOWED`, an ``os``
    call of :data:`OS_PROCESS_CALLS`, or a word of :data:`SCHEDULER_WORDS` anywhere in the source."""
    bad = []
    for module, path in modules.items():
        text = path.read_text()
        tree = ast.parse(text, filename=str(path))
        bound = {}  # local name -> "threading" or "os"
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    top = alias.name.split(".")[0]
                    if top in PROCESS_MODULES:
                        bad.append(f"{module}: import {alias.name} (line {node.lineno})")
                    elif alias.name in ("threading", "os"):
                        bound[alias.asname or alias.name] = alias.name
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                top = node.module.split(".")[0]
                names = [a.name for a in node.names]
                if top in PROCESS_MODULES:
                    bad.append(f"{module}: from {node.module} import {', '.join(names)} (line {node.lineno})")
                elif node.module == "threading":
                    bad += [f"{module}: threading.{n} (line {node.lineno})" for n in names
                            if n not in THREADING_ALLOWED]
                elif node.module == "os":
                    bad += [f"{module}: os.{n} (line {node.lineno})" for n in names if n in OS_PROCESS_CALLS]
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
                owner = bound[node.value.id]
                if (owner == "threading" and node.attr not in THREADING_ALLOWED) or \
                        (owner == "os" and node.attr in OS_PROCESS_CALLS):
                    bad.append(f"{module}: {owner}.{node.attr} (line {node.lineno})")
        for word in SCHEDULER_WORDS:
            if word in text.lower():
                bad.append(f"{module}: mentions {word!r}")
    return sorted(set(bad))


def test_the_library_holds_no_process_or_scheduler_machinery():
    """Process runs, the fork server, niceness and autogroups, the run queue and upload parses under limits are
    the server's (``dashboard/serving/``): ``ncld_core`` computes in the caller's process."""
    core = {m: p for m, p in MODULES.items() if _inside(m, "ncld_core")}
    assert not process_machinery(core), "\n".join(process_machinery(core))


def test_the_checker_finds_process_machinery(tmp_path):
    modules = _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/mp.py": "import multiprocessing as mp\n",
        "pkg/sub.py": "def f():\n    from subprocess import run\n",
        "pkg/res.py": "import resource\n",
        "pkg/fut.py": "from concurrent.futures import ThreadPoolExecutor\n",
        "pkg/thread.py": "import threading\nt = threading.Thread(target=print)\n",
        "pkg/event.py": "from threading import Event, Lock\n",
        "pkg/nice.py": "import os\nos.nice(10)\nos.setsid()\n",
        "pkg/group.py": "AUTOGROUP = '/proc/self/autogroup'\n",
        "pkg/fine.py": "import os\nimport threading\nfrom threading import RLock\n"
                       "_lock = threading.Lock()\n_scopes = threading.local()\nos.path.join('a')\n",
    })
    assert process_machinery(modules) == [
        "pkg.event: threading.Event (line 1)",
        "pkg.fut: from concurrent.futures import ThreadPoolExecutor (line 1)",
        "pkg.group: mentions 'autogroup'",
        "pkg.mp: import multiprocessing (line 1)",
        "pkg.nice: os.nice (line 2)",
        "pkg.nice: os.setsid (line 3)",
        "pkg.res: import resource (line 1)",
        "pkg.sub: from subprocess import run (line 2)",
        "pkg.thread: threading.Thread (line 2)",
    ]


def test_the_rule_flags_the_library_as_it_was_before_the_move():
    """The modules that moved to ``dashboard/serving/``, as they were in ``ncld_core``, break the rule."""
    moved = {f"ncld_core.{name}": ROOT / "dashboard" / "serving" / f"{name}.py"
             for name in ("fork_server", "priority", "chunk_process", "bounded_parse", "dask_run")}
    found = {line.split(":")[0] for line in process_machinery(moved)}
    assert found == set(moved), set(moved) - found


# --- the library is the method: no dashboard dependency ----------------------------------------------

#: What only the dashboard needs (the ``app`` extra); the library neither declares nor imports them.
APP_ONLY = ("streamlit", "plotly")


def test_the_library_declares_no_dashboard_dependency():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = {dep.split(">")[0].split("=")[0].split("[")[0].strip().lower() for dep in project["dependencies"]}
    assert names.isdisjoint(APP_ONLY), names & set(APP_ONLY)
    app = {dep.split(">")[0].strip().lower() for dep in project["optional-dependencies"]["app"]}
    assert set(APP_ONLY) <= app  # make demo installs them through the extra


def test_importing_every_core_module_loads_no_dashboard_package():
    import subprocess
    import sys

    code = ("import importlib, pkgutil, sys, ncld_core\n"
            "for m in pkgutil.walk_packages(ncld_core.__path__, 'ncld_core.'):\n"
            "    if not m.name.endswith('__main__'):  # running the command line is not importing it\n"
            "        importlib.import_module(m.name)\n"
            f"print(sorted(p for p in {APP_ONLY!r} if p in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.slow
def test_the_library_installs_and_imports_without_the_app(tmp_path):
    """``pip install .`` in a fresh venv (no extra): ``import ncld_core`` and the command line work, and
    neither streamlit nor plotly is installed."""
    import subprocess
    import sys
    import venv

    import shutil

    # a copy of what the package is made of: pip builds in the source folder (build/, *.egg-info), not in ours
    source = tmp_path / "src"
    shutil.copytree(ROOT / "ncld_core", source / "ncld_core", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    venv.EnvBuilder(with_pip=True).create(tmp_path / "v")
    py = str(tmp_path / "v" / "bin" / "python")
    install = subprocess.run([py, "-m", "pip", "install", "--quiet", "--no-compile", str(source)],
                             capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert install.returncode == 0, install.stderr[-3000:]
    check = subprocess.run([py, "-c", "import importlib.util as u, ncld_core; "
                            f"print([p for p in {APP_ONLY!r} if u.find_spec(p)])"],
                           capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert check.returncode == 0, check.stderr[-2000:]
    assert check.stdout.strip() == "[]"
    cli = subprocess.run([py, "-m", "ncld_core", "--help"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert cli.returncode == 0 and "run" in cli.stdout, cli.stderr[-2000:]
