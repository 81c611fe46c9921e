"""Co-location planner: stacking per chiplet, one-chiplet overflow, device mapping, families, unknowns, the fix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import compile_artifact

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.fleet.artifact import open_artifact
from rbln_artifact_studio.core.fleet.targets import target_for_budget
from rbln_artifact_studio.core.model.budget import parse_budget
from rbln_artifact_studio.core.operations.resize import resize_in_place
from rbln_artifact_studio.core.planning.planner import Verdict, fix_for, fixes, plan
from rbln_artifact_studio.core.simulator.container import read_container, write_container

BLOCK_PER_CHIPLET = 288 * 2**20  # Qwen3-8B: 1.125 GiB per block over the four chiplets of a Rebel100
CR13_CHIPLET = 35 * 2**30


def add_workspace(folder: Path, node: int, chiplet: int, extra: int, graph: str = "prefill") -> None:
    """Craft a container header whose Intermediate allocation is larger on one (node, chiplet) only."""
    path = folder / f"{graph}.rbln"
    header = read_container(path).slots[0].header
    alloc = {k: [row[:] for row in grid] for k, grid in header.alloc_per_chiplet_by_key.items()}
    alloc["Intermediate"][node][chiplet] += extra
    write_container(path, header.model_copy(update={"alloc_per_chiplet_by_key": alloc}))


def chiplet_used(folder: Path, node: int, chiplet: int) -> int:
    """Independent of the planner: the artifact's own breakdown."""
    fit = open_artifact(folder).breakdown()
    assert fit is not None
    return next(u.used for u in fit.usages if (u.node, u.chiplet) == (node, chiplet))


@pytest.fixture
def cr13_full(tmp_path: Path) -> Path:
    """Qwen3-8B on one RBLN-CR13 with the whole NPU: the full pool of 40 blocks."""
    return compile_artifact(tmp_path / "qwen3-8b-cr13-full", npu="RBLN-CR13")


def test_two_artifacts_that_fit(cr13_artifact: Path, cr13_full: Path) -> None:
    p = plan([open_artifact(cr13_artifact), open_artifact(cr13_full)])
    assert p.verdict is Verdict.FIT and p.fits and p.reasons == [] and fixes(p) == []
    (stack,) = p.stacks
    assert stack.family == "Rebel100" and len(stack.chiplets) == 4
    for ch in stack.chiplets:
        expected = CR13_CHIPLET - chiplet_used(cr13_artifact, 0, ch.chiplet) - chiplet_used(cr13_full, 0, ch.chiplet)
        assert ch.headroom == expected > 0
        assert [s.label for s in ch.shares] == ["qwen3-8b-cr13", "qwen3-8b-cr13-full"]


def test_one_chiplet_overflows(cr13_artifact: Path, cr13_full: Path) -> None:
    headroom = CR13_CHIPLET - chiplet_used(cr13_artifact, 0, 2) - chiplet_used(cr13_full, 0, 2)
    add_workspace(cr13_full, node=0, chiplet=2, extra=headroom + 100 * 2**20)
    p = plan([open_artifact(cr13_artifact), open_artifact(cr13_full)])
    assert p.verdict is Verdict.DOES_NOT_FIT
    (stack,) = p.stacks
    assert [c.label for c in stack.overflowing] == ["NPU 0 / chiplet 2"]
    assert stack.tightest.label == "NPU 0 / chiplet 2" and stack.tightest.headroom == -100 * 2**20
    assert all(c.headroom == headroom for c in stack.chiplets if c.chiplet != 2)
    # One 288 MiB block less on the other artifact covers the 100 MiB overflow.
    assert [(f.label, f.target) for f in fixes(p)] == [("qwen3-8b-cr13", 20), ("qwen3-8b-cr13-full", 39)]
    fix = fix_for(p, p.label_for(cr13_artifact))
    assert (fix.target, fix.reason, fix.warnings) == (20, None, [])
    assert fix.headroom_after == BLOCK_PER_CHIPLET - 100 * 2**20
    assert fix.concurrency_after == 3  # 20 blocks: 19 usable by vLLM, 5 per 40,960-token request
    assert fix.budget is not None and fix.budget.blocks == 20
    # The equivalent budget resolves to the same count through the normal "fit to budget" path.
    assert target_for_budget(open_artifact(cr13_artifact), parse_budget(str(fix.budget.low))) == 20
    assert fix.budget.fraction is not None
    assert target_for_budget(open_artifact(cr13_artifact), parse_budget(fix.budget.fraction)) == 20


