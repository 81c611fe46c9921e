"""The serving check as text: the detail panel's rows and headline, and the CLI's report built from them."""

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


def serving_text(s: ServingCheck) -> str:
    """What `rbln-studio-cli serving` prints: the detail panel's rows, two more settings, the headline, the notes."""
    lines = [f"{s.path}: vllm-rbln will set"]
    lines += [f"  {name:<23} {value}  ({source})" for name, value, source in serving_rows(s)]
    lines += [
        f"  {'max_num_batched_tokens':<23} {s.max_num_batched_tokens:,}",
        f"  {'devices per rank':<23} {s.num_devices}",
        serving_headline(s),
    ]
    lines += [f"error: {e}" for e in s.errors]
    lines += [f"warning: {w}" for w in s.warnings]
    return "\n".join(lines)
