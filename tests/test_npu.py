"""NPU catalog figures (DESIGN section 2) and attention-limit validation."""

from __future__ import annotations

from typing import Any

import pytest

from rbln_artifact_studio.core.errors import ShapeError, UnknownNpuError
from rbln_artifact_studio.core.model.npu import (
    ATOM,
    REBEL100,
    SKUS,
    AttnImpl,
    default_attn_impl,
    get_npu,
    validate_shape,
)


@pytest.mark.parametrize("name", ["RBLN-CA02", "RBLN-CA12", "RBLN-CA22", "RBLN-CA25"])
def test_atom_skus(name: str) -> None:
    npu = get_npu(name)
    assert npu.family is ATOM
    assert npu.chiplets == 1
    assert npu.family.dram_bytes == 16 * 2**30
    assert npu.family.reserve_per_chiplet == 288 * 2**20
    assert npu.available_per_chiplet == 16_877_879_296
    assert npu.available_per_npu == 16_877_879_296


@pytest.mark.parametrize("name", ["RBLN-CR13", "RBLN-CR03"])
def test_rebel100_skus(name: str) -> None:
    npu = get_npu(name)
    assert npu.family is REBEL100
    assert npu.chiplets == 4
    assert npu.family.dram_bytes == 144 * 2**30
    assert npu.available_per_chiplet == 35 * 2**30
    assert npu.available_per_npu == 150_323_855_360


def test_every_documented_sku_is_in_the_catalog() -> None:
    assert set(SKUS) == {"RBLN-CA02", "RBLN-CA12", "RBLN-CA22", "RBLN-CA25", "RBLN-CR03", "RBLN-CR13"}
    assert get_npu("RBLN-CA25").label == "RBLN-CA25 (ATOM-Max)"


@pytest.mark.parametrize("name", ["RBLN-XX11", "H100", "", "RBLN-CA"])
def test_unknown_prefix_is_an_error(name: str) -> None:
    with pytest.raises(UnknownNpuError, match=f"Unknown npu name: {name}"):
        get_npu(name)


def test_names_are_case_insensitive() -> None:
    assert get_npu("rbln-cr13").name == "RBLN-CR13"


def _shape(family=ATOM, **kw):
    args: dict[str, Any] = {
        "batch_size": 1,
        "max_seq_len": 32_768,
        "attn_impl": AttnImpl.FLASH,
        "partition_len": 16_384,
        "prefill_chunk_size": 128,
    }
    args.update(kw)
    validate_shape(family, **args)


def test_valid_shapes_pass() -> None:
    _shape()
    _shape(REBEL100, max_seq_len=40_960, partition_len=8_192, prefill_chunk_size=512)
    _shape(attn_impl=AttnImpl.EAGER, partition_len=None, max_seq_len=32_768)


@pytest.mark.parametrize(
    ("family", "kw", "needle"),
    [
        (ATOM, {"attn_impl": AttnImpl.EAGER, "partition_len": None, "max_seq_len": 32_769}, "max_seq_len <= 32,768"),
        (
            REBEL100,
            {"attn_impl": AttnImpl.EAGER, "partition_len": None, "max_seq_len": 16_385},
            "max_seq_len <= 16,384",
        ),
        (ATOM, {"partition_len": 512, "max_seq_len": 4096}, "[1,024, 32,768]"),
        (REBEL100, {"partition_len": 32_768, "max_seq_len": 65_536}, "[1,024, 16,384]"),
        (ATOM, {"partition_len": 16_384, "max_seq_len": 40_960}, "multiple of kvcache_partition_len"),
        (ATOM, {"partition_len": 16_384, "max_seq_len": 16_384}, "at least two"),
        (ATOM, {"prefill_chunk_size": 100}, "multiple of 64"),
        (ATOM, {"prefill_chunk_size": 0}, "multiple of 64"),
        (ATOM, {"batch_size": 0}, "batch_size must be a positive"),
    ],
)
def test_limits_are_enforced_with_the_limit_named(family, kw, needle) -> None:
    with pytest.raises(ShapeError) as err:
        _shape(family, **kw)
    assert needle in str(err.value)


def test_partition_error_suggests_partitions_that_fit() -> None:
    with pytest.raises(ShapeError, match=r"Partition lengths that fit: 1,024, 2,048, 4,096, 8,192"):
        _shape(partition_len=16_384, max_seq_len=40_960)


def test_default_attention() -> None:
    assert default_attn_impl(ATOM, 4096, None) is AttnImpl.EAGER
    assert default_attn_impl(ATOM, 40_960, None) is AttnImpl.FLASH
    assert default_attn_impl(REBEL100, 8192, 4096) is AttnImpl.FLASH
