"""Qwen2-VL and Qwen2.5-VL: the language model at the top level and its vision encoder in visual/, both checked."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from optimum_loader import LoaderError, load_model
from vl_fixtures import VL_CLASSES, qwen_vl

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.mark.parametrize("family", sorted(VL_CLASSES))
def test_whole_vl_artifact_is_ok_and_lists_its_visual_part(run_cli: Run, tmp_path: Path, family: str) -> None:
    folder = qwen_vl(family, tmp_path / family)
    load_model(folder)  # the package's loading rules take it
    data = json.loads(run_cli("inspect", folder, "--json").stdout)
    assert data["status"] == "ok", data["problems"]
    assert "visual" in [p["name"] for p in data["parts"]]


@pytest.mark.parametrize("family", sorted(VL_CLASSES))
@pytest.mark.parametrize("damage", ["folder", "graph"])
def test_vl_without_its_vision_encoder_is_invalid(run_cli: Run, tmp_path: Path, family: str, damage: str) -> None:
    folder = qwen_vl(family, tmp_path / family)
    if damage == "folder":
        shutil.rmtree(folder / "visual")
    else:
        (folder / "visual" / "compiled_model.rbln").unlink()
    with pytest.raises(LoaderError):
        load_model(folder)  # what vllm-rbln would hit
    inspected = run_cli("inspect", folder, "--json")
    data = json.loads(inspected.stdout)
    assert data["status"] == "invalid" and inspected.returncode == 3
    assert any("visual/" in p["message"] for p in data["problems"]), data["problems"]
    scanned = run_cli("scan", tmp_path, "--json", "--no-cache")
    [row] = json.loads(scanned.stdout)
    assert row["status"] == "invalid" and scanned.returncode == 3
