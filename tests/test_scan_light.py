"""The scan's light reader (read_view from bytes) gives the same rows and errors as the full RblnConfig path."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rbln_artifact_studio.core.model.rbln_config as rbln_config
from rbln_artifact_studio.core.fleet.scan import summarize
from rbln_artifact_studio.core.model.rbln_config import read_view

CONFIG = "rbln_config.json"


def full_row(folder: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """The row as the full model computes it (the light reader switched off)."""
    with monkeypatch.context() as m:
        m.setattr(rbln_config, "read_view", lambda data: None)
        return summarize(folder).to_json()


def assert_same_row(folder: Path, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Both paths agree; returns whether the light reader took the file (False: it deferred to the full path)."""
    light = summarize(folder).to_json()
    assert light == full_row(folder, monkeypatch)
    return read_view((folder / CONFIG).read_bytes()) is not None


def edit(folder: Path, change: Callable[[dict[str, Any]], object]) -> None:
    raw = json.loads((folder / CONFIG).read_text())
    change(raw)
    (folder / CONFIG).write_text(json.dumps(raw, indent=2))


def _npu_only_in_compile_cfgs(raw: dict[str, Any]) -> None:
    del raw["npu"], raw["num_devices"]


def _old_names(raw: dict[str, Any]) -> None:
    raw["tensor_parallel_size"] = raw.pop("num_devices")
    raw["kvcache_metas"] = raw.pop("cache_metas")


def _old_names_disagree(raw: dict[str, Any]) -> None:
    raw["tensor_parallel_size"] = 4


def _sliding(raw: dict[str, Any]) -> None:
    for meta in raw["cache_metas"][::3]:
        meta.update(layer_type="sliding_attention", is_auto=False)


def _fp8_defaults(raw: dict[str, Any]) -> None:
    for meta in raw["cache_metas"]:
        meta["dtype"] = "torch.float8_e4m3fn"
        del meta["layer_type"], meta["is_auto"]


# (change, taken by the light reader?)
VARIANTS: dict[str, tuple[Callable[[dict[str, Any]], object], bool]] = {
    "as compiled": (lambda raw: None, True),
    "npu only in _compile_cfgs": (_npu_only_in_compile_cfgs, True),
    "above the full pool": (lambda raw: raw.update(kvcache_num_blocks=41), True),
    "below the floor": (lambda raw: raw.update(kvcache_num_blocks=8), True),
    "zero blocks": (lambda raw: raw.update(kvcache_num_blocks=0), True),
    "unknown npu": (lambda raw: raw.update(npu="RBLN-XX1"), True),
    "no cache_metas": (lambda raw: raw.pop("cache_metas"), True),
    "sliding tensors": (_sliding, True),
    "fp8, defaults": (_fp8_defaults, True),
    "eager, no block size": (
        lambda raw: raw.update(attn_impl="eager", kvcache_block_size=None, kvcache_partition_len=None),
        True,
    ),
    "graph promised twice": (lambda raw: raw["_compile_cfgs"].append(dict(raw["_compile_cfgs"][0])), True),
    "graph name not a string": (lambda raw: raw["_compile_cfgs"][1].update(compiled_model_name=7), True),
    "older key names": (_old_names, False),
    "older and newer names disagree": (_old_names_disagree, False),
    "tensor_parallel_size in _compile_cfgs": (
        lambda raw: [c.update(tensor_parallel_size=c.pop("num_devices")) for c in raw["_compile_cfgs"]],
        False,
    ),
    "legacy _meta": (lambda raw: raw.update(_meta={"version": "0.1"}), False),
    "block larger than max_seq_len": (lambda raw: raw.update(kvcache_block_size=81920), False),
    "bad attn_impl": (lambda raw: raw.update(attn_impl="paged"), False),
    "string batch": (lambda raw: raw.update(batch_size="8"), False),
    "bool count": (lambda raw: raw.update(kvcache_num_blocks=True), False),
    "float count": (lambda raw: raw.update(kvcache_num_blocks=21.0), False),
    "huge count": (lambda raw: raw.update(kvcache_num_blocks=10**30), False),
    "short shape": (lambda raw: raw["cache_metas"][5].update(shape=[40, 8, 8192]), False),
    "bad dtype": (lambda raw: raw["cache_metas"][0].update(dtype="complex64"), False),
    "npu number in _compile_cfgs": (
        lambda raw: [raw.pop("npu"), raw.pop("num_devices"), raw["_compile_cfgs"][0].update(npu=5)],
        False,
    ),
    "_compile_cfgs not a list": (lambda raw: raw.update(_compile_cfgs={"0": {"npu": "RBLN-CA25"}}), False),
    "missing max_seq_len": (lambda raw: raw.pop("max_seq_len"), False),
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_variants_give_the_same_row_on_both_paths(
    variant: str, cr13_artifact: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    change, light = VARIANTS[variant]
    edit(cr13_artifact, change)
    assert assert_same_row(cr13_artifact, monkeypatch) is light


@pytest.mark.parametrize(
    "content",
    [
        b"\xef\xbb\xbf{}",
        b"\xff\xfe garbage",
        b'{"max_seq_len": 4096,',
        b"[1, 2]",
        b"[" * 300 + b"]" * 300,
        b'{"max_seq_len": 8192, "kvcache_num_blocks": 1, "x": ' + b"[" * 300 + b"]" * 300 + b"}",
        b'{"max_seq_len": 8192, "kvcache_num_blocks": 1, "x": "\\ud800"}',
        b'{"max_seq_len": 8192, "kvcache_num_blocks": 1, "x": NaN}',
        b'{"max_seq_len": 8192, "kvcache_num_blocks": 1, "kvcache_num_blocks": 2}',
        b'{"max_seq_len": 8192, "kvcache_num_blocks": 1, "x": "\xff"}',
        b'{"max_seq_len": 8192, "kvcache_num_blocks": 1} trailing',
    ],
    ids=["bom", "binary", "truncated", "array", "deep", "deep-ignored", "surrogate", "nan", "dup", "bad-utf8", "trail"],
)
def test_unusual_bytes_give_the_same_row(content: bytes, cr13_artifact: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (cr13_artifact / CONFIG).write_bytes(content)
    assert_same_row(cr13_artifact, monkeypatch)


# ---- fuzzing: random edits of a real config --------------------------------------------------------------

JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=70_000),
    st.sampled_from([0, 1, 8, 9, 21, 40, 8192, 40960, 1 << 16, (1 << 16) + 1, 1 << 40, (1 << 40) + 1, -(1 << 41)]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["eager", "flash_attn", "RBLN-CR13", "RBLN-CA25", "bfloat16", "fp8", "prefill", "x", ""]),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=4), inner, max_size=4)),
    max_leaves=12,
)
TOP_KEYS = [
    "cls_name",
    "batch_size",
    "max_seq_len",
    "kvcache_num_blocks",
    "kvcache_block_size",
    "kvcache_partition_len",
    "attn_impl",
    "npu",
    "num_devices",
    "prefill_chunk_size",
    "dtype",
    "decoder_batch_sizes",
    "cache_metas",
    "tensor_parallel_size",
    "kvcache_metas",
    "_meta",
    "_compile_cfgs",
    "unknown_key",
]
META_KEYS = ["name", "layer_index", "shape", "layer_type", "is_auto", "dtype", "extra"]
CFG_KEYS = ["compiled_model_name", "npu", "num_devices", "tensor_parallel_size", "input_info"]
SHAPES = st.lists(st.integers(min_value=-1, max_value=1 << 41), min_size=3, max_size=5)

