"""Whether a target block count is valid for an artifact (DESIGN section 6): the inline check, Fit to budget."""

from __future__ import annotations

from dataclasses import dataclass, field

from rbln_artifact_studio.core.errors import InsufficientMemoryError, ResizeError
from rbln_artifact_studio.core.estimation.estimator import resolve_blocks
from rbln_artifact_studio.core.estimation.fit import does_not_fit
from rbln_artifact_studio.core.fleet.artifact import Artifact
from rbln_artifact_studio.core.model.budget import MemoryBudget, with_budget_warnings
from rbln_artifact_studio.core.model.config_fields import MAX_BLOCKS, ConfigFields
from rbln_artifact_studio.core.simulator.compiler import (
    above_full_warning,
    below_floor_message,
    too_many_blocks_message,
)
from rbln_artifact_studio.core.sizes import format_bytes


@dataclass(frozen=True)
class TargetCheck:
    """Inline validation of a target count: the error that blocks it, or the warnings that do not."""

    current: int
    target: int
    floor: int
    full: int
    error: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None


def check_target(
    config: ConfigFields, target: int, artifact: Artifact | None = None, in_place: bool = False
) -> TargetCheck:
    """DESIGN section 6, with the artifact's allocation tables where known (DESIGN section 5).

    Errors: a non-positive current count, a target below the floor or above what a file records, and, where
    the tables are known, a target whose KV cache does not fit the DRAM left on the tightest chiplet (the
    error names the largest count that fits). Where they are unknown (a real artifact without rebel), a
    target above the current count warns with its KV bytes per NPU. Above the full pool always warns.
    in_place: a choice about to be applied in place, where the current count changes nothing (the GUI offers no
    Apply for it; the CLI takes it as a finished rerun).
    """
    current, floor, full = config.kvcache_num_blocks, config.num_min_blocks, config.num_full_blocks
    if current <= 0:
        error = (
            f"rbln_config.json records kvcache_num_blocks={current}; a resize needs a positive current count. "
            "Recompile the artifact."
        )
        return TargetCheck(current, target, floor, full, error)
    if target < floor:
        return TargetCheck(current, target, floor, full, below_floor_message(target, floor))
    if target > MAX_BLOCKS:
        return TargetCheck(current, target, floor, full, too_many_blocks_message(target, full))
    if in_place and target == current:
        unchanged = f"The artifact already has kvcache_num_blocks={target}; nothing to change in place."
        return TargetCheck(current, target, floor, full, unchanged)
    warnings = []
    layout, npu = (artifact.layout(), artifact.npu) if artifact is not None else (None, None)
    if layout is not None and npu is not None:
        refusal = does_not_fit(layout, npu, target, floor)
        if refusal is not None:
            return TargetCheck(current, target, floor, full, refusal)
    elif target > current:
        per_npu = config.kv_bytes_per_npu(target)
        size = "" if per_npu is None else f" ({format_bytes(per_npu)} of KV cache per NPU)"
        warnings.append(
            f"kvcache_num_blocks={target} is above the current count ({current}){size}; the artifact's "
            "allocation tables are unknown here, so whether it fits the NPU's DRAM cannot be checked: it may "
            "fail to allocate at runtime."
        )
    unknown = artifact.colocated.unknown if artifact is not None else []
    if unknown and target > current:
        warnings.append(
            f"kvcache_num_blocks={target} grows the KV cache, and {', '.join(unknown)} load on the same NPUs with "
            "allocations unknown here: the check counts them as nothing, so it may not fit at runtime."
        )
    if target > full:
        warnings.append(above_full_warning(target, full))
    return TargetCheck(current, target, floor, full, None, warnings)


def target_for_budget(artifact: Artifact, budget: MemoryBudget) -> int:
    """'Fit to budget': estimation over the artifact's own allocations, scaled from its current count."""
    layout, npu = artifact.layout(), artifact.npu
    if layout is None or npu is None:
        reason = artifact.unknown_reason or "its NPU is unknown"
        raise ResizeError(f"Cannot fit {artifact.name} to a budget: its allocations are unknown. {reason}")
    try:
        return resolve_blocks(
            layout, npu, budget.bytes_per_chiplet(npu), artifact.sequence_shape, budget.bytes_per_npu(npu)
        )
    except InsufficientMemoryError as exc:
        raise with_budget_warnings(exc, budget) from None


def resolve_target(artifact: Artifact, target: int | None, budget: MemoryBudget | None) -> tuple[int, list[str]]:
    """The validated target count and its warnings, from an explicit count or a budget."""
    if (target is None) == (budget is None):
        raise ResizeError("Give either a target block count or a memory budget, not both.")
    if budget is not None:
        target = target_for_budget(artifact, budget)
    assert target is not None
    check = check_target(artifact.config, target, artifact)
    if check.error:
        raise ResizeError(check.error)
    return target, [*(budget.warnings() if budget else []), *check.warnings]
