"""A `vllm serve` command line read as vllm-rbln 0.12.0 reads it for its cache key: vLLM's and vllm-rbln's defaults
where a flag is absent (each said as assumed), `--additional-config` and `--rbln-*` JSON included."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.vllm_cache.key import ServeKey

DEFAULT_MAX_NUM_SEQS = 1  # vllm-rbln's RBLN_DEFAULT_MAX_NUM_SEQS (upstream vLLM: 256)
DEFAULT_GPU_MEMORY_UTILIZATION = 0.93  # vllm-rbln's RBLN_DEFAULT_GPU_MEMORY_UTILIZATION
UPSTREAM_GPU_MEMORY_UTILIZATION = 0.92  # vLLM's default: vllm-rbln raises it to 0.93, even when typed
DEFAULT_BLOCK_SIZE = 16  # vLLM's cache_config.block_size when --block-size is absent (the key reads it raw)
AUTO_FOR_FLOAT32 = "torch.bfloat16"  # vLLM's Platform.supported_dtypes[0]: vllm-rbln keeps upstream's order
DTYPES = {
    "half": "torch.float16",
    "float16": "torch.float16",
    "bfloat16": "torch.bfloat16",
    "float": "torch.float32",
    "float32": "torch.float32",
}
_VALUE_FLAGS = {
    "model": "model",
    "max-num-seqs": "max_num_seqs",
    "block-size": "block_size",
    "max-model-len": "max_model_len",
    "dtype": "dtype",
    "max-num-batched-tokens": "max_num_batched_tokens",
    "gpu-memory-utilization": "gpu_memory_utilization",
    "additional-config": "additional_config",
    "rbln-num-devices-per-local-rank": "num_devices",
    "rbln-optimum-overrides": "optimum_overrides",
    "rbln-config": "optimum_overrides",  # the additional_config key's old name, as some deployments still spell it
    "tensor-parallel-size": "tensor_parallel_size",
}
_SHORT = {"-tp": "tensor-parallel-size"}
_ADDITIONAL_FIELDS = frozenset(  # vllm-rbln 0.12's OptimumRBLNConfig fields, and the two old names it still takes
    {"num_devices_per_local_rank", "use_custom_sampler", "sub_block_size", "optimum_overrides",
     "user_max_num_batched_tokens", "num_blocks_override", "attn_block_size", "image_prefill_chunk_size",
     "cached_model_path", "num_blocks_synced", "rbln_config", "prefix_block_size"}
)  # fmt: skip
_DEVICE_VARIABLES = ("VLLM_RBLN_NUM_DEVICES_PER_LOCAL_RANK", "VLLM_RBLN_TP_SIZE")


@dataclass
class ServeCommand:
    """The key a command hits, what was assumed to get it, and what a compile on a miss would be given."""

    key: ServeKey
    assumed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def overrides(self) -> dict[str, Any]:
        """The optimum-rbln settings the user gave (kvcache_num_blocks, npu, attn_impl …): a compile on a miss uses
        them, the key leaves the runtime-only ones out."""
        return self.key.rbln_config


def _json_object(text: str, flag: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise StudioError(f"{flag} is not valid JSON ({exc}). Quote the JSON object as one argument.") from None
    if not isinstance(value, dict):
        raise StudioError(f"{flag} must be a JSON object, got {text!r}.")
    return value


def _int(text: str, flag: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise StudioError(f"--{flag} takes a whole number, got {text!r}.") from None


_SUFFIXES = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def _tokens(text: str, flag: str) -> int:
    """A token count as vLLM reads it (its human_readable_int): 8192, 32k (32,000), 32K (32,768), 25.6k."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmMgGtT])", text.strip())
    if not match:
        if text.strip().lower() in ("auto", "-1"):
            raise StudioError(
                f"--{flag} {text}: vLLM then picks the longest length that fits the device, which the studio cannot "
                f"know; give --{flag} as a number."
            )
        return _int(text, flag)
    number, suffix = match.groups()
    if suffix.isupper() and "." in number:
        raise StudioError(
            f"--{flag} {text}: vLLM takes no decimals with a binary suffix; write {number}{suffix.lower()}."
        )
    return int(float(number) * _SUFFIXES[suffix])


