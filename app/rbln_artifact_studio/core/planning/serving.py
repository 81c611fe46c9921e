"""Serving check: the vLLM settings vllm-rbln derives from an artifact's rbln_config.json, and what they mean."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from rbln_artifact_studio.core.model.blocks import blocks_per_sequence, full_sequences
from rbln_artifact_studio.core.status import Problem, Status

if TYPE_CHECKING:
    from rbln_artifact_studio.core.model.rbln_config import LoadedConfig


REQUIRED_KEYS = ("kvcache_num_blocks", "batch_size", "max_seq_len")


@dataclass(frozen=True)
class ServingCheck:
    """vllm-rbln's view of a compiled artifact (prefix caching off, no num_gpu_blocks override)."""

    path: str
    max_num_seqs: int  # scheduler_config.max_num_seqs = batch_size
    max_model_len: int  # model_config.max_model_len = max_seq_len
    block_size: int  # cache_config.block_size = kvcache_block_size (or kvcache_partition_len)
    kvcache_num_blocks: int
    num_devices: int
    errors: list[str] = field(default_factory=list)  # vllm-rbln refuses to start
    warnings: list[str] = field(default_factory=list)
    loads: bool = True  # False when the artifact itself is invalid (damaged, inconsistent, over the DRAM)

    @property
    def blocks_per_request(self) -> int:
        """Blocks one full-length request occupies."""
        return blocks_per_sequence(self.max_model_len, self.block_size)

    @property
    def full_batch_fits(self) -> bool:
        """vllm-rbln's is_full_block_available: one full-length request per batch slot fits."""
        return self.kvcache_num_blocks >= self.max_num_seqs * self.blocks_per_request

    @property
    def num_gpu_blocks(self) -> int:
        """The blocks vLLM manages, its null block included (one compiled block less when a full batch does not fit)."""
        usable = self.kvcache_num_blocks if self.full_batch_fits else self.kvcache_num_blocks - 1
        return max(usable, 0) + 1

    @property
    def concurrency(self) -> int:
        """Full-length requests that can hold their KV cache at the same time (the null block holds none)."""
        if not self.loads:
            return 0
        return full_sequences(self.kvcache_num_blocks, self.max_model_len, self.block_size, self.max_num_seqs)

    @property
    def max_num_batched_tokens(self) -> int:
        return max(self.max_model_len, self.max_num_seqs)

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "max_num_seqs": self.max_num_seqs,
            "max_model_len": self.max_model_len,
            "block_size": self.block_size,
            "num_gpu_blocks": self.num_gpu_blocks,
            "kvcache_num_blocks": self.kvcache_num_blocks,
            "blocks_per_request": self.blocks_per_request,
            "full_batch_fits": self.full_batch_fits,
            "concurrency": self.concurrency,
            "max_num_batched_tokens": self.max_num_batched_tokens,
            "num_devices": self.num_devices,
            "errors": self.errors,
            "warnings": self.warnings,
            "loads": self.loads,
        }


def _block_size(loaded: LoadedConfig, errors: list[str]) -> int:
    raw, c = loaded.raw, loaded.model
    block, partition = raw.get("kvcache_block_size"), raw.get("kvcache_partition_len")
    if block is not None and partition is not None and block != partition:
        errors.append(
            f"kvcache_partition_len ({partition}) must equal kvcache_block_size ({block}) for vllm-rbln; "
            "it refuses this rbln_config.json."
        )
    if block is None and partition is None:
        errors.append("kvcache_block_size must be specified in rbln_config.json; vllm-rbln refuses the artifact.")
    return c.kvcache_block_size or c.kvcache_partition_len or c.block_size


def check_serving(loaded: LoadedConfig) -> ServingCheck:
    """What `vllm serve <artifact>` will set, and whether the KV blocks hold a full batch of full-length requests."""
    c = loaded.model
    errors = [
        f"{key} must be specified in rbln_config.json (vllm-rbln asserts it)."
        for key in REQUIRED_KEYS
        if key not in loaded.raw
    ]
    block_size = _block_size(loaded, errors)
    check = ServingCheck(
        path=str(loaded.path.parent),
        max_num_seqs=c.batch_size,
        max_model_len=c.max_seq_len,
        block_size=block_size,
        kvcache_num_blocks=c.kvcache_num_blocks,
        num_devices=c.num_devices,
        errors=errors,
    )
    per_request = check.blocks_per_request
    needed = check.max_num_seqs * per_request
    if c.kvcache_num_blocks <= 0:
        errors.append(f"kvcache_num_blocks is {c.kvcache_num_blocks}; vLLM gets no KV cache at all.")
    elif check.concurrency == 0:
        errors.append(
            f"kvcache_num_blocks={c.kvcache_num_blocks} cannot hold even one full-length request "
            f"({per_request} blocks of {block_size:,} tokens for {check.max_model_len:,} tokens): "
            "vLLM will refuse to start."
        )
    elif not check.full_batch_fits:
        check.warnings.append(
            f"kvcache_num_blocks={c.kvcache_num_blocks} cannot hold one full-length request per batch slot "
            f"(max_num_seqs {check.max_num_seqs} x {per_request} blocks = {needed}): vLLM gets "
            f"num_gpu_blocks={check.num_gpu_blocks} and runs at most {check.concurrency} requests of "
            f"{check.max_model_len:,} tokens at once; more long requests wait or are preempted."
        )
    if c.kvcache_num_blocks > needed:
        check.warnings.append(
            f"kvcache_num_blocks={c.kvcache_num_blocks} is above the {needed} blocks a full batch can use; "
            "the excess is never used."
        )
    return check


def check_artifact_serving(loaded: LoadedConfig, problems: Iterable[Problem]) -> ServingCheck:
    """check_serving, agreeing with the artifact's verdict: an invalid artifact serves nothing, and says why."""
    check = check_serving(loaded)
    invalid = [p.message for p in problems if p.severity is Status.INVALID]
    if invalid:
        check.errors[:0] = [f"The artifact is invalid, so vLLM cannot load it: {m}" for m in invalid]
        return replace(check, loads=False)
    return check
