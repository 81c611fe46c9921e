"""Budget explorer: the blocks an artifact resolves to at every memory_budget, and a clicked budget as a resize target."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.estimation.estimator import (
    Breakdown,
    CurvePoint,
    MemoryLayout,
    breakdown,
    budget_curve,
    estimate_blocks,
    fraction_for_bytes,
)
from rbln_artifact_studio.core.fleet.artifact import Artifact
from rbln_artifact_studio.core.fleet.targets import resolve_target
from rbln_artifact_studio.core.model.budget import MemoryBudget, parse_budget
from rbln_artifact_studio.core.model.npu import Npu
from rbln_artifact_studio.core.sizes import format_bytes


def breakpoints(layout: MemoryLayout, npu: Npu, full_blocks: int) -> list[CurvePoint]:
    """Where the resolved count steps up: the smallest budget per NPU for each count that has one of its own.

    Counts that need the same budget as the next one (the 2 MiB alignment rounds them up together) are
    skipped: at that budget the estimator already resolves to the larger count.
    """
    points: list[CurvePoint] = []
    for point in budget_curve(layout, npu, full_blocks):
        if points and points[-1].budget_bytes == point.budget_bytes:
            points[-1] = point
        else:
            points.append(point)
    return points


def resolved_at(layout: MemoryLayout, npu: Npu, full_blocks: int, budget_per_npu: int) -> int:
    """Blocks that fit a budget per NPU (0 when not even one does), as estimation computes them."""
    per_chiplet = budget_per_npu // npu.chiplets
    n = estimate_blocks(layout, per_chiplet, full_blocks)
    return n if layout.fits(n, per_chiplet) else 0


@dataclass(frozen=True)
class BudgetStep:
    """The smallest budget per NPU that reaches a count, the count it resolves to there, and its 4-digit fraction.

    `blocks` can exceed the count asked for when the 2 MiB alignment makes both need the same bytes;
    `fraction` is None when no 4-digit fraction lands on this step (the byte count is then the exact form).
    """

    blocks: int
    low: int
    high: int | None  # where the next step starts; None when none does within the NPU's DRAM
    fraction: float | None

    def to_json(self) -> dict[str, Any]:
        return {"blocks": self.blocks, "budget_bytes": self.low, "fraction": self.fraction}


def min_budget(layout: MemoryLayout, npu: Npu, full_blocks: int, blocks: int) -> BudgetStep | None:
    """The smallest budget per NPU at which estimation resolves to at least `blocks`; None beyond the NPU's DRAM."""
    available = npu.available_per_npu
    low = layout.required_per_chiplet(max(blocks, 1)) * npu.chiplets
    if low > available:
        return None
    resolved = resolved_at(layout, npu, full_blocks, low)
    high = None
    if resolved < full_blocks:
        high = layout.required_per_chiplet(resolved + 1) * npu.chiplets
        high = None if high > available else high
    fraction = fraction_for_bytes(npu, low)
    exact = high is not None and int(available * fraction) >= high
    return BudgetStep(resolved, low, high, None if exact else fraction)


@dataclass(frozen=True)
class Exploration:
    """The curve of resolved blocks against budget for one artifact, from zero to the NPU's available DRAM."""

    path: str
    npu: Npu
    current: int
    floor: int
    full: int
    points: list[CurvePoint]
    floor_budget: BudgetStep | None
    full_budget: BudgetStep | None
    current_budget: BudgetStep | None

    @property
    def available(self) -> int:
        return self.npu.available_per_npu

    def blocks_at(self, budget_per_npu: int) -> int:
        """The count on the curve at a budget (0 below the first breakpoint)."""
        blocks = 0
        for point in self.points:
            if point.budget_bytes > budget_per_npu:
                break
            blocks = point.blocks
        return blocks

    def to_json(self) -> dict[str, Any]:
        def budget(b: BudgetStep | None) -> dict[str, Any] | None:
            return None if b is None else b.to_json()

        return {
            "path": self.path,
            "npu": self.npu.name,
            "available_per_npu": self.available,
            "kvcache_num_blocks": self.current,
            "floor": self.floor,
            "full": self.full,
            "min_budget_for_floor": budget(self.floor_budget),
            "min_budget_for_full": budget(self.full_budget),
            "min_budget_for_current": budget(self.current_budget),
            "breakpoints": [
                {
                    "budget_bytes": p.budget_bytes,
                    "fraction": p.fraction,
                    "blocks": p.blocks,
                    "valid": p.blocks >= self.floor,
                }
                for p in self.points
            ],
        }


def _known(artifact: Artifact) -> tuple[MemoryLayout, Npu]:
    layout, npu = artifact.layout(), artifact.npu
    if layout is None or npu is None:
        reason = artifact.unknown_reason or f"its NPU ({artifact.config.npu or 'not named'}) is unknown."
        raise StudioError(f"Cannot explore budgets for {artifact.name}: its allocations are unknown. {reason}")
    return layout, npu


