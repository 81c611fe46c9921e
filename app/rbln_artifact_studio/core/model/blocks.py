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


def blocks_per_sequence(max_seq_len: int, block_size: int) -> int:
    """Blocks one full-length (max_seq_len) sequence occupies."""
    return max(1, -(-max_seq_len // max(block_size, 1)))


def full_sequences(num_blocks: int, max_seq_len: int, block_size: int, batch_size: int) -> int:
    """Full-length sequences that hold their KV cache at once: never more than the batch.

    vllm-rbln's rule: a pool that holds a full batch serves the batch; a smaller one gives up one block
    (vLLM's null block takes its place), so it serves (blocks - 1) // blocks-per-sequence.
    """
    per = blocks_per_sequence(max_seq_len, block_size)
    if num_blocks >= batch_size * per:
        return batch_size
    return max(num_blocks - 1, 0) // per


def usable_tokens(num_blocks: int, max_seq_len: int, block_size: int, batch_size: int) -> int:
    """Tokens the pool holds that the batch can use: blocks beyond the full pool are never used."""
    return min(max(num_blocks, 0), num_full_blocks(max_seq_len, block_size, batch_size)) * block_size
