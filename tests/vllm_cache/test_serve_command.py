"""A `vllm serve` command line read for the cache key: where the model is, other flags, what is refused."""

from __future__ import annotations

import re
from pathlib import Path

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


@pytest.mark.parametrize(("typed", "tokens"), [("32k", 32_000), ("32K", 32_768), ("25.6k", 25_600), ("40960", 40_960)])
def test_token_counts_are_read_as_vllm_reads_them(typed: str, tokens: int) -> None:
    parsed = parse_serve(f"vllm serve m --max-model-len {typed} --max-num-batched-tokens {typed} --block-size 4096")
    assert parsed.key.max_model_len == tokens and parsed.key.max_num_batched_tokens == tokens


@pytest.mark.parametrize(
    ("typed", "said"), [("auto", "--max-model-len auto: vLLM then picks"), ("1.5K", "--max-model-len 1.5K: vLLM takes")]
)
def test_a_length_the_studio_cannot_know_is_refused_with_what_to_do(typed: str, said: str) -> None:
    with pytest.raises(StudioError, match="^" + re.escape(said)):
        parse_serve(f"vllm serve m --max-model-len {typed} --block-size 4096")


def test_misplaced_flags_are_one_line_saying_to_use_dashes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from rbln_artifact_studio.cli.main import main

    (tmp_path / "compiled_models").mkdir()
    assert main(["vllm-cache", "lookup", str(tmp_path), "m", "--max-model-len", "8192"]) == 1
    err = capsys.readouterr().err
    assert err == (
        "error: Put the serve command after --: vllm-cache lookup [ROOT] -- vllm serve MODEL [flags] (not "
        "understood: m --max-model-len 8192).\n"
    )
    assert main(["vllm-cache", "lookup", str(tmp_path), "--", f"vllm serve m {BASE}"]) == 1
    assert "miss: " in capsys.readouterr().out
    python = ["python", "-m", "vllm.entrypoints.openai.api_server", "--model", "m", *BASE.split()]
    assert main(["vllm-cache", "lookup", str(tmp_path), *python]) == 1  # no --: the command starts at python
    assert "miss: " in capsys.readouterr().out


def test_what_vllm_rbln_would_refuse_to_start_with_is_warned() -> None:
    top_level = parse_serve(f"vllm serve m {BASE} --additional-config '{{\"kvcache_num_blocks\": 64}}'")
    assert any("refuses additional_config keys" in w and "kvcache_num_blocks" in w for w in top_level.warnings)
    old_flag = parse_serve(f'vllm serve m {BASE} --rbln-config \'{{"npu": "RBLN-CA22"}}\'')
    assert any("no --rbln-config flag" in w for w in old_flag.warnings)
    assert old_flag.key.rbln_config == {"npu": "RBLN-CA22"}  # still read, as the overrides
    fine = parse_serve(f'vllm serve m {BASE} --additional-config \'{{"rbln_config": {{"npu": "RBLN-CA22"}}}}\'')
    assert fine.warnings == [] and fine.key.folder_name == old_flag.key.folder_name
