"""rbln_config.json: the pydantic model of the keys we use, loading with clear errors, and lossless rewrites."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from app.core.blocks import num_full_blocks, num_min_blocks
from app.core.errors import ConfigError
from app.core.jsonfile import CONFIG_NAME, decode_json, read_bytes, require_current_format
from app.core.npu import AttnImpl

DTYPE_BYTES = {
    "float32": 4,
    "fp32": 4,
    "float": 4,
    "bfloat16": 2,
    "bf16": 2,
    "float16": 2,
    "fp16": 2,
    "half": 2,
    "float8": 1,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
    "fp8": 1,
    "int8": 1,
    "uint8": 1,
}

# Renamed keys: (current name, older name). Files may carry either; both at once must agree.
_RENAMED = (("num_devices", "tensor_parallel_size"), ("cache_metas", "kvcache_metas"))

# Guards against absurd values so arithmetic and loops stay bounded on hostile files.
_MAX_DIM = 1 << 40
MAX_BLOCKS = _MAX_DIM  # the largest kvcache_num_blocks a file may record (a resize or compile must not exceed it)


# Every accepted spelling and its size; pydantic's core checks the name (no Python call per tensor: scans
# read thousands of files).
_SIZE_OF = {**DTYPE_BYTES, **{f"torch.{k}": v for k, v in DTYPE_BYTES.items()}}
DtypeName = Literal[tuple(_SIZE_OF)]  # type: ignore[valid-type]
Dim = Annotated[int, Field(ge=0, le=_MAX_DIM)]


def dtype_size(dtype: str) -> int:
    """Bytes per element of a dtype name as HF and optimum-rbln spell it ('bfloat16', 'torch.float16')."""
    key = dtype.removeprefix("torch.").lower()
    if key not in DTYPE_BYTES:
        raise ConfigError(f"Unknown dtype {dtype!r}; expected one of {', '.join(sorted(DTYPE_BYTES))}.")
    return DTYPE_BYTES[key]


class CacheMeta(BaseModel):
    """One KV cache tensor: shape [num_blocks, num_kv_heads, block_size, head_dim]."""

    model_config = ConfigDict(extra="allow", strict=True)

    name: str
    layer_index: int | None = None
    shape: list[Dim] = Field(min_length=4, max_length=4)
    layer_type: str = "full_attention"
    is_auto: bool = True
    dtype: DtypeName = "bfloat16"

    @property
    def resizable(self) -> bool:
        """Only full-attention tensors the compiler sized automatically grow and shrink with the block count."""
        return self.layer_type == "full_attention" and self.is_auto

    @property
    def per_block_bytes(self) -> int:
        _, heads, block, head_dim = self.shape
        return heads * block * head_dim * _SIZE_OF[self.dtype]

    @property
    def total_bytes(self) -> int:
        return math.prod(self.shape) * _SIZE_OF[self.dtype]


class RblnConfig(BaseModel):
    """The keys of a decoder-only rbln_config.json that sizing and serving depend on; others are kept aside."""

    model_config = ConfigDict(extra="allow", strict=True)

    cls_name: str | None = None
    batch_size: int = Field(default=1, ge=1, le=1 << 20)
    max_seq_len: int = Field(ge=1, le=_MAX_DIM)
    kvcache_num_blocks: int = Field(ge=-MAX_BLOCKS, le=MAX_BLOCKS)
    kvcache_block_size: int | None = Field(default=None, ge=1, le=_MAX_DIM)
    kvcache_partition_len: int | None = Field(default=None, ge=1, le=_MAX_DIM)
    attn_impl: str | None = None
    npu: str | None = None
    num_devices: int = Field(default=1, ge=1, le=1 << 16)
    prefill_chunk_size: int | None = Field(default=None, ge=1, le=_MAX_DIM)
    dtype: str | None = None
    cache_metas: list[CacheMeta] | None = None
    decoder_batch_sizes: list[int] | None = None

    @model_validator(mode="before")
    @classmethod
    def _old_names(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        # optimum-rbln keeps npu and num_devices in each _compile_cfgs entry rather than at the top level.
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
    def _check(self) -> RblnConfig:
        if self.attn_impl is not None and self.attn_impl not in {a.value for a in AttnImpl}:
            raise ValueError(f"attn_impl must be 'eager' or 'flash_attn', got {self.attn_impl!r}")
        if self.block_size > self.max_seq_len:
            raise ValueError(f"kvcache_block_size ({self.block_size}) is larger than max_seq_len ({self.max_seq_len})")
        return self

    @property
    def attn(self) -> AttnImpl:
        """The attention implementation, inferred from the block size when the file does not say."""
        if self.attn_impl is not None:
            return AttnImpl(self.attn_impl)
        if self.kvcache_partition_len and self.kvcache_block_size == self.kvcache_partition_len:
            return AttnImpl.FLASH
        return AttnImpl.EAGER

    @property
    def block_size(self) -> int:
        if self.kvcache_block_size is not None:
            return self.kvcache_block_size
        if self.attn_impl == AttnImpl.FLASH.value and self.kvcache_partition_len:
            return self.kvcache_partition_len
        return self.max_seq_len

    @property
    def num_full_blocks(self) -> int:
        return num_full_blocks(self.max_seq_len, self.block_size, self.batch_size)

    @property
    def num_min_blocks(self) -> int:
        return num_min_blocks(self.max_seq_len, self.block_size, self.batch_size, self.attn)

    @property
    def kv_bytes_per_block(self) -> int | None:
        """Bytes one block adds across the whole model (all devices), or None without cache metadata."""
        if self.cache_metas is None:
            return None
        return sum(m.per_block_bytes for m in self.cache_metas if m.resizable)

    @property
    def kv_fixed_bytes(self) -> int:
        """Bytes of KV tensors that do not scale with the block count (sliding-window caches, ...)."""
        return sum(m.total_bytes for m in self.cache_metas or () if not m.resizable)

    def kv_bytes(self, num_blocks: int) -> int | None:
        """Unaligned KV cache bytes of the whole model at a block count, or None when unknown."""
        per_block = self.kv_bytes_per_block
        return None if per_block is None else per_block * num_blocks + self.kv_fixed_bytes


@dataclass(frozen=True)
class LoadedConfig:
    """A parsed rbln_config.json: the validated view and the raw mapping every rewrite starts from."""

    path: Path
    raw: dict[str, Any]
    model: RblnConfig


def _first_error(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        where = ".".join(str(p) for p in err["loc"]) or "file"
        parts.append(f"{where}: {err['msg']}")
    more = f" (and {exc.error_count() - 3} more)" if exc.error_count() > 3 else ""
    return "; ".join(parts) + more


def parse_config(raw: object, path: Path) -> LoadedConfig:
    """Validate an already-decoded rbln_config.json mapping."""
    raw = require_current_format(raw, path)
    try:
        model = RblnConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"{path} is not a valid rbln_config.json: {_first_error(exc)}.") from None
    except RecursionError:
        raise ConfigError(f"{path} is nested too deeply to be an rbln_config.json.") from None
    return LoadedConfig(path, raw, model)


def load_config(artifact_dir: Path) -> LoadedConfig:
    """Read and validate DIR/rbln_config.json."""
    path = Path(artifact_dir) / CONFIG_NAME
    return parse_config(decode_json(read_bytes(path), path), path)


def with_block_count(raw: dict[str, Any], num_blocks: int) -> dict[str, Any]:
    """A copy of the raw config recording a new block count; every other key is kept as it was.

    Only the top-level count changes: optimum-rbln records num_full_blocks in the metas' shape[0]
    whatever the pool holds, so the metas describe the tensors, not the current pool.
    """
    return {**raw, "kvcache_num_blocks": num_blocks}


def dumps_config(raw: dict[str, Any]) -> bytes:
    """Serialize as optimum-rbln does: two-space indent, key order kept, UTF-8, trailing newline."""
    return (json.dumps(raw, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
