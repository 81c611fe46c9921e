"""A `vllm serve` command line read for the cache key: where the model is, other flags, what is refused."""

from __future__ import annotations

import re

import pytest

from rbln_artifact_studio.core.errors import StudioError
from rbln_artifact_studio.core.vllm_cache.command import parse_serve

BASE = "--max-model-len 8192 --block-size 4096 --dtype bfloat16"


def test_the_same_settings_written_differently_name_the_same_folder() -> None:
    forms = [
        f"vllm serve Qwen/Qwen3-8B {BASE} --rbln-num-devices-per-local-rank 2 --port 8000",
        f"VLLM_RBLN_NUM_DEVICES_PER_LOCAL_RANK=2 vllm serve --trust-remote-code Qwen/Qwen3-8B {BASE}",
        "vllm serve --model=Qwen/Qwen3-8B --max_model_len=8192 --block-size=4096 --dtype=bfloat16 "
        "--additional-config '{\"num_devices_per_local_rank\": 2}' --host 0.0.0.0",
        f"serve Qwen/Qwen3-8B {BASE} --enable-prefix-caching --rbln-num-devices-per-local-rank=2",
    ]
    names = {parse_serve(form).key.folder_name for form in forms}
    assert len(names) == 1 and names.pop().startswith("Qwen_Qwen3-8B_")


def test_max_model_len_and_dtype_come_from_the_model_s_config_when_absent() -> None:
    parsed = parse_serve("vllm serve Qwen/Qwen3-0.6B --block-size 4096")  # a bundled preset
    assert parsed.key.max_model_len == 40_960 and parsed.key.dtype == "torch.bfloat16"
    assert any(a.startswith("max_model_len 40960") for a in parsed.assumed)


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("vllm serve", "No model"),
        ("vllm serve /nowhere/model --block-size 16", "--max-model-len is absent"),
        (f"vllm serve m {BASE} --additional-config '{{not json'", "--additional-config is not valid JSON"),
        (f"vllm serve m {BASE} --max-num-seqs eight", "--max-num-seqs takes a whole number"),
        (f"vllm serve m {BASE} --dtype int4", "--dtype 'int4' is not one vLLM takes"),
        (f"vllm serve m {BASE} --max-num-seqs", "--max-num-seqs needs a value"),
    ],
)
def test_a_command_that_cannot_be_read_is_refused_with_what_to_do(line: str, said: str) -> None:
    with pytest.raises(StudioError, match="^" + re.escape(said)):
        parse_serve(line)


def test_tensor_parallel_and_a_missing_block_size_are_warned() -> None:
    parsed = parse_serve("vllm serve m --max-model-len 8192 --tensor-parallel-size 2")
    assert any("--tensor-parallel-size" in w for w in parsed.warnings)
    assert any("--block-size" in w for w in parsed.warnings)
    assert parsed.key.block_size == 16 and any(a.startswith("block_size 16") for a in parsed.assumed)