def _split(argv: list[str]) -> tuple[dict[str, str], list[str], dict[str, str]]:
    """(flag values by our name, positional arguments, NAME=VALUE words before the command)."""
    env: dict[str, str] = {}
    while argv and "=" in argv[0] and not argv[0].startswith("-") and argv[0].split("=", 1)[0].isidentifier():
        name, value = argv.pop(0).split("=", 1)
        env[name] = value
    if argv and argv[0] == "env":
        return _split(argv[1:])
    while argv and argv[0] in ("vllm", "serve"):  # the command's own words: the model comes next
        argv = argv[1:]
    values: dict[str, str] = {}
    positional: list[str] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        i += 1
        if not word.startswith("-") or word == "-":
            positional.append(word)
            continue
        name, has_value, value = word.partition("=")
        name = _SHORT.get(name, name.lstrip("-").replace("_", "-"))
        if not has_value:
            if i < len(argv) and not argv[i].startswith("--"):
                value = argv[i]
                if name in _VALUE_FLAGS:
                    i += 1
                elif not argv[i].startswith("-") and positional:
                    i += 1  # another flag's value (--port 8000), once the model is known: not a positional
            elif name in _VALUE_FLAGS:
                raise StudioError(f"--{name} needs a value. Give it as --{name} VALUE.")
        if name in _VALUE_FLAGS:
            values[_VALUE_FLAGS[name]] = value
    return values, positional, env


def read_model_info(model: str) -> tuple[int, str] | None:
    """(max_position_embeddings, torch_dtype) of a model's config.json (a local folder or a bundled preset), None
    when the studio cannot read one here."""
    # deferred: modelspec brings pydantic (~0.1 s of CPU); a cache's listing asks only while `vllm serve` runs here
    from rbln_artifact_studio.core.model.modelspec import resolve_model

    try:
        resolved = resolve_model(model)
    except StudioError:
        return None
    return resolved.spec.max_position_embeddings, str(
        resolved.raw.get("torch_dtype") or resolved.raw.get("dtype") or ""
    )


