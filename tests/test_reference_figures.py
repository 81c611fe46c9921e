"""DESIGN section 8 reproduced by the built-in compiler: 21, 14, 40, the floor errors, batch 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import QWEN3_8B, compile_artifact

from rbln_artifact_studio.core.errors import InsufficientMemoryError
from rbln_artifact_studio.core.model.modelspec import resolve_model
from rbln_artifact_studio.core.simulator.compiler import CompileRequest, plan_compile
from rbln_artifact_studio.core.simulator.memory_model import kv_tensor_bytes_per_shard


def plan(**kw: object):
    return plan_compile(CompileRequest(**{**QWEN3_8B, **kw}))  # type: ignore[arg-type]


def test_qwen3_8b_kv_per_token_and_block() -> None:
    spec = resolve_model("Qwen/Qwen3-8B").spec
    per_token = spec.num_hidden_layers * 2 * spec.kv_heads * spec.dim_per_head * spec.dtype_bytes
    assert per_token == 144 * 1024
    assert per_token * 8192 == 1.125 * 2**30


@pytest.mark.parametrize(
    ("npu", "devices", "budget", "blocks"),
    [("RBLN-CR13", 1, 0.3, 21), ("RBLN-CA25", 4, 0.5, 14), ("RBLN-CA25", 4, None, 40)],
)
def test_resolved_blocks(npu: str, devices: int, budget: float | None, blocks: int) -> None:
    p = plan(npu=npu, num_devices=devices, memory_budget=budget)
    assert (p.floor, p.full) == (9, 40)
    assert p.num_blocks == blocks


def test_unset_budget_puts_11_25_gib_of_kv_on_each_npu() -> None:
    p = plan(npu="RBLN-CA25", num_devices=4)
    assert p.layout.kv_bytes_per_npu(40) == [int(11.25 * 2**30)] * 4


def test_written_artifact_records_the_resolved_count(tmp_path: Path) -> None:
    out = compile_artifact(tmp_path / "rbln-Qwen3-8B", npu="RBLN-CR13", memory_budget=0.3)
    config = json.loads((out / "rbln_config.json").read_text())
    assert config["kvcache_num_blocks"] == 21
    assert config["cls_name"] == "RBLNQwen3ForCausalLMConfig"
    assert sorted(p.name for p in out.iterdir()) == [
        "config.json",
        "decoder_batch_8.rbln",
        "prefill.rbln",
        "rbln_config.json",
    ]


@pytest.mark.parametrize(
    ("npu", "devices", "budget", "fits"),
    [("RBLN-CR13", 1, 0.195, 8), ("RBLN-CA25", 4, 0.31, 3)],
)
def test_too_low_budget_is_the_floor_error(npu: str, devices: int, budget: float, fits: int) -> None:
    with pytest.raises(InsufficientMemoryError) as err:
        plan(npu=npu, num_devices=devices, memory_budget=budget)
    assert err.value.message == (
        f"Insufficient memory for the required KV cache: only {fits} blocks can be allocated, but at least 9 "
        "blocks are required. Consider reducing `max_seq_len` or `batch_size` (currently 8) to lower the "
        "memory requirement."
    )


def test_floor_error_leaves_nothing_on_disk(tmp_path: Path) -> None:
    with pytest.raises(InsufficientMemoryError):
        compile_artifact(tmp_path / "out", npu="RBLN-CR13", memory_budget=0.195)
    assert list(tmp_path.iterdir()) == []


def test_batch_1_has_no_room_below_the_full_requirement() -> None:
    p = plan(npu="RBLN-CR13", batch_size=1, memory_budget=0.3)
    assert (p.floor, p.full, p.num_blocks) == (5, 5, 5)
    needed = p.layout.required_per_chiplet(5) * 4
    just_below = (needed - 4) / p.shape.npu.available_per_npu
    with pytest.raises(InsufficientMemoryError, match=r"only \d blocks can be allocated, but at least 5"):
        plan(npu="RBLN-CR13", batch_size=1, memory_budget=just_below)


def test_kv_tensor_per_chiplet_on_rebel100_is_a_quarter_of_the_heads() -> None:
    p = plan(npu="RBLN-CR13", memory_budget=0.3)
    spec = p.model.spec
    assert kv_tensor_bytes_per_shard(spec, p.shape, 0, 1) == 2 * 8192 * 128 * 2  # 2 of 8 KV heads per chiplet


def test_failure_explanation_offers_numbers() -> None:
    with pytest.raises(InsufficientMemoryError) as err:
        plan(npu="RBLN-CR13", memory_budget=0.195)
    hint = err.value.hint or ""
    assert "8 blocks fit, the floor is 9 and the full pool 40" in hint
    assert "batch_size 7" in hint
    budget = plan(npu="RBLN-CR13", memory_budget=float(hint.split("at least ")[1].split(" ")[0]))
    assert budget.num_blocks >= 9
