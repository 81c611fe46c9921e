"""Block-count rules: the full pool, the floor, and what a block count means in tokens."""

from __future__ import annotations

from rbln_artifact_studio.core.model.npu import AttnImpl


def num_full_blocks(max_seq_len: int, block_size: int, batch_size: int) -> int:
    """Blocks that give every batch slot a whole max_seq_len sequence."""
    return (max_seq_len // block_size) * batch_size


def num_min_blocks(max_seq_len: int, block_size: int, batch_size: int, attn_impl: AttnImpl) -> int:
    """The floor: one full sequence (plus the spare block) or one block per slot, whichever is larger."""
    full = num_full_blocks(max_seq_len, block_size, batch_size)
    if attn_impl is AttnImpl.EAGER:
        return batch_size
    return min(max(max_seq_len // block_size, batch_size) + 1, full)


def full_sequences(num_blocks: int, max_seq_len: int, block_size: int) -> int:
    """How many max_seq_len sequences the pool holds at once."""
    return num_blocks // max(1, max_seq_len // block_size)
