"""A multimodal model's parts share its NPU (DESIGN section 11): stacked where known, named where not."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from kind_fixtures import simulated_llava, write_like_optimum

Run = Callable[..., subprocess.CompletedProcess[str]]
PARTS = ("vision_tower/compiled_model.rbln", "compiled_model.rbln")  # the vision tower and the projector


def _chiplet(data: dict[str, object]) -> dict[str, int]:
    breakdown = data["breakdown"]
    assert isinstance(breakdown, dict)
    [usage] = breakdown["chiplets"]
    return usage


def test_parts_of_unknown_size_are_named_not_counted_as_free(run_cli: Run, tmp_path: Path) -> None:
    llava = simulated_llava(tmp_path / "llava", kvcache_num_blocks=5)
    data = json.loads(run_cli("inspect", llava, "--json").stdout)
    assert data["colocated_unknown"] == ["(top level)", "vision_tower/"]
    text = run_cli("inspect", llava).stdout
    assert "(top level), vision_tower/ also load on these NPUs" in text and "free DRAM shown does not count" in text
    grown = run_cli("set-kvcache-num-blocks", llava, "8")
    assert grown.returncode == 0, grown.stderr
    assert "load on the same NPUs with allocations unknown here" in grown.stderr


def test_known_parts_are_stacked_on_the_language_models_npu(run_cli: Run, tmp_path: Path) -> None:
    alone = json.loads(run_cli("inspect", simulated_llava(tmp_path / "a" / "llava"), "--json").stdout)
    llava = simulated_llava(tmp_path / "b" / "llava")
    for part in PARTS:  # simulator graphs: their tables are known here (each the size of the LM's prefill)
        shutil.copy(llava / "language_model" / "prefill.rbln", llava / part)
    data = json.loads(run_cli("inspect", llava, "--json").stdout)
    assert data["colocated_unknown"] == [] and len(data["colocated_graphs"]) == 2
    prefill = data["graphs"]["prefill"]["alloc_per_chiplet_by_key"]
    extra = 2 * sum(grid[0][0] for grid in prefill.values())  # DramTensor included, as optimum-rbln charges it
    before, after = _chiplet(alone), _chiplet(data)
    used = ("weights", "workspace_and_other")
    assert sum(after[k] for k in used) == sum(before[k] for k in used) + extra
    assert after["free_in_budget"] == before["free_in_budget"] - extra


def test_parts_on_other_devices_reserve_nothing(run_cli: Run, tmp_path: Path) -> None:
    llava = simulated_llava(tmp_path / "llava")
    for part in PARTS:
        shutil.copy(llava / "language_model" / "prefill.rbln", llava / part)
    raw = json.loads((llava / "rbln_config.json").read_text())
    raw["device"], raw["vision_tower"]["device"], raw["language_model"]["device"] = [1], [1], [0]
    write_like_optimum(llava / "rbln_config.json", raw)
    data = json.loads(run_cli("inspect", llava, "--json").stdout)
    assert data["colocated_graphs"] == [] and data["colocated_unknown"] == []