def explore(artifact: Artifact) -> Exploration:
    """Breakpoints of the artifact's own allocation tables (scaled from its current count), floor and full marked."""
    layout, npu = _known(artifact)
    c = artifact.config
    full = c.num_full_blocks
    return Exploration(
        path=str(artifact.where),
        npu=npu,
        current=c.kvcache_num_blocks,
        floor=c.num_min_blocks,
        full=full,
        points=breakpoints(layout, npu, full),
        floor_budget=min_budget(layout, npu, full, c.num_min_blocks),
        full_budget=min_budget(layout, npu, full, full),
        current_budget=min_budget(layout, npu, full, c.kvcache_num_blocks),
    )


@dataclass(frozen=True)
class ClickTarget:
    """What a click on the curve asks the resize dialog for: the budget, its count, and why it cannot be used."""

    budget_bytes: int
    fraction: float
    blocks: int | None
    error: str | None = None
    warnings: list[str] = field(default_factory=list)


def target_at(artifact: Artifact, budget_per_npu: int) -> ClickTarget:
    """Map a budget picked on the curve (clamped to the axis) to the resize target 'fit to budget' would write."""
    _, npu = _known(artifact)
    budget_bytes = min(max(int(budget_per_npu), 1), npu.available_per_npu)
    fraction = budget_bytes / npu.available_per_npu
    try:
        blocks, warnings = resolve_target(artifact, None, MemoryBudget(nbytes=budget_bytes, text=str(budget_bytes)))
    except StudioError as exc:
        return ClickTarget(budget_bytes, fraction, None, exc.one_line())
    return ClickTarget(budget_bytes, fraction, blocks, None, warnings)


@dataclass(frozen=True)
class WhatIf:
    """A compile of this artifact's model and shape at a memory_budget: the count it would resolve to (what
    `explore` reads on its curve) and its breakdown; the artifact itself keeps its own count (current)."""

    budget: MemoryBudget
    budget_per_npu: int
    blocks: int  # as `explore` reads its curve at this budget: 0 when not even one block fits
    floor: int
    full: int
    breakdown: Breakdown
    current: int = 0  # the artifact's own kvcache_num_blocks

    def summary(self) -> str:
        """What the numbers are: a compile at this budget, not this artifact under it."""
        head = (
            f"A compile at memory_budget {self.budget.describe()} = {format_bytes(self.budget_per_npu)} per NPU "
            f"gives kvcache_num_blocks {self.blocks}"
        )
        if self.blocks < self.floor:
            return f"{head}, below the floor of {self.floor}: that compile, or a fit to that budget, fails."
        return f"{head} (floor {self.floor}, full pool {self.full}); this artifact holds {self.current}."


def what_if(artifact: Artifact, budget_text: str) -> WhatIf:
    """The breakdown and count a compile at this budget would give (the numbers `explore` prints); StudioError for
    a budget that cannot be read or exceeds the NPU."""
    layout, npu = _known(artifact)
    budget = parse_budget(budget_text)
    per_npu = budget.bytes_per_npu(npu)
    c = artifact.config
    blocks = resolved_at(layout, npu, c.num_full_blocks, per_npu)
    fit = breakdown(layout, npu, per_npu, blocks, budget.is_set)
    return WhatIf(budget, per_npu, blocks, c.num_min_blocks, c.num_full_blocks, fit, c.kvcache_num_blocks)


def exploration_text(e: Exploration) -> str:
    """The breakpoints as a table, floor, full pool and current count marked."""
    lines = [
        f"{e.path}: {e.npu.label}, {format_bytes(e.available)} available per NPU; "
        f"kvcache_num_blocks {e.current} (floor {e.floor}, full pool {e.full})"
    ]
    for label, n, b in (("floor", e.floor, e.floor_budget), ("full pool", e.full, e.full_budget)):
        if b is None:
            lines.append(f"  {label} ({n} blocks): not reachable within the NPU's DRAM")
            continue
        frac = f"memory_budget {b.fraction:g} or " if b.fraction is not None else "memory_budget "
        lands = f", which resolves to {b.blocks}" if b.blocks != n else ""
        lines.append(f"  {label} ({n} blocks) from {frac}{b.low:,} bytes ({format_bytes(b.low)}){lands}")
    lines.append(f"  {'budget bytes':>17}  {'fraction':>10}  blocks")
    floor_point = next((p for p in e.points if p.blocks >= e.floor), None)
    for p in e.points:
        marks = [m for m, hit in (("floor", p is floor_point), ("full pool", p.blocks == e.full)) if hit]
        marks += ["current"] if p.blocks == e.current else []
        tag = f"  <- {', '.join(marks)}" if marks else ("  below the floor" if p.blocks < e.floor else "")
        lines.append(f"  {p.budget_bytes:>17,}  {p.fraction:>10.6f}  {p.blocks:>6}{tag}")
    return "\n".join(lines)