def test_fix_applied_through_resize_makes_the_set_fit(cr13_artifact: Path, cr13_full: Path) -> None:
    headroom = CR13_CHIPLET - chiplet_used(cr13_artifact, 0, 2) - chiplet_used(cr13_full, 0, 2)
    add_workspace(cr13_full, node=0, chiplet=2, extra=headroom + 1000 * 2**20)
    before = plan([open_artifact(cr13_artifact), open_artifact(cr13_full)])
    fix = fix_for(before, "qwen3-8b-cr13-full")
    assert fix.target == 36  # 1,000 MiB over: four blocks of 288 MiB
    one_more = Path(shutil.copytree(cr13_full, cr13_full.parent / "one-more"))
    resize_in_place(one_more, fix.target + 1)
    assert not plan([open_artifact(cr13_artifact), open_artifact(one_more)]).fits
    resize_in_place(cr13_full, fix.target)
    after = plan([open_artifact(cr13_artifact), open_artifact(cr13_full)])
    assert after.fits and after.stacks[0].tightest.headroom == fix.headroom_after


def test_floor_that_does_not_fit_says_so(cr13_artifact: Path, cr13_full: Path) -> None:
    add_workspace(cr13_full, node=0, chiplet=1, extra=15 * 2**30)
    p = plan([open_artifact(cr13_artifact), open_artifact(cr13_full)])
    fix = fix_for(p, "qwen3-8b-cr13")
    assert fix.target is None and fix.reason is not None
    assert fix.reason.startswith("Even its floor (9 blocks) does not fit")
    assert fix_for(p, "qwen3-8b-cr13-full").target is not None  # shrinking the other one still works


def test_set_that_fits_offers_growth(cr13_artifact: Path, cr13_full: Path) -> None:
    p = plan([open_artifact(cr13_artifact), open_artifact(cr13_full)])
    fix = fix_for(p, "qwen3-8b-cr13")
    assert fix.target == 40 and fix.changes  # room for its whole pool beside the other one
    # The fix was computed to fit: no warning may contradict that (DESIGN section 5; issue 16, point 8).
    assert not any("above the current count" in w or "may fail" in w for w in fix.warnings)


def test_devices_map_node_i_to_npu_i(ca25_artifact: Path, tmp_path: Path) -> None:
    pair = compile_artifact(tmp_path / "qwen3-8b-ca25x2", npu="RBLN-CA25", num_devices=2)
    p = plan([open_artifact(ca25_artifact), open_artifact(pair)])
    (stack,) = p.stacks
    assert stack.num_npus == 4
    by_npu = {c.node: [s.label for s in c.shares] for c in stack.chiplets}
    assert by_npu == {
        0: ["qwen3-8b-ca25x4", "qwen3-8b-ca25x2"],
        1: ["qwen3-8b-ca25x4", "qwen3-8b-ca25x2"],
        2: ["qwen3-8b-ca25x4"],
        3: ["qwen3-8b-ca25x4"],
    }
    assert [c.node for c in stack.overflowing] == [0, 1]
    assert p.verdict is Verdict.DOES_NOT_FIT


def test_mixed_families_are_not_comparable(cr13_artifact: Path, ca25_artifact: Path) -> None:
    p = plan([open_artifact(cr13_artifact), open_artifact(ca25_artifact)])
    assert p.verdict is Verdict.NOT_COMPARABLE and not p.fits
    assert "different NPU families" in p.reasons[0]
    families = {s.family: s for s in p.stacks}
    assert set(families) == {"Rebel100", "ATOM"}
    for s in p.stacks:  # never summed across families
        assert all(len(c.shares) == 1 for c in s.chiplets)
    assert families["ATOM"].chiplets[0].available == 16_877_879_296
    assert families["Rebel100"].chiplets[0].available == CR13_CHIPLET


def test_unknown_allocations_cannot_be_planned(cr13_artifact: Path, cr13_full: Path) -> None:
    real = Path(shutil.copytree(cr13_artifact, cr13_artifact.parent / "real"))
    for graph in real.glob("*.rbln"):
        graph.write_bytes(b"real compiler output")
    p = plan([open_artifact(cr13_full), open_artifact(real)])
    assert p.verdict is Verdict.UNKNOWN and not p.fits
    assert p.reasons[0].startswith("The plan cannot be computed for real: The .rbln files were written by the real")
    assert "rebel" in p.reasons[0]
    assert "unknown" in (fix_for(p, "qwen3-8b-cr13-full").reason or "")
    # Known artifacts that already overflow stay a certain "does not fit".
    add_workspace(cr13_full, node=0, chiplet=0, extra=30 * 2**30)
    assert plan([open_artifact(cr13_full), open_artifact(real)]).verdict is Verdict.DOES_NOT_FIT


def test_unknown_npu_and_too_few_artifacts(cr13_artifact: Path, cr13_full: Path) -> None:
    config = cr13_artifact / "rbln_config.json"
    raw = json.loads(config.read_text())
    raw["npu"] = "RBLN-ZZ99"
    raw["_compile_cfgs"] = [{**c, "npu": "RBLN-ZZ99"} for c in raw["_compile_cfgs"]]
    config.write_text(json.dumps(raw))
    p = plan([open_artifact(cr13_artifact), open_artifact(cr13_full)])
    assert p.verdict is Verdict.UNKNOWN and "RBLN-ZZ99" in p.reasons[0]
    with pytest.raises(StudioError, match="two or more"):
        plan([open_artifact(cr13_full)])


