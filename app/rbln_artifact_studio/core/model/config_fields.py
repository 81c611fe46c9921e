"""The keys of rbln_config.json we use and the figures derived from them (ConfigFields), with their limits and
dtype sizes: what the lean reader, the pydantic model and the loader (rbln_config.py) all build on."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, overload

from rbln_artifact_studio.core.errors import ConfigError, UnknownNpuError
from rbln_artifact_studio.core.model.blocks import num_full_blocks, num_min_blocks
from rbln_artifact_studio.core.model.kv_split import kv_bytes_per_npu
from rbln_artifact_studio.core.model.npu import AttnImpl, get_npu
from rbln_artifact_studio.core.storage.jsonfile import MAX_BLOCK_COUNT

if TYPE_CHECKING:
    from typing_extensions import Self

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
_MAX_DIM = MAX_BLOCK_COUNT
MAX_BLOCKS = _MAX_DIM  # the largest kvcache_num_blocks a file may record (a resize or compile must not exceed it)
_ATTN_OF = {a.value: a for a in AttnImpl}  # a dict lookup: AttnImpl(value) is an Enum call, asked thrice a scan row
_ATTN_VALUES = frozenset(_ATTN_OF)


# Every accepted spelling and its size; the readers' validators check the name (no Python call per tensor: scans
# read thousands of files).
_SIZE_OF = {**DTYPE_BYTES, **{f"torch.{k}": v for k, v in DTYPE_BYTES.items()}}


def dtype_size(dtype: str) -> int:
    """Bytes per element of a dtype name as HF and optimum-rbln spell it ('bfloat16', 'torch.float16')."""
    key = dtype.removeprefix("torch.").lower()
    if key not in DTYPE_BYTES:
        raise ConfigError(f"Unknown dtype {dtype!r}; expected one of {', '.join(sorted(DTYPE_BYTES))}.")
    return DTYPE_BYTES[key]


FULL_ATTENTION = "full_attention"
DEFAULT_DTYPE = "bfloat16"
# The cache kinds optimum-rbln 0.12.0 knows (cache_utils.py); any other is refused there and unknown here.
KNOWN_LAYER_TYPES = frozenset({FULL_ATTENTION, "sliding_attention", "linear_attention"})


def is_resizable(layer_type: str, is_auto: bool) -> bool:
    """Only full-attention tensors the compiler sized automatically grow and shrink with the block count."""
    return layer_type == FULL_ATTENTION and is_auto


def block_bytes(shape: list[int], dtype: str) -> int:
    """Bytes of one block of a KV tensor of shape [num_blocks, num_kv_heads, block_size, head_dim]."""
    _, heads, block, head_dim = shape
    return heads * block * head_dim * _SIZE_OF[dtype]


class CacheTensor(Protocol):
    """One cache_metas entry as either reader gives it (config_model.CacheMeta, config_reader.CacheMetaEntry)."""

    @property
    def name(self) -> str: ...
    @property
    def shape(self) -> Sequence[int]: ...  # [num_blocks, num_kv_heads, block_size, head_dim]
    @property
    def layer_type(self) -> str: ...
    @property
    def is_auto(self) -> bool: ...
    @property
    def dtype(self) -> str: ...


@dataclass(frozen=True)
class KvScan:
    """What cache_metas says about the KV cache, from one pass over its tensors."""

    per_block: int  # bytes one block adds across the resizable tensors
    fixed: int  # bytes of the tensors that do not scale with the block count
    unknown_kinds: frozenset[str]  # cache kinds (layer_type) not in KNOWN_LAYER_TYPES
    resizable: frozenset[str]  # names of the resizable tensors
    kv_heads: int | None = None  # the most KV heads of any tensor (shape[1]); None without tensors


def kv_scan(metas: Iterable[CacheTensor]) -> KvScan:
    """One loop without calls over cache_metas (a scan runs it over 72 tensors per file); the rules of
    is_resizable and block_bytes."""
    per_block = fixed = 0
    unknown: set[str] = set()
    resizable: list[str] = []
    size_of = _SIZE_OF
    most_heads: int | None = None
    for m in metas:
        blocks, heads, block, head_dim = m.shape
        if most_heads is None or heads > most_heads:
            most_heads = heads
        one_block = heads * block * head_dim * size_of[m.dtype]
        layer_type = m.layer_type
        if layer_type == FULL_ATTENTION and m.is_auto:
            per_block += one_block
            resizable.append(m.name)
        else:
            if layer_type not in KNOWN_LAYER_TYPES:
                unknown.add(layer_type)
            fixed += blocks * one_block
    return KvScan(per_block, fixed, frozenset(unknown), frozenset(resizable), most_heads)


_T = TypeVar("_T")


class computed_once(Generic[_T]):
    """functools.cached_property without Python 3.11's lock around the first computation, which cost a scan row
    ~1 µs per figure; a config is read and asked in one thread."""

    def __init__(self, func: Callable[[Any], _T]) -> None:
        self._func = func
        self._name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> computed_once[_T]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> _T: ...

    def __get__(self, obj: object, owner: type | None = None) -> _T | computed_once[_T]:
        if obj is None:
            return self
        value = obj.__dict__[self._name] = self._func(obj)  # the instance's own from now on (a non-data descriptor)
        return value


def config_check(attn_impl: str | None, block_size: int, max_seq_len: int) -> str | None:
    """What makes validated fields contradict each other (both readers refuse such a file), or None."""
    if attn_impl is not None and attn_impl not in _ATTN_VALUES:
        return f"attn_impl must be 'eager' or 'flash_attn', got {attn_impl!r}"
    if block_size > max_seq_len:
        return f"kvcache_block_size ({block_size}) is larger than max_seq_len ({max_seq_len})"
    return None


class ConfigFields:
    """The validated top-level keys and the figures derived from them: what the lean reader's ConfigRecord and the
    pydantic model (config_model.RblnConfig) both are."""

    if TYPE_CHECKING:  # the fields, set by each reader (declared here for type checkers only: pydantic's are its own)
        cls_name: str | None
        batch_size: int
        max_seq_len: int
        kvcache_num_blocks: int
        kvcache_block_size: int | None
        kvcache_partition_len: int | None
        attn_impl: str | None
        npu: str | None
        num_devices: int
        prefill_chunk_size: int | None
        dtype: str | None
        decoder_batch_sizes: list[int] | None

        def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
            """A copy with some fields replaced (not validated again)."""

    @property
    def attn(self) -> AttnImpl:
        """The attention implementation, inferred from the block size when the file does not say."""
        if self.attn_impl is not None:
            return _ATTN_OF.get(self.attn_impl) or AttnImpl(self.attn_impl)
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

    def _cache_meta_entries(self) -> Iterable[CacheTensor] | None:
        """The validated cache_metas entries, None when the file has none."""
        raise NotImplementedError

    @computed_once
    def _kv_scan(self) -> KvScan | None:
        entries = self._cache_meta_entries()
        return None if entries is None else kv_scan(entries)

    @property
    def unknown_cache_kinds(self) -> list[str]:
        """Cache kinds (layer_type) in cache_metas that this tool and optimum-rbln 0.12.0 do not know."""
        return [] if self._kv_scan is None else sorted(self._kv_scan.unknown_kinds)

    @property
    def kv_unknown_reason(self) -> str | None:
        """Why the KV figures are unknown (None when they are known)."""
        if self.unknown_cache_kinds:
            kinds = ", ".join(self.unknown_cache_kinds)
            return (
                f"cache_metas holds a cache kind this tool does not know ({kinds}); its KV figures are unknown "
                'rather than a guess. optimum-rbln 0.12.0 refuses it too ("Unknown cache `layer_type`").'
            )
        if self._kv_scan is None:
            return "rbln_config.json has no cache_metas; KV bytes are unknown."
        return None

    @property
    def _kv(self) -> tuple[int, int] | None:
        scan = self._kv_scan
        return None if scan is None or scan.unknown_kinds else (scan.per_block, scan.fixed)

    @property
    def kv_bytes_per_block(self) -> int | None:
        """Bytes one block adds across the whole model (all devices), or None without cache metadata."""
        return None if self._kv is None else self._kv[0]

    @property
    def kv_fixed_bytes(self) -> int:
        """Bytes of KV tensors that do not scale with the block count (sliding-window caches, ...)."""
        return 0 if self._kv is None else self._kv[1]

    @property
    def kv_fixed_reason(self) -> str | None:
        """Why some KV tensors keep their size whatever kvcache_num_blocks says, or None when all of them scale."""
        reasons: dict[str, int] = {}
        for m in self._cache_meta_entries() or ():
            layer_type = m.layer_type
            if layer_type == FULL_ATTENTION and m.is_auto:
                continue
            why = "with is_auto false, sized by the compiler" if layer_type == FULL_ATTENTION else f"of {layer_type}"
            reasons[why] = reasons.get(why, 0) + 1
        if not reasons:
            return None
        return ", ".join(f"{n} {'tensor' if n == 1 else 'tensors'} {why}" for why, n in reasons.items())

    def kv_bytes(self, num_blocks: int) -> int | None:
        """Unaligned KV cache bytes of the whole model at a block count, or None when unknown."""
        per_block = self.kv_bytes_per_block
        return None if per_block is None else per_block * num_blocks + self.kv_fixed_bytes

    @property
    def resizable_names(self) -> frozenset[str]:
        """Names of the KV tensors that grow and shrink with the block count."""
        return frozenset() if self._kv_scan is None else self._kv_scan.resizable

    @property
    def kv_heads(self) -> int | None:
        """The model's KV heads (shape[1] of its cache tensors), or None without cache metadata."""
        scan = self._kv_scan
        return None if scan is None else scan.kv_heads

    def kv_bytes_per_npu(self, num_blocks: int) -> int | None:
        """Unaligned KV cache bytes on each NPU at a block count (kv_split's formula), or None when unknown."""
        total = self.kv_bytes(max(num_blocks, 0))
        if total is None:
            return None
        try:
            chiplets = get_npu(self.npu).chiplets if self.npu else 1
        except UnknownNpuError:
            chiplets = 1
        return kv_bytes_per_npu(total, self.kv_heads, self.num_devices, chiplets)


def _once(prop: Callable[[ConfigFields], _T]) -> computed_once[_T]:
    """ConfigFields' property, worked out once per record (ConfigRecord's figures: its file never changes)."""
    getter = prop.fget if isinstance(prop, property) else None  # a property, seen from the class
    assert getter is not None
    return computed_once(getter)
