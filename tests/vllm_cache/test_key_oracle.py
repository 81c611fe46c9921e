"""The folder a `vllm serve` command hits, as the studio computes it, against vllm-rbln 0.12.0's own key function."""

from __future__ import annotations

import json
import random
import shlex
from pathlib import Path
from typing import Any

import pytest
from conftest import TINY_MODEL

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.location import LocalFolder
from rbln_artifact_studio.core.simulator.compiler import plan_compile, write_artifact
from rbln_artifact_studio.core.vllm_cache.command import parse_serve
from rbln_artifact_studio.core.vllm_cache.lookup import compile_request, lookup
from rbln_artifact_studio.places.vllm_cache import read_cache
from vllm_cache.oracle import key_function, vllm_config

# vLLM's --dtype names and the torch dtypes they become (vllm/config/model.py's _STR_DTYPE_TO_TORCH_DTYPE)
VLLM_DTYPES = {"half": "torch.float16", "float16": "torch.float16", "bfloat16": "torch.bfloat16",
               "float": "torch.float32", "float32": "torch.float32"}  # fmt: skip
MODELS = ["Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B-Instruct", "org/model:rev2", "/srv/models/llama_local", "plain"]
RUNTIME_ONLY = {"kvcache_num_blocks": 12, "device": [0, 1], "create_runtimes": False}
SETTINGS = {"attn_impl": "flash_attn", "kvcache_partition_len": 4096, "npu": "RBLN-CA25", "prefill_chunk_size": 256}


def _overrides(rng: random.Random) -> dict[str, Any]:
    chosen = {k: v for k, v in {**RUNTIME_ONLY, **SETTINGS}.items() if rng.random() < 0.3}
    if rng.random() < 0.25:  # nested sections: a runtime-only key inside one is stripped too
        chosen["language_model"] = {"device": 0, "batch_size": rng.choice([1, 2])}
    return chosen


def random_serve(rng: random.Random, model: str | None = None) -> tuple[list[str], dict[str, Any]]:
    """A `vllm serve` command with random settings, and the VllmConfig fields vllm-rbln reads from it."""
    c: dict[str, Any] = {
        "model": model or rng.choice(MODELS),
        "max_num_seqs": rng.choice([1, 2, 4, 8, 16, 64]),
        "max_model_len": rng.choice([4096, 8192, 16384, 40960]),
        "dtype_flag": rng.choice(sorted(VLLM_DTYPES)),
        "gpu_memory_utilization": rng.choice([round(rng.uniform(0.05, 1.0), rng.choice([2, 3])), 0.5, 1.0]),
        "num_devices": rng.choice([1, 2, 4, 8]),
        "max_num_batched_tokens": rng.choice([None, 128, 512, 8192]),
        "overrides": _overrides(rng),
    }
    if c["gpu_memory_utilization"] == 0.92:  # vllm-rbln's platform raises vLLM's default to 0.93 (tested apart)
        c["gpu_memory_utilization"] = 0.91
    c["block_size"] = rng.choice([1024, 4096, c["max_model_len"]])
    words = ["vllm", "serve", c["model"], "--max-num-seqs", str(c["max_num_seqs"])]
    words += [f"--max-model-len={c['max_model_len']}", "--block-size", str(c["block_size"]), "--dtype", c["dtype_flag"]]
    words += [
        "--gpu-memory-utilization",
        repr(c["gpu_memory_utilization"]),
        "--port",
        "8000",
        "--enable-prefix-caching",
    ]
    if c["max_num_batched_tokens"] is not None:
        words += ["--max-num-batched-tokens", str(c["max_num_batched_tokens"])]
    style = rng.choice(["flags", "additional", "old-name"])
    if style == "flags":
        words += ["--rbln-num-devices-per-local-rank", str(c["num_devices"])]
        if c["overrides"]:
            words += ["--rbln-optimum-overrides", json.dumps(c["overrides"])]
    else:
        name = "optimum_overrides" if style == "additional" else "rbln_config"
        extra = {"num_devices_per_local_rank": c["num_devices"], name: c["overrides"]}
        words += ["--additional-config", json.dumps(extra)]
    return words, c


def oracle_name(name_of: Any, c: dict[str, Any]) -> str:
    return str(
        name_of(
            vllm_config(
                c["model"],
                c["max_num_seqs"],
                c["block_size"],
                c["max_model_len"],
                VLLM_DTYPES[c["dtype_flag"]],
                c["gpu_memory_utilization"],
                c["num_devices"],
                c["overrides"],
                c["max_num_batched_tokens"],
            )
        )
    )


def test_forty_random_serve_commands_name_vllm_rbln_s_own_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    name_of = key_function(monkeypatch)
    rng = random.Random(41)
    seen = set()
    for _ in range(40):
        words, c = random_serve(rng)
        ours = parse_serve(words).key.folder_name
        assert ours == oracle_name(name_of, c), shlex.join(words)
        seen.add(ours)
    assert len(seen) == 40  # forty different keys: nothing collapsed the settings
    # the same command given as one line of text
    assert parse_serve(shlex.join(words)).key.folder_name == ours


