"""Vision-language models: every compiled part a config names is listed and checked, whatever the family calls it.

Qwen2-VL and Qwen2.5-VL keep the language model at the top level and the vision encoder in visual/; Gemma3 and
Idefics3 nest both (vision_tower/, vision_model/). The fixtures are what optimum-rbln 0.12.0 wrote for each.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from kind_fixtures import materialize
from optimum_loader import LoaderError, load_model

Run = Callable[..., subprocess.CompletedProcess[str]]
VISION_PART = {"qwen2_vl": "visual", "qwen2_5_vl": "visual", "gemma3": "vision_tower", "idefics3": "vision_model"}


@pytest.mark.parametrize("family", sorted(VISION_PART))
def test_whole_vl_artifact_is_ok_and_lists_its_vision_part(run_cli: Run, tmp_path: Path, family: str) -> None:
    folder = materialize(family, tmp_path / family)
    load_model(folder)  # the package's loading rules take it
    data = json.loads(run_cli("inspect", folder, "--json").stdout)
    assert data["status"] == "ok", data["problems"]
    assert VISION_PART[family] in [p["name"] for p in data["parts"]]
    text = run_cli("inspect", folder).stdout  # the text names the part as --json does, whichever folder holds the KV
    assert any(line.split()[:2] == ["part", f"{VISION_PART[family]}/"] for line in text.splitlines()), text


@pytest.mark.parametrize("family", sorted(VISION_PART))
@pytest.mark.parametrize("damage", ["folder", "graph"])
def test_vl_without_its_vision_encoder_is_invalid(run_cli: Run, tmp_path: Path, family: str, damage: str) -> None:
    folder = materialize(family, tmp_path / family)
    part = VISION_PART[family]
    if damage == "folder":
        shutil.rmtree(folder / part)
    else:
        (folder / part / "compiled_model.rbln").unlink()
    with pytest.raises(LoaderError):
        load_model(folder)  # what vllm-rbln would hit
    inspected = run_cli("inspect", folder, "--json")
    data = json.loads(inspected.stdout)
    assert data["status"] == "invalid" and inspected.returncode == 3
    assert any(f"{part}/" in p["message"] for p in data["problems"]), data["problems"]
    scanned = run_cli("scan", tmp_path, "--json", "--no-cache")
    [row] = json.loads(scanned.stdout)
    assert row["status"] == "invalid" and scanned.returncode == 3
