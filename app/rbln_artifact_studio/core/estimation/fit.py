"""Whether a block count's KV cache fits the NPU's DRAM, and the refusal that names the largest count that does."""

from __future__ import annotations

from rbln_artifact_studio.core.estimation.estimator import MemoryLayout, largest_fitting
from rbln_artifact_studio.core.model.npu import Npu
from rbln_artifact_studio.core.sizes import format_bytes


def does_not_fit(layout: MemoryLayout, npu: Npu, target: int, floor: int) -> str | None:
    """The error for a count whose KV cache does not fit the DRAM left on the tightest chiplet, else None."""
    room = npu.available_per_chiplet
    if layout.fits(target, room):
        return None
    over = layout.required_per_chiplet(target) - room
    largest = largest_fitting(lambda n: layout.fits(n, room), 1, target - 1, otherwise=0)
    if largest >= floor:
        advice = f"The largest count that fits is {largest}."
    else:
        advice = (
            f"Not even the minimum ({floor}) fits (the largest count that fits is {largest}); "
            "recompile with more devices or a shorter max_seq_len."
        )
    return (
        f"kvcache_num_blocks={target} does not fit {npu.name}: weights, workspace and KV cache need "
        f"{format_bytes(over)} ({over:,} bytes) more than the DRAM of the tightest chiplet. {advice}"
    )
