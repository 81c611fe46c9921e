"""Serving check: the settings vllm-rbln derives from rbln_config.json, num_gpu_blocks, concurrency, warnings."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import compile_artifact

from rbln_artifact_studio.core.model.rbln_config import load_config
from rbln_artifact_studio.core.planning.serving import check_serving


def edit_config(folder: Path, **changes: object) -> None:
    path = folder / "rbln_config.json"
    raw = json.loads(path.read_text())
    for key, value in changes.items():
        if value is None:
            raw.pop(key, None)
        else:
            raw[key] = value
    path.write_text(json.dumps(raw, indent=2))


def test_blocks_below_one_sequence_per_slot_warn(cr13_artifact: Path) -> None:
    check = check_serving(load_config(cr13_artifact))  # 21 blocks, batch 8, 5 blocks per 40,960-token request
    assert (check.max_num_seqs, check.max_model_len, check.block_size) == (8, 40_960, 8_192)
    assert check.blocks_per_request == 5 and not check.full_batch_fits
    # A full batch would need 40 blocks: vLLM keeps (21 - 1) blocks plus its null block.
    assert check.num_gpu_blocks == 21
    assert check.concurrency == 4  # 20 usable blocks / 5 per request
    assert check.errors == []
    assert len(check.warnings) == 1
    assert "cannot hold one full-length request per batch slot" in check.warnings[0]
    assert "at most 4 requests" in check.warnings[0]


def test_full_pool_gets_the_null_block_and_full_concurrency(tmp_path: Path) -> None:
    folder = compile_artifact(tmp_path / "ca25x4-full", npu="RBLN-CA25", num_devices=4)  # unset budget: 40 blocks
    check = check_serving(load_config(folder))
    assert check.kvcache_num_blocks == 40 and check.full_batch_fits
    assert check.num_gpu_blocks == 41 and check.concurrency == 8
    assert (check.num_devices, check.max_num_batched_tokens) == (4, 40_960)
    assert check.warnings == [] and check.errors == []


def test_exactly_one_sequence_per_slot_is_the_boundary(cr13_artifact: Path) -> None:
    edit_config(cr13_artifact, kvcache_num_blocks=40)
    assert check_serving(load_config(cr13_artifact)).num_gpu_blocks == 41
    edit_config(cr13_artifact, kvcache_num_blocks=39)
    check = check_serving(load_config(cr13_artifact))
    assert (check.num_gpu_blocks, check.concurrency) == (39, 7) and check.warnings
    edit_config(cr13_artifact, kvcache_num_blocks=5)  # one request's worth, minus the block vLLM does not get
    check = check_serving(load_config(cr13_artifact))
    assert check.concurrency == 0 and any("cannot hold even one full-length request" in e for e in check.errors)


def test_eager_block_is_the_whole_sequence(tiny_model: Path, tmp_path: Path) -> None:
    folder = compile_artifact(
        tmp_path / "eager", model_id=str(tiny_model), npu="RBLN-CA25", batch_size=4, max_seq_len=4096,
        kvcache_partition_len=None, attn_impl="eager",
    )  # fmt: skip
    check = check_serving(load_config(folder))
    # Under eager attention the floor and the full pool are both batch_size: a full batch always fits.
    assert (check.block_size, check.blocks_per_request, check.kvcache_num_blocks) == (4096, 1, 4)
    assert (check.num_gpu_blocks, check.concurrency, check.warnings) == (5, 4, [])
    edit_config(folder, kvcache_num_blocks=3)  # below the floor: 2 usable blocks for 4 slots
    check = check_serving(load_config(folder))
    assert (check.num_gpu_blocks, check.concurrency) == (3, 2) and check.warnings


def test_block_size_rules_of_vllm_rbln(cr13_artifact: Path) -> None:
    edit_config(cr13_artifact, kvcache_block_size=None)  # only the partition: vllm-rbln uses it
    check = check_serving(load_config(cr13_artifact))
    assert check.block_size == 8_192 and check.errors == []
    edit_config(cr13_artifact, kvcache_block_size=16_384)
    check = check_serving(load_config(cr13_artifact))
    assert any("must equal kvcache_block_size" in e for e in check.errors)
    edit_config(cr13_artifact, kvcache_block_size=None, kvcache_partition_len=None, attn_impl="eager")
    assert any("kvcache_block_size must be specified" in e for e in check_serving(load_config(cr13_artifact)).errors)


def test_missing_batch_size_is_an_error(cr13_artifact: Path) -> None:
    edit_config(cr13_artifact, batch_size=None)
    check = check_serving(load_config(cr13_artifact))
    assert check.errors == ["batch_size must be specified in rbln_config.json (vllm-rbln asserts it)."]


def test_cli_serving_json(run_cli, cr13_artifact: Path) -> None:
    out = run_cli("serving", cr13_artifact, "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    expected = {"max_num_seqs": 8, "max_model_len": 40_960, "block_size": 8_192, "num_gpu_blocks": 21, "concurrency": 4}
    assert {k: data[k] for k in expected} == expected
    assert data["full_batch_fits"] is False and len(data["warnings"]) == 1 and data["errors"] == []
    text = run_cli("serving", cr13_artifact)
    assert text.returncode == 0 and "num_gpu_blocks          21" in text.stdout
    assert "warning: kvcache_num_blocks=21 cannot hold one full-length request per batch slot" in text.stdout


def test_cli_serving_refused_artifact_exits_1(run_cli, cr13_artifact: Path) -> None:
    edit_config(cr13_artifact, kvcache_block_size=16_384)
    out = run_cli("serving", cr13_artifact, "--json")
    assert out.returncode == 1 and json.loads(out.stdout)["errors"]
    missing = run_cli("serving", cr13_artifact.parent / "nowhere")
    assert missing.returncode == 1 and missing.stderr.startswith("error: ") and "Traceback" not in missing.stderr
