"""The package's import rules: core stays Qt-free (by source and by what importing it loads); only the entry imports
the main window."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from conftest import PACKAGE_DIR, REPO, cli_env

QT_MODULES = ("PySide6", "PyQt5", "PyQt6", "shiboken6", "superqt", "qtpy", "pytestqt")


def test_core_sources_do_not_import_qt() -> None:
    offenders = []
    for path in (PACKAGE_DIR / "core").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] in QT_MODULES]
    assert offenders == []


def test_importing_core_and_cli_loads_no_qt() -> None:
    core = PACKAGE_DIR / "core"
    modules = sorted(".".join(p.relative_to(core).with_suffix("").parts) for p in core.rglob("*.py"))
    modules = [m.removesuffix(".__init__") for m in modules if m != "__init__"]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module('rbln_artifact_studio.core.' + m)\n"
        "import rbln_artifact_studio.cli.main, rbln_artifact_studio.backends.registry\n"
        f"print([m for m in sys.modules if m.split('.')[0] in {QT_MODULES!r}])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(), check=True)
    assert out.stdout.strip() == "[]"


def test_every_module_has_a_docstring() -> None:
    missing = [
        str(p.relative_to(REPO))
        for p in (PACKAGE_DIR).rglob("*.py")
        if ast.get_docstring(ast.parse(p.read_text())) is None
    ]
    assert missing == []


MAIN_WINDOW = "rbln_artifact_studio.gui.window.main_window"
MAY_IMPORT_THE_WINDOW = {"gui/main.py", "gui/start.py", "gui/window/main_window.py"}  # the entry builds it; and itself


def _imported(path: Path) -> set[str]:
    """Every module path names in an import, type-checking ones too ("from x import y" also names x.y)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return names


def test_only_the_entry_imports_the_main_window() -> None:
    """The window's helpers are given the few objects they use, so each can be built in a test without a window
    and none reaches into the others through it (issue 31)."""
    gui = PACKAGE_DIR / "gui"
    offenders = sorted(
        rel
        for path in gui.rglob("*.py")
        if (rel := path.relative_to(PACKAGE_DIR).as_posix()) not in MAY_IMPORT_THE_WINDOW
        and MAIN_WINDOW in _imported(path)
    )
    assert offenders == []


KIND_TYPES = ("LocalFolder", "ServerFolder", "BucketPrefix")


def test_kinds_of_place_are_told_apart_only_in_places() -> None:
    """Outside places/ (and core/location.py, where the kinds are defined) a kind's capabilities or a dispatch
    helper is asked, never isinstance or a class's name: a new kind of place then changes no caller."""
    offenders = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        relative = path.relative_to(PACKAGE_DIR).as_posix()
        if relative.startswith("places/") or relative == "core/location.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance":
                told = (
                    {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)} if len(node.args) > 1 else set()
                )
                if told & set(KIND_TYPES):
                    offenders.append(f"{relative}:{node.lineno}")
            if isinstance(node, ast.Compare):  # type(x).__name__ == "SomeClass": a kind told by its name
                sides = [node.left, *node.comparators]
                named = any(isinstance(n, ast.Attribute) and n.attr == "__name__" for n in sides)
                if named and any(isinstance(n, ast.Constant) and isinstance(n.value, str) for n in sides):
                    offenders.append(f"{relative}:{node.lineno} (a class's name)")
    assert offenders == []


MOST_DEFERRED_IMPORTS = 80  # issue 44: the start-up fast paths and a few heavy optional libraries, each saying why
DEFERRED = "# deferred:"


def _function_imports(tree: ast.Module) -> list[tuple[ast.stmt, ast.stmt]]:
    """Each import inside a function body, with the first import of the run of consecutive imports it stands in."""
    found: dict[int, tuple[ast.stmt, ast.stmt]] = {}
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for holder in ast.walk(function):
            for field in ("body", "orelse", "finalbody"):
                body = getattr(holder, field, None)
                if not isinstance(body, list):
                    continue
                first: ast.stmt | None = None
                for statement in body:
                    if not isinstance(statement, ast.Import | ast.ImportFrom):
                        first = None
                        continue
                    first = first or statement
                    found.setdefault(statement.lineno, (statement, first))
    return list(found.values())


def test_imports_inside_functions_are_few_and_say_why() -> None:
    """The package imports at module level; an import deferred into a function (a start-up fast path, a heavy library
    one feature uses) says why on its line, or on the line above the run of imports it starts."""
    count, silent = 0, []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        lines = path.read_text().splitlines()
        for statement, first in _function_imports(ast.parse(path.read_text())):
            count += 1
            own = DEFERRED in lines[statement.lineno - 1]
            above = first.lineno >= 2 and lines[first.lineno - 2].strip().startswith(DEFERRED)
            if not (own or above):
                silent.append(f"{path.relative_to(PACKAGE_DIR).as_posix()}:{statement.lineno}")
    assert silent == [], f"imports inside functions without '{DEFERRED} REASON'"
    assert count <= MOST_DEFERRED_IMPORTS


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports_of_ours(path: Path, modules: set[str]) -> set[str]:
    """The package's modules that `path` imports anywhere (functions and type-checking blocks too)."""
    here = _module_name(path)
    package = here if path.name == "__init__.py" else here.rsplit(".", 1)[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                )
            targets |= {base} | {f"{base}.{a.name}" for a in node.names}
    return {t for t in targets if t in modules and t != here and not t.endswith("rbln_artifact_studio")}


def test_no_import_circles() -> None:
    """No two modules import each other, directly or around a loop, not even for type hints: a shared piece moves
    down into a lower module (issue 44)."""
    paths = {_module_name(p): p for p in PACKAGE_DIR.rglob("*.py")}
    graph = {name: _imports_of_ours(path, set(paths)) for name, path in paths.items()}
    # Tarjan's strongly connected components, iteratively: every component of more than one module is a circle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    assert circles == []
