"""rbln_config.json's pydantic model: the full validation that words every error and applies older key names.

Loaded only when a file is not one the lean reader (rbln_config.read_view) plainly accepts, or when a file is
written: a scan of valid files never imports pydantic.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    AliasPath,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from typing_extensions import Self

from rbln_artifact_studio.core.model.config_fields import (
    _MAX_DIM,
    _RENAMED,
    _SIZE_OF,
    DEFAULT_DTYPE,
    FULL_ATTENTION,
    MAX_BLOCKS,
    CacheTensor,
    ConfigFields,
    block_bytes,
    config_check,
    is_resizable,
)

if TYPE_CHECKING:
    DtypeName = str  # a Literal built at run time, which a type checker cannot read: any name, checked by pydantic
else:
    DtypeName = Literal[tuple(_SIZE_OF)]
Dim = Annotated[int, Field(ge=0, le=_MAX_DIM)]


class CacheMeta(BaseModel):
    """One KV cache tensor: shape [num_blocks, num_kv_heads, block_size, head_dim]."""

    model_config = ConfigDict(extra="allow", strict=True, defer_build=True)

    name: str
    layer_index: int | None = None
    shape: list[Dim] = Field(min_length=4, max_length=4)
    layer_type: str = FULL_ATTENTION
    is_auto: bool = True
    dtype: DtypeName = DEFAULT_DTYPE

    @property
    def resizable(self) -> bool:
        return is_resizable(self.layer_type, self.is_auto)

    @property
    def per_block_bytes(self) -> int:
        return block_bytes(self.shape, self.dtype)


class RblnConfig(ConfigFields, BaseModel):
    """The keys of a decoder-only rbln_config.json that sizing and serving depend on; others are kept aside.

    The lean reader (rbln_config.read_view) gives the same figures for every file it accepts (its limits are these
    fields'; tests/test_config_reader.py holds both to it)."""

    model_config = ConfigDict(extra="allow", strict=True, defer_build=True)

    cls_name: str | None = None
    batch_size: int = Field(default=1, ge=1, le=1 << 20)
    max_seq_len: int = Field(ge=1, le=_MAX_DIM)
    kvcache_num_blocks: int = Field(ge=-MAX_BLOCKS, le=MAX_BLOCKS)
    kvcache_block_size: int | None = Field(default=None, ge=1, le=_MAX_DIM)
    kvcache_partition_len: int | None = Field(default=None, ge=1, le=_MAX_DIM)
    attn_impl: str | None = None
    # optimum-rbln keeps npu and num_devices in each _compile_cfgs entry rather than at the top level.
    npu: str | None = Field(default=None, validation_alias=AliasChoices("npu", AliasPath("_compile_cfgs", 0, "npu")))
    num_devices: int = Field(
        default=1,
        ge=1,
        le=1 << 16,
        validation_alias=AliasChoices("num_devices", AliasPath("_compile_cfgs", 0, "num_devices")),
    )
    prefill_chunk_size: int | None = Field(default=None, ge=1, le=_MAX_DIM)
    dtype: str | None = None
    decoder_batch_sizes: list[int] | None = None
    cache_metas: list[CacheMeta] | None = None

    @field_validator("num_devices", mode="before")
    @classmethod
    def _unset_devices(cls, value: Any) -> Any:
        # optimum-rbln saves num_devices: null in _compile_cfgs when the compile did not set it: one device.
        return 1 if value is None else value

    @model_validator(mode="before")
    @classmethod
    def _old_names(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        # An older name in _compile_cfgs[0] counts as set at the top level, like npu and num_devices there.
        compile_cfgs = data.get("_compile_cfgs")
        if isinstance(compile_cfgs, list) and compile_cfgs and isinstance(compile_cfgs[0], dict):
            first = compile_cfgs[0]
            for key in ("npu", "num_devices", "tensor_parallel_size"):
                if key in first and key not in data:
                    data[key] = first[key]
        for new, old in _RENAMED:
            if old in data:
                old_value = data.pop(old)
                if new in data and data[new] != old_value:
                    raise ValueError(f"both {new!r} and its older name {old!r} are set, with different values")
                data.setdefault(new, old_value)
        return data

    @model_validator(mode="after")
    def _check(self) -> Self:
        problem = config_check(self.attn_impl, self.block_size, self.max_seq_len)
        if problem is not None:
            raise ValueError(problem)
        return self

    def _cache_meta_entries(self) -> Iterable[CacheTensor] | None:
        return self.cache_metas


def first_error(exc: ValidationError) -> str:
    """The first three of pydantic's errors, each with where in the file it is."""
    parts = []
    for err in exc.errors()[:3]:
        where = ".".join(str(p) for p in err["loc"]) or "file"
        parts.append(f"{where}: {err['msg']}")
    more = f" (and {exc.error_count() - 3} more)" if exc.error_count() > 3 else ""
    return "; ".join(parts) + more
