"""The layout's rules (docs/architecture.md): no import circles, layers in order, public names only outside."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "ncld_core"

#: Lower layers never import higher ones (the top level's helpers ``_validation``, ``_io`` and
#: ``sklearn_compat`` sit below everything).
LAYERS = {
    "ncld_core._validation": 0, "ncld_core._io": 0, "ncld_core.sklearn_compat": 0,
    "ncld_core.data": 1, "ncld_core.stream": 2, "ncld_core.model": 3, "ncld_core.eval": 4,
    "ncld_core.river_compat": 4, "ncld_core.config": 5, "ncld_core.checkpoint": 5, "ncld_core.cli": 6,
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Every ncld_core module ``path`` imports, at top level or inside functions."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("ncld_core"):
                found.add(target)
                found.update(f"{target}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("ncld_core"))
    modules = {_module_name(p) for p in PACKAGE.rglob("*.py")}
    return {m for m in found if m in modules and m != name}


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(p) for p in PACKAGE.rglob("*.py")}


def _layer(module: str):
    best = None
    for prefix, layer in LAYERS.items():
        if module == prefix or module.startswith(prefix + "."):
            best = layer
    return best


def test_no_import_circles():
    graph = _graph()
    # Tarjan-free check: a module must not reach itself (the graph is small).
    for start in graph:
        if start.endswith("__init__") or start in ("ncld_core", "ncld_core.__main__"):
            continue
        seen, todo = set(), [m for m in graph[start] if not _is_package(m)]
        while todo:
            m = todo.pop()
            if m == start:
                pytest.fail(f"{start} imports itself through a circle")
            if m not in seen:
                seen.add(m)
                todo.extend(x for x in graph.get(m, ()) if not _is_package(x))


def _is_package(module: str) -> bool:
    return (ROOT / module.replace(".", "/") / "__init__.py").exists()


def test_layers_import_downwards_only():
    bad = []
    for module, imports in _graph().items():
        here = _layer(module)
        if here is None:
            continue
        for target in imports:
            there = _layer(target)
            if there is not None and there > here:
                bad.append(f"{module} -> {target}")
    assert not bad, "upward imports: " + ", ".join(sorted(bad))


def test_the_dashboard_uses_public_names_only():
    bad = []
    for path in (ROOT / "dashboard").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ncld_core"):
                if any(part.startswith("_") for part in node.module.split(".")):
                    bad.append(f"{path.name}: {node.module}")
                bad += [f"{path.name}: {node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    assert not bad, bad


def test_the_checks_can_fail(tmp_path):
    """The layer check flags an upward import (guards the test itself)."""
    assert _layer("ncld_core.model.elm_ncld") < _layer("ncld_core.eval.runner")
    assert _layer("ncld_core.data.arff") < _layer("ncld_core.stream.builder")