EDITS = st.one_of(
    st.tuples(st.just("set"), st.sampled_from(TOP_KEYS), JSON_VALUES),
    st.tuples(st.just("delete"), st.sampled_from(TOP_KEYS), st.none()),
    st.tuples(st.just("meta"), st.sampled_from(META_KEYS), st.one_of(JSON_VALUES, SHAPES)),
    st.tuples(st.just("meta-delete"), st.sampled_from(META_KEYS), st.none()),
    st.tuples(st.just("cfg0"), st.sampled_from(CFG_KEYS), JSON_VALUES),
    st.tuples(st.just("cfg0-delete"), st.sampled_from(CFG_KEYS), st.none()),
)


def apply(raw: dict[str, Any], edits: list[tuple[str, str, object]]) -> None:
    for kind, key, value in edits:
        meta = raw["cache_metas"][0] if isinstance(raw.get("cache_metas"), list) and raw["cache_metas"] else None
        cfgs = raw.get("_compile_cfgs")
        cfg0 = cfgs[0] if isinstance(cfgs, list) and cfgs and isinstance(cfgs[0], dict) else None
        if kind == "set":
            raw[key] = value
        elif kind == "delete":
            raw.pop(key, None)
        elif kind == "meta" and isinstance(meta, dict):
            meta[key] = value
        elif kind == "meta-delete" and isinstance(meta, dict):
            meta.pop(key, None)
        elif kind == "cfg0" and cfg0 is not None:
            cfg0[key] = value
        elif kind == "cfg0-delete" and cfg0 is not None:
            cfg0.pop(key, None)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(EDITS, min_size=1, max_size=4))
def test_fuzzed_configs_give_the_same_row(
    edits: list[tuple[str, str, object]], cr13_artifact: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = tmp_path / "fuzz"
    if not folder.exists():
        shutil.copytree(cr13_artifact, folder)
    raw = json.loads((cr13_artifact / CONFIG).read_text())
    apply(raw, edits)
    (folder / CONFIG).write_text(json.dumps(raw))
    assert_same_row(folder, monkeypatch)


def test_the_light_reader_takes_real_layouts(cr13_artifact: Path, ca25_artifact: Path) -> None:
    """The fast path is not vacuous: compiled artifacts, and optimum-rbln's layout (npu in _compile_cfgs), use it."""
    for folder, blocks in ((cr13_artifact, 21), (ca25_artifact, 14)):
        view = read_view((folder / CONFIG).read_bytes())
        assert view is not None and view.kvcache_num_blocks == blocks
        assert view.kv_bytes(blocks) == int(blocks * 1.125 * 2**30)  # DESIGN section 8: 1.125 GiB per block
    edit(ca25_artifact, _npu_only_in_compile_cfgs)
    view = read_view((ca25_artifact / CONFIG).read_bytes())
    assert view is not None and (view.npu, view.num_devices) == ("RBLN-CA25", 4)


def test_a_deep_file_left_to_the_model_reads_as_inspect_reads_it(cr13_artifact: Path) -> None:
    """A value nested deeper than pydantic-core's parser goes (200 levels) but within json's: the scan's first row
    (verify=False) does not call the file too deep where the full check, which inspect runs, reads it."""
    deep: object = 1
    for _ in range(300):
        deep = [deep]
    edit(cr13_artifact, lambda raw: raw.update(tensor_parallel_size=raw["num_devices"], zz_extra=deep))
    assert read_view((cr13_artifact / CONFIG).read_bytes()) is None  # older key name: left to the model
    first, verdict = summarize(cr13_artifact, verify=False), summarize(cr13_artifact)
    assert not any("nested too deeply" in p for p in first.problems + verdict.problems)
    assert (first.kvcache_num_blocks, first.npu) == (verdict.kvcache_num_blocks, verdict.npu) == (21, "RBLN-CR13")
