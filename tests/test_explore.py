"""Budget explorer: breakpoints agree with the estimator, floor/full budgets, clicks map to what a resize writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import compile_artifact

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.estimation.estimator import estimate_blocks
from rbln_artifact_studio.core.fleet.artifact import open_artifact
from rbln_artifact_studio.core.model.budget import parse_budget
from rbln_artifact_studio.core.operations.resize import resize_to_copy
from rbln_artifact_studio.core.planning.explore import explore, min_budget, target_at


@pytest.fixture
def tiny_atom(tiny_model: Path, tmp_path: Path) -> Path:
    """Per-block KV far below 2 MiB: eight blocks share one aligned step."""
    return compile_artifact(
        tmp_path / "tiny-ca25", model_id=str(tiny_model), npu="RBLN-CA25", batch_size=4, max_seq_len=8192,
        kvcache_partition_len=1024,
    )  # fmt: skip


def assert_breakpoints_match_estimator(folder: Path) -> None:
    artifact = open_artifact(folder)
    layout, npu, full = artifact.layout(), artifact.npu, artifact.config.num_full_blocks
    assert layout is not None and npu is not None
    points = explore(artifact).points
    assert points, "no breakpoint at all"
    previous = 0
    for p in points:
        at = p.budget_bytes // npu.chiplets
        below = (p.budget_bytes - 1) // npu.chiplets
        assert estimate_blocks(layout, at, full) == p.blocks and layout.fits(p.blocks, at)
        if previous:
            assert estimate_blocks(layout, below, full) == previous
        else:
            assert not layout.fits(1, below)  # below the first breakpoint not even one block fits
        assert p.fraction == p.budget_bytes / npu.available_per_npu
        previous = p.blocks
    assert [p.blocks for p in points] == sorted({p.blocks for p in points})


def test_breakpoints_match_estimate_blocks_at_and_just_below(cr13_artifact: Path, ca25_artifact: Path) -> None:
    for folder in (cr13_artifact, ca25_artifact):
        assert_breakpoints_match_estimator(folder)


def test_alignment_steps_are_visible_on_a_small_model(tiny_atom: Path) -> None:
    assert_breakpoints_match_estimator(tiny_atom)
    e = explore(open_artifact(tiny_atom))
    # 2 layers x (K, V) tensors of 256 KiB per block: the 2 MiB alignment moves them 8 blocks at a time.
    assert [p.blocks for p in e.points] == [8, 16, 24, 32]
    steps = {b.budget_bytes - a.budget_bytes for a, b in zip(e.points, e.points[1:], strict=False)}
    assert steps == {4 * 2 * 2**20}
    # The floor (9) has no step of its own: the smallest budget reaching it resolves to 16.
    assert e.floor == 9 and e.floor_budget is not None and e.floor_budget.blocks == 16
    assert e.floor_budget.low == e.points[1].budget_bytes


def test_floor_and_full_budgets_match_the_reference(cr13_artifact: Path) -> None:
    e = explore(open_artifact(cr13_artifact))
    assert (e.floor, e.full, e.current) == (9, 40, 21)
    assert e.floor_budget is not None and e.full_budget is not None
    # The same figure the compiler's floor error suggests (README): 0.1995, 27.92 GiB.
    assert e.floor_budget.fraction == 0.1995 and e.floor_budget.blocks == 9
    assert e.full_budget.blocks == 40 and e.points[-1].blocks == 40
    assert e.points[-1].budget_bytes == e.full_budget.low <= e.available
    artifact = open_artifact(cr13_artifact)
    for step in (e.floor_budget, e.full_budget):
        assert step.fraction is not None
        layout, npu = artifact.layout(), artifact.npu
        assert layout is not None and npu is not None
        resolved = estimate_blocks(layout, parse_budget(step.fraction).bytes_per_chiplet(npu), e.full)
        assert resolved == step.blocks


def test_full_pool_out_of_reach_is_none(cr13_artifact: Path) -> None:
    artifact = open_artifact(cr13_artifact)
    layout, npu = artifact.layout(), artifact.npu
    assert layout is not None and npu is not None
    assert min_budget(layout, npu, 10_000, 10_000) is None  # 10,000 blocks of 1.125 GiB cannot fit 140 GiB
    assert explore(artifact).points[-1].blocks == 40


def test_click_maps_to_what_set_memory_budget_writes(cr13_artifact: Path, tmp_path: Path) -> None:
    artifact = open_artifact(cr13_artifact)
    e = explore(artifact)
    middle = e.points[13]  # 14 blocks
    click = target_at(artifact, middle.budget_bytes + 5_000)
    assert (click.blocks, click.error, click.warnings) == (14, None, [])
    result = resize_to_copy(cr13_artifact, tmp_path / "copy", budget=parse_budget(str(click.budget_bytes)))
    assert result.target == click.blocks == e.blocks_at(click.budget_bytes)


def test_click_below_the_floor_and_above_current(cr13_artifact: Path) -> None:
    artifact = open_artifact(cr13_artifact)
    e = explore(artifact)
    assert e.floor_budget is not None
    low = target_at(artifact, e.floor_budget.low - 1)
    assert low.blocks is None and low.error is not None and "at least 9 blocks are required" in low.error
    assert target_at(artifact, 0).blocks is None  # the left edge of the axis
    high = target_at(artifact, 10**15)  # past the right edge: clamped to the NPU's DRAM
    assert high.budget_bytes == e.available and high.blocks == 40
    # The estimate says 40 fit: no warning beside it may say they might not (issue 16, point 8).
    assert not any("above the current count" in w or "may fail" in w for w in high.warnings)


def test_unknown_allocations_cannot_be_explored(cr13_artifact: Path) -> None:
    for graph in cr13_artifact.glob("*.rbln"):
        graph.write_bytes(b"real compiler output")
    with pytest.raises(StudioError, match="allocations are unknown"):
        explore(open_artifact(cr13_artifact))


def test_cli_explore_json(run_cli, cr13_artifact: Path) -> None:
    out = run_cli("explore", cr13_artifact, "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    core = explore(open_artifact(cr13_artifact))
    assert data["breakpoints"] == [
        {"budget_bytes": p.budget_bytes, "fraction": p.fraction, "blocks": p.blocks, "valid": p.blocks >= 9}
        for p in core.points
    ]
    assert (data["floor"], data["full"], data["kvcache_num_blocks"]) == (9, 40, 21)
    assert data["min_budget_for_floor"] == {
        "blocks": 9,
        "budget_bytes": core.points[8].budget_bytes,
        "fraction": 0.1995,
    }
    assert data["min_budget_for_full"]["blocks"] == 40
    assert data["available_per_npu"] == 150_323_855_360
    text = run_cli("explore", cr13_artifact)
    assert text.returncode == 0 and "<- floor" in text.stdout and "<- full pool" in text.stdout


def test_cli_explore_unknown_is_one_line_error(run_cli, cr13_artifact: Path) -> None:
    (cr13_artifact / "prefill.rbln").write_bytes(b"real compiler output")
    out = run_cli("explore", cr13_artifact, "--json")
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith("error: Cannot explore budgets") and len(out.stderr.splitlines()) == 1
