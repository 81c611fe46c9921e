"""rbln_config.json: old and new key names, legacy rejection, derived figures, lossless rewrites."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rbln_artifact_studio.core.errors import ConfigError, LegacyConfigError
from rbln_artifact_studio.core.model.npu import AttnImpl
from rbln_artifact_studio.core.model.rbln_config import dumps_config, load_config, parse_config, with_block_count


def meta(i: int, blocks: int = 40, **kw: object) -> dict[str, object]:
    return {
        "name": f"past_key_values_{i}",
        "layer_index": i // 2,
        "shape": [blocks, 8, 8192, 128],
        "layer_type": "full_attention",
        "is_auto": True,
        "dtype": "bfloat16",
        **kw,
    }


def base(**kw: object) -> dict[str, object]:
    raw: dict[str, object] = {
        "cls_name": "RBLNQwen3ForCausalLMConfig",
        "batch_size": 8,
        "max_seq_len": 40960,
        "kvcache_num_blocks": 21,
        "kvcache_block_size": 8192,
        "kvcache_partition_len": 8192,
        "attn_impl": "flash_attn",
        "npu": "RBLN-CR13",
        "num_devices": 1,
        "cache_metas": [meta(i) for i in range(72)],
        "some_future_key": {"nested": [1, 2.5, None, "x"]},
    }
    raw.update(kw)
    return raw


def parse(raw: dict[str, object]):
    return parse_config(raw, Path("rbln_config.json")).model


def test_derived_figures() -> None:
    c = parse(base())
    assert (c.num_min_blocks, c.num_full_blocks, c.block_size, c.attn) == (9, 40, 8192, AttnImpl.FLASH)
    assert c.kv_bytes_per_block == int(1.125 * 2**30)


def test_old_key_names_read_the_same() -> None:
    raw = base()
    raw["kvcache_metas"] = raw.pop("cache_metas")
    raw["tensor_parallel_size"] = raw.pop("num_devices")
    c = parse(raw)
    assert c.num_devices == 1 and c.kv_bytes_per_block == int(1.125 * 2**30)


def test_both_names_must_agree() -> None:
    with pytest.raises(ConfigError, match="tensor_parallel_size"):
        parse(base(tensor_parallel_size=4))
    assert parse(base(tensor_parallel_size=1)).num_devices == 1


def test_npu_and_devices_from_compile_cfgs() -> None:
    raw = base()
    del raw["npu"], raw["num_devices"]
    raw["_compile_cfgs"] = [{"compiled_model_name": "prefill", "npu": "RBLN-CA25", "num_devices": 4}]
    c = parse(raw)
    assert (c.npu, c.num_devices) == ("RBLN-CA25", 4)


def test_legacy_meta_format_is_rejected_clearly() -> None:
    with pytest.raises(LegacyConfigError, match=r"legacy `_meta` format.*recompile"):
        parse({"_meta": {"version": "0.1.0", "cls": "RBLNLlamaForCausalLM"}, "max_seq_len": 4096})


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"batch_size": "8"}, "batch_size"),
        ({"batch_size": True}, "batch_size"),
        ({"max_seq_len": -1}, "max_seq_len"),
        ({"kvcache_num_blocks": 10**30}, "kvcache_num_blocks"),
        ({"attn_impl": "paged"}, "attn_impl"),
        ({"cache_metas": [{"name": "x", "shape": [1, 2]}]}, "shape"),
        ({"cache_metas": [meta(0, dtype="complex256")]}, "dtype"),
    ],
)
def test_bad_values_are_config_errors(change: dict[str, object], needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        parse(base(**change))


def test_missing_required_key() -> None:
    raw = base()
    del raw["kvcache_num_blocks"]
    with pytest.raises(ConfigError, match="kvcache_num_blocks"):
        parse(raw)


def test_eager_floor_is_batch_and_block_is_max_seq_len() -> None:
    c = parse(base(attn_impl="eager", kvcache_partition_len=None, kvcache_block_size=None, max_seq_len=4096))
    assert (c.block_size, c.num_full_blocks, c.num_min_blocks) == (4096, 8, 8)


def test_sliding_tensors_are_fixed() -> None:
    metas = [meta(0), meta(1, blocks=8, layer_type="sliding_attention", is_auto=False)]
    c = parse(base(cache_metas=metas))
    assert c.kv_bytes_per_block == 8 * 8192 * 128 * 2
    assert c.kv_fixed_bytes == 8 * 8 * 8192 * 128 * 2


def test_rewrite_keeps_every_other_key(tmp_path: Path) -> None:
    raw = base()
    (tmp_path / "rbln_config.json").write_text(json.dumps(raw, indent=2))
    loaded = load_config(tmp_path)
    new = json.loads(dumps_config(with_block_count(loaded.raw, 14)))
    assert new.pop("kvcache_num_blocks") == 14
    raw.pop("kvcache_num_blocks")
    assert new == raw
    assert list(json.loads(dumps_config(loaded.raw))) == list(base())  # key order kept


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"\xff\xfe\x00garbage", "not UTF-8"),
        (b'{"batch_size": 8,', "not valid JSON"),
        (b"[1, 2]", "expected a JSON object"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    ],
    ids=["binary", "truncated", "array", "deep"],
)
def test_unreadable_files(tmp_path: Path, content: bytes, needle: str) -> None:
    (tmp_path / "rbln_config.json").write_bytes(content)
    with pytest.raises(ConfigError, match=needle):
        load_config(tmp_path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a compiled artifact"):
        load_config(tmp_path)
