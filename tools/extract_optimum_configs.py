"""Write resources/optimum-rbln-configs.json: the keys each optimum-rbln config class accepts, read from its source.

Usage: python tools/extract_optimum_configs.py SRC_DIR > resources/optimum-rbln-configs.json
SRC_DIR is an unpacked optimum-rbln wheel (pip download --no-deps optimum-rbln==0.12.0; unzip). The source is read
with ast, never imported (it needs torch). tests/test_optimum_loader.py checks the table against a wheel when one
is given in RBLN_STUDIO_OPTIMUM_WHEEL_SRC.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import Any


def _string_list(node: ast.expr) -> list[str] | None:
    if isinstance(node, (ast.List, ast.Tuple)) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts
    ):
        return [e.value for e in node.elts]  # type: ignore[union-attr]
    return None


def _deprecated_names(func: ast.FunctionDef) -> list[str]:
    names = []
    for deco in func.decorator_list:
        if isinstance(deco, ast.Call) and getattr(deco.func, "id", None) == "deprecate_kwarg":
            for kw in deco.keywords:
                if kw.arg == "old_name" and isinstance(kw.value, ast.Constant):
                    names.append(kw.value.value)
    return names


def config_classes(src: Path) -> dict[str, dict[str, Any]]:
    """Every RBLN*Config class: its bases, own __init__ keys, whether it forwards **kwargs, its submodules."""
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(src.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if not (isinstance(node, ast.ClassDef) and node.name.startswith("RBLN") and node.name.endswith("Config")):
                continue
            entry: dict[str, Any] = {"bases": [getattr(b, "id", getattr(b, "attr", "")) for b in node.bases]}
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    args = item.args
                    params = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs] if a.arg != "self"]
                    entry["keys"] = sorted({*params, *_deprecated_names(item)})
                    entry["forwards"] = args.kwarg is not None
                if isinstance(item, (ast.Assign, ast.AnnAssign)):
                    targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                    if any(getattr(t, "id", None) == "submodules" for t in targets) and item.value is not None:
                        listed = _string_list(item.value)
                        if listed is not None:
                            entry["submodules"] = listed
            found[node.name] = entry
    return found


def main() -> None:
    src = Path(sys.argv[1])
    version_file = next(src.rglob("optimum/rbln/__version__.py"))
    version = version_file.read_text().split("version = '")[1].split("'")[0]
    table = {"optimum_rbln_version": version, "classes": config_classes(src / "optimum" / "rbln")}
    json.dump(table, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
