"""How a model's KV cache splits over the NPUs of a tensor-parallel compile (one formula for every figure)."""

from __future__ import annotations


def kv_heads_per_npu(kv_heads: int, num_devices: int, chiplets: int = 1) -> int:
    """KV heads each NPU holds: the heads split over every chiplet of every device, rounded up per chiplet.

    Tensor parallel wider than the KV heads replicates them (16 devices, 8 heads: one head per device, not
    half of one); a count that does not divide the heads gives each chiplet the larger share, as the
    compiler's allocation tables do (3 devices, 8 heads: 3 heads per device).
    """
    shards = max(num_devices, 1) * max(chiplets, 1)
    return max(chiplets, 1) * -(-max(kv_heads, 1) // shards)


def kv_bytes_per_npu(total: int, kv_heads: int | None, num_devices: int, chiplets: int = 1) -> int:
    """Bytes of KV cache on each NPU, from the whole model's (unaligned) KV bytes over kv_heads heads."""
    if not kv_heads:  # no head count known: an even split is all that can be said
        return total // max(num_devices, 1)
    return total * kv_heads_per_npu(kv_heads, num_devices, chiplets) // kv_heads


def uneven_split(kv_heads: int | None, num_devices: int) -> bool:
    """True when the devices neither divide the KV heads nor replicate whole heads evenly."""
    if not kv_heads or num_devices <= 1:
        return False
    return kv_heads % num_devices != 0 and num_devices % kv_heads != 0
