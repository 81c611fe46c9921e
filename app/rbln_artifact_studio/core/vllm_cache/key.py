"""The folder name vllm-rbln 0.12.0 gives a compiled model in its cache, from the settings of a `vllm serve` run.

vllm-rbln (utils/optimum/converter/dispatch.py, `_generate_model_path_name`) names the folder
`<model id, / and : as _>_<first 16 hex digits of sha256(json.dumps(config_dict, sort_keys=True, default=str))>`.
The studio computes the same name itself (vllm-rbln is never imported here); the tests run vllm-rbln's own function
from its published wheel against this one.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

COMPILED_MODELS = "compiled_models"
"""The folder below VLLM_CACHE_ROOT holding one compiled artifact per key."""
MEGA_CACHE = "rbln"
"""The folder below VLLM_CACHE_ROOT holding the vLLM-native path's mega-cache bundles."""
RUNTIME_ONLY_KEYS = frozenset({"create_runtimes", "device", "kvcache_num_blocks"})
"""Additional-config keys vllm-rbln strips before hashing: they change how an artifact loads, not what it is."""
_HASH = re.compile(r"[0-9a-f]{16}")
KEY_NAMES = {  # the key's names as a user reads them: vLLM's flags
    "batch_size": "max_num_seqs",
    "max_model_len": "max_model_len",
    "block_size": "block_size",
    "num_devices": "num_devices",
    "dtype": "dtype",
    "max_num_batched_tokens": "max_num_batched_tokens",
    "memory_budget": "gpu_memory_utilization",
    "rbln_config": "additional config",
}


@dataclass(frozen=True)
class ServeKey:
    """What vllm-rbln 0.12.0 hashes, by its names (`batch_size` is --max-num-seqs, `memory_budget`
    --gpu-memory-utilization); rbln_config is the optimum-rbln overrides as given (stripped when hashed)."""

    model_name: str
    batch_size: int
    block_size: int | None
    max_model_len: int
    num_devices: int
    dtype: str
    max_num_batched_tokens: int | None
    memory_budget: float
    rbln_config: dict[str, Any] = field(default_factory=dict)

    def config_dict(self) -> dict[str, Any]:
        """The dict vllm-rbln hashes, key for key."""
        out: dict[str, Any] = {
            "model_name": self.model_name,
            "batch_size": self.batch_size,
            "block_size": self.block_size,
            "max_model_len": self.max_model_len,
            "num_devices": self.num_devices,
            "dtype": self.dtype,
            "max_num_batched_tokens": self.max_num_batched_tokens,
            "memory_budget": self.memory_budget,
        }
        stripped = strip_runtime_only(self.rbln_config) if self.rbln_config else {}
        if stripped:
            out["rbln_config"] = stripped
        return out

    @property
    def digest(self) -> str:
        text = json.dumps(self.config_dict(), sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def folder_name(self) -> str:
        return f"{sanitized(self.model_name)}_{self.digest}"


def strip_runtime_only(obj: Any) -> Any:
    """obj without RUNTIME_ONLY_KEYS at any depth (vllm-rbln's `_strip_runtime_only_keys`)."""
    if isinstance(obj, dict):
        return {k: strip_runtime_only(v) for k, v in obj.items() if k not in RUNTIME_ONLY_KEYS}
    if isinstance(obj, list):
        return [strip_runtime_only(item) for item in obj]
    return obj


def sanitized(model: str) -> str:
    """The model part of a cache folder's name."""
    return model.replace("/", "_").replace(":", "_")


def split_name(folder: str) -> tuple[str, str] | None:
    """(sanitized model, 16-hex key) of a cache folder's name; None for a name vllm-rbln never makes."""
    model, sep, digest = folder.rpartition("_")
    if not sep or not model or not _HASH.fullmatch(digest):
        return None
    return model, digest


BUDGET_GUESSES = tuple(round(i / 100, 2) for i in range(1, 101))
"""gpu_memory_utilization values tried when recovering a key: an artifact never records its budget."""


def model_guesses(sanitized_model: str) -> Iterator[str]:
    """Model ids whose folder name is sanitized_model: itself, then each _ read as the hub id's / ."""
    yield sanitized_model
    for i, c in enumerate(sanitized_model):
        if c == "_":
            yield sanitized_model[:i] + "/" + sanitized_model[i + 1 :]


def recover(
    digest: str, shown: ServeKey, models: Iterator[str] | list[str], budgets: tuple[float, ...]
) -> ServeKey | None:
    """The key whose digest is digest among shown with each model id of models, each budget and max_num_batched_tokens
    unset or shown's: what a folder's name proves about the fields its artifact does not record."""
    tokens = [None] if shown.max_num_batched_tokens is None else [None, shown.max_num_batched_tokens]
    for model in models:
        for budget in budgets:
            for mnbt in tokens:
                key = replace(shown, model_name=model, memory_budget=budget, max_num_batched_tokens=mnbt)
                if key.digest == digest:
                    return key
    return None
