"""CI checks what STYLE asks: ruff, ruff format, plain mypy from the root and the import-linter layer contracts, each of which
fails the run on a violation (proved below on a temporary copy with a deliberate one)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PACKAGE_DIR, REPO

BIN = Path(sys.executable).parent
PACKAGE = "rbln_artifact_studio"


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=env, timeout=600)


def run_mypy(src: Path, cache: Path) -> tuple[int, str]:
    """mypy with the project's settings (pyproject.toml) on the package under the source root `src` (app/ or a copy);
    paths in its report read app/rbln_artifact_studio/..."""
    args = [str(BIN / "mypy"), "--config-file", str(REPO / "pyproject.toml"), "--cache-dir", str(cache)]
    out = _run([*args, str(Path(src.name) / PACKAGE)], cwd=src.parent)
    return out.returncode, out.stdout + out.stderr


def run_contracts(src: Path) -> tuple[int, str]:
    """import-linter's contracts from pyproject.toml, checked against the package under the source root `src`."""
    env = {**os.environ, "PYTHONPATH": str(src)}  # ahead of the editable install's path entry
    out = _run([str(BIN / "lint-imports"), "--no-cache", str(REPO / "pyproject.toml")], cwd=REPO, env=env)
    return out.returncode, out.stdout + out.stderr


def test_ruff_check_is_clean() -> None:
    out = _run([str(BIN / "ruff"), "check", "--no-cache", "."], cwd=REPO)
    assert out.returncode == 0, out.stdout + out.stderr


def test_ruff_format_is_clean() -> None:
    out = _run([str(BIN / "ruff"), "format", "--check", "--no-cache", "."], cwd=REPO)
    assert out.returncode == 0, out.stdout + out.stderr + "\nrun: .venv/bin/ruff format ."


def test_plain_mypy_is_clean() -> None:
    """`mypy` from the root with nothing but pyproject.toml: what a maintainer and an IDE run."""
    out = _run([str(BIN / "mypy")], cwd=REPO)
    assert out.returncode == 0, out.stdout + out.stderr


def test_import_contracts_are_kept() -> None:
    code, report = run_contracts(REPO / "app")
    assert code == 0, report
    assert "0 broken" in report


def test_type_ignores_in_app_give_their_reason() -> None:
    """A `type: ignore` is for what a binding forces; each names its code and says why on the same line."""
    bare = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if "type: ignore" in line and not re.search(r"type: ignore\[[a-z-, ]+\]\s+#\s*\S", line):
                bare.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert bare == []


@pytest.fixture
def app_copy(tmp_path: Path) -> Path:
    """A copy of the source root; tests break its package and expect the checks to notice."""
    copy = tmp_path / "app"
    shutil.copytree(REPO / "app", copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_ruff_fails_on_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text('"""Module."""\n\nimport os\n')  # unused import (F401)
    settings = ["--config", str(REPO / "pyproject.toml"), "--no-cache"]
    out = _run([str(BIN / "ruff"), "check", *settings, str(bad)], cwd=tmp_path)
    assert out.returncode == 1 and "F401" in out.stdout
    bad.write_text('"""Module."""\n\nx = {  "a":1 }\n')
    out = _run([str(BIN / "ruff"), "format", "--check", *settings, str(bad)], cwd=tmp_path)
    assert out.returncode == 1 and "bad.py" in out.stdout


def test_mypy_fails_on_a_violation(app_copy: Path, tmp_path: Path) -> None:
    errors = app_copy / PACKAGE / "core" / "errors.py"
    errors.write_text(errors.read_text() + "\n\ndef _broken() -> int:\n    return 'not an int'\n")
    code, report = run_mypy(app_copy, tmp_path / "cache")
    assert code == 1, report
    assert "app/rbln_artifact_studio/core/errors.py" in report and "[return-value]" in report


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("core/errors.py", "import PySide6.QtCore", "import no Qt"),
        ("objectstore/store.py", "import PySide6.QtCore", "import no Qt"),
        ("core/errors.py", "import rbln_artifact_studio.backends.registry", "sit above the core"),
        ("backends/base.py", "import rbln_artifact_studio.gui.models.jobs", "sit above the core"),
        ("core/model/npu.py", "import rbln_artifact_studio.core.planning.planner", "Core parts"),
    ],
    ids=[
        "core-imports-qt",
        "objectstore-imports-qt",
        "core-imports-backends",
        "backends-import-gui",
        "model-imports-planning",
    ],
)
def test_contracts_fail_on_a_violation(app_copy: Path, tmp_path: Path, module: str, line: str, contract: str) -> None:
    target = app_copy / PACKAGE / module
    target.write_text(target.read_text() + f"\n{line}  # noqa: E402\n")
    code, report = run_contracts(app_copy)
    assert code == 1, report
    assert contract in report.partition("Broken contracts")[2], report
