"""The pydantic model of a simulator container's header: what the compiler and a resize write is validated by it,
and what a scan's lean reader (container._lean_header) does not plainly accept is judged by it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt


class HeaderModel(BaseModel):
    """container.GraphHeader's fields and their rules: strict types, bounds, every key required."""

    model_config = ConfigDict(strict=True, extra="ignore", defer_build=True)

    graph: str
    npu: str
    num_devices: int = Field(ge=1)
    chiplets: int = Field(ge=1)
    kvcache_num_blocks: int = Field(ge=1)
    compiled_kvcache_num_blocks: int = Field(ge=1)
    weights_bytes: int = Field(ge=0)
    resizable: list[str]
    alloc_per_chiplet_by_key: dict[str, list[list[NonNegativeInt]]]
    dram_tensor_sizes: dict[str, list[list[NonNegativeInt]]]
