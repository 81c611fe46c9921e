"""NPU catalog: DRAM, chiplets and system reserve per family, and the attention limits of each family."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from rbln_artifact_studio.core.errors import Fix, ShapeError, UnknownNpuError

GIB = 1 << 30
MIB = 1 << 20


class AttnImpl(str, Enum):
    """Attention implementation a decoder graph is compiled with."""

    EAGER = "eager"
    FLASH = "flash_attn"


@dataclass(frozen=True)
class NpuFamily:
    """Figures shared by every SKU of one NPU family."""

    name: str
    prefix: str
    dram_bytes: int
    chiplets: int
    reserve_per_chiplet: int
    eager_max_seq_len: int
    partition_min: int
    partition_max: int
    partition_default: int
    prefill_chunk_default: int

    @property
    def available_per_chiplet(self) -> int:
        """DRAM one chiplet offers after the system reserve."""
        return self.dram_bytes // self.chiplets - self.reserve_per_chiplet

    @property
    def available_per_npu(self) -> int:
        """DRAM one NPU offers to a compiled model (all chiplets, after the reserve)."""
        return self.available_per_chiplet * self.chiplets


ATOM = NpuFamily(
    name="ATOM",
    prefix="RBLN-CA",
    dram_bytes=16 * GIB,
    chiplets=1,
    reserve_per_chiplet=288 * MIB,
    eager_max_seq_len=32_768,
    partition_min=1_024,
    partition_max=32_768,
    partition_default=16_384,
    prefill_chunk_default=128,
)

REBEL100 = NpuFamily(
    name="Rebel100",
    prefix="RBLN-CR",
    dram_bytes=144 * GIB,
    chiplets=4,
    reserve_per_chiplet=1 * GIB,
    eager_max_seq_len=16_384,
    partition_min=1_024,
    partition_max=16_384,
    partition_default=8_192,
    prefill_chunk_default=512,
)

FAMILIES = (ATOM, REBEL100)

# Every SKU the documentation names, with its marketing name; other names with a known prefix still
# resolve to their family, as the toolchain does.
SKUS: dict[str, str] = {
    "RBLN-CA02": "ATOM",
    "RBLN-CA12": "ATOM+",
    "RBLN-CA22": "ATOM+",
    "RBLN-CA25": "ATOM-Max",
    "RBLN-CR03": "Rebel100 (pre-production)",
    "RBLN-CR13": "Rebel100",
}

DEFAULT_NPU = "RBLN-CA25"


@dataclass(frozen=True)
class Npu:
    """One NPU SKU resolved to its family."""

    name: str
    family: NpuFamily

    @property
    def label(self) -> str:
        """Name and marketing name, e.g. 'RBLN-CA25 (ATOM-Max)'."""
        marketing = SKUS.get(self.name)
        return f"{self.name} ({marketing})" if marketing else self.name

    @property
    def chiplets(self) -> int:
        return self.family.chiplets

    @property
    def available_per_npu(self) -> int:
        return self.family.available_per_npu

    @property
    def available_per_chiplet(self) -> int:
        return self.family.available_per_chiplet


def get_npu(name: str) -> Npu:
    """Resolve an NPU name such as 'RBLN-CA25' to its family, or raise UnknownNpuError."""
    known = _RESOLVED.get(name) if isinstance(name, str) else None
    if known is not None:  # a scan asks three times per artifact, for the same few names
        return known
    npu = _resolve(name)
    if len(_RESOLVED) < 1024:  # names come from files: a bounded memory of them
        _RESOLVED[name] = npu
    return npu


_RESOLVED: dict[str, Npu] = {}


def _resolve(name: str) -> Npu:
    normalized = name.strip().upper() if isinstance(name, str) else ""
    for family in FAMILIES:
        if normalized.startswith(family.prefix) and len(normalized) > len(family.prefix):
            return Npu(normalized, family)
    known = ", ".join(SKUS)
    raise UnknownNpuError(f"Unknown npu name: {name}. Known NPUs: {known}.")


def block_size_for(attn_impl: AttnImpl, max_seq_len: int, partition_len: int | None) -> int:
    """KV block size: the partition length under flash attention, max_seq_len under eager."""
    if attn_impl is AttnImpl.FLASH:
        if partition_len is None:
            raise ShapeError("flash attention needs a kvcache_partition_len.")
        return partition_len
    return max_seq_len


def default_attn_impl(family: NpuFamily, max_seq_len: int, partition_len: int | None) -> AttnImpl:
    """Flash when a partition is given or the sequence is too long for eager; eager otherwise."""
    if partition_len is not None or max_seq_len > family.eager_max_seq_len:
        return AttnImpl.FLASH
    return AttnImpl.EAGER


def valid_partitions(family: NpuFamily, max_seq_len: int) -> list[int]:
    """Partition lengths that flash attention accepts for this max_seq_len (powers of two)."""
    out = []
    p = family.partition_min
    while p <= family.partition_max:
        if max_seq_len % p == 0 and max_seq_len >= 2 * p:
            out.append(p)
        p *= 2
    return out


def fitting_partition(family: NpuFamily, max_seq_len: int) -> int | None:
    """The partition length to propose: the family default when it fits max_seq_len, else the largest that does
    below it (fewer, larger blocks), else any that fits; None when none does."""
    valid = valid_partitions(family, max_seq_len)
    if family.partition_default in valid:
        return family.partition_default
    below = [p for p in valid if p < family.partition_default]
    return max(below) if below else (min(valid) if valid else None)


def partition_fixes(family: NpuFamily, max_seq_len: int) -> tuple[Fix, ...]:
    return tuple(
        Fix(f"kvcache_partition_len {p:,}", (("kvcache_partition_len", p),))
        for p in valid_partitions(family, max_seq_len)
    )


def validate_shape(
    family: NpuFamily,
    *,
    batch_size: int,
    max_seq_len: int,
    attn_impl: AttnImpl,
    partition_len: int | None,
    prefill_chunk_size: int,
    num_devices: int = 1,
) -> None:
    """Raise ShapeError naming the limit when a compile shape is outside what the family supports."""
    for label, value in (("batch_size", batch_size), ("max_seq_len", max_seq_len), ("num_devices", num_devices)):
        if value < 1:
            raise ShapeError(f"{label} must be a positive integer, got {value}.")
    if prefill_chunk_size < 64 or prefill_chunk_size % 64:
        raise ShapeError(f"prefill_chunk_size must be a positive multiple of 64, got {prefill_chunk_size}.")
    if attn_impl is AttnImpl.EAGER:
        if max_seq_len > family.eager_max_seq_len:
            fixes = [Fix(f"max_seq_len {family.eager_max_seq_len:,}", (("max_seq_len", family.eager_max_seq_len),))]
            partition = fitting_partition(family, max_seq_len)
            if partition is not None:
                flash = (("attn_impl", AttnImpl.FLASH.value), ("kvcache_partition_len", partition))
                fixes.insert(0, Fix(f"flash_attn with kvcache_partition_len {partition:,}", flash))
            raise ShapeError(
                f"Eager attention on {family.name} needs max_seq_len <= {family.eager_max_seq_len:,}, "
                f"got {max_seq_len:,}. Use flash attention (set kvcache_partition_len) or a shorter max_seq_len.",
                fixes=tuple(fixes),
            )
        return
    if partition_len is None:
        raise ShapeError("flash attention needs a kvcache_partition_len.")
    if not family.partition_min <= partition_len <= family.partition_max:
        raise ShapeError(
            f"kvcache_partition_len on {family.name} must be in [{family.partition_min:,}, "
            f"{family.partition_max:,}], got {partition_len:,}."
        )
    if max_seq_len % partition_len or max_seq_len < 2 * partition_len:
        hint = valid_partitions(family, max_seq_len)
        suggestion = f" Partition lengths that fit: {', '.join(f'{p:,}' for p in hint)}." if hint else ""
        raise ShapeError(
            f"Flash attention needs max_seq_len to be a multiple of kvcache_partition_len and at least two "
            f"partitions: max_seq_len {max_seq_len:,}, kvcache_partition_len {partition_len:,}.{suggestion}",
            fixes=partition_fixes(family, max_seq_len),
        )


def place_label(node: int, chiplet: int, chiplets: int) -> str:
    """Where in the devices a figure sits: "NPU 0" on a one-chiplet NPU (ATOM), "NPU 0 / chiplet 2" on Rebel100."""
    return f"NPU {node}" if chiplets == 1 else f"NPU {node} / chiplet {chiplet}"