def test_same_artifact_twice_is_two_replicas(cr13_artifact: Path) -> None:
    artifact = open_artifact(cr13_artifact)
    p = plan([artifact, artifact, artifact, artifact])
    assert [m.label for m in p.members] == [f"qwen3-8b-cr13#{i}" for i in (1, 2, 3, 4)]
    assert p.stacks[0].tightest.used == 4 * chiplet_used(cr13_artifact, 0, 0)
    assert p.verdict is Verdict.DOES_NOT_FIT  # four 10.4 GiB replicas on a 35 GiB chiplet
    assert plan([artifact, artifact, artifact]).fits


def test_cli_plan_fit_exits_0(run_cli, cr13_artifact: Path, cr13_full: Path) -> None:
    out = run_cli("plan", cr13_artifact, cr13_full)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("2 artifacts: fit\n") and "does not fit" not in out.stdout
    assert "Node i of every artifact runs on NPU i" in out.stdout
    data = json.loads(run_cli("plan", cr13_artifact, cr13_full, "--json").stdout)
    assert (data["verdict"], data["fits"], data["fixes"]) == ("fit", True, [])
    chiplet = data["families"][0]["chiplets"][0]
    assert chiplet["headroom"] == chiplet["available"] - chiplet["used"] > 0
    assert set(chiplet["artifacts"]) == {"qwen3-8b-cr13", "qwen3-8b-cr13-full"}


def test_cli_plan_overflow_prints_the_fix_command(run_cli, cr13_artifact: Path, cr13_full: Path) -> None:
    headroom = CR13_CHIPLET - chiplet_used(cr13_artifact, 0, 2) - chiplet_used(cr13_full, 0, 2)
    add_workspace(cr13_full, node=0, chiplet=2, extra=headroom + 100 * 2**20)
    out = run_cli("plan", cr13_artifact, cr13_full)
    assert out.returncode == 1
    assert out.stdout.startswith("2 artifacts: does not fit\n")
    over = [line for line in out.stdout.splitlines() if "OVER by" in line]
    assert len(over) == 1 and over[0].startswith("  NPU 0 / chiplet 2:") and "104,857,600 bytes" in over[0]
    assert over[0].endswith("<- tightest")
    assert f"run: rbln-studio-cli set-kvcache-num-blocks {cr13_artifact} 20" in out.stdout
    data = json.loads(run_cli("plan", cr13_artifact, cr13_full, "--fix", cr13_artifact, "--json").stdout)
    assert data["verdict"] == "does not fit" and data["families"][0]["tightest"]["headroom"] == -100 * 2**20
    (fix,) = data["fixes"]
    assert (fix["artifact"], fix["target"], fix["headroom_after"]) == ("qwen3-8b-cr13", 20, 188 * 2**20)
    assert fix["command"] == ["rbln-studio-cli", "set-kvcache-num-blocks", str(cr13_artifact), "20"]
    assert fix["memory_budget"]["blocks"] == 20
    applied = run_cli(*fix["command"][1:])
    assert applied.returncode == 0, applied.stderr
    assert run_cli("plan", cr13_artifact, cr13_full).returncode == 0


def test_cli_plan_mixed_families_and_bad_input(run_cli, cr13_artifact: Path, ca25_artifact: Path) -> None:
    out = run_cli("plan", cr13_artifact, ca25_artifact)
    assert out.returncode == 1 and out.stdout.startswith("2 artifacts: not comparable")
    assert "never share an NPU's DRAM, so they are not summed" in out.stdout
    data = json.loads(run_cli("plan", cr13_artifact, ca25_artifact, "--json").stdout)
    assert data["verdict"] == "not comparable" and [f["family"] for f in data["families"]] == ["Rebel100", "ATOM"]
    alone = run_cli("plan", cr13_artifact)
    assert alone.returncode == 1 and alone.stderr == "error: A co-location plan needs two or more artifacts.\n"
    stranger = run_cli("plan", cr13_artifact, ca25_artifact, "--fix", cr13_artifact.parent)
    assert stranger.returncode == 1 and "is not one of the planned folders" in stranger.stderr


def test_cli_plan_unknown_allocations_exit_1(run_cli, cr13_artifact: Path, cr13_full: Path) -> None:
    for graph in cr13_artifact.glob("*.rbln"):
        graph.write_bytes(b"real compiler output")
    out = run_cli("plan", cr13_full, cr13_artifact)
    assert out.returncode == 1 and out.stdout.startswith("2 artifacts: unknown\n")
    assert "The plan cannot be computed for qwen3-8b-cr13: The .rbln files were written by the real" in out.stdout
    for command in ("plan", "serving", "explore"):
        assert run_cli(command, "--help").returncode == 0