def parse_serve(command: list[str] | str, model_info: Any = read_model_info) -> ServeCommand:
    """The cache key of `vllm serve MODEL [flags]` (words, or one line). model_info(model) -> (max_position_embeddings,
    torch_dtype) or None: what vLLM reads from the model's config.json when --max-model-len or --dtype is absent."""
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    values, positional, env = _split(argv)
    model = values.get("model") or (positional[0] if positional else "")
    if not model:
        raise StudioError("No model in the command: give it as `vllm serve MODEL [flags]`.")
    out = ServeCommand(ServeKey(model, 0, None, 0, 1, "", None, 0.0))
    assumed, warnings = out.assumed, out.warnings

    additional = (
        _json_object(values["additional_config"], "--additional-config") if "additional_config" in values else {}
    )
    if "rbln_config" in additional:  # vllm-rbln 0.12 renames it, with a warning
        additional = {k: v for k, v in additional.items() if k != "rbln_config"} | {
            "optimum_overrides": additional["rbln_config"]
        }
    if "optimum_overrides" in values:
        additional["optimum_overrides"] = _json_object(values["optimum_overrides"], "--rbln-optimum-overrides")
    unknown = sorted(set(additional) - _ADDITIONAL_FIELDS)
    if unknown:
        warnings.append(
            f"vllm-rbln refuses additional_config keys that are none of its fields: {', '.join(unknown)} (optimum-rbln "
            "settings go under optimum_overrides)."
        )
    if "--rbln-config" in argv or any(w.startswith("--rbln-config=") for w in argv):
        warnings.append("vllm-rbln 0.12 has no --rbln-config flag (read here as --rbln-optimum-overrides): use that.")
    overrides = additional.get("optimum_overrides") or {}
    if not isinstance(overrides, dict):
        raise StudioError("optimum_overrides must be a JSON object of optimum-rbln settings.")

    if "num_devices" in values:
        num_devices = _int(values["num_devices"], "rbln-num-devices-per-local-rank")
    elif "num_devices_per_local_rank" in additional:
        num_devices = int(additional["num_devices_per_local_rank"])
    elif any(v in env for v in _DEVICE_VARIABLES):
        name = next(v for v in _DEVICE_VARIABLES if v in env)
        num_devices = _int(env[name], name)
    else:
        num_devices = 1
        assumed.append("num_devices 1 (vllm-rbln's default: no --rbln-num-devices-per-local-rank)")
    if values.get("tensor_parallel_size", "1") != "1":
        warnings.append(
            "vllm-rbln's optimum path refuses --tensor-parallel-size other than 1: use --rbln-num-devices-per-local-rank."
        )

    if "max_num_seqs" in values:
        batch = _int(values["max_num_seqs"], "max-num-seqs")
    else:
        batch = DEFAULT_MAX_NUM_SEQS
        assumed.append(f"max_num_seqs {batch} (vllm-rbln's default)")

    info = None
    if "max_model_len" in values:
        max_len = _tokens(values["max_model_len"], "max-model-len")
    else:
        info = model_info(model) if model_info else None
        if info is None:
            raise StudioError(
                f"--max-model-len is absent and the studio cannot read {model}'s config.json here to know vLLM's "
                "default: give --max-model-len."
            )
        max_len = int(info[0])
        assumed.append(f"max_model_len {max_len} (the model's max_position_embeddings)")

    if "block_size" in values:
        block: int | None = _int(values["block_size"], "block-size")
    else:
        block = DEFAULT_BLOCK_SIZE
        assumed.append(f"block_size {block} (vLLM's default: no --block-size)")
        if "kvcache_block_size" not in overrides:
            warnings.append(
                "vllm-rbln refuses to start an optimum-rbln model without --block-size or kvcache_block_size in "
                "the optimum overrides."
            )

    dtype_text = values.get("dtype", "auto")
    if dtype_text != "auto":
        if dtype_text not in DTYPES:
            raise StudioError(f"--dtype {dtype_text!r} is not one vLLM takes: auto, {', '.join(DTYPES)}.")
        dtype = DTYPES[dtype_text]
    else:
        info = info or (model_info(model) if model_info else None)
        config_dtype = str(info[1]) if info and info[1] else "float32"  # vLLM reads a config without one as float32
        dtype = DTYPES.get(config_dtype, f"torch.{config_dtype}")
        where = "the model's config.json" if info else "not read: the model's config.json is not here"
        if dtype == "torch.float32":  # vLLM's auto downcasts a float32 checkpoint to the platform's first dtype
            dtype, where = AUTO_FOR_FLOAT32, f"{where}; vLLM runs a float32 checkpoint in bfloat16 under auto"
        assumed.append(f"dtype {dtype} (--dtype auto; {where})")

    mnbt = (
        _tokens(values["max_num_batched_tokens"], "max-num-batched-tokens")
        if "max_num_batched_tokens" in values
        else None
    )

    if "gpu_memory_utilization" in values:
        try:
            budget = float(values["gpu_memory_utilization"])
        except ValueError:
            raise StudioError(
                f"--gpu-memory-utilization takes a fraction, got {values['gpu_memory_utilization']!r}."
            ) from None
        if budget == UPSTREAM_GPU_MEMORY_UTILIZATION:
            budget = DEFAULT_GPU_MEMORY_UTILIZATION
            assumed.append(
                f"gpu_memory_utilization {budget}: vllm-rbln raises vLLM's default {UPSTREAM_GPU_MEMORY_UTILIZATION} "
                "to its own, even when typed"
            )
    else:
        budget = DEFAULT_GPU_MEMORY_UTILIZATION
        assumed.append(f"gpu_memory_utilization {budget} (vllm-rbln's default)")

    out.key = ServeKey(model, batch, block, max_len, num_devices, dtype, mnbt, budget, dict(overrides))
    return out
