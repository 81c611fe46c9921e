"""Qt-free display data for the detail panel's serving check: the rows vLLM settings and the headline."""

from __future__ import annotations

from rbln_artifact_studio.core.planning.serving import ServingCheck


def serving_rows(s: ServingCheck) -> list[tuple[str, str, str]]:
    """(vLLM setting, value, where vllm-rbln takes it from) for each setting the check derives."""
    null = "" if s.full_batch_fits else " - 1"
    return [
        ("max_num_seqs", str(s.max_num_seqs), "batch_size"),
        ("max_model_len", f"{s.max_model_len:,}", "max_seq_len"),
        ("block_size", f"{s.block_size:,}", "kvcache_block_size"),
        ("num_gpu_blocks", str(s.num_gpu_blocks), f"kvcache_num_blocks {s.kvcache_num_blocks}{null} + 1 null block"),
        ("blocks per request", str(s.blocks_per_request), "max_model_len / block_size, rounded up"),
    ]


def serving_headline(s: ServingCheck) -> str:
    """'Concurrency: 4 of 8 requests at the full 40,960 tokens (5 blocks each).'"""
    if not s.loads:
        return f"Concurrency: 0 of {s.max_num_seqs} requests: the artifact is invalid and will not load."
    return (
        f"Concurrency: {s.concurrency} of {s.max_num_seqs} requests at the full {s.max_model_len:,} tokens "
        f"({s.blocks_per_request} blocks each)."
    )
