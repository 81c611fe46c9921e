"""The model-kind fixtures are files optimum-rbln 0.12.0's own classes write (tools/make_kind_fixtures.py).

The check that runs the package needs a Python where optimum-rbln 0.12.0 imports (RBLN_STUDIO_OPTIMUM_PYTHON; the
tool's docstring says how to make one); CI has none, so there only the listing is checked.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path
from types import ModuleType

import pytest
from conftest import REPO
from kind_fixtures import EXPECTED_KINDS, KINDS

GENERATOR = REPO / "tools" / "make_kind_fixtures.py"
WRITTEN_BY = "# Written by tools/make_kind_fixtures.py"
NOT_REGENERATED = {"qwen3_flash_auto"}  # the tool's docstring says why


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_kind_fixtures", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # only the standard library at import: torch and optimum load in its child
    return module


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_every_fixture_of_a_kind_is_written_by_the_generator() -> None:
    fixtures = _generator().FIXTURES
    assert set(EXPECTED_KINDS) - NOT_REGENERATED <= set(fixtures)
    for name in fixtures:
        manifest = (KINDS / name / "MANIFEST.txt").read_text()
        assert manifest.splitlines()[1].startswith(WRITTEN_BY), name
        listed = {line.split()[0] for line in manifest.splitlines() if line and not line.startswith("#")}
        kept = {rel for rel in _tree(KINDS / name) if rel != "MANIFEST.txt"}
        assert kept <= listed and kept & {"rbln_config.json", "model_index.json"}, name


def test_the_committed_fixtures_are_what_optimum_rbln_writes(tmp_path: Path) -> None:
    python = os.environ.get("RBLN_STUDIO_OPTIMUM_PYTHON")
    if not python:
        pytest.skip("set RBLN_STUDIO_OPTIMUM_PYTHON to a Python that imports optimum.rbln 0.12.0 to run it here")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}  # the source models are built here, never downloaded
    done = subprocess.run(
        [python, str(GENERATOR), str(tmp_path)], capture_output=True, text=True, env=env, timeout=1800
    )
    assert done.returncode == 0, done.stderr[-3000:]
    for name in _generator().FIXTURES:
        assert _tree(tmp_path / name) == _tree(KINDS / name), f"{name}: rerun tools/make_kind_fixtures.py"
