"""What rbln_config.json alone says about an artifact: its problems and the graphs it promises (no pydantic)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rbln_artifact_studio.core.errors import UnknownNpuError
from rbln_artifact_studio.core.model.npu import get_npu
from rbln_artifact_studio.core.status import Problem, Status

if TYPE_CHECKING:
    from rbln_artifact_studio.core.model.config_fields import ConfigFields


def config_problems(config: ConfigFields) -> list[Problem]:
    """What rbln_config.json alone says is wrong or risky."""
    problems = []
    n, floor, full = config.kvcache_num_blocks, config.num_min_blocks, config.num_full_blocks
    if n <= 0:
        problems.append(
            Problem(Status.INVALID, f"kvcache_num_blocks is {n}; a compiled artifact always records a positive count.")
        )
    elif n < floor:
        problems.append(
            Problem(
                Status.INVALID,
                f"kvcache_num_blocks={n} is below the minimum required for the full sequence length "
                f"(num_min_blocks={floor}).",
            )
        )
    elif n > full:
        problems.append(
            Problem(
                Status.WARNING, f"kvcache_num_blocks={n} is above the full pool ({full}); the excess is never used."
            )
        )
    if config.npu is None:
        problems.append(Problem(Status.WARNING, "rbln_config.json does not name its npu; DRAM figures are unknown."))
    else:
        try:
            get_npu(config.npu)
        except UnknownNpuError as exc:
            problems.append(Problem(Status.WARNING, str(exc)))
    unknown = config.kv_unknown_reason
    if unknown:
        problems.append(Problem(Status.WARNING, unknown))
    return problems


def expected_graph_names(raw: dict[str, object]) -> list[str]:
    """Graph names _compile_cfgs promises (compiled_model_name of each entry)."""
    cfgs = raw.get("_compile_cfgs")
    if not isinstance(cfgs, list):
        return []
    return [
        c["compiled_model_name"] for c in cfgs if isinstance(c, dict) and isinstance(c.get("compiled_model_name"), str)
    ]