def test_runtime_only_overrides_do_not_change_the_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    name_of = key_function(monkeypatch)
    _, c = random_serve(random.Random(7), "Qwen/Qwen3-8B")
    plain = {**c, "overrides": {}}
    runtime = {**c, "overrides": dict(RUNTIME_ONLY)}
    assert oracle_name(name_of, plain) == oracle_name(name_of, runtime)
    cmd = ["vllm", "serve", "Qwen/Qwen3-8B", "--max-model-len", "8192", "--block-size", "4096"]
    assert (
        parse_serve(cmd).key.folder_name
        == parse_serve([*cmd, "--rbln-optimum-overrides", json.dumps(RUNTIME_ONLY)]).key.folder_name
    )


def test_absent_flags_take_vllm_rbln_s_defaults_and_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    name_of = key_function(monkeypatch)
    parsed = parse_serve("vllm serve Qwen/Qwen3-8B --max-model-len 8192 --block-size 4096 --dtype bfloat16")
    c = {"model": "Qwen/Qwen3-8B", "max_num_seqs": 1, "block_size": 4096, "max_model_len": 8192,
         "dtype_flag": "bfloat16", "gpu_memory_utilization": 0.93, "num_devices": 1, "overrides": {},
         "max_num_batched_tokens": None}  # fmt: skip
    assert parsed.key.folder_name == oracle_name(name_of, c)
    said = " ".join(parsed.assumed)
    assert "max_num_seqs 1" in said and "gpu_memory_utilization 0.93" in said and "num_devices 1" in said
    typed = parse_serve("vllm serve Qwen/Qwen3-8B --max-model-len 8192 --block-size 4096 --dtype bfloat16 "
                        "--gpu-memory-utilization 0.92")  # fmt: skip
    assert typed.key.folder_name == parsed.key.folder_name  # vllm-rbln raises vLLM's 0.92 to 0.93


def test_dtype_auto_of_a_float32_checkpoint_hashes_what_vllm_runs_it_in(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    name_of = key_function(monkeypatch)
    model = tmp_path / "fp32-model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({**TINY_MODEL, "torch_dtype": "float32"}))
    parsed = parse_serve(f"vllm serve {model} --max-model-len 8192 --block-size 4096")
    c = {"model": str(model), "max_num_seqs": 1, "block_size": 4096, "max_model_len": 8192, "dtype_flag": "bfloat16",
         "gpu_memory_utilization": 0.93, "num_devices": 1, "overrides": {}, "max_num_batched_tokens": None}  # fmt: skip
    assert parsed.key.folder_name == oracle_name(name_of, c)  # vLLM's auto: a float32 checkpoint runs in bfloat16
    assert any(a.startswith("dtype torch.bfloat16") and "float32" in a for a in parsed.assumed)
    typed = parse_serve(f"vllm serve {model} --max-model-len 8192 --block-size 4096 --dtype float32")
    assert typed.key.folder_name == oracle_name(name_of, {**c, "dtype_flag": "float32"})


def _compilable(rng: random.Random, model: Path) -> tuple[list[str], dict[str, Any]]:
    """A random command the tiny model compiles for (its max_position_embeddings is 8192; 2 KV heads)."""
    while True:
        words, c = random_serve(rng, str(model))
        if c["max_model_len"] <= 8192 and c["num_devices"] <= 2 and c["max_num_batched_tokens"] in (None, 128, 512):
            if c["max_num_batched_tokens"] and c["max_num_batched_tokens"] > c["block_size"]:
                continue
            shaping = {"kvcache_num_blocks", "npu", "attn_impl", "kvcache_partition_len", "prefill_chunk_size"}
            if not set(c["overrides"]) & (shaping | {"language_model"}):
                return words, c


def test_lookup_hits_what_the_studio_compiled_into_vllm_rbln_s_folders(monkeypatch: pytest.MonkeyPatch,
                                                                        tmp_path: Path, tiny_model: Path) -> None:  # fmt: skip
    name_of = key_function(monkeypatch)
    rng = random.Random(2041)
    root = tmp_path / "vllm"
    commands: list[tuple[list[str], str]] = []
    while len(commands) < 6:
        words, c = _compilable(rng, tiny_model)
        try:
            plan = plan_compile(compile_request(parse_serve(words)))
        except StudioError:  # a random shape the NPU cannot hold: vllm-rbln could not compile it either
            continue
        folder = root / "compiled_models" / oracle_name(name_of, c)  # named by vllm-rbln's own function
        write_artifact(plan, folder)
        commands.append((words, folder.name))
    entries = read_cache(LocalFolder(root)).entries
    assert {e.status for e in entries} == {"ok"}
    for words, name in commands:
        found = lookup(parse_serve(words), entries)
        assert (found.result, found.entry and found.entry.name) == ("hit", name), shlex.join(words)
